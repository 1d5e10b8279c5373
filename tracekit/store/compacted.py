"""The compacted generation of a store and what a reader reads: the few study-level files of
the compacted runs plus the per-run files of the runs ingested since (no SQL here).

`tracekit compact` (tracekit.db.compaction) writes `compacted/gen-<N>/<table>.parquet` for
the small tables (SMALL_TABLES: a handful of rows per run), `manifest.json` (the runs
covered and what each has) and `parts.json` (each covered run's Parquet file names), then
renames `compacted/CURRENT` to name it. The per-run files stay where they are, so:

- a run in the manifest is read from the compacted files for the small tables, and from its
  own directory for the per-packet tables, without listing or checking that directory unless
  a per-packet table is read;
- a run not in the manifest (ingested since) is read from its directory, as before compaction;
- a run in the manifest whose directory is gone (`tracekit rm`) is left out;
- a run in the manifest whose record changed since (a re-ingest with new labels, or removed
  and ingested again) has a marker in `compacted/changed/` (mark_changed): it is read from its
  own files, its compacted rows left out, until the next `tracekit compact` covers it again;
- a damaged compacted file leaves the whole generation unused (one warning): the store then
  reads as if never compacted, and the next `tracekit compact` writes a whole one.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from tracekit.store.damage import Damage, RUN_FILE, check_run, run_dirs, tail_problem

COMPACTED_DIR = "compacted"
CURRENT = "CURRENT"
MANIFEST = "manifest.json"
PARTS = "parts.json"
CHANGED = "changed"
LAYOUT_VERSION = 1
# Tables whose per-run files are a handful of rows per run (the run record, its node
# addresses and annotations, the per-flow and per-run facts); packet_facts has a row per
# packet, so it stays per run with the other per-packet tables.
SMALL_TABLES: tuple[str, ...] = ("runs", "node_addrs", "annotations", "flow_facts", "flow_run_facts")
PACKET_TABLES = ("events", "wireless_events")


def table_of(name: str) -> str:
    """The table a run's Parquet file `name` is a part of ('runs' for run.parquet)."""
    return "runs" if name == RUN_FILE else name.rsplit("-", 1)[0]


def current_generation(root: Path) -> Path | None:
    """The directory of the current generation, None if the store was never compacted."""
    d = root / COMPACTED_DIR
    try:
        name = (d / CURRENT).read_text().strip()
    except FileNotFoundError:
        return None
    return d / name if name else None


def mark_changed(root: Path, run_id: str) -> None:
    """Note that run `run_id`'s record changed after it may have been compacted (called after
    the change, so a compaction that lists the marker read the changed record). Nothing to do
    in a store never compacted: a compaction that starts meanwhile creates compacted/ before it
    lists the markers and reads the records (compaction.compact)."""
    import uuid

    d = root / COMPACTED_DIR
    if not d.is_dir():
        return
    (d / CHANGED).mkdir(exist_ok=True)
    # a name of its own per change: a compaction removes only the markers it listed
    (d / CHANGED / f"{run_id}.{uuid.uuid4().hex[:12]}").touch()


def changed_markers(root: Path) -> list[str]:
    """The marker files' names in compacted/changed/ (one listing; none: [])."""
    try:
        return os.listdir(root / COMPACTED_DIR / CHANGED)
    except FileNotFoundError:
        return []


def marked_runs(markers: list[str]) -> set[str]:
    """The run ids of marker names (changed_markers: `<run id>.<random>`)."""
    return {m.split(".", 1)[0] for m in markers}


@dataclass
class Generation:
    """The current compacted generation: its directory, manifest, and the file of each small table."""
    path: Path
    manifest: dict
    files: dict[str, Path]

    @property
    def run_ids(self) -> list[str]:
        return self.manifest["run_ids"]

    def parts(self) -> dict[str, list[str]]:
        """Each covered run's Parquet file names (read only when a per-packet table is)."""
        return json.loads((self.path / PARTS).read_text())


def generation_problem(root: Path, deep: bool | None = None) -> tuple[Generation | None, str | None]:
    """(the current generation, None) when it is whole; (None, what is wrong) when it is not;
    (None, None) when the store was never compacted. deep as in damage.check_run: None, the
    tail of each file; False, every footer parsed; True, every page read."""
    from tracekit.store.damage import footer_problem

    gen = current_generation(root)
    if gen is None:
        return None, None
    try:
        manifest = json.loads((gen / MANIFEST).read_text())
        if manifest.get("layout") != LAYOUT_VERSION or not (gen / PARTS).is_file():
            return None, f"{gen}: written by another version of tracekit compact"
        files = {t: gen / v["file"] for t, v in manifest["files"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        return None, f"{gen / MANIFEST}: unreadable ({e})"
    for t, p in files.items():
        problem = tail_problem(p) if deep is None else footer_problem(p, deep=deep)
        if problem is None and p.stat().st_size != manifest["files"][t]["size"]:
            problem = f"{p.stat().st_size} bytes, the manifest says {manifest['files'][t]['size']}"
        if problem is not None:
            return None, f"{p}: {problem}"
    return Generation(gen, manifest, files), None


@dataclass
class Reading:
    """What a connection reads. `compacted`: the compacted file of each small table and the
    compacted runs to leave out of it (removed since, or damaged); `files`: per-run Parquet
    files by table, of the runs not compacted and (for the per-packet tables asked for) of
    the compacted ones; `has`: per table, the runs having parts of it (for the stored-facts
    bookkeeping: which runs have events, which have facts of which definition)."""
    run_ids: list[str] = field(default_factory=list)
    damaged: list[Damage] = field(default_factory=list)
    files: dict[str, list[str]] = field(default_factory=dict)
    compacted: dict[str, str] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    only: list[str] | None = None
    has: dict[str, list[str]] = field(default_factory=dict)
    fact_hashes: dict[str, str] = field(default_factory=dict)
    problem: str | None = None


def plan(root: Path, runs_dir: Path, per_run_tables: set[str] | None = None,
         run_ids: list[str] | None = None, hier_only: frozenset[str] = frozenset()) -> Reading:
    """One readdir of runs/, the compacted generation when whole, and a check of the runs
    not compacted (damage.check_run). per_run_tables: the tables other than SMALL_TABLES
    whose files are wanted for compacted runs (None: all); only those runs' directories are
    then listed and checked. run_ids: only these runs. hier_only: of per_run_tables, those
    wanted only for the runs with hierarchical addresses (node_addrs parts)."""
    out = Reading()
    present = run_dirs(runs_dir)
    if run_ids is not None:
        keep = set(run_ids)
        present = [(r, p) for r, p in present if r in keep]
    gen, out.problem = generation_problem(root)
    covered = set(gen.run_ids) if gen is not None else set()
    # changed since compaction: read from their own files, their compacted rows left out
    changed = covered & marked_runs(changed_markers(root)) if covered else set()
    covered -= changed
    compacted_live: list[tuple[str, str]] = []
    checked = None if per_run_tables is None else (lambda n: table_of(n) in per_run_tables)
    for run_id, path in present:
        if run_id in covered:
            compacted_live.append((run_id, path))
            continue
        damage, entries = check_run(path, run_id, checked=checked)
        if damage is not None:
            out.damaged.append(damage)
            continue
        out.run_ids.append(run_id)
        for e in entries:
            out.files.setdefault(table_of(e.name), []).append(e.path)
    if gen is not None:
        out.compacted = {t: str(p) for t, p in gen.files.items()}
        out.fact_hashes = dict(gen.manifest.get("definition_hashes", {}))
        live = {r for r, _ in compacted_live}
        gone = (covered - live) | changed if run_ids is None else set()
        wanted = per_run_tables is None or bool(per_run_tables - set(SMALL_TABLES))
        parts = gen.parts() if wanted and compacted_live else {}
        hier = set(gen.manifest.get("has", {}).get("node_addrs", []))
        for run_id, path in compacted_live:
            names = [n for n in parts.get(run_id, []) if table_of(n) not in SMALL_TABLES
                     and (per_run_tables is None or table_of(n) in per_run_tables)
                     and (run_id in hier or table_of(n) not in hier_only)]
            bad = next(((n, pr) for n in names if (pr := tail_problem(os.path.join(path, n))) is not None), None)
            if bad is not None:
                out.damaged.append(Damage(run_id, bad[0], bad[1]))
                gone.add(run_id)
                continue
            out.run_ids.append(run_id)
            for n in names:
                out.files.setdefault(table_of(n), []).append(os.path.join(path, n))
        out.exclude = sorted(gone)
        if run_ids is not None:
            out.only = sorted(live - gone)
        # per table, the compacted runs with parts of it (manifest "has"): the stored-facts
        # bookkeeping reads them as if the runs' own files had been listed
        out.has = {t: [r for r in ids if r in live and r not in gone] for t, ids in gen.manifest.get("has", {}).items()}
    for paths in out.files.values():
        paths.sort()
    out.run_ids.sort()
    out.damaged.sort(key=lambda d: d.run_id)
    return out
