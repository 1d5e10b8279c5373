"""Printing query results as a table, CSV or JSON (shared by every command that prints rows).

Tables go to a terminal at its width. Piped (stdout not a terminal) they are as wide as
`$COLUMNS` when that is set to a number, and otherwise never wrapped, so that a script
reading them sees one line per row. Several tables in one CSV or JSON output:
`print_tables`.

Text in a table (cells, column names, the title) is printed as it is, never read as rich
markup or emoji codes; its control characters (ESC, carriage return, newline, ...) show as
escapes such as `\\x1b` and `\\n`, so that a label or a query result cannot move the cursor,
colour the terminal or forge lines. CSV and JSON keep every value exactly.
"""
from __future__ import annotations

import csv
import json
import math
import os
import re
import sys
from datetime import date, datetime
from typing import Any, Iterable, Sequence

from tracekit.core.errors import TracekitError, escape_chars

FORMATS = ("table", "csv", "json")
TABLE_MAX_ROWS = 200
TABLE_MAX_BYTES = 4 * 2**20     # of text in the rows a table holds to size its columns (table_head)


def _plain(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return str(v)


# C0 and C1 controls and DEL, the Unicode line and paragraph separators, and the bidi
# embeddings, overrides and isolates (which reorder what follows them on the line)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with each control character written as its Python escape (`\\x1b`, `\\n`,
    `\\t`, `\\u202e`): for a terminal, which would act on it (or rich, which drops some)."""
    return escape_chars(text, _CONTROL)


def console(out=None, **kw):
    """A rich Console that prints strings literally: no markup, no emoji codes, no
    highlighting (a `[/x]` in a label is text, not a closing tag)."""
    from rich.console import Console

    return Console(file=out, markup=False, emoji=False, highlight=False, **kw)


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e15 else repr(v)
    if isinstance(v, dict):
        return visible(", ".join(f"{k}={x}" for k, x in v.items()))
    if isinstance(v, (datetime, date)):
        return v.isoformat(sep=" ", timespec="seconds") if isinstance(v, datetime) else v.isoformat()
    return visible(str(v))


def piped_width() -> int | None:
    """The table width for output that is not a terminal: $COLUMNS when it is a positive
    number, else None (no wrapping)."""
    cols = os.environ.get("COLUMNS", "").strip()
    return int(cols) if cols.isdigit() and int(cols) > 0 else None


def print_tables(tables: Sequence[tuple[str, Sequence[str], Sequence[Sequence[Any]]]], fmt: str, out=None) -> None:
    """Several named tables as one CSV or one JSON document, none left out.

    CSV: one header, a first column `table` naming each row's table, then the union of the
    tables' columns in order of first appearance; a cell of a column its table lacks is
    empty. JSON: one object, {table name: [row objects]}.
    """
    out = out or sys.stdout
    if fmt == "json":
        json.dump({name: [{c: _plain(v) for c, v in zip(cols, r)} for r in rows] for name, cols, rows in tables}, out, indent=1)
        out.write("\n")
        return
    if fmt != "csv":
        raise ValueError(f"print_tables writes csv or json, not {fmt!r}")
    union: list[str] = []
    for _, cols, _ in tables:
        union += [c for c in cols if c not in union]
    if "table" in union:
        raise ValueError("a table has a column named 'table', which print_tables uses for the table's name")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["table", *union])
    for name, cols, rows in tables:
        pos = {c: i for i, c in enumerate(cols)}
        for r in rows:
            w.writerow([name, *(_csv_cell(r[pos[c]]) if c in pos else "" for c in union)])


def _csv_cell(v: Any) -> Any:
    return "" if v is None else json.dumps(_plain(v)) if isinstance(v, (dict, list)) else v


def write_rows(columns: Sequence[str], batches: Iterable[Sequence[Sequence[Any]]], fmt: str, out=None) -> None:
    """The rows of `batches` as CSV or JSON, each batch written as it comes (nothing holds
    more than one): the text print_rows writes for the same rows held at once."""
    out = out or sys.stdout
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        for batch in batches:
            w.writerows([_csv_cell(v) for v in r] for r in batch)
    elif fmt == "json":
        # json.dump(rows, indent=1) a row at a time: each row object one level in
        sep = "[\n"
        for batch in batches:
            for r in batch:
                text = json.dumps({c: _plain(v) for c, v in zip(columns, r)}, indent=1)
                out.write(sep + " " + text.replace("\n", "\n "))
                sep = ",\n"
        out.write("[]\n" if sep == "[\n" else "\n]\n")
    else:
        raise ValueError(f"write_rows writes csv or json, not {fmt!r}")


class RowsHead(Sequence):
    """The first rows of a result and how many rows it had (its len()): what print_rows'
    table shows (TABLE_MAX_ROWS of them, and a count of the rest), without the rest held."""

    def __init__(self, rows: list[Sequence[Any]], total: int):
        self.rows, self.total = rows, total

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, i):  # type: ignore[override]
        return self.rows[i]


def table_head(batches: Iterable[Sequence[Sequence[Any]]], max_bytes: int = TABLE_MAX_BYTES) -> RowsHead:
    """The rows of `batches` as print_rows' table needs them: the first TABLE_MAX_ROWS kept,
    the others only counted. First rows with more than max_bytes of text are refused
    (TracekitError): the table holds them all to size its columns."""
    held: list[Sequence[Any]] = []
    total = size = 0
    for batch in batches:
        total += len(batch)
        for r in batch[:max(0, TABLE_MAX_ROWS - len(held))]:
            size += sum(len(v) if isinstance(v, (str, bytes)) else len(str(v)) for v in r)
            if size > max_bytes:
                raise TracekitError(f"the table's first rows hold more than {max_bytes / 2**20:g} MiB of text; "
                                    "--format csv or json writes them (as they come)")
            held.append(r)
    return RowsHead(held, total)


def print_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, title: str | None = None, out=None) -> None:
    out = out or sys.stdout
    if fmt in ("csv", "json"):
        write_rows(columns, [rows], fmt, out)
    else:
        from rich.table import Table

        table = Table(title=None if title is None else visible(title), show_lines=False, title_justify="left", expand=False)
        for c in columns:
            table.add_column(visible(c), overflow="fold")
        for r in rows[:TABLE_MAX_ROWS]:
            table.add_row(*[_cell(v) for v in r])
        probe = console(out)
        # in a terminal rich fits the table to the window; piped output to $COLUMNS, else not wrapped
        con = probe if probe.is_terminal else console(out, width=piped_width() or 10_000)
        con.print(table)
        if len(rows) > TABLE_MAX_ROWS:
            con.print(f"... {len(rows) - TABLE_MAX_ROWS} more rows (use --format csv or json for all)")
        elif not rows:
            con.print("(no rows)")
