"""Time series of chosen runs overlaid: throughput per flow (throughput_series), the
congestion window of each TCP flow (tcp_vars cwnd_, from the cwnd trace run of the same
simulation: sim_id label) and the bottleneck queue length (queue_samples, likewise)."""
import pandas as pd
import plotly.express as px
import streamlit as st

import dash_data as dd
import dash_ui as ui

sel: dd.Selection = st.session_state["tk_selection"]
st.title("Time series")
if sel.wired.empty:
    st.info("No runs match the sidebar's filters.")
    st.stop()

w = sel.wired.copy()
w["setup"] = [sel.setup_of(r) for _, r in w.iterrows()]
w["group"] = w["run_id"].map(dd.setups(sel)) + " · " + w["queue_type"].fillna("")
# default: one run per variant (or pair) and queue type, at the highest value of the other
# swept parameters (the most loaded case of a CBR sweep) and the lowest seed
others = [k for k in sel.varying if k not in ("variant", "pair", *dd.SERIES_PARAMS)]
order = w.assign(_seed=w["seed"].fillna(0))
for k in others:
    num = dd.as_number(order[k])
    order[f"_{k}"] = num if num is not None else order[k]
order = order.sort_values([f"_{k}" for k in others] + ["_seed"], ascending=[False] * len(others) + [True])
default = list(order.drop_duplicates("group")["run_id"].head(4))
labels = dict(zip(w["run_id"], w["setup"]))
c1, c2, c3 = st.columns([4, 2, 1])
# the choice is kept per scenario outside the widget (a widget's state is dropped when the
# scenario changes its options or another page is shown), so coming back finds it again
remembered = f"ts-chosen-{sel.scenario}"
kept = [r for r in st.session_state.get(remembered, default) if r in labels]
chosen = c1.multiselect("Runs to overlay", list(w["run_id"]), default=kept or default,
                        key=f"ts-runs-{sel.scenario}", format_func=lambda r: f"{labels[r]}  [{r[:8]}]")
st.session_state[remembered] = list(chosen)
bin_s = c2.select_slider("Throughput bin width (s)", [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0], value=0.5,
                         key="ts-bin")
panels = c3.toggle("Panels", value=False, key="ts-panels", help="One panel per run instead of overlaid lines.")
if not chosen:
    st.info("Choose one or more runs.")
    st.stop()
run_ids = tuple(chosen)
picked = w[w["run_id"].isin(run_ids)]

# name each run by what tells it apart from the other runs shown
parts = [k for k in ("variant", "pair", "queue_type", *others) if k in picked.columns and picked[k].nunique() > 1]
if picked["seed"].nunique() > 1:
    parts.append("seed")
short = {}
for _, r in picked.iterrows():
    bits = [(f"seed {int(r[k])}" if k == "seed" else (r[k] if k in ("variant", "pair", "queue_type") else f"{k}={r[k]}"))
            for k in parts]
    short[r["run_id"]] = " · ".join(bits) or labels[r["run_id"]]
if len(set(short.values())) < len(short):
    short = {r: f"{v} [{r[:6]}]" for r, v in short.items()}


def name_traces(df: pd.DataFrame, run_col: str, flow_col: str) -> pd.Series:
    """'run · flow', leaving out the run where one run is shown and the flow where it is
    already the run's name (one TCP flow per run, runs told apart by variant)."""
    run = df[run_col].map(short)
    if len(run_ids) == 1:
        return df[flow_col]
    flows_per_run = df.groupby(run_col)[flow_col].nunique()
    single = df[run_col].map(flows_per_run) == 1
    same = single & (df[flow_col] == df[run_col].map(picked.set_index("run_id").get("variant", pd.Series(dtype=object))))
    return run.where(same, run + " · " + df[flow_col])


def styled(fig, df: pd.DataFrame, run_col: str, variant_col: str) -> None:
    """Colour each trace by its variant (flow name, or the run's variant), dash by run: the
    same variant has the same colour on every page."""
    runs_shown = dd.natural_sorted(df[run_col].map(short))
    run_dash = {r: ui.DASHES[i % len(ui.DASHES)] for i, r in enumerate(runs_shown)}
    by_trace = df.drop_duplicates("trace").set_index("trace")
    colours = ui.colour_map(df[variant_col].dropna())
    for t in fig.data:
        if t.name in by_trace.index:
            row = by_trace.loc[t.name]
            t.line.color = colours.get(row[variant_col], ui.PALETTE[0])
            if len(run_ids) > 1 and not panels:
                t.line.dash = run_dash[short[row[run_col]]]


def facet(fig_kw: dict, df: pd.DataFrame, run_col: str) -> dict:
    if panels and len(run_ids) > 1:
        df["run"] = df[run_col].map(short)
        fig_kw.update(facet_row="run", height=260 * len(run_ids))
    return fig_kw


shown_seeds = sorted(int(x) for x in picked["seed"].dropna().unique())
ctx = ui.condition(sel, extra=f"{len(run_ids)} run{'s' if len(run_ids) != 1 else ''} shown, single runs (no averaging)"
                   + (f", seed{'s' if len(shown_seeds) != 1 else ''} {', '.join(map(str, shown_seeds))}" if shown_seeds else ""),
                   seeds_of_selection=False)
# one time range for the three charts: from 0 to the latest end of the runs shown
t_end = float(pd.to_numeric(sel.runs.set_index("run_id").loc[list(run_ids), "t_end"]).max())
x_range = [0, t_end]

# throughput per flow
tp = sel.store.throughput_series(run_ids, float(bin_s))
tp = tp[tp["name"].isin(sel.names)].copy()
if tp.empty:
    st.info("No deliveries of the selected flows in these runs.")
else:
    fl = tp.drop_duplicates(["run_id", "fid", "src_node", "src_port", "dst_node", "dst_port"]).copy()
    fl["flow"] = dd.flow_label(fl.assign(config=fl["run_id"]), ["config"])
    tp = tp.merge(fl[["run_id", "fid", "src_node", "src_port", "dst_node", "dst_port", "flow"]])
    tp["trace"] = name_traces(tp, "run_id", "flow")
    kw = facet(dict(height=420), tp, "run_id")
    fig = px.line(tp, x="t", y="kbps", color="trace", line_shape="hv", render_mode="svg",
                  labels={"t": "Time (s)", "kbps": "Throughput (kbit/s)", "trace": "Run · flow"},
                  title=f"Throughput per flow ({bin_s:g} s bins)", **{k: v for k, v in kw.items() if k != "height"})
    styled(fig, tp, "run_id", "name")
    fig.update_xaxes(range=x_range)
    ui.chart(fig, "throughput-series", key="ts-throughput", height=kw["height"], context=ctx)

# congestion window
tv = dd.sibling_runs(sel, run_ids, "tcpvar")
cw = sel.store.cwnd(tuple(tv["run_id"])) if not tv.empty else None
if cw is None or cw.empty:
    st.info("No cwnd_ trace for these runs (runs made by `tracekit run`/`sweep` have one; "
            "for your own traces ingest the `$tcp trace cwnd_` file with the same sim_id label).")
else:
    cw = cw.merge(tv.rename(columns={"run_id": "cwnd_run"}), left_on="run_id", right_on="cwnd_run")
    agents = sel.flows[["run_id", "fid", "name", "src_node", "src_port"]].rename(columns={"run_id": "packet_run_id"})
    agents = agents.assign(flow=dd.flow_label(agents.assign(config=agents["packet_run_id"]), ["config"]))
    cw = cw.merge(agents, on=["packet_run_id", "src_node", "src_port"], how="left")
    cw = cw[cw["name"].isna() | cw["name"].isin(sel.names)].copy()
    cw["flow"] = cw["flow"].fillna("agent " + cw["src_node"].astype(str) + "." + cw["src_port"].astype(str))
    # cwnd_ is logged when it changes: hold the last value to the end of the run
    ends = sel.runs.set_index("run_id")["t_end"]
    last = cw.sort_values("time").groupby(["packet_run_id", "flow"], as_index=False).tail(1).copy()
    last["time"] = last["packet_run_id"].map(ends)
    cw = pd.concat([cw, last[last["time"].notna()]], ignore_index=True).sort_values(["packet_run_id", "flow", "time"])
    cw["trace"] = name_traces(cw, "packet_run_id", "flow")
    kw = facet(dict(height=420), cw, "packet_run_id")
    cw["variant"] = cw["name"].fillna(cw["flow"])
    fig = px.line(cw, x="time", y="value", color="trace", line_shape="hv", render_mode="svg",
                  labels={"time": "Time (s)", "value": "Congestion window (packets)", "trace": "Run · flow"},
                  title="Congestion window (cwnd_) of each TCP flow", **{k: v for k, v in kw.items() if k != "height"})
    styled(fig, cw, "packet_run_id", "variant")
    fig.update_xaxes(range=x_range)
    ui.chart(fig, "cwnd-series", key="ts-cwnd", height=kw["height"], context=ctx)

# queue length
qm = dd.sibling_runs(sel, run_ids, "queue_monitor")
qs = sel.store.queue_samples(tuple(qm["run_id"])) if not qm.empty else None
if qs is None or qs.empty:
    st.info("No queue monitor trace for these runs.")
else:
    qs = qs.merge(qm.rename(columns={"run_id": "q_run"}), left_on="run_id", right_on="q_run")
    kinds = sorted(qs["sample_kind"].unique())
    kind = kinds[0]
    if len(kinds) > 1:
        kind = st.radio("Queue samples", kinds, horizontal=True, key="ts-qkind",
                        format_func=lambda k: {"event": "every change (event)", "periodic": "periodic averages"}.get(k, k))
    qs = qs[qs["sample_kind"] == kind].copy()
    qs["link"] = "link " + qs["from_node"].astype(str) + "→" + qs["to_node"].astype(str)
    qs["trace"] = qs["packet_run_id"].map(short) if len(run_ids) > 1 else qs["link"]
    if len(run_ids) > 1 and qs["link"].nunique() > 1:
        qs["trace"] = qs["trace"] + " · " + qs["link"]
    kw = facet(dict(height=420), qs, "packet_run_id")
    qs["variant"] = qs["packet_run_id"].map(dd.setups(sel))
    fig = px.line(qs, x="time", y="pkts", color="trace", line_shape="hv", render_mode="svg",
                  labels={"time": "Time (s)", "pkts": "Queue length (packets)", "trace": "Run · link"},
                  title="Queue length at the monitored link(s) " + ", ".join(sorted(qs["link"].str[5:].unique())),
                  **{k: v for k, v in kw.items() if k != "height"})
    fig.update_traces(opacity=0.8)
    styled(fig, qs, "packet_run_id", "variant")
    fig.update_xaxes(range=x_range)
    ui.chart(fig, "queue-series", key="ts-queue", height=kw["height"], context=ctx)

with st.expander("The runs shown"):
    ui.table(picked.assign(shown_as=picked["run_id"].map(short))[["run_id", "shown_as", "setup", "seed", "sim_id"]],
             "timeseries-runs", key="ts-table")
