"""One parser per trace kind. Each turns a chunk of complete lines into polars frames, one
per stored table, plus the offsets of the lines it could not read; `explain` says in plain
words what is wrong with one such line (only called on the error path).

`parse_text` is the entry point for tests and small inputs: it parses a string and raises
TraceLineError on the first bad line.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import polars as pl

from ..errors import TraceLineError


@dataclass
class ParsedChunk:
    tables: dict[str, pl.DataFrame]
    bad_offsets: list[int]                        # 0-based line offsets within the chunk
    bad_count: int = 0
    comments: list[tuple[int, str]] = field(default_factory=list)   # (line_no, text) of '#' lines


class Parser:
    kind: str = ""
    main_table: str = ""

    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:  # pragma: no cover
        raise NotImplementedError

    def explain(self, line: str) -> str:  # pragma: no cover
        raise NotImplementedError


_NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_INT = re.compile(r"^[-+]?\d+$")


def is_num(s: str) -> bool:
    return bool(_NUM.match(s))


def is_int(s: str, bits: int = 32) -> bool:
    return bool(_INT.match(s)) and -(2 ** (bits - 1)) <= int(s) < 2 ** (bits - 1)


def normalize_ws(data: bytes) -> bytes:
    """Runs of blanks become one space; blanks at line ends go (tcpvar lines are padded)."""
    # bytes.replace, not a regex: a regex rewrites every space of the chunk, ten times
    # slower on wireless traces, whose lines all end with a blank
    if b"\r\n" in data:
        data = data.replace(b"\r\n", b"\n")
    if b"\t" in data:
        data = data.replace(b"\t", b" ")
    while b"  " in data:
        data = data.replace(b"  ", b" ")
    if b" \n" in data:
        data = data.replace(b" \n", b"\n")
    if b"\n " in data:
        data = data.replace(b"\n ", b"\n")
    if data.startswith(b" "):
        data = data[1:]
    if data.endswith(b" "):
        data = data[:-1]
    return data


BAD_TEXT_LINE = b"?not-utf-8?"


def text_lines_only(data: bytes) -> bytes:
    """`data` with every line that is not UTF-8 replaced by BAD_TEXT_LINE, a line no parser
    accepts: polars refuses the whole chunk otherwise, and the line count must not change."""
    if data.isascii():
        return data
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        pass
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            lines[i] = BAD_TEXT_LINE
    return b"\n".join(lines)


def read_fields(data: bytes, schema: dict) -> pl.DataFrame:
    """Space-separated fields into typed columns, one row per line (blank lines give an
    all-null row). Fields that do not parse become null; extra fields land in the last
    column, so schemas end with a String catch-all. Lines that are not UTF-8 text read as
    BAD_TEXT_LINE."""
    return pl.read_csv(
        text_lines_only(data),
        has_header=False,
        separator=" ",
        schema=schema,
        quote_char=None,
        truncate_ragged_lines=True,
        extra_columns="ignore",
        missing_columns="insert",
        ignore_errors=True,
    )


def comment_lines(data: bytes, first_line_no: int) -> list[tuple[int, str]]:
    """'#' lines with their line numbers (rare: scan only when a '#' starts a line)."""
    if not (data.startswith(b"#") or b"\n#" in data):
        return []
    out = []
    for i, line in enumerate(data.split(b"\n")):
        if line.startswith(b"#"):
            out.append((first_line_no + i, line.decode("utf-8", "replace").rstrip("\r")))
    return out


def lines_at(data: bytes, offsets: list[int]) -> dict[int, str]:
    want = set(offsets)
    out = {}
    for i, line in enumerate(data.split(b"\n")):
        if i in want:
            out[i] = line.decode("utf-8", "replace").rstrip("\r")
            if len(out) == len(want):
                break
    return out


def get_parser(kind: str) -> Parser:
    from . import queue, red, tcpvar, wired, wireless

    return {
        "wired": wired.WiredParser,
        "tcpvar": tcpvar.TcpVarParser,
        "queue_monitor": queue.QueueMonitorParser,
        "red": red.RedParser,
        "wireless": wireless.WirelessParser,
    }[kind]()


def parse_text(text: str, kind: str = "wired", path: str = "<text>") -> dict[str, pl.DataFrame]:
    """Parse a whole string (tests, small inputs); raise TraceLineError on the first bad line."""
    data = text.encode()
    if data and not data.endswith(b"\n"):
        data += b"\n"
    parser = get_parser(kind)
    res = parser.parse_chunk(data, 1)
    if res.bad_offsets:
        off = res.bad_offsets[0]
        line = lines_at(data, [off])[off]
        raise TraceLineError(path, off + 1, parser.explain(line), line)
    return res.tables
