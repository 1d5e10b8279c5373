"""Run a bundled ns-2 scenario with resolved parameters and return the trace files it wrote."""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

from tracekit.core.errors import clip_repr
from tracekit.formats.tracemeta import META_PREFIX, format_value
from tracekit.experiments.scenarios import get_scenario

# every trace file a scenario may write; Scenario.trace_files are the ones it must
# write (the wireless manet writes no queue.tr, and cwnd.tr only with TCP flows)
TRACE_FILES = ("packets.tr", "cwnd.tr", "queue.tr")

# What ns/Tcl print when a script fails.  ns-2 sometimes prints these on stdout
# and still exits 0, so the output is always scanned.
_ERROR_PATTERNS = re.compile(
    r"(^\s*invoked from within|^\s*while executing|^\(procedure |invalid command name|"
    r"can't read \"|can't set \"|wrong # args|no such variable|tracekit scenario error|"
    r"^--- Classifier::no-slot|couldn't open|^Error|ns: .*: )",
    re.MULTILINE,
)

# What ns-2's Linux TCP (Agent/TCP/Linux) prints on stdout as a matter of course: select_ca
# names the algorithm, TCP-LP prints a debug line per ACK, some modules report a table
# resize. Captured like all of ns-2's output, and dropped before the output is scanned for
# errors or its last lines are shown, so that a failure's last words are ns-2's own.
_NOISE = re.compile(
    r"^(?:cmd select_ca \S+|TCP-LP: .*|0x[0-9a-fA-F]+ resizing timestamp table)\s*$\n?",
    re.MULTILINE,
)


def _without_noise(text: str) -> str:
    return _NOISE.sub("", text)


# -- ns-2 children: their own process group, gone when tracekit goes ----------------------
# Each ns-2 runs in a process group of its own (a terminal's Ctrl-C reaches tracekit only,
# which then ends its children itself: see kill_children) and asks the kernel for SIGKILL
# when its parent dies (prctl PR_SET_PDEATHSIG), so a tracekit killed with kill -9 leaves
# no ns-2 behind writing into the store's .staging/.
_PR_SET_PDEATHSIG = 1
_prctl: Any
try:
    _prctl = ctypes.CDLL(None, use_errno=True).prctl   # looked up before any fork
except (OSError, AttributeError):                     # not Linux
    _prctl = None
_SIGKILL = int(signal.SIGKILL)

_CHILDREN: set[subprocess.Popen] = set()
_CHILDREN_GUARD = threading.Lock()
# set once this process has started an ns-2 child: a sweep imports what its ingest needs
# (pyarrow, DuckDB: a quarter of a second) after that, while the first simulation runs
NS_STARTED = threading.Event()


def _child_setup(parent_pid: int):
    """preexec_fn of an ns-2 child: die with the parent. Only async-signal-safe work here
    (one prctl call, getppid, _exit): the parent has threads."""
    def setup() -> None:
        if _prctl is not None:
            _prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
        if os.getppid() != parent_pid:   # the parent died before the prctl: nobody wants us
            os._exit(1)
    return setup


# The same by util-linux's setpriv(1) where it is (every Debian): the child sets its
# PDEATHSIG, then a shell checks that its parent is still this process (else it ends: the
# parent died before the prctl) and execs ns-2. No preexec_fn, so Python starts the child
# with vfork instead of a full fork of this process (its memory holds DuckDB, pyarrow...):
# less CPU and wall per simulation (benchmarks/bench_sweep.py).
_SETPRIV: list[str | None] = []
_IN_CHILD_CHECK = 'test "$PPID" = "$0" && exec "$@"'


def _setpriv() -> str | None:
    if not _SETPRIV:
        _SETPRIV.append(shutil.which("setpriv") if _prctl is not None and os.path.exists("/bin/sh") else None)
    return _SETPRIV[0]


def _spawn(cmd: list[str]) -> tuple[list[str], dict[str, Any]]:
    """argv and Popen arguments of an ns-2 child that dies with this process."""
    setpriv = _setpriv()
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "KILL", "/bin/sh", "-c", _IN_CHILD_CHECK, str(os.getpid()), *cmd], {}
    return cmd, {"preexec_fn": _child_setup(os.getpid())}


def kill_children() -> None:
    """SIGKILL every ns-2 this process has running (an interrupted sweep)."""
    with _CHILDREN_GUARD:
        children = list(_CHILDREN)
    for p in children:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _environment() -> dict[str, str]:
    """This process's environment, copied for a child. A child handed no env of its own
    execs with the C library's `environ`; Python starts it with vfork and (3.11) without the
    GIL, so another thread that sets a variable meanwhile (a sweep's ingest thread importing
    polars, which sets _RJEM_MALLOC_CONF) reallocates that array under the exec: it failed
    with EFAULT, `OSError: [Errno 14] Bad address`, and took the sweep down. A copy is the
    child's alone."""
    while True:
        try:
            return dict(os.environ)
        except (RuntimeError, KeyError):        # a variable came or went during the copy
            continue


def _run_ns(cmd: list[str], cwd: Path, timeout_s: float | None) -> tuple[int, str, str]:
    """Run ns-2 as a child of its own process group; (returncode, stdout, stderr).
    Raises subprocess.TimeoutExpired (with the output so far) after timeout_s."""
    argv, how = _spawn(cmd)
    try:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                cwd=cwd, text=True, errors="replace", process_group=0, env=_environment(), **how)
    except OSError as e:
        if e.filename is not None or not e.strerror:
            raise
        # no process to run it in (fork failed: EAGAIN, ENOMEM): said with what was started
        raise OSError(e.errno, f"cannot start it: {e.strerror[:1].lower()}{e.strerror[1:]}", cmd[0]) from None
    with _CHILDREN_GUARD:
        _CHILDREN.add(proc)
    NS_STARTED.set()
    try:
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            raise subprocess.TimeoutExpired(cmd, timeout_s or 0, output=out, stderr=err) from None
        return proc.returncode, out, err
    finally:
        if proc.poll() is None:              # an exception (Ctrl-C, SIGTERM) on the way out
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        with _CHILDREN_GUARD:
            _CHILDREN.discard(proc)


def _written(path: Path, reuse_files: bool) -> bool:
    """Whether ns-2 wrote trace file `path` (emptied before it ran, with reuse_files)."""
    try:
        return path.stat().st_size > 0 or not reuse_files
    except FileNotFoundError:
        return False


class NsNotFoundError(RuntimeError):
    """The ns-2 binary is not installed / not on PATH."""


class ScenarioRunError(RuntimeError):
    """ns-2 failed: non-zero exit, a Tcl error, or missing/empty trace files."""

    def __init__(self, message: str, *, returncode: int | None = None, output_tail: str = ""):
        super().__init__(message)
        self.returncode = returncode
        self.output_tail = output_tail


def _tail(text: str, n: int = 20) -> str:
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def find_ns(ns_binary: str = "ns") -> str:
    """Absolute path of the ns binary, or NsNotFoundError with install advice."""
    path = shutil.which(ns_binary) if os.sep not in ns_binary else (
        ns_binary if os.access(ns_binary, os.X_OK) else None
    )
    if not path:
        raise NsNotFoundError(
            f"ns-2 binary {ns_binary!r} not found on PATH; install ns-2.35 "
            "(Debian/Ubuntu: sudo apt-get install ns2) or give its path (tracekit's --ns PATH, ns_binary= in Python)"
        )
    return path


def ns_command(scenario_id: str, params: dict[str, Any], seed: int, out_dir: Path,
               ns_binary: str = "ns") -> list[str]:
    """The argv that runs the scenario (params must already be resolved): every parameter
    as NAME:TYPE=VALUE, its type from the declaration file, which is the only place the
    parameters are declared (the script holds no defaults: see common.tcl)."""
    sc = get_scenario(scenario_id)
    args = [ns_binary, str(sc.script_path), f"out_dir={out_dir}", f"seed={int(seed)}"]
    args += [f"{k}:{sc.param(k).type}={format_value(v)}" for k, v in params.items()]
    return args


def run_scenario_traces(
    scenario_id: str,
    params: dict[str, Any],
    seed: int,
    out_dir: Path,
    ns_binary: str = "ns",
    timeout_s: float | None = None,
    reuse_files: bool = False,
) -> list[Path]:
    """Run ``scenario_id`` under ns-2 with ``params`` (resolved: what
    ``resolve_params(scenario_id, overrides)`` returns) and ``seed`` (>= 1), writing
    packets.tr, cwnd.tr and queue.tr into ``out_dir`` (created if needed); a
    scenario may leave out those not in its ``Scenario.trace_files``.

    Returns the paths of the trace files written, in TRACE_FILES order.  Raises
    ValueError for an unknown scenario, params that are not resolved or a bad seed,
    NsNotFoundError if ns is missing, ScenarioRunError (with the last ~20 lines of ns
    output in the message) if the simulation fails or times out.

    ``reuse_files``: the trace files an earlier run left in ``out_dir`` are emptied instead of
    removed, and ns-2 writes into them (a sweep reuses its directories: making a file costs
    CPU on ext4 without a journal); one left empty (the scenario does not write
    it) is not a trace of this run.
    """
    sc = get_scenario(scenario_id)
    names = [p.name for p in sc.params]
    if list(params or {}) != names:
        missing = [n for n in names if n not in (params or {})]
        unknown = [repr(k) for k in (params or {}) if k not in names]
        parts = ["missing " + ", ".join(missing)] if missing else []
        parts += ["unknown parameter " + ", ".join(unknown)] if unknown else []
        what = "; ".join(parts)
        raise ValueError(f"{scenario_id}: parameters are not resolved ({what or 'not in declaration order'}); "
                         "resolve them with resolve_params first")
    for param in sc.params:
        # a choice outside the declaration (a Linux algorithm ns-2 lacks: it would print an
        # error, run its default and exit 0) never reaches ns-2
        if param.type == "choice" and params[param.name] not in (param.choices or ()):
            raise ValueError(f"{scenario_id}: parameters are not resolved (bad value "
                             f"{clip_repr(params[param.name])} for {param.name}: must be {param.allowed()})")
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ValueError(f"seed must be an integer >= 1, got {seed!r}") from None
    if seed < 1:
        raise ValueError(f"seed must be an integer >= 1 (ns-2 seed 0 means a time-of-day seed), got {seed}")
    ns_path = find_ns(ns_binary)
    out_dir = Path(out_dir).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in TRACE_FILES:  # never mistake a previous run's files for this one's
        if reuse_files:
            try:
                os.truncate(out_dir / name, 0)
            except FileNotFoundError:
                pass
        else:
            (out_dir / name).unlink(missing_ok=True)

    cmd = ns_command(scenario_id, params, seed, out_dir, ns_path)
    try:
        returncode, stdout, stderr = _run_ns(cmd, out_dir, timeout_s)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or "") if isinstance(exc.stdout, str) else (exc.stdout or b"").decode("utf-8", "replace")
        err = (exc.stderr or "") if isinstance(exc.stderr, str) else (exc.stderr or b"").decode("utf-8", "replace")
        tail = _tail(_without_noise(out) + "\n" + err)
        raise ScenarioRunError(
            f"ns-2 timed out after {timeout_s} s running scenario {scenario_id}"
            + (f"; last output:\n{tail}" if tail else ""),
            output_tail=tail,
        ) from None

    output = _without_noise(stdout or "") + "\n" + (stderr or "")
    tail = _tail(output)
    if returncode != 0:
        how = (f"was killed by signal {-returncode}" if returncode < 0
               else f"exited with status {returncode}")
        raise ScenarioRunError(
            f"ns-2 {how} running scenario {scenario_id}" + (f"; last output:\n{tail}" if tail else ", printing nothing"),
            returncode=returncode, output_tail=tail,
        )
    if _ERROR_PATTERNS.search(output):
        raise ScenarioRunError(
            f"ns-2 reported an error running scenario {scenario_id} (exit status 0); last output:\n{tail}",
            returncode=returncode, output_tail=tail,
        )
    required = sc.trace_files
    paths = [out_dir / name for name in TRACE_FILES if name in required or _written(out_dir / name, reuse_files)]
    problems = []
    for p in paths:
        if not p.exists():
            problems.append(f"{p.name} missing")
            continue
        with p.open("r", errors="replace") as fh:
            first = fh.readline()
            second = fh.readline()
        if not first.startswith(META_PREFIX):
            problems.append(f"{p.name} has no tracekit-meta header")
        elif not second.strip():
            problems.append(f"{p.name} has no trace lines")
    if problems:
        raise ScenarioRunError(
            f"ns-2 ran scenario {scenario_id} but the traces are incomplete ({'; '.join(problems)})"
            + (f"; last output:\n{tail}" if tail else ""),
            returncode=returncode, output_tail=tail,
        )
    return paths
