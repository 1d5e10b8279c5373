"""The one line a failure ends the process with (its prompt end: tracekit.core.startup)."""
from __future__ import annotations

import errno
import os
import sys

from tracekit.core.errors import shown

# why an errno says a resource ran short (not that the file or the input is wrong)
_SHORT_OF = {
    errno.EMFILE: "the limit on open files, ulimit -n, is reached",
    errno.ENFILE: "the system's limit on open files is reached",
    errno.EAGAIN: "the limit on processes or threads is reached, or memory is short",
    errno.ENOMEM: "memory is short",
}
_NO_THREAD = "can't start new thread"   # the RuntimeError of threading.Thread.start


def describe(e: BaseException) -> str:
    """One line for an exception the library did not turn into a TracekitError. Only looks
    at modules already imported, and only at what they already define: another thread may
    be importing one of them right now (a half-initialised module lacks attributes)."""
    if isinstance(e, MemoryError):
        return "out of memory" + (f": {_first_line(e)}" if str(e) else "")
    if isinstance(e, RuntimeError) and str(e).startswith(_NO_THREAD):
        return f"cannot start a thread ({_SHORT_OF[errno.EAGAIN]})"
    if isinstance(e, OSError) and e.strerror:
        what = e.strerror[:1].lower() + e.strerror[1:]
        if e.errno in _SHORT_OF:
            what += f" ({_SHORT_OF[e.errno]})"
        names = [shown(n) for n in (e.filename, e.filename2) if n is not None]
        return f"{' -> '.join(names)}: {what}" if names else what
    duckdb_error, polars_error = loaded_class("duckdb", "Error"), loaded_class("polars", "exceptions", "PolarsError")
    if duckdb_error is not None and isinstance(e, duckdb_error):
        if "Too many open files" in str(e):
            return f"DuckDB: {_first_line(e)} ({_SHORT_OF[errno.EMFILE]})"
        # a query of tracekit's own failing as it reads the store: most likely a part whose
        # data pages are damaged behind a whole footer (connect checks only each file's end)
        return f"DuckDB: {_first_line(e)} (if the store is damaged, tracekit verify --deep names the run)"
    if polars_error is not None and isinstance(e, polars_error):
        return f"polars: {type(e).__name__}: {_first_line(e)}"
    return f"unexpected {type(e).__name__}: {_first_line(e)} (TRACEKIT_DEBUG=1 shows the traceback)"


def loaded_class(module: str, *names: str) -> type | None:
    """The exception class module.names... if that module is imported and defines it (so
    far: it may be half-imported on another thread), else None."""
    obj: object = sys.modules.get(module)
    for name in names:
        obj = getattr(obj, name, None)
    return obj if isinstance(obj, type) else None


def show_traceback() -> None:
    """The traceback of the exception being handled, with TRACEKIT_DEBUG=1 (beside its line)."""
    if os.environ.get("TRACEKIT_DEBUG", "") not in ("", "0"):
        import traceback

        traceback.print_exc()


def escaped(e: BaseException) -> int:
    """The one line for an exception that escaped every command's boundary (the command line
    started short of memory or descriptors, typer's help written to a full disk); the exit
    status to end with."""
    show_traceback()
    code, msg = (130, "interrupted") if isinstance(e, KeyboardInterrupt) else (1, describe(e))
    try:
        print(f"tracekit: error: {msg[:1000]}", file=sys.stderr)
    except (OSError, ValueError, AttributeError):       # (no stderr left at all: the status says it)
        pass
    return code


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
