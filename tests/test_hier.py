"""Traces with hierarchical addresses (issue 14, item 5): wired ones and wired-cum-wireless ones,
from real ns-2 runs (tests/tcl/wild_hier_wired.tcl, tests/tcl/wild_wired_cum_wireless.tcl) and
tiny hand-made traces. Expected numbers: by hand, from the Tcl scripts (which node has which
address), and from the plain references (tests/reference_hier.py; tests/reference_metrics.py
on the wired trace with its addresses written flat from the script's map)."""
from __future__ import annotations

import re

import pytest

import reference_hier as refh
import reference_metrics as refm
from conftest import _run_ns
from test_metrics import compare_run
from tracekit.formats.detect import detect_kind
from tracekit.ingest.pipeline import ingest_paths
from tracekit.formats.parsers.hier import pack, unpack
from tracekit.db.query import connect


def rows(con, sql: str, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def ingest(data, path) -> str:
    (res,) = ingest_paths(data, [path])
    assert res.status == "added", res.message
    return res.run_id


@pytest.fixture(scope="module")
def hier_runs(tmp_path_factory):
    """The two real traces, ingested into one store: (connection, {name: run_id}, {name: path})."""
    d = tmp_path_factory.mktemp("hier_traces")
    _run_ns("wild_hier_wired.tcl", "hw.tr", cwd=d)
    _run_ns("wild_wired_cum_wireless.tcl", "wcw.tr", cwd=d)
    _run_ns("wild_wired_cum_wireless.tcl", "wcw_new.tr", "new", cwd=d)
    paths = {"hw": d / "hw.tr", "wcw": d / "wcw.tr", "wcw_new": d / "wcw_new.tr"}
    ids = {name: ingest(d / "store", p) for name, p in paths.items()}
    return connect(d / "store"), ids, paths


# ---------------------------------------------------------------------------------------
# the two forms of one address

def test_packed_addresses_by_hand():
    # ns-2.35's default layout (AddrParams NodeShift 22 11 0, NodeMask 511 2047 2047)
    assert unpack(4194305) == "1.0.1" and pack([1, 0, 1]) == 4194305      # 1 << 22 | 1
    assert unpack(4194304) == "1.0.0" and unpack(0) == "0.0.0"
    assert unpack(2 * 4194304 + 3 * 2048 + 7) == "2.3.7" and pack([2, 3, 7]) == 8394759
    assert refh.unpack(8394759) == "2.3.7" and refh.unpack(2147483647) is None


# ---------------------------------------------------------------------------------------
# tiny hand-made traces

# one TCP packet (uid 4) from the wired node 0 (0.0.0) across the base station 1 (1.0.0) to the
# mobile node 2 (1.0.1), and its ACK (uid 6) back; lines cut from a real run
MIN_WCW = """\
f 0.032821055 _1_ RTR  --- 0 message 32 [0 0 0 0] ------- [4194304:255 2147483647:255 32 0]
+ 1.010978 0 1 tcp 1040 ------- 1 0.0.0.0 1.0.1.0 1 4
- 1.010978 0 1 tcp 1040 ------- 1 0.0.0.0 1.0.1.0 1 4
r 1.014642 0 1 tcp 1040 ------- 1 0.0.0.0 1.0.1.0 1 4
r 1.014642333 _1_ RTR  --- 4 tcp 1040 [0 0 0 0] ------- [0:0 4194305:0 31 0] [1 0] 0 0
f 1.014642333 _1_ RTR  --- 4 tcp 1040 [0 0 0 0] ------- [0:0 4194305:0 30 4194305] [1 0] 0 0
r 1.024543333 _2_ AGT  --- 4 tcp 1040 [13a 1 0 800] ------- [0:0 4194305:0 30 4194305] [1 0] 1 0
s 1.024543333 _2_ AGT  --- 6 ack 40 [0 0 0 0] ------- [4194305:0 0:0 32 0] [1 0] 0 0
r 1.024543333 _2_ RTR  --- 6 ack 40 [0 0 0 0] ------- [4194305:0 0:0 32 0] [1 0] 0 0
f 1.024543333 _2_ RTR  --- 6 ack 60 [0 0 0 0] ------- [4194305:0 0:0 32 4194304] [1 0] 0 0
+ 1.036674 1 0 ack 60 ------- 1 1.0.1.0 0.0.0.0 1 6
- 1.036674 1 0 ack 60 ------- 1 1.0.1.0 0.0.0.0 1 6
r 1.038770 1 0 ack 60 ------- 1 1.0.1.0 0.0.0.0 1 6
"""


def test_minimal_wired_cum_wireless(tmp_path):
    p = tmp_path / "wcw.tr"
    p.write_text(MIN_WCW)
    run = ingest(tmp_path / "store", p)
    con = connect(tmp_path / "store")
    assert rows(con, "SELECT trace_kind, n_events, t_end FROM runs") == [
        {"trace_kind": "hier", "n_events": 13, "t_end": 1.03877}]
    # by hand: node 0 made uid 4 from 0.0.0, node 2 made uid 6 from 1.0.1, node 1 made uid 0
    # from 1.0.0 (its DSDV message); uid 4's `r` AGT line is at node 2 (1.0.1 again)
    assert rows(con, "SELECT node, addr, addr_parts, packed FROM node_addrs ORDER BY node") == [
        {"node": 0, "addr": "0.0.0", "addr_parts": [0, 0, 0], "packed": 0},
        {"node": 1, "addr": "1.0.0", "addr_parts": [1, 0, 0], "packed": 4194304},
        {"node": 2, "addr": "1.0.1", "addr_parts": [1, 0, 1], "packed": 4194305}]
    assert rows(con, "SELECT line_no, src_node, dst_node FROM events WHERE event = '+' ORDER BY line_no") == [
        {"line_no": 2, "src_node": 0, "dst_node": 2}, {"line_no": 11, "src_node": 2, "dst_node": 0}]
    # wireless lines: nodes for the packed addresses, broadcast -1, next hop 4194305 = node 2,
    # and the fid of the packet's wired lines (old-format lines print none)
    assert rows(con, "SELECT line_no, src_node, dst_node, next_hop, fid FROM wireless_events "
                     "WHERE line_no IN (1, 6, 7, 8) ORDER BY line_no") == [
        {"line_no": 1, "src_node": 1, "dst_node": -1, "next_hop": 0, "fid": None},
        {"line_no": 6, "src_node": 0, "dst_node": 2, "next_hop": 2, "fid": 1},
        {"line_no": 7, "src_node": 0, "dst_node": 2, "next_hop": 2, "fid": 1},
        {"line_no": 8, "src_node": 2, "dst_node": 0, "next_hop": 0, "fid": 1}]
    # one flow, one packet: sent by the wired `+` at node 0 (1.010978), delivered by the `r` AGT
    # line at node 2 (1.024543333): 13.565333 ms; rx 1040 B (the sent size: a wireless delivery)
    (fs,) = rows(con, "SELECT * FROM flow_stats WHERE run_id = ?", [run])
    assert (fs["fid"], fs["src_node"], fs["dst_node"], fs["sent_pkts"], fs["recv_pkts"], fs["dropped_pkts"]) == \
        (1, 0, 2, 1, 1, 0)
    assert fs["mean_delay_ms"] == pytest.approx(13.565333, abs=1e-6)
    assert fs["rx_bytes"] == 1040 and fs["t_run_end"] == 1.03877
    assert fs["throughput_kbps"] == pytest.approx(1040 * 8 / 1000 / (1.03877 - 1.010978))
    (fl,) = rows(con, "SELECT trace_kind, src_addr, dst_addr, hdr_bytes FROM all_flows")
    assert fl == {"trace_kind": "hier", "src_addr": "0.0.0", "dst_addr": "1.0.1", "hdr_bytes": 40}
    # the reference agrees
    (exp,) = refh.flow_stats(MIN_WCW).values()
    assert (exp["sent_pkts"], exp["recv_pkts"], exp["rx_bytes"]) == (1, 1, 1040)
    assert exp["mean_delay_ms"] == pytest.approx(fs["mean_delay_ms"], abs=1e-9)


# a wired packet of a hierarchical wired trace: 0.0.0 (node 0) -> 0.1.1 (node 2) through node 1;
# node 2's address is seen only where the packet ends (a wired `r` at node 2, nothing after)
MIN_HIER_WIRED = """\
+ 0.1 0 1 cbr 500 ------- 2 0.0.0.0 0.1.1.3 0 7
- 0.1 0 1 cbr 500 ------- 2 0.0.0.0 0.1.1.3 0 7
r 0.102 0 1 cbr 500 ------- 2 0.0.0.0 0.1.1.3 0 7
+ 0.102 1 2 cbr 500 ------- 2 0.0.0.0 0.1.1.3 0 7
- 0.102 1 2 cbr 500 ------- 2 0.0.0.0 0.1.1.3 0 7
r 0.105 1 2 cbr 500 ------- 2 0.0.0.0 0.1.1.3 0 7
+ 0.2 0 1 cbr 500 ------- 2 0.0.0.0 0.1.1.3 1 8
d 0.2 0 1 cbr 500 ------- 2 0.0.0.0 0.1.1.3 1 8
"""


def test_minimal_hierarchical_wired(tmp_path):
    p = tmp_path / "hw.tr"
    p.write_text(MIN_HIER_WIRED)
    run = ingest(tmp_path / "store", p)
    con = connect(tmp_path / "store")
    assert rows(con, "SELECT node, addr, seen_as FROM node_addrs ORDER BY node") == [
        {"node": 0, "addr": "0.0.0", "seen_as": "source"}, {"node": 2, "addr": "0.1.1", "seen_as": "last_hop"}]
    (fs,) = rows(con, "SELECT * FROM flow_stats WHERE run_id = ?", [run])
    # by hand: 2 sent, 1 delivered after 5 ms, 1 dropped; 500 B over [0.1, 0.2]
    assert (fs["src_node"], fs["src_port"], fs["dst_node"], fs["dst_port"]) == (0, 0, 2, 3)
    assert (fs["sent_pkts"], fs["recv_pkts"], fs["dropped_pkts"], fs["rx_bytes"]) == (2, 1, 1, 500)
    assert fs["mean_delay_ms"] == pytest.approx(5.0) and fs["throughput_kbps"] == pytest.approx(40.0)
    (exp,) = refh.flow_stats(MIN_HIER_WIRED).values()
    assert (exp["sent_pkts"], exp["recv_pkts"], exp["dropped_pkts"], exp["rx_bytes"]) == (2, 1, 1, 500)


def test_detected_after_a_first_line_without_an_address(tmp_path):
    """A wired-cum-wireless trace may start with wireless lines that show no hierarchical
    address (a MAC frame; a mobile node of domain 0): the rest of the first 64 KiB decides."""
    mac = "s 0.01 _2_ MAC  --- 0 RTS 44 [2ae 1 2 0] \n"
    assert detect_kind((mac + MIN_WCW.split("\n", 1)[1]).encode(), "x") == "hier"
    assert detect_kind(mac.encode(), "x") == "wireless"


def test_flat_address_in_a_hierarchical_trace(tmp_path):
    p = tmp_path / "bad.tr"
    p.write_text(MIN_HIER_WIRED + "r 0.3 1 2 cbr 500 ------- 2 0.0 2.3 1 9\n")
    (res,) = ingest_paths(tmp_path / "store", [p])
    assert res.status == "failed"
    assert res.message == (f"{p}:9: field 9 (source address) '0.0' is a flat node.port address in a trace with "
                           "hierarchical addresses (levels.port, like 0.1.1.0): 'r 0.3 1 2 cbr 500 ------- 2 0.0 2.3 1 9'")


def test_one_address_at_two_nodes_is_refused(tmp_path):
    p = tmp_path / "two.tr"     # uid 8 starts at node 3 with the source address of node 0
    p.write_text(MIN_HIER_WIRED + "+ 0.3 3 1 cbr 500 ------- 2 0.0.0.0 0.1.1.3 2 9\n")
    (res,) = ingest_paths(tmp_path / "store", [p])
    assert res.status == "failed"
    assert "address 0.0.0 is at two nodes, 0 and 3" in res.message


# ---------------------------------------------------------------------------------------
# real ns-2 traces

def _flow_stats(con, run: str) -> dict:
    return {(r["fid"], r["src_node"], r["src_port"], r["dst_node"], r["dst_port"]): r
            for r in rows(con, "SELECT * FROM flow_stats WHERE run_id = ?", [run])}


def _agree(got: dict, exp: dict) -> None:
    assert set(got) == set(exp)
    for key, e in exp.items():
        for col, v in e.items():
            g = got[key][col]
            if v is None:
                assert g is None, (key, col)
            elif isinstance(v, (str, bool)):
                assert g == v, (key, col, g, v)
            else:
                assert g == pytest.approx(v, rel=1e-9, abs=1e-9), (key, col, g, v)


def test_real_wired_cum_wireless(hier_runs):
    con, ids, paths = hier_runs
    run = ids["wcw"]
    # the script's addresses: W (node 0) 0.0.0, BS (node 1) 1.0.0, M (node 2) 1.0.1
    assert {r["node"]: r["addr"] for r in rows(con, "SELECT * FROM node_addrs WHERE run_id = ?", [run])} == \
        {0: "0.0.0", 1: "1.0.0", 2: "1.0.1"}
    got = _flow_stats(con, run)
    # the script's three flows: TCP W -> M (fid 1), CBR W -> M (2), CBR M -> W (3)
    assert {(k[0], k[1], k[3]) for k in got} == {(1, 0, 2), (2, 0, 2), (3, 2, 0)}
    assert all(r["recv_pkts"] > 0 for r in got.values())
    by_fid = {k[0]: r for k, r in got.items()}
    assert by_fid[2]["dropped_pkts"] > 0          # the base station's queue overflows
    assert by_fid[3]["dropped_pkts"] > 0          # the mobile node's too: lost before the wire, same flow
    _agree(got, refh.flow_stats(paths["wcw"].read_text()))
    # every data packet of the crossing flows is one packet: one row per pkt_id
    assert rows(con, "SELECT count(*) - count(DISTINCT pkt_id) AS n FROM packets WHERE run_id = ?", [run]) == [{"n": 0}]
    fl = rows(con, "SELECT fid, src_addr, dst_addr FROM all_flows WHERE run_id = ? ORDER BY fid", [run])
    assert [(f["src_addr"], f["dst_addr"]) for f in fl] == [("0.0.0", "1.0.1"), ("0.0.0", "1.0.1"), ("1.0.1", "0.0.0")]
    # the store holds every line: wired ones in events, the others in wireless_events
    lines = paths["wcw"].read_text().splitlines()
    n_wired = sum(1 for ln in lines if ln[:1] in "+-rd" and not ln.split()[2].startswith("_"))
    (n,) = rows(con, "SELECT (SELECT count(*) FROM events WHERE run_id = $r) AS w, "
                     "(SELECT count(*) FROM wireless_events WHERE run_id = $r) AS m", {"r": run})
    assert (n["w"], n["w"] + n["m"]) == (n_wired, len(lines))


def test_real_hierarchical_wired(hier_runs):
    con, ids, paths = hier_runs
    run = ids["hw"]
    # the script creates 1.0.1, 0.0.0, 1.0.0, 0.1.0, 0.0.1 in this order (node ids 0..4); node 3
    # (0.1.0) only forwards, so no line shows its address
    script = {0: "1.0.1", 1: "0.0.0", 2: "1.0.0", 3: "0.1.0", 4: "0.0.1"}
    got_addrs = {r["node"]: r["addr"] for r in rows(con, "SELECT * FROM node_addrs WHERE run_id = ?", [run])}
    assert got_addrs == {n: a for n, a in script.items() if n != 3}
    text = paths["hw"].read_text()
    _agree(_flow_stats(con, run), refh.flow_stats(text))
    # the wired reference, on the trace with each address written flat as its node id (from
    # the script's map): every wired view agrees
    flat_of = {a: str(n) for n, a in script.items()}
    flat = re.sub(r"\b(\d+\.\d+\.\d+)\.(\d+)\b", lambda m: f"{flat_of[m[1]]}.{m[2]}", text)
    compare_run(con, run, flat, {})
    assert refm.all_metrics(flat, {})["flow_stats"]


def test_wired_line_in_a_flat_wireless_trace(tmp_path):
    """A wireless trace of flat addresses with a wired line: not a wired-cum-wireless trace
    (those have hierarchical addresses), so the wired line is a bad line."""
    p = tmp_path / "w.tr"
    p.write_text("s 0.5 _0_ AGT  --- 2 cbr 512 [0 0 0 0] ------- [0:0 2:0 32 0] [1] 0 0\n"
                 "+ 1 0 1 tcp 40 ------- 1 0.0 1.0 0 2\n")
    (res,) = ingest_paths(tmp_path / "store", [p])
    assert res.status == "failed"
    assert res.message.startswith(f"{p}:2: a wired trace line in a wireless trace of flat addresses")


def test_real_wired_cum_wireless_new_format(hier_runs):
    """The same simulation with `$ns use-newtrace` (wireless lines in the -t format, packed
    addresses as `-Is 4194305.0`, with a fid): the same node map and the same flow_stats."""
    con, ids, paths = hier_runs
    assert paths["wcw_new"].read_text().count(" -Is 4194305.0 ") > 0
    q = "SELECT node, addr FROM node_addrs WHERE run_id = ? ORDER BY node"
    assert rows(con, q, [ids["wcw_new"]]) == rows(con, q, [ids["wcw"]])
    new, old = _flow_stats(con, ids["wcw_new"]), _flow_stats(con, ids["wcw"])
    assert set(new) == set(old)
    _agree(new, {key: {k: v for k, v in r.items() if k != "run_id"} for key, r in old.items()})


def test_another_address_layout_is_refused(tmp_path):
    """A wired-cum-wireless trace of another bit layout: the packed numbers do not decode to the
    wired lines' addresses (here 1.0.1 packed as 2 levels of 8 and 15 bits: 1 << 23 | 1)."""
    p = tmp_path / "layout.tr"
    p.write_text(MIN_WCW.replace("4194305", str((1 << 23) | 1)))
    (res,) = ingest_paths(tmp_path / "store", [p])
    assert res.status == "failed"
    assert "packet 4's wireless addresses read 0.0.0 -> 2.0.1 in ns-2's default hierarchical layout" in res.message


@pytest.mark.parametrize("line, reason", [
    ("r 0.3 1 2 cbr 500 ------- 2 0.0.x.0 0.1.1.3 1 9", "field 9 (source address) is not a hierarchical address "
                                                        "(levels.port, like 0.1.1.0): '0.0.x.0'"),
    ("r 0.3 1 2 cbr 500 ------- 2 0.0.0.0 0.1.1.3 x 9", "field 11 (sequence number) is not a number: 'x'"),
    ("s 0.3 _1_ AGT --- 9 cbr", "old-format wireless line with 7 fields; at least 12 expected (event, time, _node_, "
                                "layer, reason, uid, type, size, [MAC header])"),
])
def test_bad_lines_say_what_is_wrong(tmp_path, line, reason):
    p = tmp_path / "bad.tr"
    p.write_text(MIN_HIER_WIRED + line + "\n")
    (res,) = ingest_paths(tmp_path / "store", [p])
    assert res.status == "failed"
    assert res.message == f"{p}:9: {reason}: {line!r}"


def test_an_address_no_line_places(tmp_path):
    """0.1.2 is only the destination of a packet dropped on its first link: no line shows its
    node. Ingested with a warning; node_addrs lists it with a NULL node, the lines a NULL dst_node."""
    p = tmp_path / "lost.tr"
    p.write_text(MIN_HIER_WIRED + "+ 0.3 0 1 cbr 500 ------- 3 0.0.0.1 0.1.2.0 0 10\n"
                                  "d 0.3 0 1 cbr 500 ------- 3 0.0.0.1 0.1.2.0 0 10\n")
    (res,) = ingest_paths(tmp_path / "store", [p])
    assert res.status == "added"
    assert res.warnings == ["hierarchical addresses: 1 address(es) seen at no node (0.1.2): only ever the "
                            "destination of packets lost on the way; their lines have a NULL node"]
    con = connect(tmp_path / "store")
    assert rows(con, "SELECT line_no, node, addr, seen_as FROM node_addrs ORDER BY line_no") == [
        {"line_no": 1, "node": 0, "addr": "0.0.0", "seen_as": "source"},
        {"line_no": 6, "node": 2, "addr": "0.1.1", "seen_as": "last_hop"},
        {"line_no": 9, "node": None, "addr": "0.1.2", "seen_as": None}]
    assert rows(con, "SELECT src_node, dst_node FROM events WHERE line_no = 10") == [{"src_node": 0, "dst_node": None}]
