"""Distributions: the per-packet one-way delay of the selected runs (packets view: arrival at
the destination - first time the packet left the source) as a CDF and a histogram, the runs
of a variant pooled or each run overlaid; and box plots of a flow metric per flow across the
seeds (flow_stats, one point per run)."""
import numpy as np
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

import dash_data as dd
import dash_ui as ui

MAX_CDF_POINTS = 2000       # per line: evenly spaced ranks, the last included
sel: dd.Selection = st.session_state["tk_selection"]
st.title("Distributions")
if sel.wired.empty:
    st.info("No runs match the sidebar's filters.")
    st.stop()

pinned = ui.pin_params(sel, keep=("variant", "pair", *dd.SERIES_PARAMS), page="dist")
runs = ui.apply_pins(sel.wired, pinned)
short = {r["run_id"]: sel.setup_of(r) for _, r in runs.iterrows()}
run_ids = tuple(runs["run_id"])
c1, c2 = st.columns([2, 1])
how = c1.radio("Runs", ["pooled per variant", "each run overlaid"], horizontal=True, key="dist-how",
               help="Pooled: every delivered packet of the variant's runs (all seeds) in one distribution.")
log_x = c2.toggle("Log delay axis", value=False, key="dist-log")

delays, n_all = sel.store.packet_delays(run_ids)
delays = delays[delays["name"].isin(sel.names)].copy()
multi_q = runs["queue_type"].nunique() > 1
qt = delays["run_id"].map(runs.set_index("run_id")["queue_type"])
delays["variant"] = delays["name"] + (" · " + qt if multi_q else "")
delays["group"] = delays["variant"] if how.startswith("pooled") else delays["run_id"].map(short) + " · " + delays["name"]
if delays.empty:
    st.info("No delivered data packets of the selected flows in these runs.")
    st.stop()
if n_all > len(delays) and n_all > 300_000:
    st.warning(f"{n_all:,} delivered packets: the charts use a uniform sample of 300,000 of them.")

groups = dd.natural_sorted(delays["group"])
variant_of = delays.drop_duplicates("group").set_index("group")["variant"]
colours = ui.colour_map(variant_of)
dashes = ui.dash_map(groups) if not how.startswith("pooled") else {g: "solid" for g in groups}
ctx = ui.condition(sel, pinned, f"{len(delays):,} delivered packets of {len(run_ids)} runs; "
                   + ("runs pooled per variant" if how.startswith("pooled") else "each run its own line"))

fig = go.Figure()
stats = []
for g in groups:
    v = np.sort(delays.loc[delays["group"] == g, "delay_ms"].to_numpy(dtype=float))
    n = len(v)
    idx = np.unique(np.linspace(0, n - 1, min(n, MAX_CDF_POINTS)).round().astype(int))
    fig.add_trace(go.Scatter(x=v[idx], y=(idx + 1) / n, mode="lines", name=g, line_shape="hv",
                             line=dict(color=colours[variant_of[g]], dash=dashes[g]),
                             hovertemplate=f"{g}<br>%{{x:.2f}} ms: %{{y:.3f}} of {n} packets<extra></extra>"))
    stats.append({"group": g, "packets": n, "p50_ms": float(np.quantile(v, 0.5)), "p95_ms": float(np.quantile(v, 0.95)),
                  "p99_ms": float(np.quantile(v, 0.99)), "max_ms": float(v[-1])})
fig.update_layout(title="Per-packet one-way delay: CDF", xaxis_title="Delay (ms)",
                  yaxis_title="Fraction of delivered packets (0 to 1)", legend_title_text="Variant" if how.startswith("pooled") else "Run · flow")
if log_x:
    fig.update_xaxes(type="log")
ui.chart(fig, "delay-cdf", key="dist-cdf", height=440, context=ctx)

# histogram: shared bins, each group's share of its packets per bin, as step lines (overlaid)
lo, hi = float(delays["delay_ms"].min()), float(delays["delay_ms"].max())
edges = np.geomspace(max(lo, 1e-3), hi, 61) if log_x and hi > 0 else np.linspace(lo, hi if hi > lo else lo + 1, 61)
fig = go.Figure()
for g in groups:
    v = delays.loc[delays["group"] == g, "delay_ms"].to_numpy(dtype=float)
    counts, _ = np.histogram(v, bins=edges)
    fig.add_trace(go.Scatter(x=edges, y=np.append(counts / len(v), 0), mode="lines", line_shape="hv", name=g,
                             line=dict(color=colours[variant_of[g]], dash=dashes[g])))
fig.update_layout(title="Per-packet one-way delay: histogram (60 bins)", xaxis_title="Delay (ms)",
                  yaxis_title="Share of the group's packets (fraction)", legend_title_text="Variant")
if log_x:
    fig.update_xaxes(type="log")
ui.chart(fig, "delay-histogram", key="dist-hist", height=380, context=ctx)
ui.table(pd.DataFrame(stats), "delay-percentiles", key="dist-stats")

st.subheader("Per flow across seeds")
offered = sel.store.metrics(level="flow", source_view="flow_stats")
metric = st.selectbox("Metric", list(offered), format_func=lambda m: offered[m].axis, key="dist-metric")
M = offered[metric]
pts = ui.apply_pins(sel.flows, pinned)
pts = pts[pts[M.source_column].notna()].copy()
if pts.empty:
    st.info(f"No {M.title.lower()} for these flows.")
    st.stop()
pts["flow"] = dd.flow_label(pts.assign(config=pts["run_id"]), ["config"])
pts["series"] = pts["queue_type"].fillna("")
others = [k for k in sel.varying if k not in ("variant", "pair", *dd.SERIES_PARAMS) and k not in pinned and k in pts.columns]
pts["condition"] = pts[others].astype(str).apply(lambda r: ", ".join(f"{k}={v}" for k, v in r.items()), axis=1) \
    if others else ""
many = pts["series"].nunique() > 1
fig = px.box(pts, x="flow", y=M.source_column, color="series" if many else "flow", points="all",
             facet_col="condition" if others else None, facet_col_wrap=3,
             color_discrete_map=ui.colour_map(pts["series" if many else "flow"]),
             hover_data={"run_id": True, "seed": True},
             labels={"flow": "Flow", M.source_column: M.axis, "series": sel.series_title, "condition": ""},
             title=f"{M.title} per flow: box over the runs (one point per run)")
fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
if not many:
    fig.update_layout(showlegend=False)
ui.chart(fig, f"box-{metric}", key="dist-box", height=440,
         context=ui.condition(sel, pinned, "box: quartiles over the runs (seeds); whiskers: 1.5 IQR"))
