"""The `tracekit` command line: each command parses its options and calls one library
function; errors become one line on stderr and a non-zero exit."""
from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import List, Optional

import typer

from .errors import TracekitError

app = typer.Typer(
    help="tracekit: ns-2 traces into Parquet, TCP metrics as SQL.\n\n"
    "Example: tracekit ingest out.tr && tracekit sql \"SELECT * FROM runs\"",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

DataOpt = typer.Option(None, "--data", help="Store directory [default: $TRACEKIT_DATA, else ./tracekit-data].", metavar="DIR")
FormatOpt = typer.Option("table", "--format", "-f", help="Output format: table, csv or json.")


def _data(d: Optional[Path]) -> Path:
    from .store import default_data_dir

    return d if d is not None else default_data_dir()


def fail(msg: str, code: int = 1) -> "typer.Exit":
    print(f"tracekit: error: {msg}", file=sys.stderr)
    return typer.Exit(code)


def handles_errors(fn):
    @functools.wraps(fn)
    def wrapper(*a, **kw):
        try:
            return fn(*a, **kw)
        except TracekitError as e:
            raise fail(str(e))
        except KeyboardInterrupt:
            raise fail("interrupted", 130)
    return wrapper


def _check_format(fmt: str) -> str:
    from .output import FORMATS

    if fmt not in FORMATS:
        raise TracekitError(f"--format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    return fmt


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
    data: Optional[Path] = DataOpt,
) -> None:
    """Parse ns-2 traces into the Parquet store, one run per trace.

    The kind of each file is detected (wired packet trace, TCP variable trace, queue
    monitor, RED trace). The same content ingested twice is one run.

    Example: tracekit ingest out.tr cwnd.tr.gz --label variant=Reno --flow-label 1=Reno
    """
    from .ingest import ingest_paths

    labels = _pairs(label, "--label")
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
                bar.print(f"tracekit: error: {r.message}")
            for w in r.warnings:
                bar.print(f"tracekit: warning: {w}")

        results = ingest_paths(_data(data), paths, labels, flows, skip_bad_lines, progress=bar.update, on_result=report)
    if skipped:
        print(f"tracekit: skipped {len(skipped)} file(s) that are not traces tracekit can ingest "
              f"(first: {skipped[0].message})", file=sys.stderr)
    failed = [r for r in results if r.status == "failed"]
    if failed:
        raise typer.Exit(1)
    if not any(r.status in ("added", "duplicate") for r in results):
        raise fail("none of the files is an ns-2 trace tracekit can ingest")


class _Progress:
    """A byte-based progress bar on stderr for files that take a while (rich)."""

    def __init__(self):
        self.progress = None
        self.tasks = {}

    def __enter__(self):
        from rich.console import Console

        self.console = Console(stderr=True)
        if self.console.is_terminal:
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn, TransferSpeedColumn

            self.progress = Progress(
                TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                TimeRemainingColumn(), console=self.console, transient=True,
            )
            self.progress.__enter__()
        return self

    def update(self, path, done, total):
        if self.progress is None:
            return
        if path not in self.tasks:
            self.tasks[path] = self.progress.add_task(Path(path).name, total=total)
        self.progress.update(self.tasks[path], completed=done)

    def done(self, path):
        if self.progress is not None and path in self.tasks:
            self.progress.remove_task(self.tasks.pop(path))

    def print(self, msg):
        if self.progress is not None:
            self.progress.console.print(msg, markup=False, highlight=False)
        else:
            print(msg, file=sys.stderr)

    def __exit__(self, *exc):
        if self.progress is not None:
            self.progress.__exit__(*exc)


@app.command()
@handles_errors
def runs(data: Optional[Path] = DataOpt, fmt: str = FormatOpt) -> None:
    """List the ingested runs with their labels.

    Example: tracekit runs --format csv
    """
    from .query import connect, run_query
    from .output import print_rows

    _check_format(fmt)
    con = connect(_data(data))
    rel = run_query(con, "SELECT run_id, trace_kind, n_events, t_start, t_end, scenario, seed, labels, source FROM runs ORDER BY ingested_at, run_id")
    print_rows(rel.columns, rel.fetchall(), fmt, title=f"runs in {_data(data)}")


@app.command()
@handles_errors
def sql(
    query: str = typer.Argument(..., help="One SQL query (SELECT / WITH / EXPLAIN) over the views.", metavar="QUERY"),
    data: Optional[Path] = DataOpt,
    fmt: str = FormatOpt,
) -> None:
    """Run a read-only SQL query with every tracekit view defined (runs, events, tcp_vars,
    queue_samples, annotations, red_vars, flow_labels and the metric views).

    Example: tracekit sql "SELECT event, count(*) FROM events GROUP BY event"
    """
    from .query import connect, run_query
    from .output import print_rows

    _check_format(fmt)
    con = connect(_data(data))
    rel = run_query(con, query)
    try:
        rows = rel.fetchall()
    except Exception as e:  # duckdb errors raised while fetching
        raise TracekitError(f"SQL: {str(e).splitlines()[0]}") from None
    print_rows(rel.columns, rows, fmt)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
