"""The dashboard's access to the store: every number comes from the sql/ views.

One DuckDB connection (tracekit.query.connect, read-only) per store state, where the state
is the list of run ids plus the sql/ files' mtimes, so a new run or an edited view gives
fresh numbers and anything else is served from Streamlit's caches. On that connection the
views every page reads (flows, flow_stats, fairness, run_configs, replication_stats) are
computed once into temp tables of the same names, which shadow the views: the dependent
views (and the SQL page's queries) then reuse them instead of recomputing flow_stats from
the events (about 4 s per 100 runs, once per store state).

The dashboard only filters, joins and pivots what the views return; a display needs two
derived numbers, the ends of a confidence interval (mean ± ci95_half_width) and the gap
between two means, and the per-variant means on the throughput-delay page are a GROUP BY
over flow_stats run by DuckDB.
"""
from __future__ import annotations

import hashlib
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import streamlit as st

from tracekit.errors import TracekitError
from tracekit.query import connect, run_query, sql_dir
from tracekit.store import Store, default_data_dir

# Computed once per store state and shadowing the views of the same name (see docstring).
MATERIALIZED = ("flows", "flow_stats", "fairness", "run_configs", "replication_stats")
# Labels that are not scenario parameters.
NOT_PARAMS = ("scenario", "seed", "sim_id")
# Runs of these trace kinds hold packets and have flows (flow_stats).
PACKET_KINDS = ("wired", "wireless")
# The parameter that is a run's "series" (queue_type column): the queue discipline of a wired
# scenario, the routing protocol of a wireless one. Pages put it on colours, not on pins.
SERIES_PARAMS = ("queue", "routing")


def series_title(runs: pd.DataFrame) -> str:
    """What the queue_type column means for these runs."""
    if len(runs) and (runs["trace_kind"] == "wireless").all():
        return "Routing protocol"
    return "Queue type"


@dataclass(frozen=True)
class Metric:
    column: str
    title: str
    unit: str
    higher_is_better: bool

    @property
    def axis(self) -> str:
        return f"{self.title} ({self.unit})"


METRICS = {
    m.column: m
    for m in (
        Metric("throughput_kbps", "Throughput", "kbit/s", True),
        Metric("goodput_kbps", "Goodput", "kbit/s", True),
        Metric("mean_delay_ms", "Mean delay", "ms", False),
        Metric("pdr", "Packet delivery ratio", "delivered / sent", True),
        Metric("drop_rate", "Drop rate", "dropped / sent", False),
        Metric("jain_index", "Jain's fairness index", "0 to 1", True),
    )
}
FLOW_METRICS = [m for m in METRICS if m != "jain_index"]


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
        try:
            for f in sorted(sql_dir().glob("*.sql")):
                st_ = f.stat()
                h.update(f"{f.name}:{st_.st_mtime_ns}:{st_.st_size}".encode())
        except TracekitError:
            pass
        return h.hexdigest()[:20]


def store_status(data_dir: Path) -> StoreStatus:
    try:
        store = Store(data_dir)
    except TracekitError as e:
        return StoreStatus(data_dir, problem=str(e))
    if not store.exists:
        return StoreStatus(data_dir)
    return StoreStatus(data_dir, tuple(store.run_ids()))


# ---------------------------------------------------------------------------------------
# connections


class DB:
    """A connect()ed connection and a lock: DuckDB connections are not to be shared between
    Streamlit's session threads without one (cursors would not see the views' registered
    empty tables)."""

    def __init__(self, data_dir: Path, materialize: bool):
        self.con = connect(data_dir)
        self.lock = threading.Lock()
        self.failed: dict[str, str] = {}
        if materialize:
            for view in MATERIALIZED:
                try:
                    self.con.execute(f"CREATE TEMP TABLE {view} AS SELECT * FROM main.{view}")
                except Exception as e:  # a view under repair: its pages say so, the rest work
                    self.failed[view] = str(e).splitlines()[0]

    def df(self, sql: str, params: list | None = None) -> pd.DataFrame:
        with self.lock:
            return self.con.execute(sql, params or []).df()


@st.cache_resource(max_entries=2, show_spinner=False)
def _db(data_dir: str, state: str) -> DB:
    return DB(Path(data_dir), materialize=True)


def db(s: StoreStatus) -> DB:
    return _db(str(s.data_dir), s.state)


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


@st.cache_data(max_entries=4, show_spinner=False)
def runs_frame(data_dir: str, state: str) -> pd.DataFrame:
    """The runs view, with each label as a column of its own (strings) and queue_type."""
    df = _db(data_dir, state).df(
        "SELECT run_id, scenario, seed, trace_kind, n_events, t_start, t_end, source, labels "
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


def _whole(view: str, data_dir: str, state: str) -> pd.DataFrame:
    d = _db(data_dir, state)
    if view in d.failed:
        raise TracekitError(f"the {view} view failed: {d.failed[view]}")
    return d.df(f"SELECT * FROM {view}")


def _named(df: pd.DataFrame) -> pd.DataFrame:
    """Flows without a name (traces ingested without --flow-label) are shown as 'fid N (ptype)'."""
    if "name" in df.columns and df["name"].isna().any():
        label = "fid " + df["fid"].astype("Int64").astype(str)
        if "ptype" in df.columns:
            label = label + " (" + df["ptype"].fillna("?") + ")"
        df = df.assign(name=df["name"].fillna(label))
    return df


@st.cache_data(max_entries=4, show_spinner=False)
def flow_stats_frame(data_dir: str, state: str) -> pd.DataFrame:
    return _named(_whole("flow_stats", data_dir, state))


@st.cache_data(max_entries=4, show_spinner=False)
def fairness_frame(data_dir: str, state: str) -> pd.DataFrame:
    return _whole("fairness", data_dir, state)


@st.cache_data(max_entries=4, show_spinner=False)
def run_configs_frame(data_dir: str, state: str) -> pd.DataFrame:
    return _whole("run_configs", data_dir, state)


@st.cache_data(max_entries=4, show_spinner=False)
def replication_frame(data_dir: str, state: str) -> pd.DataFrame:
    return _whole("replication_stats", data_dir, state)


# ---------------------------------------------------------------------------------------
# per selection (small queries, cached by their arguments)


@st.cache_data(max_entries=64, show_spinner=False)
def throughput_series(data_dir: str, state: str, run_ids: tuple[str, ...], bin_s: float) -> pd.DataFrame:
    df = _db(data_dir, state).df(
        "SELECT s.*, f.ptype FROM throughput_series(?) s JOIN flow_stats f "
        "ON f.run_id = s.run_id AND f.fid IS NOT DISTINCT FROM s.fid AND f.src_node = s.src_node "
        "AND f.src_port = s.src_port AND f.dst_node = s.dst_node AND f.dst_port = s.dst_port "
        "WHERE list_contains(?, s.run_id) ORDER BY s.run_id, s.fid, s.t",
        [float(bin_s), list(run_ids)])
    return _named(df)


@st.cache_data(max_entries=64, show_spinner=False)
def cwnd(data_dir: str, state: str, run_ids: tuple[str, ...]) -> pd.DataFrame:
    return _db(data_dir, state).df(
        "SELECT run_id, time, src_node, src_port, dst_node, dst_port, value FROM tcp_vars "
        "WHERE var = 'cwnd_' AND list_contains(?, run_id) ORDER BY run_id, src_node, src_port, time",
        [list(run_ids)])


@st.cache_data(max_entries=64, show_spinner=False)
def queue_samples(data_dir: str, state: str, run_ids: tuple[str, ...]) -> pd.DataFrame:
    return _db(data_dir, state).df(
        "SELECT run_id, sample_kind, time, from_node, to_node, bytes, pkts FROM queue_samples "
        "WHERE list_contains(?, run_id) ORDER BY run_id, from_node, to_node, sample_kind, time",
        [list(run_ids)])


@st.cache_data(max_entries=64, show_spinner=False)
def variant_means(data_dir: str, state: str, groups: tuple[tuple[str, int, str], ...]) -> pd.DataFrame:
    """Per group (e.g. 'Reno · DropTail'), the mean throughput_kbps and p95_delay_ms of the
    given (run_id, fid, group) flows of flow_stats, and how many flows were averaged."""
    if not groups:
        return pd.DataFrame(columns=["group", "flows", "throughput_kbps", "p95_delay_ms"])
    return _db(data_dir, state).df(
        "WITH sel AS (SELECT unnest(?) AS run_id, unnest(?) AS fid, unnest(?) AS grp) "
        "SELECT sel.grp AS \"group\", count(*) AS flows, avg(s.throughput_kbps) AS throughput_kbps, "
        "avg(s.p95_delay_ms) AS p95_delay_ms "
        "FROM flow_stats s JOIN sel ON s.run_id = sel.run_id AND s.fid = sel.fid "
        "GROUP BY sel.grp ORDER BY sel.grp",
        [[g[0] for g in groups], [int(g[1]) for g in groups], [g[2] for g in groups]])


@st.cache_data(max_entries=32, show_spinner=False)
def user_query(data_dir: str, state: str, query: str, max_rows: int) -> tuple[pd.DataFrame, bool]:
    """A read-only query typed on the SQL page: tracekit.query.run_query on the shared
    connection (its temp tables hold exactly what the views they shadow return, and
    run_query refuses anything that is not a query); at most max_rows rows, and whether
    it cut."""
    d = _db(data_dir, state)
    with d.lock:
        rel = run_query(d.con, query)
        try:
            df = rel.limit(max_rows + 1).df()
        except Exception as e:
            raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
    return df.head(max_rows), len(df) > max_rows


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

    status: StoreStatus
    scenario: str | None
    runs: pd.DataFrame               # every run of the store (runs_frame)
    wired: pd.DataFrame              # the selected packet-trace runs, wired or wireless (rows of runs_frame)
    flows: pd.DataFrame              # flow_stats rows of the selected runs and flow names, with the runs' labels
    names: list[str]                 # selected flow names
    seed: int | None                 # one seed, or None for all
    params: list[str]                # the scenario's parameter labels
    varying: list[str] = field(default_factory=list)   # parameters with several values among `wired`

    @property
    def data_dir(self) -> str:
        return str(self.status.data_dir)

    @property
    def state(self) -> str:
        return self.status.state

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
        rc = run_configs_frame(self.data_dir, self.state)
        rc = rc[rc["run_id"].isin(self.run_ids)][["run_id", "config"]]
        return rc.merge(self.wired, on="run_id")

    def replication(self) -> tuple[pd.DataFrame, list[str]]:
        """replication_stats rows of the selected configurations, one per config, flow and
        metric, with the configuration's labels; plus the labels that split runs which
        differ in nothing else but their seed into several configurations (should be [])."""
        cfg = self.configs()
        rep = replication_frame(self.data_dir, self.state)
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


def select(status: StoreStatus, scenario: str | None, names: list[str], queues: list[str],
           param_values: dict[str, list[str]], seed: int | None) -> Selection:
    """Apply the sidebar's choices to the store's runs and flows."""
    runs = runs_frame(str(status.data_dir), status.state)
    fs = flow_stats_frame(str(status.data_dir), status.state)
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
    return Selection(status, scenario, runs, wired.reset_index(drop=True), flows.reset_index(drop=True),
                     names, seed, params, varying)


def scenario_params(runs: pd.DataFrame, scenario: str | None) -> list[str]:
    """The labels of the scenario's runs that are parameters (not scenario/seed/sim_id)."""
    sub = runs[(runs["scenario"] == scenario) if scenario is not None else runs["scenario"].isna()]
    keys = [k for k in runs.attrs.get("label_keys", []) if k not in NOT_PARAMS]
    cols = [k if k in sub.columns else f"label.{k}" for k in keys]
    return [c for c in cols if c in sub.columns and sub[c].notna().any()]


def flow_names(status: StoreStatus, scenario: str | None) -> tuple[list[str], list[str]]:
    """(every flow name in the scenario's runs, the TCP ones) in alphabetical order."""
    runs = runs_frame(str(status.data_dir), status.state)
    fs = flow_stats_frame(str(status.data_dir), status.state)
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
    fs = flow_stats_frame(sel.data_dir, sel.state)
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
        fs = sel.flows
        flows = fs.melt(id_vars=["run_id", "fid", "name"] + label_cols, value_vars=FLOW_METRICS,
                        var_name="metric", value_name="mean")
        fair = fairness_frame(sel.data_dir, sel.state)
        fair = fair[fair["run_id"].isin(sel.run_ids)][["run_id", "jain_index"]]
        fair = fair.merge(sel.wired[["run_id"] + label_cols], on="run_id")
        fair = fair.rename(columns={"jain_index": "mean"}).assign(metric="jain_index", fid=pd.NA, name=None)
        rows = pd.concat([flows, fair], ignore_index=True)
        rows = rows.assign(config=rows["run_id"], ci95_half_width=float("nan"), n_runs=1,
                           seeds=[[sel.seed]] * len(rows), config_tag="", setup=rows["run_id"].map(setup))
    if rows.empty:
        return rows.assign(label=pd.Series(dtype=object), series=pd.Series(dtype=object)), splitters
    is_flow = rows["metric"] != "jain_index"
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


# ---------------------------------------------------------------------------------------
# wireless runs (the Wireless page)

# run-level metrics of wireless runs, as replication_stats names them (wireless_run_stats)
WIRELESS_METRICS = {
    m.column: m
    for m in (
        Metric("run_pdr", "Packet delivery ratio (all flows)", "delivered / sent", True),
        Metric("run_throughput_kbps", "Throughput (all flows)", "kbit/s", True),
        Metric("run_mean_delay_ms", "Mean end-to-end delay", "ms", False),
        Metric("nrl", "Normalised routing load", "routing pkts / delivered pkt", False),
        Metric("routing_pkts", "Routing packets", "transmissions", False),
    )
}
# wireless_run_stats column of each
WIRELESS_RUN_COLUMN = {"run_pdr": "pdr", "run_throughput_kbps": "throughput_kbps",
                       "run_mean_delay_ms": "mean_delay_ms", "nrl": "nrl", "routing_pkts": "routing_pkts"}


@st.cache_data(max_entries=64, show_spinner=False)
def wireless_run_stats(data_dir: str, state: str, run_ids: tuple[str, ...]) -> pd.DataFrame:
    return _db(data_dir, state).df(
        "SELECT w.*, o.routing_sent_pkts, o.routing_fwd_pkts, o.routing_bytes, o.data_recv_pkts "
        "FROM wireless_run_stats w JOIN routing_overhead o ON o.run_id = w.run_id "
        "WHERE list_contains(?, w.run_id) ORDER BY w.run_id", [list(run_ids)])


@st.cache_data(max_entries=64, show_spinner=False)
def wireless_drops_by_group(data_dir: str, state: str, groups: tuple[tuple[str, str], ...]) -> pd.DataFrame:
    """Per group of runs (e.g. a routing protocol) and drop layer and reason: drop lines per
    run (the group's wireless_drops summed, over the number of runs in the group)."""
    if not groups:
        return pd.DataFrame(columns=["group", "layer", "reason", "runs", "drops_per_run"])
    return _db(data_dir, state).df(
        "WITH sel AS (SELECT unnest(?) AS run_id, unnest(?) AS grp), "
        "n AS (SELECT grp, count(*) AS runs FROM sel GROUP BY grp) "
        "SELECT sel.grp AS \"group\", d.layer, coalesce(d.reason, '(none)') AS reason, any_value(n.runs) AS runs, "
        "sum(d.drops) / any_value(n.runs) AS drops_per_run "
        "FROM wireless_drops d JOIN sel USING (run_id) JOIN n USING (grp) "
        "GROUP BY sel.grp, d.layer, coalesce(d.reason, '(none)') ORDER BY 1, 2, 3",
        [[g[0] for g in groups], [g[1] for g in groups]])


@st.cache_data(max_entries=64, show_spinner=False)
def node_forwarding(data_dir: str, state: str, run_id: str) -> pd.DataFrame:
    return _db(data_dir, state).df(
        "SELECT node, fwd_data_pkts, fwd_data_bytes, fwd_routing_pkts FROM node_forwarding "
        "WHERE run_id = ? ORDER BY node", [run_id])


def wireless_metric_rows(sel: Selection) -> pd.DataFrame:
    """One row per configuration (or run, for one seed) and wireless run-level metric:
    replication_stats (mean, ci95_half_width, n_runs) across seeds, else the run's
    wireless_run_stats value; with the configuration's labels and `series` (routing)."""
    ids = sel.wireless_ids
    label_cols = [c for c in sel.params + ["queue_type"] if c in sel.wired.columns]
    if not ids:
        return pd.DataFrame(columns=["config", "metric", "mean", "ci95_half_width", "n_runs", "series"])
    runs = sel.wired[sel.wired["run_id"].isin(ids)]
    if sel.seed is None and runs["seed"].notna().any():
        cfg = sel.configs()
        cfg = cfg[cfg["run_id"].isin(ids)].drop_duplicates("config").set_index("config")[label_cols]
        rep = replication_frame(sel.data_dir, sel.state)
        rep = rep[(rep["scenario"] == sel.scenario) & rep["config"].isin(cfg.index)
                  & rep["metric"].isin(list(WIRELESS_METRICS))]
        rows = rep[["config", "metric", "mean", "ci95_half_width", "n_runs"]].merge(
            cfg, left_on="config", right_index=True, how="left")
    else:
        w = wireless_run_stats(sel.data_dir, sel.state, ids).merge(runs[["run_id"] + label_cols], on="run_id")
        rows = w.melt(id_vars=["run_id"] + label_cols, value_vars=list(WIRELESS_RUN_COLUMN.values()),
                      var_name="column", value_name="mean")
        inv = {v: k for k, v in WIRELESS_RUN_COLUMN.items()}
        rows = rows.assign(metric=rows["column"].map(inv), config=rows["run_id"], ci95_half_width=float("nan"),
                           n_runs=1).drop(columns=["column", "run_id"])
    return rows.assign(series=rows["queue_type"].fillna("(unknown)")).reset_index(drop=True)
