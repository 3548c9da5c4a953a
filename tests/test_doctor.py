"""`make doctor`: read-only checks of the real tenant and GitHub before a first deploy
(scripts/doctor.py, planning/doctor/). The script runs end to end against fake `az` and `gh`
first on PATH (tests/support/fake_cli.py), which answer from a tenant document and log every
call; the pure checks get canned answers. Nothing here previews a stack."""

from __future__ import annotations

import copy
import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planning.delivery import FEATURES
from planning.doctor import Answer
from planning.doctor import github as github_checks
from planning.doctor import quota as quota_checks
from planning.providers import registrations
from scripts import doctor
from tests.conftest import ROOT
from tests.support.fake_az import commands, option
from tests.support.fake_cli import FakeCli, prepared_tenant
from validation.delivery import parse_delivery_config
from validation.stackfile import read_stack_config

H100 = "standardNDSH100v5Family"


@functools.cache
def expectations(stack: str) -> doctor.Expectations:
    return doctor.load(stack)


def fake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stack: str = "prod", **edits: Any) -> FakeCli:
    """A fully prepared tenant for `stack`, first on PATH."""
    cli = FakeCli(tmp_path, copy.deepcopy(prepared_tenant(expectations(stack))))
    for name, value in cli.environment().items():
        monkeypatch.setenv(name, value)
    return cli


def run(cli: FakeCli, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    cli.save()
    # In process: the fake tools' answers without a process per call (the executables on PATH,
    # the same answers, are test_without_the_tools_it_says_so_and_never_a_traceback's).
    code = doctor.main(["--workers", "4", *args], cli=doctor.Cli(cli.run))
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    assert_read_only(cli.calls())
    return code, captured.out + captured.err


def assert_read_only(calls: list[list[str]]) -> None:
    """Every call the doctor made is a read: `az account show`, `az rest --method get`,
    `az vm list-usage`, `gh auth status`, `gh api --method GET` without a body."""
    assert calls
    for call in calls:
        tool, args = call[0], call[1:]
        if tool == "az":
            read = (
                args[:2] == ["account", "show"]
                or (args[:1] == ["rest"] and option(args, "--method") == "get" and "--body" not in args)
                or args[:2] == ["vm", "list-usage"]
            )
        else:
            body = {"-f", "-F", "--field", "--raw-field", "--input", "-X"}
            read = args[:2] == ["auth", "status"] or (
                args[:1] == ["api"] and option(args, "--method") == "GET" and not body & set(args)
            )
        assert read, f"not a read: {call}"
        assert not {"create", "update", "delete", "register", "put", "patch", "post"} & {a.lower() for a in args[:3]}


def finding_lines(out: str, check: str) -> str:
    """One check's section of the report: its status, then its findings and fixes."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{check:<14} "))
    body = [lines[start][15:]]
    for line in lines[start + 1 :]:
        if not line.startswith("  "):
            break
        body.append(line)
    return "\n".join(body)


def test_a_fully_prepared_tenant_passes_and_every_call_is_a_read(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_READY, out
    assert "ready: nothing missing for a first deploy of prod" in out
    for check in doctor.CHECKS:
        assert f"\n{check:<14} ok" in out, check
    calls = cli.calls()
    # It asked about what the environment needs, by the project's own names.
    urls = [option(c, "--url") or "" for c in calls if c[:2] == ["az", "rest"]]
    for name in (
        "id-ailab-deploy-prod-cluster",
        "pulumi-state-prod-tenants",
        "ailab-prod.privatelink.eastus2.azmk8s.io",
    ):
        assert any(name in url for url in urls), name
    assert next(c[:4] for c in calls if c[:2] == ["gh", "api"]) == ["gh", "api", "--method", "GET"]
    assert any("visible_to_repository=ai-platform" in c[-1] for c in calls if c[0] == "gh")


def test_an_environment_without_a_hub_checks_no_hub(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch, "dev")
    code, out = run(cli, capsys, "--stack", "dev")
    assert code == doctor.EXIT_READY, out
    assert "hub            ok (no hub in the stack file)" in out
    assert not any("privateDnsZones" in " ".join(c) for c in cli.calls())


def test_an_unregistered_provider_or_feature_is_reported_with_its_fix(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    sub = expectations("prod").azure.feature_subscriptions[0]
    cli.tenant["arm"][f"/subscriptions/{sub}/providers/microsoft.containerservice"]["registrationState"] = (
        "NotRegistered"
    )
    namespace, feature = FEATURES[1]
    cli.tenant["arm"][
        f"/subscriptions/{sub}/providers/microsoft.features/providers/{namespace}/features/{feature}".lower()
    ]["properties"]["state"] = "NotRegistered"
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_MISSING
    section = finding_lines(out, "providers")
    assert section.startswith("2 missing")
    assert f"resource provider Microsoft.ContainerService is NotRegistered in subscription {sub}" in section
    assert "fix: `scripts/register-providers --stack acme`" in section
    assert f"`az provider register --namespace Microsoft.ContainerService --subscription {sub}`" in section
    assert f"feature {namespace}/{feature} is NotRegistered" in section
    assert "`pulumi up -s acme` in delivery/" in section and f"--name {feature}" in section


def test_a_missing_zone_an_unlinked_zone_and_a_missing_monitor_scope_are_reported(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    azure = expectations("prod").azure
    zones = f"{azure.zones_group_id}/providers/Microsoft.Network/privateDnsZones".lower()
    del cli.tenant["arm"][f"{zones}/privatelink.blob.core.windows.net"]
    del cli.tenant["arm"][f"{zones}/privatelink.blob.core.windows.net/virtualnetworklinks"]
    # Linked to another VNet only.
    links = cli.tenant["arm"][f"{zones}/ailab-prod.privatelink.eastus2.azmk8s.io/virtualnetworklinks"]
    links["value"][0]["properties"]["virtualNetwork"]["id"] = (
        "/subscriptions/x/resourceGroups/y/providers/Microsoft.Network/virtualNetworks/other"
    )
    del cli.tenant["arm"][azure.monitor_scope_id.lower()]
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_MISSING
    section = finding_lines(out, "hub")
    assert section.startswith("3 missing")
    assert f"private DNS zone privatelink.blob.core.windows.net in {azure.zones_group_id} does not exist" in section
    assert (
        "`az network private-dns zone create --subscription 0b1f6471-1bf0-4dda-aec3-111122223333 "
        "--resource-group rg-hub-dns --name privatelink.blob.core.windows.net`" in section
    )
    assert "ailab-prod.privatelink.eastus2.azmk8s.io in" in section and "is not linked to the hub VNet" in section
    assert f"--virtual-network {azure.hub_vnet_id} --registration-enabled false" in section
    assert f"the hub's Azure Monitor private link scope {azure.monitor_scope_id} does not exist" in section
    assert "platform:operations.privateLinkScope.scopeId" in section


def test_a_monitor_scope_that_answers_403_is_reported_not_passed(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    cli.tenant["arm_denied"] = [expectations("prod").azure.monitor_scope_id.lower()]
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_MISSING
    assert "Azure Monitor private link scope" in finding_lines(out, "hub")
    assert "cannot be read with your sign-in (Forbidden" in finding_lines(out, "hub")


def test_a_zones_link_on_a_later_page_counts(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    azure = expectations("prod").azure
    key = f"{azure.zones_group_id}/providers/Microsoft.Network/privateDnsZones/privatelink.azurecr.io/virtualNetworkLinks".lower()
    hub_link = cli.tenant["arm"][key]["value"]
    other = copy.deepcopy(hub_link[0])
    other["properties"]["virtualNetwork"]["id"] = (
        "/subscriptions/x/resourceGroups/y/providers/Microsoft.Network/virtualNetworks/spoke"
    )
    cli.tenant["arm"][key] = {
        "value": [other],
        "nextLink": f"https://management.azure.com{key}?api-version=2024-06-01&$skiptoken=2",
    }
    cli.tenant["arm"][f"{key}?$skiptoken=2"] = {"value": hub_link}
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_READY, out


def test_an_unreachable_subscription_is_reported_once_not_as_everything_in_it(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    state = expectations("prod").azure.resource_group_id.split("/")[2]
    del cli.tenant["arm"][f"/subscriptions/{state}"]
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_MISSING
    assert f"subscription {state} (the delivery's state, keys and identities) is not reachable" in out
    assert "`az account list --all --output table`" in finding_lines(out, "subscriptions")
    assert finding_lines(out, "delivery").startswith(f"1 missing\n  - not checked: subscription {state}")
    # Its providers are not asked about either.
    assert "providers      ok" in out


def test_gpu_quota_short_by_the_upgrade_surge_is_a_capacity_conversation(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    need = next(n for n in expectations("prod").quota if n.family == H100 and n.region == "eastus2")
    # prod's eus2 h100 pool: maxCount 250 of 96 vCPUs, maxSurge 1: the limit covers the max alone.
    assert need.vcpus == (250 + 1) * 96
    usage = cli.tenant["usage"][f"{need.subscription}/eastus2"]
    entry = next(u for u in usage if u["name"]["value"] == H100)
    entry["limit"], entry["currentValue"] = str(250 * 96 + 96), "96"
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_MISSING
    section = finding_lines(out, "quota")
    assert section.startswith("1 missing")
    assert f"{H100} in eastus2 (subscription {need.subscription}): the plan needs 24,096 vCPUs at peak" in section
    assert "eus2/h100 251x96" in section and "the limit is 24,096 with 96 in use: 96 short" in section
    assert "GPU quota is a capacity conversation with Microsoft" in section
    assert "--limit-object value=24192" in section and "`make capacity STACK=prod`" in section
    # The table shows needed, limit and in use per family.
    assert f"eastus2          {H100:<44}    24,096    24,096        96  short" in out


def test_a_cpu_family_short_gets_a_quota_request_and_an_unlisted_family_says_so(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    sub = expectations("prod").quota[0].subscription
    usage = cli.tenant["usage"][f"{sub}/southcentralus"]
    next(u for u in usage if u["name"]["value"] == "standardDDSv5Family")["limit"] = "100"
    usage.remove(next(u for u in usage if u["name"]["value"] == "standardEDSv5Family"))
    code, out = run(cli, capsys, "--stack", "prod")
    section = finding_lines(out, "quota")
    assert code == doctor.EXIT_MISSING and section.startswith("2 missing")
    assert "raise the limit to at least 35,524: `az quota update --resource-name standardDDSv5Family" in section
    assert "capacity conversation" not in section
    assert "standardEDSv5Family: the region lists no such quota in southcentralus" in section
    assert "`az vm list-skus --location southcentralus --size Standard_E16ds_v5 --output table`" in section


def test_a_missing_identity_or_federated_credential_is_reported_with_its_fix(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    azure = expectations("prod").azure
    planner = next(i for i in azure.identities if i.name == "id-ailab-plan-prod-data")
    deployer = next(i for i in azure.identities if i.name == "id-ailab-deploy-prod-cluster")
    del cli.tenant["arm"][planner.id.lower()]
    # Trusts a branch instead of its GitHub environment.
    credentials = cli.tenant["arm"][f"{deployer.id}/federatedIdentityCredentials".lower()]
    credentials["value"][0]["properties"]["subject"] = "repo:acme/ai-platform:ref:refs/heads/main"
    del cli.tenant["arm"][azure.key_ids[0].lower()]
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_MISSING
    section = finding_lines(out, "delivery")
    assert section.startswith("4 missing")
    assert "identity id-ailab-plan-prod-data does not exist" in section
    # The branch's credential is no way to its environment's token, and another way in.
    assert (
        "identity id-ailab-deploy-prod-cluster also trusts https://token.actions.githubusercontent.com "
        "repo:acme/ai-platform:ref:refs/heads/main" in section
    )
    assert "an administrator runs `pulumi up -s acme` in delivery/" in section
    assert (
        "identity id-ailab-deploy-prod-cluster has no federated credential for GitHub's "
        "repo:acme/ai-platform:environment:prod-cluster" in section
    )
    assert (
        "`az identity federated-credential create --subscription 11111111-1111-4111-8111-111111111111 "
        "--resource-group rg-ailab-delivery --identity-name id-ailab-deploy-prod-cluster --name github" in section
    )
    assert "the state key /subscriptions/" in section and "pulumi-state-prod-foundation does not exist" in section


def test_a_github_environment_without_reviewers_or_main_only_deploys_is_reported(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    envs = cli.tenant["gh"]["/repos/acme/ai-platform/environments"]["environments"]
    data = next(e for e in envs if e["name"] == "prod-data")
    data["protection_rules"] = [r for r in data["protection_rules"] if r["type"] != "required_reviewers"]
    cluster = next(e for e in envs if e["name"] == "prod-cluster")
    cluster["deployment_branch_policy"] = None
    envs.remove(next(e for e in envs if e["name"] == "prod-fleet-preview"))
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_MISSING
    section = finding_lines(out, "github")
    assert section.startswith("3 missing")
    assert "GitHub environment prod-data has no required reviewers (wanted: platform-leads, data-leads)" in section
    assert "GitHub environment prod-cluster deploys from any branch, not from main only" in section
    assert "GitHub environment prod-fleet-preview does not exist" in section
    assert "`pulumi up -s acme` in delivery/ with an organization owner's GITHUB_TOKEN" in section


def test_the_ruleset_and_runner_groups_are_checked(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    detail = cli.tenant["gh"]["/repos/acme/ai-platform/rulesets/42"]
    checks = next(r for r in detail["rules"] if r["type"] == "required_status_checks")
    checks["parameters"]["required_status_checks"] = [{"context": "make test"}]
    visible = cli.tenant["gh"]["/orgs/acme/actions/runner-groups?visible_to_repository=ai-platform"]
    visible["runner_groups"] = [g for g in visible["runner_groups"] if g["name"] != "platform-preview"]
    groups = cli.tenant["gh"]["/orgs/acme/actions/runner-groups"]["runner_groups"]
    deploy = next(g for g in groups if g["name"] == "platform-deploy")
    deploy["restricted_to_workflows"] = False
    code, out = run(cli, capsys, "--stack", "prod")
    section = finding_lines(out, "github")
    assert code == doctor.EXIT_MISSING and section.startswith("4 missing"), section
    assert "its check 'make test' is not bound to GitHub Actions (integration 15368)" in section
    assert "it does not require the check 'make review'" in section
    assert "runner group platform-preview of acme is not open to ai-platform" in section
    assert (
        "runner group platform-deploy of acme runs other workflows than acme/ai-platform/.github/workflows/pulumi.yml@refs/heads/main"
        in section
    )
    del cli.tenant["gh"]["/repos/acme/ai-platform/rulesets/42"]
    cli.tenant["gh"]["/repos/acme/ai-platform/rulesets"] = []
    code, out = run(cli, capsys, "--stack", "prod")
    assert 'the ruleset "main: reviewed and checked" on main of acme/ai-platform does not exist' in out


@pytest.mark.parametrize(
    ("signed_in", "expected"),
    [
        ({"az_account": None}, ["the Azure CLI is not signed in (Please run 'az login'", "fix: `az login`"]),
        (
            {"gh_signed_in": False},
            [
                "the GitHub CLI is not signed in to github.com",
                "`gh auth login --hostname github.com --scopes admin:org`",
            ],
        ),
    ],
)
def test_without_credentials_it_says_which_tool_and_how_to_sign_in(tmp_path, monkeypatch, capsys, signed_in, expected):
    cli = fake(tmp_path, monkeypatch)
    cli.tenant.update(signed_in)
    code, out = run(cli, capsys, "--stack", "prod")
    assert code == doctor.EXIT_NO_CREDENTIALS == 4
    assert "cannot check anything without signing in" in out
    for text in expected:
        assert text in out
    # Nothing was checked.
    assert not [c for c in cli.calls() if c[1] in ("rest", "api", "vm")]


def test_without_the_tools_it_says_so_and_never_a_traceback(tmp_path):
    cli = FakeCli(tmp_path, {})
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "doctor.py"), "--stack", "dev"],
        capture_output=True,
        text=True,
        env={**cli.environment(with_tools=False), "HOME": str(tmp_path)},
        timeout=120,
        check=False,
    )
    assert result.returncode == doctor.EXIT_NO_CREDENTIALS, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "the Azure CLI (az) is not installed" in result.stderr
    assert "the GitHub CLI (gh) is not installed" in result.stderr
    assert "https://learn.microsoft.com/cli/azure/install-azure-cli" in result.stderr


def test_no_github_checks_azure_alone(tmp_path, monkeypatch, capsys):
    cli = fake(tmp_path, monkeypatch)
    cli.tenant["gh_signed_in"] = False
    code, out = run(cli, capsys, "--stack", "prod", "--no-github")
    assert code == doctor.EXIT_READY, out
    assert "github         not checked (--no-github)" in out
    assert not [c for c in cli.calls() if c[0] == "gh"]


def test_each_stack_finds_the_delivery_stack_that_grants_it():
    assert expectations("prod").delivery_stack == "acme"
    assert expectations("prod-scale").delivery_stack == "acme-scale"
    # prod-scale's delivery has no delivery:github: reviewers and the ruleset are not known.
    assert not expectations("prod-scale").github.configured
    assert doctor.main(["--stack", "prod", "--delivery-stack", "acme-scale"]) == doctor.EXIT_USAGE


def test_quota_needs_count_every_pool_at_peak_and_spot_against_low_priority():
    needs = {(n.region, n.family): n for n in expectations("dev").quota}
    # dev: the Spot A100 pool (maxCount 4, maxSurge 1) counts against low-priority vCPUs alone.
    assert needs["eastus2", quota_checks.LOW_PRIORITY].vcpus == 5 * 24
    assert ("eastus2", "StandardNCADSA100v4Family") not in needs
    regional = needs["eastus2", quota_checks.REGIONAL].vcpus
    families = sum(n.vcpus for (_, family), n in needs.items() if family not in quota_checks._NAMES)
    assert regional == families


def test_quota_rows_read_the_clis_strings_and_a_failed_read_is_a_finding():
    need = quota_checks.QuotaNeed("s", "eastus2", H100, 200, ("eus2/h100 2x96",), ("Standard_ND96isr_H100_v5",), True)
    usage = {"s/eastus2": Answer([{"name": {"value": H100.upper()}, "limit": "192", "currentValue": "0"}])}
    (row,) = quota_checks.quota_rows([need], usage)
    assert (row.limit, row.in_use, row.short) == (192, 0, 8)
    failed = quota_checks.check_quota([need], {"s/eastus2": Answer(status="denied", message="403")}, "prod")
    assert [f.what for f in failed] == [
        "the vCPU quotas of eastus2 in subscription s cannot be read with your sign-in (403)"
    ]


def test_the_checks_read_what_they_are_given():
    """The pure checks, with canned answers: an environment list missing everything."""
    expect = expectations("staging").github
    listed = {github_checks.github_reads(expect)[0]: Answer({"total_count": 0, "environments": []})}
    found = github_checks.check_environments(expect, listed)
    assert len(found) == 10 and all(f.what.endswith("does not exist") for f in found)
    assert github_checks.check_environments(expect, {})[0].what.endswith("could not be read: not read")


def test_planning_providers_lists_what_register_providers_registers():
    """scripts/register-providers keeps its own lists until it reads planning/providers.py: its
    dry run registers exactly what the module says, in every subscription."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "register-providers"), "--dry-run"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    registered = {
        (str(option(c, "--subscription")), str(option(c, "--namespace")))
        for c in commands(result.stdout)
        if c[:2] == ["provider", "register"]
    }
    config = parse_delivery_config(read_stack_config(ROOT / "delivery", "acme").values)
    assert registered == {(sub, ns) for sub, namespaces in registrations(config).items() for ns in namespaces}


def test_the_doctor_names_the_docs_it_sends_readers_to():
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert "## make doctor" in operations
    assert "scripts/doctor.py" in operations
    assert f"`{doctor.EXIT_NO_CREDENTIALS}`" in operations and "make doctor STACK=" in operations


def test_a_repository_whose_tokens_name_another_subject_is_reported(tmp_path, monkeypatch, capsys):
    """The identities trust `repo:acme/ai-platform:environment:<env>`. A repository created after
    GitHub's immutable subjects (2026-07-15) is issued `repo:acme@<id>/ai-platform@<id>:...`, and a
    customized template changes the subject too: either way no job would sign in."""
    cli = fake(tmp_path, monkeypatch)
    repo = "/repos/acme/ai-platform"
    cli.tenant["gh"][repo]["created_at"] = "2026-09-01T08:00:00Z"
    cli.tenant["gh"][f"{repo}/actions/oidc/customization/sub"] = {
        "use_default": False,
        "include_claim_keys": ["repo", "context", "job_workflow_ref"],
    }
    code, out = run(cli, capsys, "--stack", "prod")
    section = finding_lines(out, "github")
    assert code == doctor.EXIT_MISSING and section.startswith("2 missing")
    assert "GitHub issues this repository's tokens (created 2026-09-01) as repo:acme@1234/ai-platform@5678" in section
    assert "set delivery:githubSubjectPrefix: repo:acme@1234/ai-platform@5678" in section
    assert "customizes its OIDC subject (repo, context, job_workflow_ref)" in section


def test_a_unit_group_the_delivery_has_not_made_is_reported(tmp_path, monkeypatch, capsys):
    """A new cluster (or region, or the fleet) deploys into a group only the delivery makes: until
    the delivery has run, the doctor says which group is missing and who makes it."""
    cli = fake(tmp_path, monkeypatch)
    missing = next(g for g in expectations("prod").azure.unit_group_ids if g.endswith("-scus-cluster"))
    del cli.tenant["arm"][missing.lower()]
    code, out = run(cli, capsys, "--stack", "prod")
    section = finding_lines(out, "delivery")
    assert code == doctor.EXIT_MISSING and section.startswith("1 missing")
    assert f"the unit resource group {missing} does not exist" in section
    assert "an administrator runs `pulumi up -s acme` in delivery/" in section


def test_the_fake_tools_on_path_answer_as_the_in_process_ones(tmp_path):
    """The executables (what a process finds on PATH) and `FakeCli.run` (what the other tests
    use) give the same answers and log the same calls."""
    cli = FakeCli(tmp_path, copy.deepcopy(prepared_tenant(expectations("dev"))))
    env = {**cli.environment(), "HOME": str(tmp_path)}
    commands = [
        ["az", "account", "show"],
        ["az", "rest", "--method", "get", "--url", "/subscriptions/none?api-version=2022-12-01"],
        ["gh", "auth", "status"],
        ["az", "group", "delete"],
    ]
    for command in commands:
        spawned = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        direct = cli.run(command)
        assert (spawned.returncode, spawned.stdout, spawned.stderr) == (direct.returncode, direct.stdout, direct.stderr)
    assert cli.calls() == [call for command in commands for call in (command, command)]
