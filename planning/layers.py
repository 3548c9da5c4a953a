"""Deployment units: which layer (and, for clusters, which cluster) each resource belongs to.

An environment is deployed as several stacks, split by risk, cadence and permission (Pulumi's
Kubernetes playbook, "stacks by risk and function"; the AKS baseline's split between the
network team's and the workload team's deployments):

- `foundation`: observability, the regional networks (NSGs, NAT or firewall, routes,
  peerings), private DNS, the registry, the Key Vault, the workloads' managed identities;
- `data`: storage accounts, their keys and locks, Event Hubs; `protect` on, strictest review;
- `cluster` (one per cluster): AKS and its pools, monitoring and grants, and the in-cluster
  platform baseline (admission, priorities, platform namespaces and their isolation, the GPU
  stack, the Strimzi operator and its Kafka cluster);
- `tenants`: what teams change daily: federated credentials and workload grants, team
  namespaces and RBAC, Kueue queues, Kafka topics and users, MirrorMaker and its CA copies;
- `fleet` (two or more clusters): Fleet Manager, members, update strategies.

`unit_of` assigns a resource of today's single-stack plan to its unit, from the platform
component that owns it and, where one component spans layers, the resource's type. The split
of the program and the migration of a deployed environment (`pulumi state move`) both follow
this one mapping; tests/test_deployment_units.py checks it covers every resource of every stack
exactly once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

Layer = Literal["foundation", "data", "cluster", "tenants", "fleet"]
LAYERS: tuple[Layer, ...] = ("foundation", "data", "cluster", "tenants", "fleet")


@dataclass(frozen=True, order=True)
class Unit:
    """One deployment unit: a layer, and for `cluster` the cluster's key."""

    layer: Layer
    cluster: str = ""

    def stack(self, environment: str) -> str:
        """The unit's stack name: `prod.foundation`, `prod.cluster-eus2`."""
        return f"{environment}.{self.layer}" + (f"-{self.cluster}" if self.cluster else "")


class Registered(Protocol):
    """What the mapping reads of a registered resource (offline.engine.CapturedResource has it)."""

    @property
    def urn(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def parent(self) -> str | None: ...


# The layer of each platform component's resources.
COMPONENT_LAYERS: dict[str, Layer] = {
    "platform:observability:Observability": "foundation",
    "platform:network:RegionalNetwork": "foundation",
    "platform:network:EgressFirewall": "foundation",
    "platform:network:PrivateDns": "foundation",
    "platform:registry:ContainerRegistry": "foundation",
    "platform:security:KeyVault": "foundation",
    "platform:identity:WorkloadIdentities": "foundation",
    "platform:data:PrivateStorage": "data",
    "platform:kafka:EventHubsBackbone": "data",
    "platform:aks:Cluster": "cluster",
    "platform:admission:ClusterAdmission": "cluster",
    "platform:identity:PlanAccess": "cluster",
    "platform:gpu:Stack": "cluster",
    "platform:kafka:StrimziKafka": "cluster",
    "platform:tenancy:ClusterTenancy": "tenants",
    "platform:kafka:KafkaMirror": "tenants",
    "platform:fleet:Fleet": "fleet",
    # Resources the composition itself registers: the peerings between regions.
    "platform:index:Platform": "foundation",
}

# Within a component, resource types that belong to another layer: what teams change daily
# leaves the component's slow-moving layer.
TYPE_LAYERS: dict[tuple[str, str], Layer] = {
    # Identities are foundation (their client IDs go into config and manifests); their
    # federated credentials and grants change with the workloads.
    ("platform:identity:WorkloadIdentities", "azure-native:managedidentity:FederatedIdentityCredential"): "tenants",
    ("platform:identity:WorkloadIdentities", "azure-native:authorization:RoleAssignment"): "tenants",
    # Kueue's flavors are the cluster's; the teams' queues are the tenants'.
    ("platform:gpu:Stack", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"): "tenants",
    ("platform:gpu:Stack", "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"): "tenants",
    # The Kafka cluster is the cluster's; topics and users are the tenants'.
    ("platform:kafka:StrimziKafka", "kubernetes:kafka.strimzi.io/v1:KafkaTopic"): "tenants",
    ("platform:kafka:StrimziKafka", "kubernetes:kafka.strimzi.io/v1:KafkaUser"): "tenants",
}

# Components registered once per cluster, named `<kind>-<cluster>`.
PER_CLUSTER_PREFIXES = ("aks-", "admission-", "plan-access-", "gpu-", "kafka-")


class UnmappedResource(LookupError):
    """A resource whose owning component has no layer: the mapping needs an entry."""


def _owner(resource: Registered, by_urn: Mapping[str, Registered]) -> Registered | None:
    """The nearest platform component that owns `resource` (skipping NamespaceIsolation, which
    takes the layer of the component that made the namespace)."""
    parent = by_urn.get(resource.parent or "")
    while parent is not None:
        if parent.type in COMPONENT_LAYERS:
            return parent
        parent = by_urn.get(parent.parent or "")
    return None


def _cluster_of(component: Registered, clusters: Sequence[str]) -> str:
    for prefix in PER_CLUSTER_PREFIXES:
        key = component.name.removeprefix(prefix)
        if component.name.startswith(prefix) and key in clusters:
            return key
    raise UnmappedResource(f"{component.type} {component.name}: no cluster of {list(clusters)} in its name")


def unit_of(resource: Registered, by_urn: Mapping[str, Registered], clusters: Sequence[str]) -> Unit:
    """The deployment unit of one registered resource (not a component, not a provider)."""
    owner = _owner(resource, by_urn)
    if owner is None:
        raise UnmappedResource(f"{resource.type} {resource.name}: no platform component owns it")
    layer = TYPE_LAYERS.get((owner.type, resource.type), COMPONENT_LAYERS[owner.type])
    return Unit(layer, _cluster_of(owner, clusters) if layer == "cluster" else "")


def is_deployed_resource(resource: Registered) -> bool:
    """Resources a unit owns: not components (every stack has its own), not providers (each
    stack configures its own), not the stack itself."""
    kind = resource.type
    return not (kind.startswith(("platform:", "pulumi:providers:")) or kind == "pulumi:pulumi:Stack")


def units_of(resources: Sequence[Any], clusters: Sequence[str]) -> dict[str, Unit]:
    """Every deployed resource of a plan, by URN, with its unit."""
    by_urn = {r.urn: r for r in resources}
    return {r.urn: unit_of(r, by_urn, clusters) for r in resources if is_deployed_resource(r)}
