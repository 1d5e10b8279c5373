"""Command-level failures (issue 41): a sweep whose simulations fail ends, below its report of
each one, with the usual `tracekit: error: ...` line and exit 1; a number of simulations at
once (-j/--jobs) below 1 is a usage error (exit 2), in every command that takes one."""
from __future__ import annotations

import os
import subprocess

import pytest

from conftest import NS, TRACEKIT_CMD, ns_failing_for_seed_2

needs_ns = pytest.mark.skipif(not os.access(NS, os.X_OK), reason="ns-2 (/usr/bin/ns) is not installed")
FALSE = "/bin/false"       # an "ns-2" that fails at once, printing nothing


def tk(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("TRACEKIT_DATA", "TRACEKIT_DEBUG", "COLUMNS", "LINES")}
    return subprocess.run([*TRACEKIT_CMD, *map(str, args)], capture_output=True, text=True, timeout=timeout, env=e)


def error_lines(p: subprocess.CompletedProcess) -> list[str]:
    return [ln for ln in p.stderr.splitlines() if ln.startswith("tracekit: error: ")]


def test_a_sweep_of_failed_simulations_ends_with_one_error_line(tmp_path):
    p = tk("sweep", "cbr-variants", "--set", "duration=2", "--seeds", "1-2", "-j", "1", "--ns", FALSE,
           "--data", tmp_path / "store")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    # the report of each simulation above: which one, and what ns-2 did
    failed = [ln for ln in lines if ln.startswith("tracekit: failed: ")]
    assert sorted(ln.rsplit(" ", 1)[-1] for ln in failed) == ["seed=1", "seed=2"], p.stderr
    report = "\n".join(lines[:-1])
    assert report.count("ns-2 exited with status 1 running scenario cbr-variants") == 2, report
    # then the one error line, last
    assert error_lines(p) == [lines[-1]], p.stderr
    assert lines[-1].startswith("tracekit: error: 2 of 2 simulations failed"), lines[-1]
    assert "exited with status 1" in lines[-1]
    assert p.stdout.splitlines()[-1] == "sweep: 0 ran, 0 already in the store, 2 failed"


@needs_ns
def test_a_sweep_with_one_failure_among_others_that_land(tmp_path):
    wrapper = ns_failing_for_seed_2(tmp_path, NS)
    p = tk("sweep", "cbr-variants", "--set", "duration=1", "--seeds", "1-3", "-j", "2", "--ns", wrapper,
           "--data", tmp_path / "store")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "sweep: 2 ran, 0 already in the store, 1 failed" in p.stdout
    lines = p.stderr.splitlines()
    assert error_lines(p) == [lines[-1]], p.stderr
    assert lines[-1].startswith("tracekit: error: 1 of 3 simulations failed: "), lines[-1]
    assert "no-such-command" in p.stderr      # ns-2's own words, in the simulation's report


def test_reproduce_with_failed_simulations_ends_with_one_error_line(tmp_path):
    p = tk("reproduce", "cbr-exp1", "--quick", "-j", "2", "--ns", FALSE, "--data", tmp_path / "store")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.splitlines()
    n_failed = sum(ln.startswith("tracekit: failed: ") for ln in lines)
    assert n_failed > 0
    assert error_lines(p) == [lines[-1]], p.stderr
    assert lines[-1].startswith(f"tracekit: error: {n_failed} of {n_failed} simulations failed"), lines[-1]


# how each command with -j/--jobs is run without simulating anything
JOBS_COMMANDS = {"sweep": ["sweep", "cbr-variants", "--dry-run"], "reproduce": ["reproduce", "--list"]}


def _commands_with_jobs() -> set[str]:
    """The commands with an option that counts simulations at once (-j/--jobs)."""
    from typer.main import get_command

    from tracekit.apps.cli import app

    return {name for name, cmd in get_command(app).commands.items()     # type: ignore[attr-defined]
            if any("--jobs" in p.opts or "-j" in p.opts for p in cmd.params)}


def test_jobs_below_one_is_a_usage_error_in_every_command(tmp_path):
    assert _commands_with_jobs() == set(JOBS_COMMANDS)      # a new one is added above
    store = tmp_path / "store"
    for args in JOBS_COMMANDS.values():
        for opt in ("-j", "--jobs"):
            for jobs in ("-3", "0"):
                p = tk(*args, opt, jobs, "--data", store)
                assert p.returncode == 2, (args, opt, jobs, p.returncode, p.stdout, p.stderr)
                assert "Traceback" not in p.stderr and p.stdout == ""
                assert "Invalid value for '--jobs' / '-j'" in p.stderr and jobs in p.stderr, p.stderr
            ok = tk(*args, opt, "1", "--data", store)
            assert ok.returncode == 0, (args, ok.stderr)
    assert not store.exists()


def test_run_of_an_ns2_that_prints_nothing_is_one_line(tmp_path):
    p = tk("run", "cbr-variants", "--set", "duration=1", "--ns", FALSE, "--data", tmp_path / "store")
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.splitlines() == ["tracekit: error: ns-2 exited with status 1 running scenario cbr-variants, printing nothing"]


def test_ns2_not_found_names_the_option(tmp_path):
    p = tk("run", "cbr-variants", "--ns", tmp_path / "no-ns", "--data", tmp_path / "store")
    assert p.returncode == 1 and len(p.stderr.splitlines()) == 1, p.stderr
    assert "--ns PATH" in p.stderr, p.stderr
