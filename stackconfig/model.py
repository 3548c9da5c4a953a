"""The validated shape of a stack's configuration.

Every key a stack file may set under the `platform:` namespace is a field here. Field names
are snake_case in Python and camelCase in the stack files (the alias); unknown keys are
errors. This module checks types and single-field rules only; rules that relate several
fields (address overlaps, subnet sizing, AKS limits) live in `stackconfig.checks`, so that
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

from facts.gpu import DEFAULT_GPU_TAINT, GPU_VM_SIZES, MIG_SLICES_PER_GPU, known_sizes


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
    StringConstraints(
        pattern=r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
    ),
]


def _unique(values: list) -> list:
    seen = set()
    for value in values:
        if str(value).lower() in seen:
            raise ValueError(f"lists {value} twice; name each once (a second grant of the same name stops a deploy midway)")
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
NamespaceName = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)
]
VmSize = Annotated[str, StringConstraints(pattern=r"^Standard_[A-Za-z0-9_]+$")]
# "33%" or an absolute node count such as "5".
MaxSurge = Annotated[str, StringConstraints(pattern=r"^([1-9][0-9]*%|[1-9][0-9]*)$")]
# Go-style durations as the AKS autoscaler profile takes them: "10s", "10m", "1h".
Duration = Annotated[str, StringConstraints(pattern=r"^[0-9]+(s|m|h)$")]
# A Kubernetes taint as AKS takes it: key=value:Effect.
Taint = Annotated[
    str,
    StringConstraints(
        pattern=r"^[A-Za-z0-9][-A-Za-z0-9_./]*=[-A-Za-z0-9_.]*:(NoSchedule|PreferNoSchedule|NoExecute)$"
    ),
]
KUBERNETES_VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?$")


def _kubernetes_version(value: str) -> str:
    if not KUBERNETES_VERSION.match(value):
        raise ValueError(
            f"{value!r} is not a Kubernetes version: use major.minor (e.g. 1.33) "
            "or major.minor.patch (e.g. 1.33.2)"
        )
    return value


KubernetesVersion = Annotated[str, AfterValidator(_kubernetes_version)]


def _gpu_vm_size(value: str) -> str:
    if value not in GPU_VM_SIZES:
        raise ValueError(f"{value!r} is not a supported GPU VM size; known sizes: {known_sizes()}")
    return value


GpuVmSizeName = Annotated[str, AfterValidator(_gpu_vm_size)]
MigProfile = Literal[tuple(MIG_SLICES_PER_GPU)]  # type: ignore[valid-type]
CapacityReservationGroupId = Annotated[
    str,
    StringConstraints(
        pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+"
        r"/providers/Microsoft\.Compute/capacityReservationGroups/[-\w._]+$"
    ),
]


class PlanIdentityConfig(Model):
    """The read-only identity previews and the drift check run as (scripts/bootstrap prints both IDs).

    It reads every kind the program manages through a custom role on the subscription, but no
    Secrets; the program grants it the Secrets a preview or refresh does read (Helm's release
    records, Kafka's CA certificates) in exactly the namespaces that hold them.
    """

    # Object (principal) ID of the managed identity id-<prefix>-plan-<env>.
    principal_object_id: Uuid
    # Name (GUID) of the custom role "Platform preview secret reader (<prefix>-<env>)".
    secret_reader_role_id: Uuid


class EntraConfig(Model):
    """Entra ID integration shared by every cluster of the environment."""

    # Members of these groups are cluster admins (Azure Kubernetes Service RBAC Cluster Admin).
    admin_group_object_ids: UuidList = Field(default_factory=list)
    # Tenant of the admin groups; defaults to the tenant of the identity running the deploy.
    tenant_id: Optional[Uuid] = None
    # How the exported kubeconfig logs in through kubelogin. Both are non-interactive:
    # `azurecli` reuses `az login` (people, self-hosted runners); `workloadidentity` uses a
    # federated token (CI jobs running in Kubernetes or GitHub OIDC).
    kubelogin_mode: Literal["azurecli", "workloadidentity"] = "azurecli"
    # Unset: no read-only preview identity in this environment (previews then need the deploy
    # identity's rights).
    plan_identity: Optional[PlanIdentityConfig] = None


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
    ]
    address_space: list[IPv4Network] = Field(min_length=1)
    # Also create the hub-to-spoke half of each peering (needs write access to the hub VNet).
    create_hub_side_peering: bool = True
    # Route spoke traffic through the hub's VPN/ExpressRoute gateway.
    use_remote_gateways: bool = False
    # The hub's resource group of central privatelink zones. A VNet links to only one zone
    # of each name, so environments that share a hub must share its zones: set this, and
    # the environment links its VNets to those zones instead of creating its own.
    private_dns_zones_resource_group_id: Optional[ResourceGroupId] = None


class NatGatewayConfig(Model):
    idle_timeout_minutes: int = Field(default=4, ge=4, le=120)
    # Each public IP gives 64,512 SNAT ports; large fleets need more than one.
    public_ip_count: int = Field(default=1, ge=1, le=16)


def _fqdn(value: str) -> str:
    value = value.lower()
    if not FQDN.match(value):
        raise ValueError(
            f"{value!r} is not a host name: use e.g. pypi.org, or *.example.com for its subdomains"
        )
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

    # Premium adds intrusion detection and prevention (IDPS); prod runs Premium.
    sku: Literal["Standard", "Premium"] = "Premium"
    # Traffic to and from Microsoft's known-malicious addresses and domains.
    threat_intel_mode: Literal["Alert", "Deny"] = "Deny"
    # Premium only: IDPS signature mode; unset means Deny on Premium, Off on Standard.
    intrusion_detection: Optional[Literal["Off", "Alert", "Deny"]] = None
    # HTTPS destinations every node may reach beyond AKS's own (e.g. OS package mirrors the
    # GPU driver build needs); team destinations belong in platform:teams.<team>.egressFqdns.
    allowed_fqdns: list[Fqdn] = Field(default_factory=list)

    @property
    def intrusion_detection_mode(self) -> str:
        if self.intrusion_detection is not None:
            return self.intrusion_detection
        return "Deny" if self.sku == "Premium" else "Off"


class EgressConfig(Model):
    """How nodes reach the internet. There is no default outbound access."""

    # userAssignedNATGateway: a NAT gateway this program creates on the node subnets.
    # userDefinedRouting: 0.0.0.0/0 is routed to an Azure Firewall this program creates in
    # each region (deny by default, `firewall` below); needs subnets.firewall per region.
    outbound_type: Literal["userAssignedNATGateway", "userDefinedRouting"] = (
        "userAssignedNATGateway"
    )
    firewall: FirewallConfig = Field(default_factory=FirewallConfig)
    nat_gateway: NatGatewayConfig = Field(default_factory=NatGatewayConfig)


class RegionSubnets(Model):
    private_endpoints: IPv4Network
    # AzureFirewallSubnet (a /26 or larger), required with outboundType userDefinedRouting.
    firewall: Optional[IPv4Network] = None


class RegionNetworkConfig(Model):
    """The VNet of one region that hosts clusters."""

    address_space: list[IPv4Network] = Field(min_length=1)
    subnets: RegionSubnets


class NetworkConfig(Model):
    # Azure CNI Overlay: each node takes a /24 from this range; it cannot grow later.
    pod_cidr: IPv4Network
    service_cidr: IPv4Network
    dns_service_ip: IPv4Address = Field(alias="dnsServiceIP")
    regions: dict[RegionName, RegionNetworkConfig] = Field(min_length=1)
    hub: Optional[HubConfig] = None
    on_premises_ranges: list[IPv4Network] = Field(default_factory=list)
    egress: EgressConfig = Field(default_factory=EgressConfig)


class ClusterSubnets(Model):
    system: IPv4Network
    nodes: IPv4Network
    # Delegated to Microsoft.ContainerService/managedClusters for API server VNet integration.
    api_server: Optional[IPv4Network] = None
    # Classic Azure CNI only (`cni: podSubnet`): pods take addresses from this subnet.
    pods: Optional[IPv4Network] = None


class ApiServerConfig(Model):
    # Private API server: reachable only from the VNets (and the peered hub).
    private: bool = True
    # Project the API server into a delegated subnet of the cluster's VNet.
    vnet_integration: bool = True
    # Only for a public API server: the source ranges allowed to reach it.
    authorized_ip_ranges: list[IPv4Network] = Field(default_factory=list)


class MaintenanceWindowConfig(Model):
    day_of_week: Literal[
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"
    ] = "Sunday"
    start_time: Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")] = (
        "02:00"
    )
    duration_hours: int = Field(default=4, ge=4, le=24)
    utc_offset: Annotated[str, StringConstraints(pattern=r"^[+-](0[0-9]|1[0-4]):[0-5][0-9]$")] = (
        "+00:00"
    )


UpgradeChannel = Literal["patch", "stable", "rapid", "none"]


class UpgradeConfig(Model):
    # Who owns the Kubernetes version (see README, "Upgrades"):
    #   patch  - this program owns major.minor, AKS applies patches in the window.
    #   stable, rapid - AKS owns the version; kubernetesVersion must be left out.
    #   none   - this program owns the full version; nothing upgrades on its own.
    # Unset means `patch` for a lone cluster and `none` for fleet members, whose
    # Kubernetes upgrades the fleet runs (platform:fleet).
    channel: Optional[UpgradeChannel] = None
    # Unset means NodeImage for a lone cluster. Fleet members default to SecurityPatch: the
    # fleet's update runs move node images with the version, AKS patches the OS in between.
    node_os_channel: Optional[Literal["NodeImage", "SecurityPatch", "Unmanaged", "None"]] = None
    maintenance_window: MaintenanceWindowConfig = Field(default_factory=MaintenanceWindowConfig)


class AutoscalerProfileConfig(Model):
    """The cluster autoscaler profile (values as AKS takes them)."""

    expander: Literal["least-waste", "most-pods", "priority", "random"] = "least-waste"
    balance_similar_node_groups: bool = True
    scan_interval: Duration = "10s"
    scale_down_delay_after_add: Duration = "10m"
    scale_down_unneeded_time: Duration = "10m"
    scale_down_utilization_threshold: float = Field(default=0.5, gt=0, le=1)
    max_graceful_termination_sec: int = Field(default=600, ge=0, le=86_400)
    max_node_provision_time: Duration = "15m"
    skip_nodes_with_system_pods: bool = True
    skip_nodes_with_local_storage: bool = False


OsSku = Literal["AzureLinux", "Ubuntu"]


class PoolSettings(Model):
    """Settings every node pool has: the system pool, CPU pools and GPU pools."""

    vm_size: VmSize
    # Sanity bounds; AKS's own 1,000 nodes per pool is checked with the capacity plan.
    min_count: int = Field(ge=0, le=100_000)
    max_count: int = Field(ge=1, le=100_000)
    max_pods: int = Field(default=110, ge=10, le=250)
    max_surge: MaxSurge = "10%"
    os_disk_size_gb: int = Field(default=128, ge=30, le=2048, alias="osDiskSizeGB")
    os_disk_type: Literal["Ephemeral", "Managed"] = "Ephemeral"
    # Defaults to the cluster's zones.
    zones: Optional[list[Zone]] = None
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[Taint] = Field(default_factory=list)


class PoolConfig(PoolSettings):
    """Settings shared by the system pool and CPU user pools."""

    os_sku: OsSku = "AzureLinux"


class SystemPoolConfig(PoolConfig):
    """The inline system pool; it always carries the CriticalAddonsOnly taint."""

    min_count: int = Field(default=3, ge=1, le=100_000)
    max_count: int = Field(default=6, ge=1, le=100_000)


class NodePoolConfig(PoolConfig):
    """A CPU user pool, registered as its own AgentPool resource."""


class GpuPoolConfig(PoolSettings):
    """A GPU pool: an AgentPool of a catalogued GPU size (facts/gpu.py)."""

    vm_size: GpuVmSizeName
    # Read by policies and Kueue: training (gang-scheduled, InfiniBand), batch, inference.
    purpose: Literal["training", "batch", "inference"]
    # Scale to zero when idle; the autoscaler owns the node count between the bounds.
    min_count: int = Field(default=0, ge=0, le=100_000)
    # GPU capacity is scarce: surge one node at a time, never a percentage of the fleet.
    max_surge: MaxSurge = "1"
    # Spot VMs: evicted (deleted) when Azure needs the capacity back, at any price up to on-demand.
    spot: bool = False
    # Multi-Instance GPU partitioning, fixed at creation (MIG-capable sizes only).
    mig_profile: Optional[MigProfile] = None
    # Reserved capacity to draw nodes from (Microsoft.Compute/capacityReservationGroups).
    capacity_reservation_group_id: Optional[CapacityReservationGroupId] = None
    # GPUs (or MIG slices) of this pool each team may use through Kueue: {team: count}.
    quotas: dict[str, Annotated[int, Field(ge=1, le=1_000_000)]] = Field(default_factory=dict)


class GpuSettings(Model):
    """What all GPU pools of one cluster share."""

    # Who installs the NVIDIA driver and container toolkit: `aks` (gpuProfile.driver
    # Install; the GPU operator skips both) or `operator` (driver None; the GPU operator
    # installs them). One switch, so the pool and the operator cannot disagree.
    driver: Literal["aks", "operator"] = "aks"
    # The GPU operator does not support mixed node OS versions across GPU nodes.
    os_sku: OsSku = "Ubuntu"
    # Keeps non-GPU pods off GPU nodes; the GPU stack and Kueue flavors tolerate it.
    taint: Taint = DEFAULT_GPU_TAINT


class SandboxPoolConfig(PoolSettings):
    """A pool for high-risk jobs: AKS Pod Sandboxing, each pod in its own Kata VM.

    AzureLinux only, on a VM size with nested virtualization (planning/sandbox.py). The
    pool carries the sandbox taint; pods of high-risk namespaces must use the
    `kata-vm-isolation` RuntimeClass (an admission policy enforces it) and tolerate it.
    """

    min_count: int = Field(default=0, ge=0, le=100_000)
    max_surge: MaxSurge = "1"


class ClusterConfig(Model):
    region: RegionName
    kubernetes_version: Optional[KubernetesVersion] = None
    tier: Literal["Free", "Standard", "Premium"] = "Standard"
    zones: list[Zone] = Field(default_factory=lambda: ["1", "2", "3"], min_length=1)
    # overlay: Azure CNI Overlay (pods from network.podCidr). podSubnet: classic Azure CNI
    # with pods in subnets.pods (VNet-routable pod IPs).
    cni: Literal["overlay", "podSubnet"] = "overlay"
    # Advanced Container Networking Services: enforces the FQDN egress policies of
    # namespaces (Cilium) and adds flow observability. Needed wherever a namespace reaches
    # an outside host by name (team egressFqdns, Entra ID sign-in of workload identities).
    advanced_networking: bool = True
    api_server: ApiServerConfig = Field(default_factory=ApiServerConfig)
    disable_local_accounts: bool = True
    upgrades: UpgradeConfig = Field(default_factory=UpgradeConfig)
    autoscaler: AutoscalerProfileConfig = Field(default_factory=AutoscalerProfileConfig)
    subnets: ClusterSubnets
    system_pool: SystemPoolConfig
    node_pools: dict[AgentPoolName, NodePoolConfig] = Field(default_factory=dict)
    gpu: GpuSettings = Field(default_factory=GpuSettings)
    gpu_pools: dict[AgentPoolName, GpuPoolConfig] = Field(default_factory=dict)
    # Pod Sandboxing for high-risk namespaces (platform:teams.<team>.highRiskNamespaces).
    sandbox_pool: Optional[SandboxPoolConfig] = None


class TeamConfig(Model):
    # Writers: Azure Kubernetes Service RBAC Writer on each of the team's namespaces.
    entra_group_object_ids: UuidList = Field(min_length=1)
    # Readers: Azure Kubernetes Service RBAC Reader on each of the team's namespaces.
    reader_group_object_ids: UuidList = Field(default_factory=list)
    namespaces: list[NamespaceName] = Field(min_length=1)
    # HTTPS destinations the team's namespaces may reach (package mirrors, model hubs): the
    # firewall allows them, and a Cilium FQDN policy lets only these namespaces out to them.
    egress_fqdns: list[Fqdn] = Field(default_factory=list)
    # Namespaces (of `namespaces`) whose pods run untrusted code: each pod must run in a Kata
    # VM (RuntimeClass kata-vm-isolation) on the cluster's sandbox pool.
    high_risk_namespaces: list[NamespaceName] = Field(default_factory=list)
    # Namespaces (of `namespaces`) where multi-node InfiniBand jobs run: they need IPC_LOCK,
    # which Pod Security's baseline forbids, so Pod Security enforces `privileged` there and the
    # platform's admission policy holds pods to baseline plus exactly IPC_LOCK (README, "Training
    # namespaces").
    training_namespaces: list[NamespaceName] = Field(default_factory=list)


class AzurePolicyConfig(Model):
    """The Azure Policy add-on's built-in pod security initiative, assigned on each cluster."""

    # baseline or restricted (the Pod Security Standards of the same names); none: no assignment.
    initiative: Literal["baseline", "restricted", "none"] = "baseline"
    # Audit reports violations in Azure Policy compliance; Deny rejects them (Gatekeeper).
    effect: Literal["Audit", "Deny"] = "Audit"


class AdmissionConfig(Model):
    """Admission control in workload (team) namespaces."""

    # What the platform's ValidatingAdmissionPolicies do with a violating pod: Deny rejects
    # it; Audit admits it with an audit annotation and a warning to the client.
    action: Literal["Deny", "Audit"] = "Deny"
    azure_policy: AzurePolicyConfig = Field(default_factory=AzurePolicyConfig)


class OperationsConfig(Model):
    log_retention_days: int = Field(default=90, ge=30, le=730)
    # Microsoft Defender for Containers (uses the environment's Log Analytics workspace).
    defender: bool = True
    image_cleaner_interval_hours: int = Field(default=168, ge=24, le=2160)
    secret_rotation_interval: Duration = "2m"


class FleetConfig(Model):
    """Azure Kubernetes Fleet Manager, which environments of two or more clusters join.

    The fleet owns Kubernetes upgrades: it upgrades the canary clusters first, waits, then
    the rest. The clusters' own upgrade channel is off (node OS images stay per cluster).
    """

    # Fleet auto-upgrade channel (Azure spells these capitalized).
    upgrade_channel: Literal["Stable", "Rapid"] = "Stable"
    # Latest: each region's newest image. Consistent: one image version across the fleet.
    node_image_selection: Literal["Latest", "Consistent"] = "Consistent"
    # Clusters upgraded first; defaults to the first cluster declared.
    canary_clusters: list[ShortName] = Field(default_factory=list)
    # How long the canary stage soaks before the other clusters upgrade.
    soak_hours: int = Field(default=24, ge=0, le=168)


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
# Upstream registries as ACR artifact cache names them.
UpstreamRepository = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9.-]+\.[a-z]+(/[a-z0-9._-]+)*(/\*)?$")
]
TargetRepository = Annotated[str, StringConstraints(pattern=r"^[a-z0-9._-]+(/[a-z0-9._-]+)*(/\*)?$")]


class StorageAccountConfig(Model):
    """One private storage account (e.g. `weights`, `datasets`)."""

    # Azure's global name (3-24 lowercase letters and digits); defaults to
    # st<prefix><environment><key>, which must then fit those rules.
    account_name: Optional[str] = None
    # Data Lake Gen2 (dfs endpoint, directories and POSIX ACLs). Fixed at creation.
    hierarchical_namespace: bool = False
    containers: list[ContainerName] = Field(min_length=1)


class StorageConfig(Model):
    """The environment's storage accounts and how their data is protected."""

    # Staging and prod keep zone-redundant copies; dev may weaken this to Standard_LRS.
    sku: StorageSku = "Standard_ZRS"
    # Deleted or overwritten blobs and deleted containers stay recoverable this long.
    soft_delete_days: int = Field(default=30, ge=1, le=365)
    container_soft_delete_days: int = Field(default=30, ge=1, le=365)
    # Change feed (an ordered log of every change), kept this many days; unset keeps it off.
    change_feed_days: Optional[int] = Field(default=None, ge=1, le=146000)
    # Restore block blobs to any point in this window (needs the change feed and a
    # soft-delete period longer than the window). Unset keeps it off.
    point_in_time_restore_days: Optional[int] = Field(default=None, ge=1, le=364)
    # Encrypt with a key in the environment's Key Vault instead of a Microsoft-managed key.
    customer_managed_key: bool = False
    accounts: dict[ShortName, StorageAccountConfig] = Field(default_factory=dict)


class KeyVaultConfig(Model):
    """The environment's Key Vault: RBAC authorization, purge protection, private only."""

    sku: Literal["standard", "premium"] = "standard"
    # Deleted vaults and objects stay recoverable (and their names taken) this long; with purge
    # protection a destroyed environment can reuse the vault's name only after it.
    soft_delete_retention_days: int = Field(default=90, ge=7, le=90)
    # Groups that create and rotate secrets (Key Vault Secrets Officer on this vault); the
    # program itself never holds a secret value.
    secrets_officer_group_object_ids: UuidList = Field(default_factory=list)


class CacheRuleConfig(Model):
    # e.g. ghcr.io/org/* or quay.io/org/image (upstreams that need no credentials)
    source: UpstreamRepository
    # The repository (or namespace with /*) in the platform's registry.
    target: TargetRepository


class RegistryConfig(Model):
    """The environment's container registry (Premium): the only place clusters pull from."""

    zone_redundancy: bool = True
    # Replicate to every other region that hosts clusters, so each pulls locally.
    geo_replication: bool = True
    # Untagged manifests are deleted after this many days.
    untagged_retention_days: int = Field(default=7, ge=0, le=365)
    # Pull-through cache rules for teams' upstream images, beside the platform's own.
    cache_rules: dict[Annotated[str, StringConstraints(pattern=r"^[a-zA-Z0-9-]{5,50}$")], CacheRuleConfig] = Field(
        default_factory=dict
    )


Access = Literal["read", "write"]


KafkaAccess = Literal["read", "write", "readWrite"]
# One name for the Kafka topic, the KafkaTopic resource and the event hub: lowercase letters,
# digits, dots and hyphens (a DNS subdomain, which all three accept unchanged).
TopicName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([a-z0-9.-]{0,98}[a-z0-9])?$")]


class KafkaTopicConfig(Model):
    """One topic, the same on either engine."""

    name: TopicName
    partitions: int = Field(ge=1, le=10_000)
    # Copies of each partition (Strimzi). Event Hubs replicates on its own and ignores it.
    replication_factor: int = Field(default=3, ge=1, le=100)
    # Writes with acks=all fail unless this many copies have them (Strimzi; ignored by Event Hubs).
    min_in_sync_replicas: int = Field(default=2, ge=1, le=100)
    # How long records are kept (cleanupPolicy delete) or tombstones are (compact).
    retention_hours: int = Field(default=168, ge=1, le=87_600)
    cleanup_policy: Literal["delete", "compact"] = "delete"


class KafkaClientConfig(Model):
    """A workload of platform:workloads that uses Kafka, and what it may do per topic."""

    # {topic: read | write | readWrite}
    topics: dict[str, KafkaAccess] = Field(min_length=1)
    # oauth: Entra ID bearer tokens from the workload identity (both engines).
    # tls: a Strimzi KafkaUser client certificate, for software that cannot do OAuth.
    authentication: Literal["oauth", "tls"] = "oauth"


# VM sizes whose name says they take Premium SSDs (the `s` feature letter: D8ds_v5, E16s_v5).
PremiumStorageVmSize = Annotated[
    str, StringConstraints(pattern=r"^Standard_[A-Z]+[0-9]+[a-z]*s[a-z]*(_v[0-9]+)?$")
]


class KafkaNodePoolConfig(Model):
    """The dedicated pool Kafka runs on in each hosting cluster (zones 1-3, tainted)."""

    vm_size: PremiumStorageVmSize = "Standard_E8ds_v5"
    # Nodes the autoscaler may add to each zone's pool beyond one per broker and controller
    # there, e.g. to replace a node in the zone a broker's disk lives in.
    spare_nodes_per_zone: int = Field(default=1, ge=0, le=10)
    os_disk_size_gb: int = Field(default=128, ge=30, le=2048, alias="osDiskSizeGB")
    max_surge: MaxSurge = "1"


class KafkaOauthConfig(Model):
    """The Entra ID application whose access tokens the brokers accept."""

    # Application (client) ID of the app registration that stands for the Kafka API; tokens
    # are requested for `<audience>/.default` and must carry it in `aud`. Tokens are issued by
    # the tenant of the workload identities (the subscription's), where it must be registered.
    audience: Uuid


class MirrorMakerConfig(Model):
    """Active/active mirroring between the two clusters that host Kafka."""

    enabled: bool = True
    replicas: int = Field(default=2, ge=1, le=10)


class StrimziConfig(Model):
    """Kafka on AKS, run by the Strimzi operator (KRaft, no ZooKeeper)."""

    # Clusters that host Kafka; defaults to every cluster.
    clusters: Optional[list[ShortName]] = None
    brokers: int = Field(default=3, ge=3, le=100)
    broker_storage_gib: int = Field(default=1024, ge=10, le=32767, alias="brokerStorageGiB")
    controller_storage_gib: int = Field(default=64, ge=10, le=1024, alias="controllerStorageGiB")
    broker_cpu: int = Field(default=4, ge=1, le=64)
    broker_memory_gib: int = Field(default=32, ge=4, le=512, alias="brokerMemoryGiB")
    node_pool: KafkaNodePoolConfig = Field(default_factory=KafkaNodePoolConfig)
    oauth: KafkaOauthConfig
    mirror_maker: MirrorMakerConfig = Field(default_factory=MirrorMakerConfig)


class EventHubsConfig(Model):
    """Azure Event Hubs' Kafka endpoint (Standard or higher has one)."""

    sku: Literal["Standard", "Premium"] = "Premium"
    # Throughput units (Standard: 1-40) or processing units (Premium: 1, 2, 4, 8, 16).
    capacity: int = Field(default=1, ge=1, le=40)


class KafkaConfig(Model):
    """The event backbone: one topic and client spec, either engine."""

    engine: Literal["strimzi", "eventhubs"]
    topics: list[KafkaTopicConfig] = Field(default_factory=list)
    # {workload: client}: workloads of platform:workloads that produce or consume.
    clients: dict[str, KafkaClientConfig] = Field(default_factory=dict)
    # Settings of the engine in use; the other engine's section must be left out.
    strimzi: Optional[StrimziConfig] = None
    event_hubs: Optional[EventHubsConfig] = None

    def topic(self, name: str) -> KafkaTopicConfig | None:
        return next((topic for topic in self.topics if topic.name == name), None)


class WorkloadConfig(Model):
    """A workload that signs in to Azure with Entra ID workload identity (no secrets)."""

    team: ShortName
    namespace: NamespaceName
    service_account: NamespaceName
    # Clusters it runs on; defaults to every cluster (one federated credential each).
    clusters: Optional[list[ShortName]] = None
    # {account: {container: read | write}}: Storage Blob Data Reader or Contributor on
    # exactly that container.
    storage: dict[ShortName, dict[str, Access]] = Field(default_factory=dict)
    # Secrets it reads: Key Vault Secrets User on each secret.
    key_vault_secrets: list[SecretName] = Field(default_factory=list)
    # The workload calls the Kubernetes API (e.g. an operator): its service account then
    # mounts a token and its pods may reach the API server. Off for everything else.
    kubernetes_api: bool = False


class PlatformConfig(Model):
    """Everything one stack (one environment) may set under `platform:`."""

    environment: EnvironmentName
    # Short lowercase prefix for resource names (Azure names some resources globally).
    prefix: ShortName
    # Tags on every taggable resource; `environment` is added from `environment`.
    tags: dict[str, str]
    # protect: stateful and hard-to-rebuild resources refuse deletion (pulumi `protect`).
    protect: bool = True
    entra: EntraConfig = Field(default_factory=EntraConfig)
    network: NetworkConfig
    clusters: dict[ShortName, ClusterConfig] = Field(min_length=1)
    teams: dict[ShortName, TeamConfig] = Field(default_factory=dict)
    operations: OperationsConfig = Field(default_factory=OperationsConfig)
    admission: AdmissionConfig = Field(default_factory=AdmissionConfig)
    # CanNotDelete management locks on storage accounts, the Key Vault and the registry:
    # deleting them (or a container) then needs the lock removed first, in Azure itself.
    lock_stateful_resources: bool = True
    storage: StorageConfig = Field(default_factory=StorageConfig)
    key_vault: KeyVaultConfig = Field(default_factory=KeyVaultConfig)
    registry: RegistryConfig = Field(default_factory=RegistryConfig)
    workloads: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,23}$")], WorkloadConfig] = Field(
        default_factory=dict
    )
    # Only for environments of two or more clusters, which always join a fleet.
    fleet: Optional[FleetConfig] = None
    # The event backbone; unset means no Kafka in this environment.
    kafka: Optional[KafkaConfig] = None

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

    def kafka_clusters(self) -> list[str]:
        """Clusters that host Strimzi Kafka (none on Event Hubs)."""
        strimzi = self.strimzi
        if strimzi is None:
            return []
        return [c for c in (strimzi.clusters or self.clusters) if c in self.clusters]

    def workload_clusters(self, workload: str) -> list[str]:
        return list(self.workloads[workload].clusters or self.clusters)

    def node_os_channel(self, cluster_key: str) -> str:
        configured = self.clusters[cluster_key].upgrades.node_os_channel
        return configured or ("SecurityPatch" if self.has_fleet else "NodeImage")

    def upgrade_channel(self, cluster_key: str) -> str:
        """The cluster's own auto-upgrade channel: off for fleet members (the fleet upgrades)."""
        configured = self.clusters[cluster_key].upgrades.channel
        return configured or ("none" if self.has_fleet else "patch")


REQUIRED_TAGS = ("owner", "cost-center")
