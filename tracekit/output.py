"""Printing query results as a table, CSV or JSON (shared by every command that prints rows)."""
from __future__ import annotations

import csv
import json
import math
import sys
from datetime import date, datetime
from typing import Any, Sequence

FORMATS = ("table", "csv", "json")
TABLE_MAX_ROWS = 200


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


def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.6g}" if abs(v) < 1e15 else repr(v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    if isinstance(v, (datetime, date)):
        return v.isoformat(sep=" ", timespec="seconds") if isinstance(v, datetime) else v.isoformat()
    return str(v)


def print_rows(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str, title: str | None = None, out=None) -> None:
    out = out or sys.stdout
    if fmt == "json":
        json.dump([{c: _plain(v) for c, v in zip(columns, r)} for r in rows], out, indent=1)
        out.write("\n")
    elif fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if v is None else json.dumps(_plain(v)) if isinstance(v, (dict, list)) else v for v in r])
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title, show_lines=False, title_justify="left", expand=False)
        for c in columns:
            table.add_column(c, overflow="fold")
        for r in rows[:TABLE_MAX_ROWS]:
            table.add_row(*[_cell(v) for v in r])
        probe = Console(file=out)
        # in a terminal rich fits the table to the window; piped output is never wrapped
        console = probe if probe.is_terminal else Console(file=out, width=10_000)
        console.print(table)
        if len(rows) > TABLE_MAX_ROWS:
            console.print(f"... {len(rows) - TABLE_MAX_ROWS} more rows (use --format csv or json for all)")
        elif not rows:
            console.print("(no rows)")
