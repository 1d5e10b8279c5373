"""Links & TCP: what happened inside one run, as Flent, FlowMonitor and tcptrace users look
at it: drops over time per flow or per link (events), each link's drops and queueing delay
(queue_delay), RED's average queue over time (red_vars), round-trip times over time
(rtt_samples), retransmissions per flow (retransmissions) and a tcptrace-style
time-sequence graph of one TCP flow (packets, data_events, events)."""
import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

import dash_data as dd
import dash_ui as ui

sel: dd.Selection = st.session_state["tk_selection"]
st.title("Links & TCP")
if sel.wired.empty:
    st.info("No runs match the sidebar's filters.")
    st.stop()

labels = {r["run_id"]: sel.setup_of(r) for _, r in sel.wired.iterrows()}
ids = list(labels)
# first offered: the run with the most drops of the selected flows (the most to look at)
drops_per_run = sel.flows.groupby("run_id")["dropped_pkts"].sum()
ids.sort(key=lambda r: -float(drops_per_run.get(r, 0) or 0))
run = st.selectbox("Run", ids, format_func=lambda r: f"{labels[r]}  [{r[:8]}]", key=f"links-run-{sel.scenario}",
                   help="Ordered by the drops of the selected flows, most first.")
row = sel.wired.set_index("run_id").loc[run]
ctx = f"scenario {sel.scenario or '(none)'}; run {labels[run]} [{run[:8]}]"
wired = row["trace_kind"] == "wired"

# -- drops over time -------------------------------------------------------------------
st.subheader("Drops over time")
c1, c2 = st.columns([2, 1])
by = c1.radio("Per", ["flow", "link"], horizontal=True, key="links-drops-by")
bin_s = c2.select_slider("Bin width (s)", [0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0], value=0.5, key="links-bin")
dr = sel.store.drops_series((run,), float(bin_s))
if dr.empty:
    st.info("No drop in this run.")
else:
    if by == "flow":
        dr["what"] = dr["name"].where(dr["is_data"], "other packets (" + dr["ptype"].astype(str) + ")")
    else:
        dr["what"] = "link " + dr["from_node"].astype(str) + "→" + dr["to_node"].astype(str)
    dr = dr.groupby(["what", "t"], as_index=False)["drops"].sum()
    # every bin of the run, zero where nothing was dropped
    t_end = float(row["t_end"])
    grid = pd.DataFrame({"t": [i * float(bin_s) for i in range(int(t_end // float(bin_s)) + 1)]})
    full = pd.concat([grid.assign(what=w).merge(g[["t", "drops"]], on="t", how="left") for w, g in dr.groupby("what")])
    full["drops"] = full["drops"].fillna(0)
    colours = ui.colour_map(full["what"]) if by == "flow" else None
    fig = px.line(full, x="t", y="drops", color="what", line_shape="hv", render_mode="svg", color_discrete_map=colours,
                  labels={"t": "Time (s)", "drops": f"Drops per {bin_s:g} s bin (count)", "what": by.capitalize()},
                  title=f"Drops per {by} over time")
    fig.update_xaxes(range=[0, t_end])
    ui.chart(fig, f"drops-per-{by}", key="links-drops", height=360, context=ctx)

# -- per link ----------------------------------------------------------------------------
if wired:
    st.subheader("Per link: drops and queueing delay")
    ls = sel.store.link_stats((run,))
    if ls.empty:
        st.info("No queued packet in this run.")
    else:
        ls["link"] = ls["from_node"].astype(str) + "→" + ls["to_node"].astype(str)
        fig = go.Figure()
        fig.add_trace(go.Bar(x=ls["link"], y=ls["mean_queue_delay_ms"], name="mean queueing delay (ms)",
                             marker_color="#636EFA", offsetgroup=0))
        fig.add_trace(go.Bar(x=ls["link"], y=ls["p95_queue_delay_ms"], name="95th percentile (ms)",
                             marker_color="#19D3F3", offsetgroup=1))
        fig.add_trace(go.Scatter(x=ls["link"], y=ls["drops"], name="drops (count)", mode="markers",
                                 marker=dict(symbol="x", size=12, color="#EF553B"), yaxis="y2"))
        fig.update_layout(title="Queueing delay and drops per link (queue_delay, events)", xaxis_title="Link",
                          yaxis_title="Queueing delay (ms)", barmode="group", xaxis_type="category",
                          yaxis2=dict(title="Drops (count)", overlaying="y", side="right", rangemode="tozero"))
        ui.chart(fig, "links-queue-delay", key="links-links", height=380, context=ctx)
        ui.table(ls[["link", "queued_pkts", "mean_queue_delay_ms", "p95_queue_delay_ms", "drops"]], "links",
                 key="links-table")

# -- RED ---------------------------------------------------------------------------------
red = dd.sibling_runs(sel, (run,), "red")
red_ids = tuple(red["run_id"]) if not red.empty else tuple(
    sel.runs[(sel.runs["trace_kind"] == "red") & (sel.runs["scenario"] == sel.scenario)]["run_id"])
if red_ids:
    st.subheader("RED queue")
    rv = sel.store.red_vars(red_ids)
    rv = rv[rv["var"].isin(["ave_", "curq_", "a", "Q"]) | rv["var"].str.startswith(("ave", "curq"))]
    if rv.empty:
        st.info("The RED trace holds neither the average (ave_) nor the instantaneous queue (curq_).")
    else:
        rv["what"] = rv["var"].map(lambda v: "average queue (ave_)" if v.startswith("ave") or v == "a"
                                   else "instantaneous queue (curq_)")
        if len(red_ids) > 1:
            rv["what"] = rv["run_id"].str[:8] + " · " + rv["what"]
        fig = px.line(rv, x="time", y="value", color="what", line_shape="hv", render_mode="svg",
                      labels={"time": "Time (s)", "value": "Queue (bytes, or packets when queue_in_bytes_ is false)",
                              "what": "RED variable"},
                      title="RED's average queue (the EWMA it drops by) and the instantaneous queue")
        ui.chart(fig, "red-queue", key="links-red", height=360,
                 context=ctx + ("" if not red.empty else f"; RED trace(s) of scenario {sel.scenario}, not of this run"))
elif wired:
    st.caption("No RED trace (`Queue/RED` `trace-var`) for this run: ingest one with the run's sim_id label to see "
               "RED's average queue here.")

# -- RTT over time ---------------------------------------------------------------------------
st.subheader("Round-trip time over time")
rs = sel.store.rtt_samples((run,))
rs = rs[rs["name"].isin(sel.names)]
if rs.empty:
    st.info("No RTT sample (TCP flows only; segments sent more than once are skipped, Karn).")
else:
    fl = rs.drop_duplicates(["fid", "src_node", "src_port", "dst_node", "dst_port"])
    fl = fl.assign(flow=dd.flow_label(fl.assign(config=fl["run_id"]), ["config"]))
    rs = rs.merge(fl[["fid", "src_node", "src_port", "dst_node", "dst_port", "flow"]],
                  on=["fid", "src_node", "src_port", "dst_node", "dst_port"])
    fig = px.scatter(rs, x="t_send_s", y="rtt_ms", color="flow", color_discrete_map=ui.colour_map(rs["flow"]),
                     render_mode="svg", opacity=0.7,
                     labels={"t_send_s": "Time the segment was sent (s)", "rtt_ms": "Round-trip time (ms)", "flow": "Flow"},
                     title="Round-trip time of each sampled segment (rtt_samples)")
    fig.update_traces(marker_size=4)
    ui.chart(fig, "rtt-series", key="links-rtt", height=360, context=ctx)

# -- retransmissions and the time-sequence graph ----------------------------------------------
st.subheader("Retransmissions per flow")
rx = sel.store.retransmissions(tuple(ids))
rx = rx[rx["name"].isin(sel.names)].merge(sel.wired[["run_id", "seed"]], on="run_id")
rx["run"] = rx["run_id"].map(labels)
st.caption("A retransmission: a data packet sent at the flow's source whose sequence number an earlier packet of the "
           "flow had carried (the retransmissions view), for every selected run.")
ui.table(rx[["run", "name", "fid", "sent_pkts", "distinct_seqs", "retransmitted_pkts", "retransmitted_seqs",
             "retransmit_ratio", "first_retransmit_s", "run_id"]], "retransmissions", key="links-rx")

st.subheader("Time-sequence graph")
tcp = sel.flows[(sel.flows["run_id"] == run) & (sel.flows["ptype"] == "tcp")]
if tcp.empty:
    st.info("No TCP flow in this run.")
    st.stop()
tcp = tcp.assign(flow=dd.flow_label(tcp.assign(config=tcp["run_id"]), ["config"]))
keys = {r["flow"]: (None if pd.isna(r["fid"]) else int(r["fid"]), int(r["src_node"]), int(r["src_port"]),
                    int(r["dst_node"]), int(r["dst_port"])) for _, r in tcp.iterrows()}
flow = st.selectbox("TCP flow", list(keys), key=f"links-flow-{run}")
ts = sel.store.time_sequence(run, keys[flow])
sent, drops, acks = ts["sent"], ts["drops"], ts["acks"]
colour = ui.colour_of(flow)
fig = go.Figure()
first = sent[~sent["retransmission"]]
fig.add_trace(go.Scatter(x=first["time"], y=first["seq"], mode="markers", name="sent (first time)",
                         marker=dict(size=4, color=colour)))
again = sent[sent["retransmission"]]
fig.add_trace(go.Scatter(x=again["time"], y=again["seq"], mode="markers", name=f"retransmission ({len(again)})",
                         marker=dict(size=9, symbol="diamond-open", color="#FF7F0E", line=dict(width=2))))
fig.add_trace(go.Scatter(x=drops["time"], y=drops["seq"], mode="markers", name=f"dropped ({len(drops)})",
                         marker=dict(size=10, symbol="x", color="#D62728")))
if not acks.empty:
    fig.add_trace(go.Scatter(x=acks["time"], y=acks["ack"], mode="lines", line_shape="hv", name="ack received at the source",
                             line=dict(color="#7F7F7F", width=1)))
fig.update_layout(title=f"Time-sequence graph of {flow} (tcptrace style)", xaxis_title="Time (s)",
                  yaxis_title="Sequence number (packets)", legend_title_text="")
ui.chart(fig, "time-sequence", key="links-tseq", height=480, context=ctx)
st.caption("Dots: each data packet at the time it left the source, at its sequence number; diamonds: retransmissions; "
           "crosses: drops (at the drop time, anywhere on the path); grey: the highest ack received so far.")
