"""The stored tables: the run record, the store's schema version, and (from the parsers'
registry, where each trace format declares its own) the per-run tables and their types.

Every layer above the parsers (store, SQL views, CLI, dashboard) relies on these names.
The files hold no run_id column: a run's files live in `runs/run_id=<id>/` (hive-style), because
the id is the content hash, known only once a streamed trace has been read to its end. DuckDB
and polars read the id back from the directory name.
Bump SCHEMA_VERSION whenever a stored column is added, removed, or changes meaning or type,
and teach `tracekit.store.store` to upgrade the older layout: the raw_* views (tracekit.db.query) read
the declared columns from every part by name, so a part without one fails the query.
"""
from __future__ import annotations

import pyarrow as pa

# table name -> schema of the per-run files runs/run_id=<id>/<table>-NNNNN.parquet, and trace
# kind -> the table that holds its rows (n_events counts these): each trace format declares
# its own tables in its module in tracekit/formats/parsers/
from tracekit.formats.parsers import MAIN_TABLE, TABLES
# the version and the columns in DuckDB's words live in the light module the SQL layer reads
from tracekit.store.columns import SCHEMA_VERSION

__all__ = ["FACTS", "FLOW_LABEL", "LABEL", "MAIN_TABLE", "RUNS", "SCHEMA_VERSION", "TABLES", "duck_type"]

# runs: one row per ingested trace (stored as runs/run_id=<id>/run.parquet).
LABEL = pa.struct([("key", pa.string()), ("value", pa.string())])
FLOW_LABEL = pa.struct([("fid", pa.int32()), ("name", pa.string())])
RUNS = pa.schema(
    [
        ("source", pa.string()),          # absolute path at ingest time
        ("sha256", pa.string()),          # of the decompressed content
        ("trace_kind", pa.string()),      # wired, tcpvar, queue_monitor, red, wireless
        ("compression", pa.string()),     # none, gzip, zstd, bz2, xz
        ("size_bytes", pa.int64()),       # decompressed size
        ("n_lines", pa.int64()),
        ("n_events", pa.int64()),         # rows in the run's main table
        ("n_skipped_lines", pa.int64()),  # bad lines skipped with --skip-bad-lines, truncated tail
        ("t_start", pa.float64()),
        ("t_end", pa.float64()),
        ("scenario", pa.string()),        # from the label scenario=..., else NULL
        ("seed", pa.int64()),             # from the label seed=..., else NULL
        ("labels", pa.list_(LABEL)),
        ("flow_labels", pa.list_(FLOW_LABEL)),
        ("ingested_at", pa.timestamp("us", tz="UTC")),
        ("tracekit_version", pa.string()),
        ("schema_version", pa.int32()),
    ]
)

_FLOW_KEY = [
    ("trace_kind", pa.string()),      # wired, wireless
    ("fid", pa.int32()),
    ("src_node", pa.int32()),
    ("src_port", pa.int32()),
    ("dst_node", pa.int32()),
    ("dst_port", pa.int32()),
]
# the stored facts (tracekit.store.columns.FACT_TABLES): runs/run_id=<id>/<table>-<definition>.parquet,
# written by DuckDB from the sql/ view <table>_from_events (tracekit.ingest.facts), which
# defines every column
FACTS = {
    "flow_facts": pa.schema(_FLOW_KEY + [
        ("ptype", pa.string()),
        ("fulltcp", pa.bool_()),
        ("syn_seen", pa.bool_()),
        ("seq0_seen", pa.bool_()),
    ]),
    "packet_facts": pa.schema(_FLOW_KEY + [
        ("pkt_id", pa.int64()),
        ("ptype", pa.string()),
        ("seq", pa.int64()),
        ("size", pa.int32()),
        ("t_sent", pa.float64()),
        ("t_recv", pa.float64()),
        ("recv_line", pa.int64()),
        ("rx_bytes", pa.int64()),
        ("drops", pa.int64()),
        ("overheard", pa.int64()),
        ("first_of_seq", pa.bool_()),
    ]),
    "flow_run_facts": pa.schema(_FLOW_KEY + [
        ("jitter_s", pa.float64()),
        ("sent_pkts", pa.int64()),
        ("recv_pkts", pa.int64()),
        ("dropped_pkts", pa.int64()),
        ("overheard_pkts", pa.int64()),
        ("lost_pkts", pa.int64()),
        ("tx_bytes", pa.int64()),
        ("rx_bytes", pa.int64()),
        ("delay_mean_s", pa.float64()),
        ("delay_p50_s", pa.float64()),
        ("delay_p95_s", pa.float64()),
        ("delay_p99_s", pa.float64()),
        ("t_first_send", pa.float64()),
        ("t_last_recv", pa.float64()),
        ("goodput_bytes_hdr0", pa.int64()),
        ("goodput_bytes_hdr40", pa.int64()),
    ]),
}


def duck_type(t: pa.DataType) -> str:
    """The DuckDB type of a stored Arrow column type (the few the schema uses): how
    tracekit.store.columns.RAW_COLUMNS must declare it."""
    if pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return "VARCHAR"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ" if t.tz else "TIMESTAMP"
    if pa.types.is_list(t):
        return f"{duck_type(t.value_type)}[]"
    if pa.types.is_struct(t):
        return "STRUCT(" + ", ".join(f"{t.field(i).name} {duck_type(t.field(i).type)}" for i in range(t.num_fields)) + ")"
    simple = {pa.int32(): "INTEGER", pa.int64(): "BIGINT", pa.float64(): "DOUBLE", pa.bool_(): "BOOLEAN"}
    if t in simple:
        return simple[t]
    raise TypeError(f"no DuckDB type for {t}")
