"""README.md is a landing page: small, opening with the two set-up commands CI and newcomers run,
and every link in it leading to a file of the repository (the manual lives in docs/)."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def test_readme_is_a_landing_page():
    assert len(README.encode()) <= 8 * 1024


def test_the_first_commands_are_the_demo_and_the_test_script():
    """The first code block: demo.sh, then test.sh (what .ci/run executes), as they are."""
    first = re.search(r"```sh\n(.*?)```", README, re.S)
    assert first
    commands = [line.split("#")[0].strip() for line in first.group(1).splitlines()]
    assert commands == ["./scripts/demo.sh", "./scripts/test.sh"]
    assert "exec ./scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
    for script in commands:
        assert (ROOT / script).is_file()


def test_every_relative_link_is_a_file_with_its_anchor():
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    relative = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert len(relative) >= 15
    for link in relative:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), link
        if anchor:
            # a heading of that page, in GitHub's spelling of anchors (as mkdocs.yml's slugify)
            headings = re.findall(r"^#+ (.+)$", target.read_text(), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}
            assert anchor in slugs, link


def test_the_docs_site_has_every_page_the_readme_links():
    """mkdocs.yml's nav lists each docs/ page the README points to (CHANGELOG.md sits outside docs/)."""
    nav = (ROOT / "mkdocs.yml").read_text()
    pages = set(re.findall(r":\s+([\w-]+\.md)\s*$", nav, re.M))
    linked = {Path(link.partition("#")[0]).name for link in re.findall(r"\]\((docs/[^)\s]+\.md(?:#[^)\s]*)?)\)", README)}
    assert linked and linked <= pages, linked - pages
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("mkdocs-material") for r in extras["test"])
