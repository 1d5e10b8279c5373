"""Traces from the wild (issue 14): the formats and habits of published ns-2 scripts, each on
the issue's minimal trace (expected numbers by hand) and on a real ns-2 run of a script in
tests/tcl/ (expected numbers from the plain references, tests/reference_metrics.py and
tests/reference_wireless.py)."""
from __future__ import annotations

import pytest

import reference_metrics as refm
import reference_wireless as refw
from test_metrics import compare_run
from test_wireless import compare_views
from tracekit.ingest.pipeline import ingest_paths
from tracekit.db.query import connect


def rows(con, sql: str, params=None) -> list[dict]:
    cur = con.execute(sql, params or [])
    names = [d[0] for d in cur.description]
    return [dict(zip(names, r)) for r in cur.fetchall()]


def ingest(data, path, **kw) -> str:
    (res,) = ingest_paths(data, [path], **kw)
    assert res.status == "added", res.message
    return res.run_id


def ingest_text(tmp_path, name: str, text: str, **kw):
    """A store holding one trace written from `text`: (connection, run_id)."""
    path = tmp_path / name
    path.write_text(text)
    run_id = ingest(tmp_path / "store", path, **kw)
    return connect(tmp_path / "store"), run_id


@pytest.fixture(scope="module")
def wild(wild_traces, tmp_path_factory):
    """Every real trace of wild_traces ingested into one store: (connection, {name: run_id})."""
    data = tmp_path_factory.mktemp("wild_store") / "store"
    labels = {"cwnd_pairs": {"var": "cwnd", "flow": "1"}}
    ids = {name: ingest(data, path, labels=labels.get(name)) for name, path in wild_traces.items()}
    return connect(data), ids


# ---------------------------------------------------------------------------------------
# 1. a wireless trace with a `v` annotation line

MIN_ANNOTATED = """\
v 0 eval {set sim_annotation {MOBILE NODE MOVEMENTS}}
s -t 0.000000000 -Hs 0 -Hd -2 -Ni 0 -Nx 36.00 -Ny 529.00 -Nz 0.00 -Ne 100.000000 -Nl RTR -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 0.255 -Id -1.255 -It AODV -Il 44 -If 0 -Ii 0 -Iv 1 -P aodv -Pt 0x1 -Ph 1 -Pd 0 -Pds 2 -Pl 4.000000 -Pc HELLO
"""


def test_annotated_wireless_minimal(tmp_path):
    con, run = ingest_text(tmp_path, "annotated.tr", MIN_ANNOTATED)
    assert rows(con, "SELECT trace_kind, n_events FROM runs") == [{"trace_kind": "wireless", "n_events": 1}]
    assert rows(con, "SELECT line_no, time, text FROM annotations WHERE run_id = ?", [run]) == [
        {"line_no": 1, "time": 0.0, "text": "eval {set sim_annotation {MOBILE NODE MOVEMENTS}}"}]
    (ev,) = rows(con, "SELECT line_no, event, layer, ptype, size FROM wireless_events")
    assert ev == {"line_no": 2, "event": "s", "layer": "RTR", "ptype": "AODV", "size": 44}


def test_annotation_without_time_is_a_bad_line(tmp_path):
    path = tmp_path / "bad.tr"
    path.write_text(MIN_ANNOTATED + "v later\n")
    (res,) = ingest_paths(tmp_path / "store", [path])
    assert res.status == "failed"
    assert res.message == f"{path}:3: annotation line ('v') without a numeric time: 'v later'"


@pytest.mark.parametrize("name", ["wl_annot_old", "wl_annot_new"])
def test_annotated_wireless_real(wild, wild_traces, name):
    con, ids = wild
    assert rows(con, "SELECT line_no, text FROM annotations WHERE run_id = ?", [ids[name]]) == [
        {"line_no": 1, "text": "eval {set sim_annotation {MOBILE NODE MOVEMENTS}}"}]
    exp = refw.reference(wild_traces[name])
    assert exp["flows"] and all(f["recv_pkts"] > 0 for f in exp["flows"].values())
    compare_views(con, ids[name], exp, name)


# ---------------------------------------------------------------------------------------
# 3. LAN traces (`$ns newLan`): `h` lines, `d` lines of overhearing stations

MIN_LAN = """\
h 5.120008 0 6 tcp 1040 ------- 0 0.0 5.0 1 2
+ 5.150008 0 6 tcp 1040 ------- 0 0.0 5.0 1 2
- 5.150008 0 6 tcp 1040 ------- 0 0.0 5.0 1 2
d 5.150012 4 6 tcp 1040 ------- 0 0.0 5.0 1 2
d 5.150012 3 6 tcp 1040 ------- 0 0.0 5.0 1 2
d 5.150012 2 6 tcp 1040 ------- 0 0.0 5.0 1 2
d 5.150012 1 6 tcp 1040 ------- 0 0.0 5.0 1 2
r 5.180012 6 5 tcp 1040 ------- 0 0.0 5.0 1 2
"""


def test_lan_minimal(tmp_path):
    con, run = ingest_text(tmp_path, "lan.tr", MIN_LAN)
    (fs,) = rows(con, "SELECT * FROM flow_stats WHERE run_id = ?", [run])
    # by hand: one packet, sent (h at 5.120008), delivered at 5.180012; the four `d` lines are
    # the stations 1-4 overhearing it on the LAN (node 6)
    assert (fs["sent_pkts"], fs["recv_pkts"], fs["dropped_pkts"], fs["overheard_pkts"]) == (1, 1, 0, 4)
    assert fs["drop_rate"] == 0 and fs["in_flight_pkts"] == 0
    assert fs["mean_delay_ms"] == pytest.approx(60.004, abs=1e-9)
    assert fs["t_first_send"] == 5.120008
    # the reference agrees
    (exp,) = refm.all_metrics(MIN_LAN)["flow_stats"].values()
    assert (exp["dropped_pkts"], exp["overheard_pkts"]) == (0, 4) and exp["mean_delay_ms"] == pytest.approx(60.004)
    assert rows(con, "SELECT event, count(*) AS n FROM events GROUP BY event ORDER BY event") == [
        {"event": "+", "n": 1}, {"event": "-", "n": 1}, {"event": "d", "n": 4}, {"event": "h", "n": 1}, {"event": "r", "n": 1}]


def test_lan_loss_is_still_a_drop(tmp_path):
    """A frame lost on the LAN (never received across it) keeps its `d` lines as drops."""
    lost = "\n".join(ln for ln in MIN_LAN.splitlines() if not ln.startswith("r ")) + "\n"
    con, run = ingest_text(tmp_path, "lost.tr", lost)
    (fs,) = rows(con, "SELECT sent_pkts, recv_pkts, dropped_pkts, overheard_pkts FROM flow_stats WHERE run_id = ?", [run])
    assert fs == {"sent_pkts": 1, "recv_pkts": 0, "dropped_pkts": 4, "overheard_pkts": 0}
    (exp,) = refm.all_metrics(lost)["flow_stats"].values()
    assert (exp["dropped_pkts"], exp["overheard_pkts"]) == (4, 0)


def test_lan_real(wild, wild_traces):
    con, ids = wild
    text = wild_traces["lan"].read_text()
    m = refm.all_metrics(text)
    st = m["flow_stats"]
    # the run has what the test is about: overheard frames, real queue drops at n4, h lines
    assert sum(f["overheard_pkts"] for f in st.values()) > 100
    assert sum(f["dropped_pkts"] for f in st.values()) > 0
    tcp = next(f for f in st.values() if f["fid"] == 1)
    cbr = next(f for f in st.values() if f["fid"] == 2)
    assert cbr["dropped_pkts"] == 0 and cbr["recv_pkts"] == cbr["sent_pkts"] == 50
    # the CBR flow stays on the LAN: h at the sender, r at the receiver 20.004 ms later
    assert cbr["mean_delay_ms"] == pytest.approx(20.004)
    assert tcp["dropped_pkts"] == tcp["sent_pkts"] - tcp["recv_pkts"]
    compare_run(con, ids["lan"], text, {}, window=(0.5, 1.5))


def table_rows(out: str) -> list[dict]:
    """The rows of the first rich table of `out` (unwrapped: stdout is not a terminal and
    $COLUMNS is unset), as {header: cell text}."""
    lines = out.splitlines()
    h = next(i for i, ln in enumerate(lines) if "run_id" in ln)
    header = [c.strip() for c in lines[h].strip("┃").split("┃")]
    body = []
    for ln in lines[h + 2:]:
        if not ln.startswith("│"):
            break
        body.append(dict(zip(header, (c.strip() for c in ln.strip("│").split("│")))))
    return body


def test_metrics_table_shows_overheard_on_lan_runs(wild_traces, tmp_path, tracekit_inproc, monkeypatch):
    """`tracekit metrics`' table has an overheard_pkts column, after dropped_pkts, when a
    listed flow has overheard packets (values from the plain reference on the real LAN run),
    and none when no listed flow has any (an all-zero column would only take room)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    data = tmp_path / "store"
    lan = ingest(data, wild_traces["lan"])
    lost = tmp_path / "lost.tr"
    lost.write_text("\n".join(ln for ln in MIN_LAN.splitlines() if not ln.startswith("r ")) + "\n")
    no_overheard = ingest(data, lost)
    exp = {f["fid"]: f for f in refm.all_metrics(wild_traces["lan"].read_text())["flow_stats"].values()}
    p = tracekit_inproc("metrics", "--run", lan, data=data)
    assert p.returncode == 0, p.stderr
    got = table_rows(p.stdout)
    assert list(got[0])[8:10] == ["dropped_pkts", "overheard_pkts"]
    assert {int(r["fid"]): (int(r["dropped_pkts"]), int(r["overheard_pkts"])) for r in got} == \
        {fid: (f["dropped_pkts"], f["overheard_pkts"]) for fid, f in exp.items()}
    assert min(f["overheard_pkts"] for f in exp.values()) > 0
    p = tracekit_inproc("metrics", "--run", no_overheard, data=data)
    assert p.returncode == 0, p.stderr
    (row,) = table_rows(p.stdout)
    assert row["dropped_pkts"] == "4" and "overheard_pkts" not in row


# ---------------------------------------------------------------------------------------
# 4. routing packets of a type outside the known list

_NEW = ("{ev} -t {t:.9f} -Hs {n} -Hd -2 -Ni {n} -Nx 0.00 -Ny 0.00 -Nz 0.00 -Ne -1.000000 -Nl {layer} -Nw --- "
        "-Ma 0 -Md 0 -Ms 0 -Mt 0 -Is {src} -Id {dst} -It {ptype} -Il {size} -If {fid} -Ii {uid} -Iv 32 {tail}")


def _line(ev, t, n, layer, src, dst, ptype, size, uid, fid=0):
    tail = "-P aodv -Pt 0x1 -Ph 1 -Pd 0 -Pds 2 -Pl 4.000000 -Pc HELLO" if ptype == "MYAODV" else f"-Pn cbr -Pi {uid} -Pf 0 -Po 0"
    return _NEW.format(ev=ev, t=t, n=n, layer=layer, src=src, dst=dst, ptype=ptype, size=size, uid=uid, fid=fid, tail=tail)


# A modified AODV (`-It MYAODV`): two HELLOs sent by nodes 0 and 1, one received at 1 (an `r`:
# not counted), a request sent by 0 and forwarded by 1: by hand 3 sent, 1 forwarded, 4 routing
# packets of 44 + 44 + 48 + 48 bytes... and one CBR packet 0 -> 2 delivered: nrl 4 / 1.
MIN_MYAODV = "\n".join([
    _line("s", 0.0, 0, "RTR", "0.255", "-1.255", "MYAODV", 44, 0),
    _line("s", 0.1, 1, "RTR", "1.255", "-1.255", "MYAODV", 44, 1),
    _line("r", 0.2, 1, "RTR", "0.255", "-1.255", "MYAODV", 44, 0),
    _line("s", 1.0, 0, "AGT", "0.0", "2.0", "cbr", 512, 2, fid=1),
    _line("s", 1.0, 0, "RTR", "0.255", "-1.255", "MYAODV", 48, 3),
    _line("f", 1.1, 1, "RTR", "0.255", "-1.255", "MYAODV", 48, 3),
    _line("f", 1.3, 1, "RTR", "0.0", "2.0", "cbr", 532, 2, fid=1),
    _line("r", 1.5, 2, "AGT", "0.0", "2.0", "cbr", 532, 2, fid=1),
]) + "\n"


def test_unknown_routing_type_minimal(tmp_path):
    con, run = ingest_text(tmp_path, "myaodv.tr", MIN_MYAODV)
    (o,) = rows(con, "SELECT * EXCLUDE (run_id) FROM routing_overhead")
    assert o == {"routing_sent_pkts": 3, "routing_fwd_pkts": 1, "routing_pkts": 4, "routing_bytes": 44 + 44 + 48 + 48,
                 "data_recv_pkts": 1, "nrl": 4.0}
    fw = {r["node"]: r for r in rows(con, "SELECT * FROM node_forwarding")}
    assert (fw[1]["fwd_routing_pkts"], fw[1]["fwd_data_pkts"], fw[1]["fwd_data_bytes"]) == (1, 1, 532)
    exp = refw.reference_text(MIN_MYAODV)
    assert exp["routing"]["routing_pkts"] == 4 and exp["forwarding"][1] == (1, 532, 1)
    compare_views(con, run, exp, "MYAODV")


def test_mdart_real(wild, wild_traces):
    """ns-2.35's own MDART (packet type MDART): its packets count as routing packets."""
    con, ids = wild
    exp = refw.reference(wild_traces["wl_mdart"])
    assert exp["routing"]["routing_sent_pkts"] > 10
    assert all(ln.ptype == "MDART" for ln in exp["lines"] if ln.layer == "RTR" and ln.src_port == 255)
    compare_views(con, ids["wl_mdart"], exp, "MDART")
    (o,) = rows(con, "SELECT routing_pkts FROM routing_overhead WHERE run_id = ?", [ids["wl_mdart"]])
    assert o["routing_pkts"] == exp["routing"]["routing_pkts"]


# ---------------------------------------------------------------------------------------
# 2. two-column `time value` files

def test_series_minimal(tmp_path, tracekit_inproc):
    path = tmp_path / "cwnd.txt"
    path.write_text("0 1\n0.10000000000000001 1\n\n0.20000000000000001 3\n0.3 8.5\n")
    res = tracekit_inproc("ingest", path, "--series-name", "cwnd", "--label", "flow=Reno", data=tmp_path / "store")
    assert res.returncode == 0, res.stderr
    assert "(series, 4 rows" in res.stdout
    con = connect(tmp_path / "store")
    assert rows(con, "SELECT line_no, time, value, var, flow FROM series ORDER BY line_no") == [
        {"line_no": 1, "time": 0.0, "value": 1.0, "var": "cwnd", "flow": "Reno"},
        {"line_no": 2, "time": 0.1, "value": 1.0, "var": "cwnd", "flow": "Reno"},
        {"line_no": 4, "time": 0.2, "value": 3.0, "var": "cwnd", "flow": "Reno"},
        {"line_no": 5, "time": 0.3, "value": 8.5, "var": "cwnd", "flow": "Reno"}]
    assert rows(con, "SELECT trace_kind, n_events FROM runs") == [{"trace_kind": "series", "n_events": 4}]


def test_series_bad_lines(tmp_path, tracekit_inproc):
    path = tmp_path / "bad.txt"
    path.write_text("0 1\n0.1 1 7\n")
    res = tracekit_inproc("ingest", path, data=tmp_path / "store")
    assert res.returncode == 1
    assert f"{path}:2: expected 2 fields (time value), found 3" in res.stderr
    path.write_text("0 1\n0.1 nan?\n")
    res = tracekit_inproc("ingest", path, data=tmp_path / "store")
    assert f"{path}:2: value is not a number: 'nan?'" in res.stderr
    res = tracekit_inproc("ingest", path, "--series-name", "cwnd", "--label", "var=rtt", data=tmp_path / "store")
    assert res.returncode == 1 and "--series-name cwnd and --label var=rtt disagree" in res.stderr


def test_series_real(wild, wild_traces):
    """The proc's samples are stored as written, and each is the agent's cwnd_ at that time:
    the last value its `$tcp trace cwnd_` trace (ingested as tcp_vars) shows by then."""
    con, ids = wild
    pairs = [tuple(float(x) for x in ln.split()) for ln in wild_traces["cwnd_pairs"].read_text().splitlines()]
    got = rows(con, "SELECT line_no, time, value, var, flow FROM series WHERE run_id = ? ORDER BY line_no", [ids["cwnd_pairs"]])
    assert [(r["time"], r["value"]) for r in got] == pairs
    assert [r["line_no"] for r in got] == list(range(1, len(pairs) + 1)) and len(pairs) == 30
    assert {(r["var"], r["flow"]) for r in got} == {("cwnd", "1")}
    steps = [(float(f[0]), float(f[6])) for f in (ln.split() for ln in wild_traces["cwnd_tcpvar"].read_text().splitlines()) if f[5] == "cwnd_"]
    assert max(v for _, v in pairs) > 10      # the window grew and was cut: a real curve
    for t, v in pairs:
        # the trace prints times to 10 us: a change within that of the sample may be either side
        before = [val for ts, val in steps if ts <= t - 1e-5]
        near = [val for ts, val in steps if abs(ts - t) < 1e-5]
        assert (before and v == pytest.approx(before[-1], abs=1e-3)) or any(v == pytest.approx(x, abs=1e-3) for x in near), t


# ---------------------------------------------------------------------------------------
# 6. nam traces

# By hand: a TCP packet 0 -> 2 over 0 -> 1 -> 2 (enqueued at 0.1, hop lines after each
# dequeue with seq -1, received at 2 at 0.35), one dropped at 1 -> 2 and one CBR packet 3 -> 2
# (flow 2) delivered; scene lines and an annotation between them.
MIN_NAM = """\
V -t * -v 1.0a5 -a 0
A -t * -n 1 -p 0 -o 0x7fffffff -c 30 -a 1
n -t * -a 0 -s 0 -S UP -v circle -c black -i black
l -t * -s 0 -d 1 -S UP -r 1000000 -D 0.1 -c black -o right
+ -t 0.1 -s 0 -d 1 -p tcp -e 1040 -c 1 -i 7 -a 1 -x {0.0 2.0 3 ------- null}
- -t 0.1 -s 0 -d 1 -p tcp -e 1040 -c 1 -i 7 -a 1 -x {0.0 2.0 3 ------- null}
h -t 0.1 -s 0 -d 1 -p tcp -e 1040 -c 1 -i 7 -a 1 -x {0.0 2.0 -1 ------- null}
+ -t 0.12 -s 0 -d 1 -p tcp -e 1040 -c 1 -i 8 -a 1 -x {0.0 2.0 4 ------- null}
r -t 0.2 -s 0 -d 1 -p tcp -e 1040 -c 1 -i 7 -a 1 -x {0.0 2.0 3 ------- null}
+ -t 0.2 -s 1 -d 2 -p tcp -e 1040 -c 1 -i 7 -a 1 -x {0.0 2.0 3 ------- null}
- -t 0.25 -s 1 -d 2 -p tcp -e 1040 -c 1 -i 7 -a 1 -x {0.0 2.0 3 ------- null}
h -t 0.25 -s 1 -d 2 -p tcp -e 1040 -c 1 -i 7 -a 1 -x {0.0 2.0 -1 ------- null}
d -t 0.3 -s 0 -d 1 -p tcp -e 1040 -c 1 -i 8 -a 1 -x {0.0 2.0 4 ------- null}
r -t 0.35 -s 1 -d 2 -p tcp -e 1040 -c 1 -i 7 -a 1 -x {0.0 2.0 3 ------- null}
v -t 0.5 -e sim_annotation 0.5 1 hello from probe
+ -t 0.6 -s 3 -d 2 -p cbr -e 200 -c 2 -i 9 -a 2 -x {3.0 2.1 0 ------- null}
- -t 0.6 -s 3 -d 2 -p cbr -e 200 -c 2 -i 9 -a 2 -x {3.0 2.1 0 ------- null}
h -t 0.6 -s 3 -d 2 -p cbr -e 200 -c 2 -i 9 -a 2 -x {3.0 2.1 -1 ------- null}
r -t 0.61 -s 3 -d 2 -p cbr -e 200 -c 2 -i 9 -a 2 -x {3.0 2.1 0 ------- null}
"""


def test_nam_minimal(tmp_path):
    con, run = ingest_text(tmp_path, "min.nam", MIN_NAM)
    assert rows(con, "SELECT trace_kind, n_events, t_end FROM runs") == [{"trace_kind": "nam", "n_events": 14, "t_end": 0.61}]
    fs = {r["fid"]: r for r in rows(con, "SELECT * FROM flow_stats WHERE run_id = ?", [run])}
    assert set(fs) == {1, 2}
    tcp, cbr = fs[1], fs[2]
    assert (tcp["sent_pkts"], tcp["recv_pkts"], tcp["dropped_pkts"], tcp["overheard_pkts"], tcp["rx_bytes"]) == (2, 1, 1, 0, 1040)
    assert tcp["mean_delay_ms"] == pytest.approx(250.0)            # 0.35 - 0.1
    assert tcp["throughput_kbps"] == pytest.approx(1040 * 8 / 1000 / (0.61 - 0.1))
    assert tcp["goodput_kbps"] == pytest.approx(1000 * 8 / 1000 / (0.61 - 0.1))   # 40 B header
    assert (cbr["sent_pkts"], cbr["recv_pkts"], cbr["dropped_pkts"], cbr["src_node"], cbr["dst_port"]) == (1, 1, 0, 3, 1)
    assert cbr["mean_delay_ms"] == pytest.approx(10.0)
    assert rows(con, "SELECT line_no, time, text FROM annotations") == [{"line_no": 15, "time": 0.5, "text": "sim_annotation 0.5 1 hello from probe"}]
    (h,) = rows(con, "SELECT * FROM events WHERE line_no = 7")
    assert (h["event"], h["from_node"], h["to_node"], h["seq"], h["pkt_id"], h["flags"]) == ("h", 0, 1, -1, 7, "-------")


def test_nam_bad_line(tmp_path):
    path = tmp_path / "bad.nam"
    path.write_text(MIN_NAM.replace("-e 200 -c 2 -i 9 -a 2 -x {3.0 2.1 -1", "-e 200 -c 2 -i x9 -a 2 -x {3.0 2.1 -1"))
    (res,) = ingest_paths(tmp_path / "store", [path])
    assert res.status == "failed"
    assert res.message.startswith(f"{path}:18: -i (packet id) is not a number: 'x9'")


def same(got: list[dict], exp: list[dict], n: int) -> None:
    assert len(got) == len(exp) == n
    for g, e in zip(got, exp):
        assert g == {k: pytest.approx(v, rel=1e-9, abs=1e-9) if isinstance(v, float) else v for k, v in e.items()}


def test_nam_real_equals_the_normal_trace(wild, wild_traces):
    """The nam trace and the normal trace of one simulation give the same flow_stats, rtt,
    queue_delay and fairness (the normal trace's are checked against the reference in test_lan_real). nam
    prints times unrounded (2.03769600000001 where the normal trace has 2.037696): times and
    what is computed from them agree to 1e-9."""
    con, ids = wild
    cols = "fid, src_node, src_port, dst_node, dst_port, sent_pkts, recv_pkts, dropped_pkts, overheard_pkts, rx_bytes, tx_bytes, " \
           "throughput_kbps, goodput_kbps, mean_delay_ms, p95_delay_ms, jitter_ms, pdr, t_first_send, t_last_recv, t_run_end"
    q = f"SELECT {cols} FROM flow_stats WHERE run_id = ? ORDER BY fid"
    same(rows(con, q, [ids["lan_nam"]]), rows(con, q, [ids["lan"]]), 2)
    q = "SELECT * EXCLUDE (run_id) FROM rtt WHERE run_id = ? ORDER BY fid"
    same(rows(con, q, [ids["lan_nam"]]), rows(con, q, [ids["lan"]]), 1)
    q = "SELECT * EXCLUDE (run_id) FROM queue_delay WHERE run_id = ? ORDER BY from_node, to_node"
    same(rows(con, q, [ids["lan_nam"]]), rows(con, q, [ids["lan"]]), 5)
    q = "SELECT * EXCLUDE (run_id) FROM fairness WHERE run_id = ?"
    nam_fairness = rows(con, q, [ids["lan_nam"]])
    assert len(nam_fairness) == 1          # a nam run has its fairness row, like any packet trace
    same(nam_fairness, rows(con, q, [ids["lan"]]), 1)
    n_h = sum(1 for ln in wild_traces["lan_nam"].read_text().splitlines() if ln.startswith("h -t"))
    n_h_tr = sum(1 for ln in wild_traces["lan"].read_text().splitlines() if ln.startswith("h "))
    assert rows(con, "SELECT count(*) AS n FROM events WHERE run_id = ? AND event = 'h'", [ids["lan_nam"]]) == [{"n": n_h}]
    assert n_h > n_h_tr > 0          # nam: an h line per transmission too


# ---------------------------------------------------------------------------------------
# 5. hierarchical addresses and wired-cum-wireless traces: tests/test_hier.py
