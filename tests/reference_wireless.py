"""A plain, line-by-line implementation of the wireless metric definitions in
docs/contract-wireless.md ("Wireless metric definitions"), written from the contract and
ns2-reference.md sections 1.2 / 1.3 only (not from tracekit's parser or SQL), so the tests
can compare the SQL views with numbers computed a second, independent way.

It reads the trace text itself with str.split: no tracekit code, no polars, no duckdb.
Slow on purpose: every definition is a loop over the parsed lines, commented with the
contract sentence it implements.

Decisions where the contract leaves room:
- new-format ARP lines carry `-P arp` but neither `-It` nor `-Il`: ptype 'ARP', size None;
  only lines with neither `-It` nor `-P` are MAC control frames (ptype None, 'MAC control'
  in wireless_drops);
- a wireless_drops group whose lines all have no size (MAC control) gets bytes None (an SQL
  sum over NULLs); the tests accept 0 there too;
- a packet's delivery time is its first `r` AGT line at the destination; t_last_recv is the
  latest such delivery time;
- wireless_run_stats.throughput_kbps follows the per-flow rule (0 when nothing was received,
  None when the interval is not positive).

The measurement window (the shared contract's revised rule, applied to wireless as the task
brief says; docs/contract-wireless.md still has the old text):
- run end: the run's `stop_s` label where it has one (run_end=), else the largest time of any
  event line (`s r f d D`, either format) in the file; M, N and S... lines do not count;
- flow throughput_kbps = rx_bytes x 8 / 1000 / (run end - t_first_send), goodput_kbps =
  payload / the same; active_throughput_kbps = rx_bytes x 8 / 1000 / (t_last_recv -
  t_first_send) (the old throughput). All three: 0.0 when recv_pkts = 0 (checked first), else
  None when the interval is <= 0 (or no send);
- in_flight_pkts = sent_pkts - recv_pkts - dropped_pkts (the lost_with_drop packets): packets
  still on their way at the end, or lost without a drop line;
- wireless_run_stats.throughput_kbps = rx_bytes x 8 / 1000 / (run end - first send of any
  flow); 0.0 when nothing was received, None when that interval is <= 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

# contract: "Routing packet: a packet the routing agent sent: IP source port 255 (RT_PORT),
# or ptype one of AODV, AOMDV, DSR, message (DSDV), TORA, IMEP. ARP and MAC control are not."
ROUTING_PTYPES = {"AODV", "AOMDV", "DSR", "message", "TORA", "IMEP"}
RT_PORT = 255


def is_routing(ln) -> bool:
    if ln.ptype in ROUTING_PTYPES:
        return True
    return ln.src_port == RT_PORT and ln.ptype not in (None, "ARP")
EVENTS = {"s", "r", "f", "d", "D"}
MAC_CONTROL = "MAC control"


@dataclass
class Line:
    """One event line (`s r f d D`), either format, reduced to what the metrics need."""
    line_no: int
    fmt: str            # 'old' / 'new'
    event: str          # s r f d  (old 'D' stored as 'd')
    time: float
    node: int
    layer: str
    reason: str | None  # None for '---'
    pkt_id: int
    ptype: str | None   # None: new-format MAC control frame (RTS/CTS/ACK)
    size: int | None    # None: new-format MAC control and ARP lines
    src_node: int | None = None
    src_port: int | None = None
    dst_node: int | None = None
    dst_port: int | None = None
    fid: int | None = None
    seq: int | None = None


def _addr(text: str, sep: str) -> tuple[int, int]:
    node, _, port = text.rpartition(sep)
    return int(node), int(port)


def parse_old(n: int, f: list[str]) -> Line:
    """Old CMU format (ns2-reference.md 1.2). $1 event, $2 time, $3 _node_, $4 layer,
    $5 reason, $6 uid, $7 type, $8 size, $9-$12 [MAC bracket], then an optional
    [energy ...] block, then `-------`, the IP bracket [src:port dst:port ttl next-hop] and the
    protocol part (tcp [seq ack] ..., cbr [seq] ...). MAC control frames end after the MAC
    bracket; ARP lines have [REQUEST ...] after the dashes."""
    ev = Line(
        line_no=n, fmt="old", event="d" if f[0] == "D" else f[0], time=float(f[1]),
        node=int(f[2].strip("_")), layer=f[3], reason=None if f[4] == "---" else f[4],
        pkt_id=int(f[5]), ptype=f[6], size=int(f[7]),
    )
    # where does the part after the MAC bracket start? ($9..$12 are tokens 8..11)
    assert f[8].startswith("[") and f[11].endswith("]"), f"line {n}: MAC bracket {f[8:12]}"
    i = 12
    if i < len(f) and f[i] == "[energy":
        i += 10                                  # [energy E ei I es S et T er R]: 10 tokens
    if i >= len(f):
        return ev                                # RTS / CTS / ACK: nothing after the MAC part
    assert f[i] == "-------", f"line {n}: expected ------- at token {i}: {f}"
    i += 1
    if ev.ptype == "ARP":
        return ev                                # [REQUEST s/s d/d]: no IP header
    ip = f[i:i + 4]                              # [src:port dst:port ttl next-hop]
    ev.src_node, ev.src_port = _addr(ip[0].lstrip("["), ":")
    ev.dst_node, ev.dst_port = _addr(ip[1], ":")
    rest = f[i + 4:]
    if ev.ptype in ("tcp", "ack"):
        ev.seq = int(rest[0].lstrip("["))        # [seq ack] nfwd optfwd
    elif ev.ptype == "cbr":
        ev.seq = int(rest[0].strip("[]"))        # [seq] nfwd optfwd
    return ev


def parse_new(n: int, f: list[str]) -> Line:
    """New format (ns2-reference.md 1.3): `-key value` pairs after $1, read as a dict."""
    kv = {}
    toks = f[1:]
    assert len(toks) % 2 == 0, f"line {n}: odd number of tokens"
    for k, v in zip(toks[0::2], toks[1::2]):
        assert k.startswith("-"), f"line {n}: key {k!r}"
        kv[k] = v
    if "-It" in kv:
        ptype, size = kv["-It"], int(kv["-Il"])
    elif kv.get("-P") == "arp":
        ptype, size = "ARP", None               # -P arp: no -It, no -Il
    else:
        ptype, size = None, None                 # RTS/CTS/ACK: stop after -Mt
    ev = Line(
        line_no=n, fmt="new", event="d" if f[0] == "D" else f[0], time=float(kv["-t"]),
        node=int(kv["-Ni"]), layer=kv["-Nl"], reason=None if kv["-Nw"] == "---" else kv["-Nw"],
        pkt_id=int(kv.get("-Ii", "0")), ptype=ptype, size=size,
    )
    if "-Is" in kv:
        ev.src_node, ev.src_port = _addr(kv["-Is"], ".")
        ev.dst_node, ev.dst_port = _addr(kv["-Id"], ".")
        ev.fid = int(kv["-If"])
    if kv.get("-Pn") == "tcp":
        ev.seq = int(kv["-Ps"])
    elif kv.get("-Pn") == "cbr":
        ev.seq = int(kv["-Pi"])
    return ev


def parse(text: str) -> list[Line]:
    """Every event line; the format is decided per line ($2 == '-t' is the new format).
    M (movement), N (energy), S... (DSR's own) and other lines are skipped."""
    out = []
    for n, raw in enumerate(text.splitlines(), start=1):
        f = raw.split()
        if not f or f[0] not in EVENTS:
            continue
        out.append(parse_new(n, f) if len(f) > 1 and f[1] == "-t" else parse_old(n, f))
    return out


def quantile(values: list[float], q: float) -> float | None:
    """Linear interpolation at position q * (n - 1) of the sorted values (numpy's default)."""
    if not values:
        return None
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return xs[lo] + (pos - lo) * (xs[hi] - xs[lo])


def mean(values):
    return sum(values) / len(values) if values else None


def reference(path, run_end: float | None = None) -> dict:
    with open(path) as fh:
        return reference_text(fh.read(), run_end)


def reference_text(text: str, run_end: float | None = None) -> dict:
    """Every wireless view of one trace. run_end: the run's stop_s label, if it has one;
    None = the largest time of any event line."""
    lines = parse(text)
    if run_end is None:
        run_end = max((ln.time for ln in lines), default=None)

    # -- data packets and flows --------------------------------------------------------
    # "Data packet: a packet sent by an agent, i.e. with an `s` AGT line, whose ptype is not
    # `ack`. It is named by (pkt_id, ptype)."
    # "Flow: the data packets with the same source and destination address and the same fid
    # (NULL in the old format) on their `s` AGT lines."
    first_s_agt: dict = {}      # (pkt_id, ptype) -> its first `s` AGT line
    for ln in lines:
        if ln.event == "s" and ln.layer == "AGT" and ln.ptype != "ack" and ln.ptype is not None:
            name = (ln.pkt_id, ln.ptype)
            if name not in first_s_agt:
                first_s_agt[name] = ln
    flow_of: dict = {}          # (pkt_id, ptype) -> flow key
    flow_pkts: dict = {}        # flow key -> [(pkt_id, ptype), ...]
    for name, ln in first_s_agt.items():
        key = (ln.fid, ln.src_node, ln.src_port, ln.dst_node, ln.dst_port)
        flow_of[name] = key
        flow_pkts.setdefault(key, []).append(name)

    # "sent_pkts: distinct data packets of the flow with an `s` AGT line at the source node
    # (node = src_node)."  first (earliest) such line per packet
    sent_line: dict = {}        # (pkt_id, ptype) -> first `s` AGT line at the source node
    for ln in lines:
        if ln.event == "s" and ln.layer == "AGT":
            name = (ln.pkt_id, ln.ptype)
            if name in flow_of and ln.node == flow_of[name][1] and name not in sent_line:
                sent_line[name] = ln
    # "recv_pkts: those with an `r` AGT line at the destination node (node = dst_node)."
    # "delay: the time of its first `r` AGT line at the destination"
    recv_line: dict = {}        # (pkt_id, ptype) -> first `r` AGT line at the destination
    for ln in lines:
        if ln.event == "r" and ln.layer == "AGT":
            name = (ln.pkt_id, ln.ptype)
            if name in sent_line and ln.node == flow_of[name][3] and name not in recv_line:
                recv_line[name] = ln
    # "dropped_pkts: sent packets that were never received at the destination and have at
    # least one `d` line (any layer, any node) with the same (pkt_id, ptype)."
    has_drop_line = set()
    for ln in lines:
        if ln.event == "d":
            has_drop_line.add((ln.pkt_id, ln.ptype))

    flows = {}
    all_delays_ms = []          # for wireless_run_stats.mean_delay_ms
    for key, names in flow_pkts.items():
        fid, src_node, src_port, dst_node, dst_port = key
        sent = [nm for nm in names if nm in sent_line]
        recv = [nm for nm in sent if nm in recv_line]
        dropped = [nm for nm in sent if nm not in recv_line and nm in has_drop_line]
        # "tx_bytes: the size on the `s` AGT lines of the sent packets"
        tx_bytes = sum(sent_line[nm].size for nm in sent)
        # "rx_bytes: the same size, summed over the received packets"
        rx_bytes = sum(sent_line[nm].size for nm in recv)
        t_first_send = min((sent_line[nm].time for nm in sent), default=None)
        t_last_recv = max((recv_line[nm].time for nm in recv), default=None)
        # arrival order: the order of the packets' first `r` AGT lines in the trace
        arrivals = sorted(recv, key=lambda nm: recv_line[nm].line_no)
        # "delay: first r AGT at the destination - its (first) s AGT at the source"
        delays_ms = [(recv_line[nm].time - sent_line[nm].time) * 1000 for nm in arrivals]
        all_delays_ms.extend(delays_ms)
        # "goodput: payload bytes of distinct sequence numbers delivered (first delivery of
        # each seq, in arrival order): for tcp the size on the s AGT line minus 40 (never
        # negative), for other ptypes the whole size"; "a packet type without sequence
        # numbers counts each packet once"
        seen_seq = set()
        payload = 0
        for nm in arrivals:
            s_ln = sent_line[nm]
            seq_key = ("seq", s_ln.seq) if s_ln.seq is not None else ("pkt", nm)
            if seq_key in seen_seq:
                continue
            seen_seq.add(seq_key)
            payload += max(s_ln.size - 40, 0) if s_ln.ptype == "tcp" else s_ln.size
        # throughput_kbps / goodput_kbps over the measurement window [first send, run end];
        # 0 when nothing was received; NULL when that interval is not positive.
        if not recv:
            thr = good = 0.0
        elif run_end is None or run_end - t_first_send <= 0:
            thr = good = None
        else:
            thr = rx_bytes * 8 / 1000 / (run_end - t_first_send)
            good = payload * 8 / 1000 / (run_end - t_first_send)
        # active_throughput_kbps: rx_bytes x 8 / 1000 / (last delivery - first send)
        if not recv:
            active = 0.0
        elif t_last_recv - t_first_send <= 0:
            active = None
        else:
            active = rx_bytes * 8 / 1000 / (t_last_recv - t_first_send)
        # "jitter_ms: mean |D_i - D_(i-1)| over consecutive received packets in arrival order"
        jitter = None
        if len(delays_ms) >= 2:
            jitter = mean([abs(delays_ms[i] - delays_ms[i - 1]) for i in range(1, len(delays_ms))])
        flows[key] = dict(
            fid=fid, src_node=src_node, src_port=src_port, dst_node=dst_node, dst_port=dst_port,
            # "ptype: their ptype (alphabetically first if several)"
            ptype=min(nm[1] for nm in names),
            sent_pkts=len(sent), recv_pkts=len(recv), dropped_pkts=len(dropped),
            tx_bytes=tx_bytes, rx_bytes=rx_bytes,
            throughput_kbps=thr, active_throughput_kbps=active, goodput_kbps=good,
            # in_flight_pkts: sent - recv - lost_with_drop (= dropped_pkts)
            in_flight_pkts=len(sent) - len(recv) - len(dropped),
            mean_delay_ms=mean(delays_ms),
            p50_delay_ms=quantile(delays_ms, 0.50),
            p95_delay_ms=quantile(delays_ms, 0.95),
            p99_delay_ms=quantile(delays_ms, 0.99),
            jitter_ms=jitter,
            # "pdr: recv_pkts / sent_pkts"; "drop_rate: dropped_pkts / sent_pkts"
            pdr=len(recv) / len(sent) if sent else None,
            drop_rate=len(dropped) / len(sent) if sent else None,
            t_first_send=t_first_send, t_last_recv=t_last_recv,
        )

    # -- wireless_drops ----------------------------------------------------------------
    # "per layer, reason and ptype (`MAC control` for new-format RTS/CTS/ACK), drops = the
    # number of `d` lines and bytes = their size summed. Every drop line counts."
    drops: dict = {}
    for ln in lines:
        if ln.event != "d":
            continue
        k = (ln.layer, ln.reason, MAC_CONTROL if ln.ptype is None else ln.ptype)
        n, b = drops.get(k, (0, None))
        if ln.size is not None:
            b = (b or 0) + ln.size          # an SQL sum: NULL sizes ignored, all NULL -> NULL
        drops[k] = (n + 1, b)

    # -- routing_overhead --------------------------------------------------------------
    # routing_sent_pkts = `s` RTR lines of routing packets; routing_fwd_pkts = `f` RTR lines
    # of routing packets; routing_pkts = their sum; routing_bytes = their sizes (at RTR)
    rs = rf = rb = 0
    for ln in lines:
        if ln.layer == "RTR" and is_routing(ln):
            if ln.event == "s":
                rs += 1
                rb += ln.size
            elif ln.event == "f":
                rf += 1
                rb += ln.size
    # data_recv_pkts = recv_pkts summed over the run's flows; nrl = routing_pkts /
    # data_recv_pkts, NULL when no data packet was received
    data_recv = sum(fl["recv_pkts"] for fl in flows.values())
    routing = dict(routing_sent_pkts=rs, routing_fwd_pkts=rf, routing_pkts=rs + rf,
                   routing_bytes=rb, data_recv_pkts=data_recv,
                   nrl=(rs + rf) / data_recv if data_recv else None)

    # -- node_forwarding ---------------------------------------------------------------
    # "per node that wrote any event line: fwd_data_pkts = `f` RTR lines of non-routing
    # packets other than ARP, fwd_data_bytes their sizes summed, fwd_routing_pkts = `f` RTR
    # lines of routing packets."
    forwarding: dict = {}
    for ln in lines:
        fwd = forwarding.setdefault(ln.node, [0, 0, 0])
        if ln.event == "f" and ln.layer == "RTR":
            if is_routing(ln):
                fwd[2] += 1
            elif ln.ptype not in ("ARP", None):
                fwd[0] += 1
                fwd[1] += ln.size
    forwarding = {node: tuple(v) for node, v in forwarding.items()}

    # -- wireless_run_stats ------------------------------------------------------------
    # "over its wireless flows: n_flows, and the sums of sent_pkts, recv_pkts, dropped_pkts,
    # rx_bytes; pdr = recv / sent; throughput_kbps = rx_bytes x 8 / 1000 / (run end -
    # first send over all flows) (the measurement window); mean_delay_ms over all received data packets (not the
    # mean of the flows' means); routing_pkts and nrl from routing_overhead."
    sent = sum(fl["sent_pkts"] for fl in flows.values())
    recv = sum(fl["recv_pkts"] for fl in flows.values())
    rx = sum(fl["rx_bytes"] for fl in flows.values())
    t0 = min((fl["t_first_send"] for fl in flows.values() if fl["t_first_send"] is not None), default=None)
    if recv == 0:
        thr = 0.0
    elif t0 is None or run_end is None or run_end - t0 <= 0:
        thr = None
    else:
        thr = rx * 8 / 1000 / (run_end - t0)
    run = dict(
        n_flows=len(flows), sent_pkts=sent, recv_pkts=recv,
        dropped_pkts=sum(fl["dropped_pkts"] for fl in flows.values()),
        pdr=recv / sent if sent else None, rx_bytes=rx, throughput_kbps=thr,
        mean_delay_ms=mean(all_delays_ms),
        routing_pkts=routing["routing_pkts"], nrl=routing["nrl"],
    )
    return dict(lines=lines, flows=flows, drops=drops, routing=routing,
                forwarding=forwarding, run=run)


def summary(res: dict) -> str:
    """A few lines for a human: flows, drops by reason, nrl."""
    out = []
    for k, fl in sorted(res["flows"].items(), key=lambda kv: str(kv[0])):
        out.append(f"  flow {k}: {fl['ptype']} sent {fl['sent_pkts']} recv {fl['recv_pkts']} "
                   f"dropped {fl['dropped_pkts']} pdr {fl['pdr']:.3f} "
                   f"delay {fl['mean_delay_ms'] if fl['mean_delay_ms'] is None else round(fl['mean_delay_ms'], 2)} ms "
                   f"thr {fl['throughput_kbps'] if fl['throughput_kbps'] is None else round(fl['throughput_kbps'], 1)} kbps")
    by_reason: dict = {}
    for (layer, reason, _ptype), (n, _) in res["drops"].items():
        by_reason[f"{layer}/{reason}"] = by_reason.get(f"{layer}/{reason}", 0) + n
    out.append(f"  drops: {dict(sorted(by_reason.items()))}")
    r = res["routing"]
    out.append(f"  routing: sent {r['routing_sent_pkts']} fwd {r['routing_fwd_pkts']} "
               f"bytes {r['routing_bytes']} data_recv {r['data_recv_pkts']} "
               f"nrl {r['nrl'] if r['nrl'] is None else round(r['nrl'], 3)}")
    return "\n".join(out)


if __name__ == "__main__":
    import sys
    for p in sys.argv[1:]:
        print(p)
        print(summary(reference(p)))
