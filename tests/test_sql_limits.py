"""The limits of `tracekit sql` hold for any query, on the real CLI (a subprocess) over a real
store with the real DuckDB: the memory limit while DuckDB builds one huge value and while the
rows are converted and written (csv, json and the table stream; the table holds only what it
shows), the timeout inside one huge value (where DuckDB does not look for an interrupt), the
threads at most the cores, and SIGTERM as `tracekit: error: terminated`, exit 143. Peak memory
is the command's own (wait4 in a small launcher, _LAUNCHER), with wide margins; no test
measures a duration (the subprocess's own timeout is only a guard against a hang)."""
from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import TRACEKIT_CMD

HANG_GUARD_S = 120
MB = 10**6


def _env(**extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TRACEKIT_DATA", "TRACEKIT_DEBUG")}
    return {**base, **extra}


class Ran:
    def __init__(self, returncode: int, stdout: Path, stderr: str, peak_bytes: int):
        self.returncode, self.stdout_path, self.stderr, self.peak_bytes = returncode, stdout, stderr, peak_bytes

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text()


# The command is started by a small interpreter that forks it and reads its rusage: a process
# pytest starts itself takes pytest's own peak resident memory into its ru_maxrss (Linux keeps
# the high-water mark of the memory it had before exec, and a child forked or vforked from
# pytest had pytest's), so a large test session would be counted as the command's. Signals
# to the launcher go on to the command; the launcher ends as the command did.
_LAUNCHER = textwrap.dedent("""
    import os, signal, sys
    report, argv = sys.argv[1], sys.argv[2:]
    pid = 0
    for sig in (signal.SIGTERM, signal.SIGINT):      # before the fork: no signal is missed
        signal.signal(sig, lambda s, f: pid and os.kill(pid, s))
    pid = os.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    while True:
        try:
            _, status, usage = os.wait4(pid, 0)
            break
        except InterruptedError:
            continue
    with open(report, "w") as f:
        f.write(str(usage.ru_maxrss))
    if os.WIFSIGNALED(status):
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
        os.kill(os.getpid(), os.WTERMSIG(status))
    sys.exit(os.waitstatus_to_exitcode(status))
""")


def run_measured(args, tmp_path: Path, env: dict | None = None, on_start=None) -> Ran:
    """Run one process to its end (killed after HANG_GUARD_S: the test then fails), stdout to
    a file; its exit code, stderr and peak resident memory (its own rusage, from wait4)."""
    stamp = time.monotonic_ns()
    out_path, report = tmp_path / f"stdout-{stamp}", tmp_path / f"maxrss-{stamp}"
    with open(out_path, "wb") as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(report), *TRACEKIT_CMD, *map(str, args)],
                             stdout=out, stderr=err, env=env or _env())
        killed = threading.Event()

        def kill():
            killed.set()
            p.kill()
        guard = threading.Timer(HANG_GUARD_S, kill)
        guard.start()
        try:
            if on_start is not None:
                on_start(p)
            p.wait()
        finally:
            guard.cancel()
        err.seek(0)
        stderr = err.read().decode(errors="replace")
    assert not killed.is_set(), f"still running after {HANG_GUARD_S} s; stderr: {stderr[-2000:]}"
    return Ran(p.returncode, out_path, stderr, int(report.read_text()) * 1024)


def one_error_line(r: Ran, text: str, code: int = 1) -> None:
    assert r.returncode == code, (r.returncode, r.stderr[-2000:])
    assert r.stderr.splitlines() == [f"tracekit: error: {text}"], r.stderr[-2000:]


def cores() -> int:
    return len(os.sched_getaffinity(0))


# -- memory ------------------------------------------------------------------------------------

def test_a_huge_value_stops_at_the_memory_limit(populated_store, tmp_path):
    """DuckDB does not count the string repeat() builds: a 500 MB value under a 50MB limit."""
    r = run_measured(["sql", "--data", populated_store, "--timeout", "0", "--memory-limit", "50MB", "--threads", "1",
                      "SELECT length(repeat('x', 500000000))"], tmp_path)
    one_error_line(r, "query stopped: it needed more than the memory limit of 50MB (--memory-limit)")
    assert r.peak_bytes < 400 * MB, r.peak_bytes / MB
    assert "500000000" not in r.stdout


def test_csv_rows_stream_within_the_memory_limit(populated_store, tmp_path):
    """2 million rows (about 120 MB of CSV) under a 50MB limit: every row written, in order,
    and the process never holds them all."""
    n = 2_000_000
    r = run_measured(["sql", "--data", populated_store, "--memory-limit", "50MB", "--timeout", "0", "--format", "csv",
                      "SELECT i, repeat('y', 50) AS pad FROM range(2000000) t(i)"], tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr[-2000:]
    assert r.peak_bytes < 400 * MB, r.peak_bytes / MB
    with open(r.stdout_path, newline="") as f:
        rows = csv.reader(f)
        assert next(rows) == ["i", "pad"]
        count = 0
        for count, row in enumerate(rows, start=1):
            if row != [str(count - 1), "y" * 50]:
                pytest.fail(f"row {count}: {row!r}")
    assert count == n


def test_the_table_holds_only_the_rows_it_shows(populated_store, tmp_path):
    n = 2_000_000
    r = run_measured(["sql", "--data", populated_store, "--memory-limit", "50MB", "--timeout", "0",
                      "SELECT i, repeat('y', 50) AS pad FROM range(2000000) t(i)"], tmp_path)
    assert r.returncode == 0 and r.stderr == "", r.stderr[-2000:]
    assert r.peak_bytes < 400 * MB, r.peak_bytes / MB
    out = r.stdout
    assert f"... {n - 200} more rows (use --format csv or json for all)" in out
    assert "│ 199 " in out and "│ 200 " not in out


def test_a_table_of_huge_values_is_refused_in_one_line(populated_store, tmp_path):
    """Ten values of 1 MB: more text than the table holds to size its columns (4 MiB)."""
    r = run_measured(["sql", "--data", populated_store, "SELECT repeat('y', 1000000) FROM range(10)"], tmp_path)
    one_error_line(r, "the table's first rows hold more than 4 MiB of text; --format csv or json writes them (as they come)")
    assert "yyyy" not in r.stdout
    r = run_measured(["sql", "--data", populated_store, "--format", "csv", "SELECT repeat('y', 1000000) AS v FROM range(10)"],
                     tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "v\n" + ("y" * 1000000 + "\n") * 10


# -- time --------------------------------------------------------------------------------------

def test_the_timeout_holds_inside_one_huge_value(populated_store, tmp_path):
    """repeat() of 2e9 characters never looks for DuckDB's interrupt; the memory limit is far
    above what it needs before the timeout."""
    r = run_measured(["sql", "--data", populated_store, "--timeout", "1", "--memory-limit", "16GB", "--threads", "1",
                      "SELECT length(repeat('x', 2000000000))"], tmp_path)
    one_error_line(r, "query stopped after 1 s (--timeout)")
    assert "2000000000" not in r.stdout


def test_a_query_run_is_given_up_when_it_cannot_be_stopped(populated_store, tmp_path):
    """QueryRun as the dashboard's SQL page runs it (a thread of a process that goes on): once
    stopped, wait() ends with the stop's error though DuckDB cannot be interrupted. A Python
    function that blocks until the test lets it go stands for a step DuckDB never interrupts
    (a huge repeat()); the run is stopped only once that step has begun, so the query is
    certainly still running when wait() ends, however slow the connect."""
    prog = textwrap.dedent(f"""
        import os, sys, threading
        from tracekit.db.query import QueryRun, default_limits
        entered, held = threading.Event(), threading.Event()
        def held_until_released(x):
            entered.set()
            while not held.is_set():
                try:
                    held.wait(0.05)
                except BaseException:     # an interrupt DuckDB raises in its thread: ignored
                    pass
            return x
        def setup(con):
            con.create_function("held_until_released", held_until_released, ["BIGINT"], "BIGINT", side_effects=True)
        run = QueryRun({str(populated_store)!r}, "SELECT held_until_released(1)", lambda rel: rel.fetchall(),
                       timeout_s=0, limits=default_limits(threads=1), setup=setup).start()
        assert entered.wait(600)
        run.cancel()
        while not run.wait(0.1):
            pass
        print(run.error, run.result, run._thread.is_alive(), flush=True)
        os._exit(0)
    """)
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=HANG_GUARD_S, env=_env())
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout == "query cancelled None True\n"


# -- threads -----------------------------------------------------------------------------------

def test_threads_past_the_cores_are_lowered_to_them(populated_store, tmp_path):
    query = "SELECT current_setting('threads') AS threads"
    r = run_measured(["sql", "--data", populated_store, "--threads", "100000", "--format", "csv", query], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == f"threads\n{cores()}\n"
    r = run_measured(["sql", "--data", populated_store, "--format", "csv", query], tmp_path,
                     env=_env(TRACEKIT_SQL_THREADS="100000"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == f"threads\n{cores()}\n"
    r = run_measured(["sql", "--data", populated_store, "--threads", "1", "--format", "csv", query], tmp_path)
    assert r.stdout == "threads\n1\n"


@pytest.mark.parametrize("n", ["0", "-3"])
def test_threads_below_one_is_a_usage_error(populated_store, tmp_path, n):
    r = run_measured(["sql", "--data", populated_store, "--threads", n, "SELECT 1"], tmp_path)
    assert r.returncode == 2, r.stderr
    assert "--threads" in r.stderr and "Traceback" not in r.stderr
    assert r.stdout == ""


# -- SIGTERM -----------------------------------------------------------------------------------

def _terminate_when_the_query_runs(tmp: Path):
    """on_start: SIGTERM once the query's connection exists (its private temp directory)."""
    def on_start(p):
        deadline = time.monotonic() + HANG_GUARD_S / 2
        while not any(e.name.startswith("tracekit-sql-") for e in tmp.iterdir()):
            assert time.monotonic() < deadline and p.poll() is None, "the query never started"
            time.sleep(0.05)
        p.send_signal(signal.SIGTERM)
    return on_start


@pytest.mark.parametrize("query", [
    "SELECT count(*) FROM range(1000000000000::BIGINT) WHERE random() < 0.5",   # DuckDB sees the interrupt
    "SELECT length(repeat('x', 2000000000))",                                    # it does not
], ids=["interruptible", "inside-one-value"])
def test_sigterm_is_terminated_and_143(populated_store, tmp_path, query):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = run_measured(["sql", "--data", populated_store, "--timeout", "0", "--memory-limit", "16GB", "--threads", "1", query],
                     tmp_path, env=_env(TMPDIR=str(tmp)), on_start=_terminate_when_the_query_runs(tmp))
    one_error_line(r, "terminated", 143)
    assert list(tmp.iterdir()) == []


# -- the writers, against the standard library's ------------------------------------------------

ROWS = [(1, "a,b", None, [1, [2, 3]], {"k": "v\nw"}), (2, 'q"uote', 1.5, [], {}), (3, "", float("nan"), [None], {"x": 1})]
COLUMNS = ["i", "s", "f", "l", "m"]


@pytest.mark.parametrize("batches", [[], [ROWS], [ROWS[:1], [], ROWS[1:]], [[r] for r in ROWS]], ids=["none", "one", "split", "each"])
def test_write_rows_writes_what_the_standard_library_does_for_all_rows_at_once(batches):
    from tracekit.apps.output import write_rows

    rows = [r for b in batches for r in b]
    out = io.StringIO()
    write_rows(COLUMNS, iter(batches), "json", out)
    plain = [{"i": r[0], "s": r[1], "f": None if r[2] != r[2] else r[2], "l": r[3], "m": r[4]} for r in rows]
    assert out.getvalue() == json.dumps(plain, indent=1) + "\n"

    out = io.StringIO()
    write_rows(COLUMNS, iter(batches), "csv", out)
    ref = io.StringIO()
    w = csv.writer(ref, lineterminator="\n")
    w.writerow(COLUMNS)
    for r in rows:
        w.writerow([r[0], r[1], "" if r[2] is None else r[2], json.dumps(r[3]), json.dumps(r[4])])
    assert out.getvalue() == ref.getvalue()
