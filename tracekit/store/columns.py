"""The stored tables' columns as DuckDB types, and the store's schema version: what the SQL
layer needs of the schema, without Arrow or polars (so that `tracekit sql` starts fast).

The Arrow schemas (tracekit.store.schema.RUNS, each format's tables in tracekit/formats/parsers/) are what
ingest writes; this is the same list in DuckDB's words. tests/test_columns.py checks that the
two agree, table by table and column by column, so a column added to one and not the other
fails the tests. Edit both together (and bump SCHEMA_VERSION when a stored column changes).
"""
from __future__ import annotations

SCHEMA_VERSION = 1

# table name (`runs` first, then tracekit.store.schema.TABLES in order) -> ((column, DuckDB type), ...)
RAW_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "runs": (
        ("source", "VARCHAR"),
        ("sha256", "VARCHAR"),
        ("trace_kind", "VARCHAR"),
        ("compression", "VARCHAR"),
        ("size_bytes", "BIGINT"),
        ("n_lines", "BIGINT"),
        ("n_events", "BIGINT"),
        ("n_skipped_lines", "BIGINT"),
        ("t_start", "DOUBLE"),
        ("t_end", "DOUBLE"),
        ("scenario", "VARCHAR"),
        ("seed", "BIGINT"),
        ("labels", "STRUCT(key VARCHAR, value VARCHAR)[]"),
        ("flow_labels", "STRUCT(fid INTEGER, name VARCHAR)[]"),
        ("ingested_at", "TIMESTAMPTZ"),
        ("tracekit_version", "VARCHAR"),
        ("schema_version", "INTEGER"),
    ),
    "events": (
        ("line_no", "BIGINT"),
        ("event", "VARCHAR"),
        ("time", "DOUBLE"),
        ("from_node", "INTEGER"),
        ("to_node", "INTEGER"),
        ("ptype", "VARCHAR"),
        ("size", "INTEGER"),
        ("flags", "VARCHAR"),
        ("fid", "INTEGER"),
        ("src_node", "INTEGER"),
        ("src_port", "INTEGER"),
        ("dst_node", "INTEGER"),
        ("dst_port", "INTEGER"),
        ("seq", "BIGINT"),
        ("pkt_id", "BIGINT"),
        ("tcp_ackno", "BIGINT"),
        ("tcp_flags", "INTEGER"),
        ("tcp_hlen", "INTEGER"),
        ("sack_blocks", "INTEGER"),
    ),
    "annotations": (
        ("line_no", "BIGINT"),
        ("time", "DOUBLE"),
        ("text", "VARCHAR"),
    ),
    "wireless_events": (
        ("line_no", "BIGINT"),
        ("fmt", "VARCHAR"),
        ("event", "VARCHAR"),
        ("time", "DOUBLE"),
        ("node", "INTEGER"),
        ("layer", "VARCHAR"),
        ("reason", "VARCHAR"),
        ("pkt_id", "BIGINT"),
        ("ptype", "VARCHAR"),
        ("size", "INTEGER"),
        ("mac_dur", "BIGINT"),
        ("mac_dst", "BIGINT"),
        ("mac_src", "BIGINT"),
        ("mac_type", "INTEGER"),
        ("src_node", "INTEGER"),
        ("src_port", "INTEGER"),
        ("dst_node", "INTEGER"),
        ("dst_port", "INTEGER"),
        ("ttl", "INTEGER"),
        ("next_hop", "INTEGER"),
        ("fid", "INTEGER"),
        ("seq", "BIGINT"),
        ("tcp_ack", "BIGINT"),
        ("n_forwards", "INTEGER"),
        ("x", "DOUBLE"),
        ("y", "DOUBLE"),
        ("z", "DOUBLE"),
        ("detail", "VARCHAR"),
    ),
    "wireless_movements": (
        ("line_no", "BIGINT"),
        ("time", "DOUBLE"),
        ("node", "INTEGER"),
        ("x", "DOUBLE"),
        ("y", "DOUBLE"),
        ("z", "DOUBLE"),
        ("dest_x", "DOUBLE"),
        ("dest_y", "DOUBLE"),
        ("speed_mps", "DOUBLE"),
    ),
    "wireless_energy": (
        ("line_no", "BIGINT"),
        ("time", "DOUBLE"),
        ("node", "INTEGER"),
        ("energy_j", "DOUBLE"),
        ("idle_j", "DOUBLE"),
        ("sleep_j", "DOUBLE"),
        ("tx_j", "DOUBLE"),
        ("rx_j", "DOUBLE"),
    ),
    "wireless_logs": (
        ("line_no", "BIGINT"),
        ("tag", "VARCHAR"),
        ("time", "DOUBLE"),
        ("node", "INTEGER"),
        ("text", "VARCHAR"),
    ),
    "node_addrs": (
        ("line_no", "BIGINT"),
        ("node", "INTEGER"),
        ("addr", "VARCHAR"),
        ("addr_parts", "INTEGER[]"),
        ("packed", "BIGINT"),
        ("seen_as", "VARCHAR"),
    ),
    "tcp_vars": (
        ("line_no", "BIGINT"),
        ("time", "DOUBLE"),
        ("src_node", "INTEGER"),
        ("src_port", "INTEGER"),
        ("dst_node", "INTEGER"),
        ("dst_port", "INTEGER"),
        ("var", "VARCHAR"),
        ("value", "DOUBLE"),
    ),
    "queue_samples": (
        ("line_no", "BIGINT"),
        ("sample_kind", "VARCHAR"),
        ("time", "DOUBLE"),
        ("from_node", "INTEGER"),
        ("to_node", "INTEGER"),
        ("bytes", "DOUBLE"),
        ("pkts", "DOUBLE"),
        ("arrivals_pkts", "BIGINT"),
        ("departures_pkts", "BIGINT"),
        ("drops_pkts", "BIGINT"),
        ("arrivals_bytes", "BIGINT"),
        ("departures_bytes", "BIGINT"),
        ("drops_bytes", "BIGINT"),
    ),
    "red_vars": (
        ("line_no", "BIGINT"),
        ("var", "VARCHAR"),
        ("time", "DOUBLE"),
        ("value", "DOUBLE"),
    ),
    "series": (
        ("line_no", "BIGINT"),
        ("time", "DOUBLE"),
        ("value", "DOUBLE"),
    ),
}

# the stored facts: per packet-trace run, the label-free rows of the sql/ views
# <table>_from_events, written at ingest (tracekit.ingest.facts) so that the metric views read
# them instead of computing them from the events; a run without them (ingested before they
# existed, or under another definition) gets them computed (sql/intermediate/<table>.sql).
# Nothing else is stored in them, so a store without them is still of this schema version.
FACT_TABLES: tuple[str, ...] = ("flow_facts", "packet_facts", "flow_run_facts")
# each begins with the trace kind and the flow key
_FACT_FLOW_KEY: tuple[tuple[str, str], ...] = (
    ("trace_kind", "VARCHAR"),
    ("fid", "INTEGER"),
    ("src_node", "INTEGER"),
    ("src_port", "INTEGER"),
    ("dst_node", "INTEGER"),
    ("dst_port", "INTEGER"),
)
RAW_COLUMNS["flow_facts"] = _FACT_FLOW_KEY + (
    ("ptype", "VARCHAR"),
    ("fulltcp", "BOOLEAN"),
    ("syn_seen", "BOOLEAN"),
    ("seq0_seen", "BOOLEAN"),
)
RAW_COLUMNS["packet_facts"] = _FACT_FLOW_KEY + (
    ("pkt_id", "BIGINT"),
    ("ptype", "VARCHAR"),
    ("seq", "BIGINT"),
    ("size", "INTEGER"),
    ("t_sent", "DOUBLE"),
    ("t_recv", "DOUBLE"),
    ("recv_line", "BIGINT"),
    ("rx_bytes", "BIGINT"),
    ("drops", "BIGINT"),
    ("overheard", "BIGINT"),
    ("first_of_seq", "BOOLEAN"),
)
RAW_COLUMNS["flow_run_facts"] = _FACT_FLOW_KEY + (
    ("jitter_s", "DOUBLE"),
    ("sent_pkts", "BIGINT"),
    ("recv_pkts", "BIGINT"),
    ("dropped_pkts", "BIGINT"),
    ("overheard_pkts", "BIGINT"),
    ("lost_pkts", "BIGINT"),
    ("tx_bytes", "BIGINT"),
    ("rx_bytes", "BIGINT"),
    ("delay_mean_s", "DOUBLE"),
    ("delay_p50_s", "DOUBLE"),
    ("delay_p95_s", "DOUBLE"),
    ("delay_p99_s", "DOUBLE"),
    ("t_first_send", "DOUBLE"),
    ("t_last_recv", "DOUBLE"),
    ("goodput_bytes_hdr0", "BIGINT"),
    ("goodput_bytes_hdr40", "BIGINT"),
)

# the study facts: rows of a sql/ view <table>_from_events that depend on a run's labels
# (run_metrics' on-period window) or read every event of it (RTT, the bottleneck's queue
# delay): not written at ingest (a sweep's runs would pay for them one by one, and a relabel
# would make them stale) but by `tracekit compact`, for every run of the generation, into its
# compacted files (tracekit.db.compaction); a run outside the generation, or changed since
# (compacted/changed/), gets them computed, as a stored fact of another definition does.
STUDY_FACTS: tuple[str, ...] = ("run_metric_facts",)
RAW_COLUMNS["run_metric_facts"] = (
    ("fid", "INTEGER"),
    ("src_node", "INTEGER"),
    ("src_port", "INTEGER"),
    ("dst_node", "INTEGER"),
    ("dst_port", "INTEGER"),
    ("source_view", "VARCHAR"),
    ("source_column", "VARCHAR"),
    ("value", "DOUBLE"),
)
# every table the views read as stored facts or compute (sql/*/<table>.sql over <table>_from_events)
VIEW_FACTS: tuple[str, ...] = FACT_TABLES + STUDY_FACTS

# the per-run tables (every table but the run record and the study facts)
TABLE_NAMES: tuple[str, ...] = tuple(t for t in RAW_COLUMNS if t != "runs" and t not in STUDY_FACTS)
