"""Where the wall time of one `tracekit ingest` goes, in process: the moments it passes
(imports done, first chunk in the loop, last part written, the stored facts' start and end,
the command's end) with the process's CPU time at each, for one trace, a few runs.

Usage: .venv/bin/python benchmarks/ingest_timeline.py TRACE [--runs 3] [--scratch DIR]

Each run ingests TRACE into a fresh store under --scratch (default benchmarks/data/; not
/tmp, where making a file can cost the kernel ~1 ms: benchmarks/README.md, "The sweep"),
through the `tracekit` script's own entry (`tracekit.__main__.entry_point`), with a few functions
of tracekit.ingest.pipeline wrapped, as the command imports it, to note the time they are reached.
Times are from this script's start (the interpreter's own start-up, ~15-20 ms, comes before
it; the exit, the kernel freeing the process's memory, after the last mark: "whole process"
includes both). The stores are left in place: removing them would slow the next files made there.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchproc import compile_installation  # noqa: E402

# the run itself, in a process of its own (the imports are part of what it times). It runs
# the command as the `tracekit` script does (tracekit.__main__.entry_point, then
# cli.entry_point, which ends the process by startup.exit_promptly after the atexit functions:
# the marks are printed by the first one registered, so the last to run), and wraps
# tracekit.ingest.pipeline's and tracekit.ingest.facts's functions as those modules are
# imported, where the command imports them
RUN = r'''
import atexit, importlib.abc, importlib.machinery, resource, sys, time
T0 = time.perf_counter()
marks = []
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
def mark(what):
    marks.append((what, time.perf_counter() - T0, cpu()))
def show():
    mark("command done (atexit)")
    for what, t, c in marks:
        print(f"{t:7.3f} s  CPU {c:6.3f} s  {what}")
atexit.register(show)

def wrap_ingest(ing):
    real_iter = ing._Prefetch.__iter__
    def chunks(self):
        for i, x in enumerate(real_iter(self)):
            if i == 0:
                mark("first chunk in the loop")
            yield x
    ing._Prefetch.__iter__ = chunks
    real_close = ing._Writers.close
    def close(self):
        first = not getattr(self, "_marked", False)
        self._marked = True
        real_close(self)
        if first:
            mark("last part written")
    ing._Writers.close = close
    real_mr = ing.materialise_run
    def materialise_run(*a, **k):
        mark("stored facts: start")
        r = real_mr(*a, **k)
        mark("stored facts: end")
        return r
    ing.materialise_run = materialise_run

class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in ("tracekit.ingest.pipeline", "tracekit.apps.cli"):
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        real_exec = spec.loader.exec_module
        def exec_module(module):
            if name == "tracekit.apps.cli":
                real_exec(module)
                mark("tracekit.apps.cli imported")
                return
            mark("tracekit.ingest.pipeline: import starts")
            real_exec(module)
            mark("tracekit.ingest.pipeline imported")
            wrap_ingest(module)
        spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, Hook())

sys.argv = ["tracekit", "ingest", "--data", sys.argv[1], sys.argv[2]]
try:
    from tracekit.__main__ import entry_point       # the `tracekit` script's entry
except ImportError:             # a tracekit from before it
    from tracekit.apps.cli import entry_point
entry_point()
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", type=Path)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scratch", type=Path, default=HERE / "data")
    a = ap.parse_args()
    compile_installation()       # (benchproc: else an edited module is compiled at every start)
    a.scratch.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="tk-timeline-", dir=a.scratch))
    env = {**os.environ, "PYTHONPATH": ""}
    for i in range(a.runs):
        t0 = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([sys.executable, "-c", RUN, str(scratch / f"store-{i}"), str(a.trace.resolve())],
                             cwd=scratch, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if out.returncode != 0:
            sys.exit(out.stderr)
        print(f"run {i + 1}: whole process {wall:.3f} s, CPU "
              f"{after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime:.3f} s")
        print(out.stdout)
    print(f"(stores left in {scratch})")


if __name__ == "__main__":
    main()
