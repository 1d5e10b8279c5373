"""The one validation of tracekit's declaration files: the scenario files
(``tcl/<scenario>.toml``, read by :mod:`tracekit.experiments.scenarios`) and the paper files
(``papers/<paper>.toml``, read by :mod:`tracekit.analysis.reproduce`).

Each reader describes its tables as ``{key: required}`` and checks every table with
:func:`check_keys`; files are read with :func:`read_toml`. Every error is one line that names
the file and the place in it (``cbr-variants.toml: parameter window: unknown key 'defualt'
(known: ...)``), raised as the reader's own subclass of :class:`DeclarationError`.
"""
from __future__ import annotations

import math
import tomllib
from pathlib import Path
from typing import Any

from tracekit.core.errors import clip_repr

__all__ = ["DeclarationError", "check_keys", "number", "read_toml"]


class DeclarationError(ValueError):
    """A declaration file that does not load or validate; the message names the file."""


def read_toml(path: Path, error: type[DeclarationError] = DeclarationError) -> dict[str, Any]:
    """The tables of the TOML file ``path``; ``error`` (one line naming the file) if it cannot
    be read, is not UTF-8 or is not TOML."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise error(f"{path.name}: cannot read it: {e.strerror or e}") from None
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise error(f"{path.name}: not UTF-8 text (byte {e.start})") from None
    except tomllib.TOMLDecodeError as e:
        raise error(f"{path.name}: not valid TOML: {' '.join(str(e).split())}") from None


def check_keys(table: Any, spec: dict[str, bool], where: str,
               error: type[DeclarationError] = DeclarationError) -> dict:
    """``table`` itself, once checked to be a table holding only the keys of ``spec`` and
    every key ``spec`` marks required; else ``error`` naming ``where`` and the key."""
    if not isinstance(table, dict):
        raise error(f"{where}: expected a table")
    unknown = [k for k in table if k not in spec]
    if unknown:
        raise error(f"{where}: unknown key {clip_repr(unknown[0])} (known: {', '.join(spec)})")
    missing = [k for k, required in spec.items() if required and k not in table]
    if missing:
        raise error(f"{where}: missing key {clip_repr(missing[0])}")
    return table


def number(value: Any, where: str, error: type[DeclarationError] = DeclarationError) -> int | float:
    """``value`` if it is a finite TOML integer or float (not a boolean), else ``error``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise error(f"{where}: expected a number")
    return value
