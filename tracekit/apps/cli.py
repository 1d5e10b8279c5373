"""The `tracekit` command line: each command parses its options and calls one library
function. Exit status: 0 on success; 1 with one line `tracekit: error: ...` on stderr for
any failure, expected (TracekitError) or not (OSError, DuckDB, polars, MemoryError, a bug;
TRACEKIT_DEBUG=1 adds the traceback); 2 for a usage error (typer's message); 130 on Ctrl-C."""
from __future__ import annotations

import enum
import functools
import os
import sys
from pathlib import Path
from typing import List, Optional

import typer

from tracekit.apps.cliparams import install as _plain_option_values
from tracekit.core.errors import Terminated, TracekitError
from tracekit.core.exits import describe, escaped, loaded_class, show_traceback as _debug
from typing import TYPE_CHECKING

if TYPE_CHECKING:     # for annotations: DuckDB and rich are imported where they are used, not when this module is
    import duckdb
    import rich.progress

# option values coerced without importing pydantic where typer's result is plain (start-up)
_plain_option_values()

app = typer.Typer(
    help="tracekit: ns-2 traces into Parquet, TCP metrics as SQL.\n\n"
    "Example: tracekit ingest out.tr && tracekit sql \"SELECT * FROM runs\"",
    no_args_is_help=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


class RowFormat(str, enum.Enum):
    """--format of the commands that print rows."""
    table = "table"
    csv = "csv"
    json = "json"


class ReportFormat(str, enum.Enum):
    """--format of tracekit reproduce."""
    table = "table"
    json = "json"
    markdown = "markdown"


DataOpt = typer.Option(None, "--data", help="Store directory [default: $TRACEKIT_DATA, else ./tracekit-data].", metavar="DIR")
FormatOpt = typer.Option(RowFormat.table, "--format", "-f", help="Output format.")


def _version(value: bool) -> None:
    if value:
        from tracekit import __version__

        print(f"tracekit {__version__}")
        raise typer.Exit()


@app.callback()
def _top(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    pass


def _data(d: Optional[Path]) -> Path:
    from tracekit.store.store import default_data_dir

    return d if d is not None else default_data_dir()


def _store(d: Optional[Path]) -> Path:
    """The store directory of a command that reads one: it must exist (a mistyped --data is
    an error, not an empty result). Commands that write (ingest, run, sweep, reproduce)
    create it instead."""
    from tracekit.store.store import STORE_FILE

    root = _data(d)
    if (root / STORE_FILE).is_file():
        return root
    given = "" if d is not None else (" (the default: $TRACEKIT_DATA)" if os.environ.get("TRACEKIT_DATA") else " (the default store)")
    hint = "check --data (tracekit ingest, run and sweep create a store)"
    if not root.exists() and not root.is_symlink():
        raise TracekitError(f"{root}{given}: no such directory, so not a tracekit store; {hint}")
    if not root.is_dir():
        raise TracekitError(f"{root}{given}: not a directory, so not a tracekit store; {hint}")
    raise TracekitError(f"{root}{given}: not a tracekit store (no {STORE_FILE}); {hint}")


MAX_ERROR_LINE = 1000    # characters of one line of an error message; the rest is cut


def cut(msg: str) -> str:
    """A message for stderr with each line cut to MAX_ERROR_LINE characters (a quoted 10 MB
    field stays a line)."""
    return "\n".join(ln if len(ln) <= MAX_ERROR_LINE else f"{ln[:MAX_ERROR_LINE]}... ({len(ln) - MAX_ERROR_LINE} more characters)"
                     for ln in (msg.splitlines() or [""]))


def fail(msg: str, code: int = 1) -> "typer.Exit":
    print(f"tracekit: error: {cut(msg)}", file=sys.stderr)
    return typer.Exit(code)


def handles_errors(fn):
    """Every command's boundary: what escapes it becomes one stderr line and an exit code."""
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            result = fn(*a, **kw)
            sys.stdout.flush()          # a closed pipe shows here, not at interpreter exit
            return result
        except (typer.Exit, typer.Abort, typer.exceptions.TyperException):
            raise                       # an exit code chosen, a usage error: typer reports them
        except BrokenPipeError:
            # the reader went away (`tracekit sql ... | head`): not an error, no message;
            # stdout goes to /dev/null so that the interpreter's last flush is quiet too
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            raise typer.Exit(141) from None
        except TracekitError as e:
            _debug()
            raise fail(str(e)) from None
        except Terminated:
            raise fail("terminated", 143) from None
        except KeyboardInterrupt:
            _debug()
            raise fail("interrupted", 130) from None
        except Exception as e:          # OSError, duckdb.Error, polars errors, MemoryError, a bug
            _debug()
            interrupt = loaded_class("duckdb", "InterruptException")     # (never a half-imported module's)
            if interrupt is not None and isinstance(e, interrupt):   # Ctrl-C inside a query
                raise fail("interrupted", 130) from None
            raise fail(describe(e)) from None
    wrapper.handles_errors = True       # type: ignore[attr-defined]  # tests check every command has it
    return wrapper


def at_least_one(what: str):
    """An option's callback refusing a count below 1 as a usage error: a check of its own,
    not typer's min=, since a range makes typer coerce through pydantic (tracekit.apps.cliparams)."""
    def check(value: Optional[int]) -> Optional[int]:
        if value is not None and value < 1:
            raise typer.BadParameter(f"{value} is not a number of {what} (at least 1)")
        return value
    return check


def _pairs(items: List[str], what: str) -> dict[str, str]:
    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        if not sep or not k.strip():
            raise TracekitError(f"{what} {it!r} must look like KEY=VALUE")
        out[k.strip()] = v.strip()
    return out


@app.command()
@handles_errors
def ingest(
    paths: List[str] = typer.Argument(..., help="Trace files, directories (searched recursively) or quoted glob patterns; plain, .gz, .zst, .bz2 or .xz.", metavar="PATH..."),
    label: List[str] = typer.Option([], "--label", "-l", help="Label every run: KEY=VALUE (repeatable).", metavar="K=V"),
    flow_label: List[str] = typer.Option([], "--flow-label", help="Name a flow: FID=NAME (repeatable), e.g. 1=Reno.", metavar="FID=NAME"),
    skip_bad_lines: bool = typer.Option(False, "--skip-bad-lines", help="Skip malformed lines (and count them) instead of stopping at the first."),
    series_name: Optional[str] = typer.Option(None, "--series-name", help="What a two-column time-value file samples, e.g. cwnd (the same as --label var=NAME).", metavar="NAME"),
    data: Optional[Path] = DataOpt,
) -> None:
    """Parse ns-2 traces into the Parquet store, one run per trace.

    The kind of each file is detected (wired packet trace, wireless trace in the old CMU
    or new -t format or both mixed, TCP variable trace, queue monitor, RED trace, two-column
    time-value series). The same content ingested twice is one run. A pipe is read as a
    stream (<(zcat x.gz), a named pipe whose writer is waited for up to 60 s,
    TRACEKIT_PIPE_WAIT_S); devices and sockets are refused.

    Example: tracekit ingest out.tr cwnd.tr.gz --label variant=Reno --flow-label 1=Reno
    """
    from tracekit.core.memory import for_ingest

    for_ingest()        # before pyarrow is imported (tracekit.core.memory)
    from tracekit.ingest.pipeline import ingest_paths
    labels = _pairs(label, "--label")
    if series_name is not None:
        if labels.get("var", series_name) != series_name:
            raise TracekitError(f"--series-name {series_name} and --label var={labels['var']} disagree; give one of them")
        labels["var"] = series_name
    flows_raw = _pairs(flow_label, "--flow-label")
    try:
        flows = {int(k): v for k, v in flows_raw.items()}
    except ValueError:
        raise TracekitError("--flow-label takes FID=NAME with an integer FID, e.g. --flow-label 1=Reno") from None

    skipped = []
    with _Progress() as bar:
        def report(r):
            bar.done(r.path)
            if r.status == "added":
                mb = r.size_bytes / 1e6
                print(f"added run {r.run_id}: {r.path} ({r.kind}, {r.n_events:,} rows, {mb:.1f} MB in {r.seconds:.1f} s)")
            elif r.status == "duplicate":
                print(r.message)
            elif r.status == "skipped":
                skipped.append(r)
            else:
                bar.print(f"tracekit: error: {cut(r.message)}")
            for w in r.warnings:
                bar.print(f"tracekit: warning: {cut(w)}")

        results = ingest_paths(_data(data), paths, labels, flows, skip_bad_lines, progress=bar.update, on_result=report)
    if sum(r.status == "added" for r in results) >= COMPACT_AFTER_RUNS:
        _compact_after(_data(data))
    if skipped:
        print(cut(f"tracekit: skipped {len(skipped)} file(s) that are not traces tracekit can ingest "
                  f"(first: {skipped[0].message})"), file=sys.stderr)
    failed = [r for r in results if r.status == "failed"]
    if failed:
        raise typer.Exit(1)
    if not any(r.status in ("added", "duplicate") for r in results):
        raise fail("none of the files is an ns-2 trace tracekit can ingest")


class _StderrProgress:
    """A rich progress display on stderr when it is a terminal; messages print above it."""

    progress: rich.progress.Progress | None = None

    def print(self, msg):
        if self.progress is not None:
            from tracekit.apps.output import visible

            # a terminal: a file name's control characters show as escapes (lines stay lines)
            self.progress.console.print("\n".join(map(visible, msg.split("\n"))))
        else:
            print(msg, file=sys.stderr)

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)


class _Progress(_StderrProgress):
    """A byte-based progress bar for files that take a while."""

    def __init__(self):
        self.progress = None
        self.tasks = {}

    def __enter__(self):
        if not sys.stderr.isatty():
            return self     # no bar, and rich not imported (every scripted ingest's start-up)
        from tracekit.apps.output import console

        self.console = console(stderr=True)
        if self.console.is_terminal:
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

            self.progress = Progress(
                TextColumn("{task.description}", markup=False), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                TimeRemainingColumn(), console=self.console, transient=True,
                # stdout into the bar's console only when it shares the terminal: a pipe keeps its lines
                redirect_stdout=sys.stdout.isatty(),
            )
            self.progress.__enter__()
        return self

    def update(self, path, done, total):
        if self.progress is None:
            return
        if path not in self.tasks:
            from tracekit.apps.output import visible

            self.tasks[path] = self.progress.add_task(visible(Path(path).name), total=total)
        self.progress.update(self.tasks[path], completed=done)

    def done(self, path):
        if self.progress is not None and path in self.tasks:
            self.progress.remove_task(self.tasks.pop(path))


@app.command()
@handles_errors
def runs(data: Optional[Path] = DataOpt, fmt: RowFormat = FormatOpt) -> None:
    """List the ingested runs with their labels.

    Example: tracekit runs --format csv
    """
    from tracekit.db.query import connect, run_query
    from tracekit.apps.output import TABLE_MAX_ROWS, RowsHead, print_rows

    root = _store(data)
    query = "SELECT run_id, trace_kind, n_events, t_start, t_end, scenario, seed, labels, source FROM runs ORDER BY ingested_at, run_id"
    con = connect(root, for_query=query)     # the run records alone: no run's per-packet files listed
    rel = run_query(con, query)
    if fmt == "table":      # the rows the table shows, and a count: the labels' maps cost ~70 µs a row to fetch
        ((total,),) = con.execute("SELECT count(*) FROM runs").fetchall()
        rows = RowsHead(rel.limit(TABLE_MAX_ROWS).fetchall(), total)
        print_rows(rel.columns, rows, fmt.value, title=f"runs in {root}")
        return
    print_rows(rel.columns, rel.fetchall(), fmt.value, title=f"runs in {root}")


@app.command()
@handles_errors
def sql(
    query: str = typer.Argument(..., help="One SQL query (SELECT / WITH / EXPLAIN) over the views.", metavar="QUERY"),
    data: Optional[Path] = DataOpt,
    fmt: RowFormat = typer.Option(RowFormat.table, "--format", "-f", help="Output format. csv and json are written as the rows come; table shows the first 200 rows and refuses (use csv) when they hold more than 4 MiB of text."),
    timeout_s: Optional[float] = typer.Option(None, "--timeout", help="Stop the query, and the writing of its rows, after this many seconds; 0 = no limit [default: $TRACEKIT_SQL_TIMEOUT or 60].", metavar="S"),
    memory_limit: Optional[str] = typer.Option(None, "--memory-limit", help="Memory limit for the query and the writing of its rows, e.g. 2GiB [default: $TRACEKIT_SQL_MEMORY_LIMIT or half the RAM].", metavar="SIZE"),
    threads: Optional[int] = typer.Option(None, "--threads", callback=at_least_one("threads"), help="DuckDB worker threads, at most the machine's cores (a larger number is lowered to that) [default: $TRACEKIT_SQL_THREADS or every core].", metavar="N"),
    where: List[str] = typer.Option([], "--where", "-w", help="Define every view over only the runs with LABEL=VALUE (or seed=, run_id=, config=, trace_kind=); KEY!=VALUE excludes; VALUE may be a,b,c; repeatable, all must hold. The query then costs what those runs cost, however big the store.", metavar="K=V"),
) -> None:
    """Run a read-only SQL query with every tracekit view defined (runs, events, tcp_vars,
    queue_samples, annotations, red_vars, flow_labels and the metric views); with --where,
    over only the runs it chooses (a WHERE in the query gives the same rows, but a view
    computed from every run's packets reads them all first).

    The query runs on its own connection that cannot write (one SELECT / WITH / EXPLAIN
    statement; no EXPLAIN ANALYZE), with a time, memory, thread and spill limit, which
    cover the writing of its rows too; past a limit it stops with one line naming it.

    Example: tracekit sql --timeout 10 "SELECT event, count(*) FROM events GROUP BY event"

    Example: tracekit sql "SELECT * FROM run_metrics" --where scenario=reno-vs-vegas --where queue=RED
    """
    from tracekit.db.query import ENV_MEMORY, ENV_TEMP, ENV_TIMEOUT, QueryRun, default_limits, default_timeout_s
    from tracekit.apps.output import print_rows, table_head, write_rows

    # the one-line message past a limit names where the limit came from
    hints = {"timeout": "--timeout" if timeout_s is not None else f"--timeout or {ENV_TIMEOUT}",
             "memory": "--memory-limit" if memory_limit is not None else f"--memory-limit or {ENV_MEMORY}",
             "temp": ENV_TEMP}
    if timeout_s is None:
        timeout_s = default_timeout_s()
    if not timeout_s >= 0 or timeout_s == float("inf"):
        raise TracekitError(f"--timeout must be a finite number of seconds >= 0, not {timeout_s}")
    limits = default_limits(memory_limit=memory_limit, threads=threads)
    if fmt == RowFormat.table:
        def fetch(rows):
            return rows.columns, table_head(rows.batches())
    else:
        def fetch(rows):
            write_rows(rows.columns, rows.batches(), fmt.value, sys.stdout)
    root = _store(data)
    run_ids = None
    if where:
        from tracekit.analysis.compare import Filter, run_choice_sql
        from tracekit.db.query import chosen_runs

        run_ids = chosen_runs(root, run_choice_sql([Filter.parse(w) for w in where]))
        if not run_ids:
            raise TracekitError("no run matches the --where filters; tracekit runs lists the runs and their labels")
    run = QueryRun(root, query, fetch, timeout_s=timeout_s, limits=limits, hints=hints,
                   only_needed_views=True, stream=True, run_ids=run_ids)
    # in a thread, so that Ctrl-C and SIGTERM (which DuckDB does not see while it runs a
    # query) cancel it, and a limit holds where DuckDB does not look (QueryRun.supervise)
    run.start()
    try:
        run.supervise()
    except KeyboardInterrupt as e:
        # the interrupted query ends, or is given up, before the interpreter does (a second
        # Ctrl-C included)
        run.cancel()
        while True:
            try:
                if run.wait(0.2):
                    break
            except KeyboardInterrupt:
                run.cancel()
        _leave_query(run, "terminated" if isinstance(e, Terminated) else "interrupted",
                     143 if isinstance(e, Terminated) else 130)
    if run.given_up:
        _leave_query(run, str(run.error), 1)
    if run.exception is not None:
        raise run.exception         # the boundary (handles_errors) says what it was
    if run.error is not None:
        raise run.error
    if fmt == RowFormat.table:
        columns, head = run.result
        print_rows(columns, head, fmt.value)


def _leave_query(run, message: str, code: int) -> None:
    """End the process now with one line, without the interpreter's teardown, during which
    DuckDB's threads (interrupted, or still busy in a run given up) abort. The query's
    connection and temp directory are gone (QueryRun closed them), or, given up, its temp
    directory is removed here."""
    from tracekit.db.query import remove_temp_dirs

    remove_temp_dirs()
    if not run.given_up:
        # given up, the query's thread may hold stdout's lock in a blocked write
        try:
            sys.stdout.flush()
        except OSError:
            pass
    print(f"tracekit: error: {message}", file=sys.stderr)
    sys.stderr.flush()
    os._exit(code)


# flow_stats columns the table format shows besides the catalogued flow metrics (which flow it is)
FLOW_KEY_COLUMNS = ("run_id", "fid", "name", "ptype", "src_node", "dst_node", "sent_pkts", "recv_pkts", "dropped_pkts")
# shown after dropped_pkts only when a listed flow has some (LAN traces); elsewhere an all-zero column
FLOW_OVERHEARD_COLUMN = "overheard_pkts"


@app.command()
@handles_errors
def metrics(
    run_id: List[str] = typer.Option([], "--run", "-r", help="Only this run (repeatable; a unique prefix is enough).", metavar="ID"),
    where: List[str] = typer.Option([], "--where", "-w", help="Only runs with LABEL=VALUE (or scenario=, seed=, run_id=, config=, trace_kind=); KEY!=VALUE excludes; VALUE may be a,b,c; numbers match numerically; repeatable, all must hold.", metavar="K=V"),
    fmt: RowFormat = FormatOpt,
    all_columns: bool = typer.Option(False, "--all-columns", help="Every flow_stats column in the table format (csv and json always have all)."),
    by: Optional[str] = typer.Option(None, "--by", help="Also compare the selected runs grouped by this label (as tracekit compare does): verdicts on throughput, delay and Jain's index (table format).", metavar="LABEL"),
    data: Optional[Path] = DataOpt,
) -> None:
    """Per-flow metrics (the flow_stats view) and Jain's fairness (the fairness view) of the
    selected packet-trace runs, wired and wireless; for wireless runs also the per-run MANET
    metrics (wireless_run_stats: PDR, throughput, delay, routing packets, normalised routing
    load). Definitions: the header of each sql/*.sql file and docs/contract-wireless.md.

    Example: tracekit metrics --where scenario=cbr-variants --where variant=Vegas --format csv
    """
    if by and fmt != "table":
        raise TracekitError("--by prints verdicts in the table format only; use tracekit compare --format csv/json")
    from tracekit.db.query import chosen_runs, connect
    from tracekit.apps.output import print_rows, print_tables

    from tracekit.analysis.compare import Filter, run_choice_sql

    root = _store(data)
    filters = [Filter.parse(w) for w in where]
    conds = [f"run_id IN ({run_choice_sql(filters)})"] if filters else []
    conds += ["r.run_id LIKE ? || '%'"] * len(run_id)
    params: list[str] = list(run_id)
    selected = "SELECT run_id FROM runs r WHERE is_packet_trace(trace_kind)" + "".join(f" AND {c}" for c in conds)
    ids = chosen_runs(root, selected, params)
    n = len(ids)
    if n == 0:
        raise TracekitError("no packet-trace runs match" + (" the --run/--where filters" if conds else "; ingest a packet trace first"))
    con = connect(root, run_ids=ids)        # the metrics of these runs only: their cost, not the store's
    fs = con.execute(f"SELECT * FROM flow_stats WHERE run_id IN ({selected}) ORDER BY run_id, fid, src_node, dst_node", params)
    cols = [d[0] for d in fs.description]
    rows = fs.fetchall()
    fa = con.execute(f"SELECT * FROM fairness WHERE run_id IN ({selected}) ORDER BY run_id", params)
    fcols = [d[0] for d in fa.description]
    frows = fa.fetchall()
    wl = con.execute(f"SELECT * FROM wireless_run_stats WHERE run_id IN ({selected}) ORDER BY run_id", params)
    wcols = [d[0] for d in wl.description]
    wrows = wl.fetchall()
    if fmt != "table":   # every table: JSON one key per table, CSV a first column `table`
        print_tables([("flow_stats", cols, rows), ("fairness", fcols, frows), ("wireless_run_stats", wcols, wrows)], fmt.value)
        return
    if not all_columns:
        from tracekit.db.catalogue import metrics as catalogue

        key: tuple[str, ...] = FLOW_KEY_COLUMNS
        if FLOW_OVERHEARD_COLUMN in cols and any(r[cols.index(FLOW_OVERHEARD_COLUMN)] for r in rows):
            key += (FLOW_OVERHEARD_COLUMN,)
        shown = key + tuple(m.source_column for m in catalogue("flow").values() if m.source_view == "flow_stats")
        idx = [cols.index(c) for c in shown if c in cols]
        cols, rows = [cols[i] for i in idx], [tuple(r[i] for i in idx) for r in rows]
    print_rows(cols, rows, "table", title=f"flow_stats ({n} run{'s' if n != 1 else ''})")
    print_rows(fcols, frows, "table", title="fairness (Jain's index over the TCP flows of each run)")
    if wrows:
        print_rows(wcols, wrows, "table", title="wireless_run_stats (all flows of each wireless run; nrl = routing packets per delivered data packet)")
    if by:
        _print_comparisons(con, f"SELECT DISTINCT c.scenario FROM run_configs c WHERE run_id IN ({selected}) "
                                "AND c.scenario IS NOT NULL ORDER BY 1",
                           params, by, [r[0] for r in con.execute(f"SELECT run_id FROM ({selected})", params).fetchall()])
    else:
        print("compare groups of runs with: tracekit compare SCENARIO --by LABEL --metric METRIC "
              "(or tracekit metrics --by LABEL)")


def _print_comparisons(con: duckdb.DuckDBPyConnection, scenarios_sql: str, params: list, by: str, run_ids: list[str]) -> None:
    """`tracekit metrics --by`: the verdicts on the catalogue's headline metrics, per scenario."""
    from tracekit.analysis.compare import compare

    scenarios_ = [r[0] for r in con.execute(scenarios_sql, params).fetchall()]
    if not scenarios_:
        raise TracekitError("no runs with a seed and a scenario among the selected runs: --by has nothing to compare "
                            "(runs without a seed label are not replications)")
    for scen in scenarios_:
        print()
        _print_comparison(compare(con, scen, by, ["throughput_kbps", "mean_delay_ms", "jain_index"], run_ids=run_ids),
                          "table")


@app.command()
@handles_errors
def compare(
    scenario: Optional[str] = typer.Argument(None, help="Scenario whose runs to compare (the scenario label); omit with --experiment."),
    experiment: Optional[str] = typer.Option(None, "--experiment", "-e", help="The comparison a paper experiment declares (factor, per, the paper's metrics), over exactly its simulations in the store.", metavar="NAME"),
    by: Optional[str] = typer.Option(None, "--by", "-b", help="The factor: a run label (variant, pair, queue, routing, cbr_rate_mbps, ...) or name (the flow name).", metavar="LABEL"),
    metric: List[str] = typer.Option([], "--metric", "-m", help="A catalogued metric (repeatable) [default: throughput_kbps]; see tracekit sql \"SELECT * FROM metric_catalogue\".", metavar="METRIC"),
    per: List[str] = typer.Option([], "--per", "-p", help="One verdict per value of this label (repeatable), e.g. --per cbr_rate_mbps.", metavar="LABEL"),
    where: List[str] = typer.Option([], "--where", "-w", help="Only runs with LABEL=VALUE (or seed=, run_id=), only flows with name=, ptype=, fid=; KEY!=VALUE excludes; VALUE may be a,b,c. Repeatable, all must hold. Default flows: the TCP ones.", metavar="K=V"),
    fmt: RowFormat = FormatOpt,
    data: Optional[Path] = DataOpt,
) -> None:
    """Compare groups of runs on a metric with an honest verdict: per group the number of
    runs n, the mean over runs and its 95% confidence interval; then the best group against
    the runner-up with Welch's t-test at 5% ("X is higher than Y by D (p, n)", "no
    significant difference", "identical", or "no test possible" with fewer than 2 runs).
    Each run counts once (its selected flows averaged); runs without a seed are left out.

    Example: tracekit compare cbr-variants --by variant --per cbr_rate_mbps --metric throughput_kbps --where name!=CBR

    Example: tracekit compare --experiment cbr-exp1
    """
    from tracekit.analysis.compare import Filter, compare as run_compare
    from tracekit.db.query import chosen_runs, connect, connect_run_records

    if experiment:
        if scenario or by or metric or per or where:
            raise TracekitError("--experiment takes no scenario, --by, --metric, --per or --where (the experiment declares them)")
        from tracekit.analysis.compare import experiment_comparison

        root = _store(data)
        _print_comparison(experiment_comparison(connect_run_records(root), experiment, data_dir=root), fmt.value)
        return
    if not scenario or not by:
        raise TracekitError("name a scenario and --by LABEL, or an --experiment")
    filters = [Filter.parse(w) for w in where]
    root = _store(data)
    ids = chosen_runs(root, "SELECT run_id FROM run_configs WHERE scenario = ?", [scenario])     # the metrics over them alone
    con = connect(root, run_ids=ids)
    _print_comparison(run_compare(con, scenario, by, metric or ["throughput_kbps"], per=per, where=filters), fmt.value)


def _print_comparison(c, fmt: str) -> None:
    """A Comparison as tables and verdict lines, or its rows as CSV / JSON."""
    from tracekit.analysis.compare import fmt_value
    from tracekit.apps.output import print_rows

    cols = [*c.per, c.factor, "metric", "n_runs", "mean", "ci95_half_width", "stddev", "seeds", "verdict", "note"]
    if fmt == "json":
        import json
        from tracekit.apps.output import _plain

        out = {"scenario": c.scenario, "factor": c.factor, "flows": c.flow_filter, "runs": c.n_runs,
               "pooled_labels": list(c.pooled),
               "where": [str(f) for f in c.filters],
               "verdicts": [{"metric": v.metric.name, "unit": v.metric.unit, "higher_is_better": v.metric.higher_is_better,
                             "per": dict(v.per), "kind": v.kind, "verdict": v.text, "note": v.note,
                             "best": list(v.best), "runner_up": v.runner_up, "difference": v.difference,
                             "p_value": v.p_value, "welch_t": v.test.t if v.test else None,
                             "welch_df": v.test.df if v.test else None,
                             "groups": [{"level": g.level, "n_runs": g.n, "mean": g.mean, "stddev": g.stddev,
                                         "ci95_half_width": g.ci95_half_width, "values": list(g.values),
                                         "seeds": list(g.seeds)} for g in v.groups]}
                            for v in c.verdicts]}
        print(json.dumps(_plain(out), indent=1))
        return
    if fmt == "csv":
        rows = [[*(val for _, val in v.per), g.level, v.metric.name, g.n, g.mean, g.ci95_half_width, g.stddev,
                 " ".join(map(str, g.seeds)), v.text, v.note] for v in c.verdicts for g in v.groups]
        print_rows(cols, rows, "csv")
        return
    from tracekit.apps.output import visible

    def say(text: str = "") -> None:       # labels' control characters as escapes, as in the tables
        print(visible(text))

    say(f"{c.scenario}: {c.n_runs} runs with a seed; groups by {c.factor}; flows: {c.flow_filter}"
        + (f"; runs where {', '.join(str(f) for f in c.filters if not f.is_flow)}" if any(not f.is_flow for f in c.filters) else ""))
    if c.pooled_note:
        say(f"note: {c.pooled_note}")
    for v in c.verdicts:
        M = v.metric
        head = f"{M.title} ({M.name}, {M.unit}, {'higher' if M.higher_is_better else 'lower'} is better)"
        group_rows = [(g.level, g.n, fmt_value(g.mean), "" if g.ci95_half_width is None else f"± {fmt_value(g.ci95_half_width)}",
                       " ".join(map(str, g.seeds))) for g in v.groups]
        say()
        say(head + (f" at {v.per_text}" if v.per else ""))
        if group_rows:
            print_rows([c.factor, "n", "mean", "95% CI", "seeds"], group_rows, "table")
        say(f"verdict: {v.text}")
        if v.note:
            say(f"note: {v.note}")


@app.command()
@handles_errors
def scenarios(fmt: RowFormat = FormatOpt) -> None:
    """List the bundled ns-2 scenarios, their parameters (type, default, allowed values), the
    paper experiment each reproduces, and the named experiments (declared sweeps).

    Example: tracekit scenarios --format json
    """
    from tracekit.experiments import EXPERIMENTS, SCENARIOS
    from tracekit.apps.output import print_rows, print_tables

    if fmt == "json":
        import json

        out = {
            "scenarios": [
                {"id": s.id, "title": s.title, "paper": s.paper, "experiment": s.experiment,
                 "description": s.description,
                 "params": [{"name": p.name, "type": p.type, "default": p.default, "allowed": p.allowed(),
                             "choices": list(p.choices) if p.choices else None, "min": p.min, "max": p.max,
                             "unit": p.unit, "help": p.help} for p in s.params]}
                for s in SCENARIOS.values()
            ],
            "experiments": [
                {"name": e.name, "scenario": e.scenario, "grid": e.grid, "fixed": e.fixed, "seeds": e.seeds,
                 "runs": e.n_runs(), "description": e.description}
                for e in EXPERIMENTS.values()
            ],
        }
        print(json.dumps(out, indent=1, default=str))
        return
    scols, rows = ["scenario", "paper", "experiment", "title"], [(s.id, s.paper, s.experiment, s.title) for s in SCENARIOS.values()]
    pcols = ["scenario", "parameter", "type", "default", "allowed", "meaning"]
    prow = [(s.id, p.name, p.type, p.default, p.allowed(), p.help) for s in SCENARIOS.values() for p in s.params]
    ecols = ["experiment", "scenario", "grid", "seeds", "runs", "what"]
    erow = [(e.name, e.scenario, "; ".join(f"{k}: {len(v)} values" if len(v) > 6 else f"{k}={','.join(map(str, v))}"
                                            for k, v in e.grid.items()),
             f"{e.seeds[0]}-{e.seeds[-1]}" if len(e.seeds) > 1 else str(e.seeds[0]), e.n_runs(), e.description)
            for e in EXPERIMENTS.values()]
    if fmt == "csv":   # the three tables in one CSV, a first column `table` naming each row's
        print_tables([("scenarios", scols, rows), ("parameters", pcols, prow), ("experiments", ecols, erow)], "csv")
        return
    print_rows(scols, rows, "table", title="scenarios")
    print_rows(pcols, prow, "table", title="parameters")
    print_rows(ecols, erow, "table", title="experiments (tracekit sweep --experiment NAME)")


SetOpt = typer.Option([], "--set", "-s", help="Scenario parameter KEY=VALUE (repeatable); see tracekit scenarios.", metavar="K=V")
KeepOpt = typer.Option(True, "--keep-traces/--no-keep-traces", help="Keep the raw traces, zstd-compressed, in the store.")
NsOpt = typer.Option("ns", "--ns", help="The ns-2 binary.", metavar="PATH")


JobsOpt = typer.Option(None, "--jobs", "-j", callback=at_least_one("simulations"), help="Simulations at once, at least 1 [default: all cores].", metavar="N")


@app.command()
@handles_errors
def run(
    scenario: str = typer.Argument(..., help="Scenario id (see tracekit scenarios)."),
    set_: List[str] = SetOpt,
    seed: int = typer.Option(1, "--seed", help="RNG seed (>= 1); the same seed gives the same trace."),
    keep_traces: bool = KeepOpt,
    ns: str = NsOpt,
    data: Optional[Path] = DataOpt,
) -> None:
    """Run one bundled scenario with ns-2 and ingest its traces (packets, cwnd, queue),
    labelled with the scenario, its parameters, the seed and each flow's name.

    Example: tracekit run cbr-variants --set variant=Vegas --set cbr_rate_mbps=4 --seed 2
    """
    from tracekit.experiments.sweep import make_spec, run_sims
    from tracekit.core.memory import for_ingest

    for_ingest()        # as tracekit ingest (tracekit.core.memory)
    spec = make_spec(scenario, _pairs(set_, "--set"), seed)
    results = run_sims([spec], _data(data), jobs=1, keep_traces=keep_traces, resume=True, ns_binary=ns)
    r = results[0]
    if r.status == "skipped":
        print(f"already in the store: {spec.describe()} (sim_id {spec.sim_id})")
    elif r.status == "failed":
        raise TracekitError(r.error.replace("\n", "\n  "))
    else:
        print(f"ran {spec.describe()} in {r.seconds:.1f} s (ns-2 {r.ns_seconds:.1f} s): runs {', '.join(r.run_ids)}")


@app.command()
@handles_errors
def sweep(
    scenario: Optional[str] = typer.Argument(None, help="Scenario id (omit with --experiment)."),
    grid: List[str] = typer.Option([], "--grid", "-g", help="KEY=a,b,c or KEY=start:stop:step (stop included); repeatable.", metavar="K=VALUES"),
    seeds: Optional[str] = typer.Option(None, "--seeds", help="Seeds: 1-5, or 1,3,7 [default: 1, or the experiment's seeds]."),
    set_: List[str] = SetOpt,
    experiment: Optional[str] = typer.Option(None, "--experiment", "-e", help="Run a named paper experiment (see tracekit scenarios)."),
    quick: bool = typer.Option(False, "--quick", help="With --experiment: its reduced version (fewer seeds, shorter runs, coarser grid)."),
    jobs: Optional[int] = JobsOpt,
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help="Run each simulation as a task on a dask.distributed cluster: its scheduler's ADDRESS (tcp://host:8786; the store must be on a filesystem every worker mounts at the same path), or local:N for N local worker processes. Needs tracekit[cluster]. [default: a local process pool]", metavar="ADDRESS"),
    keep_traces: bool = KeepOpt,
    dry_run: bool = typer.Option(False, "--dry-run", help="Only say what would run."),
    ns: str = NsOpt,
    data: Optional[Path] = DataOpt,
) -> None:
    """Run the cross product of parameter grids and seeds with ns-2, in parallel, with a
    progress bar. Resumable: simulations already in the store are skipped, so an interrupted
    sweep picks up where it stopped. A failed simulation does not stop the others; the exit
    status is non-zero if any failed.

    Example: tracekit sweep cbr-variants --grid variant=Reno,Vegas --grid cbr_rate_mbps=1:10:1 --seeds 1-5 -j 2
    """
    from tracekit.experiments.sweep import done_sim_ids, parse_grid, parse_seeds, plan_experiment, plan_sweep

    if scheduler is not None and jobs is not None:
        raise TracekitError("--jobs is for the local pool; with --scheduler the cluster's workers run the simulations")

    if experiment:
        if scenario or grid or set_:
            raise TracekitError("--experiment takes no scenario, --grid or --set")
        specs = plan_experiment(experiment, parse_seeds(seeds) if seeds else None, quick=quick)
    else:
        if quick:
            raise TracekitError("--quick goes with --experiment")
        if not scenario:
            raise TracekitError("name a scenario (tracekit scenarios lists them) or an --experiment")
        specs = plan_sweep(scenario, [parse_grid(g) for g in grid], parse_seeds(seeds or "1"), _pairs(set_, "--set"))
    if dry_run:
        from tracekit.store.store import STORE_FILE

        exists = (_data(data) / STORE_FILE).is_file()
        done = done_sim_ids(_data(data)) if exists else set()
        todo = [s for s in specs if s.sim_id not in done]
        print(f"{len(specs)} simulations, {len(specs) - len(todo)} already in the store, {len(todo)} to run"
              + ("" if exists else f" (no store at {_data(data)} yet: the sweep creates it)"))
        for s in todo[:20]:
            print("  " + s.describe())
        if len(todo) > 20:
            print(f"  ... and {len(todo) - 20} more")
        return
    failed, n_run = _run_with_progress(specs, _data(data), jobs, keep_traces, ns, "sweep", scheduler=scheduler)
    if failed:
        raise _simulations_failed(failed, n_run)
    if experiment and not dry_run:
        from tracekit.experiments import EXPERIMENTS
        from tracekit.analysis.compare import experiment_comparison
        from tracekit.db.query import connect_run_records

        if EXPERIMENTS[experiment].compare is not None:
            print(f"\nwhat experiment {experiment} compares (tracekit compare --experiment {experiment}):")
            _print_comparison(experiment_comparison(connect_run_records(_data(data)), experiment,
                                                    parse_seeds(seeds) if seeds else None, quick=quick,
                                                    data_dir=_data(data)), "table")


def _run_with_progress(specs, data_dir: Path, jobs: Optional[int], keep_traces: bool, ns: str, what: str,
                       out=None, scheduler: Optional[str] = None) -> tuple[list, int]:
    """Run the simulations not yet in the store with a progress bar on stderr, in a local
    pool or (`scheduler`) on a Dask cluster; print one summary line (to `out`, default
    stdout); return the failed results and the number of simulations run."""
    from tracekit.experiments.sweep import run_sims

    failed: list = []
    counts = {"done": 0, "skipped": 0}
    with _SweepProgress() as bar:
        def started(n_todo, n_skipped):
            counts["skipped"] = n_skipped
            bar.start(n_todo, n_skipped)

        def finished(r):
            bar.advance(r)
            if r.status == "failed":
                failed.append(r)
                where = f" (on {r.host})" if r.host else ""
                bar.print(cut(f"tracekit: failed: {r.spec.describe()}{where}\n  " + r.error.replace("\n", "\n  ")))
            else:
                counts["done"] += 1

        if scheduler is None:
            from tracekit.core.memory import for_ingest

            for_ingest()    # this process ingests, as tracekit ingest does (tracekit.core.memory)
            run_sims(specs, data_dir, jobs=jobs or None, keep_traces=keep_traces, on_start=started, on_result=finished, ns_binary=ns)
        else:
            from tracekit.experiments.cluster import run_sims_cluster  # imports dask: only here

            def excluded(address, why):
                bar.print(cut(f"tracekit: worker {address} left out of the sweep: {why}"))

            run_sims_cluster(specs, data_dir, scheduler, keep_traces=keep_traces, on_start=started, on_result=finished,
                             on_workers=bar.workers, ns_binary=ns, on_excluded=excluded)
    print(f"{what}: {counts['done']} ran, {counts['skipped']} already in the store, {len(failed)} failed",
          file=out or sys.stdout)
    if counts["done"]:
        _compact_after(data_dir)
    return failed, counts["done"] + len(failed)


# an ingest of this many new runs (a study's batch, not a handful of traces) compacts the store after it, as a sweep does (tracekit compact)
COMPACT_AFTER_RUNS = 1000


def _compact_after(data_dir) -> None:
    """Compact the store after a sweep or a large ingest; a failure leaves the runs stored and
    the store readable as it was, so it is a warning."""
    from tracekit.db.compaction import compact as compact_store
    from tracekit.store.store import Store

    try:
        compact_store(Store(data_dir))
    except (TracekitError, OSError) as e:
        print(f"tracekit: warning: the store was not compacted ({e}); tracekit compact retries", file=sys.stderr)


def _simulations_failed(failed: list, n_run: int) -> TracekitError:
    """The line a sweep (or reproduce) with failed simulations ends with: how many, the first
    one's reason (each is reported above in full), and that the same command resumes."""
    reason = failed[0].error.split("\n", 1)[0].removesuffix("; last output:") or "no reason given"
    which = f": {reason} (reported above)" if len(failed) == 1 else f", each reported above (the first: {reason})"
    return TracekitError(f"{len(failed)} of {n_run} simulation{'s' * (n_run != 1)} failed{which}; "
                         "the same command again runs only the simulations not in the store")


@app.command()
@handles_errors
def reproduce(
    experiment: Optional[str] = typer.Argument(None, help="A paper experiment (tracekit reproduce --list); omit with --all or --list."),
    quick: bool = typer.Option(False, "--quick", help="The experiment's reduced version (fewer seeds, shorter runs, coarser grid; about two minutes on two cores)."),
    all_: bool = typer.Option(False, "--all", help="Every experiment, one after the other."),
    list_: bool = typer.Option(False, "--list", help="List the experiments, their papers and the last result in the store."),
    run: bool = typer.Option(True, "--run/--no-run", help="Run the simulations missing from the store first (default), or only evaluate what is there."),
    fmt: ReportFormat = typer.Option(ReportFormat.table, "--format", "-f", help="Output format (with --all: the summary table; table shows each experiment first)."),
    jobs: Optional[int] = JobsOpt,
    keep_traces: bool = KeepOpt,
    ns: str = NsOpt,
    papers_dir: Optional[Path] = typer.Option(None, "--papers", help="Read the paper files from DIR instead of the bundled ones (tracekit/experiments/papers/; format in its README.md).", metavar="DIR"),
    data: Optional[Path] = DataOpt,
) -> None:
    """Set a paper's numbers and claims beside ours: run the experiment's sweep (resumable:
    simulations already in the store are reused), then print one table per paper table
    (condition, paper value, ours as mean ± 95% CI over seeds, ratio) and each of the
    paper's claims, marked reproduced, not reproduced, untestable (with why) or paper
    implausible (with the physical bound), with the numbers the verdict rests on. The papers
    are data: tracekit/experiments/papers/*.toml. Each result is also saved in the store
    (reproduce/EXPERIMENT[.quick].json) for --list and the dashboard's Papers page.

    Example: tracekit reproduce cbr-exp1 --quick
    """
    import datetime
    import json

    from tracekit.core.memory import for_ingest

    if run:
        for_ingest()    # the sweeps below ingest; before tracekit.analysis.reproduce imports pyarrow (tracekit.core.memory)
    from tracekit.analysis import reproduce as rp
    from tracekit.experiments import EXPERIMENTS
    from tracekit.experiments.sweep import plan_experiment
    from tracekit.apps.output import _plain

    try:
        papers = rp.load_papers(papers_dir) if papers_dir else rp.load_papers()
    except rp.PaperFileError as e:
        raise TracekitError(f"paper file {e}") from None
    root = _data(data) if run or list_ else _store(data)    # --no-run only reads the store
    if list_:
        if experiment or all_:
            raise TracekitError("--list takes no experiment and no --all")
        from tracekit.store.store import STORE_FILE

        if not (root / STORE_FILE).is_file():
            print(f"tracekit: warning: {root} is not a tracekit store (yet): no results to show", file=sys.stderr)
        rows = []
        for name, exp in EXPERIMENTS.items():
            mine = rp.papers_of(name, papers)
            n_rows = sum(len(t.rows) for p in mine for t in p.tables if t.experiment == name)
            n_claims = sum(1 for p in mine for c in p.claims if c.experiment == name)
            last = rp.last_result(root, name)
            summ = "-"
            if last:
                c = last.get("summary", {})
                summ = (f"{'quick' if last.get('quick') else 'full'} {str(last.get('when', ''))[:16]}: "
                        + ", ".join(f"{c.get(s, 0)} {s}" for s in rp.STATUSES))
            rows.append([name, exp.scenario, ", ".join(p.id for p in mine) or "-", n_rows, n_claims,
                         exp.n_runs(), exp.quick.n_runs() if exp.quick else None, summ])
        from tracekit.apps.output import print_rows

        print_rows(["experiment", "scenario", "papers", "paper values", "claims", "runs", "quick runs", "last result"],
                   rows, "json" if fmt == "json" else "table", title="experiments (tracekit reproduce NAME [--quick])")
        return
    if all_ == bool(experiment):
        raise TracekitError("name an experiment (tracekit reproduce --list), or --all")
    if experiment is not None and experiment not in EXPERIMENTS:
        raise TracekitError(f"unknown experiment {experiment!r}; available: {', '.join(EXPERIMENTS)}")
    names = list(EXPERIMENTS) if experiment is None else [experiment]
    if quick:
        missing = [n for n in names if EXPERIMENTS[n].quick is None]
        if missing:
            raise TracekitError(f"experiment {missing[0]!r} declares no quick version")
    results = []
    failed: list = []
    n_run = 0
    for name in names:
        if run:
            specs = plan_experiment(name, quick=quick)
            print(f"tracekit: {name}{' (quick)' if quick else ''}: {len(specs)} simulations", file=sys.stderr)
            failed_here, n_here = _run_with_progress(specs, root, jobs, keep_traces, ns, f"reproduce {name}", out=sys.stderr)
            failed += failed_here
            n_run += n_here
        from tracekit.db.query import connect_run_records

        # the run records pick the experiment's runs; evaluate reads their metrics on a connection over those alone
        res = rp.evaluate(connect_run_records(root), name, quick=quick, papers=papers, data_dir=root)
        rp.save_result(root, res, datetime.datetime.now().isoformat(timespec="seconds"))
        results.append(res)
        if not all_ or fmt == "table":
            if fmt == "json":
                print(json.dumps(_plain(res.as_dict()), indent=1))
            elif fmt == "markdown":
                print(rp.render_markdown(res))
            else:
                print(rp.render_text(res) + ("\n" if all_ else ""))
    if all_ and fmt == "json":
        print(json.dumps(_plain([r.as_dict() for r in results]), indent=1))
    elif all_ and fmt == "markdown":
        print(rp.render_summary_markdown(results))
    elif all_:
        print(rp.render_summary_markdown(results))
    if failed:
        raise _simulations_failed(failed, n_run)


class _SweepProgress(_StderrProgress):
    """Simulations done / total with an ETA, the failures so far and (on a cluster) the
    workers; plain lines when stderr is not a terminal."""

    def __enter__(self):
        from tracekit.apps.output import console

        self.console = console(stderr=True)
        self.progress = None
        self.n = 0
        self.n_failed = 0
        self.n_workers: int | None = None
        return self

    def _info(self) -> str:
        parts = [] if self.n_workers is None else [f"{self.n_workers} worker{'s' * (self.n_workers != 1)}"]
        if self.n_failed:
            parts.append(f"{self.n_failed} failed")
        return " · ".join(parts)

    def start(self, n_todo, n_skipped):
        self.total = n_todo
        if n_skipped:
            self.print(f"tracekit: {n_skipped} simulation(s) already in the store, skipped")
        if self.console.is_terminal and n_todo:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.progress = Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                     TextColumn("eta"), TimeRemainingColumn(), TextColumn("{task.fields[info]}"),
                                     console=self.console)
            self.progress.__enter__()
            self.task = self.progress.add_task("sweep", total=n_todo, info=self._info())

    def workers(self, n: int) -> None:
        """The cluster's worker count changed (a worker joined, died or was let go)."""
        self.n_workers = n
        if self.progress is not None:
            self.progress.update(self.task, info=self._info())
        else:
            print(f"tracekit: {n} worker(s) on the cluster", file=sys.stderr)

    def advance(self, r):
        self.n += 1
        self.n_failed += r.status == "failed"
        if self.progress is not None:
            self.progress.update(self.task, advance=1, info=self._info())
        elif self.total >= 10 and (self.n % max(1, self.total // 10) == 0 or self.n == self.total):
            extra = f", {self.n_failed} failed" if self.n_failed else ""
            print(f"tracekit: {self.n}/{self.total} simulations{extra}", file=sys.stderr)


@app.command()
@handles_errors
def dashboard(
    port: Optional[int] = typer.Option(None, "--port", "-p", help="Port on 127.0.0.1 [default: Streamlit's 8501, or the next free one]."),
    open_browser: bool = typer.Option(False, "--open/--no-open", help="Open a browser tab."),
    papers_dir: Optional[Path] = typer.Option(None, "--papers", help="The Papers page reads the paper files from DIR instead of the bundled ones (as tracekit reproduce --papers).", metavar="DIR"),
    data: Optional[Path] = DataOpt,
) -> None:
    """Start the Streamlit comparison dashboard on 127.0.0.1 over the same store (which must
    exist). Needs the dashboard extra: pip install 'tracekit[dashboard]'.

    Example: tracekit dashboard --port 8501 --data tracekit-data
    """
    from tracekit.apps.dashboard import check_installed, launch

    check_installed()
    code = launch(_store(data).resolve(), port, open_browser, papers_dir)
    if code:
        raise typer.Exit(code)


@app.command()
@handles_errors
def report(
    where: List[str] = typer.Option([], "--where", "-w", help="Only runs with LABEL=VALUE (or seed=, run_id=), only flows with name=, ptype=, fid=; KEY!=VALUE excludes; VALUE may be a,b,c. Repeatable, all must hold (as tracekit compare).", metavar="K=V"),
    scenario: Optional[str] = typer.Option(None, "--scenario", "-s", help="Only this scenario's runs (the same as --where scenario=NAME).", metavar="NAME"),
    experiment: Optional[str] = typer.Option(None, "--experiment", "-e", help="Only a paper experiment's simulations; adds the paper's values and claims beside ours (tracekit reproduce on the store, no simulation run).", metavar="NAME"),
    quick: Optional[bool] = typer.Option(None, "--quick/--full", help="With --experiment: its quick or full version [default: the full one when all of it is in the store, else the quick one when all of that is, else whichever has more runs]."),
    by: Optional[str] = typer.Option(None, "--by", "-b", help="The factor groups are formed by: a run label, or name (the flow name) [default: variant, or the scenario's series (queue, routing), or the first swept label; with nothing swept, name].", metavar="LABEL"),
    metric: List[str] = typer.Option([], "--metric", "-m", help="A catalogued metric to compare (repeatable) [default: throughput, delay, 95th-percentile delay, drop rate, Jain's index; wireless: PDR, throughput, delay, NRL].", metavar="METRIC"),
    output: Path = typer.Option(Path("report.html"), "--output", "-o", help="The HTML file to write (written to a temporary name, then renamed).", metavar="FILE"),
    data: Optional[Path] = DataOpt,
) -> None:
    """Write one self-contained HTML report of a selection of runs: the conditions first
    (scenario, fixed and swept parameters, seeds, what a seed varies, tracekit and ns-2
    versions), then the comparison tables with 95% confidence intervals and verdicts (the
    numbers of tracekit compare), sweep curves with CI bands, throughput vs delay, Jain's
    fairness and per-packet delay CDFs, each figure captioned with its conditions. The
    figures are interactive (plotly, bundled into the file: it opens offline). Needs the
    dashboard extra (plotly): pip install 'tracekit[dashboard]'.

    Example: tracekit report --where scenario=queue-influence -o report.html

    Example: tracekit report --experiment cbr-exp3 -o cbr-exp3.html
    """
    try:
        import plotly  # noqa: F401
    except ImportError:
        raise TracekitError("tracekit report draws with plotly: pip install 'tracekit[dashboard]'") from None
    from tracekit.analysis.compare import Filter
    from tracekit.apps.report import build_report, check_output, write_report

    if quick is not None and not experiment:
        raise TracekitError("--quick/--full go with --experiment")
    filters = [Filter.parse(w) for w in where]
    if scenario:
        filters.insert(0, Filter("scenario", (scenario,)))
    check_output(output)

    import time

    t0 = time.monotonic()

    def progress(msg: str) -> None:
        print(f"tracekit: report: {msg} ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)

    rep = build_report(_store(data), filters, experiment, quick=quick, metrics=metric, by=by, progress=progress)
    progress(f"writing {output}")
    path, size = write_report(rep, output)
    print(f"wrote {path} ({size / 1e6:.1f} MB; {len(rep.sections)} scenario(s), {rep.n_figures} figures)")


class ExplainFormat(str, enum.Enum):
    """--format of tracekit explain-awk."""
    table = "table"
    json = "json"


@app.command("explain-awk")
@handles_errors
def explain_awk(
    script: Path = typer.Argument(..., help="The awk script (run as gawk -f SCRIPT AWK_ARGS... TRACE).", metavar="SCRIPT.awk"),
    trace: Path = typer.Argument(..., help="The ns-2 packet trace (wired, old or new wireless); plain, .gz, .zst, .bz2 or .xz.", metavar="TRACE"),
    awk_args: Optional[List[str]] = typer.Argument(None, help="After --: arguments for gawk before the trace (-v name=value, name=value).", metavar="[-- AWK_ARGS...]"),
    fmt: ExplainFormat = typer.Option(ExplainFormat.table, "--format", "-f", help="Output format."),
    timeout_s: float = typer.Option(60.0, "--timeout", help="Stop gawk after this many seconds.", metavar="S"),
    data: Optional[Path] = typer.Option(None, "--data", help="Read the trace's run from this store when it holds the trace (same content), else ingest it into a temporary store [default: $TRACEKIT_DATA, else ./tracekit-data, when that is a store].", metavar="DIR"),
) -> None:
    """Run your awk script on a trace and say, for every number it prints, which known mistake
    reproduces it (within 0.1 %) and what tracekit computes instead.

    tracekit's values come from the trace's run in the store (--data) when the store already
    holds that trace, else from the trace ingested into a private temporary store (your store
    is never written). The catalogue of mistakes: tracekit/analysis/explain/mistakes.toml, explained in
    docs/why-awk-numbers-differ.md.
    A number no variant reproduces is reported as unexplained. explained_by [] means the
    number agrees with tracekit.

    Example: tracekit explain-awk --format json throughput.awk out.tr.gz -- -v fid=1
    """
    import json

    from tracekit.analysis.explain import explain_awk as explain

    if not timeout_s > 0 or timeout_s == float("inf"):
        raise TracekitError(f"--timeout must be a finite number of seconds > 0, not {timeout_s}")
    from tracekit.store.store import STORE_FILE

    if data is not None:
        store: Optional[Path] = _store(data)          # a --data given must be a store
    else:
        root = _data(None)
        store = root if (root / STORE_FILE).is_file() else None
    report = explain(script, trace, list(awk_args or []), timeout_s, data_dir=store)
    if fmt == ExplainFormat.json:
        json.dump({"numbers": report.rows(), "source": report.variants.source, "skipped_numbers": report.skipped},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
        return
    if not report.explanations:
        print("the script printed no numbers")
        return
    print(report.table())


def _on_sigterm(signum, frame):
    raise Terminated()


def _existing_store(data: Optional[Path]):
    from tracekit.store.store import Store

    return Store(_store(data))


@app.command()
@handles_errors
def verify(
    deep: bool = typer.Option(False, "--deep", help="Also read every data page (slow: reads the whole store), not only every footer."),
    data: Optional[Path] = DataOpt,
) -> None:
    """Check every run of the store: its run.parquet present, every Parquet file whole (each
    footer read in full). Prints one line per damaged run; exit status 1 if there is any.

    Every other command already skips a damaged run it notices (with a warning); remove
    them with tracekit rm --damaged, then re-ingest or re-run (tracekit sweep re-runs them).

    Example: tracekit verify --data tracekit-data || tracekit rm --damaged --yes --data tracekit-data
    """
    from tracekit.store.verify import verify as verify_store

    from tracekit.store.verify import verify_compacted

    store = _existing_store(data)
    n_runs, damaged = verify_store(store, deep=deep)
    for d in damaged:
        print(d.describe())
    compacted = verify_compacted(store, deep=deep)
    if compacted is not None:
        print(f"compacted files damaged ({compacted}): unused until tracekit compact writes a whole generation")
    print(f"{n_runs} run(s) checked{' (every page read)' if deep else ''}, {len(damaged)} damaged"
          + (": tracekit rm --damaged removes them" if damaged else ""))
    if damaged or compacted is not None:
        raise typer.Exit(1)


@app.command()
@handles_errors
def compact(data: Optional[Path] = DataOpt) -> None:
    """Write the small per-run tables (run records, node addresses, annotations, stored
    facts) of every whole run into a few study-level Parquet files under compacted/, made
    current atomically; the per-run files stay. Also run_metrics' per-packet values of
    every packet-trace run (run_metric_facts: on-period statistics, RTT, queue delay).
    Every query then reads those few files for the compacted runs (and each run's own files
    for the runs ingested since). Safe to run
    while ingests and queries run. A sweep, reproduce and an ingest of 1,000 traces or more
    compact at their end; this command upgrades a store made before them.

    Example: tracekit compact --data tracekit-data
    """
    from tracekit.db.compaction import compact as compact_store

    manifest = compact_store(_existing_store(data))
    print(f"{len(manifest['run_ids'])} run(s) compacted into generation {manifest['generation']}")


@app.command()
@handles_errors
def rm(
    run_ids: List[str] = typer.Argument(None, help="Run ids (a unique prefix is enough), damaged or not.", metavar="RUN_ID"),
    damaged: bool = typer.Option(False, "--damaged", help="Also remove every damaged run that tracekit verify reports."),
    deep: bool = typer.Option(False, "--deep", help="With --damaged: what tracekit verify --deep reports (every page read)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask (needed when stdin is not a terminal)."),
    data: Optional[Path] = DataOpt,
) -> None:
    """Remove runs from the store, each atomically (one rename takes it out of the store,
    then it is deleted). Prints one line per run removed.

    Examples: tracekit rm 3f2a9c01b7 --yes;  tracekit rm --damaged --yes
    """
    from tracekit.store.verify import remove_runs, resolve_runs, verify as verify_store

    store = _existing_store(data)
    ids = resolve_runs(store, run_ids or [])
    why = {}
    if damaged:
        for d in verify_store(store, deep=deep)[1]:
            why[d.run_id] = f" (damaged: {d.file}: {d.reason})"
            if d.run_id not in ids:
                ids.append(d.run_id)
    if not ids:
        if damaged and not run_ids:
            print("no damaged runs")
            return
        raise TracekitError("name the runs to remove (RUN_ID...) or pass --damaged")
    if not yes:
        if not sys.stdin.isatty():
            raise TracekitError(f"would remove {len(ids)} run(s); pass --yes to remove without asking")
        if not typer.confirm(f"remove {len(ids)} run(s) from {store.root}?", default=False):
            raise fail("nothing removed")
    remove_runs(store, ids, on_removed=lambda r: print(f"removed run {r}{why.get(r, '')}"))


def main() -> None:
    import signal

    signal.signal(signal.SIGTERM, _on_sigterm)     # cleaned up after like Ctrl-C
    app(prog_name="tracekit")


def entry_point() -> None:
    """The `tracekit` command (its console script, and `python -m tracekit`): main, then the
    process ends without the interpreter's teardown (tracekit.core.startup.exit_promptly). main
    itself ends by SystemExit, as typer's commands do, for callers in a process of their own.
    What escapes main otherwise (outside a command, where typer writes its help or usage)
    is one line too."""
    from tracekit.core.startup import exit_promptly

    try:
        main()                          # typer (click's standalone mode) ends by SystemExit
    except SystemExit as e:
        exit_promptly(e.code)
        raise
    except BaseException as e:          # outside every command's boundary: still one line
        code = fail("terminated", 143).exit_code if isinstance(e, Terminated) else escaped(e)
        exit_promptly(code)
        raise SystemExit(code) from None
    exit_promptly(0)


if __name__ == "__main__":
    entry_point()
