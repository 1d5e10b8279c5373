"""The `tracekit` command ends without the interpreter's teardown once a command is done
(tracekit.apps.cli.entry_point -> tracekit.core.startup.exit_promptly), and still does what an exit must:
the atexit functions (the SQL connection's temporary directory removed), stdout whole, the
same exit status; where another thread is still working it waits for it first, as the usual
exit does, and still skips the teardown; tracekit.apps.cli.main called in a process of the caller's still ends by SystemExit. Each in a
subprocess over a real store."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

from conftest import TRACEKIT_CMD


def run_main(code: str, *args, env: dict | None = None) -> subprocess.CompletedProcess:
    """A Python program that does `code`, then runs the command's entry point with `args`."""
    prog = (textwrap.dedent(code) + "\nimport sys\nfrom tracekit.apps.cli import entry_point\n"
            "sys.argv = ['tracekit', *sys.argv[1:]]\nentry_point()\n")
    return subprocess.run([sys.executable, "-c", prog, *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_a_finished_command_skips_the_teardown_but_runs_atexit(populated_store, tmp_path):
    """An object alive at the end would be finalised by the interpreter's teardown (its
    __del__ writes a file); the prompt exit skips that and runs the atexit functions."""
    torn, at_exit = tmp_path / "torn-down", tmp_path / "atexit-ran"
    p = run_main(f"""
        import atexit
        class Witness:
            def __del__(self, _open=open):      # (builtins may be gone by then)
                _open({str(torn)!r}, "w").close()
        witness = Witness()
        atexit.register(lambda: open({str(at_exit)!r}, "w").close())
        """, "sql", "SELECT 42 AS answer", "--format", "csv", "--data", populated_store)
    assert p.returncode == 0, p.stderr
    assert p.stdout == "answer\n42\n"
    assert at_exit.exists()
    assert not torn.exists()


def test_without_it_the_witness_is_torn_down(populated_store, tmp_path):
    """The witness above does detect a teardown: with the prompt exit switched off, the
    interpreter's finalisation runs its __del__ (so the test above can fail)."""
    torn = tmp_path / "torn-down"
    p = run_main(f"""
        import tracekit.core.startup
        tracekit.core.startup.exit_promptly = lambda code=0: None
        class Witness:
            def __del__(self, _open=open):      # (builtins may be gone by then)
                _open({str(torn)!r}, "w").close()
        witness = Witness()
        """, "sql", "SELECT 1", "--data", populated_store)
    assert p.returncode == 0, p.stderr
    assert torn.exists()


def test_the_sql_temp_directory_is_removed(populated_store, tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    p = subprocess.run([*TRACEKIT_CMD, "sql", "SELECT count(*) FROM runs", "--data", str(populated_store)],
                       capture_output=True, text=True, timeout=120, env={**os.environ, "TMPDIR": str(tmp)})
    assert p.returncode == 0, p.stderr
    assert list(tmp.iterdir()) == []


def test_exit_statuses_and_a_whole_stdout(populated_store, tmp_path):
    out = tmp_path / "rows.csv"
    with open(out, "w") as f:           # a file: stdout block-buffered, flushed before the exit
        p = subprocess.run([*TRACEKIT_CMD, "sql", "SELECT * FROM range(300000)", "--format", "csv",
                            "--data", str(populated_store)], stdout=f, stderr=subprocess.PIPE, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 300001 and lines[0] == "range" and lines[-1] == "299999"
    bad = subprocess.run([*TRACEKIT_CMD, "sql", "SELECT nope", "--data", str(populated_store)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and bad.stderr.startswith("tracekit: error: ")
    usage = subprocess.run([*TRACEKIT_CMD, "sql", "--no-such-option"], capture_output=True, text=True, timeout=120)
    assert usage.returncode == 2


def test_a_thread_still_working_is_waited_for(populated_store, tmp_path):
    """A non-daemon thread still running when the command returns: the usual exit, which
    waits for it (os._exit would end it before it writes its file)."""
    done = tmp_path / "thread-done"
    p = run_main(f"""
        import threading, time
        def work():
            time.sleep(1.0)
            open({str(done)!r}, "w").close()
        threading.Thread(target=work).start()
        """, "sql", "SELECT 1", "--data", populated_store)
    assert p.returncode == 0, p.stderr
    assert done.exists()


def test_exit_promptly_keeps_the_status():
    for code, want in ((0, 0), (None, 0), (3, 3), (141, 141)):
        p = subprocess.run([sys.executable, "-c", f"from tracekit.core.startup import exit_promptly\nexit_promptly({code!r})\n"
                            "raise SystemExit(99)"], capture_output=True, text=True, timeout=60)
        assert p.returncode == want, (code, p.returncode, p.stderr)
    # a message as the status: left to SystemExit, which prints it and exits 1
    p = subprocess.run([sys.executable, "-c", "from tracekit.core.startup import exit_promptly\nexit_promptly('bye')\n"
                        "raise SystemExit('bye')"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and p.stderr.strip() == "bye"


def test_main_in_a_process_of_the_callers_ends_by_SystemExit(populated_store):
    """A program that calls tracekit.apps.cli.main itself (twice here) gets SystemExit each time,
    as from any typer command, and goes on; only the entry point ends the process."""
    prog = textwrap.dedent(f"""
        import sys
        from tracekit.apps.cli import main
        codes = []
        for query in ("SELECT 1", "SELECT nope"):
            sys.argv = ["tracekit", "sql", query, "--data", {str(populated_store)!r}]
            try:
                main()
            except SystemExit as e:
                codes.append(e.code)
        print("codes", codes)
        """)
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-1] == "codes [0, 1]"


def test_the_command_and_python_m_tracekit_go_through_the_entry_point(populated_store, tmp_path):
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="tracekit")
    assert script.value == "tracekit.__main__:entry_point"
    torn = tmp_path / "torn-down"
    prog = textwrap.dedent(f"""
        import runpy, sys
        class Witness:
            def __del__(self, _open=open):
                _open({str(torn)!r}, "w").close()
        witness = Witness()
        sys.argv = ["tracekit", "sql", "SELECT 1", "--data", {str(populated_store)!r}]
        runpy.run_module("tracekit", run_name="__main__")
        """)
    p = subprocess.run([sys.executable, "-c", prog], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert not torn.exists()
