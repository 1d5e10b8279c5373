"""Starting the Streamlit comparison dashboard (the app itself is dashboards/app.py).

`launch` runs Streamlit in a child process bound to 127.0.0.1, so the CLI stays a thin
wrapper and tests can start the same command line. Nothing here imports Streamlit: the
app is found as a file, shipped inside the package as tracekit/dashboards/ (like sql/),
or at the top of a source checkout.
"""
from __future__ import annotations

import os
import re
import signal
import threading
import subprocess
import sys
from pathlib import Path

from tracekit.core.errors import TracekitError
from tracekit.core.resources import shipped


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
    return shipped("dashboards") / "app.py"


def command(data_dir: str | os.PathLike, port: int | None, open_browser: bool = False,
            papers_dir: str | os.PathLike | None = None) -> list[str]:
    """The argv that serves the dashboard over `data_dir` on 127.0.0.1:`port` (the Papers
    page reading the paper files of `papers_dir` instead of the bundled ones, if given).
    `port` None: Streamlit's 8501 or the next free one; 0: one the system picks. Either way
    Streamlit binds the port itself, so no other process can take it between a choice and
    the bind."""
    return [
        sys.executable, "-m", "streamlit", "run", str(app_path()),
        "--server.address", "127.0.0.1",
        *(["--server.port", str(port)] if port is not None else []),
        "--logger.hideWelcomeMessage", "false",
        "--server.headless", "false" if open_browser else "true",
        "--browser.gatherUsageStats", "false",
        "--", "--data", str(Path(data_dir).resolve()),
        *(["--papers", str(Path(papers_dir).resolve())] if papers_dir is not None else []),
    ]


_URL = re.compile(rb"URL: (http://127\.0\.0\.1:[0-9]+)")


def _relay(out, data_dir: Path) -> None:
    """Streamlit's output, passed on to ours as it comes; the first URL in it announced on
    stderr as the dashboard's address."""
    announced, passing = False, True
    for line in iter(out.readline, b""):
        if passing:
            try:
                sys.stdout.buffer.write(line)
                sys.stdout.flush()
            except (OSError, ValueError, AttributeError):  # our stdout gone: Streamlit must not block on a full pipe
                passing = False
        m = None if announced else _URL.search(line)
        if m:
            announced = True
            print(f"tracekit dashboard: {m.group(1).decode()}  (store: {data_dir}; Ctrl-C stops it)",
                  file=sys.stderr, flush=True)
    out.close()


def launch(data_dir: Path, port: int | None = None, open_browser: bool = False,
           papers_dir: Path | None = None) -> int:
    """Serve the dashboard until interrupted; returns Streamlit's exit code (0 on Ctrl-C).
    A missing or empty store is not an error here: the app shows how to fill it (the
    `tracekit dashboard` command refuses a --data that is not a store before it gets here)."""
    check_installed()
    cmd = command(data_dir, port, open_browser, papers_dir)
    # Streamlit says which port it bound in its welcome message: pass its output on and
    # announce the address from it (a port chosen here and closed again could be taken
    # by another process before Streamlit binds it)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    relay = threading.Thread(target=_relay, args=(proc.stdout, Path(data_dir).resolve()), daemon=True)
    relay.start()
    old = None
    if threading.current_thread() is threading.main_thread():  # SIGTERM stops Streamlit too
        def _stop(signum, frame):
            raise KeyboardInterrupt
        old = signal.signal(signal.SIGTERM, _stop)
    try:
        code = proc.wait()
        relay.join(10)
        return code
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
