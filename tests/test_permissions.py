"""Every write `pulumi up` makes, and every read a preview or drift check makes, is permitted to
the identity that makes it, as scripts/bootstrap grants it (planning/permissions.py)."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from pathlib import Path

import pytest
import yaml

from facts import arm as arm_facts
from facts.aks_rbac import data_action
from facts.azure_roles import SOURCE as ROLES_FILE
from facts.azure_roles import built_in_roles
from facts.gpu import GPU_VM_SIZES
from offline import identities as bootstrap
from offline.engine import CapturedResource, ResourceOptions
from offline.mocks import OFFLINE_SUBSCRIPTION_ID
from planning import permissions
from planning.cluster_traffic import component_namespaces
from planning.permissions import AKS, check, deploy_operations, refresh_operations, view
from tests.conftest import ROOT
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
# The stack each deployed environment is checked with (prod-scale deploys as prod).
ALL = ("dev", "staging", "prod", "prod-scale")


def stack_config(stack: str) -> dict:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]


def plan_identity(stack: str) -> dict:
    return stack_config(stack)["platform:entra"]["planIdentity"]


@pytest.fixture(scope="module")
def identities() -> dict[str, bootstrap.Identities]:
    return {stack: bootstrap.stack_identities(stack) for stack in ALL}


def deployer_grants(ids: bootstrap.Identities):
    return ids.grants[ids.deployer]


def planner_grants(stack: str, plan, ids: bootstrap.Identities):
    principal = plan_identity(stack)["principalObjectId"]
    return ids.grants[ids.planner] + bootstrap.program_grants(plan, OFFLINE_SUBSCRIPTION_ID, principal, ids)


# ---------------------------------------------------------------------------------------------
# The role data
# ---------------------------------------------------------------------------------------------
def test_recorded_roles_agree_with_microsofts_export():
    export = json.loads((SHARED / "reference" / "azure-roles" / "azure_roles.json").read_text())
    document = json.loads(ROLES_FILE.read_text())
    assert document["repository"] == "MicrosoftDocs/azure-docs"
    for name, role in built_in_roles().items():
        assert export[name.replace(" ", "")] == role.id, name
        assert role.page.startswith("articles/role-based-access-control/built-in-roles/"), name
        assert re.fullmatch(r"[0-9a-f]{40}", role.commit), name
        assert role.actions or role.data_actions, f"{name} has no permissions recorded"


def test_contributor_may_not_write_authorization_objects():
    """Why the deploy identity needs more than Contributor (privileged.md)."""
    contributor = bootstrap.built_in(built_in_roles()["Contributor"].id)
    for action in ("policyAssignments/write", "roleAssignments/write", "locks/write", "roleDefinitions/write"):
        assert not contributor.allows(f"Microsoft.Authorization/{action}", data=False), action
    assert contributor.allows("Microsoft.Network/virtualNetworks/subnets/join/action", data=False)
    assert not contributor.allows("Microsoft.ContainerService/managedClusters/pods/read", data=True)


def test_wildcards_match_as_azure_evaluates_them():
    assert permissions.matches("Microsoft.Authorization/*/Write", "microsoft.authorization/policyAssignments/write")
    assert permissions.matches("*/read", "Microsoft.Network/virtualNetworks/subnets/read")
    assert not permissions.matches("*/read", "Microsoft.Network/virtualNetworks/subnets/write")
    assert permissions.matches(f"{AKS}/*", data_action("kafka.strimzi.io", "kafkas", "write"))
    assert permissions.in_scope("/subscriptions/a/resourceGroups/b", "/subscriptions/A")
    assert not permissions.in_scope("/subscriptions/ab/resourceGroups/b", "/subscriptions/a")


def test_custom_resources_and_admission_policies_are_custom_resources_to_azure_rbac():
    assert data_action("", "secrets", "read") == f"{AKS}/secrets/read"
    assert (
        data_action("networking.k8s.io", "networkpolicies", "write") == f"{AKS}/networking.k8s.io/networkpolicies/write"
    )
    assert data_action("kueue.x-k8s.io", "clusterqueues", "read") == f"{AKS}/customresources/read"
    assert data_action("admissionregistration.k8s.io", "validatingadmissionpolicies", "write") == (
        f"{AKS}/customresources/write"
    )


# ---------------------------------------------------------------------------------------------
# The deploy identity
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", ALL)
def test_every_write_of_the_stack_is_permitted_to_its_deploy_identity(plans, identities, stack):
    ids = identities[stack]
    operations = deploy_operations(view(plans[stack], OFFLINE_SUBSCRIPTION_ID), bootstrap.backend(ids.environment))
    assert len(operations) > 300
    denied = check(ids.deployer, deployer_grants(ids), operations)
    assert not denied, "\n".join(map(str, denied))


@pytest.mark.parametrize(
    "without, denied_action, needed_by",
    [
        (
            "assigns the pod security initiative",
            "Microsoft.Authorization/policyAssignments/write",
            "azure-native:authorization:PolicyAssignment",
        ),
        (
            "locks prod's stateful resources",
            "Microsoft.Authorization/locks/write",
            "azure-native:authorization:ManagementLockByScope",
        ),
        (
            "assigns the program's roles",
            "Microsoft.Authorization/roleAssignments/write",
            "azure-native:authorization:RoleAssignment",
        ),
        ("manages the in-cluster resources", f"{AKS}/namespaces/write", "kubernetes:core/v1:Namespace"),
        (
            "peers prod with the hub",
            "Microsoft.Network/virtualNetworks/virtualNetworkPeerings/write",
            "azure-native:network:VirtualNetworkPeering",
        ),
        (
            "links and records in the hub's privatelink zones",
            "Microsoft.Network/privateDnsZones/join/action",
            "azure-native:network:PrivateDnsZoneGroup",
        ),
        (
            "writes prod's state",
            "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write",
            "the Pulumi state",
        ),
    ],
)
def test_a_dropped_grant_names_the_identity_the_operation_and_the_resource(
    plans, identities, without, denied_action, needed_by
):
    ids = identities["prod"]
    grants = [grant for grant in deployer_grants(ids) if without not in grant.why]
    assert len(grants) == len(deployer_grants(ids)) - 1, without
    denied = check(
        ids.deployer, grants, deploy_operations(view(plans["prod"], OFFLINE_SUBSCRIPTION_ID), bootstrap.backend("prod"))
    )
    messages = [str(denial) for denial in denied]
    assert any(m.startswith(f"id-ailab-deploy-prod may not {denied_action} ") and needed_by in m for m in messages), (
        messages[:5]
    )


def _resource(token: str, name: str, inputs: dict, provider: str = "") -> CapturedResource:
    return CapturedResource(
        urn=f"urn:pulumi:prod::platform::{token}::{name}",
        type=token,
        name=name,
        parent=None,
        custom=True,
        provider=provider,
        inputs=inputs,
        dependencies=(),
        property_dependencies={},
        options=ResourceOptions(False, (), (), False, False, ()),
        aliases=(),
        raw_inputs=None,
    )


def test_a_resource_type_no_granted_role_permits_fails_naming_type_operation_and_identity(
    plans, identities, monkeypatch
):
    """A policy exemption on a cluster: Contributor may not write Microsoft.Authorization, and the
    policy assigner role writes assignments only."""
    monkeypatch.setitem(
        arm_facts.EXTENSION_TYPES,
        "azure-native:authorization:PolicyExemption",
        arm_facts.ExtensionType("scope", "Microsoft.Authorization/policyExemptions", "policyExemptionName"),
    )
    plan = plans["prod"]
    cluster = next(r for r in plan.resources if r.type == "azure-native:containerservice:ManagedCluster")
    scope = arm_facts.resource_id(cluster.type, cluster.name, cluster.inputs, OFFLINE_SUBSCRIPTION_ID)
    extra = _resource(
        "azure-native:authorization:PolicyExemption", "exempt-kafka", {"scope": scope, "policyExemptionName": "kafka"}
    )
    changed = dataclasses.replace(plan, resources=[*plan.resources, extra])
    ids = identities["prod"]
    denied = check(ids.deployer, deployer_grants(ids), deploy_operations(view(changed, OFFLINE_SUBSCRIPTION_ID)))
    assert [str(d) for d in denied if d.operation.action.endswith("/write")] == [
        f"id-ailab-deploy-prod may not Microsoft.Authorization/policyExemptions/write (action) at "
        f"{scope}/providers/Microsoft.Authorization/policyExemptions/kafka, which "
        "azure-native:authorization:PolicyExemption exempt-kafka needs"
    ]


def test_a_resource_type_the_model_does_not_know_fails_naming_it(plans):
    plan = plans["dev"]
    extra = _resource("azure-native:authorization:PolicyDefinition", "custom-policy", {"policyDefinitionName": "x"})
    changed = dataclasses.replace(plan, resources=[*plan.resources, extra])
    with pytest.raises(arm_facts.UnknownArmType, match="azure-native:authorization:PolicyDefinition"):
        deploy_operations(view(changed, OFFLINE_SUBSCRIPTION_ID))


@pytest.mark.parametrize(
    "role", ["Owner", "User Access Administrator", "Contributor", "Role Based Access Control Administrator"]
)
def test_a_privileged_role_assignment_is_refused_by_the_delegation_condition(plans, identities, role):
    plan = plans["prod"]
    kubelet_grant = next(r for r in plan.resources if r.name.endswith("-kubelet-pulls"))
    role_id = built_in_roles()[role].id
    inputs = {
        **kubelet_grant.inputs,
        "roleDefinitionId": f"/subscriptions/{OFFLINE_SUBSCRIPTION_ID}"
        f"/providers/Microsoft.Authorization/roleDefinitions/{role_id}",
        "roleAssignmentName": "escalation",
    }
    changed = dataclasses.replace(
        plan, resources=[*plan.resources, _resource(kubelet_grant.type, "escalation", inputs)]
    )
    ids = identities["prod"]
    denied = check(ids.deployer, deployer_grants(ids), deploy_operations(view(changed, OFFLINE_SUBSCRIPTION_ID)))
    assert {(d.operation.action, d.operation.needed_by) for d in denied} == {
        (f"Microsoft.Authorization/roleAssignments/{verb}", f"{kubelet_grant.type} escalation")
        for verb in ("write", "delete")
    }


def test_role_assignments_to_users_are_refused_by_the_delegation_condition(plans, identities):
    plan = plans["prod"]
    grant = next(r for r in plan.resources if r.name.endswith("-kubelet-pulls"))
    changed = dataclasses.replace(
        plan,
        resources=[
            *plan.resources,
            _resource(
                grant.type, "to-user", {**grant.inputs, "principalType": "User", "roleAssignmentName": "to-user"}
            ),
        ],
    )
    ids = identities["prod"]
    denied = check(ids.deployer, deployer_grants(ids), deploy_operations(view(changed, OFFLINE_SUBSCRIPTION_ID)))
    assert {(d.operation.action, d.operation.needed_by) for d in denied} == {
        ("Microsoft.Authorization/roleAssignments/write", f"{grant.type} to-user")
    }


# ---------------------------------------------------------------------------------------------
# The plan identity
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", ALL)
def test_every_read_of_previews_and_drift_checks_is_permitted_to_the_plan_identity(plans, identities, stack):
    ids, plan = identities[stack], plans[stack]
    operations = refresh_operations(view(plan, OFFLINE_SUBSCRIPTION_ID), bootstrap.backend(ids.environment))
    denied = check(ids.planner, planner_grants(stack, plan, ids), operations)
    assert not denied, "\n".join(map(str, denied))


@pytest.mark.parametrize("stack", ALL)
def test_the_plan_identity_can_change_nothing(plans, identities, stack):
    ids, plan = identities[stack], plans[stack]
    writes = [
        op
        for op in deploy_operations(view(plan, OFFLINE_SUBSCRIPTION_ID), bootstrap.backend(ids.environment))
        # Credentials and the key's encrypt/decrypt change nothing in the state or in Azure.
        if not op.action.lower().endswith("/read")
        and op.action != permissions.USER_CREDENTIALS
        and not op.action.endswith(("keys/decrypt/action", "keys/encrypt/action"))
    ]
    grants = planner_grants(stack, plan, ids)
    allowed = [op for op in writes if not check(ids.planner, grants, [op])]
    assert writes and allowed == []


@pytest.mark.parametrize("stack", ALL)
def test_the_plan_identity_reads_secrets_only_in_the_namespaces_whose_secrets_previews_read(plans, identities, stack):
    ids, plan = identities[stack], plans[stack]
    secrets = data_action("", "secrets", "read")
    for grant in ids.grants[ids.planner]:
        assert not grant.role.allows(secrets, data=True), f"{grant.role.name} reads every Secret at {grant.scope}"
    config = parse_platform_config(read_stack_config(ROOT, stack).values)
    program = bootstrap.program_grants(plan, OFFLINE_SUBSCRIPTION_ID, plan_identity(stack)["principalObjectId"], ids)
    scopes = sorted(grant.scope.rsplit("/managedClusters/", 1)[1] for grant in program)
    expected = sorted(
        f"aks-{config.prefix}-{config.environment}-{key}/namespaces/{ns}"
        for key in config.clusters
        for ns in component_namespaces(config, key)
    )
    assert scopes == expected
    assert all(grant.role.data_actions == (secrets,) for grant in program)
    # And each of those namespaces is one a preview or refresh reads Secrets in.
    reads = {op.scope for op in refresh_operations(view(plan, OFFLINE_SUBSCRIPTION_ID)) if op.action == secrets}
    assert {grant.scope for grant in program} == reads


def test_the_plan_identitys_in_cluster_role_is_exactly_what_the_stacks_read(plans, identities):
    """scripts/bootstrap's `plan_reads` equals the non-Secret reads of every stack's refresh."""
    needed = set()
    for stack in ALL:
        for op in refresh_operations(view(plans[stack], OFFLINE_SUBSCRIPTION_ID)):
            if op.data and op.action != data_action("", "secrets", "read"):
                needed.add(op.action)
    granted = set(identities["prod"].custom_role("Platform in-cluster reader").definition.data_actions)
    assert granted == needed


# ---------------------------------------------------------------------------------------------
# What the subscription must have registered
# ---------------------------------------------------------------------------------------------
def _needed_registrations(plans) -> tuple[set[str], set[str]]:
    providers, features = set(), set()
    for stack in ALL:
        for r in plans[stack].resources:
            if not r.type.startswith("azure-native:") or not r.custom:
                continue
            namespace = arm_facts.arm_type(r.type).split("/")[0]
            if namespace != "Microsoft.Resources" and namespace != "Microsoft.Authorization":
                providers.add(namespace)
            pools = [r.inputs] if r.type.endswith(":AgentPool") else r.inputs.get("agentPoolProfiles", [])
            if r.type.endswith(":ManagedCluster"):
                providers.add("Microsoft.Compute")  # node scale sets
                if (r.inputs.get("addonProfiles") or {}).get("azurepolicy", {}).get("enabled"):
                    providers.add("Microsoft.PolicyInsights")  # learn.microsoft.com/azure/aks/use-azure-policy
            for pool in pools:
                if pool.get("enableEncryptionAtHost"):
                    features.add("Microsoft.Compute/EncryptionAtHost")
                size = GPU_VM_SIZES.get(pool.get("vmSize", ""))
                if size is not None and size.infiniband:
                    features.add("Microsoft.ContainerService/AKSInfinibandSupport")
    return providers, features


def test_bootstrap_registers_exactly_the_providers_and_features_the_program_uses(plans, identities):
    providers, features = _needed_registrations(plans)
    ids = identities["prod"]
    assert set(ids.resource_providers) == providers
    assert set(ids.features) == features


def test_the_permissions_table_in_the_docs_is_generated_from_the_model(identities):
    page = (ROOT / "docs" / "deploying.md").read_text()
    table = bootstrap.markdown_table(identities["prod"])
    assert table in page, "docs/deploying.md is out of date: run `make docs`"


def test_previews_of_in_cluster_changes_fall_back_to_client_side_for_the_plan_identity(plans, identities):
    """The mechanism that lets a read-only identity preview new and changed Kubernetes objects.

    pulumi-kubernetes previews a create with a server-side dry-run POST and an update with a GET
    and a dry-run PATCH; Kubernetes authorizes a dry run exactly like the real request
    (kubernetes.io/docs/reference/using-api/api-concepts/#dry-run-authorization). On 403 the
    provider previews the inputs client-side instead of failing: provider/pkg/provider/provider.go
    at v4.32.0, Create `if apierrors.IsForbidden(awaitErr)` and Update `if req.GetPreview() &&
    apierrors.IsForbidden(awaitErr)` (pulumi-kubernetes #2419, #2522). So: the pinned provider is
    at least that version, it applies server-side, and the plan identity is refused every
    in-cluster write (a clean 403) while it may read every kind it refreshes.
    """
    pins = dict(line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line)
    assert tuple(int(part) for part in pins["pulumi-kubernetes"].split(".")) >= (4, 32, 0)
    ids = identities["prod"]
    plan = plans["prod"]
    for provider in plan.of_type("pulumi:providers:kubernetes"):
        assert provider.inputs.get("enableServerSideApply") in (True, "true")
    grants = planner_grants("prod", plan, ids)
    in_cluster = [
        op
        for op in deploy_operations(view(plan, OFFLINE_SUBSCRIPTION_ID))
        if op.data and op.action.startswith(AKS) and not op.action.endswith("/read")
    ]
    assert in_cluster and all(check(ids.planner, grants, [op]) for op in in_cluster)


def test_linked_access_checks_are_part_of_the_model(plans):
    """ARM checks the resources a request references (join, assign, peer, approval); the spoke's
    peering needs peer/action on the hub's VNet, which only the hub grant gives."""
    ops = deploy_operations(view(plans["prod"], OFFLINE_SUBSCRIPTION_ID))
    linked = {(op.action, op.scope.split("/")[2], op.needed_by.split(" ")[0]) for op in ops}
    hub = "0b1f6471-1bf0-4dda-aec3-111122223333"
    assert (
        "Microsoft.Network/virtualNetworks/peer/action",
        hub,
        "azure-native:network:VirtualNetworkPeering",
    ) in linked
    assert ("Microsoft.Network/privateDnsZones/join/action", hub, "azure-native:network:PrivateDnsZoneGroup") in linked
    assert (
        "Microsoft.Network/virtualNetworks/subnets/join/action",
        OFFLINE_SUBSCRIPTION_ID,
        "azure-native:containerservice:ManagedCluster",
    ) in linked
    assert (
        "Microsoft.ManagedIdentity/userAssignedIdentities/assign/action",
        OFFLINE_SUBSCRIPTION_ID,
        "azure-native:containerservice:ManagedCluster",
    ) in linked
