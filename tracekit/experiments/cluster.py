"""A sweep on a dask.distributed cluster: each simulation is one Dask task that runs ns-2
and ingests its traces into the shared store (`sweep.run_one`, the local pool's code).

The store must be on a filesystem every worker mounts at the same path (the cluster's
shared filesystem); the store's own rules (tracekit.store.store) make that safe: runs appear by
rename, one run per simulation and trace kind (a link(2) claim, valid across machines),
staging of a dead worker cleaned by its lease. Resume is the local path's: what is in the
store is not submitted again. Each task's key is its sim_id, so two clients of one
scheduler sweeping the same simulation share its task.

A worker that cannot run simulations (no store at the client's path, no ns-2, a tracekit
that does not import) would fail each task at once and so be fed most of the sweep: each
worker is checked when first seen, before it is given a task, and one that fails is left
out (the tasks restricted to the others) and named by its address.

Dask is imported here only: `pip install 'tracekit[cluster]'`.
"""
from __future__ import annotations

import asyncio
import logging
import math
import os
import queue
import socket
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from tracekit.core.errors import TracekitError, clip, clip_repr
from tracekit.store.store import STORE_FILE, Store
from tracekit.experiments.runner import find_ns, NsNotFoundError
from tracekit.experiments.sweep import SimResult, SimSpec, run_one, split_done

MAX_IN_FLIGHT = 2000         # tasks submitted ahead of the results (a 10^6-simulation sweep is not 10^6 futures)
LOCAL_PREFIX = "local:"


def _import_dask():
    try:
        import distributed
    except ImportError:
        raise TracekitError("--scheduler needs dask.distributed: pip install 'tracekit[cluster]'") from None
    return distributed


def worker_unfit(data_dir: str, ns_binary: str) -> str:
    """Why this worker cannot run the sweep's simulations ('' if it can): the store not at the
    client's path, or no ns-2. Run on every worker before it is given a task (client.run), so
    that a worker failing each task at once is not the one Dask feeds the sweep to."""
    if not (Path(data_dir) / STORE_FILE).is_file():
        return (f"no tracekit store at {data_dir} on worker host {socket.gethostname()}: the store must be on a "
                "filesystem every worker mounts at the same path")
    try:
        find_ns(ns_binary)
    except NsNotFoundError as e:
        return str(e)
    return ""


@dataclass
class _Unfit:
    """A task's answer from a worker that cannot run simulations (worker_unfit): the client
    leaves the worker out and runs the simulation on another."""
    spec: SimSpec
    where: str
    address: str
    reason: str


def sim_task(spec: SimSpec, data_dir: str, keep_traces: bool, ns_binary: str, timeout_s: float | None) -> SimResult | _Unfit:
    """One simulation on a worker. Every failure is a result (with the worker it happened
    on), never an exception that Dask would take for a lost worker."""
    from distributed import get_worker

    address = get_worker().address
    where = f"{socket.gethostname()}, worker {address}"
    reason = worker_unfit(data_dir, ns_binary)
    if reason:
        return _Unfit(spec, where, address, reason)
    try:
        r = run_one(spec, data_dir, keep_traces=keep_traces, ns_binary=ns_binary, timeout_s=timeout_s)
    except TracekitError as e:
        r = SimResult(spec, "failed", error=str(e))
    r.host = where
    return r


def _local_workers(scheduler: str) -> int | None:
    """N of `local:N`; None for a scheduler address."""
    if not scheduler.startswith(LOCAL_PREFIX):
        return None
    n_text = scheduler[len(LOCAL_PREFIX):]
    if not n_text.isdigit() or not 1 <= int(n_text) <= 1024:
        raise TracekitError(f"--scheduler {clip_repr(scheduler)}: expected local:N with N from 1 to 1024 worker processes")
    return int(n_text)


def _connect(scheduler: str):
    """(client, cluster or None) for `local:N` or a scheduler address."""
    distributed = _import_dask()
    n_local = _local_workers(scheduler)
    if n_local is not None:
        # one thread per worker process: a task is one ns-2 run, then an ingest (polars
        # parallelises inside it); silence_logs: Dask's own chatter stays off the terminal
        cluster = distributed.LocalCluster(n_workers=n_local, threads_per_worker=1, processes=True,
                                           dashboard_address=None, silence_logs=logging.ERROR)
        try:
            return distributed.Client(cluster), cluster
        except BaseException:
            cluster.close()
            raise
    try:
        return distributed.Client(scheduler, timeout=30), None
    except (OSError, TimeoutError, ValueError) as e:
        raise TracekitError(f"--scheduler {clip_repr(scheduler)}: cannot reach the Dask scheduler: {e}") from None


def _lost(spec: SimSpec, exc: BaseException) -> SimResult:
    """A task that ended with an exception: its worker died too many times (KilledWorker),
    or something outside run_one failed."""
    name = type(exc).__name__
    if name == "KilledWorker":
        msg = ("its worker died while running it, on every try (KilledWorker: Dask gives up after "
               "distributed.scheduler.allowed-failures retries); see the workers' logs")
    else:
        msg = f"{name}: {exc}"
    return SimResult(spec, "failed", error=msg)


class _Workers:
    """The cluster's workers as one sweep sees them: each checked (worker_unfit, on the
    worker) once, when first seen; those unfit are left out of the sweep. While none is unfit
    the tasks go anywhere (Dask's own scheduling); once one is, each task submitted is
    restricted to the fit workers known then."""

    def __init__(self, client, data: str, ns_binary: str, on_excluded: Callable[[str, str], None] | None):
        self.client, self.data, self.ns_binary, self.on_excluded = client, data, ns_binary, on_excluded
        self.fit: set[str] = set()
        self.unfit: dict[str, str] = {}

    def refresh(self) -> int:
        """Check the workers not seen before; the number of workers on the cluster."""
        live = set(self.client.nthreads())
        self.fit &= live
        new = sorted(live - self.fit - set(self.unfit))
        if new:
            got = self.client.run(worker_unfit, self.data, self.ns_binary, workers=new, on_error="return")
            for addr in new:
                if addr not in got:
                    continue                # gone meanwhile
                why = got[addr]
                if isinstance(why, OSError):        # its connection lost: died meanwhile, or to be asked again
                    continue
                if isinstance(why, BaseException):  # e.g. tracekit not importable there
                    why = f"tracekit does not run there: {type(why).__name__}: {clip(str(why), 300)}"
                if why:
                    self.exclude(addr, why)
                else:
                    self.fit.add(addr)
        return len(live)

    def exclude(self, addr: str, why: str) -> None:
        if addr in self.unfit:
            return
        self.fit.discard(addr)
        self.unfit[addr] = why
        if self.on_excluded:
            self.on_excluded(addr, why)

    def restriction(self) -> dict:
        """client.submit's arguments that keep a task off the unfit workers (TracekitError
        when no fit one is left: an empty list would be no restriction at all)."""
        if why := self.none_left():
            raise TracekitError(why)
        return {"workers": sorted(self.fit), "allow_other_workers": False} if self.unfit else {}

    def none_left(self) -> str:
        """Why no task can run ('' while one can): every worker seen is unfit."""
        if self.fit or not self.unfit:
            return ""
        return "no worker of the cluster can run the simulations: " + "; ".join(f"{a}: {w}" for a, w in sorted(self.unfit.items()))


# results taken from the cluster's workers per round trip, at most (client.gather)
_GATHER_MAX = 500
# tasks submitted between two looks at the results, at most: the first results are not
# held back behind the submission of MAX_IN_FLIGHT tasks
_SUBMIT_CHUNK = 100


def drive(client, todo: list, task: Callable, args: tuple, key_of: Callable[[Any], str],
          on_result: Callable[[Any, str, Any], None], workers: _Workers | None = None,
          on_workers: Callable[[int], None] | None = None) -> None:
    """Run `task(item, *args)` for every item of `todo` on the cluster, at most MAX_IN_FLIGHT
    submitted ahead of the results, and call on_result(item, status, value) as each ends:
    "finished" and the task's value, "error" and its exception, or "cancelled" and None.
    Each future tells its end by a callback into a queue, so a result costs the same whatever
    the number of tasks in flight (no wait over all of them each time); results are gathered
    in batches. A value that is an _Unfit answer leaves its worker out (`workers`) and runs
    the item again on another worker."""
    ended: queue.Queue = queue.Queue()
    pending: dict[str, tuple] = {}          # key -> (future, item, try)
    it = iter(todo)
    exhausted = False
    retry: list[tuple] = []                 # (item, try) to submit again, off an unfit worker
    n_workers = -1
    last_poll = -math.inf

    def submit(item, attempt: int) -> None:
        key = key_of(item) + (f"-retry{attempt}" if attempt else "")
        fut = client.submit(task, item, *args, key=key, **(workers.restriction() if workers else {}))
        pending[fut.key] = (fut, item, attempt)
        fut.add_done_callback(ended.put)

    while True:
        # the workers, checked before the first task and each second (some join, some die)
        now = time.monotonic()
        if now - last_poll >= 1.0:
            last_poll = now
            count = workers.refresh() if workers else len(client.nthreads())
            if workers and (why := workers.none_left()):
                raise TracekitError(why)
            if on_workers and count != n_workers:
                n_workers = count
                on_workers(count)
        n = 0
        while retry and n < _SUBMIT_CHUNK:
            submit(*retry.pop())
            n += 1
        while not exhausted and len(pending) < MAX_IN_FLIGHT and n < _SUBMIT_CHUNK:
            item = next(it, None)
            if item is None:
                exhausted = True
                break
            submit(item, 0)
            n += 1
        if not pending:
            return
        more_to_submit = bool(retry) or (not exhausted and len(pending) < MAX_IN_FLIGHT)
        try:
            batch = [ended.get(block=not more_to_submit, timeout=1.0)]
        except queue.Empty:
            continue
        while len(batch) < _GATHER_MAX:
            try:
                batch.append(ended.get_nowait())
            except queue.Empty:
                break
        finished = []
        for fut in batch:
            if fut.status == "finished":
                finished.append(fut)
            elif fut.status in ("error", "cancelled"):
                _, item, _ = pending.pop(fut.key)
                on_result(item, fut.status, fut.exception() if fut.status == "error" else None)
                fut.release()
            else:                               # its result lost with a worker: computed again
                fut.add_done_callback(ended.put)
        for fut, value in zip(finished, client.gather(finished) if finished else []):
            _, item, attempt = pending.pop(fut.key)
            fut.release()
            if isinstance(value, _Unfit) and workers is not None:
                workers.exclude(value.address, value.reason)
                if workers.fit:
                    retry.append((item, attempt + 1))
                    continue
            on_result(item, "finished", value)


def run_sims_cluster(
    specs: list[SimSpec],
    data_dir: str | os.PathLike,
    scheduler: str,
    keep_traces: bool = True,
    resume: bool = True,
    on_start: Callable[[int, int], None] | None = None,
    on_result: Callable[[SimResult], None] | None = None,
    on_workers: Callable[[int], None] | None = None,
    ns_binary: str = "ns",
    timeout_s: float | None = None,
    on_excluded: Callable[[str, str], None] | None = None,
) -> list[SimResult]:
    """Run every spec not already in the store as a task on the Dask cluster `scheduler`
    (an address, or local:N). As `sweep.run_sims`: a failed simulation is a result and the
    others go on; `on_workers` is told the number of workers when it changes. Each worker
    is checked before it is given a task (worker_unfit: the store at this path, ns-2); one
    that fails is left out of the sweep, and `on_excluded` told its address and why; when no
    worker is left that can run the simulations, TracekitError says so for each."""
    data = Path(data_dir).resolve()       # the workers' path to the shared store
    _import_dask()                        # a missing extra or a bad local:N: said before the store is made
    if _local_workers(scheduler) is not None:
        try:
            find_ns(ns_binary)            # local workers: the same check as the local pool
        except NsNotFoundError as e:
            raise TracekitError(str(e)) from None
    Store(data, create=True)
    todo, results = split_done(specs, data, resume)
    if not todo:
        if on_start:
            on_start(0, len(results))
        return results
    client, cluster = _connect(scheduler)
    # the client's own log (a traceback when the scheduler goes away) would drown the
    # one-line message below; the scheduler's and workers' logs are where they run
    client_log = logging.getLogger("distributed.client")
    old_level = client_log.level
    client_log.setLevel(logging.CRITICAL)
    try:
        if on_start:
            on_start(len(todo), len(results))

        def ended(spec: SimSpec, status: str, value) -> None:
            if status == "finished":
                r = value if isinstance(value, SimResult) else SimResult(spec, "failed", host=value.where, error=value.reason)
            elif status == "cancelled":
                r = SimResult(spec, "failed", error="the task was cancelled on the cluster")
            else:
                r = _lost(spec, value)
            results.append(r)
            if on_result:
                on_result(r)

        try:
            workers = _Workers(client, str(data), ns_binary, on_excluded)
            drive(client, todo, sim_task, (str(data), keep_traces, ns_binary, timeout_s),
                  lambda spec: f"tracekit-sim-{spec.sim_id}", ended, workers, on_workers)
        except (asyncio.CancelledError, Exception) as e:
            if client.status == "running" and not isinstance(e, asyncio.CancelledError):
                raise
            n_landed = sum(r.status != "skipped" for r in results)
            raise TracekitError(f"lost the Dask scheduler {scheduler} ({type(e).__name__}) after {n_landed} of {len(todo)} "
                                "simulations; what finished is in the store: run the sweep again to resume") from None
    finally:
        try:
            client.close()
        finally:
            client_log.setLevel(old_level)
            if cluster is not None:
                cluster.close()
    return results
