"""Comparisons a researcher can trust: per-group statistics of a catalogued metric over real
replications, and a verdict that claims a difference only when the runs support it.

A *group* is one value of a factor: any run label (variant, pair, queue, routing,
cbr_rate_mbps, ...) or `name`, the flow name. The unit of replication is the run (one
seed of one configuration): a group's per-run value is the run's metric for a run-level
metric (jain_index, run_pdr, nrl, ...), and for a flow-level metric the mean over that
run's selected flows, so a run with two Reno flows counts once, not twice. The selected
flows are those that pass the flow filters (name, ptype, fid, ...), by default the TCP
flows when the runs have any. Runs without a seed (run_configs leaves them out) are not
replications and take no part.

The verdict ranks the groups by mean (the catalogue's higher_is_better) and judges the best
against the runner-up with Welch's two-sided t-test at 5 %: "X is higher than Y by D unit
(p = ..., n = ...)", "no significant difference between X and Y (p = ...)", "identical:
every run gave the same value", or "n = 1 per group: no test possible". The test and the
Student t distribution come from tracekit.analysis.stats (no scipy).

The SQL reads `run_metrics` (the long per-run view of every catalogued metric) and
`flow_stats` (which flows are selected, and their drops for the note on loss-based
variants); the statistics of each group (n, mean, stddev, 95 % half-width) come from
DuckDB (the macro ci95_half_width, as replication_stats), the wording from this module.
"""
from __future__ import annotations

import math
import os
import uuid
from dataclasses import dataclass, field
from typing import Any, Sequence

from tracekit.analysis.stats import Welch, summarise, welch
from tracekit.db.catalogue import Metric, metric as catalogue_metric
from tracekit.core.errors import TracekitError
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB is imported where it is used, not when this module is
    import duckdb

ALPHA = 0.05
# Variants whose only congestion signal is loss: on flows that lost nothing they run the
# same slow start and congestion avoidance, packet for packet.
LOSS_BASED = ("tahoe", "reno", "newreno", "sack1", "sack")
NO_LOSS_NOTE = "no packet of these flows was lost: Tahoe, Reno and NewReno behave identically here"
# Keys that select flows (columns of flow_stats) rather than runs.
FLOW_KEYS = ("name", "fid", "ptype", "src_node", "src_port", "dst_node", "dst_port")
# Keys that select runs without being labels.
RUN_KEYS = ("seed", "run_id", "config")


# ---------------------------------------------------------------------------------------
# verdicts


@dataclass(frozen=True)
class Group:
    """One level of the factor: its per-run values (one per run, ordered by seed) and their
    statistics as DuckDB computed them."""

    level: str
    values: tuple[float, ...]
    seeds: tuple[int, ...] = ()
    mean: float | None = None
    stddev: float | None = None
    ci95_half_width: float | None = None
    n_flows: int = 0                     # flow values averaged into the per-run values

    @property
    def n(self) -> int:
        return len(self.values)

    def stats(self) -> "Group":
        """This group with mean and stddev computed here (for hand-made groups in tests)."""
        if not self.n:
            return self
        s = summarise(self.values)
        return Group(self.level, self.values, self.seeds, s.mean, s.stddev, self.ci95_half_width, self.n_flows)


@dataclass(frozen=True)
class Verdict:
    metric: Metric
    factor: str
    groups: tuple[Group, ...]            # in the factor's natural order
    kind: str                            # difference | no_difference | identical | no_test | one_group | no_data
    text: str
    best: tuple[str, ...] = ()           # the best level(s); several when identical
    runner_up: str | None = None
    difference: float | None = None      # |mean(best) - mean(runner_up)|
    test: Welch | None = None
    per: tuple[tuple[str, str], ...] = ()   # the --per labels' values of this verdict
    note: str | None = None

    @property
    def p_value(self) -> float | None:
        return self.test.p if self.test else None

    @property
    def per_text(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.per)


def fmt_value(v: float | None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if abs(v) >= 100:
        return f"{v:,.1f}"
    return f"{v:.3g}"


def fmt_p(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


def identical(a: Group, b: Group) -> bool:
    """Every run gave the same value: both groups constant at one value, or the same seeds
    with the same value seed by seed."""
    if a is b:
        return True
    if not a.n or not b.n:
        return False
    va, vb = a.values, b.values
    if all(_same(v, va[0]) for v in va + vb):
        return True
    return (a.seeds == b.seeds and len(a.seeds) == a.n and len(b.seeds) == b.n
            and all(_same(x, y) for x, y in zip(va, vb)))


def _names(levels: Sequence[str]) -> str:
    levels = list(levels)
    return levels[0] if len(levels) == 1 else ", ".join(levels[:-1]) + " and " + levels[-1]


def _n_text(a: Group, b: Group) -> str:
    return f"n = {a.n} each" if a.n == b.n else f"n = {a.n} and {b.n}"


def _mean(g: Group) -> float:
    """The mean of a group that has values (judge computes it for every such group)."""
    assert g.mean is not None, g.level
    return g.mean


def judge(metric: Metric, groups: Sequence[Group], factor: str = "group", alpha: float = ALPHA,
          per: tuple[tuple[str, str], ...] = (), note: str | None = None) -> Verdict:
    """The verdict on groups of per-run values: the best (by the metric's direction) against
    the runner-up. Groups without mean/stddev get them computed from their values."""
    groups = tuple(g if g.mean is not None or not g.n else g.stats() for g in groups)
    # a unit that is only a range ("0 to 1") reads badly after a number: left out there
    u = "" if " to " in metric.unit else f" {metric.unit}"
    valid = [g for g in groups if g.n]
    # means equal to 12 significant digits rank as equal (DuckDB's parallel sums differ in the
    # last bits from one run to the next), so tied groups keep the factor's order (a stable sort)
    ranked = sorted(valid, key=lambda g: float(f"{-_mean(g) if metric.higher_is_better else _mean(g):.12g}"))
    common: dict[str, Any] = dict(metric=metric, factor=factor, groups=groups, per=per, note=note)
    if not ranked:
        return Verdict(kind="no_data", text=f"no values of {metric.title} to compare", **common)
    best = ranked[0]
    if len(ranked) == 1:
        return Verdict(kind="one_group", best=(best.level,), **common,
                       text=f"only {best.level} has values ({fmt_value(_mean(best))}{u}): nothing to compare")
    tie = [best] + [g for g in ranked[1:] if identical(g, best)]
    rest = [g for g in ranked[1:] if g not in tie]
    lead = tuple(g.level for g in tie)
    if not rest:
        if all(_same(v, best.values[0]) for g in tie for v in g.values):
            text = (f"identical: every run gave the same value ({_names(lead)}: "
                    f"{fmt_value(best.values[0])}{u})")
        else:
            text = f"identical: every run gave the same value, seed by seed ({_names(lead)})"
        return Verdict(kind="identical", best=lead, text=text, difference=0.0, **common)
    prefix = (f"identical: {_names(lead)} (every run gave the same value, seed by seed); "
              if len(tie) > 1 else "")
    subject = "they" if len(tie) > 1 else best.level
    run = rest[0]
    run_tie = [run.level] + [g.level for g in rest[1:] if identical(g, run)]
    other = " = ".join(run_tie)       # "Reno = Tahoe": identical runners-up
    diff = abs(_mean(best) - _mean(run))
    means = f"{best.level} {fmt_value(_mean(best))}, {other} {fmt_value(_mean(run))}{u}"
    out: dict[str, Any] = dict(best=lead, runner_up=run.level, difference=diff, **common)
    if best.n < 2 or run.n < 2:
        why = ("n = 1 per group" if best.n == run.n == 1
               else f"{_n_text(best, run)}: fewer than 2 runs in a group")
        return Verdict(kind="no_test", text=f"{prefix}{why}: no test possible ({means})", **out)
    direction = "higher" if _mean(best) > _mean(run) else "lower"
    verb = "are" if len(tie) > 1 else "is"
    test = welch(_mean(best), best.stddev or 0.0, best.n, _mean(run), run.stddev or 0.0, run.n)
    if test is None:   # no run-to-run variation in either group, and the values differ
        return Verdict(kind="difference", **out, text=(
            f"{prefix}{subject} {verb} {direction} than {other} by {fmt_value(diff)}{u} "
            f"(no run-to-run variation in either, so no test is needed; {_n_text(best, run)})"))
    if test.p < alpha:
        return Verdict(kind="difference", test=test, **out, text=(
            f"{prefix}{subject} {verb} {direction} than {other} by {fmt_value(diff)}{u} "
            f"(Welch's t-test {fmt_p(test.p)}, {_n_text(best, run)})"))
    return Verdict(kind="no_difference", test=test, **out, text=(
        f"{prefix}no significant difference between {'them' if len(tie) > 1 else best.level} and {other} "
        f"({means}; Welch's t-test {fmt_p(test.p)}, {_n_text(best, run)})"))


# ---------------------------------------------------------------------------------------
# selections over the store


@dataclass(frozen=True)
class Filter:
    """KEY=VALUE[,VALUE...] or KEY!=VALUE[,...]: a run label (or seed, run_id, config) or a
    flow column (name, ptype, fid, ...). Numbers match numerically (2 matches '2.0')."""

    key: str
    values: tuple[str, ...]
    negate: bool = False

    @classmethod
    def parse(cls, text: str) -> "Filter":
        key, sep, val = text.partition("=")
        neg = key.endswith("!")
        key, val = key.rstrip("!").strip(), val.strip()
        if not sep or not key:
            raise TracekitError(f"--where {text!r} must look like KEY=VALUE or KEY!=VALUE")
        return cls(key, tuple(v.strip() for v in val.split(",")), neg)

    @property
    def is_flow(self) -> bool:
        return self.key in FLOW_KEYS

    def __str__(self) -> str:
        return f"{self.key}{'!=' if self.negate else '='}{','.join(self.values)}"


def _lit(s: str) -> str:
    return "'" + str(s).replace("'", "''") + "'"


def _run_expr(key: str) -> str:
    """The SQL value of a run key or label, as text, over `c` (run_configs with the labels)."""
    if key == "seed":
        return "CAST(c.seed AS VARCHAR)"
    if key in ("run_id", "config", "trace_kind"):
        return f"CAST(c.{key} AS VARCHAR)"
    return f"map_extract_value(c.labels, {_lit(key)})"


def _key_expr(key: str) -> str:
    return f"CAST(f.{key} AS VARCHAR)" if key in FLOW_KEYS else _run_expr(key)


def filter_condition(flt: Filter) -> str:
    """The SQL condition a filter stands for, over `f` (a flow_stats row; for a flow key) and
    `c` (the run's run_configs row with its labels; for a run key or label). A label the run
    does not have matches no value (so a `!=` filter keeps the run)."""
    x = _key_expr(flt.key)
    ors = " OR ".join(f"{x} = {_lit(v)} OR TRY_CAST({x} AS DOUBLE) = TRY_CAST({_lit(v)} AS DOUBLE)"
                      for v in flt.values)
    return f"(coalesce({ors}, false) = false)" if flt.negate else f"coalesce({ors}, false)"


# every run's record as filter_condition's `c` (runs without a seed included: config NULL);
# run_configs (a window over every run) joined only for a config filter
_RUN_RECORDS = "SELECT run_id, seed, labels, trace_kind FROM runs"
_RUN_RECORDS_CONFIG = ("SELECT r.run_id, r.seed, r.labels, r.trace_kind, rc.config "
                       "FROM runs r LEFT JOIN run_configs rc USING (run_id)")


def run_choice_sql(where: Sequence[Filter]) -> str:
    """SELECT run_id of every run that passes all the run filters of `where`: a query over the
    run records alone (db.query.connect_run_records is enough). Flow filters are refused."""
    flow = [f for f in where if f.is_flow]
    if flow:
        raise TracekitError(f"--where {flow[0]} filters flows; here --where chooses runs "
                            "(a label, seed, run_id, config or trace_kind)")
    records = _RUN_RECORDS_CONFIG if any(f.key == "config" for f in where) else _RUN_RECORDS
    return f"SELECT run_id FROM ({records}) c WHERE " + (" AND ".join(map(filter_condition, where)) or "TRUE")


@dataclass
class Comparison:
    """What compare() looked at and what it found."""

    scenario: str
    factor: str
    metrics: tuple[Metric, ...]
    per: tuple[str, ...]
    filters: tuple[Filter, ...]
    flow_filter: str                     # the flow selection in words
    n_runs: int
    verdicts: list[Verdict] = field(default_factory=list)
    pooled: tuple[str, ...] = ()         # other labels that vary within the groups

    @property
    def pooled_note(self) -> str | None:
        if not self.pooled:
            return None
        return (f"each group pools runs with different {', '.join(self.pooled)} (split them with --per, "
                "or fix them with --where)")


def natural_key(v) -> tuple:
    try:
        return (0, float(v), "")
    except (TypeError, ValueError):
        return (1, 0.0, str(v))


def compare(con: duckdb.DuckDBPyConnection, scenario: str, factor: str, metrics: Sequence[str] = ("throughput_kbps",), *,
            per: Sequence[str] = (), where: Sequence[Filter] = (), run_ids: Sequence[str] | None = None,
            alpha: float = ALPHA) -> Comparison:
    """Per metric and combination of `per` values, the groups of `factor` among the
    scenario's runs (optionally only run_ids) that pass `where`, and their verdict."""
    mets = tuple(catalogue_metric(m) for m in metrics)
    if not mets:
        raise TracekitError("name at least one metric")
    for k in (factor, *per):
        if k in FLOW_KEYS and k != "name":
            raise TracekitError(f"cannot group by {k!r}: group by a run label or by name (the flow name)")
    if factor in per:
        raise TracekitError(f"{factor!r} is both the factor (--by) and a --per label")
    if "name" in (factor, *per) and any(m.level == "run" for m in mets):
        raise TracekitError("grouping by name (flow name) needs flow-level metrics: "
                            + ", ".join(m.name for m in mets if m.level == "run") + " are per run")
    run_conds = [filter_condition(f) for f in where if not f.is_flow]
    run_conds.insert(0, f"c.scenario = {_lit(scenario)}")
    if run_ids is not None:
        run_conds.append("list_contains(?, c.run_id)")
    params = [list(run_ids)] if run_ids is not None else []
    sel_runs = ("SELECT * FROM (SELECT c.run_id, c.scenario, c.seed, c.config, r.labels, r.trace_kind "
                "FROM run_configs c JOIN runs r USING (run_id)) c "
                f"WHERE is_packet_trace(c.trace_kind) AND {' AND '.join(run_conds)}")
    (n_runs,) = con.execute(f"SELECT count(*) FROM ({sel_runs})", params).fetchone() or (0,)
    if n_runs == 0:
        (known,) = con.execute("SELECT count(*) FROM run_configs WHERE scenario = ?", [scenario]).fetchone() or (0,)
        raise TracekitError(f"no runs with a seed of scenario {scenario!r}"
                            + (" match the filters" if known else " in the store"))
    for k in (factor, *per):
        if k in ("name", *RUN_KEYS):
            continue
        (has,) = con.execute(f"SELECT count(*) FROM ({sel_runs}) s "
                          f"WHERE map_extract_value(s.labels, {_lit(k)}) IS NOT NULL", params).fetchone() or (0,)
        if not has:
            raise TracekitError(f"no selected run has the label {k!r}")

    flow_filters = [f for f in where if f.is_flow]
    if not any(m.level == "flow" for m in mets):
        flow_cond, flow_text = (" AND ".join(filter_condition(f) for f in flow_filters) or "f.ptype = 'tcp'",
                                "none (per-run metrics)")
    elif flow_filters:
        flow_cond, flow_text = " AND ".join(filter_condition(f) for f in flow_filters), " and ".join(map(str, flow_filters))
    else:
        (n_tcp,) = con.execute(f"SELECT count(*) FROM flow_stats f JOIN ({sel_runs}) s USING (run_id) "
                            "WHERE f.ptype = 'tcp'", params).fetchone() or (0,)
        flow_cond, flow_text = ("f.ptype = 'tcp'", "the TCP flows (ptype=tcp)") if n_tcp else ("TRUE", "every flow")
    # level and per columns, over r (runs), c (run_configs) and f (flow_stats / run_metrics)
    cols = [factor, *per]
    exprs = [_key_expr(k) if k != "name" else "f.name" for k in cols]
    sel_list = ", ".join(f"{e} AS k{i}" for i, e in enumerate(exprs))
    keys = ", ".join(f"k{i}" for i in range(len(cols)))
    flow_join = ("f.run_id = m.run_id AND f.fid IS NOT DISTINCT FROM m.fid AND f.src_node = m.src_node "
                 "AND f.src_port = m.src_port AND f.dst_node = m.dst_node AND f.dst_port = m.dst_port")
    flow_list = ", ".join(_lit(m.name) for m in mets if m.level == "flow")
    run_list = ", ".join(_lit(m.name) for m in mets if m.level == "run")
    parts = []
    if flow_list:
        parts.append(f"""
            SELECT m.metric, c.run_id, c.seed, m.value, {sel_list}
            FROM run_metrics m JOIN c USING (run_id)
            JOIN flow_stats f ON {flow_join}
            WHERE m.level = 'flow' AND m.metric IN ({flow_list}) AND {flow_cond}""")
    if run_list:
        parts.append(f"""
            SELECT m.metric, c.run_id, c.seed, m.value, {sel_list}
            FROM run_metrics m JOIN c USING (run_id)
            WHERE m.level = 'run' AND m.metric IN ({run_list})""")
    # per metric, group and run: the run's value (the mean over its selected flows). Both
    # queries below read it, and computing it reads run_metrics over every selected run (most
    # of the time of a comparison), so it is computed once, into a temporary table
    per_run_sql = f"""
        WITH c AS ({sel_runs}),
        vals AS ({" UNION ALL ".join(parts)})
        SELECT metric, {keys}, run_id, any_value(seed) AS seed, avg(value) AS value,
               count(value) AS n_flows
        FROM vals GROUP BY metric, {keys}, run_id
        HAVING count(value) > 0"""
    per_run = f"temp.tracekit_compare_per_run_{uuid.uuid4().hex}"
    try:
        con.execute(f"CREATE TEMP TABLE {per_run.split('.')[1]} AS {per_run_sql}", params)
    except Exception as e:
        raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
    try:
        return _compare_groups(con, scenario, factor, mets, per, where, flow_text, flow_cond, n_runs, cols,
                               keys, sel_list, sel_runs, params, per_run, alpha)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {per_run}")


def _compare_groups(con: duckdb.DuckDBPyConnection, scenario: str, factor: str, mets: tuple[Metric, ...], per: Sequence[str],
                    where: Sequence[Filter], flow_text: str, flow_cond: str, n_runs: int, cols: list[str],
                    keys: str, sel_list: str, sel_runs: str, params: list, per_run: str,
                    alpha: float) -> Comparison:
    """compare()'s groups and verdicts from the per-run values in the table per_run."""
    values_sql = f"""
        SELECT metric, {keys}, list(value ORDER BY seed, value) AS vals,
               list(seed ORDER BY seed, value) AS seeds, avg(value) AS mean,
               stddev_samp(value) AS sd, ci95_half_width(count(value), stddev_samp(value)) AS ci,
               sum(n_flows) AS n_flows
        FROM {per_run} GROUP BY metric, {keys}"""
    try:
        rows = con.execute(values_sql).fetchall()
    except Exception as e:
        raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
    # the note: per group, whether its selected flows are all of loss-based variants, and
    # whether any of them lost a packet in any run
    loss_sql = f"""
        WITH c AS ({sel_runs})
        SELECT {keys}, bool_and(lower(name) IN ({', '.join(map(_lit, LOSS_BASED))})) AS loss_based,
               max(dropped_pkts) AS max_dropped
        FROM (SELECT f.name, f.dropped_pkts, {sel_list}
              FROM flow_stats f JOIN c USING (run_id) WHERE {flow_cond})
        GROUP BY {keys}"""
    loss = {tuple(r[:len(cols)]): (bool(r[len(cols)]), r[len(cols) + 1]) for r in con.execute(loss_sql, params).fetchall()}

    # labels other than the factor and --per ones that take several values within a group
    pooled = [k for (k,) in con.execute(f"""
        WITH c AS ({sel_runs})
        SELECT DISTINCT lk FROM (
            SELECT metric, {keys}, lk FROM (
                SELECT p.metric, {', '.join('p.' + k for k in keys.split(', '))},
                       unnest(map_keys(c.labels)) AS lk, unnest(map_values(c.labels)) AS lv
                FROM (SELECT DISTINCT metric, {keys}, run_id FROM {per_run}) p JOIN c USING (run_id))
            GROUP BY metric, {keys}, lk HAVING count(DISTINCT lv) > 1)
        ORDER BY 1""", params).fetchall()
        if k not in (factor, *per, "seed", "sim_id", "scenario")]
    out = Comparison(scenario, factor, mets, tuple(per), tuple(where), flow_text, n_runs, pooled=tuple(pooled))
    by_block: dict[tuple, list[tuple]] = {}
    for r in rows:
        metric_name, key = r[0], r[1:1 + len(cols)]
        by_block.setdefault((metric_name, tuple(key[1:])), []).append(r)
    for M in mets:   # a metric without a single value still gets its (empty) verdict
        if not any(b[0] == M.name for b in by_block):
            by_block[(M.name, ())] = []
    blocks = sorted(by_block, key=lambda b: ([m.name for m in mets].index(b[0]), [natural_key(v) for v in b[1]]))
    for metric_name, per_vals in blocks:
        M = next(m for m in mets if m.name == metric_name)
        groups, lossy = [], []
        for r in sorted(by_block[(metric_name, per_vals)], key=lambda r: natural_key(r[1])):
            vals, seeds, mean, sd, ci, n_flows = r[1 + len(cols):]
            groups.append(Group("(none)" if r[1] is None else str(r[1]), tuple(float(v) for v in vals),
                                tuple(int(s) for s in seeds), mean, sd, ci, int(n_flows or 0)))
            lossy.append(loss.get((r[1], *per_vals)))
        lb = [x for x in lossy if x and x[0]]
        note = NO_LOSS_NOTE if len(lb) >= 2 and all(x[1] == 0 for x in lb) else None
        per_pairs = tuple((k, "(none)" if v is None else str(v)) for k, v in zip(per, per_vals))
        out.verdicts.append(judge(M, groups, factor, alpha, per_pairs, note))
    return out


def experiment_run_ids(con: duckdb.DuckDBPyConnection, experiment: str, quick: bool,
                       seeds: list[int] | None = None) -> tuple[list[str], int]:
    """(run_ids of the packet-trace runs of the experiment's simulations in the store, by
    sim_id; simulations planned). It reads the run records alone (db.query.connect_run_records
    is enough)."""
    from tracekit.experiments.sweep import plan_experiment

    specs = plan_experiment(experiment, seeds, quick)
    run_ids = [r for (r,) in con.execute(
        "SELECT run_id FROM runs WHERE is_packet_trace(trace_kind) "
        "AND list_contains(?, labels['sim_id'])", [[s.sim_id for s in specs]]).fetchall()]
    return run_ids, len(specs)


def experiment_comparison(con: duckdb.DuckDBPyConnection, name: str, seeds: list[int] | None = None, quick: bool = False,
                          data_dir: str | os.PathLike | None = None):
    """The comparison an experiment declares (its `compare` table: factor, per, the paper's
    metrics, flow filters), over the packet-trace runs of exactly its simulations (by sim_id,
    so other runs of the same scenario in the store are left out). With data_dir (the store
    of `con`), the metrics are computed on a connection of their own over only those runs.
    Returns compare.Comparison."""
    from tracekit.core.errors import clip_repr
    from tracekit.experiments import EXPERIMENTS

    run_ids, n_planned = experiment_run_ids(con, name, quick, seeds)     # an unknown name: its error
    exp = EXPERIMENTS[name]
    if exp.compare is None:
        raise TracekitError(f"experiment {clip_repr(name)} declares no comparison")
    if not run_ids:
        raise TracekitError(f"none of experiment {name}'s {n_planned} simulations is in the store; "
                            f"run: tracekit sweep --experiment {name}")
    if data_dir is not None:
        from tracekit.db.query import connect

        con = connect(data_dir, run_ids=run_ids)
    c = exp.compare
    return compare(con, exp.scenario, c.by, c.metrics, per=c.per,
                   where=[Filter.parse(w) for w in c.where], run_ids=run_ids)
