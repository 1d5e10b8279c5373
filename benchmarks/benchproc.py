"""The one process timer of the benchmarks: a command as a whole process, its wall time, CPU
time (user + system, its children included) and peak RSS (os.wait4).

Every command runs from a neutral, empty working directory, with every Path argument
resolved first: `python -m tracekit` (or `python -c "import tracekit"`) started inside a
checkout imports that checkout's tracekit/, not the installation being measured.
"""
from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple, Sequence, Union

PY = sys.executable
_TK_BIN = Path(PY).parent / "tracekit"
# the installed console script when there is one (its start-up is what users get)
TK: list[str] = [str(_TK_BIN)] if _TK_BIN.exists() else [PY, "-m", "tracekit"]

_NEUTRAL: list[str] = []


def neutral_cwd() -> str:
    """An empty directory of our own (made once, removed at exit)."""
    if not _NEUTRAL:
        d = tempfile.mkdtemp(prefix="tk-bench-cwd-")
        _NEUTRAL.append(d)
        atexit.register(shutil.rmtree, d, True)
    return _NEUTRAL[0]


class Failed(RuntimeError):
    pass


def compile_installation(python: str = PY, env: dict | None = None) -> str:
    """Byte-compile the tracekit that `python` imports (from a neutral directory), and return
    where it is. With PYTHONDONTWRITEBYTECODE set (as on the machines here), a module edited
    since the last compile is compiled again at every start and never cached: a measurement
    of a changed checkout would time its compiler too (~10-20 ms for ingest.py)."""
    where = subprocess.run([python, "-c", "import os, tracekit; print(os.path.dirname(tracekit.__file__))"],
                           cwd=neutral_cwd(), env=env, capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([python, "-m", "compileall", "-q", where], cwd=neutral_cwd(), env=env, capture_output=True, check=True)
    return where


class Proc(NamedTuple):
    wall_s: float
    cpu_s: float
    rss_bytes: int
    out: bytes          # stdout, when asked for with capture=True

    @property
    def rss_mb(self) -> float:
        return self.rss_bytes / 2**20


Arg = Union[str, os.PathLike]


def _args(cmd: Sequence[Arg]) -> list[str]:
    """A command's arguments as strings, Path arguments resolved (it runs from neutral_cwd())."""
    return [str(Path(a).resolve()) if isinstance(a, os.PathLike) else str(a) for a in cmd]


def _failure(code: int, args: list[str], err) -> str:
    """What Failed says of a command that exited with `code`: it and the end of its stderr
    (`err`, the temporary file it wrote to)."""
    err.seek(0)
    return f"failed ({code}): {' '.join(args)}\n{err.read().decode(errors='replace')[-2000:]}"


def timed(cmd: Sequence[Arg], stdout: Arg | None = None, capture: bool = False, env: dict | None = None) -> Proc:
    """Run `cmd` (Path arguments resolved) from neutral_cwd(); raise Failed with the end of
    its stderr if it fails. stdout: a file to write it to; capture: return it in Proc.out;
    else it is discarded."""
    args = _args(cmd)
    out_f = open(Path(stdout).resolve(), "wb") if stdout is not None else None
    sink = out_f if out_f is not None else (subprocess.PIPE if capture else subprocess.DEVNULL)
    err = tempfile.TemporaryFile()
    try:
        t0 = time.perf_counter()
        p = subprocess.Popen(args, stdout=sink, stderr=err, env=env, cwd=neutral_cwd())
        out = p.stdout.read() if capture and p.stdout is not None else b""
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        if p.stdout is not None:
            p.stdout.close()
        p.returncode = code             # reaped by wait4: Popen must not wait for it again
    finally:
        if out_f is not None:
            out_f.close()
    try:
        if code != 0:
            raise Failed(_failure(code, args, err))
    finally:
        err.close()
    return Proc(wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024, out)


def timed_together(cmds: Sequence[Sequence[Arg]]) -> Proc:
    """Commands started at once, each a whole process from neutral_cwd() (as `timed` runs
    one): the wall time until the last one ends, their CPU times summed, the largest peak
    RSS; Failed with the first failure's stderr."""
    procs: list[tuple[list[str], subprocess.Popen]] = []
    errs: list = []
    failed: list[str] = []
    cpu, rss = 0.0, 0
    t0 = time.perf_counter()
    try:
        for cmd in cmds:
            args = _args(cmd)
            errs.append(tempfile.TemporaryFile())
            procs.append((args, subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=errs[-1], cwd=neutral_cwd())))
        for (args, p), err in zip(procs, errs):
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = code = os.waitstatus_to_exitcode(status)
            cpu += ru.ru_utime + ru.ru_stime
            rss = max(rss, ru.ru_maxrss * 1024)
            if code != 0:
                failed.append(_failure(code, args, err))
        wall = time.perf_counter() - t0
    except BaseException:
        for _, p in procs:
            if p.returncode is None:
                p.kill()
                p.wait()
        raise
    finally:
        for err in errs:
            err.close()
    if failed:
        raise Failed(failed[0])
    return Proc(wall, cpu, rss, b"")


# A file created in a directory costs, on ext4 without a journal (the root file system of the
# machine measured), one probe for every inode of its block group freed in the last 60 s
# (300 s while its inode table block is dirty): the kernel will not reuse them so soon
# (fs/ext4/ialloc.c, recently_deleted). After a benchmark removed a store of a thousand files,
# a file made next to it cost ~1 ms of kernel CPU instead of ~15 us, for minutes, and a sweep
# makes ~26 files a simulation. So nothing a measurement made is removed before the run ends,
# and the cost of making a file where the stores are made is measured and reported.
FS_PROBE = """
import os, resource, sys, tempfile
d = tempfile.mkdtemp(prefix="fs-probe-", dir=sys.argv[1])
n = int(sys.argv[2])
before = resource.getrusage(resource.RUSAGE_SELF)
for i in range(n):
    os.close(os.open(os.path.join(d, str(i)), os.O_CREAT | os.O_WRONLY, 0o644))
after = resource.getrusage(resource.RUSAGE_SELF)
print((after.ru_stime - before.ru_stime + after.ru_utime - before.ru_utime) / n * 1e6)
"""


def file_create_us(where: Path, n: int = 200) -> float:
    """CPU (microseconds) per empty file created in a new directory under `where` (kept: its
    removal would make the next files dearer), in a fresh interpreter."""
    out = subprocess.run([sys.executable, "-c", FS_PROBE, str(where), str(n)], capture_output=True, text=True, check=True)
    return float(out.stdout)
