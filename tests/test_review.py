"""The pull-request review: plans of a base and a head compared, with replacement predicted as
the providers would decide it, policies diffed, a diagram, capacity and cost (make review BASE=).

The pairs are real: a copy of this checkout is edited (a stack file, a component, a pack's
enforcement file) and previewed by scripts/review_side.py, as `make review` previews a base."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from facts.replacement import FORCE_NEW, STATEFUL, force_new
from offline.cost import HOURS_PER_MONTH, TOTAL_REGIONAL_VCPUS, Meter, Snapshot, capacity, load_snapshot, price
from offline.diagram import MAX_EDGES, MAX_TEXT, edge_count, mermaid
from offline.plandiff import diff_environment, diff_sides, leaf_changes, normal_urn
from offline.review_report import COMMENT_LIMIT, Side, render
from tests.conftest import ALL_STACKS, ROOT, copy_project, review_side

MERMAID = ROOT / "tools" / "mermaid"


def edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text()
    assert text.count(old) == count, f"{path.name}: expected {count} of {old!r}"
    path.write_text(text.replace(old, new))


def resources(document: dict[str, Any], environment: str) -> list[dict[str, Any]]:
    stacks = document["environments"][environment]["stacks"]
    return [r for stack in stacks.values() for r in stack["resources"]]


@pytest.fixture
def project(tmp_path) -> Path:
    return copy_project(tmp_path / "project")


# -- replacement and deletion, as the providers would decide them ----------------------------


def test_a_storage_accounts_immutable_property_is_a_replacement_finding_that_fails_the_review(
    project, head_side, tmp_path
):
    """Turning a Data Lake account flat changes `isHnsEnabled`, which azure-native replaces
    (forceNewMap): a new, empty account. The review names it, says why, and fails."""
    edit(project / "stacks" / "Pulumi.dev.yaml", "hierarchicalNamespace: true", "hierarchicalNamespace: false")
    head = review_side(project, ("dev",), tmp_path / "head.json")
    diff = diff_environment("dev", head_side["environments"]["dev"], head["environments"]["dev"])
    (account,) = [d for d in diff.findings if d.type == "azure-native:storage:StorageAccount"]
    assert account.action == "replace" and account.name == "storage-datasets"
    assert [c.path for c in account.causes] == ["isHnsEnabled"]
    assert "forceNewMap" in account.causes[0].source
    assert account.stateful == STATEFUL["azure-native:storage:StorageAccount"]
    report = render(Side("head", "h" * 40, head), Side("base", "b" * 40, head_side), [diff])
    assert not report.passed
    assert "⚠ 1 stateful, protected or locked StorageAccount replaced, deleted or changed one way" in report.headline
    assert "`isHnsEnabled`" in report.comment and "isHnsEnabled: true → false" in report.comment
    assert "create the new resource beside the old one" in report.comment


def test_the_programs_replace_on_changes_predicts_a_replacement(project, head_side, tmp_path):
    """A Key Vault's soft-delete retention is fixed at creation: the component says
    `replace_on_changes`, and the review reads it from the plan."""
    edit(project / "stacks" / "Pulumi.dev.yaml", "softDeleteRetentionDays: 7", "softDeleteRetentionDays: 30")
    head = review_side(project, ("dev",), tmp_path / "head.json")
    diff = diff_environment("dev", head_side["environments"]["dev"], head["environments"]["dev"])
    (vault,) = [d for d in diff.resources if d.type == "azure-native:keyvault:Vault"]
    assert vault.action == "replace" and vault.finding
    assert vault.causes[0].path == "properties.softDeleteRetentionInDays"
    assert "replaceOnChanges" in vault.causes[0].source


def test_renaming_with_an_alias_is_no_change_and_without_one_is_a_deletion(project, head_side, tmp_path):
    component = project / "components" / "keyvault.py"
    edit(component, 'f"{name}-vault",', 'f"{name}-kv",')
    unaliased = review_side(project, ("dev",), tmp_path / "unaliased.json")
    diff = diff_environment("dev", head_side["environments"]["dev"], unaliased["environments"]["dev"])
    assert {(d.action, d.name) for d in diff.resources} == {("create", "keyvault-kv"), ("delete", "keyvault-vault")}
    assert [d.name for d in diff.findings] == ["keyvault-vault"]

    edit(
        component,
        "parent=self, protect=service.protect,",
        'parent=self, aliases=[pulumi.Alias(name=f"{name}-vault")], protect=service.protect,',
    )
    aliased = review_side(project, ("dev",), tmp_path / "aliased.json")
    diff = diff_environment("dev", head_side["environments"]["dev"], aliased["environments"]["dev"])
    assert diff.resources == [] and diff.policy == []
    assert [(r.name, r.renamed_from.rsplit("::", 1)[-1]) for r in diff.renamed] == [("keyvault-kv", "keyvault-vault")]


def test_renaming_a_component_with_an_alias_carries_its_children(project, head_side, tmp_path):
    """The engine gives each child an alias under its parent's alias, with the parent's name
    prefix swapped (`inheritedChildAlias`): the vault, its endpoint and alerts stay; only the role
    assignment whose GUID the program derives from the name is replaced, nothing stateful."""
    platform = project / "components" / "platform" / "foundation.py"
    edit(
        platform,
        "        r: KeyVault(\n            vault_key(config, r),",
        '        r: KeyVault(\n            "secrets-" + vault_key(config, r),',
    )
    edit(
        platform,
        "                alert_routes=routes,\n            ),\n            opts=ctx.opts,",
        "                alert_routes=routes,\n            ),\n            opts=pulumi.ResourceOptions.merge(\n"
        "                ctx.opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(name=vault_key(config, r))])\n            ),",
    )
    head = review_side(project, ("dev",), tmp_path / "head.json")
    diff = diff_environment("dev", head_side["environments"]["dev"], head["environments"]["dev"])
    assert {r.name for r in diff.renamed} >= {"secrets-keyvault-vault", "secrets-keyvault-pe-vault"}
    assert [(d.action, d.type) for d in diff.resources] == [("replace", "azure-native:authorization:RoleAssignment")]
    assert diff.resources[0].causes[0].path == "roleAssignmentName" and not diff.findings


def test_the_engines_urns_qualify_a_child_by_its_whole_parent_chain():
    """The mock monitor qualifies a child by its parent's last type only; the engine by the whole
    chain, so a component moved under another grandparent changes its children's URNs."""
    from types import SimpleNamespace

    from scripts.review_side import engine_urns

    def captured(urn: str, type_: str, name: str, parent: str | None) -> SimpleNamespace:
        return SimpleNamespace(urn=urn, type=type_, name=name, parent=parent)

    stack = "urn:pulumi:dev::platform::pulumi:pulumi:Stack::platform-dev"
    for grandparent in ("platform:a:Outer", "platform:b:Other"):
        resources = [
            captured("g", grandparent, "outer", stack),
            captured("p", "platform:c:Inner", "inner", "g"),
            captured("c", "azure-native:storage:StorageAccount", "account", "p"),
        ]
        urns = engine_urns(resources, "dev", "platform")
        assert urns["g"] == f"urn:pulumi:dev::platform::{grandparent}::outer"
        assert (
            urns["c"]
            == f"urn:pulumi:dev::platform::{grandparent}$platform:c:Inner$azure-native:storage:StorageAccount::account"
        )


def test_a_base_whose_review_crashed_fails_and_compares_nothing(head_side):
    crashed = {"error": "Traceback: ImportError", "environments": {}}
    diffs = diff_sides(crashed, head_side)
    assert all(d.error and d.blocking and not d.resources for d in diffs)
    report = render(Side("head", None, head_side), Side("base", None, crashed), diffs)
    assert not report.passed and "the base's review crashed" in report.comment


def test_a_base_that_does_not_preview_is_not_compared_and_does_not_block_its_fix(head_side):
    broken = json.loads(json.dumps(head_side))
    broken["environments"]["dev"] |= {"ok": False, "error": "platform:network.podCidr: too small"}
    (dev,) = [d for d in diff_sides(broken, head_side) if d.environment == "dev"]
    assert dev.error and not dev.blocking and not dev.resources
    report = render(Side("head", None, head_side), Side("base", None, broken), diff_sides(broken, head_side))
    assert report.passed and "⚠ No comparison: the base does not preview dev" in report.comment


def test_removing_an_environment_deletes_everything_in_it_and_names_the_stateful(head_side):
    head = {"environments": {k: v for k, v in head_side["environments"].items() if k != "staging"}}
    (staging,) = [d for d in diff_sides(head_side, head) if d.environment == "staging"]
    assert {d.action for d in staging.resources} == {"delete"} and staging.findings
    report = render(Side("head", None, head), Side("base", None, head_side), diff_sides(head_side, head))
    assert "staging: the environment is removed; " in report.headline and "deleted" in report.headline
    assert not report.passed


def test_a_retained_resource_leaving_the_program_is_not_a_loss(head_side):
    environment = head_side["environments"]["dev"]
    base = json.loads(json.dumps(environment))
    account = next(r for s in base["stacks"].values() for r in s["resources"] if r["type"].endswith(":StorageAccount"))
    head = json.loads(json.dumps(base))
    for stack in head["stacks"].values():
        stack["resources"] = [r for r in stack["resources"] if r["urn"] != account["urn"]]
    (deleted,) = diff_environment("dev", base, head).resources
    assert deleted.finding
    account["options"]["retainOnDelete"] = True
    (deleted,) = diff_environment("dev", base, head).resources
    assert deleted.action == "delete" and deleted.retained and not deleted.finding


def test_a_pull_request_that_adds_a_namespace_creates_exactly_it_in_every_stack_with_the_team(
    project, head_side, tmp_path
):
    """research gains `research-eval` in dev and staging: each previews that namespace and what a
    team namespace gets, and nothing else changes (prod, where a whole team arrives, in
    tests/test_onboarding.py)."""
    stacks = project / "stacks"
    edit(stacks / "Pulumi.dev.yaml", "namespaces: [research]", "namespaces: [research, research-eval]")
    edit(
        stacks / "Pulumi.staging.yaml", "namespaces: [research, evals]", "namespaces: [research, evals, research-eval]"
    )
    changed = ("dev", "staging")
    head = review_side(project, changed, tmp_path / "head.json")
    base = {"environments": {name: head_side["environments"][name] for name in changed}}
    diffs = diff_sides(base, head)
    assert sorted(d.environment for d in diffs) == sorted(changed)
    for diff in diffs:
        assert diff.resources, f"{diff.environment}: no change"
        assert {d.action for d in diff.resources} == {"create"}, diff.environment
        for created in diff.resources:
            inputs = next(r for r in resources(head, diff.environment) if r["urn"] == created.urn)["inputs"]
            metadata = inputs.get("metadata", {})
            assert (
                "research-eval" in (metadata.get("namespace"), metadata.get("name"), created.name)
                or "research-eval" in created.name
            ), f"{diff.environment}: {created.type} {created.name} is not the new namespace's"
        namespaces = [d for d in diff.resources if d.type == "kubernetes:core/v1:Namespace"]
        clusters = len(
            [
                r
                for r in resources(head, diff.environment)
                if r["type"] == "azure-native:containerservice:ManagedCluster"
            ]
        )
        assert len(namespaces) == clusters and clusters >= 1
        assert not diff.policy, f"{diff.environment}: {diff.policy}"


def test_a_new_waiver_is_called_out_with_its_reason_approver_and_expiry(project, head_side, tmp_path):
    config = project / "policies" / "azure-platform" / "config" / "dev.json"
    document = json.loads(config.read_text())
    document["storage-shared-key-disabled"] = {
        "enforcementLevel": "advisory",
        "waiver": {"reason": "a vendor tool needs keys", "approvedBy": "security@example.com", "expires": "2027-01-31"},
    }
    config.write_text(json.dumps(document, indent=2))
    head = review_side(project, ("dev",), tmp_path / "head.json")
    diff = diff_environment("dev", head_side["environments"]["dev"], head["environments"]["dev"])
    kinds = {(p.kind, p.policy) for p in diff.policy}
    assert ("level", "storage-shared-key-disabled") in kinds and (
        "waiver-added",
        "storage-shared-key-disabled",
    ) in kinds
    report = render(Side("head", None, head), Side("base", None, head_side), [diff])
    assert "1 new waiver" in report.headline
    assert (
        "**new waiver**" in report.comment
        and "a vendor tool needs keys (approved by security@example.com, expires 2027-01-31)" in report.comment
    )


# -- the comparison itself -------------------------------------------------------------------


def test_changes_are_leaf_paths_with_named_list_items_and_secrets_masked():
    old = {"pools": [{"name": "a", "count": 1}, {"name": "b", "count": 2}], "key": {"[secret]": "1"}}
    new = {"pools": [{"name": "b", "count": 3}, {"name": "a", "count": 1}], "key": {"[secret]": "2"}}
    changes = {c.path: str(c) for c in leaf_changes(old, new)}
    assert changes == {"pools[name=b].count": "pools[name=b].count: 2 → 3", "key": "key: [secret] → [secret]"}
    # A list that changes, with a secret inside: item by item, and the digest never reaches the report.
    changes_ = [
        str(c) for c in leaf_changes({"env": [{"[secret]": "digest1"}]}, {"env": [{"[secret]": "digest2"}, "b"]})
    ]
    assert changes_ == ["env[-]: [secret] → (none)", "env[+]: (none) → [secret]", 'env[+]: (none) → "b"']


def test_lists_of_rules_diff_item_by_item_and_whole():
    """A Kafka ACL added, a network policy peer removed: each item whole, never the cut-off prefix
    both sides share; a role assignment's condition is read whole too."""
    acl = {
        "resource": {"type": "topic", "name": "training-metrics", "patternType": "literal"},
        "operations": ["Read", "Describe"],
        "host": "*",
    }
    added = {**acl, "resource": {**acl["resource"], "name": "checkpoint-events"}}
    old = {"spec": {"authorization": {"acls": [acl]}}, "condition": "a" * 200}
    new = {"spec": {"authorization": {"acls": [acl, added]}}, "condition": "a" * 199 + "b"}
    changes = [str(c) for c in leaf_changes(old, new)]
    assert changes[0] == f'condition: "{"a" * 200}" → "{"a" * 199}b"'
    assert changes[1].startswith("spec.authorization.acls[+]: (none) → ") and "checkpoint-events" in changes[1]
    assert "..." not in changes[1] and len(changes) == 2


def test_ignore_changes_hides_what_the_provider_would_ignore(head_side):
    environment = head_side["environments"]["dev"]
    head = json.loads(json.dumps(environment))
    pool = next(r for s in head["stacks"].values() for r in s["resources"] if r["type"].endswith(":AgentPool"))
    pool["inputs"]["count"] = pool["inputs"].get("count", 0) + 5
    assert "count" in pool["options"]["ignoreChanges"], "the autoscaler owns the node count"
    assert diff_environment("dev", environment, head).resources == []
    pool["inputs"]["vmSize"] = "Standard_D16ds_v5"
    (change,) = diff_environment("dev", environment, head).resources
    assert change.action == "replace" and change.causes[0].path == "vmSize" and change.finding


def test_every_stateful_type_has_its_replacement_rules():
    """A stateful Azure type without its own entry would be predicted replaced only when its
    resource group moves; Kubernetes kinds all replace on their name and namespace."""
    for token in STATEFUL:
        assert token in FORCE_NEW or token.startswith("kubernetes:"), token
        assert {"metadata.name", "metadata.namespace"} <= set(force_new(token)) or len(force_new(token)) > 1, token
    for token, rules in FORCE_NEW.items():
        assert all(source for source in rules.values()), token


def test_a_side_without_the_environment_is_all_creations(head_side):
    (diff,) = [d for d in diff_sides({"environments": {}}, head_side) if d.environment == "staging"]
    assert {d.action for d in diff.resources} == {"create"}
    assert len(diff.resources) == sum(1 for r in resources(head_side, "staging") if r["custom"])


# -- the diagram ------------------------------------------------------------------------------


def mermaid_parse(documents: dict[str, str], tmp_path: Path) -> dict[str, dict[str, Any]]:
    """Mermaid's own parser (tools/mermaid: mermaid.parse under Node with jsdom; `make tools`
    installs it), with its default limits."""
    assert (MERMAID / "node_modules" / "mermaid").is_dir(), "run `make tools` (npm ci in tools/mermaid)"
    files = []
    for name, text in documents.items():
        path = tmp_path / f"{name}.mmd"
        path.write_text(text)
        files.append(str(path))
    result = subprocess.run(["node", str(MERMAID / "parse.mjs"), *files], capture_output=True, text=True, check=False)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    return {Path(line["file"]).stem: line for line in lines}


def test_the_diagram_of_every_stack_parses_as_mermaid_within_its_limits(head_side, project, tmp_path):
    documents = {name: mermaid(resources(head_side, name)) for name in ALL_STACKS}
    # With a change highlighted: a new fleet, a changed VNet, a GPU pool replaced.
    every = resources(head_side, "prod")
    status = {normal_urn(r["urn"]): "create" for r in every if ":Fleet" in r["type"]}
    status |= {normal_urn(r["urn"]): "update" for r in every if r["type"].endswith(":VirtualNetwork")}
    status |= {normal_urn(r["urn"]): "replace" for r in every if r["inputs"].get("agentPoolName") == "h100"}
    documents["prod-changed"] = mermaid(every, status)
    documents["broken"] = "flowchart LR\n  a[unclosed\n"
    # The README's hand-drawn architecture, parsed as GitHub would render it.
    (readme,) = re.findall(r"```mermaid\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)
    documents["readme"] = readme
    parsed = mermaid_parse(documents, tmp_path)
    assert parsed.pop("broken")["ok"] is False, "the parser must be able to fail"
    for name, result in parsed.items():
        assert result["ok"], f"{name}: {result['error']}"
        assert result["type"] == "flowchart-v2"
    for name in ALL_STACKS:
        assert len(documents[name]) < MAX_TEXT / 5 and edge_count(documents[name]) < MAX_EDGES / 10
    applied = set(re.findall(r"^  class \S+ (\w+)$", documents["prod-changed"], flags=re.M))
    assert applied == {"added", "changed", "replaced"}, applied


def test_the_diagram_is_grouped_not_a_box_per_resource(head_side):
    """prod-scale (7,600 GPU nodes, 4 clusters) draws as few boxes as prod: a box per region's
    network, egress and endpoints, per cluster and its workloads, plus hub, data and fleet."""
    for name in ALL_STACKS:
        text = mermaid(resources(head_side, name))
        boxes = len(re.findall(r'^\s+\w+\["', text, flags=re.M)) - text.count("subgraph ")
        every = resources(head_side, name)
        regions = len({r["inputs"].get("location") for r in every if r["type"].endswith(":VirtualNetwork")})
        clusters = sum(1 for r in every if r["type"].endswith(":ManagedCluster"))
        assert boxes <= 3 * regions + 2 * clusters + 2 + regions + 1, name
    prod = mermaid(resources(head_side, "prod"))
    assert "h100: 0–250 × ND96isr_H100_v5 · 2,000 GPUs" in prod
    assert '-. "MirrorMaker 2" .->' in prod and "Fleet Manager fleet-ailab-prod" in prod


def test_make_docs_draws_prod_as_the_review_draws_it(head_side, unit_plans, monkeypatch):
    from scripts import docs

    monkeypatch.setattr(docs, "environment_plan", lambda stack: unit_plans[stack])
    assert docs.prod_diagram() == "```mermaid\n" + mermaid(resources(head_side, "prod")) + "```\n"


# -- capacity and cost ------------------------------------------------------------------------


def api_record(**fields: Any) -> dict[str, Any]:
    """A record shaped as the Retail Prices API returns them (test prices, not Azure's)."""
    record = {
        "currencyCode": "USD",
        "tierMinimumUnits": 0.0,
        "type": "Consumption",
        "unitOfMeasure": "1 Hour",
        "serviceName": "Virtual Machines",
        "productName": "Virtual Machines Ddsv5 Series",
        "effectiveStartDate": "2026-01-01T00:00:00Z",
    }
    return record | fields


def test_costs_come_only_from_the_snapshot_and_the_rest_is_listed_unpriced(head_side):
    dev = capacity(resources(head_side, "dev"))
    system = next(p for p in dev.pools if p.name == "system")

    def row(**fields: Any) -> dict[str, Any]:
        return api_record(
            **({"armRegionName": system.region, "armSkuName": system.vm_size, "skuName": "D4ds v5"} | fields)
        )

    records = (
        row(meterName="D4ds v5", retailPrice=2.0),
        # Windows, Spot and DevTest rows of the same size: never the pool's price.
        row(productName="Virtual Machines Ddsv5 Series Windows", retailPrice=9.0),
        row(skuName="D4ds v5 Spot", meterName="D4ds v5 Spot", retailPrice=0.5),
        row(type="DevTestConsumption", retailPrice=1.0),
    )
    snapshot = Snapshot(
        "2026-11-01", "https://prices.azure.com/api/retail/prices?api-version=2023-01-01-preview", "USD", records
    )
    priced = price(dev.items, snapshot)
    assert [row[0].what for row in priced.rows] == [f"pool {system.cluster}/system"]
    assert priced.monthly_min == 2.0 * HOURS_PER_MONTH * system.min_nodes
    assert priced.monthly_max == 2.0 * HOURS_PER_MONTH * system.max_nodes
    assert {item.what for item in priced.unpriced} == {item.what for item in dev.items} - {
        f"pool {system.cluster}/system"
    }
    empty = price(dev.items, Snapshot(None, snapshot.source, "USD", ()))
    assert empty.monthly_max == 0 and len(empty.unpriced) == len(dev.items)
    report = render(Side("head", None, head_side), None, None, snapshot=snapshot)
    assert "Retail Prices snapshot 2026-11-01" in report.full and "Unpriced" in report.full
    # With nothing in the snapshot, the comment says how to fill it.
    unfilled = render(Side("head", None, head_side), None, None, snapshot=Snapshot(None, snapshot.source, "USD", ()))
    assert "To fill it, run `make prices`" in unfilled.comment and ".github/workflows/prices.yml" in unfilled.comment


def test_the_committed_snapshot_is_the_apis_and_its_records_are_the_platforms_meters():
    snapshot = load_snapshot()
    assert snapshot.source.startswith("https://prices.azure.com/api/retail/prices?api-version=")
    assert snapshot.currency == "USD"
    for record in snapshot.records:
        assert {"retailPrice", "unitOfMeasure", "meterId", "armRegionName", "serviceName", "type"} <= set(record)


def test_capacity_names_the_vcpu_quota_per_family_and_region(head_side):
    prod = capacity(resources(head_side, "prod"))
    quota = prod.quota()
    h100 = [p for p in prod.pools if p.vm_size == "Standard_ND96isr_H100_v5"]
    assert h100 and all(p.surge_nodes >= 1 for p in h100)
    for region in {p.region for p in h100}:
        expected = sum(96 * (p.max_nodes + p.surge_nodes) for p in h100 if p.region == region)
        assert quota[(region, "standardNDSH100v5Family")] == expected
    assert prod.gpus()[1] == sum(p.max_nodes * p.gpus_per_node for p in prod.pools) > 0
    for region in {p.region for p in prod.pools}:
        families = sum(v for (r, family), v in quota.items() if r == region and family != TOTAL_REGIONAL_VCPUS)
        assert quota[(region, TOTAL_REGIONAL_VCPUS)] == families, "every family counts against the regional total"
    assert Meter("Virtual Machines", "eastus2", "1 Hour", arm_sku="Standard_D4ds_v5").api_filter() == (
        "serviceName eq 'Virtual Machines' and armRegionName eq 'eastus2' and priceType eq 'Consumption' "
        "and armSkuName eq 'Standard_D4ds_v5'"
    )


# -- the comment ------------------------------------------------------------------------------


def test_the_comment_fits_githubs_limit_even_when_everything_is_new(head_side):
    report = render(
        Side("head", "h" * 40, head_side),
        Side("base", "b" * 40, {"environments": {}}),
        diff_sides({"environments": {}}, head_side),
    )
    assert len(report.comment) <= COMMENT_LIMIT < len(report.full)
    assert report.comment.startswith("## Offline review of `hhhhhhh` against base `bbbbbbb`")
    first = report.comment.splitlines()[2]
    assert first.startswith("- ✅ dev: ") and " created" in first


def test_make_review_compares_a_commit_with_its_parent(project):
    """`scripts/review.py --base HEAD~1` in a repository whose last commit turns a Data Lake
    account flat: the base is checked out beside the head, both preview, and the review fails."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=project, check=True)
    subprocess.run([*git, "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=project, check=True)
    edit(project / "stacks" / "Pulumi.dev.yaml", "hierarchicalNamespace: true", "hierarchicalNamespace: false")
    subprocess.run([*git, "commit", "-qam", "flat datasets"], cwd=project, check=True)
    result = subprocess.run(
        [sys.executable, "scripts/review.py", "--base", "HEAD~1", "--stack", "dev"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "base: same pinned packages, this venv" in result.stdout
    comment = (project / "out" / "review.md").read_text()
    assert "❌ dev: 1 updated, 1 replaced, 2 deleted, ⚠ 1 stateful, protected or locked StorageAccount" in comment
    assert (
        not (project / "out" / "base").exists()
        and "base"
        not in subprocess.run(
            ["git", "worktree", "list"], cwd=project, capture_output=True, text=True, check=True
        ).stdout.split("\n", 1)[-1]
    )
    unknown = subprocess.run(
        [sys.executable, "scripts/review.py", "--base", "no-such-ref"],
        cwd=project,
        capture_output=True,
        text=True,
        check=False,
    )
    assert unknown.returncode == 2 and "is not a commit here" in unknown.stderr
    shutil.rmtree(project / "out")


def test_a_maintainers_label_accepts_a_deliberate_replacement_and_still_reports_it(head_side):
    environment = head_side["environments"]["dev"]
    head = json.loads(json.dumps(environment))
    account = next(r for s in head["stacks"].values() for r in s["resources"] if r["type"].endswith(":StorageAccount"))
    account["inputs"]["isHnsEnabled"] = not account["inputs"]["isHnsEnabled"]
    diff = diff_environment("dev", environment, head)
    assert [f.name for f in diff.findings] == [account["name"]]
    sides = (
        Side("head", None, {"environments": {"dev": head}}),
        Side("base", None, {"environments": {"dev": environment}}),
    )
    assert not render(*sides, [diff]).passed
    accepted = render(*sides, [diff], accept_findings=True)
    assert accepted.passed and "Accepted as deliberate by the `accept-replacement` label" in accepted.comment


def test_the_path_parameters_named_in_the_replacement_table_are_the_sdks_inputs(head_side):
    """Each azure-native path parameter the table names is an input of that resource in the
    pinned SDK, and every azure-native type the environments deploy has its entry."""
    import importlib
    import inspect

    from facts.replacement import PATH

    def camel(name: str) -> str:
        head, *rest = name.split("_")
        return head + "".join(part[:1].upper() + part[1:] for part in rest)

    for token, rules in FORCE_NEW.items():
        if not token.startswith("azure-native:"):
            continue
        _, module, kind = token.split(":")
        cls = getattr(importlib.import_module(f"pulumi_azure_native.{module}"), kind)
        parameters = {camel(p) for p in inspect.signature(cls._internal_init).parameters}
        for path, source in rules.items():
            if source == PATH:
                # The SDK's Python names: `resource_uri` -> resourceUri, `public_ip_address_name` -> publicIpAddressName.
                assert path in parameters, f"{token}: {path} is not an input ({sorted(parameters)})"
    deployed = {
        r["type"]
        for e in head_side["environments"]
        for r in resources(head_side, e)
        if r["type"].startswith("azure-native:")
    }
    assert deployed - set(FORCE_NEW) == set()


def test_a_provider_renamed_with_an_alias_replaces_nothing_and_without_one_everything_it_deployed(head_side):
    base = head_side["environments"]["dev"]
    stack = next(name for name in base["stacks"] if ".cluster-" in name)
    provider = next(r for r in base["stacks"][stack]["resources"] if r["type"] == "pulumi:providers:kubernetes")
    old, new = provider["urn"], provider["urn"] + "-renamed"

    def renamed(alias: bool) -> dict[str, Any]:
        head = json.loads(json.dumps(base))
        for r in head["stacks"][stack]["resources"]:
            if r["urn"] == old:
                r["urn"], r["name"], r["aliases"] = new, r["name"] + "-renamed", [old] if alias else []
            if r.get("provider") == old:
                r["provider"] = new
        return head

    deployed = sum(1 for r in base["stacks"][stack]["resources"] if r.get("provider") == old)
    assert deployed > 10
    aliased = diff_environment("dev", base, renamed(alias=True))
    assert aliased.resources == [] and [r.name for r in aliased.renamed] == [provider["name"] + "-renamed"]
    moved = diff_environment("dev", base, renamed(alias=False))
    assert sum(1 for d in moved.resources if d.action == "replace" and d.causes[-1].path == "provider") == deployed


def test_an_environment_without_changes_is_one_line_in_the_comment(head_side):
    """The onboarding comment was 38 KB of unchanged environments' tables and diagrams: an
    environment with nothing to review is one line there (the job summary keeps everything)."""
    head = json.loads(json.dumps(head_side))
    environment = head["environments"]["dev"]
    pool = next(r for s in environment["stacks"].values() for r in s["resources"] if r["type"].endswith(":AgentPool"))
    pool["inputs"]["vmSize"] = "Standard_D16ds_v5"
    report = render(Side("head", "h" * 40, head), Side("base", "b" * 40, head_side), diff_sides(head_side, head))
    sections = report.comment.split("\n### ")[1:]
    unchanged = [s for s in sections if not s.startswith(("✅ dev", "❌ dev"))]
    body = [[line for line in s.split("<sub>")[0].splitlines() if line.strip()] for s in unchanged]
    assert body and all(lines == [lines[0]] and lines[0].endswith("no change") for lines in body), body
    assert "Diagram" in next(s for s in sections if "dev" in s.splitlines()[0])
    # The full report (the job summary) keeps every environment's tables.
    assert report.full.count("**Policies:**") == len(sections)
