"""Compare: each metric as bars per variant grouped by queue type, with 95% confidence
intervals across seeds (replication_stats), and the verdict for one metric."""
import plotly.express as px
import streamlit as st

import dash_data as dd
import dash_ui as ui

sel: dd.Selection = st.session_state["tk_selection"]
st.title("Compare variants")
if sel.wired.empty:
    st.info("No runs match the sidebar's filters.")
    st.stop()

pinned = ui.pin_params(sel, keep=("variant", *dd.SERIES_PARAMS), page="compare")
rows, splitters = dd.metric_rows(sel)
rows = ui.apply_pins(rows, pinned)
where = ", ".join(f"{k}={v}" for k, v in pinned.items())
if splitters:
    st.warning("replication_stats puts runs that differ only in their seed into different configurations "
               f"(their configuration includes the label(s) {', '.join(splitters)}), so each bar below is a single "
               "run and has no confidence interval. That is for run_configs to fix, not the dashboard.")
if sel.seed is not None:
    st.caption(f"Seed {sel.seed} only: single runs, no confidence intervals (choose all seeds in the sidebar).")
else:
    st.caption("Bars: mean over seeds; whiskers: 95% confidence interval of the mean (Student t), from the "
               "replication_stats view." + (f" At {where}." if where else ""))

metric = st.selectbox("Verdict for", list(dd.METRICS), format_func=lambda m: dd.METRICS[m].title,
                      key="compare-metric")
M = dd.METRICS[metric]
v = rows[(rows["metric"] == metric) & rows["mean"].notna()].copy()
v["who"] = v["label"].where(v["label"].notna(), v["setup"])
if v.empty:
    st.info(f"No {M.title.lower()} for these runs"
            + (" (Jain's index needs two or more TCP flows per run)." if metric == "jain_index" else "."))
else:
    for series, grp in v.groupby("series", sort=True):
        grp = grp.sort_values("mean", ascending=not M.higher_is_better)
        head = f"**{M.title}**" + (f", {series}" if v["series"].nunique() > 1 else "") + \
            (" (higher is better)" if M.higher_is_better else " (lower is better)")
        st.markdown(head)
        cols = st.columns(min(len(grp), 5))
        for col, (_, r) in zip(cols, grp.head(5).iterrows()):
            ci = r["ci95_half_width"]
            delta = (f"± {ui.fmt_value(metric, ci)} (95% CI, {int(r['n_runs'])} seeds)" if ci == ci
                     else f"no CI ({int(r['n_runs'])} run)")
            col.metric(r["who"], f"{ui.fmt_value(metric, r['mean'])} {M.unit}", delta=delta, delta_color="off",
                       delta_arrow="off", help=f"{M.axis}; configuration {r['config']}")
        ties = grp[grp["mean"] == grp["mean"].iloc[0]]
        if len(ties) == len(grp) and len(grp) >= 2:
            st.markdown(f"{', '.join(ties['who'])}: all have the same {M.title.lower()}, "
                        f"{ui.fmt_value(metric, grp['mean'].iloc[0])} {M.unit}: no difference here.")
        elif len(grp) >= 2:
            a, b = ties.iloc[0], grp.iloc[len(ties)]
            gap = abs(a["mean"] - b["mean"])
            if a["ci95_half_width"] == a["ci95_half_width"] and b["ci95_half_width"] == b["ci95_half_width"]:
                lo_a, hi_a = a["mean"] - a["ci95_half_width"], a["mean"] + a["ci95_half_width"]
                lo_b, hi_b = b["mean"] - b["ci95_half_width"], b["mean"] + b["ci95_half_width"]
                sure = ("the 95% confidence intervals do not overlap: a real difference at these settings"
                        if hi_b < lo_a or hi_a < lo_b else
                        "the 95% confidence intervals overlap: these seeds do not establish a difference")
            else:
                sure = "no confidence intervals (single runs): run more seeds to know"
            who = [f"**{w}**" for w in ties["who"]]
            lead = who[0] if len(who) == 1 else ", ".join(who[:-1]) + " and " + who[-1]
            st.markdown(f"{lead} {'does' if len(ties) == 1 else 'do'} best, by {ui.fmt_value(metric, gap)} {M.unit} "
                        f"over **{b['who']}**; {sure}.")

st.divider()
chart_cols = st.columns(2)
for i, m in enumerate(dd.METRICS):
    mm = dd.METRICS[m]
    d = rows[(rows["metric"] == m) & rows["mean"].notna()].copy()
    with chart_cols[i % 2]:
        if d.empty:
            st.info(f"{mm.title}: no values" + (" (needs two or more TCP flows per run)" if m == "jain_index" else ""))
            continue
        x = "setup" if m == "jain_index" else "label"
        xt = "TCP flows of the run" if m == "jain_index" else "Variant (flow)"
        one_series = d["series"].nunique() == 1
        colour = x if one_series else "series"
        fig = px.bar(d.sort_values([x, "series"]), x=x, y="mean", color=colour,
                     barmode="relative" if one_series else "group",
                     error_y="ci95_half_width",
                     color_discrete_map=ui.colour_map(d[x]) if one_series else None,
                     hover_data={"n_runs": True, "ci95_half_width": ":.4g", "config": True},
                     labels={x: xt, "mean": mm.axis, "series": sel.series_title, "ci95_half_width": "95% CI ±",
                             "n_runs": "seeds"},
                     title=mm.title + (f" ({d['series'].iloc[0]})" if one_series else ""))
        if one_series:
            fig.update_layout(showlegend=False)
        fig.update_yaxes(rangemode="tozero")
        ui.chart(fig, f"compare-{m}", key=f"compare-{m}", height=340)

st.subheader("Numbers")
series_col = "routing" if sel.series_title == "Routing protocol" else "queue"
show = rows[rows["mean"].notna()][["label", "setup", "series", "metric", "mean", "ci95_half_width", "n_runs", "seeds", "config"]
            + [k for k in pinned if k in rows.columns]].rename(columns={"label": "flow", "series": series_col})
ui.table(show.sort_values(["metric", "flow", series_col]), "compare", key="compare-table")
