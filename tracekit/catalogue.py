"""The metric catalogue (sql/catalogue.toml): the one list of metrics, with what each means.

Everything that shows, ranks or aggregates a metric (the CLI, the dashboard, run_metrics and
replication_stats through the `metric_catalogue` table, the docs) reads it from here, so a
metric is added in one place. The file is data; this module only loads and checks it.
"""
from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from .errors import TracekitError

LEVELS = ("flow", "run")
_KEYS = {"title", "unit", "higher_is_better", "min", "max", "level", "source", "description"}


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

    @property
    def axis(self) -> str:
        """An axis title: the title with its unit."""
        return f"{self.title} ({self.unit})"

    def in_range(self, value: float) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


def catalogue_path() -> Path:
    from .query import sql_dir
    return sql_dir() / "catalogue.toml"


@lru_cache(maxsize=4)
def _load(path: str) -> dict[str, Metric]:
    try:
        data = tomllib.loads(Path(path).read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise TracekitError(f"{path}: {e}") from None
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
                           view, column, m["description"], lo, hi)
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


def create_catalogue_table(con) -> None:
    """The catalogue as the table `metric_catalogue` on a DuckDB connection (queryable by
    users, and what run_metrics joins to pick and name its metrics)."""
    rows = [(m.name, m.title, m.unit, m.description, m.higher_is_better, m.level,
             m.source_view, m.source_column, m.min, m.max) for m in metrics().values()]
    con.execute(
        "CREATE OR REPLACE TABLE metric_catalogue (metric VARCHAR, title VARCHAR, unit VARCHAR, "
        "description VARCHAR, higher_is_better BOOLEAN, level VARCHAR, source_view VARCHAR, "
        "source_column VARCHAR, min_value DOUBLE, max_value DOUBLE)")
    if rows:
        con.executemany("INSERT INTO metric_catalogue VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
