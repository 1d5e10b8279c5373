"""The dashboard's Papers page (Streamlit's AppTest) on a store of real ns-2 runs: 12 of
varying-error-rate's simulations (Reno and Sack1 at error rates 0 and 0.05, seeds 1-3) and
the test paper of test_reproduce (a papers dir given by $TRACEKIT_PAPERS). The page shows
the result `tracekit reproduce` saved in the store exactly (the table's numbers, the chart's
points and the claims' statuses are the JSON's), one of its rows is recomputed here in
plain Python from flow_stats rows, and without a saved result the page offers the command
and an evaluation from the runs in the store, which writes nothing to the store."""
from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("streamlit")
from streamlit.testing.v1 import AppTest  # noqa: E402

from test_dashboard import APP, arr, charts, close, frame  # noqa: E402
from test_reproduce import PAPER  # noqa: E402
from tracekit.analysis import reproduce as rp  # noqa: E402
from tracekit.db.query import connect  # noqa: E402

NS = shutil.which("ns") or "/usr/bin/ns"
EXP = "varying-error-rate"
ROW_COLUMNS = ("table", "condition", "paper_low", "paper_high", "ours", "ci95", "ratio", "n_runs", "status")


@pytest.fixture(scope="module")
def papers_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("papers")
    (d / "t1.toml").write_text(PAPER)
    return d


@pytest.fixture(scope="module")
def bare_store(tmp_path_factory) -> Path:
    """The 12 simulations, no saved result."""
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    from tracekit.experiments.sweep import plan_sweep, run_sims

    d = tmp_path_factory.mktemp("papers-store") / "store"
    specs = plan_sweep("varying-parameters", [("variant", ["Reno", "Sack1"]), ("error_rate", ["0", "0.05"])],
                       [1, 2, 3], {})
    results = run_sims(specs, d, jobs=2, keep_traces=False)
    assert [r.status for r in results] == ["done"] * 12, [r.error for r in results if r.error]
    con = connect(d)
    assert len(rp.experiment_run_ids(con, EXP, False)[0]) == 12   # they are the experiment's simulations
    con.close()
    return d


@pytest.fixture(scope="module")
def saved_store(bare_store, papers_dir, tmp_path_factory, tracekit_inproc) -> tuple[Path, dict]:
    """A copy of the store with the result `tracekit reproduce --no-run` saved in it, and that JSON."""
    d = tmp_path_factory.mktemp("papers-saved") / "store"
    shutil.copytree(bare_store, d)
    p = tracekit_inproc("reproduce", EXP, "--no-run", "--papers", papers_dir, data=d)
    assert p.returncode == 0, p.stdout + p.stderr
    saved = json.loads(rp.result_path(d, EXP, False).read_text())
    return d, saved


def open_papers(store: Path, papers: Path, monkeypatch) -> AppTest:
    monkeypatch.setenv("TRACEKIT_DATA", str(store))
    monkeypatch.setenv("TRACEKIT_PAPERS", str(papers))
    at = AppTest.from_file(str(APP), default_timeout=180).run()
    at.switch_page("tk_pages/papers.py").run()
    assert not at.exception, "\n".join(e.message + "\n" + "\n".join(e.stack_trace[-5:]) for e in at.exception)
    return at


def _paper_range(p) -> tuple[float, float]:
    return (float(p[0]), float(p[1])) if isinstance(p, list) else (float(p), float(p))


def assert_rows_equal(shown, rows: list[dict]) -> None:
    """The page's table of paper values holds exactly the result's rows, in order."""
    assert list(shown["condition"]) == [r["condition"] for r in rows]
    for (_, s), r in zip(shown.iterrows(), rows):
        lo, hi = _paper_range(r["paper"])
        assert s["table"] == r["table"] and close(s["paper_low"], lo) and close(s["paper_high"], hi)
        for col in ("ours", "ci95", "ratio"):
            assert close(s[col], r[col]), (r["condition"], col, s[col], r[col])
        assert s["n_runs"] == r["n_runs"]
        assert (s["status"] if isinstance(s["status"], str) else None) == r["status"]
        if r["ours"] is not None and r["ci95"] is not None:
            assert close(s["ours_low"], r["ours"] - r["ci95"]) and close(s["ours_high"], r["ours"] + r["ci95"])


def assert_claims_equal(at: AppTest, claims: list[dict]) -> None:
    shown = frame(at, "id", "kind", "status", "evidence")
    assert list(shown["id"]) == [c["id"] for c in claims]
    assert list(shown["status"]) == [c["status"] for c in claims]
    assert list(shown["evidence"]) == [c["evidence"] for c in claims]
    # each claim's line: its status as the badge of its colour, in the result's order
    badges = [m.value for m in at.markdown if m.value.startswith(":") and "-badge[" in m.value and "**" in m.value]
    colour = {"reproduced": "green", "not reproduced": "red", "untestable": "gray", "paper implausible": "orange"}
    assert [b.split("]", 1)[0] for b in badges] == [f":{colour[c['status']]}-badge[{c['status']}" for c in claims]
    # the summary line counts them
    summary = next(m.value for m in at.markdown if m.value.startswith("**Claims:**"))
    for status in colour:
        k = sum(1 for c in claims if c["status"] == status)
        assert (f"[{k} {status}]" in summary) == (k > 0), summary


def assert_chart_is_rows(at: AppTest, rows: list[dict]) -> None:
    """Ours: mean and 95 % CI as error bars; the paper's value as a marker, its range as a band."""
    (fig,) = [c["spec"] for c in charts(at)]
    assert fig["layout"]["yaxis"]["title"]["text"] == "Throughput (kbit/s)"
    assert fig["layout"]["xaxis"]["title"]["text"] == "error_rate"
    by_name = {t["name"]: t for t in fig["data"]}
    xs = [r["condition"].split("error_rate=")[1] for r in rows]
    ours = by_name["ours (mean, 95% CI)"]
    want = [(x, r["ours"], r["ci95"]) for x, r in zip(xs, rows) if r["ours"] is not None]
    assert list(ours["x"]) == [w[0] for w in want]
    assert np.allclose(arr(ours["y"]), [w[1] for w in want])
    assert np.allclose(arr(ours["error_y"]["array"]), [w[2] for w in want])
    points = {}
    for name in ("paper", "paper (outside its physical bound)"):
        for x, y in zip(by_name[name]["x"], arr(by_name[name]["y"])):
            points[x] = float(y)
    bands = {}
    for name in ("paper range", "paper range (outside its physical bound)"):
        if name in by_name:         # x, x, None per range; y: low, high, None
            bx, by = by_name[name]["x"], list(by_name[name]["y"])
            for i in range(0, len(bx), 3):
                assert bx[i] == bx[i + 1] and bx[i + 2] is None and by[i + 2] is None
                bands[bx[i]] = (float(by[i]), float(by[i + 1]))
    for x, r in zip(xs, rows):
        lo, hi = _paper_range(r["paper"])
        if lo == hi:
            assert close(points.pop(x), lo)
        else:
            assert np.allclose(bands.pop(x), (lo, hi))
    assert not points and not bands
    assert by_name["paper (outside its physical bound)"]["x"] == [x for x, r in zip(xs, rows)
                                                                  if r["status"] == "paper implausible"]


# ---------------------------------------------------------------------------------------


def test_page_shows_the_saved_result(saved_store, papers_dir, monkeypatch):
    store, saved = saved_store
    at = open_papers(store, papers_dir, monkeypatch)
    assert saved["n_runs"] == 12 and len(saved["rows"]) == 3 and len(saved["claims"]) == 9
    assert_rows_equal(frame(at, *ROW_COLUMNS), saved["rows"])
    assert_claims_equal(at, saved["claims"])
    assert_chart_is_rows(at, saved["rows"])
    # when it was made, by what, on how many runs; no evaluation unless asked
    result_line = next(m.value for m in at.markdown if m.value.startswith("**Result:**"))
    assert f"saved by `tracekit reproduce` at {saved['when'].replace('T', ' ')}" in result_line
    assert "full version" in result_line and "on 12 of the 140 simulations" in result_line and "QUICK" not in result_line
    assert not at.warning
    # the overview: one line per paper experiment, the claims by status as saved
    ov = frame(at, "paper", "experiment", "result", "made", "reproduced", "untestable")
    assert list(ov["experiment"]) == [EXP] and list(ov["result"]) == ["full"]
    for status, n in saved["summary"].items():
        assert int(ov[status].iloc[0]) == n
    assert at.get("download_button")


def test_a_row_recomputed_from_flow_stats(saved_store, papers_dir, monkeypatch):
    """Reno without loss: the mean over seeds of the TCP flow's throughput (flow_stats) and
    its 95 % CI with scipy's t quantile, beside the paper's 900 kbit/s."""
    from scipy import stats

    store, _ = saved_store
    con = connect(store)
    tp = {int(labels["seed"]): t for labels, t in con.execute(
        "SELECT r.labels, f.throughput_kbps FROM flow_stats f JOIN runs r USING (run_id) WHERE f.ptype = 'tcp' "
        "AND r.labels['variant'] = 'Reno' AND r.labels['error_rate'] IN ('0', '0.0')").fetchall()}
    con.close()
    assert sorted(tp) == [1, 2, 3]
    xs = list(tp.values())
    m = sum(xs) / 3
    half = stats.t.ppf(0.975, 2) * math.sqrt(sum((x - m) ** 2 for x in xs) / 2) / math.sqrt(3)
    at = open_papers(store, papers_dir, monkeypatch)
    rows = frame(at, *ROW_COLUMNS)
    row = rows[rows["condition"] == "variant=Reno, error_rate=0.0"].iloc[0]
    assert math.isclose(row["ours"], m, rel_tol=1e-9) and math.isclose(row["ci95"], half, rel_tol=1e-6)
    assert math.isclose(row["ratio"], m / 900, rel_tol=1e-9) and row["n_runs"] == 3


def test_without_a_result_the_page_offers_the_command_and_an_evaluation(bare_store, papers_dir, monkeypatch,
                                                                        store_listing):
    before = store_listing(bare_store)
    at = open_papers(bare_store, papers_dir, monkeypatch)
    assert any(f"No result for {EXP}" in i.value for i in at.info)
    code = "\n".join(c.value for c in at.code)
    # the experiment has a quick version: both commands, the quick one first
    quick_cmd = f"tracekit reproduce {EXP} --quick --papers {papers_dir} --data {bare_store}"
    full_cmd = f"tracekit reproduce {EXP} --papers {papers_dir} --data {bare_store}"
    assert code.splitlines() == [quick_cmd, full_cmd]
    assert not charts(at)
    ov = frame(at, "paper", "experiment", "result")
    assert list(ov["experiment"]) == [EXP] and ov["result"].isna().all()
    button = at.button(key=f"papers-eval-{EXP}-False")
    assert "12 of 140 simulations in the store" in button.label
    button.click().run()
    assert not at.exception, at.exception[0].message
    con = connect(bare_store)
    want = rp.evaluate(con, EXP, papers=rp.load_papers(papers_dir)).as_dict()
    con.close()
    assert_rows_equal(frame(at, *ROW_COLUMNS), want["rows"])
    assert_claims_equal(at, want["claims"])
    assert_chart_is_rows(at, want["rows"])
    assert "evaluated here" in next(m.value for m in at.markdown if m.value.startswith("**Result:**"))
    assert store_listing(bare_store) == before      # the dashboard wrote nothing into the store


def test_quick_and_full_results_and_a_stale_one(saved_store, papers_dir, tmp_path, monkeypatch):
    """Both versions saved: the newer shown first, the other a click away; a result made on
    fewer runs than the store now holds says so."""
    store, saved = saved_store
    d = tmp_path / "store"
    shutil.copytree(store, d)
    quick = {**saved, "quick": True, "n_runs": 8, "when": "2099-01-01T00:00:00",
             "claims": [{**c, "status": "untestable"} for c in saved["claims"]]}
    rp.result_path(d, EXP, True).write_text(json.dumps(quick))
    at = open_papers(d, papers_dir, monkeypatch)
    line = next(m.value for m in at.markdown if m.value.startswith("**Result:**"))
    assert "quick (reduced) version" in line and "2099-01-01 00:00:00" in line and "QUICK" in line
    assert list(frame(at, "id", "status")["status"]) == ["untestable"] * 9
    at.radio(key=f"papers-which-{EXP}").set_value(("saved", False)).run()
    assert not at.exception
    assert_claims_equal(at, saved["claims"])
    assert not at.warning
    stale = {**saved, "n_runs": 10}
    rp.result_path(d, EXP, False).write_text(json.dumps(stale))
    rp.result_path(d, EXP, True).unlink()
    at = open_papers(d, papers_dir, monkeypatch)
    assert any("now holds 12 of this version's simulations; the result used 10" in w.value for w in at.warning)


def test_a_broken_paper_file_is_a_message_and_saved_results_still_show(saved_store, tmp_path, monkeypatch):
    store, saved = saved_store
    bad = tmp_path / "papers"
    bad.mkdir()
    (bad / "t1.toml").write_text(PAPER.replace('kind = "trend"', 'kind = "bigger"'))
    at = open_papers(store, bad, monkeypatch)
    assert any("t1.toml" in e.value and "kind must be one of" in e.value for e in at.error)
    # the saved result is still listed, under its paper id, with no evaluation offered
    assert_rows_equal(frame(at, *ROW_COLUMNS), saved["rows"])
    assert not [b for b in at.button if b.key and b.key.startswith("papers-eval-")]


def test_no_paper_and_no_result(bare_store, tmp_path, monkeypatch):
    at = open_papers(bare_store, tmp_path, monkeypatch)
    assert any("No paper file" in i.value for i in at.info)


def test_a_result_made_without_this_papers_file_says_so(saved_store, papers_dir, tmp_path, monkeypatch):
    store, saved = saved_store
    both = tmp_path / "papers"
    shutil.copytree(papers_dir, both)
    second = PAPER.split("[[tables]]")[0].replace('id = "t1"', 'id = "t2"').replace('"Fig. 9: throughput', '"Table 2')
    (both / "t2.toml").write_text(second)
    at = open_papers(store, both, monkeypatch)
    ov = frame(at, "paper", "experiment", "result", "paper values")
    assert list(ov["paper"]) == ["t1", "t2"] and list(ov["paper values"]) == [3, 0]
    at.selectbox(key="papers-paper").set_value("t2").run()
    assert not at.exception
    assert any("made from other paper files (papers t1)" in w.value for w in at.warning)
    assert not charts(at)
