"""Running a user's awk script with gawk on a trace, compressed or not, with a time limit."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from tracekit.core.errors import TracekitError
from tracekit.formats.sources import TraceSource

DEFAULT_TIMEOUT_S = 60.0
MAX_OUTPUT_BYTES = 16 * 1024 * 1024


def find_gawk() -> str:
    gawk = shutil.which("gawk")
    if gawk is None:
        raise TracekitError("gawk not found on PATH; install it (apt-get install gawk) to run awk scripts")
    return gawk


def run_awk(script: str | os.PathLike, trace: str | os.PathLike, awk_args: list[str] | tuple[str, ...] = (),
            timeout_s: float = DEFAULT_TIMEOUT_S) -> str:
    """gawk -f SCRIPT AWK_ARGS... TRACE; returns what it printed on stdout. A compressed trace
    (gzip, zstd, bz2, xz) is decompressed into gawk's standard input (`-`) by tracekit's reader
    (an unterminated last line is left out, as ingest leaves it out). One-line TracekitError
    when gawk is missing, the script fails (gawk's first stderr line), or the time is up."""
    script = Path(script)
    if not script.is_file():
        raise TracekitError(f"{script}: no such awk script")
    gawk = find_gawk()
    src = TraceSource.open(trace)            # a missing or unreadable trace: its one-line error
    piped = src.compression != "none"
    if not piped:
        src.close()
    argv = [gawk, "-f", str(script), *awk_args, "-" if piped else str(trace)]
    env = {**os.environ, "LC_ALL": "C"}      # a decimal point, whatever the user's locale
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE if piped else subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    feeder = None
    if piped:
        feeder = threading.Thread(target=_feed, args=(src, proc), daemon=True)
        feeder.start()
    try:
        out, err = proc.communicate(timeout=timeout_s) if not piped else _collect(proc, timeout_s)
    except subprocess.TimeoutExpired:
        _kill(proc)
        raise TracekitError(f"{script}: gawk did not finish within {timeout_s:g} s (stopped); raise --timeout if the trace is large") from None
    finally:
        if feeder is not None:
            src.close()
    if proc.returncode != 0:
        lines = [ln for ln in err.decode("utf-8", "replace").splitlines() if ln.strip()]
        first = lines[0] if lines else ""
        if len(lines) > 1 and "^" in lines[1]:
            # a syntax error: gawk echoes the source line, then points at it with the reason
            first += f" ({lines[1].split('^', 1)[1].strip()})"
        how = f"exit status {proc.returncode}" if proc.returncode > 0 else f"killed by signal {-proc.returncode}"
        raise TracekitError(f"{script}: gawk failed ({how}): {first or 'no message'}")
    return out[:MAX_OUTPUT_BYTES].decode("utf-8", "replace")


def _collect(proc: subprocess.Popen, timeout_s: float) -> tuple[bytes, bytes]:
    """communicate() without touching stdin (the feeder thread writes it)."""
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [threading.Thread(target=lambda: out.append(proc.stdout.read()), daemon=True),  # type: ignore[union-attr]
               threading.Thread(target=lambda: err.append(proc.stderr.read()), daemon=True)]  # type: ignore[union-attr]
    for t in readers:
        t.start()
    proc.wait(timeout=timeout_s)
    for t in readers:
        t.join(5)
    return (out[0] if out else b""), (err[0] if err else b"")


def _feed(src: TraceSource, proc: subprocess.Popen) -> None:
    assert proc.stdin is not None
    try:
        for chunk in src.chunks():
            proc.stdin.write(chunk.data)
    except (BrokenPipeError, OSError, ValueError):
        pass                  # the script stopped reading (exit in a rule), or was killed
    except TracekitError:
        pass                  # corrupt compressed data: gawk sees what came before; ingest reports it
    finally:
        try:
            proc.stdin.close()
        except OSError:
            pass


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()
