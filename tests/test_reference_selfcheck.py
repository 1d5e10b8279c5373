"""The reference implementations against numbers worked out by hand.

tests/reference_metrics.py and tests/reference_wireless.py are the second, independent
reading of the contract that the SQL views are compared with; here they are checked on tiny
hand-written traces whose every expected number is computed in the comments (kbps = bytes x
8 / 1000 / seconds). Only the reference modules are imported: no tracekit, no SQL.

Wired line: event time from to ptype size flags fid src dst seq pkt_id.
"""
from __future__ import annotations

import pytest

import reference_metrics as rm
import reference_wireless as rw


def approx(v):
    return None if v is None else pytest.approx(v, rel=1e-9, abs=1e-12)


def check(got: dict, expected: dict) -> None:
    for col, v in expected.items():
        if isinstance(v, float) or v is None:
            assert got[col] == approx(v), f"{col}: {got[col]} != {v}"
        else:
            assert got[col] == v, f"{col}: {got[col]} != {v}"


def stats_of(text: str, **kw) -> dict:
    return rm.all_metrics(text, **kw)


# ---------------------------------------------------------------------------------------
# A: a flow starved early. Two one-way TCP flows into node 1: fid 1 0.0 -> 1.0 over 0 -> 1
# delivers its SYN and two segments by 0.4 s and then nothing; fid 2 2.0 -> 1.1 over 2 -> 1
# keeps sending until the run's last line at 10.0 s. Both start at 0.0.
#   fid 1: rx = 40 + 1040 + 1040 = 2120 B = 16.96 kbit
#          throughput (window 0.0 -> 10.0)  = 16.96 / 10  = 1.696 kbps
#          active (0.0 -> last delivery 0.4) = 16.96 / 0.4 = 42.4 kbps   (the old number)
#          goodput: payload 0 (SYN) + 1000 + 1000 = 16 kbit / 10 = 1.6 kbps
#          delays 0.1, 0.1, 0.2 s: mean 133.33 ms, jitter (0 + 0.1) / 2 = 50 ms
#   fid 2: rx = 40 + 3 x 1040 = 3160 B = 25.28 kbit, last delivery 10.0 = the run's end:
#          throughput = active = 25.28 / 10 = 2.528 kbps; goodput 3000 B = 24 / 10 = 2.4
#   fairness over the window: x = 1.696, y = 2.528 (fid 1 is the starved one, not the
#   fastest, as the old active numbers 42.4 vs 2.528 claimed)
#   with a stop_s label of 20 s the window doubles: 0.848 and 1.264 kbps, active unchanged.
A = """\
+ 0.0 0 1 tcp 40 ------- 1 0.0 1.0 0 0
+ 0.0 2 1 tcp 40 ------- 2 2.0 1.1 0 3
+ 0.1 0 1 tcp 1040 ------- 1 0.0 1.0 1 1
r 0.1 0 1 tcp 40 ------- 1 0.0 1.0 0 0
r 0.1 2 1 tcp 40 ------- 2 2.0 1.1 0 3
+ 0.2 0 1 tcp 1040 ------- 1 0.0 1.0 2 2
r 0.2 0 1 tcp 1040 ------- 1 0.0 1.0 1 1
r 0.4 0 1 tcp 1040 ------- 1 0.0 1.0 2 2
+ 5.0 2 1 tcp 1040 ------- 2 2.0 1.1 1 4
r 5.1 2 1 tcp 1040 ------- 2 2.0 1.1 1 4
+ 9.0 2 1 tcp 1040 ------- 2 2.0 1.1 2 5
+ 9.5 2 1 tcp 1040 ------- 2 2.0 1.1 3 6
r 9.8 2 1 tcp 1040 ------- 2 2.0 1.1 3 6
r 10.0 2 1 tcp 1040 ------- 2 2.0 1.1 2 5
"""
A1, A2 = (1, 0, 0, 1, 0), (2, 2, 0, 1, 1)


def test_a_starved_flow_window_vs_active():
    m = stats_of(A)
    fs = m["flow_stats"]
    assert set(fs) == {A1, A2}
    check(fs[A1], dict(sent_pkts=3, recv_pkts=3, dropped_pkts=0, in_flight_pkts=0,
                       rx_bytes=2120, t_run_end=10.0,
                       throughput_kbps=1.696, active_throughput_kbps=42.4, goodput_kbps=1.6,
                       mean_delay_ms=400 / 3, jitter_ms=50.0, pdr=1.0, drop_rate=0.0))
    check(fs[A2], dict(sent_pkts=4, recv_pkts=4, rx_bytes=3160, t_run_end=10.0,
                       throughput_kbps=2.528, active_throughput_kbps=2.528, goodput_kbps=2.4))
    x, y = 1.696, 2.528
    check(m["fairness"], dict(n_flows=2, jain_index=(x + y) ** 2 / (2 * (x * x + y * y)),
                              min_kbps=x, max_kbps=y, abs_diff_kbps=y - x))
    assert "flow_stats_window" not in m


def test_a_stop_s_label_sets_the_run_end():
    fs = stats_of(A, run_end=20.0)["flow_stats"]
    check(fs[A1], dict(t_run_end=20.0, throughput_kbps=0.848, active_throughput_kbps=42.4,
                       goodput_kbps=0.8))
    check(fs[A2], dict(t_run_end=20.0, throughput_kbps=1.264, active_throughput_kbps=2.528,
                       goodput_kbps=1.2))
    # a stop time before the flow's first send: the window is not positive -> NULL
    fs = stats_of(A, run_end=0.0)["flow_stats"]
    check(fs[A1], dict(throughput_kbps=None, goodput_kbps=None, active_throughput_kbps=42.4))


# ---------------------------------------------------------------------------------------
# B: packets in flight at the end. One TCP flow 0.0 -> 1.0 over the link 0 -> 1.
#   uid 0 SYN  seq 0  + 1.0  r 1.1
#   uid 1      seq 1  + 1.2  d 1.2          dropped, never delivered
#   uid 2      seq 2  + 1.3  r 1.5
#   uid 3      seq 1  + 1.6  r 1.8          the retransmission
#   uid 4      seq 3  + 1.9  - 2.4          on the wire when the trace ends
#   uid 5      seq 4  + 1.95                still queued when the trace ends
#   uid 6      seq 2  + 2.0  r 2.2          a spurious retransmission: seq 2 again
#   then a `v` annotation at 3.0: not a packet line, so the run ends at 2.4 (uid 4's `-`).
# sent 7 (uids 0-6), recv 4 (0, 2, 3, 6), dropped 1 (uid 1, never delivered):
#   in_flight = 7 - 4 - 1 = 2 (uids 4 and 5)
# rx = 40 + 3 x 1040 = 3160 B = 25.28 kbit; window 1.0 -> 2.4 = 1.4 s: 18.0571 kbps;
#   active 1.0 -> 2.2 = 1.2 s: 21.0667 kbps
# goodput: first deliveries of seqs 0 (0 B), 2 (1000), 1 (1000); seq 2 again is not counted:
#   16 kbit / 1.4 = 11.4286 kbps
# delays 0.1, 0.2, 0.2, 0.2: mean 175 ms, p50 200 ms, jitter (0.1 + 0 + 0) / 3 = 33.33 ms
# with stop_s = 5.0: window 4.0 s: 25.28 / 4 = 6.32 kbps, goodput 16 / 4 = 4.0
B = """\
+ 1.0 0 1 tcp 40 ------- 1 0.0 1.0 0 0
r 1.1 0 1 tcp 40 ------- 1 0.0 1.0 0 0
+ 1.2 0 1 tcp 1040 ------- 1 0.0 1.0 1 1
d 1.2 0 1 tcp 1040 ------- 1 0.0 1.0 1 1
+ 1.3 0 1 tcp 1040 ------- 1 0.0 1.0 2 2
r 1.5 0 1 tcp 1040 ------- 1 0.0 1.0 2 2
+ 1.6 0 1 tcp 1040 ------- 1 0.0 1.0 1 3
r 1.8 0 1 tcp 1040 ------- 1 0.0 1.0 1 3
+ 1.9 0 1 tcp 1040 ------- 1 0.0 1.0 3 4
+ 1.95 0 1 tcp 1040 ------- 1 0.0 1.0 4 5
+ 2.0 0 1 tcp 1040 ------- 1 0.0 1.0 2 6
r 2.2 0 1 tcp 1040 ------- 1 0.0 1.0 2 6
- 2.4 0 1 tcp 1040 ------- 1 0.0 1.0 3 4
v 3.0 eval {set sim_annotation {done}}
"""
B1 = (1, 0, 0, 1, 0)


def test_b_packets_in_flight_at_the_end():
    (fs,) = stats_of(B)["flow_stats"].values()
    check(fs, dict(sent_pkts=7, recv_pkts=4, dropped_pkts=1, in_flight_pkts=2,
                   rx_bytes=3160, t_run_end=2.4,
                   throughput_kbps=25.28 / 1.4, active_throughput_kbps=25.28 / 1.2,
                   goodput_kbps=16 / 1.4,
                   mean_delay_ms=175.0, p50_delay_ms=200.0, jitter_ms=0.1 / 3 * 1000,
                   pdr=4 / 7, drop_rate=1 / 7))
    (fs,) = stats_of(B, run_end=5.0)["flow_stats"].values()
    check(fs, dict(t_run_end=5.0, throughput_kbps=6.32, goodput_kbps=4.0,
                   active_throughput_kbps=25.28 / 1.2, in_flight_pkts=2))


# ---------------------------------------------------------------------------------------
# C: ping. Echo requests 0.0 -> 1.0 and replies 1.0 -> 0.0 (ptype ping, 64 B, seq -1 on
# every packet, fid 0): two flows. Request uid 4 is dropped at 2.0; the others are answered.
# (The lines of ns-2.35's Agent/Ping, as a 2-node run writes them: `+ 0.1 0 1 ping 64 -------
# 0 0.0 1.0 -1 0`, the reply `+ 0.110512 1 0 ping 64 ------- 0 1.0 0.0 -1 1`.)
#   requests: sent 4 (uids 0, 2, 4, 5), recv 3, dropped 1, in flight 0; rx 192 B = 1.536 kbit
#     the run ends at 3.2 (the last line); window 0.0 -> 3.2: 1.536 / 3.2 = 0.48 kbps
#     goodput: no seq, so each delivered packet counts once: 192 B (not 64 B) = 0.48 kbps
#     active 0.0 -> 3.1: 1.536 / 3.1 kbps; delays 0.1 each: 100 ms, jitter 0
#   replies: sent 3 (1, 3, 6), recv 3; rx 192 B; window 0.1 -> 3.2 = 3.1 s:
#     throughput = goodput = active = 1.536 / 3.1 kbps
C = """\
+ 0.0 0 1 ping 64 ------- 0 0.0 1.0 -1 0
r 0.1 0 1 ping 64 ------- 0 0.0 1.0 -1 0
+ 0.1 1 0 ping 64 ------- 0 1.0 0.0 -1 1
r 0.2 1 0 ping 64 ------- 0 1.0 0.0 -1 1
+ 1.0 0 1 ping 64 ------- 0 0.0 1.0 -1 2
r 1.1 0 1 ping 64 ------- 0 0.0 1.0 -1 2
+ 1.1 1 0 ping 64 ------- 0 1.0 0.0 -1 3
r 1.2 1 0 ping 64 ------- 0 1.0 0.0 -1 3
+ 2.0 0 1 ping 64 ------- 0 0.0 1.0 -1 4
d 2.0 0 1 ping 64 ------- 0 0.0 1.0 -1 4
+ 3.0 0 1 ping 64 ------- 0 0.0 1.0 -1 5
r 3.1 0 1 ping 64 ------- 0 0.0 1.0 -1 5
+ 3.1 1 0 ping 64 ------- 0 1.0 0.0 -1 6
r 3.2 1 0 ping 64 ------- 0 1.0 0.0 -1 6
"""


def test_c_ping_without_sequence_numbers():
    m = stats_of(C)
    fs = m["flow_stats"]
    req, rep = fs[(0, 0, 0, 1, 0)], fs[(0, 1, 0, 0, 0)]
    check(req, dict(ptype="ping", sent_pkts=4, recv_pkts=3, dropped_pkts=1, in_flight_pkts=0,
                    rx_bytes=192, t_run_end=3.2, throughput_kbps=0.48, goodput_kbps=0.48,
                    active_throughput_kbps=1.536 / 3.1, mean_delay_ms=100.0, jitter_ms=0.0,
                    pdr=0.75, drop_rate=0.25))
    check(rep, dict(sent_pkts=3, recv_pkts=3, in_flight_pkts=0, rx_bytes=192,
                    throughput_kbps=1.536 / 3.1, goodput_kbps=1.536 / 3.1,
                    active_throughput_kbps=1.536 / 3.1))
    # fairness is over tcp flows only
    assert m["fairness"]["n_flows"] == 0 and m["fairness"]["jain_index"] is None


# ---------------------------------------------------------------------------------------
# D: a window [1.0, 2.0). One TCP flow 0.0 -> 1.0 over 0 -> 1 (SYN at seq 0: 40-byte header).
#   uid 0 SYN  seq 0  + 0.5  r 0.6     before the window
#   uid 1      seq 1  + 0.8  r 0.95    before the window
#   uid 2      seq 2  + 0.9  r 1.05    sent before, delivered in the window
#   uid 3      seq 3  + 1.0  d 1.0     sent at t0 (in), dropped
#   uid 4      seq 1  + 1.1  r 1.2     spurious retransmission: seq 1 was first delivered at 0.95
#   uid 5      seq 3  + 1.3  r 1.5     retransmission of seq 3
#   uid 6      seq 4  + 1.8  r 2.1     sent in, delivered after the window
#   uid 7      seq 5  + 1.9  r 2.0     sent in, delivered at t1 (outside: [t0, t1) is open at t1)
#   uid 8      seq 6  + 2.0  r 2.2     sent at t1: outside
# packets first sent in [1.0, 2.0): uids 3, 4, 5, 6, 7 -> sent 5
#   recv (delivered at any time) 4, 5, 6, 7 -> 4; dropped 1 (uid 3); in flight 5 - 4 - 1 = 0
#   pdr 0.8, drop_rate 0.2
#   delays in arrival order: uid 4 0.1 (1.2), uid 5 0.2 (1.5), uid 7 0.1 (2.0), uid 6 0.3 (2.1)
#     mean 175 ms; sorted 0.1 0.1 0.2 0.3: p50 = 0.15 s = 150 ms; jitter (0.1+0.1+0.2)/3
# deliveries in [1.0, 2.0): 1.05, 1.2, 1.5 -> rx 3 x 1040 = 3120 B = 24.96 kbit / 1 s
#   = 24.96 kbps. goodput: first deliveries per seq: 0@0.6 1@0.95 2@1.05 3@1.5 5@2.0 4@2.1
#   6@2.2; in the window seqs 2 and 3: 2000 B = 16 kbps
#   active: max(t0, first send 0.5) = 1.0 -> last delivery in the window 1.5:
#   24.96 / 0.5 = 49.92 kbps
# whole run (end 2.2): sent 9, recv 8 (all but uid 3), dropped 1, in flight 0;
#   rx 40 + 7 x 1040 = 7320 B = 58.56 kbit over 2.2 - 0.5 = 1.7 s
D = """\
+ 0.5 0 1 tcp 40 ------- 1 0.0 1.0 0 0
r 0.6 0 1 tcp 40 ------- 1 0.0 1.0 0 0
+ 0.8 0 1 tcp 1040 ------- 1 0.0 1.0 1 1
+ 0.9 0 1 tcp 1040 ------- 1 0.0 1.0 2 2
r 0.95 0 1 tcp 1040 ------- 1 0.0 1.0 1 1
+ 1.0 0 1 tcp 1040 ------- 1 0.0 1.0 3 3
d 1.0 0 1 tcp 1040 ------- 1 0.0 1.0 3 3
r 1.05 0 1 tcp 1040 ------- 1 0.0 1.0 2 2
+ 1.1 0 1 tcp 1040 ------- 1 0.0 1.0 1 4
r 1.2 0 1 tcp 1040 ------- 1 0.0 1.0 1 4
+ 1.3 0 1 tcp 1040 ------- 1 0.0 1.0 3 5
r 1.5 0 1 tcp 1040 ------- 1 0.0 1.0 3 5
+ 1.8 0 1 tcp 1040 ------- 1 0.0 1.0 4 6
+ 1.9 0 1 tcp 1040 ------- 1 0.0 1.0 5 7
+ 2.0 0 1 tcp 1040 ------- 1 0.0 1.0 6 8
r 2.0 0 1 tcp 1040 ------- 1 0.0 1.0 5 7
r 2.1 0 1 tcp 1040 ------- 1 0.0 1.0 4 6
r 2.2 0 1 tcp 1040 ------- 1 0.0 1.0 6 8
"""
D1 = (1, 0, 0, 1, 0)


def test_d_window():
    m = stats_of(D, window=(1.0, 2.0))
    w = m["flow_stats_window"][D1]
    check(w, dict(sent_pkts=5, recv_pkts=4, dropped_pkts=1, in_flight_pkts=0,
                  pdr=0.8, drop_rate=0.2,
                  mean_delay_ms=175.0, p50_delay_ms=150.0, jitter_ms=0.4 / 3 * 1000,
                  rx_bytes=3120, throughput_kbps=24.96, goodput_kbps=16.0,
                  active_throughput_kbps=49.92, t_run_end=2.0))
    assert set(w) == set(m["flow_stats"][D1])            # the same columns as flow_stats
    check(m["flow_stats"][D1], dict(sent_pkts=9, recv_pkts=8, dropped_pkts=1, in_flight_pkts=0,
                                    rx_bytes=7320, throughput_kbps=58.56 / 1.7, t_run_end=2.2))


def test_d_empty_and_degenerate_windows():
    ev = rm.parse_trace(D)
    flows = rm.find_flows(ev)
    # nothing sent or delivered in [3, 4): counts 0, rates 0.0, ratios and delays NULL
    check(rm.flow_stats_window(ev, flows, 3.0, 4.0)[D1], dict(
        sent_pkts=0, recv_pkts=0, dropped_pkts=0, in_flight_pkts=0, rx_bytes=0,
        throughput_kbps=0.0, goodput_kbps=0.0, active_throughput_kbps=0.0,
        pdr=None, drop_rate=None, mean_delay_ms=None, jitter_ms=None))
    # an interval that is not positive: the rates are NULL
    check(rm.flow_stats_window(ev, flows, 2.0, 2.0)[D1], dict(
        sent_pkts=0, throughput_kbps=None, goodput_kbps=None, active_throughput_kbps=None))
    # [0, 0.96): sent uids 0, 1, 2 (recv all three); deliveries 0.6 (40 B) and 0.95 (1040 B)
    #   = 1080 B = 8.64 kbit / 0.96 s = 9 kbps; goodput seq 1 only: 1000 B = 8 / 0.96;
    #   active: 0.5 -> 0.95: 8.64 / 0.45 = 19.2 kbps
    check(rm.flow_stats_window(ev, flows, 0.0, 0.96)[D1], dict(
        sent_pkts=3, recv_pkts=3, rx_bytes=1080, throughput_kbps=9.0, goodput_kbps=8 / 0.96,
        active_throughput_kbps=19.2, pdr=1.0))


# ---------------------------------------------------------------------------------------
# W: wireless, old CMU format. CBR 0:0 -> 1:0 (512 B) and CBR 1:1 -> 0:1 (512 B), one hop.
#   flow 0 -> 1: uid 1 s 1.00 r 1.01; uid 2 s 1.50, dropped at node 0's IFQ; uid 3 s 2.00
#     r 2.02; uid 4 s 2.50, no further line (in flight / lost without a drop line).
#     sent 4, recv 2, dropped 1, in_flight 4 - 2 - 1 = 1; rx 2 x 512 = 1024 B = 8.192 kbit
#     (the `r` AGT size 532 is not used). An RTS line at 3.0 is the last event line, so the
#     run ends at 3.0 (the M line at 4.0 is not an event line): window 1.0 -> 3.0:
#     8.192 / 2 = 4.096 kbps, goodput the same (cbr: whole size, seqs 0 and 2);
#     active 1.0 -> 2.02: 8.192 / 1.02
#   flow 1 -> 0: uid 5 s 0.50 r 0.51: rx 512 B = 4.096 kbit; window 0.5 -> 3.0: 1.6384 kbps;
#     active 4.096 / 0.01 = 409.6 kbps
#   run: rx 1536 B = 12.288 kbit over first send 0.5 -> 3.0: 4.9152 kbps
#   with stop_s 5.0: flow 0 -> 1 8.192 / 4 = 2.048; flow 1 -> 0 4.096 / 4.5; run 12.288 / 4.5
W = """\
s 0.500000000 _1_ AGT  --- 5 cbr 512 [0 0 0 0] ------- [1:1 0:1 32 0] [0] 0 0
r 0.510000000 _0_ AGT  --- 5 cbr 532 [13a 0 1 800] ------- [1:1 0:1 32 0] [0] 1 0
s 1.000000000 _0_ AGT  --- 1 cbr 512 [0 0 0 0] ------- [0:0 1:0 32 0] [0] 0 0
r 1.010000000 _1_ AGT  --- 1 cbr 532 [13a 1 0 800] ------- [0:0 1:0 32 1] [0] 1 0
s 1.500000000 _0_ AGT  --- 2 cbr 512 [0 0 0 0] ------- [0:0 1:0 32 0] [1] 0 0
D 1.500100000 _0_ IFQ  IFQ 2 cbr 532 [0 0 0 0] ------- [0:0 1:0 32 1] [1] 0 0
s 2.000000000 _0_ AGT  --- 3 cbr 512 [0 0 0 0] ------- [0:0 1:0 32 0] [2] 0 0
r 2.020000000 _1_ AGT  --- 3 cbr 532 [13a 1 0 800] ------- [0:0 1:0 32 1] [2] 1 0
s 2.500000000 _0_ AGT  --- 4 cbr 512 [0 0 0 0] ------- [0:0 1:0 32 0] [3] 0 0
s 3.000000000 _0_ MAC  --- 0 RTS 44 [52e 1 0 0]
M 4.00000 1 (200.00, 0.00, 0.00), (300.00, 0.00), 5.00
"""
W01, W10 = (None, 0, 0, 1, 0), (None, 1, 1, 0, 1)


def test_w_wireless_window_in_flight_and_run():
    res = rw.reference_text(W)
    f = res["flows"]
    assert set(f) == {W01, W10}
    check(f[W01], dict(sent_pkts=4, recv_pkts=2, dropped_pkts=1, in_flight_pkts=1,
                       rx_bytes=1024, throughput_kbps=4.096, goodput_kbps=4.096,
                       active_throughput_kbps=8.192 / 1.02, t_first_send=1.0, t_last_recv=2.02))
    check(f[W10], dict(sent_pkts=1, recv_pkts=1, in_flight_pkts=0, rx_bytes=512,
                       throughput_kbps=1.6384, goodput_kbps=1.6384,
                       active_throughput_kbps=409.6))
    check(res["run"], dict(n_flows=2, sent_pkts=5, recv_pkts=3, rx_bytes=1536,
                           throughput_kbps=4.9152))
    res = rw.reference_text(W, run_end=5.0)
    check(res["flows"][W01], dict(throughput_kbps=2.048, goodput_kbps=2.048,
                                  active_throughput_kbps=8.192 / 1.02))
    check(res["flows"][W10], dict(throughput_kbps=4.096 / 4.5))
    check(res["run"], dict(throughput_kbps=12.288 / 4.5))
