"""Every variant of every metric family of the catalogue, computed with SQL over a store, and
the matching of printed numbers against them.

`compute(con)` builds the catalogue's `explain_flows` / `explain_events` tables on a
connection (tracekit.db.query.connect) and returns the flows with tracekit's correct values and
one `Value` per (family, flow, set of SQL mistakes). `explain_numbers` matches each printed
number (with its unit label, if any) to the variants that reproduce it within the tolerance,
preferring the fewest mistakes.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from typing import Any

from tracekit.analysis.explain.catalogue import Catalogue, Family, Mistake, load
from tracekit.analysis.explain.numbers import Printed
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB is imported where it is used, not when this module is
    import duckdb

REL_TOL = 1e-3          # 0.1 %
GROUP_DIMENSION = "flows"   # the mistake of this dimension is made by reading a group of flows


@dataclass(frozen=True)
class Flow:
    flow_no: int
    run_id: str
    trace_kind: str
    fid: int | None
    name: str | None
    ptype: str | None
    src: str
    dst: str
    correct: dict[str, Any]        # flow_stats column -> value (a group: its members' together)
    members: tuple[int, ...] = ()  # a group of flows mixed together: their flow_no

    def describe(self) -> str:
        if self.members:
            return f"{self.name} of the run"
        who = f"fid {self.fid}" if self.fid is not None else "flow"
        label = f" {self.name}" if self.name else ""
        return f"{who}{label} ({self.ptype} {self.src}->{self.dst})"


@dataclass(frozen=True)
class Value:
    family: str
    flow_no: int
    mistakes: tuple[str, ...]      # SQL mistakes only
    raw: float                     # in the family's raw unit (rate: bytes/s, time: s)


@dataclass
class Variants:
    catalogue: Catalogue
    flows: dict[int, Flow]
    values: list[Value]
    source: str = "the store"      # where the trace's run was read from

    def value(self, family: str, flow_no: int, mistakes: tuple[str, ...] = ()) -> float | None:
        for v in self.values:
            if v.family == family and v.flow_no == flow_no and v.mistakes == tuple(mistakes):
                return v.raw
        return None


def compute(con: duckdb.DuckDBPyConnection, catalogue: Catalogue | None = None) -> Variants:
    """Build the catalogue's tables on `con` and compute every family's variants."""
    cat = catalogue or load()
    con.execute(cat.base)
    cur = con.execute("SELECT * FROM explain_flows ORDER BY flow_no")
    cols = [d[0] for d in cur.description]
    flows: dict[int, Flow] = {}
    for row in cur.fetchall():
        r = dict(zip(cols, row))
        flows[r["flow_no"]] = Flow(
            flow_no=r["flow_no"], run_id=r["run_id"], trace_kind=r["trace_kind"], fid=r["fid"], name=r["name"],
            ptype=r["ptype"], src=f"{r['src_node']}.{r['src_port']}", dst=f"{r['dst_node']}.{r['dst_port']}",
            correct={f.metric: r.get(f.metric) for f in cat.families.values()},
            members=tuple(r["members"] or ()))
    values: list[Value] = []
    for fam in cat.families.values():
        combos = cat.variants(fam)
        if fam.aggregate is not None:
            exprs = [f"CAST({cat.family_sql(fam, c)} AS DOUBLE) AS v{i}" for i, c in enumerate(combos)]
            rows = con.execute(f"SELECT flow_no, {', '.join(exprs)} FROM explain_events GROUP BY flow_no").fetchall()
            for row in rows:
                for i, c in enumerate(combos):
                    if row[i + 1] is not None and math.isfinite(row[i + 1]):
                        values.append(Value(fam.name, row[0], c, row[i + 1]))
        else:
            parts = [f"SELECT {i} AS variant, flow_no, CAST(value AS DOUBLE) AS value FROM ({cat.family_sql(fam, c)})"
                     for i, c in enumerate(combos)]
            for i, flow_no, v in con.execute("\nUNION ALL\n".join(parts)).fetchall():
                if v is not None and math.isfinite(v):
                    values.append(Value(fam.name, flow_no, combos[i], v))
    # a group of flows: tracekit's definitions applied to its members together
    for v in values:
        flow = flows[v.flow_no]
        if flow.members and not v.mistakes:
            flow.correct[cat.families[v.family].metric] = v.raw * cat.families[v.family].to_metric
    return Variants(cat, flows, values)


# -- units --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Scaled:
    """One way of printing a raw value: the factor, the unit mistake (None: none) and the unit
    it is in when correct."""
    factor: float
    mistake: str | None
    unit: str


def scalings(family: Family, printed: Printed, unit_mistakes: list[Mistake], also_unscaled: bool) -> list[Scaled]:
    """How a family's raw value may appear as this printed number: in the unit its label says
    (or, without a label, in any of the usual units: then the unit cannot be wrong), or in a
    unit a mistake produces."""
    label = printed.unit
    kind = family.unit_kind
    out: list[Scaled] = []
    if kind == "rate":
        powers = [label.power] if label is not None and label.kind == "rate" else ([0, 1, 2, 3] if label is None else [])
        for k in powers:
            name = ("bit/s", "kbit/s", "Mbit/s", "Gbit/s")[k]
            out.append(Scaled(8 / 1000 ** k, None, name))
            if label is None:
                continue
            for m in unit_mistakes:
                f = m.bits / float(m.prefix_base) ** (k + m.prefix_shift)
                if k + m.prefix_shift < 0 or (m.prefix_base != 1000 and k == 0):
                    continue
                out.append(Scaled(f, m.name, name))
        if also_unscaled:
            out.append(Scaled(1.0, None, "per second"))
    elif kind == "time":
        if label is None:
            out += [Scaled(1000.0, None, "ms"), Scaled(1.0, None, "s")]
        elif label.kind == "time":
            out.append(Scaled(label.factor, None, label.text))
    elif kind == "ratio":
        if label is None:
            out += [Scaled(1.0, None, ""), Scaled(100.0, None, "%")]
        elif label.kind == "percent":
            out.append(Scaled(100.0, None, "%"))
    elif kind == "count":
        # a count is printed as a whole number ("4", not "4.0", which is more often an address)
        if (label is None or label.kind == "count") and printed.decimals <= 0:
            out.append(Scaled(1.0, None, label.text if label else ""))
    return out


# -- matching -----------------------------------------------------------------------------

@dataclass
class Match:
    family: str
    flow_no: int
    mistakes: tuple[str, ...]       # in catalogue order (SQL, unit and group mistakes)
    value: float                    # as printed (scaled)
    correct_value: float | None     # tracekit's value in the metric's own unit
    correct_printed: float | None   # ... and in the unit of the printed number
    unit: str


@dataclass
class Explanation:
    printed: Printed
    matches: list[Match] = field(default_factory=list)    # the fewest-mistakes ones, best first
    identifier: str | None = None    # unexplained, but equal to a flow id, node or address of the trace

    @property
    def explained(self) -> bool:
        return bool(self.matches)

    @property
    def agrees(self) -> bool:
        return bool(self.matches) and not self.matches[0].mistakes


def tolerance(printed: Printed, value: float) -> float:
    """0.1 % of the value; and half a unit of the last printed digit when the number was printed
    with at least three significant digits (a rounded 0.9796 is 0.97959...)."""
    tol = REL_TOL * abs(value)
    if printed.significant >= 3:
        tol = max(tol, 0.5 * 10.0 ** (-printed.decimals))
    return tol


def explain_numbers(variants: Variants, numbers: list[Printed]) -> list[Explanation]:
    cat = variants.catalogue
    units = cat.unit_mistakes()
    fams = cat.families
    order = list(cat.mistakes)
    mixed = next((m.name for m in cat.mistakes.values() if m.dimension == GROUP_DIMENSION), None)
    out = []
    # every variant printed every way a number with this label may show it, sorted by value:
    # one table per kind of label, then a window search per number
    tables: dict[tuple, tuple[list[float], list[tuple[float, Value, Scaled]]]] = {}
    for p in numbers:
        key = (p.unit, p.decimals <= 0)
        if key not in tables:
            rows = []
            for v in variants.values:
                unscaled = any(cat.mistakes[m].also_unscaled for m in v.mistakes)
                for sc in scalings(fams[v.family], p, units, unscaled):
                    rows.append((v.raw * sc.factor, v, sc))
            rows.sort(key=lambda r: r[0])
            tables[key] = ([r[0] for r in rows], rows)
        keys, rows = tables[key]
        half_ulp = 0.5 * 10.0 ** (-p.decimals) if p.significant >= 3 else 0.0
        reach = max(2 * REL_TOL * abs(p.value), half_ulp) * 1.01 + 1e-300
        lo, hi = bisect.bisect_left(keys, p.value - reach), bisect.bisect_right(keys, p.value + reach)
        found: list[tuple[int, float, Match]] = []
        for val, v, s in rows[lo:hi]:
            fam = fams[v.family]
            if abs(val - p.value) > tolerance(p, val):
                continue
            flow = variants.flows[v.flow_no]
            if flow.members and mixed is None:
                continue
            extra = ((s.mistake,) if s.mistake else ()) + ((mixed,) if flow.members and mixed else ())
            mistakes = tuple(sorted(v.mistakes + extra, key=order.index))
            if len(mistakes) > cat.max_mistakes:
                continue
            correct = flow.correct.get(fam.metric)
            correct_printed, unit = None, s.unit
            if correct is not None:
                # tracekit's value in the unit the label says (without a label: the unit this
                # variant was found in, unless that was a bare packet rate)
                if s.mistake is None and s.unit != "per second":
                    right = s
                else:
                    right = next(iter(scalings(fam, p, [], False)), s)
                correct_printed, unit = correct / fam.to_metric * right.factor, right.unit
            found.append((len(mistakes), abs(val - p.value) / max(abs(val), 1e-300),
                          Match(v.family, v.flow_no, mistakes, val, correct, correct_printed, unit)))
        if found:
            fewest = min(n for n, _, _ in found)
            best = sorted((x for x in found if x[0] == fewest), key=lambda x: (x[1], x[2].flow_no, x[2].mistakes))
            seen: set = set()
            matches = []
            for _, _, m in best:
                same = (m.family, tuple(sorted(m.mistakes)))
                if same not in seen:
                    seen.add(same)
                    matches.append(m)
            out.append(Explanation(p, matches))
        else:
            out.append(Explanation(p, identifier=_identifier(variants, p)))
    return out


def _identifier(variants: Variants, p: Printed) -> str | None:
    """What an unexplained number with no unit label may name: a flow id, a node, an address
    (node.port) of one of the trace's flows."""
    if p.unit is not None:
        return None
    flows = variants.flows.values()
    if p.decimals == 0 and p.text.isdigit():
        n = int(p.text)
        what = [w for w, ok in (("a flow id", any(f.fid == n for f in flows)),
                                ("a node", any(n in (int(f.src.split(".")[0]), int(f.dst.split(".")[0])) for f in flows)))
                if ok]
        return " or ".join(what) or None
    if any(p.text in (f.src, f.dst) for f in flows):
        return "an address (node.port)"
    return None


def sentence(variants: Variants, e: Explanation) -> str:
    """One plain line: what the printed number is, and tracekit's value beside it."""
    p = e.printed
    if not e.matches:
        if e.identifier:
            return f"{p.text}: unexplained as a metric; {e.identifier} of the trace"
        return f"{p.text}{' ' + p.unit.text if p.unit else ''}: unexplained (no variant in the catalogue reproduces it within 0.1 %)"
    cat = variants.catalogue
    lines = []
    for i, m in enumerate(e.matches):
        fam = cat.families[m.family]
        flow = variants.flows[m.flow_no]
        right = _fmt(m.correct_printed) + (f" {m.unit}" if m.unit else "") if m.correct_printed is not None else "unknown"
        if not m.mistakes:
            what = f"agrees with tracekit: the {fam.title} of {flow.describe()} ({fam.metric} = {_fmt(m.correct_value)})"
        else:
            words = "; and ".join(cat.mistakes[x].explanation for x in m.mistakes)
            if flow.members:
                scale = (m.correct_printed / m.correct_value) if m.correct_value and m.correct_printed is not None else None

                parts = []
                for f in flow.members:
                    x = variants.flows[f].correct.get(fam.metric)
                    parts.append(f"{variants.flows[f].describe()} "
                                 + (_fmt(x * scale) if x is not None and scale is not None else "NULL"))
                each = ", ".join(parts)
                tail = f"tracekit's {fam.title} per flow ({fam.metric}{', in ' + m.unit if m.unit else ''}): {each}"
            else:
                tail = f"tracekit's {fam.title} is {right} ({fam.metric} = {_fmt(m.correct_value)})"
            what = (f"= the {fam.title} of {flow.describe()} computed with {len(m.mistakes)} "
                    f"mistake{'s' if len(m.mistakes) > 1 else ''} [{', '.join(m.mistakes)}]: the script {words}. {tail}")
        lines.append(("" if i == 0 else "  or ") + what)
    unit = f" {p.unit.text}" if p.unit else ""
    return f"{p.text}{unit} " + "\n".join(lines)


def _fmt(x: float | None) -> str:
    if x is None:
        return "NULL"
    return f"{x:.6g}"
