"""A big plain trace's sha256 hashed ahead by a child process (tracekit.formats.hashahead): the run
record holds the sha256 of the content read, computed here by hashlib over the file's bytes,
whether the file stayed as it was, grew while it was read, or was never hashed ahead."""
from __future__ import annotations

import gzip
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tracekit.formats import hashahead
from tracekit.db.query import connect
from tracekit.formats.sources import TraceSource


def wired_lines(n: int, t0: float = 0.0) -> bytes:
    """n wired trace lines (enqueue, dequeue, receive of one packet each three lines)."""
    out = []
    for i in range(n // 3):
        t = t0 + i * 0.001
        for ev, a, b in (("+", 0, 1), ("-", 0, 1), ("r", 0, 1)):
            out.append(f"{ev} {t:.6f} {a} {b} cbr 210 ------- 1 0.0 1.0 {i} {i}\n")
    return "".join(out).encode()


@pytest.fixture
def small_min(monkeypatch):
    """Hash ahead files from 1 KiB (the module's threshold is 16 MiB)."""
    monkeypatch.setattr(hashahead, "MIN_BYTES", 1024)
    monkeypatch.setattr(hashahead, "_pending", {})


def read_all(path):
    src = TraceSource.open(path)
    taken = src._digest is not None
    for _ in src.chunks(chunk_bytes=64 * 1024):
        pass
    return src, taken


def test_a_plain_file_is_hashed_ahead_and_its_digest_used(tmp_path, small_min, monkeypatch):
    trace = tmp_path / "t.tr"
    trace.write_bytes(wired_lines(30_000))
    hashahead.start(trace)
    [d] = hashahead._pending.values()
    assert not os.get_inheritable(d.fd)             # inheritable for the child only
    monkeypatch.setattr(hashahead, "sha256_of_prefix", lambda *a: pytest.fail("hashed again"))
    src, taken = read_all(trace)
    assert taken and not hashahead._pending
    assert src.sha256 == hashlib.sha256(trace.read_bytes()).hexdigest()
    assert d.pid is None                             # the child waited for


def test_a_file_that_grew_while_read_is_hashed_as_read(tmp_path, small_min):
    trace = tmp_path / "t.tr"
    trace.write_bytes(wired_lines(30_000))
    hashahead.start(trace)
    [d] = hashahead._pending.values()
    d._wait()                                        # the child hashed the first size bytes
    with open(trace, "ab") as f:                     # a simulation still writing it
        f.write(wired_lines(3_000, t0=100.0))
    src, taken = read_all(trace)
    assert taken
    content = trace.read_bytes()
    assert src.size_bytes == len(content) > d.size
    assert src.sha256 == hashlib.sha256(content).hexdigest()


def test_the_prefix_hash_and_a_file_now_shorter(tmp_path):
    f = tmp_path / "x"
    f.write_bytes(bytes(range(256)) * 100_000)      # 25.6 MB: more than one piece
    fd = os.open(f, os.O_RDONLY)
    try:
        assert hashahead.sha256_of_prefix(fd, 20_000_123) == hashlib.sha256(f.read_bytes()[:20_000_123]).hexdigest()
        with pytest.raises(OSError):
            hashahead.sha256_of_prefix(fd, 25_600_001)
    finally:
        os.close(fd)


def test_what_is_not_hashed_ahead(tmp_path, small_min):
    lines = wired_lines(30_000)
    packed = tmp_path / "t.tr.gz"
    packed.write_bytes(gzip.compress(lines))
    small = tmp_path / "small.tr"
    small.write_bytes(lines[:1000])
    fifo = tmp_path / "pipe.tr"             # (opening it would block, or take a writer's data)
    os.mkfifo(fifo)
    for p in (packed, small, tmp_path, tmp_path / "missing.tr", "*.tr", fifo):
        hashahead.start(p)
    assert hashahead._pending == {}
    src, taken = read_all(packed)                    # hashed as it is decompressed
    assert not taken and src.sha256 == hashlib.sha256(lines).hexdigest()


def test_a_source_closed_early_stops_its_child(tmp_path, small_min):
    trace = tmp_path / "t.tr"
    trace.write_bytes(wired_lines(30_000))
    hashahead.start(trace)
    [d] = hashahead._pending.values()
    src = TraceSource.open(trace)
    src.close()
    assert d.pid is None
    with pytest.raises(OSError):
        os.fstat(d.fd)                               # the descriptor let go


def test_cli_ingest_of_a_big_plain_trace_records_its_sha256(tmp_path, tracekit_cli):
    trace = tmp_path / "big.tr"
    trace.write_bytes(wired_lines(330_000))          # ~17.7 MB: above hashahead.MIN_BYTES
    assert trace.stat().st_size >= hashahead.MIN_BYTES
    data = tmp_path / "store"
    r = tracekit_cli("ingest", trace, data=data)
    assert r.returncode == 0, r.stderr
    want = hashlib.sha256(trace.read_bytes()).hexdigest()
    assert connect(data).execute("SELECT run_id, sha256 FROM runs").fetchall() == [(want[:16], want)]


def test_a_forked_child_hashes_the_file(tmp_path, small_min, monkeypatch):
    trace = tmp_path / "t.tr"
    trace.write_bytes(wired_lines(30_000))
    hashahead.start(trace, fork=True)
    [d] = hashahead._pending.values()
    monkeypatch.setattr(hashahead, "sha256_of_prefix", lambda *a: pytest.fail("hashed again"))
    src, taken = read_all(trace)
    assert taken and d.pid is None
    assert src.sha256 == hashlib.sha256(trace.read_bytes()).hexdigest()


def test_the_mapped_hash_of_a_prefix(tmp_path, monkeypatch):
    f = tmp_path / "x"
    f.write_bytes(bytes(range(256)) * 100_000)      # 25.6 MB
    monkeypatch.setattr(hashahead, "PIECE_BYTES", 1 << 20)      # many pieces, the last one short
    fd = os.open(f, os.O_RDONLY)
    try:
        for n in (0, 1, 1 << 20, 20_000_123, 25_600_000):
            assert hashahead.sha256_mapped(fd, n) == hashlib.sha256(f.read_bytes()[:n]).hexdigest()
    finally:
        os.close(fd)


# a process that starts a forked child for a 64 GiB file (sparse: nothing on disk; far more
# than a child hashes before a test has looked at it, or stopped it) and
# prints the child's pid; then `how` ends it: at once (os._exit: no atexit function runs, the
# child is left hashing) or as a command ends (its atexit functions run)
FORKS = """
import os, sys
from tracekit.formats import hashahead
hashahead.start(sys.argv[1], fork=True)
[d] = hashahead._pending.values()
print(d.pid, flush=True)
if sys.argv[2] == "at once":
    os._exit(0)
sys.exit(0)
"""


def _sparse(tmp_path) -> Path:
    big = tmp_path / "sparse.tr"
    with open(big, "wb") as f:
        f.truncate(64 << 30)
    return big


def _forking_process(tmp_path, how):
    return subprocess.run([sys.executable, "-c", FORKS, str(_sparse(tmp_path)), how], capture_output=True, text=True,
                          timeout=600)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _descriptors(pid: int) -> set[str] | None:
    """What the process's descriptors point at; None if one closed as they were read."""
    out = set()
    for n in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.add(os.readlink(f"/proc/{pid}/fd/{n}"))
        except FileNotFoundError:
            return None
    return out


def test_a_forked_child_holds_none_of_the_callers_streams(tmp_path):
    """The output of `tracekit ingest` read to its end (a caller capturing it) ends with the
    command, not when a child still hashing ends: the child holds none of its descriptors.
    The child is stopped (SIGSTOP) once it has closed what it inherited: it can neither end
    nor close anything more while the caller reads the output to its end."""
    proc = subprocess.Popen([sys.executable, "-c", FORKS, str(_sparse(tmp_path)), "at once"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    pid = int(proc.stdout.readline())
    try:
        # what it holds once it is done closing what it inherited (it may still be at it)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            held = _descriptors(pid)
            if held is not None and len(held) <= 3:
                break
            time.sleep(0.005)
        os.kill(pid, signal.SIGSTOP)
        assert _alive(pid), "the child ended before it was looked at"
        held = _descriptors(pid)
        assert held == {"/dev/null", str(tmp_path / "sparse.tr")} | {h for h in held if h.startswith("pipe:")}
        assert len(held) == 3                   # the pipe to its parent
        # the output ends with the command though the child lives on, stopped
        out, err = proc.communicate(timeout=600)
        assert proc.returncode == 0 and out == "", err
        assert _alive(pid)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass


def test_no_fork_beside_another_thread(tmp_path, small_min):
    """With a second thread running, start(fork=True) spawns a new interpreter instead: a
    fork copies only the calling thread, and a lock the other one held would never be freed
    in the child."""
    import threading

    big = tmp_path / "sparse.tr"
    with open(big, "wb") as f:
        f.truncate(256 << 20)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        hashahead.start(big, fork=True)
    finally:
        stop.set()
        other.join()
    [d] = hashahead._pending.values()
    try:
        with open(f"/proc/{d.pid}/cmdline", "rb") as f:
            argv = f.read().split(b"\0")
        # a new interpreter running the spawned child's program (a fork's would be pytest's),
        # still hashing its 256 MiB
        assert argv[1:3] == [b"-I", b"-S"], argv
        d._wait()
        assert d.result == hashlib.sha256(b"\0" * (256 << 20)).hexdigest()
    finally:
        hashahead._pending.clear()
        d.close()


def test_a_child_nobody_took_is_stopped_when_the_command_ends(tmp_path):
    p = _forking_process(tmp_path, "as a command ends")
    assert p.returncode == 0, p.stderr
    assert not os.path.exists(f"/proc/{int(p.stdout)}")     # killed and reaped before the exit


def test_the_ingest_path_guessed_from_a_command_line():
    from tracekit.__main__ import ingest_path

    assert ingest_path(["ingest", "out.tr"]) == "out.tr"
    assert ingest_path(["ingest", "--label", "variant=Reno", "-l", "seed=1", "--data", "d", "--skip-bad-lines", "a.tr", "b.tr"]) == "a.tr"
    assert ingest_path(["ingest", "--label=variant=Reno", "--", "-odd.tr"]) == "-odd.tr"
    assert ingest_path(["sql", "SELECT 1"]) is None
    assert ingest_path(["ingest", "--help"]) is None
    assert ingest_path([]) is None


def test_the_options_taking_a_value_are_the_ingest_commands():
    import typer.main

    from tracekit.__main__ import INGEST_VALUED
    from tracekit.apps.cli import app

    ingest = typer.main.get_command(app).commands["ingest"]
    valued = {opt for p in ingest.params if p.param_type_name == "option" and not p.is_flag for opt in p.opts}
    assert valued == INGEST_VALUED
