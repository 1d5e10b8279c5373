"""Bundled ns-2 scenarios reproducing the source papers' experiments.

``SCENARIOS`` / ``EXPERIMENTS`` describe them as data; ``run_scenario_traces``
runs one under ns-2 and returns the trace files (packets.tr, cwnd.tr, queue.tr;
the wireless manet scenario writes no queue.tr).
"""

from .registry import (
    EXPERIMENTS,
    SCENARIOS,
    TCL_DIR,
    Experiment,
    Param,
    Scenario,
    experiment_runs,
    format_value,
    get_scenario,
    resolve_params,
)
from .runner import (
    NsNotFoundError,
    ScenarioRunError,
    TRACE_FILES,
    find_ns,
    ns_command,
    run_scenario_traces,
)

__all__ = [
    "EXPERIMENTS",
    "SCENARIOS",
    "TCL_DIR",
    "TRACE_FILES",
    "Experiment",
    "NsNotFoundError",
    "Param",
    "Scenario",
    "ScenarioRunError",
    "experiment_runs",
    "find_ns",
    "format_value",
    "get_scenario",
    "ns_command",
    "resolve_params",
    "run_scenario_traces",
]
