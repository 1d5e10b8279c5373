"""A plain, line-by-line reference for traces with hierarchical addresses (wired, and
wired-cum-wireless: wired lines and old-format CMU wireless lines of one simulation in one
file). It reads the trace text itself (no tracekit code, no SQL), with the rules
sql/intermediate/hier_packets.sql and tracekit/formats/parsers/hier.py document:

Addresses: wired lines print `1.0.1.0` (levels, then the port); wireless lines print the
address packed, ns-2's default layout: level 1 in bits 22-30, level 2 in bits 11-21, level 3 in
bits 0-10 (4194305 = 1.0.1); 2147483647 is the broadcast address. Which node has which address:
- the first line of each packet id is at the node that made it: that node has its source
  address (wired: from_node; wireless: the `_N_` node, lines with an IP header);
- an `r` AGT wireless line is at the packet's destination node;
- a wired `r` at to_node T of a packet of which no line (a wired line from T, a wireless line at
  T) exists: T has the destination address.

Packets and flows: a data packet (ptype not `ack`) is named by (pkt_id, ptype) and its flow
(fid, source node and port, destination node and port); an old-format wireless line has no
fid and takes that of the packet's wired lines, else the one fid of the wired lines between the
same addresses and ports. Sent: a wired `+`, `h` or `d` from the source
node, or an `s` AGT line at the source node (first such line: t_sent, size, seq). Delivered: a
wired `r` at the destination node or an `r` AGT line at the destination node (first: t_recv).
rx_bytes: the sizes of its wired deliveries, plus its sent size if a wireless line delivered
it. drops: its wired `d` lines, plus 1 when never delivered and a wireless `d` line of it
exists. Header bytes (goodput): 40 for tcp, else 0 (the traces here have one-way TCP with a SYN).
Run end: the largest time of any wired or wireless event line. Rates over [first send, run end].
"""
from __future__ import annotations

import re

WIRED = {"+", "-", "r", "d", "e", "h"}
BROADCAST = 2147483647
_OLD = re.compile(r"^([srfdD]) (\S+) _(\d+)_ (\S+) (\S+) (\d+) (\S+) (\d+) \[[^\]]*\] (?:\[energy[^\]]*\] )?"
                  r"\S+ \[(-?\d+):(\d+) (-?\d+):(\d+) (-?\d+) (-?\d+)\](?: \[(\d+)(?: (\d+))?\])?")


def unpack(v: int) -> str | None:
    if v < 0 or v == BROADCAST:
        return None
    return f"{(v >> 22) & 511}.{(v >> 11) & 2047}.{v & 2047}"


def parse(text: str) -> list[dict]:
    """The packet lines: wired ones and old-format wireless ones with an IP header."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        f = line.split()
        if len(f) >= 12 and f[0] in WIRED and not f[2].startswith("_"):
            src, sport = f[8].rsplit(".", 1)
            dst, dport = f[9].rsplit(".", 1)
            out.append(dict(line=n, wired=True, event=f[0], time=float(f[1]), from_node=int(f[2]),
                            to_node=int(f[3]), ptype=f[4], size=int(f[5]), fid=int(f[7]), src=src,
                            sport=int(sport), dst=dst, dport=int(dport), seq=int(f[10]), uid=int(f[11])))
            continue
        m = _OLD.match(" ".join(f))
        if m:
            ev = "d" if m[1] == "D" else m[1]
            out.append(dict(line=n, wired=False, event=ev, time=float(m[2]), node=int(m[3]), layer=m[4],
                            uid=int(m[6]), ptype=m[7], size=int(m[8]), fid=None,
                            src=unpack(int(m[9])), sport=int(m[10]), dst=unpack(int(m[11])), dport=int(m[12]),
                            seq=int(m[15]) if m[15] is not None and m[7] in ("tcp", "ack", "cbr") else None))
    return out


def node_addresses(lines: list[dict]) -> dict[str, int]:
    """address text -> node id, by the three rules of the module doc."""
    where: dict[str, set] = {}
    first_of_uid: set = set()
    at_node: set = set()           # (uid, node) with a line of the packet at the node
    for ln in lines:
        node = ln["from_node"] if ln["wired"] else ln["node"]
        at_node.add((ln["uid"], node))
        if ln["uid"] not in first_of_uid:
            first_of_uid.add(ln["uid"])
            if ln["src"] is not None:
                where.setdefault(ln["src"], set()).add(node)
        if not ln["wired"] and ln["event"] == "r" and ln["layer"] == "AGT" and ln["dst"] is not None:
            where.setdefault(ln["dst"], set()).add(ln["node"])
    for ln in lines:
        if ln["wired"] and ln["event"] == "r" and (ln["uid"], ln["to_node"]) not in at_node:
            where.setdefault(ln["dst"], set()).add(ln["to_node"])
    for addr, nodes in where.items():
        assert len(nodes) == 1, (addr, nodes)
    return {a: n.pop() for a, n in where.items()}


def _quantile(xs: list[float], q: float) -> float | None:
    if not xs:
        return None
    xs = sorted(xs)
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def flow_stats(text: str) -> dict:
    """Flow key (fid, src_node, src_port, dst_node, dst_port) -> flow_stats columns."""
    lines = parse(text)
    node_of = node_addresses(lines)
    run_end = max(ln["time"] for ln in lines)
    wired_fid = {}
    fids_between: dict = {}          # (src, sport, dst, dport) -> fids of wired lines
    for ln in lines:
        if ln["wired"]:
            wired_fid.setdefault((ln["uid"], ln["src"], ln["dst"]), ln["fid"])
            fids_between.setdefault((ln["src"], ln["sport"], ln["dst"], ln["dport"]), set()).add(ln["fid"])

    def fid_of(ln):
        if ln["wired"]:
            return ln["fid"]
        if (ln["uid"], ln["src"], ln["dst"]) in wired_fid:
            return wired_fid[(ln["uid"], ln["src"], ln["dst"])]
        fids = fids_between.get((ln["src"], ln["sport"], ln["dst"], ln["dport"]), set())
        return next(iter(fids)) if len(fids) == 1 else None

    pk: dict = {}                    # (flow key, uid, ptype) -> facts
    for ln in lines:
        if ln["ptype"] == "ack" or ln["src"] is None or ln["dst"] is None:
            continue
        fid = fid_of(ln)
        s, d = node_of.get(ln["src"]), node_of.get(ln["dst"])
        key = (fid, s, ln["sport"], d, ln["dport"])
        p = pk.setdefault((key, ln["uid"], ln["ptype"]), dict(
            sent=None, recv=None, rx=0, wl_recv=False, drops=0, wl_drop=False, any_line=False))
        if ln["wired"]:
            at_src = ln["event"] in ("+", "h", "d") and ln["from_node"] == s
            at_dst = ln["event"] == "r" and ln["to_node"] == d
        else:
            at_src = ln["event"] == "s" and ln["layer"] == "AGT" and ln["node"] == s
            at_dst = ln["event"] == "r" and ln["layer"] == "AGT" and ln["node"] == d
        counted = at_src or at_dst or ln["event"] == "d"
        if not counted:
            continue
        p["any_line"] = True
        if at_src and p["sent"] is None:
            p["sent"] = ln
        if at_dst:
            if p["recv"] is None:
                p["recv"] = ln
            if ln["wired"]:
                p["rx"] += ln["size"]
            else:
                p["wl_recv"] = True
        if ln["event"] == "d":
            if ln["wired"]:
                p["drops"] += 1
            else:
                p["wl_drop"] = True
    flows: dict = {}
    for (key, uid, ptype), p in pk.items():
        flows.setdefault(key, []).append((uid, ptype, p))
    out = {}
    for key, pkts in flows.items():
        sent = [x for x in pkts if x[2]["sent"] is not None]
        recv = [x for x in pkts if x[2]["recv"] is not None]
        size = {(u, t): (p["sent"] or p["recv"])["size"] for u, t, p in pkts if p["sent"] or p["recv"]}
        rx = sum(p["rx"] + (size[(u, t)] if p["wl_recv"] else 0) for u, t, p in pkts)
        drops = sum(p["drops"] + (1 if p["recv"] is None and p["wl_drop"] else 0) for _, _, p in pkts)
        t0 = min(p["sent"]["time"] for _, _, p in sent)
        arrivals = sorted((x for x in recv if x[2]["sent"] is not None), key=lambda x: x[2]["recv"]["line"])
        delays = [(p["recv"]["time"] - p["sent"]["time"]) * 1000 for _, _, p in arrivals]
        hdr = 40 if key_ptype(pkts) == "tcp" else 0
        seen, payload = set(), 0
        for u, t, p in sorted(recv, key=lambda x: x[2]["recv"]["line"]):
            first = p["sent"] or p["recv"]
            sk = ("seq", first["seq"]) if first["seq"] is not None and first["seq"] >= 0 else ("pkt", u)
            if sk not in seen:
                seen.add(sk)
                payload += max(size[(u, t)] - hdr, 0)
        out[key] = dict(
            sent_pkts=len(sent), recv_pkts=len(recv), dropped_pkts=drops, rx_bytes=rx,
            throughput_kbps=rx * 8 / 1000 / (run_end - t0) if recv else 0.0,
            goodput_kbps=payload * 8 / 1000 / (run_end - t0) if recv else 0.0,
            mean_delay_ms=sum(delays) / len(delays) if delays else None,
            p95_delay_ms=_quantile(delays, 0.95),
            jitter_ms=(sum(abs(b - a) for a, b in zip(delays, delays[1:])) / (len(delays) - 1)
                       if len(delays) > 1 else None),
            t_run_end=run_end,
        )
    return out


def key_ptype(pkts) -> str:
    return min(t for _, t, _ in pkts)
