"""Which kind of ns-2 trace a file holds, decided from its first lines.

Returns one of the ingestible kinds (those registered in tracekit.formats.parsers) or raises
UnsupportedTraceError naming what the file looks like (nam, binary, ...).
"""
from __future__ import annotations

from tracekit.core.errors import clip_repr, shown
from tracekit.core.errors import UnsupportedTraceError
from tracekit.formats.parsers import DETECTION_ORDER, FORMATS


def classify_line(line: str) -> str | None:
    """The kind a single line belongs to, 'unsupported:<what>', or None when it says nothing
    (blank, comment, annotation, or not a line of any known format). The registered formats
    are asked in their priority order."""
    t = line.split()
    if not t or t[0].startswith("#"):
        return None
    for fmt in DETECTION_ORDER:
        if fmt.claims(line):
            return fmt.kind if fmt.parser is not None else f"unsupported:{fmt.refusal}"
    return None


def _superseded(kind: str, lines: list[str]) -> str:
    """The kind of a format that takes `kind` over (TraceFormat.supersedes) when one of its
    lines is among `lines` (the rest of the sample): a wired-cum-wireless trace whose first
    lines are wireless routing lines without a hierarchical address yet."""
    for fmt in FORMATS.values():
        if kind in fmt.supersedes and any(ln.strip() and not ln.lstrip().startswith("#") and fmt.claims(ln)
                                          for ln in lines):
            return fmt.kind
    return kind


def _kinds_in_words() -> str:
    """'a wired trace, a wireless trace, ... or a RED trace'"""
    words = [f.description for f in FORMATS.values()]
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


def _cut_char(line: bytes, last: bool) -> bool:
    """Whether the only bytes of `line` that are not UTF-8 are a character cut at the end of
    the sample (`last`: the sample's last line)."""
    try:
        line.decode("utf-8")
        return True
    except UnicodeDecodeError as e:
        return last and e.start >= len(line) - 4 and e.reason == "unexpected end of data"


def detect_kind(sample: bytes, path: str, max_lines: int = 50) -> str:
    """Decide the kind from the start of the decompressed content."""
    if not sample.strip():
        raise UnsupportedTraceError(f"{shown(path)}: empty file (no trace lines)")
    raw_lines = sample.split(b"\n")
    if len(sample) >= 4096 and len(raw_lines) > 1:
        raw_lines = raw_lines[:-1]      # the last one may be cut by the sample size
    lines = [ln.decode("utf-8", "replace") for ln in raw_lines]
    seen_any = False
    for i, line in enumerate(lines[:max_lines]):
        # binary data (a NUL byte, bytes that are not UTF-8) before any line that says what the
        # file is: a binary file. After such a line, it is that line's problem (a bad line).
        if b"\x00" in raw_lines[i] or ("\ufffd" in line and not _cut_char(raw_lines[i], i == len(raw_lines) - 1)):
            raise UnsupportedTraceError(f"{shown(path)}: binary file, not an ns-2 text trace")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        seen_any = True
        kind = classify_line(line)
        if kind is None:
            if line.split()[0] == "v":      # annotations come first in some wired traces
                continue
            first = line if len(line) <= 60 else line[:57] + "..."
            raise UnsupportedTraceError(
                f"{shown(path)}: unknown format: {clip_repr(first)} is not a line of {_kinds_in_words()}"
            )
        if kind.startswith("unsupported:"):
            raise UnsupportedTraceError(f"{shown(path)}: looks like {kind.split(':', 1)[1]}, which tracekit cannot ingest yet")
        return _superseded(kind, lines[i:])
    if not seen_any:
        raise UnsupportedTraceError(f"{shown(path)}: empty file (no trace lines, only comments or blank lines)")
    raise UnsupportedTraceError(f"{shown(path)}: unknown format: only annotation ('v') lines at the start")
