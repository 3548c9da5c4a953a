"""The policy packs, evaluated offline through pulumi-policy's analyzer, as `pulumi preview` does.

Every policy has a compliant case (the prod plan passes it under prod's enforcement file) and a
violating case made by changing one property of that plan: exactly that policy must fire, at
mandatory. Further tests cover the enforcement files (levels, waivers, schema), unknown values
during preview, remediation, the CLI's Pulumi-style report and exit code, and the Markdown report.
"""

from __future__ import annotations

import datetime
import importlib
import inspect
import re
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from pulumi.runtime import rpc

from offline.engine import Plan
from offline.policy import PolicyConfigError, load_pack_config, load_packs, parse_pack_config, review_plan
from offline.report import StackReport, markdown
from tests.conftest import ROOT, copy_project, run_with, without_kafka_lag_scaling
from tests.support.plan_edits import DELETE, changed, options, with_resource, without

PACKS = {pack.name: pack for pack in load_packs()}
# Every pack of every project (the delivery's: tests/test_delivery_policies.py).
EVERY_PACK = {pack.name: pack for project in ("platform", "delivery") for pack in load_packs(project=project)}
ALL_POLICIES = {policy.name: pack.name for pack in PACKS.values() for policy in pack.policies}
ENVIRONMENTS = ("dev", "staging", "prod")


def grant_of(plan: Plan, identity: str) -> str:
    """A role assignment of workload identity `identity`."""
    urn = next(r.urn for r in plan.resources if r.name == identity)
    return next(
        r.name
        for r in plan.of_type("azure-native:authorization:RoleAssignment")
        if urn in r.property_dependencies.get("principalId", ())
    )


POD = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "probe", "namespace": "research"},
    "spec": {
        "selector": {"matchLabels": {"app": "probe"}},
        "template": {
            "metadata": {"labels": {"app": "probe"}},
            "spec": {
                "containers": [
                    {
                        "name": "probe",
                        "image": "crailabprod.azurecr.io/probe:1.0.0",
                        "securityContext": {"allowPrivilegeEscalation": False},
                    }
                ]
            },
        },
    },
}
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {
        "name": "probe",
        "namespace": "research",
        "annotations": {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"},
    },
    "spec": {"type": "LoadBalancer", "selector": {"app": "probe"}, "ports": [{"port": 443}]},
}


@pytest.fixture(scope="module")
def prod(plans) -> Plan:
    return plans["prod"]


@pytest.fixture(scope="module")
def prod_on_event_hubs() -> Plan:
    """prod with the Event Hubs engine (the only stack config change): Event Hubs policies' base."""

    def switch(values: dict[str, Any]) -> None:
        kafka = values["platform:kafka"]
        kafka["engine"] = "eventhubs"
        kafka.pop("strimzi")
        kafka["eventHubs"] = {"sku": "Premium", "capacity": 1}
        without_kafka_lag_scaling(values)

    plan = run_with("prod", switch)
    assert plan.ok, plan.error
    return plan


# (policy, the one change to the compliant plan). Each policy of both packs appears at least once.
Change = Callable[[Plan], Plan]
RULE_GROUP = "azure-native:alertsmanagement:PrometheusRuleGroup"
MC = "aks-eus2-aks"
VIOLATIONS: list[tuple[str, str, Change]] = [
    (
        "aks-etcd-encrypted",
        "etcd under platform-managed keys only",
        lambda p: changed(p, MC, path="securityProfile.azureKeyVaultKms.enabled", value=False),
    ),
    (
        "aks-etcd-encrypted",
        "the KMS vault not named (AKS cannot make its private link)",
        lambda p: changed(p, MC, path="securityProfile.azureKeyVaultKms.keyVaultResourceId", value=DELETE),
    ),
    (
        "aks-local-accounts-disabled",
        "local accounts on",
        lambda p: changed(p, MC, path="disableLocalAccounts", value=False),
    ),
    (
        "aks-entra-id-azure-rbac",
        "Kubernetes RBAC instead of Azure RBAC",
        lambda p: changed(p, MC, path="aadProfile.enableAzureRBAC", value=False),
    ),
    (
        "aks-private-api-server",
        "public API server without ranges",
        lambda p: changed(p, MC, path="apiServerAccessProfile.enablePrivateCluster", value=False),
    ),
    (
        "aks-private-api-server",
        "authorized ranges open to the internet",
        lambda p: changed(
            p, MC, path="apiServerAccessProfile", value={"authorizedIPRanges": ["203.0.113.0/24", "0.0.0.0/0"]}
        ),
    ),
    (
        "aks-private-api-server",
        "two halves of the internet",
        lambda p: changed(
            p, MC, path="apiServerAccessProfile", value={"authorizedIPRanges": ["0.0.0.0/1", "128.0.0.0/1"]}
        ),
    ),
    (
        "aks-azure-cni-network-policy",
        "no network policy engine",
        lambda p: changed(p, MC, path="networkProfile.networkPolicy", value="none"),
    ),
    (
        "aks-workload-identity",
        "workload identity off",
        lambda p: changed(p, MC, path="securityProfile.workloadIdentity.enabled", value=False),
    ),
    (
        "aks-no-node-public-ip",
        "public node IPs",
        lambda p: changed(p, "aks-eus2-pool-cpu", path="enableNodePublicIP", value=True),
    ),
    (
        "aks-system-pool-tainted",
        "untainted system pool",
        lambda p: changed(p, MC, path="agentPoolProfiles[0].nodeTaints", value=[]),
    ),
    (
        "aks-system-pool-tainted",
        "untainted pool whose mode ARM defaults to System",
        lambda p: changed(
            changed(p, MC, path="agentPoolProfiles[0].nodeTaints", value=DELETE),
            MC,
            path="agentPoolProfiles[0].mode",
            value=DELETE,
        ),
    ),
    (
        "aks-upgrade-owner",
        "the fleet's auto-upgrade profile disabled",
        lambda p: changed(p, "fleet-auto-upgrade", path="disabled", value=True),
    ),
    (
        "aks-upgrade-owner",
        "the fleet upgrading node images only",
        lambda p: changed(p, "fleet-auto-upgrade", path="channel", value="NodeImage"),
    ),
    (
        "aks-kubernetes-version-supported",
        "a retired minor",
        lambda p: changed(p, MC, path="kubernetesVersion", value="1.31"),
    ),
    ("aks-standard-tier", "Free tier", lambda p: changed(p, MC, path="sku.tier", value="Free")),
    ("gpu-pool-tainted", "untainted GPU pool", lambda p: changed(p, "aks-eus2-pool-h100", path="nodeTaints", value=[])),
    (
        "gpu-pool-autoscaled",
        "fixed-size GPU pool",
        lambda p: changed(p, "aks-eus2-pool-h100", path="enableAutoScaling", value=False),
    ),
    (
        "autoscaled-pool-count-unmanaged",
        "count managed under autoscale",
        lambda p: options(p, "aks-eus2-pool-cpu", ignore_changes=("orchestratorVersion",)),
    ),
    (
        "no-spot-training-pools",
        "training on Spot",
        lambda p: changed(p, "aks-eus2-pool-h100", path="scaleSetPriority", value="Spot"),
    ),
    (
        "no-spot-training-pools",
        "a Spot GPU pool of unknown purpose",
        lambda p: changed(
            changed(p, "aks-eus2-pool-a100", path="scaleSetPriority", value="Spot"),
            "aks-eus2-pool-a100",
            path=("nodeLabels", "platform.ai/gpu-purpose"),
            value=DELETE,
        ),
    ),
    (
        "storage-public-network-disabled",
        "public storage",
        lambda p: changed(p, "storage-weights", path="publicNetworkAccess", value="Enabled"),
    ),
    (
        "storage-shared-key-disabled",
        "shared keys",
        lambda p: changed(p, "storage-weights", path="allowSharedKeyAccess", value=True),
    ),
    (
        "storage-minimum-tls",
        "TLS 1.0",
        lambda p: changed(p, "storage-weights", path="minimumTlsVersion", value="TLS1_0"),
    ),
    (
        "storage-blob-soft-delete",
        "blob soft delete off",
        lambda p: changed(p, "storage-weights-blob-service", path="deleteRetentionPolicy.enabled", value=False),
    ),
    (
        "keyvault-public-network-disabled",
        "public vault",
        lambda p: changed(p, "keyvault-vault", path="properties.publicNetworkAccess", value="Enabled"),
    ),
    (
        "keyvault-rbac-authorization",
        "access policies",
        lambda p: changed(p, "keyvault-vault", path="properties.enableRbacAuthorization", value=False),
    ),
    (
        "keyvault-deletion-protection",
        "no purge protection",
        lambda p: changed(p, "keyvault-vault", path="properties.enablePurgeProtection", value=False),
    ),
    (
        "registry-public-network-disabled",
        "public registry",
        lambda p: changed(p, "registry-registry", path="publicNetworkAccess", value="Enabled"),
    ),
    (
        "registry-local-auth-disabled",
        "admin user",
        lambda p: changed(p, "registry-registry", path="adminUserEnabled", value=True),
    ),
    (
        "workload-identity-narrow-scope",
        "a grant on a resource group",
        lambda p: changed(
            p,
            grant_of(p, "workloads-trainer"),
            path="scope",
            value="/subscriptions/d2bf8eeb-1057-5d65-84b7-d7af78a77b77/resourceGroups/rg-ailab-prod-eus2-data",
        ),
    ),
    # A workload's grant at the tenant root also breaks role-assignments-not-privileged, which
    # holds every principal to below subscription scope (its own case: a control-plane grant).
    (
        "role-assignments-not-privileged",
        "Contributor for a workload identity",
        lambda p: changed(
            p,
            grant_of(p, "workloads-trainer"),
            path="roleDefinitionId",
            value="/subscriptions/d2bf8eeb-1057-5d65-84b7-d7af78a77b77/providers/Microsoft.Authorization/"
            "roleDefinitions/b24988ac-6180-42a0-ab88-20f7382dd24c",
        ),
    ),
    (
        "role-assignments-not-privileged",
        "Owner for a kubelet",
        lambda p: changed(
            p,
            "aks-eus2-kubelet-pulls",
            path="roleDefinitionId",
            value="/subscriptions/d2bf8eeb-1057-5d65-84b7-d7af78a77b77/providers/Microsoft.Authorization/"
            "roleDefinitions/8e3af657-a8ff-443c-a75c-2fe8c4bcb635",
        ),
    ),
    (
        "role-assignments-not-privileged",
        "a control-plane grant on the subscription",
        lambda p: changed(
            p,
            "aks-eus2-control-plane-operates-kubelet",
            path="scope",
            value="/subscriptions/d2bf8eeb-1057-5d65-84b7-d7af78a77b77",
        ),
    ),
    (
        "policy-assignment-allowed-definitions",
        "a definition the platform does not assign",
        lambda p: changed(
            p,
            "admission-eus2-pod-security",
            path="policyDefinitionId",
            value="/providers/Microsoft.Authorization/policyDefinitions/0a15ec92-a229-4763-bb14-0ea34a568f8d",
        ),
    ),
    (
        "subnet-has-nsg",
        "a node subnet without its NSG",
        lambda p: changed(p, "net-eastus2-snet-eus2-nodes", path="networkSecurityGroup", value=DELETE),
    ),
    (
        "federated-credential-trusted-issuer",
        "an issuer from a cluster that is not an AKS issuer",
        lambda p: changed(
            p, "workloads-trainer-eus2", path="issuer", value="https://token.actions.githubusercontent.com"
        ),
    ),
    (
        "federated-credential-trusted-issuer",
        "a foreign issuer",
        lambda p: changed(
            changed(p, "workloads-trainer-eus2", path="issuer", value="https://token.actions.githubusercontent.com"),
            "workloads-trainer-eus2",
            property_dependencies={},
        ),
    ),
    (
        "private-endpoint-with-dns",
        "a zone group without zones",
        lambda p: changed(p, "storage-weights-pe-blob-dns", path="privateDnsZoneConfigs", value=[]),
    ),
    (
        "private-endpoint-with-dns",
        "no private endpoint",
        lambda p: without(
            without(
                without(without(p, "registry-pe-registry-dns"), "registry-pe-registry"), "registry-pe-registry-scus-dns"
            ),
            "registry-pe-registry-scus",
        ),
    ),
    (
        "private-endpoints-in-cluster-regions",
        "the second region reaching the vault through the primary's endpoint",
        lambda p: without(without(p, "keyvault-pe-vault-scus-dns"), "keyvault-pe-vault-scus"),
    ),
    (
        "storage-survives-a-region",
        "the weights without their replica",
        lambda p: without(without(p, "storage-weights-replication-source"), "storage-weights-replication-destination"),
    ),
    (
        "alerting-on-every-cluster",
        "critical alerts that reach nobody",
        lambda p: changed(
            p,
            "alerts-eus2-platform-kafka",
            path="rules",
            value=[{**rule, "actions": []} for rule in p.one(RULE_GROUP, "alerts-eus2-platform-kafka").inputs["rules"]],
        ),
    ),
    (
        "monitoring-private",
        "a collection endpoint taking public ingestion",
        lambda p: changed(p, "ops-dce", path="networkAcls.publicNetworkAccess", value="Enabled"),
    ),
    (
        "monitoring-private",
        "a cluster without Container Insights",
        lambda p: changed(p, "aks-eus2-aks", path="addonProfiles.omsagent", value={"enabled": False}),
    ),
    ("stateful-resources-protected", "unprotected storage", lambda p: options(p, "storage-weights", protect=False)),
    (
        "address-ranges-disjoint",
        "overlapping VNets",
        lambda p: changed(p, "net-southcentralus-vnet", path="addressSpace.addressPrefixes", value=["10.20.128.0/17"]),
    ),
    (
        "address-ranges-disjoint",
        "service CIDR inside a VNet",
        lambda p: changed(p, MC, path="networkProfile.serviceCidr", value="10.20.0.0/16"),
    ),
    ("required-tags", "no cost-center", lambda p: changed(p, MC, path="tags.cost-center", value=DELETE)),
    (
        "k8s-no-privileged-containers",
        "a privileged container",
        lambda p: changed(
            with_resource(p, DEPLOYMENT, "probe", POD),
            "probe",
            path="spec.template.spec.containers[0].securityContext.privileged",
            value=True,
        ),
    ),
    (
        "k8s-no-host-namespaces",
        "host network",
        lambda p: changed(
            with_resource(p, DEPLOYMENT, "probe", POD), "probe", path="spec.template.spec.hostNetwork", value=True
        ),
    ),
    (
        "k8s-namespace-pod-security",
        "a team namespace at privileged",
        lambda p: changed(
            p,
            "tenancy-eus2-ns-inference",
            path=("metadata", "labels", "pod-security.kubernetes.io/enforce"),
            value="privileged",
        ),
    ),
    (
        "k8s-namespace-pod-security",
        "a training namespace that its cluster's baseline-plus-IPC_LOCK binding misses",
        lambda p: changed(
            p,
            "admission-eus2-binding-pod-security-training",
            path="spec.matchResources.namespaceSelector",
            value={"matchLabels": {"platform.ai/namespace-class": "serving"}},
        ),
    ),
    (
        "helm-release-pinned",
        "a version range",
        lambda p: changed(p, "gpu-eus2-gpu-operator", path="version", value="~25.3"),
    ),
    (
        "k8s-no-public-load-balancer",
        "a public Service",
        lambda p: changed(
            with_resource(p, "kubernetes:core/v1:Service", "probe", SERVICE),
            "probe",
            path="metadata.annotations",
            value={},
        ),
    ),
    (
        "k8s-no-public-load-balancer",
        "Kafka's mirror listener made public",
        lambda p: changed(p, "kafka-eus2-kafka-eus2", path="spec.kafka.template", value=DELETE),
    ),
    (
        "kafka-listeners-secured",
        "a plaintext listener",
        lambda p: changed(p, "kafka-eus2-kafka-eus2", path="spec.kafka.listeners[0].tls", value=False),
    ),
    (
        "kafka-replication-durable",
        "a topic on two brokers",
        lambda p: changed(p, "kafka-eus2-kafkatopic-training-metrics", path="spec.replicas", value=2),
    ),
    (
        "kafka-volumes-retained",
        "broker volumes deleted with their claims",
        lambda p: changed(p, "kafka-eus2-kafkanodepool-brokers", path="spec.storage.deleteClaim", value=True),
    ),
    (
        "kafka-volumes-retained",
        "a Delete storage class",
        lambda p: changed(
            p,
            next(r.name for r in p.of_type("kubernetes:storage.k8s.io/v1:StorageClass")),
            path="reclaimPolicy",
            value="Delete",
        ),
    ),
    (
        "kafka-volumes-retained",
        "AKS's built-in managed-csi class",
        lambda p: changed(p, "kafka-eus2-kafkanodepool-brokers", path="spec.storage.class", value="managed-csi"),
    ),
    (
        "address-ranges-disjoint",
        "AKS's default service CIDR inside a VNet",
        lambda p: changed(
            changed(p, "net-southcentralus-vnet", path="addressSpace.addressPrefixes", value=["10.0.0.0/16"]),
            MC,
            path="networkProfile.serviceCidr",
            value=DELETE,
        ),
    ),
    ("kafka-resources-protected", "unprotected Kafka", lambda p: options(p, "kafka-eus2-kafka-eus2", protect=False)),
    (
        "k8s-namespace-default-deny",
        "a team namespace without its default-deny policy",
        lambda p: without(p, "tenancy-eus2-isolation-research-default-deny"),
    ),
    (
        "k8s-namespace-default-deny",
        "default deny for ingress only",
        lambda p: changed(
            p, "gpu-eus2-isolation-kueue-system-default-deny", path="spec.policyTypes", value=["Ingress"]
        ),
    ),
    (
        "k8s-fqdn-policies-need-acns",
        "FQDN policies on a cluster without ACNS",
        lambda p: changed(p, MC, path="networkProfile.advancedNetworking", value=DELETE),
    ),
    (
        "k8s-fqdn-policies-need-acns",
        "ACNS without its FQDN policies",
        lambda p: changed(
            p, MC, path="networkProfile.advancedNetworking.security.advancedNetworkPolicies", value="None"
        ),
    ),
    (
        "k8s-admission-binding-denies",
        "an admission binding weakened to audit",
        lambda p: changed(
            p, "admission-eus2-binding-no-privileged", path="spec.validationActions", value=["Warn", "Audit"]
        ),
    ),
    (
        "k8s-no-cluster-admin-binding",
        "cluster-admin bound to a user",
        lambda p: with_resource(
            p,
            "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
            "break-glass",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": "break-glass"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
                "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "someone@example.com"}],
            },
        ),
    ),
]
COSMOS_GRANT = "cosmos-access-inference-lab-models"
VIOLATIONS += [
    (
        "cosmosdb-public-network-disabled",
        "public account",
        lambda p: changed(p, "cosmos", path="publicNetworkAccess", value="Enabled"),
    ),
    (
        "cosmosdb-public-network-disabled",
        "Azure services past the network rules",
        lambda p: changed(p, "cosmos", path="networkAclBypass", value="AzureServices"),
    ),
    (
        "cosmosdb-local-auth-disabled",
        "account keys",
        lambda p: changed(p, "cosmos", path="disableLocalAuth", value=False),
    ),
    (
        "cosmosdb-local-auth-disabled",
        "databases made with a key",
        lambda p: changed(p, "cosmos", path="disableKeyBasedMetadataWriteAccess", value=False),
    ),
    ("cosmosdb-minimum-tls", "TLS 1.0", lambda p: changed(p, "cosmos", path="minimalTlsVersion", value="Tls")),
    (
        "cosmosdb-zone-redundant",
        "one region in a single zone",
        lambda p: changed(p, "cosmos", path="locations[1].isZoneRedundant", value=False),
    ),
    (
        "cosmosdb-data-role-narrow",
        "a workload's reader on the whole account",
        lambda p: changed(
            p,
            COSMOS_GRANT,
            path="scope",
            value="/subscriptions/s/resourceGroups/rg/providers/Microsoft.DocumentDB/databaseAccounts/cosmos-ailab-prod",
        ),
    ),
    (
        "cosmosdb-data-role-narrow",
        "a custom data role",
        lambda p: changed(
            p, COSMOS_GRANT, path="roleDefinitionId", value="/x/sqlRoleDefinitions/5c1ad8a1-0000-4000-8000-000000000001"
        ),
    ),
    (
        "private-endpoint-with-dns",
        "a Cosmos DB account without its endpoint",
        lambda p: without(
            without(without(without(p, "cosmos-pe-Sql-dns"), "cosmos-pe-Sql"), "cosmos-pe-Sql-scus-dns"),
            "cosmos-pe-Sql-scus",
        ),
    ),
]
LUSTRE_VOLUME = "lustre-csi-eus2-pv-research"
VIOLATIONS += [
    (
        "lustre-no-blob-integration",
        "a file system importing from a blob container",
        lambda p: changed(
            p,
            "lustre-eus2",
            path="hsm",
            value={"settings": {"container": "/subscriptions/s/x/containers/raw", "loggingContainer": "/s/x/logs"}},
        ),
    ),
    (
        "k8s-persistent-volumes-scoped",
        "a Lustre volume on the whole file system",
        lambda p: changed(p, LUSTRE_VOLUME, path=("spec", "csi", "volumeAttributes", "sub-dir"), value=DELETE),
    ),
    (
        "k8s-persistent-volumes-scoped",
        "a Lustre volume on another team's directory",
        lambda p: changed(p, LUSTRE_VOLUME, path=("spec", "csi", "volumeAttributes", "sub-dir"), value="teams/serving"),
    ),
    (
        "k8s-persistent-volumes-scoped",
        "a volume any claim may bind",
        lambda p: changed(p, LUSTRE_VOLUME, path=("spec", "claimRef"), value=DELETE),
    ),
    (
        "k8s-persistent-volumes-scoped",
        "inline Lustre volumes",
        lambda p: changed(
            p, "lustre-csi-eus2-driver", path=("spec", "volumeLifecycleModes"), value=["Persistent", "Ephemeral"]
        ),
    ),
]
PG_TABLES = "postgresql-access-trainer-experiments-public-tables"
VIOLATIONS += [
    (
        "postgresql-public-network-disabled",
        "a public server",
        lambda p: changed(p, "postgresql", path="network.publicNetworkAccess", value="Enabled"),
    ),
    (
        "postgresql-entra-only",
        "passwords on (the SDK's default)",
        lambda p: changed(p, "postgresql", path="authConfig.passwordAuth", value="Enabled"),
    ),
    (
        "postgresql-secure-transport",
        "clients without TLS",
        lambda p: changed(p, "postgresql-require-secure-transport", path="value", value="off"),
    ),
    (
        "postgresql-zone-redundant",
        "the standby in the same zone",
        lambda p: changed(p, "postgresql", path="highAvailability.mode", value="SameZone"),
    ),
    (
        "postgresql-geo-redundant-backup",
        "backups in the region only",
        lambda p: changed(p, "postgresql", path="backup.geoRedundantBackup", value="Disabled"),
    ),
    (
        "postgresql-grant-narrow",
        "a workload that may truncate",
        lambda p: changed(p, PG_TABLES, path="privileges", value=["SELECT", "TRUNCATE"]),
    ),
    (
        "postgresql-grant-narrow",
        "every login may connect (a grant to PUBLIC)",
        lambda p: changed(p, "postgresql-access-experiments-public-connect", path="privileges", value=["CONNECT"]),
    ),
    (
        "postgresql-grant-narrow",
        "a workload's label that makes it an administrator",
        lambda p: changed(
            p,
            "postgresql-access-trainer-label",
            path="label",
            value="aadauth,oid=5b2e9f10-6c3d-4e7a-9b8c-1d2e3f4a5b03,type=service,admin",
        ),
    ),
    (
        "postgresql-grant-narrow",
        "a workload's role as superuser",
        lambda p: changed(p, "postgresql-access-trainer-role", path="superuser", value=True),
    ),
    (
        "private-endpoint-with-dns",
        "a PostgreSQL server without its endpoint",
        lambda p: without(
            without(
                without(without(p, "postgresql-pe-postgresqlServer-dns"), "postgresql-pe-postgresqlServer"),
                "postgresql-pe-postgresqlServer-scus-dns",
            ),
            "postgresql-pe-postgresqlServer-scus",
        ),
    ),
]
SERVING_ALLOW = "serving-apis-eus2-authorizationpolicy-aks-istio-ingress-serving-generate"
SERVING_GATEWAY = "serving-eus2-gateway-serving"
VIOLATIONS += [
    (
        "serving-routes-authenticated",
        "a route without its ALLOW policy",
        lambda p: without(p, SERVING_ALLOW),
    ),
    (
        "serving-routes-authenticated",
        "a route open to any token of the API, whatever its roles",
        lambda p: changed(
            p,
            SERVING_ALLOW,
            path="spec.rules[0].when",
            value=[{"key": "request.auth.audiences", "values": ["7d2a9e3c-5f4b-4a8c-9dae-9f8a7b6c5d43"]}],
        ),
    ),
    (
        "serving-routes-authenticated",
        "a route open to another API's token that carries a role of the same name",
        lambda p: changed(
            p,
            SERVING_ALLOW,
            path="spec.rules[0].when",
            value=[{"key": "request.auth.claims[roles]", "values": ["Generate.Invoke"]}],
        ),
    ),
    (
        "serving-routes-authenticated",
        "a gateway that lets a request without a token through",
        lambda p: without(p, "serving-eus2-authorizationpolicy-serving-require-token"),
    ),
    (
        "serving-certificates-from-key-vault",
        "a certificate in a hand-made Secret",
        lambda p: changed(p, SERVING_GATEWAY, path="spec.servers[0].tls.credentialName", value="inference-tls"),
    ),
    (
        "serving-certificates-from-key-vault",
        "TLS 1.0",
        lambda p: changed(p, SERVING_GATEWAY, path="spec.servers[0].tls.minProtocolVersion", value="TLSV1_0"),
    ),
    (
        "serving-private-link-per-consumer",
        "a Private Link service approving every subscription",
        lambda p: changed(
            p,
            "serving-eus2-service-serving-gateway",
            path=("metadata", "annotations", "service.beta.kubernetes.io/azure-pls-auto-approval"),
            value="*",
        ),
    ),
    (
        "aks-mesh-gateways-internal",
        "the mesh's external (public) ingress gateway",
        lambda p: changed(
            p,
            "aks-eus2-aks",
            path="serviceMeshProfile.istio.components.ingressGateways",
            value=[{"enabled": True, "mode": "Internal"}, {"enabled": True, "mode": "External"}],
        ),
    ),
    (
        "k8s-no-public-load-balancer",
        "the serving gateway's load balancer on a public IP",
        lambda p: changed(
            p,
            "serving-eus2-service-serving-gateway",
            path=("metadata", "annotations", "service.beta.kubernetes.io/azure-load-balancer-internal"),
            value="false",
        ),
    ),
]
FLINK_JOB = "flink-eus2-inference-stats"
FLINK_CONFIG = ("spec", "flinkConfiguration")
VIOLATIONS += [
    (
        "flink-checkpoints-private",
        "checkpoints on a public blob endpoint",
        lambda p: changed(
            p,
            FLINK_JOB,
            path=(*FLINK_CONFIG, "execution.checkpointing.dir"),
            value="wasbs://state@stpublic.blob.core.windows.net/checkpoints",
        ),
    ),
    (
        "flink-checkpoints-private",
        "savepoints on an account the platform does not own",
        lambda p: changed(
            p,
            FLINK_JOB,
            path=(*FLINK_CONFIG, "execution.checkpointing.savepoint-dir"),
            value="abfss://state@stsomeoneelse.dfs.core.windows.net/savepoints",
        ),
    ),
    (
        "flink-high-availability",
        "one JobManager without HA",
        lambda p: changed(
            changed(p, FLINK_JOB, path=(*FLINK_CONFIG, "high-availability.type"), value=DELETE),
            FLINK_JOB,
            path="spec.jobManager.replicas",
            value=1,
        ),
    ),
    (
        "flink-no-credentials",
        "an account key in the Flink configuration",
        lambda p: changed(
            p,
            FLINK_JOB,
            path=(*FLINK_CONFIG, "flink.hadoop.fs.azure.account.key.stailabprodflink.dfs.core.windows.net"),
            value="bm90LWEta2V5",
        ),
    ),
    (
        "kafka-clients-authenticated-tls",
        "a plaintext Kafka client",
        lambda p: changed(
            p,
            f"{FLINK_JOB}-kafka",
            path=("data", "client.properties"),
            value="bootstrap.servers=kafka:9092\nsecurity.protocol=PLAINTEXT\n",
        ),
    ),
]
EVENT_HUBS_VIOLATIONS: list[tuple[str, str, Change]] = [
    (
        "eventhubs-public-network-disabled",
        "public namespace",
        lambda p: changed(p, "events", path="publicNetworkAccess", value="Enabled"),
    ),
    ("eventhubs-local-auth-disabled", "SAS keys", lambda p: changed(p, "events", path="disableLocalAuth", value=False)),
    ("eventhubs-minimum-tls", "TLS 1.0", lambda p: changed(p, "events", path="minimumTlsVersion", value="1.0")),
    ("stateful-resources-protected", "unprotected namespace", lambda p: options(p, "events", protect=False)),
    ("private-endpoint-with-dns", "endpoint without zone group", lambda p: without(p, "events-pe-namespace-dns")),
]


# An on-premises site: prod-scale's phx1 (prod-scale deploys as prod).
SITE = "site-phx1"
SITE_VIOLATIONS: list[tuple[str, str, Change]] = [
    (
        "connected-clusters-governed",
        "a site without Azure Policy's extension",
        lambda p: without(p, f"{SITE}-ext-azurepolicy"),
    ),
    (
        "connected-clusters-governed",
        "a site without Container Insights",
        lambda p: without(p, f"{SITE}-ext-azuremonitor-containers"),
    ),
    (
        "connected-clusters-governed",
        "Container Insights on the workspace's key",
        lambda p: changed(
            p,
            f"{SITE}-ext-azuremonitor-containers",
            path=("configurationSettings", "amalogs.useAADAuth"),
            value="false",
        ),
    ),
    (
        "connected-clusters-governed",
        "managed Prometheus collecting nowhere",
        lambda p: without(p, f"{SITE}-prometheus-dcra"),
    ),
    (
        "connected-clusters-governed",
        "a site without its pod security initiative",
        lambda p: without(p, f"{SITE}-pod-security"),
    ),
    (
        "federated-credential-trusted-issuer",
        "the site's Flux trusting an issuer no cluster has",
        lambda p: changed(p, f"{SITE}-flux-source-controller", path="issuer", value="https://issuer.example.com/x/"),
    ),
]


def test_every_policy_has_a_violating_case():
    covered = {policy for policy, _, _ in VIOLATIONS + EVENT_HUBS_VIOLATIONS + SITE_VIOLATIONS}
    assert covered == set(ALL_POLICIES)


@pytest.mark.parametrize("policy, change, mutate", SITE_VIOLATIONS, ids=[f"{p}: {c}" for p, c, _ in SITE_VIOLATIONS])
def test_site_changes_fire_exactly_their_policy(plans, policy, change, mutate):
    """prod-scale's site passes as built (test_every_stack_passes_its_mandatory_policies); each
    change fires its policy alone."""
    review = review_plan(mutate(plans["prod-scale"]), "prod")
    assert review.fired() == {(policy, "mandatory")}, [(v.policy, v.message) for v in review.violations]


@pytest.mark.parametrize(
    "stack, environment", [("dev", "dev"), ("staging", "staging"), ("prod", "prod"), ("prod-scale", "prod")]
)
def test_every_stack_passes_its_mandatory_policies(plans, stack, environment):
    review = review_plan(plans[stack], environment)
    assert review.mandatory == [], [(v.policy, v.resource_name) for v in review.mandatory]
    assert review.passed


def test_prod_is_compliant_with_every_policy(prod):
    """The compliant case of every policy: prod under prod's enforcement fires nothing at all."""
    review = review_plan(prod, "prod")
    assert review.violations == []
    assert review.waivers == []


@pytest.mark.parametrize("policy, change, mutate", VIOLATIONS, ids=[f"{p}: {c}" for p, c, _ in VIOLATIONS])
def test_one_changed_property_fires_exactly_its_policy(prod, policy, change, mutate):
    review = review_plan(mutate(prod), "prod")
    assert review.fired() == {(policy, "mandatory")}, [(v.policy, v.message) for v in review.violations]
    assert not review.passed


def test_the_memoized_struct_conversion_changes_no_verdict(plans, monkeypatch):
    """The review converts each distinct properties Struct once and builds the stack policies'
    resources once (offline/policy.py); with both done afresh every time, as pulumi-policy's own
    `AnalyzeStack` does, every verdict is the same. dev under prod's enforcement has resource and
    stack findings to compare; a variant adds one."""
    import offline.policy as policy_module

    dev = plans["dev"]
    variants = [dev, changed(dev, "registry-registry", path="adminUserEnabled", value=True)]

    def verdicts() -> list[list[tuple[str, str, str, str]]]:
        return [
            sorted((v.policy, v.level, v.resource_name, v.message) for v in review_plan(plan, "prod").violations)
            for plan in variants
        ]

    monkeypatch.setattr(policy_module, "_ANALYZED", {})
    memoized = verdicts()
    monkeypatch.setattr(policy_module, "MEMOIZE_STRUCTS", False)
    monkeypatch.setattr(policy_module, "_ANALYZED", {})
    assert verdicts() == memoized
    # A resource policy and a stack policy (policies/azure-platform/azure_guardrails/stack.py).
    assert {"aks-standard-tier", "stateful-resources-protected"} <= {v[0] for v in memoized[0]}
    assert len(memoized[1]) == len(memoized[0]) + 1


def test_prod_on_event_hubs_is_compliant(prod_on_event_hubs):
    assert review_plan(prod_on_event_hubs, "prod").violations == []


@pytest.mark.parametrize(
    "policy, change, mutate", EVENT_HUBS_VIOLATIONS, ids=[f"{p}: {c}" for p, c, _ in EVENT_HUBS_VIOLATIONS]
)
def test_event_hubs_changes_fire_exactly_their_policy(prod_on_event_hubs, policy, change, mutate):
    review = review_plan(mutate(prod_on_event_hubs), "prod")
    assert review.fired() == {(policy, "mandatory")}, [(v.policy, v.message) for v in review.violations]


def test_a_pod_the_platform_would_create_passes_as_written(prod):
    plan = with_resource(
        with_resource(prod, DEPLOYMENT, "probe", POD), "kubernetes:core/v1:Service", "probe-svc", SERVICE
    )
    assert review_plan(plan, "prod").violations == []


def test_violations_name_the_resource_and_what_is_wrong(prod):
    review = review_plan(changed(prod, "storage-weights", path="publicNetworkAccess", value="Enabled"), "prod")
    (violation,) = review.violations
    assert (violation.pack, violation.resource_type, violation.resource_name, violation.severity) == (
        "azure-platform",
        "azure-native:storage:StorageAccount",
        "storage-weights",
        "critical",
    )
    assert violation.message.splitlines() == [
        "Storage accounts refuse public network access; data moves over private endpoints.",
        "publicNetworkAccess is not Disabled.",
    ]


def test_dev_enforcement_reports_the_same_change_as_advisory(plans):
    """Most policies are advisory in dev: the same change is reported, but does not block."""
    review = review_plan(
        changed(plans["dev"], "aks-eus2-aks", path="networkProfile.networkPolicy", value="none"), "dev"
    )
    assert review.fired() == {("aks-azure-cni-network-policy", "advisory")}
    assert review.passed


def test_an_unknown_value_is_reported_as_pulumi_does_during_preview(prod):
    plan = changed(prod, "storage-weights", path="publicNetworkAccess", value=rpc.UNKNOWN)
    review = review_plan(plan, "prod")
    (violation,) = review.violations
    assert violation.level == "advisory" and violation.during_preview
    assert violation.message == (
        "can't run policy 'storage-public-network-disabled' from policy pack 'azure-platform@v1.0.0' during "
        "preview: string value at .publicNetworkAccess can't be known during preview"
    )
    assert review.passed  # `pulumi up` evaluates it again once the value is known


def test_remediation_adds_missing_tags(prod):
    pack = PACKS["azure-platform"]
    document = {
        "all": "mandatory",
        "required-tags": {"enforcementLevel": "remediate", "defaults": {"cost-center": "ai-platform-prod"}},
    }
    configs = [parse_pack_config(pack, document, "test.json")]
    review = review_plan(changed(prod, MC, path="tags.cost-center", value=DELETE), "prod", configs=configs)
    assert [(r.policy, r.resource_name) for r in review.remediations] == [("required-tags", MC)]
    assert review.violations == []
    # Without a default to write, the remediation cannot help and the violation stays mandatory.
    configs = [parse_pack_config(pack, {"all": "mandatory", "required-tags": "remediate"}, "test.json")]
    review = review_plan(changed(prod, MC, path="tags.cost-center", value=DELETE), "prod", configs=configs)
    assert review.fired() == {("required-tags", "mandatory")}


def test_taggable_types_match_the_sdk(plans):
    """`required-tags` knows which types take tags; the SDK is the authority, for every type we create."""
    sys.path.insert(0, str(PACKS["azure-platform"].directory))
    from azure_guardrails.stack import TAGGABLE_TYPES

    types = {r.type for plan in plans.values() for r in plan.resources if r.type.startswith("azure-native:")}
    for token in sorted(types):
        _, module, name = token.split(":")
        resource_class = getattr(importlib.import_module(f"pulumi_azure_native.{module}"), name)
        takes_tags = "tags" in inspect.signature(resource_class._internal_init).parameters
        assert takes_tags == (token in TAGGABLE_TYPES), token


# -- the packs and their enforcement files ----------------------------------------------------------


def test_every_policy_is_documented_for_a_reviewer():
    for pack in EVERY_PACK.values():
        for policy in pack.policies:
            assert policy.description.endswith("."), policy.name
            assert policy.severity is not None and policy.remediation_steps, policy.name
            if policy.framework:
                assert re.fullmatch(r"[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}", policy.framework.reference), (
                    policy.name
                )
                assert policy.framework.reference in policy.url
    every = [policy.name for pack in EVERY_PACK.values() for policy in pack.policies]
    assert len(every) == len(set(every)), "policy names are unique"


def test_each_pack_is_a_crossguard_pack():
    assert set(EVERY_PACK) == {"azure-platform", "kubernetes-platform", "delivery"}
    for pack in EVERY_PACK.values():
        manifest = yaml.safe_load((pack.directory / "PulumiPolicy.yaml").read_text())
        assert manifest["runtime"]["name"] == "python"
        assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
        assert "pulumi-policy==1.21.0" in (pack.directory / "requirements.txt").read_text().split()
        main = (pack.directory / "__main__.py").read_text()
        assert "PolicyPack(" in main and "def " not in main, "__main__ only builds the pack"
        assert (pack.directory / "guardrail.py").resolve() == ROOT / "policies" / "shared" / "guardrail.py"


@pytest.mark.parametrize("environment", ENVIRONMENTS)
def test_enforcement_files_parse_and_relaxations_carry_a_waiver(environment):
    for pack in PACKS.values():
        config = load_pack_config(pack, environment)
        relaxed = {name for name, level in config.levels.items() if level.value != "mandatory"}
        waived = {w.policy for w in config.waivers}
        if environment == "dev":
            # Advisory by default in dev; the critical guardrails stay mandatory even there.
            assert len(relaxed) > len(config.levels) / 2
            disabled = {name for name, level in config.levels.items() if level.value == "disabled"}
            assert disabled <= waived, "turning a policy off in dev needs a waiver"
        else:
            assert relaxed <= waived, f"{environment} relaxes {relaxed - waived} without a waiver"
    prod = {
        name
        for pack in PACKS.values()
        for name, level in load_pack_config(pack, "prod").levels.items()
        if level.value != "mandatory"
    }
    assert prod == set()


def test_dev_keeps_critical_guardrails_mandatory():
    levels = {
        name: level.value for pack in PACKS.values() for name, level in load_pack_config(pack, "dev").levels.items()
    }
    for policy in (
        "aks-local-accounts-disabled",
        "storage-public-network-disabled",
        "storage-shared-key-disabled",
        "private-endpoint-with-dns",
        "k8s-no-privileged-containers",
        "kafka-listeners-secured",
    ):
        assert levels[policy] == "mandatory", policy


def test_enforcement_file_errors_are_listed_together():
    pack = PACKS["azure-platform"]
    document = {
        "all": "strict",
        "storage-public-access": "mandatory",
        "aks-kubernetes-version-supported": {"oldestMinor": "one", "newest": "1.35"},
        "aks-standard-tier": {"enforcementLevel": "disabled", "waiver": {"reason": "cheap"}},
    }
    with pytest.raises(PolicyConfigError) as error:
        parse_pack_config(pack, document, "bad.json")
    message = str(error.value)
    assert "bad.json: all: 'strict' is not an enforcement level" in message
    assert "bad.json: storage-public-access: not a policy of pack azure-platform" in message
    assert "bad.json: aks-kubernetes-version-supported.oldestMinor: 'one' does not match" in message
    assert "'newest' was unexpected" in message
    assert "bad.json: aks-standard-tier.waiver: 'approvedBy' is a required property" in message
    assert "bad.json: aks-standard-tier.waiver.reason: 'cheap' is too short" in message


def test_an_expired_waiver_fails_the_review(plans):
    review = review_plan(plans["dev"], "dev", today=datetime.date(2099, 1, 1))
    assert review.mandatory == [] and review.expired_waivers
    assert not review.passed


def test_config_properties_reach_the_policy(prod):
    """The window comes from the enforcement file: prod's window admits 1.35, a narrower one does not."""
    pack = PACKS["azure-platform"]
    narrow = {"all": "mandatory", "aks-kubernetes-version-supported": {"oldestMinor": "1.36", "newestMinor": "1.37"}}
    configs = [parse_pack_config(pack, narrow, "narrow.json")]
    review = review_plan(prod, "prod", configs=configs)
    assert review.fired() == {("aks-kubernetes-version-supported", "mandatory")}
    assert any("1.35, outside the supported window 1.36-1.37" in v.message for v in review.violations)


# -- the CLI and the report ---------------------------------------------------------------------------


def test_make_preview_shows_the_policy_summary():
    """The CLI as `make preview` runs it, on staging (a third of prod's resources): its packs pass,
    and its own enforcement's counts."""
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "staging", "--no-tree"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # Advisory findings (staging's waived protection) leave a pack passing with a warning (prod's pass
    # clean: test_prod_is_compliant_with_every_policy).
    assert re.search(r"⚠️\s+azure-platform@v1\.0\.0 \(local: policies/azure-platform\)", result.stdout)
    assert re.search(r"⚠️\s+kubernetes-platform@v1\.0\.0 \(local: policies/kubernetes-platform\)", result.stdout)
    assert re.search(r"Policy review \(staging enforcement\): 0 mandatory, \d+ advisory", result.stdout)


def test_a_weakened_stack_fails_with_the_pulumi_style_report(tmp_path):
    """prod with protection switched off and a Free-tier cluster: explicit config choices the packs see."""
    project = copy_project(tmp_path / "project")
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    document["config"]["platform:protect"] = False
    first_cluster = next(iter(document["config"]["platform:clusters"].values()))
    first_cluster["tier"] = "Free"
    # In place of prod: beside it, the copy would be refused for sharing prod's prefix and ranges.
    (project / "stacks" / "Pulumi.prod.yaml").unlink()
    (project / "stacks" / "Pulumi.prod-weakened.yaml").write_text(yaml.safe_dump(document))
    report = tmp_path / "review.md"
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "prod-weakened", "--no-tree", "--markdown", str(report)],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    out = result.stdout
    assert "❌ azure-platform@v1.0.0 (local: policies/azure-platform)" in out
    assert re.search(
        r"- \[mandatory\]  aks-standard-tier  \(azure-native:containerservice:ManagedCluster: aks-\w+-aks\)", out
    )
    assert "- [mandatory]  stateful-resources-protected  (pulumi:pulumi:Stack: " not in out  # named by resource
    assert "- [mandatory]  stateful-resources-protected  (azure-native:storage:StorageAccount: storage-weights)" in out
    assert "- [mandatory]  kafka-resources-protected  (kubernetes:kafka.strimzi.io/v1:Kafka: " in out
    text = report.read_text()
    assert "| prod-weakened | ❌ fail |" in text and "#### Mandatory violations" in text


def test_markdown_report_lists_each_stack(plans):
    reports = [
        StackReport(plans["dev"], review_plan(plans["dev"], "dev"), "clusters 1"),
        StackReport(plans["staging"], review_plan(plans["staging"], "staging"), "clusters 1 · GPUs 40"),
    ]
    text = markdown(reports)
    assert f"| dev | ✅ pass | {len(plans['dev'].resources)} | 0 | 0 | 9 |" in text
    assert "### staging" in text and "**Capacity:** clusters 1 · GPUs 40" in text
    # Staging's waiver of stateful-resources-protected: 16 resources and its Lustre file system.
    assert "#### Advisory violations (17)" in text
    assert "#### Waivers" in text and "| `azure-native:containerservice:ManagedCluster` |" in text
    assert "policies/azure-platform/config/staging.json" in text


# -- what the remediation texts tell a reader to change exists --------------------------------------


def config_key_paths() -> set[str]:
    """Every key a stack file may set, dotted and camelCase, `<>` where a map takes any name."""
    from stackconfig.reference import keys

    return {re.sub(r"<[a-z]+>", "<>", key.path).replace("[]", "") for key in keys()}


CONFIG_REFERENCE = re.compile(r"(?:platform:)?\b((?:[a-z][A-Za-z0-9]*)(?:\.(?:<[a-z]+>|[a-z][A-Za-z0-9]*))+)")


def test_every_config_key_a_remediation_names_exists():
    """A remediation that sends the reader to a config key must name one the model accepts
    (whole, or below a map entry such as `clusters.<name>.`)."""
    paths = config_key_paths()
    names = {segment for path in paths for segment in path.split(".")}
    missing = []
    for pack in PACKS.values():
        for policy in pack.policies:
            for reference in CONFIG_REFERENCE.findall(policy.remediation_steps or ""):
                if reference.split(".", 1)[0] not in names or reference.endswith(".py"):
                    continue  # an ARM or Kubernetes property, a file name
                normalized = re.sub(r"<[a-z]+>", "<>", reference)
                if not any(path == normalized or path.endswith("." + normalized) for path in paths):
                    missing.append(f"{policy.name}: {reference}")
            # `platform:<key>` names a key from the top, one segment or more, whatever its first word.
            for reference in re.findall(
                r"platform:([A-Za-z][A-Za-z0-9.<>]*[A-Za-z0-9>])", policy.remediation_steps or ""
            ):
                if re.sub(r"<[a-z]+>", "<>", reference) not in paths:
                    missing.append(f"{policy.name}: platform:{reference}")
    assert not missing, missing
