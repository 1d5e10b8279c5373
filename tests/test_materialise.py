"""The stored facts (issue 16): ingest writes each packet-trace run's flow_facts and
packet_facts parts (tracekit.ingest.facts, from the sql/ views <table>_from_events), and the
views read them instead of computing them from the events. On real ns-2 runs (a wired
dumbbell with named flows, a LAN, a wireless run): the stored path and the computed path (the
same store with the parts removed, as a store ingested before them) give the same rows, and
both equal the plain references (tests/reference_metrics.py, tests/reference_wireless.py);
a store mixing runs with and without parts, a part of another definition, a damaged part,
and a relabel are handled."""
from __future__ import annotations

import math
import os
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

import reference_metrics as refm
import reference_wireless as refw
from test_metrics import compare_run
from test_wireless import compare_views
from tracekit.store.columns import FACT_TABLES
from tracekit.ingest.pipeline import ingest_paths
from tracekit.db.query import close, connect, sql_files
from tracekit.db.sqlfiles import definition_hash, fact_part_name
from tracekit.store.store import Store
from tracekit.store.verify import verify

TCL = Path(__file__).resolve().parent / "tcl"
NS = shutil.which("ns") or "/usr/bin/ns"
NAMES = {1: "Reno", 2: "Vegas", 3: "Sack"}

# every view the stored facts feed, with the rows' order
VIEWS = {
    "flow_facts": "SELECT * FROM flow_facts ORDER BY ALL",
    "flow_run_facts": "SELECT * FROM flow_run_facts ORDER BY ALL",
    "flows": "SELECT * FROM flows ORDER BY ALL",
    "wireless_flows": "SELECT * FROM wireless_flows ORDER BY ALL",
    "packets": "SELECT * FROM packets ORDER BY run_id, pkt_id, ptype",
    "flow_stats": "SELECT * FROM flow_stats ORDER BY run_id, fid, src_node, src_port, dst_node, dst_port",
    "flow_stats_window": "SELECT * FROM flow_stats_window(0.5, 2.0) ORDER BY run_id, fid, src_node, src_port",
    "throughput_series": "SELECT * FROM throughput_series(0.5) ORDER BY ALL",
    "wireless_flow_stats": "SELECT * FROM wireless_flow_stats ORDER BY run_id, fid, src_node, src_port",
    "fairness": "SELECT * FROM fairness ORDER BY ALL",
    "rtt": "SELECT * FROM rtt ORDER BY ALL",
}


def _ns(*args: str, cwd: Path) -> None:
    proc = subprocess.run([NS, *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]


def _fact_parts(data: Path, run_id: str | None = None) -> list[Path]:
    runs = f"run_id={run_id}" if run_id else "run_id=*"
    return sorted(p for t in FACT_TABLES for p in data.glob(f"runs/{runs}/{t}-*.parquet"))


def _without_facts(src: Path, dst: Path, run_id: str | None = None) -> Path:
    """A copy of store src without the fact parts (of run_id only, when given)."""
    shutil.copytree(src, dst)
    for p in _fact_parts(dst, run_id):
        p.unlink()
    return dst


def _rows(data: Path, sql: str) -> list[tuple]:
    con = connect(data, for_query=sql)
    try:
        return con.execute(sql).fetchall()
    finally:
        close(con)


def _all_rows(data: Path, queries: dict[str, str]) -> dict[str, list[tuple]]:
    con = connect(data)
    try:
        return {name: con.execute(sql).fetchall() for name, sql in queries.items()}
    finally:
        close(con)


def _same(a: list[tuple], b: list[tuple], what: str) -> None:
    """Equal rows; floats to 1e-9 (DuckDB's parallel sums differ in the last bits)."""
    assert len(a) == len(b), what
    for ra, rb in zip(a, b):
        for x, y in zip(ra, rb):
            if isinstance(x, float) and isinstance(y, float):
                assert math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12), (what, ra, rb)
            else:
                assert x == y, (what, ra, rb)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A store of real runs, ingested with their fact parts: (store, {name: (run_id, path)})."""
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    d = tmp_path_factory.mktemp("materialise")
    _ns(str(TCL / "metrics_dumbbell.tcl"), str(d / "dumbbell.tr"), "1", cwd=d)
    _ns(str(TCL / "wild_lan.tcl"), "lan.tr", "lan.nam", cwd=d)
    _ns(str(TCL / "wireless.tcl"), "new", "AODV", str(d / "wireless.tr"), cwd=d)
    _ns(str(TCL / "ingest_tcpvar.tcl"), "tcpvar.tr", cwd=d)
    data = d / "store"
    out = {}
    for name in ("dumbbell", "lan", "wireless", "tcpvar"):
        (res,) = ingest_paths(data, [d / f"{name}.tr"], flow_labels=NAMES if name == "dumbbell" else None)
        assert res.status == "added", res.message
        out[name] = (res.run_id, d / f"{name}.tr")
    return data, out


def test_ingest_writes_the_parts_of_packet_trace_runs_only(runs):
    data, ids = runs
    files = sql_files()
    for name in ("dumbbell", "lan", "wireless"):
        got = {p.name for p in _fact_parts(data, ids[name][0])}
        assert got == {fact_part_name(t, definition_hash(files, t)) for t in FACT_TABLES}, name
    assert _fact_parts(data, ids["tcpvar"][0]) == []
    # the packets of every packet-trace run are there, one row per data packet
    n = dict(_rows(data, "SELECT run_id, count(*) FROM raw_packet_facts GROUP BY run_id"))
    assert set(n) == {ids[k][0] for k in ("dumbbell", "lan", "wireless")} and min(n.values()) > 10


def test_stored_and_computed_paths_agree_and_match_the_references(runs, tmp_path):
    data, ids = runs
    old = _without_facts(data, tmp_path / "old")            # a store ingested before the parts
    assert _rows(old, "SELECT count(*) FROM raw_packet_facts") == [(0,)]
    stored, computed = _all_rows(data, VIEWS), _all_rows(old, VIEWS)
    for view in VIEWS:
        assert stored[view], view
        _same(stored[view], computed[view], view)
    # and the stored path against the references (so the computed path too)
    con = connect(data)
    try:
        compare_run(con, ids["dumbbell"][0], ids["dumbbell"][1].read_text(), NAMES, window=(1.0, 3.0))
        compare_run(con, ids["lan"][0], ids["lan"][1].read_text(), {}, window=(0.5, 1.5))
        compare_views(con, ids["wireless"][0], refw.reference(ids["wireless"][1]), "stored")
    finally:
        close(con)


def test_a_store_mixing_runs_with_and_without_parts(runs, tmp_path):
    data, ids = runs
    mixed = _without_facts(data, tmp_path / "mixed", ids["lan"][0])
    # and the wireless run without its packet part only: its flows stored, its packets computed
    (part,) = mixed.glob(f"runs/run_id={ids['wireless'][0]}/packet_facts-*.parquet")
    part.unlink()
    queries = {v: VIEWS[v] for v in ("packets", "flow_stats", "wireless_flow_stats")}
    stored, got = _all_rows(data, queries), _all_rows(mixed, queries)
    for view in queries:
        _same(stored[view], got[view], view)


def test_a_part_is_read_only_under_its_definition(runs, tmp_path):
    """A part of the current definition is what the views read (a changed part changes the
    numbers); the same part under another definition's name is not read. flow_stats_window
    reads the packet facts per query; flow_stats (the whole run) reads flow_run_facts."""
    data, ids = runs
    rid = ids["dumbbell"][0]
    # the whole flow key: two flows of the run share fid 0 (ties in ORDER BY come in any order)
    order = f"WHERE run_id = '{rid}' ORDER BY fid, src_node, src_port, dst_node, dst_port"
    window = f"SELECT fid, dropped_pkts, sent_pkts FROM flow_stats_window(0.0, 1e9) {order}"
    whole = f"SELECT fid, sent_pkts, jitter_ms FROM flow_stats {order}"
    before, before_whole = _rows(data, window), _rows(data, whole)
    changed = shutil.copytree(data, tmp_path / "changed")
    con = duckdb.connect()
    for table, change in (("packet_facts", "drops + 1 AS drops"), ("flow_run_facts", "sent_pkts + 7 AS sent_pkts")):
        (part,) = changed.glob(f"runs/run_id={rid}/{table}-*.parquet")
        tmp = part.with_name("new.tmp")
        con.execute(f"COPY (SELECT * REPLACE ({change}) FROM read_parquet('{part}')) TO '{tmp}' (FORMAT parquet)")
        os.replace(tmp, part)
    con.close()
    assert _rows(changed, window) == [(f, d + s, s) for f, d, s in before]
    assert _rows(changed, whole) == [(f, s + 7, j) for f, s, j in before_whole]
    for table in ("packet_facts", "flow_run_facts"):
        (part,) = changed.glob(f"runs/run_id={rid}/{table}-*.parquet")
        part.rename(part.with_name(fact_part_name(table, "0" * 12)))      # an older definition
    assert _rows(changed, window) == before
    assert _rows(changed, whole) == before_whole


def test_a_damaged_part_is_a_damaged_run(runs, tmp_path):
    data, ids = runs
    rid = ids["lan"][0]
    broken = shutil.copytree(data, tmp_path / "broken")
    (part,) = broken.glob(f"runs/run_id={rid}/packet_facts-*.parquet")
    with open(part, "r+b") as f:
        f.truncate(part.stat().st_size // 2)
    n, damaged = verify(Store(broken))
    assert n == 4 and [(d.run_id, d.file) for d in damaged] == [(rid, part.name)]
    assert {r for (r,) in _rows(broken, "SELECT DISTINCT run_id FROM flow_stats")} == {
        ids["dumbbell"][0], ids["wireless"][0]}


def test_a_relabel_reaches_the_label_dependent_columns(runs, tmp_path):
    """hdr_bytes (and so goodput) depends on a flow's name where a TCP flow's seq 0 is not in
    the trace (Vegas sends no header bytes): it is not stored, so a new --flow-label on a
    re-ingest changes it on both paths alike. The dumbbell's trace from 1 s on (as if the
    tracing had started late) has no seq 0."""
    data, ids = runs
    store = shutil.copytree(data, tmp_path / "relabel")
    late = tmp_path / "late.tr"
    late.write_text("".join(ln for ln in ids["dumbbell"][1].read_text().splitlines(keepends=True)
                            if float(ln.split()[1]) >= 1.0))
    (res,) = ingest_paths(store, [late], flow_labels=NAMES)
    rid = res.run_id
    sql = (f"SELECT fid, src_node, src_port, dst_node, dst_port, hdr_bytes, goodput_kbps FROM flow_stats "
           f"WHERE run_id = '{rid}' ORDER BY ALL")
    before = {r[:5]: r[5:] for r in _rows(store, sql)}
    names = {**NAMES, 2: "Reno2"}                      # flow 2 is no longer called Vegas
    (res,) = ingest_paths(store, [late], flow_labels=names)
    assert res.status == "duplicate" and "labels updated" in res.message
    rows = _rows(store, sql)
    after = {r[:5]: r[5:] for r in rows}
    (vegas,) = [k for k in after if k[0] == 2]
    assert before[vegas][0] == 0 and after[vegas][0] == 40
    assert after[vegas][1] < before[vegas][1]          # 40 header bytes a packet: less goodput
    assert {k: v for k, v in after.items() if k != vegas} == {k: v for k, v in before.items() if k != vegas}
    exp = refm.all_metrics(late.read_text(), names)["flows"]
    assert {k: h for k, (h, _) in after.items()} == {k: fl.hdr_bytes for k, fl in exp.items()}
    _same(rows, _rows(_without_facts(store, tmp_path / "relabel_old"), sql), "relabelled")


def test_ingesting_a_run_again_adds_the_parts_it_lacks(runs, tmp_path):
    """A run of an old store gets its parts when its trace is ingested again (a duplicate:
    the run itself is kept); a run that has them is left as it is."""
    data, ids = runs
    rid, path = ids["lan"]
    old = _without_facts(data, tmp_path / "old", rid)
    before = {p.name: p.stat().st_mtime_ns for p in _fact_parts(old)}
    (res,) = ingest_paths(old, [path])
    assert res.status == "duplicate"
    assert {p.name for p in _fact_parts(old, rid)} == {p.name for p in _fact_parts(data, rid)}
    assert {p.name: p.stat().st_mtime_ns for p in _fact_parts(old) if p.parent.name != f"run_id={rid}"} == before
    assert not any(p.name.startswith(".") for p in (old / "runs" / f"run_id={rid}").iterdir())
    _same(_rows(data, VIEWS["flow_stats"]), _rows(old, VIEWS["flow_stats"]), "flow_stats")
    (res,) = ingest_paths(old, [ids["dumbbell"][1]])
    assert res.status == "duplicate" and {p.name: p.stat().st_mtime_ns for p in _fact_parts(old)
                                          if p.parent.name != f"run_id={rid}"} == before


def test_first_of_seq_by_hand_on_both_paths(tmp_path):
    """packets.first_of_seq (what goodput counts), stored at ingest and computed, on the hand
    traces of test_metrics: T1 (TCP) delivers seq 2 twice (ids 3 and 8, in that order), drops
    id 2 and leaves id 7 in flight; T5 (ping) has no seqs (-1), so each packet is its own."""
    from test_metrics import T1, T5

    data = tmp_path / "store"
    for name, text in (("T1", T1), ("T5", T5)):
        (tmp_path / f"{name}.tr").write_text(text)
        (res,) = ingest_paths(data, [tmp_path / f"{name}.tr"])
        assert res.status == "added", res.message
    assert len(_fact_parts(data)) == 2 * len(FACT_TABLES)
    old = _without_facts(data, tmp_path / "old")
    sql = "SELECT ptype, pkt_id, first_of_seq FROM packets ORDER BY ptype, pkt_id"
    expected = [("ping", 0, True), ("ping", 1, True), ("ping", 2, False),   # id 2 never delivered
                ("tcp", 0, True), ("tcp", 2, False), ("tcp", 3, True), ("tcp", 5, True),
                ("tcp", 7, False), ("tcp", 8, False)]                     # id 8: seq 2 again
    assert _rows(data, sql) == expected
    assert _rows(old, sql) == expected


# the wired packets as a plain group-by of data_events (every event joined with its flow, the
# data-packet rule applied to each event), without the LAN and first-delivery logic: what
# packet_facts_from_events' wired half must keep equal to whatever way it is computed (a
# rewrite that groups the events before applying the flows' rule must still pass)
PLAIN_WIRED_PACKETS = """
SELECT run_id, pkt_id, fid, src_node, src_port, dst_node, dst_port, ptype,
       min(size), max(size),
       min(time) FILTER (WHERE event IN ('+', 'h', 'd') AND from_node = src_node),
       min(time) FILTER (WHERE event = 'r' AND to_node = dst_node),
       min(line_no) FILTER (WHERE event = 'r' AND to_node = dst_node),
       coalesce(sum(size) FILTER (WHERE event = 'r' AND to_node = dst_node), 0),
       count(*) FILTER (WHERE event = 'd')
FROM data_events
WHERE event = 'r' AND to_node = dst_node OR event = 'd' OR event IN ('+', 'h') AND from_node = src_node
GROUP BY ALL ORDER BY ALL
"""
VIEW_WIRED_PACKETS = """
SELECT run_id, pkt_id, fid, src_node, src_port, dst_node, dst_port, ptype, size, size, t_sent,
       t_recv, recv_line, rx_bytes, drops + overheard
FROM packet_facts_from_events WHERE trace_kind = 'wired' ORDER BY ALL
"""


def test_wired_packets_equal_a_group_by_of_the_data_events(runs, tmp_path):
    """packet_facts_from_events' wired rows, computed and as stored, equal a plain group-by
    of data_events, on the dumbbell (one-way TCP and CBR), the LAN (overheard drops), a
    FullTcp run (its handshake and FIN, <= 40 bytes, are not data) and that run without one
    connection's data packets (a FullTcp flow of the handshake only: no flow, no packets)."""
    data, ids = runs
    d = tmp_path / "fulltcp"
    d.mkdir()
    _ns(str(TCL / "metrics_fulltcp.tcl"), str(d / "fulltcp.tr"), "1", cwd=d)
    lines = (d / "fulltcp.tr").read_text().splitlines(keepends=True)
    (d / "handshake.tr").write_text("".join(ln for ln in lines if not (ln.split()[7] == "8" and int(ln.split()[5]) > 40)))
    data_ft = tmp_path / "store"
    assert all(r.status == "added" for r in ingest_paths(data_ft, [d / "fulltcp.tr", d / "handshake.tr"]))
    ft_cases = ("SELECT (SELECT count(*) > 0 FROM events JOIN flows USING (run_id, fid, src_node, src_port, dst_node, "
                "dst_port) WHERE fulltcp AND size <= 40 AND events.ptype = 'tcp') AND (SELECT count(*) > 0 FROM events "
                "ANTI JOIN flows USING (run_id, fid, src_node, src_port, dst_node, dst_port) WHERE events.ptype = 'tcp')")
    for store, cases in ((data, "SELECT sum(overheard) > 0 FROM packet_facts"), (data_ft, ft_cases)):
        con = connect(store)
        try:
            assert con.execute(cases).fetchall() == [(True,)]       # the cases are in the runs
            plain = con.execute(PLAIN_WIRED_PACKETS).fetchall()
            assert len(plain) > 100 and all(r[8] == r[9] for r in plain)    # one size per packet
            _same(con.execute(VIEW_WIRED_PACKETS).fetchall(), plain, "computed")
            _same(con.execute(VIEW_WIRED_PACKETS.replace("packet_facts_from_events", "packet_facts")).fetchall(),
                  plain, "stored")
        finally:
            close(con)
