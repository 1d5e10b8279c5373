"""A resource that cannot be had (a thread, a file descriptor, a process, the output's
disk) anywhere in a command: one line `tracekit: error: ...` and exit 1, never a traceback
nor a signal, and the store as it was (issue 44). Threads and processes are refused by a
small program that patches the standard library, then runs the real entry point
(tracekit.__main__.entry_point) with the command line (root is not held to the thread
limit); descriptors by the limit itself (RLIMIT_NOFILE)."""
from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import NS, listing

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
TRACE = SAMPLES / "cbr-variants" / "Reno-7.0-seed1" / "packets.tr.zst"     # several chunks: every thread
MAX_K = 60          # thread starts tried (a command starts fewer: the loop ends on a success first)

# the k-th threading.Thread.start raises as CPython's does when the system refuses a thread;
# the program notes in HIT_FILE that the k-th start came
REFUSE_KTH_THREAD = """
import os, threading
_k, _n, _start = int(os.environ["KTH"]), [0], threading.Thread.start
def start(self, *a, **kw):
    _n[0] += 1
    if _n[0] == _k:
        open(os.environ["HIT_FILE"], "w").close()
        raise RuntimeError("can't start new thread")
    return _start(self, *a, **kw)
threading.Thread.start = start
"""

# every new process refused as fork/posix_spawn refuse it past the process limit
REFUSE_PROCESSES = """
import errno, subprocess
def refused(self, *a, **kw):
    raise BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable")
subprocess.Popen._execute_child = refused
"""


def env(extra: dict | None = None) -> dict:
    e = {k: v for k, v in os.environ.items() if k not in ("TRACEKIT_DATA", "TRACEKIT_DEBUG", "COLUMNS", "LINES")}
    return {**e, **(extra or {})}


def tracekit_with(code: str, *args, extra_env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """`code`, then the `tracekit` command's entry point with `args`, in a new interpreter."""
    prog = (textwrap.dedent(code) + "\nimport sys\nsys.argv = ['tracekit', *sys.argv[1:]]\n"
            "from tracekit.__main__ import entry_point\nentry_point()\n")
    return subprocess.run([sys.executable, "-c", prog, *map(str, args)], capture_output=True, text=True, timeout=300,
                          env=env(extra_env), **kw)


def success_or_one_line(p: subprocess.CompletedProcess) -> bool:
    """True if the command succeeded; else it failed with exactly one line and status 1."""
    assert p.returncode >= 0, f"killed by signal {-p.returncode}: {p.stderr[-3000:]}"
    assert "Traceback" not in p.stderr, p.stderr[-3000:]
    if p.returncode == 0:
        return True
    lines = p.stderr.splitlines()
    assert p.returncode == 1 and len(lines) == 1 and lines[0].startswith("tracekit: error: "), (p.returncode, p.stderr[-3000:])
    return False


def store_files(root: Path) -> dict:
    """The store's listing without its lock files, which a command leaves by design (they
    are not unlinked: that would race) and which hold no data."""
    return {k: v for k, v in listing(root).items() if not k.startswith(".locks/")}


def refuse_each_thread(tmp_path: Path, root: Path, *args) -> list[str]:
    """Run the command with its 1st, 2nd, ... thread refused until it succeeds without
    reaching the refused start; each failure is one line that says a thread could not be
    started, and leaves the store as it was. The failures' lines."""
    before = store_files(root)
    lines = []
    for k in range(1, MAX_K + 1):
        hit = tmp_path / f"hit-{k}"
        p = tracekit_with(REFUSE_KTH_THREAD, *args, "--data", root, extra_env={"KTH": str(k), "HIT_FILE": str(hit)})
        if not success_or_one_line(p):
            assert hit.exists(), p.stderr        # the refused thread, not something else, failed it
            assert "cannot start a thread" in p.stderr, p.stderr    # a resource, not called a bug
            assert store_files(root) == before, f"thread {k} refused changed the store"
            lines.append(p.stderr)
        elif not hit.exists():
            return lines
        else:                   # done without that thread: what comes after it is tried on the new store
            before = store_files(root)
    pytest.fail(f"the command still reached thread {MAX_K}")


def test_ingest_of_a_new_run_with_each_thread_refused(populated_store, tmp_path):
    lines = refuse_each_thread(tmp_path, populated_store, "ingest", TRACE, "--label", "variant=Reno")
    assert len(lines) >= 3      # the duckdb import ahead, the lease, the read-ahead, the pools...
    runs = subprocess.run([sys.executable, "-m", "tracekit", "sql", "SELECT count(*) AS n FROM runs", "--format", "csv",
                           "--data", populated_store], capture_output=True, text=True, timeout=120, env=env())
    assert runs.stdout.split() == ["n", "2"], runs.stderr     # the run of the success, once


def test_relabel_with_each_thread_refused(populated_store, tmp_path):
    """A trace already in the store, given a new label (the issue's eight concurrent
    `ingest --label` processes, one of which could not start its lease thread)."""
    first = subprocess.run([sys.executable, "-m", "tracekit", "ingest", TRACE, "--data", populated_store],
                           capture_output=True, text=True, timeout=120, env=env())
    assert first.returncode == 0, first.stderr
    lines = refuse_each_thread(tmp_path, populated_store, "ingest", TRACE, "--label", "k=v")
    assert len(lines) >= 2


def test_sql_with_each_thread_refused(populated_store, tmp_path):
    lines = refuse_each_thread(tmp_path, populated_store, "sql", "SELECT count(*) FROM flow_stats")
    assert lines        # the query's own thread at least


def _startable_limit() -> int:
    """The lowest descriptor limit at which this Python starts at all (below it the
    interpreter fails before any of tracekit runs)."""
    for n in range(4, 64):
        p = subprocess.run([sys.executable, "-c", "import tracekit.core.exits"], capture_output=True, timeout=60, env=env(),
                           preexec_fn=lambda n=n: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)))
        if p.returncode == 0:
            return n
    pytest.skip("Python does not start with fewer than 64 descriptors here")


@pytest.mark.parametrize("command", [("ingest", TRACE, "--label", "variant=Vegas"), ("sql", "SELECT count(*) FROM flow_stats")],
                         ids=["ingest", "sql"])
def test_descriptors_short(populated_store, command):
    """Each limit from the lowest Python starts with up to one the command succeeds with:
    one line, the store as it was, and running out of descriptors is not called damage."""
    before = store_files(populated_store)
    n = _startable_limit()
    failures = 0
    while True:
        assert n < 256, "the command never succeeded"
        p = subprocess.run([sys.executable, "-m", "tracekit", *map(str, command), "--data", str(populated_store)],
                           capture_output=True, text=True, timeout=300, env=env(),
                           preexec_fn=lambda n=n: resource.setrlimit(resource.RLIMIT_NOFILE, (n, n)))
        if success_or_one_line(p):
            break
        failures += 1
        assert store_files(populated_store) == before, f"limit {n} changed the store"
        assert "verify --deep" not in p.stderr, p.stderr
        n += 1
    assert failures >= 1


def test_the_command_line_that_cannot_be_imported(tmp_path):
    """The start-up itself short of descriptors (its imports open files): one line."""
    p = tracekit_with("""
        import builtins, errno
        _import = builtins.__import__
        def refused(name, *a, **kw):
            if name == "typer":
                raise OSError(errno.EMFILE, "Too many open files", "/usr/lib/python3/typer/__init__.py")
            return _import(name, *a, **kw)
        builtins.__import__ = refused
        """, "runs", "--data", tmp_path)
    assert not success_or_one_line(p)
    assert "too many open files" in p.stderr and "ulimit -n" in p.stderr


def test_help_written_to_a_full_disk():
    """Output that cannot be written outside any command (typer's help): one line."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "tracekit", "--help"], stdout=full, stderr=subprocess.PIPE, text=True,
                           timeout=120, env=env())
    assert not success_or_one_line(p)
    assert "no space left on device" in p.stderr


@pytest.mark.skipif(not (shutil.which("ns") or os.path.exists(NS)), reason="ns-2 is not installed")
@pytest.mark.parametrize("command", [("run", "cbr-variants", "--set", "duration=1"),
                                     ("sweep", "cbr-variants", "--set", "duration=1", "--seeds", "1-3", "-j", "2")],
                         ids=["run", "sweep"])
def test_ns2_that_cannot_be_started(populated_store, command):
    """No process for ns-2 (fork refused): one line naming what could not be started, and
    nothing of the simulations in the store."""
    before = store_files(populated_store)
    p = tracekit_with(REFUSE_PROCESSES, *command, "--data", populated_store)
    assert not success_or_one_line(p)
    assert "cannot start" in p.stderr and "ns" in p.stderr.split("cannot start")[0], p.stderr
    assert "resource temporarily unavailable" in p.stderr
    assert store_files(populated_store) == before


def test_the_boundary_with_duckdb_half_imported(monkeypatch, capsys):
    """A command failing while another thread is still importing DuckDB (ingest imports it
    ahead): the module is in sys.modules without most of its names yet. The boundary says
    what failed in one line instead of failing on the missing names itself."""
    import types

    import typer

    from tracekit.apps.cli import handles_errors

    half = types.ModuleType("duckdb")       # what `import duckdb` has defined so far: nothing
    monkeypatch.setitem(sys.modules, "duckdb", half)

    @handles_errors
    def command():
        raise RuntimeError("can't start new thread")

    with pytest.raises(typer.Exit) as exit_:
        command()
    assert exit_.value.exit_code == 1
    assert capsys.readouterr().err.splitlines() == [
        "tracekit: error: cannot start a thread (the limit on processes or threads is reached, or memory is short)"]


def test_the_end_waits_for_a_working_thread_and_skips_the_teardown(populated_store, tmp_path):
    """A thread that is not a daemon still working when the command returns: the end waits
    for it, as the usual exit does, then leaves without the interpreter's teardown all the
    same, which would finalise the modules under any daemon thread still inside one (ingest's
    DuckDB import ahead, a query's thread): the witness's __del__ sees a teardown."""
    torn, done = tmp_path / "torn-down", tmp_path / "thread-done"
    prog = textwrap.dedent(f"""
        import sys, threading
        def work():             # still working when the command returns: done once the exit begins
            threading.main_thread().join()
            open({str(done)!r}, "w").close()
        threading.Thread(target=work).start()
        class Witness:
            def __del__(self, _open=open):
                _open({str(torn)!r}, "w").close()
        witness = Witness()
        sys.argv = ["tracekit", "sql", "SELECT 1", "--data", {str(populated_store)!r}]
        from tracekit.apps.cli import entry_point
        entry_point()
        """)
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120, env=env())
    assert p.returncode == 0, p.stderr
    assert done.exists()
    assert not torn.exists()
