"""The `tracekit` command's entry (its console script, and `python -m tracekit`)."""
from __future__ import annotations

from tracekit.core.exits import escaped
from tracekit.core.startup import exit_promptly


def entry_point() -> None:
    try:
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
