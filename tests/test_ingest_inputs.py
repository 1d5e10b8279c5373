"""What `tracekit ingest` accepts: compressed files, directories, globs, labels and the
`# tracekit-meta` line; the run id is the hash of the decompressed content."""
from __future__ import annotations

import bz2
import gzip
import hashlib
import json
import lzma
import os
import shutil

import pytest
import zstandard

from tracekit.ingest.pipeline import ingest_paths
from tracekit.db.query import connect

COMPRESS = {
    "gzip": (".gz", gzip.compress),
    "zstd": (".zst", lambda b: zstandard.ZstdCompressor().compress(b)),
    "bz2": (".bz2", bz2.compress),
    "xz": (".xz", lzma.compress),
}


def runs(data):
    return connect(data).execute("SELECT run_id, compression, n_events FROM runs ORDER BY run_id").fetchall()


def n_wired_events(path) -> int:
    return sum(1 for line in path.read_text().splitlines() if line[:2] in ("+ ", "- ", "r ", "d "))


def test_reingest_same_content_adds_no_run(tmp_path, ns_traces, tracekit_cli, store_listing):
    data = tmp_path / "store"
    first = tracekit_cli("ingest", ns_traces["wired_plain"], data=data)
    assert first.returncode == 0, first.stderr
    before = store_listing(data)
    again = tracekit_cli("ingest", ns_traces["wired_plain"], data=data)
    assert again.returncode == 0, again.stderr
    assert "already in the store" in again.stdout
    assert store_listing(data) == before
    # a copy under another name is the same content, so the same run
    copy = tmp_path / "renamed.tr"
    shutil.copy(ns_traces["wired_plain"], copy)
    assert [r.status for r in ingest_paths(data, [copy])] == ["duplicate"]
    assert len(runs(data)) == 1


@pytest.mark.parametrize("compression", list(COMPRESS))
def test_compressed_input_is_the_same_run(tmp_path, ns_traces, compression):
    ext, fn = COMPRESS[compression]
    plain = ns_traces["wired_plain"].read_bytes()
    packed = tmp_path / f"trace.tr{ext}"
    packed.write_bytes(fn(plain))
    run_id = hashlib.sha256(plain).hexdigest()[:16]

    alone = tmp_path / "alone"
    [r] = ingest_paths(alone, [packed])
    assert (r.status, r.run_id) == ("added", run_id)
    assert runs(alone) == [(run_id, compression, n_wired_events(ns_traces["wired_plain"]))]

    both = tmp_path / "both"
    assert [r.status for r in ingest_paths(both, [ns_traces["wired_plain"], packed])] == ["added", "duplicate"]
    assert [row[0] for row in runs(both)] == [run_id]


def test_gzip_and_zstd_of_the_same_content_share_one_run(tmp_path, ns_traces):
    plain = ns_traces["tcpvar"].read_bytes()
    gz, zst = tmp_path / "cwnd.tr.gz", tmp_path / "cwnd.tr.zst"
    gz.write_bytes(gzip.compress(plain, compresslevel=1))
    zst.write_bytes(zstandard.ZstdCompressor(level=19).compress(plain))
    results = ingest_paths(tmp_path / "store", [gz, zst])
    assert [r.status for r in results] == ["added", "duplicate"]
    assert results[0].run_id == results[1].run_id == hashlib.sha256(plain).hexdigest()[:16]


def test_compression_is_detected_from_content_not_name(tmp_path, ns_traces):
    disguised = tmp_path / "trace.tr"              # gzip data under a plain name
    disguised.write_bytes(gzip.compress(ns_traces["wired_plain"].read_bytes()))
    [r] = ingest_paths(tmp_path / "store", [disguised])
    assert r.status == "added" and r.n_events == n_wired_events(ns_traces["wired_plain"])


def test_multi_frame_zstd(tmp_path, ns_traces):
    plain = ns_traces["wired_plain"].read_bytes()
    half = plain.index(b"\n", len(plain) // 2) + 1
    c = zstandard.ZstdCompressor()
    f = tmp_path / "frames.tr.zst"
    f.write_bytes(c.compress(plain[:half]) + c.compress(plain[half:]))
    [r] = ingest_paths(tmp_path / "store", [f])
    assert r.run_id == hashlib.sha256(plain).hexdigest()[:16]
    assert r.n_events == n_wired_events(ns_traces["wired_plain"])


def _tree(tmp_path, ns_traces):
    d = tmp_path / "traces"
    (d / "a" / "b").mkdir(parents=True)
    (d / ".hidden").mkdir()
    shutil.copy(ns_traces["wired_plain"], d / "plain.tr")
    (d / "a" / "b" / "cwnd.tr.gz").write_bytes(gzip.compress(ns_traces["tcpvar"].read_bytes()))
    shutil.copy(ns_traces["red"], d / "a" / "red.tr")
    (d / "a" / "notes.txt").write_text("simulation notes, not a trace\n")
    shutil.copy(ns_traces["qmon_events"], d / ".hidden" / "q.tr")      # hidden: not walked
    return d


def test_directory_is_walked_recursively(tmp_path, ns_traces, tracekit_inproc):
    d = _tree(tmp_path, ns_traces)
    data = tmp_path / "store"
    p = tracekit_inproc("ingest", d, data=data)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr
    assert "skipped 1 file" in p.stderr and "notes.txt" in p.stderr
    kinds = connect(data).execute("SELECT trace_kind FROM runs ORDER BY trace_kind").fetchall()
    assert [k for (k,) in kinds] == ["red", "tcpvar", "wired"]


def test_quoted_glob_pattern(tmp_path, ns_traces, tracekit_cli):
    d = _tree(tmp_path, ns_traces)
    data = tmp_path / "store"
    p = tracekit_cli("ingest", f"{d}/**/*.tr*", data=data)      # no shell: tracekit expands it
    assert p.returncode == 0, p.stderr
    got = connect(data).execute("SELECT source FROM runs ORDER BY source").fetchall()
    assert [s for (s,) in got] == sorted(str(x.resolve()) for x in (d / "plain.tr", d / "a" / "b" / "cwnd.tr.gz", d / "a" / "red.tr"))


def test_glob_matching_nothing_is_an_error(tmp_path, tracekit_inproc):
    p = tracekit_inproc("ingest", f"{tmp_path}/nothing-*.tr", data=tmp_path / "store")
    assert p.returncode != 0
    assert p.stderr.count("\n") == 1 and "no files match" in p.stderr and "Traceback" not in p.stderr


def test_labels_and_flow_labels(tmp_path, ns_traces, tracekit_cli):
    data = tmp_path / "store"
    p = tracekit_cli("ingest", ns_traces["wired_plain"], "--label", "variant=Reno", "-l", "bw=1Mb",
                     "--label", "seed=7", "--flow-label", "1=Reno", "--flow-label", "2=CBR", data=data)
    assert p.returncode == 0, p.stderr
    con = connect(data)
    [(labels, seed)] = con.execute("SELECT labels, seed FROM runs").fetchall()
    assert labels == {"variant": "Reno", "bw": "1Mb", "seed": "7"} and seed == 7
    assert con.execute("SELECT labels['variant'] FROM runs").fetchall() == [("Reno",)]
    assert con.execute("SELECT fid, name FROM flow_labels ORDER BY fid").fetchall() == [(1, "Reno"), (2, "CBR")]


@pytest.mark.parametrize("bad", [["--label", "novalue"], ["--flow-label", "x=Reno"], ["--label", "=v"]])
def test_bad_label_syntax(tmp_path, ns_traces, bad):
    from typer.testing import CliRunner

    from tracekit.apps.cli import app

    data = tmp_path / "store"
    res = CliRunner().invoke(app, ["ingest", str(ns_traces["wired_plain"]), *bad, "--data", str(data)])
    assert res.exit_code != 0 and (res.exception is None or isinstance(res.exception, SystemExit))
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("tracekit: error:")
    assert not (data / "runs").exists() or not any((data / "runs").iterdir())


META = {"scenario": "dumbbell", "seed": 3, "params": {"bw": "10Mb", "variant": "Cubic", "out_dir": "/tmp/x"},
        "flows": {"1": "Cubic", "2": "CBR"}}


def test_meta_line_becomes_labels(tmp_path, ns_traces):
    f = tmp_path / "with_meta.tr"
    f.write_text("# tracekit-meta " + json.dumps(META) + "\n" + ns_traces["wired_plain"].read_text())
    data = tmp_path / "store"
    [r] = ingest_paths(data, [f])
    assert r.status == "added" and r.n_events == n_wired_events(ns_traces["wired_plain"])
    con = connect(data)
    [(labels, scenario, seed)] = con.execute("SELECT labels, scenario, seed FROM runs").fetchall()
    labels.pop("sim_id", None)          # derived by the scenario registry; not this test's business
    assert labels == {"scenario": "dumbbell", "seed": "3", "bw": "10Mb", "variant": "Cubic"}
    assert (scenario, seed) == ("dumbbell", 3)
    assert con.execute("SELECT fid, name FROM flow_labels ORDER BY fid").fetchall() == [(1, "Cubic"), (2, "CBR")]
    # the meta line is a comment, so events keep their file line numbers (shifted by one)
    assert con.execute("SELECT min(line_no) FROM events").fetchall() == [(2,)]


def test_command_line_labels_override_meta(tmp_path, ns_traces, tracekit_inproc):
    f = tmp_path / "with_meta.tr.gz"
    f.write_bytes(gzip.compress(("# tracekit-meta " + json.dumps(META) + "\n" + ns_traces["wired_plain"].read_text()).encode()))
    data = tmp_path / "store"
    p = tracekit_inproc("ingest", f, "--label", "variant=Reno", "--label", "extra=1", "--flow-label", "1=Reno", data=data)
    assert p.returncode == 0, p.stderr
    con = connect(data)
    [(labels,)] = con.execute("SELECT labels FROM runs").fetchall()
    labels.pop("sim_id", None)
    assert labels == {"scenario": "dumbbell", "seed": "3", "bw": "10Mb", "variant": "Reno", "extra": "1"}
    assert con.execute("SELECT fid, name FROM flow_labels ORDER BY fid").fetchall() == [(1, "Reno"), (2, "CBR")]


def test_meta_line_in_other_kinds(tmp_path, ns_traces):
    f = tmp_path / "cwnd.tr"
    f.write_text("# tracekit-meta " + json.dumps({"scenario": "s1", "seed": 11}) + "\n" + ns_traces["tcpvar"].read_text())
    [r] = ingest_paths(tmp_path / "store", [f])
    assert r.kind == "tcpvar"
    assert connect(tmp_path / "store").execute("SELECT scenario, seed FROM runs").fetchall() == [("s1", 11)]


@pytest.mark.parametrize("compressed", [False, True])
def test_named_pipe_input(tmp_path, ns_traces, compressed):
    """`tracekit ingest <(zcat trace.gz)` hands tracekit a pipe, which cannot seek."""
    import threading

    plain = ns_traces["wired_plain"].read_bytes()
    fifo = tmp_path / "pipe.tr"
    os.mkfifo(fifo)

    def feed():
        with open(fifo, "wb") as w:
            w.write(gzip.compress(plain) if compressed else plain)

    t = threading.Thread(target=feed, daemon=True)
    t.start()
    [r] = ingest_paths(tmp_path / "store", [fifo])
    t.join(10)
    assert (r.status, r.run_id) == ("added", hashlib.sha256(plain).hexdigest()[:16])
    assert r.n_events == n_wired_events(ns_traces["wired_plain"])


@pytest.mark.slow
def test_reingest_with_new_labels_updates_them(tmp_path):
    """Same content again with new --label/--flow-label: still one run, the labels merge in
    (what was there stays unless overridden)."""
    import subprocess
    import sys

    trace = tmp_path / "t.tr"
    trace.write_text("+ 0.1 0 1 tcp 1040 ------- 1 0.0 1.0 1 7\nr 0.2 0 1 tcp 1040 ------- 1 0.0 1.0 1 7\n")
    data = tmp_path / "store"

    def run(*a):
        return subprocess.run([sys.executable, "-m", "tracekit", *a, "--data", str(data)],
                              capture_output=True, text=True, check=True)

    run("ingest", str(trace), "--label", "variant=Reno", "--label", "queue=DropTail")
    p = run("ingest", str(trace), "--label", "variant=Vegas", "--flow-label", "1=Vegas")
    assert "labels updated: variant=Vegas, flow 1=Vegas" in p.stdout
    out = run("sql", "SELECT count(*), any_value(labels['variant']), any_value(labels['queue']) FROM runs",
              "--format", "csv").stdout.splitlines()
    assert out[1] == "1,Vegas,DropTail"
    assert run("sql", "SELECT fid, name FROM flow_labels", "--format", "csv").stdout.splitlines()[1] == "1,Vegas"
    p = run("ingest", str(trace), "--label", "variant=Vegas")
    assert "labels updated" not in p.stdout
