"""Two-column `time value` series, as a Tcl proc writes them (`puts $f "$now [$tcp set
cwnd_]"` every 0.1 s): the usual cwnd / queue-length format of published scripts. Every line
is two numbers; the file does not say what it samples: name it with `--series-name cwnd`
(the label `var`) and `--label flow=...`.
"""
from __future__ import annotations

import pyarrow as pa

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)

from tracekit.core.errors import clip_repr
from tracekit.formats.parsers import ParsedChunk, Parser, TraceFormat, comment_lines, is_num, normalize_ws, read_fields, register

# series: `time value` lines, in file order; what the value is comes from the run's labels.
SERIES = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),       # seconds, as the proc printed $now
        ("value", pa.float64()),
    ]
)

_READ = {"time": "String", "value": "String", "extra": "String"}


class SeriesParser(Parser):
    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:
        df = read_fields(normalize_ws(data), _READ)
        tcol = pl.col("time")
        df = df.with_columns(
            tcol.cast(pl.Float64, strict=False).alias("_t"),
            pl.col("value").cast(pl.Float64, strict=False).alias("_v"),
            pl.int_range(pl.len(), dtype=pl.Int64).alias("_off"),
        )
        ok = pl.col("_t").is_not_null() & pl.col("_v").is_not_null() & pl.col("extra").is_null()
        skip = tcol.is_null() | tcol.str.starts_with("#")
        df = df.with_columns(ok.alias("_ok"), (~ok & ~skip).alias("_bad"))
        bad = df.filter(pl.col("_bad"))
        out = (
            df.filter(pl.col("_ok"))
            .select((pl.col("_off") + first_line_no).alias("line_no"), pl.col("_t").alias("time"), pl.col("_v").alias("value"))
        )
        return ParsedChunk({"series": out}, bad["_off"].head(1).to_list(), bad.height, comment_lines(data, first_line_no))

    def explain(self, line: str) -> str:
        t = line.split()
        if len(t) != 2:
            return f"expected 2 fields (time value), found {len(t)}"
        if not is_num(t[0]):
            return f"time is not a number: {clip_repr(t[0])}"
        if not is_num(t[1]):
            return f"value is not a number: {clip_repr(t[1])}"
        return "malformed time-value line"


def claims(line: str) -> bool:
    t = line.split()
    return len(t) == 2 and is_num(t[0]) and is_num(t[1])


FORMAT = register(TraceFormat(
    kind="series", description="a time-value series", claims=claims, parser=SeriesParser,
    tables={"series": SERIES},
    priority=80,           # the most generic shape: asked after every other format
    time_rounding_s=1e-6, time_rounding_rel=1e-12,   # Tcl prints $now in full; a proc may round it
))
