"""The sql/ files as text: where they are, what each defines and uses, the order to load
them in, and the SQL of the raw_* views over Parquet parts. No connection and no store here:
tracekit.db.query builds connections from it, and tracekit.ingest.facts (below the SQL layer,
called by ingest) runs the stored-facts definitions over one staged run with it.

Each sql/ file defines the one view or macro named by its file name and declares what it
uses on a `-- uses: a, b` header line.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from tracekit.store.columns import RAW_COLUMNS, VIEW_FACTS
from tracekit.core.errors import TracekitError
from tracekit.core.resources import shipped

LAYERS = ("macros", "staging", "intermediate", "metrics")
# the stored facts (tracekit.store.columns.FACT_TABLES): for each, the view <table>_computed, the
# facts of the runs without a stored part of the current definition, computed from their
# events (computed_view_sql)
COMPUTED_VIEWS = {t: f"{t}_computed" for t in VIEW_FACTS}
# raw_hier_<table>: the same table, only the files of runs with hierarchical addresses (those
# with node_addrs parts, trace_kind 'hier'): their views cost nothing in a store without any
HIER_TABLES = ("events", "wireless_events")
# every raw_<name> view the Python side defines, with its declared columns
RAW_VIEWS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    *RAW_COLUMNS.items(), *((f"hier_{t}", RAW_COLUMNS[t]) for t in HIER_TABLES))
# the sql/ views over the runs with hierarchical addresses only (their raw_hier_* views): in a
# store (or a selection of runs) without such runs, tracekit.db.query redefines them as empty
# relations of these columns (empty_view_sql), so that a query neither binds nor plans their
# chains (tests/test_query.py checks these columns against the views)
HIER_VIEWS: dict[str, tuple[tuple[str, str], ...]] = {
    "hier_flows": (("run_id", "VARCHAR"), ("fid", "INTEGER"), ("src_node", "INTEGER"),
                   ("src_port", "INTEGER"), ("dst_node", "INTEGER"), ("dst_port", "INTEGER"),
                   ("ptype", "VARCHAR"), ("name", "VARCHAR"), ("fulltcp", "BOOLEAN"),
                   ("hdr_bytes", "INTEGER"), ("src_addr", "VARCHAR"), ("dst_addr", "VARCHAR")),
    "hier_packets": (("trace_kind", "VARCHAR"), ("run_id", "VARCHAR"), ("fid", "INTEGER"),
                     ("src_node", "INTEGER"), ("src_port", "INTEGER"), ("dst_node", "INTEGER"),
                     ("dst_port", "INTEGER"), ("pkt_id", "BIGINT"), ("ptype", "VARCHAR"),
                     ("seq", "BIGINT"), ("seq_key", "BIGINT"), ("size", "INTEGER"),
                     ("hdr_bytes", "INTEGER"), ("payload_bytes", "INTEGER"), ("t_sent", "DOUBLE"),
                     ("t_recv", "DOUBLE"), ("recv_line", "BIGINT"), ("rx_bytes", "BIGINT"),
                     ("drops", "BIGINT"), ("overheard", "BIGINT"), ("first_of_seq", "BOOLEAN")),
}
# names the Python side defines before any sql/ file: the raw tables, the catalogue and
# the computed facts
BASE_NAMES = frozenset({*(f"raw_{t}" for t in RAW_COLUMNS), *(f"raw_hier_{t}" for t in HIER_TABLES),
                        "metric_catalogue", *COMPUTED_VIEWS.values()})
LIST_CHUNK = 1000      # files per read_parquet list in a raw_* view
_USES = re.compile(r"^--\s*uses:(.*)$", re.MULTILINE)


def sql_dir() -> Path:
    return shipped("sql")


@dataclass(frozen=True)
class SqlFile:
    """One sql/ file: the view or macro `name` it defines, and the names it declares using."""
    name: str
    path: Path
    layer: str
    uses: tuple[str, ...]
    text: str

    @property
    def rel(self) -> str:
        return f"sql/{self.layer}/{self.path.name}"

    @property
    def kind(self) -> str:
        """'view', 'macro' (scalar) or 'table_macro'."""
        if "CREATE OR REPLACE MACRO" in self.text:
            return "table_macro" if re.search(r"\)\s+AS\s+TABLE\b", self.text) else "macro"
        return "view"


def _parse(path: Path, layer: str) -> SqlFile:
    text = path.read_text()
    m = _USES.search(text)
    if m is None:
        raise TracekitError(f"sql/{layer}/{path.name}: no '-- uses:' header line (write '-- uses:' alone if it uses nothing)")
    uses = tuple(sorted({u.strip() for u in m.group(1).split(",") if u.strip()}))
    return SqlFile(path.stem, path, layer, uses, text)


@lru_cache(maxsize=8)
def _ordered(root: str, stamp: tuple) -> tuple[SqlFile, ...]:
    files: dict[str, SqlFile] = {}
    for layer in LAYERS:
        for p in sorted((Path(root) / layer).glob("*.sql")):
            f = _parse(p, layer)
            if f.name in files or f.name in BASE_NAMES:
                raise TracekitError(f"{f.rel}: the name {f.name!r} is defined twice")
            files[f.name] = f
    for f in files.values():
        for u in f.uses:
            if u not in files and u not in BASE_NAMES:
                raise TracekitError(f"{f.rel}: uses unknown view or macro {u!r}")
            if u == f.name:
                raise TracekitError(f"{f.rel}: uses itself")
    # depth-first topological order; files of one depth keep layer then name order
    order: list[SqlFile] = []
    state: dict[str, int] = {}           # 1 = on the current path, 2 = done

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2 or name in BASE_NAMES:
            return
        if state.get(name) == 1:
            cyc = path[path.index(name):] + [name]
            raise TracekitError(f"sql/: views depend on each other in a cycle: {' -> '.join(cyc)}")
        state[name] = 1
        for u in files[name].uses:
            visit(u, path + [name])
        state[name] = 2
        order.append(files[name])

    for name in files:
        visit(name, [])
    return tuple(order)


def sql_files() -> list[SqlFile]:
    """Every sql/ file, in an order where each comes after everything it declares it uses."""
    root = sql_dir()
    paths = sorted(root.glob("*/*.sql"))
    stamp = tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    return list(_ordered(str(root), stamp))



def needed_names(files: list[SqlFile], names: set[str]) -> set[str]:
    """Of `names`, those the sql/ files or the base names (raw_*, metric_catalogue) define,
    and, transitively, everything they declare using."""
    by_name = {f.name: f for f in files}
    need: set[str] = set()
    todo = [n for n in names if n in by_name or n in BASE_NAMES]
    while todo:
        n = todo.pop()
        if n in need:
            continue
        need.add(n)
        if n in by_name:
            todo.extend(by_name[n].uses)
    return need


def _quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def _raw_view_sql(name: str, columns: tuple[tuple[str, str], ...], files: list[str],
                  run_id: str | None = None, compacted: str | None = None,
                  exclude: list[str] | None = None, only: list[str] | None = None) -> str:
    """raw_<name>: the declared columns of the table (tracekit.store.columns: (name, DuckDB type))
    read from `files`, and run_id from their run_id=<id> directory (given `run_id`: that
    constant, for the files of one run still in staging); without files, an empty relation
    of the same columns.

    The columns come from the declared schema, not from the files: every part of a store is
    written with its table's declared columns (ingest casts each chunk to them, and a store of
    another schema version is refused), so when a query binds the view DuckDB reads just the
    first file's footer, and the rest match by column name (a file without a declared column
    fails the query that reads it, naming the file). With `union_by_name` every bind read every
    file's footer, which made the views over a few hundred runs take minutes to define.

    With `compacted` (the table's file of the compacted generation, tracekit.store.compacted),
    its rows too, but those of the runs `exclude` (removed or damaged since), or, given
    `only`, of those runs alone."""
    if compacted is not None:
        cols = ", ".join(f'"{c}"' for c, _ in columns)
        sel = f"SELECT {cols}, run_id FROM read_parquet({_quote(compacted)})"
        if only is not None:
            sel += f" WHERE run_id IN ({', '.join(_quote(r) for r in only)})" if only else " WHERE false"
        elif exclude:
            sel += f" WHERE run_id NOT IN ({', '.join(_quote(r) for r in exclude)})"
        if files:
            rest = _raw_view_sql(name, columns, files).split(" AS ", 1)[1]
            return f"CREATE OR REPLACE VIEW raw_{name} AS {sel} UNION ALL {rest}"
        return f"CREATE OR REPLACE VIEW raw_{name} AS {sel}"
    if files:
        cols = ", ".join(f'"{c}"' for c, _ in columns)
        listed = "[" + ", ".join(_quote(p) for p in files) + "]"
        if run_id is not None:
            return (f"CREATE OR REPLACE VIEW raw_{name} AS SELECT {cols}, {_quote(run_id)} AS run_id "
                    f"FROM read_parquet({listed}, hive_partitioning = false)")
        # DuckDB's cost of one list grows faster than its length (1.7 s to bind 20,000 files,
        # 0.4 s as 20 lists of 1,000: benchmarks/RESULTS.md, study section)
        scans = [f"SELECT {cols}, run_id FROM read_parquet([" + ", ".join(_quote(p) for p in files[i:i + LIST_CHUNK])
                 + "], hive_partitioning = true, hive_types = {'run_id': VARCHAR})"
                 for i in range(0, len(files), LIST_CHUNK)]
        return f"CREATE OR REPLACE VIEW raw_{name} AS " + " UNION ALL ".join(scans)
    # in plain SQL (a registered Arrow table would pull in pandas and be invisible to the
    # connection's cursors)
    cols = ", ".join(f'CAST(NULL AS {t}) AS "{c}"' for c, t in columns)
    return f"CREATE OR REPLACE VIEW raw_{name} AS SELECT {cols}, CAST(NULL AS VARCHAR) AS run_id WHERE false"




# -- stored facts ----------------------------------------------------------------------
# A fact table (flow_facts, packet_facts) is defined by the sql/ view <table>_from_events;
# ingest writes each packet-trace run's rows of it as one part `<table>-<definition>.parquet`
# (tracekit.ingest.facts), where <definition> is definition_hash: a part written under another
# definition (sql/ changed since) is not read; the run's facts are computed from its events.


def definition_hash(files: list[SqlFile], table: str) -> str:
    """12 hex digits naming the definition of fact table `table`: its view
    `<table>_from_events` and everything that uses, transitively (through another fact
    table, that one's definition too), comments and blank space left out (a comment edit
    does not make the stored parts stale; any change of SQL does)."""
    by_name = {f.name: f for f in files}
    need = needed_names(files, {f"{table}_from_events"})
    # facts read from another fact table (the packets read the flows) change with its definition
    while more := {f"{u}_from_events" for u in VIEW_FACTS if u in need} - need:
        need |= needed_names(files, more)
    h = hashlib.sha256()
    for name in sorted(need - BASE_NAMES):
        code = re.sub(r"--[^\n]*", " ", by_name[name].text)
        h.update(name.encode() + b"\0" + " ".join(code.split()).encode() + b"\0")
    return h.hexdigest()[:12]


def empty_view_sql(name: str, columns: tuple[tuple[str, str], ...]) -> str:
    """The view `name` as an empty relation of `columns` ((name, DuckDB type)): it binds
    without anything below it."""
    cols = ", ".join(f'CAST(NULL AS {t}) AS "{c}"' for c, t in columns)
    return f"CREATE OR REPLACE VIEW {name} AS SELECT {cols} WHERE false"


def fact_part_name(table: str, digest: str) -> str:
    """The file name of a run's part of fact table `table` written under definition `digest`."""
    return f"{table}-{digest}.parquet"


def computed_view_sql(table: str, pending_runs: list[str] | None) -> str:
    """<table>_computed: the view <table>_from_events (defined by sql/) over the runs
    pending_runs (None: every run); with none, an empty relation of the table's columns and
    run_id, which binds without the chain below <table>_from_events."""
    name = COMPUTED_VIEWS[table]
    if pending_runs is None:
        return f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {table}_from_events"
    if pending_runs:
        listed = ", ".join(_quote(r) for r in sorted(pending_runs))
        return f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM {table}_from_events WHERE run_id IN ({listed})"
    cols = ", ".join(f'CAST(NULL AS {t}) AS "{c}"' for c, t in RAW_COLUMNS[table])
    return f"CREATE OR REPLACE VIEW {name} AS SELECT {cols}, CAST(NULL AS VARCHAR) AS run_id WHERE false"
