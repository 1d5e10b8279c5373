"""Throughput against delay: every selected flow of every run as a point (flow_stats
throughput_kbps vs p95_delay_ms), one colour per variant, and each variant's mean over the
seeds at each value of the swept parameters (never a mean across parameter values). The
delay axis runs from high to low (Pantheon's convention): better is up and to the right."""
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

import dash_data as dd
import dash_ui as ui
from tracekit.db import catalogue

sel: dd.Selection = st.session_state["tk_selection"]
st.title("Throughput vs delay")
pts = sel.flows[sel.flows["throughput_kbps"].notna() & sel.flows["p95_delay_ms"].notna()].copy()
if pts.empty:
    st.info("No flows with both a throughput and a delay among the selected runs.")
    st.stop()
multi_q = pts["queue_type"].nunique() > 1
pts["variant"] = pts["name"] + (" · " + pts["queue_type"] if multi_q else "")
# the parameters that vary among the runs (other than the variant and the queue): each of
# their combinations is a condition of its own, with its own mean per variant
conds = [k for k in sel.varying if k not in ("variant", "pair", *dd.SERIES_PARAMS) and k in pts.columns]
pts["condition"] = pts[conds].astype(str).apply(lambda r: ", ".join(f"{k}={v}" for k, v in r.items()), axis=1) \
    if conds else ""
pts["group"] = pts["variant"] + (" @ " + pts["condition"] if conds else "")
hover = {"run_id": True, "seed": True, "fid": True, **{k: True for k in conds}}
colours = ui.colour_map(pts["variant"])
fig = px.scatter(pts, x="p95_delay_ms", y="throughput_kbps", color="variant", color_discrete_map=colours,
                 symbol="condition" if conds else None,
                 hover_data=hover, opacity=0.45, render_mode="svg",
                 labels={"p95_delay_ms": catalogue.metric("p95_delay_ms").axis,
                         "throughput_kbps": catalogue.metric("throughput_kbps").axis, "variant": "Variant",
                         "condition": ", ".join(conds)},
                 title=f"Throughput vs 95th-percentile delay: better is up and right ({len(pts)} flows)")
fig.update_traces(marker_size=8)
means = sel.store.group_means(pts, ("throughput_kbps", "p95_delay_ms"))
info = pts.drop_duplicates("group").set_index("group")[["variant", "condition"]]
means = means.join(info, on="group")
# means of several variants on the same point (Tahoe, Reno and Newreno lose nothing at a low
# CBR rate and agree packet for packet): concentric crosses of falling size, and said below
same = means.assign(_k=list(zip(means["p95_delay_ms"].round(9), means["throughput_kbps"].round(9))))
same = same[same.duplicated("_k", keep=False)].groupby("_k")
variants = dd.natural_sorted(means["variant"])
for variant, g in means.groupby("variant", sort=True):
    order = g
    size = 22 - 12 * variants.index(variant) / max(len(variants) - 1, 1)
    fig.add_trace(go.Scatter(x=order["p95_delay_ms"], y=order["throughput_kbps"],
                             mode="markers+text" if conds else "markers", text=order["condition"] if conds else None,
                             textposition="top center", textfont=dict(size=10, color=colours.get(variant)),
                             marker=dict(symbol="x", size=size, color=colours.get(variant), line=dict(width=2, color="black")),
                             name=f"{variant}: mean over seeds", customdata=order[["flows", "condition"]].to_numpy(),
                             hovertemplate=f"{variant} %{{customdata[1]}}: mean of %{{customdata[0]}} flows<br>"
                                           "p95 delay %{x:.1f} ms<br>throughput %{y:.1f} kbit/s<extra></extra>"))
fig.update_xaxes(autorange="reversed")
ui.chart(fig, "throughput-vs-delay", key="td-chart", height=580,
         context=ui.condition(sel, extra="dots: one flow of one run; crosses: a variant's mean over seeds at each "
                                         + (", ".join(conds) if conds else "condition") + "; delay axis reversed"))
for _k, g in same:
    st.caption("Identical means (drawn on top of each other, as concentric crosses): "
               + " = ".join(g["variant"]) + (f" at {g['condition'].iloc[0]}" if conds else "") + ".")
st.caption("Dots: one flow of one run (flow_stats). Crosses: each variant's mean over the seeds"
           + (f", one per value of {', '.join(conds)} (labelled)" if conds else "")
           + ". The delay axis runs from high to low, as in Pantheon's plots: better is up and to the right.")
st.subheader("Per-variant means, per condition")
show = means.rename(columns={"throughput_kbps": "mean_throughput_kbps", "p95_delay_ms": "mean_p95_delay_ms"})
ui.table(show[["variant", "condition", "flows", "mean_throughput_kbps", "mean_p95_delay_ms"]],
         "throughput-delay-means", key="td-means")
with st.expander("Every point"):
    cols = ["run_id", "seed", "fid", "name", "queue_type"] + conds + ["throughput_kbps", "p95_delay_ms", "mean_delay_ms"]
    ui.table(pts[list(dict.fromkeys(cols))], "throughput-delay-points", key="td-points")
