"""Compaction: the small per-run tables of every whole run, written into a few study-level
Parquet files, so a reader of a store of thousands of runs can open a few files instead of
thousands.

Layout: `compacted/gen-<N>/<table>.parquet` (each with a run_id column), and
`compacted/gen-<N>/manifest.json` (the run ids covered, each file's name and size), made
visible by the atomic rename of `compacted/CURRENT` (the generation's name). Compaction is
additive: the per-run files stay where they are, so a kill -9 at any point leaves the old
generation (or none) current, and a store never compacted reads as before. The generation
before the current one is kept (a reader may still be using it); older ones are removed.
"""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from tracekit.store.columns import FACT_TABLES, RAW_COLUMNS, STUDY_FACTS, VIEW_FACTS
from tracekit.core.errors import TracekitError
from tracekit.store.compacted import CHANGED, COMPACTED_DIR, CURRENT, LAYOUT_VERSION, MANIFEST, PACKET_TABLES, PARTS, SMALL_TABLES, Generation, changed_markers, current_generation, generation_problem, marked_runs, table_of
from tracekit.store.store import Store



ENV_KEEP = "TRACEKIT_COMPACT_KEEP_S"
KEEP_S = 3600.0      # how long a replaced generation stays for the connections reading it
# runs whose study facts one connection computes: bounds its memory on a store of 20,000 runs
STUDY_BATCH = 1000


def read_manifest(store: Store) -> dict | None:
    gen = current_generation(store.root)
    if gen is None:
        return None
    return json.loads((gen / MANIFEST).read_text())


def _hook(point: str) -> None:
    """For tests of kill -9: with TRACEKIT_COMPACT_PAUSE=<point>:<dir>, create <dir>/<point>
    and wait until that file is removed (the test kills the process meanwhile)."""
    spec = os.environ.get("TRACEKIT_COMPACT_PAUSE", "")
    if not spec or not spec.startswith(point + ":"):
        return
    flag = Path(spec.split(":", 1)[1]) / point
    flag.touch()
    while flag.exists():
        time.sleep(0.05)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def compact(store: Store) -> dict:
    """Write a new generation of the small tables of every whole run and make it current;
    returns its manifest. Two compactions never interleave (store.claim("compact"))."""
    import duckdb

    from tracekit.store.damage import tail_problem
    from tracekit.db.sqlfiles import _quote, definition_hash, sql_files

    with store.claim("compact"):
        d = store.root / COMPACTED_DIR
        # before the records are read: a record changed after this listing keeps its marker
        # (compacted.mark_changed, which marks only once compacted/ exists)
        d.mkdir(exist_ok=True)
        markers = changed_markers(store.root)
        prev, _ = generation_problem(store.root)
        for attempt in range(3):
            # a run removed (tracekit rm) between the scan and the copy: scan again
            try:
                scan = store.scan(deep=False)
                files = sql_files()
                hashes = {t: definition_hash(files, t) for t in VIEW_FACTS}
                gens = sorted((int(p.name[4:]) for p in d.iterdir() if p.name.startswith("gen-") and p.name[4:].isdigit()))
                n = (gens[-1] + 1) if gens else 1
                gen = d / f"gen-{n}"
                shutil.rmtree(gen, ignore_errors=True)
                gen.mkdir()
                # each run's file names, and per table the runs with parts of it (for a fact table,
                # parts of the current definition): what a reader would otherwise list runs/ for
                run_parts: dict[str, list[str]] = {}
                for paths in scan.files.values():
                    for p in paths:
                        run_parts.setdefault(Path(p).parent.name[len("run_id="):], []).append(Path(p).name)
                has: dict[str, list[str]] = {}
                for run_id, names in sorted(run_parts.items()):
                    for name in names:
                        t = table_of(name)
                        if t in ("node_addrs", *PACKET_TABLES) or (t in hashes and name.endswith(f"-{hashes[t]}.parquet")):
                            if run_id not in has.setdefault(t, []):
                                has[t].append(run_id)
                manifest: dict = {"layout": LAYOUT_VERSION, "generation": n, "run_ids": scan.run_ids,
                                  "definition_hashes": hashes, "has": has, "files": {}}
                con = duckdb.connect()
                try:
                    for table in SMALL_TABLES:
                        parts = scan.files.get(table, [])
                        if table in FACT_TABLES:
                            parts = [p for p in parts if p.endswith(f"-{hashes[table]}.parquet")]
                        if not parts:
                            continue
                        listed = "[" + ", ".join(_quote(p) for p in parts) + "]"
                        out = gen / f"{table}.parquet"
                        con.execute(f"COPY (SELECT * FROM read_parquet({listed}, hive_partitioning = true, "
                                    "hive_types = {'run_id': VARCHAR}) ORDER BY run_id) "
                                    f"TO {_quote(str(out))} (FORMAT parquet)")
                        problem = tail_problem(out)
                        if problem is not None:
                            raise TracekitError(f"{out}: compacted file not whole after writing: {problem}")
                        manifest["files"][table] = {"file": out.name, "size": out.stat().st_size}
                    for table in STUDY_FACTS:
                        _study_facts(store, con, gen, table, hashes[table], run_parts, prev,
                                     marked_runs(markers), manifest)
                finally:
                    con.close()
                break
            except duckdb.IOException as e:
                if attempt == 2:
                    raise TracekitError(f"{store.root}: cannot compact: {str(e).splitlines()[0]}") from None
        _hook("written")
        (gen / PARTS).write_text(json.dumps({r: sorted(v) for r, v in sorted(run_parts.items())}))
        (gen / MANIFEST).write_text(json.dumps(manifest, indent=1))
        for written in gen.iterdir():
            with open(written, "rb") as f:
                os.fsync(f.fileno())
        _fsync_dir(gen)
        tmp = d / f"{CURRENT}.tmp"
        tmp.write_text(gen.name + "\n")
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        _hook("before-rename")
        os.replace(tmp, d / CURRENT)
        _fsync_dir(d)
        for m in markers:       # the records this generation holds are the changed ones
            (d / CHANGED / m).unlink(missing_ok=True)
        # a connection made before a rename reads the generation it found for as long as it
        # lives: the previous generation stays, older ones once replaced KEEP_S ago
        keep_s = float(os.environ.get(ENV_KEEP, KEEP_S))
        now = time.time()
        for old, newer in zip(gens[:-1], [*gens[1:-1], n]):
            try:
                replaced = (d / f"gen-{newer}" / MANIFEST).stat().st_mtime
            except FileNotFoundError:
                replaced = 0.0
            if now - replaced >= keep_s:
                shutil.rmtree(d / f"gen-{old}", ignore_errors=True)
        return manifest


def _study_facts(store: Store, con, gen: Path, table: str, digest: str, run_parts: dict[str, list[str]],
                 prev: Generation | None, changed: set[str], manifest: dict) -> None:
    """Write `gen/<table>.parquet`: the study facts (tracekit.store.columns.STUDY_FACTS) of every
    packet-trace run of the generation, taken from the previous generation for a run it holds
    them for under the same definition and not changed since, computed from the run's events
    (<table>_from_events over STUDY_BATCH runs at a time) for the others."""
    from tracekit.db.query import connect
    from tracekit.db.sqlfiles import _quote
    from tracekit.store.damage import tail_problem

    covered = set(manifest["run_ids"])
    packet_runs = sorted(r for r, names in run_parts.items() if r in covered
                         and any(table_of(n) in ("node_addrs", *PACKET_TABLES) for n in names))
    if not packet_runs:
        return
    reuse: set[str] = set()
    if prev is not None and table in prev.files and prev.manifest.get("definition_hashes", {}).get(table) == digest:
        reuse = (set(prev.manifest.get("has", {}).get(table, [])) & set(packet_runs)) - changed
    todo = [r for r in packet_runs if r not in reuse]
    cols = ", ".join(f'"{c}"' for c, _ in RAW_COLUMNS[table])
    parts: list[str] = []
    if reuse and prev is not None:
        part = gen / f".{table}-reused.parquet"
        con.execute(f"COPY (SELECT {cols}, run_id FROM read_parquet({_quote(str(prev.files[table]))}) "
                    "WHERE run_id IN (SELECT unnest(?))) TO " + _quote(str(part)) + " (FORMAT parquet)",
                    [sorted(reuse)])
        parts.append(str(part))
    for i in range(0, len(todo), STUDY_BATCH):
        batch = todo[i:i + STUDY_BATCH]
        part = gen / f".{table}-{i // STUDY_BATCH:05d}.parquet"
        query = f"SELECT {cols}, run_id FROM {table}_from_events"
        bcon = connect(store.root, read_only_sql=False, run_ids=batch, for_query=query)
        try:
            bcon.execute(f"COPY ({query}) TO {_quote(str(part))} (FORMAT parquet)")
        finally:
            bcon.close()
        parts.append(str(part))
    out = gen / f"{table}.parquet"
    listed = "[" + ", ".join(_quote(p) for p in parts) + "]"
    con.execute(f"COPY (SELECT * FROM read_parquet({listed}) ORDER BY run_id) TO {_quote(str(out))} (FORMAT parquet)")
    for written in parts:
        os.unlink(written)
    problem = tail_problem(out)
    if problem is not None:
        raise TracekitError(f"{out}: compacted file not whole after writing: {problem}")
    manifest["files"][table] = {"file": out.name, "size": out.stat().st_size}
    manifest["has"][table] = packet_runs
