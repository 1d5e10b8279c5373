"""Wireless trace ingest on real ns-2 output: detection, every line landing in the right table
with the right values, bad input, cut-off, compressed and chunked input.

The traces come from ns-2.35 running a copy of the probe script shared/ns2-probe/02_wireless.tcl
(3 nodes in a chain, TCP 0->2 and CBR 1->2, a move at 1.5 s) in the old CMU format, the new
-t format and the mixed file (use-newtrace called after the nodes exist: AGT lines new, the
rest old) under AODV, DSDV and DSR, plus AODV runs with an EnergyModel. Every expected value
is read from the trace text here, with plain Python splitting (and awk for the event counts),
or written down by hand from a quoted line; nothing is taken from tracekit's parser.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import zstandard

from tracekit.formats.detect import detect_kind
from tracekit.ingest.pipeline import ingest_file
from tracekit.formats.parsers.wireless import WirelessParser
from tracekit.db.query import connect
from tracekit.store.store import Store

NS = shutil.which("ns") or "/usr/bin/ns"
AWK = shutil.which("gawk") or shutil.which("mawk") or shutil.which("awk")

# the 3-node chain of shared/ns2-probe/02_wireless.tcl, with an optional energy model
WIRELESS_TCL = Path(__file__).resolve().parent / "tcl" / "wireless_chain.tcl"

TCL_FMT = {"old": "old", "new": "new", "mixed": "newafternodes"}
PLAIN = [f"{fmt}-{rp}" for rp in ("AODV", "DSDV", "DSR") for fmt in TCL_FMT]
ENERGY = [f"{fmt}-AODV-energy" for fmt in TCL_FMT]
EVENT_CODES = ("s", "r", "f", "d", "D")


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, Path]:
    """name ('old-AODV', 'mixed-DSR', 'new-AODV-energy', ...) -> trace file, each run once."""
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    d = tmp_path_factory.mktemp("wireless_ingest")
    out = {}
    for name in PLAIN + ENERGY:
        fmt, rp, *energy = name.split("-")
        p = subprocess.run([NS, str(WIRELESS_TCL), TCL_FMT[fmt], rp, *energy], cwd=d, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, f"ns wireless_chain.tcl {name}: {p.stderr[-2000:]}"
        f = d / f"{'out_wlE' if energy else 'out_wl'}_{TCL_FMT[fmt]}_{rp}.tr"
        assert f.stat().st_size > 0
        out[name] = f
    return out


@pytest.fixture(scope="module")
def store(traces, tmp_path_factory) -> tuple[Path, dict[str, str], list[dict]]:
    """All the traces ingested with one `tracekit ingest` command: (store, name -> run id,
    the `tracekit runs --format json` rows)."""
    from conftest import TRACEKIT_CMD

    data = tmp_path_factory.mktemp("wireless_store") / "store"
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("TRACEKIT_DATA", None)
    p = subprocess.run([*TRACEKIT_CMD, "ingest", *map(str, traces.values()), "--data", str(data)],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    p = subprocess.run([*TRACEKIT_CMD, "runs", "--format", "json", "--data", str(data)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 0, p.stderr
    runs = json.loads(p.stdout)
    by_source = {r["source"]: r["run_id"] for r in runs}
    return data, {name: by_source[str(f.resolve())] for name, f in traces.items()}, runs


# -- independent reading of the trace text -----------------------------------------------------

def pairs(t: list[str]) -> dict[str, str]:
    """A new-format line's `-key value` pairs (after the event code), by plain splitting."""
    return dict(zip(t[1::2], t[2::2]))


def read_trace(text: str) -> dict:
    """What each line of a wireless trace is, by plain splitting: event lines (line_no ->
    fmt, event with D as d, layer, ptype, reason with --- as None), movement rows, energy
    readings and DSR log lines."""
    events, moves, energy, logs = {}, [], [], []
    for no, line in enumerate(text.split("\n"), 1):
        t = line.split()
        if not t:
            continue
        if t[0] in EVENT_CODES:
            if t[1] == "-t":
                kv = pairs(t)
                ptype = kv.get("-It") or ("ARP" if kv.get("-P") == "arp" else None)
                events[no] = ("new", t[0].lower(), kv["-Nl"], ptype, None if kv["-Nw"] == "---" else kv["-Nw"])
                if float(kv["-Ne"]) >= 0:
                    energy.append((no, float(kv["-t"]), int(kv["-Ni"]), float(kv["-Ne"]), None, None, None, None))
            else:
                events[no] = ("old", t[0].lower(), t[3], t[6], None if t[4] == "---" else t[4])
                if "[energy" in t:
                    i = t.index("[energy")
                    e, ei, es, et, er = (float(t[i + k].rstrip("]")) for k in (1, 3, 5, 7, 9))
                    assert t[i + 2 : i + 9 : 2] == ["ei", "es", "et", "er"]
                    energy.append((no, float(t[1]), int(t[2].strip("_")), e, ei, es, et, er))
        elif t[0] == "M":
            v = line.replace("(", " ").replace(")", " ").replace(",", " ").split()
            moves.append((no, float(v[1]), int(v[2]), *map(float, v[3:9])))
        elif t[0] == "N":
            assert t[1::2] == ["-t", "-n", "-e"]
            energy.append((no, float(t[2]), int(t[4]), float(t[6]), None, None, None, None))
        elif t[0].startswith("S"):
            node = int(t[2].strip("_")) if len(t) > 2 and t[2].startswith("_") and t[2].endswith("_") else None
            logs.append((no, t[0], float(t[1]), node))
        else:
            raise AssertionError(f"line {no}: not a line this test knows: {line!r}")
    return {"events": events, "moves": moves, "energy": energy, "logs": logs}


def awk_event_lines(path: Path) -> int:
    if AWK is None:
        pytest.skip("no awk")
    p = subprocess.run([AWK, '$1 ~ /^[srfdD]$/ {n++} END {print n+0}', str(path)], capture_output=True, text=True, check=True)
    return int(p.stdout)


def query(data: Path, sql: str, params=()) -> list[tuple]:
    con = connect(data)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def rows(data: Path, sql: str, params=()) -> list[dict]:
    con = connect(data)
    try:
        cur = con.execute(sql, list(params))
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()


# -- detection and the CLI -------------------------------------------------------------------

def test_every_trace_ingests_as_wireless(traces, store):
    """old, new and mixed files, every protocol, with and without energy: one `tracekit
    ingest` exits 0 and `tracekit runs` says wireless with n_events = the awk count."""
    data, ids, runs = store
    assert len(runs) == len(traces) == 12
    by_id = {r["run_id"]: r for r in runs}
    for name, f in traces.items():
        r = by_id[ids[name]]
        n = awk_event_lines(f)
        assert n > 100, name
        assert (r["trace_kind"], r["n_events"]) == ("wireless", n), name
        assert r["run_id"] == hashlib.sha256(f.read_bytes()).hexdigest()[:16]
    # sanity of the traces themselves: the formats really are what their names say
    for name, f in traces.items():
        fmts = Counter(v[0] for v in read_trace(f.read_text())["events"].values())
        expected = {"old": {"old"}, "new": {"new"}, "mixed": {"old", "new"}}[name.split("-")[0]]
        assert set(fmts) == expected, (name, fmts)


def _first(f: Path, pred) -> str:
    return next(line for line in f.read_text().split("\n") if line and pred(line))


FIRST_LINES = {   # what the first line is: (trace, how to find such a line in it)
    "old event": ("old-AODV", lambda s: s.startswith("s ") and "_0_" in s),
    "new event": ("new-AODV", lambda s: s.startswith("s -t ")),
    "M movement": ("mixed-AODV", lambda s: s.startswith("M ")),
    "DSR Sconfig": ("old-DSR", lambda s: s.startswith("Sconfig ")),
    "N energy": ("new-AODV-energy", lambda s: s.startswith("N -t ")),
}


@pytest.mark.parametrize("what", list(FIRST_LINES))
def test_detected_from_the_first_line(what, traces, tmp_path, tracekit_inproc):
    name, pred = FIRST_LINES[what]
    line = _first(traces[name], pred)
    assert detect_kind((line + "\n").encode(), "x.tr") == "wireless"
    # the same line first in a file, the rest of the trace after it
    text = traces[name].read_text().split("\n")
    text.remove(line)
    f = tmp_path / "first.tr"
    f.write_text(line + "\n" + "\n".join(text))
    assert f.read_text().split("\n", 1)[0] == line
    data = tmp_path / "store"
    p = tracekit_inproc("ingest", f, data=data)
    assert p.returncode == 0, p.stderr
    [row] = json.loads(tracekit_inproc("runs", "--format", "json", data=data).stdout)
    assert (row["trace_kind"], row["n_events"]) == ("wireless", awk_event_lines(f))


# -- every line in the right table -------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("name", PLAIN + ENERGY)
def test_row_counts_equal_the_text(name, traces, store):
    data, ids, _ = store
    rid = ids[name]
    want = read_trace(traces[name].read_text())
    # events by layer, event type and packet type
    got = {(layer, ev, pt): n for layer, ev, pt, n in query(
        data, "SELECT layer, event, ptype, count(*) FROM wireless_events WHERE run_id = ? GROUP BY ALL", [rid])}
    assert got == dict(Counter((v[2], v[1], v[3]) for v in want["events"].values()))
    assert set(ev for _, ev, _ in got) <= {"s", "r", "f", "d"}          # D stored as d
    # and line by line: which line, which format, event, layer, ptype, reason
    got = {r[0]: tuple(r[1:]) for r in query(
        data, "SELECT line_no, fmt, event, layer, ptype, reason FROM wireless_events WHERE run_id = ?", [rid])}
    assert got == want["events"]
    # movements, energy, DSR logs: the rows, values included
    assert query(data, "SELECT line_no, time, node, x, y, z, dest_x, dest_y, speed_mps FROM wireless_movements "
                       "WHERE run_id = ? ORDER BY line_no", [rid]) == want["moves"]
    assert len(want["moves"]) == 1
    assert query(data, "SELECT line_no, time, node, energy_j, idle_j, sleep_j, tx_j, rx_j FROM wireless_energy "
                       "WHERE run_id = ? ORDER BY line_no", [rid]) == want["energy"]
    assert query(data, "SELECT line_no, tag, time, node FROM wireless_logs WHERE run_id = ? ORDER BY line_no",
                 [rid]) == want["logs"]
    assert (len(want["logs"]) > 0) == name.endswith("DSR")


@pytest.mark.slow
def test_energy_rows(traces, store):
    """wireless_energy: old = [energy blocks + N lines, new = lines with -Ne >= 0 + N lines,
    counted with plain string search; the old and new runs give the same readings."""
    data, ids, _ = store
    n = {}
    for name in ENERGY:
        text = traces[name].read_text()
        lines = text.split("\n")
        n_lines = sum(1 for s in lines if s.startswith("N -t "))
        blocks = text.count("[energy ")
        ne = sum(1 for s in lines if " -Ne " in s and not s.split(" -Ne ")[1].startswith("-"))
        [(got,)] = query(data, "SELECT count(*) FROM wireless_energy WHERE run_id = ?", [ids[name]])
        assert got == blocks + ne + n_lines, name
        n[name] = (blocks, ne, n_lines)
    events = awk_event_lines(traces["old-AODV-energy"])
    assert n["old-AODV-energy"] == (events, 0, n["old-AODV-energy"][2])     # every event line has a block
    assert n["new-AODV-energy"] == (0, events, n["old-AODV-energy"][2])
    assert n["old-AODV-energy"][2] > 1000
    assert 0 < n["mixed-AODV-energy"][0] < events and n["mixed-AODV-energy"][0] + n["mixed-AODV-energy"][1] == events
    sql = "SELECT line_no, time, node, energy_j FROM wireless_energy WHERE run_id = ? ORDER BY line_no"
    old, new = (query(data, sql, [ids[f"{f}-AODV-energy"]]) for f in ("old", "new"))
    assert old == new
    # one line of each kind by hand
    [r] = rows(data, "SELECT e.* FROM wireless_energy e JOIN wireless_events v USING (run_id, line_no) "
                     "WHERE run_id = ? AND v.ptype = 'RTS' AND v.time = 0.504337227", [ids["old-AODV-energy"]])
    # s 0.504337227 _1_ MAC  --- 0 RTS 44 [52e 2 1 0] [energy 99.994014 ei 0.005 es 0.000 et 0.001 er 0.000]
    assert (r["node"], r["energy_j"], r["idle_j"], r["sleep_j"], r["tx_j"], r["rx_j"]) == (1, 99.994014, 0.005, 0.0, 0.001, 0.0)
    [r] = rows(data, "SELECT * FROM wireless_energy WHERE run_id = ? AND time = 0.500116 AND node = 2", [ids["new-AODV-energy"]])
    # N -t 0.500116 -n 2 -e 99.994744
    assert (r["energy_j"], r["idle_j"], r["tx_j"]) == (99.994744, None, None)


# -- values of specific lines, by hand ------------------------------------------------------------

COLS = ("event", "time", "node", "layer", "reason", "pkt_id", "ptype", "size", "mac_dur", "mac_dst", "mac_src",
        "mac_type", "src_node", "src_port", "dst_node", "dst_port", "ttl", "next_hop", "fid", "seq", "tcp_ack",
        "n_forwards", "x", "y", "z", "detail")


def _row(data, rid, where: str) -> dict:
    [r] = rows(data, f"SELECT {', '.join(COLS)}, fmt FROM wireless_events WHERE run_id = ? AND {where}", [rid])
    return r


def _same_line_no(traces, old_prefix: str, new_prefix: str) -> int:
    """The line number of an old-format line in old-AODV; the new-AODV line there must be the
    same event in the new format."""
    old = traces["old-AODV"].read_text().split("\n")
    new = traces["new-AODV"].read_text().split("\n")
    [i] = [i for i, s in enumerate(old) if s.startswith(old_prefix)]
    assert new[i].startswith(new_prefix), (old[i], new[i])
    return i + 1


HAND = [
    # TCP data delivered at node 2, two hops
    ("r 0.517429893 _2_ AGT  --- 0 tcp 40 [13a 2 1 800] ------- [0:0 2:0 29 2] [0 0] 2 0",
     "r -t 0.517429893 -Hs 2 -Hd 2 -Ni 2 -Nx 410.00 -Ny 100.00 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- -Ma 13a -Md 2 -Ms 1 -Mt 800 -Is 0.0 -Id 2.0 -It tcp -Il 40 -If 1 -Ii 0 -Iv 29 -Pn tcp -Ps 0 -Pa 0 -Pf 2 -Po 0 ",
     dict(event="r", time=0.517429893, node=2, layer="AGT", reason=None, pkt_id=0, ptype="tcp", size=40, mac_dur=0x13a,
          mac_dst=2, mac_src=1, mac_type=0x800, src_node=0, src_port=0, dst_node=2, dst_port=0, ttl=29, next_hop=2,
          seq=0, tcp_ack=0, n_forwards=2, detail=None),
     dict(fid=None, x=None, y=None, z=None), dict(fid=1, x=410.0, y=100.0, z=0.0)),
    # CBR send at the agent: 256 bytes, seq 0, uid 20
    ("s 0.700000000 _1_ AGT  --- 20 cbr 256 [0 0 0 0] ------- [1:0 2:1 32 0] [0] 0 0",
     "s -t 0.700000000 -Hs 1 -Hd -2 -Ni 1 ",
     dict(event="s", time=0.7, node=1, layer="AGT", reason=None, pkt_id=20, ptype="cbr", size=256, mac_dur=0,
          mac_dst=0, mac_src=0, mac_type=0, src_node=1, src_port=0, dst_node=2, dst_port=1, ttl=32, seq=0,
          tcp_ack=None, n_forwards=0, detail=None),
     dict(next_hop=0, fid=None), dict(next_hop=-2, fid=2, x=210.0)),
    # AODV route request broadcast at the MAC: the routing part verbatim in detail
    ("s 0.500115000 _0_ MAC  --- 0 AODV 106 [0 ffffffff 0 800] ------- [0:255 -1:255 30 0] [0x2 1 1 [2 0] [0 4]] (REQUEST)",
     "s -t 0.500115000 -Hs 0 -Hd -2 -Ni 0 ",
     dict(event="s", node=0, layer="MAC", reason=None, pkt_id=0, ptype="AODV", size=106, mac_dur=0,
          mac_dst=0xFFFFFFFF, mac_src=0, mac_type=0x800, src_node=0, src_port=255, dst_node=-1, dst_port=255,
          ttl=30, seq=None, tcp_ack=None, n_forwards=None),
     dict(detail="[0x2 1 1 [2 0] [0 4]] (REQUEST)", next_hop=0),
     dict(detail="-P aodv -Pt 0x2 -Ph 1 -Pb 1 -Pd 2 -Pds 0 -Ps 0 -Pss 4 -Pc REQUEST", next_hop=-2, fid=0)),
    # ARP request: MAC type 0x806, no IP header; the new format has no type, size or uid
    ("s 0.503353560 _2_ MAC  --- 0 ARP 86 [0 ffffffff 2 806] ------- [REQUEST 2/2 0/1]",
     "s -t 0.503353560 -Hs 2 -Hd -2 -Ni 2 ",
     dict(event="s", node=2, layer="MAC", reason=None, ptype="ARP", mac_dur=0, mac_dst=0xFFFFFFFF, mac_src=2,
          mac_type=0x806, src_node=None, src_port=None, dst_node=None, dst_port=None, ttl=None, seq=None,
          fid=None, n_forwards=None),
     dict(pkt_id=0, size=86, detail="[REQUEST 2/2 0/1]", next_hop=None),
     dict(pkt_id=None, size=None, detail="-P arp -Po REQUEST -Pms 2 -Ps 2 -Pmd 0 -Pd 1", next_hop=-2)),
    # MAC control frame: RTS (the old format names it; the new one has no -It at all)
    ("s 0.504337227 _1_ MAC  --- 0 RTS 44 [52e 2 1 0]",
     "s -t 0.504337227 -Hs 1 -Hd -2 -Ni 1 ",
     dict(event="s", node=1, layer="MAC", reason=None, mac_dur=0x52e, mac_dst=2, mac_src=1, mac_type=0,
          src_node=None, dst_node=None, ttl=None, seq=None, detail=None, fid=None),
     dict(ptype="RTS", size=44, pkt_id=0), dict(ptype=None, size=None, pkt_id=None)),
    ("r 0.505004560 _1_ MAC  --- 0 CTS 38 [3f4 1 0 0]", "r -t 0.505004560 -Hs 1 ",
     dict(event="r", node=1, layer="MAC", mac_dur=0x3f4, mac_dst=1, mac_src=0, mac_type=0, src_node=None),
     dict(ptype="CTS", size=38), dict(ptype=None, size=None)),
    # a collision: D in the old format, d in the new, stored as d with reason COL
    ("D 0.709680227 _0_ MAC  COL 0 RTS 44 [58e 0 1 0]", "d -t 0.709680227 -Hs 0 ",
     dict(event="d", node=0, layer="MAC", reason="COL", mac_dur=0x58e, mac_dst=0, mac_src=1, mac_type=0),
     dict(ptype="RTS", size=44), dict(ptype=None, size=None)),
    # a TCP segment still queued at the end
    ("D 3.000000000 _0_ IFQ  END 212 tcp 1040 [0 1 0 800] ------- [0:0 2:0 30 1] [107 0] 0 0",
     "d -t 3.000000000 -Hs 0 -Hd 1 -Ni 0 ",
     dict(event="d", time=3.0, node=0, layer="IFQ", reason="END", pkt_id=212, ptype="tcp", size=1040, mac_dur=0,
          mac_dst=1, mac_src=0, mac_type=0x800, src_node=0, src_port=0, dst_node=2, dst_port=0, ttl=30,
          next_hop=1, seq=107, tcp_ack=0, n_forwards=0, detail=None),
     dict(fid=None), dict(fid=1)),
]


@pytest.mark.parametrize("old_line, new_prefix, both, old_only, new_only", HAND,
                         ids=["tcp-r-AGT", "cbr-s-AGT", "AODV-REQUEST", "ARP", "RTS", "CTS", "D-COL", "D-END"])
def test_line_values_by_hand(traces, store, old_line, new_prefix, both, old_only, new_only):
    data, ids, _ = store
    no = _same_line_no(traces, old_line, new_prefix)
    old = _row(data, ids["old-AODV"], f"line_no = {no}")
    new = _row(data, ids["new-AODV"], f"line_no = {no}")
    assert (old["fmt"], new["fmt"]) == ("old", "new")
    for r, extra in ((old, old_only), (new, new_only)):
        for col, v in {**both, **extra}.items():
            assert r[col] == v, (r["fmt"], col, r[col], v)


def test_reason_is_null_exactly_for_dashes(traces, store):
    data, ids, _ = store
    for name in ("old-AODV", "new-DSR", "mixed-AODV"):
        want = Counter(v[4] for v in read_trace(traces[name].read_text())["events"].values())
        assert want[None] > 1000 and {"COL", "END"} <= set(want)
        got = dict(query(data, "SELECT reason, count(*) FROM wireless_events WHERE run_id = ? GROUP BY reason", [ids[name]]))
        assert got == dict(want), name


KEYS = ("event", "time", "node", "layer", "reason", "ptype", "size", "pkt_id", "mac_dur", "mac_dst", "mac_src",
        "mac_type", "src_node", "src_port", "dst_node", "dst_port", "ttl", "seq", "tcp_ack", "n_forwards")


@pytest.mark.slow
@pytest.mark.parametrize("rp", ["AODV", "DSDV", "DSR"])
def test_old_and_new_format_give_the_same_rows(rp, traces, store):
    """The same simulation in both formats: line i is the same event, so the rows agree on
    every column both formats carry (new-format MAC control and ARP lines have no type, size
    or uid); the mixed file's rows are the new ones on AGT lines and the old ones elsewhere."""
    data, ids, _ = store
    old_t, new_t = (read_trace(traces[f"{f}-{rp}"].read_text())["events"] for f in ("old", "new"))
    assert old_t.keys() == new_t.keys()
    sql = f"SELECT line_no, fmt, fid, next_hop, detail, {', '.join(KEYS)} FROM wireless_events WHERE run_id = ? ORDER BY line_no"
    old, new, mixed = (rows(data, sql, [ids[f"{f}-{rp}"]]) for f in ("old", "new", "mixed"))
    assert [r["line_no"] for r in old] == [r["line_no"] for r in new] == [r["line_no"] for r in mixed] == sorted(old_t)
    n_ctrl = 0
    for o, n, m in zip(old, new, mixed):
        ctrl = o["ptype"] in ("RTS", "CTS", "ACK", "ARP")
        n_ctrl += ctrl
        for k in KEYS:
            if ctrl and k in ("ptype", "size", "pkt_id") and n[k] is None:
                assert not (k == "ptype" and o["ptype"] == "ARP"), "new-format ARP lines are ARP"
                continue
            assert o[k] == n[k], (o["line_no"], k, o[k], n[k])
        assert m == (n if o["layer"] == "AGT" else o), o["line_no"]
    assert n_ctrl > 20


# -- bad input -----------------------------------------------------------------------------------

BAD = {   # name: (trace, the bad line, words its reason must hold)
    "tcp non-numeric size": ("old-AODV", "s 0.521621893 _0_ AGT  --- 2 tcp 1O40 [0 0 0 0] ------- [0:0 2:0 32 0] [1 0] 0 0",
                             "field 8 (size) is not a number: '1O40'"),
    "old line cut in the IP header": ("mixed-AODV", "s 0.521621893 _0_ RTR  --- 2 tcp 1040 [0 0 0 0] ------- [0:0 2:0",
                                      "tcp line without an IP header"),
    "old line cut in the MAC header": ("old-DSR", "r 0.515098893 _1_ MAC  --- 0 tcp 40 [13a 1",
                                       "old-format wireless line with 10 fields; at least 12 expected"),
    "cbr line cut": ("mixed-DSR", "r 0.709099893 _2_ RTR  --- 20 cbr 276 [13a 2 1 800] ------- [1:0 2:1 30 2] [0",
                     "cbr line without a CBR part"),
    "new line without -t value": ("new-AODV", "s -t -Hs 0 -Hd -2 -Ni 0 -Nx 10.00 -Ny 100.00 -Nz 0.00 -Ne -1.000000 -Nl AGT "
                                  "-Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 2.0 -It tcp -Il 40 -If 1 -Ii 0 -Iv 32 "
                                  "-Pn tcp -Ps 0 -Pa 0 -Pf 0 -Po 0 ", "-t (time) is not a number: '-Hs'"),
    "new line: only -t": ("mixed-AODV", "r -t ", "new-format line without -t (time)"),
    "new tcp line without seq": ("new-DSR", "s -t 0.5 -Hs 0 -Hd -2 -Ni 0 -Nx 10.00 -Ny 100.00 -Nz 0.00 -Ne -1.000000 "
                                 "-Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 2.0 -It tcp -Il 40 -If 1 -Ii 0 "
                                 "-Iv 32 -Pn tcp -Pa 0 -Pf 0 -Po 0 ", "tcp line without a numeric -Ps (sequence number)"),
    "unknown first token": ("mixed-DSR", "x 0.5 _0_ AGT  --- 2 tcp 1040 [0 0 0 0] ------- [0:0 2:0 32 0] [1 0] 0 0",
                            "unknown event 'x'"),
    # beyond the stored 32-bit column: a bad line, not a NULL size / node
    "size beyond 32 bits": ("old-AODV", "s 0.521621893 _0_ AGT  --- 2 tcp 4294967336 [0 0 0 0] ------- [0:0 2:0 32 0] [1 0] 0 0",
                            "field 8 (size) is not a number: '4294967336'"),
    "node beyond 32 bits": ("mixed-DSR", "r 0.515098893 _4294967297_ MAC  --- 0 tcp 40 [13a 1 0 800] ------- [0:0 2:0 30 1] [0 0] 1 0",
                            "field 3 is not a node id like _3_"),
    "new size beyond 32 bits": ("new-AODV", "s -t 0.5 -Hs 0 -Hd -2 -Ni 0 -Nx 10.00 -Ny 100.00 -Nz 0.00 -Ne -1.000000 "
                                "-Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.0 -Id 2.0 -It tcp -Il 4294967336 -If 1 "
                                "-Ii 0 -Iv 32 -Pn tcp -Ps 0 -Pa 0 -Pf 0 -Po 0 ", "-Il (size) missing or not a number"),
    "bad movement line": ("old-AODV", "M 1.50000 2 (410.00, 100.00), (400.00, 150.00), 5.00", "movement line ('M')"),
    "bad energy line": ("new-AODV-energy", "N -t 0.5 -n 1 -e lots", "energy line ('N')"),
}


def _insert(src: Path, dst: Path, at: int, *lines: str) -> Path:
    """src with `lines` inserted so that the first of them is line `at` (1-based)."""
    text = src.read_text().split("\n")
    text[at - 1 : at - 1] = list(lines)
    dst.write_text("\n".join(text))
    return dst


@pytest.mark.parametrize("case", list(BAD))
def test_bad_line_in_the_middle(case, traces, tmp_path, populated_store, tracekit_cli, tracekit_inproc, store_listing):
    name, bad, reason = BAD[case]
    explain = WirelessParser().explain(bad)
    assert reason in explain                                  # the reason is specific
    at = len(traces[name].read_text().split("\n")) // 2
    f = _insert(traces[name], tmp_path / "bad.tr", at, bad)
    before = store_listing(populated_store)
    run = tracekit_cli if case == "tcp non-numeric size" else tracekit_inproc    # one real process
    p = run("ingest", f, data=populated_store)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    [line] = p.stderr.splitlines()
    assert line.startswith(f"tracekit: error: {f}:{at}: {explain}"), line
    assert store_listing(populated_store) == before


def test_skip_bad_lines_ingests_the_rest(traces, tmp_path, tracekit_cli):
    src = traces["mixed-AODV"]
    n = len(src.read_text().split("\n"))
    bad = [b for _, b, _ in BAD.values()]
    text = src.read_text().split("\n")
    positions = sorted({7 + i * (n // len(bad)) for i in range(len(bad))}, reverse=True)
    for pos, b in zip(positions, bad):
        text.insert(pos, b)
    f = tmp_path / "some_bad.tr"
    f.write_text("\n".join(text))
    first = min(positions) + 1
    assert f.read_text().split("\n")[first - 1] == bad[len(bad) - 1]
    data = tmp_path / "store"
    p = tracekit_cli("ingest", "--skip-bad-lines", f, data=data)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert f"skipped {len(bad)} bad line(s); first at line {first}: " in p.stderr
    assert WirelessParser().explain(bad[-1]) in p.stderr
    [(n_events, n_skipped)] = query(data, "SELECT n_events, n_skipped_lines FROM runs")
    good = read_trace(src.read_text())["events"]
    assert (n_events, n_skipped) == (len(good), len(bad))
    # the good lines kept their own line numbers in the edited file
    want = sorted(i + 1 for i, s in enumerate(text) if s.split(" ", 1)[0] in EVENT_CODES and s not in bad)
    assert [r for (r,) in query(data, "SELECT line_no FROM wireless_events ORDER BY line_no")] == want


def test_trace_cut_mid_line(traces, tmp_path, tracekit_cli):
    raw = traces["mixed-DSR"].read_bytes()
    mid = raw.index(b"\n", len(raw) // 2)
    cut = raw[: mid + 1 + 37]                                  # 37 bytes into the next line
    assert not cut.endswith(b"\n") and b"\n" not in cut[mid + 1 :]
    f = tmp_path / "cut.tr"
    f.write_bytes(cut)
    data = tmp_path / "store"
    p = tracekit_cli("ingest", f, data=data)
    assert p.returncode == 0, p.stderr
    n_lines = cut.count(b"\n") + 1
    assert f"{f}:{n_lines}: last line has no newline" in p.stderr and "Traceback" not in p.stderr
    complete = read_trace(cut[: mid + 1].decode())
    [(n_events, n_skipped)] = query(data, "SELECT n_events, n_skipped_lines FROM runs")
    assert (n_events, n_skipped) == (len(complete["events"]), 1)
    assert query(data, "SELECT count(*) FROM wireless_logs")[0][0] == len(complete["logs"])


@pytest.mark.parametrize("name", ["mixed-DSR", "new-AODV-energy"])
def test_gzip_and_zstd_give_the_plain_files_run(name, traces, tmp_path):
    plain = traces[name].read_bytes()
    run_id = hashlib.sha256(plain).hexdigest()[:16]
    gz, zst = tmp_path / "t.tr.gz", tmp_path / "t.tr.zst"
    gz.write_bytes(gzip.compress(plain))
    zst.write_bytes(zstandard.ZstdCompressor(level=3).compress(plain))
    st = Store(tmp_path / "store", create=True)
    results = [ingest_file(st, p) for p in (zst, traces[name], gz)]
    assert [(r.status, r.run_id) for r in results] == [("added", run_id), ("duplicate", run_id), ("duplicate", run_id)]
    assert results[0].n_events == len(read_trace(plain.decode())["events"])
    assert query(tmp_path / "store", "SELECT compression FROM runs") == [("zstd",)]


TABLES = ("wireless_events", "wireless_movements", "wireless_energy", "wireless_logs")


@pytest.mark.slow
@pytest.mark.parametrize("name, chunk_bytes", [("mixed-DSR", 1024), ("mixed-AODV-energy", 4096)])
def test_tiny_chunks_give_the_same_tables(name, chunk_bytes, traces, tmp_path):
    """Tiny chunks (after the first 64 KiB, which detection reads at once; a chunk is then a
    few lines, and most chunk ends fall inside a line) against the default 8 MiB chunks (the
    sample and the rest of the file at once): the same rows, and
    every stored part in line order, old and new lines interleaved as in the file."""
    f = traces[name]
    one, tiny = tmp_path / "one", tmp_path / "tiny"
    r1 = ingest_file(Store(one, create=True), f)
    r2 = ingest_file(Store(tiny, create=True), f, chunk_bytes=chunk_bytes)
    assert r1.run_id == r2.run_id and r1.n_events == r2.n_events
    for t in TABLES:
        sql = f"SELECT * FROM {t} ORDER BY line_no"
        a, b = query(one, sql), query(tiny, sql)
        assert a == b, t
        parts = sorted(tiny.glob(f"runs/run_id=*/{t}-*.parquet"))
        stored = [x for p in parts for x in pq.read_table(p, columns=["line_no"]).column("line_no").to_pylist()]
        assert stored == sorted(stored) and len(stored) == len(a), t
        if t == "wireless_events":
            assert len(parts) > (f.stat().st_size - 65536) // (2 * chunk_bytes)
    # the default reads the 64 KiB detection sample and the rest of the file as one 8 MiB chunk
    assert len(list(one.glob("runs/run_id=*/wireless_events-*.parquet"))) == 1
    want = read_trace(f.read_text())
    got = query(tiny, "SELECT line_no, fmt FROM wireless_events ORDER BY line_no")
    assert got == [(no, v[0]) for no, v in sorted(want["events"].items())]
    assert len(query(tiny, "SELECT * FROM wireless_energy")) == len(want["energy"])
    assert len(query(tiny, "SELECT * FROM wireless_logs")) == len(want["logs"])


@pytest.mark.parametrize("small_rows", [None, 7])
def test_a_small_tables_rows_are_gathered_into_few_parts(small_rows, traces, tmp_path, monkeypatch):
    """The tables beside the events get a few rows a chunk (or none): their rows are held and
    written as one part once _Writers.SMALL_ROWS of them are, and at the end, in line order,
    not as a tiny part per chunk; the events, a part per chunk."""
    from tracekit.ingest import pipeline as ingest

    if small_rows is not None:
        monkeypatch.setattr(ingest._Writers, "SMALL_ROWS", small_rows)
    limit = ingest._Writers.SMALL_ROWS
    for name, t, key in (("mixed-AODV-energy", "wireless_energy", "energy"), ("mixed-DSR", "wireless_logs", "logs")):
        f = traces[name]
        data = tmp_path / name
        ingest_file(Store(data, create=True), f, chunk_bytes=4096)
        want = read_trace(f.read_text())
        n = len(want[key])
        parts = sorted(data.glob(f"runs/run_id=*/{t}-*.parquet"))
        sizes = [pq.read_metadata(p).num_rows for p in parts]
        assert sum(sizes) == n > 2 * 7, t       # rows from many chunks, more than two parts' worth
        # every part but the last held back until it had `limit` rows (or more: a chunk's)
        assert all(k >= limit for k in sizes[:-1]) and len(parts) <= -(-n // limit), (t, sizes)
        stored = [x for p in parts for x in pq.read_table(p, columns=["line_no"]).column("line_no").to_pylist()]
        assert stored == sorted(r[0] for r in want[key]), t
        events = list(data.glob("runs/run_id=*/wireless_events-*.parquet"))
        assert len(events) > (f.stat().st_size - 65536) // (2 * 4096)


def test_a_non_dsr_s_line_is_a_bad_line(tmp_path):
    """Only 'S<letters> TIME ...' lines are DSR's own; a crash message that starts with S
    stops the file at its line instead of landing in wireless_logs."""
    from tracekit.core.errors import TraceLineError
    from tracekit.formats.parsers import parse_text

    good = "Sconfig 0.00000 using MOBICACHE\nSFs 0.606152988 _0_ 8 [0 -> 2] 1(0) to 1\n"
    logs = parse_text(good, "wireless")["wireless_logs"]
    assert logs["tag"].cast(str).to_list() == ["Sconfig", "SFs"]
    assert logs["time"].to_list() == [0.0, 0.606152988] and logs["node"].to_list() == [None, 0]
    with pytest.raises(TraceLineError) as e:
        parse_text(good + "Segmentation fault (core dumped)\n", "wireless", "t.tr")
    assert e.value.line_no == 3 and "not a DSR trace line" in str(e.value)
