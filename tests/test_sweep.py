"""The run/sweep engine on real ns-2: grids, resume after a re-run or a kill, failures."""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import ns_failing_for_seed_2

from tracekit.core.errors import TracekitError
from tracekit.experiments.sweep import done_sim_ids, make_spec, parse_grid, parse_seeds, plan_experiment, plan_sweep

NS = shutil.which("ns")
needs_ns = pytest.mark.skipif(NS is None, reason="ns-2 (/usr/bin/ns) is not installed")
TK = [sys.executable, "-m", "tracekit"]


def tk(*args, data, check=True, **kw):
    p = subprocess.run(TK + list(args) + ["--data", str(data)], capture_output=True, text=True, **kw)
    if check and p.returncode != 0:
        raise AssertionError(f"tracekit {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p


def count_runs(data: Path) -> dict[str, int]:
    """Runs per trace kind, by listing the store's run records (no tracekit code)."""
    import pyarrow.parquet as pq

    counts: dict[str, int] = {}
    for f in (data / "runs").glob("run_id=*/run.parquet"):
        kind = pq.read_table(f).column("trace_kind")[0].as_py()
        counts[kind] = counts.get(kind, 0) + 1
    return counts


def test_parse_grid_list_and_range():
    assert parse_grid("variant=Reno,Vegas") == ("variant", ["Reno", "Vegas"])
    assert parse_grid("cbr_rate_mbps=1:2:0.5") == ("cbr_rate_mbps", ["1.0", "1.5", "2.0"])
    assert parse_grid("window=5:20:5") == ("window", ["5", "10", "15", "20"])
    # 1 to 10 in 0.1 steps, stop included: 91 values, no float drift in the labels
    k, vals = parse_grid("cbr_rate_mbps=1:10:0.1")
    assert len(vals) == 91 and vals[0] == "1.0" and vals[-1] == "10.0" and vals[13] == "2.3"


@pytest.mark.parametrize("bad", ["variant", "=1,2", "x=", "x=1:2", "x=3:1:1", "x=1:5:0", "x=a:b:c"])
def test_parse_grid_rejects(bad):
    with pytest.raises(TracekitError, match="--grid"):
        parse_grid(bad)


def test_parse_seeds():
    assert parse_seeds("1-5") == [1, 2, 3, 4, 5]
    assert parse_seeds("3,1,3") == [1, 3]
    for bad in ("0", "5-1", "a", "", "1-"):
        with pytest.raises(TracekitError):
            parse_seeds(bad)


def test_plan_is_the_cross_product_and_validates():
    specs = plan_sweep("cbr-variants", [parse_grid("variant=Reno,Vegas,Tahoe"), parse_grid("cbr_rate_mbps=1,2")],
                       parse_seeds("1-2"), {"duration": "1"})
    assert len(specs) == 3 * 2 * 2
    assert len({s.sim_id for s in specs}) == 12
    with pytest.raises(TracekitError, match="variant"):
        plan_sweep("cbr-variants", [parse_grid("variant=Cubic")], [1], {})
    with pytest.raises(TracekitError, match="unknown parameter"):
        plan_sweep("cbr-variants", [parse_grid("nope=1")], [1], {})
    with pytest.raises(TracekitError, match="given twice"):
        plan_sweep("cbr-variants", [parse_grid("variant=Reno")], [1], {"variant": "Vegas"})


def old_sim_id(scenario: str, formatted: dict[str, str], seed: int) -> str:
    """sim_id by its definition, written out: the first 16 hex digits of the sha256 of the
    JSON (sorted keys) of scenario, parameters as on the ns command line, and seed."""
    import hashlib
    import json

    text = json.dumps({"scenario": scenario, "params": formatted, "seed": seed}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_sim_id_is_the_documented_hash():
    # every parameter given: the formatted values are written out by hand
    spec = make_spec("newreno-vs-reno", {"duration": "20", "config": "RED", "flows_per_variant": "3",
                                         "start_max": "2.5", "udp_rate_mbps": "1e-2", "udp_packet_size": "500",
                                         "access_mbps": "10", "window": "8000", "extra_flows": "2",
                                         "extra_variant": "reno", "extra_duration_s": "5", "drain_s": "1.5"}, 7)
    assert spec.sim_id == old_sim_id("newreno-vs-reno", {
        "duration": "20.0", "config": "red", "flows_per_variant": "3", "start_max": "2.5", "udp_rate_mbps": "0.01",
        "udp_packet_size": "500", "access_mbps": "10.0", "window": "8000", "extra_flows": "2",
        "extra_variant": "Reno", "extra_duration_s": "5.0", "drain_s": "1.5"}, 7)
    # defaults filled in: floats as Python writes them (repr), the rest as text
    for spec in [make_spec("cbr-variants", {"cbr_rate_mbps": "2.5", "variant": "vegas"}, 4),
                 make_spec("manet", {"routing": "DSR"}, 1),
                 *plan_experiment("cbr-exp3-red-links")[:3]]:
        formatted = {k: repr(v) if isinstance(v, float) else str(v) for k, v in spec.params}
        assert spec.sim_id == old_sim_id(spec.scenario, formatted, spec.seed)
        assert spec.describe() == " ".join([spec.scenario, *(f"{k}={v}" for k, v in formatted.items()),
                                            f"seed={spec.seed}"])
    # a SimSpec carries the resolved (typed) parameters, in declaration order
    from tracekit.experiments import SCENARIOS

    params = dict(make_spec("cbr-variants", {"window": "30"}, 2).params)
    assert params["window"] == 30 and type(params["window"]) is int and type(params["duration"]) is float
    assert list(params) == [p.name for p in SCENARIOS["cbr-variants"].params]


@pytest.mark.slow
@needs_ns
def test_sweep_runs_everything_and_rerun_does_nothing(tmp_path):
    data = tmp_path / "store"
    args = ["sweep", "cbr-variants", "--grid", "variant=Reno,Vegas", "--grid", "cbr_rate_mbps=2,6",
            "--seeds", "1-2", "--set", "duration=1", "-j", "2"]
    p = tk(*args, data=data)
    assert "sweep: 8 ran, 0 already in the store, 0 failed" in p.stdout
    # every simulation lands as its three traces
    assert count_runs(data) == {"wired": 8, "tcpvar": 8, "queue_monitor": 8}
    # the sweep compacted the store at its end: every run it made is in the manifest
    manifest = json.loads((data / "compacted" / (data / "compacted" / "CURRENT").read_text().strip() / "manifest.json").read_text())
    assert len(manifest["run_ids"]) == 24
    p = tk(*args, data=data)
    assert "sweep: 0 ran, 8 already in the store, 0 failed" in p.stdout
    # a sweep that ran nothing does not compact again
    assert (data / "compacted" / "CURRENT").read_text().strip() == f"gen-{manifest['generation']}"
    assert count_runs(data) == {"wired": 8, "tcpvar": 8, "queue_monitor": 8}
    # the flows are named after the scenario's roles
    out = tk("sql", "SELECT DISTINCT name FROM flow_labels ORDER BY name", "--format", "csv", data=data).stdout
    assert out.split() == ["name", "CBR", "Reno", "Vegas"]


@pytest.mark.slow
@needs_ns
def test_manet_sweep_lands_wireless_runs_and_resumes(tmp_path):
    """The wireless scenario: a packet trace of kind wireless and a cwnd trace per
    simulation, no queue trace; a re-run knows them as done."""
    data = tmp_path / "store"
    args = ["sweep", "manet", "--grid", "routing=AODV,DSR", "--seeds", "1",
            "--set", "duration=4", "--set", "nodes=6", "--set", "start_max=1"]
    p = tk(*args, data=data)
    assert "sweep: 2 ran, 0 already in the store, 0 failed" in p.stdout
    assert count_runs(data) == {"wireless": 2, "tcpvar": 2}
    p = tk(*args, data=data)
    assert "sweep: 0 ran, 2 already in the store, 0 failed" in p.stdout
    assert count_runs(data) == {"wireless": 2, "tcpvar": 2}


@pytest.mark.slow
@needs_ns
def test_killed_sweep_resumes(tmp_path):
    """Killed while its 4th simulation runs (an ns-2 stand-in that waits while `hold`
    exists), the first three in the store: the re-run runs only the rest."""
    data = tmp_path / "store"
    hold, calls, wrapper = tmp_path / "hold", tmp_path / "ns-calls", tmp_path / "ns-holding"
    hold.touch()
    wrapper.write_text(f"#!/bin/sh\necho $$ >> {calls}\n"
                       f"if [ -e {hold} ] && [ $(wc -l < {calls}) -gt 3 ]; then exec sleep 3600; fi\n"
                       f"exec {NS} \"$@\"\n")
    wrapper.chmod(0o755)
    args = TK + ["sweep", "cbr-variants", "--grid", "cbr_rate_mbps=1:6:1", "--seeds", "1-2",
                 "--set", "duration=2", "-j", "1", "--ns", str(wrapper), "--data", str(data)]
    three = {"wired": 3, "tcpvar": 3, "queue_monitor": 3}
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while not (calls.exists() and len(calls.read_text().split()) > 3
                   and (data / "runs").is_dir() and count_runs(data) == three):
            assert time.monotonic() < deadline and proc.poll() is None, "the sweep never got to its 4th simulation"
            time.sleep(0.05)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        for pid in map(int, calls.read_text().split() if calls.exists() else []):   # the held one, if it outlived the sweep
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert count_runs(data) == three
    landed = 3
    hold.unlink()
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert f"{12 - landed} ran, {landed} already in the store, 0 failed" in p.stdout
    assert count_runs(data) == {"wired": 12, "tcpvar": 12, "queue_monitor": 12}
    assert not any((data / ".staging").iterdir()), "stale staging directories left behind"


@needs_ns
def test_failed_simulation_is_reported_and_others_go_on(tmp_path):
    wrapper = ns_failing_for_seed_2(tmp_path, NS)
    data = tmp_path / "store"
    p = tk("sweep", "cbr-variants", "--seeds", "1-3", "--set", "duration=1", "-j", "2", "--ns", str(wrapper),
           data=data, check=False)
    assert p.returncode == 1
    assert "sweep: 2 ran, 0 already in the store, 1 failed" in p.stdout
    assert "seed=2" in p.stderr and "no-such-command" in p.stderr   # ns-2's own words
    assert "Traceback" not in p.stderr
    assert count_runs(data)["wired"] == 2
    assert len(done_sim_ids(data)) == 2


@pytest.mark.slow
@needs_ns
def test_run_labels_the_run_and_keeps_the_trace(tmp_path):
    import zstandard

    data = tmp_path / "store"
    tk("run", "cbr-variants", "--set", "variant=Vegas", "--set", "duration=1", "--seed", "4", data=data)
    out = tk("sql", "SELECT trace_kind, scenario, seed, labels['variant'] AS v, labels['stop_s'] AS stop "
             "FROM runs ORDER BY trace_kind", "--format", "csv", data=data).stdout.splitlines()
    # stop_s: duration 1 s + the scenario's 0.15 s drain
    assert out == ["trace_kind,scenario,seed,v,stop", "queue_monitor,cbr-variants,4,Vegas,1.15",
                   "tcpvar,cbr-variants,4,Vegas,1.15", "wired,cbr-variants,4,Vegas,1.15"]
    # the kept trace is the packet trace itself: same line count as the run's events + header
    wired = [d for d in (data / "runs").iterdir() if (d / "events-00000.parquet").exists()]
    assert len(wired) == 1
    text = zstandard.ZstdDecompressor().stream_reader(open(wired[0] / "trace.zst", "rb")).read().decode()
    assert text.startswith("# tracekit-meta ")
    n_events = int(tk("sql", "SELECT count(*) FROM events", "--format", "csv", data=data).stdout.split()[1])
    assert n_events == sum(1 for line in text.splitlines() if line[:1] in "+-rd")
    p = tk("run", "cbr-variants", "--set", "variant=Vegas", "--set", "duration=1", "--seed", "4", data=data)
    assert "already in the store" in p.stdout


def test_bad_scenario_input_is_one_line(tmp_path):
    for args, words in [
        (["run", "nope"], "unknown scenario"),
        (["run", "cbr-variants", "--set", "variant=Cubic"], "must be one of"),
        (["run", "cbr-variants", "--set", "bogus=1"], "unknown parameter"),
        (["run", "cbr-variants", "--seed", "0"], "seed"),
        (["sweep", "cbr-variants", "--grid", "variant"], "--grid"),
        (["sweep", "--experiment", "nope"], "unknown experiment"),
    ]:
        p = tk(*args, data=tmp_path / "s", check=False)
        assert p.returncode != 0, args
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (args, p.stderr)


def test_ns_missing_is_one_line(tmp_path):
    p = tk("run", "cbr-variants", "--ns", "/nonexistent/ns", data=tmp_path / "s", check=False)
    assert p.returncode != 0
    assert "apt-get install ns2" in p.stderr and len(p.stderr.strip().splitlines()) == 1


@pytest.mark.slow
@needs_ns
def test_ingesting_scenario_files_knows_the_simulation(tmp_path):
    """Traces made by a scenario and ingested later with plain `tracekit ingest` carry the
    same sim_id as `tracekit run` gives, so a sweep skips them and their runs pair up."""
    from tracekit.experiments import run_scenario_traces

    spec = make_spec("cbr-fairness", {"pair": "Vegas-Vegas", "duration": "1"}, 3)
    run_scenario_traces("cbr-fairness", dict(spec.params), 3, tmp_path / "out")
    data = tmp_path / "store"
    tk("ingest", str(tmp_path / "out"), data=data)
    assert done_sim_ids(data) == {spec.sim_id}
    out = tk("sql", "SELECT count(DISTINCT labels['sim_id']), count(*) FROM runs", "--format", "csv", data=data).stdout
    assert out.splitlines()[1] == "1,3"
    p = tk("run", "cbr-fairness", "--set", "pair=Vegas-Vegas", "--set", "duration=1", "--seed", "3", data=data)
    assert "already in the store" in p.stdout


def test_experiment_seeds_can_be_overridden():
    from tracekit.experiments import EXPERIMENTS

    exp = EXPERIMENTS["reno-vegas"]          # queue DropTail/RED, its own seeds
    base = plan_experiment("reno-vegas")
    assert sorted({s.seed for s in base}) == sorted(exp.seeds)
    assert len(base) == 2 * len(exp.seeds)
    more = plan_experiment("reno-vegas", [4, 5, 6, 7])
    assert sorted({s.seed for s in more}) == [4, 5, 6, 7] and len(more) == 2 * 4
    # the same configurations, only the seeds differ
    assert {s.params for s in more} == {s.params for s in base}


@needs_ns
def test_the_next_simulation_runs_while_the_last_one_is_ingested(tmp_path, monkeypatch):
    """-j 1: ns-2 of simulation k+1 starts before simulation k's packet trace is in the store,
    i.e. the ingest runs in the background; and everything lands. Each ingest but the last
    waits (bounded) for the next ns-2 to start before it goes on: in the foreground, the next
    ns-2 would start only after it, and the wait would run out."""
    import time

    from tracekit.experiments import sweep
    from tracekit.experiments.sweep import run_sims

    real = sweep._ingest_staged
    next_started: list[bool] = []

    def started() -> int:
        return len(starts.read_text().split()) if starts.exists() else 0

    def slow_ingest(*a, **k):
        k_th = len(next_started) + 1
        if k_th < 3:
            deadline = time.monotonic() + 120
            while started() <= k_th and time.monotonic() < deadline:
                time.sleep(0.02)
            next_started.append(started() > k_th)
        return real(*a, **k)

    monkeypatch.setattr(sweep, "_ingest_staged", slow_ingest)
    monkeypatch.setattr(sweep, "FACTS_BATCH", 2)     # the stored facts of two, then of the last one
    monkeypatch.setattr(sweep, "FACTS_TAIL", 1)

    starts = tmp_path / "ns-starts"
    wrapper = tmp_path / "ns-logging"
    wrapper.write_text(f"#!/bin/sh\ndate +%s.%N >> {starts}\nexec {NS} \"$@\"\n")
    wrapper.chmod(0o755)
    specs = plan_sweep("cbr-variants", [parse_grid("cbr_rate_mbps=2,4,6")], [1], {"duration": "1"})
    data = tmp_path / "store"
    results = run_sims(specs, data, jobs=1, ns_binary=str(wrapper))
    assert [r.status for r in results] == ["done"] * 3
    assert count_runs(data) == {"wired": 3, "tcpvar": 3, "queue_monitor": 3}
    assert started() == 3
    # the 2nd and 3rd ns-2 started before the 1st and 2nd packet traces went into the store
    assert next_started == [True, True]
    # each packet trace got its stored facts (after its commit), and no staging is left
    for table in ("flow_facts", "packet_facts", "flow_run_facts"):
        assert len(list(data.glob(f"runs/*/{table}-*.parquet"))) == 3, table
    assert not [p for p in (data / ".staging").iterdir() if p.is_dir()]


@needs_ns
def test_a_resumed_sweep_stores_the_facts_its_done_simulations_lack(tmp_path):
    """A sweep stopped before its last facts batch leaves committed runs without their
    stored facts (the views compute them meanwhile). Run again, the sweep finds those
    simulations done, runs none of them, and stores their facts: the same rows as the
    first time, while a run of another sweep in the store is left alone."""
    import duckdb

    from tracekit.experiments.sweep import run_sims
    from tracekit.ingest.pipeline import ingest_file
    from tracekit.store.store import Store

    data = tmp_path / "store"
    specs = plan_sweep("cbr-variants", [parse_grid("cbr_rate_mbps=2,6")], [1], {"duration": "1"})
    assert [r.status for r in run_sims(specs, data, jobs=1)] == ["done"] * 2
    tables = ("flow_facts", "packet_facts", "flow_run_facts")
    before = {t: duckdb.execute(f"SELECT * FROM read_parquet('{data}/runs/*/{t}-*.parquet', filename=true)").fetchall()
              for t in tables}
    assert all(len({row[-1] for row in rows}) == 2 for rows in before.values())
    # a run of no sweep (no sim_id label), ingested without its facts: not the sweep's to store
    sample = Path(__file__).parent.parent / "sample_traces" / "cbr-fairness" / "Newreno-Reno-seed1" / "packets.tr.zst"
    other = ingest_file(Store(data), sample, facts=False)
    assert other.run_id is not None
    for t in tables:                                # as a sweep killed before its facts batch
        for p in data.glob(f"runs/*/{t}-*.parquet"):
            p.unlink()
    again = run_sims(specs, data, jobs=1)
    assert [r.status for r in again] == ["skipped"] * 2
    after = {t: duckdb.execute(f"SELECT * FROM read_parquet('{data}/runs/*/{t}-*.parquet', filename=true)").fetchall()
             for t in tables}
    for t in tables:
        assert sorted(map(repr, after[t])) == sorted(map(repr, before[t])), t
    assert not list(data.glob(f"runs/run_id={other.run_id}/*facts*.parquet"))


@needs_ns
def test_the_first_ns2_starts_before_pyarrow_and_duckdb_are_imported(tmp_path):
    """On a new store, run_sims starts the first ns-2 without pyarrow or DuckDB imported (a
    quarter of a second of imports, then made on the core ns-2 leaves free), and the
    simulation still lands with its stored facts."""
    code = (
        "import sys\n"
        "from tracekit.experiments import runner\n"
        "from tracekit.experiments.sweep import parse_grid, plan_sweep, run_sims\n"
        "seen = []\n"
        "real = runner._run_ns\n"
        "def first(*a, **k):\n"
        "    seen.append(sorted(m for m in ('pyarrow', 'duckdb', 'polars') if m in sys.modules))\n"
        "    return real(*a, **k)\n"
        "runner._run_ns = first\n"
        "specs = plan_sweep('cbr-variants', [parse_grid('cbr_rate_mbps=2,6')], [1], {'duration': '1'})\n"
        f"res = run_sims(specs, {str(tmp_path / 'store')!r}, jobs=1)\n"
        "print([r.status for r in res], seen[0])\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split("\n")[0] == "['done', 'done'] []", p.stdout
    for table in ("flow_facts", "packet_facts", "flow_run_facts"):
        assert len(list((tmp_path / "store").glob(f"runs/*/{table}-*.parquet"))) == 2, table


@needs_ns
def test_the_facts_left_after_the_last_ns2_are_of_the_last_few_simulations(tmp_path, monkeypatch):
    """With FACTS_TAIL simulations left to ingest, the facts of those ingested so far are
    sent at once: the batch computed after the last simulation is of at most FACTS_TAIL of
    them (not of every simulation since the last full batch), and every packet-trace run
    gets its facts exactly once. Each simulation's ns-2 start and end are in its result."""
    from tracekit.experiments import sweep

    batches: list[list[str]] = []
    threads: list[int | None] = []
    real = sweep._store_facts

    def record(store, runs, within=None, n_threads=None):
        batches.append([r for r, kind in runs if kind == "wired"])
        threads.append(n_threads)
        return real(store, runs, within, n_threads)

    monkeypatch.setattr(sweep, "_store_facts", record)
    monkeypatch.setattr(sweep, "FACTS_BATCH", 100)       # no full batch: only the tail rule splits
    monkeypatch.setattr(sweep, "FACTS_TAIL", 2)
    specs = plan_sweep("cbr-variants", [parse_grid("cbr_rate_mbps=1:5:1")], [1], {"duration": "1"})
    data = tmp_path / "store"
    # an ns-2 that notes when it finds another one running (mkdir is atomic)
    running, overlaps, wrapper = tmp_path / "running", tmp_path / "overlaps", tmp_path / "ns-one"
    wrapper.write_text(f"#!/bin/sh\nmkdir {running} 2>/dev/null || echo overlap >> {overlaps}\n"
                       f"{NS} \"$@\"\nrc=$?\nrmdir {running} 2>/dev/null\nexit $rc\n")
    wrapper.chmod(0o755)
    t0 = time.time()
    results = sweep.run_sims(specs, data, jobs=1, ns_binary=str(wrapper))
    assert [r.status for r in results] == ["done"] * 5
    assert len(batches) >= 2 and 1 <= len(batches[-1]) <= 2, batches
    # DuckDB's threads: while ns-2 runs, the cores it leaves (at least one); after the last
    # simulation, the default (materialise.THREADS)
    assert threads[-1] is None and all(t in (None, max(1, (os.cpu_count() or 1) - 1)) for t in threads), threads
    wired = {r for b in batches for r in b}
    assert sum(map(len, batches)) == len(wired) == 5
    for table in ("flow_facts", "packet_facts", "flow_run_facts"):
        assert len(list(data.glob(f"runs/*/{table}-*.parquet"))) == 5, table
    spans = sorted((r.ns_start_unix_s, r.ns_end_unix_s) for r in results)
    assert t0 <= spans[0][0] and all(a <= b for a, b in spans) and spans[-1][1] <= time.time()
    assert not overlaps.exists(), "-j 1 ran two ns-2 at once"


@needs_ns
def test_a_sweep_holds_one_staging_lock_for_all_its_simulations(tmp_path, monkeypatch):
    """A sweep's simulations, their runs and the batches of their facts are staged inside one
    staging directory of the sweep's, under its lock: one lock file made in all (each one made
    and removed costs ~0.5 ms of CPU on ext4), and none left after."""
    from tracekit.store import store as store_mod
    from tracekit.experiments import sweep

    made: list[Path] = []
    real = store_mod._lock_new_file

    def counting(path):
        made.append(path)
        return real(path)

    monkeypatch.setattr(store_mod, "_lock_new_file", counting)
    monkeypatch.setattr(sweep, "FACTS_BATCH", 1)         # a batch of facts per simulation
    specs = plan_sweep("cbr-variants", [parse_grid("cbr_rate_mbps=2,4,6")], [1], {"duration": "1"})
    data = tmp_path / "store"
    results = sweep.run_sims(specs, data, jobs=2)
    assert [r.status for r in results] == ["done"] * 3
    assert count_runs(data) == {"wired": 3, "tcpvar": 3, "queue_monitor": 3}
    for table in ("flow_facts", "packet_facts", "flow_run_facts"):
        assert len(list(data.glob(f"runs/*/{table}-*.parquet"))) == 3, table
    assert len(made) == 1 and "sweep" in made[0].name, made
    assert list((data / ".staging").iterdir()) == []


@needs_ns
def test_a_sweep_reuses_the_staging_directories_of_simulations_ingested(tmp_path, monkeypatch):
    """Once a simulation is ingested, its staging directory (its trace files emptied) is the
    next one's: five simulations at -j 1 take fewer than five directories, and every one's
    runs and facts land as without the reuse."""
    from tracekit.experiments import sweep

    works: list[tuple[Path, str]] = []
    real = sweep._ingest_staged

    def record(st, *a, **k):
        works.append((st.work, st.spec.sim_id))
        return real(st, *a, **k)

    monkeypatch.setattr(sweep, "_ingest_staged", record)
    specs = plan_sweep("cbr-variants", [parse_grid("cbr_rate_mbps=1:5:1")], [1], {"duration": "1"})
    data = tmp_path / "store"
    results = sweep.run_sims(specs, data, jobs=1)
    assert [r.status for r in results] == ["done"] * 5
    assert sorted(s for _, s in works) == sorted(s.sim_id for s in specs)
    assert len({w for w, _ in works}) < 5, works
    assert count_runs(data) == {"wired": 5, "tcpvar": 5, "queue_monitor": 5}
    for table in ("flow_facts", "packet_facts", "flow_run_facts"):
        assert len(list(data.glob(f"runs/*/{table}-*.parquet"))) == 5, table
    assert done_sim_ids(data) == {s.sim_id for s in specs}
    assert list((data / ".staging").iterdir()) == []


def test_children_start_while_another_thread_changes_the_environment(tmp_path):
    """A -j 2 sweep failed with `OSError: [Errno 14] Bad address: '/usr/bin/setpriv'`: its
    ingest thread imported polars, which sets a variable (os.environ, so setenv) while another
    thread started ns-2. Python starts such a child with vfork and (3.11.7) without the GIL,
    and a child handed no env of its own execs with the C library's environ, which setenv was
    reallocating. Here a thread adds and removes variables while the runner starts 150
    children; every one must start (before the fix most failed with EFAULT)."""
    from tracekit.experiments.runner import _run_ns

    stop = threading.Event()

    def churn():
        i = 0
        while not stop.is_set():
            os.environ[f"TRACEKIT_TEST_CHURN_{i % 64}_{i // 64 % 2}"] = "x" * 40
            if i % 64 == 63:
                for k in [k for k in os.environ if k.startswith("TRACEKIT_TEST_CHURN_")]:
                    os.environ.pop(k, None)
            i += 1

    t = threading.Thread(target=churn, daemon=True)
    t.start()
    failures = []
    try:
        for _ in range(150):
            try:
                code, _out, _err = _run_ns(["true"], tmp_path, timeout_s=30)
                if code != 0:
                    failures.append(code)
            except OSError as e:
                failures.append(e)
    finally:
        stop.set()
        t.join()
        for k in [k for k in os.environ if k.startswith("TRACEKIT_TEST_CHURN_")]:
            os.environ.pop(k, None)
    assert failures == []
