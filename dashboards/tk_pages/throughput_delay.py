"""Throughput against delay: every selected flow of every run as a point (flow_stats
throughput_kbps vs p95_delay_ms), one colour per variant, with each variant's mean."""
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

import dash_data as dd
import dash_ui as ui
from tracekit import catalogue

sel: dd.Selection = st.session_state["tk_selection"]
st.title("Throughput vs delay")
pts = sel.flows[sel.flows["throughput_kbps"].notna() & sel.flows["p95_delay_ms"].notna()].copy()
if pts.empty:
    st.info("No flows with both a throughput and a delay among the selected runs.")
    st.stop()
multi_q = pts["queue_type"].nunique() > 1
pts["group"] = pts["name"] + (" · " + pts["queue_type"] if multi_q else "")
hover = {"run_id": True, "seed": True, "fid": True, **{k: True for k in sel.varying if k in pts.columns}}
colours = ui.colour_map(pts["group"])
fig = px.scatter(pts, x="p95_delay_ms", y="throughput_kbps", color="group", color_discrete_map=colours,
                 hover_data=hover, opacity=0.75, render_mode="svg",
                 labels={"p95_delay_ms": catalogue.metric("p95_delay_ms").axis,
                         "throughput_kbps": catalogue.metric("throughput_kbps").axis, "group": "Variant"},
                 title=f"Every run: throughput vs 95th percentile delay ({len(pts)} flows)")
fig.update_traces(marker_size=9)
means = sel.store.group_means(pts, ("throughput_kbps", "p95_delay_ms"))
for _, m in means.iterrows():
    fig.add_trace(go.Scatter(x=[m["p95_delay_ms"]], y=[m["throughput_kbps"]], mode="markers",
                             marker=dict(symbol="x", size=16, color=colours.get(m["group"]),
                                         line=dict(width=2, color="black")),
                             name=f"{m['group']} mean",
                             hovertemplate=f"{m['group']}: mean of {int(m['flows'])} flows<br>"
                                           "p95 delay %{x:.1f} ms<br>throughput %{y:.1f} kbit/s<extra></extra>"))
ui.chart(fig, "throughput-vs-delay", key="td-chart", height=560)
st.caption("Dots: one flow of one run (flow_stats). Crosses: the mean of each variant's dots "
           "(an average over runs with different parameters when several are selected).")
st.subheader("Per-variant means")
ui.table(means.rename(columns={"group": "variant", "throughput_kbps": "mean_throughput_kbps",
                               "p95_delay_ms": "mean_p95_delay_ms"}), "throughput-delay-means", key="td-means")
with st.expander("Every point"):
    cols = ["run_id", "seed", "fid", "name", "queue_type"] + [k for k in sel.varying if k in pts.columns] \
        + ["throughput_kbps", "p95_delay_ms", "mean_delay_ms"]
    ui.table(pts[list(dict.fromkeys(cols))], "throughput-delay-points", key="td-points")
