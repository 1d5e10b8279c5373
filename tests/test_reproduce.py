"""tracekit reproduce: the paper files' format, the bound expressions, and the claim and
row evaluation on a store built from real ns-2 runs, with every expectation recomputed
here in plain Python (per-seed means, scipy's t quantile, Welch test and least-squares
slope) from flow_stats rows."""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tracekit.analysis import reproduce as rp
from tracekit.analysis.stats import t_975
from tracekit.core.errors import TracekitError
from tracekit.experiments import EXPERIMENTS
from tracekit.experiments.scenarios import ScenarioFileError, load_scenario_file, TCL_DIR
from tracekit.experiments.sweep import plan_experiment

stats = pytest.importorskip("scipy.stats")
NS = shutil.which("ns") or "/usr/bin/ns"

# a paper about varying-error-rate (one TCP flow over 1 Mb/s links, loss on the last link)
PAPER = """
id = "t1"
title = "A test paper"
citation = "Tests 1(1)"
source = "none"
notes = ["written for the tests"]

[experiments]
"varying-error-rate" = "Fig. 9: throughput vs error rate"

[[tables]]
id = "fig9"
experiment = "varying-error-rate"
cite = "Fig. 9"
title = "Throughput"
metric = "throughput_kbps"
condition = { variant = "Reno" }
bound = { max = "bandwidth_mbps * 1000", why = "the link's capacity" }
[[tables.rows]]
id = "e0"
condition = { error_rate = 0.0 }
paper = 900
[[tables.rows]]
id = "e5"
condition = { error_rate = 0.05 }
paper = 2000
[[tables.rows]]
condition = { error_rate = 0.1 }
paper = [100, 200]
bound = { min = "paper * 0 + 150", max = "row('fig9/e0') * 2", why = "made up" }

[[claims]]
id = "falls"
experiment = "varying-error-rate"
cite = "Sec. 4"
text = "Throughput falls as the error rate rises"
kind = "trend"
metric = "throughput_kbps"
along = "error_rate"
direction = "decreasing"

[[claims]]
id = "rises"
experiment = "varying-error-rate"
cite = "Sec. 4"
text = "5 % loss gives more throughput than none"
kind = "higher"
metric = "throughput_kbps"
by = "error_rate"
a = 0.05
b = 0.0

[[claims]]
id = "sack-best"
experiment = "varying-error-rate"
cite = "Sec. 5"
text = "Without loss, Sack1 has the highest throughput"
kind = "best"
metric = "throughput_kbps"
by = "variant"
level = "Sack1"
condition = { error_rate = 0.0 }

[[claims]]
id = "fair"
experiment = "varying-error-rate"
cite = "Sec. 5"
text = "Reno is the fairest"
kind = "best"
metric = "jain_index"
by = "variant"
level = "Reno"

[[claims]]
id = "same"
experiment = "varying-error-rate"
cite = "Sec. 5"
text = "Reno and Sack1 are similar at 5 % loss"
kind = "similar"
metric = "throughput_kbps"
by = "variant"
condition = { error_rate = 0.05 }
tolerance_pct = 30

[[claims]]
id = "gain"
experiment = "varying-error-rate"
cite = "Sec. 5"
text = "Sack1 gains 5-50 % over Reno without loss"
kind = "gain"
metric = "throughput_kbps"
by = "variant"
a = "Sack1"
b = "Reno"
range_pct = [5, 50]
condition = { error_rate = 0.0 }

[[claims]]
id = "late"
experiment = "varying-error-rate"
cite = "Sec. 6"
text = "At 10 % loss Reno beats Sack1"
kind = "higher"
metric = "throughput_kbps"
by = "variant"
a = "Reno"
b = "Sack1"
condition = { error_rate = 0.1 }

[[claims]]
id = "cwnd"
experiment = "varying-error-rate"
cite = "Fig. 3"
text = "The window saw-tooth"
note = "Fig. 3 has no axis labels"
kind = "untestable"
reason = "a figure of cwnd shapes"

[[claims]]
id = "impl"
experiment = "varying-error-rate"
cite = "Table 1"
text = "The 5 % loss throughput of Fig. 9 exceeds the no-loss one"
kind = "higher"
metric = "throughput_kbps"
by = "error_rate"
a = 0.05
b = 0.0
rests_on = ["fig9/e5"]
"""


def _write(tmp: Path, text: str, name: str = "t1.toml") -> Path:
    d = tmp / "papers"
    d.mkdir(exist_ok=True)
    (d / name).write_text(text)
    return d


# ---------------------------------------------------------------- format and expressions


@pytest.mark.parametrize("edit, fragment", [
    (lambda t: t.replace('title = "Throughput"', 'title = "Throughput"\ncolour = 1'), "unknown key 'colour'"),
    (lambda t: t.replace('metric = "throughput_kbps"', 'metric = "thruput"', 1), "'thruput' is not a metric"),
    (lambda t: t.replace('"varying-error-rate" = "Fig', '"varying-errors" = "Fig'), "unknown experiment 'varying-errors'"),
    (lambda t: t.replace('kind = "trend"', 'kind = "bigger"'), "kind must be one of"),
    (lambda t: t.replace('along = "error_rate"', 'along = "loss"'), "'loss' is neither a parameter"),
    (lambda t: t.replace('"bandwidth_mbps * 1000"', '"__import__(\'os\').system(\'x\')"'), "is not allowed"),
    (lambda t: t.replace('rests_on = ["fig9/e5"]', 'rests_on = ["fig9/e7"]'), "rests_on 'fig9/e7'"),
    (lambda t: t.replace("paper = [100, 200]", "paper = [200, 100]"), "low <= high"),
    (lambda t: t.replace('reason = "a figure of cwnd shapes"', ''), "needs a reason"),
    (lambda t: t.replace('id = "late"', 'id = "gain"'), "claim id 'gain' is used twice"),
])
def test_bad_paper_file_refused_with_its_name(tmp_path, edit, fragment):
    d = _write(tmp_path, edit(PAPER))
    with pytest.raises(rp.PaperFileError) as e:
        rp.load_papers(d)
    msg = str(e.value)
    assert msg.startswith("t1.toml: ") and "\n" not in msg and fragment in msg, msg


def test_paper_id_is_the_file_name(tmp_path):
    with pytest.raises(rp.PaperFileError, match="must be the file name"):
        rp.load_papers(_write(tmp_path, PAPER, "t2.toml"))


def test_expressions():
    names = {"a": 2.0, "q": "RED", "paper": 10.0}
    assert rp.eval_expr("a * 3 + 1", names) == 7.0
    assert rp.eval_expr("2 ** 3 / 4 - -1", names) == 3.0
    assert rp.eval_expr("10 if q == 'RED' else 1", names) == 10
    assert rp.eval_expr("min(a, 1) + max(a, 5) + abs(-a)", names) == 8.0
    assert rp.eval_expr("paper < a or not (a > 1)", names) is False
    assert rp.eval_expr("1 < a < 3", names) is True
    assert rp.eval_expr("row('t/r') * 2", names, lambda ref: {"t/r": 21.5}[ref]) == 43.0
    with pytest.raises(TracekitError, match="unknown name 'b'"):
        rp.eval_expr("b + 1", names)
    for bad in ("a.real", "[a]", "(lambda: 1)()", "open('x')", "a[0]"):
        with pytest.raises(rp.PaperFileError):
            rp.eval_expr(bad, names)


@pytest.mark.parametrize("df", [1, 2, 3, 4, 9, 29, 200])
def test_t_quantile_matches_scipy(df):
    assert abs(t_975(df) - stats.t.ppf(0.975, df)) < 1e-9


def test_quick_version_declared_and_planned(tmp_path):
    text, skip = [], False      # the declaration without its own quick versions
    for line in (TCL_DIR / "varying-parameters.toml").read_text().splitlines(keepends=True):
        if line.startswith("["):
            skip = line.strip() == "[experiments.quick]"
        if not skip:
            text.append(line)
    text = "".join(text)
    block = ('\n[experiments.quick]\nseeds = [1, 2]\ndescription = "two seeds, two windows"\n'
             'grid = { window = [5, 100] }\nfixed = { duration = 2.0 }\n')
    i = text.index('[experiments.grid]\nvariant = ["Tahoe", "Reno", "Newreno", "Sack1"]\nwindow')
    shutil.copy(TCL_DIR / "varying-parameters.tcl", tmp_path)
    path = tmp_path / "varying-parameters.toml"
    path.write_text(text[:i] + block.lstrip("\n") + text[i:])
    _, exps, _ = load_scenario_file(path)
    q = next(e for e in exps if e.name == "varying-window").quick
    assert q is not None and q.seeds == [1, 2] and q.grid["window"] == [5, 100]
    assert q.grid["variant"] == ["Tahoe", "Reno", "Newreno", "Sack1"] and q.fixed == {"duration": 2.0}
    assert q.n_runs() == 4 * 2 * 2
    for bad, frag in ((block.replace("window = [5, 100]", "delay_ms = [1]"), "not in the experiment's grid"),
                      (block.replace("duration = 2.0", "window = 3"), "reduce it in quick.grid"),
                      (block.replace("seeds = [1, 2]", "seeds = [0]"), "seeds")):
        path.write_text(text[:i] + bad.lstrip("\n") + text[i:])
        with pytest.raises(ScenarioFileError, match=frag):
            load_scenario_file(path)


# ---------------------------------------------------------------- on real ns-2 runs


def _tk(*args, check=True):
    p = subprocess.run([sys.executable, "-m", "tracekit", *args], capture_output=True, text=True, timeout=900)
    if check:
        assert p.returncode == 0, p.stdout + p.stderr
    return p


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """Reno and Sack1 at error rates 0 and 0.05 (and no runs at 0.1), seeds 1-3: the
    scenario's defaults otherwise, i.e. exactly 12 of varying-error-rate's simulations."""
    if not Path(NS).exists():
        pytest.skip("ns-2 not installed")
    d = tmp_path_factory.mktemp("reproduce") / "store"
    _tk("sweep", "varying-parameters", "--grid", "variant=Reno,Sack1", "--grid", "error_rate=0,0.05",
        "--seeds", "1-3", "-j", "2", "--no-keep-traces", "--data", str(d))
    return d


@pytest.fixture(scope="module")
def plain(store):
    """(variant, error_rate) -> {seed: throughput_kbps} from flow_stats rows, in Python."""
    from tracekit.db.query import connect

    con = connect(store)
    rows = con.execute("SELECT r.labels, f.throughput_kbps FROM flow_stats f JOIN runs r USING (run_id) "
                       "WHERE f.ptype = 'tcp'").fetchall()
    out: dict[tuple[str, float], dict[int, float]] = {}
    for labels, tp in rows:
        out.setdefault((labels["variant"], float(labels["error_rate"])), {})[int(labels["seed"])] = tp
    assert sorted(out) == [("Reno", 0.0), ("Reno", 0.05), ("Sack1", 0.0), ("Sack1", 0.05)]
    assert all(sorted(v) == [1, 2, 3] for v in out.values())
    return out


@pytest.fixture(scope="module")
def result(store, tmp_path_factory):
    from tracekit.db.query import connect

    papers = rp.load_papers(_write(tmp_path_factory.mktemp("p"), PAPER))
    return rp.evaluate(connect(store), "varying-error-rate", papers=papers)


def _claim(result, cid):
    return next(c for c in result.claims if c.claim.id == cid)


def _mean_ci(xs):
    n = len(xs)
    m = sum(xs) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    return m, sd, stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)


def test_rows_beside_the_paper(result, plain):
    assert result.n_runs == 12 and result.n_planned == EXPERIMENTS["varying-error-rate"].n_runs()
    r0, r5, r10 = result.rows
    m, _, ci = _mean_ci(list(plain[("Reno", 0.0)].values()))
    assert r0.n_runs == 3 and math.isclose(r0.stats.mean, m, rel_tol=1e-9)
    assert math.isclose(r0.stats.ci95, ci, rel_tol=1e-6)
    assert math.isclose(r0.ratio, m / 900, rel_tol=1e-9) and r0.status is None
    assert r0.paper_in_ci == (m - ci <= 900 <= m + ci)
    # 2000 kbit/s over 1 Mb/s links (the scenario's bandwidth_mbps default): impossible
    assert r5.status == "paper implausible" and "<= 1,000.0 kbit/s" in r5.bound_text
    assert r0.bound_text == "bound <= 1,000.0 kbit/s: the link's capacity"     # the table's bound
    # the row's own bound: [150, 2 x 900]; the paper's [100, 200] is not wholly outside it
    assert r10.status is None and r10.bound_text == "bound >= 150.0 kbit/s and <= 1,800.0 kbit/s: made up"
    assert r10.stats is None and r10.n_runs == 0 and "no runs" in r10.note
    d = r10.as_dict()
    assert d["paper"] == [100.0, 200.0] and d["ours"] is None and d["ratio"] is None


def test_claim_that_holds_and_one_that_does_not(result, plain):
    # trend: least-squares slope of the 12 per-run values on error_rate
    xs, ys = [], []
    for (_v, e), by_seed in plain.items():
        for tp in by_seed.values():
            xs.append(e)
            ys.append(tp)
    lr = stats.linregress(xs, ys)
    falls = _claim(result, "falls")
    want = "reproduced" if (lr.pvalue < 0.05 and lr.slope < 0) else "not reproduced"
    assert falls.status == want == "reproduced", falls.evidence
    assert f"{lr.slope:+.4g}" in falls.evidence

    # higher: the per-seed means over both variants, 0.05 against 0
    def per_seed(e):
        return [sum(plain[(v, e)][s] for v in ("Reno", "Sack1")) / 2 for s in (1, 2, 3)]
    hi, lo = per_seed(0.05), per_seed(0.0)
    t = stats.ttest_ind(hi, lo, equal_var=False)
    rises = _claim(result, "rises")
    assert rises.status == "not reproduced"
    if t.pvalue < 0.05 and sum(hi) < sum(lo):
        assert "the opposite" in rises.evidence
    else:
        assert "no significant difference" in rises.evidence
    m, _, ci = _mean_ci(lo)
    assert f"0.0 {rp.fmt_value(m)} ± {rp.fmt_value(ci)} kbit/s" in rises.evidence


def test_best_similar_and_gain(result, plain):
    sack, reno = list(plain[("Sack1", 0.0)].values()), list(plain[("Reno", 0.0)].values())
    t = stats.ttest_ind(sack, reno, equal_var=False)
    want = "reproduced" if (sum(sack) > sum(reno) and t.pvalue < 0.05) else "not reproduced"
    assert _claim(result, "sack-best").status == want

    a, b = (sum(plain[(v, 0.05)].values()) / 3 for v in ("Reno", "Sack1"))
    spread = abs(a - b) / max(a, b) * 100
    same = _claim(result, "same")
    assert same.status == ("reproduced" if spread <= 30 else "not reproduced")
    assert f"{spread:.2f} %" in same.evidence

    ms, ss, _ = _mean_ci(sack)
    mr, sr, _ = _mean_ci(reno)
    r = ms / mr
    se = r * math.sqrt(ss ** 2 / 3 / ms ** 2 + sr ** 2 / 3 / mr ** 2)
    gain, half = (r - 1) * 100, stats.t.ppf(0.975, 2) * se * 100
    ok = gain + half >= 5 and gain - half <= 50 and gain - half > 0
    g = _claim(result, "gain")
    assert g.status == ("reproduced" if ok else "not reproduced"), g.evidence
    assert f"{gain:+.1f} % (95 % CI {gain - half:+.1f} to {gain + half:+.1f} %)" in g.evidence


def test_untestable_and_implausible_claims(result):
    fair = _claim(result, "fair")
    assert fair.status == "untestable" and "fairness undefined" in fair.evidence
    late = _claim(result, "late")
    assert late.status == "untestable" and "no runs with variant=Reno" in late.evidence
    assert _claim(result, "cwnd").status == "untestable" and _claim(result, "cwnd").evidence == "a figure of cwnd shapes"
    impl = _claim(result, "impl")
    assert impl.status == "paper implausible" and "fig9/e5" in impl.evidence
    counts = result.counts()
    assert sum(counts.values()) == len(result.claims) == 9
    assert counts["reproduced"] >= 1 and counts["not reproduced"] >= 1


def test_cli_json_shape_and_list(store, tmp_path):
    d = _write(tmp_path, PAPER)
    out = json.loads(_tk("reproduce", "varying-error-rate", "--no-run", "--papers", str(d), "--data", str(store),
                         "--format", "json").stdout)
    assert {"experiment", "paper", "quick", "rows", "claims", "notes"} <= set(out)
    assert out["experiment"] == "varying-error-rate" and out["paper"] == "t1" and out["quick"] is False
    for row in out["rows"]:
        assert {"table", "condition", "metric", "paper", "ours", "ci95", "n_runs"} <= set(row)
    assert [r["n_runs"] for r in out["rows"]] == [3, 3, 0]
    assert all({"text", "status", "evidence"} <= set(c) for c in out["claims"])
    assert [c["note"] for c in out["claims"] if c["note"]] == ["Fig. 3 has no axis labels"]
    assert "paper t1: written for the tests" in out["notes"]
    assert {c["status"] for c in out["claims"]} <= set(rp.STATUSES)
    assert all(isinstance(n, str) for n in out["notes"])
    text = _tk("reproduce", "varying-error-rate", "--no-run", "--papers", str(d), "--data", str(store)).stdout
    assert "paper t1, Fig. 9: Throughput" in text and "[untestable] Reno is the fairest" in text
    listing = _tk("reproduce", "--list", "--papers", str(d), "--data", str(store), "--format", "json").stdout
    row = next(r for r in json.loads(listing) if r["experiment"] == "varying-error-rate")
    assert row["papers"] == "t1" and row["claims"] == 9 and row["last result"].startswith("full ")
    bad = _tk("reproduce", "no-such", "--no-run", "--data", str(store), check=False)
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "unknown experiment" in bad.stderr


def test_quick_plan_differs_only_where_declared():
    for name, exp in EXPERIMENTS.items():
        if exp.quick is None:
            continue
        full, quick = plan_experiment(name), plan_experiment(name, quick=True)
        assert 0 < len(quick) < len(full), name
        assert {s.seed for s in quick} == set(exp.quick.seeds)



def test_a_copied_run_is_not_a_second_replication(store, tmp_path):
    """Two runs of one simulation (a copy left by an older tracekit, which did not refuse
    them at ingest) count once in run_configs, and so in every comparison."""
    from tracekit.db.query import connect

    d = tmp_path / "store"
    shutil.copytree(store, d)
    con = connect(d)
    run_id, = con.execute("SELECT run_id FROM runs WHERE trace_kind = 'wired' ORDER BY run_id LIMIT 1").fetchone()
    n_before = con.execute("SELECT count(*) FROM run_configs").fetchone()[0]
    shutil.copytree(d / "runs" / f"run_id={run_id}", d / "runs" / "run_id=zz-copy")
    con = connect(d)
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1 + connect(store).execute(
        "SELECT count(*) FROM runs").fetchone()[0]
    assert con.execute("SELECT count(*) FROM run_configs").fetchone()[0] == n_before
    kept = con.execute("SELECT list(run_id) FROM run_configs WHERE run_id IN (?, 'zz-copy')", [run_id]).fetchone()[0]
    assert kept == [run_id]          # equal copies: the smaller run_id is kept
