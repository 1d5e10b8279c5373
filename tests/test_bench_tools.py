"""The benchmarks' own tools that RESULTS.md's limits rest on: the trace cut in two halves
(run_benchmarks._halves) and processes timed together (benchproc.timed_together)."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import benchproc  # noqa: E402
import run_benchmarks  # noqa: E402


def test_halves_cut_at_a_line_end_after_the_middle_and_keep_every_byte(tmp_path):
    lines = [f"+ {i * 0.01:.2f} 0 1 tcp 1040 ------- 1 0.0 3.0 {i} {i}\n" for i in range(101)]
    trace = tmp_path / "t.tr"
    trace.write_text("".join(lines))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    first, second = run_benchmarks._halves(trace, scratch)
    a, b = first.read_bytes(), second.read_bytes()
    assert a + b == trace.read_bytes()
    assert a.endswith(b"\n")
    # by hand: the cut is the end of the line holding the middle byte
    middle = trace.stat().st_size // 2
    ends = [sum(len(x) for x in lines[:k + 1]) for k in range(len(lines))]
    assert len(a) == next(e for e in ends if e > middle)


def test_timed_together_runs_every_command_and_sums_their_cpu(tmp_path):
    out = [tmp_path / "a", tmp_path / "b"]
    spin = "import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.2: pass\nopen(sys.argv[1], 'w').write('x')"
    p = benchproc.timed_together([[sys.executable, "-c", spin, o] for o in out])
    assert all(o.read_text() == "x" for o in out)
    assert p.cpu_s >= 0.4          # each burnt at least 0.2 s of CPU
    assert p.rss_bytes > 0


def test_timed_together_reports_a_failure_with_its_stderr(tmp_path):
    with pytest.raises(benchproc.Failed, match="boom"):
        benchproc.timed_together([[sys.executable, "-c", "pass"],
                                  [sys.executable, "-c", "import sys; sys.exit('boom')"]])


def test_file_create_us_makes_the_files_in_a_new_directory_and_keeps_them(tmp_path):
    """The probe of what making a file costs where the sweeps' stores are made: n empty files
    in one new directory under the place given, left there (removing them would make the
    next files dearer on ext4 without a journal: benchproc.FS_PROBE), and a CPU time each."""
    import resource

    def children_cpu_s() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    before = children_cpu_s()
    us = benchproc.file_create_us(tmp_path, n=50)
    probe_cpu_s = children_cpu_s() - before
    made = list(tmp_path.iterdir())
    assert len(made) == 1 and made[0].is_dir() and made[0].name.startswith("fs-probe-")
    assert sorted(int(p.name) for p in made[0].iterdir()) == list(range(50))
    assert all(p.stat().st_size == 0 for p in made[0].iterdir())
    # CPU per file in microseconds: some, and the 50 files' share of the probe's whole CPU time
    assert 0 < us * 50 / 1e6 <= probe_cpu_s, (us, probe_cpu_s)
