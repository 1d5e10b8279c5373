"""Text from users, traces and queries is printed literally (issue 41): rich markup
(`[/x]`, `[link=...]`, `[bold]`) and emoji codes in labels, flow names, tracekit-meta
headers, query results and file names are shown as typed, and control characters (ESC,
carriage return, backspace, NUL, DEL, newline) in table cells reach the terminal as visible
escapes; CSV and JSON keep the exact values. On the real `tracekit` command over real ns-2
traces."""
from __future__ import annotations

import csv
import io
import json
import os
import pty
import select
import struct
import subprocess
import time
from pathlib import Path

import pytest

from conftest import TRACEKIT_CMD

MARKUP = ["[", "]", "[/x]", "[link=https://e.invalid]x[/link]", "[bold]b[/bold]", ":thumbs_up:"]
# a value with control characters, and how a table shows it (written out by hand)
CONTROL = "a\x1b[31mred\rb\x08c\x00d\x7fe\nf\tg"
CONTROL_SHOWN = r"a\x1b[31mred\rb\x08c\x00d\x7fe\nf\tg"
RAW_CONTROLS = ["\x1b", "\r", "\x08", "\x00", "\x7f", "\t"]


def tk(*args) -> subprocess.CompletedProcess:
    """The installed `tracekit`, its tables unwrapped (no COLUMNS) so that a long cell stays
    on one line; its output decoded without newline translation, so that a carriage return
    it prints stays one."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TRACEKIT_DATA", "TRACEKIT_DEBUG")}
    p = subprocess.run([*TRACEKIT_CMD, *map(str, args)], capture_output=True, timeout=120, env=env)
    return subprocess.CompletedProcess(p.args, p.returncode, p.stdout.decode(), p.stderr.decode())


def ok(p: subprocess.CompletedProcess) -> str:
    assert p.returncode == 0, (p.returncode, p.stdout[-1000:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr and "MarkupError" not in p.stderr, p.stderr
    return p.stdout


def no_raw_controls(text: str) -> None:
    for ch in RAW_CONTROLS:
        assert ch not in text, (ch, text[-2000:])


def sql_literal(s: str) -> str:
    """A DuckDB string expression for s, its control characters as chr() (by hand, not the
    code under test)."""
    parts = []
    for ch in s:
        parts.append(f"chr({ord(ch)})" if ord(ch) < 32 or ord(ch) == 127 else "'" + ch.replace("'", "''") + "'")
    return " || ".join(parts)


VALUES = [*MARKUP, CONTROL]
QUERY = ("SELECT * FROM (VALUES " + ", ".join(f"({i}, {sql_literal(v)})" for i, v in enumerate(VALUES))
         + ') t(i, "[bold]s[/bold]") ORDER BY i')


@pytest.fixture(scope="module")
def store(tmp_path_factory, ns_traces) -> Path:
    """Two runs of one scenario from real ns-2 traces: one with markup and control characters
    in its tracekit-meta header, one with them in --label and --flow-label."""
    d = tmp_path_factory.mktemp("markup")
    body = ns_traces["wired_plain"].read_text()
    meta = {"scenario": "[/evil]", "seed": 1, "params": {"variant": "[bold]b[/bold]", "note": CONTROL},
            "flows": {"1": "[link=https://e.invalid]x[/link]"}}
    t1 = d / "meta.tr"
    t1.write_text("# tracekit-meta " + json.dumps(meta) + "\n" + body)
    t2 = d / "labels.tr"
    t2.write_text("# tracekit-meta " + json.dumps({"scenario": "[/evil]", "seed": 2}) + "\n" + body)
    s = d / "a[" / "x]"          # the store's path holds `[/x]`: the title of `runs`
    ok(tk("ingest", t1, "--data", s, "--label", "tag=t\x1b[31mred"))
    ok(tk("ingest", t2, "--data", s, "--label", "tag=t\x1b[31mred", "--label", "variant=[/x]", "--label", "x=[/oops]",
          "--label", "esc=a\x1b[31mred", "--flow-label", "1=[/x]"))
    return s


def test_sql_table_prints_query_results_literally(store):
    out = ok(tk("sql", "--data", store, QUERY))
    lines = out.splitlines()
    assert any("[bold]s[/bold]" in ln for ln in lines[:3]), out          # the column name
    for v in MARKUP:
        assert any(ln.startswith("│ ") and f"│ {v} " in ln for ln in lines), (v, out)
    assert f"│ {CONTROL_SHOWN} " in out, out
    no_raw_controls(out)


def test_sql_csv_and_json_keep_the_exact_values(store):
    rows = list(csv.reader(io.StringIO(ok(tk("sql", "--data", store, "--format", "csv", QUERY)), newline="")))
    assert rows == [["i", "[bold]s[/bold]"], *([str(i), v] for i, v in enumerate(VALUES))]
    got = json.loads(ok(tk("sql", "--data", store, "--format", "json", QUERY)))
    assert got == [{"i": i, "[bold]s[/bold]": v} for i, v in enumerate(VALUES)]


def test_runs_shows_labels_meta_headers_and_the_store_path_literally(store):
    out = ok(tk("runs", "--data", store))
    assert out.splitlines()[0].rstrip() == f"runs in {store}"
    assert str(store).endswith("a[/x]")
    for text in ("[/evil]", "variant=[bold]b[/bold]", f"note={CONTROL_SHOWN}", "variant=[/x]", "x=[/oops]",
                 r"esc=a\x1b[31mred"):
        assert text in out, (text, out)
    no_raw_controls(out)
    rows = list(csv.DictReader(io.StringIO(ok(tk("runs", "--data", store, "--format", "csv")), newline="")))
    assert {r["scenario"] for r in rows} == {"[/evil]"}
    assert sorted(json.loads(r["labels"]).get("note", "") for r in rows) == ["", CONTROL]   # a JSON object per cell


def test_metrics_shows_flow_names_literally(store):
    out = ok(tk("metrics", "--data", store))
    flow_stats = out.split("\nfairness (")[0]
    lines = [ln for ln in flow_stats.splitlines() if ln.startswith("│ ")]
    names = {ln.split("│")[3].strip() for ln in lines if ln.split("│")[2].strip() == "1"}
    assert names == {"[link=https://e.invalid]x[/link]", "[/x]"}, out
    no_raw_controls(out)
    got = json.loads(ok(tk("metrics", "--data", store, "--format", "json")))
    assert {r["name"] for r in got["flow_stats"] if r["fid"] == 1} == {"[link=https://e.invalid]x[/link]", "[/x]"}


def test_compare_shows_label_values_literally(store):
    out = ok(tk("compare", "[/evil]", "--by", "variant", "--data", store))
    cells = {ln.split("│")[1].strip() for ln in out.splitlines() if ln.startswith("│ ")}
    assert cells == {"[bold]b[/bold]", "[/x]"}, out
    assert "[/evil]: 2 runs with a seed" in out, out


def test_compare_lines_show_control_characters_as_escapes(store):
    out = ok(tk("compare", "[/evil]", "--by", "variant", "--per", "tag", "--data", store))
    assert r"at tag=t\x1b[31mred" in out, out
    no_raw_controls(out)


def _read_tty(fd: int, proc: subprocess.Popen, timeout_s: float = 120) -> bytes:
    """Everything written to the pty until the command exits and it closes."""
    out = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:         # EIO: every writer has closed the pty
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    return out


def test_ingest_progress_shows_file_names_literally(tmp_path, ns_traces):
    """stderr a terminal: the progress bar names the file being read (rich)."""
    import fcntl
    import termios

    name = "t[bold]x[link=https:e.invalid]y:thumbs_up:\x1b]0;owned\x07.tr"     # no `/` in a file name
    f = tmp_path / name
    f.write_bytes(ns_traces["wired_plain"].read_bytes())
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 250, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TRACEKIT_DATA", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    try:
        proc = subprocess.Popen([*TRACEKIT_CMD, "ingest", str(f), "--data", str(tmp_path / "s")],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave, env=env)
        os.close(slave)
        tty = _read_tty(master, proc)
        stdout, _ = proc.communicate(timeout=120)
    finally:
        os.close(master)
    err = tty.decode("utf-8", "replace")
    assert proc.returncode == 0, (proc.returncode, err[-2000:])
    assert "MarkupError" not in err, err
    assert r"t[bold]x[link=https:e.invalid]y:thumbs_up:\x1b]0;owned\x07.tr" in err, err      # the bar's description, escaped
    assert b"\x1b]0;owned" not in tty                          # the title-setting sequence never ran
    assert b"added run " in stdout and b"added run " not in tty   # stdout, a pipe, keeps its lines
