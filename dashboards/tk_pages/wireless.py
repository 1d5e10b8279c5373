"""Wireless: routing protocols compared on the MANET metrics of the selected wireless runs:
delivery ratio, throughput, delay and normalised routing load per run (wireless_run_stats,
with 95% confidence intervals across seeds from replication_stats), drops by layer and reason
(wireless_drops) and the forwarding done by each node (node_forwarding). Per-flow numbers of
wireless runs are on the Overview and Compare pages (flow_stats holds them too)."""
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

import dash_data as dd
import dash_ui as ui

sel: dd.Selection = st.session_state["tk_selection"]
st.title("Wireless")
ids = sel.wireless_ids
if not ids:
    st.info("No wireless runs among the selected runs. Compare ad-hoc routing protocols with the bundled "
            "MANET scenario, e.g.\n\n`tracekit sweep manet --grid routing=AODV,DSDV,DSR --seeds 1-3`\n\n"
            "or ingest wireless traces of your own (old CMU or new `-t` format) with `tracekit ingest`.")
    st.stop()

st.caption(f"{len(ids)} wireless run(s). " + (
    "Bars: mean over seeds; whiskers: 95% confidence interval of the mean (Student t), from replication_stats."
    if sel.seed is None else f"Seed {sel.seed} only: single runs, no confidence intervals."))
pinned = ui.pin_params(sel, keep=("variant", *dd.SERIES_PARAMS), page="wireless")
rows = ui.apply_pins(dd.wireless_metric_rows(sel), pinned)
title = sel.series_title
wireless = sel.store.metrics(source_view="wireless_run_stats")
factor = sel.series_param
comp = sel.compare(factor, list(wireless), [], pinned) if factor else None
cols = st.columns(2)
for i, (m, M) in enumerate(wireless.items()):
    d = rows[(rows["metric"] == m) & rows["mean"].notna()].sort_values("series")
    with cols[i % 2]:
        if d.empty:
            st.info(f"{M.title}: no values for these runs.")
            continue
        d = ui.ci_columns(d, M)
        fig = px.bar(d, x="series", y="mean", color="series", error_y="ci_plus", error_y_minus="ci_minus",
                     color_discrete_map=ui.colour_map(d["series"]), barmode="group",
                     hover_data={"n_runs": True, "config": True, "ci_low": ":.4g", "ci_high": ":.4g",
                                 "ci_plus": False, "ci_minus": False},
                     labels={"series": title, "mean": M.axis, "ci_low": "95% CI from", "ci_high": "95% CI to",
                             "n_runs": "seeds"},
                     title=M.title + (" (higher is better)" if M.higher_is_better else " (lower is better)"))
        fig.update_layout(showlegend=False)
        fig.update_yaxes(rangemode="tozero")
        ui.chart(fig, f"wireless-{m}", key=f"wireless-{m}", height=340, wrap=62,
                 context=ui.condition(sel, pinned, ui.ci_note(d["n_runs"], M) if sel.seed is None else ""))
        if comp is not None:
            ui.verdict_line(comp, m)

st.subheader("Drops by layer and reason")
runs = sel.wired[sel.wired["run_id"].isin(ids)]
runs = ui.apply_pins(runs, pinned)
groups = tuple((r, q if isinstance(q, str) else "(unknown)") for r, q in zip(runs["run_id"], runs["queue_type"]))
drops = sel.store.wireless_drops_by_group(groups)
if drops.empty:
    st.info("No drop lines in these runs.")
else:
    drops["cause"] = drops["layer"] + " " + drops["reason"]
    fig = px.bar(drops, x="cause", y="drops_per_run", color="group", barmode="group",
                 color_discrete_map=ui.colour_map(drops["group"]), hover_data={"runs": True},
                 labels={"cause": "Layer and drop reason", "drops_per_run": "Drop lines per run (count)",
                         "group": title, "runs": "runs"},
                 title="Drops per run by layer and reason (wireless_drops; MAC COL are lost frames, often retried)")
    ui.chart(fig, "wireless-drops", key="wireless-drops", height=380)
    ui.table(drops[["group", "layer", "reason", "runs", "drops_per_run"]].rename(columns={"group": title}),
             "wireless-drops", key="wireless-drops-table")

st.subheader("Forwarding per node")
labels = {r["run_id"]: sel.setup_of(r) for _, r in runs.iterrows()}
run = st.selectbox("Run", list(labels), format_func=lambda r: f"{labels[r]}  [{r[:8]}]", key="wireless-run")
fw = sel.store.node_forwarding(run)
if fw.empty:
    st.info("No event lines in this run.")
else:
    long = fw.melt(id_vars="node", value_vars=["fwd_data_pkts", "fwd_routing_pkts"], var_name="what", value_name="pkts")
    long["what"] = long["what"].map({"fwd_data_pkts": "data (and TCP ACKs)", "fwd_routing_pkts": "routing"})
    fig = px.bar(long, x="node", y="pkts", color="what", barmode="stack",
                 labels={"node": "Node", "pkts": "Packets forwarded (f RTR lines)", "what": "Packets"},
                 title=f"Packets each node forwarded: {labels[run]}")
    fig.update_xaxes(type="category")
    ui.chart(fig, "wireless-forwarding", key="wireless-forwarding", height=340)

st.subheader("Node positions over time")
moves = sel.store.movements(run)
if moves.empty:
    st.info("No movement (`M`) lines in this run: static nodes, or a trace without movement tracing.")
else:
    t_end = float(sel.runs.set_index("run_id").loc[run, "t_end"])
    t = st.slider("Time (s)", 0.0, t_end, 0.0, step=max(round(t_end / 200, 2), 0.01), key=f"wireless-t-{run}",
                  help="Each node's position at this time, from its M lines (random waypoint: straight moves "
                       "at constant speed, pauses between).")
    pos = dd.positions_at(moves, t)
    load = fw[["node", "fwd_data_pkts", "fwd_routing_pkts"]] if not fw.empty else None
    pos = pos.merge(load, on="node", how="left").fillna({"fwd_data_pkts": 0, "fwd_routing_pkts": 0}) \
        if load is not None else pos.assign(fwd_data_pkts=0, fwd_routing_pkts=0)
    pos["forwarded"] = pos["fwd_data_pkts"] + pos["fwd_routing_pkts"]
    biggest = max(float(pos["forwarded"].max()), 1.0)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=pos["x"], y=pos["y"], mode="markers+text", text=pos["node"].astype(str), textposition="middle center",
        marker=dict(size=14 + 36 * (pos["forwarded"] / biggest) ** 0.5, color=pos["forwarded"], colorscale="Viridis",
                    cmin=0, cmax=biggest, showscale=True, colorbar=dict(title="packets<br>forwarded"),
                    line=dict(width=1, color="#333")),
        textfont=dict(color="white", size=10), name="nodes",
        customdata=pos[["fwd_data_pkts", "fwd_routing_pkts"]].to_numpy(),
        hovertemplate="node %{text} at (%{x:.0f}, %{y:.0f}) m<br>forwarded over the run: %{customdata[0]} data, "
                      "%{customdata[1]} routing<extra></extra>"))
    info = sel.wired.set_index("run_id").loc[run]

    def area(label: str, *cols: str) -> float:
        v = pd.to_numeric(pd.Series([info.get(label)]), errors="coerce").iloc[0]
        return float(v) if pd.notna(v) and v > 0 else float(max(moves[c].max() for c in cols))
    w, h = area("width_m", "x", "dest_x"), area("height_m", "y", "dest_y")
    fig.update_layout(title=f"Node positions at t = {t:g} s; size and colour: packets each node forwarded over the run",
                      xaxis_title="x (m)", yaxis_title="y (m)", showlegend=False)
    fig.update_xaxes(range=[0, w], constrain="domain")
    fig.update_yaxes(range=[0, h], scaleanchor="x", scaleratio=1)
    ui.chart(fig, "wireless-positions", key="wireless-positions", height=520,
             context=f"scenario {sel.scenario}; run {labels[run]} [{run[:8]}]; positions from wireless_movements, "
                     "forwarding from node_forwarding")

st.subheader("Per run")
stats = sel.store.wireless_run_stats(tuple(runs["run_id"]))
keep = ["run_id", "seed", "queue_type"] + [k for k in sel.params if k not in dd.SERIES_PARAMS and k in runs.columns]
show = runs[keep].merge(stats, on="run_id").rename(columns={"queue_type": title})
ui.table(show, "wireless-runs", key="wireless-runs-table")
