"""The CLI on bad input: a non-zero exit, one line on stderr, no traceback, and the store
exactly as it was (every file under the data directory compared before and after)."""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import re
import shutil
import zlib
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from tracekit.apps.cli import app
from tracekit.db.query import connect

DATA = Path(__file__).resolve().parent / "data"
VALID_WIRED = re.compile(r"^[-+rd] \S+ -?\d+ -?\d+ \S+ \d+ \S{7} -?\d+ -?\d+\.-?\d+ -?\d+\.-?\d+ -?\d+ \d+( -?\d+ 0x[0-9a-f]+ \d+ \d+)?$")


def events_in(text: str) -> int:
    """Complete, valid wired event lines, counted with a regex (independent of tracekit)."""
    return sum(1 for line in text.split("\n") if VALID_WIRED.match(line))


def one_error_line(p, *needles: str) -> str:
    """The command failed with exactly one line on stderr that contains every needle."""
    assert p.returncode != 0, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


@pytest.fixture
def refused(populated_store, tracekit_cli, tracekit_inproc, store_listing):
    """Run `tracekit ingest FILE` on a store holding one run; check it failed with one
    stderr line naming `needles` and that the store did not change. `subprocess=False`
    runs the CLI in this process (CliRunner), which saves an interpreter start-up."""

    def check(path, *needles, extra=(), subprocess=False):
        before = store_listing(populated_store)
        run = tracekit_cli if subprocess else tracekit_inproc
        p = run("ingest", path, *extra, data=populated_store)
        line = one_error_line(p, *needles)
        assert store_listing(populated_store) == before
        return line

    return check


def _with_line(src: Path, dst: Path, line_no: int, new: str) -> Path:
    lines = src.read_text().split("\n")
    lines[line_no - 1] = new
    dst.write_text("\n".join(lines))
    return dst


# -- ingest: bad traces ----------------------------------------------------------------------

def test_malformed_line_in_the_middle(tmp_path, ns_traces, refused):
    src = ns_traces["wired_plain"]
    n = len(src.read_text().splitlines())
    bad_no = n // 2
    f = _with_line(src, tmp_path / "bad.tr", bad_no, "+ 0.5 2 3 tcp 1040 ------- 1 0.0 3.0 x17 99")
    line = refused(f, f"{f}:{bad_no}:", subprocess=True)
    assert line.startswith("tracekit: error: ") and "sequence number" in line


@pytest.mark.parametrize("new, needle", [
    ("+ 0.5 2 3 tcp 1040 ------- 1 0.0 3.0 17", "12 or 16"),             # fields missing
    ("+ 0.5 2 3 tcp 1040 ------- 1 0.0 3.0 17 99 0 0x0 0", "12 or 16"),  # 15 fields
    ("x 0.5 2 3 tcp 1040 ------- 1 0.0 3.0 17 99", "unknown event"),
    ("+ 0.5 2 3 tcp 1040 ------- 1 0.0 3.0 17 99 0 0xZZ 0 0", "hex"),
])
def test_other_malformed_lines_name_file_and_line(tmp_path, ns_traces, refused, new, needle):
    src = ns_traces["wired_tcphdr"] if "0x" in new else ns_traces["wired_plain"]
    f = _with_line(src, tmp_path / "bad.tr", 321, new)
    refused(f, f"{f}:321:", needle)


def test_skip_bad_lines_ingests_the_rest(tmp_path, ns_traces, tracekit_cli):
    text = ns_traces["wired_plain"].read_text().split("\n")
    garbage = ["+ 0.5 2 3 tcp 1040 ------- 1 0.0 3.0 x17 99", "hello world", "r 0.7 2 3 tcp",
               "+ 0.5 2 3 tcp 1040 ------- 1 0.0.1.0 3.0 17 99", "d 1.0 2 3 tcp 1040 ------- 1 0.0 3.0 17 99 extra"]
    for i, g in zip((10, 200, 201, 700, 1100), garbage):
        text[i] = g
    f = tmp_path / "some_bad.tr"
    f.write_text("\n".join(text))
    skipped = sum(1 for line in text if line and not VALID_WIRED.match(line))   # counted independently
    assert skipped == len(garbage)
    data = tmp_path / "store"
    p = tracekit_cli("ingest", "--skip-bad-lines", f, data=data)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert f"skipped {skipped} bad line(s); first at line 11" in p.stderr
    [(n_events, n_skipped)] = connect(data).execute("SELECT n_events, n_skipped_lines FROM runs").fetchall()
    assert (n_events, n_skipped) == (events_in("\n".join(text)), skipped)


def test_truncated_last_line_is_dropped_with_a_warning(tmp_path, ns_traces, tracekit_cli):
    raw = ns_traces["wired_plain"].read_bytes()
    cut = raw[: raw.rindex(b"\n", 0, len(raw) - 1) + 20]       # 20 bytes into the last line
    assert not cut.endswith(b"\n")
    f = tmp_path / "cut.tr"
    f.write_bytes(cut)
    data = tmp_path / "store"
    p = tracekit_cli("ingest", f, data=data)
    assert p.returncode == 0, p.stderr
    n_lines = cut.count(b"\n") + 1
    assert f"{f}:{n_lines}: last line has no newline" in p.stderr and "Traceback" not in p.stderr
    complete = cut[: cut.rindex(b"\n") + 1].decode()
    [(n_events, n_skipped)] = connect(data).execute("SELECT n_events, n_skipped_lines FROM runs").fetchall()
    assert (n_events, n_skipped) == (events_in(complete), 1)


def _varied(text: str, reps: int) -> bytes:
    """The trace `reps` times over with packet ids and times shifted each time: long, in time
    order (as ns-2 writes), and without the exact repeats that would let a compressor
    squeeze it to nothing."""
    out = []
    last = max(float(line.split(" ")[1]) for line in text.splitlines())
    for r in range(reps):
        for line in text.splitlines():
            f = line.split(" ")
            f[1] = "%.15g" % round(float(f[1]) + r * last, 6)
            f[11] = str(int(f[11]) + 100_000 * r)
            out.append(" ".join(f))
    return ("\n".join(out) + "\n").encode()


def _zstd_pieces(packed: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj().decompress(packed)


CUT = {   # compression: (compress, what an independent decompressor gets from the first half)
    "gzip": (gzip.compress, lambda b: zlib.decompressobj(wbits=31).decompress(b)),
    "bz2": (bz2.compress, lambda b: bz2.BZ2Decompressor().decompress(b)),
    "xz": (lzma.compress, lambda b: lzma.LZMADecompressor().decompress(b)),
    "zstd": (lambda b: __import__("zstandard").ZstdCompressor().compress(b), _zstd_pieces),
}


@pytest.mark.slow
@pytest.mark.parametrize("compression, reps", [("gzip", 1), ("gzip", 12), ("bz2", 30), ("xz", 12), ("zstd", 30)])
def test_compressed_stream_cut_off_halfway(tmp_path, ns_traces, tracekit_inproc, compression, reps):
    """A cut-off compressed file ingests every complete line that can be decompressed, with a warning."""
    raw = _varied(ns_traces["wired_latehdr"].read_text(), reps)
    pack, unpack = CUT[compression]
    packed = pack(raw)
    half = packed[: len(packed) // 2]
    f = tmp_path / "cut.tr.x"
    f.write_bytes(half)
    avail = unpack(half)                       # what the bytes hold, decompressed independently
    assert raw.startswith(avail) and avail.count(b"\n") > 100
    data = tmp_path / "store"
    p = tracekit_inproc("ingest", f, data=data)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert f"{compression} stream ends early" in p.stderr
    if not avail.endswith(b"\n"):
        assert "last line has no newline" in p.stderr
    complete = avail[: avail.rindex(b"\n") + 1].decode()
    [(n_events, comp)] = connect(data).execute("SELECT n_events, compression FROM runs").fetchall()
    assert (n_events, comp) == (events_in(complete), compression)


def test_compressed_stream_cut_before_any_line(tmp_path, ns_traces, refused):
    packed = bz2.compress(ns_traces["wired_plain"].read_bytes())   # one bz2 block: half of it holds nothing
    assert bz2.BZ2Decompressor().decompress(packed[: len(packed) // 2]) == b""
    f = tmp_path / "cut.tr.bz2"
    f.write_bytes(packed[: len(packed) // 2])
    refused(f, str(f), "cut off")


def test_empty_file(tmp_path, refused):
    f = tmp_path / "empty.tr"
    f.write_bytes(b"")
    refused(f, str(f), "empty", subprocess=True)


def test_blank_and_comment_only_file(tmp_path, refused):
    f = tmp_path / "blank.tr"
    f.write_text("\n\n# nothing here\n\n")
    refused(f, str(f), "empty")


def test_binary_file(tmp_path, refused):
    f = tmp_path / "blob.tr"
    f.write_bytes(bytes(range(256)) * 64)
    refused(f, str(f), "binary")


def test_missing_file(tmp_path, refused):
    refused(tmp_path / "no_such.tr", "no_such.tr", "no such file", subprocess=True)


def test_unreadable_file(tmp_path, ns_traces, populated_store, tracekit_cli, store_listing):
    f = tmp_path / "secret.tr"
    shutil.copy(ns_traces["wired_tcphdr"], f)
    f.chmod(0)
    try:
        before = store_listing(populated_store)
        p = tracekit_cli("ingest", f, data=populated_store)
        assert "Traceback" not in p.stderr
        if os.geteuid() == 0:
            # root reads it anyway (CI): all we can say is that it behaved like a normal file
            assert p.returncode == 0, p.stderr
        else:
            one_error_line(p, str(f), "permission denied")
            assert store_listing(populated_store) == before
    finally:
        f.chmod(0o644)


def test_permission_denied_message(tmp_path, ns_traces, populated_store, store_listing, monkeypatch):
    """The unreadable-file path even when running as root: open() itself refuses."""
    import tracekit.formats.sources

    def deny(*a, **kw):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tracekit.formats.sources, "open", deny, raising=False)
    before = store_listing(populated_store)
    res = CliRunner().invoke(app, ["ingest", str(ns_traces["wired_plain"]), "--data", str(populated_store)])
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1 and "permission denied" in res.stderr
    assert store_listing(populated_store) == before


def test_unknown_format_tcl_script(refused):
    tcl = Path(__file__).resolve().parent / "tcl" / "ingest_wired.tcl"
    refused(tcl, "unknown format")


@pytest.mark.parametrize("fixture, needle", [     # nam traces are read (tests/test_wild.py)
    ("wired_tagged.tr", "tagged"),
    ("tcpvar_oneline.tr", "one-line"),
])
def test_unsupported_formats_say_so(fixture, needle, refused):
    line = refused(DATA / fixture, needle)
    assert "cannot ingest" in line or "not supported" in line


def test_hierarchical_address_later_in_the_file(tmp_path, ns_traces, refused):
    """A trace of flat addresses with a hierarchical one inside (a trace with hierarchical
    addresses, tests/test_hier.py, has them from its first line)."""
    src = ns_traces["wired_plain"]
    hier = (DATA / "wired_hier.tr").read_text().splitlines()[4]
    f = _with_line(src, tmp_path / "mixed.tr", 500, hier)
    refused(f, f"{f}:500:", "hierarchical address in a trace of flat")


def test_a_directory_of_non_traces_fails(tmp_path, tracekit_inproc, populated_store, store_listing):
    d = tmp_path / "nothing"
    d.mkdir()
    (d / "a.txt").write_text("not a trace\n")
    before = store_listing(populated_store)
    p = tracekit_inproc("ingest", d, data=populated_store)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert "none of the files" in p.stderr
    assert store_listing(populated_store) == before


# -- the store ---------------------------------------------------------------------------------

def test_store_from_a_newer_schema_is_refused(ns_traces, populated_store, tracekit_cli, tracekit_inproc, store_listing):
    meta = populated_store / "tracekit-store.json"
    info = json.loads(meta.read_text())
    info["schema_version"] += 1
    meta.write_text(json.dumps(info))
    before = store_listing(populated_store)
    for run, args in ((tracekit_cli, ("ingest", ns_traces["wired_tcphdr"])), (tracekit_inproc, ("runs",)),
                      (tracekit_inproc, ("sql", "SELECT count(*) FROM events"))):
        p = run(*args, data=populated_store)
        one_error_line(p, "schema version", "newer")
    assert store_listing(populated_store) == before


def test_data_dir_that_is_not_a_store(tmp_path, tracekit_inproc, ns_traces):
    d = tmp_path / "project"
    d.mkdir()
    (d / "keep.txt").write_text("mine\n")
    p = tracekit_inproc("ingest", ns_traces["wired_plain"], data=d)
    one_error_line(p, "not a tracekit store")
    assert sorted(x.name for x in d.iterdir()) == ["keep.txt"]


# -- sql is read-only -----------------------------------------------------------------------------

@pytest.mark.parametrize("query", [
    "COPY (SELECT * FROM events) TO '{out}/dump.csv'",
    "CREATE TABLE t AS SELECT 1",
    "INSERT INTO events SELECT * FROM events",
    "DROP VIEW events",
    "ATTACH '{out}/x.duckdb' AS x",
    "SELECT 1; CREATE TABLE t AS SELECT 1",
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM '/etc/hostname'",
    "SELECT * FROM read_parquet('{out}/elsewhere.parquet')",
    "SELECT * FROM read_text('{out}/secret.txt')",
    "SET enable_external_access = true",
])
def test_sql_refuses_writes_and_outside_files(tmp_path, populated_store, tracekit_cli, tracekit_inproc, store_listing, query):
    out = tmp_path / "outside"
    out.mkdir()
    (out / "secret.txt").write_text("secret\n")
    shutil.copy(next((populated_store / "runs").glob("run_id=*/events*.parquet")), out / "elsewhere.parquet")
    before, outside = store_listing(populated_store), store_listing(out)
    run = tracekit_cli if query.startswith("COPY") else tracekit_inproc
    p = run("sql", query.format(out=out), data=populated_store)
    one_error_line(p)
    assert "secret" not in p.stdout
    assert store_listing(populated_store) == before and store_listing(out) == outside


# EXPLAIN ANALYZE runs its statement: each of these wrote to the store or changed the views
# (issue 13). {part} is a new events part beside the run's own, {runp} the run record.
EXPLAIN_ATTACKS = [
    "EXPLAIN ANALYZE COPY (SELECT * REPLACE (pkt_id + 10000000 AS pkt_id) FROM events WHERE run_id = '{run}') "
    "TO '{part}' (FORMAT parquet)",
    "EXPLAIN ANALYZE COPY (SELECT 1 AS x) TO '{runp}' (FORMAT csv)",
    "/* plan */ explain -- only\n   analyse UPDATE flow_stats SET throughput_kbps = 0",
    "EXPLAIN\tANALYZE DROP VIEW flow_stats",
    "EXPLAIN ANALYZE CREATE OR REPLACE VIEW fairness AS SELECT 1 AS jain_index",
    "EXPLAIN ANALYZE INSERT INTO events SELECT * FROM events",
    "EXPLAIN ANALYZE DELETE FROM runs",
    "EXPLAIN ANALYZE ALTER VIEW flow_stats RENAME TO fs",
    "EXPLAIN (ANALYZE) UPDATE flow_stats SET throughput_kbps = 0",
    "EXPLAIN (FORMAT json, ANALYZE true) DROP VIEW runs",
    "EXPLAIN ANALYZE SELECT 1",
    "EXPLAIN COPY (SELECT 1 AS x) TO '{part}' (FORMAT parquet)",
    "EXPLAIN CREATE OR REPLACE VIEW fairness AS SELECT 1 AS jain_index",
    "EXPLAIN (FORMAT json) UPDATE flow_stats SET throughput_kbps = 0",
]


@pytest.mark.parametrize("query", EXPLAIN_ATTACKS)
def test_sql_refuses_explain_analyze_and_explain_of_a_write(populated_store, tracekit_cli, tracekit_inproc,
                                                           store_listing, ns_traces, query):
    run_dir = next((populated_store / "runs").glob("run_id=*"))
    run = run_dir.name.split("=", 1)[1]
    q = query.format(run=run, part=run_dir / "events-00002.parquet", runp=run_dir / "run.parquet")
    before = store_listing(populated_store)
    tool = tracekit_cli if "COPY" in query else tracekit_inproc
    line = one_error_line(tool("sql", q, data=populated_store))
    assert "EXPLAIN" in line
    assert store_listing(populated_store) == before
    # and every later command sees the store as it was
    p = tracekit_inproc("sql", "SELECT count(*) AS n FROM events", "--format", "json", data=populated_store)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == [{"n": events_in(ns_traces["wired_plain"].read_text())}]


@pytest.mark.parametrize("query", [
    "EXPLAIN SELECT count(*) FROM flow_stats",
    "/* a plan */ explain -- of a query\n select * from runs",
    "EXPLAIN (FORMAT json) SELECT count(*) FROM events",
    "EXPLAIN WITH t AS (SELECT 1 AS x) SELECT * FROM t",
])
def test_sql_explain_of_a_query_shows_its_plan(populated_store, tracekit_inproc, store_listing, query):
    before = store_listing(populated_store)
    p = tracekit_inproc("sql", query, "--format", "csv", data=populated_store)
    assert p.returncode == 0, p.stderr
    assert "explain" in p.stdout.lower() or "SEQ_SCAN" in p.stdout.upper() or "PROJECTION" in p.stdout.upper(), p.stdout
    assert store_listing(populated_store) == before


# -- sql limits: time, memory, spill; each ends with one line naming the limit ---------------

def test_sql_timeout_stops_a_long_query(populated_store, tracekit_cli, store_listing):
    before = store_listing(populated_store)
    # the query alone would take hours: ending at all within the hang guard is the timeout
    p = tracekit_cli("sql", "--timeout", "1", "SELECT count(*) FROM range(1000000000000) WHERE random() < 0.5",
                     data=populated_store, timeout=600)
    assert one_error_line(p) == "tracekit: error: query stopped after 1 s (--timeout)"
    assert store_listing(populated_store) == before


def test_sql_timeout_from_the_environment_and_zero_is_none(populated_store, tracekit_inproc, monkeypatch):
    monkeypatch.setenv("TRACEKIT_SQL_TIMEOUT", "0.5")
    p = tracekit_inproc("sql", "SELECT count(*) FROM range(1000000000000) WHERE random() < 0.5", data=populated_store)
    one_error_line(p, "query stopped after 0.5 s", "TRACEKIT_SQL_TIMEOUT")
    # --timeout 0: no limit (a short query finishes)
    p = tracekit_inproc("sql", "--timeout", "0", "SELECT 42 AS x", "--format", "csv", data=populated_store)
    assert p.returncode == 0 and p.stdout.split() == ["x", "42"], p.stderr
    one_error_line(tracekit_inproc("sql", "--timeout", "-1", "SELECT 1", data=populated_store), "--timeout")


def test_sql_memory_limit_stops_a_query(populated_store, tracekit_inproc, store_listing):
    before = store_listing(populated_store)
    # a 50-million-element list needs ~400 MB
    p = tracekit_inproc("sql", "--memory-limit", "50MB", "SELECT list(range) FROM range(50000000)", data=populated_store)
    one_error_line(p, "query stopped", "memory limit of 50MB", "--memory-limit")
    assert store_listing(populated_store) == before


def test_sql_spill_limit_stops_a_query(populated_store, tracekit_inproc, monkeypatch):
    # sorting 30 million random doubles with 100 MB of memory spills more than 20 MB
    monkeypatch.setenv("TRACEKIT_SQL_TEMP_LIMIT", "20MB")
    p = tracekit_inproc("sql", "--memory-limit", "100MB", "--threads", "1",
                        "SELECT * FROM range(30000000) ORDER BY random()", data=populated_store)
    one_error_line(p, "query stopped", "spill limit of 20MB", "TRACEKIT_SQL_TEMP_LIMIT")


def test_sql_limits_are_locked(populated_store, tracekit_inproc):
    for q in ("SET memory_limit = '100GB'", "SELECT current_setting('memory_limit') AS m"):
        p = tracekit_inproc("sql", "--memory-limit", "300MB", q, "--format", "csv", data=populated_store)
        if q.startswith("SET"):
            one_error_line(p)
        else:
            assert p.returncode == 0 and p.stdout.splitlines()[1] in ("286.1 MiB", "300.0 MB"), p.stdout


def test_sql_reads_the_store(populated_store, tracekit_inproc, ns_traces):
    p = tracekit_inproc("sql", "SELECT count(*) AS n FROM events", "--format", "json", data=populated_store)
    assert p.returncode == 0, p.stderr
    text = ns_traces["wired_plain"].read_text()
    assert json.loads(p.stdout) == [{"n": events_in(text)}]


@pytest.mark.parametrize("view", ["runs", "events", "annotations", "tcp_vars", "queue_samples", "red_vars", "flow_labels"])
def test_sql_select_star_from_the_base_views(populated_store, tracekit_inproc, view):
    """`tracekit sql "SELECT * FROM runs"` is the first thing a user types (the --help example)."""
    p = tracekit_inproc("sql", f"SELECT * FROM {view}", "--format", "json", data=populated_store)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""


@pytest.mark.parametrize("fmt", ["json", "csv", "table"])
def test_runs_command_lists_labels(tmp_path, ns_traces, tracekit_inproc, fmt):
    data = tmp_path / "store"
    assert tracekit_inproc("ingest", ns_traces["red"], "--label", "link=2-3", data=data).returncode == 0
    p = tracekit_inproc("runs", "--format", fmt, data=data)
    assert p.returncode == 0, p.stderr
    assert "link" in p.stdout and "2-3" in p.stdout
    if fmt == "json":
        [row] = json.loads(p.stdout)
        assert row["labels"] == {"link": "2-3"} and row["trace_kind"] == "red"


# -- docs -----------------------------------------------------------------------------------

def _commands():
    return sorted(get_command(app).commands)


def test_every_command_has_help_with_an_example():
    runner = CliRunner()
    names = _commands()
    assert {"ingest", "runs", "sql"} <= set(names)
    res = runner.invoke(app, ["--help"])
    assert res.exit_code == 0 and "Example" in res.stdout
    for name in names:
        res = runner.invoke(app, [name, "--help"])
        assert res.exit_code == 0, name
        assert "Example" in res.stdout, f"`tracekit {name} --help` has no Example"


def test_every_option_is_documented():
    for name, cmd in get_command(app).commands.items():
        assert (cmd.help or "").strip(), name
        for param in cmd.params:
            if param.param_type_name == "option" and param.name != "help":
                assert (param.help or "").strip(), f"tracekit {name} {param.opts[0]} has no help text"
