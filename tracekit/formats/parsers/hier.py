"""Traces with hierarchical addresses (`$ns node-config -addressType hierarchical`, or
`$ns set-address-format hierarchical`): wired-only ones, and wired-cum-wireless ones, where
one file holds the wired lines of the wired nodes and the CMU lines of the base stations and
mobile nodes of one simulation. One run: the wired lines go to `events`, the wireless lines
to `wireless_events` (read by the wired and the wireless parsers), and the map from node id to
address to `node_addrs`.

One address, two forms (ns-2.35, trace.cc and cmu-trace.cc):
- wired lines print `1.0.1.0`: the address levels, then the port;
- wireless lines print the address packed into one number, `4194305:0` (old format) or
  `-Is 4194305.0` (new), with ns-2's default layout of 3 levels of 9, 11 and 11 bits
  (AddrParams NodeShift 22, 11, 0; NodeMask 511, 2047, 2047): 4194305 = 1<<22 | 0<<11 | 1 is
  1.0.1; IP_BROADCAST prints as 2147483647. A layout set with explicit bit counts
  (`set-address-format hierarchical 2 8 15`) is not readable from the trace and not supported.

Nodes: src_node and dst_node stay node ids, as in flat traces (the packet rules compare them
with the link ends and the wireless `_N_`), so each address is mapped to its node. The trace
never says which node has which address; it shows it (finish, over the whole trace):
- a packet's first line is at the node that made it: that node has the packet's source
  address (the first line of each packet id: a wired `+`/`h`/`d` from from_node, or a wireless
  line at its node);
- a wireless `r` line at the agent layer is at the packet's destination node;
- a wired `r` at to_node T of a packet of which T writes nothing afterwards (no wired event
  from T, no wireless line at T): T consumed it, T has the destination address.
Two nodes seen with one address, or one node with two, stop the ingest with a message. An
address no rule places (only ever the destination of packets lost on the way) keeps its text
in node_addrs with a NULL node, and the lines naming it a NULL node, with a warning.
Old-format wireless lines carry no fid: a wireless line of a packet that also has wired lines
gets that packet's fid, else the one fid of the wired lines between the same addresses and
ports (a packet lost before the wire), so one flow has one key on both sides.
"""
from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)

from tracekit.core.errors import TracekitError, clip_repr
from tracekit.formats.parsers import ANNOTATIONS, ParsedChunk, Parser, TraceFormat, as_polars, is_int, register
from tracekit.formats.parsers.wired import EVENTS, WIRED_EVENTS, WiredParser
from tracekit.formats.parsers.wireless import WIRELESS_ENERGY, WIRELESS_EVENTS, WIRELESS_LOGS, WIRELESS_MOVEMENTS, WirelessParser

# node_addrs: per run with hierarchical addresses, each node's address (what the trace showed).
NODE_ADDRS = pa.schema(
    [
        ("line_no", pa.int64()),              # the line that showed it (the first such line)
        ("node", pa.int32()),                 # node id (NULL: an address no line placed at a node)
        ("addr", pa.string()),                # the address as text, levels only: "1.0.1"
        ("addr_parts", pa.list_(pa.int32())),  # its levels: [1, 0, 1] (domain, cluster, node)
        ("packed", pa.int64()),               # the number wireless lines print for it: 4194305
        ("seen_as", pa.string()),             # source (made a packet), agent_recv, last_hop
    ]
)

# ns-2's default hierarchical layout: 3 levels of 9, 11 and 11 bits in a 31-bit address
LEVEL_SHIFTS = (22, 11, 0)
LEVEL_MASKS = (511, 2047, 2047)
IP_BROADCAST = 2147483647

_HIER_ADDR = re.compile(r"^\d+(?:\.\d+){2,}$")        # levels.port, at least 2 levels
_FLAT_ADDR = re.compile(r"^-?\d+\.-?\d+$")
_OLD_IP = re.compile(r" \[(-?\d+):-?\d+ (-?\d+):-?\d+ -?\d+ -?\d+\]")
_NEW_IP = re.compile(r" -I[sd] (-?\d+)\.")


def pack(parts: list[int]) -> int:
    """An address's levels into the number wireless lines print (default layout)."""
    return sum((p & m) << s for p, s, m in zip(parts, LEVEL_SHIFTS, LEVEL_MASKS))


def unpack(packed: int) -> str:
    """The number a wireless line prints into the address text ("1.0.1"; default layout)."""
    return ".".join(str((packed >> s) & m) for s, m in zip(LEVEL_SHIFTS, LEVEL_MASKS))


def _unpack_expr(col: str) -> pl.Expr:
    c = pl.col(col).cast(pl.Int64)
    parts = [((c // (1 << s)) % (m + 1)).cast(pl.String) for s, m in zip(LEVEL_SHIFTS, LEVEL_MASKS)]
    return (pl.when(c.is_null() | (c < 0) | (c == IP_BROADCAST)).then(None)
            .otherwise(pl.concat_str(parts, separator=".")))


def _is_wired_line(t: list[str]) -> bool:
    return len(t) >= 3 and t[0] in WIRED_EVENTS and t[1] != "-t" and not t[2].startswith("_")


def claims(line: str) -> bool:
    """A wired line with a hierarchical address, or a wireless line whose IP header names an
    address of domain 1 or more in the packed form (>= 1 << 22; flat node ids are small)."""
    t = line.split()
    if _is_wired_line(t):
        return len(t) >= 12 and (bool(_HIER_ADDR.match(t[8])) or bool(_HIER_ADDR.match(t[9])))
    if not t or t[0] not in ("s", "r", "f", "d", "D"):
        return False
    rx = _NEW_IP if len(t) > 1 and t[1] == "-t" else _OLD_IP
    for m in rx.finditer(line):
        for g in m.groups():
            if not is_int(g):       # not an int32 address (and int() of thousands of digits raises)
                continue
            v = int(g)
            if v >= 1 << LEVEL_SHIFTS[0] and v != IP_BROADCAST:
                return True
    return False


class HierParser(Parser):
    def __init__(self) -> None:
        self.wired = WiredParser()
        self.wireless = WirelessParser()
        self.addrs: dict[str, list[pl.DataFrame]] = {"events": [], "wireless_events": []}

    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:
        df = pl.DataFrame({"l": data.decode("utf-8", "replace").split("\n")}).with_row_index("_off")
        line = pl.col("l")
        wired = (line.str.contains(r"^[-+rdeh]\s") & ~line.str.contains(r"^\S+\s+-t\s")
                 & ~line.str.contains(r"^\S+\s+\S+\s+_"))
        df = df.with_columns(wired.alias("_wired"), line.str.extract_groups(
            r"^(?P<head>(?:\S+ ){8})(?P<a>\S+) (?P<b>\S+)(?P<tail> .*)?$").alias("_g")).unnest("_g")
        hier = {c: pl.col(c).str.contains(r"^\d+(?:\.\d+){2,}$").fill_null(False) for c in ("a", "b")}
        # each hierarchical address `levels.port` written `0.port` for the wired parser (the node
        # is decided in finish); a flat or malformed one made unreadable (the line is then bad)
        flat = {c: pl.when(hier[c]).then(pl.concat_str(pl.lit("0."), pl.col(c).str.extract(r"\.(\d+)$")))
                .otherwise(pl.lit("?")) for c in ("a", "b")}
        matched = pl.col("_wired") & pl.col("head").is_not_null()
        df = df.with_columns(
            pl.when(matched).then(pl.concat_str(pl.col("head"), flat["a"], pl.lit(" "), flat["b"],
                                                pl.col("tail").fill_null("")))
              .when(pl.col("_wired")).then(line).otherwise(pl.lit("")).alias("_w"),
            pl.when(pl.col("_wired")).then(pl.lit("")).otherwise(line).alias("_m"),
        )
        w_addrs = df.filter(matched).select(
            (pl.col("_off").cast(pl.Int64) + first_line_no).alias("line_no"),
            *[pl.when(hier[c]).then(pl.col(c).str.replace(r"\.\d+$", "")).alias(n)
              for c, n in (("a", "src_addr"), ("b", "dst_addr"))])
        n_wired = int(df["_wired"].sum())
        wired_data = df.select(pl.col("_w").str.join("\n")).item().encode()
        wireless_data = df.select(pl.col("_m").str.join("\n")).item().encode() if n_wired else data
        res_w = self.wired.parse_chunk(wired_data, first_line_no) if n_wired else None
        res_m = self.wireless.parse_chunk(wireless_data, first_line_no)
        tables: dict[str, pl.DataFrame] = {}
        bad: list[int] = []
        n_bad = 0
        comments = res_m.comments
        if res_w is not None:
            tables.update(res_w.tables)
            bad += res_w.bad_offsets
            n_bad += res_w.bad_count
            self.addrs["events"].append(w_addrs)
        for name, frame in res_m.tables.items():
            if name == "wireless_events":
                self.addrs["wireless_events"].append(as_polars(frame).select(
                    "line_no", _unpack_expr("src_node").alias("src_addr"), _unpack_expr("dst_node").alias("dst_addr"),
                    _unpack_expr("next_hop").alias("hop_addr")))
            if name in tables:
                frame = pl.concat([tables[name], frame]).sort("line_no")
            tables[name] = frame
        bad += res_m.bad_offsets
        n_bad += res_m.bad_count
        return ParsedChunk(tables=tables, bad_offsets=sorted(bad)[:1], bad_count=n_bad, comments=comments)

    def explain(self, line: str) -> str:
        t = line.split()
        if _is_wired_line(t):
            for i, what in ((8, "source address"), (9, "destination address")):
                if len(t) > i and _FLAT_ADDR.match(t[i]):
                    return (f"field {i + 1} ({what}) {clip_repr(t[i])} is a flat node.port address in a trace "
                            "with hierarchical addresses (levels.port, like 0.1.1.0)")
                if len(t) in (12, 16) and not _HIER_ADDR.match(t[i]):
                    return f"field {i + 1} ({what}) is not a hierarchical address (levels.port, like 0.1.1.0): {clip_repr(t[i])}"
            fixed, _, _ = _flatten_wired([x.encode() for x in t])
            return self.wired.explain(fixed.decode("utf-8", "replace"))
        return self.wireless.explain(line)

    def finish(self, staging: Path) -> list[str]:
        return _resolve(staging, self.addrs)


def _flatten_wired(t: list[bytes]) -> tuple[bytes, str | None, str | None]:
    """A wired line's fields with each hierarchical address `levels.port` written `0.port`
    for the wired parser (the node is decided in finish), and the two addresses' levels as
    text. A flat or malformed address is made unreadable, so the line is reported as bad."""
    out = list(t)
    found: list[str | None] = [None, None]
    for k, i in enumerate((8, 9)):
        if len(t) <= i:
            continue
        f = t[i].decode("utf-8", "replace")
        if _HIER_ADDR.match(f):
            levels, port = f.rsplit(".", 1)
            found[k] = levels
            out[i] = b"0." + port.encode()
        else:
            out[i] = b"?"
    return b" ".join(out), found[0], found[1]


def _read_parts(staging: Path, table: str) -> list[tuple[Path, pl.DataFrame]]:
    return [(p, pl.read_parquet(p)) for p in sorted(staging.glob(f"{table}-*.parquet"))]


def _resolve(staging: Path, addrs: dict[str, list[pl.DataFrame]]) -> list[str]:
    """Decide each address's node from the whole trace (see the module doc), fill src_node,
    dst_node (and wireless next_hop) of every staged part, fill the fid of old-format wireless
    lines of packets with wired lines, and write node_addrs."""
    a_schema = {"line_no": pl.Int64, "src_addr": pl.String, "dst_addr": pl.String}
    wa = pl.concat(addrs["events"]) if addrs["events"] else pl.DataFrame(schema=a_schema)
    ma = (pl.concat(addrs["wireless_events"]) if addrs["wireless_events"]
          else pl.DataFrame(schema={**a_schema, "hop_addr": pl.String}))
    wired_parts = _read_parts(staging, "events")
    wl_parts = _read_parts(staging, "wireless_events")
    ev = pl.concat([f for _, f in wired_parts]) if wired_parts else pl.DataFrame(schema=dict(pl.DataFrame(EVENTS.empty_table()).schema))
    wl = (pl.concat([f for _, f in wl_parts]) if wl_parts
          else pl.DataFrame(schema=dict(pl.DataFrame(WIRELESS_EVENTS.empty_table()).schema)))
    ev = ev.join(wa, on="line_no", how="left")
    wl = wl.join(ma, on="line_no", how="left")

    levels = {a.count(".") + 1 for a in pl.concat([wa["src_addr"], wa["dst_addr"]]).drop_nulls().unique().to_list()}
    if len(levels) > 1:
        raise TracekitError(f"the wired lines' addresses have different numbers of levels ({sorted(levels)}); "
                            "one simulation has one address format")
    if wl.height and levels and levels != {len(LEVEL_SHIFTS)}:
        raise TracekitError(f"the wired lines' addresses have {levels.pop()} levels; the packed addresses of the "
                            f"wireless lines are read in ns-2's default layout of {len(LEVEL_SHIFTS)} levels only")

    # the layout check: a packet with wired and wireless lines names the same addresses on both
    # (the wireless ones decoded in the default layout); else the simulation used another
    both = (ev.select("pkt_id", "ptype", "src_addr", "dst_addr").unique()
            .join(wl.filter(pl.col("src_addr").is_not_null() & pl.col("dst_addr").is_not_null())
                  .select("pkt_id", "ptype", "src_addr", "dst_addr", "line_no"), on=["pkt_id", "ptype"], suffix="_wl")
            .filter((pl.col("src_addr") != pl.col("src_addr_wl")) | (pl.col("dst_addr") != pl.col("dst_addr_wl"))))
    if both.height:
        r = both.sort("line_no").row(0, named=True)
        raise TracekitError(
            f"line {r['line_no']}: packet {r['pkt_id']}'s wireless addresses read {r['src_addr_wl']} -> {r['dst_addr_wl']} "
            f"in ns-2's default hierarchical layout (9, 11 and 11 bits), its wired lines say {r['src_addr']} -> "
            f"{r['dst_addr']}: a trace of another layout (set-address-format hierarchical with bit counts) is not supported")

    # where each line is, as (line_no, pkt_id, node, src_addr) for the first-line rule
    lines = pl.concat([
        ev.select("line_no", "pkt_id", pl.col("from_node").alias("node"), "src_addr"),
        wl.filter(pl.col("src_addr").is_not_null()).select("line_no", "pkt_id", "node", "src_addr"),
    ])
    source = (lines.sort("line_no").group_by("pkt_id", maintain_order=True).first()
              .filter(pl.col("src_addr").is_not_null())
              .select("line_no", "node", pl.col("src_addr").alias("addr"), pl.lit("source").alias("seen_as")))
    agent_recv = (wl.filter((pl.col("layer") == "AGT") & (pl.col("event") == "r") & pl.col("dst_addr").is_not_null())
                  .select("line_no", "node", pl.col("dst_addr").alias("addr"), pl.lit("agent_recv").alias("seen_as")))
    after = pl.concat([ev.select("pkt_id", pl.col("from_node").alias("node")), wl.select("pkt_id", "node")]).unique()
    last_hop = (ev.filter((pl.col("event") == "r") & pl.col("dst_addr").is_not_null())
                .select("line_no", "pkt_id", pl.col("to_node").alias("node"), pl.col("dst_addr").alias("addr"))
                .join(after, on=["pkt_id", "node"], how="anti")
                .select("line_no", "node", "addr", pl.lit("last_hop").alias("seen_as")))
    seen = (pl.concat([source, agent_recv, last_hop]).sort("line_no")
            .unique(subset=["node", "addr"], keep="first", maintain_order=True))
    for key, other, what in (("addr", "node", "address {k} is at two nodes, {v}"),
                             ("node", "addr", "node {k} has two addresses, {v}")):
        twice = seen.group_by(key).agg(pl.col(other).unique().sort()).filter(pl.col(other).list.len() > 1)
        if twice.height:
            k, v = twice.row(0)
            raise TracekitError("hierarchical addresses: " + what.format(k=k, v=" and ".join(map(str, v)))
                                + " (seen from which node made or received each packet); a trace of one simulation?")
    node_of = seen.select("addr", "node")
    named = pl.concat([f.select("line_no", pl.col(c).alias("addr")) for f in (wa, ma) for c in ("src_addr", "dst_addr")])
    unplaced_rows = (named.drop_nulls().group_by("addr").agg(pl.col("line_no").min())
                     .join(node_of, on="addr", how="anti").sort("addr"))
    unplaced = unplaced_rows["addr"].to_list()

    # fid of old-format wireless lines: that of the packet's wired lines (same source and
    # destination), else the one fid of the wired lines between the same addresses and ports (a
    # packet lost before it reached the wire)
    wired_fid = ev.select("pkt_id", "src_addr", "dst_addr", pl.col("fid").alias("_fid")).unique(
        subset=["pkt_id", "src_addr", "dst_addr"], keep="first")
    ends = ["src_addr", "src_port", "dst_addr", "dst_port"]
    flow_fid = (ev.group_by(ends).agg(pl.col("fid").unique().alias("_fids"))
                .filter(pl.col("_fids").list.len() == 1)
                .select(*ends, pl.col("_fids").list.first().alias("_flow_fid")))

    def nodes(frame: pl.DataFrame, addr_cols: dict[str, str], broadcast_cols: tuple[str, ...]) -> pl.DataFrame:
        for col, acol in addr_cols.items():
            m = node_of.rename({"addr": acol, "node": f"_{col}"})
            frame = frame.join(m, on=acol, how="left")
            keep = pl.col(f"_{col}")
            if col in broadcast_cols:      # wireless: IP_BROADCAST stays -1; next hop 0 = unset
                raw = pl.col(col)
                keep = (pl.when(raw.is_null()).then(None)
                        .when((raw == IP_BROADCAST) | (raw < 0)).then(pl.lit(-1))
                        .when((raw == 0) & (col == "next_hop")).then(pl.lit(0))
                        .otherwise(keep))
            frame = frame.with_columns(keep.cast(pl.Int32).alias(col)).drop(f"_{col}")
        return frame

    for path, part in wired_parts:
        cols = part.columns
        part = part.join(wa, on="line_no", how="left")
        part = nodes(part, {"src_node": "src_addr", "dst_node": "dst_addr"}, ())
        part.select(cols).write_parquet(path, compression="zstd", compression_level=1)
    for path, part in wl_parts:
        cols = part.columns
        part = part.join(ma, on="line_no", how="left")
        part = nodes(part, {"src_node": "src_addr", "dst_node": "dst_addr", "next_hop": "hop_addr"},
                     ("src_node", "dst_node", "next_hop"))
        part = (part.join(wired_fid, on=["pkt_id", "src_addr", "dst_addr"], how="left")
                .join(flow_fid, on=ends, how="left")
                .with_columns(pl.coalesce("fid", "_fid", "_flow_fid").alias("fid")))
        part.select(cols).write_parquet(path, compression="zstd", compression_level=1)

    placed = seen.select("line_no", pl.col("node").cast(pl.Int32), "addr", "seen_as")
    rows = pl.concat([placed, unplaced_rows.select("line_no", pl.lit(None, pl.Int32).alias("node"), "addr",
                                                   pl.lit(None, pl.String).alias("seen_as"))])
    parts = rows["addr"].str.split(".").list.eval(pl.element().cast(pl.Int32))
    out = rows.with_columns(parts.alias("addr_parts")).with_columns(
        pl.col("addr_parts").map_elements(lambda p: pack(list(p)), return_dtype=pl.Int64).alias("packed")
    ).sort("line_no").select([f.name for f in NODE_ADDRS])
    if out.height:
        pl.from_arrow(out.to_arrow().cast(NODE_ADDRS)).write_parquet(staging / "node_addrs-00000.parquet")  # type: ignore[union-attr]
    if unplaced:
        shown = ", ".join(unplaced[:5]) + (", ..." if len(unplaced) > 5 else "")
        return [f"hierarchical addresses: {len(unplaced)} address(es) seen at no node ({shown}): only ever the "
                "destination of packets lost on the way; their lines have a NULL node"]
    return []


FORMAT = register(TraceFormat(
    kind="hier", description="a trace with hierarchical addresses",
    claims=claims, parser=HierParser,
    tables={"events": EVENTS, "wireless_events": WIRELESS_EVENTS, "node_addrs": NODE_ADDRS,
            "annotations": ANNOTATIONS, "wireless_movements": WIRELESS_MOVEMENTS,
            "wireless_energy": WIRELESS_ENERGY, "wireless_logs": WIRELESS_LOGS},
    is_packet_trace=True, priority=5,      # before the wired and wireless formats
    has_facts=False,                       # its packets cross events and wireless_events: hier_packets
    also_event_tables=("wireless_events",), supersedes=("wireless",),
    time_rounding_s=1e-6, time_rounding_rel=1e-15,   # the wired lines' (the main table's) rounding
))
