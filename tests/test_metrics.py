"""The metric views (sql/flows.sql ... sql/replication_stats.sql) against numbers computed
independently: by hand on tiny traces (the arithmetic is in the comments), and by
tests/reference_metrics.py, a line-by-line Python reading of docs/contract.md, on real ns-2 runs
of tests/tcl/metrics_*.tcl. Never against the views' own output captured once."""
from __future__ import annotations

import math
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import reference_metrics as ref
from tracekit.ingest.pipeline import ingest_paths
from tracekit.db.query import connect, sql_files

TCL = Path(__file__).resolve().parent / "tcl"
NS = shutil.which("ns") or "/usr/bin/ns"
REL = 1e-9

needs_ns = pytest.mark.skipif(not os.access(NS, os.X_OK), reason="ns-2 (/usr/bin/ns) is not installed")


def rows(con, sql: str, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def by_flow(con, view: str, run_id: str) -> dict:
    """Rows of a per-flow view for one run, keyed (fid, src_node, src_port, dst_node, dst_port)."""
    out = {}
    for r in rows(con, f"SELECT * FROM {view} WHERE run_id = ?", [run_id]):
        out[(r["fid"], r["src_node"], r["src_port"], r["dst_node"], r["dst_port"])] = r
    return out


def ingest_text(data: Path, name: str, text: str, **kw) -> str:
    path = data.parent / f"{name}.tr"
    path.write_text(text)
    (res,) = ingest_paths(data, [path], **kw)
    assert res.status == "added", res.message
    return res.run_id


def approx(v):
    return None if v is None else pytest.approx(v, rel=REL, abs=1e-12)


# ---------------------------------------------------------------------------------------
# Hand-written traces. Times are chosen so that every number below is simple arithmetic.

# T1: one-way TCP (Reno) 0.0 -> 2.0 over 0 -> 1 -> 2: the 40-byte SYN, a drop, a
# retransmission under a new packet id, a spurious retransmission delivered twice, a segment
# still in flight at the end. ACKs come back 2 -> 1 -> 0 (only the lines that matter).
T1 = """\
+ 0.1 0 1 tcp 40 ------- 1 0.0 2.0 0 0
- 0.1 0 1 tcp 40 ------- 1 0.0 2.0 0 0
r 0.11 0 1 tcp 40 ------- 1 0.0 2.0 0 0
+ 0.11 1 2 tcp 40 ------- 1 0.0 2.0 0 0
- 0.11 1 2 tcp 40 ------- 1 0.0 2.0 0 0
r 0.12 1 2 tcp 40 ------- 1 0.0 2.0 0 0
+ 0.12 2 1 ack 40 ------- 1 2.0 0.0 0 1
r 0.14 1 0 ack 40 ------- 1 2.0 0.0 0 1
+ 0.14 0 1 tcp 1040 ------- 1 0.0 2.0 1 2
+ 0.14 0 1 tcp 1040 ------- 1 0.0 2.0 2 3
- 0.14 0 1 tcp 1040 ------- 1 0.0 2.0 1 2
- 0.15 0 1 tcp 1040 ------- 1 0.0 2.0 2 3
r 0.16 0 1 tcp 1040 ------- 1 0.0 2.0 1 2
+ 0.16 1 2 tcp 1040 ------- 1 0.0 2.0 1 2
d 0.16 1 2 tcp 1040 ------- 1 0.0 2.0 1 2
r 0.17 0 1 tcp 1040 ------- 1 0.0 2.0 2 3
+ 0.17 1 2 tcp 1040 ------- 1 0.0 2.0 2 3
- 0.17 1 2 tcp 1040 ------- 1 0.0 2.0 2 3
r 0.19 1 2 tcp 1040 ------- 1 0.0 2.0 2 3
+ 0.19 2 1 ack 40 ------- 1 2.0 0.0 0 4
r 0.21 1 0 ack 40 ------- 1 2.0 0.0 0 4
+ 0.3 0 1 tcp 1040 ------- 1 0.0 2.0 1 5
- 0.3 0 1 tcp 1040 ------- 1 0.0 2.0 1 5
r 0.32 0 1 tcp 1040 ------- 1 0.0 2.0 1 5
+ 0.32 1 2 tcp 1040 ------- 1 0.0 2.0 1 5
- 0.32 1 2 tcp 1040 ------- 1 0.0 2.0 1 5
r 0.34 1 2 tcp 1040 ------- 1 0.0 2.0 1 5
+ 0.34 2 1 ack 40 ------- 1 2.0 0.0 2 6
r 0.36 1 0 ack 40 ------- 1 2.0 0.0 2 6
+ 0.36 0 1 tcp 1040 ------- 1 0.0 2.0 3 7
- 0.36 0 1 tcp 1040 ------- 1 0.0 2.0 3 7
+ 0.37 0 1 tcp 1040 ------- 1 0.0 2.0 2 8
- 0.37 0 1 tcp 1040 ------- 1 0.0 2.0 2 8
r 0.39 0 1 tcp 1040 ------- 1 0.0 2.0 2 8
+ 0.39 1 2 tcp 1040 ------- 1 0.0 2.0 2 8
- 0.39 1 2 tcp 1040 ------- 1 0.0 2.0 2 8
r 0.41 1 2 tcp 1040 ------- 1 0.0 2.0 2 8
"""

# T2: two CBR flows that both keep fid 0: A 1.0 -> 3.0 (size 200, path 1 -> 2 -> 3) and
# B 0.0 -> 3.1 (size 300, path 0 -> 2 -> 3). B's packet 1 is dropped by a full queue at
# 2 -> 3 (`+` and `d`, same time), its packet 3 by a loss model at the head of 0 -> 2 (a bare
# `d` at the source, no `+`); B's last packet is a 16-field line; A's packet 4 is in flight.
T2 = """\
+ 1 1 2 cbr 200 ------- 0 1.0 3.0 0 0
- 1 1 2 cbr 200 ------- 0 1.0 3.0 0 0
+ 1 0 2 cbr 300 ------- 0 0.0 3.1 0 1
- 1 0 2 cbr 300 ------- 0 0.0 3.1 0 1
r 1.01 1 2 cbr 200 ------- 0 1.0 3.0 0 0
+ 1.01 2 3 cbr 200 ------- 0 1.0 3.0 0 0
- 1.01 2 3 cbr 200 ------- 0 1.0 3.0 0 0
r 1.02 0 2 cbr 300 ------- 0 0.0 3.1 0 1
+ 1.02 2 3 cbr 300 ------- 0 0.0 3.1 0 1
d 1.02 2 3 cbr 300 ------- 0 0.0 3.1 0 1
r 1.03 2 3 cbr 200 ------- 0 1.0 3.0 0 0
d 1.05 0 2 cbr 300 ------- 0 0.0 3.1 1 3
+ 1.1 1 2 cbr 200 ------- 0 1.0 3.0 1 2
- 1.1 1 2 cbr 200 ------- 0 1.0 3.0 1 2
r 1.11 1 2 cbr 200 ------- 0 1.0 3.0 1 2
+ 1.11 2 3 cbr 200 ------- 0 1.0 3.0 1 2
- 1.12 2 3 cbr 200 ------- 0 1.0 3.0 1 2
r 1.14 2 3 cbr 200 ------- 0 1.0 3.0 1 2
+ 1.15 0 2 cbr 300 ------- 0 0.0 3.1 2 5 0 0x0 0 0
- 1.15 0 2 cbr 300 ------- 0 0.0 3.1 2 5
r 1.17 0 2 cbr 300 ------- 0 0.0 3.1 2 5
+ 1.17 2 3 cbr 300 ------- 0 0.0 3.1 2 5
- 1.17 2 3 cbr 300 ------- 0 0.0 3.1 2 5
r 1.19 2 3 cbr 300 ------- 0 0.0 3.1 2 5
+ 1.2 1 2 cbr 200 ------- 0 1.0 3.0 2 4
- 1.2 1 2 cbr 200 ------- 0 1.0 3.0 2 4
"""

# T3: a FullTcp connection 0.0 -> 1.0 on 16-field lines (SYN, SYN+ACK typed `ack`, the
# handshake's pure ACK typed `tcp` at seq 1, two 536-byte segments at byte seqs 1 and 537,
# an ACK with ackno 1073, a FIN) and an unnamed Vegas flow 2.0 -> 1.1 on 12-field lines (no
# SYN, no header bytes: 1000-byte packets from seq 0).
T3 = """\
+ 0.1 0 1 tcp 40 ------- 5 0.0 1.0 0 0 -1 0x2 40 0
- 0.1 0 1 tcp 40 ------- 5 0.0 1.0 0 0 -1 0x2 40 0
+ 0.1 2 1 tcp 1000 ------- 6 2.0 1.1 0 10
- 0.1 2 1 tcp 1000 ------- 6 2.0 1.1 0 10
+ 0.1 2 1 tcp 1000 ------- 6 2.0 1.1 1 11
- 0.108 2 1 tcp 1000 ------- 6 2.0 1.1 1 11
r 0.11 0 1 tcp 40 ------- 5 0.0 1.0 0 0 -1 0x2 40 0
+ 0.11 1 0 ack 40 ------- 5 1.0 0.0 0 1 1 0x12 40 0
- 0.11 1 0 ack 40 ------- 5 1.0 0.0 0 1 1 0x12 40 0
r 0.11 2 1 tcp 1000 ------- 6 2.0 1.1 0 10
r 0.118 2 1 tcp 1000 ------- 6 2.0 1.1 1 11
r 0.12 1 0 ack 40 ------- 5 1.0 0.0 0 1 1 0x12 40 0
+ 0.12 0 1 tcp 40 ------- 5 0.0 1.0 1 2 1 0x10 40 0
- 0.12 0 1 tcp 40 ------- 5 0.0 1.0 1 2 1 0x10 40 0
+ 0.12 0 1 tcp 576 ------- 5 0.0 1.0 1 3 1 0x10 40 0
+ 0.12 0 1 tcp 576 ------- 5 0.0 1.0 537 4 1 0x10 40 0
- 0.12 0 1 tcp 576 ------- 5 0.0 1.0 1 3 1 0x10 40 0
- 0.125 0 1 tcp 576 ------- 5 0.0 1.0 537 4 1 0x10 40 0
r 0.13 0 1 tcp 40 ------- 5 0.0 1.0 1 2 1 0x10 40 0
r 0.13 1 2 ack 40 ------- 6 1.1 2.0 1 12
r 0.135 0 1 tcp 576 ------- 5 0.0 1.0 1 3 1 0x10 40 0
r 0.14 0 1 tcp 576 ------- 5 0.0 1.0 537 4 1 0x10 40 0
+ 0.14 1 0 ack 40 ------- 5 1.0 0.0 1 5 1073 0x10 40 0
- 0.14 1 0 ack 40 ------- 5 1.0 0.0 1 5 1073 0x10 40 0
r 0.15 1 0 ack 40 ------- 5 1.0 0.0 1 5 1073 0x10 40 0
+ 0.2 0 1 tcp 40 ------- 5 0.0 1.0 1073 6 1 0x11 40 0
- 0.2 0 1 tcp 40 ------- 5 0.0 1.0 1073 6 1 0x11 40 0
"""

# T4: flows whose seq 0 is not in the trace: a Reno flow 0.0 -> 1.0 (unnamed: 40 header
# bytes) and a Vegas flow 2.0 -> 1.1 named by --flow-label 2=TCP/Vegas (no header bytes).
T4 = """\
+ 1 0 1 tcp 1040 ------- 1 0.0 1.0 5 20
- 1 0 1 tcp 1040 ------- 1 0.0 1.0 5 20
+ 1 0 1 tcp 1040 ------- 1 0.0 1.0 6 21
+ 1 2 1 tcp 1000 ------- 2 2.0 1.1 5 22
- 1 2 1 tcp 1000 ------- 2 2.0 1.1 5 22
+ 1 2 1 tcp 1000 ------- 2 2.0 1.1 6 23
- 1.008 2 1 tcp 1000 ------- 2 2.0 1.1 6 23
- 1.01 0 1 tcp 1040 ------- 1 0.0 1.0 6 21
r 1.01 0 1 tcp 1040 ------- 1 0.0 1.0 5 20
r 1.01 2 1 tcp 1000 ------- 2 2.0 1.1 5 22
r 1.018 2 1 tcp 1000 ------- 2 2.0 1.1 6 23
r 1.02 0 1 tcp 1040 ------- 1 0.0 1.0 6 21
"""


# T5: ping-like packets without sequence numbers (ns-2 writes seq -1): echo requests 0.0 -> 1.0,
# ids 0 and 1 delivered, id 2 dropped at the source's link. A `v` line after the last event
# does not move the run's end (only event lines count).
T5 = """\
+ 0.1 0 1 ping 64 ------- 3 0.0 1.0 -1 0
- 0.1 0 1 ping 64 ------- 3 0.0 1.0 -1 0
r 0.11 0 1 ping 64 ------- 3 0.0 1.0 -1 0
+ 0.2 0 1 ping 64 ------- 3 0.0 1.0 -1 1
- 0.2 0 1 ping 64 ------- 3 0.0 1.0 -1 1
r 0.21 0 1 ping 64 ------- 3 0.0 1.0 -1 1
+ 0.3 0 1 ping 64 ------- 3 0.0 1.0 -1 2
d 0.3 0 1 ping 64 ------- 3 0.0 1.0 -1 2
v 0.5 eval {set sim_annotation {end}}
"""

@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    """A store holding T1..T4 (one run each); returns (connection, {name: run_id})."""
    data = tmp_path_factory.mktemp("hand") / "store"
    ids = {
        "T1": ingest_text(data, "T1", T1, flow_labels={1: "reno"}),
        "T2": ingest_text(data, "T2", T2),
        "T3": ingest_text(data, "T3", T3),
        "T4": ingest_text(data, "T4", T4, flow_labels={2: "TCP/Vegas"}),
        "T5": ingest_text(data, "T5", T5),
        # the same packets, stopped at 1.1 s by the simulation (label stop_s); another `v`
        # line so that the content, and so the run, differs
        "T5_stop": ingest_text(data, "T5_stop", T5 + "v 0.6 eval {set sim_annotation {x}}\n",
                               labels={"stop_s": "1.1"}),
        # T2 with a CBR on-period [1.05, 1.16) recorded as labels, and a seed (run_metrics)
        "T2_on": ingest_text(data, "T2_on", T2 + "v 1.3 eval {set sim_annotation {x}}\n",
                             labels={"cbr_start": "1.05", "cbr_stop": "1.16", "seed": "1",
                                     "scenario": "hand"}),
    }
    return connect(data), ids


def check(row: dict, expected: dict) -> None:
    for col, v in expected.items():
        if isinstance(v, float) or v is None:
            assert row[col] == approx(v), f"{col}: {row[col]} != {v}"
        else:
            assert row[col] == v, f"{col}: {row[col]} != {v}"


def test_t1_tcp_retransmission_drop_in_flight(hand):
    con, ids = hand
    fs = by_flow(con, "flow_stats", ids["T1"])
    assert list(fs) == [(1, 0, 0, 2, 0)]          # the ACKs (2.0 -> 0.0) are not a flow
    check(fs[(1, 0, 0, 2, 0)], dict(
        ptype="tcp", name="reno", hdr_bytes=40, fulltcp=False,
        sent_pkts=6,        # ids 0 (SYN), 2, 3, 5, 7 (in flight), 8 left node 0
        recv_pkts=4,        # ids 0, 3, 5, 8 reached node 2
        dropped_pkts=1,     # id 2 at 1 -> 2
        rx_bytes=3160,      # 40 + 3 x 1040
        # first send 0.1, run end = last trace line 0.41 (no stop_s label): 0.31 s; the
        # last delivery is at 0.41 too, so the active throughput is the same
        throughput_kbps=3160 * 8 / 1000 / 0.31,
        active_throughput_kbps=3160 * 8 / 1000 / 0.31,
        in_flight_pkts=1,   # 6 sent - 4 received - id 2 (dropped, never delivered): id 7
        # first deliveries: seq 0 (40 - 40 = 0), seq 2 (id 3: 1000), seq 1 (id 5: 1000);
        # id 8 repeats seq 2
        goodput_kbps=2000 * 8 / 1000 / 0.31,
        # delays in arrival order: id 0 0.12-0.10, id 3 0.19-0.14, id 5 0.34-0.30, id 8
        # 0.41-0.37 = 20, 50, 40, 40 ms; sorted 20, 40, 40, 50
        mean_delay_ms=(20 + 50 + 40 + 40) / 4,
        p50_delay_ms=40.0,                      # rank 1.5 between 40 and 40
        p95_delay_ms=40 + 0.85 * (50 - 40),     # rank 0.95 x 3 = 2.85
        p99_delay_ms=40 + 0.97 * (50 - 40),     # rank 2.97
        jitter_ms=(30 + 10 + 0) / 3,            # |50-20|, |40-50|, |40-40|
        pdr=4 / 6, drop_rate=1 / 6,
    ))


def test_t1_rtt_karn(hand):
    con, ids = hand
    (r,) = rows(con, "SELECT * FROM rtt WHERE run_id = ?", [ids["T1"]])
    # seqs 1 and 2 were sent twice (ids 2/5 and 3/8): skipped. seq 3 never acknowledged.
    # seq 0 sent at 0.10, first ack >= 0 arrives at node 0 at 0.14: 40 ms.
    check(r, dict(fid=1, samples=1, mean_ms=40.0, p95_ms=40.0))


def test_t1_queue_delay(hand):
    con, ids = hand
    q = {(r["from_node"], r["to_node"]): r for r in rows(con, "SELECT * FROM queue_delay WHERE run_id = ?", [ids["T1"]])}
    # 0 -> 1: ids 0, 2, 5, 7, 8 wait 0; id 3 waits 0.15 - 0.14 = 10 ms. p95: rank 0.95 x 5 =
    # 4.75 between 0 and 10 -> 7.5
    check(q[(0, 1)], dict(pkts=6, mean_ms=10 / 6, p95_ms=7.5))
    # 1 -> 2: ids 0, 3, 5, 8 wait 0; id 2 was dropped (no `-`)
    check(q[(1, 2)], dict(pkts=4, mean_ms=0.0, p95_ms=0.0))
    assert set(q) == {(0, 1), (1, 2)}          # the ACK lines have no +/- pairs


def test_t1_throughput_series(hand):
    con, ids = hand
    got = rows(con, "SELECT t, kbps FROM throughput_series(0.1) WHERE run_id = ? ORDER BY t", [ids["T1"]])
    # last event 0.41 -> bins 0..4. Deliveries: 0.12 (40 B) and 0.19 (1040) in bin 1, 0.34
    # in bin 3, 0.41 in bin 4; kbps = bytes x 8 / 1000 / 0.1
    assert [r["t"] for r in got] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])
    assert [r["kbps"] for r in got] == pytest.approx([0.0, 86.4, 0.0, 83.2, 83.2])


def test_t2_shared_fid_bare_drop_16_fields(hand):
    con, ids = hand
    fs = by_flow(con, "flow_stats", ids["T2"])
    assert set(fs) == {(0, 1, 0, 3, 0), (0, 0, 0, 3, 1)}
    check(fs[(0, 1, 0, 3, 0)], dict(           # A
        ptype="cbr", name=None, hdr_bytes=0,
        sent_pkts=3, recv_pkts=2, dropped_pkts=0, rx_bytes=400,   # id 4 still in flight
        in_flight_pkts=1,
        # window: first send 1.0 -> run end 1.2 (the last line); active: -> last delivery 1.14
        throughput_kbps=400 * 8 / 1000 / (1.2 - 1.0),
        active_throughput_kbps=400 * 8 / 1000 / (1.14 - 1.0),
        goodput_kbps=400 * 8 / 1000 / (1.2 - 1.0),                # CBR: no header
        mean_delay_ms=35.0,                     # 1.03-1.00 and 1.14-1.10: 30, 40 ms
        p50_delay_ms=35.0, p95_delay_ms=30 + 0.95 * 10, p99_delay_ms=30 + 0.99 * 10,
        jitter_ms=10.0, pdr=2 / 3, drop_rate=0.0,
    ))
    check(fs[(0, 0, 0, 3, 1)], dict(           # B
        sent_pkts=3,        # ids 1, 5 and id 3, whose only event is the bare `d` at node 0
        recv_pkts=1, dropped_pkts=2, rx_bytes=300,
        in_flight_pkts=0,   # 3 sent - 1 received - ids 1 and 3 dropped
        throughput_kbps=300 * 8 / 1000 / (1.2 - 1.0),
        active_throughput_kbps=300 * 8 / 1000 / (1.19 - 1.0),
        goodput_kbps=300 * 8 / 1000 / (1.2 - 1.0),
        drops_per_s=2 / (1.2 - 1.0),
        mean_delay_ms=40.0, p50_delay_ms=40.0, p95_delay_ms=40.0, p99_delay_ms=40.0,
        jitter_ms=None,     # a single delivery
        pdr=1 / 3, drop_rate=2 / 3,
    ))
    (f,) = rows(con, "SELECT * FROM fairness WHERE run_id = ?", [ids["T2"]])
    check(f, dict(n_flows=0, jain_index=None, min_kbps=None, max_kbps=None, abs_diff_kbps=None))
    q = {(r["from_node"], r["to_node"]): r for r in rows(con, "SELECT * FROM queue_delay WHERE run_id = ?", [ids["T2"]])}
    # 2 -> 3: ids 0 and 5 wait 0, id 2 waits 1.12 - 1.11 = 10 ms, id 1 dropped. p95: rank 1.9
    check(q[(2, 3)], dict(pkts=3, mean_ms=10 / 3, p95_ms=0.9 * 10))


def test_t2_bottleneck_queue_delay(hand):
    """Paper 002's latency by hand: T2 has one drop on 2 -> 3 (id 1) and one on 0 -> 2 (id 3's
    bare `d`): a tie, broken by the longer mean wait (2 -> 3: 10/3 ms, 0 -> 2: 0 ms)."""
    con, ids = hand
    got = by_flow(con, "bottleneck_queue_delay", ids["T2"])
    assert set(got) == {(0, 1, 0, 3, 0), (0, 0, 0, 3, 1)}
    # A at 2 -> 3: id 0 waits 0, id 2 waits 1.12 - 1.11 = 10 ms; p95 rank 0.95 between 0 and 10
    check(got[(0, 1, 0, 3, 0)], dict(from_node=2, to_node=3, link_drops=1, pkts=2, mean_ms=5.0, p95_ms=9.5))
    # B at 2 -> 3: id 1 was dropped there (no `-`), id 5 waits 0
    check(got[(0, 0, 0, 3, 1)], dict(from_node=2, to_node=3, link_drops=1, pkts=1, mean_ms=0.0, p95_ms=0.0))


def test_t3_fulltcp_and_vegas(hand):
    con, ids = hand
    fs = by_flow(con, "flow_stats", ids["T3"])
    assert set(fs) == {(5, 0, 0, 1, 0), (6, 2, 0, 1, 1)}
    check(fs[(5, 0, 0, 1, 0)], dict(           # FullTcp: SYN, pure ACK, FIN are not data
        ptype="tcp", fulltcp=True, hdr_bytes=40,
        sent_pkts=2, recv_pkts=2, dropped_pkts=0, rx_bytes=1152,      # 2 x 576
        # first data send 0.12 (the SYN is not data), run end 0.2 (the FIN's line)
        throughput_kbps=1152 * 8 / 1000 / (0.2 - 0.12),
        active_throughput_kbps=1152 * 8 / 1000 / (0.14 - 0.12),
        goodput_kbps=2 * 536 * 8 / 1000 / (0.2 - 0.12),
        mean_delay_ms=17.5,                     # 0.135-0.12, 0.14-0.12: 15, 20 ms
        p50_delay_ms=17.5, p95_delay_ms=15 + 0.95 * 5, p99_delay_ms=15 + 0.99 * 5,
        jitter_ms=5.0, pdr=1.0, drop_rate=0.0,
    ))
    check(fs[(6, 2, 0, 1, 1)], dict(           # Vegas: seq 0 is a 1000-byte packet, no SYN
        ptype="tcp", fulltcp=False, hdr_bytes=0, name=None,
        sent_pkts=2, recv_pkts=2, rx_bytes=2000,
        throughput_kbps=2000 * 8 / 1000 / (0.2 - 0.1),
        active_throughput_kbps=2000 * 8 / 1000 / (0.118 - 0.1),
        goodput_kbps=2000 * 8 / 1000 / (0.2 - 0.1),
        mean_delay_ms=14.0,                     # 10 and 18 ms
        p95_delay_ms=10 + 0.95 * 8, jitter_ms=8.0,
    ))
    r = {x["fid"]: x for x in rows(con, "SELECT * FROM rtt WHERE run_id = ?", [ids["T3"]])}
    # FullTcp: byte ranges end at 537 and 1073; the ack with ackno 1073 reaches node 0 at
    # 0.15 (the SYN+ACK's ackno 1 covers neither): 0.15 - 0.12 = 30 ms twice. The pure ACK
    # at seq 1 is not data, so seq 1 counts as sent once.
    check(r[5], dict(samples=2, mean_ms=30.0, p95_ms=30.0))
    # Vegas: ack seq 1 reaches node 2 at 0.13, covering seqs 0 and 1 sent at 0.1
    check(r[6], dict(samples=2, mean_ms=30.0, p95_ms=30.0))
    x, y = 1152 * 8 / 1000 / 0.08, 2000 * 8 / 1000 / 0.1      # the windowed throughputs
    (f,) = rows(con, "SELECT * FROM fairness WHERE run_id = ?", [ids["T3"]])
    check(f, dict(n_flows=2, jain_index=(x + y) ** 2 / (2 * (x * x + y * y)),
                  min_kbps=x, max_kbps=y, abs_diff_kbps=y - x))


def test_t4_vegas_by_name_reno_without_syn(hand):
    con, ids = hand
    fs = by_flow(con, "flow_stats", ids["T4"])
    reno, vegas = fs[(1, 0, 0, 1, 0)], fs[(2, 2, 0, 1, 1)]
    check(reno, dict(name=None, hdr_bytes=40, rx_bytes=2080,
                     throughput_kbps=2080 * 8 / 1000 / 0.02,      # 1.00 -> run end 1.02
                     active_throughput_kbps=2080 * 8 / 1000 / 0.02,
                     goodput_kbps=2 * 1000 * 8 / 1000 / 0.02))
    check(vegas, dict(name="TCP/Vegas", hdr_bytes=0, rx_bytes=2000,
                      throughput_kbps=2000 * 8 / 1000 / 0.02,    # 1.00 -> run end 1.02
                      active_throughput_kbps=2000 * 8 / 1000 / 0.018,   # -> last delivery 1.018
                      goodput_kbps=2000 * 8 / 1000 / 0.02))


def test_t5_ping_without_seq_counts_each_packet_once(hand):
    con, ids = hand
    (r,) = by_flow(con, "flow_stats", ids["T5"]).values()
    check(r, dict(
        ptype="ping", hdr_bytes=0, sent_pkts=3, recv_pkts=2, dropped_pkts=1, in_flight_pkts=0,
        rx_bytes=128,
        # run end 0.3 (the last event line; the `v` line at 0.5 does not count), first send 0.1
        t_run_end=0.3,
        throughput_kbps=128 * 8 / 1000 / 0.2,
        goodput_kbps=128 * 8 / 1000 / 0.2,          # both seq -1 packets count, once each
        active_throughput_kbps=128 * 8 / 1000 / (0.21 - 0.1),
        drops_per_s=1 / 0.2,
    ))


def test_stop_s_label_ends_the_measurement_window(hand):
    con, ids = hand
    (r,) = by_flow(con, "flow_stats", ids["T5_stop"]).values()
    check(r, dict(
        t_run_end=1.1,                               # the label, not the last line (0.3)
        throughput_kbps=128 * 8 / 1000 / (1.1 - 0.1),
        goodput_kbps=128 * 8 / 1000 / (1.1 - 0.1),
        active_throughput_kbps=128 * 8 / 1000 / (0.21 - 0.1),   # not windowed
        drops_per_s=1 / (1.1 - 0.1),
    ))
    (e,) = rows(con, "SELECT * FROM run_ends WHERE run_id = ?", [ids["T5_stop"]])
    check(e, dict(stop_s=1.1, t_end=0.3, t_run_end=1.1))


# flow_stats_window(1.05, 1.16) on T2, by hand:
#  A (1.0 -> 3.0): first sent in the window: id 2 (1.1), delivered 1.14 (40 ms); deliveries in
#    the window: id 2 (200 B); active: from max(1.05, first send 1.0) to 1.14.
#  B (0.0 -> 3.1): first sent in the window: id 3 (bare `d` at the source at 1.05) and id 5
#    (1.15, delivered 1.19, after the window: it counts as received, not as window bytes).
T2_WINDOW = {
    (0, 1, 0, 3, 0): dict(sent_pkts=1, recv_pkts=1, dropped_pkts=0, in_flight_pkts=0, rx_bytes=200,
                          throughput_kbps=200 * 8 / 1000 / 0.11, goodput_kbps=200 * 8 / 1000 / 0.11,
                          active_throughput_kbps=200 * 8 / 1000 / (1.14 - 1.05),
                          mean_delay_ms=40.0, pdr=1.0, drop_rate=0.0, t_run_end=1.16),
    (0, 0, 0, 3, 1): dict(sent_pkts=2, recv_pkts=1, dropped_pkts=1, in_flight_pkts=0, rx_bytes=0,
                          throughput_kbps=0.0, goodput_kbps=0.0, active_throughput_kbps=0.0,
                          mean_delay_ms=40.0, jitter_ms=None, pdr=0.5, drop_rate=0.5, t_run_end=1.16),
}


def test_flow_stats_window_by_hand(hand):
    con, ids = hand
    got = {}
    for r in rows(con, "SELECT * FROM flow_stats_window(1.05, 1.16) WHERE run_id = ?", [ids["T2"]]):
        got[(r["fid"], r["src_node"], r["src_port"], r["dst_node"], r["dst_port"])] = r
    assert set(got) == set(T2_WINDOW)
    for k, exp in T2_WINDOW.items():
        check(got[k], exp)
    # an empty window: no rate
    for r in rows(con, "SELECT * FROM flow_stats_window(1.2, 1.2) WHERE run_id = ?", [ids["T2"]]):
        assert r["throughput_kbps"] is None and r["goodput_kbps"] is None and r["sent_pkts"] == 0


def test_onperiod_flow_stats_and_its_run_metric(hand):
    con, ids = hand
    got = by_flow(con, "onperiod_flow_stats", ids["T2_on"])
    assert set(got) == set(T2_WINDOW)
    for k, exp in T2_WINDOW.items():
        check(got[k], exp)
    # runs without the labels have no on-period rows
    assert rows(con, "SELECT count(*) AS n FROM onperiod_flow_stats WHERE run_id = ?", [ids["T2"]])[0]["n"] == 0
    m = {(r["fid"], r["src_node"]): r["value"] for r in rows(
        con, "SELECT * FROM run_metrics WHERE run_id = ? AND metric = 'onperiod_throughput_kbps'", [ids["T2_on"]])}
    assert m == {(0, 1): approx(200 * 8 / 1000 / 0.11), (0, 0): 0.0}


def test_hand_traces_agree_with_reference(hand):
    """The reference implementation reproduces the hand-computed numbers too."""
    con, ids = hand
    for name, text, labels in (("T1", T1, {1: "reno"}), ("T2", T2, {}), ("T3", T3, {}),
                               ("T4", T4, {2: "TCP/Vegas"}), ("T5", T5, {})):
        compare_run(con, ids[name], text, labels, window=(0.1, 1.16))
    compare_run(con, ids["T5_stop"], T5, {}, run_end=1.1)
    compare_run(con, ids["T2"], T2, {}, window=(1.05, 1.16))


# ---------------------------------------------------------------------------------------
# Every sql/ file against a store.

EXPECTED_COLUMNS = {
    "flows": "run_id fid src_node src_port dst_node dst_port ptype name",
    "flow_stats": "run_id fid ptype name src_node dst_node sent_pkts recv_pkts dropped_pkts "
                  "rx_bytes throughput_kbps active_throughput_kbps goodput_kbps in_flight_pkts "
                  "mean_delay_ms p50_delay_ms p95_delay_ms p99_delay_ms jitter_ms pdr drop_rate",
    "flow_stats_window(0.0, 1.0)": "run_id fid ptype name src_node dst_node sent_pkts recv_pkts "
                  "dropped_pkts rx_bytes throughput_kbps active_throughput_kbps goodput_kbps "
                  "in_flight_pkts mean_delay_ms p50_delay_ms p95_delay_ms p99_delay_ms jitter_ms pdr drop_rate",
    "fairness": "run_id n_flows jain_index min_kbps max_kbps abs_diff_kbps",
    "throughput_series(1.0)": "run_id fid t kbps",
    "queue_delay": "run_id from_node to_node pkts mean_ms p95_ms",
    "rtt": "run_id fid samples mean_ms p95_ms",
    "run_configs": "run_id scenario seed config",
    "replication_stats": "scenario config fid name metric n_runs mean stddev ci95_half_width",
    "data_events": "run_id event time from_node to_node ptype size fid pkt_id",
}


MACRO_CALLS = {   # a call of each scalar macro, and its expected value (by hand)
    "kbps": ("kbps(1000, 2.0)", 4.0),
    "percentile": ("(SELECT percentile(x, 0.95) FROM (VALUES (0.0), (10.0)) t(x))", 9.5),
    "is_data_packet": ("[is_data_packet('tcp', 40, true), is_data_packet('tcp', 40, false), "
                       "is_data_packet('ack', 1040, NULL), is_data_packet('cbr', 10, NULL)]",
                       [False, True, False, True]),
    "is_routing_ptype": ("[is_routing_ptype('AODV'), is_routing_ptype('cbr'), is_routing_ptype(NULL)]",
                         [True, False, False]),
    "is_routing_packet": ("[is_routing_packet('MYAODV', 255), is_routing_packet('MDART', 255), "
                          "is_routing_packet('DSR', 0), is_routing_packet('cbr', 0), "
                          "is_routing_packet('ARP', 255), is_routing_packet(NULL, NULL), is_routing_packet('cbr', NULL)]",
                          [True, True, True, False, False, False, False]),
    "t_975": ("round(t_975(3), 6)", 3.182446),
    # t(0.975, 2) * 2 / sqrt(3) = 4.302652729749 * 2 / 1.732050807569; n < 2: NULL
    "ci95_half_width": ("[round(ci95_half_width(3, 2.0), 6), ci95_half_width(1, 2.0)]", [4.968275, None]),
    # the packet-trace kinds (tests/test_packet_delays.py checks the list against the formats')
    "is_packet_trace": ("[is_packet_trace('wired'), is_packet_trace('wireless'), is_packet_trace('hier'), "
                        "is_packet_trace('nam'), is_packet_trace('tcpvar'), is_packet_trace('queue_monitor'), "
                        "is_packet_trace(NULL)]",
                        [True, True, True, True, False, False, False]),
    # wired: the flow's header bytes whatever the ptype; wireless: 40 for tcp, else 0
    "packet_hdr_bytes": ("[packet_hdr_bytes('wired', 'tcp', 0), packet_hdr_bytes('wired', 'cbr', 40), "
                         "packet_hdr_bytes('wireless', 'tcp', NULL), packet_hdr_bytes('wireless', 'cbr', NULL)]",
                         [0, 40, 40, 0]),
    # (|3 - 1| + |2 - 3|) / 2; fewer than two values: NULL
    "mean_abs_step": ("[mean_abs_step([1.0, 3.0, 2.0]), mean_abs_step([5.0]), mean_abs_step(CAST([] AS DOUBLE[]))]",
                      [1.5, None, None]),
    # an agent-layer line, or a drop at any layer
    "is_wireless_fact_event": ("[is_wireless_fact_event('AGT', 's'), is_wireless_fact_event('RTR', 'd'), "
                               "is_wireless_fact_event('MAC', 'r'), is_wireless_fact_event('RTR', 'f'), "
                               "is_wireless_fact_event('AGT', 'r')]",
                               [True, True, False, False, True]),
}
TABLE_MACRO_ARGS = {"throughput_series": "(0.5)", "flow_stats_window": "(0.0, 1.0)",
                    "flow_stats_in": "('run', NULL, NULL, NULL)"}


def test_every_sql_file_loads_and_is_queryable(hand):
    con, _ = hand
    files = sql_files()
    assert {f.layer for f in files} == {"macros", "staging", "intermediate", "metrics"}
    for f in files:
        assert f.text.startswith(f"-- {f.name}"), f"{f.rel} must open with '-- {f.name}: ...'"
        # to_arrow_table: fully evaluated, and timestamps need no pytz
        if f.kind == "table_macro":
            con.sql(f"SELECT * FROM {f.name}{TABLE_MACRO_ARGS[f.name]}").to_arrow_table()
        elif f.kind == "macro":
            call, expected = MACRO_CALLS[f.name]
            assert con.sql(f"SELECT {call}").fetchall()[0][0] == expected, f.name
        else:
            assert "CREATE OR REPLACE VIEW" in f.text, f.rel
            con.sql(f"SELECT * FROM {f.name}").to_arrow_table()
    for view, cols in EXPECTED_COLUMNS.items():
        got = [d[0] for d in con.execute(f"SELECT * FROM {view} LIMIT 0").description]
        missing = set(cols.split()) - set(got)
        assert not missing, f"{view} lacks {sorted(missing)}"


def test_views_on_an_empty_store(tmp_path):
    con = connect(tmp_path / "empty")
    for view in ("flows", "flow_stats", "fairness", "queue_delay", "rtt", "replication_stats"):
        assert con.execute(f"SELECT count(*) FROM {view}").fetchall() == [(0,)]


# ---------------------------------------------------------------------------------------
# Real ns-2 runs against tests/reference_metrics.py.

def compare_run(con, run_id: str, text: str, flow_names: dict, bin_s: float = 0.5,
                run_end: float | None = None, window: tuple[float, float] | None = None) -> None:
    """Every view of one run against the reference (run_end: the run's stop_s label; window:
    also compare flow_stats_window over it)."""
    m = ref.all_metrics(text, flow_names, bin_s=bin_s, run_end=run_end, window=window)
    got = by_flow(con, "flow_stats", run_id)
    assert set(got) == set(m["flow_stats"])
    for key, exp in m["flow_stats"].items():
        check(got[key], exp)
        fl = m["flows"][key]
        assert (got[key]["fulltcp"], got[key]["hdr_bytes"]) == (fl.fulltcp, fl.hdr_bytes), key
    if window is not None:
        got_w = {}
        for r in rows(con, "SELECT * FROM flow_stats_window(?, ?) WHERE run_id = ?", [*window, run_id]):
            got_w[(r["fid"], r["src_node"], r["src_port"], r["dst_node"], r["dst_port"])] = r
        assert set(got_w) == set(m["flow_stats_window"])
        for key, exp in m["flow_stats_window"].items():
            check(got_w[key], exp)
    (f,) = rows(con, "SELECT * FROM fairness WHERE run_id = ?", [run_id])
    check(f, m["fairness"])
    got_rtt = by_flow(con, "rtt", run_id)
    assert set(got_rtt) == set(m["rtt"])
    for key, exp in m["rtt"].items():
        check(got_rtt[key], exp)
    q = {(r["from_node"], r["to_node"]): r
         for r in rows(con, "SELECT * FROM queue_delay WHERE run_id = ?", [run_id])}
    assert set(q) == set(m["queue_delay"])
    for link, exp in m["queue_delay"].items():
        check(q[link], exp)
    series = rows(con, f"SELECT * FROM throughput_series({bin_s}) WHERE run_id = ?", [run_id])
    assert len(series) == len(m["throughput_series"])
    for r in series:
        key = (r["fid"], r["src_node"], r["src_port"], r["dst_node"], r["dst_port"])
        k = round(r["t"] / bin_s)
        assert r["t"] == pytest.approx(k * bin_s)
        assert r["kbps"] == approx(m["throughput_series"][(key, k)]), (key, k)


def run_ns(script: str, out: Path, *args: str) -> str:
    proc = subprocess.run([NS, str(TCL / script), str(out), *args], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out.read_text()


REAL = {
    # name: (script, args, flow names, labels, window for flow_stats_window)
    "dumbbell": ("metrics_dumbbell.tcl", ("1",), {1: "Reno", 2: "Vegas", 3: "Sack"}, {}, (1.0, 3.0)),
    "dumbbell_unnamed": ("metrics_dumbbell.tcl", ("2",), {}, {}, None),
    # stopped at 4.0 s by the script: the label says so
    "dumbbell_stop": ("metrics_dumbbell.tcl", ("3",), {1: "Reno", 2: "Vegas", 3: "Sack"},
                      {"stop_s": "4.0"}, (0.5, 2.0)),
    "lossmodel": ("metrics_lossmodel.tcl", ("1",), {1: "Reno", 2: "CBR"}, {}, (0.5, 2.5)),
    "fulltcp_12": ("metrics_fulltcp.tcl", ("0",), {}, {}, (0.2, 1.0)),
    "fulltcp_16": ("metrics_fulltcp.tcl", ("1",), {7: "FullTcp", 8: "FullTcp/Sack"}, {}, None),
    # a TCP flow starved by 10 Mb/s of CBR, and pings (seq -1); sources stop at 4 s, the
    # simulation at 5 s (stop_s), the CBR burst is on in [0.5, 4.0) (paper 004, exp. 3 labels)
    "starved": ("metrics_starved.tcl", ("0.5", "4.0", "4.0", "5.0"), {1: "Reno", 2: "CBR", 3: "Ping"},
                {"stop_s": "5.0", "cbr_start": "0.5", "cbr_stop": "4.0"}, (1.0, 4.5)),
    # a CBR on-period whose label never ends it (cbr-variants writes cbr_stop=100000): the
    # on-period is capped at the run's end, stop_s
    "starved_open": ("metrics_starved.tcl", ("0.6", "4.0", "4.0", "5.0"), {1: "Reno", 2: "CBR"},
                     {"stop_s": "5.0", "cbr_start": "0.6", "cbr_stop": "100000"}, None),
    # the same without a stop_s label (so the run ends at its last line), CBR from 0.4 s
    "starved_nolabel": ("metrics_starved.tcl", ("0.4", "4.0", "4.0", "5.0"), {1: "Reno", 2: "CBR"},
                        {}, (0.0, 2.0)),
}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    d = tmp_path_factory.mktemp("real")
    data = d / "store"
    out = {}
    for name, (script, args, names, labels, _) in REAL.items():
        text = run_ns(script, d / f"{name}.tr", *args)
        (res,) = ingest_paths(data, [d / f"{name}.tr"], flow_labels=names, labels=labels or None)
        assert res.status == "added", res.message
        out[name] = (res.run_id, text, names)
    return connect(data), out


@needs_ns
@pytest.mark.parametrize("name", list(REAL))
def test_real_run_matches_reference(real, name):
    con, runs = real
    run_id, text, names = runs[name]
    labels, window = REAL[name][3], REAL[name][4]
    stop = float(labels["stop_s"]) if "stop_s" in labels else None
    compare_run(con, run_id, text, names, run_end=stop, window=window)


@needs_ns
@pytest.mark.parametrize("name", ["starved", "starved_open"])
def test_onperiod_matches_reference_window(real, name):
    """onperiod_flow_stats is flow_stats_window over the run's own [cbr_start, cbr_stop), the
    end capped at the run's end (stop_s)."""
    con, runs = real
    run_id, text, names = runs[name]
    labels = REAL[name][3]
    t1 = min(float(labels["cbr_stop"]), float(labels["stop_s"]))
    exp = ref.flow_stats_window(ref.parse_trace(text), ref.find_flows(ref.parse_trace(text), names),
                                float(labels["cbr_start"]), t1)
    got = by_flow(con, "onperiod_flow_stats", run_id)
    assert set(got) == set(exp)
    for key, e in exp.items():
        check(got[key], e)


def bottleneck_by_hand(text: str, names: dict) -> dict:
    """A second reading of bottleneck_queue_delay's definition, straight from the trace lines:
    the link with the most `d` lines (ties: the longest mean wait of all its packets, then the
    lowest nodes); per flow, the mean wait there of its data packets, in ms."""
    events = ref.parse_trace(text)
    flows = ref.find_flows(events, names)
    drops: dict = {}
    t_in: dict = {}
    waits: dict = {}            # link -> [(event, wait)]
    for e in events:
        link = (e.from_node, e.to_node)
        if e.event == "d":
            drops[link] = drops.get(link, 0) + 1
        elif e.event == "+" and (link, e.pkt_id) not in t_in:
            t_in[(link, e.pkt_id)] = (e, e.time)
        elif e.event == "-" and (link, e.pkt_id) in t_in and t_in[(link, e.pkt_id)] is not None:
            first, t = t_in[(link, e.pkt_id)]
            waits.setdefault(link, []).append((first, e.time - t))
            t_in[(link, e.pkt_id)] = None          # only the first `-` counts
    link = min(waits, key=lambda ln: (-drops.get(ln, 0), -sum(w for _, w in waits[ln]) / len(waits[ln]), ln))
    out: dict = {}
    for e, w in waits[link]:
        if ref.is_data(e, flows):
            out.setdefault((e.fid, e.src_node, e.src_port, e.dst_node, e.dst_port), []).append(w * 1000)
    return {k: (link, len(v), sum(v) / len(v)) for k, v in out.items()}


@needs_ns
@pytest.mark.parametrize("name", ["dumbbell", "lossmodel", "starved"])
def test_bottleneck_queue_delay_on_real_runs(real, name):
    con, runs = real
    run_id, text, names = runs[name]
    exp = bottleneck_by_hand(text, names)
    got = by_flow(con, "bottleneck_queue_delay", run_id)
    assert set(got) == set(exp) and exp
    for k, (link, n, mean_ms) in exp.items():
        assert (got[k]["from_node"], got[k]["to_node"]) == link
        assert got[k]["pkts"] == n
        assert got[k]["mean_ms"] == approx(mean_ms)


@needs_ns
def test_starved_flow_is_reported_starved(real):
    """The case that motivated the revised window: TCP starved after ~0.9 s of a 5 s run."""
    con, runs = real
    fs = {r["name"]: r for r in by_flow(con, "flow_stats", runs["starved"][0]).values()}
    tcp = fs["Reno"]
    assert tcp["t_last_recv"] < 1.5 and tcp["t_run_end"] == 5.0
    # windowed: the bytes over 4.9 s; active (FlowMonitor's): the same bytes over ~0.8 s
    assert tcp["throughput_kbps"] < tcp["active_throughput_kbps"] / 4
    assert tcp["throughput_kbps"] == approx(tcp["rx_bytes"] * 8 / 1000 / (5.0 - tcp["t_first_send"]))
    ping = fs["Ping"]
    assert ping["ptype"] == "ping" and ping["recv_pkts"] >= 2 and ping["goodput_kbps"] > 0
    seqs = con.execute("SELECT DISTINCT seq FROM data_events WHERE run_id = ? AND ptype = 'ping'",
                       [runs["starved"][0]]).fetchall()
    assert seqs == [(-1,)]


@needs_ns
def test_real_runs_exercise_the_cases(real):
    """Guard against the comparisons above passing vacuously."""
    con, runs = real
    fs = {n: by_flow(con, "flow_stats", runs[n][0]) for n in runs}
    db = fs["dumbbell"]
    assert {r["name"]: r["hdr_bytes"] for r in db.values() if r["ptype"] == "tcp"} == \
        {"Reno": 40, "Vegas": 0, "Sack": 40}
    assert sum(1 for k in db if k[0] == 0) == 2                  # two flows share fid 0
    assert all(r["dropped_pkts"] > 0 for r in db.values())
    assert all(r["sent_pkts"] > r["recv_pkts"] + r["dropped_pkts"] - 5 for r in db.values())
    assert {r["hdr_bytes"] for r in fs["dumbbell_unnamed"].values() if r["fid"] == 2} == {0}
    lm = fs["lossmodel"]
    bare = con.execute(
        "SELECT count(*) FROM events e WHERE run_id = ? AND event = 'd' AND from_node = src_node "
        "AND NOT EXISTS (SELECT 1 FROM events p WHERE p.run_id = e.run_id AND p.pkt_id = e.pkt_id "
        "AND p.event = '+')", [runs["lossmodel"][0]]).fetchall()[0][0]
    assert bare > 10                                               # loss-model drops
    assert sum(r["dropped_pkts"] for r in lm.values()) >= bare
    for n in ("fulltcp_12", "fulltcp_16"):
        full = [r for r in fs[n].values() if r["fid"] in (7, 8)]
        assert len(full) == 2 and all(r["fulltcp"] and r["dropped_pkts"] > 0 for r in full)
    assert rows(con, "SELECT samples FROM rtt WHERE run_id = ? AND fid = 7", [runs["fulltcp_16"][0]])[0]["samples"] > 50


# ---------------------------------------------------------------------------------------
# Replication statistics against scipy.

def test_t_975_against_scipy(hand):
    stats = pytest.importorskip("scipy.stats")
    con, _ = hand
    for df in list(range(1, 61)) + [80, 100, 200, 1000]:
        got = con.execute("SELECT t_975(?)", [df]).fetchall()[0][0]
        assert got == pytest.approx(stats.t.ppf(0.975, df), rel=1e-7), df
    assert con.execute("SELECT t_975(0)").fetchall()[0][0] is None


@needs_ns
def test_replication_stats_against_scipy(tmp_path):
    np = pytest.importorskip("numpy")
    stats = pytest.importorskip("scipy.stats")
    data = tmp_path / "store"
    names = {1: "Reno", 2: "Vegas", 3: "Sack", 4: "CBR"}
    for seed in (1, 2, 3, 4):
        trace = tmp_path / f"db{seed}.tr"
        run_ns("metrics_dumbbell.tcl", trace, str(seed))
        # sim_id names one simulation (it changes with the seed): not part of the config
        (res,) = ingest_paths(data, [trace], labels={"scenario": "dumbbell", "seed": str(seed),
                                                     "queue": "RED", "sim_id": f"s{seed}"},
                              flow_labels=names)
        assert res.status == "added"
    # another configuration (a different label) and an unseeded run stay out of the group
    trace = tmp_path / "other.tr"
    run_ns("metrics_dumbbell.tcl", trace, "5")
    ingest_paths(data, [trace], labels={"scenario": "dumbbell", "seed": "5", "queue": "X"},
                 flow_labels=names)
    trace = tmp_path / "unseeded.tr"
    run_ns("metrics_dumbbell.tcl", trace, "6")
    ingest_paths(data, [trace], labels={"scenario": "dumbbell", "queue": "RED"}, flow_labels=names)

    con = connect(data)
    # where each flow-level metric's per-run value is read from, written out here (not read
    # from the catalogue these statistics are built from); a metric added to the catalogue
    # is added here too
    source = {"throughput_kbps": ("flow_stats", "throughput_kbps"),
              "active_throughput_kbps": ("flow_stats", "active_throughput_kbps"),
              "goodput_kbps": ("flow_stats", "goodput_kbps"), "mean_delay_ms": ("flow_stats", "mean_delay_ms"),
              "p95_delay_ms": ("flow_stats", "p95_delay_ms"), "jitter_ms": ("flow_stats", "jitter_ms"),
              "pdr": ("flow_stats", "pdr"), "drop_rate": ("flow_stats", "drop_rate"),
              "in_flight_pkts": ("flow_stats", "in_flight_pkts"), "drops_per_s": ("flow_stats", "drops_per_s"),
              "rtt_mean_ms": ("rtt", "mean_ms"), "bottleneck_queue_delay_ms": ("bottleneck_queue_delay", "mean_ms"),
              "onperiod_throughput_kbps": ("onperiod_flow_stats", "throughput_kbps")}

    def per_run(view):   # the RED runs' rows of a flow-level view (flow_stats, rtt, ...)
        return rows(con, f"SELECT s.*, r.seed FROM {view} s JOIN runs r USING (run_id) "
                         "WHERE r.labels['queue'] = 'RED' AND r.seed IS NOT NULL")
    jain = rows(con, "SELECT f.*, r.seed FROM fairness f JOIN runs r USING (run_id) "
                     "WHERE r.labels['queue'] = 'RED' AND r.seed IS NOT NULL")
    got = rows(con, "SELECT * FROM replication_stats WHERE config = 'queue=RED,scenario=dumbbell'")
    assert {r["config"] for r in rows(con, "SELECT DISTINCT config FROM replication_stats")} == \
        {"queue=RED,scenario=dumbbell", "queue=X,scenario=dumbbell"}

    def expect(values):
        v = np.array(values, dtype=float)
        n = len(v)
        sd = v.std(ddof=1)
        return n, v.mean(), sd, stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)

    checked = 0
    for r in got:
        if r["metric"] == "jain_index":
            values = [j["jain_index"] for j in jain]
        else:
            assert r["metric"] in source, f"{r['metric']}: add where it is read from to `source` above"
            view, column = source[r["metric"]]
            values = [x[column] for x in per_run(view)
                      if (x["fid"], x["src_node"], x["src_port"], x["dst_node"], x["dst_port"])
                      == (r["fid"], r["src_node"], r["src_port"], r["dst_node"], r["dst_port"])
                      and x[column] is not None]
        n, mean, sd, half = expect(values)
        assert r["n_runs"] == n == 4
        assert r["mean"] == pytest.approx(mean, rel=1e-9)
        assert r["stddev"] == pytest.approx(sd, rel=1e-9)
        assert r["ci95_half_width"] == pytest.approx(half, rel=1e-9)
        assert r["seeds"] == [1, 2, 3, 4]
        checked += 1
    # every row was checked, and the five classic metrics and Jain's index are among them
    assert checked == len(got)
    assert {r["metric"] for r in got} >= {"throughput_kbps", "goodput_kbps", "mean_delay_ms", "pdr",
                                           "drop_rate", "jain_index", "rtt_mean_ms",
                                           "bottleneck_queue_delay_ms", "drops_per_s"}
    assert sum(r["metric"] == "throughput_kbps" for r in got) == 6
    assert any(r["stddev"] > 0 for r in got if r["metric"] == "throughput_kbps")


# ---------------------------------------------------------------------------------------
# A third opinion: shared/ns2-probe/analyze_wired.py, whose definitions agree with the
# contract's for a CBR flow (one path, no retransmissions): deliveries, drops, mean delay,
# jitter, uid-based PDR.

ANALYZE_WIRED = Path(__file__).resolve().parents[2] / "shared" / "ns2-probe" / "analyze_wired.py"


@needs_ns
@pytest.mark.skipif(not ANALYZE_WIRED.exists(), reason="shared/ns2-probe is not beside the repo")
def test_cbr_flow_agrees_with_shared_analyze_wired(real, tmp_path):
    import re
    import sys

    con, runs = real
    run_id, text, _ = runs["dumbbell"]
    trace = tmp_path / "db.tr"
    trace.write_text(text)
    out = subprocess.run([sys.executable, str(ANALYZE_WIRED), str(trace), "3", "7"],
                         capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("fid 4:"))
    m = re.search(r"rx (\d+) pkts.*delay mean ([\d.]+) ms, jitter ([\d.]+) ms, PDR\(uid\) ([\d.]+), "
                  r"drops (\d+)", line)
    rx, delay, jitter, pdr, drops = m.groups()
    (r,) = rows(con, "SELECT * FROM flow_stats WHERE run_id = ? AND fid = 4", [run_id])
    assert r["recv_pkts"] == int(rx) and r["dropped_pkts"] == int(drops)
    # as printed: within half a unit of the last digit shown
    assert abs(r["mean_delay_ms"] - float(delay)) <= 0.005 + 1e-9
    assert abs(r["jitter_ms"] - float(jitter)) <= 0.005 + 1e-9
    assert abs(r["pdr"] - float(pdr)) <= 0.0005 + 1e-9
    # its throughput is rx bytes over [t0, last delivery]: from the flow's first send, that is
    # the old definition, which the contract keeps as active_throughput_kbps
    t0 = repr(r["t_first_send"])
    out = subprocess.run([sys.executable, str(ANALYZE_WIRED), str(trace), "3", "7", t0],
                         capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("fid 4:"))
    thr = float(re.search(r"throughput ([\d.]+) kb/s", line).group(1))
    assert abs(r["active_throughput_kbps"] - thr) <= 0.05 + 1e-9
    assert r["throughput_kbps"] < r["active_throughput_kbps"]     # the CBR stops before the run
