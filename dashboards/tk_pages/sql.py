"""SQL: one read-only query over every view, on its own short-lived connection
(tracekit.db.query.QueryRun: it cannot write, read outside the store or change the views, and
no other session sees it or waits for it), with a timeout and a Cancel button."""
import time

import pandas as pd
import plotly.express as px
import streamlit as st

import dash_data as dd
import dash_ui as ui
from tracekit.core.errors import TracekitError
from tracekit.db import catalogue
from tracekit.db.query import default_timeout_s

MAX_ROWS = 100_000
sel: dd.Selection = st.session_state["tk_selection"]
st.title("SQL")
st.caption("One SELECT / WITH / EXPLAIN statement over the views (the same as `tracekit sql`). "
           "The store is read-only here.")

st.info("The sidebar's filters (scenario, variants, parameters, seeds) do **not** apply here: a query sees every "
        "run of the store. Filter in the query: `flow_stats` has no scenario column, so join `runs` on `run_id` for it "
        "(and for the seed and the labels, `labels['variant']`), as the example does.", icon=":material/filter_alt_off:")

VIEWS = catalogue.views()
st.markdown("##### Views and their columns")
vc1, vc2 = st.columns([1, 2])
with vc1:
    st.dataframe(pd.DataFrame({"view": list(VIEWS), "columns": [len(v.columns) for v in VIEWS.values()]}),
                 hide_index=True, height=300, key="sql-views")
with vc2:
    pick = st.selectbox("Columns of", list(VIEWS), index=list(VIEWS).index("flow_stats") if "flow_stats" in VIEWS else 0,
                        key="sql-view")
    st.caption(VIEWS[pick].description)
    st.dataframe(pd.DataFrame([{"column": c.name, "meaning": c.description} for c in VIEWS[pick].columns]),
                 hide_index=True, height=260, key="sql-view-columns")
with st.expander("Every view with its columns and definitions (sql/catalogue.toml)"):
    for v in VIEWS.values():
        st.markdown(f"**{v.name}**: {v.description}")
        st.markdown("\n".join(f"- `{c.name}`: {c.description}" for c in v.columns))

scen = (sel.scenario or "").replace("'", "''")
default = ("-- flow_stats per flow name in one scenario: flow_stats has no scenario column, runs has it\n"
           "SELECT f.name, count(*) AS flows, avg(f.throughput_kbps) AS mean_throughput_kbps,\n"
           "       avg(f.p95_delay_ms) AS mean_p95_delay_ms\n"
           "FROM flow_stats f JOIN runs r USING (run_id)\n"
           + (f"WHERE r.scenario = '{scen}'\n" if sel.scenario else "WHERE r.scenario IS NULL\n")
           + "GROUP BY f.name\nORDER BY mean_throughput_kbps DESC")
try:
    default_timeout = default_timeout_s()
except TracekitError:
    default_timeout = 60.0
with st.form("sql-form"):
    query = st.text_area("Query", value=st.session_state.get("sql-last", default), height=180, key="sql-text")
    timeout_s = st.number_input("Timeout (s), 0 = none", min_value=0.0, max_value=86_400.0,
                                value=float(default_timeout), step=10.0, key="sql-timeout")
    run = st.form_submit_button("Run", type="primary")
if run:
    st.session_state["sql-last"] = query
    st.session_state.pop("sql-cancelled", None)
query = st.session_state.get("sql-last", default)

# Cancel: its click reruns the page, which stops the run below (its `finally` interrupts the
# query); this run then leaves the query alone until Run is pressed again.
cancel_slot = st.empty()
if cancel_slot.button("Cancel", key="sql-cancel"):
    st.session_state["sql-cancelled"] = query
if st.session_state.get("sql-cancelled") == query:
    cancel_slot.empty()
    st.warning("Query cancelled. Press Run to run it again.")
    st.stop()

result = sel.store.user_query_done(query, MAX_ROWS)
if result is None:
    job = sel.store.start_user_query(query, MAX_ROWS, float(timeout_s))
    status = st.empty()
    t0 = time.monotonic()
    try:
        # a rerun (Cancel, Run, another widget) or the session ending stops this loop at
        # its next st call
        while not job.wait(0.25):
            status.caption(f"Running... {time.monotonic() - t0:.0f} s")
    finally:
        job.cancel()                      # nothing if it has ended
    status.empty()
    if job.error is not None:
        cancel_slot.empty()
        st.error(str(job.error))
        st.stop()
    result = job.result
cancel_slot.empty()
df, cut = result

st.caption(f"{len(df)} rows" + (f" (cut at {MAX_ROWS})" if cut else ""))
ui.table(df, "query-result", key="sql-result")
if df.empty or len(df.columns) < 2:
    st.stop()

st.subheader("Quick chart")
numeric = [c for c in df.columns if str(df[c].dtype).startswith(("int", "uint", "float", "Int", "UInt", "Float"))]
if not numeric:
    st.info("No numeric column to plot.")
    st.stop()
c = st.columns(4)
kind = c[0].selectbox("Chart", ["bar", "line", "scatter"], key="sql-kind")
x = c[1].selectbox("x", list(df.columns), key="sql-x")
ys = [col for col in numeric if col != x] or numeric
y = c[2].selectbox("y", ys, key="sql-y")
colour = c[3].selectbox("colour", ["(none)"] + [col for col in df.columns if col not in (x, y)], key="sql-colour")
plot = df.head(20_000)
kw = dict(x=x, y=y, color=None if colour == "(none)" else colour, title=f"{y} by {x}")
fig = {"bar": px.bar, "line": px.line, "scatter": px.scatter}[kind](plot, **kw)
fig.update_layout(xaxis_title=x, yaxis_title=y)
ui.chart(fig, "query-chart", key="sql-chart", height=420)
st.caption("Axis titles are the column names: name columns with their unit (e.g. `_kbps`, `_ms`).")
