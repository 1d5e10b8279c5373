"""The fixed costs of ingesting a sweep's short traces (issue 16), taken away without changing
what is stored: on real ns-2 traces of the bundled scenarios (sample_traces/, a tracekit-meta
header on top):

- the stored facts of a small run are computed on a DuckDB connection kept from the run
  before (tracekit.ingest.facts._KEPT), its views re-pointed: the parts equal those computed
  on a connection of their own, as every run's were before (the reference here), whatever
  ran on the kept connection before; a run that would need to spill is computed that way;
- a sweep commits its packet runs without their facts and stores those of several runs by one
  query per fact table afterwards (materialise_committed): the parts equal those computed at
  ingest on a connection of their own, and until then the views compute the same rows;
- a file of one chunk is read, parsed and written without threads, as one chunk (the bytes
  peeked for detection included): the same tables as the threaded ingest of many chunks;
- a wired chunk that starts with '#' lines (the header) takes the C fast path for the rest:
  the same tables and comments as the polars parser.
"""
from __future__ import annotations

import os
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.parquet as pq
import pytest
import zstandard

from tracekit.ingest import pipeline as ing
from tracekit.ingest import facts as materialise
from tracekit.store.columns import FACT_TABLES
from tracekit.formats.parsers import as_polars, comment_lines, wired
from tracekit.formats.sources import PEEK_BYTES
from tracekit.db.sqlfiles import definition_hash, fact_part_name, sql_files
from tracekit.store.store import Store

SAMPLES = Path(__file__).resolve().parent.parent / "sample_traces"
# two wired runs of one scenario (the same flows, other values) and a wireless one
PACKETS = ["cbr-variants/Newreno-7.0-seed1", "cbr-variants/Newreno-9.5-seed2", "manet/AODV-seed1"]


@pytest.fixture(scope="module")
def plain(tmp_path_factory) -> dict[str, Path]:
    """The sample traces decompressed (plain files: the one-chunk path), by 'dir/name'."""
    d = tmp_path_factory.mktemp("plain")
    out = {}
    for sample in PACKETS:
        for f in sorted((SAMPLES / sample).glob("*.tr.zst")):
            dst = d / sample.replace("/", "_") / f.name[: -len(".zst")]
            dst.parent.mkdir(exist_ok=True)
            with open(f, "rb") as src, open(dst, "wb") as w:
                zstandard.ZstdDecompressor().copy_stream(src, w)
            out[f"{sample}/{dst.name}"] = dst
    return out


def _facts(store: Path, run_id: str) -> dict[str, list[tuple]]:
    """Each fact part of the run: its file name and rows, sorted."""
    got = {}
    for t in FACT_TABLES:
        (part,) = (store / "runs" / f"run_id={run_id}").glob(f"{t}-*.parquet")
        rows = pq.read_table(part).to_pylist()
        got[t] = [part.name] + sorted((tuple(r.items()) for r in rows), key=repr)
    return got


def _ingest_all(store: Path, paths: list[Path]) -> list[str]:
    st = Store(store, create=True)
    return [ing.ingest_file(st, p, keep_trace=True).run_id for p in paths]  # type: ignore[misc]


def test_facts_on_a_kept_connection_equal_those_of_a_connection_of_their_own(plain, tmp_path, monkeypatch):
    # wired, wired, wireless, then the first again into another store: each run's views are
    # re-pointed on a connection that held another run (or kind) before
    order = [plain[f"{s}/packets.tr"] for s in PACKETS] + [plain[f"{PACKETS[0]}/packets.tr"]]
    made = []
    real = materialise._Connection.__init__

    def counting(self, con, files):
        made.append(self)
        real(self, con, files)

    monkeypatch.setattr(materialise, "_KEPT", materialise._Kept())
    monkeypatch.setattr(materialise._Connection, "__init__", counting)
    kept_ids = _ingest_all(tmp_path / "kept", order[:3]) + _ingest_all(tmp_path / "kept2", order[3:])
    assert len(made) == 1, "one connection for every run, kept between them"
    monkeypatch.setattr(materialise, "SMALL_RUN_BYTES", -1)     # every run on a connection of its own
    own_ids = _ingest_all(tmp_path / "own", order[:3]) + _ingest_all(tmp_path / "own2", order[3:])
    assert len(made) == 1 + len(order)
    assert kept_ids == own_ids
    for run_id, k in zip(kept_ids, ["", "", "", "2"]):
        assert _facts(tmp_path / f"kept{k}", run_id) == _facts(tmp_path / f"own{k}", run_id)
    # and the runs have what a query needs: one packet row per data packet of each
    ((n,),) = duckdb.execute(f"SELECT count(*) FROM read_parquet('{tmp_path}/kept/runs/*/packet_facts-*.parquet')").fetchall()
    assert n > 100


def test_a_run_that_would_spill_is_computed_on_a_connection_of_its_own(plain, tmp_path, monkeypatch):
    trace = plain[f"{PACKETS[0]}/packets.tr"]
    (ref,) = _ingest_all(tmp_path / "ref", [trace])
    monkeypatch.setattr(materialise, "_KEPT", materialise._Kept())
    real = materialise._compute_on
    failed = []

    def out_of_memory_when_kept(con, staging, run_id, names):
        if con.key and not failed:          # a kept connection: give up half-way
            failed.append(con)
            (staging / names[FACT_TABLES[0]]).write_bytes(b"half a part")
            raise duckdb.OutOfMemoryException("failed to allocate")
        return real(con, staging, run_id, names)

    monkeypatch.setattr(materialise, "_compute_on", out_of_memory_when_kept)
    (got,) = _ingest_all(tmp_path / "got", [trace])
    assert failed and got == ref
    assert _facts(tmp_path / "got", got) == _facts(tmp_path / "ref", ref)
    assert failed[0] not in materialise._KEPT.idle      # dropped, not kept
    # the next small run takes the kept path again
    (again,) = _ingest_all(tmp_path / "again", [plain[f"{PACKETS[1]}/packets.tr"]])
    assert len(materialise._KEPT.idle) == 1 and _facts(tmp_path / "again", again)


def test_facts_stored_after_the_commit_several_runs_at_once_equal_those_stored_at_ingest(plain, tmp_path, monkeypatch):
    traces = [plain[f"{s}/packets.tr"] for s in PACKETS]       # wired, wired, wireless: one batch
    small = materialise.SMALL_RUN_BYTES
    monkeypatch.setattr(materialise, "SMALL_RUN_BYTES", -1)     # the reference: each run on its own
    ref = _ingest_all(tmp_path / "ref", traces)
    monkeypatch.setattr(materialise, "SMALL_RUN_BYTES", small)
    monkeypatch.setattr(materialise, "_KEPT", materialise._Kept())
    st = Store(tmp_path / "later", create=True)
    results = [ing.ingest_file(st, p, keep_trace=True, facts=False) for p in traces]
    runs = [(r.run_id, r.kind) for r in results]
    assert [r for r, _ in runs] == ref and [k for _, k in runs] == ["wired", "wired", "wireless"]
    assert not list((tmp_path / "later" / "runs").glob("*/*facts*"))
    # a run committed without them is whole: its facts are computed from its events, the same rows
    from tracekit.db import query

    def rows(store: Path) -> dict[str, list]:
        con = query.connect(store)
        try:
            return {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in FACT_TABLES}
        finally:
            con.close()

    assert rows(tmp_path / "later") == rows(tmp_path / "ref")
    batches = []
    real = materialise._compute_runs

    layouts = []

    def spy(con, store, work, run_ids, names):
        batches.append(list(run_ids))
        out = real(con, store, work, run_ids, names)
        layouts.append(sorted(p.relative_to(work).as_posix() for p in work.rglob("*") if p.is_dir()))
        return out

    monkeypatch.setattr(materialise, "_compute_runs", spy)
    assert materialise.materialise_committed(st, runs) == 3
    assert batches == [ref], "the three runs in one query per fact table"
    # one directory per run for the three tables' parts (a directory is ~1 ms of CPU on ext4)
    assert layouts == [["parts", *sorted(f"parts/run_id={r}" for r in ref)]], layouts
    for run_id in ref:
        assert _facts(tmp_path / "later", run_id) == _facts(tmp_path / "ref", run_id)
    assert materialise.materialise_committed(st, runs) == 0 and len(batches) == 1     # nothing left to do
    assert not [p for p in (tmp_path / "later" / ".staging").iterdir() if p.is_dir()]
    # one run alone (the last batch of a sweep can be one run)
    one = Store(tmp_path / "one", create=True)
    r = ing.ingest_file(one, traces[1], keep_trace=True, facts=False)
    assert materialise.materialise_committed(one, [(r.run_id, r.kind)]) == 1
    assert _facts(tmp_path / "one", ref[1]) == _facts(tmp_path / "ref", ref[1])
    # on fewer DuckDB threads (a sweep's ns-2 running beside): the queries run on that many,
    # the same rows, and the kept connection is given back with its usual number
    seen: list[tuple[int, int]] = []

    def on_threads(con, store, work, run_ids, names):
        seen.append((con.con.execute("SELECT current_setting('threads')").fetchone()[0], id(con)))
        return real(con, store, work, run_ids, names)

    monkeypatch.setattr(materialise, "_compute_runs", on_threads)
    few = Store(tmp_path / "few", create=True)
    r = ing.ingest_file(few, traces[1], keep_trace=True, facts=False)
    assert materialise.materialise_committed(few, [(r.run_id, r.kind)], threads=1) == 1
    assert _facts(tmp_path / "few", ref[1]) == _facts(tmp_path / "ref", ref[1])
    assert seen[0][0] == 1
    kept = materialise._KEPT.take(tuple(fact_part_name(t, definition_hash(sql_files(), t)) for t in FACT_TABLES),
                                  sql_files())
    try:
        assert id(kept) == seen[0][1], "the connection used was given back"
        assert kept.con.execute("SELECT current_setting('threads')").fetchone()[0] == materialise.THREADS
    finally:
        materialise._KEPT.give_back(kept)



def test_an_ingest_of_several_files_stores_the_facts_of_its_small_runs_a_batch_at_a_time(plain, tmp_path, monkeypatch):
    """issue 38: `tracekit ingest DIR` commits its small packet runs, then stores their facts
    by one query per fact table for FACTS_BATCH of them (materialise_committed), each staged
    inside one staging directory held for the command: the same fact rows as runs ingested
    one by one, nothing left in .staging; a single file is ingested as before."""
    traces = [plain[f"{s}/packets.tr"] for s in PACKETS] + [plain[f"{PACKETS[0]}/cwnd.tr"]]
    ref = _ingest_all(tmp_path / "ref", traces)
    batches: list[list[str]] = []
    real = materialise.materialise_committed

    def spy(store, runs, staging_within=None, threads=None):
        batches.append([r for r, _ in runs])
        assert staging_within is not None and staging_within.parent == store.staging_dir
        return real(store, runs, staging_within=staging_within, threads=threads)

    monkeypatch.setattr(ing, "materialise_committed", spy)
    monkeypatch.setattr(ing, "FACTS_BATCH", 2)
    results = ing.ingest_paths(tmp_path / "batched", traces)
    assert [r.run_id for r in results] == ref and [r.status for r in results] == ["added"] * 4
    assert batches == [ref[:2], ref[2:3]], "two runs a batch, then the rest; the cwnd run has no facts"
    for run_id in ref[:3]:
        assert _facts(tmp_path / "batched", run_id) == _facts(tmp_path / "ref", run_id)
    assert list((tmp_path / "batched" / ".staging").iterdir()) == []
    # ingested again: duplicates, whose facts are there already (nothing computed)
    assert [r.status for r in ing.ingest_paths(tmp_path / "batched", traces)] == ["duplicate"] * 4
    assert len(list((tmp_path / "batched" / "runs").glob("*/*facts*"))) == 3 * len(FACT_TABLES)
    # one file: its facts at its ingest (materialise_run), no batch
    n = len(batches)
    [r] = ing.ingest_paths(tmp_path / "one", traces[:1])
    assert r.status == "added" and not r.facts_pending and len(batches) == n
    assert _facts(tmp_path / "one", ref[0]) == _facts(tmp_path / "ref", ref[0])

def _tables(store: Path, run_id: str) -> dict[str, pl.DataFrame]:
    d = store / "runs" / f"run_id={run_id}"
    names = sorted({p.name.rsplit("-", 1)[0] for p in d.glob("*-*.parquet")} - set(FACT_TABLES))
    return {n: pl.read_parquet(sorted(d.glob(f"{n}-*.parquet"))).sort("line_no") for n in names}


def test_one_chunk_without_threads_stores_what_many_chunks_with_threads_do(plain, tmp_path, monkeypatch):
    threads = []
    real = ing._Prefetch.__init__

    def note(self, it, depth=2, inline=False):
        threads.append(not inline)
        real(self, it, depth, inline)

    monkeypatch.setattr(ing._Prefetch, "__init__", note)
    chunk = 1 << 15
    for key, path in sorted(plain.items()):
        if path.stat().st_size > 4e6:
            continue                        # the 8 MB wireless trace: a lot of small chunks
        one, many = Store(tmp_path / "one" / key, create=True), Store(tmp_path / "many" / key, create=True)
        a = ing.ingest_file(one, path, keep_trace=True)
        b = ing.ingest_file(many, path, keep_trace=True, chunk_bytes=chunk)
        assert threads[-2:] == [False, path.stat().st_size > chunk], key
        assert (a.run_id, a.n_events, a.kind) == (b.run_id, b.n_events, b.kind), key
        ta, tb = _tables(one.root, a.run_id), _tables(many.root, b.run_id)   # type: ignore[arg-type]
        assert ta.keys() == tb.keys() and ta, key
        for name in ta:
            assert ta[name].equals(tb[name]), (key, name)
        ra = pq.read_table(one.run_dir(a.run_id) / "run.parquet").drop(["ingested_at"]).to_pylist()  # type: ignore[arg-type]
        rb = pq.read_table(many.run_dir(b.run_id) / "run.parquet").drop(["ingested_at"]).to_pylist()  # type: ignore[arg-type]
        assert ra == rb, key
        # one chunk, the detection's peek included: one part per table
        main = next(iter(ta))
        assert len(list(one.run_dir(a.run_id).glob(f"{main}-*.parquet"))) == 1, key  # type: ignore[arg-type]
        if path.stat().st_size > PEEK_BYTES:    # else the peek holds it all, one chunk whatever chunk_bytes
            assert len(list(many.run_dir(b.run_id).glob(f"{main}-*.parquet"))) > 1, key  # type: ignore[arg-type]
        assert (one.run_dir(a.run_id) / "trace.zst").read_bytes() and \
            zstandard.ZstdDecompressor().decompressobj().decompress(
                (one.run_dir(a.run_id) / "trace.zst").read_bytes()) == path.read_bytes(), key  # type: ignore[arg-type]


def test_only_a_regular_file_counts_as_small(plain, tmp_path):
    assert ing._regular_size(plain[f"{PACKETS[0]}/packets.tr"]) == plain[f"{PACKETS[0]}/packets.tr"].stat().st_size
    assert ing._regular_size(tmp_path) == float("inf")          # a directory
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert ing._regular_size(fifo) == float("inf")


_wiredc = pytest.importorskip("tracekit.formats.parsers._wiredc", reason="the C fast path is not built")


def _parse(data: bytes, first: int, fast: bool, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(wired, "_fast", _wiredc if fast else None)
        return wired.WiredParser().parse_chunk(data, first)


@pytest.mark.parametrize("head", [1, 3])
def test_a_chunk_with_a_header_takes_the_fast_path_and_reads_the_same(plain, monkeypatch, head):
    text = plain[f"{PACKETS[0]}/packets.tr"].read_bytes()
    header, body = text.split(b"\n", 1)
    assert header.startswith(b"# tracekit-meta")
    lines = body.split(b"\n")
    data = b"\n".join([header] + [b"# another comment"] * (head - 1) + lines[:5000]) + b"\n"
    calls = []
    real = wired.parse_fast

    def spy(d, first):
        got = real(d, first)
        calls.append((bytes(d[:1]), first, got is not None))
        return got

    monkeypatch.setattr(wired, "parse_fast", spy)
    for first in (1, 1001):
        fast = _parse(data, first, True, monkeypatch)
        assert calls[-1] == (body[:1], first + head, True)      # the rest, after the header
        pure = _parse(data, first, False, monkeypatch)
        assert fast.tables.keys() == pure.tables.keys() == {"events"}
        got, want = as_polars(fast.tables["events"]), as_polars(pure.tables["events"])
        assert got.height == 5000
        assert got.cast(want.schema).equals(want)  # type: ignore[arg-type]
        assert fast.comments == pure.comments == comment_lines(data, first)
        assert fast.comments[0] == (first, header.decode())
        assert (fast.bad_offsets, fast.bad_count) == (pure.bad_offsets, pure.bad_count) == ([], 0)


def test_a_comment_further_down_or_alone_goes_to_the_polars_parser(plain, monkeypatch):
    text = plain[f"{PACKETS[0]}/packets.tr"].read_bytes()
    header, body = text.split(b"\n", 1)
    lines = body.split(b"\n")[:200]
    for data in (b"\n".join(lines[:100] + [b"# later"] + lines[100:]) + b"\n",
                 header + b"\n",
                 header + b"\n" + b"\n".join(lines[:50]) + b"\n#x\n"):
        fast, pure = _parse(data, 1, True, monkeypatch), _parse(data, 1, False, monkeypatch)
        assert fast.tables.keys() == pure.tables.keys()
        for name in fast.tables:
            got, want = as_polars(fast.tables[name]), as_polars(pure.tables[name])
            assert got.cast(want.schema).equals(want)  # type: ignore[arg-type]
        assert fast.comments == pure.comments and fast.comments


def test_the_kept_connections_are_bounded_and_reused_by_definition(monkeypatch):
    kept = materialise._Kept()
    made = []
    monkeypatch.setattr(materialise, "_Connection",
                        type("C", (), {"__init__": lambda self, con, files: made.append(self) or setattr(self, "con", con),
                                       "close": lambda self: self.con.close(), "key": ()}))
    a, b, c = kept.take(("x",), []), kept.take(("x",), []), kept.take(("x",), [])
    for con in (a, b, c):
        kept.give_back(con)
    assert len(kept.idle) == kept.MAX == 2 and c in kept.idle
    assert kept.take(("x",), []) in (b, c) and len(made) == 3
    other = kept.take(("y",), [])                # another definition: never one made for "x"
    assert other not in (a, b, c) and len(made) == 4


def _comment_lines_by_split(data: bytes, first: int) -> list[tuple[int, str]]:
    """The plain way: every line, numbered."""
    return [(first + i, line.decode("utf-8", "replace").rstrip("\r"))
            for i, line in enumerate(data.split(b"\n")) if line.startswith(b"#")]


def test_comment_lines_finds_what_splitting_every_line_finds():
    import random

    rng = random.Random(16)
    pieces = [b"# tracekit-meta {}", b"#", b"#x\r", b"+ 0.1 1 2 tcp 40", b"", b" # not", b"r 1 ## x", "# é".encode(), b"#\xff"]
    cases = [b"", b"#", b"\n#", b"#\n", b"a\n#b", b"#a\n#b\n", b"##\n##"]
    cases += [b"\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 30))) + rng.choice([b"", b"\n"])
              for _ in range(500)]
    for data in cases:
        for first in (1, 77):
            assert comment_lines(data, first) == _comment_lines_by_split(data, first), data
