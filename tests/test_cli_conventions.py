"""The CLI's conventions and its boundary, on the real `tracekit` command (a subprocess) over
real stores: --version, --format as a choice (a wrong value is a usage error, exit 2), piped
tables and $COLUMNS, CSV/JSON that carry every table, label keys bound as parameters, the
dashboard's packages as an extra, one line on stderr for every failure (whatever raised
it), and a --data that is not a store."""
from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from conftest import TRACEKIT_CMD

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_traces"


def tk(*args, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """The installed `tracekit` with `env` on top of a clean environment (no COLUMNS, no
    TRACEKIT_DATA, no TRACEKIT_DEBUG unless given)."""
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TRACEKIT_DATA", "TRACEKIT_DEBUG")}
    return subprocess.run([*TRACEKIT_CMD, *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={**base, **(env or {})}, **kw)


def py(code: str, *args, env: dict | None = None, **kw) -> subprocess.CompletedProcess:
    """A Python program that does something to the process, then runs the real CLI entry
    point (tracekit.apps.cli.main) with `args`."""
    prog = textwrap.dedent(code) + "\nimport sys\nfrom tracekit.apps.cli import main\nsys.argv = ['tracekit', *sys.argv[1:]]\nmain()\n"
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "TRACEKIT_DATA", "TRACEKIT_DEBUG")}
    return subprocess.run([sys.executable, "-c", prog, *map(str, args)], capture_output=True, text=True, timeout=120,
                          env={**base, **(env or {})}, **kw)


def one_error_line(p, *needles: str) -> str:
    assert p.returncode == 1, (p.returncode, p.stdout[-500:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("tracekit: error: "), lines[0]
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


# -- --version, --format, completion ------------------------------------------------------------

def test_version():
    p = tk("--version")
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout == f"tracekit {version('tracekit')}\n"    # the installed distribution's metadata


ROW_FORMATS = ["table", "csv", "json"]
FORMAT_CASES = [   # each command with --format, and the formats it takes
    (("runs",), ROW_FORMATS),
    (("sql", "SELECT 1"), ROW_FORMATS),
    (("metrics",), ROW_FORMATS),
    (("compare", "cbr-variants", "--by", "variant"), ROW_FORMATS),
    (("scenarios",), ROW_FORMATS),
    (("reproduce", "cbr-exp1", "--no-run"), ["table", "json", "markdown"]),
    (("explain-awk", "script.awk", "out.tr"), ["table", "json"]),
]


@pytest.mark.parametrize("args, formats", FORMAT_CASES, ids=[c[0][0] for c in FORMAT_CASES])
def test_a_wrong_format_is_a_usage_error_that_lists_the_choices(populated_store, args, formats):
    data = ["--data", populated_store] if args[0] != "scenarios" else []
    p = tk(*args, "--format", "yaml", *data)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and p.stdout == ""
    err = p.stderr.replace("\n", " ")
    assert "--format" in err and "yaml" in err
    assert all(f"'{f}'" in err for f in formats), err
    helptext = tk(*args[:1], "--help").stdout
    assert f"<{'|'.join(formats)}>" in helptext, helptext


def test_every_format_option_is_tested_above():
    """A new command with --format joins FORMAT_CASES, so it cannot bring back a free-text one."""
    from typer.main import get_command

    from tracekit.apps.cli import app

    with_format = {name for name, cmd in get_command(app).commands.items()
                   if any("--format" in getattr(p, "opts", []) for p in cmd.params)}
    assert with_format == {args[0] for args, _ in FORMAT_CASES}


def test_shell_completion_completes_commands_and_formats():
    p = tk(env={"_TRACEKIT_COMPLETE": "complete_bash", "COMP_WORDS": "tracekit ru", "COMP_CWORD": "1"})
    assert p.returncode == 0 and set(p.stdout.split()) == {"run", "runs"}
    p = tk(env={"_TRACEKIT_COMPLETE": "complete_bash", "COMP_WORDS": "tracekit runs --format ", "COMP_CWORD": "3"})
    assert p.returncode == 0 and p.stdout.split() == ROW_FORMATS
    assert "--install-completion" in tk("--help").stdout


# -- tables, CSV and JSON ----------------------------------------------------------------------------

def test_piped_tables_fit_COLUMNS_and_are_not_wrapped_without_it(populated_store):
    [run_id] = [p.name.split("=", 1)[1] for p in (populated_store / "runs").iterdir()]
    source = json.loads(tk("runs", "--format", "json", "--data", populated_store).stdout)[0]["source"]
    assert len(source) > 40
    narrow = tk("runs", "--data", populated_store, env={"COLUMNS": "60"})
    assert narrow.returncode == 0, narrow.stderr
    assert max(map(len, narrow.stdout.splitlines())) <= 60
    assert source not in narrow.stdout                   # folded over several lines
    wide = tk("runs", "--data", populated_store)        # no COLUMNS, not a terminal: one line per row
    assert wide.returncode == 0, wide.stderr
    [row] = [ln for ln in wide.stdout.splitlines() if run_id in ln]
    assert source in row and max(map(len, wide.stdout.splitlines())) > 60


@pytest.fixture(scope="module")
def wired_and_wireless(tmp_path_factory, ns_traces):
    """A store with a wired run (ns-2 from tests/tcl) and a wireless one (a recorded ns-2 MANET
    run from sample_traces/), both labelled."""
    data = tmp_path_factory.mktemp("conv") / "store"
    p = tk("ingest", ns_traces["wired_plain"], "--label", "it's=wired", "--label", "kind=w", "--data", data)
    assert p.returncode == 0, p.stderr
    p = tk("ingest", SAMPLES / "manet" / "AODV-seed1" / "packets.tr.zst", "--label", "kind=manet", "--data", data)
    assert p.returncode == 0, p.stderr
    return data


def _view(data, view: str) -> list[dict]:
    """A view's rows as `tracekit sql` returns them (not through tracekit metrics)."""
    p = tk("sql", f"SELECT * FROM {view} ORDER BY ALL", "--format", "json", "--data", data)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_metrics_csv_and_json_carry_every_table(wired_and_wireless):
    data = wired_and_wireless
    views = {v: _view(data, v) for v in ("flow_stats", "fairness", "wireless_run_stats")}
    assert len(views["fairness"]) == 2 and len(views["wireless_run_stats"]) == 1 and len(views["flow_stats"]) > 2
    p = tk("metrics", "--format", "csv", "--data", data)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    assert list(rows[0])[0] == "table"
    by_table: dict[str, list[dict]] = {}
    for r in rows:
        by_table.setdefault(r.pop("table"), []).append(r)
    assert set(by_table) == set(views)
    for name, want in views.items():
        got = by_table[name]
        assert len(got) == len(want), name
        cols = list(want[0])
        # a table's own columns carry its values; the other tables' columns are empty
        assert sorted(tuple(_num(r[c]) for c in cols) for r in got) == sorted(tuple(_num(_csv(w[c])) for c in cols) for w in want), name
        assert all(v == "" for r in got for c, v in r.items() if c not in cols), name
    j = json.loads(tk("metrics", "--format", "json", "--data", data).stdout)
    assert {k: len(v) for k, v in j.items()} == {k: len(v) for k, v in views.items()}


def _csv(v) -> str:
    """A JSON value as Python's csv module writes it (floats by repr, None empty)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v)
    return repr(v) if isinstance(v, float) else str(v)


def _num(text: str) -> str:
    """A number to 9 significant digits (DuckDB's parallel sums differ in the last bits from
    one query to the next); anything else as it is."""
    try:
        return f"{float(text):.9g}"
    except ValueError:
        return text


def test_scenarios_csv_carries_every_table():
    j = json.loads(tk("scenarios", "--format", "json").stdout)
    rows = list(csv.DictReader(io.StringIO(tk("scenarios", "--format", "csv").stdout)))
    count = {t: sum(1 for r in rows if r["table"] == t) for t in ("scenarios", "parameters", "experiments")}
    assert count == {"scenarios": len(j["scenarios"]), "parameters": sum(len(s["params"]) for s in j["scenarios"]),
                     "experiments": len(j["experiments"])}
    assert len(rows) == sum(count.values())


def test_label_keys_are_bound_not_quoted(wired_and_wireless):
    data = wired_and_wireless
    [wired] = [r["run_id"] for r in _view(data, "runs") if r["trace_kind"] == "wired"]
    p = tk("metrics", "--where", "it's=wired", "--format", "json", "--data", data)
    assert p.returncode == 0, p.stderr
    assert {r["run_id"] for r in json.loads(p.stdout)["flow_stats"]} == {wired}
    # a key that would widen the selection if it were pasted into the SQL matches no label
    p = tk("metrics", "--where", "x') IS NULL OR ('1=1", "--data", data)
    one_error_line(p, "no packet-trace runs match")


# -- the [dashboard] extra ---------------------------------------------------------------------------

BLOCK = """
import sys
class NotInstalled:   # the dashboard's packages, as if they were not installed
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("streamlit", "plotly", "pandas"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, NotInstalled())
"""


def test_dashboard_packages_are_an_extra():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name = lambda req: re.split(r"[<>=!~\[ ;]", req, maxsplit=1)[0].lower()   # noqa: E731
    core = {name(r) for r in meta["dependencies"]}
    assert {"polars", "pyarrow", "duckdb", "typer", "rich"} <= core
    assert not core & {"streamlit", "plotly", "pandas"}
    extras = meta["optional-dependencies"]
    assert {"streamlit", "plotly"} <= {name(r) for r in extras["dashboard"]} <= {name(r) for r in extras["test"]}


def test_everything_but_the_dashboard_works_without_its_packages(tmp_path, ns_traces):
    data = tmp_path / "store"
    p = py(BLOCK, "ingest", ns_traces["wired_plain"], "--data", data)
    assert p.returncode == 0, p.stderr
    for args in (("runs",), ("sql", "SELECT count(*) FROM events"), ("metrics", "--format", "json"), ("scenarios",)):
        p = py(BLOCK, *args, *(("--data", data) if args[0] != "scenarios" else ()))
        assert p.returncode == 0, (args, p.stderr)
    p = py(BLOCK, "dashboard", "--data", data)
    one_error_line(p, "streamlit", "plotly", "pip install 'tracekit[dashboard]'")


def test_setup_installs_the_dashboard_extra():
    """The README's commands include `tracekit dashboard` (and demo.sh starts it)."""
    text = (ROOT / "scripts" / "setup.sh").read_text()
    [line] = [ln for ln in text.splitlines() if ln.startswith("extras=")]
    assert "dashboard" in line


# -- one line for every failure ----------------------------------------------------------------------

RAISE = """
import tracekit.db.query
def connect(*a, **kw):
    {body}
tracekit.db.query.connect = connect
"""

FAILURES = [   # what the library raises -> what the one line says
    ("import errno; raise OSError(errno.ENOSPC, 'No space left on device', '/s/runs/x/events-00001.parquet')",
     ["/s/runs/x/events-00001.parquet: no space left on device"]),
    ("raise PermissionError(13, 'Permission denied', '/s/tracekit-store.json')", ["/s/tracekit-store.json: permission denied"]),
    ("import duckdb; raise duckdb.IOException('IO Error: No magic bytes found at end of file x.parquet\\nLINE 1: ...')",
     ["DuckDB: IO Error: No magic bytes found at end of file x.parquet"]),
    ("import duckdb; raise duckdb.OutOfMemoryException('Out of Memory Error: could not allocate block of size 256 KiB')",
     ["DuckDB: Out of Memory Error"]),
    ("import polars; raise polars.exceptions.ComputeError('parquet: invalid footer\\nsecond line')",
     ["polars: ComputeError: parquet: invalid footer"]),
    ("raise MemoryError()", ["out of memory"]),
    ("raise ZeroDivisionError('division by zero')", ["unexpected ZeroDivisionError: division by zero", "TRACEKIT_DEBUG=1"]),
    ("raise ValueError('x' * 10_000_000)", ["unexpected ValueError: xxxx", "more characters"]),
]


@pytest.mark.parametrize("body, needles", FAILURES, ids=[b.split("raise ")[1].split("(")[0] for b, _ in FAILURES])
def test_any_failure_is_one_line_and_exit_1(populated_store, body, needles):
    p = py(RAISE.format(body=body), "sql", "SELECT 1", "--data", populated_store)
    line = one_error_line(p, *needles)
    assert len(line) < 1200


def test_a_huge_field_in_an_error_is_cut(tmp_path, store_listing, populated_store):
    """An ingest error quoting a 10 MB field is one line of about a thousand characters."""
    f = tmp_path / "huge.tr"
    f.write_text("+ 0.5 2 3 tcp 1040 ------- 1 0.0 3.0 17 " + "7x" * 5_000_000 + "\n")
    before = store_listing(populated_store)
    line = one_error_line(tk("ingest", f, "--data", populated_store), str(f))
    assert len(line) < 1200
    assert store_listing(populated_store) == before


def test_TRACEKIT_DEBUG_adds_the_traceback(populated_store):
    p = py(RAISE.format(body="raise ZeroDivisionError('division by zero')"), "sql", "SELECT 1", "--data", populated_store,
           env={"TRACEKIT_DEBUG": "1"})
    assert p.returncode == 1
    assert "Traceback" in p.stderr and "in connect" in p.stderr
    assert p.stderr.splitlines()[-1].startswith("tracekit: error: unexpected ZeroDivisionError")


def test_a_file_where_the_staging_directory_goes_is_one_line(populated_store, ns_traces, store_listing):
    """A real OSError from deep in the store (mkdir over a file)."""
    (populated_store / ".staging").rmdir()
    (populated_store / ".staging").write_text("")
    before = store_listing(populated_store)
    p = tk("ingest", ns_traces["wired_tcphdr"], "--data", populated_store)
    one_error_line(p)         # before: a FileExistsError traceback
    assert store_listing(populated_store) == before


def test_an_absurd_store_version_is_one_line(populated_store):
    """1e400 is valid JSON and an infinite float: int() of it raised OverflowError."""
    (populated_store / "tracekit-store.json").write_text('{"schema_version": 1e400, "format": "tracekit"}\n')
    for args in (("runs",), ("sql", "SELECT 1"), ("metrics",)):
        one_error_line(tk(*args, "--data", populated_store))


def test_sigint_exits_130_with_one_line(populated_store):
    code = RAISE.format(body="print('waiting', flush=True); import time; time.sleep(60)")
    prog = textwrap.dedent(code) + "\nimport sys\nfrom tracekit.apps.cli import main\nsys.argv = ['tracekit', *sys.argv[1:]]\nmain()\n"
    proc = subprocess.Popen([sys.executable, "-c", prog, "sql", "SELECT 1", "--data", str(populated_store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "waiting\n"
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    assert err.splitlines() == ["tracekit: error: interrupted"]


def test_a_closed_pipe_is_quiet(populated_store):
    """`tracekit sql ... | head -1`: the reader leaves early; no error, no traceback."""
    proc = subprocess.Popen([*TRACEKIT_CMD, "sql", "SELECT * FROM range(200000)", "--format", "csv", "--data", str(populated_store)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"range\n"
    proc.stdout.close()
    err = proc.stderr.read()
    proc.wait(timeout=60)
    assert err == b"" and proc.returncode == 141


def test_every_command_has_the_boundary_handler():
    from tracekit.apps.cli import app

    for c in app.registered_commands:
        assert getattr(c.callback, "handles_errors", False), c.callback


# -- a --data that is not a store -----------------------------------------------------------------------

READERS = [   # every command that reads a store (ingest, run, sweep, reproduce create one)
    ("runs",),
    ("sql", "SELECT 1"),
    ("metrics",),
    ("compare", "cbr-variants", "--by", "variant"),
    ("compare", "--experiment", "cbr-exp1"),
    ("reproduce", "cbr-exp1", "--no-run"),
    ("report", "--scenario", "cbr-variants"),
    ("dashboard", "--port", "1"),
    ("explain-awk", "script.awk", "out.tr"),
]


def _not_a_store(tmp_path: Path, kind: str) -> Path:
    p = tmp_path / "tracekit-dat"          # a mistyped tracekit-data
    if kind == "empty dir":
        p.mkdir()
    elif kind == "other dir":
        p.mkdir()
        (p / "notes.txt").write_text("mine\n")
    elif kind == "file":
        p.write_text("not a directory\n")
    return p


CASES = [(args, kind) for args in READERS for kind in ("missing", "other dir")] + [(("runs",), "empty dir"), (("runs",), "file")]


@pytest.mark.parametrize("args, kind", CASES, ids=[f"{' '.join(a[:2])}-{k}" for a, k in CASES])
def test_a_data_dir_that_is_not_a_store_is_one_line(tmp_path, store_listing, args, kind):
    bad = _not_a_store(tmp_path, kind)
    before = store_listing(bad) if bad.is_dir() else bad.exists()
    line = one_error_line(tk(*args, "--data", bad), str(bad))
    assert "not a tracekit store" in line
    assert (store_listing(bad) if bad.is_dir() else bad.exists()) == before


def test_the_default_store_missing_is_one_line(tmp_path):
    p = tk("runs", cwd=tmp_path)
    one_error_line(p, "tracekit-data (the default store): no such directory")
    p = tk("runs", env={"TRACEKIT_DATA": str(tmp_path / "x")})
    one_error_line(p, f"{tmp_path / 'x'} (the default: $TRACEKIT_DATA)")


def test_an_empty_store_is_not_an_error(tmp_path, ns_traces):
    from tracekit.store.store import Store

    Store(tmp_path / "s", create=True)
    p = tk("runs", "--data", tmp_path / "s")
    assert p.returncode == 0 and p.stderr == "" and "(no rows)" in p.stdout


def test_sweep_dry_run_on_a_new_store_says_it_will_create_it(tmp_path):
    p = tk("sweep", "cbr-variants", "--grid", "variant=Reno,Vegas", "--dry-run", "--data", tmp_path / "new")
    assert p.returncode == 0, p.stderr
    assert f"no store at {tmp_path / 'new'} yet" in p.stdout and "2 to run" in p.stdout
    assert not (tmp_path / "new").exists()


def test_ctrl_c_stops_a_running_query_with_one_line(populated_store, tmp_path):
    """SIGINT during a long `tracekit sql` query: the query stops, one line, exit 130, no
    abort from DuckDB's threads at exit, and no private temp directory left behind."""
    import signal
    import time

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TRACEKIT_DATA", "TRACEKIT_DEBUG")}
    p = subprocess.Popen([*TRACEKIT_CMD, "sql", "--timeout", "0", "--data", str(populated_store),
                          "SELECT count(*) FROM range(1000000000000::BIGINT) WHERE random() < 0.5"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**base, "TMPDIR": str(tmp)})
    def cpu_s() -> float:         # the process's CPU time so far, all its threads
        fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    deadline = time.monotonic() + 300
    while not any(tmp.iterdir()):                           # the query's connection exists
        assert time.monotonic() < deadline and p.poll() is None, p.communicate()
        time.sleep(0.05)
    # the query is running once the process has used more CPU time than connecting takes
    # (CPU time, not wall time: the same on a loaded machine)
    at_connection = cpu_s()
    while cpu_s() < at_connection + 2:
        assert time.monotonic() < deadline and p.poll() is None, p.communicate()
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, err)
    assert err.strip().splitlines() == ["tracekit: error: interrupted"], err
    assert list(tmp.iterdir()) == []
