"""Starting the Streamlit comparison dashboard (the app itself is dashboards/app.py).

`launch` runs Streamlit in a child process bound to 127.0.0.1, so the CLI stays a thin
wrapper and tests can start the same command line. Nothing here imports Streamlit: the
app is found as a file, shipped inside the package as tracekit/dashboards/ (like sql/),
or at the top of a source checkout.
"""
from __future__ import annotations

import os
import signal
import socket
import threading
import subprocess
import sys
from pathlib import Path

from .errors import TracekitError


DASHBOARD_MODULES = ("streamlit", "plotly", "pandas")    # the [dashboard] extra (pyproject.toml)


def check_installed() -> None:
    """The dashboard's packages are an extra: without them, one line saying how to add them."""
    import importlib.util

    missing = []
    for name in DASHBOARD_MODULES:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):     # ValueError: a module set to None in sys.modules
            found = False
        if not found:
            missing.append(name)
    if missing:
        raise TracekitError(f"the dashboard needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not installed: "
                            "pip install 'tracekit[dashboard]' (in a source checkout: .venv/bin/pip install -e '.[dashboard]')")


def app_path() -> Path:
    """dashboards/app.py: inside the installed package first, else in the source checkout."""
    here = Path(__file__).resolve().parent
    for cand in (here / "dashboards" / "app.py", here.parent / "dashboards" / "app.py"):
        if cand.is_file():
            return cand
    raise TracekitError("the dashboard (dashboards/app.py) is missing from this installation")


def free_port(start: int = 8501, tries: int = 100) -> int:
    """The first port from `start` on that nothing listens on at 127.0.0.1."""
    for port in range(start, start + tries):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise TracekitError(f"no free port in {start}..{start + tries - 1}; pass --port")


def command(data_dir: str | os.PathLike, port: int, open_browser: bool = False,
            papers_dir: str | os.PathLike | None = None) -> list[str]:
    """The argv that serves the dashboard over `data_dir` on 127.0.0.1:`port` (the Papers
    page reading the paper files of `papers_dir` instead of the bundled ones, if given)."""
    return [
        sys.executable, "-m", "streamlit", "run", str(app_path()),
        "--server.address", "127.0.0.1",
        "--server.port", str(port),
        "--server.headless", "false" if open_browser else "true",
        "--browser.gatherUsageStats", "false",
        "--", "--data", str(Path(data_dir).resolve()),
        *(["--papers", str(Path(papers_dir).resolve())] if papers_dir is not None else []),
    ]


def launch(data_dir: Path, port: int | None = None, open_browser: bool = False,
           papers_dir: Path | None = None) -> int:
    """Serve the dashboard until interrupted; returns Streamlit's exit code (0 on Ctrl-C).
    A missing or empty store is not an error here: the app shows how to fill it (the
    `tracekit dashboard` command refuses a --data that is not a store before it gets here)."""
    check_installed()
    port = port or free_port()
    cmd = command(data_dir, port, open_browser, papers_dir)
    print(f"tracekit dashboard: http://127.0.0.1:{port}  (store: {Path(data_dir).resolve()}; Ctrl-C stops it)",
          file=sys.stderr)
    proc = subprocess.Popen(cmd)
    old = None
    if threading.current_thread() is threading.main_thread():  # SIGTERM stops Streamlit too
        def _stop(signum, frame):
            raise KeyboardInterrupt
        old = signal.signal(signal.SIGTERM, _stop)
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return 0
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)
