"""Ingest: trace files in, runs in the store out.

For each file: open it (any compression), detect its kind, stream it chunk by chunk through
the kind's parser into Parquet files in a staging directory, then name the run by the
content hash and move it into the store in one rename. A bad line stops the file with its
line number (or is counted and skipped with `skip_bad_lines`); nothing of a failed file
reaches the store. Callers get one IngestResult per file.
"""
from __future__ import annotations

import glob as globmod
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from . import __version__
from .detect import detect_kind
from .errors import TraceLineError, TracekitError, UnsupportedTraceError
from .parsers import get_parser, lines_at
from .schema import MAIN_TABLE, RUNS, SCHEMA_VERSION, TABLES
from .sources import CHUNK_BYTES, TraceSource
from .store import Store
from .tracemeta import labels_from_meta, parse_meta

RUN_ID_LEN = 16

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


def expand_paths(paths: Iterable[str | os.PathLike]) -> list[tuple[Path, bool]]:
    """Files named by PATH arguments: a file, a directory (recursive) or a glob pattern.
    The flag says whether the file was named explicitly (then an unknown format is an error;
    files found by walking or globbing that are not traces are skipped)."""
    out: list[tuple[Path, bool]] = []
    seen: set[Path] = set()

    def add(p: Path, explicit: bool) -> None:
        rp = p.resolve()
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
                raise TracekitError(f"{s}: no files match this pattern")
            for f in files:
                add(f, False)
    return out


def _polars_schema(schema: pa.Schema) -> pl.Schema:
    return pl.DataFrame(schema.empty_table()).schema


_PL_SCHEMAS = {name: _polars_schema(s) for name, s in TABLES.items()}


class _Writers:
    """Writes each chunk's rows as one Parquet part (`<table>-00000.parquet`, ...) on a
    background thread, so that writing one chunk overlaps parsing the next. At most two
    chunks wait to be written, which bounds memory."""

    MAX_PENDING = 2

    def __init__(self, directory: Path):
        from concurrent.futures import ThreadPoolExecutor

        self.directory = directory
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tracekit-write")
        self.pending: list = []
        self.parts: dict[str, int] = {}
        self.rows: dict[str, int] = {}

    def write(self, table: str, frame: pl.DataFrame) -> None:
        if frame.height == 0:
            return
        frame = frame.cast(_PL_SCHEMAS[table]).select(list(_PL_SCHEMAS[table]))
        k = self.parts.get(table, 0)
        self.parts[table] = k + 1
        path = self.directory / f"{table}-{k:05d}.parquet"
        # zstd level 1: 13 % faster than the default level 3 on ns-2 traces, same size
        self.pending.append(self.pool.submit(frame.write_parquet, path, compression="zstd", compression_level=1))
        self.rows[table] = self.rows.get(table, 0) + frame.height
        while len(self.pending) > self.MAX_PENDING:
            self.pending.pop(0).result()

    def close(self) -> None:
        try:
            for f in self.pending:
                f.result()
        finally:
            self.pending = []
            self.pool.shutdown(wait=True)


def _prefetch(it, depth: int = 2):
    """Run an iterator on a thread, `depth` items ahead: reading, decompressing, hashing and
    splitting the next chunk overlap the parse of this one (file reads, zlib and sha256
    release the GIL)."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def pump():
        try:
            for item in it:
                if not put(item):
                    return
            put(done)
        except BaseException as e:  # handed to the consumer
            put(e)

    t = threading.Thread(target=pump, name="tracekit-read", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        t.join()


def _relabel(store: Store, run_id: str, labels: dict[str, str], flow_labels: dict[int, str]) -> list[str]:
    """Merge labels given on the command line into an existing run's record (a re-ingest
    with new --label/--flow-label). Atomic: the record is replaced by one rename."""
    if not labels and not flow_labels:
        return []
    f = store.run_dir(run_id) / "run.parquet"
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
        rec["seed"] = int(labels["seed"]) if labels["seed"].lstrip("-").isdigit() else None
    tmp = f.with_name(f".run.parquet.{os.getpid()}.tmp")
    pq.write_table(pa.Table.from_pylist([rec], schema=RUNS), tmp)
    os.replace(tmp, f)
    return changed


class _TraceCopy:
    """A zstd copy of the trace, written as it streams by."""

    def __init__(self, path: Path):
        import zstandard

        self.f = open(path, "wb")
        self.w = zstandard.ZstdCompressor(level=3).stream_writer(self.f, closefd=False)

    def write(self, data: bytes) -> None:
        if data:
            self.w.write(data)

    def close(self) -> None:
        if not self.f.closed:
            self.w.close()
            self.f.close()


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
) -> IngestResult:
    """Ingest one trace file. Raises TracekitError (one line) on anything the user must fix;
    the store is then unchanged. With keep_trace, the trace itself is kept in the run's
    directory as `trace.zst` (zstd; the decompressed content whatever the input was).
    source_name replaces the file's path in the run record (for files in temporary places)."""
    t0 = time.perf_counter()
    path = Path(path)
    src = TraceSource.open(path)
    try:
        sample = src.peek()
        if not sample and src.truncated_stream:   # else detect_kind would call it empty
            raise TracekitError(f"{path}: the {src.compression} stream is cut off before its first complete block; nothing to ingest")
        kind = detect_kind(sample, str(path))
    except BaseException:
        src.close()
        raise
    parser = get_parser(kind)
    main = MAIN_TABLE[kind]
    result = IngestResult(path=path, status="added", kind=kind)
    staging = store.new_staging()
    writers = _Writers(staging)
    comments: list[tuple[int, str]] = []
    t_min, t_max = float("inf"), float("-inf")
    first_bad: tuple[int, str] | None = None
    raw_total = src.raw_size
    keep = _TraceCopy(staging / "trace.zst") if keep_trace else None
    chunks = _prefetch(src.chunks(chunk_bytes))
    try:
        for chunk in chunks:
            if keep:
                keep.write(chunk.data)
            res = parser.parse_chunk(chunk.data, chunk.first_line_no)
            if res.bad_offsets:
                off = res.bad_offsets[0]
                line = lines_at(chunk.data, [off])[off]
                # lines_at shows undecodable bytes as U+FFFD; the parsers read such lines as bad
                reason = "not UTF-8 text (binary data in the trace?)" if "\ufffd" in line else parser.explain(line)
                if not skip_bad_lines:
                    raise TraceLineError(str(path), chunk.first_line_no + off, reason, line)
                if first_bad is None:
                    first_bad = (chunk.first_line_no + off, reason)
                result.n_skipped_lines += res.bad_count
            if len(comments) < 100:
                comments.extend(res.comments)
            for table, frame in res.tables.items():
                writers.write(table, frame)
                if table == main and frame.height:
                    t_min = min(t_min, float(frame["time"].min()))  # type: ignore[arg-type]
                    t_max = max(t_max, float(frame["time"].max()))  # type: ignore[arg-type]
            if progress:
                progress(path, src.raw_position(), raw_total)
        writers.close()
        if keep:
            keep.write(src.tail)
            keep.close()
        if first_bad:
            result.warnings.append(
                f"{path}: skipped {result.n_skipped_lines} bad line(s); first at line {first_bad[0]}: {first_bad[1]}"
            )
        if src.tail:
            result.n_skipped_lines += 1
            result.warnings.append(
                f"{path}:{src.n_lines + 1}: last line has no newline (trace cut off mid-write?); ignored"
            )
        if src.truncated_stream:
            result.warnings.append(f"{path}: the {src.compression} stream ends early (file cut off?); ingested what was there")
        result.n_events = writers.rows.get(main, 0)
        if result.n_events == 0:
            raise TracekitError(f"{path}: no complete {kind} trace lines")
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
            "seed": int(seed) if seed is not None and seed.lstrip("-").isdigit() else None,
            "labels": [{"key": k, "value": v} for k, v in sorted(all_labels.items())],
            "flow_labels": [{"fid": f, "name": n} for f, n in sorted(all_flows.items())],
            "ingested_at": datetime.now(timezone.utc),
            "tracekit_version": __version__,
            "schema_version": SCHEMA_VERSION,
        }
        pq.write_table(pa.Table.from_pylist([record], schema=RUNS), staging / "run.parquet")
        result.run_id = run_id
        result.size_bytes = src.size_bytes
        if not store.commit(staging, run_id):
            result.status = "duplicate"
            result.message = f"{path}: already in the store as run {run_id} (same content)"
            changed = _relabel(store, run_id, labels or {}, flow_labels or {})
            if changed:
                result.message += f"; labels updated: {', '.join(changed)}"
    except BaseException:
        chunks.close()          # stops the read-ahead thread before the file is closed
        writers.close()
        if keep:
            keep.close()
        store.discard(staging)
        src.close()
        raise
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
    (status 'failed') and the others go on; see `ingest_file` for a single file."""
    files = expand_paths(paths)
    if not files:
        raise TracekitError("no files to ingest")
    store = Store(data_dir, create=True)
    results = []
    for f, explicit in files:
        try:
            r = ingest_file(store, f, labels, flow_labels, skip_bad_lines, progress)
        except UnsupportedTraceError as e:
            r = IngestResult(path=f, status="failed" if explicit else "skipped", message=str(e))
        except TracekitError as e:
            r = IngestResult(path=f, status="failed", message=str(e))
        results.append(r)
        if on_result:
            on_result(r)
    return results
