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


def test_every_generated_page_and_block_is_current():
    """What `make docs` commits comes from code alone (the config model, the catalogues, the policy
    packs, the failure table): the config reference, the catalogue, the policy table, the failure
    table and the migration's steps are what the code says today."""
    stale = [str(path.relative_to(ROOT)) for path, text in docs.pages().items() if path.read_text() != text]
    assert stale == [], f"stale generated docs, run `make docs`: {stale}"


def test_onboarding_a_team_changes_no_committed_page_and_make_docs_writes_the_stack_views(
    plans, unit_plans, monkeypatch, tmp_path
):
    """Two pull requests onboarding teams at once never conflict on a generated page: the pages
    that restate the stack files (the environments table, prod's diagram, the configuration by
    stack, who reaches what, the migration commands, the delivery's grants) go to out/docs/."""
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    for path in (ROOT / "stacks").glob("Pulumi.*.yaml"):
        (project / "stacks" / path.name).write_text(path.read_text())
    prod = project / "stacks" / "Pulumi.prod.yaml"
    team = (
        "    vision:\n      entraGroupObjectIds: [1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d]\n      namespaces: [vision]\n"
    )
    # A team, and its GPUs from a bigger pool (docs/gpus.md, "Quotas").
    grown = prod.read_text().replace("  platform:teams:\n", "  platform:teams:\n" + team, 1)
    prod.write_text(grown.replace("maxCount: 250", "maxCount: 252", 1))
    committed = docs.pages()
    original = docs.read_stack_config
    monkeypatch.setattr(
        docs, "read_stack_config", lambda root, stack: original(project if root == ROOT else root, stack)
    )
    assert "vision" in docs.stack_configs()["prod"].teams
    assert docs.pages() == committed
    assert all(path.parent == docs.OUT for path in docs.stack_views())
    monkeypatch.setattr(docs, "environment_plan", lambda stack: unit_plans[stack])
    monkeypatch.setattr(docs, "single_stack_plan", lambda stack: plans[stack])
    views = docs.stack_views()
    assert "| teams / workloads | 2 / 3 | 2 / 3 | 3 / 3 | 2 / 1 |" in views[docs.OUT / "environments.md"]()
    assert "pulumi state move --source prod --dest prod.foundation" in views[docs.OUT / "migration-prod.md"]()


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
