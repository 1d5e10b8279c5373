"""tracekit.analysis.compare: Welch's t-test against scipy, the verdict's wording on hand-made per-run
values, and `tracekit compare` on real ns-2 runs whose groups are recomputed here from
flow_stats rows in plain Python."""
from __future__ import annotations

import json
import math
import os
import random
import shutil
import subprocess
import sys

import pytest

from tracekit.db.catalogue import metric
from tracekit.core.errors import TracekitError
from tracekit.analysis.compare import NO_LOSS_NOTE, Filter, Group, filter_condition, judge
from tracekit.analysis.stats import betainc, t_two_sided_p, welch

stats = pytest.importorskip("scipy.stats")
NS = shutil.which("ns") or "/usr/bin/ns"
TP = metric("throughput_kbps")
DELAY = metric("mean_delay_ms")


def _samples(rng: random.Random):
    n_a, n_b = rng.randint(2, 12), rng.randint(2, 12)
    scale_a, scale_b = 10 ** rng.uniform(-3, 3), 10 ** rng.uniform(-3, 3)
    shift = rng.uniform(-3, 3) * max(scale_a, scale_b)
    a = [rng.gauss(0, scale_a) for _ in range(n_a)]
    b = [rng.gauss(shift, scale_b) for _ in range(n_b)]
    return a, b


def _msd(xs):
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)), len(xs)


def test_welch_matches_scipy_on_a_seeded_grid():
    rng = random.Random(20261123)
    for _ in range(2000):
        a, b = _samples(rng)
        got = welch(*_msd(a), *_msd(b))
        want = stats.ttest_ind(a, b, equal_var=False)
        assert got is not None
        assert math.isclose(got.t, want.statistic, rel_tol=1e-9, abs_tol=1e-12)
        assert abs(got.p - want.pvalue) < 1e-9, (a, b, got, want)
        if want.pvalue > 1e-300:
            assert math.isclose(got.p, want.pvalue, rel_tol=1e-7), (got.p, want.pvalue)


@pytest.mark.parametrize("df", [0.5, 1, 1.7, 2, 3, 5.5, 10, 29.3, 100, 1e4, 1e6])
def test_student_t_p_matches_scipy(df):
    for t in (0.0, 1e-6, 0.1, 0.5, 1, 1.96, 2.5, 4, 10, 50, 1e3):
        assert abs(t_two_sided_p(t, df) - 2 * stats.t.sf(t, df)) < 1e-9, (t, df)


def test_student_t_p_exact_forms():
    """df = 1 is Cauchy, df = 2 has a closed form: both to 1e-15 (closer than scipy's t.sf
    near t = 0, which loses digits there)."""
    for t in (1e-6, 0.3, 1.0, 7.0, 300.0):
        assert abs(t_two_sided_p(t, 1) - (1 - 2 / math.pi * math.atan(t))) < 1e-15
        assert abs(t_two_sided_p(t, 2) - (1 - t / math.sqrt(2 + t * t))) < 1e-15


def test_betainc_matches_scipy():
    from scipy import special

    rng = random.Random(7)
    for _ in range(500):
        a, b, x = 10 ** rng.uniform(-1, 3), 10 ** rng.uniform(-1, 3), rng.random()
        assert abs(betainc(a, b, x) - special.betainc(a, b, x)) < 1e-10, (a, b, x)


def test_welch_undefined_cases():
    assert welch(1.0, 0.5, 1, 2.0, 0.5, 5) is None          # n = 1
    assert welch(1.0, 0.0, 3, 2.0, 0.0, 3) is None          # no variance in either
    b = [1.7, 2.0, 2.3, 2.1]
    one_flat = welch(1.0, 0.0, 3, *_msd(b))                 # one group constant: still a test
    want = stats.ttest_ind([1.0, 1.0, 1.0], b, equal_var=False)
    assert abs(one_flat.p - want.pvalue) < 1e-9


# ---------------------------------------------------------------------------------------
# the wording


def test_significant_difference_says_by_how_much_with_p_and_n():
    a, b = [100.0, 102.0, 101.0, 99.0, 103.0], [90.0, 91.5, 89.0, 92.0, 90.5]
    v = judge(TP, [Group("Reno", tuple(a)), Group("Vegas", tuple(b))], "variant")
    p = stats.ttest_ind(a, b, equal_var=False).pvalue
    assert v.kind == "difference" and v.best == ("Reno",) and v.runner_up == "Vegas"
    assert math.isclose(v.difference, 101.0 - 90.6)
    assert abs(v.p_value - p) < 1e-9
    assert v.text == "Reno is higher than Vegas by 10.4 kbit/s (Welch's t-test p < 0.001, n = 5 each)"


def test_lower_is_better_ranks_the_smaller_mean_first():
    v = judge(DELAY, [Group("DropTail", (50.0, 52.0, 51.0)), Group("RED", (40.0, 43.0, 41.0))], "queue")
    p = stats.ttest_ind([50.0, 52.0, 51.0], [40.0, 43.0, 41.0], equal_var=False).pvalue
    assert v.best == ("RED",)
    assert v.text == f"RED is lower than DropTail by 9.67 ms (Welch's t-test p = {p:.3f}, n = 3 each)"


def test_difference_inside_the_noise_is_no_significant_difference():
    a, b = (100.0, 140.0, 95.0, 130.0), (110.0, 90.0, 125.0)
    v = judge(TP, [Group("Reno", a), Group("Newreno", b)], "variant")
    p = stats.ttest_ind(a, b, equal_var=False).pvalue
    assert p > 0.05 and v.kind == "no_difference"
    assert v.text == (f"no significant difference between Reno and Newreno (Reno 116.2, Newreno 108.3 kbit/s; "
                      f"Welch's t-test p = {p:.3f}, n = 4 and 3)")


def test_identical_series():
    same = (2448.5, 2453.7, 2443.9)
    v = judge(TP, [Group("Tahoe", same, (1, 2, 3)), Group("Reno", same, (1, 2, 3)),
                   Group("Newreno", same, (1, 2, 3))], "variant")
    assert v.kind == "identical" and v.difference == 0.0
    assert v.text == "identical: every run gave the same value, seed by seed (Tahoe, Reno and Newreno)"
    flat = judge(TP, [Group("Tahoe", (5.0, 5.0)), Group("Reno", (5.0, 5.0, 5.0))], "variant")
    assert flat.kind == "identical"
    assert flat.text == "identical: every run gave the same value (Tahoe and Reno: 5 kbit/s)"
    # same values but under different seeds are not "identical" (Welch then finds nothing)
    shuffled = judge(TP, [Group("Tahoe", same, (1, 2, 3)), Group("Reno", same[::-1], (1, 2, 3))], "variant")
    assert shuffled.kind == "no_difference"


def test_identical_leaders_then_a_test_against_the_next():
    same = (10.0, 12.0, 11.0)
    v = judge(TP, [Group("Tahoe", same, (1, 2, 3)), Group("Reno", same, (1, 2, 3)),
                   Group("Vegas", (5.0, 6.0, 5.5), (1, 2, 3))], "variant")
    p = stats.ttest_ind(same, (5.0, 6.0, 5.5), equal_var=False).pvalue
    assert v.best == ("Tahoe", "Reno") and v.runner_up == "Vegas"
    assert v.text == ("identical: Tahoe and Reno (every run gave the same value, seed by seed); they are "
                      f"higher than Vegas by 5.5 kbit/s (Welch's t-test p = {p:.3f}, n = 3 each)")


def test_one_run_per_group_is_no_test():
    v = judge(TP, [Group("Reno", (10.0,)), Group("Vegas", (8.0,))], "variant")
    assert v.kind == "no_test" and v.p_value is None
    assert v.text == "n = 1 per group: no test possible (Reno 10, Vegas 8 kbit/s)"
    v = judge(TP, [Group("Reno", (10.0, 11.0)), Group("Vegas", (8.0,))], "variant")
    assert v.text == "n = 2 and 1: fewer than 2 runs in a group: no test possible (Reno 10.5, Vegas 8 kbit/s)"


def test_constant_but_different_groups_need_no_test():
    v = judge(TP, [Group("A", (3.0, 3.0)), Group("B", (2.0, 2.0))], "x")
    assert v.kind == "difference" and v.test is None
    assert v.text.startswith("A is higher than B by 1 kbit/s (no run-to-run variation in either")


def test_one_group_and_no_data():
    assert judge(TP, [Group("Reno", (1.0, 2.0))]).kind == "one_group"
    assert judge(TP, []).kind == "no_data"


def test_filter_parsing():
    assert Filter.parse("name!=CBR") == Filter("name", ("CBR",), True)
    assert Filter.parse("cbr_rate_mbps=2,5") == Filter("cbr_rate_mbps", ("2", "5"), False)
    assert Filter.parse("name!=CBR").is_flow and not Filter.parse("variant=Reno").is_flow
    with pytest.raises(TracekitError):
        Filter.parse("variant")


def test_filter_condition_selects_by_hand():
    """filter_condition's SQL over three hand-made (flow, run) rows: numbers match numerically,
    several values are alternatives, `!=` keeps a run without the label."""
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE f AS SELECT * FROM (VALUES (1, 'tcp', 1), (2, 'cbr', 2), (3, 'tcp', 3)) t(fid, ptype, k)")
    con.execute("CREATE TABLE c AS SELECT * FROM (VALUES (1, 1, MAP {'rate': '2.0', 'variant': 'Reno'}), "
                "(2, 2, MAP {'rate': '5'}), (3, 3, MAP {'variant': 'Vegas'})) t(k, seed, labels)")

    def fids(text: str) -> list[int]:
        sql = f"SELECT f.fid FROM f JOIN c USING (k) WHERE {filter_condition(Filter.parse(text))} ORDER BY 1"
        return [r[0] for r in con.execute(sql).fetchall()]

    assert fids("rate=2") == [1]                 # '2.0' is 2
    assert fids("rate=2,5") == [1, 2]
    assert fids("rate!=2") == [2, 3]             # run 3 has no rate: kept by !=
    assert fids("variant=Reno") == [1]
    assert fids("seed=3") == [3]
    assert fids("ptype=tcp") == [1, 3] and fids("fid!=1,3") == [2]
    assert fids("variant=it's") == []            # a quote in a value is a value, not SQL


# ---------------------------------------------------------------------------------------
# on real ns-2 runs


def tk(data, *args, check=True):
    p = subprocess.run([sys.executable, "-m", "tracekit", *args, "--data", str(data)], capture_output=True, text=True)
    if check:
        assert p.returncode == 0, p.stderr
    return p


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """cbr-variants at CBR 2 Mb/s (nothing is dropped), 3 s: Tahoe and Reno with seeds 1-2,
    Vegas with seeds 1-3."""
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    d = tmp_path_factory.mktemp("compare") / "store"
    for variant, seeds in (("Tahoe", (1, 2)), ("Reno", (1, 2)), ("Vegas", (1, 2, 3))):
        for seed in seeds:
            tk(d, "run", "cbr-variants", "--set", f"variant={variant}", "--set", "cbr_rate_mbps=2",
               "--set", "duration=3", "--seed", str(seed))
    return d


def _flow_rows(data):
    """flow_stats with the run's variant and seed, as plain dicts."""
    out = json.loads(tk(data, "sql", "SELECT f.*, r.labels['variant'] AS variant, r.seed FROM flow_stats f "
                                     "JOIN runs r USING (run_id)", "--format", "json").stdout)
    return out


def test_no_loss_note_on_loss_based_variants_that_drop_nothing(store):
    rows = _flow_rows(store)
    tcp = [r for r in rows if r["ptype"] == "tcp"]
    assert {r["variant"] for r in tcp} == {"Tahoe", "Reno", "Vegas"}
    assert all(r["dropped_pkts"] == 0 for r in tcp if r["variant"] in ("Tahoe", "Reno"))
    out = json.loads(tk(store, "compare", "cbr-variants", "--by", "variant", "--where", "variant=Tahoe,Reno",
                        "--format", "json").stdout)
    (v,) = out["verdicts"]
    assert v["note"] == NO_LOSS_NOTE
    # Tahoe and Reno with no loss are the same flow, packet for packet
    by = {(r["variant"], r["seed"]): r["throughput_kbps"] for r in tcp}
    assert by[("Tahoe", 1)] == by[("Reno", 1)] and by[("Tahoe", 2)] == by[("Reno", 2)]
    assert v["kind"] == "identical" and v["verdict"].startswith("identical: every run gave the same value")


def test_compare_groups_are_the_flow_stats_runs(store):
    rows = _flow_rows(store)
    out = json.loads(tk(store, "compare", "cbr-variants", "--by", "variant", "-m", "throughput_kbps",
                        "-m", "mean_delay_ms", "--format", "json").stdout)
    assert out["flows"].startswith("the TCP flows") and out["runs"] == 7
    for v in out["verdicts"]:
        col = v["metric"]
        groups = {g["level"]: g for g in v["groups"]}
        assert set(groups) == {"Tahoe", "Reno", "Vegas"}
        for variant, g in groups.items():
            vals = [r[col] for r in sorted(rows, key=lambda r: r["seed"]) if r["variant"] == variant and r["ptype"] == "tcp"]
            n = len(vals)
            mean = sum(vals) / n
            sd = math.sqrt(sum((x - mean) ** 2 for x in vals) / (n - 1))
            assert g["n_runs"] == n and math.isclose(g["mean"], mean, rel_tol=1e-12)
            assert math.isclose(g["ci95_half_width"], stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n), rel_tol=1e-7)
        vegas = [r[col] for r in rows if r["variant"] == "Vegas" and r["ptype"] == "tcp"]
        reno = [r[col] for r in rows if r["variant"] == "Reno" and r["ptype"] == "tcp"]
        # Tahoe and Reno are identical (no loss): Vegas against them, by each metric's
        # direction (written here, not read from the catalogue)
        higher_is_better = {"throughput_kbps": True, "mean_delay_ms": False}[col]
        vegas_best = (sum(vegas) / len(vegas) > sum(reno) / len(reno)) == higher_is_better
        if vegas_best:       # of the two identical groups, the first in the factor's order
            assert v["best"] == ["Vegas"] and v["runner_up"] == "Reno", v
        else:
            assert v["best"] == ["Reno", "Tahoe"] and v["runner_up"] == "Vegas", v
        p = stats.ttest_ind(vegas, reno, equal_var=False).pvalue
        assert abs(v["p_value"] - p) < 1e-9
        assert v["note"] == NO_LOSS_NOTE   # Tahoe and Reno lost nothing; Vegas is not loss-based


def test_compare_table_and_one_seed(store):
    out = tk(store, "compare", "cbr-variants", "--by", "variant", "--where", "seed=1").stdout
    assert "flows: the TCP flows" in out
    # seed 1 only: Tahoe and Reno the same (no loss); Vegas first, or them tied first
    tput = {r["variant"]: r["throughput_kbps"] for r in _flow_rows(store) if r["seed"] == 1 and r["ptype"] == "tcp"}
    assert tput["Tahoe"] == tput["Reno"] != tput["Vegas"]
    if tput["Vegas"] > tput["Reno"]:
        assert "verdict: n = 1 per group: no test possible" in out, out
    else:
        assert "verdict: identical: Reno and Tahoe (every run gave the same value, seed by seed); " \
               "n = 1 per group: no test possible" in out, out
    out = tk(store, "compare", "cbr-variants", "--by", "variant", "--where", "seed=1",
             "--where", "variant!=Tahoe").stdout
    assert "verdict: n = 1 per group: no test possible" in out
    csv_out = tk(store, "compare", "cbr-variants", "--by", "name", "--where", "name!=CBR", "--format", "csv").stdout
    lines = csv_out.splitlines()
    assert lines[0].startswith("name,metric,n_runs,mean")
    assert sorted(line.split(",")[0] for line in lines[1:]) == ["Reno", "Tahoe", "Vegas"]


def test_compare_errors_are_one_line(store):
    for args, msg in ((["nope", "--by", "variant"], "no runs with a seed of scenario 'nope' in the store"),
                      (["cbr-variants", "--by", "queue"], "no selected run has the label 'queue'"),
                      (["cbr-variants", "--by", "variant", "-m", "bogus"], "unknown metric 'bogus'"),
                      (["cbr-variants", "--by", "name", "-m", "jain_index"], "grouping by name"),
                      (["cbr-variants", "--by", "variant", "--where", "variant=Cubic"], "match the filters")):
        p = tk(store, "compare", *args, check=False)
        assert p.returncode == 1, args
        assert p.stderr.count("\n") == 1 and msg in p.stderr, p.stderr


def test_compare_needs_neither_scipy_nor_a_ui():
    code = ("import sys, tracekit.analysis.compare\n"
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('scipy', 'typer', 'click', 'streamlit', 'plotly'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == ""


def test_identical_runners_up_are_named_together():
    same = (5.0, 6.0, 5.5)
    v = judge(TP, [Group("Vegas", (10.0, 12.0, 11.0), (1, 2, 3)), Group("Tahoe", same, (1, 2, 3)),
                   Group("Reno", same, (1, 2, 3))], "variant")
    p = stats.ttest_ind((10.0, 12.0, 11.0), same, equal_var=False).pvalue
    assert v.runner_up == "Tahoe"
    assert v.text == f"Vegas is higher than Tahoe = Reno by 5.5 kbit/s (Welch's t-test p = {p:.3f}, n = 3 each)"


def test_metrics_by_prints_the_same_verdicts(store):
    out = tk(store, "metrics", "--where", "scenario=cbr-variants", "--by", "variant").stdout
    want = json.loads(tk(store, "compare", "cbr-variants", "--by", "variant", "--format", "json").stdout)
    (v,) = want["verdicts"]
    assert f"verdict: {v['verdict']}" in out
    assert "Jain's fairness index" in out and "Mean delay" in out


# ---------------------------------------------------------------------------------------
# an experiment's declared comparison: exactly its simulations, its factor and metrics


TK = [sys.executable, "-m", "tracekit"]


@pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed")
def test_compare_experiment_uses_exactly_its_simulations(tmp_path):
    from tracekit.db.query import connect
    from tracekit.experiments import EXPERIMENTS
    from tracekit.analysis.compare import experiment_comparison
    from tracekit.experiments.sweep import plan_experiment

    data = tmp_path / "store"
    # manet-routing at seeds 1-2, and a manet run with other parameters that must not count
    r = subprocess.run([*TK, "sweep", "--experiment", "manet-routing", "--seeds", "1-2", "--data", str(data)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "what experiment manet-routing compares" in r.stdout and "verdict:" in r.stdout
    r2 = subprocess.run([*TK, "run", "manet", "--set", "routing=AODV", "--set", "nodes=10", "--seed", "3",
                         "--data", str(data)], capture_output=True, text=True, timeout=600)
    assert r2.returncode == 0, r2.stderr
    con = connect(data)
    sims = {s.sim_id for s in plan_experiment("manet-routing", [1, 2])}
    exp = EXPERIMENTS["manet-routing"].compare
    c = experiment_comparison(con, "manet-routing", [1, 2])
    assert c.factor == exp.by and [v.metric.name for v in c.verdicts] == list(exp.metrics)
    # the groups, recomputed from wireless_run_stats of the runs with those sim_ids
    rows = con.execute("SELECT r.labels['routing'] AS routing, r.labels['sim_id'] AS sim, w.pdr "
                       "FROM wireless_run_stats w JOIN runs r USING (run_id)").fetchall()
    want = {}
    for routing, sim, pdr in rows:
        if sim in sims:
            want.setdefault(routing, []).append(pdr)
    assert sum(len(v) for v in want.values()) == 6 and len(rows) == 7
    (v_pdr,) = [v for v in c.verdicts if v.metric.name == "run_pdr"]
    got = {g.level: g for g in v_pdr.groups}
    assert set(got) == set(want)
    for level, values in want.items():
        assert got[level].n == 2
        assert got[level].mean == pytest.approx(sum(values) / len(values), rel=1e-12)
    # the CLI says the same, and refuses mixing --experiment with its own factor
    r3 = subprocess.run([*TK, "compare", "--experiment", "manet-routing", "--data", str(data), "--format", "json"],
                        capture_output=True, text=True, timeout=120)
    assert r3.returncode == 0, r3.stderr
    out = json.loads(r3.stdout)
    assert [v["metric"] for v in out["verdicts"]] == list(exp.metrics)
    assert out["runs"] == 6
    r4 = subprocess.run([*TK, "compare", "cbr-variants", "--experiment", "manet-routing", "--data", str(data)],
                        capture_output=True, text=True, timeout=120)
    assert r4.returncode != 0 and len(r4.stderr.strip().splitlines()) == 1
