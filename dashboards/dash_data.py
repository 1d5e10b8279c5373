"""The dashboard's access to the store: every number comes from the sql/ views, every
metric's name, title, unit and direction from the catalogue (sql/catalogue.toml), every
verdict from tracekit.analysis.compare.

One DashStore per store state (the list of run ids plus the sql/ files' mtimes, so a new run
or an edited view gives fresh numbers): a DuckDB connection (tracekit.db.query.connect,
read-only) on which the views every page reads (flows, flow_stats, fairness, run_configs,
run_metrics, replication_stats) are computed once into temp tables of the same names. They
shadow the views, so the dependent views, tracekit.analysis.compare and the SQL page's queries reuse
them instead of recomputing flow_stats from the events (about 4 s per 100 runs, once per
state). The DashStore also keeps what the pages asked it for (whole views as frames, small
per-selection queries), so pages pass it around instead of (data_dir, state) strings.

The dashboard only filters, joins and pivots what the views return; a display needs two
derived numbers, the ends of a confidence interval (mean ± ci95_half_width) and the gap
between two means.
"""
from __future__ import annotations

import datetime
import hashlib
import json
import os
import sys
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import streamlit as st

from tracekit.analysis import compare as tk_compare
from tracekit.db.catalogue import Metric, metrics as catalogue
from tracekit.core.errors import TracekitError
from tracekit.db.query import ENV_MEMORY, QueryRun, connect, sql_dir, sql_files
from tracekit.store.compacted import changed_markers, current_generation
from tracekit.store.damage import run_dirs
from tracekit.store.store import Store, default_data_dir
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB is imported where it is used, not when this module is
    import duckdb

# Computed once per store state and shadowing the views of the same name (see docstring);
# in dependency order.
MATERIALIZED = ("flows", "flow_stats", "fairness", "run_configs", "run_metrics", "replication_stats")
# The full key of a flow (flows sharing fid 0 differ in their addresses; old-format wireless
# flows have no fid at all).
FLOW_KEY = ("run_id", "fid", "src_node", "src_port", "dst_node", "dst_port")
# Labels that are not scenario parameters.
NOT_PARAMS = ("scenario", "seed", "sim_id")
# Runs of these trace kinds hold packets and have flows (flow_stats).
from tracekit.formats.parsers import PACKET_KINDS  # noqa: E402
# The parameter that is a run's "series" (queue_type column): the queue discipline of a wired
# scenario, the routing protocol of a wireless one. Pages put it on colours, not on pins.
SERIES_PARAMS = ("queue", "routing")


def series_title(runs: pd.DataFrame) -> str:
    """What the queue_type column means for these runs."""
    if len(runs) and (runs["trace_kind"] == "wireless").all():
        return "Routing protocol"
    return "Queue type"


# ---------------------------------------------------------------------------------------
# the store and its state


def resolve_data_dir() -> Path:
    """`--data DIR` after `streamlit run app.py --`, else $TRACEKIT_DATA, else ./tracekit-data."""
    argv = sys.argv
    if argv and Path(argv[0]).name == "app.py":
        for i, a in enumerate(argv[1:], start=1):
            if a == "--data" and i + 1 < len(argv):
                return Path(argv[i + 1])
            if a.startswith("--data="):
                return Path(a.split("=", 1)[1])
    return default_data_dir()


@dataclass(frozen=True)
class StoreStatus:
    data_dir: Path
    run_ids: tuple[str, ...] = ()
    problem: str = ""            # why the store cannot be read ('' when it can)
    compacted: str = ""          # the current compacted generation and its changed-run markers

    @property
    def empty(self) -> bool:
        return not self.run_ids

    @property
    def state(self) -> str:
        """Changes whenever a run is added or removed or a sql/ file is edited."""
        h = hashlib.sha256()
        h.update(str(self.data_dir.resolve()).encode())
        for r in self.run_ids:
            h.update(r.encode())
        h.update(self.compacted.encode())
        try:
            for f in [*(f.path for f in sql_files()), sql_dir() / "catalogue.toml"]:
                st_ = f.stat()
                h.update(f"{f.relative_to(sql_dir())}:{st_.st_mtime_ns}:{st_.st_size}".encode())
        except TracekitError:
            pass
        return h.hexdigest()[:20]


def store_status(data_dir: Path) -> StoreStatus:
    """The store's state, on every script run: one readdir of runs/ (run directories appear and
    go by one rename, so their names are the runs; a damaged one is left out by the views that
    meet it, not here: checking every file of 20,000 runs took seconds a rerun), the current
    compacted generation and its changed-run markers (a relabel of a compacted run)."""
    try:
        store = Store(data_dir)
        if not store.exists:
            return StoreStatus(data_dir)
        gen = current_generation(store.root)
        compacted = " ".join([gen.name if gen is not None else "", *sorted(changed_markers(store.root))])
        return StoreStatus(data_dir, tuple(r for r, _ in run_dirs(store.runs_dir)), compacted=compacted)
    except TracekitError as e:          # not a store, or its runs/ cannot be listed
        return StoreStatus(data_dir, problem=str(e))


# ---------------------------------------------------------------------------------------
# whole views, once per state


def _queue_type(labels: dict, scenario: str | None, kind: str = "wired") -> str:
    """The bottleneck queue discipline: the `queue` label, else what the bundled scenario's
    declaration says its series parameter means (newreno-vs-reno's `config=red` is RED), else
    DropTail for a bundled scenario. For a wireless run, its routing protocol (the `routing` label)."""
    from tracekit.experiments import SCENARIOS, series_value

    if kind == "wireless":
        return labels.get("routing") or "(unknown)"
    if labels.get("queue"):
        return labels["queue"]
    return series_value(scenario, labels) or ("DropTail" if scenario in SCENARIOS else "(unknown)")


def _named(df: pd.DataFrame) -> pd.DataFrame:
    """Flows without a name (traces ingested without --flow-label, old-format wireless flows,
    which have no fid) are shown as 'fid N (ptype)', or 'ptype src.port→dst.port' without a fid."""
    if "name" in df.columns and df["name"].isna().any():
        fid = df["fid"].astype("Int64").astype(str)
        ptype = df["ptype"].fillna("?") if "ptype" in df.columns else pd.Series("?", index=df.index)
        label = ("fid " + fid + " (" + ptype + ")").where(df["fid"].notna(), ptype + " " + df["src_node"].astype(str)
                 + "." + df["src_port"].astype(str) + "→" + df["dst_node"].astype(str) + "." + df["dst_port"].astype(str))
        df = df.assign(name=df["name"].fillna(label))
    return df


def _py(v):
    """A pandas cell as a DuckDB parameter (NaN and NA are NULL)."""
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return None
    return v.item() if hasattr(v, "item") else v


class DashStore:
    """One store state: its connection (the views every page reads materialised, see the
    module docstring) and what the pages asked of it, kept for as long as the state lives."""

    MEMO_ENTRIES = 256

    def __init__(self, status: StoreStatus):
        self.status = status
        self.con = connect(status.data_dir)
        # DuckDB connections are not to be shared between Streamlit's session threads without one
        self.lock = threading.RLock()
        self.failed: dict[str, str] = {}
        self._memo: OrderedDict = OrderedDict()
        self._arrow: dict | None = None
        for view in MATERIALIZED:
            try:
                self.con.execute(f"CREATE TEMP TABLE {view} AS SELECT * FROM main.{view}")
            except Exception as e:  # a view under repair: its pages say so, the rest work
                self.failed[view] = str(e).splitlines()[0]

    @property
    def data_dir(self) -> Path:
        return self.status.data_dir

    def df(self, sql: str, params: list | None = None) -> pd.DataFrame:
        with self.lock:
            return self.con.execute(sql, params or []).df()

    def _memoised(self, key: tuple, compute):
        """compute() once per key; frames are handed out as copies (pandas copy-on-write makes
        that cheap), so a page changing its frame does not change the next page's."""
        with self.lock:
            if key in self._memo:
                self._memo.move_to_end(key)
                value = self._memo[key]
            else:
                value = compute()
                self._memo[key] = value
                while len(self._memo) > self.MEMO_ENTRIES:
                    self._memo.popitem(last=False)
        if isinstance(value, pd.DataFrame):
            return value.copy(deep=False)
        if isinstance(value, tuple) and value and isinstance(value[0], pd.DataFrame):
            return (value[0].copy(deep=False), *value[1:])
        return value

    def _whole(self, view: str) -> pd.DataFrame:
        if view in self.failed:
            raise TracekitError(f"the {view} view failed: {self.failed[view]}")
        return self.df(f"SELECT * FROM {view}")

    # -- whole views -------------------------------------------------------------------

    def runs(self) -> pd.DataFrame:
        """The runs view, with each label as a column of its own (strings) and queue_type."""
        def compute():
            df = self.df("SELECT run_id, scenario, seed, trace_kind, n_events, t_start, t_end, source, labels "
                         "FROM runs ORDER BY scenario, run_id")
            labels = [dict(x) if x is not None else {} for x in df.pop("labels")]
            keys = sorted({k for d in labels for k in d if k not in ("scenario", "seed")})
            for k in keys:
                col = k if k not in df.columns else f"label.{k}"
                df[col] = [d.get(k) for d in labels]
            if "sim_id" not in df.columns:
                df["sim_id"] = None
            df["queue_type"] = [_queue_type(d, s, k) for d, s, k in zip(labels, df["scenario"], df["trace_kind"])]
            df.attrs["label_keys"] = keys
            return df
        return self._memoised(("runs",), compute)

    def flow_stats(self) -> pd.DataFrame:
        return self._memoised(("flow_stats",), lambda: _named(self._whole("flow_stats")))

    def fairness(self) -> pd.DataFrame:
        return self._memoised(("fairness",), lambda: self._whole("fairness"))

    def run_configs(self) -> pd.DataFrame:
        return self._memoised(("run_configs",), lambda: self._whole("run_configs"))

    def replication(self) -> pd.DataFrame:
        return self._memoised(("replication_stats",), lambda: self._whole("replication_stats"))

    def pooled_replication(self) -> pd.DataFrame:
        """replication_stats' columns, with the seeds of a configuration pooled per flow
        name: replication_stats keeps a flow's addresses in its key, so where they change
        from seed to seed (a MANET scenario draws each seed's end points at random: 'CBR 1'
        is a different pair of nodes in every seed) it has one row per seed, and a chart of
        it drew one bar per seed on top of the others. Here a flow is (fid, name) unless
        several flows of one run share them (flows sharing fid 0 and a name): those keep their
        addresses. Same formulas as replication_stats (mean, sample stddev, the macro ci95_half_width);
        `addresses`: how many distinct address pairs were pooled."""
        def compute():
            if "run_metrics" in self.failed:
                raise TracekitError(f"the run_metrics view failed: {self.failed['run_metrics']}")
            return self.df("""
                WITH m AS (
                    SELECT *, count(*) OVER (PARTITION BY run_id, fid, name, metric) AS same_key
                    FROM run_metrics
                ),
                agg AS (
                    SELECT scenario, config, fid, name,
                           CASE WHEN same_key > 1 THEN src_node END AS src_node,
                           CASE WHEN same_key > 1 THEN src_port END AS src_port,
                           CASE WHEN same_key > 1 THEN dst_node END AS dst_node,
                           CASE WHEN same_key > 1 THEN dst_port END AS dst_port,
                           metric,
                           count(value) AS n_runs, avg(value) AS mean, stddev_samp(value) AS stddev,
                           list_sort(list(seed) FILTER (WHERE value IS NOT NULL)) AS seeds,
                           count(DISTINCT (src_node, src_port, dst_node, dst_port)) AS addresses
                    FROM m
                    GROUP BY ALL
                )
                SELECT scenario, config, fid, name, src_node, src_port, dst_node, dst_port, metric,
                       n_runs, mean, stddev, ci95_half_width(n_runs, stddev) AS ci95_half_width,
                       seeds, addresses
                FROM agg""")
        return self._memoised(("pooled_replication",), compute)

    def series_names(self) -> list[str]:
        """Every flow name and queue type (or routing protocol) of the store, in natural
        order: what dash_ui gives its colours from, so a name keeps its colour on every page."""
        return self._memoised(("series_names",), lambda: natural_sorted(
            list(self.flow_stats()["name"].dropna().unique()) + list(self.runs()["queue_type"].dropna().unique())))

    def metrics(self, level: str | None = None, source_view: str | None = None) -> dict[str, Metric]:
        """The catalogued metrics (in catalogue order) whose source column this store's views
        have, of one level and source view if given."""
        def compute():
            have = {}
            for view in {m.source_view for m in catalogue().values()}:
                try:
                    have[view] = set(self.df(f"SELECT * FROM {view} LIMIT 0").columns)
                except Exception:
                    have[view] = set()
            return {k: m for k, m in catalogue().items() if m.source_column in have[m.source_view]}
        avail = self._memoised(("metrics",), compute)
        return {k: m for k, m in avail.items()
                if (level is None or m.level == level) and (source_view is None or m.source_view == source_view)}

    # -- per selection -----------------------------------------------------------------

    def throughput_series(self, run_ids: tuple[str, ...], bin_s: float) -> pd.DataFrame:
        return self._memoised(("throughput_series", run_ids, bin_s), lambda: _named(self.df(
            "SELECT s.*, f.ptype FROM throughput_series(?) s JOIN flow_stats f "
            "ON f.run_id = s.run_id AND f.fid IS NOT DISTINCT FROM s.fid AND f.src_node = s.src_node "
            "AND f.src_port = s.src_port AND f.dst_node = s.dst_node AND f.dst_port = s.dst_port "
            "WHERE list_contains(?, s.run_id) ORDER BY s.run_id, s.fid, s.t",
            [float(bin_s), list(run_ids)])))

    def cwnd(self, run_ids: tuple[str, ...]) -> pd.DataFrame:
        return self._memoised(("cwnd", run_ids), lambda: self.df(
            "SELECT run_id, time, src_node, src_port, dst_node, dst_port, value FROM tcp_vars "
            "WHERE var = 'cwnd_' AND list_contains(?, run_id) ORDER BY run_id, src_node, src_port, time",
            [list(run_ids)]))

    def cwnd_series(self, run_ids: tuple[str, ...]) -> pd.DataFrame:
        """Two-column `time value` files labelled var=cwnd (a Tcl proc's samples of cwnd_)."""
        return self._memoised(("cwnd_series", run_ids), lambda: self.df(
            "SELECT run_id, time, value, flow FROM series "
            "WHERE var IN ('cwnd', 'cwnd_') AND list_contains(?, run_id) ORDER BY run_id, flow, line_no",
            [list(run_ids)]))

    def queue_samples(self, run_ids: tuple[str, ...]) -> pd.DataFrame:
        return self._memoised(("queue_samples", run_ids), lambda: self.df(
            "SELECT run_id, sample_kind, time, from_node, to_node, bytes, pkts FROM queue_samples "
            "WHERE list_contains(?, run_id) ORDER BY run_id, from_node, to_node, sample_kind, time",
            [list(run_ids)]))

    def group_means(self, flows: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
        """Per group, the number of flows and the mean of each flow_stats column, over the flows
        given as rows of `flows` (the full FLOW_KEY and a `group` column). DuckDB joins them
        back to flow_stats on the whole key, NULL fids included (old-format wireless flows)."""
        empty = pd.DataFrame(columns=["group", "flows", *columns])
        if flows.empty:
            return empty
        keyed = tuple(tuple(_py(v) for v in row) for row in flows[[*FLOW_KEY, "group"]].itertuples(index=False))
        cols = ", ".join(f"avg(s.{c}) AS {c}" for c in columns)
        on = " AND ".join(f"s.{k} IS NOT DISTINCT FROM sel.{k}" for k in FLOW_KEY)

        def compute():
            lists = [list(x) for x in zip(*keyed)]
            return self.df(
                "WITH sel AS (SELECT unnest(CAST(? AS VARCHAR[])) AS run_id, unnest(CAST(? AS BIGINT[])) AS fid, "
                "unnest(CAST(? AS BIGINT[])) AS src_node, unnest(CAST(? AS BIGINT[])) AS src_port, "
                "unnest(CAST(? AS BIGINT[])) AS dst_node, unnest(CAST(? AS BIGINT[])) AS dst_port, "
                "unnest(CAST(? AS VARCHAR[])) AS grp) "
                f"SELECT sel.grp AS \"group\", count(*) AS flows, {cols} "
                f"FROM flow_stats s JOIN sel ON {on} GROUP BY sel.grp ORDER BY sel.grp", lists)
        return self._memoised(("group_means", keyed, columns), compute)

    def _materialised_tables(self) -> dict:
        """The materialised views as Arrow tables (made once, on first use), for the typed
        queries' own connections to read instead of recomputing them."""
        with self.lock:
            if self._arrow is None:
                self._arrow = {v: self.con.sql(f"SELECT * FROM {v}").to_arrow_table()
                               for v in MATERIALIZED if v not in self.failed}
            return self._arrow

    def user_query_done(self, query: str, max_rows: int) -> tuple[pd.DataFrame, bool] | None:
        """The result of an earlier run of this typed query on this store state, if any."""
        key = ("user_query", query, max_rows)
        with self.lock:
            if key not in self._memo:
                return None
            self._memo.move_to_end(key)
            df, cut = self._memo[key]
        return df.copy(deep=False), cut

    def start_user_query(self, query: str, max_rows: int, timeout_s: float) -> QueryRun:
        """A read-only query typed on the SQL page, started in a thread on its own short-lived
        connection (tracekit.db.query.QueryRun: connect() with the limits, run_query refusing
        anything that is not a query, stopped after timeout_s or by cancel()), so no session
        sees what another's query did or waits for it. The materialised views are registered
        on it as read-only Arrow tables that shadow the views, as the temp tables do on the
        shared connection. Its result: at most max_rows rows and whether it cut; kept, for the
        same query on this store state."""
        tables = self._materialised_tables()
        key = ("user_query", query, max_rows)

        def setup(con: duckdb.DuckDBPyConnection) -> None:
            for name, table in tables.items():
                con.register(name, table)

        def fetch(rel) -> tuple[pd.DataFrame, bool]:
            df = rel.limit(max_rows + 1).df()
            result = (df.head(max_rows), len(df) > max_rows)
            with self.lock:
                self._memo[key] = result
                while len(self._memo) > self.MEMO_ENTRIES:
                    self._memo.popitem(last=False)
            return result

        return QueryRun(self.data_dir, query, fetch, timeout_s=timeout_s, setup=setup,
                        hints={"timeout": "the page's timeout", "memory": ENV_MEMORY}).start()

    def compare(self, scenario: str, factor: str, metrics: tuple[str, ...], per: tuple[str, ...],
                run_ids: tuple[str, ...], names: tuple[str, ...] | None) -> tk_compare.Comparison:
        """tracekit.analysis.compare's verdicts on these runs (and flows of these names)."""
        where = (tk_compare.Filter("name", tuple(names)),) if names else ()

        def compute():
            with self.lock:
                return tk_compare.compare(self.con, scenario, factor, metrics, per=per, where=where, run_ids=run_ids)
        return self._memoised(("compare", scenario, factor, metrics, per, run_ids, names), compute)

    # -- papers (tracekit reproduce) -----------------------------------------------------

    def experiment_runs(self, experiment: str, quick: bool) -> tuple[int, int] | None:
        """(the experiment's simulations in the store, simulations it plans), of its quick
        version with quick; None for an experiment (or quick version) the registry lacks."""
        def compute():
            try:
                with self.lock:
                    ids, planned = tk_compare.experiment_run_ids(self.con, experiment, quick)
            except TracekitError:
                return None
            return len(ids), planned
        return self._memoised(("experiment_runs", experiment, quick), compute)

    def reproduce(self, experiment: str, quick: bool, papers_dir: Path | None) -> dict:
        """tracekit.analysis.reproduce.evaluate on this connection (the runs in the store; nothing is
        simulated), as the JSON `tracekit reproduce` saves, with `when` (now) and
        `evaluated_here`. Not written to the store: the dashboard only reads it."""
        from tracekit.analysis import reproduce as rp

        def files_state() -> tuple:
            d = papers_dir or rp.PAPERS_DIR
            return tuple((p.name, p.stat().st_mtime_ns) for p in sorted(Path(d).glob("*.toml")))

        def compute():
            papers, problem = load_papers(papers_dir)
            if problem:
                raise TracekitError(problem)
            with self.lock:
                res = rp.evaluate(self.con, experiment, quick=quick, papers=papers)
            when = datetime.datetime.now().isoformat(timespec="seconds")
            return json.loads(json.dumps({**res.as_dict(), "when": when, "evaluated_here": True}, default=str))
        return self._memoised(("reproduce", experiment, quick, str(papers_dir), files_state()), compute)

    # -- distributions, drops, queues, TCP (the Distributions, Links and TCP pages) ------------

    def packet_delays(self, run_ids: tuple[str, ...], limit: int = 300_000) -> tuple[pd.DataFrame, int]:
        """Every delivered data packet of these runs (the packet_delays view) with its flow's
        key and ptype, delay in ms (packet_delays.delay_ms); at most `limit` rows (a uniform sample of them
        beyond: reservoir, fixed seed); second value: how many there are in all."""
        def compute():
            base = ("FROM packet_delays WHERE t_recv IS NOT NULL AND list_contains(?, run_id)")
            (n,) = self.con.execute(f"SELECT count(*) {base}", [list(run_ids)]).fetchone() or (0,)
            sample = f" USING SAMPLE reservoir({limit} ROWS) REPEATABLE (1)" if n > limit else ""
            df = _named(self.df(
                "SELECT p.run_id, p.fid, p.src_node, p.src_port, p.dst_node, p.dst_port, p.ptype, "
                "p.delay_ms, f.name "
                f"FROM (SELECT * {base}{sample}) p LEFT JOIN flow_stats f ON f.run_id = p.run_id "
                "AND f.fid IS NOT DISTINCT FROM p.fid AND f.src_node = p.src_node AND f.src_port = p.src_port "
                "AND f.dst_node = p.dst_node AND f.dst_port = p.dst_port", [list(run_ids)]))
            return df, int(n)
        return self._memoised(("packet_delays", run_ids, limit), compute)

    def drops_series(self, run_ids: tuple[str, ...], bin_s: float) -> pd.DataFrame:
        """Drops (`d` events) per bin of bin_s seconds, per run, link (from_node -> to_node)
        and flow: the data flow's key when the packet is one of a flow's data packets
        (data_events), else NULL (an ACK, a routing packet)."""
        return self._memoised(("drops_series", run_ids, bin_s), lambda: _named(self.df(
            "WITH d AS (SELECT e.run_id, e.time, e.from_node, e.to_node, e.pkt_id, e.ptype, "
            "       de.fid, de.src_node, de.src_port, de.dst_node, de.dst_port "
            "  FROM events e LEFT JOIN data_events de ON de.run_id = e.run_id AND de.line_no = e.line_no "
            "  WHERE e.event = 'd' AND list_contains(?, e.run_id)) "
            "SELECT d.run_id, floor(d.time / ?) * ? AS t, d.from_node, d.to_node, d.fid, d.src_node, d.src_port, "
            "       d.dst_node, d.dst_port, any_value(d.ptype) AS ptype, count(*) AS drops, "
            "       any_value(f.name) AS name, bool_or(d.src_node IS NOT NULL) AS is_data "
            "FROM d LEFT JOIN flow_stats f ON f.run_id = d.run_id AND f.fid IS NOT DISTINCT FROM d.fid "
            "  AND f.src_node = d.src_node AND f.src_port = d.src_port AND f.dst_node = d.dst_node AND f.dst_port = d.dst_port "
            "GROUP BY ALL ORDER BY d.run_id, t", [list(run_ids), float(bin_s), float(bin_s)])))

    def link_stats(self, run_ids: tuple[str, ...]) -> pd.DataFrame:
        """Per run and link: queue_delay (pkts, mean_ms, p95_ms) and the drops there (`d`
        events whose from_node -> to_node is the link)."""
        return self._memoised(("link_stats", run_ids), lambda: self.df(
            "WITH dr AS (SELECT run_id, from_node, to_node, count(*) AS drops FROM events "
            "            WHERE event = 'd' AND list_contains(?, run_id) GROUP BY ALL), "
            "q AS (SELECT * FROM queue_delay WHERE list_contains(?, run_id)) "
            "SELECT coalesce(q.run_id, dr.run_id) AS run_id, coalesce(q.from_node, dr.from_node) AS from_node, "
            "       coalesce(q.to_node, dr.to_node) AS to_node, coalesce(q.pkts, 0) AS queued_pkts, "
            "       q.mean_ms AS mean_queue_delay_ms, q.p95_ms AS p95_queue_delay_ms, coalesce(dr.drops, 0) AS drops "
            "FROM q FULL JOIN dr ON q.run_id = dr.run_id AND q.from_node = dr.from_node AND q.to_node = dr.to_node "
            "ORDER BY 1, 2, 3", [list(run_ids), list(run_ids)]))

    def red_vars(self, run_ids: tuple[str, ...]) -> pd.DataFrame:
        return self._memoised(("red_vars", run_ids), lambda: self.df(
            "SELECT run_id, var, time, value FROM red_vars WHERE list_contains(?, run_id) ORDER BY run_id, var, time",
            [list(run_ids)]))

    def rtt_samples(self, run_ids: tuple[str, ...]) -> pd.DataFrame:
        return self._memoised(("rtt_samples", run_ids), lambda: _named(self.df(
            "SELECT s.*, s.rtt_s * 1000 AS rtt_ms, f.name, f.ptype FROM rtt_samples s JOIN flow_stats f "
            "ON f.run_id = s.run_id AND f.fid IS NOT DISTINCT FROM s.fid AND f.src_node = s.src_node "
            "AND f.src_port = s.src_port AND f.dst_node = s.dst_node AND f.dst_port = s.dst_port "
            "WHERE list_contains(?, s.run_id) ORDER BY s.run_id, s.fid, s.t_send_s", [list(run_ids)])))

    def retransmissions(self, run_ids: tuple[str, ...]) -> pd.DataFrame:
        return self._memoised(("retransmissions", run_ids), lambda: _named(self.df(
            "SELECT x.*, f.name, f.ptype FROM retransmissions x JOIN flow_stats f "
            "ON f.run_id = x.run_id AND f.fid IS NOT DISTINCT FROM x.fid AND f.src_node = x.src_node "
            "AND f.src_port = x.src_port AND f.dst_node = x.dst_node AND f.dst_port = x.dst_port "
            "WHERE list_contains(?, x.run_id) ORDER BY x.run_id, x.fid", [list(run_ids)])))

    def time_sequence(self, run_id: str, flow: tuple) -> dict[str, pd.DataFrame]:
        """One flow's tcptrace-style time-sequence facts: `sent` (every data packet sent at the
        source: t_sent, seq, retransmission = the retransmissions view's rule: an earlier
        packet of the flow carried its seq), `drops` (its data packets' `d` events: time, seq,
        link) and `acks` (acks arriving at the source: time, ack seq; one-way TCP)."""
        fid, sn, sp, dn, dp = flow

        def compute():
            key = [run_id, fid, sn, sp, dn, dp]
            on = ("run_id = ? AND fid IS NOT DISTINCT FROM ? AND src_node = ? AND src_port = ? "
                  "AND dst_node = ? AND dst_port = ?")
            sent = self.df(
                "SELECT t_sent AS time, seq, pkt_id, t_recv IS NOT NULL AS delivered, "
                "  seq_key IS NOT NULL AND row_number() OVER (PARTITION BY seq_key ORDER BY t_sent, pkt_id) > 1 "
                "    AS retransmission "
                f"FROM packets WHERE {on} AND t_sent IS NOT NULL ORDER BY t_sent, pkt_id", key)
            drops = self.df(f"SELECT time, seq, pkt_id, from_node, to_node FROM data_events WHERE {on} "
                            "AND event = 'd' ORDER BY time", key)
            acks = self.df(
                "SELECT time, seq AS ack FROM events WHERE run_id = ? AND fid IS NOT DISTINCT FROM ? AND src_node = ? "
                "AND src_port = ? AND dst_node = ? AND dst_port = ? AND event = 'r' AND ptype = 'ack' AND to_node = ? "
                "ORDER BY time", [run_id, fid, dn, dp, sn, sp, sn])
            return {"sent": sent, "drops": drops, "acks": acks}
        return self._memoised(("time_sequence", run_id, flow), compute)

    def movements(self, run_id: str) -> pd.DataFrame:
        return self._memoised(("movements", run_id), lambda: self.df(
            "SELECT node, time, x, y, dest_x, dest_y, speed_mps FROM wireless_movements WHERE run_id = ? "
            "ORDER BY node, time, line_no", [run_id]))

    # -- wireless ------------------------------------------------------------------------

    def wireless_run_stats(self, run_ids: tuple[str, ...]) -> pd.DataFrame:
        return self._memoised(("wireless_run_stats", run_ids), lambda: self.df(
            "SELECT w.*, o.routing_sent_pkts, o.routing_fwd_pkts, o.routing_bytes, o.data_recv_pkts "
            "FROM wireless_run_stats w JOIN routing_overhead o ON o.run_id = w.run_id "
            "WHERE list_contains(?, w.run_id) ORDER BY w.run_id", [list(run_ids)]))

    def wireless_drops_by_group(self, groups: tuple[tuple[str, str], ...]) -> pd.DataFrame:
        """Per group of runs (e.g. a routing protocol) and drop layer and reason: drop lines per
        run (the group's wireless_drops summed, over the number of runs in the group)."""
        if not groups:
            return pd.DataFrame(columns=["group", "layer", "reason", "runs", "drops_per_run"])
        return self._memoised(("wireless_drops", groups), lambda: self.df(
            "WITH sel AS (SELECT unnest(?) AS run_id, unnest(?) AS grp), "
            "n AS (SELECT grp, count(*) AS runs FROM sel GROUP BY grp) "
            "SELECT sel.grp AS \"group\", d.layer, coalesce(d.reason, '(none)') AS reason, any_value(n.runs) AS runs, "
            "sum(d.drops) / any_value(n.runs) AS drops_per_run "
            "FROM wireless_drops d JOIN sel USING (run_id) JOIN n USING (grp) "
            "GROUP BY sel.grp, d.layer, coalesce(d.reason, '(none)') ORDER BY 1, 2, 3",
            [[g[0] for g in groups], [g[1] for g in groups]]))

    def node_forwarding(self, run_id: str) -> pd.DataFrame:
        return self._memoised(("node_forwarding", run_id), lambda: self.df(
            "SELECT node, fwd_data_pkts, fwd_data_bytes, fwd_routing_pkts FROM node_forwarding "
            "WHERE run_id = ? ORDER BY node", [run_id]))


@st.cache_resource(max_entries=2, show_spinner=False)
def _open_store(data_dir: str, state: str, _status: StoreStatus) -> DashStore:
    return DashStore(_status)


def open_store(status: StoreStatus) -> DashStore:
    """The DashStore of this store state (one per state, shared by every session)."""
    return _open_store(str(status.data_dir), status.state, status)


# ---------------------------------------------------------------------------------------
# the sidebar's selection


def natural_sorted(values) -> list:
    """Numbers in numeric order (as the label strings they are), then the rest alphabetically."""
    def key(v):
        try:
            return (0, float(v), "")
        except (TypeError, ValueError):
            return (1, 0.0, str(v))
    return sorted({v for v in values if v is not None and v == v}, key=key)


def as_number(values: pd.Series) -> pd.Series | None:
    """The label strings as floats, or None when one of them is not a number."""
    try:
        return pd.to_numeric(values, errors="raise")
    except (TypeError, ValueError):
        return None


@dataclass
class Selection:
    """What the sidebar selected: the runs and flows every page shows."""

    store: DashStore
    scenario: str | None
    runs: pd.DataFrame               # every run of the store (DashStore.runs)
    wired: pd.DataFrame              # the selected packet-trace runs, wired or wireless (rows of runs)
    flows: pd.DataFrame              # flow_stats rows of the selected runs and flow names, with the runs' labels
    names: list[str]                 # selected flow names
    seed: int | None                 # one seed, or None for all
    params: list[str]                # the scenario's parameter labels
    varying: list[str] = field(default_factory=list)   # parameters with several values among `wired`

    @property
    def run_ids(self) -> tuple[str, ...]:
        return tuple(self.wired["run_id"])

    @property
    def series_title(self) -> str:
        """'Queue type', or 'Routing protocol' for wireless runs (see SERIES_PARAMS)."""
        return series_title(self.wired)

    @property
    def wireless_ids(self) -> tuple[str, ...]:
        return tuple(self.wired[self.wired["trace_kind"] == "wireless"]["run_id"])

    @property
    def series_param(self) -> str | None:
        """The label behind the queue_type column when it varies among the selected runs
        (queue, or routing for wireless runs), else None."""
        return next((k for k in SERIES_PARAMS if k in self.varying), None)

    def compare(self, factor: str, metrics, per=(), pinned: dict | None = None) -> tk_compare.Comparison | str:
        """tracekit.analysis.compare's verdicts on the selected runs (at the pinned parameter values)
        and flow names; a string says why there are none."""
        runs = self.wired
        for k, v in (pinned or {}).items():
            if k in runs.columns:
                runs = runs[runs[k] == v]
        if self.scenario is None:
            return "runs without a scenario label are not replications of a configuration: no verdict"
        try:
            return self.store.compare(self.scenario, factor, tuple(metrics), tuple(per), tuple(runs["run_id"]),
                                      tuple(self.names))
        except TracekitError as e:
            return str(e)

    def setup_of(self, row) -> str:
        """How a run is told apart in legends: its variant or pair, queue and varying parameters."""
        parts = []
        for k in ("variant", "pair"):
            if k in row and isinstance(row[k], str):
                parts.append(row[k])
        if row.get("queue_type") and len(set(self.wired["queue_type"])) > 1:
            parts.append(row["queue_type"])
        for k in self.varying:
            if k not in ("variant", "pair", *SERIES_PARAMS) and isinstance(row.get(k), str):
                parts.append(f"{k}={row[k]}")
        if self.seed is None and pd.notna(row.get("seed")):
            parts.append(f"seed {int(row['seed'])}")
        return " · ".join(parts) or str(row["run_id"])

    def configs(self) -> pd.DataFrame:
        """run_configs rows of the selected runs, with the runs' labels."""
        rc = self.store.run_configs()
        rc = rc[rc["run_id"].isin(self.run_ids)][["run_id", "config"]]
        return rc.merge(self.wired, on="run_id")

    def replication(self) -> tuple[pd.DataFrame, list[str]]:
        """replication_stats rows of the selected configurations, one per config, flow and
        metric, with the configuration's labels; plus the labels that split runs which
        differ in nothing else but their seed into several configurations (should be [])."""
        cfg = self.configs()
        rep = self.store.pooled_replication()
        if cfg.empty:
            return rep.iloc[0:0], []
        label_cols = [c for c in self.params + ["queue_type"] if c in cfg.columns]
        per_cfg = cfg.drop_duplicates("config").set_index("config")[label_cols]
        rep = rep[(rep["scenario"] == self.scenario) & rep["config"].isin(per_cfg.index)]
        rep = rep[rep["name"].isin(self.names) | (rep["metric"] == "jain_index")]
        rep = rep.merge(per_cfg, left_on="config", right_index=True, how="left")
        # labels other than the parameters and the seed that split otherwise equal
        # configurations (run_configs should leave such labels out: then this is empty)
        splitters: list[str] = []
        dupes = per_cfg[per_cfg.duplicated(keep=False)]
        if not dupes.empty:
            extra = [c for c in cfg.columns if c in self.runs.attrs.get("label_keys", [])
                     and c not in label_cols and c != "seed"]
            sub = cfg[cfg["config"].isin(dupes.index)]
            splitters = [c for c in extra
                         if sub.groupby(label_cols, dropna=False)[c].nunique().max() > 1]
        tag = cfg.drop_duplicates("config").set_index("config")[splitters].astype(str) if splitters else None
        rep["config_tag"] = ("" if tag is None else
                             rep["config"].map(tag.apply(lambda r: ",".join(f"{c}={v[:8]}" for c, v in r.items()), axis=1)))
        return rep, splitters


def select(store: DashStore, scenario: str | None, names: list[str], queues: list[str],
           param_values: dict[str, list[str]], seed: int | None) -> Selection:
    """Apply the sidebar's choices to the store's runs and flows."""
    runs = store.runs()
    fs = store.flow_stats()
    wired = runs[runs["trace_kind"].isin(PACKET_KINDS)]
    wired = wired[wired["scenario"] == scenario] if scenario is not None else wired[wired["scenario"].isna()]
    params = scenario_params(runs, scenario)
    if queues:
        wired = wired[wired["queue_type"].isin(queues)]
    for k, vals in param_values.items():
        if k in wired.columns and vals:
            wired = wired[wired[k].isin(vals)]
    if seed is not None:
        wired = wired[wired["seed"] == seed]
    flows = fs[fs["run_id"].isin(wired["run_id"]) & fs["name"].isin(names)]
    wired = wired[wired["run_id"].isin(flows["run_id"])]
    flows = flows.merge(wired, on="run_id", how="inner", suffixes=("", "_run"))
    varying = [k for k in params if k in wired.columns and wired[k].nunique() > 1]
    return Selection(store, scenario, runs, wired.reset_index(drop=True), flows.reset_index(drop=True),
                     names, seed, params, varying)


def scenario_params(runs: pd.DataFrame, scenario: str | None) -> list[str]:
    """The labels of the scenario's runs that are parameters (not scenario/seed/sim_id)."""
    sub = runs[(runs["scenario"] == scenario) if scenario is not None else runs["scenario"].isna()]
    keys = [k for k in runs.attrs.get("label_keys", []) if k not in NOT_PARAMS]
    cols = [k if k in sub.columns else f"label.{k}" for k in keys]
    return [c for c in cols if c in sub.columns and sub[c].notna().any()]


def scenario_counts(store: DashStore) -> tuple[pd.DataFrame, pd.Series]:
    """The store's packet-trace runs and their number per scenario ('(no scenario)' for runs
    without one), once per store state."""
    def compute():
        runs = store.runs()
        wired = runs[runs["trace_kind"].isin(PACKET_KINDS)]
        return wired, wired["scenario"].fillna("(no scenario)").value_counts()
    wired, counts = store._memoised(("scenario_counts",), compute)
    return wired.copy(deep=False), counts.copy(deep=False)


@dataclass(frozen=True)
class ScenarioChoices:
    """What the sidebar offers for one scenario: its packet-trace runs, flow names (all, TCP),
    queue types, each parameter's values and the seeds, in the order shown."""
    runs: pd.DataFrame
    names: list[str]
    tcp: list[str]
    queues: list
    levels: dict[str, list]
    seeds: list[int]


def scenario_choices(store: DashStore, scenario: str | None) -> ScenarioChoices:
    """The sidebar's options for `scenario`, once per store state and scenario (on a store of
    20,000 runs, filtering and sorting them again took most of a rerun after a control change)."""
    def compute():
        wired, _ = scenario_counts(store)
        sub = wired[(wired["scenario"] == scenario) if scenario is not None else wired["scenario"].isna()]
        names, tcp = flow_names(store, scenario)
        return ScenarioChoices(sub, names, tcp, natural_sorted(sub["queue_type"]),
                               {k: natural_sorted(sub[k]) for k in scenario_params(store.runs(), scenario)},
                               sorted(int(s) for s in sub["seed"].dropna().unique()))
    c = store._memoised(("scenario_choices", scenario), compute)
    return ScenarioChoices(c.runs.copy(deep=False), list(c.names), list(c.tcp), list(c.queues),
                           {k: list(v) for k, v in c.levels.items()}, list(c.seeds))


def flow_names(store: DashStore, scenario: str | None) -> tuple[list[str], list[str]]:
    """(every flow name in the scenario's runs, the TCP ones) in alphabetical order."""
    runs = store.runs()
    fs = store.flow_stats()
    ids = runs[(runs["scenario"] == scenario) if scenario is not None else runs["scenario"].isna()]["run_id"]
    sub = fs[fs["run_id"].isin(ids)]
    names = sorted(n for n in sub["name"].dropna().unique())
    tcp = sorted(n for n in sub[sub["ptype"] == "tcp"]["name"].dropna().unique())
    return names, tcp


def sibling_runs(sel: Selection, run_ids, kind: str) -> pd.DataFrame:
    """The runs of trace kind `kind` made by the same simulations (sim_id label) as run_ids,
    with the packet run they belong to as packet_run_id."""
    runs = sel.runs
    packets = runs[runs["run_id"].isin(list(run_ids)) & runs["sim_id"].notna()][["run_id", "sim_id"]]
    other = runs[(runs["trace_kind"] == kind) & runs["sim_id"].notna()][["run_id", "sim_id"]]
    return other.merge(packets.rename(columns={"run_id": "packet_run_id"}), on="sim_id")


def setups(sel: Selection) -> pd.Series:
    """Per selected run (index run_id), what its TCP flows are: the `pair` or `variant`
    label, else the names of its TCP flows joined with ' + '."""
    fs = sel.store.flow_stats()
    tcp = fs[fs["run_id"].isin(sel.run_ids) & (fs["ptype"] == "tcp")]
    joined = tcp.groupby("run_id")["name"].agg(lambda s: " + ".join(sorted(s.dropna())))
    out = {}
    for _, row in sel.wired.iterrows():
        for k in ("pair", "variant"):
            if isinstance(row.get(k), str):
                out[row["run_id"]] = row[k]
                break
        else:
            out[row["run_id"]] = joined.get(row["run_id"], "(no TCP flow)")
    return pd.Series(out, name="setup", dtype=object)


def metric_rows(sel: Selection) -> tuple[pd.DataFrame, list[str]]:
    """One row per configuration, flow and metric (flow columns empty for jain_index):
    replication_stats (mean, ci95_half_width, n_runs, seeds) when all seeds are selected,
    else the one seed's flow_stats and fairness values, one row per run (no interval; also
    for runs ingested without a seed label, which are not replications). Columns also: the
    configuration's labels, `label` (flow name, with the fid when a name repeats), `series`
    (queue type) and `setup` (see setups). Second value: see Selection.replication."""
    label_cols = [c for c in sel.params + ["queue_type"] if c in sel.wired.columns]
    setup = setups(sel)
    if sel.seed is None and sel.wired["seed"].notna().any():
        rows, splitters = sel.replication()
        cfg = sel.configs().drop_duplicates("config").set_index("config")["run_id"]
        rows = rows.assign(setup=rows["config"].map(cfg).map(setup))
    else:
        splitters = []
        flow_m = sel.store.metrics(level="flow", source_view="flow_stats")
        flows = sel.flows.melt(id_vars=["run_id", "fid", "name"] + label_cols,
                               value_vars=[m.source_column for m in flow_m.values()],
                               var_name="column", value_name="mean")
        flows["metric"] = flows.pop("column").map({m.source_column: k for k, m in flow_m.items()})
        fair_m = sel.store.metrics(level="run", source_view="fairness")
        fair = sel.store.fairness()
        fair = fair[fair["run_id"].isin(sel.run_ids)].merge(sel.wired[["run_id"] + label_cols], on="run_id")
        fair = fair.melt(id_vars=["run_id"] + label_cols, value_vars=[m.source_column for m in fair_m.values()],
                         var_name="column", value_name="mean")
        fair["metric"] = fair.pop("column").map({m.source_column: k for k, m in fair_m.items()})
        rows = pd.concat([flows, fair.assign(fid=pd.NA, name=None)], ignore_index=True)
        rows = rows.assign(config=rows["run_id"], ci95_half_width=float("nan"), n_runs=1,
                           seeds=[[sel.seed]] * len(rows), config_tag="", setup=rows["run_id"].map(setup))
    if rows.empty:
        return rows.assign(label=pd.Series(dtype=object), series=pd.Series(dtype=object)), splitters
    is_flow = rows["metric"].isin(list(sel.store.metrics(level="flow")))
    rows["label"] = None
    rows.loc[is_flow, "label"] = flow_label(rows[is_flow], ["config", "metric"])
    rows["series"] = rows["queue_type"].fillna("(unknown)")
    tag = rows.get("config_tag", "")
    if isinstance(tag, pd.Series):
        rows["series"] = rows["series"].where(tag.fillna("") == "", rows["series"] + " · " + tag.fillna(""))
    return rows.reset_index(drop=True), splitters


def flow_label(df: pd.DataFrame, by: list[str]) -> pd.Series:
    """A flow's name, with its fid where several flows of one configuration share the name
    (a Reno-Reno pair)."""
    names = df["name"].fillna("(unnamed)")
    dup = df.assign(name=names).duplicated(subset=by + ["name"], keep=False)
    fid = df["fid"].astype("Int64").astype(str)
    return names.where(~dup, names + " (fid " + fid + ")")


def param_axis(scenario: str | None, key: str) -> str:
    """An axis title for a scenario parameter, with its unit from the scenario registry."""
    try:
        from tracekit.experiments import SCENARIOS
        unit = SCENARIOS[scenario].param(key).unit if scenario in SCENARIOS else ""
    except (ImportError, KeyError):
        unit = ""
    return f"{key} ({unit})" if unit else key


def positions_at(moves: pd.DataFrame, t: float) -> pd.DataFrame:
    """Each node's (x, y) at time t from its `M` lines (wireless_movements): from the last
    line at or before t, it moves from (x, y) straight towards (dest_x, dest_y) at speed_mps
    until it gets there; before its first line it stands at that line's (x, y) (ns-2 writes
    a line when a node starts to move, from where it stood)."""
    out = []
    for node, g in moves.groupby("node", sort=True):
        past = g[g["time"] <= t]
        if past.empty:
            r = g.iloc[0]
            out.append((node, float(r["x"]), float(r["y"])))
            continue
        r = past.iloc[-1]
        dx, dy = float(r["dest_x"]) - float(r["x"]), float(r["dest_y"]) - float(r["y"])
        dist = (dx * dx + dy * dy) ** 0.5
        gone = float(r["speed_mps"]) * (t - float(r["time"]))
        f = 1.0 if dist == 0 or gone >= dist else gone / dist
        out.append((node, float(r["x"]) + f * dx, float(r["y"]) + f * dy))
    return pd.DataFrame(out, columns=["node", "x", "y"])


# ---------------------------------------------------------------------------------------
# wireless runs (the Wireless page)

def wireless_metric_rows(sel: Selection) -> pd.DataFrame:
    """One row per configuration (or run, for one seed) and run-level metric of
    wireless_run_stats (the catalogue's):
    replication_stats (mean, ci95_half_width, n_runs) across seeds, else the run's
    wireless_run_stats value; with the configuration's labels and `series` (routing)."""
    ids = sel.wireless_ids
    label_cols = [c for c in sel.params + ["queue_type"] if c in sel.wired.columns]
    wireless = sel.store.metrics(source_view="wireless_run_stats")
    if not ids:
        return pd.DataFrame(columns=["config", "metric", "mean", "ci95_half_width", "n_runs", "series"])
    runs = sel.wired[sel.wired["run_id"].isin(ids)]
    if sel.seed is None and runs["seed"].notna().any():
        cfg = sel.configs()
        cfg = cfg[cfg["run_id"].isin(ids)].drop_duplicates("config").set_index("config")[label_cols]
        rep = sel.store.pooled_replication()
        rep = rep[(rep["scenario"] == sel.scenario) & rep["config"].isin(cfg.index)
                  & rep["metric"].isin(list(wireless))]
        rows = rep[["config", "metric", "mean", "ci95_half_width", "n_runs"]].merge(
            cfg, left_on="config", right_index=True, how="left")
    else:
        w = sel.store.wireless_run_stats(ids).merge(runs[["run_id"] + label_cols], on="run_id")
        rows = w.melt(id_vars=["run_id"] + label_cols, value_vars=[m.source_column for m in wireless.values()],
                      var_name="column", value_name="mean")
        inv = {m.source_column: k for k, m in wireless.items()}
        rows = rows.assign(metric=rows["column"].map(inv), config=rows["run_id"], ci95_half_width=float("nan"),
                           n_runs=1).drop(columns=["column", "run_id"])
    return rows.assign(series=rows["queue_type"].fillna("(unknown)")).reset_index(drop=True)


# ---------------------------------------------------------------------------------------
# papers (the Papers page): `tracekit reproduce`'s results, saved in the store or evaluated
# here on the dashboard's connection (from the runs in the store; no simulation is run)

PAPER_STATUSES = ("reproduced", "not reproduced", "untestable", "paper implausible")


def resolve_papers_dir() -> Path | None:
    """`--papers DIR` after `streamlit run app.py --`, else $TRACEKIT_PAPERS, else None
    (the bundled paper files, tracekit/experiments/papers/)."""
    argv = sys.argv
    if argv and Path(argv[0]).name == "app.py":
        for i, a in enumerate(argv[1:], start=1):
            if a == "--papers" and i + 1 < len(argv):
                return Path(argv[i + 1])
            if a.startswith("--papers="):
                return Path(a.split("=", 1)[1])
    env = os.environ.get("TRACEKIT_PAPERS")
    return Path(env) if env else None


def load_papers(papers_dir: Path | None) -> tuple[dict, str]:
    """(the paper files by id, '' or why they cannot be read)."""
    from tracekit.analysis import reproduce as rp

    try:
        return (rp.load_papers(papers_dir) if papers_dir else rp.load_papers()), ""
    except (rp.PaperFileError, OSError) as e:
        return {}, f"paper file {e}"


@dataclass(frozen=True)
class PaperEntry:
    """A paper as the page lists it: from its file, or (path None) only from saved results
    whose paper file is not among the ones read (e.g. saved with `--papers DIR`)."""

    id: str
    title: str
    citation: str
    source: str
    notes: tuple[str, ...]
    experiments: dict[str, str]          # experiment -> what of the paper it reproduces ('' when unknown)
    path: Path | None


def saved_results(data_dir: Path) -> list[dict]:
    """Every result `tracekit reproduce` saved in the store (reproduce/*.json), each with
    `file` (its path) added; unreadable files are skipped."""
    out = []
    for p in sorted((Path(data_dir) / "reproduce").glob("*.json")):
        try:
            d = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(d, dict) and isinstance(d.get("experiment"), str):
            out.append({**d, "file": str(p)})
    return out


def result_papers(result: dict) -> list[str]:
    """The ids of the papers a result speaks for (its rows' and claims' papers, else its `paper`)."""
    ids = [str(r.get("table", "")).split("/", 1)[0] for r in result.get("rows", [])]
    ids += [str(c.get("paper", "")) for c in result.get("claims", [])]
    ids += [x.strip() for x in str(result.get("paper", "")).split(",")]
    return list(dict.fromkeys(x for x in ids if x))


def paper_entries(papers: dict, saved: list[dict]) -> list[PaperEntry]:
    """The paper files (in file order), then the papers known only from saved results."""
    out = [PaperEntry(p.id, p.title, p.citation, p.source, p.notes, dict(p.experiments), p.path)
           for p in papers.values()]
    orphans: dict[str, dict[str, str]] = {}
    for r in saved:
        for pid in result_papers(r):
            if pid not in papers:
                orphans.setdefault(pid, {})[r["experiment"]] = ""
    out += [PaperEntry(pid, "(no paper file read by this dashboard: known from saved results)", "", "", (),
                       dict(sorted(exps.items())), None) for pid, exps in sorted(orphans.items())]
    return out


def results_of(saved: list[dict], experiment: str) -> dict[bool, dict]:
    """The saved results of one experiment: {quick: result} (the full and the quick version)."""
    return {bool(r.get("quick")): r for r in saved if r["experiment"] == experiment}


def for_paper(result: dict, paper: str) -> dict:
    """The result with only the rows and claims of one paper (an experiment several papers
    speak about is evaluated once for all of them)."""
    return {**result, "rows": [r for r in result.get("rows", []) if str(r.get("table", "")).split("/", 1)[0] == paper],
            "claims": [c for c in result.get("claims", []) if str(c.get("paper")) == paper]}


def claim_counts(result: dict) -> dict[str, int]:
    return {s: sum(1 for c in result.get("claims", []) if c.get("status") == s) for s in PAPER_STATUSES}


def when_text(result: dict) -> str:
    """When a result was made, as saved (`tracekit reproduce` writes the local time)."""
    w = str(result.get("when") or "")
    return w.replace("T", " ") if w else "(unknown time)"


def _paper_range(p) -> tuple[float | None, float | None]:
    if isinstance(p, (list, tuple)) and len(p) == 2:
        return float(p[0]), float(p[1])
    if isinstance(p, (int, float)) and not isinstance(p, bool):
        return float(p), float(p)
    return None, None


def short_conditions(conditions: list[str]) -> tuple[list[str], list[str]]:
    """(the parts shared by every condition, each condition without them): the conditions
    of a table's rows as cond_text writes them ('k=v, k2=v2')."""
    parts = [[x for x in c.split(", ") if x] for c in conditions]
    common = [x for x in parts[0] if all(x in p for p in parts[1:])] if len(parts) > 1 else []
    shown = [", ".join(x for x in p if x not in common) or "(all)" for p in parts]
    return common, shown


def result_rows(result: dict) -> pd.DataFrame:
    """One row per paper value of a result: the table it belongs to, its condition (in full
    and without the parts the table's rows share), the paper's value (low = high for a single
    value), ours (mean over seeds and its 95 % CI half-width, with the interval's ends), the
    ratio ours / paper, the runs and the row's status and notes, all as the result holds them."""
    cols = ["table", "cite", "title", "condition", "shown_condition", "metric", "unit", "paper", "paper_low",
            "paper_high", "ours", "ci95", "ours_low", "ours_high", "ratio", "paper_in_ci", "n_runs", "status", "note",
            "quote"]
    recs = []
    rows = result.get("rows", [])
    by_table: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        by_table.setdefault(str(r.get("table")), []).append(i)
    shown: dict[int, str] = {}
    for idx in by_table.values():
        _, s = short_conditions([str(rows[i].get("condition", "")) for i in idx])
        shown.update(zip(idx, s))
    for i, r in enumerate(rows):
        lo, hi = _paper_range(r.get("paper"))
        ours, ci = r.get("ours"), r.get("ci95")
        notes = [x for x in (r.get("bound"), r.get("note")) if x]
        recs.append({
            "table": r.get("table"), "cite": r.get("cite"), "title": r.get("title"),
            "condition": r.get("condition"), "shown_condition": shown[i], "metric": r.get("metric"),
            "unit": r.get("unit"),
            "paper": None if lo is None else (_fmt(lo) if lo == hi else f"{_fmt(lo)} to {_fmt(hi)}"),
            "paper_low": lo, "paper_high": hi, "ours": ours, "ci95": ci,
            "ours_low": None if ours is None or ci is None else ours - ci,
            "ours_high": None if ours is None or ci is None else ours + ci,
            "ratio": r.get("ratio"), "paper_in_ci": r.get("paper_in_ci"), "n_runs": r.get("n_runs"),
            "status": r.get("status"),
            "note": "; ".join(notes) or None, "quote": r.get("quote")})
    df = pd.DataFrame(recs, columns=cols)
    for c in ("paper_low", "paper_high", "ours", "ci95", "ours_low", "ours_high", "ratio"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    return df


def result_claims(result: dict) -> pd.DataFrame:
    """One row per claim of a result: id, cite, kind, text, metric, status, evidence."""
    cols = ["id", "paper", "cite", "kind", "text", "metric", "status", "evidence"]
    return pd.DataFrame([{k: c.get(k) for k in cols} for c in result.get("claims", [])], columns=cols)


def _fmt(v: float) -> str:
    return f"{v:,.4g}" if abs(v) < 1000 else f"{v:,.1f}"


def experiment_info(experiment: str) -> dict | None:
    """The registry's experiment: scenario, runs of the full and the quick version (None when
    it declares none), or None for an experiment the registry no longer has."""
    from tracekit.experiments import EXPERIMENTS

    exp = EXPERIMENTS.get(experiment)
    if exp is None:
        return None
    return {"scenario": exp.scenario, "description": exp.description, "runs": exp.n_runs(),
            "quick_runs": exp.quick.n_runs() if exp.quick is not None else None,
            "quick_description": exp.quick.description if exp.quick is not None else None}


def reproduce_command(experiment: str, quick: bool, data_dir: Path, papers_dir: Path | None) -> str:
    """The command that runs the experiment's missing simulations and saves its result."""
    return (f"tracekit reproduce {experiment}{' --quick' if quick else ''}"
            + (f" --papers {papers_dir}" if papers_dir else "") + f" --data {data_dir}")


def paper_file_changed(entry: PaperEntry, result: dict) -> bool:
    """Whether the paper file was modified after the result was made (both local times)."""
    if entry.path is None or not result.get("when"):
        return False
    try:
        made = datetime.datetime.fromisoformat(str(result["when"]))
        return datetime.datetime.fromtimestamp(entry.path.stat().st_mtime) > made
    except (OSError, ValueError, TypeError):
        return False


def papers_overview(entries: list[PaperEntry], saved: list[dict]) -> pd.DataFrame:
    """One row per paper and experiment: what it reproduces, the newest saved result (which
    version, when, runs) and its claims by status (this paper's claims only)."""
    recs = []
    for e in entries:
        for exp, what in e.experiments.items():
            res = results_of(saved, exp)
            last = max(res.values(), key=lambda r: str(r.get("when", ""))) if res else None
            mine = for_paper(last, e.id) if last else {}
            counts = claim_counts(mine) if last else {s: None for s in PAPER_STATUSES}
            recs.append({"paper": e.id, "experiment": exp, "reproduces": what or None,
                         "result": None if last is None else ("quick" if last.get("quick") else "full"),
                         "made": None if last is None else when_text(last),
                         "runs": None if last is None else f"{last.get('n_runs')} of {last.get('n_planned')}",
                         "paper values": None if last is None else len(mine["rows"]),
                         **counts})
    df = pd.DataFrame(recs, columns=["paper", "experiment", "reproduces", "result", "made", "runs", "paper values",
                                     *PAPER_STATUSES])
    for c in ("paper values", *PAPER_STATUSES):
        df[c] = df[c].astype("Int64")
    return df


# ---------------------------------------------------------------------------------------
# the sidebar's "Download report": tracekit report on the selected scenario

_REPORTS: "OrderedDict[tuple, bytes]" = OrderedDict()
_REPORTS_LOCK = threading.Lock()


def report_html(status: StoreStatus, scenario: str | None) -> bytes:
    """`tracekit report --scenario SCENARIO` on the store as HTML bytes (every run with a seed
    when scenario is None); the last four kept per store state. A selection the report refuses
    gives a short HTML page saying why."""
    import html

    from tracekit.analysis.compare import Filter
    from tracekit.apps.report import build_report, render_html

    key = (str(status.data_dir), status.state, scenario)
    with _REPORTS_LOCK:
        if key in _REPORTS:
            return _REPORTS[key]
    try:
        out = render_html(build_report(status.data_dir, [Filter("scenario", (scenario,))] if scenario else [])).encode()
    except TracekitError as e:
        return (f"<!DOCTYPE html><html><body><p>tracekit report: error: {html.escape(str(e))}</p></body></html>").encode()
    with _REPORTS_LOCK:
        _REPORTS[key] = out
        while len(_REPORTS) > 4:
            _REPORTS.popitem(last=False)
    return out
