"""Queue monitor output, both shapes (one file may hold either or both):
- periodic `monitor-queue` samples: `time from to meanBytesQ meanPktsQ parrivals pdepartures
  pdrops barrivals bdepartures bdrops` (means over the last interval, counters cumulative);
- per-event lines from `[$ns link a b] start-tracing`: `q -t time -s from -d to -l bytes -p pkts`.
"""
from __future__ import annotations

import pyarrow as pa

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)

from tracekit.core.errors import clip_repr
from tracekit.formats.parsers import DICT_STR, ParsedChunk, Parser, TraceFormat, comment_lines, is_int, is_num, leading_comments, normalize_ws, parse_fields_fast, arrow_strings, read_fields, register

# queue_samples: queue monitor output. sample_kind 'periodic' = a `monitor-queue` sample
# (bytes/pkts are time averages over the last interval, counters cumulative since start);
# 'event' = a per-event `q -t` line (bytes/pkts instantaneous, counters NULL).
QUEUE_SAMPLES = pa.schema(
    [
        ("line_no", pa.int64()),
        ("sample_kind", DICT_STR),
        ("time", pa.float64()),
        ("from_node", pa.int32()),
        ("to_node", pa.int32()),
        ("bytes", pa.float64()),
        ("pkts", pa.float64()),
        ("arrivals_pkts", pa.int64()),
        ("departures_pkts", pa.int64()),
        ("drops_pkts", pa.int64()),
        ("arrivals_bytes", pa.int64()),
        ("departures_bytes", pa.int64()),
        ("drops_bytes", pa.int64()),
    ]
)


_READ = {f"c{i}": "String" for i in range(12)}
_OUT = ("line_no", "sample_kind", "time", "from_node", "to_node", "bytes", "pkts",
        "arrivals_pkts", "departures_pkts", "drops_pkts", "arrivals_bytes", "departures_bytes", "drops_bytes")
_COUNTERS = ("arrivals_pkts", "departures_pkts", "drops_pkts", "arrivals_bytes", "departures_bytes", "drops_bytes")


def _f(c: str) -> pl.Expr:
    return pl.col(c).cast(pl.Float64, strict=False)


def _i(c: str, dt: str = "Int32") -> pl.Expr:
    return pl.col(c).cast(getattr(pl, dt), strict=False)


# the compiled fast path's reading of the two shapes of line, each stored field in _OUT order
_FAST = {
    "event": ("=q =-t f =-s i =-d i =-l f =-p f", ["line_no", "time", "from_node", "to_node", "bytes", "pkts"],
              [pa.int64(), pa.float64(), pa.int32(), pa.int32(), pa.float64(), pa.float64()]),
    "periodic": ("f i i f f I I I I I I", ["line_no", "time", "from_node", "to_node", "bytes", "pkts", *_COUNTERS],
                 [pa.int64(), pa.float64(), pa.int32(), pa.int32(), pa.float64(), pa.float64(), *[pa.int64()] * 6]),
}


def _parse_fast(data: bytes, first_line_no: int) -> ParsedChunk | None:
    """A chunk whose lines are all of one shape, as ns-2 writes them, read in C (a sweep's
    queue trace: no polars at all); None for any other chunk. The shape is the first line's
    (after the leading '#' lines and blanks): a `q` event line, else a periodic sample; the
    chunk is read once, by that shape's spec."""
    at, _ = leading_comments(data)
    while data[at:at + 1] in (b" ", b"\t"):
        at += 1
    sample_kind = "event" if data.startswith(b"q", at) else "periodic"
    spec, names, types = _FAST[sample_kind]
    fast = parse_fields_fast(data, first_line_no, spec, names, types)
    if fast is None:
        return None
    t, comments = fast
    n = t.num_rows
    kinds = pa.DictionaryArray.from_arrays(pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(bytes(4 * n))]),
                                           arrow_strings([sample_kind]))
    cols = {**{name: t.column(name) for name in names}, "sample_kind": kinds}
    table = pa.Table.from_arrays([cols[c] if c in cols else pa.nulls(n, pa.int64()) for c in _OUT], names=list(_OUT))
    return ParsedChunk({"queue_samples": table}, [], 0, comments)


class QueueMonitorParser(Parser):
    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:
        fast = _parse_fast(data, first_line_no)
        if fast is not None:
            return fast
        df = read_fields(normalize_ws(data), _READ)
        df = df.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("_off"))
        is_q = pl.col("c0") == "q"
        tags_ok = (pl.col("c1") == "-t") & (pl.col("c3") == "-s") & (pl.col("c5") == "-d") & (pl.col("c7") == "-l") & (pl.col("c9") == "-p")
        ev = df.with_columns(
            pl.lit("event").alias("sample_kind"),
            _f("c2").alias("time"), _i("c4").alias("from_node"), _i("c6").alias("to_node"),
            _f("c8").alias("bytes"), _f("c10").alias("pkts"),
            *[pl.lit(None, pl.Int64).alias(c) for c in _COUNTERS],
        )
        per = df.with_columns(
            pl.lit("periodic").alias("sample_kind"),
            _f("c0").alias("time"), _i("c1").alias("from_node"), _i("c2").alias("to_node"),
            _f("c3").alias("bytes"), _f("c4").alias("pkts"),
            *[_i(f"c{5 + k}", "Int64").alias(c) for k, c in enumerate(_COUNTERS)],
        )
        base_ok = pl.all_horizontal(*[pl.col(c).is_not_null() for c in ("time", "from_node", "to_node", "bytes", "pkts")]) & pl.col("c11").is_null()
        ev = ev.with_columns((is_q & tags_ok & base_ok).alias("_ok"))
        per = per.with_columns((~is_q & base_ok & pl.all_horizontal(*[pl.col(c).is_not_null() for c in _COUNTERS])).alias("_ok"))
        skip = pl.col("c0").is_null() | pl.col("c0").str.starts_with("#")
        good = pl.concat([ev.filter(pl.col("_ok")), per.filter(pl.col("_ok"))]).sort("_off")
        okmask = ev["_ok"] | per["_ok"]
        df = df.with_columns(okmask.alias("_ok"))
        bad = df.filter(~pl.col("_ok") & ~skip)
        out = good.with_columns((pl.col("_off") + first_line_no).alias("line_no")).select(_OUT)
        return ParsedChunk({"queue_samples": out}, bad["_off"].head(1).to_list(), bad.height, comment_lines(data, first_line_no))

    def explain(self, line: str) -> str:
        t = line.split()
        if t and t[0] == "q":
            if len(t) != 11 or t[1::2] != ["-t", "-s", "-d", "-l", "-p"]:
                return "expected 'q -t TIME -s FROM -d TO -l BYTES -p PKTS'"
            if not (is_num(t[2]) and is_int(t[4]) and is_int(t[6]) and is_num(t[8]) and is_num(t[10])):
                return "a value in the q line is not a number"
            return "malformed queue event line"
        if len(t) != 11:
            return f"expected 11 fields of a monitor-queue sample (time from to meanBytes meanPkts and 6 counters), found {len(t)}"
        for i, f in enumerate(t):
            if not is_num(f):
                return f"field {i + 1} is not a number: {clip_repr(f)}"
        return "malformed monitor-queue sample line (node ids and counters must be integers)"


def claims(line: str) -> bool:
    """A per-event `q -t` line (before nam's `-t` lines) or an 11-number periodic sample."""
    t = line.split()
    return (len(t) >= 2 and t[0] == "q" and t[1] == "-t") or (len(t) == 11 and all(is_num(x) for x in t))


FORMAT = register(TraceFormat(
    kind="queue_monitor", description="a queue monitor trace", claims=claims, parser=QueueMonitorParser,
    tables={"queue_samples": QUEUE_SAMPLES}, priority=10,
    time_rounding_s=1e-6, time_rounding_rel=1e-5,    # samples: Tcl's 17 digits; `q -t` lines: %g
))
