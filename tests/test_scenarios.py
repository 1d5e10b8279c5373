"""Bundled ns-2 scenarios, run under the real ns-2 (never faked).

The traces are checked with plain line loops here, independent of tracekit's
parsers: meta headers, flows and fids, deliveries at the destination, cwnd
lines per TCP agent, queue lines, seed behaviour, and parameter validation; for the
wireless manet scenario, agent-level sends and deliveries in the old and new formats.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from tracekit.experiments import (
    EXPERIMENTS,
    SCENARIOS,
    NsNotFoundError,
    ScenarioRunError,
    experiment_runs,
    ns_command,
    resolve_params,
    run_scenario_traces,
    series_value,
)
from tracekit.experiments import scenarios as scenarios_mod
from tracekit.experiments.scenarios import ScenarioFileError, load_scenario_file, load_scenarios

NS = shutil.which("ns")
needs_ns = pytest.mark.skipif(NS is None, reason="ns-2 not installed (apt-get install ns2)")

META = "# tracekit-meta "
LINUX_ALGS = ("reno", "naive_reno", "highspeed", "bic", "htcp", "scalable", "cubic", "westwood", "vegas",
              "hybla", "illinois", "yeah", "veno", "compound", "lp")
TCP_NAMES = {"Tahoe", "Reno", "Newreno", "Vegas", "Sack1"} | {f"linux-{a}" for a in LINUX_ALGS}

# Short runs that still exercise every flow of each scenario (sources that
# normally start late are pulled in so they deliver data within the run).
SHORT = {
    "homogeneous-dumbbell": {"duration": "3", "variant": "Sack1", "sender_lan": "fast_ethernet"},
    "varying-parameters": {"duration": "3", "variant": "Tahoe", "error_rate": "0.05"},
    "cbr-variants": {"duration": "3", "variant": "Vegas", "cbr_rate_mbps": "9.5", "cbr_start": "1"},
    "cbr-fairness": {"duration": "3", "pair": "Newreno-Vegas", "cbr_rate_mbps": "9"},
    "queue-influence": {"duration": "4", "variant": "Sack1", "queue": "RED", "red_links": "3",
                        "cbr_rate_mbps": "9", "cbr_start": "1", "cbr_stop": "3"},
    "reno-vs-vegas": {"duration": "12", "queue": "RED", "n_reno": "2", "vegas_start": "1"},
    "newreno-vs-reno": {"duration": "6", "config": "multi", "flows_per_variant": "2", "start_max": "1"},
    # a Linux agent (Agent/TCP/Linux, CUBIC): its cwnd traced like the others'
    "rtt-fairness": {"duration": "2", "variant": "linux-cubic", "start_jitter": "0.5"},
    "manet": {"duration": "10", "nodes": "10", "width_m": "500", "height_m": "500", "max_speed_mps": "20",
              "pause_time": "0", "cbr_flows": "2", "tcp_flows": "1", "start_max": "1"},
}
# the trace files each scenario writes with its SHORT parameters
FILES = {sid: ["packets.tr", "cwnd.tr"] if sid == "manet" else ["packets.tr", "cwnd.tr", "queue.tr"]
         for sid in SHORT}


def run(sid: str, overrides: dict, seed: int, out: Path, **kw) -> list[Path]:
    """Resolve ``overrides`` (the one resolution) and run the scenario."""
    return run_scenario_traces(sid, resolve_params(sid, overrides), seed, out, **kw)


def read_meta(path: Path) -> dict:
    with path.open() as fh:
        first = fh.readline()
    assert first.startswith(META), f"{path.name}: first line is not a tracekit-meta header: {first[:80]!r}"
    return json.loads(first[len(META):])


def body(path: Path) -> bytes:
    """File content without the first (meta) line, which names the seed."""
    data = path.read_bytes()
    return data[data.index(b"\n") + 1:]


def packet_lines(path: Path):
    with path.open() as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = line.split()
            if f and f[0] in "+-rd" and len(f) >= 12:
                yield f


def wireless_lines(path: Path):
    """(event, fields) of each event line of a wireless trace, old or new format:
    fields maps the new format's tags (-t, -Ni, -Nl, -It, -Ii, -Is, -Id, -If, ...);
    old-format lines are mapped onto the same tags (no -If: the old format has no fid)."""
    with path.open() as fh:
        for line in fh:
            f = line.split()
            if not f or f[0] not in ("s", "r", "f", "d", "D"):
                continue  # meta header, M (movement), DSR's S... lines
            if len(f) > 1 and f[1] == "-t":
                yield f[0], dict(zip(f[1::2], f[2::2]))
            elif len(f) >= 8:
                d = {"-t": f[1], "-Ni": f[2].strip("_"), "-Nl": f[3], "-Nw": f[4], "-Ii": f[5],
                     "-It": f[6], "-Il": f[7]}
                if len(f) >= 17 and f[12] == "-------":
                    d["-Is"] = f[13].lstrip("[").replace(":", ".")
                    d["-Id"] = f[14].replace(":", ".")
                yield f[0].lower(), d


def agt_counts(path: Path) -> tuple[dict, dict]:
    """Data packets (not TCP acks) sent at their source and received at their
    destination at the agent layer, as {(ptype, src, dst, fid): set of uids}."""
    sent, recv = defaultdict(set), defaultdict(set)
    for ev, d in wireless_lines(path):
        if d["-Nl"] != "AGT" or d["-It"] == "ack":
            continue
        key = (d["-It"], d["-Is"], d["-Id"], d.get("-If"))
        if ev == "s" and d["-Ni"] == d["-Is"].split(".")[0]:
            sent[key].add(d["-Ii"])
        elif ev == "r" and d["-Ni"] == d["-Id"].split(".")[0]:
            recv[key].add(d["-Ii"])
    return sent, recv


def check_wireless_packets(path: Path, flows: dict) -> dict:
    """Every declared flow (new-format trace, fid on every line) sends and delivers
    data at the agent layer; returns {fid: 'saddr.sport'}."""
    n_lines = 0
    seen_fids = set()
    for _ev, d in wireless_lines(path):
        n_lines += 1
        assert "-t" in d and "-Nl" in d, d
        if "-If" in d and d["-It"] in ("cbr", "tcp", "ack"):
            seen_fids.add(d["-If"])
    assert n_lines > 100
    assert seen_fids == set(flows), f"fids of data packets {seen_fids} != declared {set(flows)}"
    sent, recv = agt_counts(path)
    src_addr = {}
    for (ptype, src, dst, fid), uids in sent.items():
        assert fid not in src_addr, f"fid {fid} used by two agent pairs"
        src_addr[fid] = src
        assert ptype == ("cbr" if flows[fid].startswith("CBR") else "tcp"), (fid, ptype, flows[fid])
        got = len(recv[(ptype, src, dst, fid)])
        assert got >= 3, f"flow {fid} ({flows[fid]}) delivered {got} of {len(uids)} data packets"
    assert set(src_addr) == set(flows)
    return src_addr


def check_traces(sid: str, out: Path, params: dict, seed: int) -> None:
    paths = {p[:-3]: out / p for p in FILES[sid]}
    metas = {k: read_meta(p) for k, p in paths.items()}
    flows = metas["packets"]["flows"]
    for kind, meta in metas.items():
        assert meta["scenario"] == sid
        assert meta["seed"] == seed and isinstance(meta["seed"], int)
        assert meta["file"] == kind
        assert meta["flows"] == flows
        assert set(meta["params"]) == set(params), f"{kind}: params keys differ"
        for k, v in params.items():
            got = meta["params"][k]
            if isinstance(v, str):
                assert got == v, (k, got, v)
            else:
                assert isinstance(got, (int, float)) and got == pytest.approx(v), (k, got, v)
                if SCENARIOS[sid].param(k).type == "int":
                    assert isinstance(got, int), (k, got)
    assert flows, "no flows declared"
    for meta in metas.values():
        # the run ends drain_s after the sources stop
        assert meta["stop_s"] == pytest.approx(params["duration"] + params["drain_s"])
    fids = sorted(int(f) for f in flows)
    assert fids == list(range(1, len(fids) + 1)), f"fids must be 1..n, got {fids}"
    if sid == "manet":
        # unique names: "CBR 1".."CBR c", then "TCP 1".."TCP t"
        c = params["cbr_flows"]
        assert flows == {str(i): (f"CBR {i}" if i <= c else f"TCP {i - c}") for i in fids}
        src_addr = check_wireless_packets(paths["packets"], flows)
        check_cwnd(paths["cwnd"], flows, src_addr)
        return
    for name in flows.values():
        assert name in TCP_NAMES | {"CBR"}

    # packets.tr: every declared flow delivers data at its destination node;
    # no packet carries an undeclared fid (in particular fid 0).
    delivered = defaultdict(int)
    src_addr = {}
    seen_fids = set()
    n_lines = 0
    sent_uids, gone_uids = set(), set()   # data packets sent at their source; delivered or dropped
    last_t = 0.0
    with paths["packets"].open() as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = line.split()
            assert f[0] in ("+", "-", "r", "d"), line
            assert len(f) == 12, line
            n_lines += 1
            last_t = float(f[1])
            fid = f[7]
            seen_fids.add(fid)
            if f[4] == "ack":
                continue
            src_addr.setdefault(fid, f[8])
            if f[0] == "+" and f[2] == f[8].split(".")[0]:
                sent_uids.add(f[11])
                # no source sends after duration (TCP agents are muted then, not only their FTP)
                assert float(f[1]) <= params["duration"] + 1e-9, line
            if f[0] == "r" and f[3] == f[9].split(".")[0]:
                delivered[fid] += 1
                gone_uids.add(f[11])
            elif f[0] == "d":
                gone_uids.add(f[11])
    assert n_lines > 100
    assert last_t <= metas["packets"]["stop_s"] + 1e-9
    # nothing is still in flight when the trace ends: the drain time was long enough
    assert not sent_uids - gone_uids, f"{len(sent_uids - gone_uids)} packets in flight at the end"
    assert seen_fids <= set(flows), f"undeclared fids in packets.tr: {seen_fids - set(flows)}"
    for fid, name in flows.items():
        assert delivered[fid] >= 3, f"flow {fid} ({name}) delivered {delivered[fid]} data packets"

    check_cwnd(paths["cwnd"], flows, src_addr)

    # queue.tr: per-event queue-monitor lines
    nq = 0
    with paths["queue"].open() as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = line.split()
            assert len(f) == 11 and f[0:2] == ["q", "-t"] and f[3::2] == ["-s", "-d", "-l", "-p"], line
            float(f[2]), int(f[8]), int(f[10])
            nq += 1
    assert nq > 10


def name_of(flows: dict, fid: str) -> str:
    return flows.get(fid, "")


def check_cwnd(path: Path, flows: dict, src_addr: dict) -> None:
    """cwnd.tr: one series per TCP agent, keyed by (saddr, sport)."""
    series = defaultdict(int)
    with path.open() as fh:
        for line in fh:
            if line.startswith("#"):
                continue
            f = line.split()
            assert len(f) == 7 and f[5] == "cwnd_", line
            float(f[0]), float(f[6])
            series[f"{f[1]}.{f[2]}"] += 1
    tcp_fids = [fid for fid, name in flows.items() if not name.startswith("CBR")]
    assert len(series) == len(tcp_fids)
    for fid in tcp_fids:
        assert series[src_addr[fid]] >= 2, f"no cwnd_ changes for TCP flow {fid} ({src_addr[fid]})"


@pytest.mark.slow
@needs_ns
@pytest.mark.parametrize("sid", list(SCENARIOS))
def test_scenario_runs_and_traces(sid, tmp_path):
    overrides = SHORT[sid]
    params = resolve_params(sid, overrides)
    paths = run(sid, overrides, 7, tmp_path / "s7")
    assert [p.name for p in paths] == FILES[sid]
    assert all(p.is_file() and p.stat().st_size > 0 for p in paths)
    check_traces(sid, tmp_path / "s7", params, 7)


@pytest.mark.slow
@needs_ns
@pytest.mark.parametrize("sid", list(SCENARIOS))
def test_seeds(sid, tmp_path):
    overrides = SHORT[sid]
    a = run(sid, overrides, 1, tmp_path / "a")
    b = run(sid, overrides, 1, tmp_path / "b")
    c = run(sid, overrides, 2, tmp_path / "c")
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), f"{pa.name}: same seed, different bytes"
    assert body(a[0]) != body(c[0]), "seeds 1 and 2 gave the same packets.tr"


@needs_ns
@pytest.mark.parametrize("sid", list(SCENARIOS))
def test_declared_defaults_reach_the_script(sid, tmp_path):
    """The script holds no defaults: run with the declaration's (a short duration aside), the
    parameters it reports in its meta header are those, in declaration order, numbers as
    numbers (ints as ints) and choices as strings. (6 s: every source has started by then.)"""
    sc = SCENARIOS[sid]
    paths = run(sid, {"duration": "6"}, 1, tmp_path)
    meta = read_meta(paths[0])
    assert meta["seed"] == 1 and meta["scenario"] == sid
    expected = sc.defaults()
    expected["duration"] = 6.0
    assert list(meta["params"]) == list(expected)
    for k, v in expected.items():
        assert meta["params"][k] == v and type(meta["params"][k]) is type(v), (k, meta["params"][k], v)


def test_ns_command_passes_every_parameter_typed(tmp_path):
    """out_dir and seed, then every declared parameter as NAME:TYPE=VALUE in declaration order."""
    argv = ns_command("cbr-variants", resolve_params("cbr-variants", {"variant": "Vegas"}), 3, tmp_path)
    assert argv[:4] == ["ns", str(SCENARIOS["cbr-variants"].script_path), f"out_dir={tmp_path}", "seed=3"]
    words = argv[4:]
    assert len(words) == 18
    assert words[:3] == ["duration:float=10.0", "variant:choice=Vegas", "cbr_rate_mbps:float=9.0"]
    assert "cbr_profile:choice=constant" in words and "window:int=20" in words and words[-1] == "drain_s:float=0.15"


@needs_ns
def test_script_takes_exactly_its_parameters(tmp_path):
    """Run by hand, a script stops with one line naming a parameter left out (it has no default
    to fall back on), one it does not use, and a word without its type."""
    sc = SCENARIOS["cbr-variants"]
    argv = ns_command("cbr-variants", resolve_params("cbr-variants", {"duration": "0.5"}), 1, tmp_path, NS)

    def ns(words: list[str]) -> subprocess.CompletedProcess:
        return subprocess.run(words, capture_output=True, text=True, timeout=60)

    assert ns(argv).returncode == 0
    for cut, fragment in ((lambda w: w.startswith("cbr_step_s:"), "needs cbr_step_s on the command line"),
                          (lambda w: w.startswith("seed="), "needs seed on the command line")):
        proc = ns([w for w in argv if not cut(w)])
        assert proc.returncode == 1 and proc.stdout == "", proc.stdout
        assert proc.stderr.count("\n") == 1 and fragment in proc.stderr, proc.stderr
    for extra, fragment in (("cbr_rate:float=3.0", "unknown parameter 'cbr_rate' for scenario cbr-variants"),
                            ("window:int=30", "parameter window is given twice"),
                            ("window:integer=30", "the type of window must be int, float, choice or str")):
        proc = ns([*argv, extra])
        assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and fragment in proc.stderr, proc.stderr
    proc = ns([NS, str(sc.script_path), f"out_dir={tmp_path}", "seed=1", "duration=0.5"])
    assert proc.returncode == 1 and "the type of duration must be" in proc.stderr


# ---------------------------------------------------------------- replications and regime

def tcp_counts(path: Path, fid: str = "1") -> dict:
    """Plain counts for one flow of a wired trace: data packets sent at the source, delivered
    at the destination (packets, bytes), dropped; first send time; the meta's stop_s."""
    meta = read_meta(path)
    sent = recv = rx_bytes = drops = 0
    first = None
    for f in packet_lines(path):
        if f[7] != fid or f[4] == "ack":
            continue
        if f[0] == "+" and f[2] == f[8].split(".")[0]:
            sent += 1
            first = float(f[1]) if first is None else first
        elif f[0] == "r" and f[3] == f[9].split(".")[0]:
            recv += 1
            rx_bytes += int(f[5])
        elif f[0] == "d":
            drops += 1
    return {"sent": sent, "recv": recv, "rx_bytes": rx_bytes, "drops": drops, "first": first,
            "stop_s": meta["stop_s"]}


@needs_ns
def test_seeds_replicate_cbr_variants(tmp_path):
    """Five seeds of cbr-variants (Reno, CBR 9 Mb/s, 10 s, defaults otherwise) are real
    replications: the TCP throughput over [first send, stop_s] varies by at least 0.5 %
    (coefficient of variation). With the old periodic CBR and 0.1 s start jitter it is 0.26 %."""
    import statistics

    thr = []
    for seed in range(1, 6):
        paths = run("cbr-variants", {"variant": "Reno", "cbr_rate_mbps": "9", "duration": "10"},
                                    seed, tmp_path / f"s{seed}")
        c = tcp_counts(paths[0])
        assert c["drops"] > 0, f"seed {seed}: no TCP packet lost at CBR 9 Mb/s"
        thr.append(c["rx_bytes"] * 8 / 1000 / (c["stop_s"] - c["first"]))
    cv = statistics.stdev(thr) / statistics.mean(thr)
    assert cv >= 0.005, (cv, thr)


@needs_ns
def test_drain_is_short_relative_to_the_run(tmp_path):
    """cbr-variants at its defaults (seeds 1, 2): the drain after duration is so short that
    flow_stats' TCP throughput over [first send, stop_s] is within 3 % of the rate while
    sending, rx_bytes * 8 / 1000 / (duration - first send), counted here from the trace. The
    TCP source sends nothing after duration (its agent is muted then: ns-2's `$ftp stop`
    alone lets it retransmit on its timers), and nothing is left in flight at stop_s."""
    from tracekit.ingest.pipeline import ingest_paths
    from tracekit.db.query import connect

    for seed in (1, 2):
        out = tmp_path / f"s{seed}"
        paths = run("cbr-variants", {}, seed, out)
        params = resolve_params("cbr-variants", {})
        c = tcp_counts(paths[0])
        last_send = max(float(f[1]) for f in packet_lines(paths[0])
                        if f[7] == "1" and f[4] != "ack" and f[0] == "+" and f[2] == f[8].split(".")[0])
        assert last_send <= params["duration"] + 1e-9, last_send
        sending_kbps = c["rx_bytes"] * 8 / 1000 / (params["duration"] - c["first"])
        (res,) = ingest_paths(tmp_path / "store", [paths[0]])
        assert res.status == "added", res.message
        con = connect(tmp_path / "store")
        thr, in_flight = con.sql(
            "SELECT throughput_kbps, in_flight_pkts FROM flow_stats "
            f"WHERE run_id = '{res.run_id}' AND fid = 1").fetchall()[0]
        assert in_flight == 0
        assert thr == pytest.approx(sending_kbps, rel=0.03), (thr, sending_kbps)
        assert thr < sending_kbps  # the drain does dilute, a little


@needs_ns
def test_variants_differ_in_the_loss_region(tmp_path):
    """At CBR 9 Mb/s (one seed) Tahoe, Reno and NewReno lose packets and deliver different
    amounts; at CBR 5 Mb/s nothing is lost and the three deliver exactly the same."""
    got = {}
    for rate in ("5", "9"):
        for v in ("Tahoe", "Reno", "Newreno"):
            paths = run("cbr-variants", {"variant": v, "cbr_rate_mbps": rate, "duration": "6"},
                                        3, tmp_path / f"{v}-{rate}")
            got[(v, rate)] = tcp_counts(paths[0])
    assert all(got[(v, "5")]["drops"] == 0 for v in ("Tahoe", "Reno", "Newreno"))
    assert len({got[(v, "5")]["recv"] for v in ("Tahoe", "Reno", "Newreno")}) == 1
    assert all(got[(v, "9")]["drops"] > 0 for v in ("Tahoe", "Reno", "Newreno"))
    assert len({got[(v, "9")]["recv"] for v in ("Tahoe", "Reno", "Newreno")}) == 3, got


@needs_ns
@pytest.mark.parametrize("what", ["red", "cbr_random"])
def test_randomness_sources(what, tmp_path):
    """With fixed start times, the seed still matters through each random element alone:
    RED's early drops (default RNG seeded by the seed) and the CBR's random_ intervals.
    Without them (DropTail, periodic CBR, no jitter) two seeds give the same trace."""
    base = {"duration": "4", "cbr_rate_mbps": "9", "cbr_start": "0.5", "cbr_stop": "4",
            "start_jitter": "0", "cbr_random": "0", "queue": "DropTail"}
    on = {**base, **({"queue": "RED"} if what == "red" else {"cbr_random": "1"})}
    runs = {}
    for label, ov in (("off", base), ("on", on)):
        for seed in (1, 2):
            runs[(label, seed)] = run("queue-influence", ov, seed, tmp_path / f"{label}{seed}")[0]
    assert body(runs[("off", 1)]) == body(runs[("off", 2)])
    assert body(runs[("on", 1)]) != body(runs[("on", 2)])


@needs_ns
def test_decreasing_cbr_profile(tmp_path):
    """cbr_profile=decreasing: the CBR rate falls by 0.1 Mb/s every cbr_step_s. With a
    periodic CBR the packets sent in each step are rate * step / packet bits (+-1)."""
    ov = {"duration": "3", "cbr_profile": "decreasing", "cbr_rate_mbps": "10", "cbr_rate_end_mbps": "9.6",
          "cbr_step_s": "0.5", "cbr_random": "0", "start_jitter": "0", "variant": "Vegas"}
    path = run("cbr-variants", ov, 1, tmp_path)[0]
    times = [float(f[1]) for f in packet_lines(path) if f[0] == "+" and f[7] == "2" and f[2] == "1"]
    assert times and times[0] == pytest.approx(0.0, abs=1e-6)
    # 10, 9.9, 9.8, 9.7, 9.6 Mb/s for 0.5 s each, then 9.6 until duration (3 s)
    for i, rate in enumerate([10.0, 9.9, 9.8, 9.7, 9.6]):
        n = sum(1 for t in times if 0.5 * i <= t < 0.5 * (i + 1))
        assert abs(n - rate * 1e6 * 0.5 / 8000) <= 1, (rate, n)
    n = sum(1 for t in times if 2.5 <= t < 3.0)
    assert abs(n - 9.6e6 * 0.5 / 8000) <= 1
    assert max(times) <= 3.0


@needs_ns
def test_cbr_on_period(tmp_path):
    """The CBR is on from cbr_start to min(cbr_stop, duration): with fixed starts, its first
    packet leaves at cbr_start and its last before cbr_stop; by default it runs until duration."""
    def cbr_sends(overrides, out):
        path = run("cbr-fairness", {"duration": "3", "start_jitter": "0", "cbr_rate_mbps": "4", **overrides},
                   1, tmp_path / out)[0]
        return [float(f[1]) for f in packet_lines(path) if f[0] == "+" and f[7] == "3" and f[2] == "1"]

    t = cbr_sends({"cbr_start": "1", "cbr_stop": "2"}, "on")
    assert t[0] == pytest.approx(1.0, abs=1e-6) and 1.99 < t[-1] <= 2.0
    t = cbr_sends({}, "default")
    assert t[0] == pytest.approx(0.0, abs=1e-6) and 2.99 < t[-1] <= 3.0


# ---------------------------------------------------------------- manet (wireless)

# the routing protocol's own packets, by their ptype in the trace
ROUTING_PTYPE = {"AODV": "AODV", "DSDV": "message", "DSR": "DSR"}


@pytest.mark.slow
@needs_ns
@pytest.mark.parametrize("routing", list(ROUTING_PTYPE))
def test_manet_routing(routing, tmp_path):
    """Each routing protocol runs, sends its own control packets (and no other
    protocol's), and delivers CBR and TCP data end to end at the agent layer.
    30 s: DSDV's periodic updates (15 s) need that long to build routes."""
    overrides = {**SHORT["manet"], "routing": routing, "duration": "30"}
    paths = run("manet", overrides, 3, tmp_path)
    assert [p.name for p in paths] == ["packets.tr", "cwnd.tr"]
    assert read_meta(paths[0])["params"]["routing"] == routing
    rtr = Counter(d.get("-It") for ev, d in wireless_lines(paths[0]) if d["-Nl"] == "RTR")
    assert rtr[ROUTING_PTYPE[routing]] > 0, rtr
    assert not (set(ROUTING_PTYPE.values()) - {ROUTING_PTYPE[routing]}) & set(rtr), rtr
    sent, recv = agt_counts(paths[0])
    assert len(sent) == 3  # 2 CBR + 1 TCP, every flow sends
    for ptype in ("cbr", "tcp"):
        n_sent = sum(len(v) for k, v in sent.items() if k[0] == ptype)
        n_recv = sum(len(v) for k, v in recv.items() if k[0] == ptype)
        assert n_sent > 10 and n_recv >= 3, (ptype, n_sent, n_recv)
        assert n_recv <= n_sent


@pytest.mark.slow
@needs_ns
def test_manet_trace_formats(tmp_path):
    """trace_format=old and new with one seed: the same simulation written in the CMU
    format (no -t lines) and in the new format (every event line -t)."""
    runs = {}
    for fmt in ("old", "new"):
        paths = run("manet", {**SHORT["manet"], "trace_format": fmt}, 5, tmp_path / fmt)
        assert read_meta(paths[0])["params"]["trace_format"] == fmt
        events = Counter()
        n_new = n_old = 0
        for line in paths[0].read_text().splitlines():
            f = line.split()
            if f[0] in ("s", "r", "f", "d", "D"):
                if f[1] == "-t":
                    n_new += 1
                else:
                    float(f[1])
                    n_old += 1
        assert (n_new == 0) if fmt == "old" else (n_old == 0), (fmt, n_new, n_old)
        for ev, d in wireless_lines(paths[0]):
            events[(ev, d["-Nl"], d.get("-It"), d.get("-Nw"))] += 1
        moves = [ln for ln in paths[0].read_text().splitlines() if ln.startswith("M ")]
        sent, recv = agt_counts(paths[0])
        agt = {k[:3]: (len(sent[k]), len(recv[k])) for k in sent}  # old format: no fid
        runs[fmt] = (n_new + n_old, moves, agt, paths[1])
    old, new = runs["old"], runs["new"]
    assert old[0] == new[0] > 1000
    assert old[1] == new[1] and len(old[1]) >= 10, "different movements"
    assert old[2] == new[2], "different agent-level sends/deliveries"
    assert body(old[3]) == body(new[3]), "different cwnd_ series"


@pytest.mark.slow
@needs_ns
def test_manet_pattern_same_for_every_protocol(tmp_path):
    """One seed is one movement-and-traffic pattern whatever the routing protocol:
    the same M lines, flow end points and start times."""
    patterns = []
    for routing in ROUTING_PTYPE:
        paths = run("manet", {**SHORT["manet"], "routing": routing, "duration": "5"},
                                    4, tmp_path / routing)
        moves = [ln for ln in paths[0].read_text().splitlines() if ln.startswith("M ")]
        first_send = {}
        for ev, d in wireless_lines(paths[0]):
            if ev == "s" and d["-Nl"] == "AGT" and d["-It"] in ("cbr", "tcp"):
                first_send.setdefault((d["-It"], d["-Is"], d["-Id"], d["-If"]), d["-t"])
        assert moves and len(first_send) == 3
        patterns.append((moves, first_send))
    assert patterns[0] == patterns[1] == patterns[2]


@pytest.mark.slow
@needs_ns
def test_manet_without_tcp(tmp_path):
    """No TCP flow: no cwnd.tr, and the runner accepts its absence (and queue.tr's)."""
    paths = run("manet", {**SHORT["manet"], "tcp_flows": "0", "cbr_flows": "3"}, 1, tmp_path)
    assert [p.name for p in paths] == ["packets.tr"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["packets.tr"]
    assert read_meta(paths[0])["flows"] == {"1": "CBR 1", "2": "CBR 2", "3": "CBR 3"}


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize(
    "sid, overrides, fragments",
    [
        ("no-such-scenario", {}, ["unknown scenario", "cbr-variants"]),
        ("cbr-variants", {"rate": "2"}, ["unknown parameter 'rate'", "cbr_rate_mbps"]),
        ("cbr-variants", {"cbr_rate_mbps": "fast"}, ["cbr_rate_mbps", "a number"]),
        ("cbr-variants", {"variant": "Sack1"}, ["variant", "one of Tahoe, Reno, Newreno, Vegas"]),
        ("homogeneous-dumbbell", {"window": "2.5"}, ["window", "an integer"]),
        ("queue-influence", {"red_links": "9"}, ["red_links", "out of range", "[0, 5]"]),
        ("varying-parameters", {"error_rate": "-0.1"}, ["error_rate", "out of range"]),
        ("cbr-fairness", {"pair": "Reno/Vegas"}, ["pair", "A-B with A and B each one of Tahoe, Reno, Newreno, Vegas, Sack1, linux-reno"]),
        ("queue-influence", {"cbr_start": "20", "cbr_stop": "10"}, ["cbr_stop", "cbr_start"]),
        ("cbr-variants", {"seed": "3"}, ["seed", "--seed"]),
        ("manet", {"routing": "OLSR"}, ["routing", "one of AODV, DSDV, DSR"]),
        ("manet", {"nodes": "2"}, ["nodes", "out of range", "[3, 100]"]),
        ("manet", {"cbr_flows": "0", "tcp_flows": "0"}, ["at least one flow"]),
        ("cbr-variants", {"out_dir": "/tmp"}, ["out_dir"]),
    ],
)
def test_bad_params(sid, overrides, fragments):
    with pytest.raises(ValueError) as exc:
        resolve_params(sid, overrides)
    msg = str(exc.value)
    assert "\n" not in msg
    for frag in fragments:
        assert frag in msg, (frag, msg)


def test_resolve_types_and_defaults():
    p = resolve_params("cbr-variants", {"cbr_rate_mbps": "2", "window": "30", "variant": "vegas"})
    assert p["cbr_rate_mbps"] == 2.0 and isinstance(p["cbr_rate_mbps"], float)
    assert p["window"] == 30 and isinstance(p["window"], int)
    assert p["variant"] == "Vegas"  # canonical spelling
    assert p["duration"] == SCENARIOS["cbr-variants"].param("duration").default
    assert list(p) == [q.name for q in SCENARIOS["cbr-variants"].params]


def test_run_rejects_bad_input_before_running(tmp_path):
    with pytest.raises(ValueError, match="unknown parameter"):
        run("cbr-variants", {"nope": "1"}, 1, tmp_path)
    with pytest.raises(ValueError, match="seed"):
        run("cbr-variants", {}, 0, tmp_path)
    # the runner takes resolved parameters only (it does not resolve them again)
    with pytest.raises(ValueError, match="not resolved .missing duration, variant"):
        run_scenario_traces("cbr-variants", {"cbr_rate_mbps": 2.0}, 1, tmp_path)
    with pytest.raises(ValueError, match="unknown parameter 'nope'"):
        run_scenario_traces("cbr-variants", {**resolve_params("cbr-variants"), "nope": "1"}, 1, tmp_path)
    assert not any(tmp_path.iterdir())


@needs_ns
def test_timeout(tmp_path):
    with pytest.raises(ScenarioRunError, match="timed out"):
        run("newreno-vs-reno", {"config": "red", "duration": "500"}, 1, tmp_path,
                            timeout_s=0.3)


def test_ns_missing(tmp_path):
    with pytest.raises(NsNotFoundError, match="apt-get install ns2"):
        run("cbr-variants", {"duration": "1"}, 1, tmp_path, ns_binary="ns-not-installed-xyz")


@needs_ns
def test_ns_tcl_error_reported(tmp_path, monkeypatch):
    """A script that dies with a Tcl error: the message carries ns's last lines."""
    tcl = tmp_path / "tcl"
    tcl.mkdir()
    (tcl / "cbr-variants.tcl").write_text(
        'set ns [new Simulator]\nputs "building"\nset tcp [new Agent/TCP/NoSuchVariant]\n$ns run\n'
    )
    monkeypatch.setattr(scenarios_mod, "TCL_DIR", tcl)
    with pytest.raises(ScenarioRunError) as exc:
        run("cbr-variants", {"duration": "1"}, 1, tmp_path / "out")
    msg = str(exc.value)
    assert "Agent/TCP/NoSuchVariant" in msg and "exited with status" in msg


@needs_ns
def test_ns_exit0_without_traces(tmp_path, monkeypatch):
    """ns-2 exits 0 silently on a bad bandwidth string; missing traces are an error."""
    tcl = tmp_path / "tcl"
    tcl.mkdir()
    (tcl / "cbr-variants.tcl").write_text(
        'set ns [new Simulator]\nset a [$ns node]\nset b [$ns node]\n'
        '$ns duplex-link $a $b 1Xb 10ms DropTail\n$ns run\n'
    )
    monkeypatch.setattr(scenarios_mod, "TCL_DIR", tcl)
    with pytest.raises(ScenarioRunError, match="packets.tr missing"):
        run("cbr-variants", {"duration": "1"}, 1, tmp_path / "out")


@needs_ns
def test_ns_error_on_stdout_with_exit0(tmp_path, monkeypatch):
    tcl = tmp_path / "tcl"
    tcl.mkdir()
    (tcl / "cbr-variants.tcl").write_text(
        'set ns [new Simulator]\n'
        'if {[catch {nosuchcommand} err]} { puts "$err\\n    while executing\\n\\"nosuchcommand\\"" }\n'
        'exit 0\n'
    )
    monkeypatch.setattr(scenarios_mod, "TCL_DIR", tcl)
    with pytest.raises(ScenarioRunError, match="invalid command name"):
        run("cbr-variants", {"duration": "1"}, 1, tmp_path / "out")


# ---------------------------------------------------------------- declaration files

def test_declarations_shape():
    assert set(SCENARIOS) == set(SHORT)
    for sid, sc in SCENARIOS.items():
        assert sc.id == sid
        assert sc.script_path.is_file(), sc.script_path
        assert sc.title and sc.paper and sc.experiment and sc.description
        names = [p.name for p in sc.params]
        assert len(names) == len(set(names))
        assert "duration" in names and "seed" not in names and "out_dir" not in names
        for p in sc.params:
            assert p.type in ("int", "float", "choice", "str")
            # the default itself must validate
            assert p.parse(str(p.default)) == p.default
            if p.type == "choice":
                assert p.default in p.choices
    assert (scenarios_mod.TCL_DIR / "common.tcl").is_file()


def test_experiments_resolve():
    covered = set()
    for name, exp in EXPERIMENTS.items():
        assert exp.name == name and exp.scenario in SCENARIOS and exp.seeds and exp.description
        runs = experiment_runs(name)
        assert len(runs) == exp.n_runs() > 0
        covered.add(exp.scenario)
    assert covered == set(SCENARIOS)
    exp1 = EXPERIMENTS["cbr-exp1"]
    rates = exp1.grid["cbr_rate_mbps"]
    # the loss region (from ~8.3 Mb/s) in paper 004's 0.1 Mb/s steps, written exactly
    fine = [round(7.5 + 0.1 * i, 1) for i in range(26)]
    assert rates[0] == 1.0 and rates[-1] == 10.0 and rates[-26:] == fine
    assert set(exp1.grid["variant"]) == {"Tahoe", "Reno", "Newreno", "Vegas"}
    for name in ("cbr-exp2",):
        assert EXPERIMENTS[name].grid["cbr_rate_mbps"][-26:] == fine
    # mixed pairs in both orders
    pairs = set(EXPERIMENTS["cbr-exp2"].grid["pair"])
    for pair in pairs:
        a, b = pair.split("-")
        assert f"{b}-{a}" in pairs, pair
    # real replications: five seeds at least, ten where the start order decides
    assert all(len(e.seeds) >= 5 for e in EXPERIMENTS.values())
    assert len(EXPERIMENTS["newreno-reno"].seeds) >= 10


# ---------------------------------------------------------------- declaration files vs Tcl

DECLARATIONS = sorted(scenarios_mod.TCL_DIR.glob("*.toml"))
REFERENCE = re.compile(r"\$P\(([A-Za-z_]\w*)\)")


def tcl_params(script: Path) -> set[str]:
    """The parameters a scenario script uses: every $P(name) of it and of common.tcl outside
    comment lines, less out_dir and seed (the runner's own)."""
    names = set()
    for path in (script, script.parent / "common.tcl"):
        for line in path.read_text().splitlines():
            if not line.lstrip().startswith("#"):
                names.update(REFERENCE.findall(line))
    return names - {"out_dir", "seed"}


def test_declaration_files_are_the_scenarios():
    assert [p.stem for p in DECLARATIONS] == sorted(SCENARIOS)
    for path in DECLARATIONS:
        sc, exps, _ = load_scenario_file(path)
        assert sc == SCENARIOS[path.stem]
        assert sc.script_path.is_file() and sc.script_path.parent == path.parent
        assert all(EXPERIMENTS[e.name] == e for e in exps)


@pytest.mark.parametrize("path", DECLARATIONS, ids=lambda p: p.stem)
def test_tcl_uses_exactly_the_declared_params(path):
    """The parameters are declared once, in the declaration file (read here with tomllib, not
    tracekit's loader): the script uses each of them and no other, and declares none itself
    (a bare `tk_parse_args ID`)."""
    with path.open("rb") as fh:
        declared = [p["name"] for p in tomllib.load(fh)["params"]]
    script = path.with_suffix(".tcl")
    assert tcl_params(script) == set(declared), script.name
    calls = [line for line in script.read_text().splitlines() if line.startswith("tk_parse_args")]
    assert calls == [f"tk_parse_args {path.stem}"]


def _copy_scenario(tmp_path: Path, sid: str, edit) -> Path:
    """A copy of a declaration file (with its script) whose text went through ``edit``."""
    src = scenarios_mod.TCL_DIR / f"{sid}.toml"
    shutil.copy(scenarios_mod.TCL_DIR / SCENARIOS[sid].script, tmp_path)
    dst = tmp_path / src.name
    dst.write_text(edit(src.read_text()))
    return dst


@pytest.mark.parametrize(
    "sid, edit, fragments",
    [
        ("cbr-variants", lambda t: t.replace("script =", "colour = \"red\"\nscript =", 1), ["unknown key 'colour'"]),
        ("cbr-variants", lambda t: t.replace('name = "window"', 'name = "window"\ndefualt = 3', 1),
         ["parameter window", "unknown key 'defualt'"]),
        ("cbr-variants", lambda t: t.replace('name = "cbr-exp1"', 'name = "cbr-exp1"\nruns = 4', 1),
         ["experiment cbr-exp1", "unknown key 'runs'"]),
        ("cbr-variants", lambda t: t.replace("step = 0.1", "step = 0.1, end = 3", 1), ["unknown key 'end'"]),
        ("newreno-vs-reno", lambda t: t.replace('param = "config"', 'param = "config"\nlabel = "Queue"', 1),
         ["series", "unknown key 'label'"]),
        ("queue-influence", lambda t: t.replace("message =", "why = 1\nmessage =", 1), ["unknown key 'why'"]),
        ("cbr-variants", lambda t: t.replace('id = "cbr-variants"', 'id = "cbr-other"'), ["differs from the file name"]),
        ("cbr-variants", lambda t: t.replace("default = 9.0", 'default = "fast"', 1), ["cbr_rate_mbps", "default"]),
        ("cbr-variants", lambda t: t.replace('default = "Reno"', 'default = "Cubic"', 1), ["variant", "one of"]),
        ("cbr-variants", lambda t: t.replace('type = "int"', 'type = "integer"', 1), ["type must be one of"]),
        ("cbr-fairness", lambda t: t.replace("choices = { pairs_of = [", "choices = { pairs = [", 1),
         ["parameter pair", "unknown key 'pairs'"]),
        ("cbr-fairness", lambda t: t.replace("choices = { pairs_of = [", "choices = { pairs_of = [1, ", 1),
         ["parameter pair", "pairs_of must be a list of strings"]),
        ("cbr-variants", lambda t: t.replace("cbr_start = 3.0", "cbr_begin = 3.0", 1),
         ["cbr-exp1-late", "'cbr_begin' is not a parameter"]),
        ("queue-influence", lambda t: t.replace('"cbr_stop >= cbr_start"', '"cbr_stop >= cbr_begin"'),
         ["'cbr_begin' is not a numeric parameter"]),
        ("queue-influence", lambda t: t.replace('"cbr_stop >= cbr_start"', '"__import__(\'os\') >= 1"'),
         ["check", "cannot read"]),
        ("queue-influence", lambda t: t.replace('"cbr_stop >= cbr_start"', '"cbr_stop * 2 >= cbr_start"'),
         ["check", "cannot read '* 2"]),
        ("queue-influence", lambda t: t.replace('"cbr_stop >= cbr_start"', '"cbr_stop + cbr_start"'),
         ["expected a comparison"]),
        ("reno-vs-vegas", lambda t: t.replace('"n_reno + n_vegas >= 1"', '"queue >= 1"'),
         ["'queue' is not a numeric parameter"]),
        ("manet", lambda t: t + "\n[[params]]\nname = \"seed\"\ntype = \"int\"\ndefault = 1\n", ["'seed'", "reserved"]),
        ("manet", lambda t: t.replace("title =", "title = 3\nxtitle =", 1), ["unknown key 'xtitle'"]),
        ("manet", lambda t: t.replace("seeds = [1, 2, 3, 4, 5]", "seeds = [0, 1]"), ["manet-routing", "seeds"]),
        ("queue-influence", lambda t: t.replace("message =", 'when = { queue = "red" }\nmessage =', 1),
         ["when", "'red' is not a value of queue"]),
        ("queue-influence", lambda t: t.replace("message =", 'when = { queue_kind = "RED" }\nmessage =', 1),
         ["when", "'queue_kind' is not a parameter"]),
        ("manet", lambda t: t.replace("[[params]]", "[[params]\n", 1), []),  # TOML syntax error
        ("manet", lambda t: t.replace('compare = { by = "routing"', 'compare = { by = "protocol"', 1),
         ["manet-routing", "compare", "'protocol' is neither a grid parameter"]),
        ("manet", lambda t: t.replace('metrics = ["run_pdr"', 'metrics = ["run_pdrr"', 1),
         ["compare", "'run_pdrr' is not a metric"]),
        ("manet", lambda t: t.replace('compare = { by = "routing"', 'compare = { versus = "x", by = "routing"', 1),
         ["compare", "unknown key 'versus'"]),
    ],
)
def test_bad_declaration_refused_with_file_name(tmp_path, sid, edit, fragments):
    path = _copy_scenario(tmp_path, sid, edit)
    with pytest.raises(ScenarioFileError) as exc:
        load_scenario_file(path)
    msg = str(exc.value)
    assert msg.startswith(f"{sid}.toml: ") and "\n" not in msg, msg
    for frag in fragments:
        assert frag in msg, (frag, msg)
    with pytest.raises(ScenarioFileError, match=f"^{sid}.toml: "):
        load_scenarios(tmp_path)


def test_duplicate_experiment_name_refused(tmp_path):
    _copy_scenario(tmp_path, "cbr-variants", lambda t: t)
    _copy_scenario(tmp_path, "cbr-fairness", lambda t: t.replace('name = "cbr-exp2"', 'name = "cbr-exp1"'))
    with pytest.raises(ScenarioFileError, match="experiment 'cbr-exp1' is also declared by cbr-variants.toml"):
        load_scenarios(tmp_path)


def test_range_grid_is_the_listed_values(tmp_path):
    """A {start, stop, step} grid (stop included) reads as the values written out, also as
    items of a list; seeds may be a range too."""
    rates = "cbr_rate_mbps = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, { start = 7.5, stop = 10.0, step = 0.1 }]"
    path = _copy_scenario(tmp_path, "cbr-variants", lambda t: t.replace(
        rates, "cbr_rate_mbps = { start = 2.5, stop = 3.0, step = 0.25 }", 1).replace(
        rates, "cbr_rate_mbps = [1.0, { start = 7.5, stop = 8.0, step = 0.1 }, 9.5]", 1).replace(
        "seeds = [1, 2, 3, 4, 5]", "seeds = { start = 1, stop = 7, step = 3 }", 1))
    _, exps, _ = load_scenario_file(path)
    assert [e.grid["cbr_rate_mbps"] for e in exps[:2]] == [[2.5, 2.75, 3.0], [1.0, 7.5, 7.6, 7.7, 7.8, 7.9, 8.0, 9.5]]
    assert [e.seeds for e in exps[:2]] == [[1, 4, 7], [1, 2, 3, 4, 5]]


def test_check_in_data_refuses_a_bad_combination(tmp_path, monkeypatch):
    """A check written in a declaration file (a new one, on two parameters with a sum and a
    negative number) refuses exactly the combinations where it is false, with a one-line
    message naming the values."""
    check = ('\n[[checks]]\nexpr = "cbr_start - -1 + window <= (duration - 0.5) + 10"\n'
             'message = "cbr_start ({cbr_start}) + window ({window}) + 1 must be <= duration + 9.5"\n')
    path = _copy_scenario(tmp_path, "cbr-variants", lambda t: t.replace("\n[[experiments]]", check + "\n[[experiments]]", 1))
    sc, _, _ = load_scenario_file(path)
    c = sc.checks[-1]  # the new one, after the file's own
    for late, window, duration in [(3.0, 20, 10.0), (3.0, 15, 10.0), (3.0, 16, 10.0), (0.0, 1, 0.5), (8.5, 1, 1.0)]:
        params = {**sc.defaults(), "cbr_start": late, "window": window, "duration": duration}
        assert c.holds(params) == (late + 1 + window <= duration + 9.5), (late, window, duration)
    bad = {**sc.defaults(), "cbr_start": 3.0, "window": 16, "duration": 10.0}
    assert c.error(bad) == "cbr_start (3.0) + window (16) + 1 must be <= duration + 9.5"
    # resolve_params applies it
    monkeypatch.setitem(scenarios_mod.SCENARIOS, "cbr-variants", sc)
    assert resolve_params("cbr-variants", {"cbr_start": "3", "window": "15", "duration": "10"})["window"] == 15
    with pytest.raises(ValueError) as exc:
        resolve_params("cbr-variants", {"cbr_start": "3", "window": "16", "duration": "10"})
    assert str(exc.value) == "cbr-variants: cbr_start (3.0) + window (16) + 1 must be <= duration + 9.5"


@pytest.mark.parametrize("sid, overrides, message", [
    ("queue-influence", {"cbr_start": "20", "cbr_stop": "10"},
     "queue-influence: cbr_stop (10.0) must be >= cbr_start (20.0)"),
    ("reno-vs-vegas", {"n_reno": "0", "n_vegas": "0"},
     "reno-vs-vegas: need at least one flow (n_reno + n_vegas >= 1)"),
    ("manet", {"cbr_flows": "0", "tcp_flows": "0"},
     "manet: need at least one flow (cbr_flows + tcp_flows >= 1)"),
])
def test_bundled_checks(sid, overrides, message):
    with pytest.raises(ValueError) as exc:
        resolve_params(sid, overrides)
    assert str(exc.value) == message
    # the boundary is allowed
    edge = {k: "10" if k == "cbr_start" else "1" if k in ("n_reno", "tcp_flows") else v for k, v in overrides.items()}
    resolve_params(sid, edge)


@pytest.mark.parametrize("sid, labels, want", [
    ("newreno-vs-reno", {"config": "red"}, "RED"),
    ("newreno-vs-reno", {"config": "droptail"}, "DropTail"),
    ("newreno-vs-reno", {"config": "multi"}, "DropTail (2 bottlenecks)"),
    ("newreno-vs-reno", {"config": "other"}, None),
    ("newreno-vs-reno", {}, None),
    ("queue-influence", {"queue": "RED"}, "RED"),
    ("reno-vs-vegas", {"queue": "DropTail"}, "DropTail"),
    ("manet", {"routing": "DSR"}, "DSR"),
    ("cbr-variants", {"queue": "RED"}, None),
    ("homogeneous-dumbbell", {}, None),
    ("no-such-scenario", {"queue": "RED"}, None),
    (None, {}, None),
])
def test_series_value(sid, labels, want):
    assert series_value(sid, labels) == want


def test_check_with_when_applies_only_to_those_runs(tmp_path, monkeypatch):
    """A check with `when` (here: only with queue=RED) refuses a bad combination there and
    lets it through with the other queue."""
    path = _copy_scenario(tmp_path, "queue-influence", lambda t: t.replace(
        "message =", 'when = { queue = "RED", red_links = 5 }\nmessage =', 1))
    sc, _, _ = load_scenario_file(path)
    monkeypatch.setitem(scenarios_mod.SCENARIOS, "queue-influence", sc)
    bad = {"cbr_start": "20", "cbr_stop": "10"}
    assert resolve_params("queue-influence", {**bad, "queue": "DropTail"})["cbr_stop"] == 10.0
    assert resolve_params("queue-influence", {**bad, "queue": "RED", "red_links": "4"})["cbr_stop"] == 10.0
    with pytest.raises(ValueError, match=r"^queue-influence: cbr_stop \(10.0\) must be >= cbr_start \(20.0\)$"):
        resolve_params("queue-influence", {**bad, "queue": "RED", "red_links": "5"})


@needs_ns
def test_reused_trace_files_are_written_in_place_and_an_emptied_one_is_not_a_trace(tmp_path):
    """reuse_files (a sweep reusing its staging directories): the trace files an earlier run
    left are emptied, not removed, and ns-2 writes into them (the same inodes: no file made,
    ~0.5 ms of CPU each on ext4 without a journal); one the scenario does not write (manet
    without TCP flows: no cwnd.tr, no queue.tr) stays empty and is not returned."""
    out = tmp_path / "out"
    out.mkdir()
    inodes = {}
    for name in ("packets.tr", "cwnd.tr", "queue.tr"):
        (out / name).write_text("# an earlier run's trace\n0.5 1 2 3\n")
        inodes[name] = (out / name).stat().st_ino
    overrides = {**SHORT["manet"], "duration": "3", "tcp_flows": "0", "cbr_flows": "1"}
    paths = run("manet", overrides, 1, out, reuse_files=True)
    assert [p.name for p in paths] == ["packets.tr"]
    assert read_meta(paths[0])["scenario"] == "manet"
    assert {name: (out / name).stat().st_ino for name in inodes} == inodes
    assert (out / "cwnd.tr").stat().st_size == 0 and (out / "queue.tr").stat().st_size == 0
