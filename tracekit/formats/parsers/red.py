"""RED queue variable traces (`$redq trace curq_ / ave_ / prob1_ / cur_max_p_`):
`Q time curq`, `a time ave`, `p time prob1`, `c time cur_max_p`, %g numbers.
The file does not say which link it belongs to; label the run for that.
"""
from __future__ import annotations

import pyarrow as pa

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)

from tracekit.core.errors import clip_repr
from tracekit.formats.parsers import DICT_STR, ParsedChunk, Parser, TraceFormat, comment_lines, is_num, normalize_ws, read_fields, register

# red_vars: RED queue variable traces (`$redq trace curq_` ...). Q = curq_ (instantaneous),
# a = ave_ (EWMA), p = prob1_, c = cur_max_p_. Bytes unless queue_in_bytes_ is false.
RED_VARS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("var", DICT_STR),            # curq, ave, prob1, cur_max_p
        ("time", pa.float64()),
        ("value", pa.float64()),
    ]
)


VARS = {"Q": "curq", "a": "ave", "p": "prob1", "c": "cur_max_p"}
_READ = {"code": "String", "time": "Float64", "value": "Float64", "extra": "String"}


class RedParser(Parser):
    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:
        df = read_fields(normalize_ws(data), _READ)
        code = pl.col("code")
        df = df.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("_off"))
        ok = code.is_in(list(VARS)) & pl.col("time").is_not_null() & pl.col("value").is_not_null() & pl.col("extra").is_null()
        skip = code.is_null() | code.str.starts_with("#")
        df = df.with_columns(ok.alias("_ok"), (~ok & ~skip).alias("_bad"))
        bad = df.filter(pl.col("_bad"))
        out = (
            df.filter(pl.col("_ok"))
            .with_columns(
                (pl.col("_off") + first_line_no).alias("line_no"),
                code.replace_strict(VARS, return_dtype=pl.String).alias("var"),
            )
            .select("line_no", "var", "time", "value")
        )
        return ParsedChunk({"red_vars": out}, bad["_off"].head(1).to_list(), bad.height, comment_lines(data, first_line_no))

    def explain(self, line: str) -> str:
        t = line.split()
        if not t or t[0] not in VARS:
            return f"unknown RED variable code {clip_repr(t[0] if t else '')} (expected Q, a, p or c)"
        if len(t) != 3:
            return f"expected 3 fields (code time value), found {len(t)}"
        if not is_num(t[1]):
            return f"time is not a number: {clip_repr(t[1])}"
        if not is_num(t[2]):
            return f"value is not a number: {clip_repr(t[2])}"
        return "malformed RED trace line"


def claims(line: str) -> bool:
    t = line.split()
    return len(t) == 3 and t[0] in VARS and is_num(t[1]) and is_num(t[2])


FORMAT = register(TraceFormat(
    kind="red", description="a RED trace", claims=claims, parser=RedParser,
    tables={"red_vars": RED_VARS},
    time_rounding_s=1e-6, time_rounding_rel=1e-5,    # %g: 6 significant digits
))
