"""The bundled scenarios write the same traces, byte for byte, as before their parameters
were declared once (issue 40): tests/data/scenario_traces.sha256.json holds the sha256 of
every trace file of these runs as the scripts wrote them at commit 3bbbb76, when each script
still carried its own tk_parse_args spec with defaults. The runs, under the real ns-2: every
scenario with its defaults (seed 1), and for every experiment the first and the last
parameter set of its quick version (its first seed).

After a deliberate change of what a scenario simulates, review the difference, then rewrite
the file with ``PYTHONPATH=. python tests/test_scenario_bytes.py``.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from tracekit.experiments import EXPERIMENTS, SCENARIOS, experiment_runs, resolve_params, run_scenario_traces

HASHES = Path(__file__).resolve().parent / "data" / "scenario_traces.sha256.json"
needs_ns = pytest.mark.skipif(shutil.which("ns") is None, reason="ns-2 not installed (apt-get install ns2)")


def cases() -> dict[str, tuple[str, dict, int]]:
    """case id -> (scenario, resolved params, seed)."""
    out = {f"{sid}/defaults": (sid, resolve_params(sid), 1) for sid in SCENARIOS}
    for name, exp in EXPERIMENTS.items():
        runs = experiment_runs(name, quick=exp.quick is not None)
        first_seed = runs[0][1]
        sets = [params for params, seed in runs if seed == first_seed]
        for label, params in (("first", sets[0]), ("last", sets[-1])):
            out[f"{name}/quick-{label}"] = (exp.scenario, params, first_seed)
    return out


def trace_hashes(sid: str, params: dict, seed: int, out: Path) -> dict[str, str]:
    paths = run_scenario_traces(sid, params, seed, out)
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}


@pytest.mark.slow
@needs_ns
def test_traces_are_byte_identical(tmp_path):
    want = json.loads(HASHES.read_text())
    got = {case: trace_hashes(sid, params, seed, tmp_path / str(i))
           for i, (case, (sid, params, seed)) in enumerate(cases().items())}
    assert sorted(got) == sorted(want)
    differ = [case for case in want if got[case] != want[case]]
    assert not differ, f"{len(differ)} of {len(want)} runs wrote other traces: {differ}"


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        table = {case: trace_hashes(sid, params, seed, Path(d) / str(i))
                 for i, (case, (sid, params, seed)) in enumerate(cases().items())}
    HASHES.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(table)} runs' hashes to {HASHES}", file=sys.stderr)
