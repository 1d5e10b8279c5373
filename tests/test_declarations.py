"""The one validation of the declaration files (tracekit/experiments/declarations.py), as the
scenario files and the paper files meet it: one line, naming the file and the key."""
from __future__ import annotations

import shutil

import pytest

from tracekit.analysis import reproduce as rp
from tracekit.experiments.declarations import DeclarationError, check_keys, number, read_toml
from tracekit.experiments.scenarios import TCL_DIR, ScenarioFileError, load_scenario_file

SPEC = {"name": True, "help": False}


def test_check_keys():
    t = {"name": "x"}
    assert check_keys(t, SPEC, "p") is t
    assert check_keys({"name": "x", "help": "h"}, SPEC, "p") == {"name": "x", "help": "h"}
    for table, message in (({"name": "x", "colour": 1}, "p: unknown key 'colour' (known: name, help)"),
                           ({"help": "h"}, "p: missing key 'name'"),
                           (["name"], "p: expected a table")):
        with pytest.raises(DeclarationError) as e:
            check_keys(table, SPEC, "p")
        assert str(e.value) == message
    with pytest.raises(rp.PaperFileError, match="^p: missing key 'name'$"):
        check_keys({}, SPEC, "p", rp.PaperFileError)


def test_number():
    assert number(3, "w") == 3 and isinstance(number(3, "w"), int) and number(2.5, "w") == 2.5
    for bad in (True, "3", float("inf"), float("nan"), [1]):
        with pytest.raises(DeclarationError, match="^w: expected a number$"):
            number(bad, "w")


def test_read_toml(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text('a = 1\n[b]\nc = "d"\n')
    assert read_toml(good) == {"a": 1, "b": {"c": "d"}}
    (tmp_path / "bad.toml").write_text("a = \n")
    (tmp_path / "latin.toml").write_bytes(b'a = "caf\xe9"\n')
    for name, fragment in (("bad.toml", "bad.toml: not valid TOML: "), ("latin.toml", "latin.toml: not UTF-8 text (byte 8)"),
                           ("gone.toml", "gone.toml: cannot read it: No such file or directory")):
        with pytest.raises(DeclarationError) as e:
            read_toml(tmp_path / name)
        assert str(e.value).startswith(fragment) and "\n" not in str(e.value), str(e.value)


def _scenario_copy(tmp_path, text: str):
    shutil.copy(TCL_DIR / "cbr-variants.tcl", tmp_path)
    path = tmp_path / "cbr-variants.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("what, text, message", [
    ("unknown key", None, ": unknown key 'colour' (known: "),
    ("TOML", "id = \n", "not valid TOML: "),
])
def test_scenario_and_paper_files_fail_alike(tmp_path, what, text, message):
    """The same defect in a scenario file and in a paper file: each a one-line error of its
    reader's class (both DeclarationErrors), naming its file, worded alike."""
    sc_text = (TCL_DIR / "cbr-variants.toml").read_text()
    paper_text = (rp.PAPERS_DIR / "002.toml").read_text()
    if text is None:
        sc_text, paper_text = 'colour = "red"\n' + sc_text, 'colour = "red"\n' + paper_text
    else:
        sc_text, paper_text = text, text
    (tmp_path / "papers").mkdir()
    paper = tmp_path / "papers" / "002.toml"
    paper.write_text(paper_text)
    with pytest.raises(ScenarioFileError) as sc_err:
        load_scenario_file(_scenario_copy(tmp_path, sc_text))
    with pytest.raises(rp.PaperFileError) as paper_err:
        rp.load_paper(paper)
    for err, name in ((sc_err.value, "cbr-variants.toml"), (paper_err.value, "002.toml")):
        msg = str(err)
        assert isinstance(err, DeclarationError) and msg.startswith(f"{name}: ") and "\n" not in msg, msg
        assert message in msg, msg
