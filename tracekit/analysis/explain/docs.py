"""Generate docs/why-awk-numbers-differ.md from real ns-2 runs of bundled scenarios.

    python -m tracekit.analysis.explain.docs [--out docs/why-awk-numbers-differ.md]

One section per mistake of the catalogue (mistakes.toml): what it is, a two-line excerpt of a
real trace (a line the right computation counts and one the mistake counts or uses), the
wrong and the right awk, and how much the mistake changes each metric it touches, per flow,
on a short run of cbr-variants (wired) or, for a mistake that changes nothing there, of manet
in the old wireless format. Every number is computed, none typed.
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracekit.analysis.explain.catalogue import UNIT_DIMENSION, Catalogue, Mistake, load
from tracekit.analysis.explain.variants import GROUP_DIMENSION, Variants, compute
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB is imported where it is used, not when this module is
    import duckdb

# the runs the page is computed from (the tests use the same ones): scenario, parameters, seed
WIRED_RUN: tuple[str, dict[str, Any], int] = ("cbr-variants", {"duration": 2.0}, 1)
WIRELESS_RUN: tuple[str, dict[str, Any], int] = (
    "manet", {"duration": 6.0, "nodes": 6, "width_m": 400, "height_m": 400, "start_max": 1.0, "trace_format": "old"}, 1)
DEFAULT_OUT = Path("docs/why-awk-numbers-differ.md")


@dataclass
class Run:
    scenario: str
    params: dict
    seed: int
    trace_lines: list[str]
    variants: Variants
    excerpts: dict[str, list[int]]      # mistake -> [right line_no, wrong line_no] (1-based)


def _excerpt(con: duckdb.DuckDBPyConnection, cat: Catalogue, m: Mistake, flow_no: int) -> list[int]:
    if m.dimension == GROUP_DIMENSION:      # a line of each of two flows the group mixes
        rows = con.execute("SELECT min(l.line_no) FROM explain_lines l JOIN explain_groups g "
                           "ON list_contains(g.members, l.flow_no) WHERE g.flow_no = $flow AND l.is_data "
                           "AND l.r_at_dst GROUP BY l.flow_no ORDER BY 1 LIMIT 2", {"flow": flow_no}).fetchall()
        return [r[0] for r in rows]
    right = m.excerpt_right or "is_data AND r_at_dst"
    wrong = m.excerpt_wrong or right
    # lines of a typical packet (the flow's most common size: not the 40-byte SYN)
    typical = "(size IS DISTINCT FROM (SELECT mode(size) FROM explain_events WHERE flow_no = $flow AND is_data))"
    if wrong == right:
        rows = con.execute(f"SELECT line_no FROM explain_events WHERE flow_no = $flow AND ({right}) "
                           f"ORDER BY {typical}, line_no LIMIT 2", {"flow": flow_no}).fetchall()
        return sorted(r[0] for r in rows)
    w = con.execute(f"SELECT line_no, pkt_id, is_data FROM explain_events WHERE flow_no = $flow AND ({wrong}) "
                    f"ORDER BY {typical}, line_no LIMIT 1", {"flow": flow_no}).fetchone()
    if w is None:
        return []
    r = con.execute(f"SELECT min(line_no) FROM explain_events WHERE flow_no = ? AND pkt_id = ? AND is_data = ? AND ({right})",
                    [flow_no, w[1], w[2]]).fetchone()
    if r is None or r[0] is None:
        r = con.execute(f"SELECT min(line_no) FROM explain_events WHERE flow_no = ? AND ({right})", [flow_no]).fetchone()
    return [r[0], w[0]] if r and r[0] is not None else []


def measure(trace: Path, scenario: str, params: dict, seed: int) -> Run:
    """Ingest the trace into a temporary store, compute every variant, and pick the excerpts."""
    from tracekit.ingest.pipeline import ingest_file
    from tracekit.db.query import close, connect
    from tracekit.store.store import Store

    cat = load()
    with tempfile.TemporaryDirectory(prefix="tracekit-explain-docs-") as tmp:
        store = Store(Path(tmp) / "store", create=True)
        ingest_file(store, trace, source_name=trace.name)
        con = connect(store.root)
        try:
            variants = compute(con, cat)
            excerpts = {}
            for name, m in cat.mistakes.items():
                flow_no = _biggest_change(variants, m)[1]
                excerpts[name] = _excerpt(con, cat, m, flow_no) if flow_no is not None else []
        finally:
            close(con)
    return Run(scenario, params, seed, trace.read_text().splitlines(), variants, excerpts)


def _effects(v: Variants, m: Mistake) -> list[tuple[str, int, float, float]]:
    """(family, flow_no, tracekit's value, the value with this mistake alone), both in the
    family's metric unit, for every family the mistake applies to and every flow."""
    cat = v.catalogue
    out = []
    if m.dimension == GROUP_DIMENSION:      # each group against its members, flow by flow
        for fam in cat.families.values():
            for flow in v.flows.values():
                together = v.value(fam.name, flow.flow_no)
                if flow.members and together is not None:
                    out.append((fam.name, flow.flow_no, math.nan, together * fam.to_metric))
        return out
    for fam in cat.families.values():
        if not cat.applies(fam, m.name):
            continue
        for flow_no in v.flows:
            if v.flows[flow_no].members:
                continue
            right = v.value(fam.name, flow_no)
            if right is None:
                continue
            if m.dimension == UNIT_DIMENSION:
                # a rate printed in kbit/s: the unit the mistake computes instead
                wrong = right * m.bits / float(m.prefix_base) ** (1 + m.prefix_shift) / 0.008
                out.append((fam.name, flow_no, right * fam.to_metric, wrong * fam.to_metric))
                continue
            w = v.value(fam.name, flow_no, (m.name,))
            if w is not None:
                # a packet rate is shown as the packets per second the script prints
                scale = 1.0 if m.also_unscaled and fam.unit_kind == "rate" else fam.to_metric
                out.append((fam.name, flow_no, right * fam.to_metric, w * scale))
    return out


def _biggest_change(v: Variants, m: Mistake) -> tuple[float, int | None]:
    best: tuple[float, int | None] = (0.0, None)
    if m.dimension == GROUP_DIMENSION:
        return next(((1.0, e[1]) for e in _effects(v, m)), best)
    for _, flow_no, right, wrong in _effects(v, m):
        change = abs(wrong - right) / abs(right) if right else (abs(wrong) if wrong else 0.0)
        if change > best[0]:
            best = (change, flow_no)
    return best


def _num(x: float) -> str:
    return f"{x:.6g}"


def render(wired: Run, wireless: Run, command: str = "python -m tracekit.analysis.explain.docs") -> str:
    cat = load()
    out = [
        "# Why your awk numbers differ",
        "",
        f"<!-- generated by `{command}`: do not edit; run it again after changing "
        "tracekit/analysis/explain/mistakes.toml -->",
        "",
        "Most awk scripts for ns-2 traces found on blogs and course pages make one of a small set of "
        "mistakes. `tracekit explain-awk SCRIPT.awk TRACE [-- AWK ARGS...]` runs your script on your trace "
        "and names the mistakes that reproduce each number it prints (within 0.1 %), with tracekit's value "
        "beside it; a number no combination of them reproduces is reported as unexplained. The catalogue is "
        "`tracekit/analysis/explain/mistakes.toml`: each mistake is one entry, computed with SQL over the store "
        "like every other metric. tracekit's own definitions: docs/contract.md and docs/contract-wireless.md.",
        "",
        "Every number on this page was computed from real ns-2 runs (ns-2.35, seed "
        f"{wired.seed}): **{wired.scenario}** with {_params(wired.params)} (TCP Reno fid 1 from node 0 to node 3 "
        "over three links, CBR fid 2 from node 1 to node 2 over one), and, for the mistakes that change "
        f"nothing there, **{wireless.scenario}** with {_params(wireless.params)}. Each section shows the "
        "mistake alone; in a real script they combine (explain-awk tries up to "
        f"{cat.max_mistakes} at a time).",
        "",
        _chance(wired.variants),
        "",
        "| mistake | name in explain-awk |",
        "|---|---|",
    ]
    for name, m in cat.mistakes.items():
        out.append(f"| [{m.title}](#{_anchor(m.title)}) | `{name}` |")
    out.append("")
    for name, m in cat.mistakes.items():
        run = wired if _biggest_change(wired.variants, m)[1] is not None else wireless
        v = run.variants
        out += [f"## {m.title}", "", f"`{name}`: your script {m.explanation}.", ""]
        lines = run.excerpts.get(name) or []
        if len(lines) == 2:
            if m.dimension == GROUP_DIMENSION:
                what = f"lines {lines[0]} and {lines[1]}, deliveries of two different flows"
            elif (m.excerpt_wrong or "") == (m.excerpt_right or ""):
                what = f"lines {lines[0]} and {lines[1]}, which both computations read: the arithmetic differs"
            else:
                what = f"line {lines[0]} is what the right computation reads, line {lines[1]} what the mistake reads"
            out += [f"Trace excerpt ({run.scenario}; {what}):", "", "```"]
            out += [run.trace_lines[i - 1] for i in lines]
            out += ["```", ""]
        if m.wrong or m.right:
            out += ["Wrong:", "", "```awk", m.wrong, "```", "", "Right:", "", "```awk", m.right, "```", ""]
        effects = [e for e in _effects(v, m) if _differs(e[2], e[3])]
        if m.dimension == GROUP_DIMENSION and effects:
            out += [f"On {run.scenario}, the flows mixed together:", "",
                    "| metric | flows | tracekit, per flow | together |", "|---|---|---|---|"]
            for fam_name, flow_no, _, together in effects:
                fam = cat.families[fam_name]
                each = " / ".join(_num(v.flows[f].correct[fam.metric]) if v.flows[f].correct.get(fam.metric) is not None
                                  else "NULL" for f in v.flows[flow_no].members)
                out.append(f"| {fam.metric} | {v.flows[flow_no].describe()} | {each} | {_num(together)} |")
            out.append("")
        elif effects:
            out += [f"On {run.scenario}, this mistake alone:", "",
                    "| metric | flow | tracekit | with the mistake | change |", "|---|---|---|---|---|"]
            for fam_name, flow_no, right, wrong in effects:
                fam = cat.families[fam_name]
                change = f"{(wrong - right) / right * 100:+.1f} %" if right else "n/a"
                shown = f"{_num(wrong)} packets/s" if m.also_unscaled and fam.unit_kind == "rate" else _num(wrong)
                out.append(f"| {fam.metric} | {v.flows[flow_no].describe()} | {_num(right)} | {shown} | {change} |")
            untouched = sorted({v.flows[f].describe() for f in v.flows} - {v.flows[e[1]].describe() for e in effects})
            if untouched:
                out += ["", f"Unchanged on {', '.join(untouched)}."]
            out.append("")
        else:
            out += ["(It changes nothing on these runs.)", ""]
    return "\n".join(out).rstrip() + "\n"


def _chance(v: Variants, n: int = 1000) -> str:
    """How often a number computed some other way is 'explained' by chance: n numbers drawn
    log-uniformly over 0.01 .. 10000 (seeded), printed with 4 decimals and labelled kbps,
    against the wired run's variants."""
    import random

    from tracekit.analysis.explain.numbers import read_numbers
    from tracekit.analysis.explain.variants import explain_numbers

    rng = random.Random(1)
    text = "\n".join(f"rate {10 ** rng.uniform(-2, 4):.4f} kbps" for _ in range(n))
    found = [e for e in explain_numbers(v, read_numbers(text, limit=n)) if e.explained]
    by = {k: sum(1 for e in found if len(e.matches[0].mistakes) == k) for k in range(v.catalogue.max_mistakes + 1)}
    parts = ", ".join(f"{by[k]} by {k} mistake{'s' if k != 1 else ''}" for k in sorted(by) if by[k])
    return (f"A match is evidence, not proof: of {n} random numbers labelled kbps (log-uniform over 0.01 to "
            f"10000, seeded), {len(found)} were reproduced by some variant on the wired run by chance"
            + (f" ({parts})" if parts else "") + ". An explanation with few mistakes on a number your "
            "script printed as a metric is a strong lead; one with three is a weaker one.")


def _params(p: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in p.items())


def _anchor(title: str) -> str:
    keep = "".join(c for c in title.lower() if c.isalnum() or c in " -_")
    return keep.replace(" ", "-")


def generate(out: Path = DEFAULT_OUT) -> str:
    """Run the two scenarios with ns-2, measure, write the page; returns its text."""
    from tracekit.experiments.runner import run_scenario_traces
    from tracekit.experiments.scenarios import resolve_params

    runs = []
    with tempfile.TemporaryDirectory(prefix="tracekit-explain-docs-ns-") as tmp:
        for i, (scenario, params, seed) in enumerate((WIRED_RUN, WIRELESS_RUN)):
            traces = run_scenario_traces(scenario, resolve_params(scenario, params), seed, Path(tmp) / str(i))
            runs.append(measure(traces[0], scenario, params, seed))
    text = render(runs[0], runs[1])
    out.write_text(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tracekit.analysis.explain.docs", description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"where to write the page [{DEFAULT_OUT}]")
    args = ap.parse_args(argv)
    generate(args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _differs(right, wrong) -> bool:
    """Whether a mistake changes a value: beyond floating-point noise (a sum DuckDB adds up in
    another order on another run differs in its last bits, and the page must be the same)."""
    if right is None or wrong is None:
        return right is not wrong
    return not math.isclose(right, wrong, rel_tol=1e-9, abs_tol=1e-12)


if __name__ == "__main__":
    sys.exit(main())
