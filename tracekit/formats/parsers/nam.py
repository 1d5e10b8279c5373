"""nam traces (`$ns namtrace-all $nf`): the packet events `+ - h r d` (and RED's `e`) read
into `events`, so that a user who kept only the .nam still gets flows and flow_stats. A nam
packet line is tagged: `+ -t 0.11 -s 0 -d 6 -p tcp -e 40 -c 1 -i 0 -a 1 -x {0.0 5.0 0 -------
null}` (-t time, -s/-d the link's from/to node, -p type, -e size, -c flow id, -i packet uid,
-a colour, -x {src dst seq flags name}); its keys are read by name, not by position. A nam
trace has an `h` line after each `-` (the hop, with seq -1) besides a LAN's own `h`. The
scene lines (`V A n l c q X L a f m ...`, `-t *` and the annotations' `v -t` lines) are
skipped; `v -t` annotations are kept in `annotations` (time, and the text after `-e`).
"""
from __future__ import annotations

import re

from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)

from tracekit.core.errors import clip_repr
from tracekit.formats.parsers import ANNOTATIONS, ParsedChunk, Parser, TraceFormat, comment_lines, is_int, is_num, normalize_ws, register, text_lines_only
from tracekit.formats.parsers.wired import EVENTS, WIRED_EVENTS

# every line of a nam trace: an event or scene code, then `-t`
_NAM_CODES = ("V", "n", "l", "c", "A", "q", "+", "-", "h", "r", "d", "e", "v", "f", "a", "m", "X", "L", "E", "D", "P", "R", "T", "G", "M", "W", "N")
_KEYS = {"t": "time", "s": "from_node", "d": "to_node", "p": "ptype", "e": "size", "c": "fid", "i": "pkt_id"}
_X = re.compile(r" -x \{(?P<src>\S+) (?P<dst>\S+) (?P<seq>\S+) (?P<flags>\S+) (?P<name>[^}]*)\}")
_INT32 = ("from_node", "to_node", "size", "fid")
_EV_COLS = [f.name for f in EVENTS]


def _addr(col: str, node: str, port: str) -> list[pl.Expr]:
    parts = pl.col(col).str.extract_groups(r"^(?P<n>-?\d+)\.(?P<p>-?\d+)$")
    return [parts.struct.field("n").cast(pl.Int32, strict=False).alias(node),
            parts.struct.field("p").cast(pl.Int32, strict=False).alias(port)]


class NamParser(Parser):
    def parse_chunk(self, data: bytes, first_line_no: int) -> ParsedChunk:
        raw = text_lines_only(normalize_ws(data))
        df = pl.read_csv(raw, has_header=False, separator="\x1f", quote_char=None,
                         schema={"l": pl.String}, truncate_ragged_lines=True)
        df = df.with_columns(pl.int_range(pl.len(), dtype=pl.Int64).alias("_off"),
                             (pl.int_range(pl.len(), dtype=pl.Int64) + first_line_no).alias("line_no"))
        line = pl.col("l")
        code = line.str.extract(r"^(\S+) -t ", 1)
        cls = (
            pl.when(line.is_null() | (line == "")).then(pl.lit("blank"))
            .when(line.str.starts_with("#")).then(pl.lit("comment"))
            .when(code.is_in(list(WIRED_EVENTS))).then(pl.lit("packet"))
            .when(code == "v").then(pl.lit("annot"))
            .when(code.is_in(list(_NAM_CODES))).then(pl.lit("scene"))
            .otherwise(pl.lit("bad"))
        )
        df = df.with_columns(cls.alias("_cls"))
        bad = [df.filter(pl.col("_cls") == "bad").select("_off")]
        tables = {}

        pk = df.filter(pl.col("_cls") == "packet")
        if pk.height:
            x = pk.select(
                "line_no", "_off", line.str.slice(0, 1).alias("event"),
                *[line.str.extract(rf" -{k} (\S+)", 1).alias(c) for k, c in _KEYS.items()],
                line.str.extract_groups(_X.pattern).alias("_x"),
            ).unnest("_x")
            x = x.with_columns(
                *_addr("src", "src_node", "src_port"), *_addr("dst", "dst_node", "dst_port"),
                pl.col("time").cast(pl.Float64, strict=False),
                *[pl.col(c).cast(pl.Int32, strict=False) for c in _INT32],
                pl.col("seq").cast(pl.Int64, strict=False),
                pl.col("pkt_id").cast(pl.Int64, strict=False),
            )
            need = ("time", "from_node", "to_node", "ptype", "size", "fid", "pkt_id",
                    "src_node", "src_port", "dst_node", "dst_port", "seq", "flags")
            ok = pl.all_horizontal(*[pl.col(c).is_not_null() for c in need]) & pl.col("time").is_finite()
            x = x.with_columns(ok.fill_null(False).alias("_ok"))
            bad.append(x.filter(~pl.col("_ok")).select("_off"))
            tables["events"] = x.filter(pl.col("_ok")).select(
                [pl.col(c) if c in x.columns else pl.lit(None).alias(c) for c in _EV_COLS])

        an = df.filter(pl.col("_cls") == "annot")
        if an.height:
            # `v -t 0.5 -e sim_annotation 0.5 1 hello`: the time, and the text after -e
            x = an.select("line_no", "_off", line.str.extract(r"^v -t (\S+)", 1).cast(pl.Float64, strict=False).alias("time"),
                          line.str.extract(r" -e (.*)$", 1).alias("text"))
            ok = pl.col("time").is_not_null() & pl.col("text").is_not_null()
            bad.append(x.filter(~ok).select("_off"))
            tables["annotations"] = x.filter(ok).select([f.name for f in ANNOTATIONS])

        bad_df = pl.concat(bad).sort("_off")
        return ParsedChunk(
            tables=tables,
            bad_offsets=bad_df["_off"].head(1).to_list(),
            bad_count=bad_df.height,
            comments=comment_lines(data, first_line_no) if df.select((pl.col("_cls") == "comment").any()).item() else [],
        )

    def explain(self, line: str) -> str:
        t = " ".join(line.split()).split(" ")
        if len(t) < 2 or t[1] != "-t":
            return f"not a nam trace line (a nam line is a code, then -t TIME): {clip_repr(' '.join(t[:3]))}"
        if t[0] not in _NAM_CODES:
            return f"unknown nam event {clip_repr(t[0])}"
        s = " " + " ".join(t[1:])
        if t[0] == "v":
            return "nam annotation line ('v -t TIME ... -e TEXT') without a numeric time or -e"
        names = {"t": "time", "s": "from node", "d": "to node", "p": "packet type", "e": "size", "c": "flow id", "i": "packet id"}
        for k, what in names.items():
            m = re.search(rf" -{k} (\S+)", s)
            if m is None:
                return f"nam packet line without -{k} ({what})"
            v = m.group(1)
            if k == "t" and not is_num(v):
                return f"-t (time) is not a number: {clip_repr(v)}"
            if k in ("s", "d", "e", "c") and not is_int(v):
                return f"-{k} ({what}) is not a number: {clip_repr(v)}"
            if k == "i" and not is_int(v, 64):
                return f"-i (packet id) is not a number: {clip_repr(v)}"
        m = _X.search(s)
        if m is None:
            return "nam packet line without -x {src dst seq flags name}"
        for part, what in (("src", "source"), ("dst", "destination")):
            p = m.group(part).split(".")
            if len(p) > 2:
                return f"-x {what} {clip_repr(m.group(part))} is a hierarchical address; only flat node.port addresses are supported"
            if len(p) != 2 or not all(is_int(v) for v in p):
                return f"-x {what} address is not node.port: {clip_repr(m.group(part))}"
        if not is_int(m.group("seq"), 64):
            return f"-x sequence number is not a number: {clip_repr(m.group('seq'))}"
        return "malformed nam packet line"


def claims(line: str) -> bool:
    t = line.split()
    return len(t) >= 2 and t[1] == "-t" and t[0] in _NAM_CODES


FORMAT = register(TraceFormat(
    kind="nam", description="a nam trace", claims=claims, parser=NamParser,
    tables={"events": EVENTS, "annotations": ANNOTATIONS}, is_packet_trace=True,
    priority=90,     # after the `-t` lines of queue events and new-format wireless traces
    time_rounding_s=1e-6, time_rounding_rel=1e-15,
))
