"""tracekit.core.memory.keep_freed_memory (`tracekit ingest`'s malloc settings): a process that frees a chunk's
MiB-sized buffers and allocates the next chunk's keeps the freed memory for them instead of
having the kernel fault fresh pages in for every chunk. Counted as the process's minor page
faults (the kernel's own count), in a fresh interpreter with and without the settings, over
the allocation pattern of an ingest's chunks (a few 8 MiB buffers alive at once, then freed)."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

import pytest

PATTERN = """
import resource, sys
if sys.argv[1] == "1":
    from tracekit.core.memory import keep_freed_memory
    keep_freed_memory()
def touched(n):
    b = bytearray(n)
    m = memoryview(b)
    for k in range(0, n, 4096):
        m[k] = 1
    return b
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    bufs = [touched(8 << 20) for _ in range(3)]
    del bufs
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(keep: bool) -> int:
    out = subprocess.run([sys.executable, "-c", PATTERN, "1" if keep else "0"], capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc")
def test_freed_chunk_memory_is_reused():
    pages = 20 * 3 * (8 << 20) // 4096           # every page of every buffer, touched once
    without, kept = _faults(False), _faults(True)
    # kept: the first round's pages, reused by the 19 after it
    assert kept < 0.15 * pages, (kept, pages)
    # glibc's defaults trim the heap after some rounds and fault the pages in again (how
    # many rounds depends on what else the interpreter has put on its heap: 7 to 14 of the
    # 20 seen here), so the settings save at least three quarters of those faults
    assert kept < 0.25 * without, (kept, without, pages)


POOL = """
import sys
from tracekit.apps.cli import app
sys.argv = ["tracekit", "ingest", sys.argv[1], "--data", sys.argv[2]]
try:
    app()
except SystemExit as e:
    assert not e.code, e.code
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
"""


@pytest.mark.parametrize("given, expected", [(None, "system"), ("jemalloc", "jemalloc")])
def test_ingest_takes_arrows_buffers_from_malloc_unless_told(tmp_path, ns_traces, given, expected):
    """`tracekit ingest` has Arrow allocate with glibc's malloc (whose freed memory
    keep_freed_memory keeps), not with its default mimalloc; a pool the user names in
    ARROW_DEFAULT_MEMORY_POOL is kept."""
    import pyarrow

    if expected not in pyarrow.supported_memory_backends():
        pytest.skip(f"this pyarrow has no {expected}")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    if given:
        env["ARROW_DEFAULT_MEMORY_POOL"] = given
    out = subprocess.run([sys.executable, "-c", POOL, str(ns_traces["wired_plain"]), str(tmp_path / "store")],
                         capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split()[-1] == expected, out


RUN_POOL = """
import sys
from tracekit.apps.cli import app
sys.argv = ["tracekit", *sys.argv[1:]]
try:
    app()
except SystemExit as e:
    assert not e.code, e.code
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
"""


@pytest.mark.skipif(shutil.which("ns") is None, reason="needs ns-2")
@pytest.mark.parametrize("command", [["run", "cbr-variants", "--set", "duration=1"],
                                     ["sweep", "cbr-variants", "--grid", "cbr_rate_mbps=2,6", "--set", "duration=1", "-j", "1"]])
def test_run_and_sweep_ingest_with_the_memory_settings_of_ingest(tmp_path, command):
    """`tracekit run` and `tracekit sweep` ingest in their own process, with the settings of
    `tracekit ingest` (tracekit.core.memory.for_ingest): Arrow's buffers from glibc's malloc. Before,
    a sweep's ingests took them from mimalloc: 245,000 minor page faults for 40 simulations
    at the default duration instead of 90,000 (docs/performance.md, "Memory")."""
    import pyarrow

    if "system" not in pyarrow.supported_memory_backends():
        pytest.skip("this pyarrow has no system pool")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run([sys.executable, "-c", RUN_POOL, *command, "--data", str(tmp_path / "store")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "system", out


REPRODUCE_POOL = """
import sys
import tracekit.apps.cli as cli
from tracekit.experiments import EXPERIMENTS
def instead(*a, **k):      # where the simulations would run: which pool their ingest gets
    import pyarrow
    print(pyarrow.default_memory_pool().backend_name)
    raise SystemExit(0)
cli._run_with_progress = instead
name = next(n for n, e in EXPERIMENTS.items() if e.quick is not None)
sys.argv = ["tracekit", "reproduce", name, "--quick", "--data", sys.argv[1]]
cli.app()
"""


def test_reproduce_sets_the_memory_settings_before_pyarrow_is_imported(tmp_path):
    """`tracekit reproduce` imports pyarrow (tracekit.analysis.reproduce) before its sweeps: the
    settings must come first, or Arrow keeps mimalloc."""
    import pyarrow

    if "system" not in pyarrow.supported_memory_backends():
        pytest.skip("this pyarrow has no system pool")
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    out = subprocess.run([sys.executable, "-c", REPRODUCE_POOL, str(tmp_path / "store")],
                         capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.stdout.split()[-1:] == ["system"], out
