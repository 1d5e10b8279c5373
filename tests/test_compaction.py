"""tracekit compact: the small per-run tables written into one generation under compacted/,
made current by the rename of compacted/CURRENT; the per-run files stay."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import until

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"


@pytest.fixture(scope="module")
def _template(tmp_path_factory) -> Path:
    from tracekit.ingest.pipeline import ingest_paths

    d = tmp_path_factory.mktemp("compaction") / "store"
    paths = [SAMPLES / "cbr-fairness" / "Reno-Reno-seed1" / "packets.tr.zst",
             SAMPLES / "cbr-fairness" / "Reno-Reno-seed1" / "cwnd.tr.zst",
             SAMPLES / "manet" / "AODV-seed1" / "packets.tr.zst"]
    results = ingest_paths(d, paths)
    assert [r.status for r in results] == ["added"] * 3
    return d


@pytest.fixture
def store(_template, tmp_path) -> Path:
    import shutil

    d = tmp_path / "store"
    shutil.copytree(_template, d)
    return d


def _per_run_rows(store: Path, name: str) -> list[tuple]:
    """Every row of the per-run files named `name` (plus the run id from their directory),
    read with pyarrow alone, sorted."""
    rows = []
    for run_dir in sorted((store / "runs").iterdir()):
        run_id = run_dir.name.split("=", 1)[1]
        for f in sorted(run_dir.iterdir()):
            if f.name == name or (name != "run.parquet" and f.name.startswith(name + "-")):
                t = pq.read_table(f)
                if "run_id" in t.column_names:
                    t = t.drop_columns(["run_id"])
                for r in t.to_pylist():
                    rows.append(tuple(sorted({**r, "run_id": run_id}.items(), key=lambda kv: kv[0])))
    return sorted(rows, key=repr)


def _compacted_rows(path: Path) -> list[tuple]:
    t = pq.read_table(path)
    return sorted((tuple(sorted(r.items(), key=lambda kv: kv[0])) for r in t.to_pylist()), key=repr)


def _run(args, store: Path, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **kw.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "tracekit", *args, "--data", str(store)],
                          capture_output=True, text=True, timeout=300, env=env, **kw)


def test_compact_writes_every_runs_small_tables(store):
    res = _run(["compact"], store)
    assert res.returncode == 0, res.stderr
    gen = store / "compacted" / (store / "compacted" / "CURRENT").read_text().strip()
    manifest = json.loads((gen / "manifest.json").read_text())
    assert sorted(manifest["run_ids"]) == sorted(p.name.split("=", 1)[1] for p in (store / "runs").iterdir())
    assert _compacted_rows(gen / "runs.parquet") == _per_run_rows(store, "run.parquet")
    assert _compacted_rows(gen / "flow_facts.parquet") == _per_run_rows(store, "flow_facts")
    for entry in manifest["files"].values():
        assert (gen / entry["file"]).stat().st_size == entry["size"]
    # plain Parquet: readable without tracekit
    assert pq.read_table(gen / "runs.parquet").num_rows == 3
    # the per-run files stay
    assert all((p / "run.parquet").exists() for p in (store / "runs").iterdir())


def test_second_compaction_keeps_one_old_generation(store, monkeypatch):
    d = store / "compacted"
    for _ in range(3):
        assert _run(["compact"], store).returncode == 0
    # replaced less than KEEP_S ago: kept for the connections that may read them
    assert sorted(p.name for p in d.iterdir() if p.name.startswith("gen-")) == ["gen-1", "gen-2", "gen-3"]
    old = (d / "gen-2" / "manifest.json").stat().st_mtime - 7200
    os.utime(d / "gen-2" / "manifest.json", (old, old))      # gen-1 replaced by gen-2 two hours ago
    assert _run(["compact"], store).returncode == 0
    assert sorted(p.name for p in d.iterdir() if p.name.startswith("gen-")) == ["gen-2", "gen-3", "gen-4"]
    monkeypatch.setenv("TRACEKIT_COMPACT_KEEP_S", "0")
    assert _run(["compact"], store).returncode == 0
    assert sorted(p.name for p in d.iterdir() if p.name.startswith("gen-")) == ["gen-4", "gen-5"]
    assert (d / "CURRENT").read_text().strip() == "gen-5"


@pytest.mark.parametrize("point", ["written", "before-rename"])
def test_kill_during_compaction_leaves_old_generation(store, tmp_path, point):
    assert _run(["compact"], store).returncode == 0
    before = (store / "compacted" / "CURRENT").read_text()
    flags = tmp_path / "flags"
    flags.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRACEKIT_COMPACT_PAUSE": f"{point}:{flags}"}
    p = subprocess.Popen([sys.executable, "-m", "tracekit", "compact", "--data", str(store)], env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert until(lambda: (flags / point).exists(), 120)
    finally:
        p.send_signal(signal.SIGKILL)
        p.wait()
    assert (store / "compacted" / "CURRENT").read_text() == before
    gen = store / "compacted" / before.strip()
    assert pq.read_table(gen / "runs.parquet").num_rows == 3
    # a query still answers, and the next compaction succeeds (the killed one's claim is broken)
    res = _run(["sql", "SELECT count(*) AS n FROM runs"], store)
    assert res.returncode == 0 and "3" in res.stdout, res.stderr
    res = _run(["compact"], store)
    assert res.returncode == 0, res.stderr
    assert (store / "compacted" / "CURRENT").read_text().strip() != before.strip()
