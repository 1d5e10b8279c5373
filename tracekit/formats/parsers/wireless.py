"""Wireless (CMU / mobile node) traces: the old CMU format and the new `-t` format
(`$ns use-newtrace`), recognised line by line, so a file that mixes them (use-newtrace called
after the nodes were created: AGT lines new, the other layers old) reads as one trace.

- old: `s 0.5 _0_ AGT  --- 2 tcp 1040 [0 0 0 0] ------- [0:0 2:0 32 0] [1 0] 0 0`, read by
  position after checking the shape: MAC bracket, optional `[energy ...]` block, then (IP
  packets) `------- [src:port dst:port ttl next-hop]` and the protocol part: `[seq ack] nfwd
  optfwd` for tcp/ack, `[seq] nfwd optfwd` for cbr, verbatim in `detail` for anything else.
  MAC control frames (RTS, CTS, ACK) end after the MAC bracket.
- new: `s -t 0.5 -Hs 0 -Hd -2 -Ni 0 ... -Nl AGT ...`, read as `-key value` pairs, never by
  position; RTS/CTS/ACK lines stop after `-Mt` (no type, no size: both NULL).
- `v` annotation lines (`$ns trace-annotate`) -> annotations, as in wired traces;
- `M` movement lines -> wireless_movements; `N -t -n -e` lines, `[energy ...]` blocks and a
  new-format `-Ne` >= 0 -> wireless_energy; DSR's own `S...` lines -> wireless_logs.

The polars code below is the reference. Where the C extension is built, a chunk whose every
line is one it reads exactly as this code does (ns-2's event, M, N and S lines in their plain
form) is parsed by tracekit/formats/parsers/_wirelessc.c instead, ten times faster; any other chunk
(blank, '#', 'v', malformed lines, odd number forms) comes here, so tables, bad lines and
messages are the same either way (tests/test_parsers_wireless_fast.py).
"""
from __future__ import annotations

import functools
import re

import pyarrow as pa

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)

from tracekit.core.errors import clip_repr
from tracekit.formats.parsers import ANNOTATION_EXPLAINED, arrow_strings, load_fast, ANNOTATIONS, DICT_STR, ParsedChunk, Parser, TraceFormat, annotation_rows, comment_lines, is_int, is_num, leading_comments, normalize_ws, register, text_lines_only

# wireless_events: one row per event line of a wireless (CMU / mobile node) trace, old CMU
# format and new `-t` format alike (fmt says which); see docs/contract-wireless.md.
WIRELESS_EVENTS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("fmt", DICT_STR),            # old, new
        ("event", DICT_STR),          # s r f d (the old format's D is stored as d)
        ("time", pa.float64()),       # seconds
        ("node", pa.int32()),         # the node that wrote the line
        ("layer", DICT_STR),          # AGT RTR MAC IFQ (others as written)
        ("reason", DICT_STR),         # drop reason (COL, NRTE, IFQ, END, ...); NULL for ---
        ("pkt_id", pa.int64()),       # packet uid; 0 on MAC control frames, ARP, some routing packets
        ("ptype", DICT_STR),          # tcp ack cbr AODV DSR message ARP RTS CTS ACK; NULL: new-format MAC control
        ("size", pa.int32()),         # bytes at this layer; NULL: new-format MAC control frames
        ("mac_dur", pa.int64()),      # MAC header fields, parsed from hex
        ("mac_dst", pa.int64()),      # ffffffff (broadcast) = 4294967295
        ("mac_src", pa.int64()),
        ("mac_type", pa.int32()),     # 2048 = IP, 2054 = ARP
        ("src_node", pa.int32()),     # IP source node.port (-1 = broadcast node); NULL without IP header
        ("src_port", pa.int32()),
        ("dst_node", pa.int32()),
        ("dst_port", pa.int32()),
        ("ttl", pa.int32()),
        ("next_hop", pa.int32()),     # old: 0 when unset; new (-Hd): -2 unset, -1 broadcast
        ("fid", pa.int32()),          # new format only (-If)
        ("seq", pa.int64()),          # TCP seq or CBR seq
        ("tcp_ack", pa.int64()),
        ("n_forwards", pa.int32()),   # hop count field of tcp/cbr packets
        ("x", pa.float64()),          # node position, new format only
        ("y", pa.float64()),
        ("z", pa.float64()),
        ("detail", pa.string()),      # the rest of routing / ARP / other lines, verbatim
    ]
)

# wireless_movements: `M` lines (a node starts moving towards a destination).
WIRELESS_MOVEMENTS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),
        ("node", pa.int32()),
        ("x", pa.float64()),
        ("y", pa.float64()),
        ("z", pa.float64()),
        ("dest_x", pa.float64()),
        ("dest_y", pa.float64()),
        ("speed_mps", pa.float64()),
    ]
)

# wireless_energy: energy readings: old-format `[energy E ei I es S et T er R]` blocks (all
# five), new-format `-Ne` when an energy model is on, and the `N -t T -n NODE -e E` lines an
# energy model writes in both formats (energy only).
WIRELESS_ENERGY = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),
        ("node", pa.int32()),
        ("energy_j", pa.float64()),
        ("idle_j", pa.float64()),
        ("sleep_j", pa.float64()),
        ("tx_j", pa.float64()),
        ("rx_j", pa.float64()),
    ]
)

# wireless_logs: DSR's own trace lines (SFs, SFf, SFESTs, Sconfig, ...), kept verbatim.
WIRELESS_LOGS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("tag", DICT_STR),
        ("time", pa.float64()),
        ("node", pa.int32()),         # NULL when the line names none
        ("text", pa.string()),        # the rest of the line
    ]
)


_NUMF = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_INTF = r"-?\d+"
_HEX = r"-?[0-9a-fA-F]+"

_OLD = re.compile(
    rf"^(?P<event>[srfdD]) (?P<time>{_NUMF}) _(?P<node>{_INTF})_ (?P<layer>\S+) (?P<reason>\S+) "
    rf"(?P<pkt_id>{_INTF}) (?P<ptype>\S+) (?P<size>{_INTF}) "
    rf"\[(?P<mac_dur>{_HEX}) (?P<mac_dst>{_HEX}) (?P<mac_src>{_HEX}) (?P<mac_type>{_HEX})\]"
    rf"(?: \[energy (?P<energy>{_NUMF}) ei (?P<ei>{_NUMF}) es (?P<es>{_NUMF}) et (?P<et>{_NUMF}) er (?P<er>{_NUMF})\])?"
    r"(?: (?P<rest>.*))?$"
)
_OLD_IP = re.compile(
    rf"^\S+ \[(?P<src_node>{_INTF}):(?P<src_port>{_INTF}) (?P<dst_node>{_INTF}):(?P<dst_port>{_INTF}) "
    rf"(?P<ttl>{_INTF}) (?P<next_hop>{_INTF})\](?: (?P<proto>.*))?$"
)
_OLD_TCP = re.compile(rf"^\[(?P<seq>{_INTF}) (?P<tcp_ack>{_INTF})\] (?P<n_forwards>{_INTF}) {_INTF}$")
_OLD_CBR = re.compile(rf"^\[(?P<seq>{_INTF})\] (?P<n_forwards>{_INTF}) {_INTF}$")
_MOVE = re.compile(
    rf"^M (?P<time>{_NUMF}) (?P<node>{_INTF}) \((?P<x>{_NUMF}), (?P<y>{_NUMF}), (?P<z>{_NUMF})\), "
    rf"\((?P<dest_x>{_NUMF}), (?P<dest_y>{_NUMF})\), (?P<speed_mps>{_NUMF})$"
)
_NLINE = re.compile(rf"^N -t (?P<time>{_NUMF}) -n (?P<node>{_INTF}) -e (?P<energy_j>{_NUMF})$")
_SLINE = re.compile(rf"^(?P<tag>S[A-Za-z_]\S*) (?P<time>{_NUMF})(?: _(?P<node>{_INTF})_)?(?: (?P<text>.*))?$")

# new format: the keys read, and the column each goes to (as text; cast below)
_NEW_KEYS = {
    "t": "time", "Ni": "node", "Nl": "layer", "Nw": "reason", "Hd": "next_hop",
    "Nx": "x", "Ny": "y", "Nz": "z", "Ne": "energy",
    "Ma": "mac_dur", "Md": "mac_dst", "Ms": "mac_src", "Mt": "mac_type",
    "Is": "src", "Id": "dst", "It": "ptype", "Il": "size", "If": "fid", "Ii": "pkt_id", "Iv": "ttl",
    "Pn": "pn", "Ps": "p_s", "Pa": "p_a", "Pi": "p_i", "Pf": "p_f",
}

_EV_COLS = [f.name for f in WIRELESS_EVENTS]
_INT32 = ("node", "size", "mac_type", "src_node", "src_port", "dst_node", "dst_port", "ttl",
          "next_hop", "fid", "n_forwards")
_INT64 = ("pkt_id", "seq", "tcp_ack")
_HEXCOLS = ("mac_dur", "mac_dst", "mac_src", "mac_type")


def _pl_schema(schema) -> dict:
    return dict(pl.DataFrame(pa.Table.from_batches([], schema=schema)).schema)   # not empty_table(): it imports pandas


def _cast_events(df: pl.DataFrame) -> pl.DataFrame:
    """Text columns to the stored types; a value that does not cast becomes null (and the
    caller's checks then call the line bad)."""
    exprs = []
    for c in _EV_COLS:
        if c not in df.columns:
            exprs.append(pl.lit(None).alias(c))
        elif c in _HEXCOLS:
            exprs.append(pl.col(c).str.to_integer(base=16, strict=False)
                         .cast(pl.Int32 if c in _INT32 else pl.Int64, strict=False).alias(c))
        elif c in _INT32 or c in _INT64:
            # the stored width here, so that an out-of-range value is null before the checks
            exprs.append(pl.col(c).cast(pl.Int32 if c in _INT32 else pl.Int64, strict=False).alias(c))
        elif c in ("time", "x", "y", "z"):
            exprs.append(pl.col(c).cast(pl.Float64, strict=False).alias(c))
        else:
            exprs.append(pl.col(c))
    return df.with_columns(exprs)


_fast = load_fast("_wirelessc")     # the compiled fast path (tracekit/formats/parsers/_wirelessc.c), or None


def _arrow_type(t: pa.DataType) -> pa.DataType:
    """The Arrow type _wirelessc's buffers give a column of stored type `t`: the stored
    parts' own (tracekit.ingest.pipeline's _stored_schema), so that the table goes to the Parquet
    writer without a cast: dictionary codes as uint32 indices (they are 0..63), strings
    with int64 offsets (large_string)."""
    if pa.types.is_dictionary(t):
        return pa.dictionary(pa.uint32(), pa.string())
    return pa.large_string() if t == pa.string() else t


def _columns(schema: pa.Schema, n: int, bufs, valid=None, dicts=None) -> pa.Table:
    """Arrow columns of `schema` over the buffers _wirelessc filled, without a copy: one
    buffer per column (a dictionary column: its uint32 codes, whose values come next from
    `dicts`; a string column: its int64 offsets, the characters being the last buffer), a
    validity bitmap or None."""
    arrays = []
    values = iter(dicts or ())
    for k, f in enumerate(schema):
        v = None if valid is None or valid[k] is None else pa.py_buffer(valid[k])
        nulls = -1 if v is not None else 0
        t = _arrow_type(f.type)
        if pa.types.is_dictionary(t):
            codes = pa.Array.from_buffers(pa.uint32(), n, [v, pa.py_buffer(bufs[k])], null_count=nulls)
            arrays.append(pa.DictionaryArray.from_arrays(codes, arrow_strings(next(values))))
        elif t == pa.large_string():
            arrays.append(pa.Array.from_buffers(t, n, [v, pa.py_buffer(bufs[k]), pa.py_buffer(bufs[-1])], null_count=nulls))
        else:
            arrays.append(pa.Array.from_buffers(t, n, [v, pa.py_buffer(bufs[k])], null_count=nulls))
    return pa.Table.from_arrays(arrays, names=schema.names)


def parse_fast(data: bytes | memoryview, first_line_no: int) -> dict[str, pa.Table] | None:
    """The tables of a chunk of well-formed lines (old- and new-format events, M, N and DSR's
    S lines), parsed by the compiled fast path, as Arrow tables of the stored types (the C
    buffers wrapped without a copy; no polars frame on the way to the Parquet writer); None
    when there is none or the chunk has any other line (blank, '#', 'v', a malformed line,
    an odd number): the polars parser below takes those chunks and explains bad lines."""
    if _fast is None:
        return None
    got = _fast.parse_wireless(data, first_line_no)
    if got is None:
        return None
    (n_ev, ev_bufs, ev_valid), (n_mv, mv_bufs), (n_en, en_bufs, en_valid), (n_lg, lg_bufs, lg_valid), dicts = got
    tables = {}
    if n_ev:
        tables["wireless_events"] = _columns(WIRELESS_EVENTS, n_ev, ev_bufs, ev_valid, dicts[:5])
    if n_mv:
        tables["wireless_movements"] = _columns(WIRELESS_MOVEMENTS, n_mv, mv_bufs)
    if n_en:
        tables["wireless_energy"] = _columns(WIRELESS_ENERGY, n_en, en_bufs, en_valid)
    if n_lg:
        tables["wireless_logs"] = _columns(WIRELESS_LOGS, n_lg, lg_bufs, lg_valid, dicts[5:])
    return tables


class WirelessParser(Parser):
    @functools.cached_property
    def _schemas(self) -> dict[str, dict]:
        """The tables' polars schemas, made on first use: the polars parser's (a trace the C
        fast path reads whole never imports polars)."""
        return {
            "wireless_events": _pl_schema(WIRELESS_EVENTS),
            "wireless_movements": _pl_schema(WIRELESS_MOVEMENTS),
            "wireless_energy": _pl_schema(WIRELESS_ENERGY),
            "wireless_logs": _pl_schema(WIRELESS_LOGS),
        }

    def _typed(self, table: str, df: pl.DataFrame) -> pl.DataFrame:
        sch = self._schemas[table]
        return df.select([pl.col(c).cast(t, strict=False) if c in df.columns else pl.lit(None, t).alias(c)
                          for c, t in sch.items()])

    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:
        fast = parse_fast(data, first_line_no)
        if fast is not None:
            return ParsedChunk(tables=dict(fast), bad_offsets=[], bad_count=0, comments=[])
        # a chunk that starts with '#' lines (the tracekit-meta header of a scenario's trace,
        # the whole of a short one): those are comments, the rest may be fast
        head, n_head = leading_comments(data)
        if head and head < len(data):
            fast = parse_fast(memoryview(data)[head:], first_line_no + n_head)
            if fast is not None:
                return ParsedChunk(tables=dict(fast), bad_offsets=[], bad_count=0,
                                   comments=comment_lines(data[:head], first_line_no))
        raw = text_lines_only(normalize_ws(data))
        df = pl.read_csv(raw, has_header=False, separator="\x1f", quote_char=None,
                         schema={"l": pl.String}, truncate_ragged_lines=True)
        # read_csv drops a final empty line only; the chunk has one line per "\n"
        df = df.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("_off"))
        line = pl.col("l")
        cls = (
            pl.when(line.is_null() | (line == "")).then(pl.lit("blank"))
            .when(line.str.starts_with("#")).then(pl.lit("comment"))
            .when(line.str.contains(r"^[srfdD] -t ")).then(pl.lit("new"))
            .when(line.str.contains(r"^[srfdD] [-+.0-9]")).then(pl.lit("old"))
            .when(line.str.starts_with("M ")).then(pl.lit("move"))
            .when(line.str.starts_with("N -t ")).then(pl.lit("nrg"))
            .when(line.str.contains(r"^S[A-Za-z_]")).then(pl.lit("log"))
            .when(line.str.starts_with("v ")).then(pl.lit("annot"))
            .otherwise(pl.lit("bad"))
        )
        df = df.with_columns(cls.alias("_cls"), (pl.col("_off") + first_line_no).alias("line_no"))
        parts: dict[str, list[pl.DataFrame]] = {t: [] for t in self._schemas}
        bad: list[pl.DataFrame] = [df.filter(pl.col("_cls") == "bad").select("_off")]

        old = df.filter(pl.col("_cls") == "old")
        if old.height:
            ev, en, b = self._old(old)
            parts["wireless_events"].append(ev)
            parts["wireless_energy"].append(en)
            bad.append(b)
        new = df.filter(pl.col("_cls") == "new")
        if new.height:
            ev, en, b = self._new(new)
            parts["wireless_events"].append(ev)
            parts["wireless_energy"].append(en)
            bad.append(b)
        for cls_name, rx, table in (("move", _MOVE, "wireless_movements"), ("nrg", _NLINE, "wireless_energy"),
                                    ("log", _SLINE, "wireless_logs")):
            sub = df.filter(pl.col("_cls") == cls_name)
            if not sub.height:
                continue
            x = sub.select("line_no", "_off", line.str.extract_groups(rx.pattern).alias("g")).unnest("g")
            # every group must be there, except a log line's node and text
            names = [n for n in rx.groupindex if cls_name != "log" or n not in ("node", "text")]
            ok = pl.all_horizontal(*[pl.col(n).is_not_null() for n in names])
            bad.append(x.filter(~ok).select("_off"))
            parts[table].append(self._typed(table, x.filter(ok)))

        annots = df.filter(pl.col("_cls") == "annot")
        if annots.height:
            # from the raw chunk, not the whitespace-normalised one: the text is kept verbatim
            # (normalize_ws keeps every line where it was)
            frame, bad_v = annotation_rows(data, annots["_off"].to_list(), first_line_no)
            parts["annotations"] = [frame]
            bad.append(pl.DataFrame({"_off": bad_v}, schema={"_off": pl.Int64}))

        tables = {}
        for t, frames in parts.items():
            frames = [f for f in frames if f.height]
            if not frames:
                continue
            out = pl.concat(frames) if len(frames) > 1 else frames[0]
            if len(frames) > 1:
                out = out.sort("line_no")
            tables[t] = out
        bad_df = pl.concat(bad).sort("_off")
        return ParsedChunk(
            tables=tables,
            bad_offsets=bad_df["_off"].head(1).to_list(),
            bad_count=bad_df.height,
            comments=comment_lines(data, first_line_no) if df.select((pl.col("_cls") == "comment").any()).item() else [],
        )

    # -- old CMU format --------------------------------------------------------------
    def _old(self, old: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        x = old.select("line_no", "_off", pl.col("l").str.extract_groups(_OLD.pattern).alias("g")).unnest("g")
        ip = pl.col("rest").str.extract_groups(_OLD_IP.pattern)
        x = x.with_columns(ip.alias("ip")).unnest("ip")
        is_tcp = pl.col("ptype").is_in(["tcp", "ack"])
        is_cbr = pl.col("ptype") == "cbr"
        tcp = pl.col("proto").str.extract_groups(_OLD_TCP.pattern)
        cbr = pl.col("proto").str.extract_groups(_OLD_CBR.pattern)
        x = x.with_columns(
            pl.when(is_tcp).then(tcp.struct.field("seq")).when(is_cbr).then(cbr.struct.field("seq")).alias("seq"),
            pl.when(is_tcp).then(tcp.struct.field("tcp_ack")).alias("tcp_ack"),
            pl.when(is_tcp).then(tcp.struct.field("n_forwards"))
              .when(is_cbr).then(cbr.struct.field("n_forwards")).alias("n_forwards"),
            # detail: the routing / ARP / other part, verbatim
            pl.when(is_tcp | is_cbr).then(None)
              .when(pl.col("src_node").is_not_null()).then(pl.col("proto"))
              .otherwise(pl.col("rest").str.replace(r"^-+ ", "")).alias("detail"),
            pl.lit("old").alias("fmt"),
        )
        x = _cast_events(x)
        ok = (
            pl.col("event").is_not_null()
            & pl.all_horizontal(*[pl.col(c).is_not_null() for c in ("time", "node", "pkt_id", "size",
                                                                     "mac_dur", "mac_dst", "mac_src", "mac_type")])
            & pl.col("time").is_finite()
            # an IP packet of a known protocol must have its parts
            & (~(is_tcp | is_cbr) | (pl.col("src_node").is_not_null() & pl.col("seq").is_not_null()))
        ).fill_null(False)
        x = x.with_columns(ok.alias("_ok"))
        good = x.filter(pl.col("_ok"))
        energy = good.filter(pl.col("energy").is_not_null()).select(
            "line_no", "time", "node",
            *[pl.col(a).cast(pl.Float64).alias(b) for a, b in
              (("energy", "energy_j"), ("ei", "idle_j"), ("es", "sleep_j"), ("et", "tx_j"), ("er", "rx_j"))])
        return self._events(good), self._typed("wireless_energy", energy), x.filter(~pl.col("_ok")).select("_off")

    # -- new -t format ---------------------------------------------------------------
    def _new(self, new: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
        line = pl.col("l")
        x = new.select(
            "line_no", "_off",
            line.str.slice(0, 1).alias("event"),
            *[line.str.extract(rf" -{k} (\S+)", 1).alias(c) for k, c in _NEW_KEYS.items()],
            line.str.extract(r" (-P .*)$", 1).alias("p_tail"),
        )
        src = pl.col("src").str.extract_groups(rf"^(?P<src_node>{_INTF})\.(?P<src_port>{_INTF})$")
        dst = pl.col("dst").str.extract_groups(rf"^(?P<dst_node>{_INTF})\.(?P<dst_port>{_INTF})$")
        is_tcp = (pl.col("pn") == "tcp").fill_null(False)
        is_cbr = (pl.col("pn") == "cbr").fill_null(False)
        x = x.with_columns(src.alias("_s"), dst.alias("_d")).unnest("_s", "_d").with_columns(
            pl.when(is_tcp).then(pl.col("p_s")).when(is_cbr).then(pl.col("p_i")).alias("seq"),
            pl.when(is_tcp).then(pl.col("p_a")).alias("tcp_ack"),
            pl.when(is_tcp | is_cbr).then(pl.col("p_f")).alias("n_forwards"),
            pl.when(is_tcp | is_cbr).then(None).otherwise(pl.col("p_tail")).alias("detail"),
            # ARP lines name no type (-It) in this format; their `-P arp` part says it
            pl.coalesce(pl.col("ptype"), pl.when(pl.col("p_tail").str.starts_with("-P arp ")).then(pl.lit("ARP")))
              .alias("ptype"),
            pl.lit("new").alias("fmt"),
        )
        x = _cast_events(x).with_columns(pl.col("energy").cast(pl.Float64, strict=False))
        has_ip = pl.col("src").is_not_null() | pl.col("dst").is_not_null() | pl.col("pkt_id").is_not_null()
        ok = (
            pl.all_horizontal(*[pl.col(c).is_not_null() for c in ("time", "node", "layer")])
            & pl.col("time").is_finite()
            & (~has_ip | pl.all_horizontal(*[pl.col(c).is_not_null() for c in
                                             ("src_node", "src_port", "dst_node", "dst_port", "size", "pkt_id")]))
            & (~(is_tcp | is_cbr) | pl.col("seq").is_not_null())
        ).fill_null(False)
        x = x.with_columns(ok.alias("_ok"))
        good = x.filter(pl.col("_ok"))
        energy = good.filter(pl.col("energy") >= 0).select(
            "line_no", "time", "node", pl.col("energy").alias("energy_j"))
        return self._events(good), self._typed("wireless_energy", energy), x.filter(~pl.col("_ok")).select("_off")

    def _events(self, x: pl.DataFrame) -> pl.DataFrame:
        x = x.with_columns(
            pl.col("event").replace("D", "d"),
            pl.when(pl.col("reason") == "---").then(None).otherwise(pl.col("reason")).alias("reason"),
        )
        return self._typed("wireless_events", x)

    # -- the error path ----------------------------------------------------------------
    def explain(self, line: str) -> str:
        s = " ".join(line.split())
        t = s.split(" ")
        if not s:
            return "blank line"
        e = t[0]
        if e == "v":
            return ANNOTATION_EXPLAINED
        if e == "M":
            return "movement line ('M') not of the form 'M TIME NODE (X, Y, Z), (DX, DY), SPEED'"
        if e == "N":
            return "energy line ('N') not of the form 'N -t TIME -n NODE -e ENERGY'"
        if e[0] == "S" and len(e) > 1 and e[1:2].isalpha():
            return f"line starting {clip_repr(e)} is not a DSR trace line ('S...' then a numeric time)"
        if e in ("+", "-", "r", "d", "h") and len(t) >= 12 and not t[2].startswith("_") and t[1] != "-t":
            return ("a wired trace line in a wireless trace of flat addresses (a wired-cum-wireless trace, with "
                    "hierarchical addresses, is recognised by one in its first 64 KiB)")
        if e not in ("s", "r", "f", "d", "D"):
            return (f"unknown event {clip_repr(e)} (a wireless trace line starts with s r f d D, M for movement, "
                    "N for energy, S for DSR's own lines or v for an annotation)")
        if len(t) >= 2 and t[1] == "-t":
            kv = {}
            for i in range(1, len(t) - 1, 2):
                if t[i].startswith("-"):
                    kv[t[i][1:]] = t[i + 1]
            for k, what in (("t", "time"), ("Ni", "node id")):
                if k not in kv:
                    return f"new-format line without -{k} ({what})"
                if not (is_num(kv[k]) if k == "t" else is_int(kv[k])):
                    return f"-{k} ({what}) is not a number: {clip_repr(kv[k])}"
            if "Nl" not in kv:
                return "new-format line without -Nl (layer)"
            for k in ("Is", "Id"):
                if k in kv:
                    p = kv[k].split(".")
                    if len(p) > 2:
                        return f"-{k} {clip_repr(kv[k])} is a hierarchical address; only flat node.port addresses are supported"
                    if len(p) != 2 or not all(is_int(v) for v in p):
                        return f"-{k} is not a node.port address: {clip_repr(kv[k])}"
            if "It" in kv:
                for k, what, bits in (("Il", "size", 32), ("Ii", "packet id", 64)):
                    if k not in kv or not is_int(kv[k], bits):
                        return f"-{k} ({what}) missing or not a number"
            if kv.get("Pn") in ("tcp", "cbr"):
                k = "Ps" if kv["Pn"] == "tcp" else "Pi"
                if k not in kv or not is_int(kv[k], 64):
                    return f"{kv['Pn']} line without a numeric -{k} (sequence number)"
            return "malformed new-format wireless line"
        if len(t) < 12:
            return f"old-format wireless line with {len(t)} fields; at least 12 expected (event, time, _node_, layer, reason, uid, type, size, [MAC header])"
        if not is_num(t[1]):
            return f"field 2 (time) is not a number: {clip_repr(t[1])}"
        if not re.match(r"^_-?\d+_$", t[2]) or not is_int(t[2][1:-1]):
            return f"field 3 is not a node id like _3_: {clip_repr(t[2])}"
        for i, what, bits in ((5, "packet id", 64), (7, "size", 32)):
            if not is_int(t[i], bits):
                return f"field {i + 1} ({what}) is not a number: {clip_repr(t[i])}"
        if not re.match(r"^\[\S+ \S+ \S+ \S+\]", " ".join(t[8:12])):
            return "fields 9-12 are not a MAC header [duration dst src type]"
        m = _OLD.match(s)
        if m and m["rest"]:
            ip = _OLD_IP.match(m["rest"])
            if ip is None and t[6] in ("tcp", "ack", "cbr"):
                return f"{t[6]} line without an IP header [src:port dst:port ttl next-hop]"
            if ip and t[6] in ("tcp", "ack") and not _OLD_TCP.match(ip["proto"] or ""):
                return f"{t[6]} line without a TCP part [seq ack] forwards opt-forwards"
            if ip and t[6] == "cbr" and not _OLD_CBR.match(ip["proto"] or ""):
                return "cbr line without a CBR part [seq] forwards opt-forwards"
        return "malformed old-format (CMU) wireless line"


_WIRELESS_NODE = re.compile(r"^_\d+_$")


def claims(line: str) -> bool:
    t = line.split()
    e = t[0]
    if len(t) >= 2 and t[1] == "-t":
        if e in ("s", "r", "f", "d", "D") and ("-Nl" in t or "-Ni" in t):
            return True
        return e == "N" and len(t) >= 6 and t[3] == "-n"     # energy lines of a new-format trace
    if e in ("s", "r", "f", "d", "D") and len(t) >= 4 and _WIRELESS_NODE.match(t[2]):
        return True
    if e == "M" and len(t) >= 3 and is_num(t[1]):
        return True                    # movement lines
    return len(e) > 1 and e[0] == "S" and len(t) >= 2 and is_num(t[1]) and e.isalnum()   # DSR's own lines (SFs, Sconfig, ...)


FORMAT = register(TraceFormat(
    kind="wireless", description="a wireless trace", claims=claims, parser=WirelessParser,
    tables={"wireless_events": WIRELESS_EVENTS, "wireless_movements": WIRELESS_MOVEMENTS,
            "wireless_energy": WIRELESS_ENERGY, "wireless_logs": WIRELESS_LOGS, "annotations": ANNOTATIONS},
    is_packet_trace=True, priority=10,     # its new-format lines before nam's `-t` lines
    time_rounding_s=1e-9, time_rounding_rel=1e-15,   # event lines print %.9f
))
