"""ns-2's Linux TCP (Agent/TCP/Linux + `$tcp select_ca ALG`) as the scenarios' `linux-ALG`
variants, under the real ns-2: every algorithm of the Debian build runs and is the one
selected (ns-2 silently falls back to its default for an unknown name), unknown names are
refused before ns-2 runs, ns-2's chatter stays out of messages, and a sweep over Linux
variants gives metrics that agree with tests/reference_metrics.py (an independent reading
of docs/contract.md) and cwnd rows equal to the cwnd trace, read here with a plain line loop."""
from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from test_metrics import compare_run, rows
from tracekit.experiments import SCENARIOS, ScenarioRunError, ns_command, resolve_params, run_scenario_traces
from tracekit.experiments import scenarios as scenarios_mod
from tracekit.experiments.sweep import plan_sweep, run_sims
from tracekit.formats.parsers import PACKET_KINDS
from tracekit.db.query import connect

NS = shutil.which("ns")
needs_ns = pytest.mark.skipif(NS is None, reason="ns-2 not installed (apt-get install ns2)")

# the congestion-control modules of the Debian ns-2.35 build (ns2-reference.md, Linux TCP)
LINUX = ["reno", "naive_reno", "highspeed", "bic", "htcp", "scalable", "cubic", "westwood", "vegas",
         "hybla", "illinois", "yeah", "veno", "compound", "lp"]
# scenarios with a variant parameter, and that parameter
VARIANT_PARAMS = {"cbr-variants": "variant", "queue-influence": "variant", "homogeneous-dumbbell": "variant",
                  "varying-parameters": "variant", "newreno-vs-reno": "extra_variant", "rtt-fairness": "variant"}


def test_every_variant_parameter_offers_every_linux_algorithm():
    for sid, name in VARIANT_PARAMS.items():
        choices = SCENARIOS[sid].param(name).choices or ()
        assert [c for c in choices if c.startswith("linux-")] == [f"linux-{a}" for a in LINUX], sid
    pair = SCENARIOS["cbr-fairness"].param("pair")
    assert "linux-cubic-linux-reno" in pair.choices and "Reno-linux-westwood" in pair.choices
    assert resolve_params("cbr-fairness", {"pair": "linux-cubic-Newreno"})["pair"] == "linux-cubic-Newreno"


@pytest.mark.parametrize("sid, key, value", [("cbr-variants", "variant", "linux-cubicc"),
                                             ("rtt-fairness", "variant", "cubic"),
                                             ("cbr-fairness", "pair", "linux-foo-linux-reno")])
def test_unknown_algorithm_refused_before_ns_runs(sid, key, value, tmp_path):
    """One line naming the bad value and listing the algorithms; ns-2 is never started (a
    missing ns binary would be reported otherwise)."""
    with pytest.raises(ValueError) as exc:
        resolve_params(sid, {key: value})
    msg = str(exc.value)
    assert "\n" not in msg and repr(value) in msg and "linux-cubic" in msg and "linux-lp" in msg, msg
    if value == "cubic":
        assert msg.endswith("(did you mean linux-cubic?)"), msg
    params = resolve_params(sid)
    params[key] = value           # bypassing resolution: the runner checks the value too
    with pytest.raises(ValueError, match="not resolved|bad value"):
        run_scenario_traces(sid, params, 1, tmp_path, ns_binary=str(tmp_path / "no-ns"))


@needs_ns
def test_tcl_refuses_an_unknown_linux_algorithm(tmp_path):
    """The script run by hand (the runner's command line, its variant replaced: the runner
    itself refuses a choice the declaration lacks): ns-2 itself would print an error and run
    its default."""
    argv = ns_command("cbr-variants", resolve_params("cbr-variants"), 1, tmp_path, NS)
    argv = [w if not w.startswith("variant:") else "variant:choice=linux-foo" for w in argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "unknown Linux congestion control 'foo'" in proc.stderr
    assert "cubic" in proc.stderr


def _cwnd_body(path: Path) -> str:
    return "".join(line for line in path.read_text().splitlines(keepends=True) if not line.startswith("#"))


@needs_ns
def test_every_linux_algorithm_runs_and_is_selected(tmp_path):
    """Each of the fifteen runs 3 s of cbr-variants in its loss region (CBR 9.5 Mb/s,
    unlimited window): ns-2 says it selected that algorithm and reports no error, the agent's
    cwnd is traced, and the algorithms' cwnd curves differ (ns-2's silent fallback to its
    default for a name it lacks would give one curve for all)."""
    bodies = {}
    for alg in LINUX:
        out = tmp_path / alg
        out.mkdir()
        params = resolve_params("cbr-variants", {"duration": "3", "variant": f"linux-{alg}",
                                                 "cbr_rate_mbps": "9.5", "window": "1000"})
        proc = subprocess.run(ns_command("cbr-variants", params, 1, out, NS),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert f"cmd select_ca {alg}" in proc.stdout.splitlines()
        assert "Error" not in proc.stdout + proc.stderr, alg
        body = _cwnd_body(out / "cwnd.tr")
        cw = [line.split() for line in body.splitlines()]
        assert len(cw) >= 10 and all(len(f) == 7 and f[5] == "cwnd_" for f in cw), alg
        bodies[alg] = body
    # over 3 s at small windows some coincide (measured: 12 distinct curves; reno = compound
    # = lp, bic = cubic: Reno-like below their thresholds); a fallback gives one curve
    assert len(set(bodies.values())) >= 10, sorted(bodies)


@needs_ns
def test_ns_chatter_kept_out_of_the_last_words(tmp_path, monkeypatch):
    """A script that prints what Agent/TCP/Linux prints (select_ca, TCP-LP's line per ACK)
    and then fails: the error names the failure, not the chatter."""
    tcl = tmp_path / "tcl"
    tcl.mkdir()
    chatter = 'puts "cmd select_ca lp"\nfor {set i 0} {$i < 200} {incr i} { puts "TCP-LP: 0001|    2|    0|   4294967295|   0|   0" }\n'
    (tcl / "cbr-variants.tcl").write_text(chatter + 'puts "0x55d81f56d0f0 resizing timestamp table"\n'
                                          'set tcp [new Agent/TCP/NoSuchVariant]\n')
    monkeypatch.setattr(scenarios_mod, "TCL_DIR", tcl)
    with pytest.raises(ScenarioRunError) as exc:
        run_scenario_traces("cbr-variants", resolve_params("cbr-variants", {"duration": "1"}), 1, tmp_path / "out")
    msg = str(exc.value)
    assert "Agent/TCP/NoSuchVariant" in msg
    assert "TCP-LP" not in msg and "select_ca" not in msg and "resizing" not in msg


@needs_ns
def test_lp_run_succeeds_quietly(tmp_path, capfd):
    """linux-lp prints a line per ACK on ns-2's stdout: the run succeeds and none of it
    reaches the terminal."""
    params = resolve_params("cbr-variants", {"duration": "2", "variant": "linux-lp"})
    paths = run_scenario_traces("cbr-variants", params, 1, tmp_path)
    assert [p.name for p in paths] == ["packets.tr", "cwnd.tr", "queue.tr"]
    out, err = capfd.readouterr()
    assert "TCP-LP" not in out + err and "select_ca" not in out + err


# --------------------------------------------------------------------------------------
# a sweep of Linux variants against the independent reference

PAIRS = {"linux-cubic-linux-reno": ("linux-cubic", "linux-reno"), "linux-bic-linux-htcp": ("linux-bic", "linux-htcp"),
         "linux-westwood-linux-lp": ("linux-westwood", "linux-lp")}


@pytest.fixture(scope="module")
def linux_sweep(tmp_path_factory):
    """One sweep (the sweep's own planning, running and ingest) of cbr-fairness over three
    pairs covering reno, cubic, bic, htcp, westwood and lp: 3 s, CBR 9 Mb/s (both TCP
    flows lose packets), seed 1; the packet traces kept in the store."""
    if NS is None:
        pytest.skip("ns-2 not installed")
    data = tmp_path_factory.mktemp("linux") / "store"
    specs = plan_sweep("cbr-fairness", [("pair", list(PAIRS))], [1], {"duration": "3", "cbr_rate_mbps": "9"})
    results = run_sims(specs, data, jobs=1, keep_traces=True)
    assert [r.status for r in results] == ["done"] * len(PAIRS), [r.error for r in results]
    return connect(data), data, results


def _kept_text(data: Path, run_id: str) -> str:
    import zstandard

    (path,) = (data / "runs").glob(f"run_id={run_id}/trace.zst")
    return zstandard.ZstdDecompressor().stream_reader(path.read_bytes()).read().decode()


def _packet_run(con, run_ids: list[str]) -> str:
    (rid,) = [r["run_id"] for r in rows(con, "SELECT run_id, trace_kind FROM runs WHERE list_contains(?, run_id)",
                                        [run_ids]) if r["trace_kind"] in PACKET_KINDS]
    return rid


@needs_ns
@pytest.mark.parametrize("pair", list(PAIRS))
def test_linux_sweep_matches_reference(linux_sweep, pair):
    con, data, results = linux_sweep
    (res,) = [r for r in results if dict(r.spec.params)["pair"] == pair]
    pkt = _packet_run(con, res.run_ids)
    text = _kept_text(data, pkt)
    names = {int(fid): name for fid, name in ref_flows(text).items()}
    a, b = PAIRS[pair]
    assert names == {1: a, 2: b, 3: "CBR"}
    compare_run(con, pkt, text, names, run_end=3.15)
    # the comparison is not vacuous: both Linux flows lost packets and delivered data
    fs = {r["name"]: r for r in rows(con, "SELECT * FROM flow_stats WHERE run_id = ?", [pkt])}
    for n in (a, b):
        assert fs[n]["dropped_pkts"] > 0 and fs[n]["recv_pkts"] > 100, (n, fs[n])


def ref_flows(text: str) -> dict:
    """The flow names of the trace's tracekit-meta header."""
    import json

    first = text.split("\n", 1)[0]
    assert first.startswith("# tracekit-meta ")
    return json.loads(first[len("# tracekit-meta "):])["flows"]


@needs_ns
def test_linux_cwnd_in_tcp_vars(linux_sweep, tmp_path):
    """tcp_vars holds, per Linux agent, exactly the cwnd_ lines of cwnd.tr (same times and
    values), read here from a fresh run of the same simulation (ns-2 is deterministic for a
    seed: tests/test_scenarios.py::test_seeds)."""
    con, _data, results = linux_sweep
    for res in results:
        out = tmp_path / dict(res.spec.params)["pair"]
        run_scenario_traces("cbr-fairness", dict(res.spec.params), res.spec.seed, out)
        want = defaultdict(list)
        for line in (out / "cwnd.tr").read_text().splitlines():
            if line.startswith("#"):
                continue
            f = line.split()
            want[(int(f[1]), int(f[2]))].append((float(f[0]), float(f[6])))
        assert len(want) == 2
        got = defaultdict(list)
        for r in rows(con, "SELECT time, src_node, src_port, value FROM tcp_vars WHERE list_contains(?, run_id) "
                      "AND var = 'cwnd_' ORDER BY line_no", [res.run_ids]):
            got[(r["src_node"], r["src_port"])].append((r["time"], r["value"]))
        assert dict(got) == dict(want)
        assert all(len(v) >= 10 for v in want.values())

