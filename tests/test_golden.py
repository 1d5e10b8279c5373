"""Golden files: every output format of every command with --format, and the HTML skeleton of
tracekit report, on a small fixed store (four cbr-variants runs of sample_traces/: Reno and
Vegas at CBR 7 Mb/s, seeds 1 and 2), compared with tests/golden/ (see its README.md).
`pytest --update-golden tests/test_golden.py` rewrites them. Besides the snapshot, one value
per format is checked against the trace itself (awk over the decompressed trace)."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import TRACEKIT_CMD

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SAMPLES = ROOT / "sample_traces" / "cbr-variants"
RUNS = {"Reno-1": "Reno-7.0-seed1", "Reno-2": "Reno-7.0-seed2", "Vegas-1": "Vegas-7.0-seed1", "Vegas-2": "Vegas-7.0-seed2"}
COLUMNS = "120"      # tables are as wide as $COLUMNS when piped: fixed, so the table goldens do not depend on the terminal
AWK = ROOT / "tests" / "awk" / "combo_every_hop_acks.awk"
SQL = "SELECT run_id, fid, name, sent_pkts, recv_pkts, rx_bytes FROM flow_stats ORDER BY run_id, fid"


def _awk(trace: Path, *args: str) -> str:
    """awk over the decompressed trace: the independent second computation."""
    text = subprocess.run(["zstdcat", str(trace)], capture_output=True, check=True).stdout
    return subprocess.run(["awk", *args], input=text, capture_output=True, check=True).stdout.decode().strip()


@pytest.fixture(scope="module")
def golden_store():
    """The store and the traces' directory. The traces sit under a /tmp directory whose name
    has a fixed length, so the runs table (it shows each run's source path) keeps its widths;
    _normalise replaces the directory by TRACES."""
    if not shutil.which("zstdcat") or not shutil.which("awk"):
        pytest.skip("zstdcat and awk are needed for the independent checks")
    top = Path(tempfile.mkdtemp(prefix="tkgold-", dir="/tmp"))
    try:
        for short, folder in RUNS.items():
            (top / "in" / short).mkdir(parents=True)
            for f in (SAMPLES / folder).iterdir():
                shutil.copy(f, top / "in" / short / f.name)
        (top / "reno1.tr").write_bytes(subprocess.run(["zstdcat", str(SAMPLES / RUNS["Reno-1"] / "packets.tr.zst")], capture_output=True, check=True).stdout)
        proc = _cli("ingest", top / "in", data=top / "store")
        assert proc.returncode == 0, proc.stderr
        yield top
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _cli(*args, data: Path | None = None, columns: str = COLUMNS) -> subprocess.CompletedProcess:
    cmd = [*TRACEKIT_CMD, *map(str, args)] + (["--data", str(data)] if data is not None else [])
    env = {**os.environ, "COLUMNS": columns}
    env.pop("TRACEKIT_DATA", None)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)


def _normalise(text: str, top: Path) -> str:
    """Volatile values replaced: the traces' temporary directory (in run sources) by a fixed
    name of the same length (mkdtemp's 8 random characters as X), so table columns keep
    their widths."""
    return text.replace(str(top), str(top.parent / ("tkgold-" + "X" * 8)))


def _compare(name: str, got: str, update: bool) -> None:
    path = GOLDEN / name
    if update:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(got)
        return
    assert path.exists(), f"no golden file {path}: run pytest --update-golden tests/test_golden.py"
    assert got == path.read_text(), f"{name} differs from its golden file (pytest --update-golden rewrites it after a deliberate change)"


# (golden name, command arguments, needs the store)
CASES = [
    # runs: its table is printed 1000 columns wide, so the source paths are not wrapped (and normalised whole)
    *[(f"runs.{f}", ["runs", "--format", f], True) for f in ("table", "csv", "json")],
    *[(f"sql.{f}", ["sql", SQL, "--format", f], True) for f in ("table", "csv", "json")],
    *[(f"metrics.{f}", ["metrics", "--format", f], True) for f in ("table", "csv", "json")],
    *[(f"compare.{f}", ["compare", "cbr-variants", "--by", "variant", "--format", f], True) for f in ("table", "csv", "json")],
    *[(f"scenarios.{f}", ["scenarios", "--format", f], False) for f in ("table", "csv", "json")],
    *[(f"reproduce.{f}", ["reproduce", "cbr-exp1", "--quick", "--no-run", "--format", f], True) for f in ("table", "json", "markdown")],
    *[(f"explain-awk.{f}", ["explain-awk", "--format", f, AWK, "TRACE", "--data", "STORE", "--", "-v", "run_end=5.15"], False) for f in ("table", "json")],
]


@pytest.mark.parametrize("name,args,store", CASES, ids=[c[0] for c in CASES])
def test_golden_output(golden_store, request, name, args, store):
    # explain-awk's trace and store are known only here; its own --data goes before its "--"
    args = [golden_store / "reno1.tr" if a == "TRACE" else golden_store / "store" if a == "STORE" else a for a in args]
    proc = _cli(*args, data=golden_store / "store" if store else None, columns="1000" if name == "runs.table" else COLUMNS)
    assert proc.returncode == 0, proc.stderr
    _compare(name, _normalise(proc.stdout, golden_store), request.config.getoption("--update-golden"))


def test_table_does_not_depend_on_the_terminal(golden_store):
    """The same table at another $COLUMNS is the same when it fits in both (sql's is narrow)."""
    a = _cli("sql", SQL, data=golden_store / "store", columns="120").stdout
    b = _cli("sql", SQL, data=golden_store / "store", columns="200").stdout
    assert a == b


def _skeleton(html: str) -> str:
    """The report's HTML structure: scripts (plotly's bundled JS and each figure's data) emptied,
    the write time, the tracekit version and the ns-2 path and version replaced, figure div ids
    (random) numbered in order, the exact values of data-value attributes to 9 significant
    digits (DuckDB's parallel sums differ in the last bits from run to run)."""
    html = re.sub(r'data-value="(-?[0-9.]+(?:e[-+]?[0-9]+)?)"', lambda m: f'data-value="{float(m.group(1)):.9g}"', html)
    html = re.sub(r"<script\b[^>]*>.*?</script>", "<script></script>", html, flags=re.S)
    html = re.sub(r"written \d{4}-\d\d-\d\d \d\d:\d\d UTC by tracekit [^;]+;", "written TIME by tracekit VERSION;", html)
    html = re.sub(r"runs ingested by [^;<]+; report by [^<]+<", "runs ingested by VERSION; report by VERSION<", html)
    html = re.sub(r"(<th>ns-2 version</th><td>)[^<]*", r"\1NS2", html)
    ids: dict[str, str] = {}
    for m in re.finditer(r'id="([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"', html):
        ids.setdefault(m.group(1), f"FIG{len(ids)}")
    for uid, fig in ids.items():
        html = html.replace(uid, fig)
    return html


def test_golden_report_skeleton(golden_store, request):
    pytest.importorskip("plotly")
    out = golden_store / "report.html"
    proc = _cli("report", "--scenario", "cbr-variants", "-o", out, data=golden_store / "store")
    assert proc.returncode == 0, proc.stderr
    html = out.read_text()
    # one value checked against the trace: the 4 wired runs the conditions table counts
    n_runs = sum(1 for short in RUNS if (golden_store / "in" / short / "packets.tr.zst").exists())
    assert f"<td>{n_runs} wired packet-trace runs with a seed" in html
    _compare("report.skeleton.html", _normalise(_skeleton(html), golden_store), request.config.getoption("--update-golden"))


# ---- one value per format computed from the trace with awk, not from tracekit -------------

def _reno1_rx_bytes() -> int:
    return int(_awk(SAMPLES / RUNS["Reno-1"] / "packets.tr.zst", '$1=="r" && $8==1 && $4==3 {s+=$6} END {print s}'))


def _reno1_events() -> int:
    return int(_awk(SAMPLES / RUNS["Reno-1"] / "packets.tr.zst", '$1 ~ /^[-+rd]$/ {n++} END {print n}'))


def _reno1_run_id(top: Path) -> str:
    rows = list(csv.DictReader(io.StringIO(_cli("runs", "--format", "csv", data=top / "store").stdout)))
    return next(r["run_id"] for r in rows if r["source"].endswith("Reno-1/packets.tr.zst"))


def test_csv_rx_bytes_is_the_trace_sum(golden_store):
    rows = list(csv.DictReader(io.StringIO((GOLDEN / "sql.csv").read_text())))
    rid = _reno1_run_id(golden_store)
    assert [int(r["rx_bytes"]) for r in rows if r["run_id"] == rid and r["fid"] == "1"] == [_reno1_rx_bytes()]


def test_json_rx_bytes_is_the_trace_sum(golden_store):
    rows = json.loads((GOLDEN / "metrics.json").read_text())["flow_stats"]
    rid = _reno1_run_id(golden_store)
    assert [r["rx_bytes"] for r in rows if r["run_id"] == rid and r["fid"] == 1] == [_reno1_rx_bytes()]


def test_table_n_events_is_the_trace_count(golden_store):
    line = next(ln for ln in (GOLDEN / "runs.table").read_text().splitlines() if "Reno-1/packets.tr.zst" in ln)
    assert f" {_reno1_events()} " in line


def test_markdown_counts_the_simulations_in_the_store():
    # none of the four 5 s runs is one of cbr-exp1's 10 s quick simulations
    assert "- 0 of the experiment's 132 simulations are in the store" in (GOLDEN / "reproduce.markdown").read_text()


def test_explain_awk_json_prints_what_awk_prints():
    out = _awk(SAMPLES / RUNS["Reno-1"] / "packets.tr.zst", "-v", "run_end=5.15", "-f", str(AWK))
    printed = float(re.findall(r"\d+(?:\.\d+)?", out)[0])
    (row,) = json.loads((GOLDEN / "explain-awk.json").read_text())["numbers"]
    assert float(row["printed"]) == printed
