"""The store's rules for writers on several machines sharing it (tracekit sweep --scheduler):
the cross-machine claim (link(2)) excludes, a claim or staging directory of another machine
is left alone while its lease runs and removed once it has run out, and one of this machine
whose flock nobody holds is removed at once. Another machine is simulated by a lock file
naming another host; its lease by the file's mtime."""
from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from tracekit.core.errors import TracekitError
from tracekit.store.store import LEASE_S, Store


def foreign_lock(path: Path, age_s: float, host: str = "node-17.cluster", boot: str = "b00t") -> None:
    """A lock file as a writer on another machine leaves it, last touched `age_s` ago."""
    path.write_text(json.dumps({"host": host, "boot": boot, "pid": 4242, "token": "t-foreign"}) + "\n")
    t = time.time() - age_s
    os.utime(path, (t, t))


def _count_under_claim(root: str, counter: str, n: int) -> None:
    store = Store(root)
    for _ in range(n):
        with store.claim("counter"):
            v = int(Path(counter).read_text())
            time.sleep(0.002)                 # a lost update is near certain without exclusion
            Path(counter).write_text(str(v + 1))


def test_claim_excludes_across_processes(tmp_path):
    root = tmp_path / "store"
    Store(root, create=True)
    counter = tmp_path / "counter"
    counter.write_text("0")
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_count_under_claim, args=(str(root), str(counter), 15)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert int(counter.read_text()) == 4 * 15
    assert sorted(p.name for p in (root / ".locks").iterdir()) == []    # every claim released, nothing left


def test_claim_of_another_machine_waits_for_its_lease(tmp_path):
    root = tmp_path / "store"
    store = Store(root, create=True)
    (root / ".locks").mkdir(exist_ok=True)
    claim = root / ".locks" / "sim-x.claim"
    foreign_lock(claim, age_s=5)             # its holder touched it 5 s ago: alive as far as we can tell
    with pytest.raises(TracekitError, match="still held"):
        with store.claim("sim-x", timeout_s=0.3):
            pass
    assert json.loads(claim.read_text())["token"] == "t-foreign"     # left alone
    foreign_lock(claim, age_s=LEASE_S + 30)  # its lease ran out: the holder is dead
    with store.claim("sim-x", timeout_s=5):
        assert json.loads(claim.read_text())["host"] != "node-17.cluster"
    assert not claim.exists()


def test_claim_of_a_dead_process_here_is_broken_at_once(tmp_path):
    """Same machine (our hostname and boot id in the file), nobody holds its flock: the
    holder is dead whatever the file's age."""
    from tracekit.store.store import _identity

    root = tmp_path / "store"
    store = Store(root, create=True)
    (root / ".locks").mkdir(exist_ok=True)
    claim = root / ".locks" / "sim-y.claim"
    host, boot = _identity()
    foreign_lock(claim, age_s=0, host=host, boot=boot)
    # fresh, so only breaking it lets the claim in before the lease runs out (a claim still
    # held after timeout_s is an error)
    with store.claim("sim-y", timeout_s=LEASE_S / 2):
        assert json.loads(claim.read_text())["token"] != "t-foreign"
    assert not claim.exists()


def test_staging_of_another_machine_is_kept_until_its_lease_runs_out(tmp_path):
    root = tmp_path / "store"
    store = Store(root, create=True)
    lock = root / ".staging" / "4242-sim-abc-123456789abc.lock"
    work = root / ".staging" / "4242-sim-abc-123456789abc"
    work.mkdir()
    (work / "packets.tr").write_text("half a trace\n")
    foreign_lock(lock, age_s=10)
    store.discard(store.new_staging())       # a new staging directory cleans the stale ones
    assert (work / "packets.tr").exists() and lock.exists(), "a live worker's staging directory was removed"
    foreign_lock(lock, age_s=LEASE_S + 30)
    store.discard(store.new_staging())
    assert not work.exists() and not lock.exists()
    assert list((root / ".staging").iterdir()) == []


def test_a_writer_touches_its_lock_files(tmp_path, monkeypatch):
    """The lease is kept by a heartbeat: a held staging lock file's mtime moves on."""
    import tracekit.store.store as store_mod

    monkeypatch.setattr(store_mod, "HEARTBEAT_S", 0.05)
    monkeypatch.setitem(store_mod._HEARTBEAT, "thread", None)     # a fresh thread with the short period
    store = Store(tmp_path / "store", create=True)
    d = store.new_staging()
    try:
        lock = d.with_name(d.name + ".lock")
        old = time.time() - 1000
        os.utime(lock, (old, old))
        deadline = time.monotonic() + 60
        while os.stat(lock).st_mtime < old + 500 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert os.stat(lock).st_mtime > old + 500
    finally:
        store.discard(d)
