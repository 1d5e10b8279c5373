"""Formats tracekit recognises only to refuse them with a message saying what the file is
(hierarchical addresses are refused by the wired parser, line by line)."""
from __future__ import annotations

from tracekit.formats.parsers import TraceFormat, register


def _tagged(line: str) -> bool:
    t = line.split()
    return t[0] in ("+", "-", "r", "d", "e", "h") and len(t) >= 4 and t[2] == "-s" and t[1] != "-t"


def _oneline_tcpvar(line: str) -> bool:
    t = line.split()
    return t[0] == "time:" and "saddr:" in t and t[1] != "-t"


register(TraceFormat(
    kind="tagged", description="a tagged wired trace", claims=_tagged,
    refusal="a tagged wired trace (use-taggedtrace)",
))
register(TraceFormat(
    kind="tcpvar_oneline", description="a one-line TCP variable trace", claims=_oneline_tcpvar,
    refusal="a one-line TCP variable trace (trace_all_oneline_; the plain format is supported)",
))
