"""Errors that reach the user as one line (the CLI prints them; tests match on them)."""
from __future__ import annotations

import re

# how much of a field from the input an error message quotes
QUOTE_CHARS = 80
# no message is longer than this: a safety net under `clip_repr` (ns-2's output tail, the
# longest legitimate message, is 20 lines)
MAX_MESSAGE_CHARS = 4000


def clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text` cut to about `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit - 3]}... ({len(text):,} characters)"


def clip_repr(value: object, limit: int = QUOTE_CHARS) -> str:
    """repr() of a value from the input, cut to about `limit` characters: error messages
    quote fields this way, so a 10 MB field or a block of NUL bytes stays one short line."""
    if not isinstance(value, str):
        return clip(repr(value), limit)
    r = repr(value[:limit])
    if len(value) <= limit and len(r) <= limit + 2:
        return r
    return f"{r[:limit + 1]}{r[0]}... ({len(value):,} characters)"


# what would break a message's line: the C0 and C1 control characters (newline, carriage
# return, escape, ...) and the Unicode line and paragraph separators (str.splitlines breaks there)
_LINE_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def escape_chars(text: str, chars: re.Pattern[str] = _LINE_BREAKING) -> str:
    """`text` with each character `chars` matches written as its Python escape (`\\n`, `\\x1b`)."""
    return chars.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def shown(path: object) -> str:
    """A file name as a message shows it: its control characters escaped as Python writes
    them (a newline as \\n), so that a name with a newline in it keeps the message one line."""
    return escape_chars(str(path))


class TracekitError(Exception):
    """Any failure the user can act on; its message is a single line."""

    def __init__(self, *args: object):
        if len(args) == 1 and isinstance(args[0], str) and len(args[0]) > MAX_MESSAGE_CHARS:
            m = args[0]
            half = MAX_MESSAGE_CHARS // 2
            args = (f"{m[:half]} ... [{len(m) - 2 * half:,} characters cut] ... {m[-half:]}",)
        super().__init__(*args)


class StoreWriteError(TracekitError):
    """Writing into the store failed (full disk, read-only, no permission): every further
    file would fail the same way, so an ingest stops at the first."""


class TraceLineError(TracekitError):
    """A malformed line in a trace: names the file and the 1-based line number."""

    def __init__(self, path: str, line_no: int, reason: str, line: str | None = None):
        self.path, self.line_no, self.reason = path, line_no, reason
        quoted = f": {clip_repr(line)}" if line is not None else ""
        super().__init__(f"{shown(path)}:{line_no}: {reason}{quoted}")


class UnsupportedTraceError(TracekitError):
    """A file we recognise but cannot ingest (yet), or do not recognise at all."""


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt, so that every
    cleanup that runs on Ctrl-C (staging directories, ns-2 children) runs on it too."""
