"""The layers point one way: parse -> store -> SQL -> CLI / dashboard. The library modules
must not pull in the CLI or UI frameworks (importing them would also slow every command)."""
import subprocess
import sys

LIBRARY = ["tracekit.sources", "tracekit.detect", "tracekit.parsers", "tracekit.parsers.wired",
           "tracekit.parsers.tcpvar", "tracekit.parsers.queue", "tracekit.parsers.red", "tracekit.parsers.wireless",
           "tracekit.store", "tracekit.ingest", "tracekit.query", "tracekit.schema", "tracekit.output"]


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
