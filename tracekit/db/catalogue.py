"""The metric catalogue (sql/catalogue.toml): the one list of metrics, with what each means,
and the columns of every view.

Everything that shows, ranks or aggregates a metric (the CLI, the dashboard, run_metrics and
replication_stats through the `metric_catalogue` table, the docs) reads it from here, so a
metric is added in one place; tests check every view's columns against `views()`. The file is
data; this module only loads and checks it.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tracekit.core.errors import TracekitError
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB is imported where it is used, not when this module is
    import duckdb

LEVELS = ("flow", "run")
_KEYS = {"title", "unit", "higher_is_better", "min", "max", "level", "source", "description", "nullable"}


@dataclass(frozen=True)
class Metric:
    name: str
    title: str
    unit: str
    higher_is_better: bool
    level: str                  # "flow" | "run"
    source_view: str
    source_column: str
    description: str
    min: float | None = None
    max: float | None = None
    nullable: bool = True       # False: the source view never returns NULL for it

    @property
    def axis(self) -> str:
        """An axis title: the title with its unit."""
        return f"{self.title} ({self.unit})"

    def in_range(self, value: float) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)

    def check(self, value) -> str | None:
        """Why a value of this metric is invalid (None when it passes its checks)."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None if self.nullable else f"{self.name}: NULL, but declared not nullable"
        if not self.in_range(value):
            return f"{self.name}: {value} outside [{self.min}, {self.max}]"
        return None


@dataclass(frozen=True)
class Column:
    name: str
    description: str
    metric: str | None = None   # the metric this column holds, if it is one


@dataclass(frozen=True)
class View:
    """A view (or table macro) of sql/ and its columns in order."""
    name: str
    description: str
    columns: tuple[Column, ...]

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]


def catalogue_path() -> Path:
    from tracekit.db.sqlfiles import sql_dir  # not .query: loading the scenarios (a sweep's start) needs no DuckDB
    return sql_dir() / "catalogue.toml"


@lru_cache(maxsize=4)
def _read(path: str) -> dict:
    try:
        return tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise TracekitError(f"{path}: {e}") from None


@lru_cache(maxsize=4)
def _load(path: str) -> dict[str, Metric]:
    data = _read(path)
    out: dict[str, Metric] = {}
    for name, m in data.get("metrics", {}).items():
        unknown = set(m) - _KEYS
        if unknown:
            raise TracekitError(f"{path}: metric {name}: unknown keys {sorted(unknown)}")
        missing = {"title", "unit", "higher_is_better", "level", "source", "description"} - set(m)
        if missing:
            raise TracekitError(f"{path}: metric {name}: missing {sorted(missing)}")
        if m["level"] not in LEVELS:
            raise TracekitError(f"{path}: metric {name}: level must be one of {LEVELS}")
        view, _, column = m["source"].partition(".")
        if not view or not column:
            raise TracekitError(f"{path}: metric {name}: source must be VIEW.COLUMN")
        lo, hi = m.get("min"), m.get("max")
        for b in (lo, hi):
            if b is not None and not math.isfinite(b):
                raise TracekitError(f"{path}: metric {name}: min/max must be finite")
        out[name] = Metric(name, m["title"], m["unit"], bool(m["higher_is_better"]), m["level"],
                           view, column, m["description"], lo, hi, bool(m.get("nullable", True)))
    return out


@lru_cache(maxsize=4)
def _load_views(path: str) -> dict[str, View]:
    data = _read(path)
    mets = _load(path)
    raw = data.get("views", {})
    out: dict[str, View] = {}
    for name, v in raw.items():
        if "description" not in v or ("columns" in v) == ("columns_of" in v):
            raise TracekitError(f"{path}: view {name}: needs a description and either columns or columns_of")
        src = v.get("columns") or raw.get(v["columns_of"], {}).get("columns")
        if src is None:
            raise TracekitError(f"{path}: view {name}: columns_of names no view with columns")
        cols = []
        for c, d in src.items():
            if isinstance(d, dict):
                if set(d) != {"metric"} or d["metric"] not in mets:
                    raise TracekitError(f"{path}: view {name}: column {c}: {{ metric = NAME }} must name a catalogued metric")
                cols.append(Column(c, mets[d["metric"]].description, d["metric"]))
            else:
                cols.append(Column(c, str(d)))
        out[name] = View(name, v["description"], tuple(cols))
    return out


def metrics(level: str | None = None) -> dict[str, Metric]:
    """The catalogued metrics in file order; only those of one level if given."""
    allm = _load(str(catalogue_path()))
    return {k: m for k, m in allm.items() if level is None or m.level == level}


def metric(name: str) -> Metric:
    try:
        return metrics()[name]
    except KeyError:
        raise TracekitError(f"unknown metric {name!r}; known: {', '.join(metrics())}") from None


def views() -> dict[str, View]:
    """Every catalogued view (and table macro) with its columns, in file order."""
    return _load_views(str(catalogue_path()))


def view(name: str) -> View:
    try:
        return views()[name]
    except KeyError:
        raise TracekitError(f"unknown view {name!r}; known: {', '.join(views())}") from None


def create_catalogue_table(con: duckdb.DuckDBPyConnection) -> None:
    """The catalogue as the table `metric_catalogue` on a DuckDB connection (queryable by
    users, and what run_metrics joins to pick and name its metrics)."""
    rows = [(m.name, m.title, m.unit, m.description, m.higher_is_better, m.level,
             m.source_view, m.source_column, m.min, m.max, m.nullable) for m in metrics().values()]
    con.execute(
        "CREATE OR REPLACE TABLE metric_catalogue (metric VARCHAR, title VARCHAR, unit VARCHAR, "
        "description VARCHAR, higher_is_better BOOLEAN, level VARCHAR, source_view VARCHAR, "
        "source_column VARCHAR, min_value DOUBLE, max_value DOUBLE, nullable BOOLEAN)")
    if rows:
        # one statement (executemany costs a round trip per row)
        con.execute("INSERT INTO metric_catalogue VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"] * len(rows)),
                    [v for row in rows for v in row])


def metrics_markdown() -> str:
    """The metric table of docs/metrics.md, made from the catalogue (the docs read the
    catalogue too: `python -m tracekit.db.catalogue > docs/metrics.md`; a test checks it is
    current)."""
    out = ["# Metrics", "",
           "Generated from `sql/catalogue.toml` by `python -m tracekit.db.catalogue > docs/metrics.md`;",
           "do not edit by hand. `run_metrics` and `replication_stats` hold exactly these metrics.", "",
           "| metric | title | unit | better | range | level | source | definition |",
           "|---|---|---|---|---|---|---|---|"]
    for m in metrics().values():
        rng = f"[{'' if m.min is None else f'{m.min:g}'}, {'' if m.max is None else f'{m.max:g}'}]"
        if not m.nullable:
            rng += ", not NULL"
        out.append(f"| `{m.name}` | {m.title} | {m.unit} | {'higher' if m.higher_is_better else 'lower'} "
                   f"| {rng} | {m.level} | `{m.source_view}.{m.source_column}` | {m.description} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(metrics_markdown(), end="")
