"""Wireless: routing protocols compared on the MANET metrics of the selected wireless runs:
delivery ratio, throughput, delay and normalised routing load per run (wireless_run_stats,
with 95% confidence intervals across seeds from replication_stats), drops by layer and reason
(wireless_drops) and the forwarding done by each node (node_forwarding). Per-flow numbers of
wireless runs are on the Overview and Compare pages (flow_stats holds them too)."""
import plotly.express as px
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
        fig = px.bar(d, x="series", y="mean", color="series", error_y="ci95_half_width",
                     color_discrete_map=ui.colour_map(d["series"]), barmode="group",
                     hover_data={"n_runs": True, "config": True, "ci95_half_width": ":.4g"},
                     labels={"series": title, "mean": M.axis, "ci95_half_width": "95% CI ±", "n_runs": "seeds"},
                     title=M.title + (" (higher is better)" if M.higher_is_better else " (lower is better)"))
        fig.update_layout(showlegend=False)
        fig.update_yaxes(rangemode="tozero")
        ui.chart(fig, f"wireless-{m}", key=f"wireless-{m}", height=320)
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

st.subheader("Per run")
stats = sel.store.wireless_run_stats(tuple(runs["run_id"]))
keep = ["run_id", "seed", "queue_type"] + [k for k in sel.params if k not in dd.SERIES_PARAMS and k in runs.columns]
show = runs[keep].merge(stats, on="run_id").rename(columns={"queue_type": title})
ui.table(show, "wireless-runs", key="wireless-runs-table")
