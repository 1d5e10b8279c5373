"""TCP variable traces from `$tcp attach $f; $tcp trace cwnd_` (plain format):
`time saddr sport daddr dport var value`, padded with runs of spaces. Several agents
may share one file; they are told apart by the address columns.
"""
from __future__ import annotations

import pyarrow as pa

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)

from tracekit.core.errors import clip_repr
from tracekit.formats.parsers import DICT_STR, ParsedChunk, Parser, TraceFormat, comment_lines, is_digits, is_int, is_num, normalize_ws, parse_fields_fast, read_fields, register

# tcp_vars: `$tcp attach $f; $tcp trace cwnd_` plain-format lines (a step function per var).
TCP_VARS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),
        ("src_node", pa.int32()),
        ("src_port", pa.int32()),
        ("dst_node", pa.int32()),
        ("dst_port", pa.int32()),
        ("var", DICT_STR),            # cwnd_, ssthresh_, rtt_, ...
        ("value", pa.float64()),
    ]
)


_READ = {"time": "String", "src_node": "Int32", "src_port": "Int32", "dst_node": "Int32",
         "dst_port": "Int32", "var": "String", "value": "Float64", "extra": "String"}
_OUT = ("line_no", "time", "src_node", "src_port", "dst_node", "dst_port", "var", "value")


# the compiled fast path's reading of a line: time saddr sport daddr dport var value
_FAST_SPEC = "f i i i i w f"
_FAST_TYPES = [pa.int64(), pa.float64(), pa.int32(), pa.int32(), pa.int32(), pa.int32(),
               pa.dictionary(pa.uint32(), pa.string()), pa.float64()]


class TcpVarParser(Parser):
    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:
        # the lines ns-2 writes, in C (a sweep's cwnd trace: no polars at all); any other chunk below
        fast = parse_fields_fast(data, first_line_no, _FAST_SPEC, list(_OUT), _FAST_TYPES)
        if fast is not None:
            return ParsedChunk({"tcp_vars": fast[0]}, [], 0, fast[1])
        df = read_fields(normalize_ws(data), _READ)
        tcol = pl.col("time")
        df = df.with_columns(
            tcol.cast(pl.Float64, strict=False).alias("_t"),
            pl.int_range(pl.len(), dtype=pl.Int64).alias("_off"),
        )
        ok = pl.all_horizontal(*[pl.col(c).is_not_null() for c in ("_t", "src_node", "src_port", "dst_node", "dst_port", "var", "value")]) & pl.col("extra").is_null()
        skip = tcol.is_null() | tcol.str.starts_with("#")
        df = df.with_columns(ok.alias("_ok"), (~ok & ~skip).alias("_bad"))
        bad = df.filter(pl.col("_bad"))
        out = (
            df.filter(pl.col("_ok"))
            .with_columns((pl.col("_off") + first_line_no).alias("line_no"), pl.col("_t").alias("time"))
            .select(_OUT)
        )
        return ParsedChunk({"tcp_vars": out}, bad["_off"].head(1).to_list(), bad.height, comment_lines(data, first_line_no))

    def explain(self, line: str) -> str:
        t = line.split()
        if t and t[0] == "time:":
            return "one-line TCP variable trace (trace_all_oneline_) lines are not supported; use the plain format"
        if len(t) != 7:
            return f"expected 7 fields (time saddr sport daddr dport variable value), found {len(t)}"
        if not is_num(t[0]):
            return f"time is not a number: {clip_repr(t[0])}"
        for i in range(1, 5):
            if not is_int(t[i]):
                return f"field {i + 1} is not an integer address part: {clip_repr(t[i])}"
        if not is_num(t[6]):
            return f"value is not a number: {clip_repr(t[6])}"
        return "malformed TCP variable trace line"


def claims(line: str) -> bool:
    t = line.split()
    return len(t) == 7 and is_num(t[0]) and all(is_digits(x) for x in t[1:5]) and is_num(t[6])


FORMAT = register(TraceFormat(
    kind="tcpvar", description="a TCP variable trace", claims=claims, parser=TcpVarParser,
    tables={"tcp_vars": TCP_VARS},
    time_rounding_s=1e-5, time_rounding_rel=1e-15,   # printed %-8.5f
))
