"""Ending the process once its work is done (the CLI's last step; benchmark drivers that
stand for a CLI command end the same way)."""
from __future__ import annotations

import os
import sys


def exit_promptly(code: object = 0) -> None:
    """End the process now that the command is done, without the interpreter's teardown: with
    DuckDB and pyarrow loaded, freeing every module's objects and running their libraries'
    destructors takes 60-100 ms, a third of `tracekit sql "SELECT 1"`, and is the last part of
    a sweep's tail (benchmarks/RESULTS.md). What an exit must still do is done first: the
    atexit functions (weakref finalizers among them: query's temporary directory), then
    stdout and stderr flushed, then os._exit with the same status. Returns (the caller exits
    as usual) where that is not safe: another thread that is not a daemon still running (the
    usual exit waits for it), a status that is not an int (SystemExit prints it), or a flush
    that fails (the usual exit reports it)."""
    import atexit
    import threading

    if code is None:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool):
        return
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return
    os._exit(code & 0xFF)
