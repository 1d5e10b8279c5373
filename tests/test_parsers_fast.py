"""The wired parser's compiled fast path (tracekit/formats/parsers/_wiredc.c) against its pure-Python
polars parser: on real ns-2 traces (12-field, 16-field show_tcphdr_, mixed, annotated, a LAN
with `h` lines), chunk by chunk at several chunk sizes, and on real lines with one field
changed into every odd form we could think of. Both must give equal tables (stored types),
the same bad lines and the same messages; the fast path may only decline a chunk (then the
polars parser takes it), never read it differently.

Skipped where the extension was not built (no C compiler at install); CI builds it."""
from __future__ import annotations

import random

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

from tracekit.ingest.pipeline import _conform, _stored_schema, ingest_file
from tracekit.formats.parsers import ParsedChunk, wired
from tracekit.formats.sources import TraceSource
from tracekit.store.store import Store

_wiredc = pytest.importorskip("tracekit.formats.parsers._wiredc", reason="the C fast path is not built")


def _parse(data: bytes, first: int, fast: bool, monkeypatch) -> ParsedChunk:
    with monkeypatch.context() as m:
        m.setattr(wired, "_fast", _wiredc if fast else None)
        return wired.WiredParser().parse_chunk(data, first)


def _stored(frame, table: str) -> pl.DataFrame:
    """The frame (polars, or the fast path's Arrow table) as _Writers stores it, categoricals
    as text (their codes may differ)."""
    stored = _conform(frame, table)
    assert stored.schema == _stored_schema(table)
    return pl.from_arrow(stored).with_columns(pl.col(pl.Categorical).cast(pl.String))  # type: ignore[union-attr]


def _assert_same(data: bytes, first: int, monkeypatch) -> bool:
    """Fast and pure parse of one chunk agree; True if the fast path took the chunk."""
    took = _wiredc.parse_wired(data, first) is not None
    a, b = _parse(data, first, True, monkeypatch), _parse(data, first, False, monkeypatch)
    assert a.tables.keys() == b.tables.keys()
    for name in a.tables:
        assert_frame_equal(_stored(a.tables[name], name), _stored(b.tables[name], name))
    assert (a.bad_offsets, a.bad_count, a.comments) == (b.bad_offsets, b.bad_count, b.comments)
    return took


REAL = ("wired_plain", "wired_tcphdr", "wired_latehdr", "wired_annotate")


@pytest.mark.parametrize("chunk_bytes", [1 << 20, 4096, 700])
def test_real_traces_chunk_by_chunk(ns_traces, wild_traces, monkeypatch, chunk_bytes):
    paths = [ns_traces[n] for n in REAL] + [wild_traces["lan"]]
    for path in paths:
        src = TraceSource.open(path)
        n_fast = n_chunks = 0
        for chunk in src.chunks(chunk_bytes):
            n_chunks += 1
            took = _assert_same(chunk.data, chunk.first_line_no, monkeypatch)
            n_fast += took
            plain = all(line[:1] in (b"+", b"-", b"r", b"d", b"h", b"e") for line in chunk.data.splitlines())
            # the fast path takes every chunk of event lines alone ('v' and '#' lines go to polars)
            assert took == plain, (path.name, chunk.first_line_no)
        assert n_chunks and (n_fast or path.name == "wired_annotate.tr"), path.name


def test_real_traces_have_what_the_comparison_needs(ns_traces, wild_traces):
    """The traces above cover 16-field lines, mixed 12/16 chunks and the LAN's `h` events."""
    def fields(path):
        return {len(line.split()) for line in path.read_text().splitlines() if line[:1] in "+-rdh"}
    assert fields(ns_traces["wired_tcphdr"]) == {16}
    assert fields(ns_traces["wired_latehdr"]) == {12, 16}
    assert any(line.startswith("h ") for line in wild_traces["lan"].read_text().splitlines())


# One field of a real 16-field line changed: forms polars reads one way or another (as a
# value, as null, as a bad line); the fast path must agree or decline.
BASE = "r 0.12064 1 0 ack 40 ------- 7 1.0 0.0 0 1 1 0x1a 40 0".split()
VARIANTS = {
    1: ["0", "1", "-0.5", "-0", "-0.0", "1.", ".5", "1e5", "5e-05", "1E-5", "1e+05", "0.1234567890123456789", "123456789.123456789",
        "1e400", "1e-400", "nan", "inf", "-inf", "+1.5", "00.5", "0x10", "1_0", "1,5", "2.5e", "9007199254740993", "4.9406564584124654e-324",
        "1.7976931348623157e308", "0.30000000000000004", "12345678901234567"],
    2: ["0", "-1", "007", "+3", "2147483647", "2147483648", "-2147483648", "-2147483649", "1.0", "a", "-0"],
    4: ["ack", "tcp-data", "a.b", "\u00e9t\u00e9", "x\x00y", "'quoted'", '"q"'],
    5: ["0", "99999999999", "-5", "1e3"],
    6: ["-------", "C------", "---A---", "x"],
    8: ["1.0", "1.-1", "01.0", "1.00", "-1.0", "1.0.0", "1", ".0", "1.", "4294967296.0", "2147483647.2147483647", "1.2147483648"],
    10: ["0", "-1", "9223372036854775807", "9223372036854775808", "123456789012345678", "1234567890123456789", "-0", "00"],
    12: ["0", "-1", "9223372036854775807", "x"],
    13: ["0x0", "0x1a", "0x1A", "0X1a", "1a", "0x", "0xg", "0x7fffffff", "0xffffffff", "0x80000000", "0x0000001", "0x00000001", "-0x1"],
    14: ["40", "-1", "4x"],
    15: ["0", "2147483648"],
}


def _variant_lines() -> list[str]:
    out = []
    for i, values in VARIANTS.items():
        for v in values:
            t = list(BASE)
            t[i] = v
            out.append(" ".join(t))
    t12 = BASE[:12]
    out += [
        " ".join(t12), " ".join(t12) + " ", " " + " ".join(t12), " ".join(t12).replace(" ", "  ", 1),
        " ".join(BASE[:13]), " ".join(BASE[:15]), " ".join(BASE) + " 7", " ".join(BASE) + "\r", "", " ",
        "v 1.0 link-down 1 2", "# a comment", "x " + " ".join(t12[1:]), "h " + " ".join(t12[1:]), "e " + " ".join(t12[1:]),
        "+" + " ".join(t12[1:]), "++ " + " ".join(t12[1:]), " ".join(t12).replace(" ", "\t"),
    ]
    return out


GOOD = [" ".join(BASE), "+ 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0", "d 1.462192 2 3 tcp 1040 ----E-N 1 0.0 3.0 50 320"]


@pytest.mark.parametrize("line", _variant_lines())
def test_one_odd_line_among_good_ones(line, monkeypatch):
    data = ("\n".join(GOOD + [line] + GOOD) + "\n").encode()
    _assert_same(data, 41, monkeypatch)
    _assert_same((line + "\n").encode(), 1, monkeypatch)


def test_random_numbers_read_alike(monkeypatch):
    """Times printed every way (%.15g as ns-2 does, %.17g, repr, %g, %e) and integers near the
    type limits: the fast path reads each like polars, or declines the chunk."""
    rng = random.Random(16)
    lines = []
    for _ in range(3000):
        t = rng.choice([rng.random() * 10 ** rng.randint(-8, 9), rng.randint(0, 10**6) / 1000, 10 ** rng.uniform(-30, 30)])
        fmt = rng.choice(["%.15g", "%.17g", "%g", "%e", "%.6f", "%r"])
        ts = repr(t) if fmt == "%r" else fmt % t
        size = rng.choice([0, 40, 1040, rng.randint(0, 2**31 - 1), rng.randint(-2**31, -1)])
        seq = rng.choice([-1, rng.randint(0, 2**62), rng.randint(-2**62, 0)])
        line = f"{rng.choice('+-rd')} {ts} {rng.randint(0, 99)} {rng.randint(0, 99)} tcp {size} ------- {rng.randint(0, 9)} " \
               f"{rng.randint(0, 99)}.{rng.randint(0, 99)} {rng.randint(0, 99)}.{rng.randint(0, 9)} {seq} {rng.randint(0, 10**9)}"
        if rng.random() < 0.5:
            line += f" {rng.randint(-1, 10**6)} 0x{rng.randint(0, 0xff):x} {rng.choice([0, 40, 60])} {rng.randint(0, 3)}"
        lines.append(line)
    taken = [_assert_same(("\n".join(lines[k:k + 300]) + "\n").encode(), 1 + k, monkeypatch) for k in range(0, len(lines), 300)]
    # every form above is one the fast path reads (a '+' or a leading zero would not be)
    assert all(taken)


def test_ingest_stores_the_same_tables(ns_traces, wild_traces, tmp_path, monkeypatch):
    """Whole ingests, fast and pure: the stored Parquet tables are equal, types included."""
    for name, path in (("latehdr", ns_traces["wired_latehdr"]), ("annotate", ns_traces["wired_annotate"]), ("lan", wild_traces["lan"])):
        got = {}
        for fast in (True, False):
            with monkeypatch.context() as m:
                m.setattr(wired, "_fast", _wiredc if fast else None)
                store = Store(tmp_path / f"{name}-{fast}", create=True)
                res = ingest_file(store, path, chunk_bytes=8192)
            run = store.run_dir(res.run_id)
            got[fast] = {t: pa.concat_tables([pq.read_table(f) for f in sorted(run.glob(f"{t}-*.parquet"))])
                         for t in ("events", "annotations") if list(run.glob(f"{t}-*.parquet"))}
        assert got[True].keys() == got[False].keys()
        for t in got[True]:
            a, b = got[True][t], got[False][t]
            assert a.schema.types == b.schema.types, (name, t)
            assert a.num_rows and a.to_pylist() == b.to_pylist(), (name, t)


def test_normalize_ws_in_c_is_the_python_one():
    """The C normalize_ws (the wireless and tcpvar parsers' first step) against the Python one,
    on every short string of blanks, tabs, CR, LF and a letter, and on a real wireless trace."""
    from itertools import product

    from tracekit.formats.parsers import normalize_ws_py

    for n in range(7):
        for t in product(b" \t\r\na", repeat=n):
            s = bytes(t)
            assert _wiredc.normalize_ws(s) == normalize_ws_py(s), s
    rng = random.Random(7)
    for _ in range(2000):
        s = bytes(rng.choice(b" \t\r\nab") for _ in range(rng.randint(0, 40)))
        assert _wiredc.normalize_ws(s) == normalize_ws_py(s), s
    line = b"s 0.5 _0_ AGT  --- 2 tcp 1040 [0 0 0 0] ------- [0:0 2:0 32 0] [1 0] 0 0 \r\n"
    assert _wiredc.normalize_ws(line * 50) == normalize_ws_py(line * 50)


def test_count_lines_is_bytes_count():
    """The C line count of TraceSource.chunks against bytes.count, across the 16-byte steps."""
    rng = random.Random(16)
    for n in [*range(70), 4095, 4096, 4097, 1 << 16]:
        for _ in range(3):
            data = bytes(rng.choice(b"\n \x00\xff\x8a+") for _ in range(n))
            assert _wiredc.count_lines(data) == data.count(b"\n"), data
    assert _wiredc.count_lines(memoryview(b"a\nb\n")[1:]) == 2
    for n in (255 * 16 - 1, 255 * 16, 255 * 16 + 17, (1 << 16) + 5):     # every byte a newline: the counters' limit
        assert _wiredc.count_lines(b"\n" * n) == n
