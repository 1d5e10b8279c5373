"""Display helpers shared by the pages: every chart through `chart` (plotly, image download
in the format chosen in the sidebar), every table through `table` (sortable, CSV)."""
from __future__ import annotations

import re

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

from dash_data import Selection, natural_sorted
from tracekit.db.catalogue import Metric
from tracekit.analysis.compare import Comparison

IMAGE_FORMATS = {"PNG": "png", "SVG": "svg"}
# plotly's qualitative palette
PALETTE = ["#636EFA", "#EF553B", "#00CC96", "#AB63FA", "#FFA15A", "#19D3F3", "#FF6692",
           "#B6E880", "#FF97FF", "#FECB52"]
# explicit colours: Streamlit's theme would otherwise give neighbouring traces near-identical shades
px.defaults.color_discrete_sequence = PALETTE
# One colour per variant, routing protocol and queue discipline on every page (and in the
# exported images): the names the bundled scenarios use get a fixed colour; any other name
# (flow labels of the user's own traces) the first free colour in the order of every name in
# the store (see colours()), so it too keeps its colour from page to page.
FIXED_COLOURS = {
    "Tahoe": "#636EFA", "Reno": "#EF553B", "Newreno": "#00CC96", "Vegas": "#AB63FA", "Sack": "#FFA15A",
    "Sack1": "#FFA15A", "Fack": "#19D3F3", "CBR": "#7F7F7F",
    "AODV": "#636EFA", "DSDV": "#EF553B", "DSR": "#00CC96",
    "DropTail": "#1F77B4", "RED": "#D62728",
}
EXTRA = ["#FF6692", "#B6E880", "#FF97FF", "#FECB52", "#8C564B", "#E377C2", "#BCBD22", "#17BECF",
         "#9467BD", "#2CA02C", "#FF7F0E", "#1F77B4", "#D62728", "#7F7F7F"]
DASHES = ["solid", "dash", "dot", "dashdot", "longdash", "longdashdot"]


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")[:80] or "chart"


def base_name(name: str) -> str:
    """The variant a shown name stands for: 'Reno (fid 2)' -> 'Reno', 'Reno · RED' -> 'Reno'."""
    return re.split(r" \(fid | · ", str(name), maxsplit=1)[0]


def colours(names=()) -> dict[str, str]:
    """The colour of every name of the store (flow names, queue types, routing protocols;
    computed once per session from the selection's store) and of `names`."""
    sel = st.session_state.get("tk_selection")
    known: list = []
    if sel is not None:
        known = sel.store.series_names()
    out = dict(FIXED_COLOURS)
    free = [c for c in EXTRA + PALETTE if c not in out.values()] + PALETTE
    i = 0
    for n in [*known, *natural_sorted(base_name(x) for x in names)]:
        if n not in out:
            out[n] = free[i % len(free)]
            i += 1
    return out


def colour_of(name: str) -> str:
    m = colours([name])
    return m.get(str(name)) or m[base_name(name)]


def colour_map(names) -> dict[str, str]:
    """{shown name: colour}: the colour of the variant (or protocol) each name stands for."""
    names = [n for n in dict.fromkeys(names) if n is not None and n == n]
    m = colours(names)
    return {n: m.get(str(n)) or m.get(base_name(n), PALETTE[0]) for n in names}


def dash_map(names) -> dict[str, str]:
    """Line styles telling apart names that share a colour (two Reno flows of one run)."""
    out, seen = {}, {}
    for n in natural_sorted(names):
        b = base_name(n)
        out[n] = DASHES[seen.get(b, 0) % len(DASHES)]
        seen[b] = seen.get(b, 0) + 1
    return out


def ci_columns(df: pd.DataFrame, metric: Metric, mean: str = "mean", half: str = "ci95_half_width") -> pd.DataFrame:
    """The whiskers of a 95% CI as plotly wants them, clipped to the metric's range (a
    delivery ratio's interval ends at 1, a throughput's at 0): ci_plus, ci_minus (distances
    from the mean), ci_low, ci_high."""
    m, h = df[mean].astype(float), df[half].astype(float)
    lo, hi = m - h, m + h
    if metric.min is not None:
        lo = lo.clip(lower=metric.min)
    if metric.max is not None:
        hi = hi.clip(upper=metric.max)
    return df.assign(ci_low=lo, ci_high=hi, ci_plus=hi - m, ci_minus=m - lo)


def ci_note(n_runs, metric: Metric | None = None) -> str:
    """What the whiskers are, for a caption or a chart's subtitle: '95% CI of the mean over
    n seeds', with 'wide interval' when few seeds make Student's t large."""
    ns = sorted({int(n) for n in pd.Series(n_runs).dropna() if int(n) > 0})
    if not ns or max(ns) < 2:
        return "single runs: no confidence interval"
    n_text = f"n = {ns[0]}" if len(ns) == 1 else f"n = {ns[0]} to {ns[-1]}"
    text = f"whiskers: 95% CI of the mean (Student t), {n_text} seeds"
    if ns[0] < 5:
        text += f" (n = {ns[0]}: wide interval)"
    if metric is not None and (metric.min is not None or metric.max is not None):
        rng = f"[{'' if metric.min is None else f'{metric.min:g}'}, {'' if metric.max is None else f'{metric.max:g}'}]"
        text += f", clipped to {rng.replace('[, ', '(-inf, ').replace(', ]', ', inf)')}"
    return text


def condition(sel: Selection, pinned: dict | None = None, extra: str = "", seeds_of_selection: bool = True) -> str:
    """What a chart shows, for its subtitle (and so the exported image): scenario, the
    pinned and fixed parameters, the seeds."""
    parts = [f"scenario {sel.scenario or '(none)'}"]
    fixed = [f"{k}={v}" for k, v in (pinned or {}).items()]
    for k in sel.params:
        if k not in sel.varying and k in sel.wired.columns:
            vals = natural_sorted(sel.wired[k])
            if len(vals) == 1 and k not in ("trace_format",):
                fixed.append(f"{k}={vals[0]}")
    if fixed:
        parts.append(", ".join(fixed[:4]) + (f" (+{len(fixed) - 4} more fixed)" if len(fixed) > 4 else ""))
    seeds = sorted(int(s) for s in sel.wired["seed"].dropna().unique())
    second = []
    if not seeds_of_selection:
        pass
    elif sel.seed is not None:
        second.append(f"seed {sel.seed} only")
    elif seeds:
        second.append(f"{len(seeds)} seed{'s' if len(seeds) != 1 else ''} ({_ranges(seeds)})")
    if extra:
        second.append(extra)
    return "; ".join(parts) + ("<br>" + "; ".join(second) if second else "")


def _ranges(seeds: list[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'."""
    out, start = [], None
    for i, s in enumerate(seeds):
        if start is None:
            start = s
        if i + 1 == len(seeds) or seeds[i + 1] != s + 1:
            out.append(str(start) if start == s else f"{start}-{s}")
            start = None
    return ", ".join(out)


def _same_traces(fig: go.Figure) -> list[list[str]]:
    """Names of line/marker traces that draw exactly the same points (one hides the others)."""
    groups: dict = {}
    for t in fig.data:
        if t.type != "scatter" or getattr(t, "fill", None) == "toself" or not t.name or t.x is None or t.y is None:
            continue
        if len(t.x) == 0 or (len(t.x) < 2 and t.showlegend is False):
            continue
        ys = [round(float(v), 9) if v is not None and v == v else float("nan") for v in t.y]
        key = (tuple(sorted(zip(map(str, t.x), ys), key=str)), getattr(t, "xaxis", None), getattr(t, "yaxis", None))
        groups.setdefault(key, []).append(t.name)
    return [g for g in groups.values() if len(set(g)) > 1]


def mark_identical(fig: go.Figure) -> list[list[str]]:
    """Traces drawing the same points are told apart instead of hidden under each other: each
    gets ' (= other)' in its legend name and its own dash or marker; returns the groups."""
    same = _same_traces(fig)
    if not same:
        return []
    where = {n: g for g in same for n in g}
    k: dict = {}
    for t in fig.data:
        g = where.get(t.name)
        if g is None or t.type != "scatter" or getattr(t, "fill", None) == "toself":
            continue
        i = k.setdefault(tuple(g), 0)
        k[tuple(g)] = i + 1
        others = [x for x in g if x != t.name]
        t.name = f"{t.name} (= {', '.join(others)})"
        if t.line is not None:
            t.line.dash = DASHES[i % len(DASHES)]
            t.line.width = max(1.5, 4 - 1.2 * i)
        if t.marker is not None:
            t.marker.symbol = ["circle", "x", "diamond-open", "square-open", "triangle-up-open", "cross"][i % 6]
    return same


def _wrap(text: str, width: int) -> list[str]:
    """A subtitle line cut into lines of at most `width` characters at '; ' and ', ' (plotly
    does not wrap titles: a long one ran off the chart)."""
    out, cur = [], ""
    for piece in re.split(r"(?<=[;,]) ", text):
        if cur and len(cur) + 1 + len(piece) > width:
            out.append(cur)
            cur = piece
        else:
            cur = f"{cur} {piece}" if cur else piece
    return out + ([cur] if cur else [])


def chart(fig: go.Figure, name: str, *, key: str | None = None, height: int | None = None,
          context: str = "", wrap: int = 110) -> None:
    """A plotly chart whose modebar camera saves `name`.png or .svg (sidebar choice). The
    chart's title gets `context` as a second line (what the exported image shows: scenario,
    condition, seeds, what the whiskers are); the title sits below the modebar's strip, so
    the toolbar never covers it. Traces drawing the same points are marked as identical."""
    fmt = IMAGE_FORMATS.get(st.session_state.get("image_format") or "PNG", "png")
    title = fig.layout.title.text or ""
    lines = [w for part in context.split("<br>") for w in _wrap(part, wrap)] if context else []
    if lines:
        title = f"{title}<br>" + "<br>".join(f"<sup>{line}</sup>" for line in lines)
    total = (height or fig.layout.height or 450) + 17 * len(lines)
    # the title well below the figure's top: the modebar's strip (26 px, the whole width of a narrow chart) stays clear
    fig.update_layout(title=dict(text=title, x=0, xanchor="left", xref="container", y=1 - 50 / total,
                                 yref="container", yanchor="top", pad=dict(l=8)),
                      margin=dict(l=10, r=10, t=90 + 17 * len(lines), b=10), height=total,
                      legend_title_text=fig.layout.legend.title.text)
    same = mark_identical(fig)
    opts = {"format": fmt, "filename": slug(name)}
    if fmt == "png":
        opts["scale"] = 2
    st.plotly_chart(fig, config={"displaylogo": False, "toImageButtonOptions": opts,
                                 "displayModeBar": True},
                    key=key or f"chart-{slug(name)}")
    for g in same:
        st.caption("Identical series (drawn on top of each other, told apart by line style or marker): " + " = ".join(g) + ".")


def table(df: pd.DataFrame, name: str, *, key: str | None = None, style=None, **kw) -> None:
    """A sortable table and a CSV download of exactly what it shows; `style` (a function of
    a pandas Styler) colours cells."""
    st.dataframe(style(df.style) if style else df, hide_index=True, key=key, **kw)
    st.download_button(f"Download {name}.csv", data=lambda: df.to_csv(index=False).encode(),
                       file_name=f"{slug(name)}.csv", mime="text/csv", key=f"csv-{key or slug(name)}",
                       icon=":material/download:")


def fmt_value(metric: Metric, v) -> str:
    """A value as the pages print it: fractions (metrics bounded by 1) to 4 decimals."""
    if v is None or pd.isna(v):
        return "–"
    if metric.max is not None and metric.max <= 1:
        return f"{v:.4f}"
    return f"{v:,.1f}"


def empty_store(status) -> None:
    """What to type to fill a missing or empty store."""
    d = status.data_dir
    st.title("tracekit: no runs yet")
    if status.problem:
        st.warning(status.problem)
    else:
        st.info(f"The store `{d}` {'holds no runs yet' if (d / 'tracekit-store.json').exists() else 'does not exist yet'}. "
                "Fill it with any of these, then reload this page.")
    st.markdown("**Run one bundled ns-2 scenario** (`tracekit scenarios` lists them and their parameters):")
    st.code(f"tracekit run cbr-variants --set variant=Vegas --set cbr_rate_mbps=5 --seed 1 --data {d}", language="bash")
    st.markdown("**Sweep a grid** of parameters and seeds, in parallel (what the Compare and Sweep pages are for):")
    st.code(f"tracekit sweep cbr-variants --grid variant=Tahoe,Reno,Newreno,Vegas \\\n"
            f"    --grid cbr_rate_mbps=1,3,5,7,9 --seeds 1-3 --set duration=5 -j 2 --data {d}\n"
            f"tracekit sweep reno-vs-vegas --grid queue=DropTail,RED --seeds 1-3 --data {d}\n"
            f"tracekit sweep --experiment cbr-exp2 --data {d}", language="bash")
    st.markdown("**Ingest traces you already have** (wired and wireless packet traces, `cwnd_` traces, queue monitors):")
    st.code(f"tracekit ingest out.tr cwnd.tr queue.tr --label variant=Reno --flow-label 1=Reno --data {d}",
            language="bash")
    st.caption("Then start this dashboard again, or just reload the page: "
               f"`tracekit dashboard --data {d}`")


def pin_params(sel: Selection, keep: tuple[str, ...], page: str) -> dict[str, str]:
    """For each parameter that varies among the selected runs but is not shown on an axis
    (keep), a selectbox fixing it to one value; returns {param: value}."""
    pinned = {}
    others = [k for k in sel.varying if k not in keep]
    if not others:
        return pinned
    cols = st.columns(min(len(others), 4))
    for i, k in enumerate(others):
        vals = natural_sorted(sel.wired[k])
        pinned[k] = cols[i % len(cols)].selectbox(f"at {k}", vals, key=f"{page}-pin-{k}")
    return pinned


def apply_pins(df: pd.DataFrame, pinned: dict[str, str]) -> pd.DataFrame:
    for k, v in pinned.items():
        if k in df.columns:
            df = df[df[k] == v]
    return df


def verdicts(comp: Comparison | str, key: str, *, per_title: str | None = None) -> None:
    """tracekit.analysis.compare's verdicts: one line each (a table when there are several, one per
    value of the --per labels), and the note on loss-based variants where it applies."""
    if isinstance(comp, str):
        st.caption(f"No verdict: {comp}")
        return
    vs = comp.verdicts
    notes = sorted({v.note for v in vs if v.note})
    if comp.pooled_note:
        st.warning(comp.pooled_note.replace("--per", "one verdict per value").replace("--where", "the sidebar"))
    if len(vs) == 1 or not comp.per:
        for v in vs:
            st.markdown(f"**Verdict** ({v.metric.title}{', ' + v.per_text if v.per else ''}): {v.text}.")
    else:
        rows = pd.DataFrame([{**dict(v.per), "verdict": v.text, "best": " = ".join(v.best),
                              "runner_up": v.runner_up, "p_value": v.p_value} for v in vs])
        st.markdown(f"**Verdicts** ({vs[0].metric.title}, by {comp.factor}, one per {per_title or ', '.join(comp.per)}):\n"
                    + "\n".join(f"- {v.per_text}: {v.text}" for v in vs))
        with st.expander("The verdicts as a table"):
            table(rows, f"verdicts-{key}", key=f"verdicts-{key}")
    for n in notes:
        st.info(n)
    flows = comp.flow_filter if len(comp.flow_filter) <= 60 else "the flow names chosen in the sidebar"
    st.caption(f"Verdicts (tracekit.analysis.compare): each run counts once; groups by {comp.factor}; flows: {flows}. "
               "A difference is claimed only when Welch's t-test over the runs gives p < 0.05.")


def verdict_line(comp: Comparison | str, metric: str) -> None:
    """The verdict on one metric of a comparison, as a caption under its chart."""
    if isinstance(comp, str):
        st.caption(f"No verdict: {comp}")
        return
    for v in comp.verdicts:
        if v.metric.name == metric:
            st.caption(f"Verdict{' at ' + v.per_text if v.per else ''}: {v.text}." + (f" Note: {v.note}." if v.note else ""))


# ---------------------------------------------------------------------------------------
# papers (the Papers page)

# a claim's (or a paper value's) status: Streamlit badge colour and the same colour for charts and cells
STATUS_BADGE = {"reproduced": "green", "not reproduced": "red", "untestable": "gray", "paper implausible": "orange"}
STATUS_COLOUR = {"reproduced": "#21a366", "not reproduced": "#e0393e", "untestable": "#808495",
                 "paper implausible": "#ff8c00"}
OURS_COLOUR = PALETTE[0]
PAPER_COLOUR = "#262730"


def md_escape(text) -> str:
    """Text shown as itself in st.markdown (no emphasis, links, LaTeX or HTML from its characters)."""
    return re.sub(r"([\\`*_{}\[\]()<>#+!|$~:-])", r"\\\1", str(text))


def status_badge(status: str | None, n: int | None = None) -> str:
    """A status as a coloured Streamlit badge (markdown), with a count if given."""
    if not status:
        return ""
    text = status if n is None else f"{n} {status}"
    return f":{STATUS_BADGE.get(status, 'gray')}-badge[{text}]"


def status_cells(styler, column: str = "status"):
    """Colour a table's status column by status (for `table(style=...)`)."""
    def css(v):
        c = STATUS_COLOUR.get(v) if isinstance(v, str) else None
        return f"background-color: {c}; color: white" if c else ""
    return styler.map(css, subset=[column])


def paper_chart(rows: pd.DataFrame, title: str, y_title: str) -> go.Figure:
    """One paper table beside ours: per row (x: its condition without the parts the rows
    share), our mean with its 95 % CI as error bars, the paper's value as a diamond, a paper
    range [low, high] as a band from low to high; a paper value outside its physical bound in orange."""
    d = rows.reset_index(drop=True)
    x = d["shown_condition"].astype(str)
    keys = {c.split("=", 1)[0] for s in x for c in s.split(", ") if "=" in c}
    single_key = len(keys) == 1 and all(", " not in s and "=" in s for s in x)
    if single_key:              # one label varies: its values on the axis, the label as its title
        x = x.str.split("=", n=1).str[1]
    implausible = d["status"] == "paper implausible"
    fig = go.Figure()
    rng = d["paper_low"] < d["paper_high"]
    for bad in (False, True):      # a range: a thick translucent bar from low to high (None separates them)
        sub = rng & (implausible == bad)
        if sub.any():
            r = d[sub]
            bx, by, bc = [], [], []
            for xv, lo, hi, note in zip(x[sub], r["paper_low"], r["paper_high"], r["note"].fillna("")):
                bx += [xv, xv, None]
                by += [lo, hi, None]
                bc += [[lo, hi, note]] * 2 + [[None, None, ""]]
            colour = STATUS_COLOUR["paper implausible"] if bad else PAPER_COLOUR
            fig.add_trace(go.Scatter(x=bx, y=by, mode="lines+markers", connectgaps=False, opacity=0.4,
                                     name="paper range" + (" (outside its physical bound)" if bad else ""),
                                     line=dict(width=16, color=colour), marker=dict(symbol="line-ew-open", size=18,
                                                                                     color=colour),
                                     customdata=bc, hovertemplate="paper: %{customdata[0]:.4g} to "
                                                                  "%{customdata[1]:.4g}<br>%{customdata[2]}<extra></extra>"))
    one = d["paper_low"].notna() & ~rng
    for bad, name, colour, symbol in ((False, "paper", PAPER_COLOUR, "diamond-open"),
                                      (True, "paper (outside its physical bound)", STATUS_COLOUR["paper implausible"],
                                       "x")):
        sub = one & (implausible == bad)
        if sub.any():
            fig.add_trace(go.Scatter(x=x[sub], y=d.loc[sub, "paper_low"], mode="markers", name=name,
                                     marker=dict(symbol=symbol, size=14, color=colour, line=dict(width=2, color=colour)),
                                     customdata=d.loc[sub, ["note"]].fillna("").to_numpy(),
                                     hovertemplate="paper: %{y:.4g}<br>%{customdata[0]}<extra></extra>"))
    ours = d["ours"].notna()
    if ours.any():
        o = d[ours]
        fig.add_trace(go.Scatter(x=x[ours], y=o["ours"], mode="markers", name="ours (mean, 95% CI)",
                                 marker=dict(size=10, color=OURS_COLOUR),
                                 error_y=dict(type="data", array=o["ci95"].fillna(0).tolist(), visible=True,
                                              thickness=2, width=8),
                                 customdata=o[["ci95", "n_runs", "ratio"]].to_numpy(),
                                 hovertemplate="ours: %{y:.4g} ± %{customdata[0]:.3g} (95% CI, %{customdata[1]} runs)"
                                               "<br>ours / paper: %{customdata[2]:.2f}<extra></extra>"))
    fig.update_layout(title=title, yaxis_title=y_title, xaxis_title=keys.pop() if single_key else "condition",
                      xaxis_type="category", legend_title_text="")
    fig.update_xaxes(categoryorder="array", categoryarray=list(dict.fromkeys(x)))
    if not (d[["paper_low", "ours_low"]] < 0).any().any():
        fig.update_yaxes(rangemode="tozero")
    return fig
