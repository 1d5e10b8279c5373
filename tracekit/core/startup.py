"""The start-up tricks that stay (issue 40), each kept because switching it off made the
command it speeds up slower by 10 % or more (benchmarks/RESULTS.md, "Start-up tricks"):

- `polars`, imported on first use: the wired fast path (the C parser to Arrow and Parquet)
  needs no polars, so `tracekit ingest` of a wired trace does not pay for its import;
- `exit_promptly`: the process ends without the interpreter's teardown of DuckDB, pyarrow
  and every module, the last part of every command.

The third, option values coerced without pydantic, patches typer and so lives with the
command line (tracekit.apps.cliparams: the core imports no CLI framework).
"""
from __future__ import annotations

import atexit
import importlib
import os
import sys
import threading
import types
from typing import TYPE_CHECKING, Any

from tracekit.core.exits import describe


class LazyModule(types.ModuleType):
    """A stand-in for module `name` that imports it on the first attribute look-up (under a
    lock: two threads may ask at once), then serves its attributes directly."""

    def __init__(self, name: str):
        super().__init__(name)
        self.__dict__["_lock"] = threading.Lock()

    def __getattr__(self, attr: str) -> Any:
        with self.__dict__["_lock"]:
            mod = importlib.import_module(self.__name__)
            for k, v in mod.__dict__.items():
                self.__dict__.setdefault(k, v)
        return getattr(mod, attr)


if TYPE_CHECKING:
    import polars as polars     # noqa: PLC0414  (re-exported: what the proxy stands for)
else:
    polars = LazyModule("polars")


def exit_promptly(code: object = 0) -> None:
    """End the process now that the command is done, without the interpreter's teardown
    (which also aborted on a thread still importing), after what an exit must do, in the
    usual exit's order: non-daemon threads waited for, the atexit functions, stdout and stderr
    flushed (output that cannot be written: one line and a failed status, quiet on a closed
    pipe). Returns (the caller exits as usual) for a status that is not an int (SystemExit
    prints it), on a thread other than the main one, or without threading's shutdown."""
    if code is None:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool):
        return
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is None or threading.current_thread() is not threading.main_thread():
        return                  # (threading's shutdown, on another thread, would wait for itself)
    shutdown()
    atexit._run_exitfuncs()
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except BrokenPipeError:
        code = code or 141      # the reader went away: no message (tracekit.apps.cli.handles_errors)
    except OSError as e:
        try:
            print(f"tracekit: error: writing the output: {describe(e)}", file=sys.stderr)
        except (OSError, ValueError):
            pass
        code = code or 1
    except ValueError:          # stdout closed by the program: nothing left to write
        pass
    try:
        if sys.stderr is not None:
            sys.stderr.flush()
    except (OSError, ValueError):
        pass
    os._exit(code & 0xFF)
