"""Fairness: per pairing of variants, each flow's throughput and Jain's index against the
swept parameter, with 95% confidence intervals across seeds (replication_stats)."""
import plotly.express as px
import streamlit as st

import dash_data as dd
import dash_ui as ui
from tracekit.db import catalogue

sel: dd.Selection = st.session_state["tk_selection"]
st.title("Fairness")
if sel.wired.empty:
    st.info("No runs match the sidebar's filters.")
    st.stop()

numeric = [k for k in sel.varying if k not in ("variant", "pair", *dd.SERIES_PARAMS) and dd.as_number(sel.wired[k]) is not None]
xk = None
if numeric:
    default_x = "cbr_rate_mbps" if "cbr_rate_mbps" in numeric else numeric[0]
    xk = st.selectbox("Swept parameter (x axis)", numeric, index=numeric.index(default_x), key="fair-x")
pinned = ui.pin_params(sel, keep=tuple(k for k in (xk, "variant", "pair", *dd.SERIES_PARAMS) if k), page="fair")
rows, splitters = dd.metric_rows(sel)
rows = ui.apply_pins(rows, pinned)
if splitters:
    st.warning(f"replication_stats splits seeds into separate configurations (labels {', '.join(splitters)}): "
               "points below are single runs without confidence intervals.")
rows = rows.rename(columns={"setup": "pairing"})
# a pairing is what the TCP flows of a run are: its pair or variant label, else the names of its
# TCP flows. A run with no such label and fewer than two TCP flows (a MANET run: one TCP flow
# among CBR flows) pairs nothing: its flows are shown without a pairing.
_fs = sel.store.flow_stats()
_n_tcp = _fs[_fs["run_id"].isin(sel.run_ids) & (_fs["ptype"] == "tcp")].groupby("run_id").size()
paired = bool((_n_tcp >= 2).any()) or any(
    k in sel.wired.columns and sel.wired[k].map(lambda v: isinstance(v, str)).any() for k in ("pair", "variant"))
if not paired:
    rows["pairing"] = ""
rows["x"] = dd.as_number(rows[xk]) if xk else rows["pairing"]
rows["queue"] = rows["queue_type"].fillna("")
x_title = dd.param_axis(sel.scenario, xk) if xk else "Pairing"
facet = "pairing" if rows["pairing"].nunique() > 1 and xk else None
multi_q = rows["queue"].nunique() > 1
mode = "markers" if splitters or not xk else "lines+markers"

tp = rows[(rows["metric"] == "throughput_kbps") & rows["mean"].notna()].sort_values(["pairing", "label", "queue", "config_tag", "x"])
if tp.empty:
    st.info("No throughput for the selected flows.")
else:
    tp = tp.assign(flow=tp["label"])    # the queue (or routing), if several, is the dash or pattern
    tp = ui.ci_columns(tp, catalogue.metric("throughput_kbps"))
    pairings = dd.natural_sorted(tp["pairing"])
    hover = {"n_runs": True, "config": True, "ci_low": ":.4g", "ci_high": ":.4g", "ci_plus": False, "ci_minus": False}
    labels = {"x": x_title, "mean": "Throughput (kbit/s)", "flow": "Flow", "pairing": "Pairing",
              "ci_low": "95% CI from", "ci_high": "95% CI to", "queue": sel.series_title}
    title = "Each flow's throughput" + ("" if not paired else f": {pairings[0]}" if len(pairings) == 1 else
                                        f" in each of the {len(pairings)} pairings")
    if xk:
        fig = px.line(tp, x="x", y="mean", color="flow", error_y="ci_plus", error_y_minus="ci_minus", markers=True,
                      facet_col=facet, facet_col_wrap=2, line_dash="queue" if multi_q else None,
                      color_discrete_map=ui.colour_map(tp["flow"]), hover_data=hover, labels=labels, title=title)
        fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))
        fig.update_traces(mode=mode)
    elif paired:   # no swept parameter: the pairings on the x axis, each flow a bar
        fig = px.bar(tp, x="pairing", y="mean", color="flow", error_y="ci_plus", error_y_minus="ci_minus",
                     barmode="group", pattern_shape="queue" if multi_q else None,
                     color_discrete_map=ui.colour_map(tp["flow"]), hover_data=hover, labels=labels, title=title,
                     category_orders={"pairing": pairings})
    else:   # nothing paired, nothing swept: the flows on the x axis, a bar per queue (or routing)
        colour = "queue" if multi_q else "flow"
        fig = px.bar(tp, x="flow", y="mean", color=colour, error_y="ci_plus", error_y_minus="ci_minus",
                     barmode="group", color_discrete_map=ui.colour_map(tp[colour]), hover_data=hover,
                     labels=labels, title=title, category_orders={"flow": dd.natural_sorted(tp["flow"])})
    ui.chart(fig, "fairness-throughput", key="fair-throughput",
             height=400 if not facet else 320 * ((tp["pairing"].nunique() + 1) // 2),
             context=ui.condition(sel, pinned, ui.ci_note(tp["n_runs"], catalogue.metric("throughput_kbps"))
                                  if sel.seed is None else ""))

jn = rows[(rows["metric"] == "jain_index") & rows["mean"].notna()].sort_values(["pairing", "queue", "config_tag", "x"])
if jn.empty:
    st.info("Jain's index needs two or more TCP flows per run; the selected runs have fewer "
            "(try the cbr-fairness or reno-vs-vegas scenario).")
else:
    jn = jn.assign(line=jn["pairing"] + (" · " + jn["queue"] if multi_q else ""))
    jn = ui.ci_columns(jn, catalogue.metric("jain_index"))
    fig = px.line(jn, x="x", y="mean", color="line", error_y="ci_plus", error_y_minus="ci_minus", markers=True,
                  hover_data={"n_runs": True, "config": True, "ci_low": ":.4g", "ci_high": ":.4g", "ci_plus": False,
                              "ci_minus": False},
                  labels={"x": x_title, "mean": "Jain's fairness index (0 to 1)", "line": "Pairing",
                          "ci_low": "95% CI from", "ci_high": "95% CI to"},
                  title="Jain's fairness index of the TCP flows")
    fig.update_yaxes(range=[0, 1.05])
    fig.update_traces(mode=mode)
    ui.chart(fig, "fairness-jain", key="fair-jain", height=400,
             context=ui.condition(sel, pinned, ui.ci_note(jn["n_runs"], catalogue.metric("jain_index"))
                                  if sel.seed is None else ""))

# verdicts: which flow of a pairing gets more (throughput by flow name), and which pairing is
# fairer (Jain's index by pair), at each value of the swept parameter
per = [k for k in ("pair", sel.series_param, xk) if k and (k != "pair" or "pair" in sel.varying)]
st.markdown("##### Which flow gets more")
ui.verdicts(sel.compare("name", ["throughput_kbps"], per, pinned), "fair-throughput",
            per_title=", ".join(per) if per else None)
if "pair" in sel.varying:
    st.markdown("##### Which pairing is fairer")
    ui.verdicts(sel.compare("pair", ["jain_index"], [k for k in per if k != "pair"], pinned), "fair-jain",
                per_title=xk)

cols = ["pairing", "label", "queue", "x", "metric", "mean", "ci95_half_width", "n_runs", "seeds", "config"]
cols = [c for c in cols if (c != "pairing" or paired) and (c != "x" or xk)]
show = rows[rows["metric"].isin(["throughput_kbps", "jain_index"]) & rows["mean"].notna()][cols].rename(
    columns={"label": "flow", "x": xk or "x"})
ui.table(show, "fairness", key="fair-table")
