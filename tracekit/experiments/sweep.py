"""Running bundled scenarios: one simulation (`run_sims` with one spec) or a sweep over a
grid of parameters and seeds, in parallel and resumable.

A simulation is (scenario, resolved parameters, seed); its id `sim_id` is a hash of those
and labels every run ingested from it (packet trace, cwnd trace, queue trace), which is
how a sweep knows what is already in the store. The packet trace is ingested last, so its
presence means the whole simulation landed.
"""
from __future__ import annotations

import itertools
import os
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from tracekit.core.errors import clip_repr
from tracekit.core.errors import TracekitError
from tracekit.store.store import Store
from tracekit.formats.tracemeta import format_value, sim_id_of
from tracekit.experiments.runner import NS_STARTED, NsNotFoundError, ScenarioRunError, find_ns, kill_children, run_scenario_traces
from tracekit.experiments.scenarios import EXPERIMENTS, experiment_runs, resolve_params

# ingest order: the packet trace last (see module docstring)
_INGEST_ORDER = ("cwnd.tr", "queue.tr", "packets.tr")


@dataclass(frozen=True)
class SimSpec:
    scenario: str
    params: tuple[tuple[str, Any], ...]    # resolved (resolve_params), in declaration order
    seed: int

    @property
    def sim_id(self) -> str:
        return sim_id_of(self.scenario, dict(self.params), self.seed)

    def describe(self) -> str:
        return " ".join([self.scenario] + [f"{k}={format_value(v)}" for k, v in self.params] + [f"seed={self.seed}"])


@dataclass
class SimResult:
    spec: SimSpec
    status: str                     # done | skipped | failed
    run_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0
    ns_seconds: float = 0.0
    error: str = ""
    host: str = ""                  # where it ran, on a cluster (tracekit sweep --scheduler)
    # when its ns-2 run started and ended (time.time(), around run_scenario_traces; 0.0 when
    # it did not run): a sweep's timeline (benchmarks/bench_sweep.py: head, middle, tail)
    ns_start_unix_s: float = 0.0
    ns_end_unix_s: float = 0.0
    # runs committed without their stored facts, stored later by run_sims (run_id, kind)
    facts_pending: list[tuple[str, str]] = field(default_factory=list, repr=False)


def make_spec(scenario: str, overrides: dict[str, str], seed: int) -> SimSpec:
    """One simulation: ``overrides`` resolved against the scenario (the only resolution)."""
    try:
        resolved = resolve_params(scenario, overrides)
    except ValueError as e:
        raise TracekitError(str(e)) from None
    if seed < 1:
        raise TracekitError(f"--seed must be an integer >= 1 (ns-2 seed 0 means a time-of-day seed), got {seed}")
    return SimSpec(scenario, tuple(resolved.items()), int(seed))


MAX_VALUES = 100000           # values of one --grid, seeds of --seeds
MAX_SIMULATIONS = 1_000_000   # of one sweep: grids x seeds (each is a spec in memory first)


def parse_grid(spec: str) -> tuple[str, list[str]]:
    """`k=a,b,c` or `k=start:stop:step` (stop included) into (k, values)."""
    key, sep, rhs = spec.partition("=")
    key = key.strip()
    if not sep or not key or not rhs.strip():
        raise TracekitError(f"--grid {clip_repr(spec)}: expected KEY=a,b,c or KEY=start:stop:step")
    rhs = rhs.strip()
    if ":" in rhs:
        parts = rhs.split(":")
        try:
            start, stop, step = (float(x) for x in parts)
        except ValueError:
            raise TracekitError(f"--grid {clip_repr(spec)}: start:stop:step must be three numbers") from None
        if step <= 0 or stop < start:
            raise TracekitError(f"--grid {clip_repr(spec)}: need step > 0 and stop >= start")
        n = int(round((stop - start) / step + 1e-9)) + 1
        if n > MAX_VALUES:
            raise TracekitError(f"--grid {clip_repr(spec)}: {n} values is too many")
        ints = all(float(x).is_integer() for x in (start, step))
        digits = max(len(p.split(".")[1]) if "." in p else 0 for p in parts)
        nums = [start + i * step for i in range(n)]
        return key, [str(int(v)) if ints else f"{v:.{digits}f}" for v in nums]
    vals = [v.strip() for v in rhs.split(",") if v.strip()]
    if not vals:
        raise TracekitError(f"--grid {clip_repr(spec)}: no values")
    return key, vals


def parse_seeds(text: str) -> list[int]:
    """`1-5`, `1,2,7` or `3` into a sorted list of seeds >= 1 (at most MAX_VALUES of them)."""
    seeds: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                a, b = part.split("-", 1)
                lo, hi = int(a), int(b)
                if hi < lo:
                    raise ValueError
                if hi - lo + 1 + len(seeds) > MAX_VALUES:   # counted before a range is built
                    raise TracekitError(f"--seeds {clip_repr(text)}: more than {MAX_VALUES:,} seeds is too many")
                seeds.update(range(lo, hi + 1))
            elif part:
                seeds.add(int(part))
                if len(seeds) > MAX_VALUES:
                    raise TracekitError(f"--seeds {clip_repr(text)}: more than {MAX_VALUES:,} seeds is too many")
    except ValueError:
        raise TracekitError(f"--seeds {clip_repr(text)}: expected e.g. 1-5 or 1,2,7") from None
    if not seeds or min(seeds) < 1:
        raise TracekitError(f"--seeds {clip_repr(text)}: seeds are integers >= 1")
    return sorted(seeds)


def plan_sweep(scenario: str, grids: list[tuple[str, list[str]]], seeds: list[int], fixed: dict[str, str]) -> list[SimSpec]:
    keys = [k for k, _ in grids]
    dup = {k for k in keys if keys.count(k) > 1} | (set(keys) & set(fixed))
    if dup:
        raise TracekitError(f"parameter {clip_repr(sorted(dup)[0])} is given twice (in --grid and/or --set)")
    n = len(seeds)
    for _, vals in grids:
        n *= len(vals)
    if n > MAX_SIMULATIONS:
        raise TracekitError(f"{n:,} simulations (the grids times the seeds) is too many; at most {MAX_SIMULATIONS:,} in one sweep")
    specs = []
    for combo in itertools.product(*(vals for _, vals in grids)):
        overrides = {**fixed, **dict(zip(keys, combo))}
        for seed in seeds:
            specs.append(make_spec(scenario, overrides, seed))
    return specs


def plan_experiment(name: str, seeds: list[int] | None = None, quick: bool = False) -> list[SimSpec]:
    """A named paper experiment's simulations (or its reduced version's, `quick`); `seeds`
    replaces the experiment's own."""
    if name not in EXPERIMENTS:
        raise TracekitError(f"unknown experiment {clip_repr(name)}; available: {', '.join(EXPERIMENTS)}")
    exp = EXPERIMENTS[name]
    if quick:
        if exp.quick is None:
            raise TracekitError(f"experiment {clip_repr(name)} declares no quick version")
        exp = exp.quick
    configs = list(dict.fromkeys(tuple(params.items()) for params, _ in experiment_runs(name, quick)))
    return [SimSpec(exp.scenario, params, seed) for params in configs for seed in (seeds or exp.seeds)]


def sim_packet_runs(data_dir: str | os.PathLike) -> dict[str, list[tuple[str, str]]]:
    """sim_id -> its packet-trace runs (run_id, trace kind: wired, or wireless for manet) in
    the store: the simulations done, and the runs whose stored facts a resumed sweep checks
    (materialise_committed)."""
    store = Store(data_dir)
    if not store.exists:
        return {}
    scan = store.scan()          # a damaged run is not done: the sweep runs its simulation again
    if scan.damaged:
        from tracekit.db.query import warn_damaged

        warn_damaged(scan.damaged)
    if not scan.files.get("runs"):
        return {}                # a new store: no DuckDB nor pyarrow before the first ns-2 starts
    import duckdb

    from tracekit.formats.parsers import PACKET_KINDS

    # the run records read as files, without the views (nor the is_packet_trace macro): the
    # packet-trace kinds are told apart here by the Python side's list
    rows = duckdb.execute(
        "SELECT DISTINCT l.value, filename, trace_kind FROM (SELECT unnest(labels) AS l, trace_kind, filename "
        "FROM read_parquet(?, union_by_name=true, filename=true)) "
        "WHERE l.key = 'sim_id' ORDER BY ALL", [scan.files["runs"]]
    ).fetchall()
    out: dict[str, list[tuple[str, str]]] = {}
    for sim_id, filename, kind in rows:
        if kind not in PACKET_KINDS:
            continue
        run_dir = os.path.basename(os.path.dirname(filename))       # runs/run_id=<id>/run.parquet
        out.setdefault(sim_id, []).append((run_dir.removeprefix("run_id="), kind))
    return out


def done_sim_ids(data_dir: str | os.PathLike) -> set[str]:
    """sim_ids whose packet trace (wired, or wireless for manet) is in the store."""
    return set(sim_packet_runs(data_dir))


def split_done(specs: list[SimSpec], data_dir: str | os.PathLike, resume: bool) -> tuple[list[SimSpec], list[SimResult]]:
    """The specs to run (each once, in order) and a 'skipped' result for each one whose
    simulation the store already holds (when resuming)."""
    return _split(specs, done_sim_ids(data_dir) if resume else set())


def _split(specs: list[SimSpec], done: set[str]) -> tuple[list[SimSpec], list[SimResult]]:
    unique = list(dict.fromkeys(specs))
    todo = [s for s in unique if s.sim_id not in done]
    return todo, [SimResult(s, "skipped") for s in unique if s.sim_id in done]


@dataclass
class _Staged:
    """A simulation whose ns-2 run is over: its traces in `work` (a staging directory of
    the store, removed with store.discard), waiting to be ingested."""
    spec: SimSpec
    store: Store
    work: Any
    ns_s: float
    spent_s: float          # time spent on it so far (ns-2 and staging), not waiting
    ns_start_unix_s: float
    ns_end_unix_s: float
    traces: frozenset[str]  # the names of the trace files ns-2 wrote (run_scenario_traces)


def _simulate(spec: SimSpec, data_dir: str | os.PathLike, ns_binary: str = "ns",
              timeout_s: float | None = None, staging: tuple[Store, Path] | None = None) -> _Staged | SimResult:
    """Run one simulation with ns-2 into a staging directory (`staging`: one made already, the
    store's and its path; else a new one): what is left to ingest, or a 'failed' result (the
    staging directory then removed)."""
    t0 = time.perf_counter()
    if staging is None:
        store = Store(data_dir, create=True)
        work = store.new_staging(tag=f"sim-{spec.sim_id}")
    else:
        store, work = staging
    try:
        t_ns, start_unix_s = time.perf_counter(), time.time()
        written = run_scenario_traces(spec.scenario, dict(spec.params), spec.seed, work, ns_binary=ns_binary,
                                      timeout_s=timeout_s, reuse_files=staging is not None)
        ns_s, end_unix_s = time.perf_counter() - t_ns, time.time()
    except NsNotFoundError as e:
        store.discard(work)
        raise TracekitError(str(e)) from None
    except (ScenarioRunError, ValueError) as e:
        store.discard(work)
        return SimResult(spec, "failed", seconds=time.perf_counter() - t0, error=str(e))
    except BaseException:
        store.discard(work)
        raise
    return _Staged(spec, store, work, ns_s, time.perf_counter() - t0, start_unix_s, end_unix_s,
                   frozenset(p.name for p in written))


def _ingest_staged(st: _Staged, keep_traces: bool = True, facts: bool = True, reuse: bool = False) -> SimResult:
    """Ingest every trace a simulation wrote (the packet trace last), then remove them.
    Without `facts`, the runs are committed without their stored facts, and the result's
    `facts_pending` lists them (run_id, trace kind) for materialise_committed. With `reuse`,
    once ingested they are emptied instead, and the staging directory is left for the next
    simulation (run_scenario_traces(reuse_files=True))."""
    from tracekit.ingest.pipeline import ingest_file, sim_claim_name

    t0 = time.perf_counter()
    pending = []
    ingested = False
    try:
        labels = {"sim_id": st.spec.sim_id}
        run_ids = []
        # claimed once for the three traces (each ingest's own claim is then taken already),
        # and each run staged inside the simulation's staging directory, under its lock: per
        # simulation, five files fewer to create and two links
        with st.store.claim(sim_claim_name(st.spec.sim_id)):
            for name in _INGEST_ORDER:
                if name in st.traces:
                    r = ingest_file(st.store, st.work / name, labels=labels, keep_trace=keep_traces,
                                    source_name=f"tracekit run {st.spec.describe()}: {name}", facts=facts,
                                    staging_within=st.work)
                    if r.run_id is not None:
                        run_ids.append(r.run_id)
                        if not facts and r.kind is not None:
                            pending.append((r.run_id, r.kind))
        if reuse:
            for name in st.traces:          # their disk space free now, their files kept
                os.truncate(st.work / name, 0)
            ingested = True
    finally:
        if not ingested:
            st.store.discard(st.work)
    res = SimResult(st.spec, "done", run_ids, st.spent_s + time.perf_counter() - t0, st.ns_s,
                    ns_start_unix_s=st.ns_start_unix_s, ns_end_unix_s=st.ns_end_unix_s)
    res.facts_pending = pending
    return res


# a sweep stores the facts of this many simulations' packet traces at once (one query per
# fact table for all of them: a batch's fixed cost shared, docs/performance.md, "Sweeps");
# not more, so that a full batch sent just before the tail (FACTS_TAIL) is not much longer
# than the ns-2 runs left to hide it
FACTS_BATCH = 16
# ... and, once this many simulations are left to ingest, of those ingested so far: the
# facts computed after the last ns-2 ends (which the sweep waits for) are then those of
# the last few simulations, not of up to FACTS_BATCH
FACTS_TAIL = 3
# simulations whose traces may wait for their ingest beyond one per ingest thread: ns-2
# keeps running while the ingest catches up with a burst (its imports while the first
# simulations run, a batch of facts)
STAGED_AHEAD = 4
# the most runs of one such query (those a resumed sweep finds without their facts may be
# thousands: one query each for this many)
FACTS_CHUNK = 64


def _store_facts(store: Store, runs: list[tuple[str, str]], within: Path | None = None,
                 threads: int | None = None) -> None:
    from tracekit.ingest.facts import materialise_committed

    materialise_committed(store, runs, staging_within=within, threads=threads)


def _import_ingest() -> None:
    """What the ingest and the stored facts import (pyarrow, DuckDB), once
    the first ns-2 has started (not before: this thread would hold the GIL the simulation's
    thread needs to start it), so on the core ns-2 leaves free."""
    NS_STARTED.wait(timeout=1.0)
    import duckdb  # noqa: F401
    from tracekit.ingest import pipeline as ingest, facts as materialise  # noqa: F401


def run_one(spec: SimSpec, data_dir: str | os.PathLike, keep_traces: bool = True, ns_binary: str = "ns",
            timeout_s: float | None = None) -> SimResult:
    """Run one simulation with ns-2 and ingest every trace it wrote."""
    st = _simulate(spec, data_dir, ns_binary, timeout_s)
    return st if isinstance(st, SimResult) else _ingest_staged(st, keep_traces)


def run_sims(
    specs: list[SimSpec],
    data_dir: str | os.PathLike,
    jobs: int | None = None,
    keep_traces: bool = True,
    resume: bool = True,
    on_start: Callable[[int, int], None] | None = None,
    on_result: Callable[[SimResult], None] | None = None,
    ns_binary: str = "ns",
) -> list[SimResult]:
    """Run every spec not already in the store, `jobs` ns-2 processes at a time (default: all
    cores). A simulation's traces are ingested in the background while the next simulations
    run (at most `jobs` simulations wait for or are in their ingest, so ns-2 never runs far
    ahead of it: STAGED_AHEAD more). `jobs` more simulations are queued, their staging
    directories made, so that the next ns-2 starts as soon as one ends. A failed simulation is reported in its result and does
    not stop the others. Nothing before the first ns-2 start imports pyarrow or DuckDB (on a
    new store): the ingest thread imports them while it runs.

    The stored facts of the packet traces are computed FACTS_BATCH simulations at a time
    (and those ingested when FACTS_TAIL are left), after their runs are committed
    (materialise_committed), and the last ones before this
    returns; a sweep stopped meanwhile leaves runs whose facts the views compute from their
    events (the same rows, more slowly). Resumed, a sweep stores them for the simulations it
    found done, after its own (and those written under an older definition of the facts)."""
    try:
        find_ns(ns_binary)
    except NsNotFoundError as e:
        raise TracekitError(str(e)) from None
    store = Store(data_dir, create=True)
    done = sim_packet_runs(data_dir) if resume else {}
    todo, results = _split(specs, set(done))
    if on_start:
        on_start(len(todo), len(results))
    jobs = max(1, jobs or os.cpu_count() or 1)
    it = iter(todo)
    # ns-2 running, or queued to start in the thread of one that ends (at most jobs of each),
    # with the staging directory it writes into: made here, while the ns-2 before it runs
    sims: dict[Future, Path] = {}
    ingests: dict[Future, _Staged] = {}         # ingest queued or running
    # the staging directories of simulations ingested, their trace files emptied, for the
    # next ones: ns-2 writes into those files (run_scenario_traces(reuse_files=True)), so a
    # simulation makes (and removes) no directory and no trace file
    free: list[Path] = []
    facts: set[Future] = set()                  # stored facts of committed runs being computed
    no_facts: list[tuple[str, str]] = []        # committed runs waiting for their facts
    no_facts_sims = 0                           # the simulations of those runs
    left = len(todo)                            # simulations not through their ingest yet
    tail_sent = False                           # the batch sent when FACTS_TAIL were left
    # the runs of the simulations found done: stored facts checked (and stored where missing)
    # after the sweep's own simulations
    found = [run for r in results for run in done[r.spec.sim_id]]
    # one staging directory for the sweep, its lock held to the end: each simulation's (and
    # each batch of facts') is made inside it, without a lock file of its own to create and
    # remove (Store.new_staging)
    sweep_work = store.new_staging(tag="sweep")
    try:
        with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="tracekit-sim") as sim_pool, \
                ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="tracekit-ingest") as ingest_pool:
            if todo:
                ingest_pool.submit(_import_ingest)     # while the first simulations run, not after
            try:
                exhausted = False
                while True:
                    # queue simulations while a slot is free and the ingest backlog is short
                    while not exhausted and len(sims) < 2 * jobs and len(sims) + len(ingests) < 3 * jobs + STAGED_AHEAD:
                        nxt = next(it, None)
                        if nxt is None:
                            exhausted = True
                            break
                        work = free.pop() if free else store.new_staging(tag="sim", within=sweep_work)
                        sims[sim_pool.submit(_simulate, nxt, data_dir, ns_binary, None, (store, work))] = work
                    if found and exhausted and not sims and not ingests:
                        no_facts.extend(found)
                        found = []
                    if no_facts and (no_facts_sims >= FACTS_BATCH or (left <= FACTS_TAIL and not tail_sent)
                                     or (exhausted and not sims and not ingests)):
                        tail_sent = left <= FACTS_TAIL
                        # DuckDB's threads: while simulations run, the cores their ns-2 leave
                        # (one at -j 1 on 2 cores: a second thread would take ns-2's core)
                        threads = max(1, (os.cpu_count() or 1) - jobs) if sims else None
                        for i in range(0, len(no_facts), FACTS_CHUNK):     # a resumed sweep's may be many
                            facts.add(ingest_pool.submit(_store_facts, store, no_facts[i:i + FACTS_CHUNK], sweep_work,
                                                         threads))
                        no_facts, no_facts_sims = [], 0
                    if not sims and not ingests and not facts:
                        break
                    finished, _ = wait(set(sims) | set(ingests) | facts, return_when=FIRST_COMPLETED)
                    for fut in finished:
                        if fut in facts:
                            facts.discard(fut)
                            fut.result()
                            continue
                        if fut in sims:
                            del sims[fut]
                            out = fut.result()
                            if isinstance(out, _Staged):
                                ingests[ingest_pool.submit(_ingest_staged, out, keep_traces, False, True)] = out
                                continue
                            r = out
                        else:
                            st = ingests.pop(fut)
                            r = fut.result()
                            free.append(st.work)
                            no_facts.extend(r.facts_pending)
                            no_facts_sims += bool(r.facts_pending)
                        left -= 1
                        results.append(r)
                        if on_result:
                            on_result(r)
            except BaseException:
                for f in facts:
                    f.cancel()
                for f, work in sims.items():
                    if f.cancel():                  # never started: its staging directory goes now
                        store.discard(work)
                for f, st in ingests.items():
                    if f.cancel():                  # never started: its traces go now
                        st.store.discard(st.work)
                kill_children()     # the running simulations end now, not when ns-2 is done
                raise
    finally:
        store.discard(sweep_work)
    return results
