"""The stored tables: their columns, types and the store's schema version.

Every layer above the parsers (store, SQL views, CLI, dashboard) relies on these names.
The files hold no run_id column: a run's files live in `runs/run_id=<id>/` (hive-style), because
the id is the content hash, known only once a streamed trace has been read to its end. DuckDB
and polars read the id back from the directory name.
Bump SCHEMA_VERSION whenever a stored column changes meaning or type, and teach
`tracekit.store` to upgrade the older layout.
"""
from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = 1

# One-character event codes of the normal wired trace ('v' lines go to `annotations`).
WIRED_EVENTS = ("+", "-", "r", "d", "e", "h")

_DICT = pa.dictionary(pa.int32(), pa.string())

# events: one row per packet event of a normal wired trace, in file order.
EVENTS = pa.schema(
    [
        ("line_no", pa.int64()),      # 1-based line number in the (decompressed) trace
        ("event", _DICT),             # + - r d (e h rare)
        ("time", pa.float64()),       # seconds
        ("from_node", pa.int32()),    # link source node id
        ("to_node", pa.int32()),      # link destination node id
        ("ptype", _DICT),             # tcp, ack, cbr, ...
        ("size", pa.int32()),         # bytes, common-header size
        ("flags", _DICT),             # 7-character flag field, '-------' when none
        ("fid", pa.int32()),
        ("src_node", pa.int32()),     # node part of the node.port source address
        ("src_port", pa.int32()),
        ("dst_node", pa.int32()),
        ("dst_port", pa.int32()),
        ("seq", pa.int64()),          # segment number (one-way TCP), byte seq (FullTcp), CBR counter, -1
        ("pkt_id", pa.int64()),       # ns-2 packet uid
        # the 4 extra fields of `Trace set show_tcphdr_ 1` lines; NULL on 12-field lines
        ("tcp_ackno", pa.int64()),
        ("tcp_flags", pa.int32()),    # parsed from hex (0x10 -> 16)
        ("tcp_hlen", pa.int32()),
        ("sack_blocks", pa.int32()),
    ]
)

# annotations: the 'v' lines of a wired trace (trace-annotate, link-down/up), kept verbatim.
ANNOTATIONS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),
        ("text", pa.string()),        # everything after the time field
    ]
)

# tcp_vars: `$tcp attach $f; $tcp trace cwnd_` plain-format lines (a step function per var).
TCP_VARS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),
        ("src_node", pa.int32()),
        ("src_port", pa.int32()),
        ("dst_node", pa.int32()),
        ("dst_port", pa.int32()),
        ("var", _DICT),               # cwnd_, ssthresh_, rtt_, ...
        ("value", pa.float64()),
    ]
)

# queue_samples: queue monitor output. sample_kind 'periodic' = a `monitor-queue` sample
# (bytes/pkts are time averages over the last interval, counters cumulative since start);
# 'event' = a per-event `q -t` line (bytes/pkts instantaneous, counters NULL).
QUEUE_SAMPLES = pa.schema(
    [
        ("line_no", pa.int64()),
        ("sample_kind", _DICT),
        ("time", pa.float64()),
        ("from_node", pa.int32()),
        ("to_node", pa.int32()),
        ("bytes", pa.float64()),
        ("pkts", pa.float64()),
        ("arrivals_pkts", pa.int64()),
        ("departures_pkts", pa.int64()),
        ("drops_pkts", pa.int64()),
        ("arrivals_bytes", pa.int64()),
        ("departures_bytes", pa.int64()),
        ("drops_bytes", pa.int64()),
    ]
)

# red_vars: RED queue variable traces (`$redq trace curq_` ...). Q = curq_ (instantaneous),
# a = ave_ (EWMA), p = prob1_, c = cur_max_p_. Bytes unless queue_in_bytes_ is false.
RED_VARS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("var", _DICT),               # curq, ave, prob1, cur_max_p
        ("time", pa.float64()),
        ("value", pa.float64()),
    ]
)

# runs: one row per ingested trace (stored as runs/run_id=<id>/run.parquet).
LABEL = pa.struct([("key", pa.string()), ("value", pa.string())])
FLOW_LABEL = pa.struct([("fid", pa.int32()), ("name", pa.string())])
RUNS = pa.schema(
    [
        ("source", pa.string()),          # absolute path at ingest time
        ("sha256", pa.string()),          # of the decompressed content
        ("trace_kind", pa.string()),      # wired, tcpvar, queue_monitor, red
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

# table name -> schema, for the per-run files runs/run_id=<id>/<table>-NNNNN.parquet
TABLES = {
    "events": EVENTS,
    "annotations": ANNOTATIONS,
    "tcp_vars": TCP_VARS,
    "queue_samples": QUEUE_SAMPLES,
    "red_vars": RED_VARS,
}

# trace kind -> the table that holds its rows (n_events counts these)
MAIN_TABLE = {
    "wired": "events",
    "tcpvar": "tcp_vars",
    "queue_monitor": "queue_samples",
    "red": "red_vars",
}
