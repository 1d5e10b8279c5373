"""Experiments: the bundled ns-2 scenarios reproducing the source papers, run one at a time
or swept over grids of parameters and seeds.

``scenarios`` reads each scenario's declaration file (``tcl/<id>.toml``, beside its Tcl
script) into ``SCENARIOS`` / ``EXPERIMENTS`` and resolves parameters (``resolve_params``);
``runner`` runs one resolved simulation under ns-2 and returns its trace files (packets.tr,
cwnd.tr, queue.tr; the wireless manet scenario writes no queue.tr); ``sweep`` plans,
runs and ingests many, resumably.
"""

from tracekit.experiments.runner import TRACE_FILES, NsNotFoundError, ScenarioRunError, find_ns, ns_command, run_scenario_traces
from tracekit.experiments.scenarios import EXPERIMENTS, SCENARIOS, TCL_DIR, Check, Experiment, Param, Scenario, ScenarioFileError, experiment_runs, format_value, get_scenario, resolve_params, series_value, sim_id_of

__all__ = [
    "EXPERIMENTS",
    "SCENARIOS",
    "TCL_DIR",
    "TRACE_FILES",
    "Check",
    "Experiment",
    "NsNotFoundError",
    "Param",
    "Scenario",
    "ScenarioFileError",
    "ScenarioRunError",
    "experiment_runs",
    "find_ns",
    "format_value",
    "get_scenario",
    "ns_command",
    "resolve_params",
    "run_scenario_traces",
    "series_value",
    "sim_id_of",
]
