"""A plain, line-by-line implementation of the wired-trace metric definitions in docs/contract.md.

It reads the trace text itself (no tracekit code, no SQL) so that tests can compare the SQL
views with numbers computed a second, independent way. Slow on purpose: clarity over speed.

The rules the contract leaves open are decided here exactly as the sql/ headers document:
- a flow is (fid, src address, dst address) of its data packets;
- FullTcp flow: a `tcp` packet shows a header length (16-field line), or a 40-byte `tcp`
  packet with seq > 0 (the handshake's pure ACK, the FIN), or byte-like sequence numbers
  (max seq - min seq > 2 x the flow's `tcp` `+`/`d` events); its data packets are those with size > 40;
- a flow's ptype: the alphabetically first ptype of its non-ack packets;
- header bytes removed for goodput: 40 for TCP, except a one-way TCP flow with no 40-byte
  SYN at seq 0 whose seq 0 was seen or whose name contains "vegas" (Vegas sends no header);
  0 for non-TCP flows;
- quantiles interpolate linearly (q * (n - 1)), like numpy's default.

Measurement window (docs/contract.md, revised) -- decided here, the SQL follows:
- run end (`t_run_end`, a column of flow_stats): the run's `stop_s` label where it has one
  (passed in as run_end), else the largest time of any packet event line (`+ - r d e h`,
  >= 12 fields) of the trace; `v` and other non-packet lines do not count. One value per run,
  the same for every flow;
- throughput_kbps = rx_bytes x 8 / 1000 / (t_run_end - first send); goodput_kbps = payload /
  the same; active_throughput_kbps = rx_bytes x 8 / 1000 / (last first-delivery - first send).
  rx_bytes and the goodput payload count every delivery, even one after a stop_s label;
- all three: 0.0 when recv_pkts = 0 (checked first); else NULL when no send was seen or the
  interval is <= 0;
- goodput: the first delivery of each seq, in arrival order (time, then line); a packet with
  a negative seq (ns-2 writes -1, e.g. ping, routing) has no seq and counts once per pkt_id;
- in_flight_pkts = sent_pkts - recv_pkts - (distinct pkt_ids of the flow's data packets with a
  `d` event and no `r` at the destination).

flow_stats_window(t0, t1): the same columns over [t0, t1) (t0 <= t < t1):
- "sent in the window" = pkt_ids whose first send (first time leaving the source node) is in
  [t0, t1). sent_pkts = their number; recv_pkts = those of them delivered at the destination
  at ANY time (also after t1); dropped_pkts = `d` events (any time) of those packets;
  in_flight_pkts = sent - recv - those of them with a `d` and never delivered;
  pdr = recv / sent, drop_rate = dropped / sent (NULL when sent = 0);
  delay percentiles and jitter over those of them delivered, in arrival order;
- "delivered in the window" = `r` events at the destination with time in [t0, t1), whatever
  the packet's send time. rx_bytes = their sizes summed (duplicates too, like flow_stats);
  throughput_kbps = rx_bytes x 8 / 1000 / (t1 - t0); goodput_kbps = payload of the first
  delivery of each seq (over the whole trace, per flow) whose first delivery lies in
  [t0, t1), over t1 - t0 (a seq first delivered before t0 does not count again);
  active_throughput_kbps = rx_bytes x 8 / 1000 / (last delivery in [t0, t1) -
  max(t0, the flow's first send)): the flow's active interval clipped to the window;
- throughput, goodput, active: NULL when t1 - t0 <= 0 (checked first); else 0.0 when nothing
  was delivered in the window; active NULL when its interval is <= 0 or no send was seen;
- t_run_end = t1; every flow of flow_stats has a row, also one with nothing in the window.

LAN (`$ns newLan`) traces: every station that is neither the sender nor the receiver of a
frame writes a `d` of it (from_node the station, to_node the LAN's own node). Such a `d` is
"overheard", not a drop: a `d` whose to_node is a LAN node (the to_node of some `h` event of
the trace) of a packet that was received across that LAN (an `r` of the same packet id whose
from_node is that node). dropped_pkts counts the other `d` events; overheard_pkts these. The
`h` line (hop onto the LAN) is the first event of a packet at its source, before its `+`:
"leaving the source" counts it like any event from the source node.

fairness: Jain's index over throughput_kbps (the measurement-window one) of the run's `tcp`
flows whose throughput is not NULL; a starved flow counts with its low value.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

PACKET_EVENTS = {"+", "-", "r", "d", "e", "h"}


@dataclass
class Ev:
    line_no: int
    event: str
    time: float
    from_node: int
    to_node: int
    ptype: str
    size: int
    flags: str
    fid: int
    src_node: int
    src_port: int
    dst_node: int
    dst_port: int
    seq: int
    pkt_id: int
    tcp_ackno: int | None = None
    tcp_flags: int | None = None
    tcp_hlen: int | None = None
    sack_blocks: int | None = None


def _addr(text: str) -> tuple[int, int]:
    node, _, port = text.rpartition(".")
    return int(node), int(port)


def parse_trace(text: str) -> list[Ev]:
    """Packet lines of a normal wired trace (12 or 16 fields); 'v' and other lines skipped."""
    out = []
    for n, line in enumerate(text.splitlines(), start=1):
        f = line.split()
        if len(f) < 12 or f[0] not in PACKET_EVENTS:
            continue
        sn, sp = _addr(f[8])
        dn, dp = _addr(f[9])
        ev = Ev(n, f[0], float(f[1]), int(f[2]), int(f[3]), f[4], int(f[5]), f[6], int(f[7]),
                sn, sp, dn, dp, int(f[10]), int(f[11]))
        if len(f) >= 16:
            ev.tcp_ackno, ev.tcp_flags = int(f[12]), int(f[13], 16)
            ev.tcp_hlen, ev.sack_blocks = int(f[14]), int(f[15])
        out.append(ev)
    return out


def quantile(values: list[float], q: float) -> float | None:
    """Linear interpolation between the two nearest ranks (position q * (n - 1))."""
    if not values:
        return None
    xs = sorted(values)
    pos = q * (len(xs) - 1)
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return xs[lo] + (pos - lo) * (xs[hi] - xs[lo])


def mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


@dataclass
class Flow:
    fid: int
    src_node: int
    src_port: int
    dst_node: int
    dst_port: int
    ptype: str = ""
    name: str | None = None
    fulltcp: bool = False
    hdr_bytes: int = 0
    ptype_counts: dict = field(default_factory=dict)

    @property
    def key(self):
        return (self.fid, self.src_node, self.src_port, self.dst_node, self.dst_port)


def _key(e: Ev):
    return (e.fid, e.src_node, e.src_port, e.dst_node, e.dst_port)


def find_flows(events: list[Ev], flow_names: dict[int, str] | None = None) -> dict:
    """Flow key -> Flow, for every key that has at least one data packet."""
    flow_names = flow_names or {}
    cand: dict = {}
    tcp_seqs: dict = {}
    for e in events:
        if e.ptype == "ack":
            continue
        k = _key(e)
        if k not in cand:
            cand[k] = Flow(*k, name=flow_names.get(e.fid))
            cand[k].syn_seen = False
            cand[k].seq0_seen = False
            cand[k].hlen_seen = False
            cand[k].small_tcp_after_syn = False
            tcp_seqs[k] = []
        fl = cand[k]
        fl.ptype_counts[e.ptype] = fl.ptype_counts.get(e.ptype, 0) + 1
        if e.ptype == "tcp":
            if e.event in ("+", "d"):
                tcp_seqs[k].append(e.seq)
            if e.tcp_hlen is not None and e.tcp_hlen > 0:
                fl.hlen_seen = True
            if e.size <= 40 and e.seq > 0:
                fl.small_tcp_after_syn = True
            if e.seq == 0:
                fl.seq0_seen = True
                if e.size == 40:
                    fl.syn_seen = True
    flows = {}
    for k, fl in cand.items():
        fl.ptype = min(fl.ptype_counts)
        seqs = tcp_seqs[k]  # seq of every `tcp` '+' or 'd' event
        byte_like = bool(seqs) and max(seqs) - min(seqs) > 2 * len(seqs)
        fl.fulltcp = "tcp" in fl.ptype_counts and (fl.hlen_seen or fl.small_tcp_after_syn or byte_like)
        if fl.ptype != "tcp":
            fl.hdr_bytes = 0
        elif fl.fulltcp or fl.syn_seen:
            fl.hdr_bytes = 40
        elif fl.seq0_seen or (fl.name is not None and "vegas" in fl.name.lower()):
            fl.hdr_bytes = 0
        else:
            fl.hdr_bytes = 40
        has_data = any(
            _key(e) == k and e.ptype != "ack" and (not fl.fulltcp or e.size > 40) for e in events
        )
        if has_data:
            flows[k] = fl
    return flows


def is_data(e: Ev, flows: dict) -> bool:
    if e.ptype == "ack":
        return False
    fl = flows.get(_key(e))
    if fl is None:
        return False
    return (not fl.fulltcp) or e.size > 40


def run_end_of(events: list[Ev]) -> float | None:
    """The run's end without a stop_s label: the largest time of any packet event line
    (ns-2 writes a wired trace in time order, so it is the last packet line's time)."""
    return max((e.time for e in events), default=None)


@dataclass
class _Facts:
    """What one flow's data packets did, per packet id (the facts every column is made of)."""
    first_sent: dict        # uid -> first time it left the source node
    first_recv: dict        # uid -> (time, line_no, size, seq) of its first `r` at the destination
    rx_events: list         # (time, line_no, size) of every `r` at the destination (duplicates too)
    drop_uids: list         # uid of every `d` event that is not overheard (one entry per event)
    overheard_uids: list = field(default_factory=list)   # uid of every overheard `d` event


def overheard_lines(events: list[Ev]) -> set:
    """Line numbers of the `d` events of LAN stations overhearing a packet (module docstring)."""
    lan_nodes = {e.to_node for e in events if e.event == "h"}
    received_across = {(e.pkt_id, e.from_node) for e in events if e.event == "r"}
    return {e.line_no for e in events
            if e.event == "d" and e.to_node in lan_nodes and (e.pkt_id, e.to_node) in received_across}


def _facts(events: list[Ev], flows: dict, k, overheard: set | None = None) -> _Facts:
    fl = flows[k]
    if overheard is None:
        overheard = overheard_lines(events)
    f = _Facts({}, {}, [], [])
    for e in events:
        if _key(e) != k or not is_data(e, flows):
            continue
        # sent_pkts: "any event whose from_node is the source node"
        if e.from_node == fl.src_node:
            if e.pkt_id not in f.first_sent or e.time < f.first_sent[e.pkt_id]:
                f.first_sent[e.pkt_id] = e.time
        # recv_pkts / rx_bytes: "`r` event whose to_node is the destination node"
        if e.event == "r" and e.to_node == fl.dst_node:
            f.rx_events.append((e.time, e.line_no, e.size))
            cur = f.first_recv.get(e.pkt_id)
            if cur is None or (e.time, e.line_no) < cur[:2]:
                f.first_recv[e.pkt_id] = (e.time, e.line_no, e.size, e.seq)
        # dropped_pkts: "`d` events of the flow's data packets, anywhere"
        if e.event == "d":
            if e.line_no in overheard:
                f.overheard_uids.append(e.pkt_id)
            else:
                f.drop_uids.append(e.pkt_id)
    return f


def _seq_key(uid: int, seq: int):
    """Goodput counts each seq once; a packet without a seq (ns-2 writes -1) once per id."""
    return ("pkt", uid) if seq < 0 else ("seq", seq)


def _rate_kbps(nbytes: int, seconds: float) -> float:
    return nbytes * 8 / 1000 / seconds


def _delay_columns(f: _Facts, uids) -> dict:
    """delay / jitter columns over the delivered packets among uids, in arrival order."""
    deliveries = sorted((f.first_recv[u][:2], u) for u in uids if u in f.first_recv)
    delays = [t - f.first_sent[u] for (t, _), u in deliveries if u in f.first_sent]
    jit = None
    if len(delays) >= 2:
        jit = sum(abs(delays[i] - delays[i - 1]) for i in range(1, len(delays))) / (len(delays) - 1)
    ms = [d * 1000 for d in delays]
    return dict(mean_delay_ms=mean(ms), p50_delay_ms=quantile(ms, 0.5),
                p95_delay_ms=quantile(ms, 0.95), p99_delay_ms=quantile(ms, 0.99),
                jitter_ms=None if jit is None else jit * 1000)


def _first_delivery_per_seq(f: _Facts) -> list:
    """(time, line_no, payload-less size) of the first delivery of each seq (arrival order)."""
    seen = set()
    out = []
    for uid, (t, line, size, seq) in sorted(f.first_recv.items(), key=lambda kv: kv[1][:2]):
        sk = _seq_key(uid, seq)
        if sk not in seen:
            seen.add(sk)
            out.append((t, line, size))
    return out


def flow_stats(events: list[Ev], flows: dict, run_end: float | None = None) -> dict:
    """Flow key -> dict of the contract's flow_stats columns (plus t_run_end).

    run_end: the run's `stop_s` label where it has one; None = run_end_of(events)."""
    if run_end is None:
        run_end = run_end_of(events)
    overheard = overheard_lines(events)
    out = {}
    for k, fl in flows.items():
        f = _facts(events, flows, k, overheard)
        sent = len(f.first_sent)
        recv = len(f.first_recv)
        drops = len(f.drop_uids)
        rx_bytes = sum(size for _, _, size in f.rx_events)
        payload = sum(max(size - fl.hdr_bytes, 0) for _, _, size in _first_delivery_per_seq(f))
        t_first_send = min(f.first_sent.values()) if f.first_sent else None
        t_last_recv = max(t for t, _, _, _ in f.first_recv.values()) if f.first_recv else None
        # throughput / goodput over the measurement window [first send, run end];
        # 0 when nothing arrived, NULL when no send was seen or the window is not positive
        if recv == 0:
            thr = good = 0.0
        elif t_first_send is None or run_end is None or run_end - t_first_send <= 0:
            thr = good = None
        else:
            thr = _rate_kbps(rx_bytes, run_end - t_first_send)
            good = _rate_kbps(payload, run_end - t_first_send)
        # active throughput: over [first send, last delivery] (FlowMonitor's)
        if recv == 0:
            active = 0.0
        elif t_first_send is None or t_last_recv - t_first_send <= 0:
            active = None
        else:
            active = _rate_kbps(rx_bytes, t_last_recv - t_first_send)
        # in flight: sent - recv - packets dropped and never delivered
        lost = {u for u in f.drop_uids if u not in f.first_recv}
        out[k] = dict(
            fid=fl.fid, ptype=fl.ptype, name=fl.name, src_node=fl.src_node, dst_node=fl.dst_node,
            sent_pkts=sent, recv_pkts=recv, dropped_pkts=drops, rx_bytes=rx_bytes,
            throughput_kbps=thr, active_throughput_kbps=active, goodput_kbps=good,
            in_flight_pkts=sent - recv - len(lost),
            **_delay_columns(f, f.first_recv),
            pdr=recv / sent if sent else None, drop_rate=drops / sent if sent else None,
            t_run_end=run_end, overheard_pkts=len(f.overheard_uids),
        )
    return out


def flow_stats_window(events: list[Ev], flows: dict, t0: float, t1: float) -> dict:
    """Flow key -> the flow_stats columns over [t0, t1) only (see the module docstring)."""
    overheard = overheard_lines(events)
    out = {}
    for k, fl in flows.items():
        f = _facts(events, flows, k, overheard)
        # packets first sent in [t0, t1): counts, delay, jitter, pdr, drop_rate, in flight
        uids = {u for u, t in f.first_sent.items() if t0 <= t < t1}
        sent = len(uids)
        recv = sum(1 for u in uids if u in f.first_recv)
        drops = sum(1 for u in f.drop_uids if u in uids)
        lost = {u for u in f.drop_uids if u in uids and u not in f.first_recv}
        # deliveries in [t0, t1): rx_bytes, throughput, goodput, active throughput
        rx_in = [(t, size) for t, _, size in f.rx_events if t0 <= t < t1]
        rx_bytes = sum(size for _, size in rx_in)
        payload = sum(max(size - fl.hdr_bytes, 0)
                      for t, _, size in _first_delivery_per_seq(f) if t0 <= t < t1)
        if t1 - t0 <= 0:
            thr = good = active = None
        elif not rx_in:
            thr = good = active = 0.0
        else:
            thr = _rate_kbps(rx_bytes, t1 - t0)
            good = _rate_kbps(payload, t1 - t0)
            start = max(t0, min(f.first_sent.values())) if f.first_sent else None
            end = max(t for t, _ in rx_in)
            active = None if start is None or end - start <= 0 else _rate_kbps(rx_bytes, end - start)
        out[k] = dict(
            fid=fl.fid, ptype=fl.ptype, name=fl.name, src_node=fl.src_node, dst_node=fl.dst_node,
            sent_pkts=sent, recv_pkts=recv, dropped_pkts=drops, rx_bytes=rx_bytes,
            throughput_kbps=thr, active_throughput_kbps=active, goodput_kbps=good,
            in_flight_pkts=sent - recv - len(lost),
            **_delay_columns(f, uids),
            pdr=recv / sent if sent else None, drop_rate=drops / sent if sent else None,
            t_run_end=t1,
            overheard_pkts=sum(1 for u in f.overheard_uids if u in uids),
        )
    return out


def fairness(stats: dict) -> dict:
    xs = [s["throughput_kbps"] for s in stats.values()
          if s["ptype"] == "tcp" and s["throughput_kbps"] is not None]
    n = len(xs)
    if n < 2:
        return dict(n_flows=n, jain_index=None, min_kbps=None, max_kbps=None, abs_diff_kbps=None)
    sq = sum(x * x for x in xs)
    return dict(n_flows=n, jain_index=sum(xs) ** 2 / (n * sq) if sq > 0 else None,
                min_kbps=min(xs), max_kbps=max(xs), abs_diff_kbps=max(xs) - min(xs))


def throughput_series(events: list[Ev], flows: dict, bin_s: float) -> dict:
    """(flow key, bin index) -> kbps, zero-filled from bin 0 to the bin of the run's last event."""
    last = max(e.time for e in events)
    nbins = math.floor(last / bin_s) + 1
    out = {}
    for k, fl in flows.items():
        sums = [0] * nbins
        for e in events:
            if _key(e) == k and is_data(e, flows) and e.event == "r" and e.to_node == fl.dst_node:
                sums[math.floor(e.time / bin_s)] += e.size
        for i, b in enumerate(sums):
            out[(k, i)] = b * 8 / 1000 / bin_s
    return out


def queue_delay(events: list[Ev]) -> dict:
    """(from_node, to_node) -> dict(pkts, mean_ms, p95_ms) over every packet with + and -."""
    enq: dict = {}
    deq: dict = {}
    for e in events:
        k = (e.from_node, e.to_node, e.pkt_id)
        if e.event == "+" and (k not in enq or e.time < enq[k]):
            enq[k] = e.time
        if e.event == "-" and (k not in deq or e.time < deq[k]):
            deq[k] = e.time
    per_link: dict = {}
    for k, t in deq.items():
        if k in enq:
            per_link.setdefault(k[:2], []).append((t - enq[k]) * 1000)
    return {link: dict(pkts=len(v), mean_ms=mean(v), p95_ms=quantile(v, 0.95))
            for link, v in per_link.items()}


def rtt(events: list[Ev], flows: dict) -> dict:
    """Flow key -> dict(samples, mean_ms, p95_ms) for every TCP flow (Karn's rule)."""
    out = {}
    for k, fl in flows.items():
        if fl.ptype != "tcp":
            continue
        uids: dict[int, set] = {}
        sent_at: dict[int, float] = {}
        size_of: dict[int, int] = {}
        acks = []  # (time, line, value)
        for e in events:
            # sends: events from the source with a seq (a nam `h` line carries seq -1)
            if _key(e) == k and is_data(e, flows) and e.from_node == fl.src_node and e.seq >= 0:
                uids.setdefault(e.seq, set()).add(e.pkt_id)
                if e.seq not in sent_at or e.time < sent_at[e.seq]:
                    sent_at[e.seq] = e.time
                size_of[e.seq] = e.size
            if (e.event == "r" and e.ptype == "ack" and e.to_node == fl.src_node
                    and e.fid == fl.fid
                    and (e.src_node, e.src_port) == (fl.dst_node, fl.dst_port)
                    and (e.dst_node, e.dst_port) == (fl.src_node, fl.src_port)):
                value = e.tcp_ackno if fl.fulltcp else e.seq
                if value is not None:
                    acks.append((e.time, e.line_no, value))
        acks.sort()
        samples = []
        for s, t_send in sent_at.items():
            if len(uids[s]) > 1:
                continue  # Karn: sent more than once
            need = s + (size_of[s] - 40) if fl.fulltcp else s
            for t_ack, _, value in acks:
                if value >= need:
                    samples.append((t_ack - t_send) * 1000)
                    break
        out[k] = dict(samples=len(samples), mean_ms=mean(samples), p95_ms=quantile(samples, 0.95))
    return out


def all_metrics(text: str, flow_names: dict[int, str] | None = None, bin_s: float = 0.5,
                run_end: float | None = None, window: tuple[float, float] | None = None) -> dict:
    """Every metric of one trace. run_end: the run's stop_s label, if it has one.
    window: (t0, t1) adds "flow_stats_window"."""
    events = parse_trace(text)
    flows = find_flows(events, flow_names)
    stats = flow_stats(events, flows, run_end)
    out = dict(events=events, flows=flows, flow_stats=stats, fairness=fairness(stats),
               throughput_series=throughput_series(events, flows, bin_s),
               queue_delay=queue_delay(events), rtt=rtt(events, flows))
    if window is not None:
        out["flow_stats_window"] = flow_stats_window(events, flows, *window)
    return out
