"""Several ingests on one store at once, and an ingest killed half-way: every run in the
store is complete, the same content is one run, and nothing is left under .staging/."""
from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tracekit.ingest.pipeline import ingest_file, ingest_paths
from tracekit.db.query import connect
from tracekit.store.store import Store

from conftest import time_shifted_copies

_SCRIPT = Path(sys.executable).with_name("tracekit")
TRACEKIT_CMD = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "tracekit"]


def n_events(path: Path) -> int:
    n = 0
    with open(path) as f:
        for line in f:
            if line[:2] in ("+ ", "- ", "r ", "d "):
                n += 1
    return n


@pytest.mark.slow
def test_parallel_ingest_processes(tmp_path, ns_traces):
    # enough lines that the processes overlap while parsing, not only while starting
    a, b = tmp_path / "a.tr", tmp_path / "b.tr"
    a.write_bytes(time_shifted_copies(ns_traces["wired_plain"].read_bytes(), 10))
    b.write_bytes(time_shifted_copies(ns_traces["wired_latehdr"].read_bytes(), 10))
    a_gz = tmp_path / "a_again.tr.gz"
    a_gz.write_bytes(gzip.compress(a.read_bytes(), compresslevel=1))
    data = tmp_path / "store"          # does not exist yet: the processes race to create it
    env = {k: v for k, v in os.environ.items() if k != "TRACEKIT_DATA"}
    procs = [subprocess.Popen([*TRACEKIT_CMD, "ingest", str(p), "--data", str(data)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for p in (a, b, a, a_gz)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (_out, err) in zip(procs, outs):
        assert p.returncode == 0, err
        assert "Traceback" not in err
    added = sum(out.startswith("added run") for out, _ in outs)
    dup = sum("already in the store" in out for out, _ in outs)
    assert (added, dup) == (2, 2)

    con = connect(data)
    got = dict(con.execute("SELECT source, n_events FROM runs").fetchall())
    assert len(got) == 2
    want = {str(a.resolve()): n_events(a), str(a_gz.resolve()): n_events(a), str(b.resolve()): n_events(b)}
    for source, n in got.items():
        assert n == want[source]
    # every run is readable in full: its rows match its record
    for rid, n in con.execute("SELECT run_id, n_events FROM runs").fetchall():
        assert con.execute("SELECT count(*) FROM events WHERE run_id = ?", [rid]).fetchone()[0] == n
    assert list((data / ".staging").iterdir()) == []
    assert all((d / "run.parquet").exists() for d in (data / "runs").iterdir())


def test_same_content_in_parallel_threads(tmp_path, ns_traces):
    """The rename race itself, made likely: threads ingest one trace and commit together."""
    store = Store(tmp_path / "store", create=True)
    src = ns_traces["wired_tcphdr"]
    copies = []
    for i in range(4):
        p = tmp_path / f"copy{i}.tr"
        p.write_bytes(src.read_bytes())
        copies.append(p)
    barrier = threading.Barrier(len(copies))
    real_commit = store.commit

    def commit_together(staging, run_id):
        barrier.wait(timeout=30)
        return real_commit(staging, run_id)

    store.commit = commit_together
    results, errors = [], []

    def work(p):
        try:
            results.append(ingest_file(store, p))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(p,)) for p in copies]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    assert sorted(r.status for r in results) == ["added", "duplicate", "duplicate", "duplicate"]
    assert len({r.run_id for r in results}) == 1
    assert store.run_ids() == [results[0].run_id]
    assert list(store.staging_dir.iterdir()) == []
    [(n,)] = connect(store.root).execute("SELECT count(*) FROM events").fetchall()
    assert n == n_events(src)


def test_killed_ingest_leaves_no_run(tmp_path, ns_traces, populated_store, store_listing):
    """SIGKILL while the run is being written. The trace comes through a named pipe that we
    keep open, so the ingest is certainly mid-way (first chunk parsed and written, waiting
    for more lines) when it is killed, however loaded the machine is."""
    fifo = tmp_path / "trace.tr"
    os.mkfifo(fifo)
    text = ns_traces["wired_plain"].read_bytes()
    first = time_shifted_copies(text, 2)   # > 64 kB: detection has its sample, parsing starts
    runs_before = store_listing(populated_store / "runs")
    env = {k: v for k, v in os.environ.items() if k != "TRACEKIT_DATA"}
    proc = subprocess.Popen([*TRACEKIT_CMD, "ingest", str(fifo), "--data", str(populated_store)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    staging = populated_store / ".staging"
    try:
        with open(fifo, "wb") as w:        # blocks until tracekit opens the pipe
            w.write(first)
            w.flush()
            mine = []
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and proc.poll() is None:
                mine = [d for d in staging.iterdir() if d.name.startswith(f"{proc.pid}-") and d.is_dir()]   # not its .lock
                if mine and any(mine[0].iterdir()):       # a Parquet part is on disk
                    break
                time.sleep(0.01)
            assert mine and proc.poll() is None, "the ingest never reached its staging directory"
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
    except BrokenPipeError:
        pass
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    assert store_listing(populated_store / "runs") == runs_before
    assert connect(populated_store).execute("SELECT count(*) FROM runs").fetchone()[0] == 1
    assert [d for d in staging.iterdir() if d.name.startswith(f"{proc.pid}-") and d.is_dir()], "the killed run's staging dir is gone already"

    # the next ingest (another process id) removes the dead process's staging directory
    [r] = ingest_paths(populated_store, [ns_traces["red"]])
    assert r.status == "added"
    assert list(staging.iterdir()) == []
    assert connect(populated_store).execute("SELECT count(*) FROM runs").fetchone()[0] == 2


def test_concurrent_store_creation(tmp_path):
    """Processes that start together on a new --data all create the store; none may see the
    others' half-made store as 'a directory that is not a tracekit store'."""
    failures = []
    for trial in range(40):
        root = tmp_path / f"s{trial}"
        barrier = threading.Barrier(4)

        def create(barrier=barrier, root=root, trial=trial):
            barrier.wait(timeout=30)
            try:
                Store(root, create=True)
            except Exception as e:
                failures.append(f"{trial}: {e}")

        threads = [threading.Thread(target=create) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert Store(root).exists
    assert failures == []
