"""Regenerate sample_traces/: short runs of the bundled scenarios with real ns-2, each trace
zstd-compressed, so that the demo and the dashboard work where ns-2 cannot be installed.

Usage: .venv/bin/python scripts/make_sample_traces.py [OUT_DIR]     (default: sample_traces)
Each trace starts with its tracekit-meta line, so `tracekit ingest sample_traces/` knows the
scenario, parameters, seed and flow names of every run.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import zstandard

from tracekit.experiments import format_value, run_scenario_traces
from tracekit.experiments.sweep import plan_sweep

# (scenario, grid, fixed parameters, seeds): the demo's sweeps (scripts/demo.sh) with fewer
# seeds, rates and seconds to stay under ~15 MB: cbr-variants at 7 Mb/s (no loss) and 9.5 Mb/s
# (loss region: the variants differ) for 5 s; the demo's six fairness pairs at the default CBR
# 8 Mb/s (loss region) for 5 s; queue-influence shortened to 15 s with the CBR on 5-12 s
# (paper 004: 30 s, 11-25 s); reno-vs-vegas and manet as in the demo.
SAMPLES = [
    ("cbr-variants", {"variant": ["Tahoe", "Reno", "Newreno", "Vegas"], "cbr_rate_mbps": ["7", "9.5"]},
     {"duration": "5"}, [1, 2, 3]),
    ("cbr-fairness", {"pair": ["Reno-Reno", "Newreno-Reno", "Reno-Newreno", "Vegas-Vegas", "Newreno-Vegas",
                               "Vegas-Newreno"]}, {"duration": "5"}, [1, 2]),
    ("queue-influence", {"queue": ["DropTail", "RED"]},
     {"variant": "Reno", "duration": "15", "cbr_start": "5", "cbr_stop": "12"}, [1, 2]),
    ("reno-vs-vegas", {"queue": ["DropTail", "RED"]}, {}, [1, 2]),
    ("manet", {"routing": ["AODV", "DSDV", "DSR"]}, {"duration": "30"}, [1, 2]),
]


def main(out: Path) -> None:
    specs = []
    for scenario, grid, fixed, seeds in SAMPLES:
        for spec in plan_sweep(scenario, list(grid.items()), seeds, fixed):
            name = "-".join(format_value(dict(spec.params)[k]) for k in grid) + f"-seed{spec.seed}"
            specs.append((spec, out / scenario / name))
    if out.exists():   # the simulations' folders go; README.md stays
        for d in out.iterdir():
            if d.is_dir():
                shutil.rmtree(d)

    def one(item):
        spec, dest = item
        with tempfile.TemporaryDirectory() as tmp:
            for f in run_scenario_traces(spec.scenario, dict(spec.params), spec.seed, Path(tmp)):
                dest.mkdir(parents=True, exist_ok=True)
                (dest / (f.name + ".zst")).write_bytes(zstandard.ZstdCompressor(level=19).compress(f.read_bytes()))
        return dest

    with ThreadPoolExecutor(max_workers=2) as pool:
        for dest in pool.map(one, specs):
            print(dest)
    total = sum(f.stat().st_size for f in out.rglob("*.zst"))
    print(f"{len(specs)} simulations, {total / 1e6:.1f} MB in {out}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path("sample_traces"))
