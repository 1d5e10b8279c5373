"""`tracekit report`: one self-contained HTML file for a selection of runs, conditions first.

A *selection* is the runs with a seed (run_configs: the replications) of the packet-trace
kinds that pass every `--where` filter (the filters of `tracekit compare`: a run label, seed,
run_id or config, KEY=VALUE or KEY!=VALUE; flow filters such as name!=CBR select the flows),
optionally only the simulations of a named experiment. The report has, per scenario in the
selection:

1. the conditions: the scenario, the parameters held fixed and those swept (with units from
   the scenario's declaration), the seeds and their count per configuration, what a seed
   varies (the scenario's own words), the tracekit version of every run, the ns-2 version;
2. the comparison tables: `compare.compare` on the same selection (factor: the variant, or the
   scenario's series parameter, or the first swept label; one verdict per value of every other
   swept label), so the numbers are those `tracekit compare` prints: per group n, mean, 95 %
   confidence interval (Student t over the per-run values) and the verdict (Welch's t-test);
3. figures built from those same groups: each metric against the swept numeric parameter per
   group with its 95 % CI band (or bars with whiskers when nothing numeric is swept),
   throughput against delay (one point per group and parameter value; delay axis inverted so
   that better is up and right, Pantheon's convention), Jain's fairness index, and the CDF of
   the per-packet one-way delay per group (runs pooled), each with a caption stating its
   conditions;
4. with an experiment that a paper file names: `reproduce.evaluate` on the store (no
   simulation is run): the paper's values beside ours and the claims' verdicts.

The logic is here; the CLI command only parses options. plotly (the dashboard extra) draws
the figures, and its plotly.js is written into the file, so the report opens offline.
"""
from __future__ import annotations

import datetime
import html
import math
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from tracekit import __version__
from tracekit.db.catalogue import Metric, metric as catalogue_metric
from tracekit.analysis.compare import ALPHA, Comparison, Filter, Group, Verdict, compare, filter_condition, fmt_value, natural_key
from tracekit.analysis.stats import t_975
from tracekit.core.errors import TracekitError
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB is imported where it is used, not when this module is
    import duckdb

# the metrics a report compares when none are named, by kind of run
WIRED_METRICS = ("throughput_kbps", "mean_delay_ms", "p95_delay_ms", "drop_rate", "jain_index")
WIRELESS_METRICS = ("run_pdr", "run_throughput_kbps", "run_mean_delay_ms", "nrl")
# (throughput, delay) of the throughput-delay plane, by kind of run
TPUT_DELAY = {"wired": ("throughput_kbps", "mean_delay_ms"), "wireless": ("run_throughput_kbps", "run_mean_delay_ms")}
# the labels tried as the factor first, in this order (then the scenario's series parameter)
FACTOR_PREFERENCE = ("variant", "pair", "routing", "queue")
# labels that are not parameters of the configuration
NOT_PARAMS = ("scenario", "seed", "sim_id")
CDF_QUANTILES = 200         # points of each delay CDF (quantiles of the pooled delays)
MAX_CDF_FIGURES = 12        # per scenario: one per combination of the other swept labels
FEW_SEEDS = 5               # below this many runs per group, captions warn that intervals are wide
CI_TEXT = "95 % confidence interval of the mean over seeds (Student t, n - 1 degrees of freedom)"
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22", "#17becf")

Progress = Callable[[str], None]
# a flow's name in words over all_flows (prefix {f}): its name, else its fid, else its endpoints
FLOW_NAME_SQL = ("coalesce({f}name, 'fid ' || CAST({f}fid AS VARCHAR), "
                 "{f}ptype || ' ' || CAST({f}src_node AS VARCHAR) || '->' || CAST({f}dst_node AS VARCHAR))")


# ---------------------------------------------------------------------------------------
# what the report holds (computed first; rendered to HTML by render_html)


@dataclass
class Conditions:
    scenario: str
    title: str
    trace_kind: str                              # wired | wireless: which metrics (wireless: the per-run MANET ones)
    n_runs: int
    fixed: list[tuple[str, str, str]]            # (label, value, unit)
    swept: list[tuple[str, list[str], str]]      # (label, values in natural order, unit)
    seeds: list[int]
    n_configs: int
    seeds_per_config: tuple[int, int]            # (fewest, most)
    seed_varies: str
    tracekit_versions: list[str]
    flows: list[str]                             # flow names of the selected runs
    kinds: str = ""                              # the trace kinds of the runs, in words

    @property
    def seeds_text(self) -> str:
        lo, hi = self.seeds_per_config
        per = f"{lo}" if lo == hi else f"{lo} to {hi}"
        return (f"{len(self.seeds)} distinct ({seed_list(self.seeds)}); {per} per configuration, "
                f"{self.n_configs} configuration{'s' if self.n_configs != 1 else ''}")


@dataclass
class FigureSpec:
    key: str                    # a stable name (the file name of the chart's image export)
    title: str
    caption: str
    figure: Any                 # a plotly Figure


@dataclass
class Section:
    conditions: Conditions
    comparison: Comparison
    factor: str
    per: tuple[str, ...]
    figures: list[FigureSpec] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: list[Comparison] = field(default_factory=list)     # per-run metrics when flows are the factor


@dataclass
class Report:
    selection: str                               # the selection in words
    generated_at: str
    tracekit_version: str
    ns_version: str
    sections: list[Section] = field(default_factory=list)
    reproduce: Any = None                        # reproduce.Result, with an experiment and its paper
    notes: list[str] = field(default_factory=list)

    @property
    def n_figures(self) -> int:
        return sum(len(s.figures) for s in self.sections)


def seed_list(seeds: Sequence[int]) -> str:
    """1-5, 7, 9-10."""
    out: list[str] = []
    s = sorted(set(seeds))
    i = 0
    while i < len(s):
        j = i
        while j + 1 < len(s) and s[j + 1] == s[j] + 1:
            j += 1
        out.append(str(s[i]) if i == j else f"{s[i]}-{s[j]}")
        i = j + 1
    return ", ".join(out)


def _is_number(v: str) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def ns_version(ns_binary: str = "ns") -> str:
    """The version of the ns-2 on this machine (its `ns-version` procedure), or why it is unknown.
    The store does not record which ns-2 made a run: this is the one the sweeps here use."""
    import shutil

    path = shutil.which(ns_binary)
    if path is None:
        return f"unknown ({ns_binary} not found)"
    with tempfile.TemporaryDirectory(prefix="tracekit-nsver-") as d:
        script = Path(d) / "v.tcl"
        script.write_text("puts [ns-version]\n")
        try:
            out = subprocess.run([path, str(script)], capture_output=True, text=True, timeout=20, cwd=d)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"unknown ({type(e).__name__})"
    text = out.stdout.strip().splitlines()
    return f"{text[-1]} ({path})" if out.returncode == 0 and text else f"unknown ({path} did not say)"


# ---------------------------------------------------------------------------------------
# the selection


SELECT_RUNS = """
    SELECT * FROM (SELECT c.run_id, c.scenario, c.seed, c.config, r.labels, r.trace_kind, r.tracekit_version
                   FROM run_configs c JOIN runs r USING (run_id)) c
    WHERE is_packet_trace(c.trace_kind)"""


@dataclass
class RunRow:
    run_id: str
    scenario: str | None
    seed: int
    config: str
    labels: dict[str, str]
    trace_kind: str
    tracekit_version: str | None


def selected_runs(con: duckdb.DuckDBPyConnection, where: Sequence[Filter], run_ids: Sequence[str] | None = None) -> list[RunRow]:
    """The runs with a seed (one per simulation) of the packet-trace kinds that pass the run
    filters of `where` (and are among run_ids, when given)."""
    conds = [filter_condition(f) for f in where if not f.is_flow]
    params: list = []
    if run_ids is not None:
        conds.append("list_contains(?, c.run_id)")
        params.append(list(run_ids))
    sql = (f"SELECT run_id, scenario, seed, config, map_keys(labels), map_values(labels), trace_kind, tracekit_version "
           f"FROM ({SELECT_RUNS}) c" + (" WHERE " + " AND ".join(conds) if conds else "") + " ORDER BY scenario, config, seed")
    try:
        rows = con.execute(sql, params).fetchall()
    except Exception as e:      # a DuckDB error in a filter's value: one line
        if type(e).__module__.startswith("duckdb"):
            raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
        raise
    return [RunRow(r[0], r[1], int(r[2]), r[3], dict(zip(r[4], r[5])), r[6], r[7]) for r in rows]


def seed_varies(scenario: str) -> str:
    """What a seed varies in the scenario, in its declaration's words."""
    from tracekit.experiments import SCENARIOS

    sc = SCENARIOS.get(scenario)
    if sc is None:
        return "not stated (not a bundled scenario)"
    text = " ".join(sc.description.split())
    m = re.search(r"(?:A|The|Each) seed (?:varies|sets|changes|draws)\b.*?\.(?=\s|$)", text)
    if m:
        return m.group(0)
    m = re.search(r"[^.]*\bseed\b.*?\.(?=\s|$)", text)
    return m.group(0).strip() if m else "not stated in the scenario's description"


def conditions_of(scenario: str, runs: list[RunRow]) -> Conditions:
    from tracekit.experiments import SCENARIOS

    sc = SCENARIOS.get(scenario)
    units = {p.name: p.unit for p in sc.params} if sc else {}
    keys = sorted({k for r in runs for k in r.labels if k not in NOT_PARAMS},
                  key=lambda k: ([p.name for p in sc.params].index(k) if sc and k in units else 10_000, k))
    fixed, swept = [], []
    for k in keys:
        vals = sorted({r.labels.get(k) or "(none)" for r in runs}, key=natural_key)
        if len(vals) == 1:
            fixed.append((k, vals[0], units.get(k, "")))
        else:
            swept.append((k, vals, units.get(k, "")))
    if any(k == "duration" for k, _, _ in swept):      # stop_s = duration + drain_s: not a sweep of its own
        swept = [s for s in swept if s[0] != "stop_s"]
    per_config: dict[str, set[int]] = {}
    for r in runs:
        per_config.setdefault(r.config, set()).add(r.seed)
    counts = [len(v) for v in per_config.values()]
    kinds = sorted({r.trace_kind for r in runs})
    return Conditions(
        scenario=scenario, title=sc.title if sc else "(not a bundled scenario)",
        trace_kind="wireless" if kinds == ["wireless"] else "wired", n_runs=len(runs), fixed=fixed, swept=swept,
        seeds=sorted({r.seed for r in runs}), n_configs=len(per_config),
        seeds_per_config=(min(counts), max(counts)), seed_varies=seed_varies(scenario),
        tracekit_versions=sorted({r.tracekit_version or "(not recorded)" for r in runs}), flows=[], kinds=" and ".join(kinds))


def default_factor(scenario: str, swept: list[tuple[str, list[str], str]], labels: set[str], n_flow_names: int = 0) -> str:
    """The factor groups are formed by: the variant (or pair, routing, queue, or the scenario's
    series parameter) when it is swept, else the first swept label that is not a number, else
    the first swept label; with nothing swept, the flows by name when there are several, else
    the variant or series label (one group)."""
    from tracekit.experiments import SCENARIOS

    sc = SCENARIOS.get(scenario)
    series = sc.series if sc is not None else None
    prefer = [k for k in (*FACTOR_PREFERENCE[:1], series, *FACTOR_PREFERENCE[1:]) if k]
    names = [k for k, _, _ in swept]
    for k in prefer:
        if k in names:
            return k
    cats = [k for k, vals, _ in swept if not all(_is_number(v) for v in vals)]
    if cats:
        return cats[0]
    if names:
        return names[0]
    if n_flow_names > 1:
        return "name"
    for k in prefer:
        if k in labels:
            return k
    return "scenario"


# ---------------------------------------------------------------------------------------
# building the report


def build_report(data_dir: str | os.PathLike, where: Sequence[Filter] = (), experiment: str | None = None,
                 quick: bool | None = None, metrics: Sequence[str] = (), by: str | None = None,
                 progress: Progress | None = None, ns_binary: str = "ns") -> Report:
    """The report on the selection (see the module docstring). quick: with an experiment, its
    quick version (True), the full one (False), or whichever has more runs in the store (None)."""
    from tracekit.db.query import connect, connect_run_records

    say = progress or (lambda msg: None)
    where = list(where)
    con = connect_run_records(data_dir)      # the choice of runs; their metrics on a connection over them
    run_ids: list[str] | None = None
    sel_text = " and ".join(str(f) for f in where) or "every run with a seed"
    reproduce_quick = False
    if experiment is not None:
        from tracekit.experiments import EXPERIMENTS
        from tracekit.analysis.compare import experiment_run_ids

        if experiment not in EXPERIMENTS:
            raise TracekitError(f"unknown experiment {experiment!r}; available: {', '.join(EXPERIMENTS)}")
        exp = EXPERIMENTS[experiment]
        if quick is None:
            # the full version when all of it is in the store, else the quick one when all of that is
            # (its simulations are a subset of the full one's), else whichever has more
            full_ids, n_full = experiment_run_ids(con, experiment, False)
            quick_ids, n_quick = experiment_run_ids(con, experiment, True) if exp.quick is not None else ([], 0)
            reproduce_quick = len(full_ids) < n_full and bool(quick_ids) and (len(quick_ids) == n_quick or len(quick_ids) > len(full_ids))
        else:
            reproduce_quick = quick
        run_ids, n_planned = experiment_run_ids(con, experiment, reproduce_quick)
        if exp.compare is not None:       # its flows, as tracekit compare --experiment selects them
            where += [Filter.parse(w) for w in exp.compare.where if Filter.parse(w).is_flow and str(Filter.parse(w)) not in map(str, where)]
        if not run_ids:
            raise TracekitError(f"none of experiment {experiment}'s {n_planned} simulations"
                                f"{' (quick version)' if reproduce_quick else ''} is in the store; "
                                f"run: tracekit sweep --experiment {experiment}{' --quick' if reproduce_quick else ''}")
        sel_text = (f"experiment {experiment}{' (quick version)' if reproduce_quick else ''}: "
                    f"{len(run_ids)} of its {n_planned} simulations in the store" + (f", where {sel_text}" if where else ""))
    say("selecting runs")
    runs = selected_runs(con, where, run_ids)
    if not runs:
        raise TracekitError("no runs with a seed match the selection"
                            + (f" ({' and '.join(map(str, where))})" if where else "")
                            + "; tracekit runs lists the runs and their labels")
    report = Report(selection=sel_text, generated_at=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                    tracekit_version=__version__, ns_version=ns_version(ns_binary))
    no_scenario = [r for r in runs if r.scenario is None]
    if no_scenario:
        report.notes.append(f"{len(no_scenario)} selected run(s) have no scenario label and are left out "
                            "(ingest them with --label scenario=NAME)")
    by_scenario: dict[str, list[RunRow]] = {}
    for r in runs:
        if r.scenario is not None:
            by_scenario.setdefault(r.scenario, []).append(r)
    if not by_scenario:
        raise TracekitError("no selected run has a scenario label: nothing to compare")
    # the metric views over only the selected runs: the cost of the selection, not of the store
    con.close()
    con = connect(data_dir, run_ids=[r.run_id for r in runs if r.scenario is not None])
    try:
        for scenario, sruns in by_scenario.items():
            report.sections.append(_section(con, scenario, sruns, where, metrics, by, experiment, say,
                                            several=len(by_scenario) > 1))
        if experiment is not None:
            report.reproduce = _reproduce(data_dir, experiment, reproduce_quick, say)
    finally:
        con.close()
    return report


def _metrics_for(kind: str, metrics: Sequence[str], experiment: str | None) -> list[str]:
    if metrics:
        return list(dict.fromkeys(metrics))
    base = list(WIRELESS_METRICS if kind == "wireless" else WIRED_METRICS)
    if experiment is not None:
        from tracekit.experiments import EXPERIMENTS

        c = EXPERIMENTS[experiment].compare
        if c is not None:
            base = list(dict.fromkeys([*c.metrics, *base]))
    return base


def _section(con: duckdb.DuckDBPyConnection, scenario: str, runs: list[RunRow], where: Sequence[Filter], metrics: Sequence[str],
             by: str | None, experiment: str | None, say: Progress, several: bool = False) -> Section:
    """One scenario's part of the report. several: the selection spans several scenarios (a
    --by label one of them lacks is then a note there, not an error)."""
    cond = conditions_of(scenario, runs)
    labels = {k for r in runs for k in r.labels}
    run_ids = [r.run_id for r in runs]
    cond.flows = [n for (n,) in con.execute(
        f"SELECT DISTINCT {FLOW_NAME_SQL.format(f='')} FROM all_flows WHERE list_contains(?, run_id) ORDER BY 1",
        [run_ids]).fetchall()]
    factor = by or default_factor(scenario, cond.swept, labels, len(cond.flows))
    early_notes = []
    if by is not None and by not in labels and by not in ("name", "seed", "run_id", "config") and several:
        factor = default_factor(scenario, cond.swept, labels, len(cond.flows))
        early_notes.append(f"no run of {scenario} has the label {by!r} (--by): grouped by {factor} instead")
    if by is None and experiment is not None:
        from tracekit.experiments import EXPERIMENTS

        c = EXPERIMENTS[experiment].compare
        if c is not None and EXPERIMENTS[experiment].scenario == scenario:
            factor = c.by
    per = tuple(k for k, _, _ in cond.swept if k != factor)
    names = _metrics_for(cond.trace_kind, metrics, experiment)
    for m in TPUT_DELAY[cond.trace_kind]:      # the throughput-delay plane needs both
        if m not in names:
            names.append(m)
    notes = early_notes
    if factor == "name":       # flows compared with each other: per-run metrics say nothing per flow
        per_run = [m for m in names if catalogue_metric(m).level == "run"]
        names = [m for m in names if m not in per_run]
        if per_run:
            notes.append(f"grouped by flow name: the per-run metrics ({', '.join(per_run)}) are compared "
                         "over all the runs together instead (factor: scenario)")
    say(f"{scenario}: comparing {len(runs)} runs by {factor} on {', '.join(names)}")
    comp = compare(con, scenario, factor, names, per=per, where=where, run_ids=run_ids)
    sec = Section(cond, comp, factor, per, notes=notes)
    if factor == "name" and per_run:
        sec.extra.append(compare(con, scenario, "scenario", per_run, per=per, where=where, run_ids=run_ids))
    if comp.pooled_note:
        sec.notes.append(comp.pooled_note)
    say(f"{scenario}: drawing the figures")
    _figures(con, sec, runs, where)
    return sec


def _reproduce(data_dir, experiment: str, quick: bool, say: Progress):
    from tracekit.db.query import connect_run_records
    from tracekit.analysis.reproduce import evaluate, load_papers, papers_of

    papers = load_papers()
    if not papers_of(experiment, papers):
        return None
    say(f"setting experiment {experiment} beside its paper(s) (tracekit reproduce, on the store's runs)")
    con = connect_run_records(data_dir)
    try:
        return evaluate(con, experiment, quick=quick, papers=papers, data_dir=data_dir)
    finally:
        con.close()


# ---------------------------------------------------------------------------------------
# figures


def _colours(levels: Sequence[str]) -> dict[str, str]:
    return {lv: PALETTE[i % len(PALETTE)] for i, lv in enumerate(levels)}


def _clip(v: float, m: Metric) -> float:
    if m.min is not None and v < m.min:
        return m.min
    if m.max is not None and v > m.max:
        return m.max
    return v


def _interval(g: Group, m: Metric) -> tuple[float, float] | None:
    """The group's 95 % CI, clipped to the metric's range (a throughput is never below 0)."""
    if g.mean is None or g.ci95_half_width is None or math.isnan(g.ci95_half_width):
        return None
    return _clip(g.mean - g.ci95_half_width, m), _clip(g.mean + g.ci95_half_width, m)


def _error_bars(groups: Sequence[Group], m: Metric) -> dict:
    """plotly error bars: each group's 95 % CI (clipped to the metric's range) around its mean."""
    up, down = [], []
    for g in groups:
        iv = _interval(g, m)
        mean = g.mean if g.mean is not None else 0.0
        up.append(iv[1] - mean if iv else 0.0)
        down.append(mean - iv[0] if iv else 0.0)
    return dict(type="data", symmetric=False, array=up, arrayminus=down)


def _n_text(groups: Sequence[Group]) -> str:
    ns = sorted({g.n for g in groups if g.n})
    if not ns:
        return "no runs"
    text = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]} to {ns[-1]}"
    text += " seed" + ("s" if ns[-1] != 1 else "") + " per point"
    if ns[0] < 2:
        text += " (a single seed: no interval)"
    elif ns[0] < FEW_SEEDS:
        text += f" (n = {ns[0]}: wide interval)"
    return text


def _sub(groups: Sequence[Group], what: str) -> str:
    """A figure's subtitle: its seeds per point, and what its bands or whiskers are (if any)."""
    if all(g.n < 2 for g in groups):
        return f"{_n_text(groups)}; means of one run each, no interval drawn"
    return f"{_n_text(groups)}; {what}"


def _layout(fig, title: str, sub: str, xaxis: str, yaxis: str) -> None:
    fig.update_layout(
        title=dict(text=f"{html.escape(title)}<br><sup>{html.escape(sub)}</sup>", x=0.0, xanchor="left"),
        xaxis_title=xaxis, yaxis_title=yaxis, template="plotly_white", height=460,
        margin=dict(l=70, r=30, t=90, b=60), legend=dict(orientation="v"), hovermode="closest")


def _per_text(per: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{k}={v}" for k, v in per)


def _figures(con: duckdb.DuckDBPyConnection, sec: Section, runs: list[RunRow], where: Sequence[Filter]) -> None:
    import plotly.graph_objects as go

    comp, cond = sec.comparison, sec.conditions
    levels = sorted({g.level for v in comp.verdicts for g in v.groups}, key=natural_key)
    colours = _colours(levels)
    scen = cond.scenario
    flows = comp.flow_filter
    tput_name, delay_name = TPUT_DELAY[cond.trace_kind]
    numeric = [k for k, vals, _ in cond.swept if k != sec.factor and all(_is_number(v) for v in vals)]
    x_key = numeric[0] if numeric else None
    by_metric: dict[str, list[Verdict]] = {}
    for v in comp.verdicts:
        by_metric.setdefault(v.metric.name, []).append(v)
    fixed_short = ", ".join(f"{k}={v}" for k, v, _ in cond.fixed if k in ("variant", "queue", "routing", "pair"))
    cond_head = f"{scen}" + (f" ({fixed_short})" if fixed_short else "")

    # one figure per metric: the sweep curve, or bars with whiskers
    for name, verdicts in by_metric.items():
        M = verdicts[0].metric
        if name == "jain_index":
            continue        # its own section below
        groups = [g for v in verdicts for g in v.groups if g.n]
        if not groups:
            sec.notes.append(f"{M.title} ({name}): no value in any selected run"
                             + (f" ({_undefined_why(name)})" if _undefined_why(name) else ""))
            continue
        fig = go.Figure()
        if x_key is not None:
            x_pos = sec.per.index(x_key)
            others = [k for k in sec.per if k != x_key]
            series: dict[tuple, list[tuple[float, Group]]] = {}
            for v in verdicts:
                pv = dict(v.per)
                rest = tuple((k, pv[k]) for k in others)
                for g in v.groups:
                    if g.n:
                        series.setdefault((g.level, rest), []).append((float(v.per[x_pos][1]), g))
            for i, ((level, rest), pts) in enumerate(sorted(series.items(), key=lambda kv: (natural_key(kv[0][0]), kv[0][1]))):
                pts.sort(key=lambda p: p[0])
                label = level + (f" ({_per_text(rest)})" if rest else "")
                col = colours.get(level, PALETTE[i % len(PALETTE)])
                dash = ["solid", "dash", "dot", "dashdot"][sorted({r for _, r in series}).index(rest) % 4] if others else "solid"
                band = [(x, iv) for x, g in pts if (iv := _interval(g, M)) is not None]
                if band:
                    xs = [x for x, _ in band] + [x for x, _ in reversed(band)]
                    ys = [iv[1] for _, iv in band] + [iv[0] for _, iv in reversed(band)]
                    fig.add_trace(go.Scatter(x=xs, y=ys, fill="toself", fillcolor=col, opacity=0.18, line=dict(width=0),
                                             hoverinfo="skip", showlegend=False, legendgroup=label, name=f"{label} 95% CI"))
                fig.add_trace(go.Scatter(
                    x=[x for x, _ in pts], y=[g.mean for _, g in pts], mode="lines+markers", name=label, legendgroup=label,
                    line=dict(color=col, dash=dash),
                    customdata=[[g.n, g.ci95_half_width if g.ci95_half_width is not None else float("nan")] for _, g in pts],
                    hovertemplate=f"{html.escape(label)}<br>{x_key}=%{{x}}<br>mean %{{y:.4g}}<br>± %{{customdata[1]:.3g}} (95% CI), n = %{{customdata[0]}}<extra></extra>"))
            xunit = next((u for k, _, u in cond.swept if k == x_key), "")
            _layout(fig, f"{M.title} vs {x_key}: {cond_head}", _sub(groups, "band: 95% CI of the mean, clipped to the metric's range"),
                    f"{x_key}" + (f" ({xunit})" if xunit else ""), M.axis)
            what = f"{M.title} against {x_key}, one line per {sec.factor}" + (f" and {', '.join(others)}" if others else "")
        else:
            for i, v in enumerate(verdicts):
                gs = [g for g in v.groups if g.n]
                fig.add_trace(go.Bar(
                    x=[g.level for g in gs], y=[g.mean for g in gs], name=_per_text(v.per) or M.title,
                    marker_color=[colours[g.level] for g in gs] if not v.per else PALETTE[i % len(PALETTE)],
                    error_y=_error_bars(gs, M),
                    customdata=[[g.n] for g in gs],
                    hovertemplate="%{x}: mean %{y:.4g}, n = %{customdata[0]}<extra></extra>"))
            _layout(fig, f"{M.title} by {sec.factor}: {cond_head}", _sub(groups, "whiskers: 95% CI of the mean, clipped to the metric's range"),
                    sec.factor, M.axis)
            fig.update_layout(barmode="group", showlegend=bool(sec.per))
            what = f"{M.title} per {sec.factor}" + (f", grouped by {', '.join(sec.per)}" if sec.per else "")
        sec.figures.append(FigureSpec(
            f"{scen}-{name}", f"{M.title} ({name}, {M.unit})",
            f"{what}. Scenario {scen}; conditions: the fixed parameters above; flows: {flows}. "
            f"Each point is the mean over seeds of the per-run value (a run's selected flows averaged); {_n_text(groups)}. "
            f"{'Bands' if x_key else 'Whiskers'}: {CI_TEXT}, clipped to the metric's range"
            + (f" [{fmt_value(M.min)}, {fmt_value(M.max)}]" if M.min is not None and M.max is not None else
               f" (>= {fmt_value(M.min)})" if M.min is not None else "") + ".", fig))

    # throughput vs delay: one point per group and parameter value
    tv, dv = by_metric.get(tput_name, []), by_metric.get(delay_name, [])
    plane: list[tuple[str, tuple[tuple[str, str], ...], Group, Group]] = []
    for a in tv:
        b = next((x for x in dv if x.per == a.per), None)
        if b is None:
            continue
        dg = {g.level: g for g in b.groups if g.n}
        for g in a.groups:
            if g.n and g.level in dg:
                plane.append((g.level, a.per, g, dg[g.level]))
    if plane:
        TM, DM = catalogue_metric(tput_name), catalogue_metric(delay_name)
        fig = go.Figure()
        for level in levels:
            mine = [p for p in plane if p[0] == level]
            if not mine:
                continue
            fig.add_trace(go.Scatter(
                x=[d.mean for _, _, _, d in mine], y=[t.mean for _, _, t, _ in mine], mode="markers+text", name=level,
                marker=dict(color=colours[level], size=10), text=[_per_text(per) for _, per, _, _ in mine],
                textposition="top center", textfont=dict(size=10),
                error_x=_error_bars([d for _, _, _, d in mine], DM), error_y=_error_bars([t for _, _, t, _ in mine], TM),
                hovertemplate=f"{html.escape(level)} %{{text}}<br>delay %{{x:.4g}} {DM.unit}<br>throughput %{{y:.4g}} {TM.unit}<extra></extra>"))
        allg = [p[2] for p in plane]
        _layout(fig, f"Throughput vs delay: {cond_head}",
                _sub(allg, "whiskers: 95% CI of each mean") + "; delay axis inverted: better is up and right",
                f"{DM.title} ({DM.unit}), inverted: lower is to the right", TM.axis)
        fig.update_xaxes(autorange="reversed")
        sec.figures.append(FigureSpec(
            f"{scen}-throughput-delay", "Throughput vs delay",
            f"{TM.title} ({tput_name}) against {DM.title.lower()} ({delay_name}), one point per {sec.factor} "
            + (f"and value of {', '.join(sec.per)} (labelled), never averaged across them" if sec.per else "")
            + f". The delay axis is inverted (Pantheon's convention): up and right is better. Scenario {scen}; "
            f"flows: {flows}; {_n_text(allg)}. Whiskers: {CI_TEXT}, clipped to each metric's range.", fig))

    # fairness: Jain's index per group
    jv = by_metric.get("jain_index", []) or [v for c in sec.extra for v in c.verdicts if v.metric.name == "jain_index"]
    jg = [g for v in jv for g in v.groups if g.n]
    if jv and not jg:
        sec.notes.append(f"Jain's fairness index: no value in any selected run ({_undefined_why('jain_index')})")
    elif jg:
        JM = catalogue_metric("jain_index")
        fig = go.Figure()
        for i, v in enumerate(jv):
            gs = [g for g in v.groups if g.n]
            fig.add_trace(go.Bar(
                x=[g.level for g in gs], y=[g.mean for g in gs], name=_per_text(v.per) or "Jain's index",
                marker_color=[colours.get(g.level, PALETTE[0]) for g in gs] if not v.per else PALETTE[i % len(PALETTE)],
                error_y=_error_bars(gs, JM),
                hovertemplate="%{x}: %{y:.4f}<extra></extra>"))
        jfactor = jv[0].factor
        _layout(fig, f"Jain's fairness index by {jfactor}: {cond_head}",
                _sub(jg, "whiskers: 95% CI of the mean, clipped to [0, 1]"), jfactor, "Jain's index (0 to 1)")
        fig.update_layout(barmode="group", showlegend=bool(sec.per))
        fig.update_yaxes(range=[0, 1.05])
        sec.figures.append(FigureSpec(
            f"{scen}-fairness", "Fairness (Jain's index)",
            f"Jain's fairness index over the TCP flows of each run, per {jfactor}"
            + (f", grouped by {', '.join(sec.per)}" if sec.per else "") + f". Scenario {scen}; {_n_text(jg)}. "
            f"Whiskers: {CI_TEXT}, clipped to [0, 1] (1 = equal shares).", fig))

    _delay_cdfs(con, sec, runs, where, colours, cond_head)


def _undefined_why(name: str) -> str:
    from tracekit.analysis.reproduce import UNDEFINED_WHY

    return UNDEFINED_WHY.get(name, "")


def _flow_condition(con: duckdb.DuckDBPyConnection, where: Sequence[Filter], run_ids: list[str]) -> tuple[str, str]:
    """(SQL over all_flows f, words): the flows compare selects, by the same rule (the flow
    filters, else the TCP flows when there are any, else every flow)."""
    flt = [f for f in where if f.is_flow]
    if flt:
        return " AND ".join(filter_condition(f) for f in flt), " and ".join(map(str, flt))
    (n_tcp,) = con.execute("SELECT count(*) FROM all_flows WHERE ptype = 'tcp' AND list_contains(?, run_id)", [run_ids]).fetchone() or (0,)
    return ("f.ptype = 'tcp'", "the TCP flows (ptype=tcp)") if n_tcp else ("TRUE", "every flow")


def delay_quantiles(con: duckdb.DuckDBPyConnection, runs: list[RunRow], keys: Sequence[str], where: Sequence[Filter],
                    n_points: int = CDF_QUANTILES) -> dict[tuple, tuple[list[float], int, int]]:
    """Per combination of the labels `keys`: the quantiles (at 0, 1/n, ..., 1) of the one-way
    delay in ms (packet_delays.delay_ms) of every delivered data packet of the selected flows,
    runs pooled; with the number of packets and of runs. {(values...): (quantiles, n_packets, n_runs)}"""
    run_ids = [r.run_id for r in runs]
    flow_cond, _ = _flow_condition(con, where, run_ids)
    # a run label's value from the table below; `name` (the flow name) from all_flows
    exprs = [FLOW_NAME_SQL.format(f="f.") if k == "name" else f"s.k{i}" for i, k in enumerate(keys)]
    rows = [(r.run_id, *[r.labels.get(k) for k in keys]) for r in runs]
    cols = ", ".join(f"k{i} VARCHAR" for i in range(len(keys)))
    tmp = "tracekit_report_runs"
    con.execute(f"CREATE OR REPLACE TEMP TABLE {tmp} (run_id VARCHAR{', ' + cols if cols else ''})")
    con.executemany(f"INSERT INTO {tmp} VALUES ({', '.join('?' * (len(keys) + 1))})", rows)
    ks = ", ".join(exprs)
    qs = [i / n_points for i in range(n_points + 1)]
    try:
        res = con.execute(f"""
            SELECT {ks + ', ' if ks else ''}quantile_cont(p.delay_ms, ?) AS q,
                   count(*) AS n_pkts, count(DISTINCT p.run_id) AS n_runs
            FROM packet_delays p
            JOIN all_flows f ON f.run_id = p.run_id AND f.fid IS NOT DISTINCT FROM p.fid AND f.src_node = p.src_node
                 AND f.src_port = p.src_port AND f.dst_node = p.dst_node AND f.dst_port = p.dst_port
            JOIN {tmp} s ON s.run_id = p.run_id
            WHERE p.t_recv IS NOT NULL AND {flow_cond}
            {('GROUP BY ' + ks) if ks else ''}""", [qs]).fetchall()
    finally:
        con.execute(f"DROP TABLE IF EXISTS {tmp}")
    return {tuple(r[:len(keys)]): ([float(x) for x in r[len(keys)]], int(r[len(keys) + 1]), int(r[len(keys) + 2]))
            for r in res if r[len(keys)] is not None}


def _delay_cdfs(con: duckdb.DuckDBPyConnection, sec: Section, runs: list[RunRow], where: Sequence[Filter], colours: dict[str, str], cond_head: str) -> None:
    import plotly.graph_objects as go

    keys = [sec.factor, *sec.per]
    if sec.factor == "scenario":
        keys = list(sec.per)
    q = delay_quantiles(con, runs, keys, where)
    if not q:
        sec.notes.append("per-packet delay CDF: no data packet of the selected flows was delivered")
        return
    _, flow_text = _flow_condition(con, where, [r.run_id for r in runs])
    lvl = 0 if sec.factor != "scenario" else None
    combos = sorted({k[1:] if lvl == 0 else k for k in q}, key=lambda c: [natural_key(v) for v in c])
    if len(combos) > MAX_CDF_FIGURES:
        sec.notes.append(f"per-packet delay CDF: {len(combos)} combinations of {', '.join(sec.per)}; "
                         f"the first {MAX_CDF_FIGURES} are drawn")
    for combo in combos[:MAX_CDF_FIGURES]:
        fig = go.Figure()
        mine = sorted(((k[0] if lvl == 0 else sec.conditions.scenario, v) for k, v in q.items()
                       if (k[1:] if lvl == 0 else k) == combo), key=lambda kv: natural_key(kv[0]))
        n_runs = []
        for level, (qs, n_pkts, nr) in mine:
            n_runs.append(nr)
            fig.add_trace(go.Scatter(x=qs, y=[i / (len(qs) - 1) for i in range(len(qs))], mode="lines",
                                     name=f"{level} ({n_pkts:,} packets, {nr} runs)",
                                     line=dict(color=colours.get(str(level), PALETTE[0]), shape="linear"),
                                     hovertemplate=f"{html.escape(str(level))}: %{{y:.0%}} of packets within %{{x:.4g}} ms<extra></extra>"))
        pt = _per_text(tuple(zip(sec.per, combo)))
        nr_text = f"{min(n_runs)}" if min(n_runs) == max(n_runs) else f"{min(n_runs)} to {max(n_runs)}"
        _layout(fig, f"Per-packet one-way delay CDF: {cond_head}" + (f", {pt}" if pt else ""),
                f"runs pooled: {nr_text} seeds per line; flows: {flow_text}", "one-way delay (ms)", "fraction of delivered packets")
        fig.update_yaxes(range=[0, 1.02])
        sec.figures.append(FigureSpec(
            f"{sec.conditions.scenario}-delay-cdf" + ("-" + "-".join(map(str, combo)) if combo else ""),
            "Per-packet delay distribution" + (f" ({pt})" if pt else ""),
            f"Empirical CDF of the one-way delay (arrival at the destination - first departure from the source) of "
            f"every delivered data packet of {flow_text}, per {sec.factor}, the seeds' runs pooled ({nr_text} runs per line). "
            f"Scenario {sec.conditions.scenario}" + (f"; {pt}" if pt else "") + f"; drawn from {CDF_QUANTILES + 1} quantiles "
            "of the pooled delays. No interval: a pooled distribution, not a mean over seeds.", fig))


# ---------------------------------------------------------------------------------------
# HTML


CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0 auto;max-width:1180px;padding:1.5em;color:#222;line-height:1.45}
h1{font-size:1.7em;margin-bottom:.2em} h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
h3{margin-top:1.6em} table{border-collapse:collapse;margin:.6em 0 1em;font-size:.92em}
th,td{border:1px solid #ddd;padding:.3em .6em;text-align:left;vertical-align:top} th{background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.verdict{margin:.2em 0 1.2em;padding:.4em .7em;border-left:4px solid #888;background:#fafafa}
.verdict.difference{border-color:#2ca02c} .verdict.no_difference,.verdict.identical{border-color:#1f77b4}
.verdict.no_test,.verdict.no_data,.verdict.one_group{border-color:#ff7f0e}
figure{margin:1.2em 0 2em;border:1px solid #eee;padding:.5em} figcaption{font-size:.9em;color:#444;margin-top:.4em}
.note{color:#8a5a00} .muted{color:#666;font-size:.9em} nav ul{columns:2}
"""


def _e(x: Any) -> str:
    return html.escape("" if x is None else str(x))


def _num_td(v: float | None, cls: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return f'<td class="num {cls}">-</td>'
    return f'<td class="num {cls}" data-value="{v!r}">{_e(fmt_value(v))}</td>'


def _conditions_html(c: Conditions, factor: str, per: Sequence[str], report: Report) -> str:
    rows = [("scenario", f"{c.scenario}: {c.title}"),
            ("runs", f"{c.n_runs} {c.kinds or c.trace_kind} packet-trace runs with a seed (one per simulation)"),
            ("swept parameters", "; ".join(f"{k} = {', '.join(v)}" + (f" {u}" if u else "") for k, v, u in c.swept) or "none"),
            ("seeds", c.seeds_text),
            ("what a seed varies", c.seed_varies),
            ("groups compared", f"by {factor}" + (f", one verdict per value of {', '.join(per)}" if per else "")),
            ("flows in the runs", ", ".join(c.flows) or "-"),
            ("tracekit version", "runs ingested by " + ", ".join(c.tracekit_versions) + f"; report by {report.tracekit_version}"),
            ("ns-2 version", f"{report.ns_version}: the ns-2 on the machine that wrote this report; the store does not record it per run")]
    out = ['<table class="conditions">'] + [f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows] + ["</table>"]
    if c.fixed:
        out.append("<details open><summary>Fixed parameters (" + str(len(c.fixed)) + ")</summary><table class=\"fixed\">"
                   "<tr><th>parameter</th><th>value</th><th>unit</th></tr>")
        out += [f'<tr data-param="{_e(k)}"><td>{_e(k)}</td><td>{_e(v)}</td><td>{_e(u)}</td></tr>' for k, v, u in c.fixed]
        out.append("</table></details>")
    return "\n".join(out)


def _verdicts_html(comp: Comparison, sec: Section) -> str:
    out = [f'<p class="muted">Flows: {_e(comp.flow_filter)}; {comp.n_runs} runs; each run counts once (its selected flows '
           f'averaged); 95% CI = mean ± t(0.975, n - 1) · s / √n; verdict: the best {_e(comp.factor)} against the runner-up, '
           f"Welch's t-test at {ALPHA:.0%} (as tracekit compare).</p>"]
    for v in comp.verdicts:
        M = v.metric
        head = f"{M.title} ({M.name}, {M.unit}, {'higher' if M.higher_is_better else 'lower'} is better)"
        out.append(f"<h4>{_e(head)}{(' at ' + _e(v.per_text)) if v.per else ''}</h4>")
        out.append(f'<table class="comparison" data-metric="{_e(M.name)}" data-per="{_e(v.per_text)}">'
                   f"<tr><th>{_e(comp.factor)}</th><th>n</th><th>mean</th><th>95% CI</th><th>± half-width</th>"
                   f"<th>stddev</th><th>seeds</th></tr>")
        for g in v.groups:
            iv = _interval(g, M)        # clipped to the metric's range
            clipped = iv is not None and g.mean is not None and g.ci95_half_width is not None and (
                iv[0] > g.mean - g.ci95_half_width or iv[1] < g.mean + g.ci95_half_width)
            mark = ('<abbr title="clipped to the metric\'s range: mean ± half-width leaves it">*</abbr>' if clipped else "")
            out.append(f'<tr class="group" data-level="{_e(g.level)}" data-n="{g.n}"><td>{_e(g.level)}</td>'
                       f'<td class="num n">{g.n}</td>{_num_td(g.mean, "mean")}'
                       + (f'<td class="num interval">[{_e(fmt_value(iv[0]))}, {_e(fmt_value(iv[1]))}]{mark}</td>' if iv else '<td class="num interval">-</td>')
                       + _num_td(g.ci95_half_width, "ci") + _num_td(g.stddev, "sd")
                       + f"<td>{_e(seed_list(g.seeds))}</td></tr>")
        out.append("</table>")
        few = min((g.n for g in v.groups if g.n), default=0)
        if 2 <= few < FEW_SEEDS:
            out.append(f'<p class="muted">n = {few}: wide intervals (t(0.975, {few - 1}) = {t_975(few - 1):.2f} times the standard error)'
                       + ("; * interval clipped to the metric's range" if "<abbr" in "".join(out[-len(v.groups) - 1:]) else "") + "</p>")
        out.append(f'<p class="verdict {_e(v.kind)}" data-kind="{_e(v.kind)}"><b>verdict:</b> {_e(v.text)}'
                   + (f'<br><span class="note">note: {_e(v.note)}</span>' if v.note else "") + "</p>")
    return "\n".join(out)


def _reproduce_html(res) -> str:
    from tracekit.analysis.reproduce import cond_text, row_cells

    out = [f"<h2 id=\"reproduce\">Set beside the paper: experiment {_e(res.experiment)}"
           + (" (quick version)" if res.quick else "") + "</h2>",
           f'<p class="muted">tracekit reproduce {_e(res.experiment)}{" --quick" if res.quick else ""} --no-run on this '
           f"store: {res.n_runs} of {res.n_planned} simulations; no simulation was run for this report.</p>"]
    out += [f'<p class="muted">{_e(n)}</p>' for n in res.notes]
    tables: dict[tuple[str, str], list] = {}
    for r in res.rows:
        tables.setdefault((r.table.paper, r.table.id), []).append(r)
    heads = ["condition", "paper", "ours (mean ± 95% CI)", "ours/paper", "paper in CI", "runs", "note"]
    for rows in tables.values():
        t = rows[0].table
        cond = cond_text(t.condition) if t.condition else ""
        out.append(f"<h3>Paper {_e(t.paper)}, {_e(t.cite)}: {_e(t.title)}</h3>")
        out.append(f'<p class="muted">{_e(t.metric.name)} [{_e(t.metric.unit)}], flows: {_e(t.flows)} of '
                   f"{_e(' and '.join(map(str, t.where)) or 'the TCP flows')}{('; ' + _e(cond)) if cond else ''}</p>")
        out.append('<table class="reproduce"><tr>' + "".join(f"<th>{_e(h)}</th>" for h in heads) + "</tr>")
        for r in rows:
            out.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in row_cells(r)) + "</tr>")
        out.append("</table>")
    if res.claims:
        out.append("<h3>Claims</h3><table class=\"claims\"><tr><th>claim</th><th>status</th><th>evidence</th></tr>")
        for c in res.claims:
            out.append(f"<tr><td>{_e(c.claim.text)} <span class=\"muted\">(paper {_e(c.claim.paper)}, {_e(c.claim.cite)})</span></td>"
                       f"<td><b>{_e(c.status)}</b></td><td>{_e(c.evidence)}"
                       + (f"<br><span class=\"note\">note: {_e(c.claim.note)}</span>" if c.claim.note else "") + "</td></tr>")
        out.append("</table>")
    counts = res.counts()
    out.append(f"<p>summary: {len(res.rows)} paper values; claims: " + ", ".join(f"{n} {_e(s)}" for s, n in counts.items()) + "</p>")
    return "\n".join(out)


def render_html(report: Report) -> str:
    """The report as one HTML document with plotly.js written into it (no external resource)."""
    from plotly.offline import get_plotlyjs

    body: list[str] = []
    toc: list[str] = []
    n_fig = 0
    for i, sec in enumerate(report.sections):
        c = sec.conditions
        sid = f"s{i}"
        toc.append(f'<li><a href="#{sid}">{_e(c.scenario)}</a>: {c.n_runs} runs, {len(sec.figures)} figures</li>')
        body.append(f'<section class="scenario" id="{sid}" data-scenario="{_e(c.scenario)}">')
        body.append(f"<h2>{_e(c.scenario)}</h2><h3>Conditions</h3>")
        body.append(_conditions_html(c, sec.factor, sec.per, report))
        body += [f'<p class="note">note: {_e(n)}</p>' for n in sec.notes]
        body.append(f'<h3 id="{sid}-compare">Comparison tables</h3>')
        body.append(_verdicts_html(sec.comparison, sec))
        body += [_verdicts_html(c, sec) for c in sec.extra]
        body.append(f'<h3 id="{sid}-figures">Figures</h3>')
        for f in sec.figures:
            n_fig += 1
            div = f.figure.to_html(full_html=False, include_plotlyjs=False, div_id=f"fig{n_fig}", default_width="100%",
                                   config={"displaylogo": False, "responsive": True,
                                           "toImageButtonOptions": {"filename": re.sub(r"[^A-Za-z0-9_.-]+", "_", f.key)}})
            body.append(f'<figure class="report-figure" data-key="{_e(f.key)}">{div}'
                        f"<figcaption><b>Figure {n_fig}. {_e(f.title)}.</b> {_e(f.caption)}</figcaption></figure>")
        body.append("</section>")
    if report.reproduce is not None:
        toc.append('<li><a href="#reproduce">the paper beside ours</a></li>')
        body.append(_reproduce_html(report.reproduce))
    notes = "".join(f'<p class="note">note: {_e(n)}</p>' for n in report.notes)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>tracekit report: {_e(report.selection)}</title>"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<style>{CSS}</style>\n<script type=\"text/javascript\">{get_plotlyjs()}</script>\n</head><body>\n"
        f"<h1>tracekit report</h1><p><b>Selection:</b> {_e(report.selection)}<br>"
        f"<span class=\"muted\">written {_e(report.generated_at)} by tracekit {_e(report.tracekit_version)}; "
        f"{n_fig} interactive figures (plotly, bundled: the file opens offline). Every comparison states its "
        f"confidence: per group n seeds, the mean and its 95% confidence interval, and a verdict by Welch's t-test.</span></p>"
        f"{notes}<nav><ul>{''.join(toc)}</ul></nav>\n" + "\n".join(body) + "\n</body></html>\n")


def check_output(out: Path) -> None:
    """Refuse an output path that cannot be written, before any work is done."""
    if out.is_dir():
        raise TracekitError(f"{out}: is a directory; name the HTML file to write")
    parent = out.parent
    if not parent.is_dir():
        raise TracekitError(f"{parent}: no such directory (for the report {out.name})")
    if not os.access(parent, os.W_OK):
        raise TracekitError(f"{parent}: not writable (for the report {out.name})")


def write_report(report: Report, out: str | os.PathLike) -> tuple[Path, int]:
    """Write the HTML to a temporary file beside `out`, then rename it to `out` (a reader never
    sees half a report, a failure leaves no file). Returns (path, size in bytes)."""
    out = Path(out)
    check_output(out)
    text = render_html(report).encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return out, len(text)


def report_bytes(data_dir: str | os.PathLike, where: Sequence[Filter] = (), experiment: str | None = None,
                 progress: Progress | None = None) -> bytes:
    """The report's HTML as bytes (for a download button)."""
    return render_html(build_report(data_dir, where, experiment, progress=progress)).encode("utf-8")
