"""Entra ID everywhere: workload identities federated with each cluster, role assignments
scoped to exactly one resource with stable GUID names, and people's access to clusters
through AKS Azure RBAC groups."""

from __future__ import annotations

import itertools
import re
import uuid

import pytest
import yaml

from offline.mocks import OFFLINE_CLIENT_OBJECT_ID, arm_id
from offline.reference import facts_table
from tests.conftest import ALL_STACKS, STACKS, run_with, second_preview

ASSIGNMENT = "azure-native:authorization:RoleAssignment"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
CREDENTIAL = "azure-native:managedidentity:FederatedIdentityCredential"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
CLUSTER = "azure-native:containerservice:ManagedCluster"
SECRETS_OFFICER = "b86a8fe4-44ce-4948-aee5-eccb2c155cd7"
# Roles the program uses beyond the facts table (learn.microsoft.com, key-vault rbac-guide).
EXTRA_ROLES = {
    SECRETS_OFFICER: "Key Vault Secrets Officer",
    "e147488a-f6f5-4113-8e2d-b22465e65bf6": "Key Vault Crypto Service Encryption User",
    # Managed Grafana's (components/grafana.py; facts/azure_roles.json records them with sources).
    "22926164-76b3-42b3-bc55-97df8dab3e41": "Grafana Admin",
    "60921a7e-fef1-4a43-9b16-a26c52ad4769": "Grafana Viewer",
    "b0d8363b-8ddd-447d-831f-62ca05bff136": "Monitoring Data Reader",
    "43d0d8ad-25c7-4714-9337-8ba259a9fe05": "Monitoring Reader",
    # AKS's control plane on its cluster's etcd key vault (components/etcd_encryption.py).
    "f25e0fa2-a7c8-4377-a976-54943a77a395": "Key Vault Contributor",
    "12338af0-0e69-4776-bea7-57ae8d297424": "Key Vault Crypto User",
}
GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def role_ids() -> dict[str, str]:
    """Built-in role ID -> name, from the shared facts page."""
    return {row["id"]: row["role"] for row in facts_table("Built-in role definition IDs")}


def role_of(assignment) -> str:
    role = assignment.inputs["roleDefinitionId"].rsplit("/", 1)[-1]
    return {**role_ids(), **EXTRA_ROLES}.get(role, f"custom role {role}")


def stack_config(stack: str) -> dict:
    return yaml.safe_load(open(f"stacks/Pulumi.{stack}.yaml"))["config"]


def resource_id(resource) -> str:
    return arm_id(resource.type, resource.name, resource.inputs)


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_role_assignment_is_scoped_below_its_resource_group_with_a_built_in_role(plans, stack):
    # The one custom role: the MultiKueue worker role, which the delivery project creates.
    known = set(role_ids()) | {(stack_config(stack).get("platform:jobs") or {}).get("workerRoleId")}
    assignments = plans[stack].of_type(ASSIGNMENT)
    assert assignments
    for assignment in assignments:
        inputs = assignment.inputs
        scope = inputs["scope"]
        # /subscriptions/<s>/resourceGroups/<g>/providers/<ns>/<type>/<name>[/...]: a resource.
        parts = scope.strip("/").split("/")
        assert len(parts) >= 8 and parts[4] == "providers", f"{assignment.name} is scoped to {scope}"
        definition = inputs["roleDefinitionId"]
        assert (
            definition.startswith("/subscriptions/")
            and "/providers/Microsoft.Authorization/roleDefinitions/" in definition
        )
        role_id = definition.rsplit("/", 1)[-1]
        # Key Vault Secrets Officer is not in the facts table; its ID is checked on its own below.
        assert role_id in known or role_id in EXTRA_ROLES, f"{assignment.name} uses a role outside the facts table"
        # The role definition lives in the scope's own subscription (the hub's, for its zones).
        assert definition.split("/")[2] == scope.split("/")[2]
        assert GUID.match(inputs["roleAssignmentName"]), inputs["roleAssignmentName"]
        assert role_of(assignment) not in ("Owner", "Contributor") or "/capacityReservationGroups/" in scope
    names = [a.inputs["roleAssignmentName"] for a in assignments]
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("stack", STACKS)
def test_role_assignment_names_are_identical_across_two_runs(plans, stack):
    """Even when every ID Azure generates differs (another tenant, subscription, principals)."""

    def names(plan):
        return {a.name: a.inputs["roleAssignmentName"] for a in plan.of_type(ASSIGNMENT)}

    first, second = names(plans[stack]), names(second_preview(stack, cloud="another-tenant"))
    assert first == second


def test_assignment_names_depend_on_the_grant_not_on_the_run():
    from planning.roles import assignment_name

    name = assignment_name("prod/storage/weights/models", "prod/workload/trainer", "Storage Blob Data Reader")
    assert uuid.UUID(name).version == 5
    assert name == assignment_name("prod/storage/weights/models", "prod/workload/trainer", "Storage Blob Data Reader")
    assert name != assignment_name(
        "prod/storage/weights/models", "prod/workload/trainer", "Storage Blob Data Contributor"
    )
    assert name != assignment_name(
        "staging/storage/weights/models", "prod/workload/trainer", "Storage Blob Data Reader"
    )


@pytest.mark.parametrize("stack", STACKS)
def test_every_workload_has_one_identity_and_one_credential_per_cluster(plans, stack):
    plan = plans[stack]
    workloads = stack_config(stack)["platform:workloads"]
    assert {"trainer", "inference"} <= set(workloads)
    # Workloads run (and sign in) on every cluster but the MultiKueue dispatchers.
    dispatchers = stack_config(stack).get("platform:jobs", {}).get("dispatchers", [])
    issuers = {
        key: cluster["oidcIssuerUrl"] for key, cluster in plan.outputs["clusters"].items() if key not in dispatchers
    }
    client_ids = plan.outputs["workloadIdentities"]
    for workload, spec in workloads.items():
        (identity,) = [i for i in plan.of_type(IDENTITY) if i.name == f"workloads-{workload}"]
        credentials = [
            c for c in plan.of_type(CREDENTIAL) if c.inputs["resourceName"] == identity.inputs["resourceName"]
        ]
        assert sorted(c.inputs["issuer"] for c in credentials) == sorted(issuers.values())
        for credential in credentials:
            assert credential.inputs["subject"] == f"system:serviceaccount:{spec['namespace']}:{spec['serviceAccount']}"
            assert credential.inputs["audiences"] == ["api://AzureADTokenExchange"]
        # Azure rejects concurrent credential writes on one identity: each waits for the previous.
        ordered = sorted(credentials, key=lambda c: len(c.dependencies))
        for before, after in itertools.pairwise(ordered):
            assert before.urn in after.dependencies
        # A service account on every cluster, in the declared namespace, carrying the client ID.
        accounts = [a for a in plan.of_type(SERVICE_ACCOUNT) if a.inputs["metadata"]["name"] == spec["serviceAccount"]]
        assert len(accounts) == len(issuers)
        providers = {a.provider.split("::")[-2].removesuffix("-k8s") for a in accounts}
        assert providers == {f"aks-{key}" for key in issuers}, "one service account per cluster"
        for account in accounts:
            metadata = account.inputs["metadata"]
            assert metadata["namespace"] == spec["namespace"]
            assert metadata["annotations"]["azure.workload.identity/client-id"] == client_ids[workload]
            assert account.inputs["automountServiceAccountToken"] is False


def grants_of(plan, workload: str) -> dict[str, str]:
    """scope -> role of a workload's role assignments."""
    principal = next(i for i in plan.of_type(IDENTITY) if i.name == f"workloads-{workload}")
    from offline.mocks import offline_uuid

    principal_id = offline_uuid(resource_id(principal), "principal")
    return {a.inputs["scope"]: role_of(a) for a in plan.of_type(ASSIGNMENT) if a.inputs["principalId"] == principal_id}


@pytest.mark.parametrize("stack", STACKS)
def test_trainer_reads_weights_and_datasets_and_writes_checkpoints_inference_only_reads_weights(plans, stack):
    plan = plans[stack]
    containers = {
        (c.inputs["accountName"].removeprefix(f"stailab{stack}"), c.inputs["containerName"]): resource_id(c)
        for c in plan.of_type("azure-native:storage:BlobContainer")
    }

    def storage_grants(workload):
        return {scope: role for scope, role in grants_of(plan, workload).items() if "/Microsoft.Storage/" in scope}

    # The same on the weights' replica (`weightsscus`, the copy in scus's region) where there is one.
    replicated = ("weightsscus", "models") in containers
    expected = {
        containers["weights", "models"]: "Storage Blob Data Reader",
        containers["weights", "checkpoints"]: "Storage Blob Data Contributor",
        containers["datasets", "raw"]: "Storage Blob Data Reader",
        containers["datasets", "curated"]: "Storage Blob Data Reader",
    }
    if replicated:
        expected[containers["weightsscus", "models"]] = "Storage Blob Data Reader"
        expected[containers["weightsscus", "checkpoints"]] = "Storage Blob Data Contributor"
        # Where jobs in scus write checkpoints (writtenInEveryRegion), beside the read-only copy.
        expected[containers["weightsscus", "checkpoints-scus"]] = "Storage Blob Data Contributor"
    assert storage_grants("trainer") == expected
    assert storage_grants("inference") == {
        containers[account, "models"]: "Storage Blob Data Reader"
        for account in ("weights", *(["weightsscus"] if replicated else []))
    }


def test_a_workload_reads_exactly_the_key_vault_secrets_it_lists():
    def with_secret(values):
        values["platform:workloads"]["trainer"]["keyVaultSecrets"] = ["hf-token"]

    plan = run_with("dev", with_secret)
    assert plan.ok, plan.error
    vault = resource_id(plan.one("azure-native:keyvault:Vault"))
    assert {scope: role for scope, role in grants_of(plan, "trainer").items() if "vaults" in scope} == {
        f"{vault}/secrets/hf-token": "Key Vault Secrets User"
    }


def test_a_workload_runs_only_on_the_clusters_it_names():
    def one_cluster(values):
        values["platform:workloads"]["inference"]["clusters"] = ["scus"]

    plan = run_with("prod", one_cluster)
    assert plan.ok, plan.error
    credentials = [
        c for c in plan.of_type(CREDENTIAL) if c.name.startswith("workloads-inference-") and "stats" not in c.name
    ]
    assert [c.name for c in credentials] == ["workloads-inference-scus"]


@pytest.mark.parametrize("stack", STACKS)
def test_people_reach_clusters_through_aks_rbac_groups(plans, stack):
    plan = plans[stack]
    config = stack_config(stack)
    admins = config["platform:entra"]["adminGroupObjectIds"]
    teams = config["platform:teams"]
    for cluster in plan.of_type(CLUSTER):
        cluster_id = resource_id(cluster)
        # Streaming namespaces exist where Flink runs: not on a MultiKueue dispatcher.
        dispatcher = config["platform:clusters"][cluster.inputs["tags"]["cluster"]].get("role") == "dispatch"
        group_grants = {
            (a.inputs["principalId"], a.inputs["scope"].removeprefix(cluster_id), role_of(a))
            for a in plan.of_type(ASSIGNMENT)
            if a.inputs.get("principalType") == "Group" and a.inputs["scope"].startswith(cluster_id)
        }
        expected = {(g, "", "Azure Kubernetes Service RBAC Cluster Admin") for g in admins}
        for team in teams.values():
            for ns in team["namespaces"]:
                if dispatcher and ns in team.get("streamingNamespaces", []):
                    continue
                expected |= {
                    (g, f"/namespaces/{ns}", "Azure Kubernetes Service RBAC Writer")
                    for g in team["entraGroupObjectIds"]
                }
                expected |= {
                    (g, f"/namespaces/{ns}", "Azure Kubernetes Service RBAC Reader")
                    for g in team.get("readerGroupObjectIds", [])
                }
        every_group = {g for g, _, _ in expected}
        expected |= {(g, "", "Azure Kubernetes Service Cluster User Role") for g in every_group}
        assert group_grants == expected


def test_prod_readers_get_read_only_namespaces(plans):
    grants = [
        a
        for a in plans["prod"].of_type(ASSIGNMENT)
        if a.inputs["principalId"] == "2c7d9e1a-5b4f-4a3e-8c2d-6f1e0a9b8c04" and "/namespaces/" in a.inputs["scope"]
    ]
    assert {role_of(a) for a in grants} == {"Azure Kubernetes Service RBAC Reader"}
    assert {a.inputs["scope"].rsplit("/", 1)[-1] for a in grants} == {"research", "research-batch", "evals"}


@pytest.mark.parametrize("stack", STACKS)
def test_nothing_depends_on_who_runs_pulumi(plans, stack):
    """The identity running the deploy (a person, CI's deploy identity, the plan identity in a
    preview) appears in no input: a preview by another identity shows no change."""
    plan = plans[stack]
    other = second_preview(stack, cloud="another-tenant")
    assert OFFLINE_CLIENT_OBJECT_ID not in repr([r.inputs for r in plan.resources])
    assert [r.name for r in plan.of_type(ASSIGNMENT) if "deployer" in r.name] == []
    assert {r.name for r in plan.resources} == {r.name for r in other.resources}


def test_storage_encrypts_with_the_vaults_key_when_configured():
    def customer_key(values):
        values["platform:storage"]["customerManagedKey"] = True

    plan = run_with("dev", customer_key)
    assert plan.ok, plan.error
    key = plan.one("azure-native:keyvault:Key")
    assert key.inputs["properties"]["kty"] == "RSA" and key.inputs["properties"]["rotationPolicy"]["lifetimeActions"]
    grant = plan.one(ASSIGNMENT, "storage-encryption-key-access")
    # Not in the shared facts table: learn.microsoft.com/azure/key-vault/general/rbac-guide.
    assert grant.inputs["roleDefinitionId"].endswith("/e147488a-f6f5-4113-8e2d-b22465e65bf6")
    assert grant.inputs["scope"] == resource_id(key), "the key only, not the vault"
    identity = plan.one(IDENTITY, "storage-encryption-id")
    for account in plan.of_type("azure-native:storage:StorageAccount"):
        encryption = account.inputs["encryption"]
        assert encryption["keySource"] == "Microsoft.Keyvault"
        # Pulumi's names; the provider sends them as ARM's keyvaultproperties and identity.
        assert encryption["keyVaultProperties"]["keyName"] == key.inputs["keyName"]
        assert "keyVersion" not in encryption["keyVaultProperties"], "a versionless key follows rotation"
        assert encryption["encryptionIdentity"]["encryptionUserAssignedIdentity"] == resource_id(identity)
        assert grant.urn in account.dependencies


def test_team_namespaces_keep_their_identity_from_when_the_gpu_stack_owned_them(plans):
    """Moving a namespace between components must not delete it (and what runs in it)."""
    namespace = plans["prod"].one("kubernetes:core/v1:Namespace", "tenancy-eus2-ns-research")
    assert any('"gpu-eus2-ns-research"' in alias and "gpu-eus2" in alias for alias in namespace.aliases)


def test_secrets_officers_manage_secrets_in_every_regions_vault_only(plans):
    """They write each secret to every region's vault (decision 0008), so they hold the role on each."""
    plan = plans["prod"]
    # The regions' vaults; not the clusters' etcd key vaults, which hold one key and no secret.
    vaults = sorted(
        resource_id(v) for v in plan.of_type("azure-native:keyvault:Vault") if "EtcdEncryption" not in v.urn
    )
    officers = [a for a in plan.of_type(ASSIGNMENT) if "-secrets-officer-" in a.name]
    assert len(vaults) == 2 and sorted(o.inputs["scope"] for o in officers) == vaults
    for officer in officers:
        assert officer.inputs["principalType"] == "Group"
        assert officer.inputs["roleDefinitionId"].endswith("/b86a8fe4-44ce-4948-aee5-eccb2c155cd7")
