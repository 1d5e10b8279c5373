"""The wireless views (docs/contract-wireless.md: wireless_flow_stats, wireless_drops,
routing_overhead, node_forwarding, wireless_run_stats, wireless_movements, wireless_energy,
and the wireless rows of flow_stats) against numbers computed independently: by hand on two
tiny traces (the arithmetic is in the comments), and by tests/reference_wireless.py, a
line-by-line Python reading of the contract, on real ns-2 runs of tests/tcl/wireless.tcl in
the old, new and mixed trace formats under AODV, DSDV and DSR.

The tests that need only ns-2 and the reference (the formats agree, the reference on the
hand traces, the real runs exercise the cases) pass without tracekit's wireless support;
the others need the ingest and the views."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

import reference_wireless as ref
from tracekit.ingest.pipeline import ingest_paths
from tracekit.db.query import connect

TCL = Path(__file__).resolve().parent / "tcl"
NS = shutil.which("ns") or "/usr/bin/ns"
REL = 1e-9

needs_ns = pytest.mark.skipif(not os.access(NS, os.X_OK), reason="ns-2 (/usr/bin/ns) is not installed")

FORMATS = ("old", "new", "mixed")
PROTOCOLS = ("AODV", "DSDV", "DSR")
# (format, protocol, energy): every format x protocol, and AODV with an EnergyModel
RUNS = [(f, p, False) for p in PROTOCOLS for f in FORMATS] + [(f, "AODV", True) for f in FORMATS]


def run_id_name(case) -> str:
    fmt, rp, energy = case
    return f"{fmt}-{rp}" + ("-energy" if energy else "")


def rows(con, sql: str, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def approx(v):
    return None if v is None else pytest.approx(v, rel=REL, abs=1e-12)


def check(row: dict, expected: dict, where="") -> None:
    """Integers and strings exact, floats to rel 1e-9, None must be NULL."""
    for col, v in expected.items():
        if isinstance(v, float) or v is None:
            assert row[col] == approx(v), f"{where} {col}: {row[col]} != {v}"
        else:
            assert row[col] == v, f"{where} {col}: {row[col]} != {v}"


def flow_key(r: dict) -> tuple:
    return (r["fid"], r["src_node"], r["src_port"], r["dst_node"], r["dst_port"])


def by_flow(con, view: str, run_id: str) -> dict:
    return {flow_key(r): r for r in rows(con, f"SELECT * FROM {view} WHERE run_id = ?", [run_id])}


def compare_views(con, run_id: str, exp: dict, where: str = "") -> None:
    """Every wireless view of one run against a reference() result."""
    (run,) = rows(con, "SELECT trace_kind, n_events FROM runs WHERE run_id = ?", [run_id])
    assert run["trace_kind"] == "wireless"
    assert rows(con, "SELECT count(*) AS n FROM wireless_events WHERE run_id = ?",
                [run_id])[0]["n"] == len(exp["lines"])

    got = by_flow(con, "wireless_flow_stats", run_id)
    assert set(got) == set(exp["flows"]), where
    for key, e in exp["flows"].items():
        check(got[key], e, f"{where} flow {key}")

    drops = {(r["layer"], r["reason"], r["ptype"]): r
             for r in rows(con, "SELECT * FROM wireless_drops WHERE run_id = ?", [run_id])}
    assert set(drops) == set(exp["drops"]), where
    for key, (n, b) in exp["drops"].items():
        assert drops[key]["drops"] == n, (where, key)
        if b is None:   # only size-less lines (new-format MAC control): NULL or 0 accepted
            assert drops[key]["bytes"] in (None, 0), (where, key, drops[key]["bytes"])
        else:
            assert drops[key]["bytes"] == b, (where, key)

    (ro,) = rows(con, "SELECT * FROM routing_overhead WHERE run_id = ?", [run_id])
    check(ro, exp["routing"], f"{where} routing_overhead")

    fwd = {r["node"]: (r["fwd_data_pkts"], r["fwd_data_bytes"], r["fwd_routing_pkts"])
           for r in rows(con, "SELECT * FROM node_forwarding WHERE run_id = ?", [run_id])}
    assert fwd == exp["forwarding"], where

    (rs,) = rows(con, "SELECT * FROM wireless_run_stats WHERE run_id = ?", [run_id])
    check(rs, exp["run"], f"{where} wireless_run_stats")


# ---------------------------------------------------------------------------------------
# Hand-written traces: a chain 0 -- 1 -- 2 under AODV. A TCP flow 0:0 -> 2:0 (fid 1 in the
# new format) and a CBR flow 1:0 -> 2:1 (fid 2). Only the lines that matter are written.
#
#   AODV: REQUEST sent by 0 (0.85, 48 B) and forwarded by 1 (0.86, 48 B); REPLY sent by 2
#         (0.87, 44 B) and forwarded by 1 (0.875, 44 B).
#   TCP:  uid 0 SYN (40 B, seq 0) 0.90 -> 0.92, relayed by 1
#         uid 4 the sink's ack (2 -> 0), relayed by 1: not data, not a flow
#         uid 1 seq 1 (1040 B) sent 1.00, relayed by 1; RTS/CTS before it; at node 2 an RTS
#               and the data frame itself are lost in a MAC collision (COL), and the retry
#               arrives at 1.03: delivered, NOT dropped
#         uid 2 seq 2 sent 1.10, dropped by node 0's full interface queue (IFQ IFQ): never
#               delivered, dropped
#         uid 5 seq 2 (retransmission) 1.20 -> 1.25, relayed by 1
#         uid 6 seq 1 (spurious retransmission) 1.30 -> 1.32, relayed by 1
#   CBR:  uid 7 seq 0 (200 B) 1.05 -> 1.06 (one hop; the AGT `r` line says 220: AODV's IP
#         header, not counted); uid 8 seq 1 sent 1.15, still in flight. An AODV packet that
#         also carries uid 8 is lost at 1.16 (MAC COL): another (pkt_id, ptype), so CBR
#         uid 8 is not dropped.
#   M:    one movement line.

HAND_OLD = """\
M 0.50000 2 (410.00, 100.00, 0.00), (400.00, 150.00), 5.00
s 0.850000000 _0_ RTR  --- 0 AODV 48 [0 0 0 0] ------- [0:255 -1:255 30 0] [0x2 1 1 [2 0] [0 4]] (REQUEST)
f 0.860000000 _1_ RTR  --- 0 AODV 48 [0 ffffffff 0 800] ------- [0:255 -1:255 29 0] [0x2 2 1 [2 0] [0 4]] (REQUEST)
s 0.870000000 _2_ RTR  --- 0 AODV 44 [0 0 0 0] ------- [2:255 0:255 30 1] [0x4 1 [2 4] 10.000000] (REPLY)
f 0.875000000 _1_ RTR  --- 0 AODV 44 [13a 1 2 800] ------- [2:255 0:255 29 0] [0x4 2 [2 4] 10.000000] (REPLY)
s 0.900000000 _0_ AGT  --- 0 tcp 40 [0 0 0 0] ------- [0:0 2:0 32 0] [0 0] 0 0
f 0.910000000 _1_ RTR  --- 0 tcp 40 [13a 1 0 800] ------- [0:0 2:0 31 2] [0 0] 1 0
r 0.920000000 _2_ AGT  --- 0 tcp 40 [13a 2 1 800] ------- [0:0 2:0 30 2] [0 0] 2 0
s 0.920000000 _2_ AGT  --- 4 ack 40 [0 0 0 0] ------- [2:0 0:0 32 0] [0 0] 0 0
f 0.930000000 _1_ RTR  --- 4 ack 40 [13a 1 2 800] ------- [2:0 0:0 31 0] [0 0] 1 0
r 0.940000000 _0_ AGT  --- 4 ack 40 [13a 0 1 800] ------- [2:0 0:0 30 0] [0 0] 2 0
s 1.000000000 _0_ AGT  --- 1 tcp 1040 [0 0 0 0] ------- [0:0 2:0 32 0] [1 0] 0 0
s 1.000500000 _0_ MAC  --- 0 RTS 44 [52e 1 0 0] 
r 1.000800000 _1_ MAC  --- 0 RTS 44 [52e 1 0 0] 
s 1.000810000 _1_ MAC  --- 0 CTS 38 [3f4 0 0 0] 
f 1.010000000 _1_ RTR  --- 1 tcp 1040 [13a 1 0 800] ------- [0:0 2:0 31 2] [1 0] 1 0
D 1.012000000 _2_ MAC  COL 0 RTS 44 [52e 2 1 0] 
D 1.015000000 _2_ MAC  COL 1 tcp 1098 [13a 2 1 800] ------- [0:0 2:0 31 2] [1 0] 1 0
r 1.030000000 _2_ AGT  --- 1 tcp 1040 [13a 2 1 800] ------- [0:0 2:0 31 2] [1 0] 2 0
s 1.050000000 _1_ AGT  --- 7 cbr 200 [0 0 0 0] ------- [1:0 2:1 32 0] [0] 0 0
r 1.060000000 _2_ AGT  --- 7 cbr 220 [13a 2 1 800] ------- [1:0 2:1 31 2] [0] 1 0
s 1.100000000 _0_ AGT  --- 2 tcp 1040 [0 0 0 0] ------- [0:0 2:0 32 0] [2 0] 0 0
D 1.100000000 _0_ IFQ  IFQ 2 tcp 1040 [0 0 0 0] ------- [0:0 2:0 32 1] [2 0] 0 0
s 1.150000000 _1_ AGT  --- 8 cbr 200 [0 0 0 0] ------- [1:0 2:1 32 0] [1] 0 0
D 1.160000000 _1_ MAC  COL 8 AODV 106 [0 ffffffff 1 800] ------- [1:255 -1:255 30 0] [0x2 1 2 [2 0] [1 6]] (REQUEST)
s 1.200000000 _0_ AGT  --- 5 tcp 1040 [0 0 0 0] ------- [0:0 2:0 32 0] [2 0] 0 0
f 1.220000000 _1_ RTR  --- 5 tcp 1040 [13a 1 0 800] ------- [0:0 2:0 31 2] [2 0] 1 0
r 1.250000000 _2_ AGT  --- 5 tcp 1040 [13a 2 1 800] ------- [0:0 2:0 31 2] [2 0] 2 0
s 1.300000000 _0_ AGT  --- 6 tcp 1040 [0 0 0 0] ------- [0:0 2:0 32 0] [1 0] 0 0
f 1.310000000 _1_ RTR  --- 6 tcp 1040 [13a 1 0 800] ------- [0:0 2:0 31 2] [1 0] 1 0
r 1.320000000 _2_ AGT  --- 6 tcp 1040 [13a 2 1 800] ------- [0:0 2:0 31 2] [1 0] 2 0
"""

# The same events in the new format (RTS/CTS lines stop after -Mt; ARP-free).
_N0 = "-Ni 0 -Nx 10.00 -Ny 100.00 -Nz 0.00 -Ne -1.000000"
_N1 = "-Ni 1 -Nx 210.00 -Ny 100.00 -Nz 0.00 -Ne -1.000000"
_N2 = "-Ni 2 -Nx 410.00 -Ny 100.00 -Nz 0.00 -Ne -1.000000"
HAND_NEW = f"""\
M 0.50000 2 (410.00, 100.00, 0.00), (400.00, 150.00), 5.00
s -t 0.850000000 -Hs 0 -Hd -2 {_N0} -Nl RTR -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.255 -Id -1.255 -It AODV -Il 48 -If 0 -Ii 0 -Iv 30 -P aodv -Pt 0x2 -Ph 1 -Pb 1 -Pd 2 -Pds 0 -Ps 0 -Pss 4 -Pc REQUEST 
f -t 0.860000000 -Hs 1 -Hd -2 {_N1} -Nl RTR -Nw --- -Ma 0 -Md ffffffff -Ms 0 -Mt 800 -Is 0.255 -Id -1.255 -It AODV -Il 48 -If 0 -Ii 0 -Iv 29 -P aodv -Pt 0x2 -Ph 2 -Pb 1 -Pd 2 -Pds 0 -Ps 0 -Pss 4 -Pc REQUEST 
s -t 0.870000000 -Hs 2 -Hd 1 {_N2} -Nl RTR -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 2.255 -Id 0.255 -It AODV -Il 44 -If 0 -Ii 0 -Iv 30 -P aodv -Pt 0x4 -Ph 1 -Pd 2 -Pds 4 -Pl 10.000000 -Pc REPLY 
f -t 0.875000000 -Hs 1 -Hd 0 {_N1} -Nl RTR -Nw --- -Ma 13a -Md 1 -Ms 2 -Mt 800 -Is 2.255 -Id 0.255 -It AODV -Il 44 -If 0 -Ii 0 -Iv 29 -P aodv -Pt 0x4 -Ph 2 -Pd 2 -Pds 4 -Pl 10.000000 -Pc REPLY 
s -t 0.900000000 -Hs 0 -Hd -2 {_N0} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 2.0 -It tcp -Il 40 -If 1 -Ii 0 -Iv 32 -Pn tcp -Ps 0 -Pa 0 -Pf 0 -Po 0 
f -t 0.910000000 -Hs 1 -Hd 2 {_N1} -Nl RTR -Nw --- -Ma 13a -Md 1 -Ms 0 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 40 -If 1 -Ii 0 -Iv 31 -Pn tcp -Ps 0 -Pa 0 -Pf 1 -Po 0 
r -t 0.920000000 -Hs 2 -Hd 2 {_N2} -Nl AGT -Nw --- -Ma 13a -Md 2 -Ms 1 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 40 -If 1 -Ii 0 -Iv 30 -Pn tcp -Ps 0 -Pa 0 -Pf 2 -Po 0 
s -t 0.920000000 -Hs 2 -Hd -2 {_N2} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 2.0 -Id 0.0 -It ack -Il 40 -If 1 -Ii 4 -Iv 32 -Pn tcp -Ps 0 -Pa 0 -Pf 0 -Po 0 
f -t 0.930000000 -Hs 1 -Hd 0 {_N1} -Nl RTR -Nw --- -Ma 13a -Md 1 -Ms 2 -Mt 800 -Is 2.0 -Id 0.0 -It ack -Il 40 -If 1 -Ii 4 -Iv 31 -Pn tcp -Ps 0 -Pa 0 -Pf 1 -Po 0 
r -t 0.940000000 -Hs 0 -Hd 0 {_N0} -Nl AGT -Nw --- -Ma 13a -Md 0 -Ms 1 -Mt 800 -Is 2.0 -Id 0.0 -It ack -Il 40 -If 1 -Ii 4 -Iv 30 -Pn tcp -Ps 0 -Pa 0 -Pf 2 -Po 0 
s -t 1.000000000 -Hs 0 -Hd -2 {_N0} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 1 -Iv 32 -Pn tcp -Ps 1 -Pa 0 -Pf 0 -Po 0 
s -t 1.000500000 -Hs 0 -Hd -2 {_N0} -Nl MAC -Nw --- -Ma 52e -Md 1 -Ms 0 -Mt 0 
r -t 1.000800000 -Hs 1 -Hd -2 {_N1} -Nl MAC -Nw --- -Ma 52e -Md 1 -Ms 0 -Mt 0 
s -t 1.000810000 -Hs 1 -Hd -2 {_N1} -Nl MAC -Nw --- -Ma 3f4 -Md 0 -Ms 0 -Mt 0 
f -t 1.010000000 -Hs 1 -Hd 2 {_N1} -Nl RTR -Nw --- -Ma 13a -Md 1 -Ms 0 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 1 -Iv 31 -Pn tcp -Ps 1 -Pa 0 -Pf 1 -Po 0 
d -t 1.012000000 -Hs 2 -Hd -2 {_N2} -Nl MAC -Nw COL -Ma 52e -Md 2 -Ms 1 -Mt 0 
d -t 1.015000000 -Hs 2 -Hd 2 {_N2} -Nl MAC -Nw COL -Ma 13a -Md 2 -Ms 1 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 1098 -If 1 -Ii 1 -Iv 31 -Pn tcp -Ps 1 -Pa 0 -Pf 1 -Po 0 
r -t 1.030000000 -Hs 2 -Hd 2 {_N2} -Nl AGT -Nw --- -Ma 13a -Md 2 -Ms 1 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 1 -Iv 31 -Pn tcp -Ps 1 -Pa 0 -Pf 2 -Po 0 
s -t 1.050000000 -Hs 1 -Hd -2 {_N1} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 1.0 -Id 2.1 -It cbr -Il 200 -If 2 -Ii 7 -Iv 32 -Pn cbr -Pi 0 -Pf 0 -Po 0 
r -t 1.060000000 -Hs 2 -Hd 2 {_N2} -Nl AGT -Nw --- -Ma 13a -Md 2 -Ms 1 -Mt 800 -Is 1.0 -Id 2.1 -It cbr -Il 220 -If 2 -Ii 7 -Iv 31 -Pn cbr -Pi 0 -Pf 1 -Po 0 
s -t 1.100000000 -Hs 0 -Hd -2 {_N0} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 2 -Iv 32 -Pn tcp -Ps 2 -Pa 0 -Pf 0 -Po 0 
d -t 1.100000000 -Hs 0 -Hd 1 {_N0} -Nl IFQ -Nw IFQ -Ma 0 -Md 0 -Ms 0 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 2 -Iv 32 -Pn tcp -Ps 2 -Pa 0 -Pf 0 -Po 0 
s -t 1.150000000 -Hs 1 -Hd -2 {_N1} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 1.0 -Id 2.1 -It cbr -Il 200 -If 2 -Ii 8 -Iv 32 -Pn cbr -Pi 1 -Pf 0 -Po 0 
d -t 1.160000000 -Hs 1 -Hd -2 {_N1} -Nl MAC -Nw COL -Ma 0 -Md ffffffff -Ms 1 -Mt 800 -Is 1.255 -Id -1.255 -It AODV -Il 106 -If 0 -Ii 8 -Iv 30 -P aodv -Pt 0x2 -Ph 1 -Pb 2 -Pd 2 -Pds 0 -Ps 1 -Pss 6 -Pc REQUEST 
s -t 1.200000000 -Hs 0 -Hd -2 {_N0} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 5 -Iv 32 -Pn tcp -Ps 2 -Pa 0 -Pf 0 -Po 0 
f -t 1.220000000 -Hs 1 -Hd 2 {_N1} -Nl RTR -Nw --- -Ma 13a -Md 1 -Ms 0 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 5 -Iv 31 -Pn tcp -Ps 2 -Pa 0 -Pf 1 -Po 0 
r -t 1.250000000 -Hs 2 -Hd 2 {_N2} -Nl AGT -Nw --- -Ma 13a -Md 2 -Ms 1 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 5 -Iv 31 -Pn tcp -Ps 2 -Pa 0 -Pf 2 -Po 0 
s -t 1.300000000 -Hs 0 -Hd -2 {_N0} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 6 -Iv 32 -Pn tcp -Ps 1 -Pa 0 -Pf 0 -Po 0 
f -t 1.310000000 -Hs 1 -Hd 2 {_N1} -Nl RTR -Nw --- -Ma 13a -Md 1 -Ms 0 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 6 -Iv 31 -Pn tcp -Ps 1 -Pa 0 -Pf 1 -Po 0 
r -t 1.320000000 -Hs 2 -Hd 2 {_N2} -Nl AGT -Nw --- -Ma 13a -Md 2 -Ms 1 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 1040 -If 1 -Ii 6 -Iv 31 -Pn tcp -Ps 1 -Pa 0 -Pf 2 -Po 0 
"""

# TCP 0:0 -> 2:0
HAND_TCP = dict(
    ptype="tcp", src_node=0, src_port=0, dst_node=2, dst_port=0,
    sent_pkts=5,            # uids 0, 1, 2, 5, 6 have an `s` AGT line at node 0
    recv_pkts=4,            # uids 0, 1, 5, 6 have an `r` AGT line at node 2
    dropped_pkts=1,         # uid 2 (IFQ); uid 1's COL was retried and delivered
    tx_bytes=40 + 4 * 1040,             # 4200
    rx_bytes=40 + 3 * 1040,             # 3160 (the `s` AGT sizes of uids 0, 1, 5, 6)
    # first send 0.90, run end 1.32 (the last event line; no stop_s label): 0.42 s; the last
    # delivery is at 1.32 too, so the active throughput is the same
    throughput_kbps=3160 * 8 / 1000 / 0.42,
    active_throughput_kbps=3160 * 8 / 1000 / 0.42,
    in_flight_pkts=0,       # 5 sent - 4 received - uid 2 (dropped)
    # first delivery of each seq: seq 0 (uid 0) 40 - 40 = 0, seq 1 (uid 1) 1000,
    # seq 2 (uid 5) 1000; uid 6 repeats seq 1
    goodput_kbps=2000 * 8 / 1000 / 0.42,
    # delays in arrival order: uid 0 0.92-0.90, uid 1 1.03-1.00, uid 5 1.25-1.20,
    # uid 6 1.32-1.30 = 20, 30, 50, 20 ms; sorted 20, 20, 30, 50
    mean_delay_ms=(20 + 30 + 50 + 20) / 4,      # 30
    p50_delay_ms=25.0,                          # rank 1.5 between 20 and 30
    p95_delay_ms=30 + 0.85 * (50 - 30),         # rank 0.95 x 3 = 2.85: 47
    p99_delay_ms=30 + 0.97 * (50 - 30),         # rank 2.97: 49.4
    jitter_ms=(10 + 20 + 30) / 3,               # |30-20|, |50-30|, |20-50|
    pdr=4 / 5, drop_rate=1 / 5,
    t_first_send=0.9, t_last_recv=1.32,
)
# CBR 1:0 -> 2:1
HAND_CBR = dict(
    ptype="cbr", src_node=1, src_port=0, dst_node=2, dst_port=1,
    sent_pkts=2,            # uids 7, 8
    recv_pkts=1,            # uid 7
    dropped_pkts=0,         # uid 8 in flight; the lost AODV frame with uid 8 is not it
    tx_bytes=400, rx_bytes=200,                 # not the 220 of the `r` AGT line
    throughput_kbps=200 * 8 / 1000 / 0.27,      # first send 1.05 -> run end 1.32
    goodput_kbps=200 * 8 / 1000 / 0.27,         # CBR: the whole size
    active_throughput_kbps=200 * 8 / 1000 / 0.01,   # 1.05 -> last delivery 1.06: 160 kbps
    in_flight_pkts=1,                           # uid 8
    mean_delay_ms=10.0, p50_delay_ms=10.0, p95_delay_ms=10.0, p99_delay_ms=10.0,
    jitter_ms=None,                             # a single delivery
    pdr=0.5, drop_rate=0.0,
    t_first_send=1.05, t_last_recv=1.06,
)
HAND_ROUTING = dict(
    routing_sent_pkts=2,    # `s` RTR AODV at 0 (0.85) and at 2 (0.87)
    routing_fwd_pkts=2,     # `f` RTR AODV at 1 (0.86, 0.875)
    routing_pkts=4,
    routing_bytes=48 + 48 + 44 + 44,            # 184
    data_recv_pkts=4 + 1,
    nrl=4 / 5,
)
HAND_FORWARDING = {
    0: (0, 0, 0),
    # node 1 relays uid 0 (40), the ack uid 4 (40), uids 1, 5, 6 (1040 each) and 2 AODV
    1: (5, 40 + 40 + 3 * 1040, 2),
    2: (0, 0, 0),
}
HAND_RUN = dict(
    n_flows=2, sent_pkts=7, recv_pkts=5, dropped_pkts=1, pdr=5 / 7,
    rx_bytes=3160 + 200,
    throughput_kbps=3360 * 8 / 1000 / (1.32 - 0.90),    # first send -> run end: 64 kbps
    mean_delay_ms=(20 + 30 + 10 + 50 + 20) / 5,         # over all 5 deliveries: 26
    routing_pkts=4, nrl=0.8,
)
HAND_DROPS_OLD = {
    ("MAC", "COL", "RTS"): (1, 44),
    ("MAC", "COL", "tcp"): (1, 1098),
    ("IFQ", "IFQ", "tcp"): (1, 1040),
    ("MAC", "COL", "AODV"): (1, 106),
}
HAND_DROPS_NEW = {
    ("MAC", "COL", "MAC control"): (1, None),   # no size on the line: NULL (or 0) bytes
    ("MAC", "COL", "tcp"): (1, 1098),
    ("IFQ", "IFQ", "tcp"): (1, 1040),
    ("MAC", "COL", "AODV"): (1, 106),
}


def hand_expected(fmt: str) -> dict:
    tcp_fid, cbr_fid = (None, None) if fmt == "old" else (1, 2)
    return dict(
        flows={(tcp_fid, 0, 0, 2, 0): dict(HAND_TCP, fid=tcp_fid),
               (cbr_fid, 1, 0, 2, 1): dict(HAND_CBR, fid=cbr_fid)},
        drops=HAND_DROPS_OLD if fmt == "old" else HAND_DROPS_NEW,
        routing=HAND_ROUTING, forwarding=HAND_FORWARDING, run=HAND_RUN,
    )


@pytest.mark.parametrize("fmt", ["old", "new"])
def test_hand_trace_reference(fmt):
    """The reference reproduces the numbers worked out by hand."""
    got = ref.reference_text(HAND_OLD if fmt == "old" else HAND_NEW)
    exp = hand_expected(fmt)
    assert set(got["flows"]) == set(exp["flows"])
    for key, e in exp["flows"].items():
        check(got["flows"][key], e, f"flow {key}")
    assert got["drops"] == exp["drops"]
    check(got["routing"], exp["routing"])
    assert got["forwarding"] == exp["forwarding"]
    check(got["run"], exp["run"])
    assert len(got["lines"]) == 30          # every line but the M line is an event line


@pytest.fixture(scope="module")
def hand(tmp_path_factory):
    data = tmp_path_factory.mktemp("hand") / "store"
    ids = {}
    for fmt, text in (("old", HAND_OLD), ("new", HAND_NEW)):
        path = data.parent / f"hand_{fmt}.tr"
        path.write_text(text)
        (res,) = ingest_paths(data, [path])
        assert res.status == "added", res.message
        ids[fmt] = res.run_id
    # the new-format trace again, stopped at 2.0 s by the simulation (label stop_s); an extra
    # M line (not an event line) makes it another run
    path = data.parent / "hand_stop.tr"
    path.write_text(HAND_NEW + "M 1.40000 1 (210.00, 100.00, 0.00), (200.00, 150.00), 5.00\n")
    (res,) = ingest_paths(data, [path], labels={"stop_s": "2.0"})
    ids["stop"] = res.run_id
    return connect(data), ids


def test_hand_trace_stop_s(hand):
    """With stop_s = 2.0: TCP 3160 B over 2.0 - 0.90, CBR 200 B over 2.0 - 1.05 (by hand),
    and the reference agrees on every view."""
    con, ids = hand
    fs = by_flow(con, "wireless_flow_stats", ids["stop"])
    check(fs[(1, 0, 0, 2, 0)], dict(throughput_kbps=3160 * 8 / 1000 / 1.1,
                                    goodput_kbps=2000 * 8 / 1000 / 1.1,
                                    active_throughput_kbps=3160 * 8 / 1000 / 0.42, t_run_end=2.0))
    check(fs[(2, 1, 0, 2, 1)], dict(throughput_kbps=200 * 8 / 1000 / 0.95,
                                    active_throughput_kbps=200 * 8 / 1000 / 0.01, in_flight_pkts=1))
    (rs,) = rows(con, "SELECT * FROM wireless_run_stats WHERE run_id = ?", [ids["stop"]])
    check(rs, dict(throughput_kbps=3360 * 8 / 1000 / (2.0 - 0.90)))
    text = HAND_NEW + "M 1.40000 1 (210.00, 100.00, 0.00), (200.00, 150.00), 5.00\n"
    compare_views(con, ids["stop"], ref.reference_text(text, run_end=2.0), "hand stop_s")


@pytest.mark.parametrize("fmt", ["old", "new"])
def test_hand_trace_views(hand, fmt):
    con, ids = hand
    exp = dict(hand_expected(fmt), lines=[None] * 30)
    compare_views(con, ids[fmt], exp, f"hand {fmt}")


@pytest.mark.parametrize("fmt", ["old", "new"])
def test_hand_trace_movement_and_flow_stats(hand, fmt):
    con, ids = hand
    (m,) = rows(con, "SELECT * FROM wireless_movements WHERE run_id = ?", [ids[fmt]])
    check(m, dict(line_no=1, time=0.5, node=2, x=410.0, y=100.0, z=0.0, dest_x=400.0,
                  dest_y=150.0, speed_mps=5.0))
    assert rows(con, "SELECT count(*) AS n FROM wireless_energy WHERE run_id = ?",
                [ids[fmt]])[0]["n"] == 0            # -Ne -1.000000: no energy model
    fs = by_flow(con, "flow_stats", ids[fmt])
    wfs = by_flow(con, "wireless_flow_stats", ids[fmt])
    assert set(fs) == set(wfs)
    for key, r in wfs.items():
        check(fs[key], {c: r[c] for c in ("sent_pkts", "recv_pkts", "pdr", "ptype")})


def test_wireless_views_have_the_contract_columns(hand):
    con, _ = hand
    expected = {
        "wireless_events": "run_id line_no fmt event time node layer reason pkt_id ptype size "
                           "mac_dur mac_dst mac_src mac_type src_node src_port dst_node dst_port "
                           "ttl next_hop fid seq tcp_ack n_forwards x y z detail",
        "wireless_movements": "run_id line_no time node x y z dest_x dest_y speed_mps",
        "wireless_energy": "run_id line_no time node energy_j idle_j sleep_j tx_j rx_j",
        "wireless_logs": "run_id line_no tag time node text",
        "wireless_flows": "run_id fid src_node src_port dst_node dst_port ptype name",
        "wireless_flow_stats": "run_id fid ptype name src_node src_port dst_node dst_port "
                               "sent_pkts recv_pkts dropped_pkts tx_bytes rx_bytes "
                               "throughput_kbps goodput_kbps mean_delay_ms p50_delay_ms "
                               "p95_delay_ms p99_delay_ms jitter_ms pdr drop_rate "
                               "t_first_send t_last_recv",
        "wireless_drops": "run_id layer reason ptype drops bytes",
        "routing_overhead": "run_id routing_sent_pkts routing_fwd_pkts routing_pkts "
                            "routing_bytes data_recv_pkts nrl",
        "node_forwarding": "run_id node fwd_data_pkts fwd_data_bytes fwd_routing_pkts",
        "wireless_run_stats": "run_id n_flows sent_pkts recv_pkts dropped_pkts pdr rx_bytes "
                              "throughput_kbps mean_delay_ms routing_pkts nrl",
    }
    for view, cols in expected.items():
        got = [d[0] for d in con.execute(f"SELECT * FROM {view} LIMIT 0").description]
        missing = set(cols.split()) - set(got)
        assert not missing, f"{view} lacks {sorted(missing)}"


# ---------------------------------------------------------------------------------------
# Real ns-2 runs of tests/tcl/wireless.tcl.

def run_ns(out: Path, fmt: str, rp: str, energy: bool) -> None:
    args = [NS, str(TCL / "wireless.tcl"), fmt, rp, str(out)] + (["energy"] if energy else [])
    proc = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.stat().st_size > 0


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """(fmt, rp, energy) -> (trace path, reference result); each trace generated once."""
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    d = tmp_path_factory.mktemp("wireless")
    out = {}
    for case in RUNS:
        path = d / f"{run_id_name(case)}.tr"
        run_ns(path, *case)
        out[case] = (path, ref.reference(path))
    return out


# The DSR runs are ingested with a stop_s label (a stand-in: as if the simulation had run to
# 20 s, while the trace's last line is at 15 s), so the measurement window ends there.
STOP_S = {"DSR": 20.0}


def expected(traces, case) -> dict:
    """The reference result of a case, with the run's stop_s where it has one."""
    path, exp = traces[case]
    return ref.reference(path, run_end=STOP_S[case[1]]) if case[1] in STOP_S else exp


@pytest.fixture(scope="module")
def real(traces, tmp_path_factory):
    """The traces ingested into one store: (connection, {case: run_id})."""
    data = tmp_path_factory.mktemp("wireless_store") / "store"
    ids = {}
    for case, (path, _) in traces.items():
        stop = STOP_S.get(case[1])
        (res,) = ingest_paths(data, [path], labels={"stop_s": str(stop)} if stop else None)
        assert res.status == "added", f"{path.name}: {res.message}"
        ids[case] = res.run_id
    return connect(data), ids


@pytest.mark.slow
@needs_ns
@pytest.mark.parametrize("case", RUNS, ids=run_id_name)
def test_real_run_matches_reference(real, traces, case):
    con, ids = real
    exp = expected(traces, case)
    compare_views(con, ids[case], exp, run_id_name(case))
    fids = {k[0] for k in exp["flows"]}
    assert fids == ({None} if case[0] == "old" else {1, 2, 3})   # old format: no fid


def _without_fid(res: dict) -> dict:
    return {k[1:]: {c: v for c, v in fl.items() if c != "fid"} for k, fl in res["flows"].items()}


def _drops_as_new(drops: dict) -> dict:
    """Old-format RTS/CTS/ACK drops as the new format writes them: no type, no size."""
    out: dict = {}
    for (layer, reason, ptype), (n, b) in drops.items():
        if ptype in ("RTS", "CTS", "ACK"):
            ptype, b = ref.MAC_CONTROL, None
        k = (layer, reason, ptype)
        n0, b0 = out.get(k, (0, None))
        out[k] = (n0 + n, b if b0 is None else (b0 if b is None else b0 + b))
    return out


@pytest.mark.slow
@needs_ns
@pytest.mark.parametrize("rp", PROTOCOLS)
def test_formats_agree_in_the_reference(traces, rp):
    """old, new and mixed write the same events at the same (%.9f) times, so every per-flow
    number is identical (keyed without fid), and so are routing, forwarding and run stats.
    wireless_drops differ only where the contract says so: new-format RTS/CTS/ACK lines are
    'MAC control' without a size (the mixed file writes its MAC lines in the old format)."""
    res = {fmt: traces[(fmt, rp, False)][1] for fmt in FORMATS}
    old = res["old"]
    for fmt in ("new", "mixed"):
        assert _without_fid(res[fmt]) == _without_fid(old), fmt
        assert res[fmt]["routing"] == old["routing"], fmt
        assert res[fmt]["forwarding"] == old["forwarding"], fmt
        assert res[fmt]["run"] == old["run"], fmt
        assert len(res[fmt]["lines"]) == len(old["lines"]), fmt
    assert res["mixed"]["drops"] == old["drops"]
    assert res["new"]["drops"] == _drops_as_new(old["drops"])
    # the energy variant writes the same events too
    energy = {fmt: traces[(fmt, "AODV", True)][1] for fmt in FORMATS}
    for fmt in FORMATS:
        assert _without_fid(energy[fmt]) == _without_fid(traces[(fmt, "AODV", False)][1])


@pytest.mark.slow
@needs_ns
@pytest.mark.parametrize("rp", PROTOCOLS)
def test_formats_agree_in_the_views(real, rp):
    con, ids = real
    stats = {}
    for fmt in FORMATS:
        got = by_flow(con, "wireless_flow_stats", ids[(fmt, rp, False)])
        stats[fmt] = {k[1:]: {c: v for c, v in r.items() if c not in ("fid", "run_id", "name")}
                      for k, r in got.items()}
    for fmt in ("new", "mixed"):
        assert set(stats[fmt]) == set(stats["old"])
        for key, r in stats["old"].items():
            check(stats[fmt][key], r, f"{fmt} {key}")


@pytest.mark.slow
@needs_ns
def test_real_runs_exercise_the_cases(traces):
    """Guard against the comparisons passing vacuously (checked on the reference)."""
    def res(fmt, rp, energy=False):
        return traces[(fmt, rp, energy)][1]
    for rp in PROTOCOLS:
        r = res("old", rp)
        assert len(r["flows"]) == 3
        assert {fl["ptype"] for fl in r["flows"].values()} == {"cbr", "tcp"}   # acks are no flow
        assert r["routing"]["routing_pkts"] > 0
        assert any(fl["recv_pkts"] > 0 for fl in r["flows"].values())
        assert any(fl["dropped_pkts"] > 0 for fl in r["flows"].values())
        assert any(node[0] > 0 for node in r["forwarding"].values())       # multi-hop
        assert len(r["forwarding"]) == 7
    # route breaks: AODV and DSR drop for want of a route
    assert res("old", "AODV")["drops"].get(("RTR", "NRTE", "cbr"), (0, 0))[0] > 10
    assert any(k[:2] == ("RTR", "NRTE") for k in res("old", "DSR")["drops"])
    assert sum(n for (lay, rea, _), (n, _) in res("old", "DSDV")["drops"].items() if lay == "RTR") > 10
    # forwarded routing packets (AODV, DSR; DSDV never forwards its updates)
    assert res("old", "AODV")["routing"]["routing_fwd_pkts"] > 0
    assert res("old", "DSR")["routing"]["routing_fwd_pkts"] > 0
    # MAC control frames lost; new format: 'MAC control'
    assert any(k[2] == "RTS" for k in res("old", "AODV")["drops"])
    assert any(k[2] == ref.MAC_CONTROL for k in res("new", "AODV")["drops"])
    # DSR: packets lost once (a drop line) and delivered later, and a duplicate delivery
    r = res("old", "DSR")
    lines = r["lines"]
    got_agt = {}
    for ln in lines:
        if ln.event == "r" and ln.layer == "AGT" and ln.ptype != "ack":
            got_agt[(ln.pkt_id, ln.ptype)] = got_agt.get((ln.pkt_id, ln.ptype), 0) + 1
    dropped_once = {(ln.pkt_id, ln.ptype) for ln in lines if ln.event == "d"}
    assert len(set(got_agt) & dropped_once) > 0
    assert any(v > 1 for v in got_agt.values())
    # DSDV: a flow with nothing delivered (NULL delays, zero throughput)
    assert any(fl["recv_pkts"] == 0 for fl in res("old", "DSDV")["flows"].values())
    # packets neither delivered nor dropped (held in a routing buffer at the end)
    assert any(fl["sent_pkts"] > fl["recv_pkts"] + fl["dropped_pkts"]
               for fl in res("old", "DSDV")["flows"].values())


@pytest.mark.slow
@needs_ns
def test_movements(real, traces):
    con, ids = real
    for case in RUNS:
        path, _ = traces[case]
        n_m = sum(1 for line in path.read_text().splitlines() if line.startswith("M "))
        assert n_m == 2
        got = rows(con, "SELECT * FROM wireless_movements WHERE run_id = ? ORDER BY line_no",
                   [ids[case]])
        assert len(got) == n_m
        # M 4.00000 2 (450.00, 300.00, 0.00), (450.00, 700.00), 80.00
        check(got[0], dict(time=4.0, node=2, x=450.0, y=300.0, z=0.0, dest_x=450.0,
                           dest_y=700.0, speed_mps=80.0))
        # M 9.50000 2 (450.00, 700.00, 0.00), (450.00, 300.00), 80.00
        check(got[1], dict(time=9.5, node=2, x=450.0, y=700.0, z=0.0, dest_x=450.0,
                           dest_y=300.0, speed_mps=80.0))


@pytest.mark.slow
@needs_ns
@pytest.mark.parametrize("fmt", FORMATS)
def test_energy(real, traces, fmt):
    con, ids = real
    path, _ = traces[(fmt, "AODV", True)]
    text = path.read_text().splitlines()
    # old-format lines: one [energy E ei I es S et T er R] block each
    blocks = [(n, line.split()) for n, line in enumerate(text, start=1) if "[energy" in line]
    # new-format event lines with -Ne >= 0, and `N -t T -n NODE -e E` lines
    ne = []
    n_lines = []
    for n, line in enumerate(text, start=1):
        f = line.split()
        if len(f) > 1 and f[1] == "-t" and f[0] in ("s", "r", "f", "d"):
            v = float(f[f.index("-Ne") + 1])
            if v >= 0:
                ne.append(n)
        elif f and f[0] == "N":
            n_lines.append((n, f))
    # the energy model writes N lines whatever the format (old-format files too)
    assert n_lines
    if fmt == "old":
        assert blocks and not ne
    elif fmt == "new":
        assert ne and not blocks
    else:
        assert blocks and ne
    got = rows(con, "SELECT * FROM wireless_energy WHERE run_id = ? ORDER BY line_no", [ids[(fmt, "AODV", True)]])
    assert len(got) == len(blocks) + len(ne) + len(n_lines)
    by_line = {r["line_no"]: r for r in got}
    block_lines = {n for n, _ in blocks}
    for r in got:
        full = r["line_no"] in block_lines
        for c in ("idle_j", "sleep_j", "tx_j", "rx_j"):
            assert (r[c] is not None) == full, (r, c)     # old: all five; new: energy only
        assert r["energy_j"] is not None
    if blocks:
        n, f = blocks[-1]
        i = f.index("[energy")
        check(by_line[n], dict(
            time=float(f[1]), node=int(f[2].strip("_")), energy_j=float(f[i + 1]),
            idle_j=float(f[i + 3]), sleep_j=float(f[i + 5]), tx_j=float(f[i + 7]),
            rx_j=float(f[i + 9].rstrip("]"))))
        assert by_line[n]["tx_j"] > 0 and by_line[n]["energy_j"] < 100
    if n_lines:
        n, f = n_lines[-1]
        check(by_line[n], dict(time=float(f[2]), node=int(f[4]), energy_j=float(f[6]),
                               idle_j=None, sleep_j=None, tx_j=None, rx_j=None))


@pytest.mark.slow
@needs_ns
def test_flow_stats_includes_the_wireless_flows(real, traces):
    con, ids = real
    for case in RUNS:
        fs = by_flow(con, "flow_stats", ids[case])
        wfs = by_flow(con, "wireless_flow_stats", ids[case])
        assert set(fs) == set(wfs) == set(traces[case][1]["flows"]), case
        for key, r in wfs.items():
            check(fs[key], {c: r[c] for c in ("sent_pkts", "recv_pkts", "dropped_pkts", "pdr",
                                                 "ptype", "rx_bytes", "mean_delay_ms")},
                  f"{run_id_name(case)} {key}")


@pytest.mark.slow
@needs_ns
@pytest.mark.parametrize("fmt", FORMATS)
def test_dsr_logs(real, traces, fmt):
    """DSR's own S... lines (SFs, SFf, Sconfig, ...) land in wireless_logs, not the metrics."""
    con, ids = real
    path, _ = traces[(fmt, "DSR", False)]
    n_s = sum(1 for line in path.read_text().splitlines() if line[:1] == "S")
    assert n_s > 100
    got = rows(con, "SELECT count(*) AS n FROM wireless_logs WHERE run_id = ?", [ids[(fmt, "DSR", False)]])
    assert got[0]["n"] == n_s


# A packet type without sequence numbers (an Application/Traffic/Exponential source: ptype
# `exp`, no -P part): goodput counts each delivered packet once. Two packets of 200 B sent at
# 1.0 and 1.5, delivered at 1.1 and 1.6: rx 400 B over 1.6 - 1.0 = 0.6 s -> 400 * 8 / 1000 /
# 0.6 = 5.333... kbit/s, and goodput the same (a single "seq" would count 200 B only).
EXP_NEW = """\
s -t 1.000000000 -Hs 0 -Hd -2 -Ni 0 -Nx 0.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 1.0 -It exp -Il 200 -If 7 -Ii 10 -Iv 32 
r -t 1.100000000 -Hs 1 -Hd 1 -Ni 1 -Nx 0.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- -Ma 13a -Md 1 -Ms 0 -Mt 800 -Is 0.0 -Id 1.0 -It exp -Il 220 -If 7 -Ii 10 -Iv 32 
s -t 1.500000000 -Hs 0 -Hd -2 -Ni 0 -Nx 0.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 1.0 -It exp -Il 200 -If 7 -Ii 11 -Iv 32 
r -t 1.600000000 -Hs 1 -Hd 1 -Ni 1 -Nx 0.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- -Ma 13a -Md 1 -Ms 0 -Mt 800 -Is 0.0 -Id 1.0 -It exp -Il 220 -If 7 -Ii 11 -Iv 32 
"""


def test_goodput_without_sequence_numbers(tmp_path):
    path = tmp_path / "exp.tr"
    path.write_text(EXP_NEW)
    (res,) = ingest_paths(tmp_path / "store", [path])
    con = connect(tmp_path / "store")
    (r,) = rows(con, "SELECT * FROM wireless_flow_stats WHERE run_id = ?", [res.run_id])
    assert (r["fid"], r["ptype"], r["sent_pkts"], r["recv_pkts"], r["rx_bytes"]) == (7, "exp", 2, 2, 400)
    assert r["throughput_kbps"] == pytest.approx(400 * 8 / 1000 / 0.6, rel=1e-9)
    assert r["goodput_kbps"] == pytest.approx(400 * 8 / 1000 / 0.6, rel=1e-9)
    ref_flow = next(iter(ref.reference_text(EXP_NEW)["flows"].values()))
    assert ref_flow["goodput_kbps"] == pytest.approx(r["goodput_kbps"], rel=1e-9)
