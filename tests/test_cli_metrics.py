"""`tracekit metrics`: run selection by --run and --where, and the values it prints, on two
tiny hand-written traces whose numbers are worked out here by hand."""
import json
import subprocess
import sys

import pytest

# One CBR flow, fid 1, node 0 -> node 1, two packets of 1000 B:
#   pkt 1 leaves at 0.0, arrives 0.1 (delay 100 ms); pkt 2 leaves 0.1, arrives 0.3 (200 ms).
#   sent 2, recv 2, rx_bytes 2000; throughput = 2000*8/1000 / (0.3 - 0.0) = 53.333... kbps;
#   mean delay 150 ms; jitter = |200 - 100| = 100 ms; pdr 1, drop_rate 0.
TRACE_A = """\
+ 0.0 0 1 cbr 1000 ------- 1 0.0 1.0 0 1
- 0.0 0 1 cbr 1000 ------- 1 0.0 1.0 0 1
r 0.1 0 1 cbr 1000 ------- 1 0.0 1.0 0 1
+ 0.1 0 1 cbr 1000 ------- 1 0.0 1.0 1 2
- 0.1 0 1 cbr 1000 ------- 1 0.0 1.0 1 2
r 0.3 0 1 cbr 1000 ------- 1 0.0 1.0 1 2
"""
# Same flow, but the second packet is dropped: sent 2, recv 1, dropped 1; throughput =
#   1000*8/1000 / (0.1 - 0.0) = 80 kbps; mean delay 100 ms; pdr 0.5; drop_rate 0.5.
TRACE_B = """\
+ 0.0 0 1 cbr 1000 ------- 1 0.0 1.0 0 1
- 0.0 0 1 cbr 1000 ------- 1 0.0 1.0 0 1
r 0.1 0 1 cbr 1000 ------- 1 0.0 1.0 0 1
+ 0.1 0 1 cbr 1000 ------- 1 0.0 1.0 1 2
d 0.1 0 1 cbr 1000 ------- 1 0.0 1.0 1 2
"""


def tk(data, *args, check=True):
    p = subprocess.run([sys.executable, "-m", "tracekit", *args, "--data", str(data)], capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("metrics")
    (d / "a.tr").write_text(TRACE_A)
    (d / "b.tr").write_text(TRACE_B)
    data = d / "store"
    tk(data, "ingest", str(d / "a.tr"), "--label", "variant=A", "--flow-label", "1=flowA")
    tk(data, "ingest", str(d / "b.tr"), "--label", "variant=B", "--flow-label", "1=flowB")
    return data


def test_where_selects_one_run_and_values_are_right(store):
    out = json.loads(tk(store, "metrics", "--where", "variant=A", "--format", "json").stdout)
    (row,) = out["flow_stats"]
    assert row["name"] == "flowA"
    assert (row["sent_pkts"], row["recv_pkts"], row["dropped_pkts"], row["rx_bytes"]) == (2, 2, 0, 2000)
    assert row["throughput_kbps"] == pytest.approx(2000 * 8 / 1000 / 0.3)
    assert row["mean_delay_ms"] == pytest.approx(150.0)
    assert row["jitter_ms"] == pytest.approx(100.0)
    assert (row["pdr"], row["drop_rate"]) == (1.0, 0.0)
    # one CBR flow: no TCP pair, so Jain's index is NULL
    assert [f["jain_index"] for f in out["fairness"]] == [None]


def test_run_prefix_and_csv(store):
    rid = tk(store, "sql", "SELECT run_id FROM runs WHERE labels['variant'] = 'B'", "--format", "csv").stdout.split()[1]
    lines = tk(store, "metrics", "--run", rid[:6], "--format", "csv").stdout.splitlines()
    # one CSV for every table, the first column naming each row's: here one flow and its run's fairness
    header, rows = lines[0].split(","), [dict(zip(lines[0].split(","), ln.split(","))) for ln in lines[1:]]
    assert header[0] == "table" and "throughput_kbps" in header
    assert [r["table"] for r in rows] == ["flow_stats", "fairness"]
    row = rows[0]
    assert (row["name"], row["sent_pkts"], row["recv_pkts"], row["dropped_pkts"]) == ("flowB", "2", "1", "1")
    assert float(row["throughput_kbps"]) == pytest.approx(80.0)
    assert (float(row["pdr"]), float(row["drop_rate"])) == (0.5, 0.5)


def test_where_takes_compares_filter_language(store):
    """--where KEY!=VALUE and KEY=a,b (tracekit compare's filters) choose the runs by hand."""
    names = lambda *w: sorted(r["name"] for r in json.loads(tk(store, "metrics", *w, "--format", "json").stdout)["flow_stats"])  # noqa: E731
    assert names("--where", "variant!=A") == ["flowB"]
    assert names("--where", "variant=A,B") == ["flowA", "flowB"]
    assert names("--where", "variant=A,B", "--where", "variant!=B") == ["flowA"]
    assert names("--where", "trace_kind=wired", "--where", "variant=B") == ["flowB"]
    p = tk(store, "metrics", "--where", "name=flowA", check=False)
    assert p.returncode == 1 and p.stderr.startswith("tracekit: error: --where name=flowA filters flows")


def test_no_match_is_one_line(store):
    p = tk(store, "metrics", "--where", "variant=C", check=False)
    assert p.returncode == 1
    assert p.stderr.strip() == "tracekit: error: no packet-trace runs match the --run/--where filters"


def test_table_columns_are_the_catalogues_flow_metrics(store):
    """The table shows the flow's key and every flow-level metric of sql/catalogue.toml read
    from flow_stats (read here from the file, not through tracekit.db.catalogue), and points to
    tracekit compare."""
    import tomllib
    from pathlib import Path

    cat = tomllib.loads((Path(__file__).resolve().parent.parent / "sql" / "catalogue.toml").read_text())
    flow_cols = [m["source"].split(".", 1)[1] for m in cat["metrics"].values()
                 if m["level"] == "flow" and m["source"].startswith("flow_stats.")]
    have = json.loads(tk(store, "metrics", "--format", "json").stdout)["flow_stats"][0].keys()
    out = tk(store, "metrics", "--where", "variant=A").stdout
    header = next(ln for ln in out.splitlines() if "run_id" in ln)
    for col in [c for c in flow_cols if c in have]:
        assert col[:6] in header, col          # rich may fold a long header; its start is there
    assert "tracekit compare" in out


def test_by_needs_seeds(store):
    """These two runs carry no seed label: they are not replications, so --by has nothing to
    test and says so in one line."""
    p = tk(store, "metrics", "--by", "variant", check=False)
    assert p.returncode == 1
    assert p.stderr.strip().startswith("tracekit: error: no runs with a seed") and p.stderr.count("\n") == 1
