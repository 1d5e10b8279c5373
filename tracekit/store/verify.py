"""`tracekit verify` and `tracekit rm`: find the damaged runs of a store, remove runs.

Every connection already skips a damaged run after a cheap look at the end of each file
(tracekit.store.damage); verify parses every footer (and with deep, reads every page), so it also
finds a footer overwritten in place or a corrupt data page that only a query would hit.
"""
from __future__ import annotations

from typing import Callable, Iterable

from tracekit.store.damage import Damage, run_dirs
from tracekit.core.errors import TracekitError
from tracekit.store.store import Store


def verify(store: Store, deep: bool = False) -> tuple[int, list[Damage]]:
    """(number of run directories, the damaged runs), every Parquet footer parsed."""
    scan = store.scan(deep=deep)
    return len(scan.run_ids) + len(scan.damaged), scan.damaged


def verify_compacted(store: Store, deep: bool = False) -> str | None:
    """What is wrong with the current compacted generation (tracekit.store.compacted), None
    if it is whole or there is none."""
    from tracekit.store.compacted import generation_problem

    return generation_problem(store.root, deep=deep)[1]


def resolve_runs(store: Store, ids: Iterable[str]) -> list[str]:
    """The run directories named by ids (a run id or a unique prefix of one, damaged runs
    included), in the order given, each once. An unknown or ambiguous id is an error."""
    present = [r for r, _ in run_dirs(store.runs_dir)]
    out: list[str] = []
    for i in ids:
        if not i or "/" in i or i.startswith("."):
            raise TracekitError(f"{i!r} is not a run id")
        hits = [r for r in present if r == i] or [r for r in present if r.startswith(i)]
        if not hits:
            raise TracekitError(f"no run {i!r} in {store.root} (tracekit runs lists them)")
        if len(hits) > 1:
            raise TracekitError(f"run id prefix {i!r} matches {len(hits)} runs ({', '.join(hits[:3])}...); give more of it")
        if hits[0] not in out:
            out.append(hits[0])
    return out


def remove_runs(store: Store, run_ids: Iterable[str], on_removed: Callable[[str], None] | None = None) -> list[str]:
    """Remove each run (Store.remove_run: one rename out of runs/, then deleted); returns the
    ids removed. A run already gone (another process removed it) is skipped."""
    removed = []
    for r in run_ids:
        try:
            store.remove_run(r)
        except FileNotFoundError:
            continue
        except OSError as e:
            raise TracekitError(f"run {r}: cannot remove it: {e.strerror or e}") from None
        removed.append(r)
        if on_removed:
            on_removed(r)
    return removed
