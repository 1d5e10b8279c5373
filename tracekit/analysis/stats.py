"""The statistics of replications, in one place: the Student t distribution (two-sided p-value
and the 0.975 quantile), a group's summary (n, mean, sample stddev, 95 % CI half-width),
Welch's t-test, the relative gain of two means with its delta-method interval and the
least-squares slope test. compare, reproduce, report and the dashboard take them from here.

Where the figures are computed in SQL (replication_stats, tracekit compare's groups) they come
from the macros sql/macros/t_975.sql and sql/macros/ci95_half_width.sql; t_975 here reads its
table and expansion from that same file, so that the Python and the SQL intervals are the same
numbers (tests/test_stats.py runs the macro in DuckDB against this module). No scipy: the
library runs without it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from tracekit.core.errors import TracekitError

# ---------------------------------------------------------------------------------------
# Student t


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (modified Lentz, as in Numerical
    Recipes' betacf), converged to double precision."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 100_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-16:
            return h
    raise ArithmeticError(f"incomplete beta: no convergence for a={a}, b={b}, x={x}")


def betainc(a: float, b: float, x: float, y: float | None = None) -> float:
    """The regularised incomplete beta function I_x(a, b); y = 1 - x when the caller knows
    it more precisely than 1 - x can be computed (x close to 1)."""
    if not 0.0 <= x <= 1.0:
        raise ValueError("x must be in [0, 1]")
    y = 1.0 - x if y is None else y
    if x == 0.0 or y == 0.0:
        return 0.0 if x == 0.0 else 1.0
    ln_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                + a * math.log(x) + b * math.log(y))
    front = math.exp(ln_front)
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, y) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with df (> 0, not necessarily whole) degrees of freedom."""
    if df <= 0 or math.isnan(t):
        return math.nan
    if math.isinf(t):
        return 0.0
    return betainc(df / 2.0, 0.5, df / (df + t * t), t * t / (df + t * t))


_NUMBER = r"([0-9]+\.[0-9]+(?:e[+-]?[0-9]+)?)"
_DF = r"CAST\(df AS DOUBLE\)"


@lru_cache(maxsize=1)
def _t_975_definition() -> tuple[tuple[float, ...], tuple[tuple[float, int], ...]]:
    """(t(0.975, df) for df = 1..len, the expansion beyond as (coefficient, power of 1/df)
    terms), as sql/macros/t_975.sql defines them."""
    from tracekit.db.sqlfiles import sql_dir

    path = sql_dir() / "macros" / "t_975.sql"
    text = "\n".join(line for line in path.read_text().splitlines() if not line.lstrip().startswith("--"))
    table = re.search(r"WHEN df <= (\d+) THEN CAST\(\[(.*?)\] AS DOUBLE\[\]\)", text, re.S)
    tail = text.partition("ELSE")[2]
    terms = re.findall(rf"{_NUMBER}(\s*/\s*(?:{_DF}|pow\({_DF}, (\d+)\)))?", tail)
    values = tuple(float(v) for v in re.findall(_NUMBER, table.group(2))) if table else ()
    if not table or len(values) != int(table.group(1)) or not terms:
        raise TracekitError(f"{path}: not the table and expansion tracekit.analysis.stats reads")
    return values, tuple((float(c), (int(k) if k else 1) if div else 0) for c, div, k in terms)


def t_975(df: int) -> float:
    """Student's t quantile t(0.975, df) for whole df >= 1 (NaN below), as the SQL macro t_975
    computes it: its table of exact values, then its expansion in 1/df."""
    if df != int(df):
        raise ValueError(f"t_975: whole degrees of freedom only, not {df}")
    if df < 1:
        return math.nan
    table, terms = _t_975_definition()
    if df <= len(table):
        return table[int(df) - 1]
    x = float(df)
    out = 0.0
    for i, (c, k) in enumerate(terms):
        term = c if k == 0 else c / x if k == 1 else c / math.pow(x, k)
        out = term if i == 0 else out + term      # left to right, as DuckDB adds them
    return out


# ---------------------------------------------------------------------------------------
# a group's summary, and tests between groups


@dataclass(frozen=True)
class Summary:
    """n values' mean, sample stddev and 95 % CI half-width t_975(n - 1) * sd / sqrt(n), as
    replication_stats defines them: stddev and half-width None below two values, mean None
    without any."""

    n: int
    mean: float | None
    stddev: float | None
    ci95_half_width: float | None


def summarise(values: Sequence[float]) -> Summary:
    n = len(values)
    if not n:
        return Summary(0, None, None, None)
    mean = sum(values) / n
    if n < 2:
        return Summary(n, mean, None, None)
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / (n - 1))
    return Summary(n, mean, sd, t_975(n - 1) * sd / math.sqrt(n))


@dataclass(frozen=True)
class Welch:
    t: float
    df: float
    p: float


def welch(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int) -> Welch | None:
    """Welch's unequal-variance t-test from each group's mean, sample stddev and size; None
    when it is undefined (a group with fewer than 2 values, or no variance in either)."""
    if n_a < 2 or n_b < 2:
        return None
    va, vb = sd_a * sd_a / n_a, sd_b * sd_b / n_b
    se2 = va + vb
    if se2 <= 0:
        return None
    t = (mean_a - mean_b) / math.sqrt(se2)
    df = se2 * se2 / ((va * va / (n_a - 1) if va else 0.0) + (vb * vb / (n_b - 1) if vb else 0.0))
    return Welch(t, df, t_two_sided_p(t, df))


def relative_gain(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int
                  ) -> tuple[float, float] | None:
    """(100 (mean_a / mean_b - 1), its 95 % half-width) in %: the ratio's standard error by the
    delta method, t_975 of the smaller group's n - 1; None when mean_b is 0."""
    if mean_b == 0:
        return None
    r = mean_a / mean_b
    se = abs(r) * math.sqrt((sd_a ** 2 / n_a) / mean_a ** 2 + (sd_b ** 2 / n_b) / mean_b ** 2) if mean_a else math.inf
    return (r - 1) * 100, t_975(min(n_a, n_b) - 1) * se * 100


@dataclass(frozen=True)
class Slope:
    slope: float
    p: float           # two-sided, of the slope being 0


def slope_test(points: Sequence[tuple[float, float]]) -> Slope:
    """The least-squares slope of y on x over (x, y) points (at least two x values and three
    points) and the t-test of it being 0, with n - 2 degrees of freedom."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    sxy = sum((x - mx) * (y - my) for x, y in points)
    slope = sxy / sxx
    resid = sum((y - my - slope * (x - mx)) ** 2 for x, y in points)
    if resid <= 0:
        return Slope(slope, 0.0 if slope != 0 else 1.0)
    se = math.sqrt(resid / (n - 2) / sxx)
    return Slope(slope, t_two_sided_p(slope / se, n - 2))
