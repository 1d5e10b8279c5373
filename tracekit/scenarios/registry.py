"""The bundled ns-2 scenarios and paper experiments, as data.

Every scenario is one Tcl script under ``tracekit/scenarios/tcl/`` that takes
``key=value`` words on the ns command line.  The parameters declared here must
match the ``tk_parse_args`` spec at the top of the script (same names, types and
defaults); ``tests/test_scenarios.py`` checks that they do.

Nothing here imports the CLI or the dashboard: they read ``SCENARIOS`` and
``EXPERIMENTS`` and call :func:`resolve_params`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TCL_DIR = Path(__file__).resolve().parent / "tcl"

PARAM_TYPES = ("int", "float", "choice", "str")
# Accepted by every script but not scenario parameters: out_dir is chosen by the
# runner, seed is passed separately (run_scenario_traces(seed=...)).
RESERVED = ("out_dir", "seed")


@dataclass(frozen=True)
class Param:
    name: str
    type: str  # 'int' | 'float' | 'choice' | 'str'
    default: Any
    choices: tuple[str, ...] | None = None
    min: float | None = None
    max: float | None = None
    unit: str = ""
    help: str = ""

    def allowed(self) -> str:
        """Human-readable description of the allowed values."""
        if self.type == "choice":
            return "one of " + ", ".join(self.choices or ())
        kind = "an integer" if self.type == "int" else "a number" if self.type == "float" else "a string"
        lo = "" if self.min is None else f"{_fmt(self.min)}"
        hi = "" if self.max is None else f"{_fmt(self.max)}"
        if lo and hi:
            kind += f" in [{lo}, {hi}]"
        elif lo:
            kind += f" >= {lo}"
        elif hi:
            kind += f" <= {hi}"
        if self.unit:
            kind += f" ({self.unit})"
        return kind

    def parse(self, raw: Any, scenario_id: str = "") -> Any:
        """Convert ``raw`` (usually a string from the command line) to this
        parameter's type and check it; raise ValueError with a one-line reason."""
        where = f"{scenario_id}: " if scenario_id else ""
        text = str(raw).strip()
        if self.type == "choice":
            choices = self.choices or ()
            if text not in choices:
                # be lenient about case, but report the canonical spelling
                folded = {c.lower(): c for c in choices}
                if text.lower() in folded:
                    return folded[text.lower()]
                raise ValueError(f"{where}bad value {text!r} for {self.name}: must be {self.allowed()}")
            return text
        if self.type == "str":
            if not text or any(c.isspace() for c in text):
                raise ValueError(f"{where}bad value {text!r} for {self.name}: must be a non-empty string without spaces")
            return text
        if self.type == "int":
            try:
                value: Any = int(text, 10)
            except ValueError:
                try:
                    f = float(text)
                except ValueError:
                    f = math.nan
                if math.isfinite(f) and f == int(f):
                    value = int(f)
                else:
                    raise ValueError(f"{where}bad value {text!r} for {self.name}: must be {self.allowed()}") from None
        else:
            try:
                value = float(text)
            except ValueError:
                raise ValueError(f"{where}bad value {text!r} for {self.name}: must be {self.allowed()}") from None
            if not math.isfinite(value):
                raise ValueError(f"{where}bad value {text!r} for {self.name}: must be {self.allowed()}")
        if (self.min is not None and value < self.min) or (self.max is not None and value > self.max):
            raise ValueError(f"{where}value {text} for {self.name} is out of range: must be {self.allowed()}")
        return value


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    paper: str
    experiment: str
    description: str
    script: str  # file name under TCL_DIR
    params: tuple[Param, ...]
    # the trace files the script always writes into out_dir (the runner fails without
    # them); it may write others of runner.TRACE_FILES (manet: cwnd.tr with TCP flows)
    trace_files: tuple[str, ...] = ("packets.tr", "cwnd.tr", "queue.tr")

    @property
    def script_path(self) -> Path:
        return TCL_DIR / self.script

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def defaults(self) -> dict[str, Any]:
        return {p.name: p.default for p in self.params}


@dataclass(frozen=True)
class Experiment:
    name: str
    scenario: str
    grid: dict[str, list]
    seeds: list[int]
    description: str
    fixed: dict[str, Any] = field(default_factory=dict)  # params held constant (not defaults)

    def n_runs(self) -> int:
        n = len(self.seeds)
        for values in self.grid.values():
            n *= len(values)
        return n


# --------------------------------------------------------------------------
# parameter helpers

TCP5 = ("Tahoe", "Reno", "Newreno", "Vegas", "Sack1")


def _duration(default: float, help: str = "") -> Param:
    return Param("duration", "float", default, min=0.001, max=100000.0, unit="s",
                 help=help or "the sources stop at this time; the run (and its traces) ends drain_s later")


def _drain(default: float) -> Param:
    return Param("drain_s", "float", default, min=0.0, max=1000.0, unit="s",
                 help="the run goes on this long after the sources stop, so that every packet still in the "
                      "network arrives or is dropped before the traces end (stop_s = duration + drain_s)")


def _jitter(default: float) -> Param:
    return Param("start_jitter", "float", default, min=0.0, max=10.0, unit="s",
                 help="each source starts at a random time in [0, start_jitter) after its nominal start, "
                      "drawn from the seeded RNG (0 = fixed start times)")


def _cbr_random() -> Param:
    return Param("cbr_random", "int", 1, min=0, max=1,
                 help="ns-2 CBR random_: 1 = each inter-packet interval drawn uniformly from 0.5..1.5 times "
                      "the nominal one (same mean rate) from the seeded RNG; 0 = strictly periodic")


def _variant(choices: tuple[str, ...], default: str = "Reno") -> Param:
    return Param("variant", "choice", default, choices=choices,
                 help="TCP sender (Agent/TCP = Tahoe, /Reno, /Newreno, /Vegas, /Sack1 with a Sack1 sink)")


def _int(name, default, lo=None, hi=None, unit="", help="") -> Param:
    return Param(name, "int", default, min=lo, max=hi, unit=unit, help=help)


def _float(name, default, lo=None, hi=None, unit="", help="") -> Param:
    return Param(name, "float", default, min=lo, max=hi, unit=unit, help=help)


def _choice(name, default, choices, help="") -> Param:
    return Param(name, "choice", default, choices=tuple(choices), help=help)


# the parameters cbr-variants and cbr-fairness share: the six-node topology of papers 002/004
_SIX_NODE_COMMON = (
    _int("cbr_packet_size", 1000, 1, 65000, "bytes", "CBR packet size (not in paper)"),
    _int("packet_size", 1000, 1, 65000, "bytes", "TCP packetSize_ (payload; ns default)"),
    _int("window", 20, 1, 1000000, "packets", "TCP window_ (paper 004: 20)"),
    _int("maxcwnd", 0, 0, 1000000, "packets", "TCP maxcwnd_ (paper 004: 0 = unlimited)"),
    _float("bandwidth_mbps", 10.0, 0.001, 100000.0, "Mb/s", "every link (paper: 10)"),
    _float("delay_ms", 10.0, 0.0, 10000.0, "ms", "every link (paper: 10)"),
    _int("queue_limit", 50, 1, 100000, "packets", "DropTail buffer per link direction (ns default)"),
    _jitter(0.5),
    _drain(1.0),
)

PAIRS = tuple(f"{a}-{b}" for a in TCP5 for b in TCP5)

PAPER_000 = "000: T Nishitha, 'A Comparative Analysis of TCP Tahoe, Reno, New-Reno, SACK and Vegas in Homogeneous Networks'"
PAPER_001 = "001: H Dave, P Dihulia, V Gupta, 'Performance Analysis by Varying Parameters of TCP Variants Using NS-2 Simulator'"
PAPER_002 = "002: C Lees, 'An Analysis of TCP Variants under a Constant Bit Rate Flow' (CS5700 HW3)"
PAPER_003 = "003: T Chowdhury, M J Alam, 'Performance Evaluation of TCP Vegas over TCP Reno and TCP New Reno over TCP Reno'"
PAPER_004 = "004: IJSER 7(4) 2016, TCP variants under congestion, fairness and queueing (Tahoe/Reno/NewReno/Vegas/SACK)"
BROCH_1998 = ("J Broch, D A Maltz, D B Johnson, Y-C Hu, J Jetcheva, 'A Performance Comparison of Multi-Hop "
              "Wireless Ad Hoc Network Routing Protocols', MobiCom 1998")

_SCENARIO_LIST = [
    Scenario(
        id="homogeneous-dumbbell",
        title="Two senders of the same TCP variant through a 2 Mb/50 ms bottleneck",
        paper=PAPER_000,
        experiment="homogeneous networks, Tables 3.1-3.3 and 5.1-5.5",
        description=(
            "Dumbbell S1,S2 -> R1 == R2 -> D1,D2 (ns nodes 0,1 -> 2 == 3 -> 4,5). Paper values: "
            "bottleneck 2 Mb/50 ms; sender and receiver LAN links Ethernet 10 Mb/10 ms or Fast "
            "Ethernet 100 Mb/1 ms (the four environments of Table 3.1); both senders run the same "
            "variant (Table 3.3), FTP, plain TCPSink (Sack1 sink for Sack1). Our choices (the paper "
            "gives none): window_ 100 packets, so that the two windows exceed the path's ~35-packet "
            "bandwidth-delay product plus the buffer and the flows keep losing packets and recovering "
            "(with ns's default window_ 20 no packet is ever dropped and the five variants are "
            "identical; the paper's PDR of 0.996-0.999 shows losses); ns defaults for packet size "
            "(1000 B payload) and buffer (50 packets, DropTail, both directions of the bottleneck); "
            "20 s of traffic. A seed varies the two flows' start times, drawn uniformly from [0, 1) s "
            "(start_jitter), which changes when and whose packets the full buffer drops. Sources stop "
            "at duration, the run ends drain_s = 1 s later (a full buffer empties in 0.2 s). The "
            "paper's 'average throughput' of ~1964-1992 kb/s is the sum over both flows. Flows: fid "
            "1 = S1->D1, fid 2 = S2->D2. Queue trace: link 2->3."
        ),
        script="homogeneous-dumbbell.tcl",
        params=(
            _duration(20.0),
            _variant(TCP5),
            _choice("sender_lan", "ethernet", ("ethernet", "fast_ethernet"),
                    help="sender LAN links: ethernet = 10Mb/10ms, fast_ethernet = 100Mb/1ms"),
            _choice("receiver_lan", "ethernet", ("ethernet", "fast_ethernet"),
                    help="receiver LAN links: ethernet = 10Mb/10ms, fast_ethernet = 100Mb/1ms"),
            _float("bottleneck_mbps", 2.0, 0.001, 100000.0, "Mb/s", "bottleneck bandwidth (paper: 2)"),
            _float("bottleneck_delay_ms", 50.0, 0.0, 10000.0, "ms", "bottleneck delay (paper: 50)"),
            _int("queue_limit", 50, 1, 100000, "packets", "bottleneck DropTail buffer (not in paper; ns default)"),
            _int("packet_size", 1000, 1, 65000, "bytes", "TCP packetSize_ (payload; not in paper; ns default)"),
            _int("window", 100, 1, 1000000, "packets", "TCP window_ (not in paper; ours: large enough for losses)"),
            _jitter(1.0),
            _drain(1.0),
        ),
    ),
    Scenario(
        id="varying-parameters",
        title="One TCP flow over sender-router-receiver at 1 Mb/10 ms; error rate, packet size, window",
        paper=PAPER_001,
        experiment="throughput vs error rate (Figs 2-6), packet size (Fig 7), window size (Fig 8)",
        description=(
            "sender (0) -> router (1) -> receiver (2), both links 1 Mb/10 ms DropTail, one FTP/TCP "
            "flow (fid 1), 5 s run (paper values). error_rate is a uniform per-packet loss "
            "(ErrorModel, unit pkt) inserted with `lossmodel` at the head of link 1->2: a lost packet "
            "shows only a `d` on 1->2, no `+`. Defaults: error_rate 0 (the paper's 0.9 Mb/s baseline), "
            "packet size 1000 B and window 20 ('generally window size is kept 20'). Our choices: loss "
            "on the router->receiver link; buffer 10 packets (the paper gives none; with ns's default 50 "
            "a 20-packet window never overflows the ~7-packet path plus buffer, no packet is lost and "
            "the variants are identical: with 10, windows above ~17 packets overflow it and the variants' "
            "loss recovery shows). Both links are equally fast, so the queue builds at the sender's own "
            "interface (0->1); queue.tr traces 0->1 and 1->2. A seed varies the flow's start time "
            "(uniform in [0, 1) s) and the error model's losses. The source stops at duration, the run "
            "ends drain_s = 1 s later. The paper's 'direct link between node 1 and node 3' is not built "
            "(it would bypass the router)."
        ),
        script="varying-parameters.tcl",
        params=(
            _duration(5.0),
            _variant(("Tahoe", "Reno", "Newreno", "Sack1")),
            _float("error_rate", 0.0, 0.0, 0.99, "fraction", "per-packet loss probability on the router->receiver link"),
            _int("packet_size", 1000, 1, 65000, "bytes", "TCP packetSize_ (payload)"),
            _int("window", 20, 1, 1000000, "packets", "TCP window_"),
            _float("bandwidth_mbps", 1.0, 0.001, 100000.0, "Mb/s", "both links (paper: 1)"),
            _float("delay_ms", 10.0, 0.0, 10000.0, "ms", "both links (paper: 10)"),
            _int("queue_limit", 10, 1, 100000, "packets", "DropTail buffer of every link direction (not in paper; ours)"),
            _jitter(1.0),
            _drain(1.0),
        ),
    ),
    Scenario(
        id="cbr-variants",
        title="One TCP flow N1->N4 against a CBR flow N2->N3 of a given rate",
        paper=PAPER_002 + "; " + PAPER_004,
        experiment="experiment 1: TCP performance under congestion",
        description=(
            "Six nodes N1..N6 (ns nodes 0..5), links N1-N2, N5-N2, N2-N3, N3-N4, N3-N6, all 10 Mb/10 ms "
            "DropTail (paper values). TCP N1->N4 (fid 1), FTP; UDP/CBR N2->N3 (fid 2) at cbr_rate_mbps, "
            "on from cbr_start to cbr_stop (both in the run's labels). TCP window_ 20, maxcwnd_ 0 (paper "
            "004). Paper 004's three conditions: cbr_start=0 (TCP and CBR start and end together), "
            "cbr_start=3 (CBR after TCP has stabilised; 3 s is our choice, the start paper 002 uses in "
            "its experiment 3), cbr_profile=decreasing (the CBR rate starts at cbr_rate_mbps and falls "
            "by 0.1 Mb/s every cbr_step_s down to cbr_rate_end_mbps: our reading of 'decrease the CBR "
            "rate from 10 Mbps to 1 Mbps', since separate runs at decreasing rates would just repeat "
            "the first condition). Window 20 and the ~63 ms RTT cap TCP at ~2.6 Mb/s, so packets are "
            "lost only above a CBR of ~8.3 Mb/s: that is where the variants differ (paper 004: 'for "
            "CBR <= 7.5 Mbps the throughput of all variants is almost similar'; paper 002: no loss "
            "below 9 Mb/s). Our choices: 10 s of traffic (paper 002's '10 second trial'), 1000-byte "
            "TCP and CBR packets, 50-packet buffers (ns default), default CBR 9 Mb/s (in the loss "
            "region). A seed varies the CBR's inter-packet intervals (ns-2 random_, uniform 0.5..1.5 "
            "times the nominal one, same mean rate: the papers do not say their CBR is strictly "
            "periodic, and a periodic CBR against a deterministic TCP gives byte-identical runs) and "
            "the start times of TCP and CBR (uniform in [0, 0.5) s after their nominal starts). "
            "Sources stop at duration, the run ends drain_s = 1 s later (a full buffer empties in "
            "40 ms; TCP's last retransmissions finish within ~0.3 s). Queue trace: N2->N3."
        ),
        script="cbr-variants.tcl",
        params=(
            _duration(10.0),
            _variant(("Tahoe", "Reno", "Newreno", "Vegas")),
            _float("cbr_rate_mbps", 9.0, 0.001, 100000.0, "Mb/s", "CBR rate (paper 004: 1..10 step 0.1; 002: 2,4,6,8,9,10)"),
            _float("cbr_start", 0.0, 0.0, 100000.0, "s", "CBR start (004 condition 1: 0, with TCP; condition 2: after TCP, ours 3)"),
            _float("cbr_stop", 10.0, 0.0, 100000.0, "s", "CBR stop (it stops at duration if that is earlier)"),
            _choice("cbr_profile", "constant", ("constant", "decreasing"),
                    help="decreasing: the rate falls by 0.1 Mb/s every cbr_step_s from cbr_rate_mbps to cbr_rate_end_mbps (004 condition 3)"),
            _float("cbr_rate_end_mbps", 1.0, 0.1, 100000.0, "Mb/s", "last CBR rate of the decreasing profile (004: 1)"),
            _float("cbr_step_s", 1.0, 0.001, 100000.0, "s", "time at each CBR rate of the decreasing profile (ours)"),
            _cbr_random(),
            *_SIX_NODE_COMMON,
        ),
    ),
    Scenario(
        id="cbr-fairness",
        title="Two TCP flows (N1->N4, N5->N6) of a chosen variant pair sharing N2-N3 with a CBR flow",
        paper=PAPER_002 + "; " + PAPER_004,
        experiment="experiment 2: fairness between TCP variants",
        description=(
            "Same six-node 10 Mb/10 ms DropTail topology as cbr-variants. TCP1 N1->N4 (fid 1) runs the "
            "first variant of `pair`, TCP2 N5->N6 (fid 2) the second, CBR N2->N3 (fid 3). The papers' "
            "pairs are Reno-Reno, Newreno-Reno, Vegas-Vegas, Newreno-Vegas (any pair of Tahoe, Reno, "
            "Newreno, Vegas, Sack1 is accepted; run a mixed pair in both orders, e.g. Newreno-Reno and "
            "Reno-Newreno, to tell a variant's advantage from its position). TCP window_ 20, maxcwnd_ 0 "
            "(paper 004). Two windows of 20 fill ~5.2 Mb/s, so packets are lost above a CBR of ~6.5 "
            "Mb/s (paper 004 sees Reno fall behind NewReno from 6.5 Mb/s). Our choices: 10 s of "
            "traffic, 1000-byte packets, 50-packet buffers, CBR default 8 Mb/s, on from cbr_start to "
            "cbr_stop (labels). A seed varies the CBR's inter-packet intervals (ns-2 random_, uniform "
            "0.5..1.5 times the nominal one, same mean rate) and the three start times (uniform in [0, "
            "0.5) s): with fixed starts and a periodic CBR the first flow to start keeps an advantage "
            "in every run. Sources stop at duration, the run ends drain_s = 1 s later. Queue trace: "
            "N2->N3."
        ),
        script="cbr-fairness.tcl",
        params=(
            _duration(10.0),
            _choice("pair", "Reno-Reno", PAIRS, help="TCP1-TCP2 variants, e.g. Newreno-Vegas"),
            _float("cbr_rate_mbps", 8.0, 0.001, 100000.0, "Mb/s", "CBR rate (papers: 1..10)"),
            _float("cbr_start", 0.0, 0.0, 100000.0, "s", "CBR start (papers: with the TCP flows)"),
            _float("cbr_stop", 10.0, 0.0, 100000.0, "s", "CBR stop (it stops at duration if that is earlier)"),
            _cbr_random(),
            *_SIX_NODE_COMMON,
        ),
    ),
    Scenario(
        id="queue-influence",
        title="TCP Reno or SACK with a CBR flow that starts and stops mid-run, DropTail vs RED",
        paper=PAPER_004 + "; " + PAPER_002,
        experiment="experiment 3: influence of queueing",
        description=(
            "Six-node 10 Mb/10 ms topology; TCP N1->N4 (fid 1, Reno or Sack1 with a Sack1 sink), CBR "
            "N5->N6 (fid 2). Defaults follow paper 004: 30 s, CBR 1 Mb/s from 11 s to 25 s, TCP "
            "window_ 120, maxcwnd_ 150. queue=RED puts RED on the first red_links links in the order "
            "N1-N2, N5-N2, N2-N3, N3-N4, N3-N6 (paper 002 varies this count 0..5, with a 9 Mb/s CBR "
            "starting at 3 s); default 5 = all links; queue=DropTail ignores red_links. RED settings are "
            "ours (the papers give none): packet mode, thresh 5, maxthresh 15 packets, q_weight 0.002, "
            "max_p 0.1, gentle (ns-2.35 defaults would be byte mode with automatic thresholds). 1000-byte "
            "packets, 50-packet buffers. The CBR on-period (cbr_start, cbr_stop) is in the run's labels "
            "for 'throughput during the CBR on-period'. A seed varies RED's early drops (drawn from "
            "ns-2's default RNG, seeded with the seed), the CBR's inter-packet intervals (ns-2 random_, "
            "same mean rate) and the start times (uniform in [0, 0.5) s after the nominal ones). The "
            "TCP source stops at duration (004: 'TCP flow at 30 seconds'), the run ends drain_s = 1 s "
            "later. Queue traces: N1->N2 (TCP's first hop) and N2->N3 (shared)."
        ),
        script="queue-influence.tcl",
        params=(
            _duration(30.0),
            _variant(("Reno", "Sack1")),
            _choice("queue", "DropTail", ("DropTail", "RED"), help="queue discipline"),
            _int("red_links", 5, 0, 5, "links", "with queue=RED: how many links (in the order N1-N2, N5-N2, N2-N3, N3-N4, N3-N6) are RED"),
            _float("red_thresh", 5.0, 0.0, 100000.0, "packets", "RED min threshold (not in paper)"),
            _float("red_maxthresh", 15.0, 0.0, 100000.0, "packets", "RED max threshold (not in paper)"),
            _float("cbr_rate_mbps", 1.0, 0.001, 100000.0, "Mb/s", "CBR rate (004: 1; 002: 9)"),
            _float("cbr_start", 11.0, 0.0, 100000.0, "s", "CBR start (004: 11; 002: 3)"),
            _float("cbr_stop", 25.0, 0.0, 100000.0, "s", "CBR stop (004: 25)"),
            _cbr_random(),
            _int("cbr_packet_size", 1000, 1, 65000, "bytes", "CBR packet size (not in paper)"),
            _int("packet_size", 1000, 1, 65000, "bytes", "TCP packetSize_ (payload; ns default)"),
            _int("window", 120, 1, 1000000, "packets", "TCP window_ (004: 120)"),
            _int("maxcwnd", 150, 0, 1000000, "packets", "TCP maxcwnd_ (004: 150)"),
            _float("bandwidth_mbps", 10.0, 0.001, 100000.0, "Mb/s", "every link (paper: 10)"),
            _float("delay_ms", 10.0, 0.0, 10000.0, "ms", "every link (paper: 10)"),
            _int("queue_limit", 50, 1, 100000, "packets", "buffer per link direction (ns default)"),
            _jitter(0.5),
            _drain(1.0),
        ),
    ),
    Scenario(
        id="reno-vs-vegas",
        title="TCP Reno and TCP Vegas sharing a 0.3 Mb/200 ms bottleneck with a 10-packet buffer",
        paper=PAPER_003,
        experiment="first part: TCP Vegas over TCP Reno, DropTail and RED (Figs 4-7, 12-14)",
        description=(
            "Dumbbell: senders -> R1 (node 0) == R2 (node 1) -> receivers. Paper values: access links "
            "2 Mb/10 ms, bottleneck 0.3 Mb/200 ms, buffer 10 packets, 552-byte packets (ns packetSize_: "
            "Reno segments are 592 B on the wire, Vegas 552 B), DropTail or RED with min threshold 5. "
            "Reno flows get fids 1..n_reno, Vegas flows the next fids. Receiver window: the paper says "
            "8000 bytes, but with a literal 14-packet window two flows never fill the buffer and no loss "
            "occurs, contradicting its Reno sawtooth; the numbers (552-byte packets, window 8000) match the widespread ns-2 tutorial scripts that set "
            "window_ 8000 (packets, i.e. unlimited), which we use as default (window=14 gives the literal "
            "reading). Our choices: RED max threshold 10 packets (the paper's '0.6 packets' is below the "
            "minimum), packet mode, q_weight 0.002; Vegas alpha/beta 1/3 (ns defaults); Vegas joins at "
            "vegas_start = 5 s ('when connection 2 joins the network'); 100 s of traffic. A seed varies "
            "the start times (uniform in [0, 1) s after the nominal ones) and, with RED, its early drops. "
            "Sources stop at duration, the run ends drain_s = 3 s later (the 0.3 Mb/s bottleneck "
            "needs 0.16 s to empty its buffer; the ~0.45 s RTT makes the last retransmissions slow). "
            "Queue trace: R1->R2."
        ),
        script="reno-vs-vegas.tcl",
        params=(
            _duration(100.0),
            _choice("queue", "DropTail", ("DropTail", "RED"), help="bottleneck queue discipline"),
            _int("n_reno", 1, 0, 50, "flows", "number of Reno flows"),
            _int("n_vegas", 1, 0, 50, "flows", "number of Vegas flows"),
            _float("vegas_start", 5.0, 0.0, 100000.0, "s", "start time of the Vegas flows (Reno starts at 0)"),
            _float("access_mbps", 2.0, 0.001, 100000.0, "Mb/s", "access links (paper: 2)"),
            _float("access_delay_ms", 10.0, 0.0, 10000.0, "ms", "access links (paper: 10)"),
            _float("bottleneck_mbps", 0.3, 0.001, 100000.0, "Mb/s", "bottleneck (paper: 0.3)"),
            _float("bottleneck_delay_ms", 200.0, 0.0, 10000.0, "ms", "bottleneck (paper: 200)"),
            _int("queue_limit", 10, 1, 100000, "packets", "bottleneck buffer (paper: 10)"),
            _int("packet_size", 552, 1, 65000, "bytes", "TCP packetSize_ (paper: 552)"),
            _int("window", 8000, 1, 1000000, "packets", "TCP window_ (see description; 14 = literal 8000 bytes)"),
            _float("red_thresh", 5.0, 0.0, 100000.0, "packets", "RED min threshold (paper: 5)"),
            _float("red_maxthresh", 10.0, 0.0, 100000.0, "packets", "RED max threshold (paper's value unusable; ours)"),
            _int("vegas_alpha", 1, 0, 1000, "packets", "Vegas v_alpha_ (ns default)"),
            _int("vegas_beta", 3, 0, 1000, "packets", "Vegas v_beta_ (ns default)"),
            _jitter(1.0),
            _drain(3.0),
        ),
    ),
    Scenario(
        id="newreno-vs-reno",
        title="TCP NewReno vs Reno flows with random FTP starts and a small UDP flow; three bottleneck setups",
        paper=PAPER_003,
        experiment="second part: TCP NewReno over TCP Reno, DropTail / RED / multiple bottleneck (Figs 8-11, 15-20)",
        description=(
            "Senders -> R1 == R2 [== R3] -> receivers; every flow crosses every bottleneck. config (paper "
            "values): droptail = one 0.7 Mb bottleneck, 20-packet buffer, round-trip propagation 20 ms "
            "(bottleneck 8 ms + 1 ms access links), 500-byte packets, window 8 KB = 16 packets; red = one "
            "2 Mb/1 ms RED bottleneck (min 5, max 15 packets), 50-packet buffer, 500-byte packets, window "
            "2 KB = 4 packets, 25 flows per variant; multi = two 0.3 Mb/20 ms DropTail bottlenecks in "
            "series, 10-packet buffers, 552-byte packets, window 8 KB = 14 packets. FTP flows start at "
            "uniformly random times in [0, 7) s from the seeded RNG; one UDP/CBR flow of 0.01 Mb/s, "
            "1000-byte packets, on a 7 ms access link (paper values). fids: NewReno 1..k, Reno k+1..2k, "
            "extra flows 2k+1..2k+e, CBR last. flows_per_variant=0 means the paper's count: 25 for red, "
            "1 for droptail/multi ('two long-duration flows: one NewReno flow and one Reno flow'). The "
            "paper also says 'three TCP sources': extra_flows (default 1) more TCP sources, plain TCP "
            "(Tahoe, neither compared variant: our choice), start like the others and send for "
            "extra_duration_s = 10 s (ours: shorter than the two long-duration flows). "
            "window=0 means the paper's window in bytes divided by the packet size; many ns-2 "
            "tutorial scripts with this setup (552-byte packets, 0.01 Mb/s CBR) write `window_ 8000`, "
            "which ns reads as packets -- set window=8000 for that reading. A seed varies the start "
            "times (paper: uniform in [0, 7) s) and, with RED, its early drops; which flow starts first "
            "decides much of the outcome, so compare over many seeds (the experiment uses ten). Our "
            "choices: 10 Mb/1 ms access links, RED q_weight 0.002 in packet mode, 50 s of traffic; "
            "sources stop at duration, the run ends drain_s = 2 s later (the 0.3 Mb/s bottlenecks of "
            "multi need 0.15 s each to empty). Queue traces: every bottleneck link (R1->R2, and R2->R3 "
            "for multi)."
        ),
        script="newreno-vs-reno.tcl",
        params=(
            _duration(50.0),
            _choice("config", "droptail", ("droptail", "red", "multi"), help="which of the paper's three setups"),
            _int("flows_per_variant", 0, 0, 100, "flows", "NewReno flows = Reno flows; 0 = paper value for config"),
            _float("start_max", 7.0, 0.0, 100000.0, "s", "FTP start times ~ Uniform[0, start_max) (paper: 7)"),
            _float("udp_rate_mbps", 0.01, 0.0001, 100000.0, "Mb/s", "UDP/CBR rate (paper: 0.01)"),
            _int("udp_packet_size", 1000, 1, 65000, "bytes", "UDP/CBR packet size (paper: 1 KB)"),
            _float("access_mbps", 10.0, 0.001, 100000.0, "Mb/s", "access links (not in paper)"),
            _int("window", 0, 0, 1000000, "packets",
                 "TCP window_; 0 = the paper's window in bytes / packet size for the config (16, 4, 14)"),
            _int("extra_flows", 1, 0, 100, "flows", "TCP sources besides the NewReno and Reno ones (paper: 'three TCP sources')"),
            _choice("extra_variant", "Tahoe", TCP5, help="variant of the extra TCP sources (ours: plain TCP)"),
            _float("extra_duration_s", 10.0, 0.0, 100000.0, "s", "how long each extra TCP source sends (ours)"),
            _drain(2.0),
        ),
    ),
    Scenario(
        id="manet",
        title="Mobile ad-hoc network, random waypoint, CBR and TCP flows; AODV, DSDV or DSR routing",
        paper=BROCH_1998 + " (in its style; not a reproduction of its numbers)",
        experiment="comparison of ad-hoc routing protocols: delivery ratio, routing overhead, delay vs mobility",
        description=(
            "nodes mobile nodes on a flat width_m x height_m area; 802.11 MAC, TwoRayGround, "
            "OmniAntenna, LL, interface queue PriQueue of 50 packets (CMUPriQueue for DSR), all ns-2.35 "
            "defaults otherwise (2 Mb/s, RTS/CTS, 250 m range); agent, router, MAC and movement tracing. "
            "Random waypoint mobility generated in the script from the seed (no setdest file): random "
            "start positions, each node pauses pause_time, then moves to a random destination at a speed "
            "~ Uniform[1, max_speed_mps) (max_speed_mps=0: static nodes), pauses again, and so on. "
            "Flows between random pairs of distinct nodes: cbr_flows CBR/UDP flows (fids 1..c, named "
            "'CBR k') and tcp_flows TCP Reno + FTP flows (next fids, 'TCP k'), starting at random times in "
            "[0, start_max). Positions, movements, flow end points and start times come from their own "
            "random substream of the seed, so a seed is one movement-and-traffic pattern for every "
            "routing protocol and trace format, as in Broch et al., who ran every protocol on the same "
            "patterns. Broch et al. used 50 nodes on 1500 m x 300 m, 900 s, max speed 1 or 20 m/s, "
            "pause 0..900 s, 10-30 CBR sources of 4 packets/s and 64 bytes, no TCP; our defaults (20 "
            "nodes, 800 m x 800 m, 50 s, 10 m/s, pause 5 s, 3 CBR flows of 4 x 512-byte packets/s, one "
            "TCP flow) are smaller so a run takes under a second of ns time; set them to theirs for the "
            "real thing. Sources stop at duration; the run ends drain_s = 2 s later, when the nodes are "
            "reset (packets still waiting for a route become END drops). "
            "trace_format=new calls use-newtrace before the nodes exist; old is the CMU "
            "format (same events). Trace files: packets.tr (wireless) and, with TCP flows, cwnd.tr "
            "(cwnd_ of every TCP sender); no queue trace."
        ),
        script="manet.tcl",
        params=(
            _duration(50.0),
            _choice("routing", "AODV", ("AODV", "DSDV", "DSR"), help="ad-hoc routing protocol"),
            _int("nodes", 20, 3, 100, "nodes", "number of mobile nodes (Broch: 50)"),
            _int("width_m", 800, 10, 100000, "m", "area width (Broch: 1500)"),
            _int("height_m", 800, 10, 100000, "m", "area height (Broch: 300)"),
            _float("max_speed_mps", 10.0, 0.0, 100.0, "m/s",
                   "random waypoint speed ~ Uniform[1, max) (= max if <= 1; 0 = static); Broch: 1 or 20"),
            _float("pause_time", 5.0, 0.0, 100000.0, "s",
                   "random waypoint pause, also before the first move (Broch: 0..900)"),
            _int("cbr_flows", 3, 0, 100, "flows", "CBR/UDP flows between random node pairs (Broch: 10, 20, 30)"),
            _int("cbr_packet_size", 512, 1, 65000, "bytes", "CBR packet size (Broch: 64)"),
            _float("cbr_rate_pps", 4.0, 0.001, 100000.0, "packets/s", "CBR packets per second per flow (Broch: 4)"),
            _int("tcp_flows", 1, 0, 100, "flows", "TCP Reno + FTP flows between random node pairs (Broch: none)"),
            _int("tcp_packet_size", 1000, 1, 65000, "bytes", "TCP packetSize_ (payload; ns default)"),
            _int("tcp_window", 20, 1, 1000000, "packets", "TCP window_ (ns default)"),
            _float("start_max", 5.0, 0.0, 100000.0, "s", "flow start times ~ Uniform[0, start_max)"),
            _choice("trace_format", "new", ("new", "old"),
                    help="wireless trace format: new = use-newtrace (-t format), old = CMU format"),
            _drain(2.0),
        ),
        trace_files=("packets.tr",),
    ),
]

SCENARIOS: dict[str, Scenario] = {s.id: s for s in _SCENARIO_LIST}


def _frange(start: float, stop: float, step: float, ndigits: int = 3) -> list[float]:
    n = int(round((stop - start) / step))
    return [round(start + i * step, ndigits) for i in range(n + 1)]


# Seeds: at least five replications everywhere (ten where the start order decides much of
# the outcome). What a seed varies is in each scenario's description.
SEEDS5 = [1, 2, 3, 4, 5]
SEEDS10 = list(range(1, 11))

# CBR rates of paper 004's experiments 1 and 2: coarse where no packet is lost and the
# variants agree, 0.1 Mb/s steps (004's step) through the loss region
CBR_RATES_EXP1 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0] + _frange(7.5, 10.0, 0.1, 1)
CBR_RATES_EXP2 = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 6.5, 7.0] + _frange(7.5, 10.0, 0.1, 1)

_EXPERIMENT_LIST = [
    Experiment(
        name="homogeneous",
        scenario="homogeneous-dumbbell",
        grid={"variant": list(TCP5), "sender_lan": ["ethernet", "fast_ethernet"],
              "receiver_lan": ["ethernet", "fast_ethernet"]},
        seeds=SEEDS5,
        description="Paper 000, Tables 5.1-5.5: five variants x four LAN environments (Table 3.1). "
                    "Deviation: window_ 100 packets (the scenario default; the paper gives no window), "
                    "so that the flows lose packets and the variants' recovery shows; with ns's "
                    "window_ 20 none of the 60 runs dropped a packet.",
    ),
    Experiment(
        name="varying-error-rate",
        scenario="varying-parameters",
        grid={"variant": ["Tahoe", "Reno", "Newreno", "Sack1"],
              "error_rate": [0.0, 0.001, 0.005, 0.01, 0.02, 0.05, 0.1]},
        seeds=SEEDS5,
        description="Paper 001, Figs 2-6: throughput vs error rate (the paper shows 0.01 in detail; "
                    "the other rates are our choice, its Fig 6 axis is not in the text). 10-packet "
                    "buffer (scenario default, ours).",
    ),
    Experiment(
        name="varying-packet-size",
        scenario="varying-parameters",
        grid={"variant": ["Tahoe", "Reno", "Newreno", "Sack1"],
              "packet_size": [100, 200, 400, 600, 800, 1000, 1200, 1500, 2000]},
        seeds=SEEDS5,
        description="Paper 001, Fig 7: throughput vs packet size ('variable up to 1500, flat after'); "
                    "sizes ours. Deviation: 10-packet buffer (scenario default; the paper gives none): "
                    "with 50 packets the 20-packet window never overflows it, nothing is lost and the "
                    "curves are flat and identical.",
    ),
    Experiment(
        name="varying-window",
        scenario="varying-parameters",
        grid={"variant": ["Tahoe", "Reno", "Newreno", "Sack1"], "window": [5, 10, 15, 20, 50, 100]},
        seeds=SEEDS5,
        description="Paper 001, Fig 8: throughput vs window size 5, 10, 15, 50, 100 (plus the default "
                    "20). Deviation: 10-packet buffer (scenario default; the paper gives none), so "
                    "windows above ~17 packets overflow it and the variants' recovery shows.",
    ),
    Experiment(
        name="cbr-exp1",
        scenario="cbr-variants",
        grid={"variant": ["Tahoe", "Reno", "Newreno", "Vegas"], "cbr_rate_mbps": CBR_RATES_EXP1},
        seeds=SEEDS5,
        description="Papers 002/004 experiment 1, first condition: four variants, CBR starting and "
                    "ending with TCP; CBR 1..7 Mb/s in 1 Mb/s steps (no loss, the variants agree) and "
                    "7.5..10 Mb/s in 004's 0.1 Mb/s steps (packets are lost from ~8.3 Mb/s; the "
                    "variants differ there). 002's rates 2, 4, 6, 8, 9, 10 are included.",
    ),
    Experiment(
        name="cbr-exp1-late",
        scenario="cbr-variants",
        grid={"variant": ["Tahoe", "Reno", "Newreno", "Vegas"], "cbr_rate_mbps": CBR_RATES_EXP1},
        seeds=SEEDS5,
        fixed={"cbr_start": 3.0},
        description="Paper 004 experiment 1, second condition: the CBR starts after TCP has "
                    "stabilised (at 3 s, our choice), same rates as cbr-exp1.",
    ),
    Experiment(
        name="cbr-exp1-decreasing",
        scenario="cbr-variants",
        grid={"variant": ["Tahoe", "Reno", "Newreno", "Vegas"]},
        seeds=SEEDS5,
        fixed={"cbr_profile": "decreasing", "cbr_rate_mbps": 10.0, "cbr_rate_end_mbps": 1.0,
               "cbr_step_s": 1.0, "duration": 91.0, "cbr_stop": 91.0},
        description="Paper 004 experiment 1, third condition: within one 91 s run the CBR rate falls "
                    "from 10 to 1 Mb/s by 0.1 Mb/s every second (the CBR rate at time t is 10 - "
                    "0.1 * floor(t - cbr start), cbr start within 0.5 s of 0); throughput per second "
                    "against that rate shows how each variant recovers as congestion eases.",
    ),
    Experiment(
        name="cbr-exp2",
        scenario="cbr-fairness",
        grid={"pair": ["Reno-Reno", "Newreno-Reno", "Reno-Newreno", "Vegas-Vegas", "Newreno-Vegas",
                       "Vegas-Newreno"],
              "cbr_rate_mbps": CBR_RATES_EXP2},
        seeds=SEEDS5,
        description="Papers 002/004 experiment 2: the four variant pairs, the mixed ones in both "
                    "orders (TCP1 = N1->N4, TCP2 = N5->N6) so that a variant's advantage is told "
                    "apart from its position; CBR 1..6 Mb/s coarse, 6.5, 7, then 7.5..10 Mb/s in "
                    "0.1 Mb/s steps (two TCP flows lose packets from ~6.5 Mb/s).",
    ),
    Experiment(
        name="cbr-exp3",
        scenario="queue-influence",
        grid={"variant": ["Reno", "Sack1"], "queue": ["DropTail", "RED"]},
        seeds=SEEDS5,
        description="Paper 004 experiment 3: Reno/SACK x DropTail/RED, 30 s, CBR 1 Mb/s from 11 s to 25 s "
                    "(cbr_start/cbr_stop in the labels: throughput during the CBR on-period).",
    ),
    Experiment(
        name="cbr-exp3-red-links",
        scenario="queue-influence",
        grid={"variant": ["Reno", "Sack1"], "red_links": [0, 1, 2, 3, 4, 5]},
        seeds=SEEDS5,
        fixed={"queue": "RED", "cbr_rate_mbps": 9.0, "cbr_start": 3.0, "cbr_stop": 10.0, "duration": 10.0},
        description="Paper 002 experiment 3: 0..5 RED links, CBR 9 Mb/s from 3 s (run length ours: 10 s).",
    ),
    Experiment(
        name="reno-vegas",
        scenario="reno-vs-vegas",
        grid={"queue": ["DropTail", "RED"]},
        seeds=SEEDS5,
        description="Paper 003 first part: one Reno and one Vegas flow, DropTail vs RED.",
    ),
    Experiment(
        name="newreno-reno",
        scenario="newreno-vs-reno",
        grid={"config": ["droptail", "red", "multi"]},
        seeds=SEEDS10,
        description="Paper 003 second part: NewReno vs Reno on the single DropTail, single RED and "
                    "two-bottleneck setups, with the paper's third TCP source (scenario default "
                    "extra_flows=1); ten seeds, because the random start order decides much of "
                    "each run's outcome.",
    ),
    Experiment(
        name="manet-routing",
        scenario="manet",
        grid={"routing": ["AODV", "DSDV", "DSR"]},
        seeds=SEEDS5,
        description="Broch et al. 1998 style: AODV, DSDV and DSR on the same five movement-and-traffic "
                    "patterns (seeds), scenario defaults.",
    ),
    Experiment(
        name="manet-speed",
        scenario="manet",
        grid={"routing": ["AODV", "DSDV", "DSR"], "max_speed_mps": [1.0, 5.0, 10.0, 20.0]},
        seeds=SEEDS5,
        fixed={"pause_time": 0.0},
        description="Routing protocols vs mobility: max speed 1..20 m/s (Broch's 1 and 20 included), "
                    "pause 0 s (constant motion); speeds between are our choice.",
    ),
]

EXPERIMENTS: dict[str, Experiment] = {e.name: e for e in _EXPERIMENT_LIST}


# --------------------------------------------------------------------------
# validation


def get_scenario(scenario_id: str) -> Scenario:
    try:
        return SCENARIOS[scenario_id]
    except KeyError:
        raise ValueError(
            f"unknown scenario {scenario_id!r}; available: {', '.join(SCENARIOS)}"
        ) from None


def resolve_params(scenario_id: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Defaults of ``scenario_id`` updated with ``overrides`` (values usually strings
    from ``--set k=v``), converted to their types and checked.

    Returns a dict with every parameter of the scenario, in declaration order.
    Raises ValueError with a one-line message naming what is wrong and what is allowed.
    """
    sc = get_scenario(scenario_id)
    resolved = sc.defaults()
    for key, raw in (overrides or {}).items():
        if key in RESERVED:
            raise ValueError(
                f"{scenario_id}: {key!r} is not a scenario parameter"
                + (" (pass the seed separately, e.g. --seed N)" if key == "seed" else " (chosen by the runner)")
            )
        if key not in resolved:
            raise ValueError(
                f"{scenario_id}: unknown parameter {key!r}; known: {', '.join(resolved)}"
            )
        resolved[key] = sc.param(key).parse(raw, scenario_id)
    _check_cross(scenario_id, resolved)
    return resolved


def _check_cross(scenario_id: str, p: dict[str, Any]) -> None:
    """Checks that involve more than one parameter."""
    if scenario_id in ("queue-influence", "cbr-variants", "cbr-fairness") and p["cbr_stop"] < p["cbr_start"]:
        raise ValueError(
            f"{scenario_id}: cbr_stop ({p['cbr_stop']}) must be >= cbr_start ({p['cbr_start']})"
        )
    if scenario_id == "cbr-variants" and p["cbr_profile"] == "decreasing" \
            and p["cbr_rate_end_mbps"] >= p["cbr_rate_mbps"]:
        raise ValueError(
            f"{scenario_id}: with cbr_profile=decreasing, cbr_rate_end_mbps ({p['cbr_rate_end_mbps']}) "
            f"must be < cbr_rate_mbps ({p['cbr_rate_mbps']})"
        )
    if scenario_id == "reno-vs-vegas" and p["n_reno"] + p["n_vegas"] < 1:
        raise ValueError(f"{scenario_id}: need at least one flow (n_reno + n_vegas >= 1)")
    if scenario_id == "manet" and p["cbr_flows"] + p["tcp_flows"] < 1:
        raise ValueError(f"{scenario_id}: need at least one flow (cbr_flows + tcp_flows >= 1)")


def format_value(value: Any) -> str:
    """How a resolved value is written on the ns command line."""
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, float):
        return repr(value)
    return str(value)


def sim_id_of(scenario_id: str, params: dict[str, Any], seed: int) -> str:
    """The id of one simulation: a hash of the scenario, its resolved parameters (formatted
    as on the ns command line) and the seed. The same from a SimSpec before a run and from
    the tracekit-meta header of a trace after it, so a sweep can tell what is done."""
    import hashlib
    import json

    key = json.dumps({"scenario": scenario_id, "params": {k: format_value(v) for k, v in params.items()},
                      "seed": int(seed)}, sort_keys=True)
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def experiment_runs(name: str) -> list[tuple[dict[str, Any], int]]:
    """The (params, seed) pairs of an experiment: cross product of its grid, with
    its fixed params, each resolved against the scenario."""
    import itertools

    exp = EXPERIMENTS[name]
    keys = list(exp.grid)
    runs = []
    for combo in itertools.product(*(exp.grid[k] for k in keys)):
        overrides = {k: format_value(v) for k, v in exp.fixed.items()}
        overrides.update({k: format_value(v) for k, v in zip(keys, combo)})
        params = resolve_params(exp.scenario, overrides)
        for seed in exp.seeds:
            runs.append((params, seed))
    return runs
