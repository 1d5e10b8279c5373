"""The Parquet parts ingest writes (pyarrow, with per-column encodings chosen for speed, issue
16) read back exactly as the parts that polars' write_parquet wrote before: the same Arrow
schema (field metadata included: polars reads the dictionary columns back as categoricals),
the same Parquet schema, the same types in DuckDB, the same values; for every table of real
ns-2 traces of each kind. The reference is polars writing the same rows, not our writer."""
from __future__ import annotations

import duckdb
import polars as pl
import pyarrow.parquet as pq

from tracekit.ingest.pipeline import _stored_schema, ingest_file
from tracekit.store.schema import TABLES
from tracekit.store.store import Store


def test_parts_read_back_as_polars_wrote_them(ns_traces, wild_traces, tmp_path):
    traces = {**{k: ns_traces[k] for k in ("wired_latehdr", "wired_annotate", "tcpvar", "qmon_samples", "red")},
              **{k: wild_traces[k] for k in ("wl_annot_old", "wl_annot_new", "lan")}}
    con = duckdb.connect()
    seen = set()
    for name, path in traces.items():
        store = Store(tmp_path / name, create=True)
        run = store.run_dir(ingest_file(store, path).run_id)
        for part in sorted(run.glob("*-*.parquet")):
            table = part.name.rsplit("-", 1)[0]
            if table not in TABLES:            # the stored facts (tracekit.ingest.facts)
                continue
            seen.add(table)
            ref = tmp_path / f"ref-{name}-{part.name}"
            pl.read_parquet(part).write_parquet(ref)
            got, want = pq.read_table(part), pq.read_table(ref)
            assert got.schema.equals(want.schema, check_metadata=True), (name, part.name)
            assert got.equals(want), (name, part.name)
            assert pq.ParquetFile(part).schema.equals(pq.ParquetFile(ref).schema), (name, part.name)
            assert pl.read_parquet(part).equals(pl.read_parquet(ref)), (name, part.name)
            assert pl.read_parquet(part).schema == pl.read_parquet(ref).schema, (name, part.name)
            describe = "DESCRIBE SELECT * FROM read_parquet('{}', hive_partitioning = false)"
            assert con.execute(describe.format(part)).fetchall() == con.execute(describe.format(ref)).fetchall()
            assert got.schema.equals(_stored_schema(table), check_metadata=False)
    assert {"events", "annotations", "tcp_vars", "queue_samples", "red_vars", "wireless_events"} <= seen


def test_stored_schemas_are_what_polars_writes():
    """Every table's stored Arrow schema (made without polars, for the wired fast path) is the
    one polars' write_parquet gives a frame of that table."""
    import io

    from tracekit.ingest.pipeline import _pl_schema

    for table in TABLES:
        buf = io.BytesIO()
        pl.DataFrame(schema=_pl_schema(table)).write_parquet(buf)
        buf.seek(0)
        assert _stored_schema(table).equals(pq.read_schema(buf).remove_metadata(), check_metadata=True), table


def test_run_record_is_from_pylist():
    """The run record built from Arrow buffers (no pandas, no polars) against pyarrow's own
    from_pylist, with nulls, empty and non-ASCII labels, two flows."""
    from datetime import datetime, timezone

    import pyarrow as pa

    from tracekit.ingest.pipeline import _record_table
    from tracekit.store.schema import RUNS

    base = {"source": "/tmp/é.tr", "sha256": "ab" * 32, "trace_kind": "wired", "compression": "none", "size_bytes": 2**40,
            "n_lines": 7, "n_events": 6, "n_skipped_lines": 0, "t_start": 0.25, "t_end": 1e9, "scenario": None, "seed": None,
            "labels": [], "flow_labels": [], "ingested_at": datetime(2026, 11, 24, 1, 2, 3, 456789, tzinfo=timezone.utc),
            "tracekit_version": "0.1.0", "schema_version": 1}
    full = {**base, "scenario": "dumbbell", "seed": -3, "labels": [{"key": "a", "value": "ü"}, {"key": "", "value": "x"}],
            "flow_labels": [{"fid": 1, "name": "Reno"}, {"fid": -2, "name": ""}]}
    for rec in (base, full):
        got, want = _record_table(rec), pa.Table.from_pylist([rec], schema=RUNS)
        got.validate(full=True)
        assert got.equals(want), (got.to_pylist(), want.to_pylist())
        assert got.to_pylist() == [rec]


def test_statistics_only_where_they_prune(ns_traces, wild_traces, tmp_path):
    """Min/max statistics are written for the columns that grow through a trace (line numbers,
    times, packet ids: a part's range of them is narrow, so a filter skips other parts) and
    equal the part's own min and max of that column (computed here from its values); the
    others (nodes, flows, sizes, strings: every part holds all of them) carry none."""
    import pyarrow.compute as pc

    from tracekit.ingest.pipeline import GROWING

    checked = set()
    for name, path in {"wired": ns_traces["wired_latehdr"], "tcpvar": ns_traces["tcpvar"],
                       "wireless": wild_traces["wl_annot_new"]}.items():
        store = Store(tmp_path / name, create=True)
        run = store.run_dir(ingest_file(store, path).run_id)
        for part in sorted(run.glob("*-*.parquet")):
            if part.name.rsplit("-", 1)[0] not in TABLES:
                continue
            meta, data = pq.ParquetFile(part).metadata, pq.read_table(part)
            for rg in range(meta.num_row_groups):
                rows = data.slice(sum(meta.row_group(i).num_rows for i in range(rg)), meta.row_group(rg).num_rows)
                for i in range(meta.num_columns):
                    col = meta.row_group(rg).column(i)
                    name_ = col.path_in_schema
                    if name_ in GROWING:
                        values = rows.column(name_)
                        assert col.statistics is not None and col.statistics.has_min_max, (part.name, name_)
                        assert (col.statistics.min, col.statistics.max) == (pc.min(values).as_py(), pc.max(values).as_py())
                        checked.add(name_)
                    else:
                        assert col.statistics is None or not col.statistics.has_min_max, (part.name, name_)
    assert checked == {"line_no", "time", "pkt_id"}
