"""SQL: one read-only query over every view (tracekit.query.run_query on a connect()ed
connection: it cannot write, read outside the store or change the views)."""
import plotly.express as px
import streamlit as st

import dash_data as dd
import dash_ui as ui
from tracekit.errors import TracekitError
from tracekit import catalogue

MAX_ROWS = 100_000
sel: dd.Selection = st.session_state["tk_selection"]
st.title("SQL")
st.caption("One SELECT / WITH / EXPLAIN statement over the views (the same as `tracekit sql`). "
           "The store is read-only here.")

with st.expander("Views, their columns and definitions (sql/catalogue.toml)"):
    for v in catalogue.views().values():
        st.markdown(f"**{v.name}**: {v.description}")
        st.markdown("\n".join(f"- `{c.name}`: {c.description}" for c in v.columns))

default = ("SELECT name, count(*) AS flows, avg(throughput_kbps) AS mean_throughput_kbps,\n"
           "       avg(p95_delay_ms) AS mean_p95_delay_ms\n"
           "FROM flow_stats\nGROUP BY name\nORDER BY mean_throughput_kbps DESC")
with st.form("sql-form"):
    query = st.text_area("Query", value=st.session_state.get("sql-last", default), height=180, key="sql-text")
    run = st.form_submit_button("Run", type="primary")
if run:
    st.session_state["sql-last"] = query
query = st.session_state.get("sql-last", default)


try:
    with st.spinner("Running..."):
        df, cut = sel.store.user_query(query, MAX_ROWS)
except TracekitError as e:
    st.error(str(e))
    st.stop()

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
