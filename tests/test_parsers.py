"""The parsers on captured lines (values by hand), on random valid lines (compared with a
plain split-and-convert parse written here), and on garbage (only TraceLineError, naming the
right line, may come out)."""
from __future__ import annotations

import random
import string
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tracekit.core.errors import TraceLineError, TracekitError
from tracekit.ingest.pipeline import ingest_file
from tracekit.formats.parsers import as_polars, get_parser, parse_text
from tracekit.store.store import Store

KINDS = ("wired", "tcpvar", "queue_monitor", "red")
SETTINGS = dict(database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def rows(df) -> list[dict]:
    """A parser's rows (a polars frame, or the wired fast path's Arrow table) as dicts."""
    return as_polars(df).to_dicts()


# -- captured lines, expected values worked out by hand ---------------------------------------

def test_wired_12_fields_by_hand():
    [row] = rows(parse_text("d 0.420656 2 3 tcp 1040 ------- 1 0.0 3.0 16 73\n")["events"])
    assert row == {"line_no": 1, "event": "d", "time": 0.420656, "from_node": 2, "to_node": 3, "ptype": "tcp",
                   "size": 1040, "flags": "-------", "fid": 1, "src_node": 0, "src_port": 0, "dst_node": 3,
                   "dst_port": 0, "seq": 16, "pkt_id": 73, "tcp_ackno": None, "tcp_flags": None,
                   "tcp_hlen": None, "sack_blocks": None}


def test_wired_16_fields_by_hand():
    text = ("r 0.11032 0 1 tcp 40 ------- 7 0.0 1.0 0 0 -1 0xa 40 0\n"
            "r 0.12064 1 0 ack 40 ------- 7 1.0 0.0 0 1 1 0x1a 40 0\n"
            "- 1.462192 2 3 tcp 1040 ----E-N 1 0.0 3.0 50 320 0 0x0 0 0\n")
    got = [(r["line_no"], r["tcp_ackno"], r["tcp_flags"], r["tcp_hlen"], r["sack_blocks"], r["flags"])
           for r in rows(parse_text(text)["events"])]
    assert got == [(1, -1, 0x0A, 40, 0, "-------"), (2, 1, 0x1A, 40, 0, "-------"), (3, 0, 0, 0, 0, "----E-N")]


def test_wired_annotations_and_comments():
    text = ("# a comment\n"
            "v 0.5 eval {set sim_annotation {hello from probe}}\n"
            "+ 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0\n"
            "\n"
            "v 0.80000000000000004 link-up 2 1\n")
    t = parse_text(text)
    assert [(r["line_no"], r["event"]) for r in rows(t["events"])] == [(3, "+")]
    assert rows(t["annotations"]) == [
        {"line_no": 2, "time": 0.5, "text": "eval {set sim_annotation {hello from probe}}"},
        {"line_no": 5, "time": 0.8, "text": "link-up 2 1"},
    ]


def test_tcpvar_padded_lines_by_hand():
    text = "0.00000  0  0  2  0  cwnd_ 1.000 \n0.15070  0  1  2  0  rtt_ 0.050 \n0.49562  0  0  2  0  ack_ -1\n"
    assert rows(parse_text(text, "tcpvar")["tcp_vars"]) == [
        {"line_no": 1, "time": 0.0, "src_node": 0, "src_port": 0, "dst_node": 2, "dst_port": 0, "var": "cwnd_", "value": 1.0},
        {"line_no": 2, "time": 0.1507, "src_node": 0, "src_port": 1, "dst_node": 2, "dst_port": 0, "var": "rtt_", "value": 0.05},
        {"line_no": 3, "time": 0.49562, "src_node": 0, "src_port": 0, "dst_node": 2, "dst_port": 0, "var": "ack_", "value": -1.0},
    ]


def test_queue_monitor_both_shapes_by_hand():
    text = ("0.5 2 3 4389.5321599999988 4.2207039999999969 63 37 13 63520 37480 12520\n"
            "q -t 0.144704 -s 0 -d 2 -l 1040 -p 1\n")
    a, b = rows(parse_text(text, "queue_monitor")["queue_samples"])
    assert a == {"line_no": 1, "sample_kind": "periodic", "time": 0.5, "from_node": 2, "to_node": 3,
                 "bytes": 4389.5321599999988, "pkts": 4.2207039999999969, "arrivals_pkts": 63,
                 "departures_pkts": 37, "drops_pkts": 13, "arrivals_bytes": 63520, "departures_bytes": 37480,
                 "drops_bytes": 12520}
    assert b == {"line_no": 2, "sample_kind": "event", "time": 0.144704, "from_node": 0, "to_node": 2,
                 "bytes": 1040.0, "pkts": 1.0, "arrivals_pkts": None, "departures_pkts": None, "drops_pkts": None,
                 "arrivals_bytes": None, "departures_bytes": None, "drops_bytes": None}


def test_red_by_hand():
    text = "c 0 0.1\na 0.210192 2.08\nQ 0.210192 1040\np 2.25864 0.000486826\nQ 1000.07 5200\n"
    assert [(r["var"], r["time"], r["value"]) for r in rows(parse_text(text, "red")["red_vars"])] == [
        ("cur_max_p", 0.0, 0.1), ("ave", 0.210192, 2.08), ("curq", 0.210192, 1040.0),
        ("prob1", 2.25864, 0.000486826), ("curq", 1000.07, 5200.0)]


@pytest.mark.parametrize("kind, line, needle", [
    ("wired", "+ 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0", "12 or 16"),
    ("wired", "+ 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0 junk", "12 or 16"),
    ("wired", "+ 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0 1 0x10 40 zz", "field 16"),
    ("wired", "+ 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0 1 0xq 40 0", "hex"),
    ("wired", "+ 0.1 1 2 cbr 500 ------- 2 0.0.1.0 3.1 0 0", "hierarchical"),
    ("wired", "+ 0.1 1 2 cbr 500 ------- 2 1 3.1 0 0", "node.port"),
    ("wired", "+ 0.1 1 2 cbr 5x0 ------- 2 1.0 3.1 0 0", "field 6"),
    ("wired", "+  0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0", "empty field"),
    ("wired", " + 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0", "empty field"),
    ("wired", "v", "annotation"),
    ("wired", "+ nan 1 2 cbr 500 ------- 2 1.0 3.1 0 0", "field 2"),
    ("wired", "r inf 1 2 cbr 500 ------- 2 1.0 3.1 0 0", "field 2"),
    ("tcpvar", "0.1 0 0 2 0 cwnd_", "7 fields"),
    ("tcpvar", "0.1 0 x 2 0 cwnd_ 1.0", "field 3"),
    ("tcpvar", "time: 0.15070  saddr: 0  sport: 0  daddr: 2  dport: 0  cwnd: 1.000", "one-line"),
    ("queue_monitor", "q -t 0.1 -s 0 -d 2 -l 40", "q -t TIME"),
    ("queue_monitor", "0.5 2 3 1.0 1.0 1 2 3 4 5", "11 fields"),
    ("red", "Q 0.1", "3 fields"),
    ("red", "Z 0.1 3", "unknown RED variable"),
])
def test_bad_line_explained(kind, line, needle):
    ok_line = {"wired": "+ 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0", "tcpvar": "0.1 0 0 2 0 cwnd_ 1.0",
               "queue_monitor": "q -t 0.1 -s 0 -d 2 -l 40 -p 1", "red": "Q 0.1 1040"}[kind]
    with pytest.raises(TraceLineError) as e:
        parse_text(f"{ok_line}\n{ok_line}\n{line}\n{ok_line}\n", kind, path="t.tr")
    assert e.value.line_no == 3 and e.value.path == "t.tr"
    assert str(e.value).startswith("t.tr:3: ") and needle in str(e.value)
    assert "\n" not in str(e.value)


# -- plain reference parses --------------------------------------------------------------------

def plain_wired(line: str, line_no: int) -> dict:
    f = line.split(" ")
    sn, sp = f[8].split(".")
    dn, dp = f[9].split(".")
    extra = [None] * 4
    if len(f) == 16:
        extra = [int(f[12]), int(f[13][2:] if f[13].startswith("0x") else f[13], 16), int(f[14]), int(f[15])]
    return {"line_no": line_no, "event": f[0], "time": float(f[1]), "from_node": int(f[2]), "to_node": int(f[3]),
            "ptype": f[4], "size": int(f[5]), "flags": f[6], "fid": int(f[7]), "src_node": int(sn),
            "src_port": int(sp), "dst_node": int(dn), "dst_port": int(dp), "seq": int(f[10]), "pkt_id": int(f[11]),
            "tcp_ackno": extra[0], "tcp_flags": extra[1], "tcp_hlen": extra[2], "sack_blocks": extra[3]}


# -- strategies for valid lines ----------------------------------------------------------------

I32 = st.integers(0, 2**31 - 1)
small = st.integers(0, 5000)
node = st.one_of(st.integers(0, 200), I32)


@st.composite
def time_text(draw) -> str:
    """Times as ns-2 prints them: rounded to 1 us, %.15g (so '0', '0.1', '1e-06', '123.456789')."""
    us = draw(st.one_of(st.integers(0, 10**7), st.integers(0, 10**13)))
    return "%.15g" % (us / 1e6)


@st.composite
def wired_line(draw) -> str:
    ptype = draw(st.one_of(st.sampled_from(["tcp", "ack", "cbr", "rtProtoDV", "message", "exp", "udp"]),
                           st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,11}", fullmatch=True)))
    fields = [
        draw(st.sampled_from("+-rd")), draw(time_text()), str(draw(node)), str(draw(node)), ptype,
        str(draw(st.one_of(small, I32))), draw(st.from_regex(r"[-CPAEFN]{7}", fullmatch=True)),
        str(draw(st.one_of(st.integers(-1, 20), I32))),
        f"{draw(node)}.{draw(st.one_of(small, I32))}", f"{draw(node)}.{draw(st.one_of(small, I32))}",
        str(draw(st.one_of(st.integers(-1, 10**6), st.integers(-2**63, 2**63 - 1)))),
        str(draw(st.one_of(st.integers(0, 10**6), st.integers(0, 2**63 - 1)))),
    ]
    if draw(st.booleans()):
        fields += [str(draw(st.integers(-1, 2**40))), hex(draw(st.integers(0, 0xFF))),
                   str(draw(st.sampled_from([0, 40, 60]))), str(draw(st.integers(0, 4)))]
    return " ".join(fields)


@settings(max_examples=100, **SETTINGS)
@given(st.lists(wired_line(), min_size=1, max_size=20))
def test_random_valid_wired_lines_parse_like_a_plain_split(lines):
    got = rows(parse_text("\n".join(lines) + "\n")["events"])
    assert got == [plain_wired(line, i) for i, line in enumerate(lines, 1)]


@settings(max_examples=40, **SETTINGS)
@given(st.lists(wired_line(), min_size=1, max_size=20), st.integers(1, 200))
def test_parse_chunk_numbers_lines_from_first_line_no(lines, first):
    res = get_parser("wired").parse_chunk(("\n".join(lines) + "\n").encode(), first)
    assert res.bad_offsets == [] and res.bad_count == 0
    assert rows(res.tables["events"]) == [plain_wired(line, first + i) for i, line in enumerate(lines)]


# -- garbage ----------------------------------------------------------------------------------

def _expect_only_line_errors(text: str, kind: str) -> TraceLineError | None:
    n = len(text.split("\n"))
    try:
        parse_text(text, kind)
    except TraceLineError as e:
        assert 1 <= e.line_no <= n and "\n" not in str(e)
        return e
    return None


@settings(max_examples=150, **SETTINGS)
@given(st.sampled_from(KINDS), st.lists(st.text(max_size=60), min_size=1, max_size=8).map("\n".join))
def test_random_text_only_raises_trace_line_error(kind, text):
    _expect_only_line_errors(text, kind)


TOKENS = st.one_of(
    st.sampled_from(["+", "-", "r", "d", "v", "q", "Q", "a", "p", "c", "#", "-t", "-s", "0x", "0x1g", "1.2.3",
                     "1.", ".5", "1e5", "-1", "nan", "inf", "", "_1_", "tcp", "-------", "9" * 25, "é", "\t", "\r"]),
    st.text(alphabet=string.printable.replace("\n", ""), max_size=12),   # a newline would make two lines
)


@settings(max_examples=120, **SETTINGS)
@given(st.sampled_from(KINDS), st.lists(st.lists(TOKENS, max_size=17).map(" ".join), min_size=1, max_size=8))
def test_random_tokens_only_raise_trace_line_error(kind, lines):
    _expect_only_line_errors("\n".join(lines), kind)


@settings(max_examples=150, **SETTINGS)
@given(st.sampled_from(KINDS), st.binary(max_size=400), st.integers(1, 10**6))
def test_random_bytes_never_crash_parse_chunk(kind, data, first):
    res = get_parser(kind).parse_chunk(data, first)
    n_lines = data.count(b"\n") + 1
    assert all(0 <= off < n_lines for off in res.bad_offsets)
    assert res.bad_count >= len(res.bad_offsets)
    for df in res.tables.values():
        for line_no in as_polars(df)["line_no"].to_list():
            assert first <= line_no < first + n_lines


@st.composite
def corrupted(draw, line_st):
    """Valid lines with one of them damaged: (lines, index of the damaged one)."""
    lines = draw(st.lists(line_st, min_size=2, max_size=12))
    k = draw(st.integers(0, len(lines) - 1))
    f = lines[k].split(" ")
    how = draw(st.sampled_from(["drop", "dup", "swap", "token", "mutate", "truncate", "bytes"]))
    i = draw(st.integers(0, len(f) - 1))
    if how == "drop":
        del f[i]
    elif how == "dup":
        f.insert(i, f[i])
    elif how == "swap":
        j = draw(st.integers(0, len(f) - 1))
        f[i], f[j] = f[j], f[i]
    elif how == "token":
        f.insert(i, draw(TOKENS))
    elif how == "mutate":
        f[i] = draw(TOKENS)
    elif how == "truncate":
        f = " ".join(f)[: draw(st.integers(0, len(lines[k]) - 1))].split(" ")
    else:
        s = list(" ".join(f))
        s[draw(st.integers(0, len(s) - 1))] = draw(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n\r"))
        f = "".join(s).split(" ")
    bad = " ".join(f)
    assume(bad != lines[k])
    lines[k] = bad
    return lines, k


def _tcpvar_line():
    return st.builds(lambda t, a, b, c, d, var, v: f"{t:.5f}  {a}  {b}  {c}  {d}  {var} {v}",
                     st.floats(0, 1e4), small, small, small, small,
                     st.sampled_from(["cwnd_", "ssthresh_", "rtt_", "ack_"]),
                     st.one_of(st.integers(-1, 10**6).map(str), st.floats(0, 1e4).map(lambda x: f"{x:.3f} ")))


def _red_line():
    return st.builds(lambda c, t, v: f"{c} {t:g} {v:g}", st.sampled_from("Qapc"), st.floats(0, 1e4), st.floats(0, 1e6))


def _queue_line():
    periodic = st.builds(lambda t, a, b, x, y, cs: " ".join([repr(t), str(a), str(b), repr(x), repr(y)] + [str(c) for c in cs]),
                         st.floats(0, 1e4), small, small, st.floats(0, 1e6), st.floats(0, 1e3), st.lists(small, min_size=6, max_size=6))
    event = st.builds(lambda t, a, b, nbytes, p: f"q -t {t:g} -s {a} -d {b} -l {nbytes} -p {p}", st.floats(0, 1e4), small, small, small, small)
    return st.one_of(periodic, event)


LINES = {"wired": wired_line(), "tcpvar": _tcpvar_line(), "queue_monitor": _queue_line(), "red": _red_line()}
MAIN = {"wired": "events", "tcpvar": "tcp_vars", "queue_monitor": "queue_samples", "red": "red_vars"}


@pytest.mark.parametrize("kind", KINDS)
def test_one_damaged_line_is_the_one_reported(kind):
    @settings(max_examples=60, **SETTINGS)
    @given(corrupted(LINES[kind]))
    def check(case):
        lines, k = case
        text = "\n".join(lines) + "\n"
        try:
            tables = parse_text(text, kind)
        except TraceLineError as e:
            assert e.line_no == k + 1, (e, k)
            return
        # accepted: the damage left a well-formed line (or a blank/comment/annotation line);
        # every other line still comes out where it was
        got = {r["line_no"] for r in rows(tables[MAIN[kind]])}
        assert got - {k + 1} == set(range(1, len(lines) + 1)) - {k + 1}

    check()


def test_damaged_wired_rows_keep_their_values():
    """Where a damaged line is accepted, the undamaged lines still equal the plain parse."""
    @settings(max_examples=50, **SETTINGS)
    @given(corrupted(wired_line()))
    def check(case):
        lines, k = case
        try:
            got = rows(parse_text("\n".join(lines) + "\n")["events"])
        except TraceLineError:
            return
        want = [plain_wired(line, i) for i, line in enumerate(lines, 1) if i != k + 1]
        assert [r for r in got if r["line_no"] != k + 1] == want

    check()


# -- ingest_file with tiny chunks: lines straddle chunk boundaries ---------------------------

@pytest.fixture(scope="module")
def long_valid_lines():
    """About 72 kB of valid wired lines: past the 64 kB that detection reads in one piece, so
    the rest really goes through the small chunks."""
    rnd = random.Random(7)
    out, size, t_us = [], 0, 0
    while size < 72_000:
        t_us += rnd.choice([0, 0, 1, rnd.randrange(5000)])     # in time order, as ns-2 writes
        line = (f"{rnd.choice('+-rd')} {t_us / 1e6:.15g} {rnd.randrange(9)} {rnd.randrange(9)} "
                f"{rnd.choice(['tcp', 'ack', 'cbr'])} {rnd.randrange(2000)} ------- {rnd.randrange(5)} "
                f"{rnd.randrange(9)}.{rnd.randrange(3)} {rnd.randrange(9)}.{rnd.randrange(3)} {rnd.randrange(-1, 999)} {len(out)}")
        if rnd.random() < 0.3:
            line += f" {rnd.randrange(99)} {hex(rnd.randrange(256))} 40 {rnd.randrange(4)}"
        out.append(line)
        size += len(line) + 1
    return out


@pytest.mark.parametrize("chunk_bytes", [64, 1000])
def test_ingest_small_chunks_reads_every_line(tmp_path, long_valid_lines, chunk_bytes):
    from tracekit.db.query import connect

    f = tmp_path / "t.tr"
    f.write_text("\n".join(long_valid_lines) + "\n")
    store = Store(tmp_path / "store", create=True)
    r = ingest_file(store, f, chunk_bytes=chunk_bytes)
    assert r.n_events == len(long_valid_lines)
    cols = list(plain_wired(long_valid_lines[0], 1))
    con = connect(store.root)
    got = [dict(zip(cols, row)) for row in con.execute(f"SELECT {', '.join(cols)} FROM events ORDER BY line_no").fetchall()]
    assert got == [plain_wired(line, i) for i, line in enumerate(long_valid_lines, 1)]


def test_ingest_small_chunks_error_line_numbers(tmp_path, long_valid_lines):
    store = Store(tmp_path / "store", create=True)
    n = len(long_valid_lines)

    @settings(max_examples=25, **SETTINGS)
    # not line 1: a first line of no known format is an unknown file, not a bad line
    @given(st.integers(1, n - 1), st.sampled_from([64, 97, 4096]), st.sampled_from(["x", "+ 1 2", "+ 0.1 1 2 cbr 500 ------- 2 1.0.0 3.1 0 0"]))
    def check(k, chunk_bytes, bad):
        lines = list(long_valid_lines)
        lines[k] = bad
        f = tmp_path / "bad.tr"
        f.write_text("\n".join(lines) + "\n")
        with pytest.raises(TraceLineError) as e:
            ingest_file(store, f, chunk_bytes=chunk_bytes)
        assert e.value.line_no == k + 1 and e.value.path == str(f)
        assert store.run_ids() == [] and list(store.staging_dir.iterdir()) == []

    check()


def test_ingest_small_chunks_skip_bad_lines_counts(tmp_path, long_valid_lines):
    lines = list(long_valid_lines)
    bad_at = [5, len(lines) // 2, len(lines) - 3]   # the last one after the first 64 kB
    for k in bad_at:
        lines[k] = "garbage line"
    f = tmp_path / "some_bad.tr"
    f.write_text("\n".join(lines) + "\n")
    store = Store(tmp_path / "store", create=True)
    r = ingest_file(store, f, skip_bad_lines=True, chunk_bytes=64)
    assert (r.n_events, r.n_skipped_lines) == (len(lines) - 3, 3)
    assert f"first at line {bad_at[0] + 1}" in r.warnings[0]


def test_non_utf8_line_late_in_a_file(tmp_path, long_valid_lines):
    """Bytes that are not text after the part detection looks at: a line error, not a crash."""
    data = ("\n".join(long_valid_lines) + "\n").encode()
    k = len(long_valid_lines) - 10
    lines = data.split(b"\n")
    lines[k] = b"+ 0.5 1 2 tcp\xff\xfe 40 ------- 1 0.0 2.0 0 5"
    f = tmp_path / "bin.tr"
    f.write_bytes(b"\n".join(lines))
    store = Store(tmp_path / "store", create=True)
    with pytest.raises(TraceLineError) as e:
        ingest_file(store, f)
    assert e.value.line_no == k + 1 and "UTF-8" in str(e.value)
    r = ingest_file(store, f, skip_bad_lines=True)
    assert (r.n_events, r.n_skipped_lines) == (len(long_valid_lines) - 1, 1)


def test_errors_are_tracekit_errors():
    assert issubclass(TraceLineError, TracekitError)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=" \t\r\na1", max_size=60))
def test_normalize_ws_is_collapse_and_trim(text):
    """normalize_ws (bytes.replace, for speed) against the rule written plainly: CRLF -> LF,
    every run of blanks -> one space, then no blank at the start or end of a line."""
    import re

    from tracekit.formats.parsers import normalize_ws

    data = text.encode()
    want = re.sub(rb"(?m)^ | $", b"", re.sub(rb"[ \t]+", b" ", data.replace(b"\r\n", b"\n")))
    assert normalize_ws(data) == want


# -- the registry of trace formats ---------------------------------------------------------------

def test_registry_kinds_tables_and_packet_kinds():
    from tracekit.formats.parsers import FORMATS, MAIN_TABLE, PACKET_KINDS, TABLES

    assert MAIN_TABLE == {"wired": "events", "wireless": "wireless_events", "tcpvar": "tcp_vars",
                          "queue_monitor": "queue_samples", "red": "red_vars", "series": "series", "nam": "events",
                          "hier": "events"}
    assert set(PACKET_KINDS) == {"wired", "wireless", "nam", "hier"}
    assert set(TABLES) == {"events", "annotations", "tcp_vars", "queue_samples", "red_vars", "wireless_events",
                           "wireless_movements", "wireless_energy", "wireless_logs", "series", "node_addrs"}
    # a table several formats write (events: wired and nam; annotations: wired, wireless, nam)
    # has one schema
    assert all(f.tables[name] is TABLES[name] for f in FORMATS.values() for name in f.tables)
    assert all(s.names[0] == "line_no" for s in TABLES.values())


DATA_DIR = Path(__file__).resolve().parent / "data"


@pytest.mark.parametrize("name, expected", [
    ("wireless_cmu.tr", "wireless"),
    ("wireless_new.tr", "wireless"),
    ("nam.nam", "nam"),
    ("wired_tagged.tr", "looks like a tagged wired trace (use-taggedtrace), which tracekit cannot ingest yet"),
    ("tcpvar_oneline.tr", "looks like a one-line TCP variable trace (trace_all_oneline_; the plain format is "
                          "supported), which tracekit cannot ingest yet"),
])
def test_detection_of_the_captured_traces(name, expected):
    from tracekit.formats.detect import detect_kind
    from tracekit.core.errors import UnsupportedTraceError

    sample = (DATA_DIR / name).read_bytes()
    if " " not in expected:
        assert detect_kind(sample, "f") == expected
    else:
        with pytest.raises(UnsupportedTraceError) as e:
            detect_kind(sample, "f")
        assert str(e.value) == f"f: {expected}"


def test_unknown_format_names_every_ingestible_kind():
    from tracekit.formats.detect import detect_kind
    from tracekit.core.errors import UnsupportedTraceError

    with pytest.raises(UnsupportedTraceError) as e:
        detect_kind(b"hello world\n", "f")
    assert str(e.value) == ("f: unknown format: 'hello world' is not a line of a wired trace, a wireless trace, "
                            "a trace with hierarchical addresses, a TCP variable trace, a queue monitor trace, a RED trace, a time-value series or a nam trace")


def test_detection_asks_the_registered_formats(monkeypatch):
    import tracekit.formats.detect as detect
    from tracekit.formats.parsers import Parser, TraceFormat

    toy = TraceFormat(kind="toy", description="a toy trace", claims=lambda line: line.startswith("TOY "), parser=Parser)
    assert detect.classify_line("TOY 1 2") is None
    monkeypatch.setattr(detect, "DETECTION_ORDER", (*detect.DETECTION_ORDER, toy))
    assert detect.detect_kind(b"# a comment\nTOY 1 2\n", "t") == "toy"
    assert detect.classify_line("+ 0.1 0 1 tcp 40 ------- 1 0.0 1.0 0 0") == "wired"     # the others still answer
