"""The trace formats: one module each, registering a TraceFormat (its kind, the tables it
writes with their Arrow schemas, `claims(line)` for detection, its parser) when imported.
Adding a format is one module plus its line in the import list at the bottom of this file
(and, to query it, its view in sql/); the store, the detection and the lists of packet
traces all read this registry.

A parser turns a chunk of complete lines into polars frames (or Arrow tables: the wired fast
path's, already of the stored types), one per stored table, plus the offsets of the lines it
could not read; `explain` says in plain words what is wrong with one
such line (only called on the error path).

`parse_text` is the entry point for tests and small inputs: it parses a string and raises
TraceLineError on the first bad line.
"""
from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeAlias

import pyarrow as pa

from tracekit.core.errors import TraceLineError

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)


Frame: TypeAlias = "pl.DataFrame | pa.Table"      # a parser's rows of one table


def arrow_strings(values: list[str], validity: pa.Buffer | None = None, null_count: int = 0) -> pa.Array:
    """A string array of `values` (the C fast paths' dictionaries, the run record's strings),
    with an optional validity bitmap (not pa.array(values): that imports pandas)."""
    encoded = [v.encode() for v in values]
    offsets = [0]
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    return pa.Array.from_buffers(pa.string(), len(values), [validity, pa.py_buffer(struct.pack(f"<{len(offsets)}i", *offsets)),
                                                            pa.py_buffer(b"".join(encoded))], null_count=null_count)


def as_polars(frame: Frame) -> pl.DataFrame:
    """A parser's rows as a polars frame (an Arrow table's dictionary columns as Categorical)."""
    return pl.from_arrow(frame) if isinstance(frame, pa.Table) else frame  # type: ignore[return-value]


@dataclass
class ParsedChunk:
    tables: dict[str, Frame]
    bad_offsets: list[int]                        # 0-based line offsets within the chunk
    bad_count: int = 0
    comments: list[tuple[int, str]] = field(default_factory=list)   # (line_no, text) of '#' lines


class Parser:
    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:  # pragma: no cover
        raise NotImplementedError

    def explain(self, line: str) -> str:  # pragma: no cover
        raise NotImplementedError

    def finish(self, staging: Path) -> list[str]:
        """Called once after the last chunk, with the staging directory holding the parts
        written so far (a format that can only decide some columns from the whole trace
        rewrites its parts here); returns warnings. Raises TracekitError on what the user
        must fix. Most formats need nothing here."""
        return []


# the dictionary-encoded string columns of the stored tables (event codes, packet types, ...)
DICT_STR = pa.dictionary(pa.int32(), pa.string())


@dataclass(frozen=True)
class TraceFormat:
    """A trace format: how detection recognises its lines and what ingesting it stores.
    A format without a parser is recognised only to be refused with a clear message."""

    kind: str                                # the runs' trace_kind (refused: a short name)
    description: str                         # "a wired trace", for messages
    claims: Callable[[str], bool]            # a non-blank, non-comment line is one of ours
    parser: type[Parser] | None = None       # None: refused
    tables: dict[str, pa.Schema] = field(default_factory=dict)   # the first one is the main table
    is_packet_trace: bool = False            # its runs have flows (wired and wireless packets)
    # its flows and packets are stored at ingest (tracekit.ingest.facts: flow_facts, packet_facts);
    # not for a kind whose packets the facts' definitions do not cover (hier: hier_packets)
    has_facts: bool = True
    refusal: str = ""                        # what it looks like, for a refused format
    priority: int = 50                       # detection asks lower numbers first
    # how ns-2 rounds the times it prints in the main table's lines: a line may be earlier
    # than the line before it by this much (rounding), not more. Absolute seconds, and
    # relative to the time for `%g` formats (6 significant digits)
    time_rounding_s: float = 1e-6
    time_rounding_rel: float = 1e-5
    # tables whose rows count as the run's events besides the main table (n_events, t_start,
    # t_end): a wired-cum-wireless trace's wireless_events next to its events
    also_event_tables: tuple[str, ...] = ()
    # kinds this format takes over when detection finds one of its lines in a file's first
    # 64 KiB after a line of that kind (a wired-cum-wireless trace may start with wireless lines)
    supersedes: tuple[str, ...] = ()

    def time_tolerance(self, t: float) -> float:
        """How much earlier than time `t` the next line may be: the rounding of printed times."""
        return max(self.time_rounding_s, self.time_rounding_rel * abs(t))

    @property
    def main_table(self) -> str:
        """The table whose rows a run's n_events counts."""
        return next(iter(self.tables))


FORMATS: dict[str, TraceFormat] = {}         # ingestible formats by kind, in registration order
REFUSED: list[TraceFormat] = []


def register(fmt: TraceFormat) -> TraceFormat:
    if fmt.parser is None:
        REFUSED.append(fmt)
    else:
        if fmt.kind in FORMATS:
            raise ValueError(f"trace format {fmt.kind!r} registered twice")
        FORMATS[fmt.kind] = fmt
    return fmt


_NUM = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")
_INT = re.compile(r"^[-+]?\d+$")
_DIGITS = re.compile(r"^-?\d+$")


def is_num(s: str) -> bool:
    return bool(_NUM.match(s))


def is_int(s: str, bits: int = 32) -> bool:
    if not _INT.match(s):
        return False
    # more digits than 2 ** bits has are out of range, and int() refuses a string of
    # thousands of digits (sys.get_int_max_str_digits) with a ValueError
    if len(s.lstrip("+-").lstrip("0")) > bits // 3 + 1:
        return False
    return -(2 ** (bits - 1)) <= int(s) < 2 ** (bits - 1)


def is_digits(s: str) -> bool:
    """Digits with an optional minus: the looser integer test of detection (no range)."""
    return bool(_DIGITS.match(s))


def load_fast(module: str = "_wiredc"):
    """One of the parsers' compiled modules (_wiredc.c: the wired fast path, normalize_ws,
    count_lines; _wirelessc.c: the wireless fast path), or None: not built (no C compiler at
    install) or switched off with TRACEKIT_PURE_PYTHON=1 (the tests run both ways; the
    results are the same, tests/test_parsers_fast.py, tests/test_parsers_wireless_fast.py)."""
    if os.environ.get("TRACEKIT_PURE_PYTHON", "") not in ("", "0"):
        return None
    import importlib

    try:
        return importlib.import_module(f".{module}", __name__)
    except ImportError:
        return None


_fast = load_fast()


def leading_comments(data: bytes) -> tuple[int, int]:
    """(bytes, lines) of the '#' lines that begin `data` (0, 0 if it does not begin with one)."""
    head = n = 0
    while data.startswith(b"#", head):
        end = data.find(b"\n", head)
        if end < 0:
            break           # no whole line after it: nothing left for the fast path
        head, n = end + 1, n + 1
    return head, n


def parse_fields_fast(data: bytes, first_line_no: int, spec: str, names: list[str],
                      types: list[pa.DataType]) -> tuple[pa.Table, list[tuple[int, str]]] | None:
    """A chunk of lines of one fixed shape read by the compiled fast path (_wiredc.c's
    parse_fields: `spec` says the fields; blanks as normalize_ws leaves them), its leading
    '#' lines (a scenario trace's header) taken as comments: (the table of `names` = line_no
    and the stored fields, of `types`: a "w" field as a dictionary of uint32 codes; the
    comments), or None for any other chunk (a blank, '#' or malformed line after the header,
    a number not in the plain form): the parser's polars path reads those and explains bad
    lines. What it accepts, it reads as that path does (tests/test_parsers_fields_fast.py)."""
    if _fast is None:
        return None
    head, n_head = leading_comments(data)
    if head >= len(data):
        return None
    got = _fast.parse_fields(normalize_ws(data[head:]), first_line_no + n_head, spec)
    if got is None:
        return None
    n, bufs, dicts = got
    words = iter(dicts)
    arrays = []
    for buf, typ in zip(bufs, types):
        if isinstance(typ, pa.DictionaryType):
            codes = pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(buf)])
            arrays.append(pa.DictionaryArray.from_arrays(codes, arrow_strings(next(words))))
        else:
            arrays.append(pa.Array.from_buffers(typ, n, [None, pa.py_buffer(buf)], null_count=0))
    return pa.Table.from_arrays(arrays, names=names), comment_lines(data[:head], first_line_no)


def normalize_ws(data: bytes) -> bytes:
    """Runs of blanks become one space; blanks at line ends go (tcpvar lines are padded)."""
    if _fast is not None:
        return _fast.normalize_ws(data)
    return normalize_ws_py(data)


def normalize_ws_py(data: bytes) -> bytes:
    """normalize_ws in Python (the fallback, and the reference the C one is tested against)."""
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
    """`data` with every line that is not UTF-8 text replaced by BAD_TEXT_LINE, a line no
    parser accepts: polars refuses the whole chunk otherwise, and the line count must not
    change. A line with a NUL byte in it is not text either (polars would read the NUL into
    a string field): that line is bad, the others are read."""
    nul = b"\x00" in data
    if not nul:
        if data.isascii():
            return data
        try:
            data.decode("utf-8")
            return data
        except UnicodeDecodeError:
            pass
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if nul and b"\x00" in line:
            lines[i] = BAD_TEXT_LINE
            continue
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            lines[i] = BAD_TEXT_LINE
    return b"\n".join(lines)


def binary_line(line: str) -> str | None:
    """Why a line as `lines_at` shows it is not text (bytes that are not UTF-8, a NUL byte),
    or None: said before any format's own `explain`, which would judge its fields."""
    if "\x00" in line:
        return "a NUL byte in the line (binary data in the trace?)"
    if "\ufffd" in line:
        return "not UTF-8 text (binary data in the trace?)"
    return None


def read_fields(data: bytes, schema: dict) -> pl.DataFrame:
    """Space-separated fields into typed columns, one row per line (blank lines give an
    all-null row). Fields that do not parse become null; extra fields land in the last
    column, so schemas end with a String catch-all. Lines that are not UTF-8 text read as
    BAD_TEXT_LINE. `schema`: column -> polars type, or its name ("Int32": the parser modules
    name them, so that importing them does not import polars)."""
    return pl.read_csv(
        text_lines_only(data),
        has_header=False,
        separator=" ",
        schema={k: getattr(pl, v) if isinstance(v, str) else v for k, v in schema.items()},
        quote_char=None,
        truncate_ragged_lines=True,
        extra_columns="ignore",
        missing_columns="insert",
        ignore_errors=True,
    )


def comment_lines(data: bytes, first_line_no: int) -> list[tuple[int, str]]:
    """'#' lines with their line numbers (rare: scan only when a '#' starts a line)."""
    starts = [0] if data.startswith(b"#") else []
    at = data.find(b"\n#")
    while at >= 0:                  # found, not split: a trace's lines are nearly all events
        starts.append(at + 1)
        at = data.find(b"\n#", at + 1)
    out = []
    line_no, counted = first_line_no, 0
    for s in starts:
        line_no += data.count(b"\n", counted, s)
        counted = s
        end = data.find(b"\n", s)
        line = data[s:] if end < 0 else data[s:end]
        out.append((line_no, line.decode("utf-8", "replace").rstrip("\r")))
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


# annotations: the `v` lines of wired and wireless traces (trace-annotate, link-down/up), kept
# verbatim; a table several formats write.
ANNOTATIONS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),
        ("text", pa.string()),        # everything after the time field
    ]
)


def annotation_rows(data: bytes, offsets: list[int], first_line_no: int) -> tuple[pl.DataFrame, list[int]]:
    """The `v` lines at `offsets` of a chunk as annotations rows (line_no, time, text: the
    raw line after its time field), and the offsets of those without a numeric time."""
    texts = lines_at(data, offsets)
    rows, bad = [], []
    for off in offsets:
        parts = texts[off].split(" ", 2)
        if len(parts) >= 2 and is_num(parts[1]):
            rows.append((first_line_no + off, float(parts[1]), parts[2] if len(parts) > 2 else ""))
        else:
            bad.append(off)
    frame = pl.DataFrame(rows, schema={"line_no": pl.Int64, "time": pl.Float64, "text": pl.String}, orient="row")
    return frame, bad


ANNOTATION_EXPLAINED = "annotation line ('v') without a numeric time"


def get_parser(kind: str) -> Parser:
    parser = FORMATS[kind].parser
    assert parser is not None
    return parser()


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
        raise TraceLineError(path, off + 1, binary_line(line) or parser.explain(line), line)
    return {name: as_polars(frame) for name, frame in res.tables.items()}


# Registration: importing a format's module registers it. The order of this list is the
# order of the kinds in messages and of their tables.
from tracekit.formats.parsers import wired, wireless, hier, tcpvar, queue, red, series, nam, refused  # noqa: E402, F401

# kind -> the table holding its rows; every stored table -> its schema; packet-trace kinds
MAIN_TABLE: dict[str, str] = {k: f.main_table for k, f in FORMATS.items()}
TABLES: dict[str, pa.Schema] = {name: schema for f in FORMATS.values() for name, schema in f.tables.items()}
# PACKET_KINDS: the Python side's one packet-trace-run filter (`kind in PACKET_KINDS`), for code
# without a connection; SQL uses the macro is_packet_trace (sql/macros), the same list
PACKET_KINDS: tuple[str, ...] = tuple(k for k, f in FORMATS.items() if f.is_packet_trace)
# the order detection asks the formats in (sorted is stable: registration order within a priority)
DETECTION_ORDER: tuple[TraceFormat, ...] = tuple(sorted([*FORMATS.values(), *REFUSED], key=lambda f: f.priority))
