"""Overview: what is in the store, and flow_stats of the selected runs (with flow names)."""
import plotly.express as px
import streamlit as st

import dash_data as dd
import dash_ui as ui
from tracekit.db import catalogue

sel: dd.Selection = st.session_state["tk_selection"]
runs = sel.runs

st.title("Overview")
c = st.columns(4)
c[0].metric("Runs in the store", len(runs))
c[1].metric("Packet traces (wired, wireless)", f'{int((runs["trace_kind"] == "wired").sum())}, '
                                                  f'{int((runs["trace_kind"] == "wireless").sum())}')
c[2].metric("Scenarios", int(runs["scenario"].nunique()))
c[3].metric("Selected packet traces", len(sel.wired))

counts = (runs.assign(scenario=runs["scenario"].fillna("(no scenario)"))
          .groupby(["scenario", "trace_kind"]).size().reset_index(name="runs"))
fig = px.bar(counts, x="scenario", y="runs", color="trace_kind", barmode="group",
             labels={"scenario": "Scenario", "runs": "Runs (count)", "trace_kind": "Trace kind"},
             title="Runs in the store, by scenario and trace kind")
ui.chart(fig, "runs-by-scenario", height=320)

st.subheader(f"Flow statistics: {sel.scenario or '(no scenario)'}")
st.caption("One row per flow of each selected run, from the flow_stats view (sortable: click a column). "
           "Throughput and goodput in kbit/s, delays and jitter in ms, pdr and drop_rate as fractions of the "
           "packets sent.")
cols = (["run_id", "seed", "queue_type"] + [k for k in sel.varying if k not in dd.SERIES_PARAMS]
        + ["fid", "name", "ptype", "src_node", "dst_node", "sent_pkts", "recv_pkts", "dropped_pkts", "rx_bytes"]
        # then every catalogued flow metric that flow_stats holds, in catalogue order
        + [m.source_column for m in catalogue.metrics("flow").values() if m.source_view == "flow_stats"])
flows = sel.flows[[c for c in dict.fromkeys(cols) if c in sel.flows.columns]].sort_values(["run_id", "fid"])
ui.table(flows, f"flow_stats-{sel.scenario or 'runs'}", key="overview-flows")

st.subheader("Selected runs")
rcols = ["run_id", "scenario", "seed", "queue_type"] + sel.params + ["sim_id", "n_events", "t_start", "t_end", "source"]
ui.table(sel.wired[[c for c in dict.fromkeys(rcols) if c in sel.wired.columns]], f"runs-{sel.scenario or 'runs'}",
         key="overview-runs")
