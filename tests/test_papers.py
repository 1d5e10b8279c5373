"""The bundled paper files (tracekit/experiments/papers/): every experiment of the registry
is covered by a paper (values, claims, or the reason it gives none) and has a quick
version, and every condition a row or claim names is one the experiment runs, so none can
be unevaluable by a typo."""
from __future__ import annotations

from tracekit.analysis import reproduce as rp
from tracekit.experiments import EXPERIMENTS


def _in_values(value: str, values) -> bool:
    return any(rp._same_label(rp.format_value(v) if not isinstance(v, str) else v, value) for v in values)


def test_every_experiment_has_a_paper_and_a_quick_version():
    papers = rp.load_papers()
    for name, exp in EXPERIMENTS.items():
        mine = rp.papers_of(name, papers)
        assert mine, f"{name}: no paper file names it in [experiments]"
        assert exp.quick is not None, f"{name}: no [experiments.quick]"
        assert exp.quick.n_runs() < exp.n_runs() or len(exp.quick.seeds) < len(exp.seeds), name
        n = sum(1 for p in mine for t in p.tables if t.experiment == name) + \
            sum(1 for p in mine for c in p.claims if c.experiment == name)
        if n == 0:   # then a paper must say why it gives nothing
            assert any(len(p.experiments[name]) > 40 for p in mine), f"{name}: no values, no claims, no reason"


def test_bundled_conditions_name_values_the_experiment_runs():
    """A row or claim whose condition names a value the experiment never runs could never
    be evaluated: every grid value named must be in the experiment's grid, every fixed
    parameter named must have the experiment's value, and the compared levels must exist."""
    for paper in rp.load_papers().values():
        items = [(f"{paper.id}/{t.id}", t.experiment, r.condition) for t in paper.tables for r in t.rows]
        items += [(f"{paper.id}/{c.id}", c.experiment, c.condition) for c in paper.claims]
        for where, name, cond in items:
            exp = EXPERIMENTS[name]
            for k, vals in cond.items():
                if k in exp.grid:
                    for v in vals:
                        assert _in_values(v, exp.grid[k]), f"{where}: {k}={v} is not in {name}'s grid"
                elif k in exp.fixed:
                    assert all(_in_values(v, [exp.fixed[k]]) for v in vals), f"{where}: {k} is fixed in {name}"
        for c in paper.claims:
            exp = EXPERIMENTS[c.experiment]
            if c.by and c.by in exp.grid:
                for lv in [c.level, c.a, c.b, *c.among]:
                    if lv is not None:
                        assert _in_values(lv, exp.grid[c.by]), f"{paper.id}/{c.id}: {c.by}={lv} is not in the grid"
            if c.kind == "trend":
                assert c.along in exp.grid, f"{paper.id}/{c.id}: {c.along} does not vary in {c.experiment}"
