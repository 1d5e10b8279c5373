"""The layers point one way: parse -> store -> SQL -> CLI / dashboard. The library modules
must not pull in the CLI or UI frameworks (importing them would also slow every command)."""
import subprocess
import sys

LIBRARY = ["tracekit.sources", "tracekit.detect", "tracekit.parsers", "tracekit.parsers.wired",
           "tracekit.parsers.tcpvar", "tracekit.parsers.queue", "tracekit.parsers.red", "tracekit.parsers.wireless",
           "tracekit.store", "tracekit.ingest", "tracekit.query", "tracekit.schema", "tracekit.output",
           "tracekit.tracemeta", "tracekit.experiments", "tracekit.experiments.sweep", "tracekit.memory"]


def test_library_does_not_import_cli_or_ui():
    code = (
        "import sys\n"
        f"for m in {LIBRARY!r}: __import__(m)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'streamlit', 'plotly', 'click'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"library modules import UI/CLI packages: {out}"


def test_parsers_do_not_import_store_or_sql():
    code = (
        "import sys\n"
        "import tracekit.parsers.wired, tracekit.parsers.tcpvar, tracekit.parsers.queue, tracekit.parsers.red, tracekit.parsers.wireless\n"
        "bad = sorted(m for m in sys.modules if m in ('duckdb', 'tracekit.store', 'tracekit.query', 'tracekit.ingest'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"parsers import higher layers: {out}"


def test_ingest_does_not_import_the_experiments():
    """Ingest reads the tracekit-meta header with tracekit.tracemeta, which imports neither
    ingest nor the experiments package (the scenarios, runner and sweep)."""
    code = (
        "import sys\n"
        "import tracekit.tracemeta\n"
        "meta_bad = sorted(m for m in sys.modules if m.startswith(('tracekit.experiments', 'tracekit.ingest')))\n"
        "import tracekit.ingest\n"
        "bad = sorted(m for m in sys.modules if m.startswith('tracekit.experiments'))\n"
        "print(','.join(meta_bad) + '|' + ','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "|", f"tracemeta imports / ingest imports: {out}"


def test_ingest_has_no_import_of_the_experiments_anywhere():
    """Not even a lazy one inside a function (the sim_id of a trace comes from tracemeta)."""
    import ast
    from pathlib import Path

    import tracekit

    for name in ("ingest.py", "tracemeta.py"):
        tree = ast.parse((Path(tracekit.__file__).parent / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mods = [node.module or ""] + [a.name for a in node.names]
            elif isinstance(node, ast.Import):
                mods = [a.name for a in node.names]
            else:
                continue
            bad = [m for m in mods if "experiments" in m or "scenarios" in m or (name == "tracemeta.py" and "ingest" in m)]
            assert not bad, f"{name} line {node.lineno} imports {bad}"
