"""tracekit's comparison dashboard: which variant does better here, by how much, and how
sure are we. Run it with `tracekit dashboard [--data DIR]` (or `streamlit run app.py --
--data DIR`). The sidebar selects runs and flows; each page in tk_pages/ reads the
selection and shows the sql/ views' numbers for it."""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # the pages and helpers beside this file
    sys.path.insert(0, str(HERE))

import streamlit as st  # noqa: E402

import dash_data as dd  # noqa: E402
import dash_ui as ui  # noqa: E402

st.set_page_config(page_title="tracekit", page_icon=":material/network_check:", layout="wide")

PAGES = [
    st.Page(str(HERE / "tk_pages" / "overview.py"), title="Overview", icon=":material/table_view:", default=True),
    st.Page(str(HERE / "tk_pages" / "compare.py"), title="Compare", icon=":material/bar_chart:"),
    st.Page(str(HERE / "tk_pages" / "sweep.py"), title="Sweep", icon=":material/show_chart:"),
    st.Page(str(HERE / "tk_pages" / "timeseries.py"), title="Time series", icon=":material/timeline:"),
    st.Page(str(HERE / "tk_pages" / "fairness.py"), title="Fairness", icon=":material/balance:"),
    st.Page(str(HERE / "tk_pages" / "throughput_delay.py"), title="Throughput vs delay", icon=":material/scatter_plot:"),
    st.Page(str(HERE / "tk_pages" / "distributions.py"), title="Distributions", icon=":material/ssid_chart:"),
    st.Page(str(HERE / "tk_pages" / "links.py"), title="Links & TCP", icon=":material/lan:"),
    st.Page(str(HERE / "tk_pages" / "wireless.py"), title="Wireless", icon=":material/wifi:"),
    st.Page(str(HERE / "tk_pages" / "papers.py"), title="Papers", icon=":material/menu_book:"),
    st.Page(str(HERE / "tk_pages" / "sql.py"), title="SQL", icon=":material/terminal:"),
]


def _status() -> dd.StoreStatus:
    """The store state this session works on: pinned at the first visit, so a running sweep
    does not recompute every page on every click; the sidebar offers to load new runs."""
    current = dd.store_status(dd.resolve_data_dir())
    pinned = st.session_state.get("tk_status")
    if pinned is None or pinned.data_dir != current.data_dir or pinned.empty or current.problem:
        pinned = st.session_state["tk_status"] = current
    elif pinned.run_ids != current.run_ids:
        n_new = len(set(current.run_ids) - set(pinned.run_ids))
        n_gone = len(set(pinned.run_ids) - set(current.run_ids))
        what = ", ".join(x for x in (f"{n_new} new" if n_new else "", f"{n_gone} removed" if n_gone else "") if x)
        if st.sidebar.button(f"Load the store's changes ({what} runs)", key="reload", type="primary"):
            pinned = st.session_state["tk_status"] = current
    return pinned


# pages the sidebar's run selection does not apply to (they say so, and so does the sidebar)
UNFILTERED = ("SQL", "Papers")


def _sidebar(status: dd.StoreStatus, page: str) -> dd.Selection:
    sb = st.sidebar
    if page in UNFILTERED:
        sb.info(f"The filters below do not apply to the {page} page"
                   + (": a query sees every run of the store (filter with WHERE)." if page == "SQL" else
                      ": each paper experiment has its own runs."), icon=":material/filter_alt_off:")
    with st.spinner(f"Computing flow_stats, fairness, run_metrics and replication_stats for {len(status.run_ids)} runs "
                    "(once per store state)..."):
        store = dd.open_store(status)
        runs = store.runs()
        store.flow_stats()
    wired, counts = dd.scenario_counts(store)
    sb.caption(f"Store `{status.data_dir}`: {len(runs)} runs, {len(wired)} packet traces")

    scen_opts = sorted(counts.index, key=lambda s: (-counts[s], s))
    if not scen_opts:
        scen_opts = ["(no scenario)"]
    # the Wireless page opens on a scenario with wireless runs (the default, the most-run
    # scenario, is often a wired one); a scenario chosen on the page stays
    wl = runs[runs["trace_kind"] == "wireless"]["scenario"].fillna("(no scenario)").value_counts()
    arrived = st.session_state.get("tk_page") != page
    st.session_state["tk_page"] = page
    if page == "Wireless" and arrived and len(wl) and st.session_state.get("scenario", scen_opts[0]) not in wl.index:
        st.session_state["scenario"] = sorted(wl.index, key=lambda s: (-wl[s], s))[0]
        sb.info(f"Wireless page: scenario {st.session_state['scenario']} chosen (it has wireless runs).",
                icon=":material/wifi:")
    scen = sb.selectbox("Scenario", scen_opts, key="scenario",
                        format_func=lambda s: f"{s} ({counts.get(s, 0)} runs)")
    scenario = None if scen == "(no scenario)" else scen

    choice = dd.scenario_choices(store, scenario)
    names, tcp, sub = choice.names, choice.tcp, choice.runs
    wireless = dd.series_title(sub) == "Routing protocol"
    chosen = sb.multiselect("Flows" if wireless else "Variants (flow names)", names,
                            default=names if wireless else (tcp or names), key=f"names-{scen}",
                            help="Flow names from flow_labels: the TCP variant of each flow, or CBR.")
    queues_all = choice.queues
    queues = queues_all
    if len(queues_all) > 1:
        queues = sb.multiselect(dd.series_title(sub), queues_all, default=queues_all, key=f"queues-{scen}")
    chosen_params: dict[str, list[str]] = {}
    fixed = []
    for k, vals in choice.levels.items():
        if k in ("variant", *dd.SERIES_PARAMS) or len(vals) <= 1:
            if len(vals) == 1:
                fixed.append(f"{k}={vals[0]}")
            continue
        chosen_params[k] = sb.multiselect(k, vals, default=vals, key=f"param-{scen}-{k}")
    seeds = choice.seeds
    seed_opt = sb.selectbox("Seeds", ["all"] + seeds, key=f"seed-{scen}",
                            format_func=lambda s: f"all ({len(seeds)}): 95% CIs across seeds" if s == "all" else f"seed {s} only")
    seed = None if seed_opt == "all" else int(seed_opt)
    sb.download_button("Download report", data=lambda: dd.report_html(status, scenario), on_click="ignore",
                       file_name=f"tracekit-report-{scen}.html".replace(" ", "_"), mime="text/html",
                       icon=":material/download:", key="report",
                       help="tracekit report --scenario on all of this scenario's runs (the filters above do not apply): "
                            "one HTML file that opens offline (conditions, 95% CIs and verdicts, figures). "
                            "Made when clicked: it takes a while on a large store.")
    if fixed:
        with sb.expander(f"Fixed parameters ({len(fixed)})"):
            st.caption(", ".join(fixed))
    sb.segmented_control("Chart image format", list(ui.IMAGE_FORMATS), default="PNG", key="image_format",
                         help="What the camera button of every chart's toolbar saves.")
    return dd.select(store, scenario, chosen, queues, chosen_params, seed)


status = _status()
nav = st.navigation(PAGES)
if status.empty or status.problem:
    ui.empty_store(status)
    st.stop()
st.session_state["tk_selection"] = _sidebar(status, nav.title)
nav.run()
