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
    soon as 16 MiB or so of it is free, so every chunk faults its pages in again
    (docs/performance.md, "Memory"). Blocks under 32 MiB (glibc's
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
    for them (the gain, on an ingest and on a sweep: docs/performance.md, "Memory")."""
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    keep_freed_memory()
