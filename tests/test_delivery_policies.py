"""The packs on the delivery project (policies/delivery, and azure-platform's data rules with
config/delivery.json): both delivery stacks pass, and each policy fires on the one change it
exists to refuse: a grant that could hand out Owner, a token any branch can get, an environment
an admin can skip, a runner group any workflow can use."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest

from offline.engine import Plan
from offline.identities import delivery_plan
from offline.policy import load_pack_config, load_packs, review_plan
from planning.delivery import RBAC_ADMINISTRATOR
from planning.roles import BUILT_IN_ROLES
from tests.support.plan_edits import DELETE, changed, wire_inputs

DELIVERY_PACKS = {pack.name: pack for pack in load_packs(project="delivery")}
OWNER = BUILT_IN_ROLES["Owner"]


def review(plan: Plan):
    return review_plan(plan, "delivery", project="delivery")


def fired(result) -> set[tuple[str, str]]:
    """The mandatory rules a change fires (acme's shared subscription is advisory, waived)."""
    return {(policy, level) for policy, level in result.fired() if level == "mandatory"}


def grant_named(plan: Plan, role: str, *, conditioned: bool | None = None) -> str:
    """The name of the first role assignment of `role` in the plan."""
    for resource in plan.of_type("azure-native:authorization:RoleAssignment"):
        inputs = wire_inputs(resource)
        if inputs["roleDefinitionId"].endswith(role) and (
            conditioned is None or bool(inputs.get("condition")) == conditioned
        ):
            return resource.name
    raise AssertionError(f"no grant of {role}")


def with_condition(plan: Plan, replace: Callable[[str], str]) -> Plan:
    name = grant_named(plan, RBAC_ADMINISTRATOR, conditioned=True)
    condition = next(wire_inputs(r)["condition"] for r in plan.resources if r.name == name)
    return changed(plan, name, path="condition", value=replace(condition))


Change = tuple[str, str, Callable[[Plan], Plan]]
VIOLATIONS: list[Change] = [
    (
        "delivery-no-owner-grants",
        "a grant at a management group",
        lambda p: changed(
            p, "state-admins-vault", path="scope", value="/providers/Microsoft.Management/managementGroups/acme"
        ),
    ),
    (
        "delivery-role-administration-conditioned",
        "role administration without a condition",
        lambda p: changed(p, grant_named(p, RBAC_ADMINISTRATOR), path="condition", value=DELETE),
    ),
    (
        "delivery-role-administration-conditioned",
        "a delegation that hands out Owner",
        lambda p: with_condition(p, lambda c: c.replace("GuidEquals {", f"GuidEquals {{{OWNER}, ", 1)),
    ),
    (
        "delivery-role-administration-conditioned",
        "a condition on writes only",
        lambda p: with_condition(
            p, lambda c: c.split(" AND ((!(ActionMatches{'Microsoft.Authorization/roleAssignments/delete'}")[0]
        ),
    ),
    (
        "delivery-role-administration-conditioned",
        "a condition that also admits any role to any service principal",
        lambda p: with_condition(
            p,
            lambda c: c.replace(
                ")) AND ((!(ActionMatches{'Microsoft.Authorization/roleAssignments/delete'",
                " OR (@Request[Microsoft.Authorization/roleAssignments:PrincipalType] StringEqualsIgnoreCase "
                "'ServicePrincipal'))) AND ((!(ActionMatches{'Microsoft.Authorization/roleAssignments/delete'",
                1,
            ),
        ),
    ),
    (
        "delivery-role-administration-conditioned",
        "a condition that admits every role but the listed ones",
        lambda p: with_condition(
            p, lambda c: c.replace("ForAnyOfAnyValues:GuidEquals", "ForAnyOfAnyValues:GuidNotEquals")
        ),
    ),
    (
        "delivery-roles-allowed",
        "Key Vault Data Access Administrator, which also writes role assignments",
        lambda p: changed(
            p,
            "state-admins-vault",
            path="roleDefinitionId",
            value="/providers/Microsoft.Authorization/roleDefinitions/8b54135c-b56d-4d72-a534-26097cfdc8d8",
        ),
    ),
    (
        "delivery-custom-roles-narrow",
        "a custom role that rewrites role definitions",
        lambda p: changed(
            p, "hub-peer", path="permissions[0].actions", value=["Microsoft.Authorization/roleDefinitions/write"]
        ),
    ),
    (
        "delivery-federation-pinned",
        "a subject any repository can present (a customized template)",
        lambda p: changed(
            p, "id-ailab-deploy-dev-foundation-github", path="subject", value="environment:dev-foundation"
        ),
    ),
    (
        "delivery-federation-bound",
        "a deploy identity trusting the environment any branch may use",
        lambda p: changed(
            p,
            "id-ailab-deploy-dev-foundation-github",
            path="subject",
            value="repo:acme/ai-platform:environment:dev-foundation-preview",
        ),
    ),
    (
        "delivery-federation-bound",
        "an identity trusting an environment the delivery does not make",
        lambda p: changed(
            p, "id-ailab-plan-dev-foundation-github", path="subject", value="repo:acme/ai-platform:environment:dev-x"
        ),
    ),
    (
        "github-environments-protected",
        "protected branches, which with rulesets and no branch protection rule is every branch",
        lambda p: changed(
            p,
            "github-prod-cluster",
            path="deploymentBranchPolicy",
            value={"protectedBranches": True, "customBranchPolicies": False},
        ),
    ),
    (
        "github-deploys-from-main",
        "prod deploys from any branch",
        lambda p: changed(p, "github-prod-cluster-main", path="branchPattern", value="*"),
    ),
    (
        "delivery-custom-roles-narrow",
        "a custom role assignable at the tenant root",
        lambda p: changed(p, "hub-joiner", path="assignableScopes", value=["/"]),
    ),
    (
        "delivery-custom-roles-narrow",
        "a custom role with every data action",
        lambda p: changed(p, "hub-peer", path="permissions[0].dataActions", value=["*"]),
    ),
    (
        "delivery-federation-pinned",
        "a deploy identity trusting every pull request",
        lambda p: changed(
            p, "id-ailab-deploy-dev-foundation-github", path="subject", value="repo:acme/ai-platform:pull_request"
        ),
    ),
    (
        "delivery-federation-pinned",
        "a branch subject",
        lambda p: changed(
            p,
            "id-ailab-deploy-dev-foundation-github",
            path="subject",
            value="repo:acme/ai-platform:ref:refs/heads/main",
        ),
    ),
    (
        "github-environments-protected",
        "admins bypass prod's reviewers",
        lambda p: changed(p, "github-prod-cluster", path="canAdminsBypass", value=True),
    ),
    (
        "github-environments-protected",
        "prod without reviewers",
        lambda p: changed(p, "github-prod-cluster", path="reviewers", value=DELETE),
    ),
    (
        "github-environments-protected",
        "any branch deploys dev",
        lambda p: changed(p, "github-dev-cluster", path="deploymentBranchPolicy", value=DELETE),
    ),
    (
        "github-runner-groups-restricted",
        "runners open to every repository",
        lambda p: changed(p, "github-runners-preview", path="visibility", value="all"),
    ),
    (
        "github-runner-groups-restricted",
        "deploy runners open to every workflow",
        lambda p: changed(p, "github-runners-deploy", path="restrictedToWorkflows", value=False),
    ),
    (
        "github-default-branch-reviewed",
        "a ruleset someone bypasses",
        lambda p: changed(p, "github-main", path="bypassActors", value=[{"actorId": 5, "actorType": "RepositoryRole"}]),
    ),
    (
        "github-default-branch-reviewed",
        "a required check any token can post",
        lambda p: changed(
            p, "github-main", path="rules.requiredStatusChecks.requiredChecks[0].integrationId", value=DELETE
        ),
    ),
    (
        "github-default-branch-reviewed",
        "no code owners' review",
        lambda p: changed(p, "github-main", path="rules.pullRequest.requireCodeOwnerReview", value=False),
    ),
    (
        "github-workflow-token-read-only",
        "workflows write by default",
        lambda p: changed(p, "github-workflow-permissions", path="defaultWorkflowPermissions", value="write"),
    ),
    (
        "entra-applications-locked",
        "a served API's service principal issues tokens to every principal",
        lambda p: changed(p, "serving-prod-generate-principal", path="appRoleAssignmentRequired", value=False),
    ),
    (
        "entra-applications-locked",
        "a served API's application issues v1.0 tokens",
        lambda p: changed(p, "serving-prod-generate", path="api.requestedAccessTokenVersion", value=1),
    ),
    (
        "entra-applications-locked",
        "a served API's application takes other tenants' principals",
        lambda p: changed(p, "serving-staging-chat", path="signInAudience", value="AzureADMultipleOrgs"),
    ),
    (
        "entra-applications-locked",
        "a client secret for a served API's service principal",
        lambda p: changed(
            p, "serving-prod-chat-principal", type="azuread:index/servicePrincipalPassword:ServicePrincipalPassword"
        ),
    ),
    (
        "entra-no-tenant-wide-app-roles",
        "an identity assigned Graph's AppRoleAssignment.ReadWrite.All",
        lambda p: changed(
            p,
            "serving-prod-generate-trainer-Generate.Invoke",
            path="appRoleId",
            value="06b708a9-e830-4db3-a914-8e69da51d44f",
        ),
    ),
    (
        "storage-shared-key-disabled",
        "the state account takes shared keys",
        lambda p: changed(p, "state-account", path="allowSharedKeyAccess", value=True),
    ),
    (
        "keyvault-public-network-disabled",
        "the state vault is public",
        lambda p: changed(p, "state-vault", path="properties.publicNetworkAccess", value="Enabled"),
    ),
]


# A change that two rules see from two sides: a deploy environment open to other branches is also
# one whose deploy identity may change things.
ALSO = {"prod deploys from any branch": {"delivery-federation-bound"}}


@pytest.fixture(scope="module")
def acme() -> Plan:
    return delivery_plan("acme")


@pytest.mark.parametrize("stack", ["acme", "acme-scale", "starter"])
def test_every_delivery_stack_passes_its_packs(stack):
    from tests.test_delivery_project import starter_plan

    result = review(starter_plan() if stack == "starter" else delivery_plan(stack))
    assert result.mandatory == [], [(v.policy, v.resource_name, v.message) for v in result.mandatory]
    # acme's three environments share the offline subscription: advisory, under the example's waiver.
    shared = [v for v in result.advisory if v.policy == "delivery-environments-isolated"]
    assert [v.policy for v in result.advisory] == (["delivery-environments-isolated"] if stack == "acme" else [])
    assert all("holds the deploy grants of dev, prod, staging" in v.message for v in shared)
    assert {config.pack.name for config in result.configs} == {"azure-platform", "delivery"}


def test_every_delivery_policy_has_a_violating_case():
    # delivery-environments-isolated fires on acme as it is (its three environments share a
    # subscription): test_every_delivery_stack_passes_its_packs.
    covered = {policy for policy, _, _ in VIOLATIONS} | {"delivery-environments-isolated"}
    assert {p.name for p in DELIVERY_PACKS["delivery"].policies} <= covered


@pytest.mark.parametrize("policy, change, mutate", VIOLATIONS, ids=[f"{p}: {c}" for p, c, _ in VIOLATIONS])
def test_one_change_fires_exactly_its_delivery_policy(acme, policy, change, mutate):
    result = review(mutate(acme))
    expected = {policy, *ALSO.get(change, ())}
    assert fired(result) == {(p, "mandatory") for p in expected}, [(v.policy, v.message) for v in result.violations]
    assert not result.passed


def test_an_owner_grant_fires_both_owner_rules(acme):
    result = review(changed(acme, "state-admins-vault", path="roleDefinitionId", value=f"/providers/x/{OWNER}"))
    assert fired(result) == {
        ("delivery-no-owner-grants", "mandatory"),
        ("delivery-role-administration-conditioned", "mandatory"),
        ("delivery-roles-allowed", "mandatory"),
    }


def test_the_platform_rules_the_delivery_turns_off_are_the_ones_its_own_pack_replaces():
    """The delivery's job is to grant privileged, subscription-wide roles to identities that
    federate with GitHub: azure-platform's rules against exactly that are off for it, and the
    delivery pack's narrower rules hold instead. Everything else is mandatory."""
    config = load_pack_config(next(p for p in load_packs(project="delivery") if p.name == "azure-platform"), "delivery")
    off = {name for name, level in config.levels.items() if level.value != "mandatory"}
    assert off == {
        "role-assignments-not-privileged",  # delivery-no-owner-grants, delivery-role-administration-conditioned
        "workload-identity-narrow-scope",  # delivery identities are the deployers, not pods
        "federated-credential-trusted-issuer",  # delivery-federation-pinned: GitHub's issuer, one environment
    }
    delivery = load_pack_config(DELIVERY_PACKS["delivery"], "delivery")
    relaxed = {name for name, level in delivery.levels.items() if level.value != "mandatory"}
    assert relaxed == {w.policy for w in delivery.waivers} == {"delivery-environments-isolated"}


def test_the_platform_packs_do_not_review_the_delivery_and_the_delivery_pack_not_the_platform():
    platform = {pack.name for pack in load_packs()}
    assert platform == {"azure-platform", "kubernetes-platform"}
    assert set(DELIVERY_PACKS) == {"azure-platform", "delivery"}


def test_a_delivery_change_is_diffed_and_reviewed_in_make_review(acme):
    """What `make review` shows of a pull request that drops the condition of a deploy identity's
    role administration: the grant's update, and the delivery failing on the pack's rule."""
    from google.protobuf import json_format
    from pulumi.runtime import rpc

    from offline.plandiff import diff_sides
    from offline.review_report import Side, render
    from scripts.review_side import delivery_side
    from tests.conftest import ROOT

    grant = grant_named(acme, RBAC_ADMINISTRATOR)
    scale = delivery_plan("acme-scale")
    base = {"environments": {"delivery": delivery_side(ROOT, rpc, json_format, {"acme": acme, "acme-scale": scale})}}
    edited = changed(acme, grant, path="condition", value=DELETE)
    head = {"environments": {"delivery": delivery_side(ROOT, rpc, json_format, {"acme": edited, "acme-scale": scale})}}
    assert base["environments"]["delivery"]["review"]["passed"]
    (diff,) = diff_sides(base, head)
    assert [(r.name, r.action) for r in diff.resources if r.action != "same"] == [(grant, "update")]
    report = render(Side("head", "h", head), Side("base", "b", base), [diff])
    assert not report.passed
    assert "delivery-role-administration-conditioned" in report.comment


def test_removing_an_environment_from_the_delivery_is_refused_by_the_state_locks_until_they_are_lifted(acme):
    """Dropping staging deletes its grants on its state container and keys, which the account's
    and the vault's delete locks refuse (ScopeLocked): the review fails naming them. With the
    locks lifted first (delivery:state.lock false, deployed on its own), the same removal passes;
    the identities themselves, in the unlocked group, never needed that."""
    import json

    from google.protobuf import json_format
    from pulumi.runtime import rpc

    from offline.engine import run_program
    from offline.identities import DELIVERY
    from offline.plandiff import diff_sides
    from scripts.review_side import delivery_side
    from tests.conftest import ROOT
    from validation.stackfile import read_stack_config

    def preview(lock: bool, environments: tuple[str, ...]) -> Plan:
        config = read_stack_config(DELIVERY, "acme")
        values = dict(config.values)
        values["delivery:environments"] = json.dumps(
            {k: v for k, v in json.loads(values["delivery:environments"]).items() if k in environments}
        )
        github = json.loads(values["delivery:github"])
        github["reviewers"] = {k: v for k, v in github["reviewers"].items() if k in environments}
        values["delivery:github"] = json.dumps(github)
        values["delivery:state"] = json.dumps({**json.loads(values["delivery:state"]), "lock": lock})
        plan = run_program(dataclasses.replace(config, values=values), DELIVERY)
        assert plan.ok, plan.error
        return plan

    def side(plan: Plan) -> dict:
        return {"environments": {"delivery": delivery_side(ROOT, rpc, json_format, {"acme": plan, "acme-scale": None})}}

    every = ("dev", "staging", "prod")
    (locked,) = diff_sides(side(acme), side(preview(True, ("dev", "prod"))))
    refused = {(f.name, f.type, f.locked_by) for f in locked.findings if f.locked_by}
    assert refused and {lock for _, _, lock in refused} == {"acme: state-account-lock", "acme: state-vault-lock"}
    # Its grants on the container and keys, and the container (a child of the locked account);
    # not the keys, which go through the vault's data plane, where locks do not apply.
    assert {kind for _, kind, _ in refused} == {
        "azure-native:authorization:RoleAssignment",
        "azure-native:storage:BlobContainer",
    }
    assert all("staging" in name for name, _, _ in refused)
    # The identities and keys go too (findings of their own: a principal is not re-created, a
    # protected key is unprotected first), but no lock refuses them.
    assert {f.type for f in locked.findings if not f.locked_by} == {
        "azure-native:managedidentity:UserAssignedIdentity",
        "azure-native:keyvault:Key",
        "azure-native:resources:ResourceGroup",  # staging's units' groups (protected)
        # staging's served APIs' applications and their principals (protected)
        "azuread:index/application:Application",
        "azuread:index/servicePrincipal:ServicePrincipal",
    }
    unlocked = preview(False, every)
    (lifted,) = diff_sides(side(acme), side(unlocked))
    assert [r.type for r in lifted.resources] == ["azure-native:authorization:ManagementLockByScope"] * 2
    assert lifted.findings == []
    (then,) = diff_sides(side(unlocked), side(preview(False, ("dev", "prod"))))
    assert then.of("delete") and [f for f in then.findings if f.locked_by] == []


def test_the_built_in_roles_the_pack_allows_are_the_ones_the_delivery_grants():
    """policies/delivery's allowlist is what planning/delivery.py names, and every built-in role
    the example deliveries grant is on it: a new built-in grant is a reviewed change to both."""
    from delivery_guardrails.azure import ALLOWED_BUILT_IN_ROLES

    import planning.delivery as delivery
    from tests.test_delivery_project import starter_plan

    named = {value for value in vars(delivery).values() if isinstance(value, str) and value in BUILT_IN_ROLES.values()}
    assert set(ALLOWED_BUILT_IN_ROLES) == named
    for plan in (delivery_plan("acme"), delivery_plan("acme-scale"), starter_plan()):
        custom = {r.inputs["roleDefinitionId"] for r in plan.of_type("azure-native:authorization:RoleDefinition")}
        granted = {
            r.inputs["roleDefinitionId"].rsplit("/", 1)[-1]
            for r in plan.of_type("azure-native:authorization:RoleAssignment")
        }
        assert granted - custom <= set(ALLOWED_BUILT_IN_ROLES)
