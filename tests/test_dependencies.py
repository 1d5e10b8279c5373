"""What tracekit imports is what it declares: every third-party module imported anywhere in
tracekit/ (and in dashboards/, which runs with the `dashboard` extra) is provided by a
distribution pyproject.toml names, in `[project] dependencies` or in the extra of the module
that needs it. A module that arrives only as a dependency of a dependency (numpy through
pyarrow, until pyarrow stopped requiring it) works in the developer's environment and fails
in a plain `pip install tracekit`.

The slow tests install the package, without extras and with `[cluster]` only, into fresh
virtual environments of their own and run ingest, run and sweep there with the real ns-2."""
from __future__ import annotations

import ast
import importlib.metadata as md
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
# the modules that run only with an extra installed (the commands that reach them check for
# it first), and that extra
EXTRA_OF = {"tracekit/experiments/cluster.py": "cluster", "tracekit/apps/report.py": "dashboard", "dashboards": "dashboard"}
USER_EXTRAS = ("dashboard", "cluster")


def imported_top_modules(path: Path) -> dict[str, bool]:
    """The top-level name of every absolute import in one file (inside functions too) ->
    whether every import of it is guarded (in a `try` that catches ImportError: the code
    says which extra to install instead)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    guarded = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(
                isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError") for h in node.handlers):
            guarded.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    out: dict[str, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            out[top] = out.get(top, True) and id(node) in guarded
    return out


def provided(reqs: list[str]) -> set[str]:
    """The canonical names of the distributions a list of requirements installs directly,
    with the extras they name expanded one level (dask[distributed] installs distributed)."""
    env = default_environment()
    names = set()
    for text in reqs:
        req = Requirement(text)
        if req.marker and not req.marker.evaluate(env):
            continue
        names.add(canonicalize_name(req.name))
        for extra in req.extras:
            for sub in md.requires(req.name) or []:
                sub_req = Requirement(sub)
                if sub_req.marker and sub_req.marker.evaluate({**env, "extra": extra}) \
                        and not sub_req.marker.evaluate({**env, "extra": ""}):
                    names.add(canonicalize_name(sub_req.name))
    return names


def test_every_third_party_import_is_a_declared_dependency():
    core = provided(PYPROJECT["dependencies"])
    extras = {name: core | provided(reqs) for name, reqs in PYPROJECT["optional-dependencies"].items()}
    dists_of = md.packages_distributions()
    local = {"tracekit"} | {p.stem for p in (ROOT / "dashboards").iterdir()}   # dashboards/ imports its own files
    missing = []
    files = sorted((ROOT / "tracekit").rglob("*.py")) + sorted((ROOT / "dashboards").rglob("*.py"))
    assert len(files) > 40
    for f in files:
        rel = f.relative_to(ROOT).as_posix()
        extra = next((e for prefix, e in EXTRA_OF.items() if rel == prefix or rel.startswith(prefix + "/")), None)
        declared = extras[extra] if extra else core
        for mod, guarded in sorted(imported_top_modules(f).items()):
            if mod in local or mod in sys.stdlib_module_names:
                continue
            dists = {canonicalize_name(d) for d in dists_of.get(mod, [])}
            assert dists, f"{rel} imports {mod}, which no installed distribution provides"
            allowed = set().union(*(extras[e] for e in USER_EXTRAS)) if guarded else declared
            if not dists & allowed:
                where = "an extra" if guarded else f"[{extra}] or dependencies" if extra else "dependencies"
                missing.append(f"{rel}: {mod} (from {', '.join(sorted(dists))}; not in {where})")
    assert not missing, "imported but not declared in pyproject.toml:\n" + "\n".join(missing)


# -- a plain install, in a virtual environment of its own ---------------------------------
NS = shutil.which("ns")
# what the wheel is built from (pyproject.toml: the package, and sql/ and dashboards/ forced in)
SOURCES = ("pyproject.toml", "README.md", "hatch_build.py", "tracekit", "sql", "dashboards")


def _clean_env() -> dict[str, str]:
    """The environment without what would lead the installed tracekit to this checkout or to
    the development environment's packages."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "TRACEKIT_DATA", "PYTHONSTARTUP"}
    return {k: v for k, v in os.environ.items() if k not in drop}


def _venv_with(tmp_path_factory, extras: str) -> Path:
    """A fresh virtual environment (no system or development site-packages) with tracekit
    installed from a copy of this checkout, not editable: what `pip install tracekit[extras]`
    gives a user, the wheel built by hatch_build.py (the C fast paths compiled) and only the
    declared dependencies beside it. The copy keeps the build from writing into the checkout."""
    base = tmp_path_factory.mktemp(f"venv-{extras or 'bare'}")
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        p = ROOT / name
        if p.is_dir():
            shutil.copytree(p, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyc"))
        else:
            shutil.copy2(p, src / name)
    venv = base / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300, env=_clean_env())
    target = f"{src}[{extras}]" if extras else str(src)
    p = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", target],
                       capture_output=True, text=True, timeout=1500, env=_clean_env(), cwd=base)
    assert p.returncode == 0, p.stderr[-4000:]
    return venv


@pytest.fixture(scope="module")
def bare_venv(tmp_path_factory):
    return _venv_with(tmp_path_factory, "")


@pytest.fixture(scope="module")
def cluster_venv(tmp_path_factory):
    return _venv_with(tmp_path_factory, "cluster")


def _tk(venv: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    p = subprocess.run([str(venv / "bin" / "tracekit"), *args], capture_output=True, text=True, timeout=600,
                       env=_clean_env(), cwd=cwd)
    assert p.returncode == 0, f"tracekit {' '.join(args)}: exit {p.returncode}\n{p.stderr[-3000:]}"
    assert "Traceback" not in p.stderr
    return p


def _store_runs(data: Path) -> list[tuple[str, str | None, int | None]]:
    """(trace kind, scenario, seed) of every run record in the store, sorted (read with this
    environment's pyarrow, not the installed tracekit)."""
    import pyarrow.parquet as pq

    recs = [pq.read_table(f).to_pylist()[0] for f in (data / "runs").glob("run_id=*/run.parquet")]
    return sorted(((r["trace_kind"], r["scenario"], r["seed"]) for r in recs), key=repr)


def _check_isolated(venv: Path, cwd: Path) -> None:
    """The installed tracekit is the venv's own, its C fast paths built, and nothing of the
    development environment is importable from it."""
    code = ("import sys, tracekit; from tracekit.formats.parsers import wired, wireless; "
            "print(tracekit.__file__); print(wired._fast is not None and wireless._fast is not None); "
            "print(any('/.venv/' in p for p in sys.path))")
    p = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True, text=True, timeout=120,
                       env=_clean_env(), cwd=cwd)
    assert p.returncode == 0, p.stderr
    where, fast, dev = p.stdout.split()
    assert where.startswith(str(venv)), where
    assert fast == "True", "the C fast paths were not compiled at install"
    assert dev == "False"


SIM_KINDS = ("queue_monitor", "tcpvar", "wired")      # the three traces of one cbr-variants simulation


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.skipif(NS is None, reason="ns-2 (/usr/bin/ns) is not installed")
def test_a_plain_install_ingests_runs_and_sweeps(bare_venv, tmp_path, ns_traces):
    _check_isolated(bare_venv, tmp_path)
    p = subprocess.run([str(bare_venv / "bin" / "python"), "-c", "import distributed"], capture_output=True, env=_clean_env(), cwd=tmp_path)
    assert p.returncode != 0, "dask is installed without the cluster extra"
    data = tmp_path / "store"
    _tk(bare_venv, "ingest", str(ns_traces["wired_plain"]), "--data", str(data), cwd=tmp_path)
    assert _store_runs(data) == [("wired", None, None)]
    _tk(bare_venv, "run", "cbr-variants", "--set", "duration=2", "--data", str(data), cwd=tmp_path)
    p = _tk(bare_venv, "sweep", "cbr-variants", "--set", "duration=2", "--seeds", "2-3", "-j", "1", "--data", str(data), cwd=tmp_path)
    assert "sweep: 2 ran, 0 already in the store, 0 failed" in p.stdout
    want = [("wired", None, None)] + [(k, "cbr-variants", s) for k in SIM_KINDS for s in (1, 2, 3)]
    assert _store_runs(data) == sorted(want, key=repr)


@pytest.mark.slow
@pytest.mark.timeout(1800)
@pytest.mark.skipif(NS is None, reason="ns-2 (/usr/bin/ns) is not installed")
def test_the_cluster_extra_alone_sweeps_on_dask_and_locally(cluster_venv, tmp_path, ns_traces):
    _check_isolated(cluster_venv, tmp_path)
    data = tmp_path / "store"
    _tk(cluster_venv, "ingest", str(ns_traces["wired_plain"]), "--data", str(data), cwd=tmp_path)
    p = _tk(cluster_venv, "sweep", "cbr-variants", "--set", "duration=2", "--seeds", "1-2", "--scheduler", "local:1",
            "--data", str(data), cwd=tmp_path)
    assert "sweep: 2 ran, 0 already in the store, 0 failed" in p.stdout
    p = _tk(cluster_venv, "sweep", "cbr-variants", "--set", "duration=2", "--seeds", "1-3", "-j", "1", "--data", str(data), cwd=tmp_path)
    assert "sweep: 1 ran, 2 already in the store, 0 failed" in p.stdout
    want = [("wired", None, None)] + [(k, "cbr-variants", s) for k in SIM_KINDS for s in (1, 2, 3)]
    assert _store_runs(data) == sorted(want, key=repr)
