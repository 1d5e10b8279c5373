"""Shared fixtures. Ingest tests: real ns-2 traces generated once per session from
tests/tcl/ingest_*.tcl, the `tracekit` CLI as a subprocess, and a listing of a store's files
to prove a failed command left it unchanged."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TCL = TESTS / "tcl"
DATA = TESTS / "data"
NS = shutil.which("ns") or "/usr/bin/ns"
_SCRIPT = Path(sys.executable).with_name("tracekit")
TRACEKIT_CMD = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "tracekit"]

# Piped tables are as wide as $COLUMNS when it is set (tracekit/apps/output.py). pytest imports
# readline, which exports COLUMNS=80 and LINES into the process environment behind
# os.environ's back, so every `tracekit` subprocess would inherit them: tests see tables as
# a script does, unwrapped, unless a test sets COLUMNS itself.
for _var in ("COLUMNS", "LINES"):
    os.environ.pop(_var, None)
    os.unsetenv(_var)


def until(ready, within_s: float) -> bool:
    """Whether `ready()` became true within `within_s` (polled): a test waits on a state, with
    a bound generous enough for a loaded machine, instead of sleeping."""
    deadline = time.monotonic() + within_s
    while not ready():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _run_ns(script: str, *args: str, cwd: Path) -> None:
    if not os.access(NS, os.X_OK):
        pytest.skip("ns-2 (/usr/bin/ns) is not installed")
    proc = subprocess.run([NS, str(TCL / script), *args], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"ns {script} {args} failed: {proc.stderr[-2000:]}"


@pytest.fixture(scope="session")
def ns_traces(tmp_path_factory) -> dict[str, Path]:
    """Real ns-2.35 output, one file per format the ingest handles:
    wired_plain (12 fields), wired_tcphdr (16), wired_latehdr (12 and 16 mixed),
    wired_annotate (`v` lines), tcpvar (three agents), qmon_samples, qmon_events, red."""
    d = tmp_path_factory.mktemp("ns_traces")
    out = {}
    for mode in ("plain", "tcphdr", "latehdr", "annotate"):
        _run_ns("ingest_wired.tcl", f"wired_{mode}.tr", mode, cwd=d)
        out[f"wired_{mode}"] = d / f"wired_{mode}.tr"
    _run_ns("ingest_tcpvar.tcl", "tcpvar.tr", cwd=d)
    out["tcpvar"] = d / "tcpvar.tr"
    _run_ns("ingest_qmon.tcl", str(d), cwd=d)
    for name, f in (("qmon_samples", "qmon_samples.tr"), ("qmon_events", "qmon_events.tr"), ("red", "red.tr")):
        out[name] = d / f
    for name, p in out.items():
        assert p.stat().st_size > 0, f"ns wrote an empty {name}"
    return out


@pytest.fixture(scope="session")
def tracekit_cli():
    """Run the installed `tracekit` command; returns the CompletedProcess (text)."""

    def run(*args, data: Path | None = None, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
        cmd = [*TRACEKIT_CMD, *map(str, args)]
        if data is not None:
            cmd += ["--data", str(data)]
        env = {**os.environ, "COLUMNS": "200"}
        env.pop("TRACEKIT_DATA", None)
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, **kw)

    return run


@pytest.fixture(scope="session")
def tracekit_inproc():
    """The same CLI run in this process with typer's CliRunner (no interpreter start-up);
    returns a CompletedProcess look-alike. An exception other than the CLI's own exit is
    written to stderr as a traceback, so "no traceback" checks see it."""
    import traceback

    from typer.testing import CliRunner

    from tracekit.apps.cli import app

    def run(*args, data: Path | None = None) -> subprocess.CompletedProcess:
        argv = [str(a) for a in args] + (["--data", str(data)] if data is not None else [])
        res = CliRunner().invoke(app, argv)
        err = res.stderr
        if res.exception is not None and not isinstance(res.exception, SystemExit):
            err += "".join(traceback.format_exception(res.exception))
        return subprocess.CompletedProcess(["tracekit", *argv], res.exit_code, res.stdout, err)

    return run


def listing(root: Path) -> dict[str, tuple]:
    """Every file and directory under root (hidden ones included) with, for files, size,
    mtime and content hash: equal listings mean an untouched store."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            out[os.path.relpath(os.path.join(dirpath, name), root) + "/"] = ("dir",)
        for name in filenames:
            p = os.path.join(dirpath, name)
            st = os.stat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns, hashlib.sha256(Path(p).read_bytes()).hexdigest())
    return out


@pytest.fixture(scope="session")
def store_listing():
    return listing


@pytest.fixture(scope="session")
def _store_template(tmp_path_factory, ns_traces) -> Path:
    from tracekit.ingest.pipeline import ingest_paths

    d = tmp_path_factory.mktemp("store_template") / "store"
    results = ingest_paths(d, [ns_traces["wired_plain"]])
    assert [r.status for r in results] == ["added"]
    return d


@pytest.fixture
def populated_store(_store_template, tmp_path) -> Path:
    """A fresh copy of a store that already holds one run (the plain wired trace)."""
    d = tmp_path / "store"
    shutil.copytree(_store_template, d, symlinks=True)
    return d


def time_shifted_copies(trace: bytes, copies: int) -> bytes:
    """`copies` copies of a wired trace one after the other, each shifted later by the
    trace's last time, so that the whole stays in time order as ns-2 writes it (a plain
    `trace * n` goes back in time at every copy, which ingest reports as a bad line)."""
    lines = trace.rstrip(b"\n").split(b"\n")
    last = max(float(ln.split(b" ")[1]) for ln in lines if ln[:2] in (b"+ ", b"- ", b"r ", b"d ", b"v "))
    out = []
    for k in range(copies):
        for ln in lines:
            f = ln.split(b" ")
            if ln[:2] in (b"+ ", b"- ", b"r ", b"d ", b"v "):
                f[1] = b"%.15g" % round(float(f[1]) + k * last, 6)
            out.append(b" ".join(f))
    return b"\n".join(out) + b"\n"


def children_of(pid: int) -> list[int]:
    """Every descendant of `pid` (from /proc, no tracekit code)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children") as f:
                    kids = [int(x) for x in f.read().split()]
                out += kids
                todo += kids
        except (FileNotFoundError, ProcessLookupError):
            pass
    return out


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (from /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"       # a zombie is dead
    except FileNotFoundError:
        return False


def ns_failing_for_seed_2(tmp_path: Path, ns: str) -> Path:
    """A wrapper around the real ns that, for seed 2 only, runs ns on a script with a Tcl
    error (`no-such-command`), so that one simulation of a sweep fails in ns-2 itself."""
    broken = tmp_path / "broken.tcl"
    broken.write_text("set ns [new Simulator]\n$ns no-such-command\n")
    wrapper = tmp_path / "ns-wrapper"
    wrapper.write_text(f"#!/bin/sh\ncase \"$*\" in *seed=2*) exec {ns} {broken} ;; esac\nexec {ns} \"$@\"\n")
    wrapper.chmod(0o755)
    return wrapper


@pytest.fixture(scope="session")
def wild_traces(tmp_path_factory) -> dict[str, Path]:
    """Real ns-2.35 output in the habits of published scripts (issue 14), a few simulated
    seconds each: wl_annot_old / wl_annot_new (wireless, AODV, a `trace-annotate` `v` line on
    top), wl_mdart (wireless, MDART: routing packets of a type outside tracekit's list), lan
    and lan_nam (a `$ns newLan` LAN: the normal trace and the nam trace of one simulation),
    cwnd_pairs and cwnd_tcpvar (a Tcl proc's `$now [$tcp set cwnd_]` every 0.1 s, and the same
    agent's `$tcp trace cwnd_`). The wired-cum-wireless
    trace (wild_wired_cum_wireless.tcl) is made by tests/test_hier.py."""
    d = tmp_path_factory.mktemp("wild_traces")
    out = {}
    for name, fmt, rp in (("wl_annot_old", "old", "AODV"), ("wl_annot_new", "new", "AODV"), ("wl_mdart", "old", "MDART")):
        _run_ns("wild_wireless.tcl", fmt, rp, f"{name}.tr", cwd=d)
        out[name] = d / f"{name}.tr"
    _run_ns("wild_lan.tcl", "lan.tr", "lan.nam", cwd=d)
    out["lan"], out["lan_nam"] = d / "lan.tr", d / "lan.nam"
    _run_ns("wild_cwnd.tcl", "cwnd_pairs.txt", "cwnd_tcpvar.tr", cwd=d)
    out["cwnd_pairs"], out["cwnd_tcpvar"] = d / "cwnd_pairs.txt", d / "cwnd_tcpvar.tr"
    for name, p in out.items():
        assert p.stat().st_size > 0, f"ns wrote an empty {name}"
    return out


# tests/test_golden.py: `pytest --update-golden` rewrites tests/golden/ from today's output
def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite the golden files of tests/test_golden.py instead of comparing")
