"""The validated shape of a stack's configuration.

Every key a stack file may set under the `platform:` namespace is a field here. Field names
are snake_case in Python and camelCase in the stack files (the alias); unknown keys are
errors. This module checks types and single-field rules only; rules that relate several
fields (address overlaps, subnet sizing, AKS limits) live in `validation.checks`, so that
they can report every problem at once with its full config key.

Defaults here are the secure choice. Environments weaken a setting explicitly in their
stack file (for example `disableLocalAccounts: false`), where reviewers and policies see it.
"""

from __future__ import annotations

import re
from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints
from pydantic.alias_generators import to_camel

from facts.aks_limits import MAX_NODES_PER_CLUSTER, MAX_NODES_PER_POOL, MAX_PODS_PER_NODE
from facts.event_hubs import EVENT_HUBS_TIERS
from facts.gpu import DEFAULT_GPU_TAINT, GPU_VM_SIZES, known_sizes


class Model(BaseModel):
    """Base for every config section: camelCase keys, unknown keys rejected, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        str_strip_whitespace=True,
    )


EnvironmentName = Literal["dev", "staging", "prod"]
Zone = Literal["1", "2", "3"]
Uuid = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"),
]


def _unique(values: list[str]) -> list[str]:
    seen: set[str] = set()
    for value in values:
        if str(value).lower() in seen:
            raise ValueError(
                f"lists {value} twice; name each once (a second grant of the same name stops a deploy midway)"
            )
        seen.add(str(value).lower())
    return values


# Group object IDs: each becomes role assignments named after it, so a repeat is a duplicate URN.
UuidList = Annotated[list[Uuid], AfterValidator(_unique)]
# Azure region names as ARM spells them: eastus2, southcentralus, swedencentral.
RegionName = Annotated[str, StringConstraints(pattern=r"^[a-z]+[0-9]*$", max_length=24)]
# Keys that become parts of resource names: short, lowercase, DNS-safe.
ShortName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,9}$")]
# AKS: Linux agent pool names are 1-12 lowercase alphanumerics starting with a letter.
AgentPoolName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,11}$")]
# Kubernetes namespace: a DNS-1123 label.
NamespaceName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
VmSize = Annotated[str, StringConstraints(pattern=r"^Standard_[A-Za-z0-9_]+$")]
# "33%" or an absolute node count such as "5".
MaxSurge = Annotated[str, StringConstraints(pattern=r"^([1-9][0-9]*%|[1-9][0-9]*)$")]
# Go-style durations as the AKS autoscaler profile takes them: "10s", "10m", "1h".
Duration = Annotated[str, StringConstraints(pattern=r"^[0-9]+(s|m|h)$")]


def duration_seconds(value: str) -> int:
    """A `Duration` (`90s`, `30m`, `24h`) in seconds."""
    return int(value[:-1]) * {"s": 1, "m": 60, "h": 3600}[value[-1]]


# A Kubernetes taint as AKS takes it: key=value:Effect.
Taint = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][-A-Za-z0-9_./]*=[-A-Za-z0-9_.]*:(NoSchedule|PreferNoSchedule|NoExecute)$"),
]
KUBERNETES_VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?$")


def _kubernetes_version(value: str) -> str:
    if not KUBERNETES_VERSION.match(value):
        raise ValueError(
            f"{value!r} is not a Kubernetes version: use major.minor (e.g. 1.33) or major.minor.patch (e.g. 1.33.2)"
        )
    return value


KubernetesVersion = Annotated[str, AfterValidator(_kubernetes_version)]


def _gpu_vm_size(value: str) -> str:
    if value not in GPU_VM_SIZES:
        raise ValueError(f"{value!r} is not a supported GPU VM size; known sizes: {known_sizes()}")
    return value


GpuVmSizeName = Annotated[str, AfterValidator(_gpu_vm_size)]
# The MIG profiles of facts/gpu.py (a test holds them equal), spelt out for type checkers.
MigProfile = Literal["MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"]
CapacityReservationGroupId = Annotated[
    str,
    StringConstraints(
        pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+"
        r"/providers/Microsoft\.Compute/capacityReservationGroups/[-\w._]+$"
    ),
]


class PlanIdentityConfig(Model):
    """The read-only identities previews and the drift check run as (scripts/bootstrap prints the IDs).

    Each layer has one; those of the cluster and tenants layers read every kind the program
    manages through a custom role on the subscription, but no Secrets (Helm keeps its release
    records in ConfigMaps: planning/charts.py, HELM_DRIVER). The one Secret a preview reads is
    Kafka's CA certificate, which the tenants' previews copy to clients; the program lets that
    identity read those Secrets by name and nothing beside them.
    """

    tenants_principal_object_id: Uuid | None = Field(
        default=None,
        description="Object ID of the tenants layer's plan identity `id-<prefix>-plan-<env>-tenants` (printed by "
        "`scripts/bootstrap`); with Strimzi, previews of the tenants' stack read Kafka's CA certificates in the "
        "`kafka` namespace, and the program lets it read those Secrets by name, never the CAs' keys beside them "
        "(required with `kafka.engine: strimzi`).",
    )


class EntraConfig(Model):
    """Entra ID integration shared by every cluster of the environment."""

    admin_group_object_ids: UuidList = Field(
        default_factory=list,
        description="Entra groups that are cluster admins. Required while any cluster disables local accounts.",
    )
    tenant_id: Optional[Uuid] = Field(
        default=None, description="Tenant of the admin groups. Unset: the tenant of the identity running the deploy."
    )
    kubelogin_mode: Literal["azurecli", "workloadidentity"] = Field(
        default="azurecli",
        description="How the exported kubeconfig logs in: `azurecli` (reuses `az login`, for people and self-"
        "hosted runners) or `workloadidentity` (a federated token file, for jobs in Kubernetes); "
        "both non-interactive. CI keeps `azurecli` in the kubeconfig and overrides it with "
        "`AAD_LOGIN_METHOD=msi` (docs/deploying.md, \"Who signs in how\").",
    )
    plan_identity: Optional[PlanIdentityConfig] = Field(
        default=None,
        description="The read-only identity previews and the drift check run as (`scripts/bootstrap` prints "
        "both IDs). Unset: no such identity in this environment (previews then need the deploy "
        "identity's rights).",
    )


ResourceGroupId = Annotated[
    str, StringConstraints(pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+$")
]


class HubConfig(Model):
    """The hub VNet (deploy runners, firewall, on-premises gateways) to peer with."""

    virtual_network_id: Annotated[
        str,
        StringConstraints(
            pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+"
            r"/providers/Microsoft\.Network/virtualNetworks/[-\w._]+$"
        ),
    ] = Field(
        description="Hub VNet resource ID to peer with (runners, firewall, gateways); may be in another subscription."
    )
    address_space: list[IPv4Network] = Field(min_length=1, description="The hub's ranges, checked for overlaps.")
    create_hub_side_peering: bool = Field(
        default=False,
        description="Also create the hub-to-spoke half, which needs write access to the hub VNet: only for a hub this"
        " environment has to itself (no `privateDnsZonesResourceGroupId`, and the bootstrap's `--own-hub-env`). A hub"
        " that serves several environments is written by its owner alone (stack output `hubRequests`).",
    )
    use_remote_gateways: bool = Field(default=False, description="Route through the hub's VPN/ExpressRoute gateway.")
    private_dns_zones_resource_group_id: Optional[ResourceGroupId] = Field(
        default=None,
        description="Resource group ID of the hub's central privatelink zones. Set it when the hub serves "
        "several environments (a VNet links to one zone of each name): the environment then registers its"
        " endpoints in those zones instead of creating its own, and its private API servers in subzones of its own"
        " there (`<prefix>-<env>.privatelink.<region>.azmk8s.io`). The hub's owner creates the zones and subzones"
        " and links the environment's VNets (stack output `hubRequests`).",
    )


class NatGatewayConfig(Model):
    idle_timeout_minutes: int = Field(default=4, ge=4, le=120, description="Idle TCP timeout of the NAT gateway.")
    public_ip_count: int = Field(
        default=1,
        ge=1,
        le=16,
        description="Public IPs of the NAT gateway, each giving 64,512 SNAT ports; large fleets need more than one.",
    )


def _fqdn(value: str) -> str:
    value = value.lower()
    if not FQDN.match(value):
        raise ValueError(f"{value!r} is not a host name: use e.g. pypi.org, or *.example.com for its subdomains")
    return value


# A host name, or `*.` and a domain of at least two labels (never `*` or `*.com`).
FQDN = re.compile(r"^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")
Fqdn = Annotated[str, AfterValidator(_fqdn)]


class FirewallConfig(Model):
    """The Azure Firewall in each region's VNet that every node's egress goes through.

    Its policy allows what AKS needs (the AzureKubernetesService FQDN tag and the
    monitoring endpoints), the `allowedFqdns` below and the teams' `egressFqdns`, over
    HTTPS; everything else is denied. Images come through the platform's registry over
    Private Link, so no public registry may be listed.
    """

    sku: Literal["Standard", "Premium"] = Field(
        default="Premium", description="`Premium` adds intrusion detection and prevention (IDPS)."
    )
    threat_intel_mode: Literal["Alert", "Deny"] = Field(
        default="Deny", description="`Alert` or `Deny` traffic to Microsoft's known-malicious addresses and domains."
    )
    intrusion_detection: Optional[Literal["Off", "Alert", "Deny"]] = Field(
        default=None, description="IDPS signature mode, Premium only. Unset: `Deny` on Premium, `Off` on Standard."
    )
    allowed_fqdns: list[Fqdn] = Field(
        default_factory=list,
        description="HTTPS destinations every node may reach beyond AKS's own (e.g. OS mirrors); host names "
        "or `*.domain`, never a public registry.",
    )

    @property
    def intrusion_detection_mode(self) -> str:
        if self.intrusion_detection is not None:
            return self.intrusion_detection
        return "Deny" if self.sku == "Premium" else "Off"


class EgressConfig(Model):
    """How nodes reach the internet. There is no default outbound access."""

    outbound_type: Literal["userAssignedNATGateway", "userDefinedRouting"] = Field(
        default="userAssignedNATGateway",
        description="`userAssignedNATGateway`: a NAT gateway this program creates on the node subnets. "
        "`userDefinedRouting`: 0.0.0.0/0 is routed to an Azure Firewall this program creates in "
        "each region (deny by default, `firewall` below); needs `subnets.firewall` in each "
        "region.",
    )
    firewall: FirewallConfig = Field(
        default_factory=FirewallConfig,
        description="The Azure Firewall in each region's VNet (with `outboundType: userDefinedRouting`): "
        "AKS's needs, `allowedFqdns` and the teams' `egressFqdns` over HTTPS are allowed, "
        "everything else denied.",
    )
    nat_gateway: NatGatewayConfig = Field(
        default_factory=NatGatewayConfig,
        description="The NAT gateway on the node subnets (with `outboundType: userAssignedNATGateway`).",
    )


class RegionSubnets(Model):
    private_endpoints: IPv4Network = Field(description="Subnet for private endpoints.")
    firewall: Optional[IPv4Network] = Field(
        default=None,
        description="`AzureFirewallSubnet` of the region's egress firewall, /26 or larger; required with "
        "`outboundType: userDefinedRouting`, and only then.",
    )


class RegionNetworkConfig(Model):
    """The VNet of one region that hosts clusters."""

    address_space: list[IPv4Network] = Field(
        min_length=1, description="The region's VNet ranges (one VNet per region that hosts a cluster)."
    )
    subnets: RegionSubnets = Field(description="The region's shared subnets.")


class NetworkConfig(Model):
    pod_cidr: IPv4Network = Field(
        description="Overlay pod range; each node takes a /24, so it must hold every cluster's pools at max +"
        " surge. Cannot be enlarged later. May be reused by every cluster of the environment."
    )
    service_cidr: IPv4Network = Field(description="Kubernetes service range, /12 or smaller.")
    dns_service_ip: IPv4Address = Field(
        alias="dnsServiceIP", description="Cluster DNS address inside `serviceCidr`, not its first address."
    )
    regions: dict[RegionName, RegionNetworkConfig] = Field(
        min_length=1, description="One VNet per region that hosts a cluster, by ARM region name (`eastus2`)."
    )
    hub: Optional[HubConfig] = Field(
        default=None,
        description="The hub VNet (deploy runners, firewall, on-premises gateways) to peer with. Unset: no peering.",
    )
    on_premises_ranges: list[IPv4Network] = Field(
        default_factory=list, description="Ranges reached through the hub, checked for overlaps."
    )
    egress: EgressConfig = Field(
        default_factory=EgressConfig, description="How nodes reach the internet; there is no default outbound access."
    )


class ClusterSubnets(Model):
    system: IPv4Network = Field(description="Subnet of the system pool.")
    nodes: IPv4Network = Field(description="Subnet of every user pool: holds the pools' max + surge + 5.")
    api_server: Optional[IPv4Network] = Field(
        default=None,
        description="Subnet delegated to `Microsoft.ContainerService/managedClusters` for API server VNet "
        "integration, /28 or larger; required with `apiServer.vnetIntegration`.",
    )
    pods: Optional[IPv4Network] = Field(
        default=None,
        description="Classic Azure CNI only (`cni: podSubnet`): the pods' subnet, holding (max + surge) × "
        "maxPods of every pool + 5.",
    )


class ApiServerConfig(Model):
    private: bool = Field(
        default=True,
        description="Private API server, resolved through the `privatelink.<region>.azmk8s.io` zone (the "
        "environment's own, linked to the hub, or the hub's).",
    )
    vnet_integration: bool = Field(default=True, description="API server in a delegated subnet (`subnets.apiServer`).")
    authorized_ip_ranges: list[IPv4Network] = Field(
        default_factory=list,
        description="Public API server only, and then required: the source ranges allowed to reach it, each "
        "/8 or narrower.",
    )


class MaintenanceWindowConfig(Model):
    day_of_week: Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] = Field(
        default="Sunday", description="Day of the weekly window."
    )
    start_time: Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")] = Field(
        default="02:00", description="Start of the window, `HH:MM`."
    )
    duration_hours: int = Field(default=4, ge=4, le=24, description="Length of the window.")
    utc_offset: Annotated[str, StringConstraints(pattern=r"^[+-](0[0-9]|1[0-4]):[0-5][0-9]$")] = Field(
        default="+00:00", description="Offset of `startTime` from UTC."
    )


UpgradeChannel = Literal["patch", "stable", "rapid", "none"]


class UpgradeConfig(Model):
    channel: Optional[UpgradeChannel] = Field(
        default=None,
        description="Who owns the Kubernetes version: `patch` (this program owns major.minor, AKS applies "
        "patches in the window), `stable` or `rapid` (AKS owns the version; leave "
        "`kubernetesVersion` out), `none` (this program owns the full version). Unset: `patch` "
        "for a lone cluster, `none` for fleet members, whose upgrades the fleet runs; a fleet "
        "member may only say `none`.",
    )
    node_os_channel: Optional[Literal["NodeImage", "SecurityPatch", "Unmanaged", "None"]] = Field(
        default=None,
        description="How node OS images are updated. Unset: `NodeImage` for a lone cluster; `SecurityPatch` "
        "for fleet members (the fleet's update runs move node images with the version, AKS "
        "patches the OS in between).",
    )
    maintenance_window: MaintenanceWindowConfig = Field(
        default_factory=MaintenanceWindowConfig, description="The weekly window both upgrade channels use."
    )


class AutoscalerProfileConfig(Model):
    """The cluster autoscaler profile (values as AKS takes them)."""

    expander: Literal["least-waste", "most-pods", "priority", "random"] = Field(
        default="least-waste", description="Which pool the autoscaler grows when several could take the pending pods."
    )
    balance_similar_node_groups: bool = Field(
        default=True, description="Keep similar pools (e.g. one per zone) the same size."
    )
    scan_interval: Duration = Field(default="10s", description="How often the autoscaler re-evaluates the cluster.")
    scale_down_delay_after_add: Duration = Field(
        default="10m", description="How long after a scale-up before scale-down is considered again."
    )
    scale_down_unneeded_time: Duration = Field(
        default="10m", description="How long a node must be unneeded before it is removed."
    )
    scale_down_utilization_threshold: float = Field(
        default=0.5, gt=0, le=1, description="Requested share of a node below which it counts as unneeded."
    )
    max_graceful_termination_sec: int = Field(
        default=600, ge=0, le=86_400, description="How long pods get to terminate when their node is scaled down."
    )
    max_node_provision_time: Duration = Field(
        default="15m", description="How long a new node may take to become ready before the autoscaler gives up on it."
    )
    skip_nodes_with_system_pods: bool = Field(
        default=True, description="Never remove nodes running kube-system pods (other than DaemonSets)."
    )
    skip_nodes_with_local_storage: bool = Field(
        default=False, description="Never remove nodes with pods using local storage (emptyDir, hostPath)."
    )


OsSku = Literal["AzureLinux", "Ubuntu"]


class PoolSettings(Model):
    """Settings every node pool has: the system pool, CPU pools and GPU pools."""

    vm_size: VmSize = Field(
        description="A size of the catalogue (`facts/vm_sizes.py`); GPU sizes only in `gpuPools`. The system "
        "pool needs 4 vCPUs, 4 GiB and no B-series."
    )
    min_count: int = Field(
        ge=0,
        le=100_000,
        description="Fewest nodes the autoscaler keeps; the program never sets `count` after creation.",
    )
    max_count: int = Field(
        ge=1,
        le=100_000,
        description=f"Most nodes the autoscaler may add; AKS allows {MAX_NODES_PER_POOL:,} per pool and "
        f"{MAX_NODES_PER_CLUSTER:,} per cluster (checked with the capacity plan).",
    )
    max_pods: int = Field(default=110, ge=10, le=MAX_PODS_PER_NODE, description="Pods per node.")
    max_surge: MaxSurge = Field(
        default="10%",
        description="Extra nodes during an upgrade: `\"10%\"` or a count; surge nodes need addresses too.",
    )
    os_disk_size_gb: int = Field(
        default=128,
        ge=30,
        le=2048,
        alias="osDiskSizeGB",
        description="OS disk size; an ephemeral disk must fit the size's cache or temporary disk.",
    )
    os_disk_type: Literal["Ephemeral", "Managed"] = Field(
        default="Ephemeral",
        description="`Ephemeral` (on the VM's local disk) or `Managed`; sizes without a local disk that fits "
        "take `Managed`.",
    )
    zones: Optional[list[Zone]] = Field(
        default=None, description="Zones of the pool, a subset of the cluster's. Unset: the cluster's zones."
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Node labels, Kubernetes syntax; never under AKS's `kubernetes.azure.com/` or `kubernetes.io/`.",
    )
    taints: list[Taint] = Field(default_factory=list, description="Node taints, `key=value:Effect`.")


class PoolConfig(PoolSettings):
    """Settings shared by the system pool and CPU user pools."""

    os_sku: OsSku = Field(
        default="AzureLinux", description="Node OS image; Azure Linux is the smaller, AKS-maintained default."
    )


class SystemPoolConfig(PoolConfig):
    """The inline system pool; it always carries the CriticalAddonsOnly taint."""

    min_count: int = Field(default=3, ge=1, le=100_000, description="Fewest system nodes the autoscaler keeps.")
    max_count: int = Field(default=6, ge=1, le=100_000, description="Most system nodes the autoscaler may add.")


class NodePoolConfig(PoolConfig):
    """A CPU user pool, registered as its own AgentPool resource."""


class GpuPoolConfig(PoolSettings):
    """A GPU pool: an AgentPool of a catalogued GPU size (facts/gpu.py)."""

    vm_size: GpuVmSizeName = Field(description="A GPU size of the catalogue (`facts/gpu.py`).")
    purpose: Literal["training", "batch", "inference"] = Field(
        description="What the pool is for, read by policies and Kueue: `training` (gang-scheduled, "
        "InfiniBand), `batch` or `inference`."
    )
    min_count: int = Field(default=0, ge=0, le=100_000, description="Fewest nodes; GPU pools scale to zero when idle.")
    max_surge: MaxSurge = Field(
        default="1", description="GPU capacity is scarce: surge one node at a time (a percentage at most 10%)."
    )
    spot: bool = Field(
        default=False,
        description="Spot VMs: evicted (deleted) when Azure needs the capacity back, at any price up to on-"
        "demand; the Spot taint is added.",
    )
    mig_profile: Optional[MigProfile] = Field(
        default=None,
        description="Multi-Instance GPU partitioning, fixed at creation (MIG-capable sizes only): 7, 3, 2, 1 "
        "and 1 slices per GPU for MIG1g to MIG7g.",
    )
    capacity_reservation_group_id: Optional[CapacityReservationGroupId] = Field(
        default=None,
        description="A `Microsoft.Compute/capacityReservationGroups` ID to draw nodes from; not with Spot.",
    )
    quotas: dict[str, Annotated[int, Field(ge=1, le=1_000_000)]] = Field(
        default_factory=dict,
        description="GPUs (or MIG slices) of this pool each team may use through Kueue, `{team: count}`, "
        "summing to at most the pool's capacity.",
    )


class GpuSettings(Model):
    """What all GPU pools of one cluster share."""

    driver: Literal["aks", "operator"] = Field(
        default="aks",
        description="Who installs the NVIDIA driver and container toolkit: `aks` (`gpuProfile.driver: "
        "Install`; the GPU operator skips both) or `operator` (driver `None`; the GPU operator "
        "installs them). One switch, so the pool and the operator cannot disagree.",
    )
    os_sku: OsSku = Field(
        default="Ubuntu",
        description="OS of every GPU pool of the cluster (the GPU operator does not support mixed OS versions"
        " across GPU nodes).",
    )
    taint: Taint = Field(
        default=DEFAULT_GPU_TAINT, description="Taint on every GPU pool; the GPU stack and Kueue flavors tolerate it."
    )


class SandboxPoolConfig(PoolSettings):
    """A pool for high-risk jobs: AKS Pod Sandboxing, each pod in its own Kata VM.

    AzureLinux only, on a VM size with nested virtualization (planning/sandbox.py). The
    pool carries the sandbox taint; pods of high-risk namespaces must use the
    `kata-vm-isolation` RuntimeClass (an admission policy enforces it) and tolerate it.
    """

    min_count: int = Field(
        default=0, ge=0, le=100_000, description="Fewest sandbox nodes; the pool scales to zero when idle."
    )
    max_surge: MaxSurge = Field(default="1", description="Extra nodes during an upgrade.")


class ClusterConfig(Model):
    region: RegionName = Field(
        description="An Azure region with availability zones (`facts/azure_regions.py`); it needs an entry in"
        " `network.regions`."
    )
    kubernetes_version: Optional[KubernetesVersion] = Field(
        default=None,
        description="`major.minor` (or `major.minor.patch` with channel `none`), a minor AKS supports "
        "(`facts/aks_versions.py`, from AKS's release calendar; refresh with `az aks get-"
        "versions`). Unset: AKS's default, allowed only where an upgrade channel owns the version"
        " (docs/upgrades.md).",
    )
    role: Literal["workloads", "dispatch"] = Field(
        default="workloads",
        description="`workloads`: runs the teams' jobs and services. `dispatch`: a MultiKueue manager listed in "
        "`platform:jobs.dispatchers`, which hands \"any region\" jobs to the workers and runs nothing itself: a "
        "system pool only, no GPUs, Kafka, Flink or workloads (Kueue's manager cannot be its own worker).",
    )
    tier: Literal["Free", "Standard", "Premium"] = Field(
        default="Standard", description="Control plane tier (Standard and Premium carry the uptime SLA)."
    )
    zones: list[Zone] = Field(
        default_factory=lambda: list[Zone](["1", "2", "3"]),
        min_length=1,
        description="Availability zones the pools may use.",
    )
    cni: Literal["overlay", "podSubnet"] = Field(
        default="overlay",
        description="`overlay` (Azure CNI Overlay) or `podSubnet` (classic Azure CNI, pods in "
        "`subnets.pods`); Cilium dataplane and policy either way.",
    )
    advanced_networking: bool = Field(
        default=True,
        description="Advanced Container Networking Services (FQDN network policies, flow observability). Must"
        " stay on while any namespace of the cluster reaches hosts by name (team `egressFqdns`, "
        "workload identity sign-in, Kafka's OAuth, driver builds).",
    )
    api_server: ApiServerConfig = Field(default_factory=ApiServerConfig, description="How the API server is reached.")
    disable_local_accounts: bool = Field(default=True, description="Entra ID only; `false` is an explicit weakening.")
    upgrades: UpgradeConfig = Field(
        default_factory=UpgradeConfig,
        description="Who upgrades Kubernetes and node images, and when (docs/upgrades.md).",
    )
    autoscaler: AutoscalerProfileConfig = Field(
        default_factory=AutoscalerProfileConfig, description="The cluster autoscaler profile, values as AKS takes them."
    )
    subnets: ClusterSubnets = Field(description="The cluster's subnets in its region's VNet.")
    system_pool: SystemPoolConfig = Field(
        description="The inline system pool; always tainted `CriticalAddonsOnly=true:NoSchedule`."
    )
    node_pools: dict[AgentPoolName, NodePoolConfig] = Field(
        default_factory=dict,
        description="CPU user pools, each its own AgentPool; names unique across `nodePools` and `gpuPools`.",
    )
    gpu: GpuSettings = Field(default_factory=GpuSettings, description="What all GPU pools of the cluster share.")
    gpu_pools: dict[AgentPoolName, GpuPoolConfig] = Field(
        default_factory=dict,
        description="GPU pools, each its own AgentPool of a catalogued GPU size; names unique across "
        "`nodePools` and `gpuPools`.",
    )
    sandbox_pool: Optional[SandboxPoolConfig] = Field(
        default=None,
        description="The Pod Sandboxing pool (AgentPool `sandbox`: `workloadRuntime: KataVmIsolation`, "
        "AzureLinux, tainted `platform.ai/sandbox=kata:NoSchedule`) for `highRiskNamespaces`; "
        "required on every cluster once a team has them. Its `vmSize` must support nested "
        "virtualization (Dsv3/Dsv4/Dsv5, Ddsv5, Esv5, Fsv2, ...).",
    )


class TeamConfig(Model):
    entra_group_object_ids: UuidList = Field(
        min_length=1, description="The team's Entra groups (≥ 1): AKS RBAC Writer on the team's namespaces."
    )
    reader_group_object_ids: UuidList = Field(
        default_factory=list, description="Groups with AKS RBAC Reader on the team's namespaces."
    )
    namespaces: list[NamespaceName] = Field(
        min_length=1,
        description="Kubernetes namespaces the team owns; unique across teams, never `kube-*` or `default`.",
    )
    egress_fqdns: list[Fqdn] = Field(
        default_factory=list,
        description="HTTPS destinations the team's namespaces may reach (model hubs, package mirrors): "
        "allowed by the firewall and by a Cilium FQDN policy in each of the team's namespaces "
        "only; never a public registry. `*.example.com` matches hosts at any depth at the "
        "firewall; Cilium 1.18's `*` stays within one label, so the cluster's policy lists the "
        "pattern at each depth down to four labels (`*.*.example.com`, ...).",
    )
    high_risk_namespaces: list[NamespaceName] = Field(
        default_factory=list,
        description="Namespaces (of `namespaces`) whose pods run untrusted code: each pod must use the `kata-"
        "vm-isolation` RuntimeClass (admission always denies otherwise) and tolerate the sandbox "
        "pool's taint.",
    )
    training_namespaces: list[NamespaceName] = Field(
        default_factory=list,
        description="Namespaces (of `namespaces`) where multi-node InfiniBand jobs run: Pod Security enforces"
        " `privileged` there and the admission policy `platform-pod-security-training` enforces "
        "baseline plus exactly `IPC_LOCK`; Azure Policy's baseline initiative is replaced there "
        "by its five definitions with `IPC_LOCK` allowed (docs/gpus.md, \"Training namespaces\"); "
        "never a high-risk namespace.",
    )
    streaming_namespaces: list[NamespaceName] = Field(
        default_factory=list,
        description="Namespaces (of `namespaces`) where the team's Flink jobs (`platform:streaming.jobs`) run, "
        "on the streaming clusters only: watched by the Flink operator, outside Kueue, Pod Security "
        "`restricted`, capacity bounded by a ResourceQuota; never a training or high-risk namespace.",
    )


class AzurePolicyConfig(Model):
    """The Azure Policy add-on's built-in pod security initiative, assigned on each cluster."""

    initiative: Literal["baseline", "restricted", "none"] = Field(
        default="baseline",
        description="The Azure Policy add-on's built-in pod security initiative assigned on each cluster: "
        "`baseline`, `restricted` or `none`.",
    )
    effect: Literal["Audit", "Deny"] = Field(
        default="Deny",
        description="`Deny` rejects violating pods (Gatekeeper); `Audit` only reports them in Azure Policy "
        "compliance, an explicit weakening. AKS's and the platform's privileged namespaces are excluded.",
    )


class AdmissionConfig(Model):
    """Admission control in workload (team) namespaces."""

    action: Literal["Deny", "Audit"] = Field(
        default="Deny",
        description="What the platform's ValidatingAdmissionPolicies do with a violating pod in a team "
        "namespace: `Deny` (rejected, audited) or `Audit` (admitted, audited, the client warned);"
        " dev audits.",
    )
    azure_policy: AzurePolicyConfig = Field(
        default_factory=AzurePolicyConfig,
        description="The Azure Policy add-on's built-in pod security initiative, assigned on each cluster.",
    )


EmailAddress = Annotated[str, StringConstraints(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length=254)]
# An HTTPS endpoint without credentials in it (no user info, no query string): config holds no secret.
WebhookUrl = Annotated[str, StringConstraints(pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$")]
AlertSeverity = Literal["critical", "error", "warning", "informational"]
# Azure Monitor's severities (learn.microsoft.com/azure/azure-monitor/alerts/alerts-overview): Sev0-Sev3.
ALERT_SEVERITIES: dict[str, int] = {"critical": 0, "error": 1, "warning": 2, "informational": 3}


class AlertReceiverConfig(Model):
    """One group of people or systems alerts go to: an Azure Monitor action group."""

    emails: list[EmailAddress] = Field(default_factory=list, description="Addresses that get the alert by email.")
    webhooks: list[WebhookUrl] = Field(
        default_factory=list,
        description="HTTPS endpoints (an incident tool) that get it in the common alert schema; no credential "
        "in the URL (config holds no secret): the endpoint trusts the action group's Entra ID token.",
    )


class AlertsConfig(Model):
    """Who is told when something breaks (docs/operations.md, "Alerts")."""

    receivers: dict[ShortName, AlertReceiverConfig] = Field(
        default_factory=dict, description="Action groups by a short name (e.g. `oncall`, `platform`)."
    )
    routes: dict[AlertSeverity, list[ShortName]] = Field(
        default_factory=dict,
        description="`{critical|error|warning|informational: [receiver, ...]}`: which receivers each severity "
        "reaches. A severity with no route fires without telling anyone (it still shows in Azure Monitor).",
    )


class GpuRemediationConfig(Model):
    """How a GPU node with a fault leaves service: kured drains it (evictions, so PodDisruptionBudgets
    hold) and reboots it; the node's preflight runs again before it takes work."""

    enabled: bool = Field(
        default=True,
        description="Reboot faulty GPU nodes automatically. Off: a fault only taints the node and alerts; a person "
        "drains it.",
    )
    concurrency: int = Field(
        default=1,
        ge=1,
        le=20,
        description="GPU nodes of a cluster drained and rebooted at once (kured's lock): the rate limit that keeps a "
        "bad driver rollout from draining a whole pool.",
    )
    min_reboot_interval: Duration = Field(
        default="24h",
        description="A node asks for a reboot at most this often; a fault that survives a reboot stays tainted "
        "for a person (alert GpuNodeUnhealthy).",
    )
    wait_for_jobs: bool = Field(
        default=True,
        description="Never drain a node while a pod of an admitted Kueue job runs on it: a gang finishes (or fails "
        "by itself) first. Off: the node is drained at once.",
    )
    drain_timeout: Duration = Field(
        default="30m", description="Give up a drain after this long (the node is uncordoned and retried later)."
    )


class GpuHealthConfig(Model):
    """Preflight and passive health checks on every GPU node (docs/gpus.md, "Health")."""

    diag_level: Literal[1, 2, 3] = Field(
        default=1,
        description="Level of DCGM's diagnostic in preflight: 1 (software and configuration, seconds), 2 (adds "
        "PCIe/NVLink bandwidth and short GPU tests, minutes), 3 (adds stress, tens of minutes).",
    )
    check_interval: Duration = Field(
        default="60s",
        description="How often passive checks run (DCGM health watches, GPU count, InfiniBand ports). A node's "
        "result expires after three intervals without a check, closing the gate.",
    )
    remediation: GpuRemediationConfig = Field(
        default_factory=GpuRemediationConfig, description="How a faulty node is drained and rebooted."
    )


# The tables Container Insights writes (its data collection rule's streams, Microsoft's template
# in microsoft/Docker-Provider scripts/onboarding/aks/onboarding-msi-bicep), and the one of them
# whose plan may be Basic (learn.microsoft.com/azure/azure-monitor/logs/logs-table-plans: built-in
# tables that support Basic; the page converts ContainerLogV2 as its example).
ContainerInsightsTable = Literal[
    "ContainerLogV2",
    "KubeEvents",
    "KubePodInventory",
    "KubeNodeInventory",
    "KubePVInventory",
    "KubeServices",
    "KubeMonAgentEvents",
    "InsightsMetrics",
    "ContainerInventory",
    "ContainerNodeInventory",
    "Perf",
]
BASIC_PLAN_TABLES = ("ContainerLogV2",)


class LogTableConfig(Model):
    """One Log Analytics table's plan and retention."""

    plan: Literal["Analytics", "Basic"] = Field(
        default="Analytics",
        description="`Analytics` (full KQL, alerts; interactive retention up to 2 years) or `Basic` (about a fifth "
        "of the ingestion price, 30 days interactive, limited queries): for high-volume logs read only in incidents.",
    )
    retention_days: Optional[int] = Field(
        default=None,
        ge=4,
        le=730,
        description="Interactive retention of an Analytics table (4-730 days). Unset: the workspace's. Basic tables "
        "are fixed at 30.",
    )
    total_retention_days: Optional[int] = Field(
        default=None,
        ge=4,
        le=4383,
        description="Total retention, interactive plus long-term (up to 12 years), at the long-term price. Unset: "
        "the interactive retention.",
    )


class ContainerLogsConfig(Model):
    """Container Insights on every cluster: the Azure Monitor agent, with its managed identity,
    sends logs, events and inventory to its region's Log Analytics workspace (docs/operations.md, "Logs")."""

    enabled: bool = Field(default=True, description="Collect container logs, Kubernetes events and inventory.")
    interval: Duration = Field(default="1m", description="How often inventory and metrics are collected.")
    namespace_filtering_mode: Literal["Off", "Exclude"] = Field(
        default="Off",
        description="`Off` (every namespace but AKS's `kube-system` and `gatekeeper-system`, whose container "
        "logs the agent skips by default) or `Exclude` (also `namespaces`): container logs, inventory and metrics.",
    )
    namespaces: list[NamespaceName] = Field(
        default_factory=list, description="The namespaces `namespaceFilteringMode: Exclude` leaves out."
    )
    tables: dict[ContainerInsightsTable, LogTableConfig] = Field(
        default_factory=dict,
        description="Plan and retention per table; tables not named keep Analytics and the workspace's retention.",
    )


class MonitoringPrivateLinkConfig(Model):
    """Azure Monitor Private Link Scope (AMPLS): the agents' log and metric ingestion stays on
    private endpoints. A VNet can use one scope and Microsoft puts it with the DNS zones: the
    environment's own (one endpoint per region with clusters, in its zones), or the hub's."""

    enabled: bool = Field(
        default=True, description="Ingest through a private link scope; off, the agents use public endpoints."
    )
    scope_id: Optional[
        Annotated[
            str,
            StringConstraints(
                pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+"
                r"/providers/microsoft\.insights/privateLinkScopes/[-\w._]+$"
            ),
        ]
    ] = Field(
        default=None,
        description="The hub's scope, when the hub's shared zones serve several environments "
        "(`network.hub.privateDnsZonesResourceGroupId`): the hub's owner adds the environment's workspaces and "
        "endpoints to it (stack output `hubRequests`) and owns its private endpoint; the environment writes nothing "
        "there. Unset: the environment's own scope.",
    )
    query_access: Literal["Open", "PrivateOnly"] = Field(
        default="Open",
        description="Queries through the scope only (`PrivateOnly`) or from anywhere with Entra ID (`Open`): the "
        "portal's Container Insights views query through Azure Resource Manager and need `Open`.",
    )


class GrafanaConfig(Model):
    """Azure Managed Grafana: private, Entra ID sign-in, reading every region's Prometheus
    metrics; the dashboards in dashboards/ are provisioned by the tenants unit."""

    enabled: bool = Field(default=True, description="Create the environment's Grafana and its dashboards.")
    admins: UuidList = Field(
        default_factory=list,
        description="Entra ID groups with Grafana Admin (dashboards, data sources, users). Empty: the environment's "
        "`entra.adminGroupObjectIds`.",
    )
    viewers: UuidList = Field(default_factory=list, description="Entra ID groups with Grafana Viewer.")
    zone_redundant: bool = Field(default=False, description="Spread the instance over availability zones.")


class OperationsConfig(Model):
    log_retention_days: int = Field(default=90, ge=30, le=730, description="Log Analytics retention, 30-730.")
    defender: bool = Field(
        default=True,
        description="Microsoft Defender for Containers' sensor on each cluster, reporting to the "
        "environment's Log Analytics workspace; what it covers today: docs/operations.md, "
        "\"Defender\".",
    )
    image_cleaner_interval_hours: int = Field(
        default=168, ge=24, le=2160, description="How often unused images are removed from nodes."
    )
    secret_rotation_interval: Duration = Field(default="2m", description="Key Vault CSI driver rotation poll interval.")
    alerts: AlertsConfig = Field(
        default_factory=AlertsConfig,
        description="Alert receivers and severity routing; staging and prod must route critical alerts "
        "(policy alerting-on-every-cluster).",
    )
    gpu_health: GpuHealthConfig = Field(
        default_factory=GpuHealthConfig,
        description="GPU preflight and passive health checks and the remediation of faulty nodes.",
    )
    container_logs: ContainerLogsConfig = Field(
        default_factory=ContainerLogsConfig, description="Container Insights: logs, events and inventory."
    )
    private_link_scope: MonitoringPrivateLinkConfig = Field(
        default_factory=MonitoringPrivateLinkConfig, description="Private ingestion of logs and metrics (AMPLS)."
    )
    grafana: GrafanaConfig = Field(default_factory=GrafanaConfig, description="Azure Managed Grafana and dashboards.")


class FleetConfig(Model):
    """Azure Kubernetes Fleet Manager, which environments of two or more clusters join.

    The fleet owns Kubernetes upgrades: it upgrades the canary clusters first, waits, then
    the rest. The clusters' own upgrade channel is off (node OS images stay per cluster).
    """

    upgrade_channel: Literal["Stable", "Rapid"] = Field(
        default="Stable", description="The fleet's Kubernetes auto-upgrade channel: `Stable` or `Rapid`."
    )
    node_image_selection: Literal["Latest", "Consistent"] = Field(
        default="Consistent", description="`Consistent` (one node image version across the fleet) or `Latest`."
    )
    canary_clusters: list[ShortName] = Field(
        default_factory=list,
        description="Clusters upgraded in the first stage; at least one cluster must be left for the second. "
        "Empty: the first cluster declared.",
    )
    soak_hours: int = Field(default=24, ge=0, le=168, description="Wait between the canary stage and the rest (0-168).")


def _container_name(value: str) -> str:
    if not re.match(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$", value) or "--" in value:
        raise ValueError(
            f"{value!r} is not a valid container name: 3-63 lowercase letters, digits and "
            "single hyphens, starting and ending with a letter or digit"
        )
    return value


ContainerName = Annotated[str, AfterValidator(_container_name)]
# Key Vault object names: 1-127 letters, digits and hyphens.
SecretName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9-]{1,127}$")]
StorageSku = Literal["Standard_LRS", "Standard_ZRS", "Standard_GRS", "Standard_GZRS", "Standard_RAGZRS"]
ZONE_REDUNDANT_STORAGE = ("Standard_ZRS", "Standard_GZRS", "Standard_RAGZRS")
# Skus with a copy in the paired region, which a customer-managed failover promotes.
GEO_REDUNDANT_STORAGE = ("Standard_GRS", "Standard_GZRS", "Standard_RAGZRS")
StorageReplication = Literal["none", "objectReplication", "geoFailover"]
# Upstream registries as ACR artifact cache names them.
UpstreamRepository = Annotated[str, StringConstraints(pattern=r"^[a-z0-9.-]+\.[a-z]+(/[a-z0-9._-]+)*(/\*)?$")]
TargetRepository = Annotated[str, StringConstraints(pattern=r"^[a-z0-9._-]+(/[a-z0-9._-]+)*(/\*)?$")]
# A lifecycle rule's prefix: a container, then a path in it.
BlobPrefix = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]/[A-Za-z0-9._/-]*$")]


class StorageAccountConfig(Model):
    """One private storage account (e.g. `weights`, `datasets`)."""

    account_name: Optional[str] = Field(
        default=None,
        description="Azure's globally unique name, 3-24 lowercase letters and digits. Unset: "
        "`st<prefix><env><key>`, which must then fit those rules.",
    )
    hierarchical_namespace: bool = Field(
        default=False, description="Data Lake Gen2 (adds a `dfs` endpoint); fixed at creation."
    )
    containers: list[ContainerName] = Field(
        min_length=1, description="Blob containers (3-63 lowercase letters, digits, single hyphens)."
    )
    sku: Optional[StorageSku] = Field(
        default=None, description="This account's redundancy, instead of `platform:storage.sku`. Unset: that."
    )
    delete_after_days: dict[BlobPrefix, Annotated[int, Field(ge=1, le=36500)]] = Field(
        default_factory=dict,
        description="`{<container>/<path prefix>: days}`: a lifecycle rule deletes block blobs under the prefix "
        "this many days after their last change (soft delete still keeps them for `softDeleteDays`).",
    )
    replication: StorageReplication = Field(
        default="none",
        description="How the data survives the loss of its region (docs/resilience.md, \"Data\"): `none`; "
        "`objectReplication`, every container copied asynchronously to an account in `replicaRegion` that the "
        "clusters there read (flat namespace only); or `geoFailover`, a geo-redundant `sku` whose secondary a "
        "person promotes with a customer-managed failover (RPO under 15 minutes, about an hour). Not both: "
        "Azure refuses customer-managed failover on an account in an object-replication policy.",
    )
    replica_region: Optional[RegionName] = Field(
        default=None,
        description="With `objectReplication`: the region of the replica account, one with clusters other than "
        "the primary. Unset: the first such region.",
    )
    replica_account_name: Optional[str] = Field(
        default=None,
        description="With `objectReplication`: the replica's globally unique name. Unset: the account's name "
        "followed by the replica region's code, which must then fit Azure's rules.",
    )


class StorageConfig(Model):
    """The environment's storage accounts and how their data is protected."""

    sku: StorageSku = Field(
        default="Standard_ZRS",
        description="`Standard_LRS`, `Standard_ZRS`, `Standard_GRS`, `Standard_GZRS` or `Standard_RAGZRS`; "
        "dev weakens it to `Standard_LRS`.",
    )
    soft_delete_days: int = Field(
        default=30, ge=1, le=365, description="Deleted or overwritten blobs stay recoverable, 1-365."
    )
    container_soft_delete_days: int = Field(
        default=30, ge=1, le=365, description="Deleted containers stay recoverable, 1-365."
    )
    change_feed_days: Optional[int] = Field(
        default=None,
        ge=1,
        le=146000,
        description="Keep a change feed (an ordered log of every change) this many days, flat-namespace "
        "accounts. Unset: off.",
    )
    point_in_time_restore_days: Optional[int] = Field(
        default=None,
        ge=1,
        le=364,
        description="Restore flat-namespace accounts to any point in this window; needs `changeFeedDays` "
        "longer than it and must be shorter than `softDeleteDays`. Unset: off.",
    )
    customer_managed_key: bool = Field(
        default=False,
        description="Encrypt with a key in the environment's Key Vault (a dedicated identity gets *Key Vault "
        "Crypto Service Encryption User* on that key only).",
    )
    accounts: dict[ShortName, StorageAccountConfig] = Field(
        default_factory=dict, description="Private storage accounts by a short key (e.g. `weights`, `datasets`)."
    )


class KeyVaultConfig(Model):
    """The environment's Key Vault: RBAC authorization, purge protection, private only."""

    sku: Literal["standard", "premium"] = Field(
        default="standard", description="`standard` or `premium` (HSM-backed keys)."
    )
    soft_delete_retention_days: int = Field(
        default=90,
        ge=7,
        le=90,
        description="7-90, fixed at creation; purge protection is always on, so a destroyed environment's "
        "vault name is free again only after this many days.",
    )
    secrets_officer_group_object_ids: UuidList = Field(
        default_factory=list,
        description="Groups that create and rotate secrets (*Key Vault Secrets Officer* on this vault); the "
        "program never holds a secret value.",
    )


class CacheRuleConfig(Model):
    source: UpstreamRepository = Field(
        description="The upstream repository, e.g. `docker.io/pytorch/*` or `quay.io/org/image` (upstreams "
        "that need no credentials)."
    )
    target: TargetRepository = Field(
        description="The repository (or namespace with `/*`) in the platform's registry, e.g. `pytorch/*`."
    )


class RegistryConfig(Model):
    """The environment's container registry (Premium): the only place clusters pull from."""

    zone_redundancy: bool = Field(default=True, description="Zone-redundant registry and replicas.")
    geo_replication: bool = Field(default=True, description="A replica in every other region with clusters.")
    untagged_retention_days: int = Field(
        default=7, ge=0, le=365, description="Untagged manifests are deleted after this many days (0-365)."
    )
    cache_rules: dict[Annotated[str, StringConstraints(pattern=r"^[a-zA-Z0-9-]{5,50}$")], CacheRuleConfig] = Field(
        default_factory=dict,
        description="Pull-through cache rules for teams' upstream images, beside the platform's own (which "
        "are always present).",
    )


Access = Literal["read", "write"]


KafkaAccess = Literal["read", "write", "readWrite"]
# One name for the Kafka topic, the KafkaTopic resource and the event hub: lowercase letters,
# digits, dots and hyphens (a DNS subdomain, which all three accept unchanged).
TopicName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([a-z0-9.-]{0,98}[a-z0-9])?$")]


class KafkaTopicConfig(Model):
    """One topic, the same on either engine."""

    name: TopicName = Field(
        description="Lowercase letters, digits, dots and hyphens; unique; not `<cluster>.…` (MirrorMaker's copies)."
    )
    partitions: int = Field(
        ge=1,
        le=10_000,
        description="Partitions (Event Hubs: at most "
        + ", ".join(f"{t.partitions_per_event_hub} on {name}" for name, t in EVENT_HUBS_TIERS.items())
        + ").",
    )
    replication_factor: int = Field(
        default=3,
        ge=1,
        le=100,
        description="Copies of each partition, at most `strimzi.brokers` (ignored by Event Hubs).",
    )
    min_in_sync_replicas: int = Field(
        default=2,
        ge=1,
        le=100,
        description="Copies a write with `acks=all` needs, at most `replicationFactor` (ignored by Event Hubs).",
    )
    retention_hours: int = Field(
        default=168,
        ge=1,
        le=87_600,
        description="How long records (`delete`) or tombstones (`compact`) are kept; Event Hubs: at most "
        + ", ".join(f"{t.max_retention_hours:,} on {name}" for name, t in EVENT_HUBS_TIERS.items())
        + ".",
    )
    cleanup_policy: Literal["delete", "compact"] = Field(
        default="delete", description="`delete` or `compact` (the latest record per key stays)."
    )


class KafkaClientConfig(Model):
    """A workload of platform:workloads that uses Kafka, and what it may do per topic."""

    topics: dict[str, KafkaAccess] = Field(min_length=1, description="`{topic: read | write | readWrite}`.")
    authentication: Literal["oauth", "tls"] = Field(
        default="oauth",
        description="`oauth` (Entra ID tokens) or `tls` (a Strimzi client certificate in Secret "
        "`kafka/<client>`; not on Event Hubs).",
    )


# VM sizes whose name says they take Premium SSDs (the `s` feature letter: D8ds_v5, E16s_v5).
PremiumStorageVmSize = Annotated[str, StringConstraints(pattern=r"^Standard_[A-Z]+[0-9]+[a-z]*s[a-z]*(_v[0-9]+)?$")]


class KafkaNodePoolConfig(Model):
    """The dedicated pool Kafka runs on in each hosting cluster (zones 1-3, tainted)."""

    vm_size: PremiumStorageVmSize = Field(
        default="Standard_E8ds_v5",
        description="The Kafka pool's size; must take Premium SSDs (an `s` in its features).",
    )
    spare_nodes_per_zone: int = Field(
        default=1,
        ge=0,
        le=10,
        description="Nodes the autoscaler may add to each zone's pool beyond one per broker and controller there.",
    )
    os_disk_size_gb: int = Field(default=128, ge=30, le=2048, alias="osDiskSizeGB", description="Managed OS disk size.")
    max_surge: MaxSurge = Field(default="1", description="Upgrade surge.")


class KafkaOauthConfig(Model):
    """The Entra ID application whose access tokens the brokers accept."""

    audience: Uuid = Field(
        description="Application (client) ID of the app registration that stands for the Kafka API: tokens "
        "are requested for `<audience>/.default` and carry it in `aud`. It must be registered in "
        "the workload identities' tenant (the subscription's)."
    )


class MirrorMakerConfig(Model):
    """Active/active mirroring between the two clusters that host Kafka."""

    enabled: bool = Field(default=True, description="With two or more Kafka clusters, mirror them active/active.")
    replicas: int = Field(default=2, ge=1, le=10, description="MirrorMaker pods per cluster.")


class StrimziConfig(Model):
    """Kafka on AKS, run by the Strimzi operator (KRaft, no ZooKeeper)."""

    clusters: Optional[list[ShortName]] = Field(
        default=None,
        description="Clusters that host Kafka; each needs zones 1, 2 and 3 (at most 20 when mirrored: "
        "MirrorMaker's identity has a federated credential in each). Unset: every cluster.",
    )
    brokers: int = Field(
        default=3, ge=3, le=100, description="Brokers per cluster (3-100); three KRaft controllers run beside them."
    )
    broker_storage_gib: int = Field(
        default=1024, ge=10, le=32767, alias="brokerStorageGiB", description="Each broker's Premium SSD claim."
    )
    controller_storage_gib: int = Field(
        default=64, ge=10, le=1024, alias="controllerStorageGiB", description="Each controller's claim."
    )
    broker_cpu: int = Field(default=4, ge=1, le=64, description="CPU each broker requests.")
    broker_memory_gib: int = Field(
        default=32, ge=4, le=512, alias="brokerMemoryGiB", description="Memory each broker requests and is limited to."
    )
    node_pool: KafkaNodePoolConfig = Field(
        default_factory=KafkaNodePoolConfig,
        description="The dedicated pool Kafka runs on in each hosting cluster (zones 1-3, tainted).",
    )
    oauth: KafkaOauthConfig = Field(description="The Entra ID application whose access tokens the brokers accept.")
    mirror_maker: MirrorMakerConfig = Field(
        default_factory=MirrorMakerConfig, description="Active/active mirroring between the clusters that host Kafka."
    )


class EventHubsConfig(Model):
    """Azure Event Hubs' Kafka endpoint (Standard or higher has one)."""

    sku: Literal["Standard", "Premium"] = Field(default="Premium", description="`Standard` or `Premium`.")
    capacity: int = Field(
        default=1,
        ge=1,
        le=40,
        description="Throughput units (Standard, 1-40) or processing units (Premium: 1, 2, 4, 8, 16).",
    )


class KafkaConfig(Model):
    """The event backbone: one topic and client spec, either engine."""

    engine: Literal["strimzi", "eventhubs"] = Field(
        description="`strimzi` (Kafka on AKS) or `eventhubs` (Event Hubs' Kafka endpoint)."
    )
    topics: list[KafkaTopicConfig] = Field(
        default_factory=list,
        description="The topics; one name for the Kafka topic, the `KafkaTopic` and the event hub.",
    )
    clients: dict[str, KafkaClientConfig] = Field(
        default_factory=dict,
        description="`{workload: client}`: workloads of `platform:workloads` that produce or consume; on "
        "Strimzi, every cluster a client runs on must host Kafka.",
    )
    strimzi: Optional[StrimziConfig] = Field(
        default=None, description="Strimzi's settings, with `engine: strimzi`; leave it out on Event Hubs."
    )
    event_hubs: Optional[EventHubsConfig] = Field(
        default=None, description="Event Hubs' settings, with `engine: eventhubs`; leave it out on Strimzi."
    )

    def topic(self, name: str) -> KafkaTopicConfig | None:
        return next((topic for topic in self.topics if topic.name == name), None)


# A Flink job: its FlinkDeployment, workload identity, checkpoint container and Kafka client.
FlinkJobName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{1,22}[a-z0-9]$")]
# An image in the platform's registry, pinned by tag or digest, without the registry host.
RegistryImage = Annotated[
    str,
    StringConstraints(
        pattern=r"^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*"
        r"(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[a-f0-9]{64})$"
    ),
]
PythonFile = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_./-]*\.py$")]
# Flink durations as the operator's options take them: "30 min", "6 h", "7 d".
FlinkDuration = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]* (s|min|h|d)$")]


class FlinkResourcesConfig(Model):
    """CPU and memory of a JobManager or TaskManager pod (Flink's total process memory)."""

    cpu: float = Field(ge=0.25, le=64, description="CPUs (requests and limits), e.g. `1` or `0.5`.")
    memory_mib: int = Field(
        ge=1024, le=1_048_576, alias="memoryMiB", description="Total process memory in MiB (at least 1024)."
    )


class TaskManagerConfig(FlinkResourcesConfig):
    slots: int = Field(default=2, ge=1, le=64, description="Task slots per TaskManager.")
    local_disk_gib: int = Field(
        default=32,
        ge=1,
        le=2048,
        alias="localDiskGiB",
        description="Local disk for RocksDB's working files, requested and limited per TaskManager (it "
        "is evicted alone if it grows beyond); counted against the pool's OS disk.",
    )


class FlinkJobConfig(Model):
    """One PyFlink job, run by the Flink operator in application mode."""

    team: ShortName = Field(description="A team of `platform:teams`.")
    namespace: NamespaceName = Field(description="One of the team's `streamingNamespaces`.")
    clusters: Optional[list[ShortName]] = Field(
        default=None,
        description="Streaming clusters it runs on, one instance each (its own state). Unset: every streaming cluster.",
    )
    image: RegistryImage = Field(
        description="The job's image in the platform's registry, built on the platform's Flink base "
        "(`images/flink/`), as `<repository>:<tag>` or `@sha256:<digest>` without the registry host; "
        "never `latest`."
    )
    python_file: PythonFile = Field(description="The job's entry point, relative to `/opt/flink/usrlib` in the image.")
    args: list[str] = Field(default_factory=list, description="The job's own arguments, after `-py <file>`.")
    flink_version: str = Field(
        default="2.2", description="`major.minor`; the platform's base image and operator 1.15.0 run 2.2."
    )
    parallelism: int = Field(ge=1, le=10_000, description="The job's parallelism.")
    job_manager: FlinkResourcesConfig = Field(
        default_factory=lambda: FlinkResourcesConfig(cpu=1, memory_mib=2048),
        description="Each JobManager's resources (two JobManagers with high availability).",
    )
    task_manager: TaskManagerConfig = Field(
        default_factory=lambda: TaskManagerConfig(cpu=2, memory_mib=8192),
        description="Each TaskManager's resources and slots; the job runs ⌈parallelism / slots⌉ of them.",
    )
    topics: dict[TopicName, KafkaAccess] = Field(
        default_factory=dict,
        description="`{topic: read | write | readWrite}` of `platform:kafka.topics`: ACLs (Strimzi) or Event "
        "Hubs roles, as for any Kafka client, signed in through the job's workload identity.",
    )
    upgrade_mode: Literal["savepoint", "last-state"] = Field(
        default="savepoint",
        description="How the operator carries state across an upgrade: `savepoint` (stop with a savepoint, "
        "start from it) or `last-state` (start from the last checkpoint; faster, for jobs whose "
        "state is compatible).",
    )
    checkpoint_interval_seconds: int = Field(default=60, ge=10, le=3600, description="Checkpoint every so often.")
    retained_checkpoints: int = Field(default=3, ge=1, le=20, description="Completed checkpoints kept.")
    savepoint_interval: Optional[FlinkDuration] = Field(
        default=None, description="Periodic savepoints, e.g. `6 h`. Unset: savepoints only on upgrades."
    )
    savepoint_retention_days: int = Field(
        default=7,
        ge=1,
        le=365,
        description="The operator disposes of the job's savepoints older than this (its savepoint history).",
    )


class FlinkOperatorConfig(Model):
    """The Apache Flink Kubernetes Operator, one per streaming cluster."""

    replicas: int = Field(
        default=2, ge=1, le=3, description="Operator pods; more than one elect a leader (a Lease) and get a PDB."
    )


class StreamingPoolConfig(Model):
    """The dedicated pool the JobManagers and TaskManagers run on: memory-optimized, with a local
    disk under the ephemeral OS disk where RocksDB keeps its working files."""

    vm_size: VmSize = Field(
        default="Standard_E8ds_v5",
        description="A memory-optimized size (8 GiB per vCPU or more) with a temporary disk.",
    )
    min_count: int = Field(default=0, ge=0, le=1000, description="Fewest nodes per streaming cluster.")
    max_count: int = Field(default=10, ge=1, le=1000, description="Most nodes per streaming cluster.")
    os_disk_size_gb: int = Field(
        default=256,
        ge=30,
        le=2048,
        alias="osDiskSizeGB",
        description="Ephemeral OS disk on the local temporary disk; holds RocksDB's working files.",
    )
    max_surge: MaxSurge = Field(default="1", description="Upgrade surge.")


class JobsConfig(Model):
    """Jobs that fail over between regions: Kueue's MultiKueue (docs/resilience.md, "Jobs").

    A team submits a job for one region to that cluster's `gpu` queue, or for any region to a
    dispatcher's `any-region` queue: the dispatcher copies it to every worker and the first to
    admit it runs it. With a dispatcher per region, a region's loss leaves one to submit to.
    """

    dispatchers: list[ShortName] = Field(
        default_factory=list,
        description="The dispatch clusters (`role: dispatch`), ideally one per region. Empty: no MultiKueue, "
        "every job runs where it is submitted.",
    )
    workers: Optional[list[ShortName]] = Field(
        default=None,
        description="The clusters the dispatchers hand jobs to (1-20, with GPU pools and a VNet-integrated API "
        "server). Unset: every workloads cluster with GPU pools.",
    )
    worker_role_id: Optional[Uuid] = Field(
        default=None,
        description="Name (GUID) of the custom role \"Platform MultiKueue worker (<prefix>-<env>)\" the bootstrap "
        "creates: the program assigns it to the dispatchers' identity on each worker's team job namespaces, where "
        "MultiKueue creates the jobs it hands over (required with `dispatchers`). The dispatchers sign in with "
        "that identity, whose Entra ID token a job on each dispatcher renews (docs/resilience.md, \"Jobs\").",
    )


class CheckpointStorageConfig(Model):
    """The ADLS Gen2 account that holds the jobs' checkpoints, savepoints and HA metadata."""

    account_name: Optional[str] = Field(
        default=None,
        description="Azure's globally unique name. Unset: `st<prefix><env>flink`, which must then fit Azure's rules.",
    )
    sku: StorageSku = Field(default="Standard_ZRS", description="Its redundancy (`Standard_ZRS` or better in prod).")
    replication: Literal["none", "geoFailover"] = Field(
        default="none",
        description="`geoFailover`: a geo-redundant `sku` whose secondary a person promotes when the region is "
        "lost (the account has a hierarchical namespace, which object replication does not serve). `none`: "
        "state lives and dies with the region.",
    )
    savepoint_retention_days: int = Field(
        default=30,
        ge=1,
        le=3650,
        description="A lifecycle rule deletes savepoints this many days old; at least every job's "
        "`savepointRetentionDays`. Checkpoints are Flink's to delete (incremental ones share files).",
    )


class StreamingConfig(Model):
    """Stream processing: PyFlink jobs under the Flink Kubernetes Operator (docs/streaming.md)."""

    clusters: Optional[list[ShortName]] = Field(
        default=None, description="Clusters Flink runs on (the operator, the pool, every job). Unset: every cluster."
    )
    high_availability: bool = Field(
        default=True,
        description="Kubernetes HA: two JobManagers, leader election, job metadata on the checkpoint storage; "
        "required in staging and prod, `false` is dev's explicit weakening.",
    )
    operator: FlinkOperatorConfig = Field(default_factory=FlinkOperatorConfig, description="The operator.")
    pool: StreamingPoolConfig = Field(
        default_factory=StreamingPoolConfig, description="The `flink` pool of each streaming cluster."
    )
    checkpoints: CheckpointStorageConfig = Field(
        default_factory=CheckpointStorageConfig, description="Where state is kept."
    )
    jobs: dict[FlinkJobName, FlinkJobConfig] = Field(
        default_factory=dict,
        description="Jobs by name (3-24 lowercase letters, digits, hyphens): the FlinkDeployment, the workload "
        "identity, the checkpoint container and the Kafka client share it, so it must not be a "
        "`platform:workloads` name.",
    )


class WorkloadConfig(Model):
    """A workload that signs in to Azure with Entra ID workload identity (no secrets)."""

    team: ShortName = Field(description="A team of `platform:teams`.")
    namespace: NamespaceName = Field(description="One of that team's namespaces.")
    service_account: NamespaceName = Field(
        description="The Kubernetes service account (one workload per service account)."
    )
    clusters: Optional[list[ShortName]] = Field(
        default=None,
        description="Clusters it runs on, one federated credential each (at most 20). Unset: every cluster.",
    )
    failover_clusters: list[ShortName] = Field(
        default_factory=list,
        description="Clusters it moves to when its own fail (not among `clusters`): its identity trusts them, "
        "its service account and Kafka user exist there, idle until it lands; counted in the 20 "
        "federated credentials; the connection info lists what to connect to there.",
    )
    storage: dict[ShortName, dict[str, Access]] = Field(
        default_factory=dict,
        description="`{account: {container: read | write}}`: Storage Blob Data Reader (`read`) or Contributor"
        " (`write`) on exactly that container.",
    )
    key_vault_secrets: list[SecretName] = Field(
        default_factory=list,
        description="Secrets it reads (Key Vault Secrets User on each); create them before the deploy that "
        "grants them.",
    )
    kubernetes_api: bool = Field(
        default=False,
        description="The workload calls the Kubernetes API: its service account mounts a token and its pods "
        "may reach the API server (otherwise neither).",
    )


class PlatformConfig(Model):
    """Everything one stack (one environment) may set under `platform:`."""

    environment: EnvironmentName = Field(
        description="The environment; also the `environment` tag. It must be the stack's name, or its prefix "
        "(`prod` for `prod-scale`): a stack never deploys another environment."
    )
    prefix: ShortName = Field(
        description="First part of every resource name (`aks-<prefix>-<env>-<cluster>`); the globally unique "
        "names derived from it must fit Azure's rules (Key Vault `kv-<prefix>-<env>-<region "
        "code>` ≤ 24 characters, registry `cr<prefix><env>`)."
    )
    tags: dict[str, str] = Field(
        description="Tags on every taggable resource; must contain `owner` and `cost-center`; `environment` "
        "is added, not set here. ARM's rules apply (`facts/arm_tags.py`): names up to 128 "
        "characters without `< > % & \\ ? /` and not starting with `microsoft`, `azure` or "
        "`windows`, values up to 256, and at most 12 of your own (private DNS zones take 15 tags,"
        " the platform adds three)."
    )
    protect: bool = Field(
        default=True,
        description="Pulumi `protect` on stateful and hard-to-rebuild resources (clusters, VNets, workspaces,"
        " storage): a deletion or replacement fails instead of happening.",
    )
    entra: EntraConfig = Field(
        default_factory=EntraConfig, description="Entra ID settings shared by every cluster of the environment."
    )
    network: NetworkConfig = Field(
        description="The address plan: VNets, subnets, pod and service ranges, the hub, egress."
    )
    clusters: dict[ShortName, ClusterConfig] = Field(
        min_length=1, description="Clusters; the name (2-10 lowercase alphanumerics) is part of resource names."
    )
    teams: dict[ShortName, TeamConfig] = Field(
        default_factory=dict, description="Teams, by a short name: their Entra groups, namespaces and egress."
    )
    operations: OperationsConfig = Field(
        default_factory=OperationsConfig, description="Logging and security operations."
    )
    admission: AdmissionConfig = Field(
        default_factory=AdmissionConfig, description="Admission control in team namespaces."
    )
    lock_stateful_resources: bool = Field(
        default=True,
        description="`CanNotDelete` locks on storage accounts, the Key Vault and the registry: deleting them "
        "(or a container) needs the lock removed first.",
    )
    storage: StorageConfig = Field(
        default_factory=StorageConfig, description="Storage accounts and how their data is protected."
    )
    key_vault: KeyVaultConfig = Field(default_factory=KeyVaultConfig, description="The environment's Key Vault.")
    registry: RegistryConfig = Field(
        default_factory=RegistryConfig, description="The environment's container registry."
    )
    workloads: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,23}$")], WorkloadConfig] = Field(
        default_factory=dict,
        description="Workloads with Entra ID workload identity (below); names are 1-24 lowercase letters, "
        "digits and hyphens.",
    )
    fleet: Optional[FleetConfig] = Field(
        default=None,
        description="Fleet Manager settings; only for environments of two or more clusters, which always join"
        " a fleet. Unset: the defaults below.",
    )
    kafka: Optional[KafkaConfig] = Field(
        default=None, description="The event backbone. Unset: no Kafka in this environment."
    )
    streaming: Optional[StreamingConfig] = Field(
        default=None, description="Stream processing with Flink. Unset: no Flink in this environment."
    )
    jobs: JobsConfig = Field(
        default_factory=JobsConfig,
        description="Jobs that fail over between regions (MultiKueue dispatchers and workers).",
    )

    @property
    def has_fleet(self) -> bool:
        return len(self.clusters) > 1

    @property
    def fleet_settings(self) -> FleetConfig:
        return self.fleet or FleetConfig()

    @property
    def primary_region(self) -> str:
        """Where environment-wide resources live: the first cluster's region."""
        return next(iter(self.clusters.values())).region

    @property
    def strimzi(self) -> StrimziConfig | None:
        """The Strimzi settings when Strimzi runs this environment's Kafka, else None."""
        kafka = self.kafka
        return kafka.strimzi if kafka is not None and kafka.engine == "strimzi" else None

    def workload_cluster_keys(self) -> list[str]:
        """Clusters that run teams' work: every one but the dispatchers."""
        return [key for key, cluster in self.clusters.items() if cluster.role == "workloads"]

    def kafka_clusters(self) -> list[str]:
        """Clusters that host Strimzi Kafka (none on Event Hubs)."""
        strimzi = self.strimzi
        if strimzi is None:
            return []
        return [c for c in (strimzi.clusters or self.workload_cluster_keys()) if c in self.clusters]

    def streaming_clusters(self) -> list[str]:
        """Clusters that run Flink (none without `streaming`)."""
        streaming = self.streaming
        if streaming is None:
            return []
        return [c for c in (streaming.clusters or self.workload_cluster_keys()) if c in self.clusters]

    def dispatch_workers(self) -> list[str]:
        """The clusters MultiKueue hands jobs to (none without dispatchers)."""
        if not self.jobs.dispatchers:
            return []
        workers = self.jobs.workers
        if workers is None:
            workers = [k for k in self.workload_cluster_keys() if self.clusters[k].gpu_pools]
        return [w for w in workers if w in self.clusters]

    def job_clusters(self, job: str) -> list[str]:
        """The streaming clusters a Flink job runs on."""
        assert self.streaming is not None
        return list(self.streaming.jobs[job].clusters or self.streaming_clusters())

    def workload_clusters(self, workload: str) -> list[str]:
        return list(self.workloads[workload].clusters or self.workload_cluster_keys())

    def identity_clusters(self, workload: str) -> list[str]:
        """Clusters whose pods may sign in as the workload: where it runs and where it fails over to."""
        spec = self.workloads[workload]
        return self.workload_clusters(workload) + [c for c in spec.failover_clusters if c in self.clusters]

    def node_os_channel(self, cluster_key: str) -> str:
        configured = self.clusters[cluster_key].upgrades.node_os_channel
        return configured or ("SecurityPatch" if self.has_fleet else "NodeImage")

    def upgrade_channel(self, cluster_key: str) -> str:
        """The cluster's own auto-upgrade channel: off for fleet members (the fleet upgrades)."""
        configured = self.clusters[cluster_key].upgrades.channel
        return configured or ("none" if self.has_fleet else "patch")


REQUIRED_TAGS = ("owner", "cost-center")
