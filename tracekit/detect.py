"""Which kind of ns-2 trace a file holds, decided from its first lines.

Returns one of the ingestible kinds (`wired`, `tcpvar`, `queue_monitor`, `red`, `wireless`) or raises
UnsupportedTraceError naming what the file looks like (wireless, nam, binary, ...).
"""
from __future__ import annotations

import re

from .errors import UnsupportedTraceError
from .parsers import is_num as _num

_INT = re.compile(r"^-?\d+$")
_WIRELESS_NODE = re.compile(r"^_\d+_$")

KINDS = ("wired", "tcpvar", "queue_monitor", "red", "wireless")


def classify_line(line: str) -> str | None:
    """The kind a single line belongs to, 'unsupported:<what>', or None when it says nothing
    (blank, comment, annotation, or not a line of any known format)."""
    t = line.split()
    if not t or t[0].startswith("#"):
        return None
    e = t[0]
    if len(t) >= 2 and t[1] == "-t":
        if e == "q":
            return "queue_monitor"
        if e in ("s", "r", "f", "d", "D") and ("-Nl" in t or "-Ni" in t):
            return "wireless"
        if e == "N" and len(t) >= 6 and t[3] == "-n":
            return "wireless"          # energy lines of a new-format wireless trace
        if e in ("V", "n", "l", "c", "A", "q", "+", "-", "h", "r", "d", "v", "f", "a"):
            return "unsupported:a nam trace (use the normal trace from `$ns trace-all`)"
        return None
    if e in ("s", "r", "f", "d", "D") and len(t) >= 4 and _WIRELESS_NODE.match(t[2]):
        return "wireless"
    if e == "M" and len(t) >= 3 and _num(t[1]):
        return "wireless"              # movement lines
    if len(e) > 1 and e[0] == "S" and len(t) >= 2 and _num(t[1]) and e.isalnum():
        return "wireless"              # DSR's own lines (SFs, Sconfig, ...)
    if e in ("+", "-", "r", "d", "e", "h") and len(t) >= 4 and t[2] == "-s":
        return "unsupported:a tagged wired trace (use-taggedtrace)"
    if e in ("+", "-", "r", "d", "e", "h") and len(t) >= 12 and _num(t[1]) and _INT.match(t[2]) and _INT.match(t[3]):
        return "wired"
    if e == "time:" and "saddr:" in t:
        return "unsupported:a one-line TCP variable trace (trace_all_oneline_; the plain format is supported)"
    if len(t) == 7 and _num(t[0]) and all(_INT.match(x) for x in t[1:5]) and _num(t[6]):
        return "tcpvar"
    if len(t) == 11 and all(_num(x) for x in t):
        return "queue_monitor"
    if e in ("Q", "a", "p", "c") and len(t) == 3 and _num(t[1]) and _num(t[2]):
        return "red"
    return None


def detect_kind(sample: bytes, path: str, max_lines: int = 50) -> str:
    """Decide the kind from the start of the decompressed content."""
    if not sample.strip():
        raise UnsupportedTraceError(f"{path}: empty file (no trace lines)")
    if b"\x00" in sample:
        raise UnsupportedTraceError(f"{path}: binary file, not an ns-2 text trace")
    try:
        text = sample.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(sample) - 4:   # a multi-byte char cut at the end of the sample is fine
            raise UnsupportedTraceError(f"{path}: binary file, not an ns-2 text trace") from None
        text = sample[: e.start].decode("utf-8")
    lines = text.split("\n")
    if len(sample) >= 4096 and len(lines) > 1:
        lines = lines[:-1]              # the last one may be cut by the sample size
    seen_any = False
    for line in lines[:max_lines]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        seen_any = True
        kind = classify_line(line)
        if kind is None:
            if line.split()[0] == "v":      # annotations come first in some wired traces
                continue
            first = line if len(line) <= 60 else line[:57] + "..."
            raise UnsupportedTraceError(
                f"{path}: unknown format: {first!r} is not a line of a wired trace, a wireless "
                "trace, a TCP variable trace, a queue monitor trace or a RED trace"
            )
        if kind.startswith("unsupported:"):
            raise UnsupportedTraceError(f"{path}: looks like {kind.split(':', 1)[1]}, which tracekit cannot ingest yet")
        return kind
    if not seen_any:
        raise UnsupportedTraceError(f"{path}: empty file (no trace lines, only comments or blank lines)")
    raise UnsupportedTraceError(f"{path}: unknown format: only annotation ('v') lines at the start")
