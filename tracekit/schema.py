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

# wireless_events: one row per event line of a wireless (CMU / mobile node) trace, old CMU
# format and new `-t` format alike (fmt says which); see docs/contract-wireless.md.
WIRELESS_EVENTS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("fmt", _DICT),               # old, new
        ("event", _DICT),             # s r f d (the old format's D is stored as d)
        ("time", pa.float64()),       # seconds
        ("node", pa.int32()),         # the node that wrote the line
        ("layer", _DICT),             # AGT RTR MAC IFQ (others as written)
        ("reason", _DICT),            # drop reason (COL, NRTE, IFQ, END, ...); NULL for ---
        ("pkt_id", pa.int64()),       # packet uid; 0 on MAC control frames, ARP, some routing packets
        ("ptype", _DICT),             # tcp ack cbr AODV DSR message ARP RTS CTS ACK; NULL: new-format MAC control
        ("size", pa.int32()),         # bytes at this layer; NULL: new-format MAC control frames
        ("mac_dur", pa.int64()),      # MAC header fields, parsed from hex
        ("mac_dst", pa.int64()),      # ffffffff (broadcast) = 4294967295
        ("mac_src", pa.int64()),
        ("mac_type", pa.int32()),     # 2048 = IP, 2054 = ARP
        ("src_node", pa.int32()),     # IP source node.port (-1 = broadcast node); NULL without IP header
        ("src_port", pa.int32()),
        ("dst_node", pa.int32()),
        ("dst_port", pa.int32()),
        ("ttl", pa.int32()),
        ("next_hop", pa.int32()),     # old: 0 when unset; new (-Hd): -2 unset, -1 broadcast
        ("fid", pa.int32()),          # new format only (-If)
        ("seq", pa.int64()),          # TCP seq or CBR seq
        ("tcp_ack", pa.int64()),
        ("n_forwards", pa.int32()),   # hop count field of tcp/cbr packets
        ("x", pa.float64()),          # node position, new format only
        ("y", pa.float64()),
        ("z", pa.float64()),
        ("detail", pa.string()),      # the rest of routing / ARP / other lines, verbatim
    ]
)

# wireless_movements: `M` lines (a node starts moving towards a destination).
WIRELESS_MOVEMENTS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),
        ("node", pa.int32()),
        ("x", pa.float64()),
        ("y", pa.float64()),
        ("z", pa.float64()),
        ("dest_x", pa.float64()),
        ("dest_y", pa.float64()),
        ("speed_mps", pa.float64()),
    ]
)

# wireless_energy: energy readings: old-format `[energy E ei I es S et T er R]` blocks (all
# five), new-format `-Ne` when an energy model is on, and the `N -t T -n NODE -e E` lines an
# energy model writes in both formats (energy only).
WIRELESS_ENERGY = pa.schema(
    [
        ("line_no", pa.int64()),
        ("time", pa.float64()),
        ("node", pa.int32()),
        ("energy_j", pa.float64()),
        ("idle_j", pa.float64()),
        ("sleep_j", pa.float64()),
        ("tx_j", pa.float64()),
        ("rx_j", pa.float64()),
    ]
)

# wireless_logs: DSR's own trace lines (SFs, SFf, SFESTs, Sconfig, ...), kept verbatim.
WIRELESS_LOGS = pa.schema(
    [
        ("line_no", pa.int64()),
        ("tag", _DICT),
        ("time", pa.float64()),
        ("node", pa.int32()),         # NULL when the line names none
        ("text", pa.string()),        # the rest of the line
    ]
)

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

# table name -> schema, for the per-run files runs/run_id=<id>/<table>-NNNNN.parquet
TABLES = {
    "events": EVENTS,
    "annotations": ANNOTATIONS,
    "tcp_vars": TCP_VARS,
    "queue_samples": QUEUE_SAMPLES,
    "red_vars": RED_VARS,
    "wireless_events": WIRELESS_EVENTS,
    "wireless_movements": WIRELESS_MOVEMENTS,
    "wireless_energy": WIRELESS_ENERGY,
    "wireless_logs": WIRELESS_LOGS,
}

# trace kind -> the table that holds its rows (n_events counts these)
MAIN_TABLE = {
    "wired": "events",
    "tcpvar": "tcp_vars",
    "queue_monitor": "queue_samples",
    "red": "red_vars",
    "wireless": "wireless_events",
}
