"""The queue monitor and TCP variable parsers' compiled fast path (parse_fields in
tracekit/formats/parsers/_wiredc.c: a chunk of lines of one fixed shape, as ns-2 writes them, the
traces a sweep ingests per simulation) against their polars parsers: on real ns-2 traces (a
scenario's header on top), on chunks cut anywhere, and on real lines with one field changed
into odd forms. Both must give equal stored tables, the same bad lines and comments; the fast
path may only decline a chunk (then polars reads it), never read it differently.

Skipped where the extension was not built (no C compiler at install); CI builds it."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import zstandard

from tracekit.formats import parsers
from tracekit.ingest.pipeline import _conform, _stored_schema
from tracekit.formats.parsers import ParsedChunk, queue, tcpvar

_wiredc = pytest.importorskip("tracekit.formats.parsers._wiredc", reason="the C fast path is not built")

SAMPLE = Path(__file__).resolve().parent.parent / "sample_traces" / "cbr-variants" / "Reno-7.0-seed1"
PARSERS = {"queue_samples": queue.QueueMonitorParser(), "tcp_vars": tcpvar.TcpVarParser()}
# monitor-queue samples (the periodic shape): written by hand in ns-2's form
PERIODIC = b"".join(b"%s 1 2 %s %s %d %d %d %d %d %d\n" % (repr(0.1 * i).encode(), repr(37.5 * i).encode(),
                                                           repr(0.25 * i).encode(), 10 * i, 9 * i, i, 1000 * i, 900 * i, 100 * i)
                    for i in range(1, 40))
ODD = ["", "x", "-", "q", "-t", "1.", ".5", "01", "-0", "1e3", "1E-2", "nan", "inf", "-inf", "+1", "0x1f", "2147483648",
       "99999999999999999999", "1.5e400", "#", "a b", "é", "\t"]


def _parse(table: str, data: bytes, first: int, fast: bool, monkeypatch) -> tuple[ParsedChunk, list]:
    with monkeypatch.context() as m:
        m.setattr(parsers, "_fast", _wiredc if fast else None)     # also under TRACEKIT_PURE_PYTHON=1
        res = PARSERS[table].parse_chunk(data, first)
    rows = []
    for name, frame in res.tables.items():
        stored = _conform(frame, name)
        assert stored.schema == _stored_schema(name)
        rows.append((name, stored.to_pylist()))
    return res, rows


def _same(table: str, data: bytes, monkeypatch, first: int = 1) -> bool:
    """Both ways give the same; True when the fast path took the chunk."""
    (fast, fast_rows), (slow, slow_rows) = (_parse(table, data, first, f, monkeypatch) for f in (True, False))
    assert repr(fast_rows) == repr(slow_rows)          # repr: NaN equal to NaN
    assert (fast.bad_offsets, fast.bad_count, fast.comments) == (slow.bad_offsets, slow.bad_count, slow.comments)
    with monkeypatch.context() as m:
        m.setattr(parsers, "_fast", _wiredc)
        m.setattr(parsers, "parse_fields_fast", lambda *a: None)
        m.setattr(queue, "parse_fields_fast", lambda *a: None)
        m.setattr(tcpvar, "parse_fields_fast", lambda *a: None)
        declined = PARSERS[table].parse_chunk(data, first)
    return any(type(f).__name__ == "Table" for f in fast.tables.values()) and \
        not any(type(f).__name__ == "Table" for f in declined.tables.values())


def _trace(name: str) -> bytes:
    with open(SAMPLE / f"{name}.tr.zst", "rb") as f:
        return zstandard.ZstdDecompressor().stream_reader(f).read()


@pytest.mark.parametrize("table,name", [("queue_samples", "queue"), ("tcp_vars", "cwnd")])
def test_real_traces_whole_and_cut_anywhere(table, name, monkeypatch):
    data = _trace(name)
    assert data.startswith(b"# tracekit-meta") and len(data) > 1000
    assert _same(table, data, monkeypatch), "the fast path reads ns-2's own trace"
    lines = data.split(b"\n")[:-1]
    rng = random.Random(1)
    taken = 0
    for _ in range(40):
        a = rng.randrange(len(lines))
        b = min(len(lines), a + rng.randrange(1, 300))
        taken += _same(table, b"\n".join(lines[a:b]) + b"\n", monkeypatch, first=a + 1)
    assert taken >= 30


def test_periodic_samples_and_a_mixed_chunk(monkeypatch):
    assert _same("queue_samples", PERIODIC, monkeypatch, first=7)
    events = b"\n".join(_trace("queue").split(b"\n")[1:20]) + b"\n"
    assert not _same("queue_samples", events + PERIODIC, monkeypatch), "two shapes in one chunk: polars reads it"


@pytest.mark.parametrize("table,name", [("queue_samples", "queue"), ("tcp_vars", "cwnd")])
def test_one_field_changed(table, name, monkeypatch):
    """Real lines with one field (or the blanks) changed into odd forms, in a chunk of good ones."""
    lines = _trace(name).split(b"\n")
    header, body = lines[0], lines[1:30]
    if table == "queue_samples":
        body += PERIODIC.split(b"\n")[:5]
    rng = random.Random(2)
    for k in range(300):
        i = rng.randrange(len(body))
        fields = body[i].split(b" ")
        j = rng.randrange(len(fields))
        fields[j] = rng.choice(ODD).encode()
        shapes = [body[:i] + [b" ".join(fields)] + body[i + 1:], body[:i] + [b"  " + body[i] + b" "]]
        chunk = b"\n".join([header] + shapes[k % 2]) + b"\n"
        _same(table, chunk, monkeypatch)
