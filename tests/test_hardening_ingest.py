"""Issue 13, the ingest side: staging decided by locks, cleanup on every way out (a full disk,
SIGTERM), label re-writes that all land, sweep children that die with their parent, one-line
errors (symlink loops, read-only store, full disk, store version 1e400, huge fields), times
that go backwards, and one run per simulation. Real stores, real processes, real ns-2."""
from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tracekit.core.errors import TraceLineError, TracekitError
from tracekit.ingest.pipeline import ingest_file, ingest_paths
from tracekit.db.query import connect
from tracekit.store.store import Store

from conftest import alive, children_of, time_shifted_copies

_SCRIPT = Path(sys.executable).with_name("tracekit")
TK = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "tracekit"]
NS = shutil.which("ns")
needs_ns = pytest.mark.skipif(NS is None, reason="ns-2 (/usr/bin/ns) is not installed")
SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"


def env():
    e = {k: v for k, v in os.environ.items() if k != "TRACEKIT_DATA"}
    e["COLUMNS"] = "200"
    return e


def tk(*args, timeout=300, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*TK, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=env(), **kw)


def one_line_error(p: subprocess.CompletedProcess, code: int = 1) -> str:
    """The command failed with `code` and said so in one line, no traceback."""
    assert p.returncode == code, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tracekit: error: "), p.stderr[-3000:]
    return lines[0]


def staging_left(root: Path) -> list[str]:
    d = root / ".staging"
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def wired_line(t: str, uid: int) -> str:
    return f"+ {t} 1 2 cbr 500 ------- 2 1.0 3.1 {uid} {uid}"


def feed_through_fifo(tmp_path: Path, data: bytes, argv: list[str], root: Path):
    """Start `argv` (an ingest of a named pipe) and write `data` into the pipe, keeping it
    open: the ingest is then certainly mid-way, its staging directory on disk. Returns
    (process, open pipe writer)."""
    fifo = tmp_path / "trace.tr"
    os.mkfifo(fifo)
    proc = subprocess.Popen([*argv, str(fifo)], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    w = open(fifo, "wb")
    w.write(data)
    w.flush()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        dirs = [d for d in (root / ".staging").glob("*") if d.is_dir()] if (root / ".staging").exists() else []
        if dirs and any(any(d.iterdir()) for d in dirs):
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    else:
        raise AssertionError("the ingest never wrote into its staging directory")
    return proc, w


# -- 1. staging: locks, not process ids ---------------------------------------------------

def _unshare_works() -> bool:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _unshare_works(), reason="needs root and unshare(1) for a second PID namespace")
def test_ingest_in_another_pid_namespace_keeps_its_staging(tmp_path, ns_traces):
    """The reported case: an ingest in another PID namespace has a process id that means
    nothing (or another process) here. Its staging directory is named after a pid that
    does not exist in this namespace; another ingest must still leave it alone."""
    root = tmp_path / "store"
    Store(root, create=True)
    fake_pid = 99999                     # the pid the ingest gets inside its namespace
    while alive(fake_pid + 1):           # ... must not exist out here (it never existed: not alive)
        fake_pid += 1000
    script = f"echo {fake_pid} > /proc/sys/kernel/ns_last_pid && \"$@\""   # a child: pid fake_pid + 1
    argv = ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", script, "sh",
            *TK, "ingest", "--data", str(root)]
    text = time_shifted_copies(ns_traces["wired_plain"].read_bytes(), 10)
    proc, w = feed_through_fifo(tmp_path, text[: len(text) // 5], argv, root)
    try:
        [mine] = [d for d in (root / ".staging").iterdir() if d.is_dir()]
        assert mine.name.startswith(f"{fake_pid + 1}-"), mine.name   # named after a pid dead out here
        assert not alive(fake_pid + 1)
        # an ingest from here: the old rule (pid not alive here) deleted the other's staging
        [r] = ingest_paths(root, [ns_traces["red"]])
        assert r.status == "added"
        assert mine.is_dir() and any(mine.iterdir()), "a running ingest's staging directory was deleted"
        w.write(text[len(text) // 5:])   # the rest of the trace: the first ingest completes
    finally:
        w.close()
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out.startswith("added run"), out
    assert staging_left(root) == []
    assert sorted(k for (k,) in connect(root).execute("SELECT trace_kind FROM runs").fetchall()) == ["red", "wired"]


def test_stale_staging_of_a_killed_ingest_is_removed(tmp_path, ns_traces):
    """The other half of the rule: a writer killed with kill -9 holds no lock any more, and
    the next ingest removes its staging directory and its lock file."""
    root = tmp_path / "store"
    Store(root, create=True)
    proc, w = feed_through_fifo(tmp_path, time_shifted_copies(ns_traces["wired_plain"].read_bytes(), 2), [*TK, "ingest", "--data", str(root)], root)
    try:
        proc.kill()
        proc.wait(30)
    finally:
        try:
            w.close()
        except BrokenPipeError:
            pass
    left = staging_left(root)
    assert len(left) == 2 and sum(n.endswith(".lock") for n in left) == 1, left
    [r] = ingest_paths(root, [ns_traces["red"]])
    assert r.status == "added"
    assert staging_left(root) == []


def test_sigterm_leaves_no_staging(tmp_path, ns_traces, store_listing):
    """SIGTERM is handled like Ctrl-C: the staging directory goes, exit 143, one line."""
    root = tmp_path / "store"
    ingest_paths(root, [ns_traces["red"]])
    before = store_listing(root / "runs")
    proc, w = feed_through_fifo(tmp_path, time_shifted_copies(ns_traces["wired_plain"].read_bytes(), 2), [*TK, "ingest", "--data", str(root)], root)
    try:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        try:
            w.close()
        except BrokenPipeError:
            pass
    one_line_error(subprocess.CompletedProcess([], proc.returncode, out, err), code=143)
    assert "terminated" in err
    assert staging_left(root) == []
    assert store_listing(root / "runs") == before


# -- 1. label re-writes -------------------------------------------------------------------

def test_eight_concurrent_relabels_all_land(tmp_path, ns_traces):
    root = tmp_path / "store"
    trace = ns_traces["wired_tcphdr"]
    [r] = ingest_paths(root, [trace])
    procs = [subprocess.Popen([*TK, "ingest", str(trace), "--label", f"k{i}=v{i}", "--data", str(root)], env=env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(8)]
    try:
        outs = [p.communicate(timeout=600) for p in procs]      # a hang guard: eight start-ups on a loaded machine
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "labels updated" in out
    rec = pq.read_table(root / "runs" / f"run_id={r.run_id}" / "run.parquet").to_pylist()[0]
    got = {d["key"]: d["value"] for d in rec["labels"]}
    assert got == {f"k{i}": f"v{i}" for i in range(8)}
    assert [p.name for p in (root / "runs" / f"run_id={r.run_id}").iterdir() if p.name.startswith(".")] == []


# -- 1. sweep children --------------------------------------------------------------------

SLOW_SIM = ["sweep", "cbr-variants", "--seeds", "1-2", "-j", "2", "--set", "duration=600", "--no-keep-traces"]


def _start_sweep(root: Path) -> tuple[subprocess.Popen, list[int]]:
    proc = subprocess.Popen([*TK, *SLOW_SIM, "--data", str(root)], env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    ns = []
    while time.monotonic() < deadline and len(ns) < 2:
        ns = [c for c in children_of(proc.pid) if alive(c) and os.path.basename(os.readlink(f"/proc/{c}/exe")) == "ns"]
        time.sleep(0.05)
    assert len(ns) == 2, "the sweep did not start its two ns-2 processes"
    return proc, ns


def _gone(pids: list[int], within_s: float = 120) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        if not any(alive(p) for p in pids):
            return True
        time.sleep(0.05)
    return False


def _session_of(sid: int) -> list[int]:
    """The live processes of session `sid` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and os.getsid(int(d)) == sid and alive(int(d)):
                out.append(int(d))
        except (ProcessLookupError, PermissionError):
            pass
    return out


def _open_files() -> list[tuple[int, str]]:
    """(pid, path) of every descriptor of every process (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            for n in os.listdir(f"/proc/{d}/fd"):
                try:
                    out.append((int(d), os.readlink(f"/proc/{d}/fd/{n}")))
                except OSError:
                    pass
        except OSError:
            pass
    return out


@needs_ns
def test_sweep_killed_with_kill_9_leaves_no_ns2(tmp_path):
    root = tmp_path / "store"
    proc, ns = _start_sweep(root)
    try:
        for c in ns:                                     # their own process group, not the sweep's
            assert os.getpgid(c) == c and os.getpgid(c) != os.getpgid(proc.pid)
        os.kill(proc.pid, signal.SIGKILL)                # the parent only, as a user's kill -9 would
        proc.communicate(timeout=30)
        assert _gone(ns), "ns-2 still running after its sweep was killed"
    finally:
        for c in ns:
            if alive(c):
                os.kill(c, signal.SIGKILL)
    # nothing can write into .staging/ any more: no process of the sweep's session is left
    # and none holds a file there open; the next command cleans it
    assert _gone(_session_of(proc.pid)), "a process of the killed sweep runs on"
    staging = str((root / ".staging").resolve())
    assert not [pid for pid, f in _open_files() if f.startswith(staging + "/")], "a file in .staging/ is still open"
    Store(root).new_staging()        # any writer cleans up first
    assert [n for n in staging_left(root) if not n.startswith(f"{os.getpid()}-")] == []


def test_ns2_child_dies_with_its_parent_and_never_outlives_it(tmp_path):
    """How ns-2 is started (runner._spawn): with its parent's death signal set, and, when its
    parent is not the process that started it any more (it died before the child set the
    signal), not at all."""
    from tracekit.experiments import runner

    argv, how = runner._spawn(["/bin/sh", "-c", "echo ran; cat /proc/self/status"])
    out = subprocess.run(argv, capture_output=True, text=True, **how)
    assert out.returncode == 0 and out.stdout.startswith("ran\n")
    if runner._setpriv() is None:
        pytest.skip("no setpriv: the preexec_fn way")
    # the command itself runs with its parent death signal SIGKILL (setpriv's own report of it)
    dump, _ = runner._spawn([str(runner._setpriv()), "--dump"])
    report = subprocess.run(dump, capture_output=True, text=True)
    assert report.stdout.split("Parent death signal:")[1].split()[0] == "KILL", report.stdout
    # a child whose parent is someone else by the time it looks: it ends, its command unrun
    stray = [a if a != str(os.getpid()) else "1" for a in argv]
    out = subprocess.run(stray, capture_output=True, text=True)
    assert out.returncode != 0 and "ran" not in out.stdout


@needs_ns
def test_sweep_sigterm_ends_ns2_and_cleans_staging(tmp_path):
    root = tmp_path / "store"
    proc, ns = _start_sweep(root)
    try:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
        assert _gone(ns)
    finally:
        for c in ns:
            if alive(c):
                os.kill(c, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert "Traceback" not in err and "tracekit: error: terminated" in err
    assert staging_left(root) == []


def test_seeds_are_capped_like_grids(tmp_path):
    # refused before a billion seeds are made: tk's timeout is the hang guard
    p = tk("sweep", "cbr-variants", "--seeds", "1-1000000000", "--dry-run", "--data", tmp_path / "s")
    line = one_line_error(p)
    assert "--seeds" in line and "too many" in line
    # many small ranges add up too; and grids x seeds has a cap of its own
    line = one_line_error(tk("sweep", "cbr-variants", "--seeds", ",".join(f"{i}-{i + 9999}" for i in range(1, 200000, 10000)),
                             "--dry-run", "--data", tmp_path / "s"))
    assert "too many" in line
    line = one_line_error(tk("sweep", "cbr-variants", "--grid", "cbr_rate_mbps=1:10:0.0001", "--seeds", "1-20000",
                             "--dry-run", "--data", tmp_path / "s"))
    assert "simulations" in line and "too many" in line


# -- 2. one line, non-zero exit -----------------------------------------------------------

def test_symlink_loop_is_one_line(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    line = one_line_error(tk("ingest", tmp_path / "a", "--data", tmp_path / "store"))
    assert "symbolic link loop" in line
    # a loop met while walking a directory is not a trace: skipped, the walk goes on
    d = tmp_path / "dir"
    d.mkdir()
    (d / "x").symlink_to(d / "y")
    (d / "y").symlink_to(d / "x")
    line = one_line_error(tk("ingest", d, "--data", tmp_path / "store"))
    assert "no files" in line


@pytest.mark.parametrize("version", ["1e400", "1.5", "true", '"1"', "-1", "[1]", "9" * 5000])
def test_store_version_that_is_not_an_integer(tmp_path, version):
    root = tmp_path / "store"
    root.mkdir()
    (root / "tracekit-store.json").write_text('{"schema_version": %s}\n' % version)
    for args in (["runs"], ["sql", "SELECT 1"], ["ingest", SAMPLES / "cbr-fairness" / "Reno-Reno-seed1"]):
        line = one_line_error(tk(*args, "--data", root))
        assert "tracekit-store.json" in line and len(line) < 400


def test_huge_field_is_quoted_short(tmp_path):
    """A 10 MB field and a 4 KiB block of NUL bytes: the error quotes ~80 characters."""
    root = tmp_path / "store"
    big = tmp_path / "big.tr"
    big.write_text(wired_line("0.1", 0) + "\n" + wired_line("0.2", 1)[:-1] + "x" * 10_000_000 + "\n")
    line = one_line_error(tk("ingest", big, "--data", root))
    assert line.startswith(f"tracekit: error: {big}:2: ") and len(line) < 400, len(line)
    nul = tmp_path / "nul.tr"
    # after the 64 kB detection reads (there, NUL bytes make it a binary file)
    good = "".join(wired_line(f"{i / 1000:.3f}", i) + "\n" for i in range(2000))
    nul.write_bytes(good.encode() + b"\0" * 4096 + b"\n")
    line = one_line_error(tk("ingest", nul, "--data", root))
    assert line.startswith(f"tracekit: error: {nul}:2001: ") and len(line) < 400, len(line)
    # input quoted by option errors too (100 kB: about the most one argument may hold)
    line = one_line_error(tk("sweep", "cbr-variants", "--seeds", "x" * 100_000, "--dry-run", "--data", root))
    assert len(line) < 400
    line = one_line_error(tk("sweep", "cbr-variants", "--set", "variant=" + "V" * 100_000, "--dry-run", "--data", root))
    assert len(line) < 600


def _can_mount() -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    probe = Path(f"/tmp/tracekit-mount-probe-{os.getpid()}")
    probe.mkdir(exist_ok=True)
    ok = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(probe)], capture_output=True).returncode == 0
    if ok:
        subprocess.run(["umount", str(probe)], check=True)
    probe.rmdir()
    return ok


CAN_MOUNT = _can_mount()


def mounted_tmpfs(tmp_path: Path, size: str):
    """A tmpfs of `size` at tmp_path/mnt (root only), unmounted at the end."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


@pytest.fixture
def small_fs(tmp_path):
    """A 1 MiB tmpfs (root only)."""
    yield from mounted_tmpfs(tmp_path, "1m")


@pytest.mark.skipif(not CAN_MOUNT, reason="needs root to mount a small tmpfs (see the injected variant below)")
def test_full_disk_is_one_line_and_leaves_no_staging(small_fs, ns_traces, store_listing, tmp_path):
    root = small_fs / "store"
    [r] = ingest_paths(root, [ns_traces["red"]])
    assert r.status == "added"
    before = store_listing(root / "runs")
    st = os.statvfs(small_fs)                   # leave 8 kB free: the first Parquet part does not fit
    (small_fs / "filler").write_bytes(b"\0" * (st.f_bavail * st.f_frsize - 8192))
    big = tmp_path / "big.tr"
    big.write_bytes(time_shifted_copies(ns_traces["wired_plain"].read_bytes(), 4))
    p = tk("ingest", big, ns_traces["tcpvar"], "--data", root)
    line = one_line_error(p)
    assert "no space left on the device" in line
    assert staging_left(root) == []
    assert store_listing(root / "runs") == before


def test_full_disk_injected(tmp_path, ns_traces, store_listing, monkeypatch):
    """The same without root: ENOSPC injected at the Parquet write (the place a full disk
    hits first), in process; the library raises one StoreWriteError and cleans up."""
    import tracekit.ingest.pipeline as ing
    from tracekit.core.errors import StoreWriteError

    root = tmp_path / "store"
    ingest_paths(root, [ns_traces["red"]])
    before = store_listing(root / "runs")

    def full(frame, path):
        Path(path).write_bytes(b"PAR1 half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(ing, "_write_part", full)
    with pytest.raises(StoreWriteError, match="no space left on the device"):
        ingest_paths(root, [ns_traces["wired_plain"], ns_traces["tcpvar"]])
    assert staging_left(root) == []
    assert store_listing(root / "runs") == before


@pytest.mark.skipif(not CAN_MOUNT, reason="needs root to mount a read-only tmpfs")
def test_read_only_store_is_one_line(small_fs, ns_traces):
    root = small_fs / "store"
    ingest_paths(root, [ns_traces["red"]])
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    line = one_line_error(tk("ingest", ns_traces["wired_plain"], "--data", root))
    assert "read-only" in line
    line = one_line_error(tk("ingest", ns_traces["red"], "--label", "x=1", "--data", root))   # a re-label
    assert "read-only" in line


# -- 3. times ---------------------------------------------------------------------------

def _ingest_text(tmp_path: Path, name: str, lines: list[str], **kw):
    f = tmp_path / name
    f.write_text("\n".join(lines) + "\n")
    return ingest_file(Store(tmp_path / f"store-{name}", create=True), f, **kw), f


@pytest.mark.parametrize("bad_t, reason", [("-0.5", "negative"), ("-1e-9", "negative"),
                                           ("1e308", "later than the next"), ("0.05", "earlier than")])
def test_bad_times_in_a_wired_trace(tmp_path, bad_t, reason):
    times = ["0.1", "0.2", "0.3", bad_t, "0.4", "0.5"]
    lines = [wired_line(t, i) for i, t in enumerate(times)]
    with pytest.raises(TraceLineError) as e:
        _ingest_text(tmp_path, "t.tr", lines)
    assert e.value.line_no == 4 and reason in e.value.reason
    r, _ = _ingest_text(tmp_path, "t2.tr", lines, skip_bad_lines=True)
    assert (r.n_events, r.n_skipped_lines) == (5, 1)
    [(n, t0, t1)] = connect(tmp_path / "store-t2.tr").execute(
        "SELECT count(*), min(time), max(time) FROM events").fetchall()
    assert (n, t0, t1) == (5, 0.1, 0.5)


def test_trace_that_goes_back_for_good_is_reported_at_the_step(tmp_path):
    """Two traces one after the other (cat a.tr b.tr): the first line of the second is the
    error; skipping keeps the first trace, and of the second only its last line (0.5 s, not
    earlier than the first trace's end)."""
    lines = [wired_line(f"{t / 10}", t) for t in range(1, 6)] * 2
    with pytest.raises(TraceLineError) as e:
        _ingest_text(tmp_path, "t.tr", lines)
    assert e.value.line_no == 6 and "0.1 is earlier than 0.5" in e.value.reason
    r, _ = _ingest_text(tmp_path, "t2.tr", lines, skip_bad_lines=True)
    assert (r.n_events, r.n_skipped_lines) == (6, 4)


def test_rounding_of_printed_times_is_allowed(tmp_path):
    """A RED trace prints %g (6 significant digits): after 1000 s its stamps step by 0.01 s,
    so a line 0.01 s 'earlier' is rounding (ns2-reference, time-resolution trap); 0.5 s is not."""
    ok = ["Q 999.998 1040", "a 1000.01 2.5", "Q 1000 2080", "Q 1000.01 1040"]
    r, _ = _ingest_text(tmp_path, "red.tr", ok)
    assert r.n_events == 4
    with pytest.raises(TraceLineError) as e:
        _ingest_text(tmp_path, "red2.tr", ok + ["Q 999.5 0", "Q 1000.02 1040"])
    assert e.value.line_no == 5
    # tcpvar prints 5 decimals: 1e-5 s is rounding, 1e-4 s is not
    tcp = ["0.10000  0  0  2  0  cwnd_ 1.000", "0.10001  0  0  2  0  cwnd_ 2.000", "0.10000  0  0  2  0  ack_ 1"]
    assert _ingest_text(tmp_path, "cwnd.tr", tcp)[0].n_events == 3
    with pytest.raises(TraceLineError) as e:
        _ingest_text(tmp_path, "cwnd2.tr", tcp + ["0.09980  0  0  2  0  ack_ 2"])
    assert e.value.line_no == 4 and "earlier than" in e.value.reason


def test_bad_time_across_a_chunk_boundary(tmp_path):
    """The previous line's time is carried from chunk to chunk."""
    lines = [wired_line(f"{i / 1000:.3f}", i) for i in range(1, 3000)]
    lines[2000] = wired_line("0.5", 2000)           # earlier than line 2000's 2.0
    with pytest.raises(TraceLineError) as e:
        _ingest_text(tmp_path, "t.tr", lines, chunk_bytes=4096)
    assert e.value.line_no == 2001
    r, _ = _ingest_text(tmp_path, "t2.tr", lines, chunk_bytes=4096, skip_bad_lines=True)
    assert (r.n_events, r.n_skipped_lines) == (2998, 1)


def test_cli_bad_time_is_one_line_and_skip_counts(tmp_path):
    f = tmp_path / "t.tr"
    f.write_text("\n".join(wired_line(t, i) for i, t in enumerate(["0.1", "-3", "0.2", "1e308", "0.3"])) + "\n")
    line = one_line_error(tk("ingest", f, "--data", tmp_path / "s"))
    assert line.startswith(f"tracekit: error: {f}:2: time -3.0 is negative")
    p = tk("ingest", f, "--skip-bad-lines", "--data", tmp_path / "s")
    assert p.returncode == 0, p.stderr
    assert "skipped 2 bad line(s); first at line 2" in p.stderr
    assert connect(tmp_path / "s").execute("SELECT list(time ORDER BY line_no) FROM events").fetchone()[0] == [0.1, 0.2, 0.3]


@pytest.mark.slow
def test_every_sample_trace_is_in_time_order(tmp_path):
    """Real ns-2 output of every bundled scenario (wired, queue, cwnd, wireless manet with
    its three routing protocols) ingests with no bad line."""
    results = [r for r in ingest_paths(tmp_path / "store", [SAMPLES]) if r.path.name != "README.md"]
    assert len(results) == len(list(SAMPLES.rglob("*.tr.zst")))
    assert all(r.status == "added" for r in results), [(r.path, r.message) for r in results if r.status != "added"]
    assert sum(r.n_skipped_lines for r in results) == 0
    kinds = {r.kind for r in results}
    assert kinds == {"wired", "wireless", "tcpvar", "queue_monitor"}


# -- 4. one run per simulation ------------------------------------------------------------

def _sim_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A real packet trace of a bundled simulation and a cut-off copy of it (the first
    half of its lines: a simulation killed mid-run)."""
    import zstandard

    full = tmp_path / "full.tr"
    full.write_bytes(zstandard.ZstdDecompressor().decompress(
        (SAMPLES / "cbr-variants" / "Reno-7.0-seed1" / "packets.tr.zst").read_bytes(), max_output_size=1 << 30))
    lines = full.read_bytes().split(b"\n")
    cut = tmp_path / "cut.tr"
    cut.write_bytes(b"\n".join(lines[: len(lines) // 2]) + b"\n")
    return full, cut


def _replication_seeds(root: Path) -> list:
    return connect(root).execute(
        "SELECT DISTINCT seeds FROM replication_stats WHERE metric = 'throughput_kbps' AND name IS NOT NULL").fetchall()


@pytest.mark.parametrize("order", ["cut first", "full first"])
def test_a_cut_copy_of_a_simulation_is_not_a_second_replication(tmp_path, order):
    full, cut = _sim_copy(tmp_path)
    first, second = (cut, full) if order == "cut first" else (full, cut)
    root = tmp_path / "store"
    assert tk("ingest", first, "--data", root).returncode == 0
    line = one_line_error(tk("ingest", second, "--data", root))
    assert "already has a wired run" in line and "sim_id=" in line
    assert connect(root).execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    assert _replication_seeds(root) == [([1],)]
    assert staging_left(root) == []
    # the same content again is the usual duplicate, not an error
    p = tk("ingest", first, "--data", root)
    assert p.returncode == 0 and "already in the store" in p.stdout
    # asked for explicitly (another sim_id), both are kept
    p = tk("ingest", second, "--label", "sim_id=copy", "--data", root)
    assert p.returncode == 0, p.stderr
    assert connect(root).execute("SELECT count(*) FROM runs").fetchone()[0] == 2


def test_concurrent_copies_of_one_simulation_land_once(tmp_path):
    """Both copies ingested at once: the check and the commit are one step under a lock."""
    full, cut = _sim_copy(tmp_path)
    root = tmp_path / "store"
    Store(root, create=True)
    procs = [subprocess.Popen([*TK, "ingest", str(f), "--data", str(root)], env=env(), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for f in (full, cut, full, cut)]
    outs = [p.communicate(timeout=300) for p in procs]
    ok = [p.returncode for p in procs].count(0)
    refused = sum("already has a wired run" in err for _, err in outs)
    assert connect(root).execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    assert refused >= 1 and ok + refused == 4, outs
    assert staging_left(root) == []


def test_library_errors_stay_tracekit_errors(tmp_path):
    assert issubclass(TraceLineError, TracekitError)
    root = tmp_path / "s"
    root.mkdir()
    (root / "tracekit-store.json").write_text(json.dumps({"schema_version": 1e400}).replace("Infinity", "1e400"))
    with pytest.raises(TracekitError, match="non-negative integer"):
        Store(root)


def test_copy_check_survives_a_damaged_run_record(tmp_path, ns_traces):
    """Another run's run.parquet cut in half spoils DuckDB's scan of the records: the check
    goes file by file and still finds the simulation's run."""
    full, cut = _sim_copy(tmp_path)
    root = tmp_path / "store"
    [other] = ingest_paths(root, [ns_traces["red"]])
    [r] = ingest_paths(root, [full])
    assert r.status == "added"
    rec = root / "runs" / f"run_id={other.run_id}" / "run.parquet"
    rec.write_bytes(rec.read_bytes()[: rec.stat().st_size // 2])
    [r2] = ingest_paths(root, [cut])
    assert r2.status == "failed" and f"run {r.run_id}" in r2.message


@pytest.mark.parametrize("bad_t", ["inf", "nan", "-inf", "1e400"])
def test_time_that_is_not_finite_in_a_red_trace(tmp_path, bad_t):
    """The RED parser reads any float; the time check refuses what is not a time."""
    lines = ["Q 0.1 1040", "a 0.2 2.08", f"Q {bad_t} 1040", "Q 0.3 0"]
    with pytest.raises(TraceLineError) as e:
        _ingest_text(tmp_path, "red.tr", lines)
    assert e.value.line_no == 3 and ("finite" in e.value.reason or "negative" in e.value.reason)
    r, _ = _ingest_text(tmp_path, "red2.tr", lines, skip_bad_lines=True)
    assert (r.n_events, r.n_skipped_lines) == (3, 1)
