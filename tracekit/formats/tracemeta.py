"""The ``# tracekit-meta {json}`` first line of every trace a bundled scenario writes, and the
simulation id derived from it.

A module of its own so that ingest (which reads the header) and the experiments package
(which runs the scenarios that write it) share one definition without importing each other.
It imports neither.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

META_PREFIX = "# tracekit-meta "


def format_value(value: Any) -> str:
    """How a resolved parameter value is written on the ns command line (and hashed)."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def seed_number(label: str | None) -> int | None:
    """The runs' seed column for a seed label: the label read as an integer when it is one
    of the column's int64 range, else None (the label keeps the text)."""
    digits = (label or "").removeprefix("-")
    # the length first: int() of thousands of digits raises (sys.get_int_max_str_digits)
    if not digits.isascii() or not digits.isdigit() or len(digits.lstrip("0")) > 19:
        return None
    value = int(label)  # type: ignore[arg-type]
    return value if -(2 ** 63) <= value < 2 ** 63 else None


def sim_id_of(scenario_id: str, params: dict[str, Any], seed: int) -> str:
    """The id of one simulation: a hash of the scenario, its resolved parameters (formatted
    as on the ns command line) and the seed. The same from a SimSpec before a run and from
    the tracekit-meta header of a trace after it, so a sweep can tell what is done."""
    key = json.dumps({"scenario": scenario_id, "params": {k: format_value(v) for k, v in params.items()},
                      "seed": int(seed)}, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def parse_meta(comments: list[tuple[int, str]]) -> dict:
    """The JSON object of the first tracekit-meta line among (line number, text) comments,
    or {} if there is none (or it is not a JSON object)."""
    for _, text in comments:
        if text.startswith(META_PREFIX):
            try:
                meta = json.loads(text[len(META_PREFIX):])
                if isinstance(meta, dict):
                    return meta
            except ValueError:
                pass
    return {}


def labels_from_meta(meta: dict) -> tuple[dict[str, str], dict[int, str]]:
    """Run labels (scenario, seed, stop_s, every parameter, sim_id) and flow names {fid: name}
    from a parsed tracekit-meta header."""
    labels: dict[str, str] = {}
    flows: dict[int, str] = {}
    if "scenario" in meta:
        labels["scenario"] = str(meta["scenario"])
    if "seed" in meta:
        labels["seed"] = str(meta["seed"])
    if "stop_s" in meta:  # the simulation's stop time (the end of every flow's measurement window)
        labels["stop_s"] = str(meta["stop_s"])
    for k, v in (meta.get("params") or {}).items():
        if k not in ("out_dir",):
            labels.setdefault(str(k), str(v))
    if "scenario" in meta and "seed" in meta and isinstance(meta.get("params"), dict):
        try:
            labels["sim_id"] = sim_id_of(str(meta["scenario"]), meta["params"], int(meta["seed"]))
        except (TypeError, ValueError, OverflowError):     # OverflowError: a seed of 1e400 (inf)
            pass
    for fid, name in (meta.get("flows") or {}).items():
        try:
            flows[int(fid)] = str(name)
        except ValueError:
            pass
    return labels, flows
