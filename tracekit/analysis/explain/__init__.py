"""`tracekit explain-awk`: which known mistake makes a user's awk script print what it prints.

The trace is ingested into a private temporary store (never the user's: nothing is added to
it, and the same code runs for every trace), the script runs with gawk on the trace itself,
every variant of the catalogue (mistakes.toml) is computed with SQL over the temporary store,
and each printed number is matched against them (tracekit.analysis.explain.variants).
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracekit.core.errors import TracekitError
from tracekit.analysis.explain.awk import DEFAULT_TIMEOUT_S, run_awk
from tracekit.analysis.explain.numbers import Printed, count_numbers, read_numbers
from tracekit.analysis.explain.variants import Explanation, Variants, compute, explain_numbers, sentence

__all__ = ["Report", "explain_awk", "trace_variants", "run_awk", "read_numbers", "explain_numbers",
           "DEFAULT_TIMEOUT_S"]


def stored_run(trace: str | os.PathLike, data_dir: str | os.PathLike) -> str | None:
    """The run id of `trace` in the store at data_dir if it holds that trace whole (same
    decompressed content: ingest's run id is a prefix of its sha256), else None."""
    from tracekit.ingest.pipeline import RUN_ID_LEN
    from tracekit.formats.sources import TraceSource
    from tracekit.store.store import Store

    store = Store(data_dir)
    src = TraceSource.open(trace)
    for _ in src.chunks():
        pass
    run_id = src.sha256[:RUN_ID_LEN]
    return run_id if store.has_whole_run(run_id) else None


def trace_variants(trace: str | os.PathLike, data_dir: str | os.PathLike | None = None) -> Variants:
    """Compute every variant of the catalogue on `trace`: over its run in the store at
    data_dir when that store holds it, else ingested into a private temporary store (the
    user's store is never written). Variants.source says which."""
    from tracekit.ingest.pipeline import ingest_file
    from tracekit.formats.parsers import PACKET_KINDS
    from tracekit.db.query import close, connect
    from tracekit.store.store import Store

    if data_dir is not None:
        run_id = stored_run(trace, data_dir)
        if run_id is not None:
            con = connect(data_dir, run_ids=[run_id])
            try:
                (kind,) = con.execute("SELECT trace_kind FROM runs").fetchone() or (None,)
                if kind not in PACKET_KINDS:
                    raise TracekitError(f"{trace}: a {kind} trace, not a packet trace (wired or wireless); "
                                        "explain-awk compares packet metrics")
                v = compute(con)
            finally:
                close(con)
            v.source = f"run {run_id} of the store {data_dir}"
            return v
    with tempfile.TemporaryDirectory(prefix="tracekit-explain-") as tmp:
        store = Store(Path(tmp) / "store", create=True)
        res = ingest_file(store, trace, source_name=str(trace))
        if res.kind not in PACKET_KINDS:
            raise TracekitError(f"{trace}: a {res.kind} trace, not a packet trace (wired or wireless); "
                                "explain-awk compares packet metrics")
        con = connect(store.root)
        try:
            v = compute(con)
        finally:
            close(con)
        v.source = "the trace, ingested into a temporary store"
        return v


@dataclass
class Report:
    variants: Variants
    output: str
    explanations: list[Explanation]
    skipped: int = 0          # numbers in the middle of a long output, not explained

    def rows(self) -> list[dict[str, Any]]:
        """The --format json rows: printed, context, explained_by (mistake names; [] = agrees
        with tracekit; null = unexplained), variant_value, correct_metric, correct_value (for a
        group of flows mixed together: tracekit's definition over the group, and
        correct_per_flow), and which flow and metric, and other explanations with as few
        mistakes."""
        out = []
        for e in self.explanations:
            p: Printed = e.printed
            row: dict[str, Any] = {"printed": p.text, "context": p.context, "line": p.line_no,
                                   "unit": p.unit.text if p.unit else None, "identifier": e.identifier}
            if e.matches:
                m = e.matches[0]
                fam = self.variants.catalogue.families[m.family]
                flow = self.variants.flows[m.flow_no]
                row.update(explained_by=list(m.mistakes), variant_value=m.value, correct_metric=fam.metric,
                           correct_value=m.correct_value, correct_in_printed_unit=m.correct_printed,
                           metric=m.family, flow=flow.describe(),
                           correct_per_flow={self.variants.flows[f].describe(): self.variants.flows[f].correct.get(fam.metric)
                                             for f in flow.members} or None,
                           also_explained_by=[{"explained_by": list(x.mistakes), "metric": x.family,
                                               "flow": self.variants.flows[x.flow_no].describe(),
                                               "variant_value": x.value} for x in e.matches[1:]])
            else:
                row.update(explained_by=None, variant_value=None, correct_metric=None, correct_value=None,
                           correct_in_printed_unit=None, metric=None, flow=None, correct_per_flow=None,
                           also_explained_by=[])
            out.append(row)
        return out

    def lines(self) -> list[str]:
        """One line per number (then `  or ...` lines for as good explanations)."""
        return [sentence(self.variants, e) for e in self.explanations]

    def table(self) -> str:
        """The table format: each output line of the script that has numbers, then what each
        of its numbers is."""
        out: list[str] = []
        last = None
        for e, text in zip(self.explanations, self.lines()):
            if e.printed.line_no != last:
                last = e.printed.line_no
                out.append(f"line {last}: {e.printed.context}")
            out += ["  " + ln for ln in text.splitlines()]
        n = len(self.explanations)
        bad = sum(1 for e in self.explanations if e.explained and not e.agrees)
        ids = sum(1 for e in self.explanations if not e.explained and e.identifier)
        unexplained = sum(1 for e in self.explanations if not e.explained) - ids
        out.append(f"{n} number{'s' if n != 1 else ''}: {n - bad - unexplained - ids} agree with tracekit, "
                   f"{bad} explained by mistakes, {unexplained} unexplained"
                   + (f", {ids} flow ids, nodes or addresses" if ids else "")
                   + f" (tracekit's values: from {self.variants.source})"
                   + (f"; {self.skipped} numbers in the middle of the output skipped (the first and last "
                      f"{len(self.explanations) // 2} are explained)" if self.skipped else ""))
        return "\n".join(out)


def explain_awk(script: str | os.PathLike, trace: str | os.PathLike, awk_args: list[str] | tuple[str, ...] = (),
                timeout_s: float = DEFAULT_TIMEOUT_S, variants: Variants | None = None,
                data_dir: str | os.PathLike | None = None) -> Report:
    """Run the script on the trace and explain every number it printed. `variants` (from
    trace_variants on the same trace) skips the ingest and the SQL; data_dir: see
    trace_variants."""
    output = run_awk(script, trace, awk_args, timeout_s)
    if variants is None:
        variants = trace_variants(trace, data_dir)
    numbers = read_numbers(output)
    skipped = count_numbers(output) - len(numbers)
    return Report(variants, output, explain_numbers(variants, numbers), skipped)
