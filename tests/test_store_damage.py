"""A store that degrades per run (issue 13, "store damage"): a real store made by a small
ns-2 sweep, then damaged as a disk, a crash or a careless hand would (a file cut short,
deleted, overwritten), and every command must go on over the other runs with one warning
line naming the damaged one; `tracekit verify` reports it and `tracekit rm` removes it.

Expected results come from the same store before the damage (the other runs' rows must be
exactly what they were) and from pyarrow reading the part files directly."""
from __future__ import annotations

import csv
import io
import math
import shutil
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tracekit.store.damage import tail_problem
from tracekit.store.store import Store

WARN = "tracekit: warning: run {} is damaged ({}: "
SWEEP = ("sweep", "varying-parameters", "--grid", "variant=Reno,Sack1", "--seeds", "1-2")


@pytest.fixture(scope="module")
def _sweep_store(tmp_path_factory, tracekit_cli) -> Path:
    if not shutil.which("ns") and not Path("/usr/bin/ns").exists():
        pytest.skip("ns-2 is not installed")
    d = tmp_path_factory.mktemp("damage") / "store"
    p = tracekit_cli(*SWEEP, "-j", "1", data=d, timeout=300)
    assert p.returncode == 0, p.stderr
    # the sweep compacted the store; these tests damage the files a store not compacted
    # reads (tests/test_compacted_reads.py damages a compacted one), so that copy goes
    assert (d / "compacted").is_dir()
    shutil.rmtree(d / "compacted")
    return d


@pytest.fixture
def store(_sweep_store, tmp_path) -> Path:
    d = tmp_path / "store"
    shutil.copytree(_sweep_store, d)
    return d


def _runs(d: Path) -> dict[str, str]:
    """run_id -> trace_kind, read from each run.parquet with pyarrow."""
    return {p.parent.name.split("=", 1)[1]: pq.read_table(p).column("trace_kind")[0].as_py()
            for p in sorted(d.glob("runs/run_id=*/run.parquet"))}


def _wired(d: Path) -> list[str]:
    return [r for r, k in _runs(d).items() if k == "wired"]


def _csv(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def _same_rows(got: list[dict], want: list[dict]) -> bool:
    """Equal rows, numbers to 1e-9 relative (a float sum's order varies between runs)."""
    def close(a: str, b: str) -> bool:
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9)
        except ValueError:
            return a == b
    return len(got) == len(want) and all(
        g.keys() == w.keys() and all(close(g[k], w[k]) for k in g) for g, w in zip(got, want))


def _one_warning(p: subprocess.CompletedProcess, run_id: str, file: str) -> None:
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(WARN.format(run_id, file)), lines[0]
    assert lines[0].endswith("skipped — tracekit verify / tracekit rm --damaged")
    assert "Traceback" not in p.stderr


def _truncate(f: Path, keep_bytes: int) -> None:
    with open(f, "r+b") as fh:
        fh.truncate(keep_bytes)


def test_the_fixture_store_is_whole(_sweep_store, tracekit_cli):
    assert len(_wired(_sweep_store)) == 4 and len(_runs(_sweep_store)) == 12
    p = tracekit_cli("verify", data=_sweep_store)
    assert p.returncode == 0 and p.stdout.strip() == "12 run(s) checked, 0 damaged", p.stdout + p.stderr


def test_tail_check_by_hand(tmp_path):
    """The cheap check on files built byte by byte: PAR1 + footer length + PAR1."""
    f = tmp_path / "x.parquet"
    f.write_bytes(b"PAR1" + b"\0" * 10 + (10).to_bytes(4, "little") + b"PAR1")   # 22 bytes, footer 10 fits
    assert tail_problem(f) is None
    f.write_bytes(b"PAR1" + b"\0" * 10 + (11).to_bytes(4, "little") + b"PAR1")   # 11 + 12 > 22
    assert "does not fit" in (tail_problem(f) or "")
    f.write_bytes(b"PAR1PAR1")
    assert "too short" in (tail_problem(f) or "")
    f.write_bytes(b"PAR1" + b"\0" * 20)
    assert "no Parquet footer" in (tail_problem(f) or "")


def test_truncated_run_parquet_skips_that_run_only(store, _sweep_store, tracekit_cli):
    bad = _wired(store)[0]
    f = store / "runs" / f"run_id={bad}" / "run.parquet"
    _truncate(f, f.stat().st_size // 2)

    before = _csv(tracekit_cli("runs", "-f", "csv", data=_sweep_store).stdout)
    p = tracekit_cli("runs", "-f", "csv", data=store)
    assert p.returncode == 0
    _one_warning(p, bad, "run.parquet")
    assert _csv(p.stdout) == [r for r in before if r["run_id"] != bad] and len(_csv(p.stdout)) == 11

    p = tracekit_cli("sql", "SELECT count(*) AS n FROM events", "-f", "csv", data=store)
    assert p.returncode == 0
    _one_warning(p, bad, "run.parquet")
    others = sum(pq.ParquetFile(e).metadata.num_rows for e in store.glob("runs/run_id=*/events-*.parquet")
                 if f"run_id={bad}" not in str(e))
    assert _csv(p.stdout) == [{"n": str(others)}]

    before = _csv(tracekit_cli("metrics", "-f", "csv", data=_sweep_store).stdout)
    p = tracekit_cli("metrics", "-f", "csv", data=store)
    assert p.returncode == 0, p.stderr
    _one_warning(p, bad, "run.parquet")
    assert _same_rows(_csv(p.stdout), [r for r in before if r["run_id"] != bad]) and _csv(p.stdout)

    p = tracekit_cli(*SWEEP, "--dry-run", data=store)
    assert p.returncode == 0
    _one_warning(p, bad, "run.parquet")
    assert p.stdout.startswith("4 simulations, 3 already in the store, 1 to run"), p.stdout
    assert Store(store).run_ids() == sorted(r for r in _runs(_sweep_store) if r != bad)


def test_deleted_run_parquet_hides_its_rows_and_reingest_replaces_it(store, tracekit_cli):
    bad = _wired(store)[1]
    run_dir = store / "runs" / f"run_id={bad}"
    (run_dir / "run.parquet").unlink()
    bad_rows = sum(pq.ParquetFile(e).metadata.num_rows for e in run_dir.glob("events-*.parquet"))
    assert bad_rows > 0

    p = tracekit_cli("sql", f"SELECT count(*) AS n FROM events WHERE run_id = '{bad}'", "-f", "csv", data=store)
    assert p.returncode == 0 and _csv(p.stdout) == [{"n": "0"}]
    _one_warning(p, bad, "run.parquet")
    assert bad not in Store(store).run_ids()

    # the run keeps its trace (sweeps keep them): ingesting it again is not "already in the store"
    trace = store.parent / "again.tr.zst"
    shutil.copy(run_dir / "trace.zst", trace)
    p = tracekit_cli("ingest", trace, data=store)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"added run {bad}:"), p.stdout
    assert "already in the store" not in p.stdout
    p = tracekit_cli("sql", f"SELECT count(*) AS n FROM events WHERE run_id = '{bad}'", "-f", "csv", data=store)
    assert p.returncode == 0 and p.stderr == "" and _csv(p.stdout) == [{"n": str(bad_rows)}]
    assert tracekit_cli("verify", data=store).returncode == 0
    assert list((store / ".staging").iterdir()) == []


def test_sweep_reruns_a_damaged_simulation(store, tracekit_cli):
    bad = _wired(store)[2]
    (store / "runs" / f"run_id={bad}" / "run.parquet").unlink()
    p = tracekit_cli(*SWEEP, "-j", "1", data=store, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "sweep: 1 ran, 3 already in the store, 0 failed" in p.stdout
    assert tracekit_cli("verify", data=store).returncode == 0
    assert bad in Store(store).run_ids()


def test_cut_events_part_skips_that_run(store, _sweep_store, tracekit_cli):
    bad = _wired(store)[3]
    part = sorted((store / "runs" / f"run_id={bad}").glob("events-*.parquet"))[-1]
    _truncate(part, part.stat().st_size - 100)
    before = _csv(tracekit_cli("metrics", "-f", "csv", data=_sweep_store).stdout)
    p = tracekit_cli("metrics", "-f", "csv", data=store)
    assert p.returncode == 0, p.stderr
    _one_warning(p, bad, part.name)
    assert _same_rows(_csv(p.stdout), [r for r in before if r["run_id"] != bad])
    p = tracekit_cli("sql", "SELECT count(DISTINCT run_id) AS n FROM events", "-f", "csv", data=store)
    assert p.returncode == 0 and _csv(p.stdout) == [{"n": "3"}]
    _one_warning(p, bad, part.name)


# the metrics read a run's stored packets (tracekit.ingest.facts), or its events when it has
# none (a run ingested before they were stored): a damaged part of either (the events' parts
# are LZ4, the packets' zstd: the first bytes of a page's compressed data, overwritten with
# 0xff, no longer decode in either)
@pytest.mark.parametrize("table", ["events", "packet_facts"])
def test_corrupt_data_page_is_one_line_and_verify_deep_names_it(store, tracekit_cli, table):
    """Bytes overwritten inside a part, its footer whole: no cheap check sees it. A page that
    no longer decodes (the first bytes of its compressed data) makes a query that reads it
    fail with one line, and verify --deep finds the run."""
    bad = _wired(store)[0]
    if table == "events":
        for p in (store / "runs" / f"run_id={bad}").glob("*_facts-*.parquet"):
            p.unlink()
    part = sorted((store / "runs" / f"run_id={bad}").glob(f"{table}-*.parquet"))[0]
    at, size = _first_page_data(part)
    assert size >= 4
    with open(part, "r+b") as fh:
        fh.seek(at)
        fh.write(b"\xff" * 4)
    p = tracekit_cli("metrics", "-f", "csv", data=store)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    assert len(p.stderr.splitlines()) == 1 and "tracekit verify --deep" in p.stderr, p.stderr
    assert tracekit_cli("verify", data=store).returncode == 0          # every footer is whole
    p = tracekit_cli("verify", "--deep", data=store)
    assert p.returncode == 1
    assert p.stdout.splitlines()[0].startswith(f"run {bad} is damaged ({part.name}: unreadable data page"), p.stdout
    p = tracekit_cli("rm", "--damaged", "--deep", "--yes", data=store)
    assert p.returncode == 0 and p.stdout.startswith(f"removed run {bad} (damaged: {part.name}"), p.stdout + p.stderr
    assert tracekit_cli("metrics", "-f", "csv", data=store).returncode == 0


def _first_page_data(part: Path) -> tuple[int, int]:
    """Where the compressed data of the part's first page starts, and its length: after the
    page header, a Thrift compact-protocol struct (PageHeader: field 3 is compressed_page_size),
    read here by a minimal reader of that protocol (the Parquet format's own definition)."""
    meta = pq.ParquetFile(part).metadata.row_group(0).column(0)
    start = meta.dictionary_page_offset or meta.data_page_offset
    buf = part.read_bytes()[start:start + 4096]
    pos = 0

    def varint() -> int:
        nonlocal pos
        v = shift = 0
        while True:
            b = buf[pos]
            pos += 1
            v |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return v

    def value(kind: int) -> int | None:
        nonlocal pos
        if kind in (1, 2):              # bool, in the field header itself
            return None
        if kind == 3:                   # byte
            pos += 1
            return None
        if kind in (4, 5, 6):           # i16, i32, i64: zigzag varints
            v = varint()
            return (v >> 1) ^ -(v & 1)
        if kind == 7:                   # double
            pos += 8
            return None
        if kind == 8:                   # binary
            pos += varint()
            return None
        if kind in (9, 10):             # list, set
            head = buf[pos]
            pos += 1
            n = head >> 4 if head >> 4 != 15 else varint()
            for _ in range(n):
                value(head & 0x0F)
            return None
        if kind == 12:                  # struct
            struct()
            return None
        raise AssertionError(f"Thrift type {kind} at {start + pos}")

    def struct() -> dict[int, int | None]:
        nonlocal pos
        fields, last = {}, 0
        while True:
            head = buf[pos]
            pos += 1
            if head == 0:               # stop
                return fields
            delta, kind = head >> 4, head & 0x0F
            last = last + delta if delta else value(4)      # type: ignore[operator]
            fields[last] = value(kind)

    header = struct()
    assert 0 < header[3] <= meta.total_compressed_size - pos       # type: ignore[operator]
    return start + pos, header[3]       # type: ignore[return-value]


def test_page_that_still_decodes_is_found_by_its_checksum(store, tracekit_cli):
    """Bytes overwritten inside an events part where they still decode (LZ4 and zstd keep
    incompressible bytes, such as doubles' mantissas, as they are, and DuckDB checks no page
    checksum): verify --deep finds the run by the CRC32 tracekit writes in every page."""
    bad = _wired(store)[1]
    part = sorted((store / "runs" / f"run_id={bad}").glob("events-*.parquet"))[0]
    meta = pq.ParquetFile(part).metadata
    col = next(meta.row_group(0).column(i) for i in range(meta.num_columns)
               if meta.row_group(0).column(i).path_in_schema == "time")
    start = col.dictionary_page_offset or col.data_page_offset
    with open(part, "r+b") as fh:                   # inside the time column's page
        fh.seek(start + col.total_compressed_size // 2)
        fh.write(b"\x55" * 32)
    assert tracekit_cli("verify", data=store).returncode == 0          # every footer is whole
    p = tracekit_cli("verify", "--deep", data=store)
    assert p.returncode == 1, p.stdout + p.stderr
    assert p.stdout.splitlines()[0].startswith(f"run {bad} is damaged ({part.name}: unreadable data page"), p.stdout


def test_verify_reports_every_damaged_run(store, tracekit_cli):
    wired = _wired(store)
    runs_dir = store / "runs"
    (runs_dir / f"run_id={wired[0]}" / "run.parquet").unlink()                       # missing
    f = runs_dir / f"run_id={wired[1]}" / "run.parquet"
    _truncate(f, 30)                                                                 # cut off
    part = sorted((runs_dir / f"run_id={wired[2]}").glob("events-*.parquet"))[0]
    _truncate(part, part.stat().st_size - 1)                                         # a part cut off
    # a footer overwritten in place, its length and magic kept: only a full footer read sees it
    part = sorted((runs_dir / f"run_id={wired[3]}").glob("events-*.parquet"))[0]
    size = part.stat().st_size
    footer_len = int.from_bytes(part.read_bytes()[-8:-4], "little")
    with open(part, "r+b") as fh:
        fh.seek(size - 8 - footer_len)
        fh.write(b"\x07" * footer_len)
    assert tail_problem(part) is None

    p = tracekit_cli("verify", data=store)
    assert p.returncode == 1 and "Traceback" not in p.stderr
    lines = p.stdout.splitlines()
    assert sorted(lines[:-1]) == sorted([
        f"run {wired[0]} is damaged (run.parquet: missing)",
        f"run {wired[1]} is damaged (run.parquet: no Parquet footer at its end (cut off or overwritten?))",
        f"run {wired[2]} is damaged ({sorted((runs_dir / f'run_id={wired[2]}').glob('events-*.parquet'))[0].name}: "
        "no Parquet footer at its end (cut off or overwritten?))",
        *[ln for ln in lines if ln.startswith(f"run {wired[3]} is damaged ({part.name}: unreadable footer: ")],
    ]) and len(lines) == 5
    assert lines[-1] == "12 run(s) checked, 4 damaged: tracekit rm --damaged removes them"

    # the cheap check at connect skips three of them; a query that meets the fourth fails
    # with one line (when it is the first events part, as here, every query over events does)
    p = tracekit_cli("sql", "SELECT count(*) AS n FROM events", "-f", "csv", data=store)
    lines = p.stderr.splitlines()
    assert [ln.split(" is damaged")[0] for ln in lines[:3]] == [f"tracekit: warning: run {r}" for r in sorted(wired[:3])]
    assert "Traceback" not in p.stderr and (p.returncode == 0 and len(lines) == 3 or p.returncode == 1 and len(lines) == 4)


def test_rm_removes_runs_atomically_one_line_each(store, tracekit_cli, store_listing):
    wired = _wired(store)
    before = store_listing(store)
    p = tracekit_cli("rm", wired[0], data=store, stdin=subprocess.DEVNULL)      # not a terminal, no --yes
    assert p.returncode == 1 and p.stderr.startswith("tracekit: error: would remove 1 run(s)")
    p = tracekit_cli("rm", wired[0], "nosuchrun", "--yes", data=store)          # an unknown id: nothing removed
    assert p.returncode == 1 and "no run 'nosuchrun'" in p.stderr
    assert store_listing(store) == before

    p = tracekit_cli("rm", wired[0], wired[1][:6], "--yes", data=store)       # an id and a unique prefix
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"removed run {wired[0]}", f"removed run {wired[1]}"]
    left = {k for k in before if not k.startswith((f"runs/run_id={wired[0]}", f"runs/run_id={wired[1]}"))}
    assert set(store_listing(store)) == left                                  # nothing else touched, no trash left
    assert Store(store).run_ids() == sorted(set(_runs(store)))

    # --damaged: what verify reports (a part cut off), and only that
    part = sorted((store / "runs" / f"run_id={wired[2]}").glob("events-*.parquet"))[0]
    _truncate(part, 7)
    p = tracekit_cli("rm", "--damaged", "--yes", data=store)
    assert p.returncode == 0
    assert p.stdout.splitlines() == [f"removed run {wired[2]} (damaged: {part.name}: 7 bytes, too short to be a Parquet file (cut off?))"]
    p = tracekit_cli("verify", data=store)
    assert p.returncode == 0 and p.stdout.strip() == "9 run(s) checked, 0 damaged"
    assert tracekit_cli("rm", "--damaged", "--yes", data=store).stdout.strip() == "no damaged runs"


def test_verify_and_rm_refuse_a_directory_that_is_not_a_store(tmp_path, tracekit_cli):
    for cmd in (("verify",), ("rm", "--damaged", "--yes")):
        p = tracekit_cli(*cmd, data=tmp_path / "nothing")
        assert p.returncode == 1 and p.stderr.startswith("tracekit: error: ") and "not a tracekit store" in p.stderr


def test_run_parquet_overwritten_with_csv_is_skipped(store, _sweep_store, tracekit_cli):
    """What a `COPY ... TO '<run>/run.parquet' (FORMAT csv)` leaves (issue 13): a text file
    in place of the record; the run is skipped, the rest of the store still answers."""
    bad = _wired(store)[1]
    (store / "runs" / f"run_id={bad}" / "run.parquet").write_text("source,sha256\nx,y\n")
    before = _csv(tracekit_cli("runs", "-f", "csv", data=_sweep_store).stdout)
    for args in (("runs", "-f", "csv"), ("metrics", "-f", "csv"), (*SWEEP, "--dry-run")):
        p = tracekit_cli(*args, data=store)
        assert p.returncode == 0, p.stderr
        _one_warning(p, bad, "run.parquet")
    assert _csv(tracekit_cli("runs", "-f", "csv", data=store).stdout) == [r for r in before if r["run_id"] != bad]


def test_metrics_of_some_runs_never_touch_the_others(store, _sweep_store, tracekit_cli):
    """tracekit metrics chooses its runs on the run records, then reads those runs alone: a
    damaged part of a run it did not choose is never opened (no warning), and every run
    chosen answers as before; without the filter, the damaged run is met and warned about."""
    kinds = _runs(store)
    variant = {r: pq.read_table(store / "runs" / f"run_id={r}" / "run.parquet").column("labels")[0].as_py()
               for r in kinds if kinds[r] == "wired"}
    variant = {r: {kv["key"]: kv["value"] for kv in v}["variant"] for r, v in variant.items()}
    bad = next(r for r, v in variant.items() if v == "Sack1")
    part = sorted((store / "runs" / f"run_id={bad}").glob("events-*.parquet"))[-1]
    _truncate(part, part.stat().st_size - 100)
    before = _csv(tracekit_cli("metrics", "-f", "csv", "--where", "variant=Reno", data=_sweep_store).stdout)
    assert before and {r["run_id"] for r in before} <= {r for r, v in variant.items() if v == "Reno"}
    p = tracekit_cli("metrics", "-f", "csv", "--where", "variant=Reno", data=store)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert _same_rows(_csv(p.stdout), before)
    p = tracekit_cli("metrics", "-f", "csv", data=store)
    assert p.returncode == 0, p.stderr
    _one_warning(p, bad, part.name)


def test_sql_where_defines_the_views_over_the_chosen_runs_only(store, _sweep_store, tracekit_cli):
    """tracekit sql --where: the same rows as the query over the whole store restricted to
    those runs, and a damaged run not chosen is never opened."""
    labels = {r: {kv["key"]: kv["value"] for kv in pq.read_table(store / "runs" / f"run_id={r}" / "run.parquet")
                  .column("labels")[0].as_py()} for r in _runs(store)}
    reno = sorted(r for r, lab in labels.items() if lab["variant"] == "Reno")
    bad = next(r for r in _wired(store) if labels[r]["variant"] == "Sack1")
    part = sorted((store / "runs" / f"run_id={bad}").glob("events-*.parquet"))[-1]
    _truncate(part, part.stat().st_size - 100)

    q = "SELECT run_id, count(*) AS n FROM events GROUP BY run_id ORDER BY run_id"
    p = tracekit_cli("sql", q, "--where", "variant=Reno", "-f", "csv", data=store)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    by_hand = {r: sum(pq.ParquetFile(e).metadata.num_rows for e in (store / "runs" / f"run_id={r}").glob("events-*.parquet"))
               for r in reno}
    assert _csv(p.stdout) == [{"run_id": r, "n": str(n)} for r, n in sorted(by_hand.items()) if n]

    q = "SELECT * FROM run_metrics ORDER BY ALL"
    whole = tracekit_cli("sql", q.replace("ORDER BY", f"WHERE run_id IN ({', '.join(repr(r) for r in reno)}) ORDER BY"),
                         "-f", "csv", data=_sweep_store)
    p = tracekit_cli("sql", q, "-w", "variant=Reno", "-f", "csv", data=store)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert _csv(p.stdout) and _same_rows(_csv(p.stdout), _csv(whole.stdout))

    p = tracekit_cli("sql", "SELECT count(DISTINCT run_id) AS n FROM events", "-w", "variant!=Reno", "-f", "csv", data=store)
    assert p.returncode == 0
    _one_warning(p, bad, part.name)
    p = tracekit_cli("sql", "SELECT 1", "-w", "variant=Cubic", data=store)
    assert p.returncode == 1 and p.stderr.startswith("tracekit: error: no run matches the --where filters")
