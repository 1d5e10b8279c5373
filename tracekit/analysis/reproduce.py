"""`tracekit reproduce`: each paper's numbers and claims beside ours.

The papers live as data (``tracekit/experiments/papers/<id>.toml``, format in the README
there): per paper, the registry experiments it speaks about, its tables of reported values
and its qualitative claims, each a checkable statement over a catalogued metric. This module
loads them (:func:`load_papers`), reads the values of an experiment's runs from the store
(:func:`run_values`: one row per run and selected flow, from ``run_metrics``), and sets them
beside the paper (:func:`evaluate`): per table row, our mean over seeds with its 95 %
confidence interval and the ratio to the paper's value; per claim, a status (reproduced,
not reproduced, untestable, paper implausible) and the numbers it rests on.

The unit of replication is the seed. A run's value is its selected flows' values combined
(mean, sum, min or max, as the table or claim says); a seed's value within a condition that
spans several label values (e.g. CBR 8.5-10 Mb/s) is the mean of its runs' values there,
so each seed counts once. Differences are judged with Welch's t-test at 5 % (or with
non-overlapping 95 % intervals, when the claim asks for that), as in `tracekit compare`.

Plausibility bounds are expressions over the scenario's parameters (the paper's own setup,
not our results), evaluated by a small arithmetic interpreter (:func:`eval_expr`).
"""
from __future__ import annotations

import ast
import itertools
import json
import math
import operator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Sequence

from tracekit.db.catalogue import Metric, metric as catalogue_metric, metrics as catalogued
from tracekit.analysis.compare import ALPHA, Filter, experiment_run_ids, fmt_p, fmt_value
from tracekit.analysis.stats import Summary, relative_gain, slope_test, summarise, welch
from tracekit.core.errors import TracekitError
from tracekit.experiments import EXPERIMENTS, SCENARIOS, format_value, resolve_params
from tracekit.experiments.declarations import DeclarationError, check_keys, number, read_toml
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB is imported where it is used, not when this module is
    import duckdb

PAPERS_DIR = Path(__file__).resolve().parents[1] / "experiments" / "papers"
STATUSES = ("reproduced", "not reproduced", "untestable", "paper implausible")
KINDS = ("best", "worst", "higher", "lower", "similar", "gain", "trend", "untestable")
AGGS: dict[str, Callable[[list[float]], float]] = {
    "mean": lambda v: sum(v) / len(v), "sum": sum, "min": min, "max": max}
# Why a metric can be undefined in every run (said when a claim or row has no value)
UNDEFINED_WHY = {
    "jain_index": "fewer than two TCP flows in a run: fairness undefined",
    "onperiod_throughput_kbps": "the runs have no CBR on-period (cbr_start/cbr_stop labels)",
    "rtt_mean_ms": "no segment was acknowledged (no RTT sample)",
    "run_pdr": "not wireless runs", "run_mean_delay_ms": "not wireless runs", "nrl": "not wireless runs",
}


class PaperFileError(DeclarationError):
    """A paper file that does not follow the format; the message names the file and the place
    (checked by declarations.py, the validation the scenario files share)."""


# ---------------------------------------------------------------------------------------
# the papers as data


Condition = dict[str, tuple[str, ...]]     # label -> accepted values (as text)


@dataclass(frozen=True)
class Row:
    id: str | None
    condition: Condition
    paper: tuple[float, float]              # (low, high); equal for a single value
    quote: str | None = None
    bound_min: str | None = None
    bound_max: str | None = None
    bound_why: str | None = None
    note: str | None = None                 # the file's remark on this value (e.g. how it was read)

    @property
    def paper_value(self) -> float:
        return (self.paper[0] + self.paper[1]) / 2


@dataclass(frozen=True)
class Table:
    paper: str
    id: str
    experiment: str
    cite: str
    title: str
    metric: Metric
    flows: str
    where: tuple[Filter, ...]
    condition: Condition
    rows: tuple[Row, ...]


@dataclass(frozen=True)
class Claim:
    paper: str
    id: str
    experiment: str
    cite: str
    text: str
    kind: str
    metric: Metric | None = None
    flows: str = "mean"
    where: tuple[Filter, ...] = ()
    condition: Condition = field(default_factory=dict)
    by: str | None = None
    level: str | None = None
    among: tuple[str, ...] = ()
    a: str | None = None
    b: str | None = None
    tolerance_pct: float | None = None
    range_pct: tuple[float, float] | None = None
    along: str | None = None
    direction: str | None = None
    test: str = "welch"
    reason: str | None = None
    rests_on: tuple[str, ...] = ()
    implausible_expr: str | None = None
    implausible_why: str | None = None
    note: str | None = None                 # the file's remark (e.g. why our setup may differ)


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    citation: str
    source: str
    notes: tuple[str, ...]
    experiments: dict[str, str]             # experiment -> what of the paper it reproduces
    tables: tuple[Table, ...]
    claims: tuple[Claim, ...]
    path: Path


_TOP = {"id": True, "title": True, "citation": True, "source": True, "notes": False,
        "experiments": True, "tables": False, "claims": False}
_TABLE = {"id": True, "experiment": True, "cite": True, "title": True, "metric": True, "flows": False,
          "where": False, "condition": False, "bound": False, "rows": True}
_ROW = {"id": False, "condition": False, "paper": True, "quote": False, "bound": False, "note": False}
_BOUND = {"min": False, "max": False, "why": True}
_CLAIM = {"id": True, "experiment": True, "cite": True, "text": True, "kind": True, "metric": False,
          "flows": False, "where": False, "condition": False, "by": False, "level": False, "among": False,
          "a": False, "b": False, "tolerance_pct": False, "range_pct": False, "along": False,
          "direction": False, "test": False, "reason": False, "rests_on": False, "implausible": False,
          "note": False}
_IMPLAUSIBLE = {"expr": True, "why": True}


def _keys(t: Any, spec: dict[str, bool], where: str) -> dict:
    return check_keys(t, spec, where, PaperFileError)


def _text(v: Any, where: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise PaperFileError(f"{where}: expected a non-empty string")
    return " ".join(v.split())


def _num(v: Any, where: str) -> float:
    return float(number(v, where, PaperFileError))


def _label(v: Any) -> str:
    return format_value(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def _condition(t: Any, where: str) -> Condition:
    if t is None:
        return {}
    if not isinstance(t, dict):
        raise PaperFileError(f"{where}: condition must be a table of label = value(s)")
    out: Condition = {}
    for k, v in t.items():
        vals = v if isinstance(v, list) else [v]
        if not vals or any(isinstance(x, (dict, list)) for x in vals):
            raise PaperFileError(f"{where}: condition {k!r} must be a value or a list of values")
        out[k] = tuple(_label(x) for x in vals)
    return out


def _filters(v: Any, where: str) -> tuple[Filter, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise PaperFileError(f"{where}: where must be a list of KEY=VALUE / KEY!=VALUE strings")
    try:
        return tuple(Filter.parse(x) for x in v)
    except TracekitError as e:
        raise PaperFileError(f"{where}: {e}") from None


def _metric(v: Any, where: str) -> Metric:
    name = _text(v, where)
    if name not in catalogued():
        raise PaperFileError(f"{where}: {name!r} is not a metric of sql/catalogue.toml")
    return catalogue_metric(name)


def _check_condition(cond: Condition, experiment: str, where: str) -> None:
    exp = EXPERIMENTS[experiment]
    params = {p.name for p in SCENARIOS[exp.scenario].params}
    for k in cond:
        if k != "name" and k not in params:
            raise PaperFileError(f"{where}: condition {k!r} is neither a parameter of {exp.scenario} nor name")


def _experiment_name(v: Any, where: str) -> str:
    name = _text(v, where)
    if name not in EXPERIMENTS:
        raise PaperFileError(f"{where}: unknown experiment {name!r} (tracekit scenarios lists them)")
    return name


def _flows(v: Any, where: str) -> str:
    v = v if v is not None else "mean"
    if v not in AGGS:
        raise PaperFileError(f"{where}: flows must be one of {', '.join(AGGS)}")
    return v


def _strings(v: Any, where: str) -> tuple[str, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(x, (str, int, float)) for x in v):
        raise PaperFileError(f"{where}: expected a list")
    return tuple(_label(x) for x in v)


def _opt_label(t: dict, key: str) -> str | None:
    return None if t.get(key) is None else _label(t[key])


def load_paper(path: Path) -> Paper:
    where = path.name
    doc = read_toml(path, PaperFileError)
    _keys(doc, _TOP, where)
    pid = _text(doc["id"], f"{where}: id")
    exps = doc["experiments"]
    if not isinstance(exps, dict) or not exps:
        raise PaperFileError(f"{where}: experiments must be a table of experiment = what it reproduces")
    experiments = {_experiment_name(k, f"{where}: experiments"): _text(v, f"{where}: experiments.{k}")
                   for k, v in exps.items()}
    tables = []
    for i, t in enumerate(doc.get("tables", [])):
        w = f"{where}: tables[{i}]" + (f" ({t['id']})" if isinstance(t, dict) and "id" in t else "")
        _keys(t, _TABLE, w)
        exp = _experiment_name(t["experiment"], f"{w}: experiment")
        if exp not in experiments:
            raise PaperFileError(f"{w}: experiment {exp!r} is not in the file's [experiments]")
        cond = _condition(t.get("condition"), f"{w}: condition")
        _check_condition(cond, exp, w)
        table_bound = _bound(t["bound"], f"{w}: bound") if "bound" in t else {}
        rows = []
        if not isinstance(t["rows"], list) or not t["rows"]:
            raise PaperFileError(f"{w}: rows must be a non-empty list")
        for j, r in enumerate(t["rows"]):
            rw = f"{w}: rows[{j}]"
            _keys(r, _ROW, rw)
            rc = _condition(r.get("condition"), f"{rw}: condition")
            _check_condition(rc, exp, rw)
            p = r["paper"]
            if isinstance(p, list):
                if len(p) != 2:
                    raise PaperFileError(f"{rw}: paper must be a number or [low, high]")
                lo, hi = (_num(x, f"{rw}: paper") for x in p)
                if hi < lo:
                    raise PaperFileError(f"{rw}: paper range [low, high] needs low <= high")
            else:
                lo = hi = _num(p, f"{rw}: paper")
            b = _bound(r["bound"], f"{rw}: bound") if "bound" in r else table_bound
            rows.append(Row(_opt_label(r, "id"), {**cond, **rc}, (lo, hi),
                            _text(r["quote"], f"{rw}: quote") if "quote" in r else None,
                            b.get("min"), b.get("max"), _text(b["why"], f"{rw}: bound.why") if b else None,
                            _text(r["note"], f"{rw}: note") if "note" in r else None))
        ids = [r.id for r in rows if r.id]
        if len(ids) != len(set(ids)):
            raise PaperFileError(f"{w}: row ids must be unique")
        tables.append(Table(pid, _text(t["id"], f"{w}: id"), exp, _text(t["cite"], f"{w}: cite"),
                            _text(t["title"], f"{w}: title"), _metric(t["metric"], f"{w}: metric"),
                            _flows(t.get("flows"), f"{w}: flows"), _filters(t.get("where"), f"{w}: where"),
                            cond, tuple(rows)))
    claims = [_claim(c, pid, experiments, f"{where}: claims[{i}]") for i, c in enumerate(doc.get("claims", []))]
    for what, ids in (("table", [t.id for t in tables]), ("claim", [c.id for c in claims])):
        dup = {x for x in ids if ids.count(x) > 1}
        if dup:
            raise PaperFileError(f"{where}: {what} id {sorted(dup)[0]!r} is used twice")
    row_refs = {f"{t.id}/{r.id}" for t in tables for r in t.rows if r.id}
    for c in claims:
        for ref in c.rests_on:
            if ref not in row_refs:
                raise PaperFileError(f"{where}: claim {c.id}: rests_on {ref!r} is not a table/row id of the file")
    notes = doc.get("notes", [])
    if not isinstance(notes, list):
        raise PaperFileError(f"{where}: notes must be a list of strings")
    return Paper(pid, _text(doc["title"], f"{where}: title"), _text(doc["citation"], f"{where}: citation"),
                 _text(doc["source"], f"{where}: source"), tuple(_text(n, f"{where}: notes") for n in notes),
                 experiments, tuple(tables), tuple(claims), path)


def _bound(b: Any, where: str) -> dict:
    """A bound table: min and/or max expressions (checked here) and why."""
    _keys(b, _BOUND, where)
    if "min" not in b and "max" not in b:
        raise PaperFileError(f"{where}: a bound needs min and/or max")
    for k in ("min", "max"):
        if k in b:
            _parse_expr(_text(b[k], f"{where}.{k}"), f"{where}.{k}")
    return b


def _claim(c: Any, pid: str, experiments: dict[str, str], w: str) -> Claim:
    if isinstance(c, dict) and isinstance(c.get("id"), str):
        w = f"{w} ({c['id']})"
    _keys(c, _CLAIM, w)
    exp = _experiment_name(c["experiment"], f"{w}: experiment")
    if exp not in experiments:
        raise PaperFileError(f"{w}: experiment {exp!r} is not in the file's [experiments]")
    kind = c["kind"]
    if kind not in KINDS:
        raise PaperFileError(f"{w}: kind must be one of {', '.join(KINDS)}")
    common = dict(paper=pid, id=_text(c["id"], f"{w}: id"), experiment=exp, cite=_text(c["cite"], f"{w}: cite"),
                  text=_text(c["text"], f"{w}: text"), kind=kind,
                  note=_text(c["note"], f"{w}: note") if "note" in c else None)
    if kind == "untestable":
        if "reason" not in c:
            raise PaperFileError(f"{w}: an untestable claim needs a reason")
        return Claim(**common, reason=_text(c["reason"], f"{w}: reason"))
    need = {"best": ("by", "level"), "worst": ("by", "level"), "higher": ("by", "a", "b"),
            "lower": ("by", "a", "b"), "similar": ("by", "tolerance_pct"), "gain": ("by", "a", "b", "range_pct"),
            "trend": ("along", "direction")}[kind]
    for k in ("metric", *need):
        if k not in c:
            raise PaperFileError(f"{w}: a {kind} claim needs {k!r}")
    cond = _condition(c.get("condition"), f"{w}: condition")
    _check_condition(cond, exp, w)
    by = _opt_label(c, "by")
    if by is not None:
        _check_condition({by: ()}, exp, f"{w}: by")
        if by in cond:
            raise PaperFileError(f"{w}: {by!r} is both `by` and in the condition (use among to restrict levels)")
    along = _opt_label(c, "along")
    if along is not None:
        _check_condition({along: ()}, exp, f"{w}: along")
    direction = c.get("direction")
    if direction is not None and direction not in ("increasing", "decreasing"):
        raise PaperFileError(f"{w}: direction must be increasing or decreasing")
    rng = c.get("range_pct")
    range_pct = None
    if rng is not None:
        if not isinstance(rng, list) or len(rng) != 2:
            raise PaperFileError(f"{w}: range_pct must be [low, high]")
        lo, hi = (_num(x, f"{w}: range_pct") for x in rng)
        if hi < lo:
            raise PaperFileError(f"{w}: range_pct needs low <= high")
        range_pct = (lo, hi)
    test = c.get("test", "welch")
    if test not in ("welch", "ci"):
        raise PaperFileError(f"{w}: test must be welch or ci")
    imp = _keys(c["implausible"], _IMPLAUSIBLE, f"{w}: implausible") if "implausible" in c else {}
    if imp:
        _parse_expr(_text(imp["expr"], f"{w}: implausible.expr"), f"{w}: implausible.expr")
    return Claim(**common, metric=_metric(c["metric"], f"{w}: metric"), flows=_flows(c.get("flows"), f"{w}: flows"),
                 where=_filters(c.get("where"), f"{w}: where"), condition=cond, by=by,
                 level=_opt_label(c, "level"), among=_strings(c.get("among"), f"{w}: among"),
                 a=_opt_label(c, "a"), b=_opt_label(c, "b"),
                 tolerance_pct=_num(c["tolerance_pct"], f"{w}: tolerance_pct") if "tolerance_pct" in c else None,
                 range_pct=range_pct, along=along, direction=direction, test=test,
                 rests_on=_strings(c.get("rests_on"), f"{w}: rests_on"),
                 implausible_expr=imp.get("expr"), implausible_why=_text(imp["why"], f"{w}: implausible.why") if imp else None)


def load_papers(papers_dir: Path = PAPERS_DIR) -> dict[str, Paper]:
    """Every paper file of papers_dir, by id (file order)."""
    out: dict[str, Paper] = {}
    for path in sorted(papers_dir.glob("*.toml")):
        p = load_paper(path)
        if p.id != path.stem:
            raise PaperFileError(f"{path.name}: id {p.id!r} must be the file name without .toml")
        out[p.id] = p
    return out


def papers_of(experiment: str, papers: dict[str, Paper]) -> list[Paper]:
    return [p for p in papers.values() if experiment in p.experiments]


# ---------------------------------------------------------------------------------------
# bounds: a small arithmetic language over the scenario's parameters

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.Pow: operator.pow, ast.Mod: operator.mod}
_CMPOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
    ast.Gt: operator.gt, ast.GtE: operator.ge}
_FUNCS: dict[str, Callable[..., Any]] = {"min": min, "max": max, "abs": abs}


def _parse_expr(text: str, where: str) -> ast.Expression:
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise PaperFileError(f"{where}: cannot read {text!r}: {e.msg}") from None
    for node in ast.walk(tree):
        ok = isinstance(node, (ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp,
                               ast.Call, ast.Name, ast.Constant, ast.Load, ast.And, ast.Or, ast.Not,
                               ast.USub, ast.UAdd, *_BINOPS, *_CMPOPS))
        if isinstance(node, ast.Call):
            ok = isinstance(node.func, ast.Name) and node.func.id in (*_FUNCS, "row") and not node.keywords
        if isinstance(node, ast.Constant):
            ok = isinstance(node.value, (int, float, str)) and not isinstance(node.value, bool)
        if not ok:
            raise PaperFileError(f"{where}: {text!r}: {type(node).__name__} is not allowed "
                                 "(numbers, parameters, + - * / ** %, comparisons, and/or/not, if-else, "
                                 "min, max, abs, paper, row('table/row'))")
    return tree


def eval_expr(text: str, names: dict[str, Any], row: Callable[[str], float] | None = None) -> Any:
    """The value of a bound expression: arithmetic over `names` (parameters, `paper`),
    comparisons, and/or/not, X if C else Y, min/max/abs, row('table/row')."""
    tree = _parse_expr(text, "expression")

    def ev(n: ast.AST) -> Any:
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in names:
                raise TracekitError(f"bound {text!r}: unknown name {n.id!r} (parameters: {', '.join(names)})")
            return names[n.id]
        if isinstance(n, ast.BinOp):
            return _BINOPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else (not v) if isinstance(n.op, ast.Not) else +v
        if isinstance(n, ast.BoolOp):
            vals = [ev(v) for v in n.values]
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.Compare):
            left = ev(n.left)
            for op, right_node in zip(n.ops, n.comparators):
                right = ev(right_node)
                if not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(n, ast.IfExp):
            return ev(n.body) if ev(n.test) else ev(n.orelse)
        if isinstance(n, ast.Call):
            assert isinstance(n.func, ast.Name)
            args = [ev(a) for a in n.args]
            if n.func.id == "row":
                if row is None or len(args) != 1:
                    raise TracekitError(f"bound {text!r}: row('table/row') takes one row reference")
                return row(str(args[0]))
            return _FUNCS[n.func.id](*args)
        raise TracekitError(f"bound {text!r}: cannot evaluate {type(n).__name__}")

    return ev(tree)


def paper_params(experiment: str, condition: Condition) -> list[dict[str, Any]]:
    """The paper's setup for a condition: the scenario's parameters resolved with the
    experiment's fixed values (the full experiment's, not the quick version's) and the
    condition's parameter values; one dict per combination of listed values."""
    exp = EXPERIMENTS[experiment]
    keys = [k for k in condition if k != "name"]
    out = []
    for combo in itertools.product(*(condition[k] for k in keys)):
        over = {k: format_value(v) for k, v in exp.fixed.items()}
        over.update(dict(zip(keys, combo)))
        out.append(resolve_params(exp.scenario, over))
    return out


# ---------------------------------------------------------------------------------------
# the store's values


@dataclass(frozen=True)
class Value:
    """One run's value of one metric for one flow (flow columns None for run-level metrics)."""

    run_id: str
    seed: int
    labels: dict[str, str]
    metric: str
    value: float | None
    name: str | None = None
    fid: int | None = None
    ptype: str | None = None
    flow: tuple | None = None                # the flow key, for counting flows


def run_values(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str], metrics: Sequence[str]) -> list[Value]:
    """The values of `metrics` in the given runs: one per run and flow (flow-level metrics)
    or per run (run-level), from run_metrics, with the run's labels and the flow's ptype."""
    if not run_ids or not metrics:
        return []
    rows = con.execute("""
        SELECT m.run_id, m.seed, r.labels, m.metric, m.value, m.name, m.fid, f.ptype,
               m.src_node, m.src_port, m.dst_node, m.dst_port
        FROM run_metrics m JOIN runs r USING (run_id)
        LEFT JOIN all_flows f
          ON f.run_id = m.run_id AND f.fid IS NOT DISTINCT FROM m.fid AND f.src_node = m.src_node
         AND f.src_port = m.src_port AND f.dst_node = m.dst_node AND f.dst_port = m.dst_port
        WHERE list_contains(?, m.run_id) AND list_contains(?, m.metric)""",
        [list(run_ids), list(metrics)]).fetchall()
    out = []
    for run_id, seed, labels, metric, value, name, fid, ptype, *key in rows:
        flow = None if key[0] is None else (fid, *key)
        out.append(Value(run_id, int(seed), dict(labels), metric, None if value is None else float(value),
                         name, fid, ptype, flow))
    return out


def _num_or_none(s: str) -> float | None:
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def _same_label(have: str | None, want: str) -> bool:
    if have is None:
        return False
    if have == want:
        return True
    a, b = _num_or_none(have), _num_or_none(want)
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _get(v: Value, key: str) -> str | None:
    if key == "name":
        return v.name
    if key in ("fid", "ptype"):
        x = getattr(v, key)
        return None if x is None else str(x)
    if key == "seed":
        return str(v.seed)
    return v.labels.get(key)


def _passes(v: Value, flt: Filter) -> bool:
    hit = any(_same_label(_get(v, flt.key), want) for want in flt.values)
    return not hit if flt.negate else hit


def _in_condition(v: Value, cond: Condition) -> bool:
    return all(any(_same_label(_get(v, k), want) for want in wants) for k, wants in cond.items())


# ---------------------------------------------------------------------------------------
# statistics


@dataclass(frozen=True)
class Stats:
    """A group's per-seed values (at least one) and their mean, sample stddev (NaN for one
    seed) and 95 % CI half-width (stats.summarise)."""

    level: str
    values: tuple[float, ...]
    n_runs: int

    @cached_property
    def summary(self) -> Summary:
        return summarise(self.values)

    @property
    def n(self) -> int:
        return self.summary.n

    @property
    def mean(self) -> float:
        assert self.summary.mean is not None, self.level
        return self.summary.mean

    @property
    def sd(self) -> float:
        sd = self.summary.stddev
        return math.nan if sd is None else sd

    @property
    def ci95(self) -> float | None:
        return self.summary.ci95_half_width

    def text(self, unit: str = "") -> str:
        ci = self.ci95
        u = f" {unit}" if unit and " to " not in unit else ""
        pm = f" ± {fmt_value(ci)}" if ci is not None else " (one seed)"
        return f"{self.level} {fmt_value(self.mean)}{pm}{u}"


class Selection:
    """The values of one metric in one experiment's runs, with the flow selection applied:
    per run, the selected flows' values combined by `flows` (runs whose flows all have NULL
    values have no value)."""

    def __init__(self, values: list[Value], metric: Metric, flows: str, where: Sequence[Filter]):
        self.metric = metric
        mine = [v for v in values if v.metric == metric.name]
        flow_filters = [f for f in where if f.key in ("name", "fid", "ptype")]
        run_filters = [f for f in where if f not in flow_filters]
        mine = [v for v in mine if all(_passes(v, f) for f in run_filters)]
        if metric.level == "flow":
            if flow_filters:
                mine = [v for v in mine if all(_passes(v, f) for f in flow_filters)]
            elif any(v.ptype == "tcp" for v in mine):
                mine = [v for v in mine if v.ptype == "tcp"]
        self.values = mine
        self.agg = AGGS[flows]

    def runs(self, cond: Condition) -> dict[str, tuple[int, dict[str, str], float | None]]:
        """run_id -> (seed, labels, value) for the runs (and flows) within cond."""
        by_run: dict[str, list[Value]] = {}
        for v in self.values:
            if _in_condition(v, cond):
                by_run.setdefault(v.run_id, []).append(v)
        out = {}
        for rid, vs in by_run.items():
            xs = [v.value for v in vs if v.value is not None and math.isfinite(v.value)]
            out[rid] = (vs[0].seed, vs[0].labels, self.agg(xs) if xs else None)
        return out

    def group(self, level: str, cond: Condition) -> tuple[Stats | None, int, int]:
        """(per-seed stats or None, runs matched, runs with a value) within cond."""
        runs = self.runs(cond)
        per_seed: dict[int, list[float]] = {}
        for seed, _labels, value in runs.values():
            if value is not None:
                per_seed.setdefault(seed, []).append(value)
        n_valued = sum(len(v) for v in per_seed.values())
        if not per_seed:
            return None, len(runs), 0
        vals = tuple(sum(v) / len(v) for _, v in sorted(per_seed.items()))
        return Stats(level, vals, n_valued), len(runs), n_valued


# ---------------------------------------------------------------------------------------
# evaluation


@dataclass
class RowResult:
    table: Table
    row: Row
    stats: Stats | None
    n_runs: int
    status: str | None = None               # "paper implausible" or None
    bound_text: str | None = None
    note: str | None = None

    @property
    def ratio(self) -> float | None:
        if self.stats is None or self.row.paper_value == 0:
            return None
        return self.stats.mean / self.row.paper_value

    @property
    def paper_in_ci(self) -> bool | None:
        """Whether the paper's value (or range) meets our 95 % confidence interval."""
        if self.stats is None or self.stats.ci95 is None:
            return None
        lo, hi = self.stats.mean - self.stats.ci95, self.stats.mean + self.stats.ci95
        return self.row.paper[1] >= lo and self.row.paper[0] <= hi

    def as_dict(self) -> dict[str, Any]:
        p: Any = self.row.paper[0] if self.row.paper[0] == self.row.paper[1] else list(self.row.paper)
        return {"table": f"{self.table.paper}/{self.table.id}", "title": self.table.title, "cite": self.table.cite,
                "condition": cond_text(self.row.condition),
                "labels": {k: list(v) for k, v in self.row.condition.items()},
                "table_labels": sorted(self.table.condition), "metric": self.table.metric.name,
                "unit": self.table.metric.unit, "paper": p,
                "ours": None if self.stats is None else self.stats.mean,
                "ci95": None if self.stats is None else self.stats.ci95,
                "n_runs": self.n_runs, "ratio": self.ratio, "paper_in_ci": self.paper_in_ci, "status": self.status,
                "bound": self.bound_text, "note": self.note, "quote": self.row.quote}


@dataclass
class ClaimResult:
    claim: Claim
    status: str
    evidence: str

    def as_dict(self) -> dict[str, Any]:
        c = self.claim
        return {"id": f"{c.paper}/{c.id}", "paper": c.paper, "cite": c.cite, "kind": c.kind, "text": c.text,
                "metric": c.metric.name if c.metric else None, "status": self.status, "evidence": self.evidence,
                "note": c.note}


@dataclass
class Result:
    experiment: str
    papers: list[Paper]
    quick: bool
    n_runs: int                               # runs of the experiment in the store
    n_planned: int
    rows: list[RowResult] = field(default_factory=list)
    claims: list[ClaimResult] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for c in self.claims if c.status == s) for s in STATUSES}

    def as_dict(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "paper": ", ".join(p.id for p in self.papers),
                "quick": self.quick, "n_runs": self.n_runs, "n_planned": self.n_planned,
                "rows": [r.as_dict() for r in self.rows], "claims": [c.as_dict() for c in self.claims],
                "notes": self.notes, "summary": self.counts()}


def cond_text(cond: Condition) -> str:
    parts = []
    for k, vs in cond.items():
        if len(vs) == 1:
            parts.append(f"{k}={vs[0]}")
        elif all(_num_or_none(v) is not None for v in vs) and len(vs) > 3:
            xs = sorted(float(v) for v in vs)
            parts.append(f"{k}={fmt_value(xs[0])}..{fmt_value(xs[-1])} ({len(vs)} values)")
        else:
            parts.append(f"{k}={','.join(vs)}")
    return ", ".join(parts) or "(all runs)"


def _undefined(metric: Metric, n_runs: int) -> str:
    why = UNDEFINED_WHY.get(metric.name)
    return f"{metric.name} has no value in any of the {n_runs} runs" + (f" ({why})" if why else "")


def _row_bound(table: Table, row: Row, paper: Paper) -> tuple[str | None, str | None]:
    """(status, text) of a row's bound: 'paper implausible' with the computed bound when the
    paper's value is outside it, else None and the bound's text."""
    if not (row.bound_min or row.bound_max):
        return None, None
    refs = {f"{t.id}/{r.id}": r.paper_value for t in paper.tables for r in t.rows if r.id}

    def row_ref(ref: str) -> float:
        if ref not in refs:
            raise TracekitError(f"{paper.path.name}: row({ref!r}): no such table/row")
        return refs[ref]

    lows, highs = [], []
    for params in paper_params(table.experiment, row.condition):
        names = {**params, "paper": row.paper_value}
        if row.bound_min:
            lows.append(float(eval_expr(row.bound_min, names, row_ref)))
        if row.bound_max:
            highs.append(float(eval_expr(row.bound_max, names, row_ref)))
    lo, hi = (min(lows) if lows else None), (max(highs) if highs else None)
    u = table.metric.unit
    parts = []
    if lo is not None:
        parts.append(f">= {fmt_value(lo)} {u}")
    if hi is not None:
        parts.append(f"<= {fmt_value(hi)} {u}")
    text = f"{' and '.join(parts)}: {row.bound_why}"
    bad = (lo is not None and row.paper[1] < lo) or (hi is not None and row.paper[0] > hi)
    return ("paper implausible", f"paper value outside the bound {text}") if bad else (None, f"bound {text}")


def _significant(a: Stats, b: Stats, test: str) -> tuple[bool, str]:
    """Whether a and b differ (test: welch at 5 % or non-overlapping CIs), and how it was judged."""
    if test == "ci":
        ha, hb = a.ci95, b.ci95
        if ha is None or hb is None:
            return False, "fewer than two seeds: no interval"
        gap = abs(a.mean - b.mean) - (ha + hb)
        return gap > 0, ("95 % intervals do not overlap" if gap > 0 else "95 % intervals overlap")
    w = welch(a.mean, a.sd, a.n, b.mean, b.sd, b.n)
    if w is None:
        if a.n >= 2 and b.n >= 2 and a.mean != b.mean:
            return True, "no run-to-run variation in either group"
        return False, "no run-to-run variation and equal means" if a.n >= 2 and b.n >= 2 else "fewer than two seeds"
    return w.p < ALPHA, f"Welch's t-test {fmt_p(w.p)}"


def _n_text(groups: Sequence[Stats]) -> str:
    ns = {g.n for g in groups}
    return f"n = {ns.pop()} seeds each" if len(ns) == 1 else "n = " + ", ".join(f"{g.level} {g.n}" for g in groups)


def evaluate_claim(claim: Claim, values: list[Value], quick: bool, paper: Paper) -> ClaimResult:
    if claim.kind == "untestable":
        return ClaimResult(claim, "untestable", claim.reason or "")
    assert claim.metric is not None
    sel = Selection(values, claim.metric, claim.flows, claim.where)
    u = claim.metric.unit
    better_high = claim.metric.higher_is_better
    missing = " (not in the quick version's grid)" if quick else ""

    # the paper's own numbers, where the claim rests on implausible ones
    for ref in claim.rests_on:
        tid, rid = ref.split("/", 1)
        t = next(t for t in paper.tables if t.id == tid)
        row = next(x for x in t.rows if x.id == rid)
        status, text = _row_bound(t, row, paper)
        if status:
            return ClaimResult(claim, "paper implausible", f"rests on {ref}: {text}")
    if claim.implausible_expr:
        refs = {f"{t.id}/{r.id}": r.paper_value for t in paper.tables for r in t.rows if r.id}
        for params in paper_params(claim.experiment, claim.condition):
            if eval_expr(claim.implausible_expr, dict(params), lambda ref: refs[ref]):
                return ClaimResult(claim, "paper implausible", f"{claim.implausible_why} ({claim.implausible_expr})")

    if claim.kind == "trend":
        return _trend(claim, sel, missing)

    assert claim.by is not None
    levels: list[str]
    if claim.kind in ("higher", "lower", "gain"):
        levels = [str(claim.a), str(claim.b)]
    else:
        seen = {(_get(v, claim.by)) for v in sel.values if _in_condition(v, claim.condition)}
        levels = list(claim.among) if claim.among else sorted((x for x in seen if x is not None), key=_natural)
        if claim.level and claim.level not in levels and not any(_same_label(x, claim.level) for x in levels):
            levels.append(claim.level)
    groups: list[Stats] = []
    for lv in levels:
        st, n_match, _n_val = sel.group(lv, {**claim.condition, claim.by: (lv,)})
        if n_match == 0:
            return ClaimResult(claim, "untestable", f"no runs with {claim.by}={lv} in {cond_text(claim.condition)}{missing}")
        if st is None:
            return ClaimResult(claim, "untestable", f"{claim.by}={lv}: " + _undefined(claim.metric, n_match))
        groups.append(st)
    if len(groups) < 2:
        return ClaimResult(claim, "untestable", f"only {len(groups)} level of {claim.by} in {cond_text(claim.condition)}{missing}")
    if any(g.n < 2 for g in groups):
        return ClaimResult(claim, "untestable", "fewer than two seeds in a group: no test possible ("
                           + "; ".join(g.text(u) for g in groups) + ")")
    means = "; ".join(g.text(u) for g in groups)
    where = f" [{cond_text(claim.condition)}]" if claim.condition else ""

    if claim.kind in ("higher", "lower"):
        a, b = groups
        sig, how = _significant(a, b, claim.test)
        want_higher = claim.kind == "higher"
        right_way = a.mean > b.mean if want_higher else a.mean < b.mean
        ok = sig and right_way
        if ok:
            verdict = f"{a.level} is {claim.kind} than {b.level}"
        elif sig:
            verdict = f"the opposite: {a.level} is {'lower' if want_higher else 'higher'} than {b.level}"
        else:
            verdict = f"no significant difference between {a.level} and {b.level}"
        return ClaimResult(claim, "reproduced" if ok else "not reproduced",
                           f"{verdict} ({means}; {how}, {_n_text(groups)}){where}")

    if claim.kind in ("best", "worst"):
        want_top = claim.kind == "best"
        # rank from the claimed end: best = by the metric's direction, worst = the other end
        high_first = better_high if want_top else not better_high
        ranked = sorted(groups, key=lambda g: -g.mean if high_first else g.mean)
        top, second = ranked[0], ranked[1]
        target = next(g for g in groups if _same_label(g.level, str(claim.level)))
        word = "best" if want_top else "worst"
        tied = [g for g in ranked if math.isclose(g.mean, top.mean, rel_tol=1e-12, abs_tol=1e-12)]
        if target in tied and len(tied) > 1:
            return ClaimResult(claim, "not reproduced",
                               f"no difference: {', '.join(g.level for g in tied)} have the same {word} mean "
                               f"({means}; {_n_text(groups)}){where}")
        if top is not target:
            return ClaimResult(claim, "not reproduced",
                               f"{top.level} is the {word}, not {target.level} ({means}; {_n_text(groups)}){where}")
        sig, how = _significant(top, second, claim.test)
        if sig:
            return ClaimResult(claim, "reproduced",
                               f"{top.level} is the {word}, ahead of {second.level} ({means}; {how}, {_n_text(groups)}){where}")
        return ClaimResult(claim, "not reproduced",
                           f"{top.level} has the {word} mean but no significant difference from {second.level} "
                           f"({means}; {how}, {_n_text(groups)}){where}")

    if claim.kind == "similar":
        ms = [g.mean for g in groups]
        hi_m, lo_m = max(ms), min(ms)
        spread = 0.0 if hi_m == lo_m else (hi_m - lo_m) / abs(hi_m) * 100 if hi_m else math.inf
        tol = claim.tolerance_pct or 0.0
        ok = spread <= tol
        return ClaimResult(claim, "reproduced" if ok else "not reproduced",
                           f"means differ by {spread:.2f} % of the largest (tolerance {fmt_value(tol)} %) "
                           f"({means}; {_n_text(groups)}){where}")

    # gain: 100 (a / b - 1), CI by the delta method
    a, b = groups
    rg = relative_gain(a.mean, a.sd, a.n, b.mean, b.sd, b.n)
    if rg is None:
        return ClaimResult(claim, "untestable", f"{b.level}'s mean is 0: no relative gain ({means})")
    gain, half = rg
    assert claim.range_pct is not None
    lo, hi = claim.range_pct
    meets = gain + half >= lo and gain - half <= hi
    # a claimed gain (or loss) must also be significant: the CI must exclude 0 on its side
    signed = (gain - half > 0) if lo > 0 else (gain + half < 0) if hi < 0 else True
    ok = meets and signed
    why = ("" if ok else "; the 95 % CI misses the paper's range" if not meets
           else "; the 95 % CI includes 0: the gain is not significant")
    return ClaimResult(claim, "reproduced" if ok else "not reproduced",
                       f"{a.level} vs {b.level}: {gain:+.1f} % (95 % CI {gain - half:+.1f} to {gain + half:+.1f} %), "
                       f"paper {fmt_value(lo)} to {fmt_value(hi)} %{why} ({means}; {_n_text(groups)}){where}")


def _natural(v: str) -> tuple:
    x = _num_or_none(v)
    return (0, x, "") if x is not None else (1, 0.0, v)


def _trend(claim: Claim, sel: Selection, missing: str) -> ClaimResult:
    cond = dict(claim.condition)
    if claim.by and claim.level:
        cond[claim.by] = (claim.level,)
    runs = sel.runs(cond)
    assert claim.along is not None and claim.metric is not None
    pts = []
    for _seed, labels, value in runs.values():
        x = _num_or_none(labels.get(claim.along, ""))
        if x is not None and value is not None:
            pts.append((x, value))
    where = f" [{cond_text(cond)}]" if cond else ""
    if not runs:
        return ClaimResult(claim, "untestable", f"no runs in {cond_text(cond)}{missing}")
    xs = sorted({x for x, _ in pts})
    if len(xs) < 2 or len(pts) < 3:
        return ClaimResult(claim, "untestable", f"{len(xs)} value(s) of {claim.along} with a value of "
                           f"{claim.metric.name}{missing}: no slope")
    n = len(pts)
    fit = slope_test(pts)
    slope, p = fit.slope, fit.p
    means = ", ".join(f"{fmt_value(x)}: {fmt_value(sum(y for xx, y in pts if xx == x) / sum(1 for xx, _ in pts if xx == x))}"
                      for x in xs)
    u = claim.metric.unit
    want = 1 if claim.direction == "increasing" else -1
    ok = p < ALPHA and slope * want > 0
    word = "increases" if slope > 0 else "decreases"
    verdict = (f"{claim.metric.name} {word} with {claim.along}" if p < ALPHA
               else f"no significant trend of {claim.metric.name} with {claim.along}")
    return ClaimResult(claim, "reproduced" if ok else "not reproduced",
                       f"{verdict}: slope {slope:+.4g} {u} per unit of {claim.along} ({fmt_p(p)}, {n} runs; "
                       f"means by {claim.along}: {means}){where}")


def evaluate_row(table: Table, row: Row, values: list[Value], quick: bool, paper: Paper) -> RowResult:
    sel = Selection(values, table.metric, table.flows, table.where)
    st, n_match, _ = sel.group("ours", row.condition)
    status, bound = _row_bound(table, row, paper)
    notes = []
    if n_match == 0:
        notes.append("no runs in the store" + (" (not in the quick version's grid)" if quick else ""))
    elif st is None:
        notes.append(_undefined(table.metric, n_match))
    if row.note:
        notes.append(row.note)
    return RowResult(table, row, st, n_match, status, bound, "; ".join(notes) or None)


def evaluate(con: duckdb.DuckDBPyConnection, experiment: str, quick: bool = False, papers: dict[str, Paper] | None = None,
             run_ids: Sequence[str] | None = None, data_dir: str | Path | None = None) -> Result:
    """Every table row and claim of every paper that names `experiment`, set beside the
    experiment's runs in the store (those of its quick version with quick; or exactly
    run_ids, when given). With data_dir (the store of `con`), the metrics are computed on a
    connection of their own over only those runs."""
    if experiment not in EXPERIMENTS:
        raise TracekitError(f"unknown experiment {experiment!r}; available: {', '.join(EXPERIMENTS)}")
    papers = load_papers() if papers is None else papers
    mine = papers_of(experiment, papers)
    planned_ids, n_planned = experiment_run_ids(con, experiment, quick)
    run_ids = planned_ids if run_ids is None else list(run_ids)
    if data_dir is not None:
        # the metric views over only these runs: the cost of the experiment, not of the store
        from tracekit.db.query import connect

        con = connect(data_dir, run_ids=run_ids)
    res = Result(experiment, mine, quick, len(run_ids), n_planned)
    exp = EXPERIMENTS[experiment]
    if quick and exp.quick is not None:
        res.notes.append(f"QUICK, reduced version: {exp.quick.description} "
                         f"({n_planned} simulations instead of {exp.n_runs()}); "
                         f"run without --quick for the full experiment")
    if len(planned_ids) < n_planned:
        res.notes.append(f"{len(planned_ids)} of the experiment's {n_planned} simulations are in the store")
    if not mine:
        res.notes.append("no paper file names this experiment")
    tables = [t for p in mine for t in p.tables if t.experiment == experiment]
    claims = [c for p in mine for c in p.claims if c.experiment == experiment]
    for p in mine:
        res.notes.append(f"paper {p.id} ({p.citation}): {p.experiments[experiment]}")
        res.notes.extend(f"paper {p.id}: {n}" for n in p.notes)
    if not tables and not claims:
        res.notes.append("the papers give no value and no claim for this experiment (see above)")
    needed = sorted({t.metric.name for t in tables} | {c.metric.name for c in claims if c.metric})
    values = run_values(con, run_ids, needed)
    by_id = {p.id: p for p in mine}
    for t in tables:
        for r in t.rows:
            res.rows.append(evaluate_row(t, r, values, quick, by_id[t.paper]))
    for c in claims:
        res.claims.append(evaluate_claim(c, values, quick, by_id[c.paper]))
    return res


# ---------------------------------------------------------------------------------------
# results kept in the store, for --list and the dashboard


def result_path(store_root: Path, experiment: str, quick: bool) -> Path:
    return Path(store_root) / "reproduce" / f"{experiment}{'.quick' if quick else ''}.json"


def save_result(store_root: Path, result: Result, when: str) -> Path:
    """Write the result beside the store (reproduce/<experiment>[.quick].json), atomically."""
    path = result_path(store_root, result.experiment, result.quick)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({**result.as_dict(), "when": when}, indent=1, default=str), encoding="utf-8")
    tmp.replace(path)
    return path


def last_result(store_root: Path, experiment: str) -> dict[str, Any] | None:
    """The newest saved result of the experiment (full or quick), or None."""
    found = []
    for quick in (False, True):
        p = result_path(store_root, experiment, quick)
        if p.exists():
            try:
                found.append(json.loads(p.read_text(encoding="utf-8")))
            except (OSError, ValueError):
                continue
    return max(found, key=lambda d: str(d.get("when", ""))) if found else None


# ---------------------------------------------------------------------------------------
# rendering (plain text and Markdown; JSON is Result.as_dict)


def _ours_text(r: RowResult) -> str:
    if r.stats is None:
        return "-"
    ci = r.stats.ci95
    return fmt_value(r.stats.mean) + (f" ± {fmt_value(ci)}" if ci is not None else " (one seed)")


def _paper_text(row: Row) -> str:
    lo, hi = row.paper
    return fmt_value(lo) if lo == hi else f"{fmt_value(lo)}-{fmt_value(hi)}"


def row_cells(r: RowResult) -> list[str]:
    """condition, paper, ours (mean ± 95 % CI), ratio, paper in our CI, runs, status/note."""
    ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
    inside = {None: "-", True: "yes", False: "no"}[r.paper_in_ci]
    notes = [x for x in (r.status and f"{r.status.upper()}: {r.bound_text}", r.note) if x]
    return [cond_text({k: v for k, v in r.row.condition.items() if k not in r.table.condition}) or "(all)",
            _paper_text(r.row), _ours_text(r), ratio, inside, str(r.n_runs), "; ".join(notes)]


def _groups(result: Result) -> list[tuple[Table, list[RowResult]]]:
    out: dict[tuple[str, str], tuple[Table, list[RowResult]]] = {}
    for r in result.rows:
        out.setdefault((r.table.paper, r.table.id), (r.table, []))[1].append(r)
    return list(out.values())


def render_text(result: Result) -> str:
    lines = [f"reproduce {result.experiment}" + (" (QUICK: reduced version)" if result.quick else "")
             + f": {result.n_runs} of {result.n_planned} simulations in the store"]
    lines += [f"  note: {n}" for n in result.notes]
    headers = ["condition", "paper", "ours (mean ± 95% CI)", "ours/paper", "paper in CI", "runs", "note"]
    for table, rows in _groups(result):
        cond = cond_text(table.condition) if table.condition else ""
        lines.append("")
        lines.append(f"paper {table.paper}, {table.cite}: {table.title}")
        lines.append(f"  {table.metric.name} [{table.metric.unit}], flows: {table.flows} of "
                     + (" and ".join(map(str, table.where)) or "the TCP flows") + (f"; {cond}" if cond else ""))
        cells = [headers] + [row_cells(r) for r in rows]
        widths = [max(len(c[i]) for c in cells) for i in range(len(headers) - 1)]
        for cell in cells:
            lines.append("  " + "  ".join(x.ljust(w) for x, w in zip(cell, widths)) + ("  " + cell[-1] if cell[-1] else ""))
    if result.claims:
        lines.append("")
        lines.append("claims:")
        for c in result.claims:
            lines.append(f"  [{c.status}] {c.claim.text} (paper {c.claim.paper}, {c.claim.cite})")
            lines.append(f"      {c.evidence}")
            if c.claim.note:
                lines.append(f"      note: {c.claim.note}")
    counts = result.counts()
    lines.append("")
    lines.append(f"summary: {len(result.rows)} paper values; claims: "
                 + ", ".join(f"{n} {s}" for s, n in counts.items()))
    return "\n".join(lines)


def _md(s: str) -> str:
    return s.replace("|", "\\|")


def render_markdown(result: Result) -> str:
    out = [f"### {result.experiment}" + (" (quick)" if result.quick else ""), ""]
    out += [f"- {_md(n)}" for n in result.notes]
    for table, rows in _groups(result):
        out += ["", f"**Paper {table.paper}, {_md(table.cite)}: {_md(table.title)}** "
                    f"(`{table.metric.name}`, {table.metric.unit})", "",
                "| condition | paper | ours (mean ± 95% CI) | ours/paper | paper in CI | runs | note |",
                "|---|---|---|---|---|---|---|"]
        out += ["| " + " | ".join(_md(x) for x in row_cells(r)) + " |" for r in rows]
    if result.claims:
        out += ["", "| claim | status | evidence |", "|---|---|---|"]
        out += [f"| {_md(c.claim.text)} (paper {c.claim.paper}, {_md(c.claim.cite)}) | {c.status} | {_md(c.evidence)}"
                + (f" Note: {_md(c.claim.note)}" if c.claim.note else "") + " |" for c in result.claims]
    return "\n".join(out)


def render_summary_markdown(results: Sequence[Result]) -> str:
    """One line per experiment: papers, paper values set beside ours, claims by status."""
    return summary_markdown([r.as_dict() for r in results])


def summary_markdown(results: Sequence[dict[str, Any]]) -> str:
    """The summary table from results in their JSON form (Result.as_dict, as `tracekit
    reproduce --all --format json` prints them), so that the README's summary can be made
    from a saved file (scripts/gen_docs.py) by the same code as the command's."""
    out = ["| experiment | paper | runs | paper values | reproduced | not reproduced | untestable | paper implausible |",
           "|---|---|---|---|---|---|---|---|"]
    for r in results:
        c = r["summary"]
        n_rows = sum(1 for x in r["rows"] if x["ours"] is not None)
        n_impl = sum(1 for x in r["rows"] if x["status"] == "paper implausible")
        out.append(f"| {r['experiment']}{' (quick)' if r['quick'] else ''} | {r['paper'] or '-'} "
                   f"| {r['n_runs']} | {n_rows} of {len(r['rows'])}" + (f" ({n_impl} implausible)" if n_impl else "")
                   + f" | {c['reproduced']} | {c['not reproduced']} | {c['untestable']} | {c['paper implausible']} |")
    return "\n".join(out)
