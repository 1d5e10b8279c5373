"""Ingest: trace files in, runs in the store out.

For each file: open it (any compression), detect its kind, stream it chunk by chunk through
the kind's parser into Parquet files in a staging directory, then name the run by the
content hash and move it into the store in one rename. A bad line stops the file with its
line number (or is counted and skipped with `skip_bad_lines`); nothing of a failed file
reaches the store. Callers get one IngestResult per file.

Bad lines include lines whose time is negative, not finite, or earlier than an earlier
line's by more than the format's rounding of printed times (ns-2 writes every trace in
time order, see TraceFormat.time_tolerance). A simulation (its `sim_id` label) has at most
one run of each trace kind: a second, different trace of it (a cut-off copy) is refused,
so that replications count simulations, not copies.
"""
from __future__ import annotations

import glob as globmod
import hashlib
import math
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from tracekit import __version__
from tracekit.formats.detect import detect_kind
from tracekit.ingest.facts import SMALL_RUN_BYTES, has_facts, materialise_committed, materialise_run, staged_bytes
from tracekit.core.errors import StoreWriteError, TraceLineError, TracekitError, UnsupportedTraceError, clip, shown
from tracekit.formats.parsers import FORMATS, Frame, TraceFormat, arrow_strings, as_polars, binary_line, get_parser, lines_at
from tracekit.core.startup import polars as pl  # imported on first use (tracekit.core.startup)
from tracekit.store.schema import MAIN_TABLE, RUNS, SCHEMA_VERSION, TABLES
from tracekit.formats.sources import CHUNK_BYTES, TraceSource
from tracekit.store.store import Store, store_write_error
from tracekit.formats.tracemeta import labels_from_meta, parse_meta, seed_number

RUN_ID_LEN = 16
_US = timedelta(microseconds=1)

ProgressFn = Callable[[Path, int, int], None]   # (path, bytes done, bytes total) on disk


@dataclass
class IngestResult:
    path: Path
    status: str                      # added | duplicate | failed | skipped
    run_id: str | None = None
    kind: str | None = None
    n_events: int = 0
    n_skipped_lines: int = 0
    size_bytes: int = 0
    seconds: float = 0.0
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    facts_pending: bool = False      # committed without its stored facts, for the caller (facts_after)
    staged_bytes: int = 0            # its staged Parquet parts' size, when facts_pending


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[tuple[Path, bool]]:
    """Files named by PATH arguments: a file, a directory (recursive) or a glob pattern.
    The flag says whether the file was named explicitly (then an unknown format is an error;
    files found by walking or globbing that are not traces are skipped)."""
    out: list[tuple[Path, bool]] = []
    seen: set[Path] = set()

    def add(p: Path, explicit: bool) -> None:
        rp = Path(os.path.realpath(p))       # not Path.resolve: it raises on a symlink loop
        if rp not in seen:
            seen.add(rp)
            out.append((p, explicit))

    for raw in paths:
        s = str(raw)
        p = Path(s)
        if p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(p).parts):
                    add(f, False)
        elif p.exists() or not any(ch in s for ch in "*?["):
            add(p, True)                      # a missing file is reported by ingest_file
        else:
            matches = sorted(globmod.glob(s, recursive=True))
            files = [Path(m) for m in matches if Path(m).is_file()]
            if not files:
                raise TracekitError(f"{shown(s)}: no files match this pattern")
            for f in files:
                add(f, False)
    return out


def _polars_schema(schema: pa.Schema) -> pl.Schema:
    # not schema.empty_table(): that imports pandas
    return pl.DataFrame(pa.Table.from_batches([], schema=schema)).schema


_PL_SCHEMA_CACHE: dict[str, pl.Schema] = {}


def _pl_schema(table: str) -> pl.Schema:
    """The polars schema of a stored table (made on first use: it imports polars)."""
    if table not in _PL_SCHEMA_CACHE:
        _PL_SCHEMA_CACHE[table] = _polars_schema(TABLES[table])
    return _PL_SCHEMA_CACHE[table]


def _record_table(record: dict) -> pa.Table:
    """A run record as a one-row table of schema RUNS, built from Arrow buffers: pyarrow's
    pa.array and from_pylist import pandas, the wired fast path needs no polars otherwise, and
    Table.cast imports pyarrow.compute."""
    return pa.Table.from_arrays([_arrow_array(f.type, [record[f.name]]) for f in RUNS], schema=RUNS)


def _arrow_array(typ: pa.DataType, values: list) -> pa.Array:
    """`values` (None for null) as an Arrow array of type `typ`: the types of RUNS (strings,
    int32/int64, double, timestamp[us], lists of structs of those)."""
    import struct

    n = len(values)
    nulls = sum(v is None for v in values)
    validity = None
    if nulls:
        bits = bytearray((n + 7) // 8)
        for i, v in enumerate(values):
            if v is not None:
                bits[i >> 3] |= 1 << (i & 7)
        validity = pa.py_buffer(bytes(bits))
    if pa.types.is_string(typ):
        return arrow_strings([v or "" for v in values], validity, nulls)
    if pa.types.is_list(typ):
        offsets = [0]
        for v in values:
            offsets.append(offsets[-1] + len(v or []))
        items = [x for v in values for x in (v or [])]
        st = typ.value_type
        child = pa.StructArray.from_arrays([_arrow_array(st.field(k).type, [x[st.field(k).name] for x in items])
                                            for k in range(st.num_fields)], fields=list(st))
        return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(struct.pack(f"<{n + 1}i", *offsets))],
                                     null_count=nulls, children=[child])
    if pa.types.is_timestamp(typ):
        assert typ.unit == "us"
        epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
        values = [None if v is None else (v - epoch) // _US for v in values]
    code = {pa.int32(): "i", pa.int64(): "q", pa.float64(): "d"}.get(typ, "q")
    packed = struct.pack(f"<{n}{code}", *[0 if v is None else v for v in values])
    return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(packed)], null_count=nulls)


class _Writers:
    """Writes each chunk's rows as one Parquet part (`<table>-00000.parquet`, ...) on
    background threads, so that writing overlaps parsing the next chunk, and two parts are
    written at once (a Parquet writer uses one core per file). At most MAX_PENDING chunks
    wait to be written, which bounds memory. A frame may lack columns of its table's schema:
    they are stored as nulls.

    Given `main`, the rows of a table other than it (a wireless trace's node movements, energy, log
    lines: a few rows a chunk, or none) are held until SMALL_ROWS of them are, and written as
    one part then or at close(): a part costs its columns' encoders, its footer and a file
    however few its rows."""

    MAX_PENDING = 3
    THREADS = 2
    SMALL_ROWS = 65_536

    def __init__(self, directory: Path, inline: bool = False, main: str | None = None):
        from concurrent.futures import ThreadPoolExecutor

        self.directory = directory
        self.pool = _Inline() if inline else ThreadPoolExecutor(max_workers=self.THREADS, thread_name_prefix="tracekit-write")
        self.pending: list = []
        self.parts: dict[str, int] = {}
        self.rows: dict[str, int] = {}
        self.main = main
        self.held: dict[str, list[Frame]] = {}     # a table's frames not written yet (not main's)

    def write(self, table: str, frame: Frame) -> None:
        height = _height(frame)
        if height == 0:
            return
        self.rows[table] = self.rows.get(table, 0) + height
        if self.main is not None and table != self.main:
            held = self.held.setdefault(table, [])
            held.append(frame)
            if sum(map(_height, held)) >= self.SMALL_ROWS:
                self._flush(table)
            return
        self._submit(table, frame)

    def _flush(self, table: str) -> None:
        frames = self.held.pop(table, [])
        if frames:
            self._submit(table, frames[0] if len(frames) == 1 else frames)

    def _submit(self, table: str, frame: Frame | list[Frame]) -> None:
        k = self.parts.get(table, 0)
        self.parts[table] = k + 1
        path = self.directory / f"{table}-{k:05d}.parquet"
        _stored_schema(table)            # made once, here, not by two writer threads at once
        # conformed to the schema on the writer thread too: the casts of a wireless chunk's
        # many columns are no small part of the work
        self.pending.append(self.pool.submit(_store_part, frame, table, path))
        while len(self.pending) > self.MAX_PENDING:
            self.pending.pop(0).result()

    def close(self) -> None:
        try:
            for table in list(self.held):
                self._flush(table)
            for f in self.pending:
                f.result()
        finally:
            self.held = {}
            self.pending = []
            self.pool.shutdown(wait=True)


def _height(frame: Frame) -> int:
    return frame.num_rows if isinstance(frame, pa.Table) else frame.height


def _times(frame: Frame):
    """The `time` column of a parser's frame as a numpy array (no copy)."""
    return _numpy(frame, "time")


def _numpy(frame: Frame, name: str):
    """A column without nulls of a parser's frame as a numpy array, without a copy. An Arrow
    column's buffer is taken as it is: pyarrow's own to_numpy imports pandas."""
    import numpy as np

    if isinstance(frame, pa.Table):
        col = frame.column(name)
        if col.num_chunks == 1 and col.null_count == 0 and col.type in (pa.float64(), pa.int64()):
            a = col.chunk(0)
            return np.frombuffer(a.buffers()[1], dtype=np.float64 if a.type == pa.float64() else np.int64,
                                 count=len(a), offset=a.offset * 8)
        frame = as_polars(frame)
    return frame[name].to_numpy()


_STORED: dict[str, pa.Schema] = {}
# the field metadata polars gives a Categorical column (it reads such a column back as one)
_CATEGORICAL = {b"_PL_CATEGORICAL2": b"0;0;u32;"}


def _stored_schema(table: str) -> pa.Schema:
    """The Arrow schema of `table`'s parts as readers have always found it: the one polars'
    write_parquet gave them (dictionary columns as dictionary<uint32, string> marked as
    polars categoricals, strings as large_string), so that pyarrow writes parts that read
    back exactly as before (tests/test_stored_parts.py compares them with polars' parts)."""
    if table not in _STORED:
        fields = []
        for f in TABLES[table]:
            if pa.types.is_dictionary(f.type):
                fields.append(pa.field(f.name, pa.dictionary(pa.uint32(), pa.string()), metadata=_CATEGORICAL))
            elif pa.types.is_string(f.type):
                fields.append(pa.field(f.name, pa.large_string()))
            elif pa.types.is_primitive(f.type):
                fields.append(pa.field(f.name, f.type))
            else:             # other types (lists): as polars writes them
                import io

                buf = io.BytesIO()
                pl.DataFrame(schema=_pl_schema(table)).write_parquet(buf)
                buf.seek(0)
                _STORED[table] = pq.read_schema(buf).remove_metadata()
                return _STORED[table]
        _STORED[table] = pa.schema(fields)
    return _STORED[table]


def _store_part(frame: Frame | list[Frame], table: str, path: Path) -> None:
    """`frame` (or several, one after the other) with its table's columns, in order, of their
    stored types (a column the parser does not give is stored as nulls), written to `path`."""
    if isinstance(frame, list):
        stored = pa.concat_tables([_conform(f, table) for f in frame])
    else:
        stored = _conform(frame, table)
    _write_part(stored, path)


def _conform(frame: Frame, table: str) -> pa.Table:
    """A parser's frame as the stored part's table: the table's columns in order, of their
    stored types (a column the parser does not give: nulls)."""
    schema = _stored_schema(table)
    if not isinstance(frame, pa.Table):       # a polars frame
        pl_schema = _pl_schema(table)
        missing = [pl.lit(None, dtype=dtype).alias(name) for name, dtype in pl_schema.items() if name not in frame.columns]
        if missing:
            frame = frame.with_columns(missing)
        frame = frame.cast(pl_schema).select(list(pl_schema)).to_arrow()  # type: ignore[arg-type]
    elif frame.schema.names != schema.names:
        frame = pa.Table.from_arrays([frame.column(f.name) if f.name in frame.schema.names else pa.nulls(frame.num_rows, f.type)
                                      for f in schema], schema=schema)
    if frame.schema.types == schema.types:
        # the wired fast path's tables: the stored field metadata put on, without a copy (and
        # without Table.cast, which imports pyarrow.compute)
        return pa.Table.from_arrays(frame.columns, schema=schema)
    return frame.cast(schema)    # polars' dictionaries of large strings to the stored ones of strings


# the columns with min/max statistics in the parts (_write_options)
GROWING = frozenset({"line_no", "time", "pkt_id"})


def _write_options(schema: pa.Schema) -> dict:
    """How pyarrow writes a part of `schema`, the cheapest settings to write that keep parts
    small (each setting's measurement: docs/performance.md, "Writing the parts"):
    dictionary encoding for strings, DELTA_BINARY_PACKED for integers, doubles plain, LZ4 on
    every column (the stored facts stay zstd), min/max statistics only on the columns that
    grow through a trace (GROWING: only there can a filter skip parts), and a CRC32 in every
    page header, which `tracekit verify --deep` checks (DuckDB does not)."""
    dict_cols, encodings, stats = [], {}, []
    for f in schema:
        t = f.type
        if pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
            dict_cols.append(f.name)
        elif pa.types.is_int64(t) or pa.types.is_int32(t):
            encodings[f.name] = "DELTA_BINARY_PACKED"
        if f.name in GROWING and (pa.types.is_integer(t) or pa.types.is_floating(t)):
            stats.append(f.name)
    return {"compression": "lz4", "use_dictionary": dict_cols,
            "column_encoding": encodings, "write_statistics": stats, "write_page_checksum": True}


_OPTIONS: dict[pa.Schema, dict] = {}


def _write_part(frame: pa.Table, path: Path) -> None:
    opts = _OPTIONS.get(frame.schema)
    if opts is None:
        opts = _OPTIONS[frame.schema] = _write_options(frame.schema)
    try:
        _write_table(frame, path, **opts)
    except (OSError, pa.ArrowException) as e:
        raise _as_os_error(e) from None


# a table at most this big is written to memory first, then to its file in one write
BUFFERED_BYTES = 16 << 20


def _write_table(table: pa.Table, path: Path, **opts) -> None:
    """pq.write_table, the same bytes: a small table through a buffer and one write(2) (Arrow's
    own file output costs ~0.1 ms more a file, a few a run: issue 38's small traces)."""
    if table.nbytes > BUFFERED_BYTES:
        pq.write_table(table, path, **opts)
        return
    buf = pa.BufferOutputStream()
    pq.write_table(table, buf, **opts)
    with open(path, "wb") as f:
        f.write(buf.getvalue())


def _as_os_error(e: BaseException) -> OSError:
    """polars reports a failed write as ComputeError('... (os error 28)'): the OSError in it."""
    if isinstance(e, OSError):
        return e
    m = re.search(r"os error (\d+)", str(e))
    if m:
        return OSError(int(m.group(1)), os.strerror(int(m.group(1))))
    return OSError(0, str(e).splitlines()[0][:200] if str(e) else type(e).__name__)


class _Inline:
    """In place of a thread pool for a file of one chunk (a sweep's short traces: starting
    threads and handing work over cost more than its parse): a call runs when submitted."""

    def submit(self, fn, *args):
        from concurrent.futures import Future

        fut: Future = Future()
        try:
            fut.set_result(fn(*args))
        except Exception as e:      # raised by result(), as from a pool
            fut.set_exception(e)
        return fut

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        pass


class _Prefetch:
    """Run an iterator on a thread, `depth` items ahead: reading, decompressing, hashing and
    splitting the next chunk overlap the parse of this one (file reads, zlib and sha256
    release the GIL). `inline`: no thread, the iterator as it is (a file of one chunk)."""

    def __init__(self, it, depth: int = 2, inline: bool = False):
        import queue
        import threading

        self.q: queue.Queue = queue.Queue(maxsize=depth)
        self.stop = threading.Event()
        self.done = object()
        self.it = it
        self.thread: threading.Thread | None = None
        if not inline:
            self.thread = threading.Thread(target=self._pump, name="tracekit-read", daemon=True)
            self.thread.start()

    def _put(self, item) -> bool:
        import queue

        while not self.stop.is_set():
            try:
                self.q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def _pump(self) -> None:
        try:
            for item in self.it:
                if not self._put(item):
                    return
            self._put(self.done)
        except BaseException as e:  # handed to the consumer
            self._put(e)

    def __iter__(self):
        if self.thread is None:
            yield from self.it
            return
        while True:
            item = self.q.get()
            if item is self.done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item

    def close(self, timeout_s: float = 2.0) -> bool:
        """Stop the reading thread; False if it is still blocked in a read after
        `timeout_s` (a pipe nobody writes to): then the file must not be closed under it,
        and the thread, a daemon, ends with the process."""
        self.stop.set()
        if self.thread is None:
            return True
        self.thread.join(timeout_s)
        return not self.thread.is_alive()


class _Parses:
    """Chunks parsed on THREADS threads as they are read: the read-ahead thread submits each
    chunk here and hands on (chunk, future); ingest takes the results in file order. polars
    and the C fast path release the GIL, so chunks parse on both cores (the parsers keep no
    state between chunks), and a chunk's result never waits for a later chunk to be read
    (a pipe may hold the next one back)."""

    THREADS = 2

    def __init__(self, parser, inline: bool = False):
        from concurrent.futures import ThreadPoolExecutor

        self.parser = parser
        self.pool = _Inline() if inline else ThreadPoolExecutor(max_workers=self.THREADS, thread_name_prefix="tracekit-parse")

    def submit(self, chunks):
        for chunk in chunks:
            yield chunk, self.pool.submit(self.parser.parse_chunk, chunk.data, chunk.first_line_no)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _relabel(store: Store, run_id: str, labels: dict[str, str], flow_labels: dict[int, str]) -> list[str]:
    """Merge labels given on the command line into an existing run's record (a re-ingest
    with new --label/--flow-label). Read, merge and replace happen under the run's label
    claim, which holds across the machines sharing the store (flock may not: NFS with
    local_lock, Lustre, BeeGFS), so concurrent re-labels of one run all land; the record is
    replaced by one rename."""
    if not labels and not flow_labels:
        return []
    f = store.run_dir(run_id) / "run.parquet"
    with store.claim(f"labels-{run_id}"):
        rec = pq.read_table(f).to_pylist()[0]
        old = {d["key"]: d["value"] for d in rec["labels"]}
        old_flows = {d["fid"]: d["name"] for d in rec["flow_labels"]}
        changed = [f"{k}={v}" for k, v in labels.items() if old.get(k) != v]
        changed += [f"flow {k}={v}" for k, v in flow_labels.items() if old_flows.get(k) != v]
        if not changed:
            return []
        new = {**old, **labels}
        rec["labels"] = [{"key": k, "value": v} for k, v in sorted(new.items())]
        rec["flow_labels"] = [{"fid": k, "name": v} for k, v in sorted({**old_flows, **flow_labels}.items())]
        if "scenario" in labels:
            rec["scenario"] = labels["scenario"]
        if "seed" in labels:
            rec["seed"] = seed_number(labels["seed"])
        # pid and a random part: pids repeat across PID namespaces sharing a store
        tmp = f.with_name(f".run.parquet.{os.getpid()}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            pq.write_table(pa.Table.from_pylist([rec], schema=RUNS), tmp)
            os.replace(tmp, f)
            store.mark_changed(run_id)      # a compacted copy of the record is now stale
        except OSError as e:
            tmp.unlink(missing_ok=True)
            raise store_write_error(store.root, e) from None
    return changed


def sim_claim_name(sim_id: str) -> str:
    """The name of simulation `sim_id`'s claim (Store.claim), under which its runs are
    checked and committed (one run per simulation and trace kind)."""
    return f"sim-{hashlib.sha256(sim_id.encode()).hexdigest()[:16]}"


def _runs_of_sim(store: Store, sim_id: str, kind: str) -> list[tuple[str, int]]:
    """(run_id, n_events) of the runs of kind `kind` labelled sim_id=`sim_id`: a look-up in
    the store's index of simulations (Store.sim_runs: one file read and the run's record,
    whatever the number of runs), called under the simulation's claim."""
    return store.sim_runs(sim_id, kind)


class _TimeCheck:
    """The times of a trace's main-table rows, chunk after chunk: a row is bad if its time
    is negative or not finite, or earlier than the latest time before it by more than the
    format's rounding. A lone row far ahead of both its neighbours (1e308 among times
    near 5) is the bad one itself, not every row after it; that look-ahead works within a
    chunk (8 MiB), which is where such a row nearly always is."""

    def __init__(self, fmt: TraceFormat):
        self.fmt = fmt
        self.latest = -math.inf          # the latest accepted time so far

    def bad_rows(self, frame: Frame) -> list[tuple[int, str]]:
        """(line_no, reason) of the bad rows of `frame` (line order), in line order."""
        import numpy as np

        if _height(frame) == 0:
            return []
        t = _times(frame)
        # the usual case, in one pass: every time finite, >= 0 and in order
        tol0 = max(self.fmt.time_rounding_s, self.fmt.time_rounding_rel * abs(self.latest)) if self.latest > -math.inf else 0.0
        with np.errstate(invalid="ignore"):
            if (t[0] >= 0 and t[0] >= self.latest - tol0 and np.isfinite(t[-1])
                    and (len(t) == 1 or np.diff(t).min() >= 0)):
                # non-decreasing with finite ends: no NaN or inf inside either (their diffs
                # are NaN or -inf); anything else takes the exact way below
                self.latest = max(self.latest, float(t.max()))
                return []
        lines = _numpy(frame, "line_no")
        bad: dict[int, str] = {}
        with np.errstate(invalid="ignore"):
            for i in np.flatnonzero(~np.isfinite(t)):
                bad[int(i)] = f"time {float(t[i])!r} is not a finite number"
            for i in np.flatnonzero(np.isfinite(t) & (t < 0)):
                bad[int(i)] = f"time {float(t[i])!r} is negative (simulation time starts at 0)"
        cand = np.flatnonzero(np.isfinite(t) & (t >= 0))
        tc = t[cand]
        tol_rel, tol_abs = self.fmt.time_rounding_rel, self.fmt.time_rounding_s

        def before(values):           # the latest time before each candidate
            return np.maximum.accumulate(np.concatenate(([self.latest], values[:-1])))

        m = before(tc)
        tol = np.maximum(tol_abs, tol_rel * np.abs(m))
        # a row ahead of the next by more than the rounding, while the next fits the rows
        # before it: this row is out of place, not the next
        ahead = np.zeros(len(tc), dtype=bool)
        if len(tc) > 1:
            nxt = tc[1:]
            ahead[:-1] = (tc[:-1] > nxt + np.maximum(tol_abs, tol_rel * np.abs(tc[:-1]))) & (nxt >= m[:-1] - tol[:-1])
        for i in np.flatnonzero(ahead):
            bad[int(cand[i])] = (f"time {float(tc[i])!r} is later than the next line's ({float(tc[i + 1])!r}); "
                            f"{self.fmt.description} is written in time order")
        keep = cand[~ahead]
        tk = t[keep]
        m = before(tk)
        back = tk < m - np.maximum(tol_abs, tol_rel * np.abs(m))
        for j in np.flatnonzero(back):
            bad[int(keep[j])] = (f"time {float(tk[j])!r} is earlier than {float(m[j])!r} on an earlier line; "
                                 f"{self.fmt.description} is written in time order")
        good = tk[~back]
        if len(good):
            self.latest = max(self.latest, float(good.max()))
        return [(int(lines[k]), bad[k]) for k in sorted(bad)]


class _TraceCopy:
    """A zstd copy of the trace, written as it streams by (level 1: on ns-2 traces it costs
    less CPU than the default level 3 for about the same size)."""

    def __init__(self, path: Path):
        import zstandard

        self.f = open(path, "wb")
        self.w = zstandard.ZstdCompressor(level=1).stream_writer(self.f, closefd=False)

    def write(self, data: bytes) -> None:
        if data:
            self.w.write(data)

    def close(self) -> None:
        if not self.f.closed:
            self.w.close()
            self.f.close()


def _regular_size(path: Path) -> float:
    """The size of a regular file; infinite for anything else (a pipe: its size says nothing)."""
    import stat

    try:
        st = os.stat(path)
    except OSError:
        return math.inf
    return st.st_size if stat.S_ISREG(st.st_mode) else math.inf


def ingest_file(
    store: Store,
    path: str | os.PathLike,
    labels: dict[str, str] | None = None,
    flow_labels: dict[int, str] | None = None,
    skip_bad_lines: bool = False,
    progress: ProgressFn | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    keep_trace: bool = False,
    source_name: str | None = None,
    facts: bool = True,
    staging_within: Path | None = None,
    facts_after: bool = False,
) -> IngestResult:
    """Ingest one trace file. Raises TracekitError (one line) on anything the user must fix;
    the store is then unchanged. With keep_trace, the trace itself is kept in the run's
    directory as `trace.zst` (zstd; the decompressed content whatever the input was).
    source_name replaces the file's path in the run record (for files in temporary places).
    Without `facts`, the run is committed without its stored facts, for the caller to add
    (materialise.materialise_committed: a sweep, several runs at once). `staging_within`: a
    staging directory the caller holds, in which the run is staged (Store.new_staging).
    With `facts_after`, a small run's facts (staged parts of at most SMALL_RUN_BYTES) are left
    to the caller as without `facts` (result.facts_pending); a bigger run's are computed here."""
    t0 = time.perf_counter()
    path = Path(path)
    src = TraceSource.open(path)
    try:
        sample = src.peek()
        if not sample and src.truncated_stream:   # else detect_kind would call it empty
            raise TracekitError(f"{shown(path)}: the {src.compression} stream is cut off before its first complete block; nothing to ingest")
        kind = detect_kind(sample, str(path))
    except BaseException:
        src.close()
        raise
    parser = get_parser(kind)
    main = MAIN_TABLE[kind]
    event_tables = (main, *FORMATS[kind].also_event_tables)     # n_events, t_start, t_end
    times = _TimeCheck(FORMATS[kind])
    result = IngestResult(path=path, status="added", kind=kind)
    try:
        staging = store.new_staging(within=staging_within)
    except BaseException:
        src.close()
        raise
    # a plain file of one chunk is read, parsed and written here, without the threads
    one_chunk = src.compression == "none" and _regular_size(path) <= chunk_bytes
    keep: _TraceCopy | None = None
    try:
        writers = _Writers(staging, inline=one_chunk, main=main)
        parses = _Parses(parser, inline=one_chunk)
        chunks = _Prefetch(parses.submit(src.chunks(chunk_bytes)), inline=one_chunk)
    except BaseException:       # an import short of descriptors, a thread that cannot start
        src.close()             # first: removing the staging directory takes a descriptor
        store.discard(staging)
        raise
    # every way out of here (an error, Ctrl-C, SIGTERM, a full disk) removes the staging
    # directory: commit has renamed it away, or it goes in the finally below
    try:
        comments: list[tuple[int, str]] = []
        t_min, t_max = float("inf"), float("-inf")
        first_bad: tuple[int, str] | None = None
        raw_total = src.raw_size
        if keep_trace:
            keep = _TraceCopy(staging / "trace.zst")
        for chunk, parse in chunks:
            if keep:
                keep.write(chunk.data)
            res = parse.result()
            bad: list[tuple[int, str]] = []             # (line number, reason)
            if res.bad_offsets:
                off = res.bad_offsets[0]
                line = lines_at(chunk.data, [off])[off]
                # lines_at shows undecodable bytes as U+FFFD; the parsers read such lines as bad
                reason = binary_line(line) or parser.explain(line)
                bad.append((chunk.first_line_no + off, reason))
            bad_times = times.bad_rows(res.tables[main]) if main in res.tables else []
            if bad_times:
                bad = sorted(bad + bad_times[:1])
                drop = [ln for ln, _ in bad_times]
                res.tables = {name: as_polars(frame).filter(~pl.col("line_no").is_in(drop)) for name, frame in res.tables.items()}
            if bad:
                line_no, reason = bad[0]
                if not skip_bad_lines:
                    off = line_no - chunk.first_line_no
                    raise TraceLineError(str(path), line_no, reason, lines_at(chunk.data, [off])[off])
                if first_bad is None:
                    first_bad = (line_no, reason)
                result.n_skipped_lines += res.bad_count + len(bad_times)
            if len(comments) < 100:
                comments.extend(res.comments)
            for table, frame in res.tables.items():
                writers.write(table, frame)
                if table in event_tables and _height(frame):
                    t = _times(frame)
                    t_min, t_max = min(t_min, float(t.min())), max(t_max, float(t.max()))
            if progress:
                progress(path, src.raw_position(), raw_total)
        writers.close()
        result.warnings.extend(parser.finish(staging))
        if keep:
            keep.write(src.tail)
            keep.close()
        if first_bad:
            result.warnings.append(
                f"{shown(path)}: skipped {result.n_skipped_lines} bad line(s); first at line {first_bad[0]}: {first_bad[1]}"
            )
        if src.tail:
            result.n_skipped_lines += 1
            result.warnings.append(
                f"{shown(path)}:{src.n_lines + 1}: last line has no newline (trace cut off mid-write?); ignored"
            )
        if src.truncated_stream:
            result.warnings.append(f"{shown(path)}: the {src.compression} stream ends early (file cut off?); ingested what was there")
        result.n_events = sum(writers.rows.get(t, 0) for t in event_tables)
        if result.n_events == 0:
            raise TracekitError(f"{shown(path)}: no complete {kind} trace lines")
        run_id = src.sha256[:RUN_ID_LEN]
        meta_labels, meta_flows = labels_from_meta(parse_meta(comments))
        all_labels = {**meta_labels, **(labels or {})}
        all_flows = {**meta_flows, **(flow_labels or {})}
        seed = all_labels.get("seed")
        record = {
            "source": source_name or str(path.resolve()),
            "sha256": src.sha256,
            "trace_kind": kind,
            "compression": src.compression,
            "size_bytes": src.size_bytes,
            "n_lines": src.n_lines + (1 if src.tail else 0),
            "n_events": result.n_events,
            "n_skipped_lines": result.n_skipped_lines,
            "t_start": t_min,
            "t_end": t_max,
            "scenario": all_labels.get("scenario"),
            "seed": seed_number(seed),
            "labels": [{"key": k, "value": v} for k, v in sorted(all_labels.items())],
            "flow_labels": [{"fid": f, "name": n} for f, n in sorted(all_flows.items())],
            "ingested_at": datetime.now(timezone.utc),
            "tracekit_version": __version__,
            "schema_version": SCHEMA_VERSION,
        }
        _write_table(_record_table(record), staging / "run.parquet")
        if facts and has_facts(kind):
            size = staged_bytes(staging) if facts_after else None
            if size is not None and size <= SMALL_RUN_BYTES:
                # several small runs' facts cost one query per fact table afterwards (its planning
                # is most of a small run's cost): materialise_committed, as a sweep does
                result.facts_pending, result.staged_bytes = True, size
            else:
                materialise_run(store, staging, run_id, kind)      # the run's flow and packet facts, for the views
        result.run_id = run_id
        result.size_bytes = src.size_bytes
        sim_id = all_labels.get("sim_id")
        if sim_id is not None:
            # one run per (simulation, trace kind); the claim makes check-and-commit one step,
            # also between machines sharing the store (Store.claim: link(2), not flock alone)
            with store.claim(sim_claim_name(sim_id)):
                others = [(r, n) for r, n in _runs_of_sim(store, sim_id, kind) if r != run_id]
                if others:
                    other, n_other = others[0]
                    raise TracekitError(
                        f"{shown(path)}: simulation sim_id={clip(sim_id)} already has a {kind} run in the store, run {other} "
                        f"({n_other:,} rows; this trace has {result.n_events:,}): a different trace of one simulation "
                        "(a cut-off or re-run copy?) would count twice as a replication; remove one "
                        f"(tracekit rm {other}), or ingest this one with another --label sim_id=..."
                    )
                # in the index before the commit (an entry whose run is not there does not count;
                # a run without its entry would): added, or already there (relabelled below)
                store.note_sim_run(sim_id, kind, run_id)
                added = store.commit(staging, run_id)
        else:
            added = store.commit(staging, run_id)
        if not added:
            result.status = "duplicate"
            result.message = f"{shown(path)}: already in the store as run {run_id} (same content)"
            changed = _relabel(store, run_id, labels or {}, flow_labels or {})
            if changed:
                result.message += f"; labels updated: {', '.join(changed)}"
    except StoreWriteError as e:
        raise StoreWriteError(f"{shown(path)}: not ingested: {e}") from None
    except OSError as e:
        # the input's read errors are TracekitErrors already (sources.py): this is the store
        raise StoreWriteError(f"{shown(path)}: not ingested: {store_write_error(store.root, _as_os_error(e))}") from None
    finally:
        reader_stopped = chunks.close()     # the read-ahead thread stops before the file is closed
        parses.close()
        try:
            writers.close()
        except Exception:
            pass                # an error of its own is already on its way out
        if keep:
            try:
                keep.close()
            except Exception:
                pass
        store.discard(staging)
        if reader_stopped:
            src.close()
    result.seconds = time.perf_counter() - t0
    return result


def ingest_paths(
    data_dir: str | os.PathLike,
    paths: Iterable[str | os.PathLike],
    labels: dict[str, str] | None = None,
    flow_labels: dict[int, str] | None = None,
    skip_bad_lines: bool = False,
    progress: ProgressFn | None = None,
    on_result: Callable[[IngestResult], None] | None = None,
) -> list[IngestResult]:
    """Ingest every file PATHs name. A failure in one file is recorded in its result
    (status 'failed') and the others go on; see `ingest_file` for a single file. Of several
    files, the small packet runs are committed first and their stored facts written a batch
    at a time (FACTS_BATCH), as a sweep's are: an ingest killed in between leaves runs whose
    facts the views compute from their events (the same rows), stored by the next ingest of
    those files (materialise_run of a duplicate)."""
    files = expand_paths(paths)
    if not files:
        raise TracekitError("no files to ingest")
    store = Store(data_dir, create=True)
    # several files: each staged inside one staging directory held for the command (its lock
    # file made and removed once, not per file; Store.new_staging), as a sweep's runs are
    within = store.new_staging(tag="ingest") if len(files) > 1 else None
    pending: list[tuple[str, str]] = []         # small packet runs committed without their facts
    pending_bytes = 0
    results = []
    try:
        for f, explicit in files:
            try:
                # several files: the small runs' facts stored a batch at a time (_store_facts)
                r = ingest_file(store, f, labels, flow_labels, skip_bad_lines, progress, staging_within=within,
                                facts_after=within is not None)
            except UnsupportedTraceError as e:
                r = IngestResult(path=f, status="failed" if explicit else "skipped", message=str(e))
            except StoreWriteError:
                raise               # every later file would fail the same way
            except TracekitError as e:
                r = IngestResult(path=f, status="failed", message=str(e))
            results.append(r)
            if on_result:
                on_result(r)
            if r.facts_pending and r.run_id is not None and r.kind is not None:
                pending.append((r.run_id, r.kind))
                pending_bytes += r.staged_bytes
                if len(pending) >= FACTS_BATCH or pending_bytes >= FACTS_BATCH_BYTES:
                    _store_facts(store, pending, within)
                    pending, pending_bytes = [], 0
        if pending:
            _store_facts(store, pending, within)
    finally:
        if within is not None:
            store.discard(within)
    return results


# the most small runs whose stored facts one query per fact table computes (materialise_committed;
# a batch's fixed cost, ~100 ms, shared): twice a sweep's FACTS_CHUNK, and at most this much of
# their staged parts, so that the query's memory stays near that of a few runs of SMALL_RUN_BYTES
FACTS_BATCH = 128
FACTS_BATCH_BYTES = 4 * SMALL_RUN_BYTES


def _store_facts(store: Store, runs: list[tuple[str, str]], within: Path | None) -> None:
    """The stored facts of committed runs (ingest_paths): until they are there (an ingest
    killed meanwhile), the views compute the same rows from the runs' events."""
    try:
        materialise_committed(store, runs, staging_within=within)
    except OSError as e:
        raise StoreWriteError(f"the stored facts of {len(runs)} run(s) not written "
                              f"({store_write_error(store.root, _as_os_error(e))}); the views compute them from the events") from None
