"""The `tracekit` command's entry (its console script, and `python -m tracekit`): the trace of
a `tracekit ingest` starts being hashed (tracekit.formats.hashahead) before anything else is
imported, then tracekit.apps.cli runs the command. Started here, the hashing child is forked
~15-20 ms after the process starts (the interpreter's start, ~7 ms of imports before the
fork) and hashes at once, while the command line's own imports (typer, then pyarrow and the
parsers) keep the other core idle for ~0.15 s; started by the ingest command itself, after
the command line's import (~30 ms) and as a new interpreter (~15 ms more), its hashing began
~45 ms later (benchmarks/README.md, "The new-format wireless ingest")."""
from __future__ import annotations

import sys

from tracekit.core.exits import escaped, exit_promptly  # light (no import of its own): for a start-up that fails

# the options of `tracekit ingest` that take a value (tests/test_hashahead.py checks them
# against the command's own)
INGEST_VALUED = frozenset({"--label", "-l", "--flow-label", "--series-name", "--data"})


def ingest_path(argv: list[str]) -> str | None:
    """The first trace path of a `tracekit ingest` command line (the arguments after the
    program's name), or None: another command, or no path. A guess at what the command
    will parse: a wrong one costs some CPU, never a wrong digest (a digest is used only for
    the file it was made of, and the command hashes anything else as it reads it)."""
    if not argv or argv[0] != "ingest":
        return None
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return argv[i + 1] if i + 1 < len(argv) else None
        if arg in INGEST_VALUED:
            i += 2
        elif arg.startswith("-"):
            i += 1
        else:
            return arg
    return None


def entry_point() -> None:
    try:
        path = ingest_path(sys.argv[1:])
        if path is not None:
            from tracekit.formats.hashahead import start

            start(path, fork=True)      # the process has one thread so far: a fork is safe
        from tracekit.apps.cli import entry_point as cli_entry_point
    except SystemExit:
        raise
    except BaseException as e:      # the imports short of memory or descriptors, Ctrl-C: one line
        code = escaped(e)
        exit_promptly(code)
        raise SystemExit(code) from None
    cli_entry_point()


if __name__ == "__main__":
    entry_point()
