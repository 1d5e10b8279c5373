"""The bundled ns-2 scenarios and paper experiments, read from their declaration files.

Every scenario is one Tcl script under ``tracekit/experiments/tcl/`` and one declaration
file beside it, ``<scenario-id>.toml``: its title, paper and description, its parameters,
cross-parameter checks, the parameter a dashboard groups runs by (``series``) and the paper
experiments run with it. The parameters are declared there only: the runner passes every
one, resolved (defaults filled in), to the script as ``NAME:TYPE=VALUE`` words, and the
script, which holds no defaults, takes exactly those it uses as ``$P(NAME)`` (common.tcl;
``tests/test_scenarios.py`` checks that every script uses exactly its declared parameters).
Adding a scenario is adding those two files. A declaration file holds (unknown keys are
refused)::

    id = "my-scenario"            # = the file name; script = "my-scenario.tcl" beside it
    order = 90                    # position in listings (tracekit scenarios)
    title, paper, experiment, description, script = "..."
    trace_files = ["packets.tr", "cwnd.tr", "queue.tr"]   # the files it always writes
    [series]                      # optional: the "queue type" / "routing protocol" parameter
    param = "config"
    values = { red = "RED" }      # optional: values shown as other names
    [[params]]                    # one per parameter (the order of the command line and meta header)
    name, type ("int" | "float" | "choice" | "str"), default, choices, min, max, unit, help
                                  # choices: a list, or { pairs_of = [...] } for every "A-B"
    [[checks]]                    # optional: comparisons over numeric parameters, + and -
    expr = "cbr_stop >= cbr_start"
    message = "cbr_stop ({cbr_stop}) must be >= cbr_start ({cbr_start})"
    when = { cbr_profile = "decreasing" }    # optional: only for runs with these values
    [[experiments]]               # optional: named sweeps (tracekit sweep --experiment NAME)
    name, seeds = [1, 2, 3], description
    compare = { by = "variant", per = ["cbr_rate_mbps"], metrics = ["throughput_kbps"],
                where = ["name!=CBR"] }   # optional: what the paper compares, on its metrics
                                  # (tracekit compare --experiment NAME; by/per: grid
                                  # parameters or name; metrics: sql/catalogue.toml)
    [experiments.grid]            # parameter = [values], where a value may be a range table
                                  # { start, stop, step } (stop included), or one such table
    [experiments.fixed]           # parameter = value, held for every run
    [experiments.quick]           # optional: the reduced version (tracekit reproduce --quick):
    seeds = [1, 2], description   # its seeds, and a grid (values replacing some of the
    grid = { ... }, fixed = { ... }   # experiment's) and fixed values (added or replacing)

Nothing here imports the CLI or the dashboard: they read ``SCENARIOS`` and
``EXPERIMENTS`` and call :func:`resolve_params`, the one place where parameters are
resolved (defaults, types, ranges, checks).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable

from tracekit.core.errors import clip_repr
from tracekit.experiments.declarations import DeclarationError, check_keys, number, read_toml
from tracekit.formats.tracemeta import format_value, sim_id_of

TCL_DIR = Path(__file__).resolve().parent / "tcl"

# Accepted by every script but not scenario parameters: out_dir is chosen by the
# runner, seed is passed separately (run_scenario_traces(seed=...)).
RESERVED = ("out_dir", "seed")

__all__ = [
    "EXPERIMENTS", "RESERVED", "SCENARIOS", "TCL_DIR", "Check", "Experiment", "Param", "Scenario",
    "ScenarioFileError", "experiment_runs", "format_value", "get_scenario", "load_scenario_file",
    "load_scenarios", "resolve_params", "series_value", "sim_id_of",
]


class ScenarioFileError(DeclarationError):
    """A declaration file that does not load or validate (the message names the file)."""


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # 'int' | 'float' | 'choice' | 'str'
    default: Any
    choices: tuple[str, ...] | None = None
    min: float | None = None
    max: float | None = None
    unit: str = ""
    help: str = ""
    # a choice declared as `choices = { pairs_of = [...] }`: its choices are every "A-B" of
    # these (cbr-fairness's pair of variants), described by them rather than listed
    pairs_of: tuple[str, ...] | None = None

    def allowed(self) -> str:
        """Human-readable description of the allowed values."""
        if self.type == "choice" and self.pairs_of:
            return "A-B with A and B each one of " + ", ".join(self.pairs_of)
        if self.type == "choice":
            return "one of " + ", ".join(self.choices or ())
        kind = "an integer" if self.type == "int" else "a number" if self.type == "float" else "a string"
        lo = "" if self.min is None else f"{_fmt(self.min)}"
        hi = "" if self.max is None else f"{_fmt(self.max)}"
        if lo and hi:
            kind += f" in [{lo}, {hi}]"
        elif lo:
            kind += f" >= {lo}"
        elif hi:
            kind += f" <= {hi}"
        if self.unit:
            kind += f" ({self.unit})"
        return kind

    def parse(self, raw: Any, scenario_id: str = "") -> Any:
        """Convert ``raw`` (usually a string from the command line) to this
        parameter's type and check it; raise ValueError with a one-line reason."""
        where = f"{scenario_id}: " if scenario_id else ""
        text = str(raw).strip()
        if self.type == "choice":
            choices = self.choices or ()
            if text not in choices:
                # be lenient about case, but report the canonical spelling
                folded = {c.lower(): c for c in choices}
                if text.lower() in folded:
                    return folded[text.lower()]
                # "cubic" for "linux-cubic": ns-2's Linux TCP algorithms are linux-ALG variants
                hint = f" (did you mean {folded['linux-' + text.lower()]}?)" if "linux-" + text.lower() in folded else ""
                raise ValueError(f"{where}bad value {clip_repr(text)} for {self.name}: must be {self.allowed()}{hint}")
            return text
        if self.type == "str":
            if not text or any(c.isspace() for c in text):
                raise ValueError(f"{where}bad value {clip_repr(text)} for {self.name}: must be a non-empty string without spaces")
            return text
        if self.type == "int":
            try:
                value: Any = int(text, 10)
            except ValueError:
                try:
                    f = float(text)
                except ValueError:
                    f = math.nan
                if math.isfinite(f) and f == int(f):
                    value = int(f)
                else:
                    raise ValueError(f"{where}bad value {clip_repr(text)} for {self.name}: must be {self.allowed()}") from None
        else:
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"{where}bad value {clip_repr(text)} for {self.name}: must be {self.allowed()}") from None
            if not math.isfinite(value):
                raise ValueError(f"{where}bad value {clip_repr(text)} for {self.name}: must be {self.allowed()}")
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise ValueError(f"{where}value {text} for {self.name} is out of range: must be {self.allowed()}")
        return value


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


# --------------------------------------------------------------------------
# cross-parameter checks: a tiny comparison language, never Python's eval
#
#   check := sum OP sum          OP: < <= > >= == !=
#   sum   := unary (('+'|'-') unary)*
#   unary := '-' unary | NUMBER | NAME | '(' sum ')'

_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|(?P<name>[A-Za-z_]\w*)"
                    r"|(?P<op><=|>=|==|!=|<|>|\+|-|\(|\)))")
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


def _tokens(expr: str) -> list[tuple[str, str]]:
    out, pos, end = [], 0, len(expr.rstrip())
    while pos < end:
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read {clip_repr(expr[pos:].strip())}")
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


def _compile_check(expr: str) -> tuple[Callable[[dict], bool], frozenset[str]]:
    """A predicate over a parameter dict, and the parameter names it reads."""
    toks = _tokens(expr)
    names: set[str] = set()
    i = 0

    def peek() -> tuple[str, str] | None:
        return toks[i] if i < len(toks) else None

    def take() -> tuple[str, str]:
        nonlocal i
        if i >= len(toks):
            raise ValueError("unexpected end")
        i += 1
        return toks[i - 1]

    def unary() -> Callable[[dict], float]:
        kind, text = take()
        if (kind, text) == ("op", "-"):
            inner = unary()
            return lambda p: -inner(p)
        if kind == "num":
            value = float(text)
            return lambda p: value
        if kind == "name":
            names.add(text)
            return lambda p: p[text]
        if (kind, text) == ("op", "("):
            inner = sum_()
            if take() != ("op", ")"):
                raise ValueError("missing ')'")
            return inner
        raise ValueError(f"unexpected {clip_repr(text)}")

    def sum_() -> Callable[[dict], float]:
        left = unary()
        while peek() in (("op", "+"), ("op", "-")):
            sign = take()[1]
            right = unary()
            left = (lambda a, b: lambda p: a(p) + b(p))(left, right) if sign == "+" else \
                   (lambda a, b: lambda p: a(p) - b(p))(left, right)
        return left

    left = sum_()
    tok = peek()
    if tok is None or tok[0] != "op" or tok[1] not in _COMPARE:
        raise ValueError("expected a comparison (< <= > >= == !=)" + (f", got {clip_repr(tok[1])}" if tok else ""))
    take()
    cmp = _COMPARE[tok[1]]
    right = sum_()
    if i != len(toks):
        raise ValueError(f"unexpected {clip_repr(toks[i][1])}")
    return (lambda p: cmp(left(p), right(p))), frozenset(names)


@dataclass(frozen=True)
class Check:
    """A condition on several parameters (``expr``) and what to say when it fails
    (``message``, where ``{name}`` is replaced by that parameter's value). With ``when``
    ((parameter, value) pairs), it applies only to runs with all those values."""
    expr: str
    message: str
    test: Callable[[dict], bool] = field(repr=False, compare=False)
    when: tuple[tuple[str, Any], ...] = ()

    def holds(self, params: dict[str, Any]) -> bool:
        return any(params[k] != v for k, v in self.when) or self.test(params)

    def error(self, params: dict[str, Any]) -> str:
        return re.sub(r"\{(\w+)\}", lambda m: str(params.get(m.group(1), m.group(0))), self.message)


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    paper: str
    experiment: str
    description: str
    script: str  # file name under TCL_DIR
    params: tuple[Param, ...]
    # the trace files the script always writes into out_dir (the runner fails without
    # them); it may write others of runner.TRACE_FILES (manet: cwnd.tr with TCP flows)
    trace_files: tuple[str, ...] = ("packets.tr", "cwnd.tr", "queue.tr")
    checks: tuple[Check, ...] = ()
    # the parameter a dashboard groups runs by ("queue type", "routing protocol"), and,
    # if its values are not the names to show, a mapping of values to names
    series: str | None = None
    series_values: tuple[tuple[str, str], ...] = ()

    @property
    def script_path(self) -> Path:
        return TCL_DIR / self.script

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}


@dataclass(frozen=True)
class Experiment:
    name: str
    scenario: str
    grid: dict[str, list]
    seeds: list[int]
    description: str
    fixed: dict[str, Any] = field(default_factory=dict)  # params held constant (not defaults)
    compare: "ExperimentCompare | None" = None  # what the paper compares, and on which metrics
    quick: "Experiment | None" = None    # the reduced version (`tracekit reproduce --quick`)

    def n_runs(self) -> int:
        n = len(self.seeds)
        for values in self.grid.values():
            n *= len(values)
        return n


@dataclass(frozen=True)
class ExperimentCompare:
    """The comparison a paper's experiment makes (`tracekit compare --experiment NAME`): the
    factor (a grid parameter, or `name` for the flow name), one verdict per value of `per`,
    the catalogued metrics the paper reports, and flow filters (e.g. name!=CBR)."""
    by: str
    per: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ("throughput_kbps",)
    where: tuple[str, ...] = ()


# --------------------------------------------------------------------------
# the declaration files: each table's {key: required}, checked by declarations.check_keys
# (the one validation, shared with the paper files)

_TOP_KEYS = {"id": True, "order": False, "title": True, "paper": True, "experiment": True,
             "description": True, "script": True, "trace_files": False, "series": False,
             "params": True, "checks": False, "experiments": False}
_PARAM_KEYS = {"name": True, "type": True, "default": True, "choices": False, "min": False,
               "max": False, "unit": False, "help": False}
_CHECK_KEYS = {"expr": True, "message": True, "when": False}
_SERIES_KEYS = {"param": True, "values": False}
_EXPERIMENT_KEYS = {"name": True, "seeds": True, "description": True, "grid": True, "fixed": False,
                    "compare": False, "quick": False}
_QUICK_KEYS = {"seeds": True, "description": True, "grid": False, "fixed": False}
_COMPARE_KEYS = {"by": True, "per": False, "metrics": False, "where": False}
_RANGE_KEYS = {"start": True, "stop": True, "step": True}
_TYPES = ("int", "float", "choice", "str")


def _str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: expected a non-empty string")
    return value


def _param(t: Any, where: str) -> Param:
    if isinstance(t, dict) and isinstance(t.get("name"), str) and t["name"]:
        where = f"parameter {t['name']}"
    check_keys(t, _PARAM_KEYS, where)
    name = _str(t["name"], f"{where}: name")
    kind = t["type"]
    if kind not in _TYPES:
        raise ValueError(f"{where}: type must be one of {', '.join(_TYPES)}, got {clip_repr(kind)}")
    choices = t.get("choices")
    if (kind == "choice") != (choices is not None):
        raise ValueError(f"{where}: choices are given for, and only for, type = \"choice\"")
    pairs_of = None
    if isinstance(choices, dict):   # { pairs_of = [...] }: every "A-B" of the list
        check_keys(choices, {"pairs_of": True}, f"{where}: choices")
        pairs_of = choices["pairs_of"]
        if (not isinstance(pairs_of, list) or not pairs_of
                or not all(isinstance(c, str) and c for c in pairs_of)):
            raise ValueError(f"{where}: choices.pairs_of must be a list of strings")
        pairs_of = tuple(pairs_of)
        choices = [f"{a}-{b}" for a in pairs_of for b in pairs_of]
    if choices is not None:
        if not isinstance(choices, list) or not choices or not all(isinstance(c, str) and c for c in choices):
            raise ValueError(f"{where}: choices must be a list of strings, or {{ pairs_of = [...] }}")
        choices = tuple(choices)
    lo = None if t.get("min") is None else number(t["min"], f"{where}: min")
    hi = None if t.get("max") is None else number(t["max"], f"{where}: max")
    if kind in ("choice", "str") and (lo is not None or hi is not None):
        raise ValueError(f"{where}: min/max are for int and float parameters")
    default = t["default"]
    if kind == "int" and (isinstance(default, bool) or not isinstance(default, int)):
        raise ValueError(f"{where}: default must be an integer")
    if kind == "float":
        default = float(number(default, f"{where}: default"))
    if kind in ("choice", "str") and not isinstance(default, str):
        raise ValueError(f"{where}: default must be a string")
    p = Param(name, kind, default, choices, lo, hi, _opt_str(t, "unit", where), _opt_str(t, "help", where),
              pairs_of)
    if p.parse(format_value(default)) != default:  # raises ValueError for a default out of range
        raise ValueError(f"{where}: default {clip_repr(default)} does not read back as itself")
    return p


def _opt_str(t: dict, key: str, where: str) -> str:
    value = t.get(key, "")
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key} must be a string")
    return value


def _decimals(x: float | int) -> int:
    return max(0, -int(Decimal(repr(x)).as_tuple().exponent))


def _grid_values(value: Any, where: str) -> list:
    """A grid's values: a {start, stop, step} table (stop included), or a list whose items
    are values or such tables (expanded in place)."""
    if isinstance(value, list):
        if not value:
            raise ValueError(f"{where}: no values")
        return [x for item in value for x in (_range(item, where) if isinstance(item, dict) else [item])]
    return _range(value, where)


def _range(value: Any, where: str) -> list:
    check_keys(value, _RANGE_KEYS, where)
    start, stop, step = (number(value[k], f"{where}: {k}") for k in ("start", "stop", "step"))
    if step <= 0 or stop < start:
        raise ValueError(f"{where}: need step > 0 and stop >= start")
    n = int(round((stop - start) / step))
    if all(isinstance(x, int) for x in (start, stop, step)):
        return [start + i * step for i in range(n + 1)]
    digits = max(_decimals(x) for x in (start, stop, step))
    return [round(start + i * step, digits) for i in range(n + 1)]


def _experiment(t: Any, sc: Scenario, where: str) -> Experiment:
    if isinstance(t, dict) and isinstance(t.get("name"), str) and t["name"]:
        where = f"experiment {t['name']}"
    check_keys(t, _EXPERIMENT_KEYS, where)
    name = _str(t["name"], f"{where}: name")
    seeds = _grid_values(t["seeds"], f"{where}: seeds") if isinstance(t["seeds"], (list, dict)) else None
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in seeds):
        raise ValueError(f"{where}: seeds must be integers >= 1 (a list, or a {{start, stop, step}} range)")
    names = {p.name for p in sc.params}
    grid_t = t["grid"]
    if not isinstance(grid_t, dict) or not grid_t:
        raise ValueError(f"{where}: grid must be a table of parameter = values")
    fixed = t.get("fixed", {})
    if not isinstance(fixed, dict):
        raise ValueError(f"{where}: fixed must be a table of parameter = value")
    for key in [*grid_t, *fixed]:
        if key not in names:
            raise ValueError(f"{where}: {clip_repr(key)} is not a parameter of {sc.id}")
    both = set(grid_t) & set(fixed)
    if both:
        raise ValueError(f"{where}: {clip_repr(sorted(both)[0])} is both in grid and in fixed")
    grid = {k: _grid_values(v, f"{where}: grid {k}") for k, v in grid_t.items()}
    cmp = _experiment_compare(t["compare"], grid, f"{where}: compare") if "compare" in t else None
    exp = Experiment(name, sc.id, grid, list(seeds), _str(t["description"], f"{where}: description"),
                     dict(fixed), cmp)
    if "quick" in t:
        exp = replace(exp, quick=_quick(t["quick"], exp, names, f"{where}: quick"))
    return exp


def _quick(t: Any, exp: Experiment, names: set[str], where: str) -> Experiment:
    """An experiment's reduced version: its own seeds, grid values replacing some of the
    experiment's (same parameters), fixed values added to or replacing the experiment's."""
    check_keys(t, _QUICK_KEYS, where)
    seeds = t["seeds"]
    if (not isinstance(seeds, list) or not seeds
            or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 1 for s in seeds)):
        raise ValueError(f"{where}: seeds must be a list of integers >= 1")
    grid_t, fixed = t.get("grid", {}), t.get("fixed", {})
    if not isinstance(grid_t, dict) or not isinstance(fixed, dict):
        raise ValueError(f"{where}: grid and fixed must be tables of parameter = values")
    for key in grid_t:
        if key not in exp.grid:
            raise ValueError(f"{where}: grid {clip_repr(key)} is not in the experiment's grid")
    for key in fixed:
        if key not in names:
            raise ValueError(f"{where}: {clip_repr(key)} is not a parameter of {exp.scenario}")
        if key in exp.grid:
            raise ValueError(f"{where}: {clip_repr(key)} is in the experiment's grid: reduce it in quick.grid")
    grid = {**exp.grid, **{k: _grid_values(v, f"{where}: grid {k}") for k, v in grid_t.items()}}
    return Experiment(exp.name, exp.scenario, grid, list(seeds), _str(t["description"], f"{where}: description"),
                      {**exp.fixed, **fixed}, exp.compare)


def _experiment_compare(t: Any, grid: dict[str, list], where: str) -> ExperimentCompare:
    from tracekit.db.catalogue import metrics as catalogued

    check_keys(t, _COMPARE_KEYS, where)

    def strings(key: str) -> tuple[str, ...]:
        v = t.get(key, [])
        if not isinstance(v, list) or not all(isinstance(x, str) and x for x in v):
            raise ValueError(f"{where}: {key} must be a list of strings")
        return tuple(v)

    by = _str(t["by"], f"{where}: by")
    per, mets, filters = strings("per"), strings("metrics") or ("throughput_kbps",), strings("where")
    for k in (by, *per):
        if k != "name" and k not in grid:
            raise ValueError(f"{where}: {clip_repr(k)} is neither a grid parameter nor name (the flow name)")
    unknown = [m for m in mets if m not in catalogued()]
    if unknown:
        raise ValueError(f"{where}: {clip_repr(unknown[0])} is not a metric of sql/catalogue.toml")
    return ExperimentCompare(by, per, mets, filters)


def _check(t: Any, sc: Scenario, where: str) -> Check:
    check_keys(t, _CHECK_KEYS, where)
    expr = _str(t["expr"], f"{where}: expr")
    try:
        holds, names = _compile_check(expr)
    except ValueError as e:
        raise ValueError(f"check {clip_repr(expr)}: {e}") from None
    for n in sorted(names):
        if n not in {p.name for p in sc.params} or sc.param(n).type not in ("int", "float"):
            raise ValueError(f"check {clip_repr(expr)}: {clip_repr(n)} is not a numeric parameter of {sc.id}")
    when = t.get("when", {})
    if not isinstance(when, dict):
        raise ValueError(f"check {clip_repr(expr)}: when must be a table of parameter = value")
    for k, v in when.items():
        if k not in {p.name for p in sc.params}:
            raise ValueError(f"check {clip_repr(expr)}: when: {clip_repr(k)} is not a parameter of {sc.id}")
        if isinstance(v, (dict, list)) or sc.param(k).parse(format_value(v)) != v:
            raise ValueError(f"check {clip_repr(expr)}: when: {clip_repr(v)} is not a value of {k}")
    return Check(expr, _str(t["message"], f"check {clip_repr(expr)}: message"), holds, tuple(when.items()))


def load_scenario_file(path: Path) -> tuple[Scenario, list[Experiment], int | float]:
    """One declaration file: its scenario, its experiments and its listing order.
    Raises ScenarioFileError (one line, naming the file) for anything it does not accept."""
    path = Path(path)
    t = read_toml(path, ScenarioFileError)
    try:
        check_keys(t, _TOP_KEYS, "top level")
        sid = _str(t["id"], "id")
        if sid != path.stem:
            raise ValueError(f"id {clip_repr(sid)} differs from the file name")
        script = _str(t["script"], "script")
        if not (path.parent / script).is_file():
            raise ValueError(f"script {clip_repr(script)} is not beside it")
        if not isinstance(t["params"], list) or not t["params"]:
            raise ValueError("params: expected [[params]] tables")
        params = tuple(_param(p, f"params #{i + 1}") for i, p in enumerate(t["params"]))
        names = [p.name for p in params]
        dup = sorted({n for n in names if names.count(n) > 1} | (set(names) & set(RESERVED)))
        if dup:
            raise ValueError(f"parameter {clip_repr(dup[0])} is declared twice or reserved")
        trace_files = t.get("trace_files", list(Scenario.trace_files))
        if not isinstance(trace_files, list) or not all(isinstance(f, str) for f in trace_files):
            raise ValueError("trace_files: expected a list of file names")
        series: str | None = None
        series_values: tuple[tuple[str, str], ...] = ()
        if "series" in t:
            s = check_keys(t["series"], _SERIES_KEYS, "series")
            series = _str(s["param"], "series: param")
            if series not in names:
                raise ValueError(f"series: {clip_repr(series)} is not a parameter")
            values = s.get("values", {})
            if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
                raise ValueError("series: values must be a table of value = name")
            series_values = tuple(values.items())
        sc = Scenario(sid, _str(t["title"], "title"), _str(t["paper"], "paper"),
                      _str(t["experiment"], "experiment"), _str(t["description"], "description"),
                      script, params, tuple(trace_files), series=series, series_values=series_values)
        checks = tuple(_check(c, sc, f"checks #{i + 1}") for i, c in enumerate(t.get("checks", [])))
        sc = dataclasses.replace(sc, checks=checks)
        experiments = [_experiment(e, sc, f"experiments #{i + 1}") for i, e in enumerate(t.get("experiments", []))]
        order = number(t["order"], "order") if "order" in t else math.inf
    except ValueError as e:
        raise ScenarioFileError(f"{path.name}: {e}") from None
    return sc, experiments, order


def load_scenarios(tcl_dir: Path = TCL_DIR) -> tuple[dict[str, Scenario], dict[str, Experiment]]:
    """Every ``*.toml`` declaration file of ``tcl_dir``, in their ``order``."""
    loaded = [load_scenario_file(p) for p in sorted(Path(tcl_dir).glob("*.toml"))]
    loaded.sort(key=lambda x: (x[2], x[0].id))
    scenarios = {sc.id: sc for sc, _, _ in loaded}
    experiments: dict[str, Experiment] = {}
    for sc, exps, _ in loaded:
        for e in exps:
            if e.name in experiments:
                raise ScenarioFileError(f"{sc.id}.toml: experiment {clip_repr(e.name)} is also declared by "
                                        f"{experiments[e.name].scenario}.toml")
            experiments[e.name] = e
    return scenarios, experiments


SCENARIOS: dict[str, Scenario]
EXPERIMENTS: dict[str, Experiment]
SCENARIOS, EXPERIMENTS = load_scenarios()


# --------------------------------------------------------------------------
# resolution


def get_scenario(scenario_id: str) -> Scenario:
    try:
        return SCENARIOS[scenario_id]
    except KeyError:
        raise ValueError(
            f"unknown scenario {clip_repr(scenario_id)}; available: {', '.join(SCENARIOS)}"
        ) from None


def resolve_params(scenario_id: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults of ``scenario_id`` updated with ``overrides`` (values usually strings
    from ``--set k=v``), converted to their types and checked.

    Returns a dict with every parameter of the scenario, in declaration order.
    Raises ValueError with a one-line message naming what is wrong and what is allowed.
    """
    sc = get_scenario(scenario_id)
    resolved = sc.defaults()
    for key, raw in (overrides or {}).items():
        if key in RESERVED:
            raise ValueError(
                f"{scenario_id}: {clip_repr(key)} is not a scenario parameter"
                + (" (pass the seed separately, e.g. --seed N)" if key == "seed" else " (chosen by the runner)")
            )
        if key not in resolved:
            raise ValueError(
                f"{scenario_id}: unknown parameter {clip_repr(key)}; known: {', '.join(resolved)}"
            )
        resolved[key] = sc.param(key).parse(raw, scenario_id)
    for check in sc.checks:
        if not check.holds(resolved):
            raise ValueError(f"{scenario_id}: {check.error(resolved)}")
    return resolved


def series_value(scenario_id: str | None, params: dict[str, Any]) -> str | None:
    """What a run of ``scenario_id`` with ``params`` (resolved, or run labels) shows as its
    series (queue type, routing protocol), or None if the scenario has no series parameter,
    is unknown, or the value is missing or unmapped."""
    sc = SCENARIOS.get(scenario_id or "")
    if sc is None or sc.series is None:
        return None
    value = params.get(sc.series)
    if value is None or value == "":
        return None
    value = format_value(value)
    return dict(sc.series_values).get(value) if sc.series_values else value


def experiment_runs(name: str, quick: bool = False) -> list[tuple[dict[str, Any], int]]:
    """The (params, seed) pairs of an experiment (or of its reduced version, `quick`): cross
    product of its grid, with its fixed params, each resolved against the scenario."""
    exp = EXPERIMENTS[name]
    if quick:
        if exp.quick is None:
            raise ValueError(f"experiment {clip_repr(name)} declares no quick version")
        exp = exp.quick
    keys = list(exp.grid)
    runs = []
    for combo in itertools.product(*(exp.grid[k] for k in keys)):
        overrides = {k: format_value(v) for k, v in exp.fixed.items()}
        overrides.update({k: format_value(v) for k, v in zip(keys, combo)})
        params = resolve_params(exp.scenario, overrides)
        for seed in exp.seeds:
            runs.append((params, seed))
    return runs
