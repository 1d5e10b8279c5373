"""The layers point one way. The rule is import-linter's layers contract in pyproject.toml
(apps > analysis > experiments > ingest > db > store > formats > core, each a folder of
tracekit/); this test applies the same list to every module's every import, function-level
ones included, and to dashboards/, which may use the analysis layer and below (and the report it offers)."""
import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def layer_order() -> list[str]:
    """The layers of pyproject's contract, lowest first, without the tracekit. prefix."""
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in cfg["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [name.removeprefix("tracekit.") for name in reversed(contract["layers"])]


def imported(tree: ast.AST, module: str, is_pkg: bool) -> list[tuple[int, str]]:
    """(line, dotted module) of every tracekit import in `tree`, relative ones resolved."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_pkg else module.split(".")[:-1]
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            out += [(node.lineno, f"{base}.{a.name}") for a in node.names] if base == "tracekit" else [(node.lineno, base)]
    return [(n, m) for n, m in out if m == "tracekit" or m.startswith("tracekit.")]


def layer_of(dotted: str, order: list[str]) -> int:
    """The index of the layer a tracekit module belongs to; -1 for the package root's names
    (its __version__), which every layer may use."""
    parts = dotted.split(".")
    if len(parts) < 2 or parts[1] == "__version__":
        return -1
    if parts[1] not in order:
        raise LookupError(f"{dotted} is in no layer of pyproject's import rule")
    return order.index(parts[1])


def upward_imports(source: str, module: str, is_pkg: bool, ceiling: int, order: list[str]) -> list[str]:
    """The imports of `source` (the module `module`) above the layer `ceiling`."""
    return [f"{module} line {n} imports {m}" for n, m in imported(ast.parse(source), module, is_pkg)
            if layer_of(m, order) > ceiling]


def modules() -> list[tuple[Path, str, bool]]:
    out = []
    for p in sorted((ROOT / "tracekit").rglob("*.py")):
        rel = p.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        is_pkg = parts[-1] == "__init__"
        out.append((p, ".".join(parts[:-1] if is_pkg else parts), is_pkg))
    return out


def test_every_module_is_in_a_layer_folder():
    order = layer_order()
    loose = [m for _, m, _ in modules() if m not in ("tracekit", "tracekit.__main__") and m.split(".")[1] not in order]
    assert not loose, f"modules outside the layer folders named in pyproject.toml: {loose}"


def test_no_module_imports_a_layer_above_its_own():
    order = layer_order()
    bad = []
    for path, module, is_pkg in modules():
        if module in ("tracekit", "tracekit.__main__"):
            continue
        bad += upward_imports(path.read_text(), module, is_pkg, layer_of(module, order), order)
    assert not bad, "\n".join(bad)


# the one app module a dashboard page may use: the report it offers as a download
DASHBOARD_MAY_USE = ("tracekit.apps.report",)


def test_dashboards_use_the_analysis_layer_and_below():
    order = layer_order()
    bad = []
    for path in sorted((ROOT / "dashboards").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        bad += [b for b in upward_imports(path.read_text(), module, False, order.index("analysis"), order)
                if not b.endswith(DASHBOARD_MAY_USE)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("source,module,is_pkg", [
    ("from tracekit.apps.cli import app\n", "tracekit.db.query", False),
    ("def f():\n    from ..analysis import compare\n", "tracekit.store.store", False),
    ("import tracekit.ingest.pipeline\n", "tracekit.formats", True),
    ("from tracekit import apps\n", "tracekit.core.errors", False),
])
def test_the_check_sees_an_upward_import(source, module, is_pkg):
    order = layer_order()
    assert upward_imports(source, module, is_pkg, layer_of(module, order), order)


def test_the_check_allows_imports_downward_and_within_a_layer():
    order = layer_order()
    src = ("from tracekit.core.errors import TracekitError\nfrom . import facts\n"
           "from tracekit import __version__\nfrom ..db.query import connect\n")
    assert upward_imports(src, "tracekit.ingest.pipeline", False, layer_of("tracekit.ingest", order), order) == []


def _modules_loaded_by(code: str) -> str:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_the_library_does_not_load_the_cli_or_ui_frameworks():
    """At run time too: importing everything below the apps loads no typer, click, streamlit
    or plotly (they would also slow every command)."""
    below = [m for _, m, _ in modules() if m.split(".")[1:2] and m.split(".")[1] not in ("apps", "__main__")]
    code = ("import importlib, sys\n"
            f"for m in {below!r}:\n"
            "    try: importlib.import_module(m)\n"
            "    except ImportError as e:\n"
            "        if 'dask' not in str(e): raise\n"    # the [cluster] extra
            "print(','.join(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'streamlit', 'plotly', 'click'))))\n")
    assert _modules_loaded_by(code) == ""


def test_reading_traces_loads_no_duckdb_and_no_store():
    code = ("import sys, tracekit.formats.detect, tracekit.formats.sources, tracekit.formats.parsers.wired, "
            "tracekit.formats.parsers.wireless, tracekit.formats.parsers.hier, tracekit.formats.tracemeta\n"
            "print(','.join(sorted(m for m in sys.modules if m == 'duckdb' or m.startswith(('tracekit.store', 'tracekit.db', "
            "'tracekit.ingest', 'tracekit.experiments')))))\n")
    assert _modules_loaded_by(code) == ""
