"""Papers: each paper's numbers and claims beside ours, as `tracekit reproduce` sets them
(tracekit/analysis/reproduce.py; the papers are data, tracekit/experiments/papers/*.toml). Per paper
experiment, the result saved in the store (reproduce/<experiment>[.quick].json: shown as
saved, nothing recomputed), or one evaluated here on request from the runs in the store
(no simulation is run from the dashboard). Each paper table as a chart (our mean with its
95% CI against the paper's value or range) and a table; each claim with its status and
the numbers it rests on. The sidebar's run selection does not apply: each experiment has
its own runs."""
import streamlit as st

import dash_data as dd
import dash_ui as ui
from tracekit.db.catalogue import metrics as catalogued

sel: dd.Selection = st.session_state["tk_selection"]
store = sel.store
papers_dir = dd.resolve_papers_dir()
st.title("Papers")
st.caption("Each paper's values and claims beside our runs (`tracekit reproduce`). The sidebar's run selection "
           "does not apply here: each paper experiment is a sweep of its own.")
papers, problem = dd.load_papers(papers_dir)
if problem:
    st.error(problem)
saved = dd.saved_results(store.data_dir)
entries = {e.id: e for e in dd.paper_entries(papers, saved)}
if not entries:
    st.info("No paper file" + (f" in `{papers_dir}`" if papers_dir else " yet (tracekit/experiments/papers/*.toml)")
            + " and no saved result in the store. `tracekit reproduce --list` lists the experiments; "
            "`tracekit reproduce NAME` runs one and saves its result for this page.")
    st.stop()

st.caption("Per paper experiment, the newest result saved in the store (`tracekit reproduce` saves each one):")
ui.table(dd.papers_overview(list(entries.values()), saved), "papers", key="papers-overview")
pid = st.selectbox("Paper", list(entries), key="papers-paper",
                   format_func=lambda p: f"{p}: {entries[p].title}")
entry = entries[pid]
st.header(f"Paper {entry.id}: {entry.title}")
if entry.citation:
    st.caption(f"{entry.citation}. Text: `{entry.source}`; paper file `{entry.path}`.")
if entry.notes:
    with st.expander(f"What the paper does not say, and what we chose ({len(entry.notes)} notes)"):
        st.markdown("\n".join(f"- {n}" for n in entry.notes))
ASKED = "papers-evaluate"      # the (experiment, quick) evaluated here on request, this session
asked: set = st.session_state.setdefault(ASKED, set())
METRICS = catalogued()


def _evaluate_buttons(exp: str, info: dict | None) -> None:
    if info is None or entry.path is None:
        st.caption("No evaluation here: " + ("the experiment is not in the registry (tracekit scenarios)."
                                            if info is None else "its paper file is not among those read."))
        return
    versions = [False] + ([True] if info["quick_runs"] is not None else [])
    cols = st.columns(len(versions))
    for col, quick in zip(cols, versions):
        n, planned = store.experiment_runs(exp, quick) or (0, 0)
        col.button(f"Evaluate the {'quick' if quick else 'full'} version now ({n} of {planned} simulations "
                   "in the store)", key=f"papers-eval-{exp}-{quick}", on_click=asked.add, args=((exp, quick),),
                   icon=":material/calculate:",
                   help="tracekit reproduce's evaluation on the runs already in the store (no simulation "
                        "is run), shown here and not saved.")


def _result(exp: str, result: dict) -> None:
    quick = bool(result.get("quick"))
    here = bool(result.get("evaluated_here"))
    version = "quick (reduced) version" if quick else "full version"
    made = (f"evaluated here at {dd.when_text(result)} (not saved)" if here
            else f"saved by `tracekit reproduce` at {dd.when_text(result)}")
    st.markdown(f"**Result:** {version}, {made}, on {result.get('n_runs')} of the {result.get('n_planned')} "
                "simulations it plans." + (" :orange-badge[QUICK]" if quick else ""))
    now = None if here else store.experiment_runs(exp, quick)
    if now is not None:
        n_now = now[0]
        if n_now != result.get("n_runs"):
            st.warning(f"The store now holds {n_now} of this version's simulations; the result used "
                       f"{result.get('n_runs')}. Evaluate it again (button above) or run "
                       f"`{dd.reproduce_command(exp, quick, store.data_dir, papers_dir)}`.")
    if dd.paper_file_changed(entry, result):
        st.warning(f"The paper file `{entry.path}` changed after this result was made: evaluate it again.")
    if result.get("notes"):
        with st.expander(f"Notes ({len(result['notes'])})"):
            st.markdown("\n".join(f"- {n}" for n in result["notes"]))
    if entry.id not in dd.result_papers(result):
        st.warning(f"This result was made from other paper files (papers {', '.join(dd.result_papers(result)) or 'none'}), "
                   f"not from paper {entry.id}'s: evaluate it again.")
        return
    mine = dd.for_paper(result, entry.id)
    rows = dd.result_rows(mine)
    if rows.empty:
        st.caption("The paper gives no value for this experiment.")
    else:
        for tid, d in rows.groupby("table", sort=False):
            common, _ = dd.short_conditions(list(d["condition"].astype(str)))
            m = METRICS.get(str(d["metric"].iloc[0]))
            y_title = m.axis if m else f"{d['metric'].iloc[0]} ({d['unit'].iloc[0]})"
            title = f"{d['cite'].iloc[0]}: {d['title'].iloc[0]}" + (f" ({', '.join(common)})" if common else "")
            ui.chart(ui.paper_chart(d, title, y_title), f"paper-{tid}-{exp}", key=f"papers-chart-{tid}-{exp}",
                     height=380)
        st.caption("Ours: mean over seeds (each seed counts once), error bars its 95% confidence interval (Student t). "
                   "Paper: its value (diamond) or stated range (band); orange: outside the physical bound of the "
                   "paper's own setup (paper implausible).")
        show = rows[["table", "cite", "condition", "metric", "unit", "paper", "paper_low", "paper_high", "ours", "ci95",
                     "ours_low", "ours_high", "ratio", "paper_in_ci", "n_runs", "status", "note", "quote"]]
        ui.table(show, f"paper-{entry.id}-{exp}-values", key=f"papers-rows-{exp}",
                 style=lambda s: ui.status_cells(s), column_config={
                     "paper_low": st.column_config.NumberColumn(format="%.4g"),
                     "paper_high": st.column_config.NumberColumn(format="%.4g"),
                     "ours": st.column_config.NumberColumn("ours (mean)", format="%.4g"),
                     "ours_low": st.column_config.NumberColumn(format="%.4g"),
                     "ours_high": st.column_config.NumberColumn(format="%.4g"),
                     "ci95": st.column_config.NumberColumn("95% CI ±", format="%.3g"),
                     "ratio": st.column_config.NumberColumn("ours / paper", format="%.2f")})
    claims = dd.result_claims(mine)
    if claims.empty:
        st.caption("The paper makes no claim about this experiment.")
        return
    counts = dd.claim_counts(mine)
    st.markdown("**Claims:** " + " ".join(ui.status_badge(s, n) for s, n in counts.items() if n))
    for c in claims.itertuples():
        st.markdown(f"{ui.status_badge(c.status)} **{ui.md_escape(c.text)}** ({ui.md_escape(c.cite)})")
        st.caption(ui.md_escape(c.evidence))
    with st.expander("The claims as a table"):
        ui.table(claims, f"paper-{entry.id}-{exp}-claims", key=f"papers-claims-{exp}", style=ui.status_cells)


def _experiment(exp: str, what: str) -> None:
    info = dd.experiment_info(exp)
    st.subheader(exp)
    st.caption((what + ". " if what else "") + (f"Scenario `{info['scenario']}`, {info['runs']} simulations"
               + (f"; quick version {info['quick_runs']}" if info["quick_runs"] else "") if info else ""))
    results = {("saved", q): r for q, r in dd.results_of(saved, exp).items()}
    for quick in (False, True):
        if (exp, quick) in asked:
            try:
                results[("here", quick)] = store.reproduce(exp, quick, papers_dir)
            except Exception as e:  # a paper file under edit, an experiment gone: say so, keep the page
                st.error(f"Evaluating {exp}{' (quick)' if quick else ''} failed: {str(e).splitlines()[0]}")
    _evaluate_buttons(exp, info)
    if not results:
        has_quick = bool(info and info["quick_runs"])
        st.info(f"No result for {exp} in the store yet. Evaluate it now from the runs the store holds (above), "
                "or run its simulations and save its result for this page with"
                + (" (the quick, reduced version first, then the full one):" if has_quick else ":"))
        commands = ([dd.reproduce_command(exp, True, store.data_dir, papers_dir)] if has_quick else []) \
            + [dd.reproduce_command(exp, False, store.data_dir, papers_dir)]
        st.code("\n".join(commands), language="bash")
        return
    # the one evaluated here first (the newest), then the saved ones, newest first
    keys = sorted(results, key=lambda k: (k[0] == "here", str(results[k].get("when", ""))), reverse=True)
    key = keys[0]
    if len(keys) > 1:
        key = st.radio("Result", keys, key=f"papers-which-{exp}", horizontal=True,
                       format_func=lambda k: f"{'quick' if k[1] else 'full'}, "
                                             f"{'evaluated here' if k[0] == 'here' else 'saved'} "
                                             f"{dd.when_text(results[k])}")
    _result(exp, results[key])


for exp, what in entry.experiments.items():
    st.divider()
    _experiment(exp, what)
