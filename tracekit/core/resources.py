"""Where the top-level sql/ and dashboards/ folders are: a wheel carries them inside the
package (pyproject's force-include), a source checkout has them beside it."""
from __future__ import annotations

from pathlib import Path

from tracekit.core.errors import TracekitError

_PACKAGE = Path(__file__).resolve().parents[1]


def shipped(name: str) -> Path:
    """The folder `name` (sql, dashboards) of this installation."""
    for cand in (_PACKAGE / name, _PACKAGE.parent / name):
        if cand.is_dir():
            return cand
    raise TracekitError(f"the {name}/ folder is missing from this installation")
