"""tracekit sweep --scheduler when the cluster is not all fit: workers without ns-2 or with a
broken tracekit are left out of the sweep before they are given a task, named by their
address; one that turns unfit later gives its task back. The sweep's submit loop delivers
each result once whatever the number of tasks. And label re-writes exclude one another
across machines (the store's link(2) claim), not only where flock reaches.

Real schedulers and workers on 127.0.0.1 (`dask scheduler` / `dask worker` processes, or an
in-process distributed.LocalCluster)."""
from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed", reason="the cluster extra (dask[distributed]) is not installed")

from test_sweep_cluster import DASK, TK, env, store_configs  # noqa: E402

NS = shutil.which("ns")
ROOT = Path(__file__).resolve().parent.parent


def _start(argv, log: Path, extra_env: dict[str, str] | None = None) -> subprocess.Popen:
    out = open(log, "w")
    return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env={**env(), **(extra_env or {})}, start_new_session=True)


@pytest.fixture
def scheduler(tmp_path):
    """A `dask scheduler` process on 127.0.0.1; yields (address, start_worker(name, env))."""
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    try:
        procs.append(_start([*DASK[0], "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)],
                            tmp_path / "scheduler.log"))
        deadline = time.monotonic() + 60
        while not sched_file.exists() or not sched_file.read_text().strip():
            assert time.monotonic() < deadline and procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]

        def start_worker(name: str, extra_env: dict[str, str] | None = None) -> None:
            procs.append(_start([*DASK[1], address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                 "--name", name], tmp_path / f"worker-{name}.log", extra_env))

        yield address, start_worker
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


def _workers_by_name(address: str, n: int) -> dict[str, str]:
    from distributed import Client

    with Client(address, timeout=30) as c:
        c.wait_for_workers(n, timeout=90)
        return {str(w["name"]): a for a, w in c.scheduler_info(n_workers=-1)["workers"].items()}


def _executed(address: str, worker: str) -> int:
    """How many tasks a worker has run (client.run calls are not tasks)."""
    from distributed import Client

    with Client(address, timeout=30) as c:
        return c.run(lambda dask_worker: dask_worker.state.executed_count, workers=[worker])[worker]


def _no_ns_path(tmp_path: Path) -> str:
    """A PATH with python's directory and the usual tools, but no `ns`."""
    d = tmp_path / "bin-without-ns"
    d.mkdir()
    for tool in ("sh", "env"):
        if shutil.which(tool):
            os.symlink(shutil.which(tool), d / tool)
    return f"{d}:{Path(sys.executable).parent}"


def _broken_tracekit(tmp_path: Path) -> str:
    """A directory whose `tracekit` package fails to import (a broken install on a worker)."""
    pkg = tmp_path / "broken" / "tracekit"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('this tracekit is broken')\n")
    return str(pkg.parent)


@pytest.mark.slow
@pytest.mark.skipif(NS is None, reason="ns-2 (/usr/bin/ns) is not installed")
def test_unfit_workers_are_left_out_before_any_task_and_named(tmp_path, scheduler):
    """One fit worker, one without ns-2, one whose tracekit does not import: every simulation
    runs on the fit one, the other two are named by address and run nothing."""
    address, start_worker = scheduler
    start_worker("good", {"PYTHONPATH": str(ROOT)})
    start_worker("no-ns", {"PYTHONPATH": str(ROOT), "PATH": _no_ns_path(tmp_path)})
    start_worker("broken", {"PYTHONPATH": _broken_tracekit(tmp_path)})
    names = _workers_by_name(address, 3)
    data = tmp_path / "store"
    p = subprocess.run([*TK, "sweep", "cbr-variants", "--grid", "cbr_rate_mbps=1,2,3", "--seeds", "1-2", "--set", "duration=1",
                        "--scheduler", address, "--data", str(data)], capture_output=True, text=True, env=env(), timeout=400)
    assert p.returncode == 0, p.stderr
    assert "sweep: 6 ran, 0 already in the store, 0 failed" in p.stdout, p.stdout
    assert "Traceback" not in p.stderr
    left_out = [ln for ln in p.stderr.splitlines() if "left out of the sweep" in ln]
    assert len(left_out) == 2, p.stderr
    assert any(f"worker {names['no-ns']} left out of the sweep: ns-2 binary 'ns' not found" in ln for ln in left_out), left_out
    assert any(f"worker {names['broken']} left out of the sweep: tracekit does not run there" in ln for ln in left_out), left_out
    assert _executed(address, names["no-ns"]) == 0 and _executed(address, names["broken"]) == 0
    assert _executed(address, names["good"]) == 6
    assert sorted(store_configs(data)) == sorted((k, float(r), s) for k in ("wired", "tcpvar", "queue_monitor")
                                                 for r in (1, 2, 3) for s in (1, 2))


@pytest.mark.skipif(NS is None, reason="ns-2 (/usr/bin/ns) is not installed")
def test_a_cluster_of_unfit_workers_is_one_error_naming_each(tmp_path, scheduler):
    address, start_worker = scheduler
    start_worker("no-ns", {"PYTHONPATH": str(ROOT), "PATH": _no_ns_path(tmp_path)})
    names = _workers_by_name(address, 1)
    p = subprocess.run([*TK, "sweep", "cbr-variants", "--seeds", "1-2", "--set", "duration=1", "--scheduler", address,
                        "--data", str(tmp_path / "store")], capture_output=True, text=True, env=env(), timeout=300)
    assert p.returncode == 1, p.stderr
    errors = [ln for ln in p.stderr.splitlines() if ln.startswith("tracekit: error: ")]
    assert errors == [f"tracekit: error: no worker of the cluster can run the simulations: {names['no-ns']}: "
                      "ns-2 binary 'ns' not found on PATH; install ns-2.35 (Debian/Ubuntu: sudo apt-get install ns2) "
                      "or give its path (tracekit's --ns PATH, ns_binary= in Python)"], p.stderr
    assert "Traceback" not in p.stderr
    assert _executed(address, names["no-ns"]) == 0


# -- the submit loop, on an in-process LocalCluster ------------------------------------------
def _double_unless_on(item: int, bad_name: str):
    """A task: 2 * item, except on the worker named `bad_name`, which answers unfit (as a
    worker whose ns-2 went away after its check)."""
    from distributed import get_worker

    from tracekit.experiments.cluster import _Unfit

    w = get_worker()
    if str(w.name) == bad_name:
        return _Unfit(item, f"host, worker {w.address}", w.address, "ns-2 went away")
    return 2 * item


@pytest.fixture
def local_cluster():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        client.wait_for_workers(2, timeout=60)
        yield client


def test_a_worker_unfit_after_its_check_gives_its_tasks_back(tmp_path, local_cluster, monkeypatch):
    from tracekit.experiments import cluster
    from tracekit.store.store import Store

    Store(tmp_path / "store", create=True)
    monkeypatch.setattr(cluster, "MAX_IN_FLIGHT", 10)
    client = local_cluster
    names = {str(w["name"]): a for a, w in client.scheduler_info()["workers"].items()}
    bad = sorted(names)[0]
    excluded = []
    workers = cluster._Workers(client, str(tmp_path / "store"), NS or "sh", lambda a, why: excluded.append((a, why)))
    got: dict[int, list] = {}
    items = list(range(40))
    cluster.drive(client, items, _double_unless_on, (bad,), lambda i: f"double-{i}",
                  lambda item, status, value: got.setdefault(item, []).append((status, value)), workers)
    assert got == {i: [("finished", 2 * i)] for i in items}     # each once, none lost to the unfit worker
    assert excluded == [(names[bad], "ns-2 went away")]


def test_the_submit_loop_delivers_every_result_once(local_cluster, monkeypatch):
    """More tasks than may be in flight, results taken in batches: each item's result once,
    a task's exception as its result."""
    from tracekit.experiments import cluster

    monkeypatch.setattr(cluster, "MAX_IN_FLIGHT", 64)
    got: dict[int, list] = {}
    items = list(range(1500))
    cluster.drive(local_cluster, items, _half_or_fail, (), lambda i: f"half-{i}",
                  lambda item, status, value: got.setdefault(item, []).append((status, value if status == "finished" else str(value))))
    assert got == {i: [("error", f"item {i}")] if i % 97 == 0 else [("finished", i / 2)] for i in items}


def _half_or_fail(item: int) -> float:
    if item % 97 == 0:
        raise ValueError(f"item {item}")
    return item / 2


# -- label re-writes across machines ----------------------------------------------------------
def _relabel_as_another_machine(root: str, trace: str, i: int, start) -> None:
    """Re-ingest `trace` adding label k<i>, as a process on machine node-<i> of a cluster
    whose flock is local to each machine: flock always succeeds, whoever else holds it."""
    import fcntl

    import tracekit.store.store as store_mod
    from tracekit.ingest.pipeline import ingest_file

    store_mod._ME = (f"node-{i}", f"boot-{i}")
    fcntl.flock = lambda fd, how: None
    store = store_mod.Store(root)
    start.wait(60)
    for j in range(2):
        ingest_file(store, Path(trace), labels={f"k{i}-{j}": str(i)})


def test_label_rewrites_of_one_run_from_several_machines_all_land(tmp_path, ns_traces):
    import pyarrow.parquet as pq

    from tracekit.ingest.pipeline import ingest_file
    from tracekit.store.store import Store

    root = tmp_path / "store"
    run_id = ingest_file(Store(root, create=True), ns_traces["wired_plain"]).run_id
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(8)
    procs = [ctx.Process(target=_relabel_as_another_machine, args=(str(root), str(ns_traces["wired_plain"]), i, start))
             for i in range(8)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    rec = pq.read_table(root / "runs" / f"run_id={run_id}" / "run.parquet").to_pylist()[0]
    labels = {d["key"]: d["value"] for d in rec["labels"]}
    assert {k: v for k, v in labels.items() if k.startswith("k")} == {f"k{i}-{j}": str(i) for i in range(8) for j in range(2)}
