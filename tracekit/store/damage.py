"""Telling a damaged run from a whole one, by its files alone (no Store, no SQL).

A run is `runs/run_id=<id>/` holding `run.parquet` (its record) and its table parts
`<table>-NNNNN.parquet`. It is damaged when run.parquet is missing, or any of its Parquet
files is not a whole Parquet file. Two depths of checking:

- `tail_problem` (cheap, every connection, on the files it reads): a Parquet file ends with
  its footer, then the footer's length (4 bytes, little-endian), then the magic `PAR1`. A
  file cut short or overwritten loses that ending, so: size >= 12 (`PAR1` + length + `PAR1`),
  the last 4 bytes are `PAR1`, and the footer length fits in the file. One stat and one
  8-byte read per file.
- `footer_problem` (`tracekit verify`): also parses the whole footer (thrift metadata: row
  groups, schema), which finds a footer overwritten in place; with `deep`, reads every page.

A damaged run is left out whole (its record and every part) by the connection that meets the
damage. A run whose run.parquet is damaged is left out everywhere, so the views,
`Store.run_ids` and "already in the store" agree on which runs there are; a damaged part of
another table is met only by the connections that read that table (a connection over the
run records alone, which chooses the runs of `tracekit metrics`, lists the run; the
connection over the chosen runs then warns and leaves it out).
"""
from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from typing import Callable

from tracekit.core.errors import TracekitError, shown

MAGIC = b"PAR1"
RUN_FILE = "run.parquet"
RUN_PREFIX = "run_id="


@dataclass(frozen=True)
class Damage:
    """Why one run is damaged: the first bad file found (its name in the run directory)."""
    run_id: str
    file: str
    reason: str

    def describe(self) -> str:
        return f"run {self.run_id} is damaged ({self.file}: {self.reason})"


@dataclass
class Scan:
    """A walk of runs/: the Parquet files of every whole run by table ('runs' for the run
    records), each list sorted, and the damaged runs (sorted by run id)."""
    files: dict[str, list[str]] = field(default_factory=dict)
    run_ids: list[str] = field(default_factory=list)
    damaged: list[Damage] = field(default_factory=list)


def tail_problem(path: str | os.PathLike, size: int | None = None) -> str | None:
    """What is wrong with the end of a Parquet file (None if it ends as one must)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            if size is None:
                size = os.fstat(fd).st_size
            if size < 12:
                return f"{size} bytes, too short to be a Parquet file (cut off?)"
            tail = os.pread(fd, 8, size - 8)
        finally:
            os.close(fd)
    except OSError as e:
        return f"unreadable: {e.strerror or e}"
    if len(tail) < 8:
        return "shorter than its size (being cut off?)"
    if tail[4:] != MAGIC:
        return "no Parquet footer at its end (cut off or overwritten?)"
    footer_len = int.from_bytes(tail[:4], "little")
    if footer_len + 12 > size:
        return f"its footer length ({footer_len} bytes) does not fit in its {size} bytes (cut off or overwritten?)"
    return None


def footer_problem(path: str | os.PathLike, deep: bool = False) -> str | None:
    """tail_problem, then a full parse of the footer (and with deep, a read of every page)."""
    problem = tail_problem(path)
    if problem is not None:
        return problem
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # deep: the pages' CRC32s checked where the writer put them (tracekit's own parts)
        pf = pq.ParquetFile(path, page_checksum_verification=deep)
        if deep:
            for i in range(pf.num_row_groups):
                pf.read_row_group(i)
    except (OSError, pa.ArrowException, ValueError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        return ("unreadable data page: " if deep else "unreadable footer: ") + (msg if len(msg) <= 80 else msg[:77] + "...")
    return None


def _run_entries(run_path: str) -> list[os.DirEntry]:
    with os.scandir(run_path) as entries:
        return [e for e in entries if e.name.endswith(".parquet") and (e.name == RUN_FILE or "-" in e.name)]


def check_run(run_path: str, run_id: str, deep: bool | None = None,
              checked: Callable[[str], bool] | None = None) -> tuple[Damage | None, list[os.DirEntry]]:
    """The damage of one run directory (None if whole) and its Parquet entries. deep=None:
    the cheap tail check; False: a full footer read; True: every page read too. checked:
    which files besides run.parquet to check, by name (None: all; a reader checks what it reads)."""
    try:
        entries = _run_entries(run_path)
    except OSError as err:
        return Damage(run_id, ".", f"unreadable directory: {err.strerror or err}"), []
    if not any(e.name == RUN_FILE for e in entries):
        return Damage(run_id, RUN_FILE, "missing"), entries
    for e in sorted(entries, key=lambda e: (e.name != RUN_FILE, e.name)):
        if checked is not None and e.name != RUN_FILE and not checked(e.name):
            continue
        if deep is None:
            problem = tail_problem(e.path)
        else:
            problem = footer_problem(e.path, deep=deep)
        if problem is not None:
            return Damage(run_id, e.name, problem), entries
    return None, entries


def run_dirs(runs_dir: str | os.PathLike) -> list[tuple[str, str]]:
    """(run_id, path) of every run directory under runs_dir, sorted by run id; none if it
    does not exist (a store not made yet). A runs/ that cannot be listed (a symbolic link
    loop, not a directory, no permission, an I/O error) raises TracekitError: every reader
    would otherwise answer as if the store were empty."""
    try:
        with os.scandir(os.fspath(runs_dir)) as runs:
            found = [(r.name[len(RUN_PREFIX):], r.path) for r in runs if r.name.startswith(RUN_PREFIX) and r.is_dir()]
    except FileNotFoundError:
        if os.path.islink(runs_dir):
            raise TracekitError(f"{shown(runs_dir)}: the store's runs directory is a symbolic link to nothing") from None
        return []
    except OSError as e:
        what = "a symbolic link loop" if e.errno == errno.ELOOP else (e.strerror or str(e)).lower()
        raise TracekitError(f"{shown(runs_dir)}: cannot list the store's runs: {what}") from None
    return sorted(found)


def scan_runs(runs_dir: str | os.PathLike, deep: bool | None = None) -> Scan:
    """Walk runs/ once: the files of the whole runs and the damaged runs (see check_run)."""
    scan = Scan()
    for run_id, path in run_dirs(runs_dir):
        damage, entries = check_run(path, run_id, deep)
        if damage is not None:
            scan.damaged.append(damage)
            continue
        scan.run_ids.append(run_id)
        for e in entries:
            table = "runs" if e.name == RUN_FILE else e.name.rsplit("-", 1)[0]
            scan.files.setdefault(table, []).append(e.path)
    for paths in scan.files.values():
        paths.sort()
    return scan
