"""Deployment units: which layer (and, for clusters, which cluster) each resource belongs to.

An environment is deployed as several stacks, split by risk, cadence and permission (Pulumi's
Kubernetes playbook, "stacks by risk and function"; the AKS baseline's split between the
network team's and the workload team's deployments):

- `foundation`: observability (workspaces, collection endpoints, table plans, the Azure Monitor
  private link scope's members, Managed Grafana) and the alerts' action groups, the regional
  networks (NSGs, NAT or firewall, routes, peerings), private DNS, the registry, each region's Key Vault, the
  workloads' managed identities;
- `data`: storage accounts and their replicas, their keys and locks, Event Hubs; `protect` on,
  strictest review;
- `cluster` (one per cluster): AKS and its pools, monitoring, alert rules and grants, and the
  in-cluster platform baseline (admission, priorities, platform namespaces and their isolation,
  the GPU stack and its health checks or a dispatcher's Kueue, the log agent's settings, the
  Strimzi operator and its Kafka cluster, a MultiKueue
  worker's service account and token, the Lustre CSI node plugin and the training namespaces'
  volumes);
- `tenants`: what teams change daily: federated credentials and workload grants, team
  namespaces and RBAC, Lustre claims, Kueue queues and MultiKueue's objects, Kafka topics and users,
  MirrorMaker and its CA copies, the Grafana dashboards;
- `fleet` (two or more clusters): Fleet Manager, members, update strategies.

Every platform component belongs to one layer (a component that spanned two was split:
identities and their access, Kueue's flavors and the teams' queues, the Kafka and its topics
and users). `unit_of` assigns a resource of the single-stack layout to its unit from the
component that owns it; the migration of a deployed environment (`pulumi state move`,
docs/migration.md) follows this one mapping, and tests/test_deployment_units.py checks that it
agrees with what each unit's program builds.
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


# Stacks are `<environment>.<unit>`; an environment's name has no dot (validation checks).
UNIT_SEPARATOR = "."


def parse_stack(stack: str) -> tuple[str, Unit | None]:
    """`prod.cluster-eus2` -> ("prod", Unit("cluster", "eus2")); `prod` -> ("prod", None).

    Raises ValueError for a unit that is not a layer."""
    environment, separator, unit = stack.partition(UNIT_SEPARATOR)
    if not separator:
        return stack, None
    layer, _, cluster = unit.partition("-")
    if layer not in LAYERS or (layer == "cluster") != bool(cluster):
        raise ValueError(
            f"stack {stack}: {unit!r} is not a deployment unit (foundation, data, cluster-<key>, tenants, fleet)"
        )
    return environment, Unit(layer, cluster)


def environment_units(
    clusters: Sequence[str], canaries: Sequence[str], fleet: bool, sites: Sequence[str] = ()
) -> list[list[Unit]]:
    """The environment's units as deploy waves: each wave needs only the ones before it.

    foundation; data; the canary clusters; the other clusters; tenants; the on-premises sites
    (cluster units nothing reads: a site whose agents do not answer fails its own stack, after
    everything else has deployed); fleet (with two or more clusters). Clusters of one wave deploy
    side by side; a failed canary stops the rest."""
    canary = [key for key in clusters if key in canaries]
    rest = [key for key in clusters if key not in canaries]
    waves = [[Unit("foundation")], [Unit("data")]]
    waves += [[Unit("cluster", key) for key in wave] for wave in (canary, rest) if wave]
    waves.append([Unit("tenants")])
    if sites:
        waves.append([Unit("cluster", key) for key in sites])
    if fleet:
        waves.append([Unit("fleet")])
    return waves


# The units each layer reads through stack references.
UPSTREAM: dict[Layer, tuple[Layer, ...]] = {
    "foundation": (),
    "data": ("foundation",),
    "cluster": ("foundation", "data"),
    "tenants": ("foundation", "data", "cluster"),
    "fleet": ("cluster",),
}


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
    "platform:observability:PrivateLinkScope": "foundation",
    "platform:observability:Grafana": "foundation",
    "platform:observability:ClusterLogSettings": "cluster",
    "platform:observability:ActionGroups": "foundation",
    "platform:observability:ClusterAlerts": "cluster",
    "platform:network:RegionalNetwork": "foundation",
    "platform:network:EgressFirewall": "foundation",
    "platform:network:PrivateDns": "foundation",
    "platform:registry:ContainerRegistry": "foundation",
    "platform:security:KeyVault": "foundation",
    "platform:identity:WorkloadIdentities": "foundation",
    "platform:identity:WorkloadAccess": "tenants",
    "platform:data:PrivateStorage": "data",
    "platform:kafka:EventHubsBackbone": "data",
    "platform:data:CosmosDb": "data",
    "platform:data:CosmosDataAccess": "tenants",
    "platform:data:PostgresServer": "data",
    "platform:data:PostgresAccess": "tenants",
    "platform:data:LustreFileSystems": "data",
    "platform:lustre:Csi": "cluster",
    "platform:lustre:Claims": "tenants",
    "platform:aks:Cluster": "cluster",
    "platform:admission:ClusterAdmission": "cluster",
    "platform:tenancy:ClusterAdmins": "cluster",
    "platform:gpu:Stack": "cluster",
    "platform:gpu:Health": "cluster",
    "platform:kafka:StrimziKafka": "cluster",
    "platform:streaming:Platform": "cluster",
    "platform:tenancy:ClusterTenancy": "tenants",
    "platform:gpu:DispatchWorker": "cluster",
    "platform:gpu:DispatchRefresher": "cluster",
    "platform:gpu:TeamQueues": "tenants",
    "platform:gpu:JobDispatch": "tenants",
    "platform:kafka:KafkaAccess": "tenants",
    "platform:kafka:KafkaMirror": "tenants",
    "platform:kafka:EventHubsClients": "tenants",
    "platform:streaming:Jobs": "tenants",
    "platform:fleet:Fleet": "fleet",
    "platform:arc:Site": "cluster",
    "platform:serving:Zone": "foundation",
    "platform:serving:Gateway": "cluster",
    "platform:serving:Apis": "tenants",
    "platform:serving:Scalers": "tenants",
    # Resources the composition itself registers: the peerings between regions.
    "platform:index:Platform": "foundation",
}

# Components registered once per cluster, named `<kind>-<cluster>`.
PER_CLUSTER_PREFIXES = (
    "aks-",
    "admission-",
    "admins-",
    "gpu-health-",
    "gpu-",
    "kueue-",
    "kafka-",
    "streaming-",
    "dispatch-worker-",
    "dispatch-refresher-",
    "alerts-",
    "logs-",
    "lustre-csi-",
    "site-",
    "serving-",
)


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
    layer = COMPONENT_LAYERS[owner.type]
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
