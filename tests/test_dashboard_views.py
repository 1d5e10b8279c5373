"""The views the dashboard's issue-15 pages added (sql/): `retransmissions`, against a hand
count on a tiny trace written here line by line and against a plain Python reference on the
raw lines of a real ns-2 run with losses (tests/tcl/metrics_dumbbell.tcl)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from reference_metrics import find_flows, is_data, parse_trace
from tracekit.ingest.pipeline import ingest_paths
from tracekit.db.query import connect

TCL = Path(__file__).resolve().parent / "tcl"
NS = shutil.which("ns") or "/usr/bin/ns"

# One Reno-style flow 0.0 -> 2.0 through node 1 (12-field wired lines). seq 1 is dropped at
# node 1 and sent again twice (packet ids 2 and 4), seq 2 once; a CBR flow whose packets
# keep the seq of... nothing: it numbers each packet anew. Hand count for the TCP flow:
# sent 5 packets, 3 sequence numbers, retransmitted 2 packets (ids 2 and 4) of 1 sequence
# number, ratio 2/5, the first at 0.5 s.
TINY = """\
+ 0.1 0 1 tcp 1040 ------- 1 0.0 2.0 0 0
- 0.1 0 1 tcp 1040 ------- 1 0.0 2.0 0 0
+ 0.2 0 1 tcp 1040 ------- 1 0.0 2.0 1 1
- 0.2 0 1 tcp 1040 ------- 1 0.0 2.0 1 1
r 0.21 0 1 tcp 1040 ------- 1 0.0 2.0 0 0
+ 0.21 1 2 tcp 1040 ------- 1 0.0 2.0 0 0
- 0.21 1 2 tcp 1040 ------- 1 0.0 2.0 0 0
r 0.22 1 2 tcp 1040 ------- 1 0.0 2.0 0 0
+ 0.22 2 1 ack 40 ------- 1 2.0 0.0 0 10
r 0.31 0 1 tcp 1040 ------- 1 0.0 2.0 1 1
d 0.31 1 2 tcp 1040 ------- 1 0.0 2.0 1 1
+ 0.5 0 1 tcp 1040 ------- 1 0.0 2.0 1 2
- 0.5 0 1 tcp 1040 ------- 1 0.0 2.0 1 2
+ 0.6 0 1 tcp 1040 ------- 1 0.0 2.0 2 3
- 0.6 0 1 tcp 1040 ------- 1 0.0 2.0 2 3
+ 0.9 0 1 tcp 1040 ------- 1 0.0 2.0 1 4
- 0.9 0 1 tcp 1040 ------- 1 0.0 2.0 1 4
+ 1.0 0 1 cbr 500 ------- 2 0.1 2.1 0 5
+ 1.1 0 1 cbr 500 ------- 2 0.1 2.1 1 6
"""


def test_retransmissions_on_a_hand_made_trace(tmp_path):
    (tmp_path / "tiny.tr").write_text(TINY)
    d = tmp_path / "store"
    assert [r.status for r in ingest_paths(d, [tmp_path / "tiny.tr"])] == ["added"]
    con = connect(d)
    rows = con.sql("SELECT fid, sent_pkts, distinct_seqs, retransmitted_pkts, retransmitted_seqs, retransmit_ratio, "
                   "first_retransmit_s FROM retransmissions ORDER BY fid").fetchall()
    con.close()
    assert rows == [(1, 5, 3, 2, 1, 0.4, 0.5), (2, 2, 2, 0, 0, 0.0, None)]


def _plain_retransmissions(text: str) -> dict:
    """Per flow key: (sent, retransmitted): the data packets' first time leaving the source
    node (any event whose from_node is the source), in (time, packet id) order; a packet is a
    retransmission when its seq was carried by an earlier one."""
    events = parse_trace(text)
    flows = find_flows(events)
    first: dict = {}
    for e in events:
        k = (e.fid, e.src_node, e.src_port, e.dst_node, e.dst_port)
        if k in flows and is_data(e, flows) and e.event in ("+", "d") and e.from_node == e.src_node:
            cur = first.setdefault(k, {}).get(e.pkt_id)
            if cur is None or e.time < cur[0]:
                first[k][e.pkt_id] = (e.time, e.seq)
    out = {}
    for k, pkts in first.items():
        seen, again = set(), 0
        for _pid, (_t, seq) in sorted(pkts.items(), key=lambda kv: (kv[1][0], kv[0])):
            if seq >= 0 and seq in seen:
                again += 1
            seen.add(seq)
        out[k] = (len(pkts), again)
    return out


def test_retransmissions_match_a_plain_reference_on_a_real_run(tmp_path):
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    trace = tmp_path / "dumbbell.tr"
    subprocess.run([NS, str(TCL / "metrics_dumbbell.tcl"), str(trace), "1"], check=True, capture_output=True,
                   cwd=tmp_path)
    d = tmp_path / "store"
    assert [r.status for r in ingest_paths(d, [trace])] == ["added"]
    want = _plain_retransmissions(trace.read_text())
    con = connect(d)
    got = {tuple(r[:5]): tuple(r[5:]) for r in con.sql(
        "SELECT fid, src_node, src_port, dst_node, dst_port, sent_pkts, retransmitted_pkts FROM retransmissions").fetchall()}
    con.close()
    assert got == want
    assert sum(r for _s, r in want.values()) > 0, "the run should have losses, hence retransmissions"
