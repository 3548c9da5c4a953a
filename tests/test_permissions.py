"""Every write `pulumi up` of a unit makes, and every read its preview or drift check makes, is
permitted to that unit's layer identity as the delivery project grants it (planning/permissions.py);
and each layer's identities hold no more than their units need: only the cluster layer holds
cluster admin, no environment writes a hub object another uses (tests/test_reach.py follows
every path), each layer writes only its own state and reads only the states and keys of the
units it references."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from facts import arm as arm_facts
from facts.aks_rbac import data_action
from facts.azure_roles import SOURCE as ROLES_FILE
from facts.azure_roles import built_in_roles
from facts.gpu import GPU_VM_SIZES
from offline import identities as bootstrap
from offline.engine import CapturedResource, Plan, ResourceOptions
from offline.environment import EnvironmentPlan, union_plan
from offline.mocks import OFFLINE_SUBSCRIPTION_ID
from planning import permissions
from planning.layers import LAYERS, UPSTREAM, Unit, parse_stack
from planning.permissions import AKS, BLOB_PATH, BLOBS, Operation, check, deploy_operations, refresh_operations, view
from tests.conftest import ROOT, stack_values
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

SHARED = Path(os.environ.get("SHARED_DIR", ROOT.parent / "shared"))
# The stack each deployed environment is checked with (prod-scale deploys as prod).
ALL = ("dev", "staging", "prod", "prod-scale")
HUB = "0b1f6471-1bf0-4dda-aec3-111122223333"


def stack_config(stack: str) -> dict:
    return stack_values(stack)


def plan_identity(stack: str) -> dict:
    return stack_config(stack)["platform:entra"]["planIdentity"]


@pytest.fixture(scope="module")
def identities() -> dict[str, bootstrap.Identities]:
    return {stack: bootstrap.stack_identities(stack) for stack in ALL}


def units(environment: EnvironmentPlan) -> Iterator[tuple[Unit, Plan]]:
    for stack, plan in environment.plans.items():
        _, unit = parse_stack(stack)
        assert unit is not None
        yield unit, plan


def unit_view(environment: EnvironmentPlan, plan: Plan) -> permissions.PlanView:
    """A unit's plan, its Kubernetes providers resolved against every cluster of the environment."""
    return view(
        plan,
        OFFLINE_SUBSCRIPTION_ID,
        clusters=permissions.cluster_ids(environment.resources, OFFLINE_SUBSCRIPTION_ID),
        registries=permissions.registry_ids(environment.resources, OFFLINE_SUBSCRIPTION_ID),
    )


def as_deployed(plan: Plan, environment: str) -> Plan:
    """prod-scale is prod's config at fleet scale: its units deploy as prod's stacks."""
    prefix = plan.stack.split(".", 1)[0]
    if prefix == environment:
        return plan

    def rename(stack: str) -> str:
        return environment + stack.removeprefix(prefix)

    calls = [
        dataclasses.replace(call, resource_id=rename(str(call.resource_id)))
        if call.token == permissions.STACK_REFERENCE
        else call
        for call in plan.calls
    ]
    return dataclasses.replace(plan, stack=rename(plan.stack), calls=calls)


def deploy_ops(environment: EnvironmentPlan, plan: Plan, ids: bootstrap.Identities) -> list[Operation]:
    deployed = as_deployed(plan, ids.environment)
    return deploy_operations(unit_view(environment, deployed), bootstrap.backend(ids.environment))


def refresh_ops(environment: EnvironmentPlan, plan: Plan, ids: bootstrap.Identities) -> list[Operation]:
    deployed = as_deployed(plan, ids.environment)
    return refresh_operations(unit_view(environment, deployed), bootstrap.backend(ids.environment))


def deployer_grants(ids: bootstrap.Identities, layer: str):
    return ids.grants[ids.deployer(layer)]


def database_grants(stack: str, environment: EnvironmentPlan, layer: str) -> list:
    """What the program makes a layer's deploy identity on the databases: the tenants' is an Entra
    administrator of the PostgreSQL server (platform:postgresql.roleManagerObjectId)."""
    postgresql = stack_config(stack).get("platform:postgresql")
    if layer != "tenants" or not postgresql:
        return []
    return permissions.postgres_grants(
        unit_view(environment, union_plan(environment)), postgresql["roleManagerObjectId"]
    )


# The plan identities the program grants reads to (Kafka's CA certificates, components/kafka.py):
# the tenants' (its clients' copies), the cluster layer's (a site's copy, where a site has clients).
PROGRAM_GRANTED = {"tenants": "tenantsPrincipalObjectId", "cluster": "clusterPrincipalObjectId"}


def program_grants(environment: EnvironmentPlan, principal: str, ids: bootstrap.Identities):
    """What the program grants one principal: Azure role assignments and Kubernetes RBAC."""
    union = union_plan(environment)
    return [
        *bootstrap.program_grants(union, OFFLINE_SUBSCRIPTION_ID, principal, ids),
        *permissions.kubernetes_grants(unit_view(environment, union), principal),
        *permissions.postgres_grants(unit_view(environment, union), principal),
    ]


def planner_grants(stack: str, environment: EnvironmentPlan, layer: str, ids: bootstrap.Identities):
    grants = list(ids.grants[ids.planner(layer)])
    if layer in PROGRAM_GRANTED and PROGRAM_GRANTED[layer] in plan_identity(stack):
        grants += program_grants(environment, plan_identity(stack)[PROGRAM_GRANTED[layer]], ids)
    return grants


# ---------------------------------------------------------------------------------------------
# The role data
# ---------------------------------------------------------------------------------------------
def test_recorded_roles_agree_with_microsofts_export():
    export = json.loads((SHARED / "reference" / "azure-roles" / "azure_roles.json").read_text())
    document = json.loads(ROLES_FILE.read_text())
    assert document["repository"] == "MicrosoftDocs/azure-docs"
    for name, role in built_in_roles().items():
        assert export[name.replace(" ", "")] == role.id, name
        # Copied from the role's page; or, said so in a note, its permissions from the
        # resource provider's operations page (a role whose page was not at hand).
        noted = document["roles"][name].get("note")
        assert role.page.startswith("articles/role-based-access-control/built-in-roles/") or (
            noted and role.page.startswith("articles/role-based-access-control/permissions/")
        ), name
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
# The deploy identities
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", ALL)
def test_every_write_of_each_unit_is_permitted_to_its_layers_deploy_identity(unit_plans, identities, stack):
    ids, environment = identities[stack], unit_plans[stack]
    for unit, plan in units(environment):
        operations = deploy_ops(environment, plan, ids)
        assert len(operations) > 10, plan.stack
        grants = [*deployer_grants(ids, unit.layer), *database_grants(stack, environment, unit.layer)]
        denied = check(ids.deployer(unit.layer), grants, operations)
        assert not denied, "\n".join(map(str, denied))


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_the_workloads_postgresql_roles_are_made_by_a_server_administrator_and_read_by_the_plan_identity(
    unit_plans, identities, stack
):
    """The tenants' deploy identity makes the workloads' roles and grants only as an Entra
    administrator of the server (the data unit names it one); no Azure role stands in for that.
    Previews read them as the plan identity, through its own login role."""
    ids, environment = identities[stack], unit_plans[stack]
    plan = environment.plan(Unit("tenants"))
    operations = [op for op in deploy_ops(environment, plan, ids) if op.action.startswith("PostgreSQL/")]
    assert {op.action for op in operations} >= {
        "PostgreSQL/Role/write",
        "PostgreSQL/Grant/write",
        "PostgreSQL/SecurityLabel/write",
    }
    denied = check(ids.deployer("tenants"), deployer_grants(ids, "tenants"), operations)
    assert len(denied) == len(operations), "an Azure role reached the server's catalog"
    assert not check(ids.deployer("tenants"), database_grants(stack, environment, "tenants"), operations)
    reads = [op for op in refresh_ops(environment, plan, ids) if op.action.startswith("PostgreSQL/")]
    assert reads and not check(ids.planner("tenants"), planner_grants(stack, environment, "tenants", ids), reads)


@pytest.mark.parametrize(
    "unit, without, denied_action, needed_by",
    [
        (
            Unit("cluster", "eus2"),
            "assigns the pod security initiative",
            "Microsoft.Authorization/policyAssignments/write",
            "azure-native:authorization:PolicyAssignment",
        ),
        (
            Unit("data"),
            "locks prod's stateful resources",
            "Microsoft.Authorization/locks/write",
            "azure-native:authorization:ManagementLockByScope",
        ),
        (
            Unit("tenants"),
            "assigns the tenants layer's roles",
            "Microsoft.Authorization/roleAssignments/write",
            "azure-native:authorization:RoleAssignment",
        ),
        (Unit("tenants"), "the teams' in-cluster objects", f"{AKS}/namespaces/write", "kubernetes:core/v1:Namespace"),
        (
            Unit("cluster", "scus"),
            "manages the in-cluster platform",
            f"{AKS}/namespaces/write",
            "kubernetes:core/v1:Namespace",
        ),
        (
            Unit("foundation"),
            "peers prod's VNets with the hub",
            "Microsoft.Network/virtualNetworks/peer/action",
            "azure-native:network:VirtualNetworkPeering",
        ),
        (
            Unit("foundation"),
            "links prod's VNets to its API server subzone ailab-prod.privatelink.eastus2.azmk8s.io",
            "Microsoft.Network/privateDnsZones/virtualNetworkLinks/write",
            "azure-native:privatedns:VirtualNetworkLink",
        ),
        (
            Unit("foundation"),
            "registers prod's endpoints in the hub's privatelink.vaultcore.azure.net",
            "Microsoft.Network/privateDnsZones/join/action",
            "azure-native:network:PrivateDnsZoneGroup",
        ),
        (
            Unit("data"),
            "registers prod's endpoints in the hub's privatelink.blob.core.windows.net",
            "Microsoft.Network/privateDnsZones/join/action",
            "azure-native:network:PrivateDnsZoneGroup",
        ),
        (
            Unit("cluster", "eus2"),
            "lets prod's clusters write their API server records in ailab-prod.privatelink.eastus2.azmk8s.io",
            "Microsoft.Authorization/roleAssignments/write",
            "azure-native:authorization:RoleAssignment",
        ),
        (
            Unit("cluster", "eus2"),
            "writes the prod cluster state",
            f"{BLOBS}/write",
            "the Pulumi state",
        ),
        (
            Unit("tenants"),
            "decrypts the prod cluster outputs",
            "Microsoft.KeyVault/vaults/keys/decrypt/action",
            # Every cluster's outputs are under the one cluster key: the first reference names it.
            "StackReference prod.cluster-",
        ),
    ],
)
def test_a_dropped_grant_names_the_identity_the_operation_and_the_resource(
    unit_plans, identities, unit, without, denied_action, needed_by
):
    ids, environment = identities["prod"], unit_plans["prod"]
    grants = [grant for grant in deployer_grants(ids, unit.layer) if without not in grant.why]
    # One grant, or one per group of the layer (the delivery's resource groups).
    assert len(grants) < len(deployer_grants(ids, unit.layer)), without
    denied = check(ids.deployer(unit.layer), grants, deploy_ops(environment, environment.plan(unit), ids))
    messages = [str(denial) for denial in denied]
    assert any(
        m.startswith(f"id-ailab-deploy-prod-{unit.layer} may not {denied_action} ") and needed_by in m for m in messages
    ), messages[:5]


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


def _with(plan: Plan, *extra: CapturedResource) -> Plan:
    return dataclasses.replace(plan, resources=[*plan.resources, *extra])


def test_a_resource_type_no_granted_role_permits_fails_naming_type_operation_and_identity(
    unit_plans, identities, monkeypatch
):
    """A policy exemption on a cluster: Contributor may not write Microsoft.Authorization, and the
    policy assigner role writes assignments only."""
    monkeypatch.setitem(
        arm_facts.EXTENSION_TYPES,
        "azure-native:authorization:PolicyExemption",
        arm_facts.ExtensionType("scope", "Microsoft.Authorization/policyExemptions", "policyExemptionName"),
    )
    environment = unit_plans["prod"]
    plan = environment.plan(Unit("cluster", "eus2"))
    cluster = next(r for r in plan.resources if r.type == "azure-native:containerservice:ManagedCluster")
    scope = arm_facts.resource_id(cluster.type, cluster.name, cluster.inputs, OFFLINE_SUBSCRIPTION_ID)
    extra = _resource(
        "azure-native:authorization:PolicyExemption", "exempt-kafka", {"scope": scope, "policyExemptionName": "kafka"}
    )
    ids = identities["prod"]
    denied = check(
        ids.deployer("cluster"), deployer_grants(ids, "cluster"), deploy_ops(environment, _with(plan, extra), ids)
    )
    assert [str(d) for d in denied if d.operation.action.endswith("/write")] == [
        f"id-ailab-deploy-prod-cluster may not Microsoft.Authorization/policyExemptions/write (action) at "
        f"{scope}/providers/Microsoft.Authorization/policyExemptions/kafka, which "
        "azure-native:authorization:PolicyExemption exempt-kafka needs"
    ]


def test_a_resource_type_the_model_does_not_know_fails_naming_it(unit_plans):
    plan = unit_plans["dev"].plan(Unit("foundation"))
    extra = _resource("azure-native:authorization:PolicyDefinition", "custom-policy", {"policyDefinitionName": "x"})
    with pytest.raises(arm_facts.UnknownArmType, match="azure-native:authorization:PolicyDefinition"):
        deploy_operations(view(_with(plan, extra), OFFLINE_SUBSCRIPTION_ID))


def _assignment_like(plan: Plan, name_suffix: str, name: str, **changes: str) -> CapturedResource:
    model = next(r for r in plan.resources if r.name.endswith(name_suffix))
    inputs = {**model.inputs, "roleAssignmentName": name, **changes}
    return _resource(model.type, name, inputs)


def _role(name: str) -> str:
    return f"/subscriptions/{OFFLINE_SUBSCRIPTION_ID}/providers/Microsoft.Authorization/roleDefinitions/{built_in_roles()[name].id}"


@pytest.mark.parametrize(
    "role", ["Owner", "User Access Administrator", "Contributor", "Role Based Access Control Administrator"]
)
def test_a_privileged_role_assignment_is_refused_by_the_delegation_condition(unit_plans, identities, role):
    environment = unit_plans["prod"]
    plan = environment.plan(Unit("cluster", "eus2"))
    extra = _assignment_like(plan, "-kubelet-pulls", "escalation", roleDefinitionId=_role(role))
    ids = identities["prod"]
    denied = check(
        ids.deployer("cluster"), deployer_grants(ids, "cluster"), deploy_ops(environment, _with(plan, extra), ids)
    )
    assert {(d.operation.action, d.operation.needed_by) for d in denied} == {
        (f"Microsoft.Authorization/roleAssignments/{verb}", f"{extra.type} escalation") for verb in ("write", "delete")
    }


def test_role_assignments_to_users_are_refused_by_the_delegation_condition(unit_plans, identities):
    environment = unit_plans["prod"]
    plan = environment.plan(Unit("cluster", "eus2"))
    extra = _assignment_like(plan, "-kubelet-pulls", "to-user", principalType="User")
    ids = identities["prod"]
    denied = check(
        ids.deployer("cluster"), deployer_grants(ids, "cluster"), deploy_ops(environment, _with(plan, extra), ids)
    )
    assert {(d.operation.action, d.operation.needed_by) for d in denied} == {
        ("Microsoft.Authorization/roleAssignments/write", f"{extra.type} to-user")
    }


@pytest.mark.parametrize(
    "role, principal_type",
    [
        ("Azure Kubernetes Service RBAC Cluster Admin", "Group"),
        ("Azure Kubernetes Service RBAC Writer", "ServicePrincipal"),
        ("Storage Blob Data Contributor", "Group"),
    ],
)
def test_the_tenants_may_not_hand_out_cluster_admin_nor_a_role_to_the_wrong_kind_of_principal(
    unit_plans, identities, role, principal_type
):
    """Teams' groups get namespace roles, workloads get data roles: each only to its own kind of
    principal, and cluster admin to nobody (the cluster's unit grants the platform admins)."""
    environment = unit_plans["prod"]
    plan = environment.plan(Unit("tenants"))
    extra = _assignment_like(
        plan,
        next(r.name for r in plan.resources if r.type.endswith("RoleAssignment"))[-12:],
        "widen",
        roleDefinitionId=_role(role),
        principalType=principal_type,
    )
    ids = identities["prod"]
    denied = check(
        ids.deployer("tenants"), deployer_grants(ids, "tenants"), deploy_ops(environment, _with(plan, extra), ids)
    )
    assert ("Microsoft.Authorization/roleAssignments/write", f"{extra.type} widen") in {
        (d.operation.action, d.operation.needed_by) for d in denied
    }


def _every_identity(ids: bootstrap.Identities) -> Iterator[tuple[str, str]]:
    for layer in LAYERS:
        yield layer, ids.deployer(layer)
        yield layer, ids.planner(layer)


@pytest.mark.parametrize("stack", ALL)
def test_no_layer_but_the_cluster_holds_cluster_admin(identities, stack):
    ids = identities[stack]
    # What only cluster admin may do in a cluster: bind cluster roles, write webhooks.
    admin_only = [
        data_action("rbac.authorization.k8s.io", "clusterrolebindings", "write"),
        data_action("apps", "daemonsets", "write"),
    ]
    holders = {
        identity
        for _, identity in _every_identity(ids)
        for grant in ids.grants.get(identity, [])
        for action in admin_only
        if grant.role.allows(action, data=True)
    }
    assert holders == {ids.deployer("cluster")}


def test_the_tenants_in_cluster_role_is_exactly_what_the_tenants_write(unit_plans, identities):
    """The delivery's tenants role: every in-cluster action the tenants' units take, no
    more (no wildcard, nothing cluster-scoped but namespaces and custom resources)."""
    needed = set()
    for stack in ALL:
        environment = unit_plans[stack]
        plan = environment.plan(Unit("tenants"))
        needed |= {
            op.action
            for op in deploy_ops(environment, plan, identities[stack])
            if op.data and op.action.startswith(AKS)
        }
    role = identities["prod"].custom_role("Platform tenant writer").definition
    assert set(role.data_actions) == needed
    assert not any("*" in action for action in role.data_actions + role.actions)


ZONES = f"/subscriptions/{HUB}/resourceGroups/rg-hub-dns/providers/Microsoft.Network/privateDnsZones"
HUB_VNET = f"/subscriptions/{HUB}/resourceGroups/rg-hub-eus2/providers/Microsoft.Network/virtualNetworks/vnet-hub-eus2"
MONITOR_SCOPE = (
    f"/subscriptions/{HUB}/resourceGroups/rg-hub-monitor/providers/microsoft.insights/privateLinkScopes/ampls-hub"
)


def _hub_objects_of(environment: str) -> list[Operation]:
    """What changing a hub object that serves `environment` takes: its peering's hub side, the
    shared zones, their links to its VNets and its records there, its API server subzone and its
    records, its members of the hub's Azure Monitor scope."""
    vnet = f"vnet-ailab-{environment}-eus2"
    subzone = f"{ZONES}/ailab-{environment}.privatelink.eastus2.azmk8s.io"
    blob = f"{ZONES}/privatelink.blob.core.windows.net"
    ops = [
        (
            "Microsoft.Network/virtualNetworks/virtualNetworkPeerings/write",
            f"{HUB_VNET}/virtualNetworkPeerings/peer-to-{vnet}",
        ),
        (
            "Microsoft.Network/virtualNetworks/virtualNetworkPeerings/delete",
            f"{HUB_VNET}/virtualNetworkPeerings/peer-to-{vnet}",
        ),
        ("Microsoft.Network/privateDnsZones/write", blob),
        ("Microsoft.Network/privateDnsZones/virtualNetworkLinks/delete", f"{blob}/virtualNetworkLinks/link-{vnet}"),
        ("Microsoft.Network/privateDnsZones/A/write", f"{blob}/A/stailab{environment}datasets"),
        ("Microsoft.Network/privateDnsZones/A/write", f"{subzone}/A/aks-ailab-{environment}-eus2-1a2b3c4d"),
        (
            "Microsoft.Network/privateDnsZones/virtualNetworkLinks/delete",
            f"{subzone}/virtualNetworkLinks/link-vnet-hub-eus2",
        ),
        ("Microsoft.Network/privateDnsZones/delete", subzone),
        (
            "Microsoft.Insights/privateLinkScopes/scopedResources/delete",
            f"{MONITOR_SCOPE}/scopedResources/log-ailab-{environment}-eus2",
        ),
        (
            "Microsoft.Authorization/roleAssignments/write",
            f"{subzone}/providers/Microsoft.Authorization/roleAssignments/x",
        ),
    ]
    # Writing a role assignment names the role: Private DNS Zone Contributor for a service principal.
    pdzc = (("RoleDefinitionId", "b12aa53e-6015-4669-85d0-8515ebb3ae7f"), ("PrincipalType", "ServicePrincipal"))
    return [
        Operation(action, scope, f"{environment}'s hub objects", attributes=pdzc if "roleAssignments" in action else ())
        for action, scope in ops
    ]


@pytest.mark.parametrize(("stack", "other"), [("staging", "prod"), ("prod", "staging")])
def test_no_environment_can_change_a_hub_object_another_environment_uses(identities, stack, other):
    """The hub serves staging and prod: neither's identities may change the hub's peerings,
    the shared zones, their links or records, the other's API server subzone or its monitor scope
    members (the hub's owner makes those, from stack output hubRequests). Reopened, e.g. with
    Network Contributor on the hub VNet or Private DNS Zone Contributor on the zones' group, this
    names the identity and what it could change."""
    ids = identities[stack]
    allowed = [
        f"{identity} may {op.action} at {op.scope}"
        for _, identity in _every_identity(ids)
        for op in _hub_objects_of(other)
        if not check(identity, ids.grants.get(identity, []), [op])
    ]
    assert allowed == []


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_an_environment_reaches_only_its_own_objects_in_the_hub(identities, stack):
    """Of the hub, an environment joins the shared zones (its endpoints' records), peers its own
    VNets, links its VNets to its own API server subzones and lets its clusters write their
    records there: the foundation and the cluster layer, nothing else."""
    ids = identities[stack]
    subzone = f"{ZONES}/ailab-{stack}.privatelink.eastus2.azmk8s.io"
    own = {
        "link": Operation(
            "Microsoft.Network/privateDnsZones/virtualNetworkLinks/write",
            f"{subzone}/virtualNetworkLinks/link-vnet-ailab-{stack}-eus2",
            "own",
        ),
        "peer": Operation("Microsoft.Network/virtualNetworks/peer/action", HUB_VNET, "own"),
        "join": Operation(
            "Microsoft.Network/privateDnsZones/join/action", f"{ZONES}/privatelink.blob.core.windows.net", "own"
        ),
        "name": Operation("Microsoft.Network/privateDnsZones/join/action", subzone, "own"),
    }
    reach = {
        what: {
            identity for _, identity in _every_identity(ids) if not check(identity, ids.grants.get(identity, []), [op])
        }
        for what, op in own.items()
    }
    assert reach == {
        "link": {ids.deployer("foundation")},
        "peer": {ids.deployer("foundation")},
        "join": {ids.deployer("data")},
        "name": {ids.deployer("foundation"), ids.deployer("cluster")},
    }


def _state_ops(backend: permissions.Backend, stack: str) -> dict[str, list[Operation]]:
    write = [
        Operation(f"{BLOBS}/write", backend.state_container_id, "state", data=True, attributes=((BLOB_PATH, path),))
        for path in backend.own_paths(stack)
    ]
    read = [
        Operation(
            f"{BLOBS}/read",
            backend.state_container_id,
            "state",
            data=True,
            attributes=((BLOB_PATH, backend.state_path(stack)),),
        )
    ]
    decrypt = [Operation("Microsoft.KeyVault/vaults/keys/decrypt/action", backend.key_of(stack), "secrets", data=True)]
    return {"write": write, "read": read, "decrypt": decrypt}


def test_each_layer_writes_only_its_own_state_and_reads_only_the_states_it_references(identities):
    ids = identities["prod"]
    backend = bootstrap.backend("prod")
    stacks = {
        "foundation": "prod.foundation",
        "data": "prod.data",
        "cluster": "prod.cluster-eus2",
        "tenants": "prod.tenants",
        "fleet": "prod.fleet",
    }
    for layer in LAYERS:
        for identity in (ids.deployer(layer), ids.planner(layer)):
            grants = ids.grants[identity]
            for other, stack in stacks.items():
                ops = _state_ops(backend, stack)
                may_write = identity == ids.deployer(layer) and other == layer
                may_read = other == layer or other in UPSTREAM[layer]
                assert (not check(identity, grants, ops["write"])) == may_write, (identity, stack)
                assert (not check(identity, grants, ops["read"])) == may_read, (identity, stack)
                assert (not check(identity, grants, ops["decrypt"])) == may_read, (identity, stack)


# ---------------------------------------------------------------------------------------------
# The plan identities
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("stack", ALL)
def test_every_read_of_previews_and_drift_checks_is_permitted_to_the_layers_plan_identity(
    unit_plans, identities, stack
):
    ids, environment = identities[stack], unit_plans[stack]
    for unit, plan in units(environment):
        denied = check(
            ids.planner(unit.layer),
            planner_grants(stack, environment, unit.layer, ids),
            refresh_ops(environment, plan, ids),
        )
        assert not denied, "\n".join(map(str, denied))


@pytest.mark.parametrize("stack", ALL)
def test_the_plan_identities_can_change_nothing(unit_plans, identities, stack):
    ids, environment = identities[stack], unit_plans[stack]
    for unit, plan in units(environment):
        writes = [
            op
            for op in deploy_ops(environment, plan, ids)
            # Credentials and the key's encrypt/decrypt change nothing in the state or in Azure.
            if not op.action.lower().endswith("/read")
            and op.action != permissions.USER_CREDENTIALS
            and not op.action.endswith(("keys/decrypt/action", "keys/encrypt/action"))
        ]
        grants = planner_grants(stack, environment, unit.layer, ids)
        allowed = [op for op in writes if not check(ids.planner(unit.layer), grants, [op])]
        assert writes and allowed == [], plan.stack


@pytest.mark.parametrize("stack", ALL)
def test_the_plan_identities_read_no_secret_but_the_kafka_ca_certificates_their_previews_read(
    unit_plans, identities, stack
):
    """A pull request's preview runs as a plan identity: whatever it may read, a branch may. No
    bootstrap grant reads Secrets; the program lets the tenants' plan identity read the Secrets
    its previews read, by name: Kafka's CA certificates, never the CAs' keys in the same namespace
    (`<cluster>-cluster-ca`, `<cluster>-clients-ca`) nor anything else there."""
    ids, environment = identities[stack], unit_plans[stack]
    secrets = data_action("", "secrets", "read")
    for _, identity in _every_identity(ids):
        for grant in ids.grants.get(identity, []):
            if identity.startswith("id-ailab-plan-"):
                assert not grant.role.allows(secrets, data=True), (
                    f"{grant.role.name} reads every Secret at {grant.scope}"
                )
    config = parse_platform_config(read_stack_config(ROOT, stack).values)
    layers = {
        unit.layer
        for unit, plan in units(environment)
        for op in refresh_ops(environment, plan, ids)
        if op.action == secrets
    }
    # The tenants' previews copy the CAs to clients; a site's (the cluster layer's) into its baseline.
    assert layers <= ({"tenants", "cluster"} if config.on_prem_clusters else {"tenants"})
    for layer in layers:
        granted = program_grants(environment, plan_identity(stack)[PROGRAM_GRANTED[layer]], ids)
        reads = {
            (op.scope, op.attribute(permissions.OBJECT_NAME))
            for unit, plan in units(environment)
            if unit.layer == layer
            for op in refresh_ops(environment, plan, ids)
            if op.action == secrets
        }
        readable = {
            (g.scope, name)
            for g in granted
            if g.role.allows(secrets, data=True)
            for name in (g.condition.object_names if g.condition and g.condition.object_names else {None})
        }
        # Each reads what its previews read, and the cluster layer's only where a site is served.
        assert {(scope, name) for scope, name in readable if (scope, name) in reads} == reads, (layer, reads)
        if layer == "cluster":
            # Only the Strimzi hosts' CA certificates (public; bound on every host of an
            # environment with sites, before a site has a client), and never anything else.
            assert {scope.rsplit("/namespaces/", 1)[1] for scope, _ in readable} == {"kafka"}, readable
            assert {scope for scope, _ in reads} <= {scope for scope, _ in readable}
            assert all(name.endswith("-cluster-ca-cert") for _, name in readable)
        else:
            assert readable == reads, readable ^ reads
        assert reads and all(name and name.endswith("-cluster-ca-cert") for _, name in reads)
        for scope, _ in reads:
            for key_secret in (f"{c}-cluster-ca" for c in config.kafka_clusters()):
                probe = Operation(
                    secrets, scope, "a CA's private key", data=True, attributes=((permissions.OBJECT_NAME, key_secret),)
                )
                assert check(f"{layer} plan", granted, [probe]), (scope, key_secret)
            listing = Operation(secrets, scope, "a list of every Secret", data=True)
            assert check(f"{layer} plan", granted, [listing]), scope
    if config.strimzi is not None:
        assert "tenants" in layers


def test_the_plan_identitys_in_cluster_role_is_exactly_what_the_units_read(unit_plans, identities):
    """The delivery's plan reader role equals the non-Secret in-cluster reads of every unit's refresh."""
    needed = set()
    for stack in ALL:
        environment = unit_plans[stack]
        for _, plan in units(environment):
            for op in refresh_ops(environment, plan, identities[stack]):
                if op.data and op.action.startswith(AKS) and op.action != data_action("", "secrets", "read"):
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
            if r.type.endswith(":FluxConfiguration"):
                # A site: Arc's onboarding needs these registered where it connects the cluster
                # (quickstart-connect-cluster.md, "Register providers for Azure Arc-enabled Kubernetes").
                providers |= {"Microsoft.Kubernetes", "Microsoft.ExtendedLocation"}
            for pool in pools:
                if pool.get("enableEncryptionAtHost"):
                    features.add("Microsoft.Compute/EncryptionAtHost")
                size = GPU_VM_SIZES.get(pool.get("vmSize", ""))
                if size is not None and size.infiniband:
                    features.add("Microsoft.ContainerService/AKSInfinibandSupport")
    return providers, features


def test_the_delivery_registers_exactly_the_providers_and_features_the_program_uses(plans, identities):
    providers, features = _needed_registrations(plans)
    ids = identities["prod"]
    assert set(ids.resource_providers) == providers
    assert set(ids.features) == features


def test_the_permissions_page_make_docs_writes_is_generated_from_the_model(identities):
    from scripts import docs

    table = bootstrap.markdown_table(identities["prod"])
    assert table in docs.stack_views()[docs.OUT / "permissions-prod.md"]()


def test_previews_of_in_cluster_changes_fall_back_to_client_side_for_the_plan_identity(unit_plans, identities):
    """The mechanism that lets a read-only identity preview new and changed Kubernetes objects.

    pulumi-kubernetes previews a create with a server-side dry-run POST and an update with a GET
    and a dry-run PATCH; Kubernetes authorizes a dry run exactly like the real request
    (kubernetes.io/docs/reference/using-api/api-concepts/#dry-run-authorization). On 403 the
    provider previews the inputs client-side instead of failing: provider/pkg/provider/provider.go
    at v4.32.0, Create `if apierrors.IsForbidden(awaitErr)` and Update `if req.GetPreview() &&
    apierrors.IsForbidden(awaitErr)` (pulumi-kubernetes #2419, #2522). So: the pinned provider is
    at least that version, it applies server-side, and the plan identities are refused every
    in-cluster write (a clean 403) while they may read every kind they refresh.
    """
    pins = dict(line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines() if "==" in line)
    assert tuple(int(part) for part in pins["pulumi-kubernetes"].split(".")) >= (4, 32, 0)
    ids, environment = identities["prod"], unit_plans["prod"]
    for unit in (Unit("cluster", "eus2"), Unit("tenants")):
        plan = environment.plan(unit)
        for provider in plan.of_type("pulumi:providers:kubernetes"):
            assert provider.inputs.get("enableServerSideApply") in (True, "true")
        grants = planner_grants("prod", environment, unit.layer, ids)
        in_cluster = [
            op
            for op in deploy_ops(environment, plan, ids)
            if op.data and op.action.startswith(AKS) and not op.action.endswith("/read")
        ]
        assert in_cluster and all(check(ids.planner(unit.layer), grants, [op]) for op in in_cluster)


def test_linked_access_checks_are_part_of_the_model(unit_plans, identities):
    """ARM checks the resources a request references (join, assign, peer, approval); the spoke's
    peering needs peer/action on the hub's VNet, which only the hub grant gives."""
    environment, ids = unit_plans["prod"], identities["prod"]
    ops = [
        op
        for unit in (Unit("foundation"), Unit("cluster", "eus2"))
        for op in deploy_ops(environment, environment.plan(unit), ids)
    ]
    linked = {(op.action, op.scope.split("/")[2], op.needed_by.split(" ")[0]) for op in ops}
    assert (
        "Microsoft.Network/virtualNetworks/peer/action",
        HUB,
        "azure-native:network:VirtualNetworkPeering",
    ) in linked
    assert ("Microsoft.Network/privateDnsZones/join/action", HUB, "azure-native:network:PrivateDnsZoneGroup") in linked
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


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_chart_is_pulled_from_the_environments_registry_by_the_layers_own_identities(
    unit_plans, identities, stack
):
    """Each cluster's `up` and its previews download every chart of its releases from the
    registry the foundation made (planning/charts.py): a pull each identity's grants allow, and
    the registry is the environment's own (a chart from anywhere else fails the model)."""
    ids, environment = identities[stack], unit_plans[stack]
    registries = set(permissions.registry_ids(environment.resources, OFFLINE_SUBSCRIPTION_ID).values())
    pull = "Microsoft.ContainerRegistry/registries/pull/read"
    for unit, plan in units(environment):
        if unit.layer != "cluster":
            continue
        view_ = unit_view(environment, plan)
        releases = plan.of_type("kubernetes:helm.sh/v3:Release")
        assert releases
        for release in releases:
            pulls = [op for op in permissions.resource_operations(view_, release, ("read",)) if op.action == pull]
            assert len(pulls) == 1 and pulls[0].scope in registries, release.name
        for operations, identity, grants in (
            (deploy_ops(environment, plan, ids), ids.deployer("cluster"), deployer_grants(ids, "cluster")),
            (
                refresh_ops(environment, plan, ids),
                ids.planner("cluster"),
                planner_grants(stack, environment, "cluster", ids),
            ),
        ):
            pulls = [op for op in operations if op.action == pull]
            assert pulls and check(identity, grants, pulls) == [], plan.stack
        with pytest.raises(LookupError, match="no registry of this environment"):
            permissions.deploy_operations(dataclasses.replace(view_, registries={}))
