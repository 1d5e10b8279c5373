"""The one definition of the per-packet delay (the packet_delays view) and of the packet-trace
run filter (the is_packet_trace macro, and PACKET_KINDS on the Python side), issue 40:

- on a tiny hand-written trace, packet_delays.delay_ms is each packet's first delivery minus
  its first send, worked out by hand below, and NULL for a packet never delivered; flow_stats'
  delay columns are those delays' mean and jitter;
- on real ns-2 runs (sample_traces/: a wired and a wireless one), the stored facts
  (flow_run_facts, a hashed definition that computes t_recv - t_sent over packet_facts itself)
  hold the same delays as packet_delays, so the flows' delay columns do not depend on which
  of the two they come from;
- is_packet_trace says yes for exactly the formats that are packet traces.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from tracekit.db.query import close, connect
from tracekit.formats.parsers import FORMATS, PACKET_KINDS
from tracekit.ingest.pipeline import ingest_paths

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"

# One CBR flow, fid 1, node 0 -> node 2 through node 1 (links 0-1 and 1-2), three packets:
#   uid 0: leaves node 0 at 0.0, reaches node 2 at 0.125: delay 125 ms;
#   uid 1: leaves at 0.1, waits at node 1 until 0.16, reaches node 2 at 0.3: delay 200 ms
#          (its arrival at node 1, 0.15, is not its delivery: node 1 is not the destination);
#   uid 2: leaves at 0.2 and is dropped at node 0's queue: never delivered, no delay.
# flow_stats: mean delay (125 + 200) / 2 = 162.5 ms, jitter |200 - 125| = 75 ms.
TRACE = """\
+ 0.0 0 1 cbr 1000 ------- 1 0.0 2.0 0 0
- 0.0 0 1 cbr 1000 ------- 1 0.0 2.0 0 0
r 0.05 0 1 cbr 1000 ------- 1 0.0 2.0 0 0
+ 0.05 1 2 cbr 1000 ------- 1 0.0 2.0 0 0
- 0.05 1 2 cbr 1000 ------- 1 0.0 2.0 0 0
+ 0.1 0 1 cbr 1000 ------- 1 0.0 2.0 1 1
- 0.1 0 1 cbr 1000 ------- 1 0.0 2.0 1 1
r 0.125 1 2 cbr 1000 ------- 1 0.0 2.0 0 0
r 0.15 0 1 cbr 1000 ------- 1 0.0 2.0 1 1
+ 0.15 1 2 cbr 1000 ------- 1 0.0 2.0 1 1
- 0.16 1 2 cbr 1000 ------- 1 0.0 2.0 1 1
+ 0.2 0 1 cbr 1000 ------- 1 0.0 2.0 2 2
d 0.2 0 1 cbr 1000 ------- 1 0.0 2.0 2 2
r 0.3 1 2 cbr 1000 ------- 1 0.0 2.0 1 1
"""
# pkt_id: (first send, first delivery at node 2, delay in ms), read off the lines above
HAND = {0: (0.0, 0.125, 125.0), 1: (0.1, 0.3, 200.0), 2: (0.2, None, None)}


def _store(tmp_path: Path, traces: list[Path]) -> Path:
    data = tmp_path / "store"
    for t in traces:
        (res,) = ingest_paths(data, [t])
        assert res.status == "added", res.message
    return data


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    d = tmp_path_factory.mktemp("delays")
    (d / "tiny.tr").write_text(TRACE)
    con = connect(_store(d, [d / "tiny.tr"]))
    yield con
    close(con)


def test_delay_ms_is_first_delivery_minus_first_send(tiny):
    rows = tiny.execute("SELECT pkt_id, t_sent, t_recv, delay_ms FROM packet_delays ORDER BY pkt_id").fetchall()
    assert [r[0] for r in rows] == list(HAND)
    for pkt_id, t_sent, t_recv, delay_ms in rows:
        sent, recv, want = HAND[pkt_id]
        assert (t_sent, t_recv) == (sent, recv), pkt_id
        if want is None:
            assert delay_ms is None, pkt_id
        else:
            assert delay_ms == pytest.approx(want, abs=1e-9), pkt_id
    # delay_s is the same delay in seconds
    for pkt_id, delay_s in tiny.execute("SELECT pkt_id, delay_s FROM packet_delays WHERE delay_s IS NOT NULL").fetchall():
        assert delay_s * 1000 == pytest.approx(HAND[pkt_id][2], abs=1e-9)


def test_flow_stats_delay_columns_are_those_delays(tiny):
    mean, p50, jitter, sent, recv = tiny.execute(
        "SELECT mean_delay_ms, p50_delay_ms, jitter_ms, sent_pkts, recv_pkts FROM flow_stats").fetchone()
    assert (sent, recv) == (3, 2)
    assert mean == pytest.approx(162.5)
    assert p50 == pytest.approx(162.5)       # the median of two values: their midpoint
    assert jitter == pytest.approx(75.0)
    # a window over the whole trace reads packet_delays itself (no stored facts): the same
    mean_w, jitter_w = tiny.execute("SELECT mean_delay_ms, jitter_ms FROM flow_stats_window(0.0, 1.0)").fetchone()
    assert (mean_w, jitter_w) == (pytest.approx(162.5), pytest.approx(75.0))


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    traces = [SAMPLES / "cbr-variants" / "Reno-7.0-seed1" / "packets.tr.zst", SAMPLES / "manet" / "AODV-seed1" / "packets.tr.zst"]
    for t in traces:
        if not t.exists():
            pytest.skip(f"{t} is not there")
    con = connect(_store(tmp_path_factory.mktemp("real"), traces))
    yield con
    close(con)


def test_stored_facts_hold_the_delays_of_packet_delays(real):
    # per flow: the delays of packet_delays in arrival order, next to flow_run_facts' mean and
    # median (s), recomputed here in plain Python from those delays
    rows = real.execute("""
        SELECT r.trace_kind, r.run_id, r.fid, r.src_node, r.dst_node, r.recv_pkts, r.delay_mean_s, r.delay_p50_s,
               (SELECT list(d.delay_s ORDER BY d.recv_line) FROM packet_delays d
                WHERE d.run_id = r.run_id AND d.fid IS NOT DISTINCT FROM r.fid AND d.src_node = r.src_node
                  AND d.src_port = r.src_port AND d.dst_node = r.dst_node AND d.dst_port = r.dst_port
                  AND d.delay_s IS NOT NULL) AS delays
        FROM flow_run_facts r""").fetchall()
    assert {r[0] for r in rows} == {"wired", "wireless"}
    checked = 0
    for kind, _run_id, fid, src, dst, recv, mean_s, p50_s, delays in rows:
        delays = delays or []
        assert len(delays) == recv, (kind, fid, src, dst)
        if not delays:
            assert mean_s is None
            continue
        assert mean_s == pytest.approx(math.fsum(delays) / len(delays), rel=1e-12, abs=1e-15), (kind, fid)
        assert p50_s == pytest.approx(statistics.median(delays), rel=1e-12, abs=1e-15), (kind, fid)
        checked += 1
    assert checked >= 2


def test_is_packet_trace_is_the_formats_list(tiny):
    kinds = sorted(FORMATS)
    got = dict(tiny.execute("SELECT k, is_packet_trace(k) FROM unnest(?) t(k)", [kinds]).fetchall())
    assert got == {k: FORMATS[k].is_packet_trace for k in kinds}
    assert {k for k, yes in got.items() if yes} == set(PACKET_KINDS)
    assert tiny.execute("SELECT is_packet_trace(NULL)").fetchone() == (False,)
