"""Generate the measured numbers of README.md and docs/*.md from their sources.

    .venv/bin/python scripts/gen_docs.py                 # rewrite every generated block and page
    .venv/bin/python scripts/gen_docs.py --check         # write nothing; exit 1 listing each stale block
    .venv/bin/python scripts/gen_docs.py --reproduce DIR # run the papers' quick experiments first (ns-2)

A generated block is the text between two markers, on lines of their own or inside a sentence:

    <!-- generated: NAME (by scripts/gen_docs.py from SOURCE) -->...<!-- end generated: NAME -->

NAME says what renders it (BLOCKS below) and SOURCE the committed files it is made from:
benchmarks/RESULTS.md (written by benchmarks/run_benchmarks.py), the scenario declarations
(tracekit/experiments/tcl/*.toml, as the imported tracekit reads them), or
docs/data/reproduction-quick.json, which `--reproduce DIR` writes from `tracekit reproduce --all
--quick --format json` on the store DIR (a fresh store, so that it holds only these runs), with
the time and commit it was made at. A block can be moved to another of these files as it is.
Pages generated whole (PAGES below): docs/metrics.md (by tracekit.db.catalogue's own renderer)
and docs/views.md from the catalogue, docs/cli.md from every command's --help (the click group
of the typer app, at a fixed width).
"""
from __future__ import annotations

import argparse
import datetime
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:     # run as a script from a checkout: this checkout's tracekit
    sys.path.insert(0, str(ROOT))

REPRODUCTION = "docs/data/reproduction-quick.json"
RESULTS = "benchmarks/RESULTS.md"
REPRODUCE_CMD = ["reproduce", "--all", "--quick", "--format", "json"]

MARKER = re.compile(
    r"<!-- generated: (?P<name>[\w-]+) \(by scripts/gen_docs\.py from (?P<source>[^)]*)\) -->"
    r"(?P<body>.*?)<!-- end generated: (?P=name) -->", re.S)
START = re.compile(r"<!-- generated: ")


class DocsError(Exception):
    """A generator's source is missing or does not hold what a block needs."""


# ---------------------------------------------------------------------------------------
# sources


def _read(root: Path, rel: str) -> str:
    path = root / rel
    if not path.is_file():
        raise DocsError(f"{rel}: missing")
    return path.read_text()


def markdown_tables(text: str) -> dict[str, list[dict[str, str]]]:
    """Every table of a Markdown page by the heading above it ('## Traces'): its rows as
    {header: cell}; a heading with several tables keeps the first."""
    tables: dict[str, list[dict[str, str]]] = {}
    heading = ""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.strip()
        elif line.startswith("|") and i + 1 < len(lines) and re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", lines[i + 1].strip()):
            header = _cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(dict(zip(header, _cells(lines[i]))))
                i += 1
            tables.setdefault(heading, rows)
            continue
        i += 1
    return tables


def _cells(line: str) -> list[str]:
    # a cell never holds an escaped pipe in RESULTS.md
    return [c.strip() for c in line.strip().strip("|").split("|")]


@dataclass
class Results:
    """What benchmarks/RESULTS.md says, as the blocks need it."""
    written: str                          # "2026-11-29 11:58 UTC"
    took: str                             # "10 min"
    tables: dict[str, list[dict[str, str]]]

    def row(self, heading: str, **match: str) -> dict[str, str]:
        rows = [r for r in self.tables.get(heading, []) if all(r.get(k) == v for k, v in match.items())]
        if len(rows) != 1:
            raise DocsError(f"{RESULTS}: {len(rows)} rows of {heading!r} with {match} (expected 1)")
        return rows[0]


def results(root: Path) -> Results:
    text = _read(root, RESULTS)
    m = re.search(r"^Written by `benchmarks/run_benchmarks\.py` on (\d{4}-\d\d-\d\d \d\d:\d\d UTC) \(([^)]+)\)", text, re.M)
    if not m:
        raise DocsError(f"{RESULTS}: no 'Written by `benchmarks/run_benchmarks.py` on DATE (DURATION)' line")
    return Results(m.group(1), m.group(2), markdown_tables(text))


def reproduction(root: Path) -> dict:
    try:
        data = json.loads(_read(root, REPRODUCTION))
    except json.JSONDecodeError as e:
        raise DocsError(f"{REPRODUCTION}: not JSON ({e})") from None
    for key in ("made", "commit", "command", "results"):
        if key not in data:
            raise DocsError(f"{REPRODUCTION}: no {key!r}")
    return data


# ---------------------------------------------------------------------------------------
# the blocks


def _reproduce_summary(root: Path) -> str:
    from tracekit.analysis.reproduce import summary_markdown

    d = reproduction(root)
    when = d["made"][:10]
    commit = d["commit"] + (" with uncommitted changes" if d.get("dirty") else "")
    return (f"Made on {when} at commit {commit} by `tracekit {d['command']}` on {d.get('store', 'a store')} "
            f"(`{REPRODUCTION}`; `scripts/gen_docs.py --reproduce DIR` makes it again):\n\n"
            + summary_markdown(d["results"]))


def _ingest_memory(root: Path) -> str:
    r = results(root)
    parts = []
    for trace in ("big-103s.tr", "big-513s.tr"):
        size = r.row("## Traces", trace=f"`{trace}`")["size"]
        rss = r.row("## Figures", what="`tracekit ingest` (fresh store)", trace=trace)["peak RSS"]
        parts.append(f"{rss} on a {size} trace (`{trace}`)")
    return f"ingest's peak memory (RSS) was {' and '.join(parts)} ({RESULTS}, {r.written[:10]})"


def _sql_startup(root: Path) -> str:
    r = results(root)
    empty = r.row("## CLI start-up", command='`tracekit sql "SELECT 1"`, empty store')["wall (median)"]
    return f"`tracekit sql \"SELECT 1\"` took {empty} as a whole process on an empty store ({RESULTS}, {r.written[:10]})"


def _suite_time(root: Path) -> str:
    r = results(root)
    return f"Its last full run, on {r.written}, took {r.took} ({RESULTS})."


def _drain(root: Path) -> str:
    from tracekit.experiments.scenarios import SCENARIOS    # the imported tracekit's declarations

    def fmt(x: float) -> str:
        return f"{x:g}"

    runs = {n: (float(d["duration"]), float(d["drain_s"])) for n, sc in SCENARIOS.items()
            if "drain_s" in (d := sc.defaults()) and "duration" in d}
    wireless = {n for n, sc in SCENARIOS.items() if "routing" in sc.defaults()}    # routing protocols: MANETs
    wired = {n: v for n, v in runs.items() if n not in wireless}
    if not wired or "cbr-variants" not in wired:
        raise DocsError("the scenario declarations hold no wired scenario with duration and drain_s")
    lo, hi = min(v[1] for v in wired.values()), max(v[1] for v in wired.values())
    diluted = {n: dr / (d + dr) for n, (d, dr) in runs.items()}
    worst = max(wired, key=lambda n: diluted[n])
    man = ", ".join(f"{fmt(runs[n][1])} s for `{n}`" for n in sorted(wireless & set(runs)))
    return (f"{fmt(lo)}–{fmt(hi)} s for the wired scenarios" + (f" ({man})" if man else "")
            + f", so the throughput over the measurement window is diluted by at most {100 * diluted[worst]:.2g} % "
            f"(`{worst}`, {fmt(runs[worst][0])} s) and by {100 * diluted['cbr-variants']:.2g} % for `cbr-variants` "
            f"({fmt(runs['cbr-variants'][0])} s) at their default durations")


@dataclass(frozen=True)
class Block:
    source: str
    render: Callable[[Path], str]


BLOCKS: dict[str, Block] = {
    "reproduce-summary": Block(REPRODUCTION, _reproduce_summary),
    "ingest-memory": Block(RESULTS, _ingest_memory),
    "sql-startup": Block(RESULTS, _sql_startup),
    "benchmark-suite-time": Block(RESULTS, _suite_time),
    "drain": Block("tracekit/experiments/tcl/*.toml", _drain),
}


def _metrics_page(root: Path) -> str:
    from tracekit.db import catalogue    # the imported tracekit's: this checkout's when run as a script

    return catalogue.metrics_markdown()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _views_page(root: Path) -> str:
    """Every catalogued view (and table macro) with its columns and what each means."""
    from tracekit.db import catalogue

    out = ["# View reference", "",
           "Generated from `sql/catalogue.toml` by `scripts/gen_docs.py`; do not edit by hand. Every view",
           "and table macro `tracekit sql` and the dashboard define, with its columns in order (tests check",
           "each view's columns against this list). What the views are for: [SQL and views](sql.md); the",
           "metrics among these columns: [Metrics](metrics.md).", ""]
    for v in catalogue.views().values():
        out += [f"## `{v.name}`", "", _cell(v.description) + ("." if not v.description.endswith(".") else ""), "",
                "| column | meaning |", "|---|---|"]
        for c in v.columns:
            metric = f" (metric [`{c.metric}`](metrics.md))" if c.metric else ""
            out.append(f"| `{c.name}` | {_cell(c.description)}{metric} |")
        out.append("")
    return "\n".join(out)


HELP_WIDTH = 100     # the help's line width in docs/cli.md: fixed, whatever the terminal


def _cli_page(root: Path) -> str:
    """Every command's --help, as click renders it at HELP_WIDTH columns, walking the typer app's
    click group (typer vendors click as typer._click) (the imported tracekit's: this checkout's when run as a script)."""
    import typer.core
    import typer.main

    from tracekit.apps.cli import app

    group = typer.main.get_command(app)     # as `tracekit --help` shows it (with the completion options)
    assert isinstance(group, typer.core.TyperGroup)
    # typer's own (vendored) click: its Context class, not click's
    top = group.context_class(group, info_name="tracekit", terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH)
    out = ["# CLI reference", "",
           "Generated from every command's `--help` by `scripts/gen_docs.py`; do not edit by hand. The",
           "conventions every command follows (exit statuses, `--data`, `--format`): [Using tracekit](usage.md).", "",
           "## `tracekit`", "", "```text", group.get_help(top), "```", ""]
    for name in group.list_commands(top):
        cmd = group.get_command(top, name)
        if cmd is None or cmd.hidden:
            continue
        ctx = cmd.context_class(cmd, info_name=name, parent=top, terminal_width=HELP_WIDTH, max_content_width=HELP_WIDTH)
        out += [f"## `tracekit {name}`", "", "```text", cmd.get_help(ctx), "```", ""]
    return "\n".join(out)


# pages generated whole: path -> (source, renderer)
PAGES: dict[str, Block] = {
    "docs/metrics.md": Block("sql/catalogue.toml", _metrics_page),
    "docs/views.md": Block("sql/catalogue.toml", _views_page),
    "docs/cli.md": Block("tracekit/apps/cli.py", _cli_page),
}


# ---------------------------------------------------------------------------------------
# rewriting and checking


def doc_files(root: Path) -> list[Path]:
    """README.md, every docs/*.md, and the generated pages (also those not written yet)."""
    return sorted({root / "README.md", *(root / "docs").glob("*.md"), *(root / rel for rel in PAGES)},
                  key=lambda p: (p.name != "README.md", p.as_posix()))


@dataclass
class Found:
    path: str
    line: int
    name: str


@dataclass
class Outcome:
    """What a pass over the docs found: every block, one line per stale block or page, and
    one per block whose source cannot be read (left as it was)."""
    blocks: list[Found] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def regenerate(text: str, root: Path, rel: str, outcome: Outcome) -> str:
    """The text with every block rendered from its source. A block written on lines of its
    own keeps its markers on lines of their own; one inside a sentence stays inline."""
    if len(START.findall(text)) != len(MARKER.findall(text)):
        raise DocsError(f"{rel}: a '<!-- generated: NAME (by scripts/gen_docs.py from SOURCE) -->' "
                        "marker without its '<!-- end generated: NAME -->' (or a malformed one)")
    cache: dict[str, str | DocsError] = {}

    def one(m: re.Match[str]) -> str:
        name = m.group("name")
        at = Found(rel, text.count("\n", 0, m.start()) + 1, name)
        if name not in BLOCKS:
            raise DocsError(f"{rel}:{at.line}: unknown generated block {name!r} (known: {', '.join(BLOCKS)})")
        outcome.blocks.append(at)
        block = BLOCKS[name]
        if name not in cache:
            try:
                cache[name] = block.render(root)
            except DocsError as e:
                cache[name] = e
        body = cache[name]
        if isinstance(body, DocsError):
            outcome.errors.append(f"{rel}:{at.line}: block {name!r} cannot be made: {body}")
            return m.group(0)
        if m.group("body").startswith("\n"):
            body = f"\n{body}\n"
        new = f"<!-- generated: {name} (by scripts/gen_docs.py from {block.source}) -->{body}<!-- end generated: {name} -->"
        if new != m.group(0):
            outcome.stale.append(f"{rel}:{at.line}: block {name!r} is stale (from {block.source})")
        return new

    return MARKER.sub(one, text)


def run(root: Path, check: bool) -> Outcome:
    """Rewrite (with check: only compare) every generated block and page under root."""
    outcome = Outcome()
    for path in doc_files(root):
        rel = path.relative_to(root).as_posix()
        old = path.read_text() if path.exists() or rel not in PAGES else ""
        if rel in PAGES:
            new = PAGES[rel].render(root)
            if new != old:
                outcome.stale.append(f"{rel}: stale (generated whole from {PAGES[rel].source})")
        else:
            new = regenerate(old, root, rel, outcome)
        if not check and new != old:
            path.write_text(new)
    return outcome


# ---------------------------------------------------------------------------------------
# the expensive step


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise DocsError(f"git {' '.join(args)} in {root}: {proc.stderr.strip() or f'exit {proc.returncode}'} "
                        "(the data file records the commit it was made at)")
    return proc.stdout.strip()


def make_reproduction(root: Path, store: Path, jobs: int) -> None:
    """Run `tracekit reproduce --all --quick --format json` on store (its simulations with
    ns-2, those not in the store yet) and save its results with when and at which commit."""
    made = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    commit = _git(root, "rev-parse", "--short", "HEAD")
    # the code that simulates and evaluates; the docs and this script do not change results
    dirty = bool(_git(root, "status", "--porcelain", "--", "tracekit", "sql"))
    cmd = [sys.executable, "-m", "tracekit", *REPRODUCE_CMD, "--data", str(store), "--jobs", str(jobs)]
    proc = subprocess.run(cmd, cwd=root, stdout=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise DocsError(f"`tracekit {' '.join(REPRODUCE_CMD)}` failed (exit {proc.returncode}); {REPRODUCTION} left as it was")
    data = {"made": made, "commit": commit, "dirty": dirty, "command": " ".join(REPRODUCE_CMD),
            "store": "a fresh store holding only these quick runs", "results": json.loads(proc.stdout)}
    out = root / REPRODUCTION
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    tmp.replace(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/gen_docs.py", description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 listing each stale block")
    ap.add_argument("--reproduce", type=Path, metavar="DIR",
                    help=f"first run `tracekit {' '.join(REPRODUCE_CMD)}` on the store DIR (ns-2; use a fresh one) into {REPRODUCTION}")
    ap.add_argument("--jobs", "-j", type=int, default=0, help="simulations at once with --reproduce [all cores]")
    args = ap.parse_args(argv)
    if args.check and args.reproduce:
        ap.error("--check writes nothing: it takes no --reproduce")
    try:
        if args.reproduce:
            make_reproduction(ROOT, args.reproduce, args.jobs)
        outcome = run(ROOT, check=args.check)
    except DocsError as e:
        print(f"gen_docs: error: {e}", file=sys.stderr)
        return 1
    for line in outcome.errors:
        print(f"gen_docs: error: {line}", file=sys.stderr)
    if args.check:
        for line in outcome.stale:
            print(line, file=sys.stderr)
        if outcome.stale:
            print("gen_docs: error: stale generated docs; run: .venv/bin/python scripts/gen_docs.py", file=sys.stderr)
    else:
        for line in outcome.stale:
            print(f"regenerated {line.split(': ', 1)[0]}", file=sys.stderr)
    return 1 if outcome.errors or (args.check and outcome.stale) else 0

if __name__ == "__main__":
    sys.exit(main())
