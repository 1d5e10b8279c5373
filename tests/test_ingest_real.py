"""Ingest of real ns-2.35 output, checked against gawk and plain Python loops over the
same files (never against values tracekit printed once)."""
from __future__ import annotations

import hashlib
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tracekit.ingest.pipeline import ingest_file
from tracekit.db.query import connect
from tracekit.store.store import Store

WIRED = ("wired_plain", "wired_tcphdr", "wired_latehdr", "wired_annotate")
OTHER = {"tcpvar": "tcpvar", "qmon_samples": "queue_monitor", "qmon_events": "queue_monitor", "red": "red"}


@pytest.fixture(scope="module")
def ingested(tmp_path_factory, ns_traces):
    """Every ns-2 trace ingested into one store: (connection, {trace name: run_id})."""
    d = tmp_path_factory.mktemp("real") / "store"
    store = Store(d, create=True)
    ids = {}
    for name, path in ns_traces.items():
        r = ingest_file(store, path)
        assert r.status == "added", (name, r)
        ids[name] = r.run_id
    assert len(set(ids.values())) == len(ids)
    return connect(d), ids


def q(con, sql, *params):
    return con.execute(sql, list(params)).fetchall()


def gawk(program: str, path: Path) -> list[list[str]]:
    out = subprocess.run(["gawk", program, str(path)], capture_output=True, text=True, check=True).stdout
    return [line.split() for line in out.splitlines()]


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines()


def plain_wired(line: str) -> dict:
    """A wired trace line the obvious way: split on spaces, node.port split on the dot."""
    f = line.split(" ")
    sn, sp = f[8].split(".")
    dn, dp = f[9].split(".")
    row = {
        "event": f[0], "time": float(f[1]), "from_node": int(f[2]), "to_node": int(f[3]),
        "ptype": f[4], "size": int(f[5]), "flags": f[6], "fid": int(f[7]),
        "src_node": int(sn), "src_port": int(sp), "dst_node": int(dn), "dst_port": int(dp),
        "seq": int(f[10]), "pkt_id": int(f[11]),
        "tcp_ackno": None, "tcp_flags": None, "tcp_hlen": None, "sack_blocks": None,
    }
    if len(f) == 16:
        row.update(tcp_ackno=int(f[12]), tcp_flags=int(f[13], 16), tcp_hlen=int(f[14]), sack_blocks=int(f[15]))
    return row


EVENT_COLS = ("event", "time", "from_node", "to_node", "ptype", "size", "flags", "fid", "src_node",
              "src_port", "dst_node", "dst_port", "seq", "pkt_id", "tcp_ackno", "tcp_flags", "tcp_hlen", "sack_blocks")


def event_row(con, run_id, line_no) -> dict:
    rows = q(con, f"SELECT {', '.join(EVENT_COLS)} FROM events WHERE run_id = ? AND line_no = ?", run_id, line_no)
    assert len(rows) == 1, f"line {line_no}: {len(rows)} rows"
    return dict(zip(EVENT_COLS, rows[0]))


# -- wired ---------------------------------------------------------------------------------

@pytest.mark.parametrize("name", WIRED)
def test_event_counts_match_gawk(ingested, ns_traces, name):
    con, ids = ingested
    expected = {k: int(v) for k, v in gawk("{c[$1]++} END {for (k in c) print k, c[k]}", ns_traces[name])}
    got = dict(q(con, "SELECT event, count(*) FROM events WHERE run_id = ? GROUP BY event", ids[name]))
    for ev in "+-rd":
        assert got.get(ev, 0) == expected.get(ev, 0), ev
    assert sum(got.values()) == sum(n for k, n in expected.items() if k in "+-rd")
    assert expected.get("d", 0) > 0   # the scripts are built to drop packets


def test_field_counts_of_the_traces_are_as_intended(ns_traces):
    """Guards the fixtures themselves: 12 fields, 16 fields, and both in one file."""
    nf = {name: {int(n) for (n,) in gawk('$1 ~ /^[-+rd]$/ {print NF}', ns_traces[name])} for name in WIRED}
    assert nf == {"wired_plain": {12}, "wired_tcphdr": {16}, "wired_latehdr": {12, 16}, "wired_annotate": {12}}


def _pick(path: Path, cond: str) -> list[int]:
    """Line numbers (1-based) of the lines gawk selects."""
    return [int(r[0]) for r in gawk(f"{cond} {{print NR}}", path)]


@pytest.mark.parametrize(
    "name, cond",
    [
        ("wired_plain", "$1 == \"d\""),                                   # first drop
        ("wired_plain", "$5 == \"ack\""),                                 # an ACK
        ("wired_plain", "$5 == \"cbr\" && $1 == \"r\""),                  # CBR delivered
        ("wired_plain", "$11 > 20 && $5 == \"tcp\""),                     # later TCP segment
        ("wired_tcphdr", "NF == 16 && $14 != \"0x0\""),                   # FullTcp SYN, hex flags
        ("wired_tcphdr", "NF == 16 && $14 == \"0x10\""),                  # FullTcp ACK flag
        ("wired_tcphdr", "NF == 16 && $13 > 0"),                          # a non-zero ackno
        ("wired_latehdr", "NF == 12"),
        ("wired_latehdr", "NF == 16"),
        ("wired_annotate", "$1 == \"r\" && $2 > 0.8"),                    # after link-up
    ],
)
def test_chosen_lines_every_column(ingested, ns_traces, name, cond):
    con, ids = ingested
    path = ns_traces[name]
    picked = _pick(path, cond)
    assert picked, f"no line matches {cond} in {name}"
    text = lines_of(path)
    for line_no in (picked[0], picked[len(picked) // 2], picked[-1]):
        assert event_row(con, ids[name], line_no) == plain_wired(text[line_no - 1]), f"{name}:{line_no}"


def test_last_line_of_each_wired_trace(ingested, ns_traces):
    con, ids = ingested
    for name in WIRED:
        text = lines_of(ns_traces[name])
        last = max(i for i, line in enumerate(text, 1) if line[:2] in ("+ ", "- ", "r ", "d "))
        assert event_row(con, ids[name], last) == plain_wired(text[last - 1])


@pytest.mark.parametrize("name", WIRED)
def test_round_trip_sums(ingested, ns_traces, name):
    con, ids = ingested
    size_by_event, rows_by_ptype = Counter(), Counter()
    pkt_ids, seq_sum, fid_sum, node_sum, time_sum = set(), 0, 0, 0, 0.0
    hdr = Counter()
    n_hdr_lines = 0
    for line in lines_of(ns_traces[name]):
        f = line.split(" ")
        if f[0] not in ("+", "-", "r", "d"):
            continue
        size_by_event[f[0]] += int(f[5])
        rows_by_ptype[f[4]] += 1
        pkt_ids.add(int(f[11]))
        seq_sum += int(f[10])
        fid_sum += int(f[7])
        node_sum += int(f[2]) * 10 + int(f[3]) + sum(int(x) for x in f[8].split(".") + f[9].split("."))
        time_sum += float(f[1])
        if len(f) == 16:
            n_hdr_lines += 1
            hdr["ackno"] += int(f[12])
            hdr["flags"] += int(f[13], 16)
            hdr["hlen"] += int(f[14])
            hdr["sack"] += int(f[15])
    rid = ids[name]
    assert dict(q(con, "SELECT event, sum(size) FROM events WHERE run_id = ? GROUP BY event", rid)) == dict(size_by_event)
    assert dict(q(con, "SELECT ptype, count(*) FROM events WHERE run_id = ? GROUP BY ptype", rid)) == dict(rows_by_ptype)
    (n_pkt, s_seq, s_fid, s_node, s_time, n_hdr, s_ack, s_flags, s_hlen, s_sack), = q(
        con,
        "SELECT count(DISTINCT pkt_id), sum(seq), sum(fid), "
        "sum(from_node * 10 + to_node + src_node + src_port + dst_node + dst_port), sum(time), "
        "count(tcp_ackno), sum(tcp_ackno), sum(tcp_flags), sum(tcp_hlen), sum(sack_blocks) "
        "FROM events WHERE run_id = ?", rid)
    assert (n_pkt, s_seq, s_fid, s_node) == (len(pkt_ids), seq_sum, fid_sum, node_sum)
    assert s_time == pytest.approx(time_sum, rel=1e-12)
    assert n_hdr == n_hdr_lines
    if n_hdr_lines:
        assert (s_ack, s_flags, s_hlen, s_sack) == (hdr["ackno"], hdr["flags"], hdr["hlen"], hdr["sack"])
    else:
        assert (s_ack, s_flags, s_hlen, s_sack) == (None, None, None, None)


def test_mixed_file_has_extras_exactly_on_16_field_lines(ingested, ns_traces):
    con, ids = ingested
    want16 = set(_pick(ns_traces["wired_latehdr"], "NF == 16"))
    got16 = {r[0] for r in q(con, "SELECT line_no FROM events WHERE run_id = ? AND tcp_hlen IS NOT NULL", ids["wired_latehdr"])}
    got12_with_extras = q(con, "SELECT count(*) FROM events WHERE run_id = ? AND tcp_hlen IS NULL AND "
                               "(tcp_ackno IS NOT NULL OR tcp_flags IS NOT NULL OR sack_blocks IS NOT NULL)", ids["wired_latehdr"])
    assert got16 == want16
    assert got12_with_extras == [(0,)]


def test_line_numbers_are_the_files(ingested, ns_traces):
    """line_no of every event is the 1-based line in the file, and `v` lines are not events."""
    con, ids = ingested
    path = ns_traces["wired_annotate"]
    want = [i for i, line in enumerate(lines_of(path), 1) if line[:2] in ("+ ", "- ", "r ", "d ")]
    got = [r[0] for r in q(con, "SELECT line_no FROM events WHERE run_id = ? ORDER BY line_no", ids["wired_annotate"])]
    assert got == want


def test_annotations_text(ingested, ns_traces):
    con, ids = ingested
    want = []
    for i, line in enumerate(lines_of(ns_traces["wired_annotate"]), 1):
        if line.startswith("v "):
            _, t, rest = line.split(" ", 2)
            want.append((i, float(t), rest))
    assert len(want) == 10 and any("hello from tracekit tests" in w[2] for w in want)
    got = q(con, "SELECT line_no, time, text FROM annotations WHERE run_id = ? ORDER BY line_no", ids["wired_annotate"])
    assert got == want
    assert q(con, "SELECT count(*) FROM annotations WHERE run_id <> ?", ids["wired_annotate"]) == [(0,)]


def test_runs_record(ingested, ns_traces):
    con, ids = ingested
    for name, path in ns_traces.items():
        data = path.read_bytes()
        text = data.decode().splitlines()
        row = q(con, "SELECT sha256, size_bytes, n_lines, n_events, n_skipped_lines, trace_kind, source, compression "
                     "FROM runs WHERE run_id = ?", ids[name])
        assert len(row) == 1
        sha, size, n_lines, n_events, n_skipped, kind, source, comp = row[0]
        assert sha == hashlib.sha256(data).hexdigest() and ids[name] == sha[:16]
        assert (size, n_lines, n_skipped, source, comp) == (len(data), len(text), 0, str(path.resolve()), "none")
        assert kind == ("wired" if name in WIRED else OTHER[name])
        if name in WIRED:
            ev = [line.split(" ") for line in text if line[:2] in ("+ ", "- ", "r ", "d ")]
            assert n_events == len(ev)
            t_start, t_end = q(con, "SELECT t_start, t_end FROM runs WHERE run_id = ?", ids[name])[0]
            assert (t_start, t_end) == (min(float(f[1]) for f in ev), max(float(f[1]) for f in ev))


# -- TCP variable trace ----------------------------------------------------------------------

def test_tcp_vars_counts_per_agent_and_var(ingested, ns_traces):
    con, ids = ingested
    want = {(int(a), int(b), c): int(n) for a, b, c, n in
            gawk("{c[$2 \" \" $3 \" \" $6]++} END {for (k in c) print k, c[k]}", ns_traces["tcpvar"])}
    got = {(a, b, c): n for a, b, c, n in
           q(con, "SELECT src_node, src_port, var, count(*) FROM tcp_vars WHERE run_id = ? GROUP BY ALL", ids["tcpvar"])}
    assert got == want
    assert {(a, b) for a, b, _ in want} == {(0, 0), (0, 1), (1, 0)}


def test_tcp_vars_every_row(ingested, ns_traces):
    con, ids = ingested
    want = []
    for i, line in enumerate(lines_of(ns_traces["tcpvar"]), 1):
        f = line.split()
        want.append((i, float(f[0]), int(f[1]), int(f[2]), int(f[3]), int(f[4]), f[5], float(f[6])))
    assert any(line.endswith(" ") for line in lines_of(ns_traces["tcpvar"]))   # ns pads cwnd_ values
    got = q(con, "SELECT line_no, time, src_node, src_port, dst_node, dst_port, var, value FROM tcp_vars "
                 "WHERE run_id = ? ORDER BY line_no", ids["tcpvar"])
    assert got == want


# -- queue monitors and RED -------------------------------------------------------------------

QS_COLS = ("line_no", "sample_kind", "time", "from_node", "to_node", "bytes", "pkts", "arrivals_pkts",
           "departures_pkts", "drops_pkts", "arrivals_bytes", "departures_bytes", "drops_bytes")


def _qs(con, rid):
    return q(con, f"SELECT {', '.join(QS_COLS)} FROM queue_samples WHERE run_id = ? ORDER BY line_no", rid)


def test_queue_samples_periodic(ingested, ns_traces):
    con, ids = ingested
    want = []
    for i, line in enumerate(lines_of(ns_traces["qmon_samples"]), 1):
        f = line.split()
        assert len(f) == 11
        want.append((i, "periodic", float(f[0]), int(f[1]), int(f[2]), float(f[3]), float(f[4]),
                     int(f[5]), int(f[6]), int(f[7]), int(f[8]), int(f[9]), int(f[10])))
    assert len(want) >= 8 and any(w[9] > 0 for w in want)   # some drops were counted
    assert _qs(con, ids["qmon_samples"]) == want


def test_queue_samples_events(ingested, ns_traces):
    con, ids = ingested
    want = []
    for i, line in enumerate(lines_of(ns_traces["qmon_events"]), 1):
        f = line.split()
        assert f[0] == "q" and f[1::2] == ["-t", "-s", "-d", "-l", "-p"]
        want.append((i, "event", float(f[2]), int(f[4]), int(f[6]), float(f[8]), float(f[10])) + (None,) * 6)
    assert _qs(con, ids["qmon_events"]) == want


def test_red_vars(ingested, ns_traces):
    con, ids = ingested
    names = {"Q": "curq", "a": "ave", "p": "prob1", "c": "cur_max_p"}
    want, counts = [], Counter()
    for i, line in enumerate(lines_of(ns_traces["red"]), 1):
        code, t, v = line.split()
        want.append((i, names[code], float(t), float(v)))
        counts[names[code]] += 1
    awk_counts = {names[k]: int(n) for k, n in gawk("{c[$1]++} END {for (k in c) print k, c[k]}", ns_traces["red"])}
    assert dict(counts) == awk_counts and set(counts) == set(names.values())
    rid = ids["red"]
    assert dict(q(con, "SELECT var, count(*) FROM red_vars WHERE run_id = ? GROUP BY var", rid)) == awk_counts
    assert q(con, "SELECT line_no, var, time, value FROM red_vars WHERE run_id = ? ORDER BY line_no", rid) == want


def test_each_kind_fills_only_its_table(ingested):
    con, ids = ingested
    tables = {"events": WIRED, "tcp_vars": ("tcpvar",), "queue_samples": ("qmon_samples", "qmon_events"), "red_vars": ("red",)}
    for table, owners in tables.items():
        got = {r[0] for r in q(con, f"SELECT DISTINCT run_id FROM {table}")}
        assert got == {ids[n] for n in owners}, table
    per_run = defaultdict(int)
    for rid, n in q(con, "SELECT run_id, n_events FROM runs"):
        per_run[rid] = n
    for table, owners in tables.items():
        for name in owners:
            assert q(con, f"SELECT count(*) FROM {table} WHERE run_id = ?", ids[name])[0][0] == per_run[ids[name]]
