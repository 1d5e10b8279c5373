"""The wireless parser's compiled fast path (tracekit/formats/parsers/_wirelessc.c) against its
pure-Python polars parser: on real ns-2 wireless traces of both formats (old CMU, new `-t`,
the two mixed; AODV, DSR with its own `S` lines, an energy model, `v` annotations, MDART),
chunk by chunk at several chunk sizes, and on real lines with one field changed into odd
forms. Both must give equal tables (stored types), the same bad lines and the same messages;
the fast path may only decline a chunk (then the polars parser takes it), never read it
differently.

Skipped where the extension was not built (no C compiler at install); CI builds it."""
from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from polars.testing import assert_frame_equal

from tracekit.core.errors import TracekitError
from tracekit.ingest.pipeline import _conform, _pl_schema, _stored_schema, ingest_file
from tracekit.formats.parsers import ParsedChunk, as_polars, parse_text, wireless
from tracekit.formats.sources import TraceSource
from tracekit.store.store import Store

_wirelessc = pytest.importorskip("tracekit.formats.parsers._wirelessc", reason="the C fast path is not built")

NS = "/usr/bin/ns"
TCL = Path(__file__).parent / "tcl"


def _parse(data: bytes, first: int, fast: bool, monkeypatch) -> ParsedChunk:
    with monkeypatch.context() as m:
        m.setattr(wireless, "_fast", _wirelessc if fast else None)
        return wireless.WirelessParser().parse_chunk(data, first)


def _stored(frame: pl.DataFrame | pa.Table, table: str) -> pl.DataFrame:
    """The frame as ingest stores it, categoricals as text (their codes may differ)."""
    schema = _pl_schema(table)
    return as_polars(frame).cast(schema).select(list(schema)).with_columns(pl.col(pl.Categorical).cast(pl.String))  # type: ignore[arg-type]


def _decoded(t: pa.Table) -> pa.Table:
    """`t` with its dictionary columns as plain strings (the codes may differ, the values not)."""
    return pa.Table.from_arrays([c.cast(pa.large_string()) if pa.types.is_dictionary(c.type) else c for c in t.columns],
                                names=t.column_names)


def _assert_same(data: bytes, first: int, monkeypatch) -> bool:
    """Fast and pure parse of one chunk agree; True if the fast path took the chunk."""
    took = _wirelessc.parse_wireless(data, first) is not None
    a, b = _parse(data, first, True, monkeypatch), _parse(data, first, False, monkeypatch)
    _same_tables(a, b, took)
    assert (a.bad_offsets, a.bad_count, a.comments) == (b.bad_offsets, b.bad_count, b.comments)
    return took


def _same_tables(a: ParsedChunk, b: ParsedChunk, took: bool) -> None:
    assert a.tables.keys() == b.tables.keys()
    for name in a.tables:
        assert as_polars(a.tables[name]).schema == as_polars(b.tables[name]).schema, name
        assert_frame_equal(_stored(a.tables[name], name), _stored(b.tables[name], name))
        # and as the Parquet writer gets them (tracekit.ingest.pipeline._conform), dictionaries as text
        got, want = (_conform(x.tables[name], name) for x in (a, b))
        assert got.schema == want.schema == _stored_schema(name), name
        assert _decoded(got).equals(_decoded(want)), name
        if took:       # the fast path's tables are of the stored types: no cast on the way to the writer
            assert isinstance(a.tables[name], pa.Table) and a.tables[name].schema.types == _stored_schema(name).types, name


def _fast_reads(lines: list[bytes]) -> bool:
    """Whether the fast path is meant to take a chunk of these real lines: every one an
    event, M, N or DSR's S line (blank, '#', 'v' lines go to the polars parser)."""
    return all(line[:2] in (b"s ", b"r ", b"f ", b"d ", b"D ", b"M ", b"N ") or line[:1] == b"S" for line in lines)


# Real ns-2 runs of tests/tcl/wireless.tcl (7 nodes, AODV or DSR, cbr and tcp flows, a
# moving node: M lines, drops of every layer), 15 simulated seconds, 1.5-5 MB each.
RUNS = {
    "old_aodv": ("old", "AODV"), "new_aodv": ("new", "AODV"), "mixed_aodv": ("mixed", "AODV"),
    "old_dsr": ("old", "DSR"), "new_dsr": ("new", "DSR"),
    "old_energy": ("old", "AODV", "energy"), "new_energy": ("new", "AODV", "energy"),
}


@pytest.fixture(scope="module")
def wl_traces(tmp_path_factory) -> dict[str, Path]:
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    d = tmp_path_factory.mktemp("wl_fast")
    procs = {name: subprocess.Popen([NS, str(TCL / "wireless.tcl"), args[0], args[1], str(d / f"{name}.tr"), *args[2:]],
                                    cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for name, args in RUNS.items()}
    for name, p in procs.items():
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, (name, err[-2000:])
    return {name: d / f"{name}.tr" for name in RUNS}


def _windows(data: bytes, size: int) -> list[bytes]:
    """The trace's first `size` bytes, and `size` bytes from the first M line (whole lines)."""
    out = []
    for start in (0, data.find(b"\nM ") + 1):
        piece = data[start:start + size]
        out.append(piece[:piece.rfind(b"\n") + 1])
    return out


@pytest.mark.parametrize("chunk_bytes", [1 << 20, 4096, 700])
def test_real_traces_chunk_by_chunk(wl_traces, wild_traces, tmp_path, monkeypatch, chunk_bytes):
    paths = [*wl_traces.values(), wild_traces["wl_annot_old"], wild_traces["wl_annot_new"], wild_traces["wl_mdart"]]
    taken: dict[str, int] = {}
    for path in paths:
        data = path.read_bytes()
        # the whole trace in 1 MiB chunks; at the small sizes two windows of it (polars takes
        # ~5 ms a chunk however small)
        pieces = [data] if chunk_bytes == 1 << 20 else _windows(data, 12 * chunk_bytes)
        for k, piece in enumerate(pieces):
            f = tmp_path / f"{path.stem}-{k}.tr"
            f.write_bytes(piece)
            for chunk in TraceSource.open(f).chunks(chunk_bytes):
                took = _assert_same(chunk.data, chunk.first_line_no, monkeypatch)
                assert took == _fast_reads(chunk.data.splitlines()), (path.name, chunk.first_line_no)
                taken[path.stem] = taken.get(path.stem, 0) + took
    # the fast path took chunks of every trace; in 1 MiB chunks, not of the small ones with
    # a `v` line at the top
    expect = set(wl_traces) | ({"wl_annot_old", "wl_annot_new", "wl_mdart"} if chunk_bytes < 1 << 20 else set())
    assert {name for name, n in taken.items() if n} == expect


def test_real_traces_have_what_the_comparison_needs(wl_traces, wild_traces, monkeypatch):
    """The chunks the fast path took hold every line shape it reads: both formats, every
    event and layer, the packet types (IP, routing, ARP, MAC control), M lines, drop reasons,
    energy readings of the three kinds (old [energy] blocks, new -Ne, N lines), DSR's logs."""
    monkeypatch.setattr(wireless, "_fast", _wirelessc)
    seen: dict[str, set] = {"fmt": set(), "event": set(), "layer": set(), "ptype": set(), "reason": set()}
    moves = 0
    energy: list[pl.DataFrame] = []
    tags: set[str] = set()
    for path in [*wl_traces.values(), wild_traces["wl_mdart"]]:
        # (wl_mdart is one small chunk with a `v` line at the top)
        for chunk in TraceSource.open(path).chunks(4096 if path.stem == "wl_mdart" else 1 << 16):
            fast = wireless.parse_fast(chunk.data, chunk.first_line_no)
            if fast is None:
                continue
            tables = {k: as_polars(v) for k, v in fast.items()}
            ev = tables.get("wireless_events")
            if ev is not None:
                for c in seen:
                    seen[c] |= set(ev[c].cast(pl.String).drop_nulls())
            moves += tables["wireless_movements"].height if "wireless_movements" in tables else 0
            energy += [tables["wireless_energy"]] if "wireless_energy" in tables else []
            if "wireless_logs" in tables:
                tags |= set(tables["wireless_logs"]["tag"].cast(pl.String)) | ({"(node)"} if tables["wireless_logs"]["node"].null_count() else set())
    assert seen["fmt"] == {"old", "new"}
    assert seen["event"] == {"s", "r", "f", "d"}
    assert seen["layer"] >= {"AGT", "RTR", "MAC", "IFQ"}
    assert seen["ptype"] >= {"cbr", "tcp", "ack", "AODV", "DSR", "ARP", "RTS", "CTS", "ACK", "MDART"}
    assert seen["reason"] >= {"COL", "END"}
    assert moves
    en = pl.concat(energy)
    assert en["idle_j"].null_count() and en["idle_j"].drop_nulls().len()     # -Ne and N lines; [energy] blocks
    assert tags >= {"SFs", "SFf", "SFESTs", "Sconfig", "(node)"}


# Real lines of each shape the fast path reads (from the traces above and the benchmark's
# 50-node MANET), with ns-2's spacing: the layer padded, a blank at the end of some.
BASES = [
    "s 0.306057460 _16_ AGT  --- 0 cbr 512 [0 0 0 0] ------- [16:0 23:0 32 0] [0] 0 0 ",
    "r 2.034546552 _0_ AGT  --- 9 tcp 40 [13a 0 1 800] ------- [5:0 0:1 28 0] [0 0] 3 0",
    "s 2.034546552 _0_ AGT  --- 12 ack 40 [0 0 0 0] ------- [0:1 5:0 32 0] [0 0] 0 0",
    "s 0.306592460 _16_ MAC  --- 0 AODV 106 [0 ffffffff 10 800] ------- [16:255 -1:255 30 0] [0x2 1 1 [23 0] [16 4]] (REQUEST)",
    "f 0.421868292 _39_ RTR  --- 0 AODV 44 [13a 27 2f 800] ------- [47:255 34:255 29 27] [0x4 2 [47 4] 10.000000] (REPLY)",
    "D 0.332175057 _34_ MAC  COL 0 ARP 86 [0 ffffffff 17 806] ------- [REQUEST 23/23 0/15]",
    "s 0.417429400 _39_ MAC  --- 0 RTS 44 [52e 2f 27 0] ",
    "D 2.141552015 _15_ IFQ  ARP 0 cbr 532 [13a f f 800] ------- [16:0 23:0 26 23] [0] 4 0",
    "s 1.002133825 _0_ MAC  --- 1 DSR 90 [0 ffffffff 0 800] ------- [0:255 3:255 32 0] 1 [1 1] [0 1 0 0->0] [0 0 0 0->0]",
    "s 5.000000000 _1_ AGT  --- 44 message 32 [0 0 0 0] ------- [1:0 2:0 32 0]",
    "s -t 0.148316466 -Hs 38 -Hd -2 -Ni 38 -Nx 794.31 -Ny 678.73 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 "
    "-Is 38.1 -Id 10.0 -It cbr -Il 512 -If 5 -Ii 0 -Iv 32 -Pn cbr -Pi 0 -Pf 0 -Po 0 ",
    "r -t 2.010047276 -Hs 2 -Hd 2 -Ni 2 -Nx 450.00 -Ny 300.00 -Nz 0.00 -Ne -1.000000 -Nl MAC -Nw --- -Ma 13a -Md 2 -Ms 5 -Mt 800 "
    "-Is 5.0 -Id 0.1 -It tcp -Il 84 -If 3 -Ii 12 -Iv 32 -Pn tcp -Ps 0 -Pa 0 -Pf 1 -Po 0 ",
    "s -t 2.034546552 -Hs 0 -Hd -2 -Ni 0 -Nx 50.00 -Ny 300.00 -Nz 0.00 -Ne -1.000000 -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 "
    "-Is 0.1 -Id 5.0 -It ack -Il 40 -If 3 -Ii 12 -Iv 32 -Pn tcp -Ps 0 -Pa 0 -Pf 0 -Po 0 ",
    "d -t 0.166841337 -Hs 32 -Hd -2 -Ni 32 -Nx 897.51 -Ny 779.70 -Nz 0.00 -Ne -1.000000 -Nl MAC -Nw COL -Ma 0 -Md ffffffff -Ms 1f "
    "-Mt 800 -Is 31.255 -Id -1.255 -It AODV -Il 106 -If 0 -Ii 0 -Iv 28 -P aodv -Pt 0x2 -Ph 3 -Pb 1 -Pd 10 -Pds 0 -Ps 38 -Pss 4 -Pc REQUEST ",
    "s -t 0.150020140 -Hs 10 -Hd -2 -Ni 10 -Nx 689.19 -Ny 851.61 -Nz 0.00 -Ne -1.000000 -Nl MAC -Nw --- -Ma 0 -Md ffffffff -Ms a "
    "-Mt 806 -P arp -Po REQUEST -Pms 10 -Ps 10 -Pmd 0 -Pd 38 ",
    "s -t 0.150803815 -Hs 38 -Hd -2 -Ni 38 -Nx 794.31 -Ny 678.73 -Nz 0.00 -Ne -1.000000 -Nl MAC -Nw --- -Ma 52e -Md a -Ms 26 -Mt 0 ",
    "s -t 1.002058825 -Hs 0 -Hd -1 -Ni 0 -Nx 50.00 -Ny 300.00 -Nz 0.00 -Ne 99.500000 -Nl RTR -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 "
    "-Is 0.255 -Id 3.255 -It DSR -Il 32 -If 0 -Ii 1 -Iv 32 -P dsr -Ph 1 -Pq 1 -Ps 1 -Pp 0 -Pn 1 -Pl 0 -Pe 0->0 -Pw 0 -Pm 0 -Pc 0 -Pb 0->0 ",
    "D -t 3.921095218 -Hs 44 -Hd 6 -Ni 44 -Nx 347.97 -Ny 759.38 -Nz 0.00 -Ne 0.000000 -Nl IFQ -Nw END -Ma 13a -Md 6 -Ms 2c -Mt 800 "
    "-Is 1.1 -Id 5.1 -It message -Il 532 -If 12 -Ii 155 -Iv 28",
    "M 5.00000 0 (815.90, 606.63, 0.00), (495.58, 381.83), 4.32",
    "N -t 1.000116 -n 1 -e 99.989744",
    "s 1.000000000 _0_ AGT  --- 0 cbr 512 [0 0 0 0] [energy 100.000000 ei 0.000 es 0.000 et 0.000 er 0.000] ------- [0:0 3:0 32 0] [0] 0 0",
    "s 1.013993635 _2_ MAC  --- 0 RTS 44 [52e 3 2 0] [energy 99.988179 ei 0.010 es 0.000 et 0.001 er 0.001] ",
    "r 1.013778635 _2_ MAC  --- 0 ARP 28 [0 ffffffff 3 806] [energy 99.988179 ei 0.010 es 0.000 et 0.001 er 0.001] ------- [REQUEST 3/3 0/2]",
    "SFs 1.750000000 _0_ 9 [0 -> 3] 1(0) to 1 ",
    "SFESTs 1.063705709 _0_ 0 [0 -> 3] 1(1) to 1 [0 |1 2 3 ]",
    "Sconfig 0.00000 tap: on snoop: rts? on errs? on",
    "SRS 2.5 _3_",
]

NEW_KEYS = ["-t", "-Hs", "-Hd", "-Ni", "-Nx", "-Ny", "-Nz", "-Ne", "-Nl", "-Nw", "-Ma", "-Md", "-Ms", "-Mt", "-Is", "-Id",
            "-It", "-Il", "-If", "-Ii", "-Iv", "-Pn", "-Ps", "-Pa", "-Pi", "-Pf", "-Po", "-P"]
ODD = ["0", "1", "-1", "-0", "007", "+3", "00", "2147483647", "2147483648", "-2147483648", "-2147483649",
       "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
       "1.5", "-0.5", "-0.0", "1.", ".5", "1e5", "1E-5", "1e+05", "5e-324", "1e400", "1e-400", "0.1234567890123456789",
       "123456789012345678901234", "nan", "inf", "-inf", "x", "---", "-", "ffffffff", "7fffffff", "80000000", "fffffffff",
       "FF", "0x1a", "0a", "-1a", "\u00e9t\u00e9", "a\x0bb", "a\rb", "[", "]", "[0", "0]", "[0]", "[-1", "-1]", "[00",
       "_1_", "__", "_-1_", "_01_", "1.2", "1.2.3", "-1.255", "1.-1", "01.0", ".1", "1:2", "-1:-1", "1:2:3", "01:1", "1:",
       "(1.0,", "1.0,", "1.0),", "(1.0", "1.0)", "(+1.0,", "arp", "tcp", "cbr", "ARP", "REQUEST", "[energy", "-------", "->"]


def _variant_lines() -> list[str]:
    """Every base line with one field replaced by each odd value (new-format lines also by
    each key), deleted, doubled; and whole-line changes (blanks, CR, tabs)."""
    out = []
    for base in BASES:
        t = base.split()
        values = ODD + (NEW_KEYS if t[1] == "-t" else [])
        end = " " if base.endswith(" ") else ""     # the blank ns-2 ends the line with, kept
        for i in range(len(t)):
            for v in values:
                out.append(" ".join(t[:i] + [v] + t[i + 1:]) + end)
            out.append(" ".join(t[:i] + t[i + 1:]) + end)
            out.append(" ".join(t[:i + 1] + t[i:]) + end)
            if t[i][:1] == "[" or t[i][-1:] in "])":     # a bracket lost
                out.append(" ".join(t[:i] + [t[i].strip("[]()")] + t[i + 1:]) + end)
        out += [base, base.strip(), " " + base, base + "\r", base.strip() + " \r", base.replace(" ", "\t"), base.replace(" ", "  "),
                base.replace(" ", " \t "), base + " x", base.strip() + "\x00", base[:-2] if len(base) > 2 else base]
        if t[1] == "-t":        # keys again after ns-2's own layout (the first of each key wins)
            out += [base.strip() + " -Ni 7 -Is 1.2 -Pn tcp -Ps 3", base.strip() + " -P", base.strip() + " -Pn"]
    return out


def _cut(lines: list[bytes], first: int, monkeypatch, out: list[int]) -> None:
    """Compare fast and pure on `lines` (each one the fast path takes alone): the fast path
    takes them together too unless a dictionary column gets more than its 64 values; halve."""
    data = b"".join(line + b"\n" for line in lines)
    if _wirelessc.parse_wireless(data, first) is None and len(lines) > 1:
        half = len(lines) // 2
        _cut(lines[:half], first, monkeypatch, out)
        _cut(lines[half:], first + half, monkeypatch, out)
        return
    assert _assert_same(data, first, monkeypatch), lines[:3]
    out.append(len(lines))


def test_odd_lines(monkeypatch):
    """Each variant the fast path takes alone is read like the polars parser reads it (in
    batches, the polars parser being the slow side); each it declines, it declines within a
    chunk of good lines too (then the polars parser has the chunk: equal by construction)."""
    variants = [v.encode() for v in _variant_lines()]
    taken, declined = [], []
    for v in variants:
        (taken if _wirelessc.parse_wireless(v + b"\n", 1) is not None else declined).append(v)
    good = [b.encode() for b in BASES]
    # every base line is taken, and a share of the variants (those still plain ns-2 lines)
    assert all(b in taken for b in good)
    assert 0.1 < len(taken) / len(variants) < 0.9, (len(taken), len(variants))
    done: list[int] = []
    for k in range(0, len(taken), 3000):
        _cut(taken[k:k + 3000], 7 + k, monkeypatch, done)
    assert sum(done) == len(taken)
    for v in declined:
        assert _wirelessc.parse_wireless(b"".join(x + b"\n" for x in [*good[:3], v, *good[3:]]), 1) is None, v
    for v in random.Random(16).sample(declined, 20):
        _assert_same(b"".join(x + b"\n" for x in [*good[:3], v, *good[3:]]), 100, monkeypatch)


def test_declined_lines_among_good_ones(monkeypatch):
    """A line of a kind the fast path leaves to the polars parser (blank, '#', 'v', a wired
    line, a bad line of each kind) sends the whole chunk there: same tables, bad lines and
    messages (parse_text raises the polars parser's)."""
    good = BASES[:4] + BASES[10:12] + BASES[-1:]
    others = ["", "   ", "# a comment", "v 1.0 eval {set a 1}", "SFs x _0_ 9", "S1 2.0 x", "N -t 1.000116 -n 1",
              "s 1.000000000 _0_ AGT  --- 0 cbr 512 [0 0 0 0] [energy 100.000000 ei 0.000 es] ------- [0:0 3:0 32 0] [0] 0 0",
              "+ 0.1 1 2 cbr 500 ------- 2 1.0 3.1 0 0", "s 0.5 _0_ AGT", "x y z", "s -t x -Ni 1 -Nl AGT", "M 1.0 2 (1, 2)"]
    for line in others:
        data = ("\n".join(good[:3] + [line] + good[3:]) + "\n").encode()
        assert _wirelessc.parse_wireless(data, 1) is None, line
        _assert_same(data, 1, monkeypatch)
        with monkeypatch.context() as m:
            pure = None
            for fast in (True, False):
                m.setattr(wireless, "_fast", _wirelessc if fast else None)
                try:
                    got = {k: _stored(v, k) for k, v in parse_text(data.decode(), "wireless").items()}
                except TracekitError as e:
                    got = str(e)          # type: ignore[assignment]
                if pure is None:
                    pure = got
                elif isinstance(got, str):
                    assert got == pure
                else:
                    assert isinstance(pure, dict) and got.keys() == pure.keys()
                    for k in got:
                        assert_frame_equal(got[k], pure[k])


def test_leading_comment_lines(monkeypatch):
    """A chunk that starts with '#' lines (a scenario trace's tracekit-meta header; a short
    trace is that one chunk) has them as comments and the lines after them read by the fast
    path, as the polars parser reads the whole chunk; a '#' line further down sends the chunk
    to the polars parser."""
    head = '# tracekit-meta {"scenario": "manet", "seed": 1}\n#\n'
    data = (head + "\n".join(BASES) + "\n").encode()
    calls: list[bool] = []
    real = wireless.parse_fast

    def spy(d, first):
        got = real(d, first)
        calls.append(got is not None)
        return got

    monkeypatch.setattr(wireless, "parse_fast", spy)
    a = _parse(data, 10, True, monkeypatch)
    assert calls == [False, True]          # the whole chunk declined, the lines after the header taken
    b = _parse(data, 10, False, monkeypatch)
    _same_tables(a, b, True)
    assert a.comments == b.comments == [(10, '# tracekit-meta {"scenario": "manet", "seed": 1}'), (11, "#")]
    assert a.tables["wireless_events"]["line_no"][0].as_py() == 12
    assert (a.bad_offsets, a.bad_count) == (b.bad_offsets, b.bad_count) == ([], 0)
    calls.clear()
    lines = data.decode().split("\n")
    later = ("\n".join(lines[:5] + ["# later"] + lines[5:])).encode()
    a = _parse(later, 1, True, monkeypatch)
    assert calls == [False, False]         # the polars parser has the chunk
    _same_tables(a, _parse(later, 1, False, monkeypatch), False)


def test_random_numbers_read_alike(monkeypatch):
    """Times and positions printed every way (%.9f as ns-2 does, %.17g, repr, %g, %e), and
    integers near the type limits: the fast path reads each like polars, or declines."""
    rng = random.Random(5)
    lines = []
    for _ in range(2000):
        t = rng.choice([rng.random() * 10 ** rng.randint(-8, 9), rng.randint(0, 10**6) / 1000, 10 ** rng.uniform(-30, 30)])
        fmt = rng.choice(["%.9f", "%.17g", "%g", "%e", "%.6f", "%r"])
        ts = repr(t) if fmt == "%r" else fmt % t
        big = rng.choice([0, 1, rng.randint(0, 2**31 - 1), rng.randint(-2**31, -1), rng.randint(0, 2**63 - 1), -2**63])
        if rng.random() < 0.5:
            lines.append(f"{rng.choice('srfdD')} {ts} _{rng.randint(0, 99)}_ RTR  --- {big} cbr {rng.randint(0, 2000)} "
                         f"[{rng.randint(0, 0xfff):x} {rng.randint(0, 2**32 - 1):x} {rng.randint(0, 99):x} 800] ------- "
                         f"[{rng.randint(-1, 99)}:{rng.randint(0, 255)} {rng.randint(-1, 99)}:0 {rng.randint(0, 32)} "
                         f"{rng.randint(-1, 99)}] [{big}] {rng.randint(0, 9)} 0 ")
        else:
            pos = " ".join(f"-N{c} {rng.uniform(-1e4, 1e4):.{rng.randint(0, 12)}f}" for c in "xyz")
            lines.append(f"{rng.choice('srfd')} -t {ts} -Hs 1 -Hd {rng.randint(-2, 99)} -Ni {rng.randint(0, 2**31 - 1)} {pos} "
                         f"-Ne {rng.choice(['-1.000000', ts])} -Nl AGT -Nw --- -Ma 0 -Md 0 -Ms 0 -Mt 0 -Is 1.0 -Id 2.0 "
                         f"-It tcp -Il {rng.randint(0, 2000)} -If 1 -Ii {big} -Iv 32 -Pn tcp -Ps {big} -Pa {rng.randint(0, 9)} "
                         f"-Pf 0 -Po 0 ")
    taken = [_assert_same(("\n".join(lines[k:k + 250]) + "\n").encode(), 1 + k, monkeypatch) for k in range(0, len(lines), 250)]
    assert sum(taken) >= 2         # %.9f, %.6f and %g (a plain number, where it is one) are read


def test_ingest_stores_the_same_tables(wl_traces, tmp_path, monkeypatch):
    """Whole ingests, fast and pure: the stored Parquet tables are equal, types included."""
    tables = ("wireless_events", "wireless_movements", "wireless_logs")
    for name in ("mixed_aodv", "old_dsr"):     # mixed: AGT lines new, the others old
        got = {}
        for fast in (True, False):
            with monkeypatch.context() as m:
                m.setattr(wireless, "_fast", _wirelessc if fast else None)
                store = Store(tmp_path / f"{name}-{fast}", create=True)
                res = ingest_file(store, wl_traces[name], chunk_bytes=1 << 18)
            run = store.run_dir(res.run_id)
            got[fast] = {t: pa.concat_tables([pq.read_table(f) for f in sorted(run.glob(f"{t}-*.parquet"))])
                         for t in tables if list(run.glob(f"{t}-*.parquet"))}
        assert got[True].keys() == got[False].keys()
        for t in got[True]:
            a, b = got[True][t], got[False][t]
            assert a.schema.types == b.schema.types, (name, t)
            assert a.num_rows and a.to_pylist() == b.to_pylist(), (name, t)


def test_bad_line_message_is_the_same(wl_traces, tmp_path, monkeypatch):
    """A bad line deep in a trace the fast path otherwise takes: ingest reports the same
    `file:line` and message either way."""
    lines = wl_traces["old_aodv"].read_bytes().split(b"\n")
    lines[5000] = lines[5000].replace(b"[0 0 0 0]", b"[0 0 0 zz]") if b"[0 0 0 0]" in lines[5000] else b"s 1.0 _x_ AGT"
    bad = tmp_path / "bad.tr"
    bad.write_bytes(b"\n".join(lines))
    msgs = []
    for fast in (True, False):
        with monkeypatch.context() as m:
            m.setattr(wireless, "_fast", _wirelessc if fast else None)
            with pytest.raises(TracekitError) as e:
                ingest_file(Store(tmp_path / f"s-{fast}", create=True), bad, chunk_bytes=1 << 16)
            msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and ":5001:" in msgs[0]


def test_pure_python_switch():
    """The parser uses the fast path where it is built; TRACEKIT_PURE_PYTHON=1 leaves it without."""
    if os.environ.get("TRACEKIT_PURE_PYTHON", "") in ("", "0"):
        assert wireless._fast is _wirelessc
    code = "from tracekit.formats.parsers import wireless; print(wireless._fast is None)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "TRACEKIT_PURE_PYTHON": "1"}).stdout.strip()
    assert out == "True"


def test_fast_ingest_imports_no_polars(tmp_path):
    """A trace the fast path reads whole (and a '#' header) is ingested without importing
    polars (0.1-0.2 s of CPU at start-up): only the polars parser needs it."""
    trace = tmp_path / "t.tr"
    in_order = sorted(BASES, key=lambda line: float(line.split()[2 if line.split()[1] == "-t" else 1]))
    trace.write_text("# tracekit-meta {}\n" + "\n".join(in_order) + "\n")
    code = ("import sys\nfrom tracekit.ingest.pipeline import ingest_file\nfrom tracekit.store.store import Store\n"
            f"ingest_file(Store({str(tmp_path / 's')!r}, create=True), {str(trace)!r})\n"
            "print('polars' in sys.modules)")
    env = {k: v for k, v in os.environ.items() if k != "TRACEKIT_PURE_PYTHON"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout.split()
    assert out[-1] == "False"
