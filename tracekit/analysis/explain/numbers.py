"""The numbers a script printed, each with the words around it and the unit label beside it."""
from __future__ import annotations

import re
from dataclasses import dataclass

MAX_NUMBERS = 2000

# a number not glued to a word before it (`fid1`, `_2_`) and followed by nothing but a unit
# (`46.8ms`, `355.1kbps`; not `x86`, `3.0.1`); awk prints %.6g, %f, %e and integers
_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?P<suffix>[A-Za-z/%]*)(?![\w.])")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Unit:
    text: str
    kind: str          # rate | time | percent | count
    power: int = 0     # rate: 0 bit/s, 1 k, 2 M, 3 G
    factor: float = 1.0   # time: seconds -> this unit


_RATE = re.compile(r"^(?P<p>[kKmMgG]?)(?:bps|b/s|bit/s|bits/s|bits?ps|bit/sec|bits/sec)$")
_TIME = {"ms": 1000.0, "msec": 1000.0, "millisec": 1000.0, "milliseconds": 1000.0, "millisecond": 1000.0,
         "s": 1.0, "sec": 1.0, "secs": 1.0, "second": 1.0, "seconds": 1.0,
         "us": 1e6, "µs": 1e6, "microseconds": 1e6}
_COUNT = {"packets", "pkts", "packet", "bytes", "byte"}


def parse_unit(word: str) -> Unit | None:
    w = word.strip("()[],;:=")
    if not w:
        return None
    if w == "%":
        return Unit("%", "percent")
    m = _RATE.match(w)
    if m:
        return Unit(w, "rate", {"": 0, "k": 1, "m": 2, "g": 3}[m.group("p").lower()])
    if w.lower() in _TIME:
        return Unit(w, "time", factor=_TIME[w.lower()])
    if w.lower() in _COUNT:
        return Unit(w, "count")
    return None


@dataclass(frozen=True)
class Printed:
    text: str          # as printed
    value: float
    decimals: int      # digits after the point (exponent included)
    significant: int
    context: str       # the output line it is on
    line_no: int       # 1-based line of the output
    unit: Unit | None  # the label beside it, if any


def _digits(text: str) -> tuple[int, int]:
    mant, _, exp = text.lower().lstrip("+-").partition("e")
    whole, _, frac = mant.partition(".")
    decimals = len(frac) - (int(exp) if exp else 0)
    digits = (whole + frac).lstrip("0")
    return decimals, max(len(digits), 1)


def _unit_near(line: str, start: int, end: int, prev_end: int) -> Unit | None:
    """The unit label right after the number (`355.1 kbps`, `355.1kbps`, `98 %`), else a label
    among the words between the previous number and this one (`Throughput (kbps): 355.1`), the
    nearest."""
    after = line[end:]
    glued = re.match(r"\s*(%|[^\s,;]+)", after)
    if glued:
        u = parse_unit(glued.group(1))
        if u:
            return u
    for w in reversed(_WORD.findall(line[prev_end:start])):
        inner = re.search(r"\(([^)]*)\)", w)
        u = parse_unit(w) or (parse_unit(inner.group(1)) if inner else None)
        if u and u.kind != "count":      # "packet delivery ratio: 0.98" is not a count
            return u
    return None


def read_numbers(output: str, limit: int = MAX_NUMBERS) -> list[Printed]:
    """Every number in the output, in order; of more than `limit`, the first and the last
    limit / 2 (a summary usually comes last, after per-packet lines)."""
    every = _all_numbers(output)
    if len(every) <= limit:
        return every
    return every[: limit // 2] + every[len(every) - (limit - limit // 2):]


def count_numbers(output: str) -> int:
    return len(_all_numbers(output))


def _all_numbers(output: str) -> list[Printed]:
    out: list[Printed] = []
    for i, line in enumerate(output.splitlines(), 1):
        prev_end = 0
        for m in _NUMBER.finditer(line):
            suffix = m.group("suffix")
            if suffix and parse_unit(suffix) is None:
                continue                     # part of a word (`2nd`, `10x`)
            text = m.group(0)[: len(m.group(0)) - len(suffix)]
            try:
                value = float(text)
            except ValueError:
                continue
            decimals, significant = _digits(text)
            end = m.end() - len(suffix)
            out.append(Printed(text, value, decimals, significant, line.strip(), i, _unit_near(line, m.start(), end, prev_end)))
            prev_end = m.end()
    return out
