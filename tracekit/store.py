"""The Parquet store: one directory per run, written atomically, no shared index file.

Layout under the data directory:
    tracekit-store.json                 {"schema_version": N}
    runs/run_id=<id>/run.parquet        one row: the run record (schema.RUNS)
    runs/run_id=<id>/<table>-NNNNN.parquet  the run's rows (schema.TABLES), one part per chunk
    .staging/<pid>-<random>/            a run being written; renamed into runs/ when complete

A run directory appears by one `rename`, so readers never see half a run, a failed ingest
leaves nothing, and concurrent ingests of different traces never touch the same file. Two
processes ingesting the same content race on the rename; the loser finds the run present.
"""
from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path

from .damage import Scan, check_run, scan_runs
from .errors import TracekitError
from .schema import SCHEMA_VERSION

STORE_FILE = "tracekit-store.json"


def default_data_dir() -> Path:
    return Path(os.environ.get("TRACEKIT_DATA") or "tracekit-data")


class Store:
    def __init__(self, root: str | os.PathLike, create: bool = False):
        self.root = Path(root)
        self.runs_dir = self.root / "runs"
        self.staging_dir = self.root / ".staging"
        meta = self.root / STORE_FILE
        if meta.exists():
            self._check_version(meta)
        elif create:
            self._create()
        elif self.root.exists() and any(self.root.iterdir()):
            raise TracekitError(f"{self.root}: not a tracekit store (no {STORE_FILE}); use another --data directory")

    @property
    def exists(self) -> bool:
        return (self.root / STORE_FILE).exists()

    def _create(self) -> None:
        if self.root.exists() and not self.root.is_dir():
            raise TracekitError(f"{self.root}: exists and is not a directory")
        if self.root.exists():
            # what a concurrent _create leaves before its STORE_FILE appears is not "not empty"
            foreign = not all(_part_of_new_store(p) for p in self.root.iterdir())
            if (self.root / STORE_FILE).exists():     # another process created the store meanwhile
                self._check_version(self.root / STORE_FILE)
                return
            if foreign:
                raise TracekitError(f"{self.root}: directory is not empty and not a tracekit store; choose another --data")
        try:
            self.runs_dir.mkdir(parents=True, exist_ok=True)
            self.staging_dir.mkdir(exist_ok=True)
        except OSError as e:
            raise TracekitError(f"{self.root}: cannot create the store: {e.strerror or e}") from None
        tmp = self.root / f".{STORE_FILE}.{os.getpid()}.{uuid.uuid4().hex}"
        tmp.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "format": "tracekit"}) + "\n")
        os.replace(tmp, self.root / STORE_FILE)   # same content from every writer: a race is harmless

    def _check_version(self, meta: Path) -> None:
        try:
            version = int(json.loads(meta.read_text())["schema_version"])
        except (ValueError, KeyError, TypeError, OSError):
            raise TracekitError(f"{meta}: unreadable store metadata; is this a tracekit store?") from None
        if version > SCHEMA_VERSION:
            raise TracekitError(
                f"{self.root}: store has schema version {version}, newer than this tracekit understands "
                f"({SCHEMA_VERSION}); upgrade tracekit to read it"
            )
        if version < SCHEMA_VERSION:  # no older layout exists yet; an upgrade step goes here
            raise TracekitError(f"{self.root}: store schema version {version} is older than {SCHEMA_VERSION} and cannot be upgraded")

    # -- runs ------------------------------------------------------------------------
    def run_dir(self, run_id: str) -> Path:
        return self.runs_dir / f"run_id={run_id}"

    def run_ids(self) -> list[str]:
        """The whole runs: what the views read (a damaged run is not a run; see tracekit.damage)."""
        return self.scan().run_ids

    def scan(self, deep: bool | None = None) -> Scan:
        """One walk of runs/: the whole runs' files by table, and the damaged runs (deep=None:
        the cheap check of each file's end; False: every footer parsed; True: every page read)."""
        return scan_runs(self.runs_dir, deep)

    def has_whole_run(self, run_id: str) -> bool:
        d = self.run_dir(run_id)
        return d.is_dir() and check_run(str(d), run_id)[0] is None

    def remove_run(self, run_id: str) -> None:
        """Remove a run directory atomically: one rename moves it out of runs/ (into a staging
        directory, which a crash leaves to the stale-staging cleanup), then it is deleted."""
        trash = self.new_staging(tag="rm")
        try:
            os.rename(self.run_dir(run_id), trash / f"run_id={run_id}")
        finally:
            self.discard(trash)

    def new_staging(self, tag: str = "") -> Path:
        """A fresh directory under .staging/, named after this process so that a later
        process can tell it is stale once this one is gone."""
        self.staging_dir.mkdir(parents=True, exist_ok=True)
        self._clean_stale_staging()
        d = self.staging_dir / f"{os.getpid()}-{tag + '-' if tag else ''}{uuid.uuid4().hex[:12]}"
        d.mkdir()
        return d

    def commit(self, staging: Path, run_id: str) -> bool:
        """Move a complete run into place. False if that run is already present."""
        target = self.run_dir(run_id)
        if target.exists() and not self.has_whole_run(run_id):
            try:   # a damaged run of this content: replaced (what the views skip is not "in the store")
                self.remove_run(run_id)
            except FileNotFoundError:   # another process removed or replaced it meanwhile
                pass
        if target.exists():
            shutil.rmtree(staging, ignore_errors=True)
            return False
        try:
            os.rename(staging, target)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            if target.exists():
                return False
            raise
        return True

    def discard(self, staging: Path) -> None:
        shutil.rmtree(staging, ignore_errors=True)

    def _clean_stale_staging(self) -> None:
        """Remove staging directories left by processes that no longer exist (a crash)."""
        for d in self.staging_dir.iterdir():
            pid = d.name.split("-", 1)[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                shutil.rmtree(d, ignore_errors=True)


def _part_of_new_store(p: Path) -> bool:
    """An entry that Store._create makes (another process may be half-way through it)."""
    if p.name in (".staging", STORE_FILE) or p.name.startswith(f".{STORE_FILE}."):
        return True
    return p.name == "runs" and p.is_dir() and not any(p.iterdir())


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
