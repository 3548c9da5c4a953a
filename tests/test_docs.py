"""The docs: generated pages and blocks match their sources, every link resolves, and the README
stays a front door."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from planning.layers import LAYERS
from scripts import docs

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", ROOT / "policies" / "README.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lowercase, punctuation dropped, spaces to hyphens."""
    anchors, fenced = set(), False
    for line in path.read_text().splitlines():
        fenced ^= line.startswith("```")
        if not fenced and line.startswith("#"):
            anchors.add(re.sub(r"[^\w\- ]", "", line.lstrip("#").strip().lower()).replace(" ", "-"))
    return anchors


def test_every_generated_page_and_block_is_current(plans, unit_plans, monkeypatch):
    """`make docs` output is committed: the config reference, the catalogue, the environments
    table, the policy table, the permissions table, the migration, the diagram and who can reach
    what are what the code says today (from the run's shared previews, which are the same)."""
    monkeypatch.setattr(docs, "single_stack_plan", lambda stack: plans[stack])
    monkeypatch.setattr(docs, "environment_plan", lambda stack: unit_plans[stack])
    stale = [str(path.relative_to(ROOT)) for path, text in docs.pages().items() if path.read_text() != text]
    assert stale == [], f"stale generated docs, run `make docs`: {stale}"


def test_the_environments_table_reads_the_stacks():
    table = docs.environments_table(docs.stack_configs())
    assert "| egress | NAT gateway (1 IP) | Azure Firewall Standard in each region" in table
    assert "7,600 nodes, 60,800 GPUs" in table, "prod-scale's GPU capacity at max"
    assert "| Defender | **off** | on | on | on |" in table, "dev's explicit weakening is marked"


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_resolves(page: Path):
    broken = []
    for text, target in LINK.findall(page.read_text()):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        destination = (page.parent / file).resolve() if file else page
        if not destination.exists():
            broken.append(f"[{text}]({target}): no {os.path.relpath(destination, ROOT)}")
        elif anchor and destination.suffix == ".md" and anchor not in _anchors(destination):
            broken.append(f"[{text}]({target}): no heading #{anchor}")
    assert broken == []


def test_the_readme_is_a_front_door_and_links_every_page():
    readme = (ROOT / "README.md").read_text()
    # Room for the regional failure table and the region-down runbook (issue 21), what is
    # watched and who is told (issue 22), and an example review comment (issue 23); generated
    # blocks (the tables, the diagram of prod) do not count.
    written = docs.BLOCK.sub(lambda m: m.group(1) + m.group(4), readme)
    assert len(written.splitlines()) <= 240
    for page in (ROOT / "docs").glob("*.md"):
        assert f"docs/{page.name}" in readme, f"README does not link docs/{page.name}"
    for command in ("make preview", "make test"):
        assert command in readme


DOC_PATH = re.compile(r"(?<![/\w.-])((?:docs|policies)/[A-Za-z0-9_/-]+\.md)\b")


def test_every_page_a_file_names_in_plain_text_exists():
    """Comments, descriptions and messages send readers to pages by path (`docs/kafka.md`);
    each must exist (links are checked above)."""
    sources = [
        path
        for pattern in (
            "**/*.py",
            "**/*.yaml",
            "**/*.yml",
            "**/*.md",
            "scripts/register-providers",
            "scripts/runner-job-started",
        )
        for path in ROOT.glob(pattern)
        if not any(part in ("venv", ".git", "node_modules") for part in path.relative_to(ROOT).parts)
    ]
    missing = sorted(
        f"{path.relative_to(ROOT)}: {named}"
        for path in sources
        for named in DOC_PATH.findall(path.read_text(errors="ignore"))
        if not (ROOT / named).exists()
    )
    assert missing == []


def test_the_readmes_architecture_shows_each_layer_what_it_owns_who_deploys_it_and_the_order():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.match(r"\| \d \| `<env>\.", line)]
    stacks = [re.search(r"`<env>\.([a-z]+)", row).group(1) for row in rows]
    assert stacks == list(LAYERS), "one row per layer, in deploy order"
    for number, row in enumerate(rows, 1):
        order, _, owns, deployed_by = [cell.strip() for cell in row.strip("|").split("|")]
        assert order == str(number) and owns and "identity" in deployed_by, row
    assert "docs/migration.md" in section
