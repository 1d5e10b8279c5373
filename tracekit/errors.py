"""Errors that reach the user as one line (the CLI prints them; tests match on them)."""
from __future__ import annotations


class TracekitError(Exception):
    """Any failure the user can act on; its message is a single line."""


class TraceLineError(TracekitError):
    """A malformed line in a trace: names the file and the 1-based line number."""

    def __init__(self, path: str, line_no: int, reason: str, line: str | None = None):
        self.path, self.line_no, self.reason = path, line_no, reason
        shown = ""
        if line is not None:
            text = line if len(line) <= 80 else line[:77] + "..."
            shown = f": {text!r}"
        super().__init__(f"{path}:{line_no}: {reason}{shown}")


class UnsupportedTraceError(TracekitError):
    """A file we recognise but cannot ingest (yet), or do not recognise at all."""
