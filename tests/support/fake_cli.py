"""Fake `az` and `gh` for scripts/doctor.py: they answer read-only calls from a tenant document
(JSON) and log every call, so a test can assert the doctor never ran anything but a read.

The tenant document: `az_account` (what `az account show` prints; null: not signed in),
`gh_signed_in`, `arm` (ARM path, lower case, without api-version -> body, as `az rest` prints
it), `arm_denied` (paths answering 403), `usage` ("<subscription>/<region>" -> what `az vm
list-usage` prints), `gh` (API path, without per_page/page/includes_parents -> body) and
`gh_denied`. `prepared_tenant` builds one where every check of an environment passes, in the
shapes the APIs document (see planning/doctor/ for the references)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from planning.delivery import FEATURES, GITHUB_AUDIENCE, GITHUB_ISSUER
from tests.support.fake_tools import ANSWERS

# The executables: log the call, answer it as tests/support/fake_tools.py does.
FAKE_TOOL = r"""
import json, os, sys
sys.path.insert(0, {support!r})
from fake_tools import ANSWERS
args = sys.argv[1:]
with open(os.environ["FAKE_CLI_LOG"], "a") as log:
    log.write(json.dumps([{tool!r}, *args]) + "\n")
code, out, err = ANSWERS[{tool!r}](args, json.load(open(os.environ["FAKE_CLI_TENANT"])))
sys.stdout.write(out)
sys.stderr.write(err)
sys.exit(code)
"""


class FakeCli:
    def __init__(self, root: Path, tenant: dict[str, Any]):
        self.bin = root / "bin"
        self.bin.mkdir()
        self.log = root / "calls.jsonl"
        self.tenant_file = root / "tenant.json"
        self.tenant = tenant
        for name in ANSWERS:
            # -S: no site packages, so each call starts in a few milliseconds.
            source = FAKE_TOOL.format(support=str(Path(__file__).resolve().parent), tool=name)
            (self.bin / name).write_text(f"#!{sys.executable} -S\n{source}")
            (self.bin / name).chmod(0o755)
        self.save()

    def run(self, command: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        """The executables' answer without starting them (the doctor's `Cli(run=...)`): the same
        log line and the same answer, for the tests that are not about the process itself."""
        if command[0] not in ANSWERS:
            raise FileNotFoundError(command[0])
        with self.log.open("a") as log:
            log.write(json.dumps([command[0], *command[1:]]) + "\n")
        code, out, err = ANSWERS[command[0]](command[1:], json.loads(self.tenant_file.read_text()))
        return subprocess.CompletedProcess(command, code, out, err)

    def save(self) -> None:
        self.tenant_file.write_text(json.dumps(self.tenant))

    def environment(self, *, with_tools: bool = True) -> dict[str, str]:
        return {
            "PATH": f"{self.bin}:/usr/bin:/bin" if with_tools else "/nonexistent",
            "FAKE_CLI_LOG": str(self.log),
            "FAKE_CLI_TENANT": str(self.tenant_file),
        }

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


def _resource(resource_id: str, **more: Any) -> dict[str, Any]:
    return {"id": resource_id, "name": resource_id.rsplit("/", 1)[-1], **more}


def prepared_tenant(expect: Any) -> dict[str, Any]:
    """A tenant and repository where every check of `expect` (scripts/doctor.py's Expectations)
    passes: what the delivery project and the hub's owner make, and quota of exactly the peak."""
    azure, github = expect.azure, expect.github
    arm: dict[str, Any] = {}

    def put(resource_id: str, body: dict[str, Any]) -> None:
        arm[resource_id.lower()] = body

    for sub in azure.subscriptions:
        put(f"/subscriptions/{sub}", {"id": f"/subscriptions/{sub}", "subscriptionId": sub, "state": "Enabled"})
    for sub, namespaces in azure.providers.items():
        for namespace in namespaces:
            put(
                f"/subscriptions/{sub}/providers/{namespace}",
                {"namespace": namespace, "registrationState": "Registered"},
            )
    for sub in azure.feature_subscriptions:
        for namespace, feature in FEATURES:
            put(
                f"/subscriptions/{sub}/providers/Microsoft.Features/providers/{namespace}/features/{feature}",
                {"name": f"{namespace}/{feature}", "properties": {"state": "Registered"}},
            )
    if azure.hub_vnet_id:
        put(azure.hub_vnet_id, _resource(azure.hub_vnet_id))
    for zone in azure.zones:
        zone_id = f"{azure.zones_group_id}/providers/Microsoft.Network/privateDnsZones/{zone}"
        put(zone_id, _resource(zone_id, location="global", type="Microsoft.Network/privateDnsZones"))
        link = {
            "name": "hub",
            "properties": {
                "virtualNetwork": {"id": azure.hub_vnet_id},
                "registrationEnabled": False,
                "virtualNetworkLinkState": "Completed",
                "provisioningState": "Succeeded",
            },
        }
        put(f"{zone_id}/virtualNetworkLinks", {"value": [link]})
    if azure.monitor_scope_id:
        put(azure.monitor_scope_id, _resource(azure.monitor_scope_id, location="global"))
    for resource_id in (
        azure.resource_group_id,
        azure.storage_id,
        azure.container_id,
        azure.vault_id,
        *azure.key_ids,
        *azure.unit_group_ids,
    ):
        put(resource_id, _resource(resource_id))
    for identity in azure.identities:
        put(identity.id, _resource(identity.id, properties={"clientId": "c", "principalId": "p"}))
        credential = {
            "name": "github",
            "properties": {"issuer": GITHUB_ISSUER, "subject": identity.subject, "audiences": [GITHUB_AUDIENCE]},
        }
        put(f"{identity.id}/federatedIdentityCredentials", {"value": [credential]})
    usage: dict[str, list[dict[str, Any]]] = {}
    for need in expect.quota:
        usage.setdefault(
            f"{need.subscription}/{need.region}",
            [
                {
                    "currentValue": "0",
                    "limit": "100",
                    "localName": "Availability Sets",
                    "name": {"localizedValue": "Availability Sets", "value": "availabilitySets"},
                },
            ],
        ).append(
            {
                "currentValue": "0",
                "limit": str(need.vcpus),
                "localName": need.label,
                "name": {"localizedValue": need.label, "value": need.family},
            }
        )
    return {
        "az_account": {"user": {"name": "admin@example.com", "type": "user"}, "tenantId": "t", "id": "s"},
        "gh_signed_in": True,
        "arm": arm,
        "usage": usage,
        "gh": prepared_github(github),
    }


def prepared_github(github: Any) -> dict[str, Any]:
    repo = f"/repos/{github.owner}/{github.repository}"
    environments: list[dict[str, Any]] = []
    answers: dict[str, Any] = {}
    for rule in github.environments:
        protection = []
        if rule.teams:
            protection.append(
                {
                    "id": 1,
                    "type": "required_reviewers",
                    "prevent_self_review": rule.prevent_self_review,
                    "reviewers": [{"type": "Team", "reviewer": {"id": 7, "slug": team}} for team in rule.teams],
                }
            )
        if rule.main_only:
            protection.append({"id": 2, "type": "branch_policy"})
            answers[f"{repo}/environments/{rule.name}/deployment-branch-policies"] = {
                "total_count": 1,
                "branch_policies": [{"id": 3, "node_id": "MDE2", "name": "main", "type": "branch"}],
            }
        environments.append(
            {
                "id": len(environments) + 1,
                "name": rule.name,
                "can_admins_bypass": False,
                "protection_rules": protection,
                "deployment_branch_policy": {"protected_branches": False, "custom_branch_policies": True}
                if rule.main_only
                else None,
            }
        )
    answers[f"{repo}/environments"] = {"total_count": len(environments), "environments": environments}
    # Created before GitHub's immutable subjects, with the default template: `repo:<owner>/<repo>`.
    answers[repo] = {"id": 5678, "owner": {"id": 1234}, "created_at": "2024-05-01T10:00:00Z"}
    answers[f"{repo}/actions/oidc/customization/sub"] = {"use_default": True}
    if github.configured:
        answers[f"{repo}/rulesets"] = [
            {
                "id": 42,
                "name": "main: reviewed and checked",
                "target": "branch",
                "enforcement": "active",
                "source_type": "Repository",
                "source": f"{github.owner}/{github.repository}",
            },
        ]
        answers[f"{repo}/rulesets/42"] = {
            "id": 42,
            "name": "main: reviewed and checked",
            "target": "branch",
            "enforcement": "active",
            "bypass_actors": [],
            "conditions": {"ref_name": {"include": ["~DEFAULT_BRANCH"], "exclude": []}},
            "rules": [
                {"type": "deletion"},
                {"type": "non_fast_forward"},
                {"type": "pull_request", "parameters": {"required_approving_review_count": 1}},
                {
                    "type": "required_status_checks",
                    "parameters": {
                        "strict_required_status_checks_policy": True,
                        "required_status_checks": [
                            {"context": check, "integration_id": github.actions_app_id}
                            for check in github.required_checks
                        ],
                    },
                },
            ],
        }
    groups = [{"id": 1, "name": "Default", "visibility": "all", "default": True, "allows_public_repositories": True}]
    for number, name in enumerate(github.runner_groups, start=2):
        workflow = github.restricted.get(name)
        groups.append(
            {
                "id": number,
                "name": name,
                "visibility": "selected",
                "default": False,
                "allows_public_repositories": False,
                "restricted_to_workflows": bool(workflow),
                "selected_workflows": [workflow] if workflow else [],
            }
        )
    if github.runner_groups:
        listed = {"total_count": len(groups), "runner_groups": groups}
        answers[f"/orgs/{github.owner}/actions/runner-groups"] = listed
        answers[f"/orgs/{github.owner}/actions/runner-groups?visible_to_repository={github.repository}"] = (
            copy.deepcopy(listed)
        )
    return answers
