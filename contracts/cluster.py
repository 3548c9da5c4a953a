"""One cluster of a previewed stack, as the contract layers read it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import yaml

from facts.aks_node import AGENT_POOL_LABEL, OS_SKU_EFFECTIVE_LABEL, ubuntu_effective
from offline.engine import CapturedResource, Plan

NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE_ACCOUNT = "kubernetes:core/v1:ServiceAccount"
VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"
VAP_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
CILIUM_POLICY = "kubernetes:cilium.io/v2:CiliumNetworkPolicy"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
NIC_POLICY = "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"
KAFKA = "kubernetes:kafka.strimzi.io/v1:Kafka"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
POLICY_ASSIGNMENT = "azure-native:authorization:PolicyAssignment"
RULE_COLLECTION_GROUP = "azure-native:network:FirewallPolicyRuleCollectionGroup"
FEDERATED_CREDENTIAL = "azure-native:managedidentity:FederatedIdentityCredential"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
PRIVATE_ENDPOINT = "azure-native:network:PrivateEndpoint"
SUBNET = "azure-native:network:Subnet"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
PERSISTENT_VOLUME = "kubernetes:core/v1:PersistentVolume"
PERSISTENT_VOLUME_CLAIM = "kubernetes:core/v1:PersistentVolumeClaim"
NETWORK_SECURITY_GROUP = "azure-native:network:NetworkSecurityGroup"


def kueue(kind: str) -> str:
    return f"kubernetes:kueue.x-k8s.io/v1beta2:{kind}"


def cluster_of(resource: CapturedResource) -> str:
    """The cluster key of an in-cluster resource, from its Kubernetes provider (aks-<key>-k8s)."""
    return resource.provider.split("::")[-2].removeprefix("aks-").removesuffix("-k8s")


@dataclass(frozen=True)
class Pool:
    name: str
    vm_size: str
    labels: dict[str, str]
    taints: tuple[str, ...]
    max_pods: int
    mode: str
    # (vCPUs, memory GiB) of a node whose size is not in the catalogue (a site's described servers).
    shape: tuple[int, int] | None = None


@dataclass
class ClusterView:
    plan: Plan
    key: str
    config: dict[str, Any]  # the stack's config values (platform:... keys)

    @property
    def region(self) -> str:
        return str(self.config["platform:clusters"][self.key]["region"])

    @property
    def oidc_issuer_url(self) -> str:
        """The issuer its service accounts' tokens carry, which federated credentials trust."""
        return str(self.plan.outputs["clusters"][self.key]["oidcIssuerUrl"])

    @property
    def nearest_accounts(self) -> dict[str, Any]:
        """Per storage account, the copy the cluster's jobs read (planning/workloads.py)."""
        return dict(self.plan.outputs["workloadContext"]["clusters"][self.key]["storageAccounts"])

    @property
    def firewall_nodes(self) -> str | None:
        """The nodes' subnet, as the region's firewall sees them (pods are SNATed); None where no
        firewall of the environment is in the way (a site's egress is its own)."""
        return str(self.config["platform:clusters"][self.key]["subnets"]["nodes"])

    @property
    def node_ranges(self) -> list[str]:
        """The addresses its pods' traffic leaves from toward another network: its node subnet."""
        return [str(self.config["platform:clusters"][self.key]["subnets"]["nodes"])]

    @property
    def policy_scope_suffix(self) -> str:
        """How Azure Policy assignments on this cluster end (their scope is the cluster)."""
        return f"/managedClusters/{self.managed_cluster.inputs['resourceName']}"

    def in_cluster(self, token: str) -> list[CapturedResource]:
        return [r for r in self.plan.of_type(token) if r.provider and cluster_of(r) == self.key]

    @cached_property
    def managed_cluster(self) -> CapturedResource:
        (found,) = [
            r for r in self.plan.of_type(MANAGED_CLUSTER) if r.inputs.get("tags", {}).get("cluster") == self.key
        ]
        return found

    @cached_property
    def namespaces(self) -> dict[str, dict[str, Any]]:
        return {r.inputs["metadata"]["name"]: r.inputs for r in self.in_cluster(NAMESPACE)}

    def namespace_labels(self, namespace: str) -> dict[str, str]:
        return dict(self.namespaces[namespace]["metadata"].get("labels") or {})

    @cached_property
    def pools(self) -> dict[str, Pool]:
        """Every node pool with the labels and taints its nodes carry (AKS adds agentpool, the
        effective OS and Spot's)."""
        name = self.managed_cluster.inputs["resourceName"]
        profiles = [dict(p) for p in self.managed_cluster.inputs.get("agentPoolProfiles") or []]
        profiles += [
            dict(r.inputs, name=r.inputs["agentPoolName"])
            for r in self.plan.of_type(AGENT_POOL)
            if r.inputs.get("resourceName") == name
        ]
        pools = {}
        version = self.managed_cluster.inputs.get("kubernetesVersion")
        for p in profiles:
            labels = {
                **(p.get("nodeLabels") or {}),
                AGENT_POOL_LABEL: p["name"],
                "kubernetes.io/os": "linux",
                OS_SKU_EFFECTIVE_LABEL: os_sku_effective(p.get("osSku"), p.get("orchestratorVersion") or version),
            }
            if p.get("scaleSetPriority") == "Spot":
                labels["kubernetes.azure.com/scalesetpriority"] = "spot"
            taints = tuple(p.get("nodeTaints") or ())
            pools[p["name"]] = Pool(
                p["name"],
                p["vmSize"],
                labels,
                taints,
                int(p.get("maxPods") or 110),
                p.get("mode", "User"),
            )
        return pools

    @cached_property
    def kueue_config(self) -> dict[str, Any]:
        for release in self.in_cluster(HELM_RELEASE):
            if release.inputs["name"] == "kueue":
                return yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
        return {}

    @cached_property
    def rdma_per_node(self) -> int:
        """rdma/shared_ib units an InfiniBand node advertises (the plugin's rdmaHcaMax), 0 without the plugin."""
        for policy in self.in_cluster(NIC_POLICY):
            config = json.loads(policy.inputs["spec"]["rdmaSharedDevicePlugin"]["config"])
            return max(c["rdmaHcaMax"] for c in config["configList"])
        return 0

    def claimed_volume(self, namespace: str, claim: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """(the claim, the persistent volume it is bound to by name), None where missing."""
        found = [c for c in self.objects(PERSISTENT_VOLUME_CLAIM, namespace) if c["metadata"]["name"] == claim]
        if not found:
            return None, None
        volume_name = found[0]["spec"].get("volumeName")
        volumes = [v for v in self.objects(PERSISTENT_VOLUME) if v["metadata"]["name"] == volume_name]
        return found[0], volumes[0] if volumes else None

    def objects(self, token: str, namespace: str | None = None) -> list[dict[str, Any]]:
        return [
            r.inputs
            for r in self.in_cluster(token)
            if namespace is None or r.inputs["metadata"].get("namespace") == namespace
        ]


def os_sku_effective(os_sku: str | None, kubernetes_version: str | None) -> str:
    """The OS label AKS gives a pool's nodes (facts/aks_node.py); Azure Linux is version 3 on
    the Kubernetes versions the platform runs."""
    if os_sku in (None, "Ubuntu"):
        return ubuntu_effective(kubernetes_version)
    return "AzureLinux3" if os_sku == "AzureLinux" else str(os_sku)


def selector_matches(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels and matchExpressions) against labels."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        if operator == "Exists" and key not in labels:
            return False
        if operator == "DoesNotExist" and key in labels:
            return False
        if operator == "In" and labels.get(key) not in values:
            return False
        if operator == "NotIn" and key in labels and labels[key] in values:
            return False
    return True
