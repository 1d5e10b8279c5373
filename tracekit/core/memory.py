"""Process-wide memory settings of the commands that ingest traces (`tracekit ingest`,
`run`, `sweep`, `reproduce`): set before pyarrow is first imported. A light module (no
pyarrow), so that a sweep sets them before it imports anything of its ingest."""
from __future__ import annotations

import os

# glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory() -> None:
    """For a process that ingests big traces (`tracekit ingest`): glibc's malloc keeps what
    a chunk's buffers freed for the next chunk's, instead of handing it back to the kernel
    and faulting fresh zeroed pages in again for every chunk. By default it serves blocks of
    the chunks' size (MiBs) from mmap until it has freed one, and trims the heap's top as
    soon as 16 MiB or so of it is free: on wireless-new-256s.tr, 83,000 page faults instead
    of 58,000 and ~0.1 s more CPU (benchmarks/README.md). Blocks under 32 MiB (glibc's
    largest mmap threshold) now come from the heap, and the heap is trimmed beyond 256 MiB
    free. Process-wide; a no-op where the C library has no mallopt (or refuses the first
    setting: setting the trim threshold alone would fix the mmap threshold at its 128 KiB
    start, far worse)."""
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return
    if mallopt(_M_MMAP_THRESHOLD, 32 << 20) == 1:
        mallopt(_M_TRIM_THRESHOLD, 256 << 20)


def for_ingest() -> None:
    """What a command that ingests does first: Arrow's buffers from glibc's malloc
    (ARROW_DEFAULT_MEMORY_POOL=system unless the user named a pool: Arrow reads it once, when
    pyarrow is first imported, so call this before), whose freed memory keep_freed_memory()
    then keeps for the next buffers; Arrow's default, mimalloc, has the kernel zero fresh pages
    for them. `tracekit ingest` on a 400 MB wireless trace: wall 1.85 -> 1.77 s, CPU 3.15 ->
    3.00 s; a sweep of 40 cbr-variants simulations at the default duration: minor page faults
    245,000 -> 90,000, the sweep's own system CPU 0.55-0.69 -> 0.30-0.37 s
    (benchmarks/README.md)."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    keep_freed_memory()
