"""Issue 41, inputs and store states: a runs/ that cannot be listed, file names with newlines
in them, numbers of millions of digits, NUL bytes in one line, named pipes and devices, and
the staging lock a full disk left. Real stores, real processes, both parser paths."""
from __future__ import annotations

import errno
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import tracekit.formats.parsers as parsers_pkg
from tracekit.core.errors import TraceLineError, TracekitError, shown
from tracekit.ingest.pipeline import ingest_paths
from tracekit.formats.parsers import parse_text, wired, wireless
from tracekit.db.query import connect
from tracekit.store.store import Store

from test_hardening_ingest import CAN_MOUNT, TK, env, mounted_tmpfs, one_line_error, staging_left, tk, wired_line

REPO = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
BOTH_PATHS = pytest.mark.parametrize("pure", ["0", "1"], ids=["c-fast-path", "pure-python"])


def tk_env(*args, pure: str = "0", extra: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    e = {**env(), "TRACEKIT_PURE_PYTHON": pure, **(extra or {})}
    return subprocess.run([*TK, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=e)


def trace(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


GOOD = [wired_line(f"0.{i}", i) for i in range(1, 6)]          # times 0.1 .. 0.5, uids 1 .. 5


@pytest.fixture(params=["fast", "pure"])
def parser_path(request, monkeypatch):
    """The C fast paths as built, or switched off (what TRACEKIT_PURE_PYTHON=1 does at import)."""
    if request.param == "fast":
        if wired._fast is None or wireless._fast is None:
            pytest.skip("the C fast paths are not built")
    else:
        for mod in (parsers_pkg, wired, wireless):
            monkeypatch.setattr(mod, "_fast", None)
    return request.param


# -- runs/ that cannot be listed ------------------------------------------------------------

def _loop(runs: Path) -> str:
    runs.symlink_to(runs.name)                  # runs -> runs
    return "a symbolic link loop"


def _file(runs: Path) -> str:
    runs.write_text("not a directory\n")
    return "not a directory"


def _dangling(runs: Path) -> str:
    runs.symlink_to("gone")
    return "a symbolic link to nothing"


BROKEN_RUNS = {"symlink-loop": _loop, "regular-file": _file, "dangling-symlink": _dangling}


@pytest.fixture(params=list(BROKEN_RUNS))
def broken_runs(request, populated_store):
    """The populated store with runs/ moved aside and something unlistable in its place:
    (store, what the message must say, the run id, the moved runs/ to compare)."""
    runs = populated_store / "runs"
    [run_dir] = [p for p in runs.iterdir() if p.name.startswith("run_id=")]
    aside = populated_store / "runs.aside"
    runs.rename(aside)
    what = BROKEN_RUNS[request.param](runs)
    return populated_store, what, run_dir.name[len("run_id="):], aside


READERS = [
    ["runs"],
    ["sql", "SELECT count(*) FROM runs"],
    ["metrics"],
    ["compare", "x", "--by", "seed"],
    ["verify"],
    ["reproduce", "homogeneous", "--no-run", "--quick"],
    ["rm", "0"],
]


def test_reading_commands_refuse_a_runs_dir_they_cannot_list(broken_runs, tracekit_inproc, store_listing):
    root, what, _, aside = broken_runs
    before = store_listing(aside)
    link = os.readlink(root / "runs") if (root / "runs").is_symlink() else None
    for argv in READERS:
        p = tracekit_inproc(*argv, data=root)
        line = one_line_error(p)
        assert line.startswith(f"tracekit: error: {root / 'runs'}: "), (argv, line)
        assert what in line, (argv, line)
    assert store_listing(aside) == before
    assert (os.readlink(root / "runs") if (root / "runs").is_symlink() else None) == link


def test_report_and_the_cli_exit_status_on_a_runs_loop(populated_store, tmp_path):
    runs = populated_store / "runs"
    runs.rename(populated_store / "runs.aside")
    _loop(runs)
    for argv in (["runs"], ["report", "-o", tmp_path / "r.html"]):
        line = one_line_error(tk(*argv, "--data", populated_store))
        assert line == f"tracekit: error: {runs}: cannot list the store's runs: a symbolic link loop"
    assert not (tmp_path / "r.html").exists()


def test_library_and_dashboard_data_refuse_an_unlistable_runs_dir(broken_runs):
    root, what, _, _ = broken_runs
    with pytest.raises(TracekitError, match=what):
        Store(root).run_ids()
    with pytest.raises(TracekitError, match=what):
        connect(root).execute("SELECT count(*) FROM runs").fetchall()
    sys.path.insert(0, str(REPO / "dashboards"))
    try:
        import dash_data
    finally:
        sys.path.remove(str(REPO / "dashboards"))
    status = dash_data.store_status(root)
    assert what in status.problem and status.run_ids == ()


def test_a_missing_runs_dir_is_still_an_empty_store(tmp_path):
    assert Store(tmp_path / "nothing-here").run_ids() == []


# -- file names with newlines and other control characters -----------------------------------

NAMES = ["a\nb.tr", "c\rd.tr", "e\x1bf\tg.tr", "h\u2028i.tr"]
ESCAPED = {"a\nb.tr": "a\\nb.tr", "c\rd.tr": "c\\rd.tr", "e\x1bf\tg.tr": "e\\x1bf\\tg.tr", "h\u2028i.tr": "h\\u2028i.tr"}


def test_shown_escapes_what_breaks_a_line():
    for name in NAMES:
        assert shown(name) == ESCAPED[name]
    assert shown(Path("/x/é y.tr")) == "/x/é y.tr"        # printable names unchanged


@pytest.mark.parametrize("name", NAMES)
def test_a_name_with_a_newline_stays_one_line(tmp_path, name):
    root = tmp_path / "store"
    garbage = tmp_path / name
    garbage.write_text("this is no trace\n")
    line = one_line_error(tk("ingest", garbage, "--data", root))
    assert line.startswith(f"tracekit: error: {tmp_path}/{ESCAPED[name]}: unknown format: "), line

    bad = tmp_path / ("bad-" + name)
    bad.write_bytes(trace([GOOD[0], "+ x 0 1 cbr 500 ------- 2 1.0 3.1 9 9"]))
    line = one_line_error(tk("ingest", bad, "--data", root))
    assert line == (f"tracekit: error: {tmp_path}/bad-{ESCAPED[name]}:2: field 2 (time) is not a number: 'x': "
                    "'+ x 0 1 cbr 500 ------- 2 1.0 3.1 9 9'")

    line = one_line_error(tk("ingest", tmp_path / ("missing-" + name), "--data", root))
    assert line == f"tracekit: error: {tmp_path}/missing-{ESCAPED[name]}: no such file"

    d = tmp_path / ("dir-" + name)
    d.mkdir()
    (d / name).write_bytes(bad.read_bytes())
    p = tk("ingest", d, "--data", root)
    line = one_line_error(p)
    assert line.startswith(f"tracekit: error: {tmp_path}/dir-{ESCAPED[name]}/{ESCAPED[name]}:2: field 2 (time)"), line

    line = one_line_error(tk("ingest", str(tmp_path / ("*" + name + "*.none")), "--data", root))
    assert line == f"tracekit: error: {tmp_path}/*{ESCAPED[name]}*.none: no files match this pattern"


# -- numbers of millions of digits ------------------------------------------------------------

# a wired line's integer fields: (1-based field, its name in messages)
INT_FIELDS = [(3, "from node"), (4, "to node"), (6, "size"), (8, "fid"), (11, "sequence number"), (12, "packet id")]
HUGE = "9" * 2_000_000


@pytest.mark.parametrize("field,what", INT_FIELDS)
def test_a_two_million_digit_integer_in_each_field(parser_path, field, what):
    fields = wired_line("0.25", 7).split(" ")
    fields[field - 1] = HUGE
    bad_line = " ".join(fields)
    with pytest.raises(TraceLineError) as e:
        parse_text("\n".join(GOOD[:2] + [bad_line] + GOOD[2:]), kind="wired", path="t.tr")
    msg = str(e.value)
    assert msg.startswith(f"t.tr:3: field {field} ({what}) is not a number: '9999"), msg[:200]
    assert msg.endswith(f"... ({len(bad_line):,} characters)") and len(msg) < 400, msg[-200:]


@BOTH_PATHS
@pytest.mark.parametrize("field,what", [INT_FIELDS[0], INT_FIELDS[-1]])
def test_a_two_million_digit_integer_is_a_line_error(tmp_path, pure, field, what):
    fields = wired_line("0.25", 7).split(" ")
    fields[field - 1] = HUGE
    path = tmp_path / "huge.tr"
    bad_line = " ".join(fields)
    path.write_bytes(trace(GOOD[:2] + [bad_line] + GOOD[2:]))
    root = tmp_path / "store"
    line = one_line_error(tk_env("ingest", path, "--data", root, pure=pure))
    assert line.startswith(f"tracekit: error: {path}:3: field {field} ({what}) is not a number: '9999"), line[:200]
    assert "9'... (2,000,000 characters): '+ 0.25 " in line, line[:300]
    assert line.endswith(f"... ({len(bad_line):,} characters)"), line[-200:]
    assert len(line) < 400
    assert not (root / "runs").exists() or not any((root / "runs").iterdir())

    p = tk_env("ingest", path, "--skip-bad-lines", "--data", root, pure=pure)
    assert p.returncode == 0, p.stderr[-2000:]
    assert f"huge.tr: skipped 1 bad line(s); first at line 3: field {field} ({what}) is not a number" in p.stderr
    assert connect(root).execute("SELECT count(*), min(line_no), max(line_no) FROM events").fetchone() == (5, 1, 6)


@BOTH_PATHS
def test_a_two_million_digit_time_and_address_are_line_errors(tmp_path, pure):
    root = tmp_path / "store"
    for i, text in ((1, f"+ {HUGE} 1 2 cbr 500 ------- 2 1.0 3.1 7 7"), (9, f"+ 0.25 1 2 cbr 500 ------- 2 {HUGE}.0 3.1 7 7")):
        path = tmp_path / f"huge{i}.tr"
        path.write_bytes(trace(GOOD[:2] + [text] + GOOD[2:]))
        line = one_line_error(tk_env("ingest", path, "--data", root, pure=pure))
        assert line.startswith(f"tracekit: error: {path}:3: "), line[:200]
        assert len(line) < 400


def _numbers_made_huge(line: str, digits: int = 5000):
    """`line` with each run of digits in turn replaced by `digits` nines."""
    import re

    for m in re.finditer(r"\d+", line):
        yield line[:m.start()] + "9" * digits + line[m.end():]




@pytest.mark.parametrize("kind", ["wireless", "wireless-new", "hier"])
def test_huge_numbers_in_every_field_of_other_formats(parser_path, kind):
    """Every number of a real line of each format, 5,000 digits long (past int()'s 4,300):
    the line is read or is a bad line, never another exception."""
    src = DATA / {"wireless": "wireless_cmu.tr", "wireless-new": "wireless_new.tr", "hier": "wired_hier.tr"}[kind]
    kind_name = "wireless" if kind.startswith("wireless") else "hier"
    lines = [ln for ln in src.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    shapes: dict[tuple, str] = {}
    for ln in lines:
        shapes.setdefault((ln.split()[0], len(ln.split())), ln)
    tried = 0
    for ln in list(shapes.values())[:6]:
        for huge in _numbers_made_huge(ln):
            tried += 1
            try:
                parse_text(ln + "\n" + huge, kind=kind_name, path="t.tr")
            except TraceLineError as e:
                assert str(e).startswith("t.tr:2: ")
    assert tried > 20


def test_numbers_in_the_metadata_header_out_of_range(tmp_path, ns_traces):
    """The tracekit-meta header's seed: too big for the runs' seed column (int64), or for
    int() (thousands of digits), or JSON's 1e400 (inf): the run is ingested, its seed column
    empty, the label kept as written."""
    body = ns_traces["wired_plain"].read_bytes()
    root = tmp_path / "store"
    for i, (seed, label) in enumerate([("1e400", "inf"), (str(2 ** 64), str(2 ** 64)), (f'"{"7" * 5000}"', "7" * 5000),
                                       ("-9223372036854775808", "-9223372036854775808")]):
        path = tmp_path / f"meta{i}.tr"
        path.write_bytes(f'# tracekit-meta {{"scenario": "s", "seed": {seed}, "params": {{}}}}\n'.encode() + body)
        [r] = ingest_paths(root, [path])
        assert r.status == "added", r.message
        got = connect(root).execute("SELECT seed, labels['seed'] FROM runs WHERE run_id = ?", [r.run_id]).fetchone()
        assert got == ((-2 ** 63 if i == 3 else None), label)


# -- NUL bytes in one line --------------------------------------------------------------------

@BOTH_PATHS
def test_a_line_with_nul_bytes_is_that_lines_problem(tmp_path, pure):
    path = tmp_path / "nul.tr"
    nul_line = "+ 0.25 1 2 cbr 500 ---\x00\x00--- 2 1.0 3.1 7 7"
    path.write_bytes(trace(GOOD[:2] + [nul_line] + GOOD[2:]))
    root = tmp_path / "store"
    line = one_line_error(tk_env("ingest", path, "--data", root, pure=pure))
    assert line == (f"tracekit: error: {path}:3: a NUL byte in the line (binary data in the trace?): "
                    "'+ 0.25 1 2 cbr 500 ---\\x00\\x00--- 2 1.0 3.1 7 7'")
    p = tk_env("ingest", path, "--skip-bad-lines", "--data", root, pure=pure)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "nul.tr: skipped 1 bad line(s); first at line 3: a NUL byte in the line" in p.stderr
    assert connect(root).execute("SELECT count(*), sum(line_no) FROM events").fetchone() == (5, 1 + 2 + 4 + 5 + 6)


def test_nul_lines_in_other_formats_are_bad_lines(parser_path, ns_traces):
    for kind, src in (("wireless", DATA / "wireless_cmu.tr"), ("tcpvar", ns_traces["tcpvar"]),
                      ("queue_monitor", ns_traces["qmon_samples"])):
        lines = [ln for ln in src.read_text().splitlines() if ln.strip() and not ln.startswith("#")][:4]
        broken = lines[2][:5] + "\x00" + lines[2][5:]
        with pytest.raises(TraceLineError) as e:
            parse_text("\n".join(lines[:2] + [broken] + lines[3:]), kind=kind, path="t.tr")
        assert str(e.value).startswith("t.tr:3: a NUL byte in the line (binary data in the trace?): "), (kind, str(e.value))


@pytest.mark.parametrize("content", [b"\x00" * 5000, b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 20,
                                     b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 100,
                                     b"# a comment\n\x00\x00\x00\x00 binary from here\n"])
def test_a_binary_file_is_still_refused_as_one(tmp_path, content):
    path = tmp_path / "blob.tr"
    path.write_bytes(content)
    line = one_line_error(tk("ingest", path, "--data", tmp_path / "store"))
    assert line == f"tracekit: error: {path}: binary file, not an ns-2 text trace"


# -- named pipes, devices, sockets -----------------------------------------------------------

def test_a_named_pipe_nobody_writes_returns_with_one_line(tmp_path, populated_store, store_listing):
    fifo = tmp_path / "f.tr"
    os.mkfifo(fifo)
    before = store_listing(populated_store)
    p = tk_env("ingest", fifo, "--data", populated_store, extra={"TRACEKIT_PIPE_WAIT_S": "0"}, timeout=120)
    line = one_line_error(p)
    assert line == (f"tracekit: error: {fifo}: a named pipe that nobody opened for writing within 0 s "
                    "(start its writer first, or set TRACEKIT_PIPE_WAIT_S)")
    assert store_listing(populated_store) == before


def test_a_named_pipe_with_a_writer_ingests(tmp_path, ns_traces):
    """The ingest started first, its writer after (`mkfifo f; tracekit ingest f & ns ... > f`)."""
    fifo = tmp_path / "f.tr"
    os.mkfifo(fifo)
    root = tmp_path / "store"
    proc = subprocess.Popen([*TK, "ingest", str(fifo), "--data", str(root)], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with open(fifo, "wb") as w:            # returns once the ingest has the pipe open
            w.write(ns_traces["wired_plain"].read_bytes())
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-2000:]
    assert out.startswith("added run "), out
    [r] = ingest_paths(root, [ns_traces["wired_plain"]])
    assert r.status == "duplicate"             # the same content as the file itself


def test_a_writer_that_holds_the_pipe_before_writing(tmp_path, ns_traces):
    """A writer that opens the pipe and writes only later (a simulation's first block): the
    open returns once the writer holds it, and the content read is the whole of what it wrote."""
    from tracekit.formats.sources import TraceSource, _open_input

    fifo = tmp_path / "f.tr"
    os.mkfifo(fifo)
    opened = threading.Event()
    got: dict = {}

    def reader():
        try:
            got["raw"] = _open_input(fifo)      # what TraceSource.open opens the file with
        except BaseException as e:          # noqa: B036  (reported by the main thread)
            got["error"] = e
        opened.set()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    w = os.open(fifo, os.O_WRONLY)             # blocks until the reader has the pipe open
    try:
        assert opened.wait(120), "TraceSource.open did not return once a writer held the pipe"
        assert "error" not in got, got
        body = ns_traces["red"].read_bytes()
        os.write(w, body)
    finally:
        os.close(w)
    assert got["raw"].read() == body
    got["raw"].close()
    assert TraceSource  # the reading itself: test_a_named_pipe_with_a_writer_ingests


def test_a_writer_that_comes_later_is_waited_for(tmp_path, ns_traces):
    """The writer opens the pipe after the ingest has looked at it and found nobody."""
    fifo = tmp_path / "f.tr"
    os.mkfifo(fifo)
    root = tmp_path / "store"
    proc = subprocess.Popen([*TK, "ingest", str(fifo), "--data", str(root)], env=env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the ingest holds the pipe open for reading, with no writer: then it is waiting
        deadline_hit = threading.Event()
        timer = threading.Timer(120, deadline_hit.set)
        timer.start()
        while not deadline_hit.is_set():
            fds = Path(f"/proc/{proc.pid}/fd")
            try:
                if any(os.path.realpath(fds / f) == str(fifo) for f in os.listdir(fds)):
                    break
            except OSError:
                pass
            assert proc.poll() is None, proc.communicate()
            deadline_hit.wait(0.05)
        timer.cancel()
        assert not deadline_hit.is_set(), "the ingest never opened the pipe"
        with open(fifo, "wb") as w:
            w.write(ns_traces["red"].read_bytes())
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err[-2000:]
    assert out.startswith("added run "), out


def test_an_anonymous_pipe_that_ended_empty_is_an_empty_file(tmp_path):
    p = subprocess.run(f"true | {' '.join(TK)} ingest /dev/stdin --data {tmp_path / 'store'}", shell=True,
                       capture_output=True, text=True, timeout=120, env=env())
    assert one_line_error(p) == "tracekit: error: /dev/stdin: empty file (no trace lines)"


def test_devices_and_sockets_are_refused_at_once(tmp_path):
    sock_path = tmp_path / "s.tr"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_path))
    try:
        for path, what in (("/dev/zero", "a character device"), (sock_path, "a socket")):
            line = one_line_error(tk("ingest", path, "--data", tmp_path / "store", timeout=120))
            assert line == f"tracekit: error: {path}: is {what}, not a trace file (a regular file or a pipe)"
    finally:
        s.close()


# -- the staging lock a full disk left ---------------------------------------------------------

@pytest.fixture
def tiny_fs(tmp_path):
    """A 2 MiB tmpfs: room for a first run, then filled."""
    yield from mounted_tmpfs(tmp_path, "2m")


@pytest.mark.skipif(not CAN_MOUNT, reason="needs root to mount a small tmpfs")
def test_a_full_disk_leaves_no_staging_lock(tiny_fs, ns_traces, store_listing):
    root = tiny_fs / "store"
    [r] = ingest_paths(root, [ns_traces["red"]])
    assert r.status == "added"
    before = store_listing(root / "runs")
    filler = tiny_fs / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:                                        # every block: not even a lock file's record fits
        while os.write(fd, b"\0" * 65536):
            pass
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)
    line = one_line_error(tk("ingest", ns_traces["wired_plain"], "--data", root))
    assert "no space left on the device" in line
    assert staging_left(root) == []
    assert store_listing(root / "runs") == before
    filler.unlink()
    p = tk("ingest", ns_traces["wired_plain"], "--data", root)
    assert p.returncode == 0, p.stderr
    assert staging_left(root) == []
