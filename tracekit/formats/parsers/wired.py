"""The normal wired trace (`$ns trace-all`): 12-field lines and the 16-field
`Trace set show_tcphdr_ 1` form, mixed freely; `v` annotation / link-state lines are kept
in `annotations`, `#` lines are comments.
"""
from __future__ import annotations


import pyarrow as pa

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)

from tracekit.core.errors import clip_repr
from tracekit.formats.parsers import ANNOTATION_EXPLAINED, arrow_strings, ANNOTATIONS, DICT_STR, ParsedChunk, Parser, TraceFormat, annotation_rows, comment_lines, is_digits, is_int, is_num, leading_comments, load_fast, read_fields, register

# One-character event codes of the normal wired trace ('v' lines go to `annotations`).
WIRED_EVENTS = ("+", "-", "r", "d", "e", "h")

# events: one row per packet event of a normal wired trace, in file order.
EVENTS = pa.schema(
    [
        ("line_no", pa.int64()),      # 1-based line number in the (decompressed) trace
        ("event", DICT_STR),          # + - r d (e h rare)
        ("time", pa.float64()),       # seconds
        ("from_node", pa.int32()),    # link source node id
        ("to_node", pa.int32()),      # link destination node id
        ("ptype", DICT_STR),          # tcp, ack, cbr, ...
        ("size", pa.int32()),         # bytes, common-header size
        ("flags", DICT_STR),          # 7-character flag field, '-------' when none
        ("fid", pa.int32()),
        ("src_node", pa.int32()),     # node part of the node.port source address
        ("src_port", pa.int32()),
        ("dst_node", pa.int32()),
        ("dst_port", pa.int32()),
        ("seq", pa.int64()),          # segment number (one-way TCP), byte seq (FullTcp), CBR counter, -1
        ("pkt_id", pa.int64()),       # ns-2 packet uid
        # the 4 extra fields of `Trace set show_tcphdr_ 1` lines; NULL on 12-field lines
        ("tcp_ackno", pa.int64()),
        ("tcp_flags", pa.int32()),    # parsed from hex (0x10 -> 16)
        ("tcp_hlen", pa.int32()),
        ("sack_blocks", pa.int32()),
    ]
)

_READ = {
    "event": "String",
    "time": "Float64",
    "from_node": "Int32",
    "to_node": "Int32",
    "ptype": "String",
    "size": "Int32",
    "flags": "String",
    "fid": "Int32",
    "src": "String",
    "dst": "String",
    "seq": "Int64",
    "pkt_id": "Int64",
    # the show_tcphdr_ fields are read as text first: a field that is there but is not a
    # number must make the line bad, not read as an absent field (a 12-field line)
    "tcp_ackno": "String",
    "tcp_flags": "String",
    "tcp_hlen": "String",
    "sack_blocks": "String",
    "extra": "String",
}
_REQUIRED = ("time", "from_node", "to_node", "ptype", "size", "flags", "fid", "seq", "pkt_id",
             "src_node", "src_port", "dst_node", "dst_port")
_HDR = ("tcp_ackno", "tcp_flags", "tcp_hlen", "sack_blocks")
_OUT = ("line_no", "event", "time", "from_node", "to_node", "ptype", "size", "flags", "fid",
        "src_node", "src_port", "dst_node", "dst_port", "seq", "pkt_id") + _HDR


def _addr(col: str, node: str, port: str) -> list[pl.Expr]:
    """`node.port` into two ints. A hierarchical `0.1.1.0` splits into `0` and `1.1.0`,
    whose port does not cast: null, so the line is reported as bad."""
    parts = pl.col(col).str.splitn(".", 2)
    return [
        parts.struct.field("field_0").cast(pl.Int32, strict=False).alias(node),
        parts.struct.field("field_1").cast(pl.Int32, strict=False).alias(port),
    ]


_fast = load_fast()     # the compiled fast path (tracekit/formats/parsers/_wiredc.c), or None
# the arrow types of the columns _wiredc fills, in its order; the dictionary columns come as
# codes 0..63, stored with the uint32 indices of the stored parts (tracekit.ingest.pipeline), so that
# no cast is needed on the way to the writer
_FAST_TYPES = [pa.dictionary(pa.uint32(), pa.string()) if pa.types.is_dictionary(t) else t
               for t in (EVENTS.field(name).type for name in _OUT)]
_HDR_START = _OUT.index("tcp_ackno")


def parse_fast(data: bytes | memoryview, first_line_no: int) -> pa.Table | None:
    """The events of a chunk of well-formed event lines, parsed by the compiled fast path, as
    an Arrow table (the C buffers wrapped without a copy; no polars frame on the way to the
    Parquet writer); None when there is none or the chunk has any other line (blank, '#',
    'v', malformed): the polars parser below takes those chunks and explains bad lines."""
    if _fast is None:
        return None
    got = _fast.parse_wired(data, first_line_no)
    if got is None:
        return None
    n, n_hdr, bufs, dicts = got
    values = iter(dicts)
    arrays = []
    validity = pa.py_buffer(bufs[-1]) if n_hdr < n else None
    for k, typ in enumerate(_FAST_TYPES):
        if isinstance(typ, pa.DictionaryType):
            codes = pa.Array.from_buffers(pa.uint32(), n, [None, pa.py_buffer(bufs[k])])
            arrays.append(pa.DictionaryArray.from_arrays(codes, arrow_strings(next(values))))
        elif k >= _HDR_START and validity is not None:
            arrays.append(pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(bufs[k])], null_count=n - n_hdr))
        else:
            arrays.append(pa.Array.from_buffers(typ, n, [None, pa.py_buffer(bufs[k])], null_count=0))
    return pa.Table.from_arrays(arrays, names=list(_OUT))


class WiredParser(Parser):
    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:
        fast = parse_fast(data, first_line_no)
        if fast is not None:
            return ParsedChunk(tables={"events": fast}, bad_offsets=[], bad_count=0, comments=[])
        # a chunk that starts with '#' lines (the tracekit-meta header of a scenario's trace,
        # the whole of a sweep's short trace): those are comments, the rest may be fast
        head, n_head = leading_comments(data)
        if head and head < len(data):
            fast = parse_fast(memoryview(data)[head:], first_line_no + n_head)
            if fast is not None:
                return ParsedChunk(tables={"events": fast}, bad_offsets=[], bad_count=0,
                                   comments=comment_lines(data[:head], first_line_no))
        df = read_fields(data, _READ)
        ev = pl.col("event")
        df = df.with_columns(
            pl.sum_horizontal(*[pl.col(c).is_not_null().cast(pl.Int8) for c in _HDR]).alias("_n_hdr"),
        ).with_columns(
            *_addr("src", "src_node", "src_port"),
            *_addr("dst", "dst_node", "dst_port"),
            pl.col("tcp_ackno").cast(pl.Int64, strict=False),
            pl.col("tcp_flags").str.strip_prefix("0x").str.to_integer(base=16, strict=False).cast(pl.Int32, strict=False),
            pl.col("tcp_hlen").cast(pl.Int32, strict=False),
            pl.col("sack_blocks").cast(pl.Int32, strict=False),
            pl.int_range(pl.len(), dtype=pl.Int64).alias("_off"),
        )
        n_hdr = pl.col("_n_hdr")
        hdr_ok = pl.all_horizontal(*[pl.col(c).is_not_null() for c in _HDR])
        ok = (
            ev.is_in(WIRED_EVENTS)
            & pl.all_horizontal(*[pl.col(c).is_not_null() for c in _REQUIRED])
            & pl.col("time").is_finite().fill_null(False)      # polars reads 'nan', 'inf' as floats
            & pl.col("extra").is_null()
            & ((n_hdr == 0) | ((n_hdr == 4) & hdr_ok))
        )
        skip = ev.is_null() | ev.is_in(("v",)) | ev.str.starts_with("#")
        # an empty first field (a line starting with a space) also reads as a null event:
        # only a wholly blank line may be skipped
        leading_space = ev.is_null() & pl.any_horizontal(*[pl.col(c).is_not_null() for c in _READ if c != "event"])
        df = df.with_columns(ok.alias("_ok"), (~ok & (~skip | leading_space)).alias("_bad"))
        bad = df.filter(pl.col("_bad"))
        events = (
            df.filter(pl.col("_ok"))
            .with_columns((pl.col("_off") + first_line_no).alias("line_no"))
            .select(_OUT)
        )
        tables = {"events": events}
        annots = df.filter(ev == "v")
        bad_v: list[int] = []
        if annots.height:
            tables["annotations"], bad_v = annotation_rows(data, annots["_off"].to_list(), first_line_no)
        bad_offsets = sorted(bad["_off"].head(1).to_list() + bad_v[:1])
        return ParsedChunk(
            tables=tables,
            bad_offsets=bad_offsets,
            bad_count=bad.height + len(bad_v),
            # a '#' line reads as an event starting with '#'; scan the raw text only then
            comments=comment_lines(data, first_line_no) if df.select(ev.str.starts_with("#").any()).item() else [],
        )

    def explain(self, line: str) -> str:
        t = line.rstrip("\r").split(" ")
        if t[0] == "v":
            return ANNOTATION_EXPLAINED
        if t[0] == "":
            return "empty field (line starts with a space, or two spaces in a row)"
        if t[0] not in WIRED_EVENTS:
            return f"unknown event {clip_repr(t[0])} (a wired trace line starts with + - r d, or v for an annotation)"
        if "" in t[1:-1]:   # before the count, which a doubled space throws off
            return "empty field (two spaces in a row)"
        if len(t) not in (12, 16):
            return f"expected 12 or 16 space-separated fields, found {len(t)}"
        if "" in t:
            return "empty field (two spaces in a row)"
        names = ["event", "time", "from node", "to node", "packet type", "size", "flags", "fid",
                 "source address", "destination address", "sequence number", "packet id",
                 "TCP ackno", "TCP flags", "TCP header length", "SACK block count"]
        checks = {1: is_num, 2: is_int, 3: is_int, 5: is_int, 7: is_int,
                  10: lambda s: is_int(s, 64), 11: lambda s: is_int(s, 64),
                  12: lambda s: is_int(s, 64), 14: is_int, 15: is_int}
        for i, f in enumerate(t):
            if i in checks and not checks[i](f):
                return f"field {i + 1} ({names[i]}) is not a number: {clip_repr(f)}"
            if i in (8, 9):
                parts = f.split(".")
                if len(parts) > 2:
                    return (f"field {i + 1} ({names[i]}) {clip_repr(f)} is a hierarchical address in a trace of flat "
                            "node.port addresses (a trace with hierarchical addresses has them from its first line)")
                if len(parts) != 2 or not all(is_int(p) for p in parts):
                    return f"field {i + 1} ({names[i]}) is not a node.port address: {clip_repr(f)}"
            if i == 13:
                h = f[2:] if f.startswith("0x") else f
                try:
                    int(h, 16)
                except ValueError:
                    return f"field 14 (TCP flags) is not a hex number: {clip_repr(f)}"
        return "malformed wired trace line"


def claims(line: str) -> bool:
    t = line.split()
    return len(t) >= 12 and t[0] in WIRED_EVENTS and is_num(t[1]) and is_digits(t[2]) and is_digits(t[3])


FORMAT = register(TraceFormat(
    kind="wired", description="a wired trace", claims=claims, parser=WiredParser,
    tables={"events": EVENTS, "annotations": ANNOTATIONS}, is_packet_trace=True,
    time_rounding_s=1e-6, time_rounding_rel=1e-15,   # rounded to 1 us, printed with %.15g
))
