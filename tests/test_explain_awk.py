"""tracekit explain-awk on real awk scripts (tests/awk/, written as blogs write them) run by
gawk on short real ns-2 runs of the bundled scenarios: cbr-variants (wired) and manet in the
old and the new wireless trace format. Each script says on its first line which mistakes it
makes (`# mistakes: a b`, nothing after the colon for a correct script) or that its number is
`# unexplained`: the expectations come from how the script was written, not from the code."""
from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from tracekit.analysis.explain import explain_awk, run_awk, trace_variants
from tracekit.analysis.explain.catalogue import load
from tracekit.analysis.explain.docs import WIRED_RUN, WIRELESS_RUN, measure, render

AWK = Path(__file__).resolve().parent / "awk"
DOCS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "why-awk-numbers-differ.md"
# the runs docs/why-awk-numbers-differ.md is generated from: cbr-variants for 2 s (every other
# parameter its default), manet for 6 s with 6 nodes (old format there; both here)
WIRED = WIRED_RUN[1]
MANET = {k: v for k, v in WIRELESS_RUN[1].items() if k != "trace_format"}

pytestmark = pytest.mark.skipif(shutil.which("gawk") is None, reason="gawk is not installed")


def _run(scenario: str, params: dict, out: Path) -> tuple[Path, dict]:
    from tracekit.experiments.runner import run_scenario_traces
    from tracekit.experiments.scenarios import resolve_params

    resolved = resolve_params(scenario, params)
    return run_scenario_traces(scenario, resolved, 1, out)[0], resolved


@pytest.fixture(scope="session")
def wired(tmp_path_factory):
    trace, p = _run("cbr-variants", WIRED, tmp_path_factory.mktemp("explain_wired"))
    # the stop time as the scenario defines it (sources stop at duration, the run drain_s later)
    return trace, trace_variants(trace), ["-v", f"run_end={p['duration'] + p['drain_s']:g}"]


@pytest.fixture(scope="session")
def wireless_runs(tmp_path_factory):
    """fmt -> (trace, variants, awk args): manet in the old or the new format, run when first
    asked for. The scripts read one CBR flow, from node src to node dst (-v)."""
    cache: dict = {}

    def get(fmt: str):
        if fmt not in cache:
            trace, p = _run("manet", {**MANET, "trace_format": fmt}, tmp_path_factory.mktemp(f"explain_wl_{fmt}"))
            variants = trace_variants(trace)
            cbr = sorted((f for f in variants.flows.values() if f.ptype == "cbr"), key=lambda f: (f.src, f.dst))[0]
            args = ["-v", f"src={cbr.src.split('.')[0]}", "-v", f"dst={cbr.dst.split('.')[0]}",
                    "-v", f"run_end={p['duration'] + p['drain_s']:g}"]
            cache[fmt] = (trace, variants, args)
        return cache[fmt]

    return get


def expected(script: Path) -> frozenset[str] | None:
    """What the script's first line declares: its mistakes, or None for `# unexplained`."""
    first = script.read_text().splitlines()[0]
    if first.startswith("# unexplained"):
        return None
    assert first.startswith("# mistakes:"), script
    return frozenset(first.split(":", 1)[1].split())


def check(report, want: frozenset[str] | None, script: str) -> None:
    assert report.explanations, f"{script} printed no numbers: {report.output!r}"
    for e in report.explanations:
        where = f"{script}: {e.printed.context!r} -> {[m.mistakes for m in e.matches]}"
        if want is None:
            assert not e.explained, where
            continue
        sets = [frozenset(m.mistakes) for m in e.matches]
        assert want in sets, where
        # the fewest mistakes win: nothing with fewer, and ties have as many
        assert all(len(s) == len(want) for s in sets), where


WIRED_SCRIPTS = sorted(p.name for p in AWK.glob("*.awk") if not p.name.startswith("wl_"))


@pytest.mark.parametrize("name", WIRED_SCRIPTS)
def test_wired_script_is_explained(wired, name):
    trace, variants, args = wired
    script = AWK / name
    check(explain_awk(script, trace, args, variants=variants), expected(script), name)


def test_every_mistake_has_a_script():
    """Each mistake of the catalogue is made by at least one script, alone or combined."""
    made = set().union(*(expected(p) or set() for p in AWK.glob("*.awk")))
    assert set(load().mistakes) <= made


@pytest.mark.parametrize("name", sorted(p.name for p in AWK.glob("wl_*.awk")))
def test_wireless_script_is_explained(wireless_runs, name):
    trace, variants, args = wireless_runs(name.split("_")[1])     # wl_old_... / wl_new_...
    script = AWK / name
    check(explain_awk(script, trace, args, variants=variants), expected(script), name)


def test_correct_variant_is_flow_stats(wired, wireless_runs):
    """The catalogue's SQL with no mistake (over explain_events) gives flow_stats' values for
    every family and flow: two computations of the same definitions agree."""
    for variants in (wired[1], wireless_runs("old")[1], wireless_runs("new")[1]):
        assert variants.flows
        for flow in variants.flows.values():
            if flow.members:                  # a group of flows: not a flow_stats row
                continue
            for fam in variants.catalogue.families.values():
                raw = variants.value(fam.name, flow.flow_no)
                want = flow.correct[fam.metric]
                if want is None:
                    continue
                assert raw is not None and raw * fam.to_metric == pytest.approx(want, rel=1e-9), (fam.name, flow)


@pytest.mark.parametrize("name", ["lan", "lan_nam"])
def test_lan_drops_follow_the_overheard_rule(wild_traces, name):
    """On a real LAN trace (`$ns newLan`, tests/tcl/wild_lan.tcl) and the nam trace of the same
    simulation, the `d` lines of stations overhearing a delivered frame are not drops: the
    catalogue's correct variants (dropped and delay from the `h` send onto the LAN included)
    equal flow_stats, the dropped counts equal the plain reference's on the normal trace, and
    lan_drops.awk (the rule in awk) agrees with tracekit."""
    import reference_metrics as refm

    variants = trace_variants(wild_traces[name])
    ref = {f["fid"]: f for f in refm.all_metrics(wild_traces["lan"].read_text())["flow_stats"].values()}
    flows = [f for f in variants.flows.values() if not f.members]
    assert sorted(f.fid for f in flows) == sorted(ref) and all(ref[fid]["overheard_pkts"] > 0 for fid in ref)
    for flow in flows:
        assert variants.value("dropped_pkts", flow.flow_no) == ref[flow.fid]["dropped_pkts"] == flow.correct["dropped_pkts"]
        for fam in variants.catalogue.families.values():
            want = flow.correct[fam.metric]
            if want is not None:
                raw = variants.value(fam.name, flow.flow_no)
                assert raw is not None and raw * fam.to_metric == pytest.approx(want, rel=1e-9), (fam.name, flow)
    if name == "lan":                       # the awk script reads the normal trace format
        check(explain_awk(AWK / "lan_drops.awk", wild_traces[name], [], variants=variants), frozenset(), "lan_drops.awk")


def test_compressed_trace_reads_the_same(wired, tmp_path):
    trace, _, args = wired
    gz = tmp_path / "packets.tr.gz"
    gz.write_bytes(gzip.compress(trace.read_bytes()))
    script = AWK / "correct_wired.awk"
    assert run_awk(script, gz, args) == run_awk(script, trace, args)


def test_cli_json_on_a_gzip_trace(wired, tmp_path, tracekit_cli, store_listing):
    """--format json on a gzip-compressed copy of a trace the store already holds: gawk reads
    it decompressed, tracekit's values come from the stored run (same content), and the store
    is left as it was."""
    from tracekit.ingest.pipeline import ingest_paths

    trace, _, args = wired
    gz = tmp_path / "packets.tr.gz"
    gz.write_bytes(gzip.compress(trace.read_bytes()))
    data = tmp_path / "store"
    (added,) = ingest_paths(data, [trace])
    before = store_listing(data)
    res = tracekit_cli("explain-awk", "--format", "json", AWK / "combo_every_hop_acks.awk", gz, "--data", data,
                       "--", *args)
    assert res.returncode == 0, res.stderr
    assert store_listing(data) == before
    doc = json.loads(res.stdout)
    assert added.run_id in doc["source"]
    (row,) = doc["numbers"]
    assert set(row) >= {"printed", "context", "explained_by", "variant_value", "correct_metric", "correct_value"}
    assert sorted(row["explained_by"]) == ["acks_included", "r_every_hop"]
    assert row["correct_metric"] == "throughput_kbps"
    assert row["printed"] in row["context"]
    # the value tracekit computes: the correct script's own number for the same flow
    ok = run_awk(AWK / "correct_wired.awk", trace, args)
    printed = float(ok.split("Throughput: ")[1].split()[0])
    assert row["correct_value"] == pytest.approx(printed, abs=1e-4)


def _one_line_error(res, *parts):
    assert res.returncode == 1, (res.stdout, res.stderr)
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tracekit: error: "), res.stderr
    for p in parts:
        assert p in lines[0], res.stderr


def test_errors_are_one_line(wired, tmp_path, tracekit_inproc, monkeypatch):
    trace, _, _ = wired
    bad = tmp_path / "bad.awk"
    bad.write_text("$1 == \"r\" { x += \n")
    _one_line_error(tracekit_inproc("explain-awk", bad, trace), "gawk failed", "bad.awk", "unexpected newline")
    loop = tmp_path / "loop.awk"
    loop.write_text("BEGIN { while (1) x++ }\n")
    _one_line_error(tracekit_inproc("explain-awk", "--timeout", "1", loop, trace), "did not finish within 1 s")
    notrace = tmp_path / "notes.txt"
    notrace.write_text("hello 1 2 3\n")
    _one_line_error(tracekit_inproc("explain-awk", AWK / "correct_wired.awk", notrace), "notes.txt")
    _one_line_error(tracekit_inproc("explain-awk", AWK / "correct_wired.awk", tmp_path / "missing.tr"), "missing.tr")
    monkeypatch.setenv("PATH", str(tmp_path))
    _one_line_error(tracekit_inproc("explain-awk", AWK / "correct_wired.awk", trace), "gawk not found")


def test_table_output_names_the_mistake_and_the_right_value(wired):
    trace, variants, args = wired
    report = explain_awk(AWK / "header_512.awk", trace, args, variants=variants)
    (line,) = report.lines()
    assert "size - size % 512" in line and "throughput_kbps" in line
    cbr = next(f for f in variants.flows.values() if f.ptype == "cbr")
    assert f"{cbr.correct['throughput_kbps']:.6g}" in line


def test_variants_are_pruned_as_declared():
    cat = load()
    for fam in cat.families.values():
        combos = cat.variants(fam)
        assert combos[0] == ()
        assert len(set(combos)) == len(combos)
        for c in combos:
            dims = [cat.mistakes[m].dimension for m in c]
            assert len(dims) == len(set(dims)) and len(c) <= cat.max_mistakes
            if "last_ack_of_seq" in c:
                assert set(dims) == {"pairing"}
    # the unit mistakes apply to rates only, the PDR inversion to the PDR only
    assert cat.applies(cat.families["throughput"], "mebibytes")
    assert not cat.applies(cat.families["mean_delay"], "mebibytes")
    assert [f for f in cat.families if cat.applies(cat.families[f], "pdr_inverted")] == ["pdr"]


def test_docs_page_is_current(wired, wireless_runs):
    """docs/why-awk-numbers-differ.md is what `python -m tracekit.analysis.explain.docs` writes from the
    same ns-2 runs (ns-2 is deterministic for a seed): regenerate it after changing the
    catalogue."""
    runs = [measure(wired[0], *WIRED_RUN), measure(wireless_runs("old")[0], *WIRELESS_RUN)]
    assert render(*runs) == DOCS_PAGE.read_text(), "run: python -m tracekit.analysis.explain.docs"


BENCH = Path(__file__).resolve().parent.parent / "benchmarks" / "awk"


@pytest.mark.parametrize("name, want", [("delay.awk", frozenset()), ("pdr.awk", frozenset()),
                                        ("jitter.awk", frozenset()), ("drops.awk", frozenset()),
                                        # its header says it divides by (last delivery - first send)
                                        ("throughput.awk", frozenset({"active_period"}))])
def test_the_benchmark_scripts(wired, name, want):
    """benchmarks/awk/ (per-flow scripts written to the contract's definitions, each printing
    `fid src dst metric value` lines): their metrics are explained as their headers say, and
    the flow ids and addresses before them are recognised as such, not as metrics."""
    trace, variants, _ = wired
    report = explain_awk(BENCH / name, trace, variants=variants)
    lines = report.output.splitlines()
    assert len(lines) == 2                              # one per flow of the run
    for e in report.explanations:
        p = e.printed
        position = p.context.split().index(p.text)
        if position < 3:                                # fid, source and destination address
            assert not e.explained and e.identifier, (name, p.context, p.text)
        elif position == 4:                             # the metric (pdr.awk: sent recv pdr)
            assert [frozenset(m.mistakes) for m in e.matches][:1] == [want], (name, p.context)


def test_numbers_and_their_unit_labels_are_read():
    from tracekit.analysis.explain.numbers import read_numbers

    out = ("Throughput (Mb/s): 1.25\n"
           "fid1 delay 46.8ms, pdr 0.98 sent 196 packets\n"
           "rate=355.1kbps loss 2 %\n"
           "x 1e3 y -0.5 _2_ 3.0.1 2nd x86\n")
    got = [(p.text, p.unit.text if p.unit else None, p.line_no) for p in read_numbers(out)]
    assert got == [("1.25", "Mb/s", 1), ("46.8", "ms", 2), ("0.98", None, 2), ("196", "packets", 2),
                   ("355.1", "kbps", 3), ("2", "%", 3), ("1e3", None, 4), ("-0.5", None, 4)]
    mb = read_numbers(out)[0]
    assert (mb.unit.kind, mb.unit.power, mb.decimals, mb.significant) == ("rate", 2, 2, 3)
    # a long output: the first and the last half of the limit
    many = "\n".join(f"v {i}" for i in range(10)) + "\n"
    assert [p.text for p in read_numbers(many, limit=4)] == ["0", "1", "8", "9"]
