"""One run per (simulation, trace kind), looked up in the store's index of simulations
(.sims/) instead of a scan of every run record: the index agrees with a plain reading of the
records, survives removals and relabels (an entry is only a hint), is rebuilt when missing
(a store from before it), and once built a look-up reads no other run's record."""
from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tracekit.core.errors import TracekitError
from tracekit.ingest.pipeline import ingest_file
from tracekit.store.store import Store


def wired(path: Path, n: int) -> Path:
    """A tiny wired trace of `n` CBR packets sent and received (n differs: another content)."""
    lines = []
    for i in range(n):
        t = 0.1 + 0.01 * i
        lines.append(f"+ {t:.3f} 0 1 cbr 1000 ------- 1 0.0 1.0 {i} {i}")
        lines.append(f"r {t + 0.005:.3f} 0 1 cbr 1000 ------- 1 0.0 1.0 {i} {i}")
    path.write_text("\n".join(lines) + "\n")
    return path


def records(root: Path) -> dict[str, tuple[str, str | None]]:
    """run_id -> (trace_kind, sim_id label), read from every run record (the second way)."""
    out = {}
    for f in sorted((root / "runs").glob("run_id=*/run.parquet")):
        rec = pq.read_table(f).to_pylist()[0]
        sims = [d["value"] for d in rec["labels"] if d["key"] == "sim_id"]
        out[f.parent.name.removeprefix("run_id=")] = (rec["trace_kind"], sims[0] if sims else None)
    return out


def ingest(store: Store, path: Path, sim: str | None):
    return ingest_file(store, path, labels={"sim_id": sim} if sim else None)


def test_index_agrees_with_the_records_and_refuses_a_second_run(tmp_path):
    store = Store(tmp_path / "s", create=True)
    a = ingest(store, wired(tmp_path / "a.tr", 3), "sim-a")
    b = ingest(store, wired(tmp_path / "b.tr", 4), "sim-b")
    ingest(store, wired(tmp_path / "c.tr", 5), None)
    with pytest.raises(TracekitError, match="already has a wired run"):
        ingest(store, wired(tmp_path / "a2.tr", 6), "sim-a")
    recs = records(store.root)
    assert len(recs) == 3
    for sim in ("sim-a", "sim-b", "sim-none"):
        expect = sorted(r for r, (k, s) in recs.items() if k == "wired" and s == sim)
        assert sorted(r for r, _ in store.sim_runs(sim, "wired")) == expect
    assert [r for r, _ in store.sim_runs("sim-a", "wired")] == [a.run_id]
    assert store.sim_runs("sim-b", "tcpvar") == []
    assert store.sim_runs("sim-b", "wired") == [(b.run_id, 8)]      # 4 sends + 4 receives


def test_a_removed_run_frees_its_simulation(tmp_path):
    store = Store(tmp_path / "s", create=True)
    a = ingest(store, wired(tmp_path / "a.tr", 3), "sim-a")
    store.remove_run(a.run_id)
    b = ingest(store, wired(tmp_path / "b.tr", 4), "sim-a")       # the entry names a run that is gone
    assert b.status == "added"
    assert store.sim_runs("sim-a", "wired") == [(b.run_id, 8)]


def test_a_relabelled_run_moves_to_its_new_simulation(tmp_path):
    store = Store(tmp_path / "s", create=True)
    a = ingest(store, wired(tmp_path / "a.tr", 3), "sim-x")
    again = ingest(store, tmp_path / "a.tr", "sim-y")              # same content, new label: relabelled
    assert again.status == "duplicate" and records(store.root)[a.run_id] == ("wired", "sim-y")
    assert store.sim_runs("sim-x", "wired") == []
    assert [r for r, _ in store.sim_runs("sim-y", "wired")] == [a.run_id]
    assert ingest(store, wired(tmp_path / "b.tr", 4), "sim-x").status == "added"
    with pytest.raises(TracekitError, match="already has a wired run"):
        ingest(store, wired(tmp_path / "c.tr", 5), "sim-y")


def test_a_store_without_the_index_gets_it_from_the_records(tmp_path):
    store = Store(tmp_path / "s", create=True)
    a = ingest(store, wired(tmp_path / "a.tr", 3), "sim-a")
    ingest(store, wired(tmp_path / "b.tr", 4), "sim-b")
    shutil.rmtree(store.root / ".sims")                           # as a store from before the index
    with pytest.raises(TracekitError, match=f"run {a.run_id}"):
        ingest(store, wired(tmp_path / "a2.tr", 6), "sim-a")
    assert (store.root / ".sims" / "complete").exists()
    assert ingest(store, wired(tmp_path / "c.tr", 5), "sim-c").status == "added"
    assert len(records(store.root)) == 3


def test_a_lookup_reads_no_other_run(tmp_path, monkeypatch):
    store = Store(tmp_path / "s", create=True)
    runs = [ingest(store, wired(tmp_path / f"t{i}.tr", i + 2), f"sim-{i}") for i in range(5)]
    for r in runs[1:]:                       # every other run's record unreadable from now on
        (store.run_dir(r.run_id) / "run.parquet").write_bytes(b"not parquet")

    def no_scan(*_a, **_k):
        raise AssertionError("a look-up scanned the runs")
    monkeypatch.setattr(Store, "scan", no_scan)
    monkeypatch.setattr(Store, "run_ids", no_scan)
    assert store.sim_runs("sim-0", "wired") == [(runs[0].run_id, 4)]
    with pytest.raises(TracekitError, match="already has a wired run"):
        ingest(store, wired(tmp_path / "other.tr", 9), "sim-0")
    assert ingest(store, wired(tmp_path / "new.tr", 10), "sim-new").status == "added"


def test_a_claim_is_reentrant_in_its_thread_and_exclusive_across_threads(tmp_path):
    """A block inside another of the same claim, in the same thread, takes nothing more (a
    sweep claims a simulation for its three traces, whose ingests claim it too); another
    thread still waits for it."""
    import threading

    store = Store(tmp_path / "s", create=True)
    got: list[str] = []

    def other() -> None:
        try:
            with store.claim("sim-x", timeout_s=0.3):
                got.append("taken")
        except TracekitError:
            got.append("refused")

    with store.claim("sim-x"):
        with store.claim("sim-x", timeout_s=0.3):       # without re-entry: "still held after 0 s"
            t = threading.Thread(target=other)
            t.start()
            t.join()
        assert (store.root / ".locks" / "sim-x.claim").exists()   # the inner block did not release it
    assert got == ["refused"]
    assert not (store.root / ".locks" / "sim-x.claim").exists()
    with store.claim("sim-x", timeout_s=0.3):           # free again
        pass


def test_a_run_staged_within_a_held_staging_directory(tmp_path):
    """ingest_file(staging_within=d) stages the run inside d (a sweep's simulation's staging
    directory) without a lock file of its own, commits it the same way, and leaves d as it
    was; under the simulation's claim, taken once for its traces."""
    from tracekit.ingest.pipeline import sim_claim_name

    store = Store(tmp_path / "s", create=True)
    work = store.new_staging(tag="sim")
    locks_before = sorted(p.name for p in store.staging_dir.glob("*.lock"))
    seen: list[Path] = []
    real = Store.commit

    def commit(self, staging, run_id):
        seen.append(staging)
        return real(self, staging, run_id)

    Store.commit = commit               # type: ignore[method-assign]
    try:
        with store.claim(sim_claim_name("sim-w")):
            r = ingest_file(store, wired(work / "packets.tr", 3), labels={"sim_id": "sim-w"}, staging_within=work)
            assert sorted(p.name for p in store.staging_dir.glob("*.lock")) == locks_before
    finally:
        Store.commit = real             # type: ignore[method-assign]
    assert r.status == "added" and seen and seen[0].parent == work
    assert sorted(p.name for p in work.iterdir()) == ["packets.tr"]
    assert store.has_whole_run(r.run_id) and store.sim_runs("sim-w", "wired") == [(r.run_id, 6)]
    store.discard(work)
    assert not list(store.staging_dir.iterdir())
