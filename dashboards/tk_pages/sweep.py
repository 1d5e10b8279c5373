"""Sweep: a metric against a swept parameter, one line per variant with its 95% confidence
band across seeds (replication_stats), as papers 002 and 004 draw their figures."""
import plotly.graph_objects as go
import streamlit as st

import dash_data as dd
import dash_ui as ui

sel: dd.Selection = st.session_state["tk_selection"]
st.title("Sweep")
# swept parameters: numeric ones first (a line chart), then the others (e.g. queue: DropTail, RED)
numeric = [k for k in sel.varying if k not in ("variant", "pair") and dd.as_number(sel.wired[k]) is not None]
numeric += [k for k in sel.varying if k not in ("variant", "pair") and k not in numeric]
if sel.wired.empty or not numeric:
    st.info("No parameter varies among the selected runs. A sweep over one, e.g.\n\n"
            "`tracekit sweep cbr-variants --grid variant=Tahoe,Reno,Newreno,Vegas --grid cbr_rate_mbps=1:9:2 --seeds 1-3`"
            "\n\ngives a figure here.")
    st.stop()

c1, c2 = st.columns(2)
default_x = "cbr_rate_mbps" if "cbr_rate_mbps" in numeric else numeric[0]
xk = c1.selectbox("Swept parameter (x axis)", numeric, index=numeric.index(default_x), key="sweep-x")
offered = {**sel.store.metrics(level="flow", source_view="flow_stats"), **sel.store.metrics(source_view="fairness")}
metric = c2.selectbox("Metric", list(offered), format_func=lambda m: offered[m].axis, key="sweep-metric")
M = offered[metric]
pinned = ui.pin_params(sel, keep=(xk, "variant", *dd.SERIES_PARAMS), page="sweep")
show_runs = st.toggle("Show each run", value=sel.seed is None, key="sweep-runs",
                      help="The flow_stats (or fairness) value of every run behind the means, as small dots.")

rows, splitters = dd.metric_rows(sel)
rows = ui.apply_pins(rows, pinned)
d = rows[(rows["metric"] == metric) & rows["mean"].notna()].copy()
if splitters:
    st.warning(f"replication_stats splits seeds into separate configurations (labels {', '.join(splitters)}): "
               "lines below are single runs without confidence bands.")
if d.empty:
    st.info(f"No {M.title.lower()} for these runs"
            + (" (Jain's index needs two or more TCP flows per run)." if metric == "jain_index" else "."))
    st.stop()
num_x = dd.as_number(d[xk])
d["x"] = num_x if num_x is not None else d[xk]
# lines per variant and queue type; single runs (see the warning) as points, not lines
d["series"] = "" if xk in dd.SERIES_PARAMS else d["queue_type"].fillna("")
d["line"] = d["label"].where(d["label"].notna(), d["setup"])
multi_series = d["series"].nunique() > 1
colours = ui.colour_map(d["line"])
dashes = {s: ui.DASHES[i % len(ui.DASHES)] for i, s in enumerate(dd.natural_sorted(d["series"]))}
line_dashes = ui.dash_map(d["line"])

fig = go.Figure()
shown: set[str] = set()
for (line, series, _c), g in d.sort_values("x").groupby(["line", "series", "config_tag" if splitters else "series"], sort=True):
    name = f"{line} · {series}" if multi_series else line
    colour = colours[line]
    ci = g["ci95_half_width"]
    if ci.notna().any():
        b = ui.ci_columns(g.assign(ci95_half_width=ci.fillna(0)), M)
        lo, hi = b["ci_low"], b["ci_high"]
        fig.add_trace(go.Scatter(x=list(g["x"]) + list(g["x"])[::-1], y=list(hi) + list(lo)[::-1],
                                 fill="toself", fillcolor=colour, opacity=0.18, line=dict(width=0),
                                 hoverinfo="skip", showlegend=False, legendgroup=name, name=f"{name} 95% CI"))
    fig.add_trace(go.Scatter(x=g["x"], y=g["mean"], mode="markers" if splitters else "lines+markers",
                             name=name, legendgroup=name, showlegend=name not in shown,
                             line=dict(color=colour, dash=dashes[series] if multi_series else line_dashes[line]),
                             customdata=g[["ci95_half_width", "n_runs"]].to_numpy(),
                             hovertemplate=f"{name}<br>{xk}=%{{x}}<br>{M.title}: %{{y:.4g}} ± %{{customdata[0]:.3g}}"
                                           " (95% CI, %{customdata[1]} seeds)<extra></extra>"))
    shown.add(name)
if show_runs:
    if M.level == "run":
        fair = sel.store.fairness()
        pts = fair[fair["run_id"].isin(sel.run_ids)].merge(sel.wired, on="run_id").rename(columns={M.source_column: "value"})
        pts["line"] = pts["run_id"].map(dd.setups(sel))
    else:
        pts = sel.flows.rename(columns={M.source_column: "value"}).copy()
        pts["line"] = dd.flow_label(pts.assign(config=pts["run_id"], metric=metric), ["config", "metric"])
    pts = ui.apply_pins(pts, pinned)
    pts = pts[pts["value"].notna() & pts["line"].isin(colours)]
    pts["x"] = dd.as_number(pts[xk]) if num_x is not None else pts[xk]
    for line, g in pts.groupby("line"):
        fig.add_trace(go.Scatter(x=g["x"], y=g["value"], mode="markers", name=f"{line} (runs)",
                                 marker=dict(color=colours[line], size=5, opacity=0.5), legendgroup=line,
                                 showlegend=False, customdata=g[["run_id", "seed"]].to_numpy(),
                                 hovertemplate="run %{customdata[0]} seed %{customdata[1]}<br>%{y:.4g}<extra></extra>"))
fig.update_layout(title=f"{M.title} against {xk}",
                  xaxis_title=dd.param_axis(sel.scenario, xk), yaxis_title=M.axis, legend_title_text="Variant")
ui.chart(fig, f"sweep-{metric}-vs-{xk}", key="sweep-chart", height=520,
         context=ui.condition(sel, pinned, "lines: mean over seeds; bands: " + ui.ci_note(d["n_runs"], M).replace("whiskers: ", "")
                              if sel.seed is None else ""))
st.caption("Lines: mean over seeds; bands: 95% confidence interval of the mean (replication_stats)."
           if sel.seed is None else f"Seed {sel.seed} only: no confidence bands.")

# the verdict at each value of the swept parameter: the lines compared, by flow name (or by
# the run label that tells the lines apart, for a per-run metric)
factor = "name" if M.level == "flow" else next((k for k in ("pair", "variant") if k in sel.varying and k != xk), None)
if factor:
    per = [xk] + ([sel.series_param] if sel.series_param and sel.series_param not in (xk, factor) else [])
    ui.verdicts(sel.compare(factor, [metric], per, pinned), f"sweep-{metric}", per_title=xk)

cols = ["line"] + (["series"] if multi_series else []) + [xk, "mean", "ci95_half_width", "n_runs", "seeds", "config"]
table = d[cols].rename(columns={"line": "variant", "series": "queue_type"}).sort_values(["variant", xk])
if num_x is not None:
    table = table.assign(_x=dd.as_number(table[xk])).sort_values(["variant", "_x"]).drop(columns="_x")
ui.table(table, f"sweep-{metric}-vs-{xk}", key="sweep-table")
