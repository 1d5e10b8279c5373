"""A plain, line-by-line implementation of the wired-trace metric definitions in CONTRACT.md.

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


def flow_stats(events: list[Ev], flows: dict) -> dict:
    """Flow key -> dict of the contract's flow_stats columns."""
    out = {}
    for k, fl in flows.items():
        evs = [e for e in events if _key(e) == k and is_data(e, flows)]
        first_sent: dict[int, float] = {}
        first_recv: dict[int, tuple[float, int, int, int]] = {}  # uid -> (time, line, size, seq)
        rx_bytes = 0
        drops = 0
        for e in evs:
            if e.from_node == fl.src_node:
                if e.pkt_id not in first_sent or e.time < first_sent[e.pkt_id]:
                    first_sent[e.pkt_id] = e.time
            if e.event == "r" and e.to_node == fl.dst_node:
                rx_bytes += e.size
                cur = first_recv.get(e.pkt_id)
                if cur is None or (e.time, e.line_no) < cur[:2]:
                    first_recv[e.pkt_id] = (e.time, e.line_no, e.size, e.seq)
            if e.event == "d":
                drops += 1
        sent = len(first_sent)
        recv = len(first_recv)
        # deliveries in arrival order
        deliveries = sorted(first_recv.items(), key=lambda kv: kv[1][:2])
        delays = [t - first_sent[uid] for uid, (t, _, _, _) in deliveries if uid in first_sent]
        seen_seq = set()
        payload = 0
        for uid, (t, line, size, seq) in deliveries:
            if seq not in seen_seq:
                seen_seq.add(seq)
                payload += max(size - fl.hdr_bytes, 0)
        t0 = min(first_sent.values()) if first_sent else None
        t1 = max(t for t, _, _, _ in first_recv.values()) if first_recv else None
        if recv == 0:
            thr = good = 0.0
        elif t0 is None or t1 - t0 <= 0:
            thr = good = None
        else:
            thr = rx_bytes * 8 / 1000 / (t1 - t0)
            good = payload * 8 / 1000 / (t1 - t0)
        jit = None
        if len(delays) >= 2:
            jit = sum(abs(delays[i] - delays[i - 1]) for i in range(1, len(delays))) / (len(delays) - 1)
        ms = [d * 1000 for d in delays]
        out[k] = dict(
            fid=fl.fid, ptype=fl.ptype, name=fl.name, src_node=fl.src_node, dst_node=fl.dst_node,
            sent_pkts=sent, recv_pkts=recv, dropped_pkts=drops, rx_bytes=rx_bytes,
            throughput_kbps=thr, goodput_kbps=good,
            mean_delay_ms=mean(ms), p50_delay_ms=quantile(ms, 0.5),
            p95_delay_ms=quantile(ms, 0.95), p99_delay_ms=quantile(ms, 0.99),
            jitter_ms=None if jit is None else jit * 1000,
            pdr=recv / sent if sent else None, drop_rate=drops / sent if sent else None,
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
            if _key(e) == k and is_data(e, flows) and e.from_node == fl.src_node:
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


def all_metrics(text: str, flow_names: dict[int, str] | None = None, bin_s: float = 0.5) -> dict:
    events = parse_trace(text)
    flows = find_flows(events, flow_names)
    stats = flow_stats(events, flows)
    return dict(events=events, flows=flows, flow_stats=stats, fairness=fairness(stats),
                throughput_series=throughput_series(events, flows, bin_s),
                queue_delay=queue_delay(events), rtt=rtt(events, flows))
