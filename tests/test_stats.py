"""tracekit.analysis.stats against values computed without it: a published t table, the closed
forms of the t quantile (df 1, 2, 4) and distribution (df 2, 4), small groups worked by hand,
and the SQL macros t_975 / ci95_half_width run in DuckDB (the Python and SQL intervals must
be the same numbers)."""
from __future__ import annotations

import math

import duckdb
import pytest

from tracekit.analysis.stats import relative_gain, slope_test, summarise, t_975, welch
from tracekit.db.sqlfiles import sql_dir

P = 0.975


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    for name in ("t_975", "ci95_half_width"):
        c.execute((sql_dir() / "macros" / f"{name}.sql").read_text())
    yield c
    c.close()


# t(0.975, df) as a printed t table gives it, to three decimals
@pytest.mark.parametrize("df, printed", [(1, 12.706), (2, 4.303), (10, 2.228), (30, 2.042), (120, 1.980)])
def test_t_975_matches_the_printed_table(df, printed):
    assert round(t_975(df), 3) == printed


def test_t_975_closed_forms():
    # df 1: Cauchy, t = tan(pi (p - 1/2)); df 2: t = (2p - 1) / sqrt(2 p (1 - p));
    # df 4: a = 4p(1-p), q = cos(acos(sqrt a) / 3) / sqrt a, t = 2 sqrt(q - 1)
    assert t_975(1) == pytest.approx(math.tan(math.pi * (P - 0.5)), abs=1e-11)
    assert t_975(2) == pytest.approx((2 * P - 1) / math.sqrt(2 * P * (1 - P)), abs=1e-11)
    a = 4 * P * (1 - P)
    q = math.cos(math.acos(math.sqrt(a)) / 3) / math.sqrt(a)
    assert t_975(4) == pytest.approx(2 * math.sqrt(q - 1), abs=1e-11)


def test_t_975_falls_towards_the_normal_quantile():
    ts = [t_975(df) for df in range(1, 1001)]
    assert all(a > b for a, b in zip(ts, ts[1:]))
    assert ts[-1] > 1.959963984540054 and round(ts[-1], 5) == 1.96234   # above z(0.975); t(0.975, 1000) = 1.96234


def test_t_975_equals_the_sql_macro(con):
    sql = dict(con.execute("SELECT df, t_975(df) FROM range(1, 201) r(df)").fetchall())
    assert len(sql) == 200
    for df in range(1, 201):
        assert t_975(df) == sql[df], df
    (null,) = con.execute("SELECT t_975(0)").fetchone()
    assert null is None and math.isnan(t_975(0))


def test_t_975_wants_whole_degrees_of_freedom():
    with pytest.raises(ValueError, match="whole"):
        t_975(2.5)  # type: ignore[arg-type]


def test_summary_by_hand():
    s = summarise([2.0, 4.0])          # mean 3, sd sqrt(2), half-width t(0.975, 1) sqrt(2) / sqrt(2)
    assert (s.n, s.mean) == (2, 3.0)
    assert s.stddev == pytest.approx(math.sqrt(2), rel=1e-15)
    assert s.ci95_half_width == pytest.approx(math.tan(math.pi * (P - 0.5)), rel=1e-12)
    s = summarise([1.0, 2.0, 3.0, 4.0])  # sd sqrt(5/3); t(0.975, 3) = 3.182 printed
    assert s.mean == 2.5 and s.stddev == pytest.approx(math.sqrt(5 / 3), rel=1e-15)
    assert s.ci95_half_width == pytest.approx(3.182 * math.sqrt(5 / 3) / 2, rel=2e-4)
    one = summarise([7.0])
    assert (one.n, one.mean, one.stddev, one.ci95_half_width) == (1, 7.0, None, None)
    none = summarise([])
    assert (none.n, none.mean, none.stddev, none.ci95_half_width) == (0, None, None, None)


@pytest.mark.parametrize("values", [[2.0, 4.0], [1.0, 2.0, 3.0, 4.0], [0.1] * 3 + [0.2], [5.0],
                                    [float(i * i) for i in range(40)]])
def test_summary_equals_replication_stats_formulas(con, values):
    # the aggregates replication_stats computes, over the same values in DuckDB
    n, mean, sd, ci = con.execute(
        "SELECT count(v), avg(v), stddev_samp(v), ci95_half_width(count(v), stddev_samp(v)) "
        "FROM unnest(?::DOUBLE[]) t(v)", [values]).fetchone()
    s = summarise(values)
    assert s.n == n and s.mean == pytest.approx(mean, rel=1e-13)
    for py, db in ((s.stddev, sd), (s.ci95_half_width, ci)):
        assert (py is None and db is None) or py == pytest.approx(db, rel=1e-12)


def test_welch_by_hand():
    # [1, 2, 3] against [4, 5, 6]: se^2 = 1/3 + 1/3, t = -3 / sqrt(2/3), df = (2/3)^2 / (2 (1/3)^2 / 2) = 4
    w = welch(2.0, 1.0, 3, 5.0, 1.0, 3)
    assert w is not None
    t = -3 / math.sqrt(2 / 3)
    assert w.t == pytest.approx(t, rel=1e-14) and w.df == pytest.approx(4.0, rel=1e-14)
    # df 4: P(|T| > |t|) = 1 - x (3 - x^2) / 2 with x = |t| / sqrt(4 + t^2)
    x = abs(t) / math.sqrt(4 + t * t)
    assert w.p == pytest.approx(1 - x * (3 - x * x) / 2, rel=1e-10)


def test_relative_gain_by_hand():
    # 110 vs 100 (sd 11 and 10, two seeds each): +10 %; se = 1.1 sqrt(60.5/110^2 + 50/100^2) = 0.11
    gain, half = relative_gain(110.0, 11.0, 2, 100.0, 10.0, 2) or (None, None)
    assert gain == pytest.approx(10.0, rel=1e-12)
    assert half == pytest.approx(math.tan(math.pi * (P - 0.5)) * 0.11 * 100, rel=1e-12)
    assert relative_gain(1.0, 1.0, 2, 0.0, 1.0, 2) is None


def test_slope_test_by_hand():
    # (0,0) (1,2) (2,1) (3,3): sxx 5, sxy 4, slope 0.8, residuals 1.8, se sqrt(0.18), t = 0.8 / se;
    # df 2: p = 1 - t / sqrt(2 + t^2) = 0.2
    fit = slope_test([(0.0, 0.0), (1.0, 2.0), (2.0, 1.0), (3.0, 3.0)])
    assert fit.slope == pytest.approx(0.8, rel=1e-14) and fit.p == pytest.approx(0.2, rel=1e-10)
    exact = slope_test([(0.0, 1.0), (1.0, 3.0), (2.0, 5.0)])
    assert (exact.slope, exact.p) == (2.0, 0.0)
    flat = slope_test([(0.0, 1.0), (1.0, 1.0), (2.0, 1.0)])
    assert (flat.slope, flat.p) == (0.0, 1.0)
