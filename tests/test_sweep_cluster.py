"""tracekit sweep --scheduler on a real dask.distributed cluster: a scheduler and two workers
started as separate processes (`dask scheduler`, `dask worker`, on 127.0.0.1, free ports),
one worker killed while it runs a simulation, then the client killed and the sweep re-run;
every configuration must end in the store exactly once. And local:N with a failing
simulation: its ns-2 last words and exit status 1."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conftest import alive, children_of, ns_failing_for_seed_2, until

pytest.importorskip("distributed", reason="the cluster extra (dask[distributed]) is not installed")

NS = shutil.which("ns")
pytestmark = pytest.mark.skipif(NS is None, reason="ns-2 (/usr/bin/ns) is not installed")
TK = [sys.executable, "-m", "tracekit"]
_DASK_CLI = Path(sys.executable).with_name("dask")     # the `dask` command of this environment
DASK = ([str(_DASK_CLI), "scheduler"], [str(_DASK_CLI), "worker"]) if _DASK_CLI.exists() else (
    [sys.executable, "-m", "distributed.cli.dask_scheduler"], [sys.executable, "-m", "distributed.cli.dask_worker"])
RATES = [1, 2, 3]
SEEDS = [1, 2]
SWEEP = ["sweep", "cbr-variants", "--grid", "cbr_rate_mbps=" + ",".join(map(str, RATES)),
         "--seeds", "1-2", "--set", "duration=2"]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "TRACEKIT_DATA"}


def ns_children(pid: int) -> list[int]:
    out = []
    for c in children_of(pid):
        try:
            if Path(f"/proc/{c}/comm").read_text().strip() == "ns":
                out.append(c)
        except FileNotFoundError:
            pass
    return out


def store_configs(data: Path) -> Counter:
    """(trace kind, cbr rate, seed) of every run record in the store, counted (pyarrow, no
    tracekit code)."""
    import pyarrow.parquet as pq

    got: Counter = Counter()
    for f in (data / "runs").glob("run_id=*/run.parquet"):
        rec = pq.read_table(f).to_pylist()[0]
        labels = {d["key"]: d["value"] for d in rec["labels"]}
        got[(rec["trace_kind"], float(labels["cbr_rate_mbps"]), rec["seed"])] += 1
    return got


def n_packet_runs(data: Path) -> int:
    if not (data / "runs").is_dir():
        return 0
    return sum(1 for k in store_configs(data).elements() if k[0] == "wired")


@pytest.fixture
def dask_cluster(tmp_path):
    """A scheduler and two single-threaded workers, each its own process (no nanny: killing
    the process kills the worker). Yields (address, [worker processes])."""
    sched_file = tmp_path / "scheduler.json"
    logs = tmp_path / "logs"
    logs.mkdir()
    procs: list[subprocess.Popen] = []

    def start(argv, name):
        log = open(logs / f"{name}.log", "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env(), start_new_session=True)
        procs.append(p)
        return p

    try:
        start([*DASK[0], "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file)], "scheduler")
        deadline = time.monotonic() + 300
        while not sched_file.exists() or not sched_file.read_text().strip():
            assert time.monotonic() < deadline, (logs / "scheduler.log").read_text()
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        workers = [start([*DASK[1], address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny", "--no-dashboard",
                          "--name", f"w{i}"], f"worker{i}") for i in (1, 2)]
        from distributed import Client

        with Client(address, timeout=120) as c:
            c.wait_for_workers(2, timeout=300)
        yield address, workers
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()


@pytest.mark.slow
def test_sweep_on_a_cluster_survives_a_dead_worker_and_a_dead_client(tmp_path, dask_cluster):
    address, (w1, w2) = dask_cluster
    data = tmp_path / "store"
    # an ns-2 stand-in: the first four runs go ahead, the later ones wait while `hold`
    # exists, so the client is killed with a simulation still to come whatever the load
    hold, calls, wrapper = tmp_path / "hold", tmp_path / "ns-calls", tmp_path / "ns-holding"
    hold.touch()
    wrapper.write_text(f"#!/bin/sh\necho $$ >> {calls}\n"
                       f"if [ $(wc -l < {calls}) -gt 4 ]; then while [ -e {hold} ]; do sleep 0.1; done; fi\n"
                       f"exec {NS} \"$@\"\n")
    wrapper.chmod(0o755)
    argv = [*TK, *SWEEP, "--ns", str(wrapper), "--scheduler", address, "--data", str(data)]
    client = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(), start_new_session=True)

    # 1. kill worker 1 while its ns-2 runs: the simulation it held must be run again elsewhere
    deadline = time.monotonic() + 600
    while not (ns := ns_children(w1.pid)):
        assert time.monotonic() < deadline and client.poll() is None, "worker 1 never ran a simulation"
        time.sleep(0.01)
    w1.send_signal(signal.SIGKILL)
    w1.wait()
    assert until(lambda: not any(alive(p) for p in ns), 120), "the dead worker's ns-2 runs on"

    # 2. kill the client once the three simulations the stand-in lets through have landed
    # (four runs, one killed with worker 1); the one it holds is lost with the client
    while n_packet_runs(data) < 3:
        assert time.monotonic() < deadline and client.poll() is None, client.communicate()
        time.sleep(0.05)
    os.killpg(client.pid, signal.SIGKILL)
    client.wait()
    landed = n_packet_runs(data)
    assert landed < len(RATES) * len(SEEDS), "the client was killed too late to test anything"

    # 3. the same sweep again: reuses the store, runs the rest on the surviving worker
    hold.unlink()
    p = subprocess.run(argv, capture_output=True, text=True, env=env(), timeout=600)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("sweep:")][0]
    ran, skipped = int(line.split()[1]), int(line.split(", ")[1].split()[0])
    # a task of the dead client may still land after the re-run looked: then the re-run finds
    # the same traces present (same content, one run), and counts the simulation as ran
    assert ran + skipped == len(RATES) * len(SEEDS) and skipped >= landed, line
    assert line.endswith(", 0 failed")
    assert "1 worker(s) on the cluster" in p.stderr

    want = Counter({(kind, float(r), s): 1 for kind in ("wired", "tcpvar", "queue_monitor") for r in RATES for s in SEEDS})
    # the lost client's held task ran on worker 2's one thread before the re-run's last one
    # (which it needed, the held simulation not being in the store): it has ended
    assert store_configs(data) == want     # every configuration, exactly once per trace kind
    staging = data / ".staging"
    left = [p.name for p in staging.iterdir()] if staging.exists() else []
    assert not [n for n in left if n.startswith(f"{w1.pid}-")], f"the dead worker's staging was not cleaned: {left}"


@pytest.mark.slow
def test_local_cluster_reports_a_failed_simulation(tmp_path):
    """local:N: a LocalCluster; a simulation whose ns-2 fails is reported with ns-2's own
    words and the host, the others land, exit status 1."""
    wrapper = ns_failing_for_seed_2(tmp_path, NS)
    data = tmp_path / "store"
    p = subprocess.run([*TK, "sweep", "cbr-variants", "--seeds", "1-2", "--set", "duration=1", "--ns", str(wrapper),
                        "--scheduler", "local:1", "--data", str(data)], capture_output=True, text=True, env=env(), timeout=600)
    assert p.returncode == 1, p.stderr
    assert "sweep: 1 ran, 0 already in the store, 1 failed" in p.stdout
    assert "seed=2" in p.stderr and "no-such-command" in p.stderr
    assert "Traceback" not in p.stderr
    assert {k for k, _, _ in store_configs(data)} == {"wired", "tcpvar", "queue_monitor"}
    assert {s for _, _, s in store_configs(data)} == {1}


def test_the_cli_imports_dask_only_for_scheduler_and_says_which_extra(tmp_path):
    """A sweep without --scheduler does not import dask; with it and dask not importable (a
    blocked import stands for it not being installed), one line naming the extra. One
    interpreter for both."""
    code = f"""
import contextlib, io, sys
from tracekit.apps.cli import main

def tk(*args):
    sys.argv = ['tracekit', *args, '--data', {str(tmp_path / 's')!r}]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as e:
            return e.code, err.getvalue()
    return 0, err.getvalue()

code, err = tk('sweep', 'cbr-variants', '--dry-run')
assert code in (0, None), err
assert 'distributed' not in sys.modules and 'dask' not in sys.modules, 'dask imported'
sys.modules['distributed'] = None
code, err = tk('sweep', 'cbr-variants', '--scheduler', 'local:1')
print(code)
print(err.strip())
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env(), timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[-2:] == ["1", "tracekit: error: --scheduler needs dask.distributed: pip install 'tracekit[cluster]'"]


def test_scheduler_arguments_are_checked_before_anything_runs(tmp_path, tracekit_inproc):
    data = tmp_path / "store"
    for extra, said in ((["--scheduler", "local:0"], "local:N with N from 1 to 1024"),
                        (["--scheduler", "local:2", "-j", "2"], "--jobs is for the local pool")):
        p = tracekit_inproc("sweep", "cbr-variants", *extra, data=data)
        assert p.returncode == 1 and p.stderr.startswith("tracekit: error: ") and said in p.stderr, p.stderr
        assert len(p.stderr.strip().splitlines()) == 1
    assert not data.exists()
