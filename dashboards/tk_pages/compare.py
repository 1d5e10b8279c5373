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
    st.caption("Bars: mean over seeds; whiskers: 95% confidence interval of the mean (Student t), clipped to the "
               "metric's range (a ratio's ends at 1, a throughput's at 0); replication_stats' formulas over run_metrics, "
               "the seeds of a configuration pooled per flow name (a MANET flow's end points change with the seed)."
               + (f" At {where}." if where else ""))

# the metrics this page offers: the catalogue's per-flow metrics and the fairness index
offered = {**sel.store.metrics(level="flow", source_view="flow_stats"), **sel.store.metrics(source_view="fairness")}
c1, c2 = st.columns(2)
metric = c1.selectbox("Verdict for", list(offered), format_func=lambda m: offered[m].title, key="compare-metric")
M = offered[metric]
run_factors = [k for k in ("variant", "pair", *dd.SERIES_PARAMS) if k in sel.varying and k not in pinned]
factors = (["name"] if M.level == "flow" else []) + run_factors
if sel.series_title == "Routing protocol" and sel.series_param in factors:   # wireless: protocols first
    factors.remove(sel.series_param)
    factors.insert(0, sel.series_param)
if not factors:
    st.info(f"{M.title} is one value per run: compare it across a parameter that varies among the selected runs "
            "(variant, pair, queue or routing); none does here.")
else:
    factor = c2.selectbox("Compare", factors, key=f"compare-factor-{M.level}",
                          format_func=lambda k: "flows, by name (variant)" if k == "name" else f"runs, by {k}")
    per = [sel.series_param] if sel.series_param and sel.series_param != factor else []
    comp = sel.compare(factor, [metric], per, pinned)
    if not isinstance(comp, str):
        for v in comp.verdicts:
            ranked = sorted([g for g in v.groups if g.n], key=lambda g: -g.mean if M.higher_is_better else g.mean)
            st.markdown(f"**{M.title}**" + (f", {v.per_text}" if v.per else "")
                        + (" (higher is better)" if M.higher_is_better else " (lower is better)"))
            if ranked:
                # one line per group, wrapping on a narrow window (st.metric cut its numbers)
                lines = []
                for g in ranked:
                    ci = g.ci95_half_width
                    spread = (f"± {ui.fmt_value(M, ci)} (95% CI, n = {g.n} runs{': wide interval' if g.n < 5 else ''})"
                              if ci is not None else f"no CI (n = {g.n} run{'s' if g.n != 1 else ''})")
                    lines.append(f"- **{ui.md_escape(g.level)}**: {ui.fmt_value(M, g.mean)} {M.unit} {spread}; "
                                 f"seeds {', '.join(map(str, g.seeds))}")
                st.markdown("\n".join(lines))
    ui.verdicts(comp, "compare")

st.divider()
chart_cols = st.columns(2)
for i, (m, mm) in enumerate(offered.items()):
    d = rows[(rows["metric"] == m) & rows["mean"].notna()].copy()
    with chart_cols[i % 2]:
        if d.empty:
            st.info(f"{mm.title}: no values" + (" (needs two or more TCP flows per run)" if m == "jain_index" else ""))
            continue
        x = "setup" if mm.level == "run" else "label"
        xt = "TCP flows of the run" if mm.level == "run" else "Variant (flow)"
        one_series = d["series"].nunique() == 1
        colour = x if one_series else "series"
        d = ui.ci_columns(d, mm)
        fig = px.bar(d.sort_values([x, "series"]), x=x, y="mean", color=colour, barmode="group",
                     error_y="ci_plus", error_y_minus="ci_minus",
                     color_discrete_map=ui.colour_map(d[colour]),
                     hover_data={"n_runs": True, "ci_low": ":.4g", "ci_high": ":.4g", "config": True,
                                 "ci_plus": False, "ci_minus": False},
                     labels={x: xt, "mean": mm.axis, "series": sel.series_title, "ci_low": "95% CI from",
                             "ci_high": "95% CI to", "n_runs": "seeds"},
                     title=mm.title + (f" ({d['series'].iloc[0]})" if one_series else ""))
        if one_series:
            fig.update_layout(showlegend=False)
        fig.update_yaxes(rangemode="tozero")
        ctx = ui.condition(sel, pinned, "bars: mean over seeds; " + ui.ci_note(d["n_runs"], mm) if sel.seed is None
                           else "single runs")
        ui.chart(fig, f"compare-{m}", key=f"compare-{m}", height=360, context=ctx, wrap=62)

st.subheader("Numbers")
series_col = "routing" if sel.series_title == "Routing protocol" else "queue"
show = rows[rows["mean"].notna()][["label", "setup", "series", "metric", "mean", "ci95_half_width", "n_runs", "seeds", "config"]
            + [k for k in pinned if k in rows.columns]].rename(columns={"label": "flow", "series": series_col})
ui.table(show.sort_values(["metric", "flow", series_col]), "compare", key="compare-table")
