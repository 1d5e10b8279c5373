"""A sweep on a dask.distributed cluster: each simulation is one Dask task that runs ns-2
and ingests its traces into the shared store (`sweep.run_one`, the local pool's code).

The store must be on a filesystem every worker mounts at the same path (the cluster's
shared filesystem); the store's own rules (tracekit.store) make that safe: runs appear by
rename, one run per simulation and trace kind (a link(2) claim, valid across machines),
staging of a dead worker cleaned by its lease. Resume is the local path's: what is in the
store is not submitted again. Each task's key is its sim_id, so two clients of one
scheduler sweeping the same simulation share its task.

Dask is imported here only: `pip install 'tracekit[cluster]'`.
"""
from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from pathlib import Path
from typing import Callable

from ..errors import TracekitError, clip_repr
from ..store import STORE_FILE, Store
from .runner import find_ns, NsNotFoundError
from .sweep import SimResult, SimSpec, run_one, split_done

MAX_IN_FLIGHT = 2000         # tasks submitted ahead of the results (a 10^6-simulation sweep is not 10^6 futures)
LOCAL_PREFIX = "local:"


def _import_dask():
    try:
        import distributed
    except ImportError:
        raise TracekitError("--scheduler needs dask.distributed: pip install 'tracekit[cluster]'") from None
    return distributed


def sim_task(spec: SimSpec, data_dir: str, keep_traces: bool, ns_binary: str, timeout_s: float | None) -> SimResult:
    """One simulation on a worker. Every failure is a result (with the host it happened on),
    never an exception that Dask would take for a lost worker."""
    host = socket.gethostname()
    if not (Path(data_dir) / STORE_FILE).is_file():
        return SimResult(spec, "failed", host=host,
                         error=f"no tracekit store at {data_dir} on worker host {host}: the store must be on a filesystem "
                               "every worker mounts at the same path")
    try:
        r = run_one(spec, data_dir, keep_traces=keep_traces, ns_binary=ns_binary, timeout_s=timeout_s)
    except TracekitError as e:
        r = SimResult(spec, "failed", error=str(e))
    r.host = host
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
) -> list[SimResult]:
    """Run every spec not already in the store as a task on the Dask cluster `scheduler`
    (an address, or local:N). As `sweep.run_sims`: a failed simulation is a result and the
    others go on; `on_workers` is told the number of workers when it changes."""
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
    distributed = _import_dask()
    # the client's own log (a traceback when the scheduler goes away) would drown the
    # one-line message below; the scheduler's and workers' logs are where they run
    client_log = logging.getLogger("distributed.client")
    old_level = client_log.level
    client_log.setLevel(logging.CRITICAL)
    try:
        if on_start:
            on_start(len(todo), len(results))
        by_key: dict[str, SimSpec] = {}
        pending: set = set()
        it = iter(todo)
        n_workers = -1
        last_poll = 0.0

        def submit_more() -> None:
            while len(pending) < MAX_IN_FLIGHT:
                spec = next(it, None)
                if spec is None:
                    return
                key = f"tracekit-sim-{spec.sim_id}"
                by_key[key] = spec
                pending.add(client.submit(sim_task, spec, str(data), keep_traces, ns_binary, timeout_s, key=key))

        try:
            submit_more()
            while pending:
                now = time.monotonic()
                if on_workers and now - last_poll >= 1.0:
                    last_poll = now
                    n = len(client.nthreads())
                    if n != n_workers:
                        n_workers = n
                        on_workers(n)
                try:
                    finished, _ = distributed.wait(list(pending), timeout=1.0, return_when="FIRST_COMPLETED")
                except TimeoutError:
                    continue
                for fut in finished:
                    pending.discard(fut)
                    spec = by_key.pop(fut.key)
                    if fut.status == "finished":
                        r = fut.result()
                    elif fut.status == "cancelled":
                        r = SimResult(spec, "failed", error="the task was cancelled on the cluster")
                    else:
                        r = _lost(spec, fut.exception())
                    fut.release()
                    results.append(r)
                    if on_result:
                        on_result(r)
                submit_more()
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
