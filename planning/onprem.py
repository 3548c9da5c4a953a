"""What the platform gives an on-premises cluster from Azure (docs/hybrid.md), as plain values: the
cluster extensions it installs, and what the site's agents may reach through the region's firewall.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Network
from typing import Literal
from urllib.parse import urlsplit

from facts import arc
from facts.gpu import ACCELERATOR_LABEL, GPU_VM_SIZES, LABEL_PREFIX, POOL_LABEL, PURPOSE_LABEL
from planning import kafka as kafka_plan
from planning.egress import InboundRule, NetworkRule, monitoring_fqdns
from stackconfig.model import OnPremClusterConfig, OnPremGpuPoolConfig, PlatformConfig


@dataclass(frozen=True)
class ExtensionSpec:
    """One cluster extension on the connected cluster."""

    name: str
    extension_type: str
    # Pinned (no automatic minor upgrade), or None: the Stable train's minor upgrades.
    version: str | None
    release_namespace: str


@dataclass(frozen=True)
class SitePool:
    """A site's GPU pool as the platform counts it."""

    name: str
    nodes: int
    gpus_per_node: int
    vcpus: int
    memory_gib: int
    infiniband: bool
    gpu_model: str
    gpu_memory_gb: int
    labels: dict[str, str]
    taints: tuple[str, ...]

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def node_labels(self) -> dict[str, str]:
        """What every server of the pool carries: the labels AKS's GPU pools carry (planning/gpu.py,
        which the platform's jobs and flavors select), and the pool's own. The site sets them."""
        return {
            ACCELERATOR_LABEL: "nvidia",
            POOL_LABEL: self.name,
            f"{LABEL_PREFIX}/gpu-model": self.gpu_model,
            f"{LABEL_PREFIX}/gpu-memory-gb": str(self.gpu_memory_gb),
            f"{LABEL_PREFIX}/gpu-count": str(self.gpus_per_node),
            PURPOSE_LABEL: "training",
            f"{LABEL_PREFIX}/infiniband": str(self.infiniband).lower(),
            **self.labels,
        }


def site_pool(name: str, pool: OnPremGpuPoolConfig) -> SitePool:
    """The pool's shape: its Azure size's (facts/gpu.py, facts/vm_sizes.py), or its description
    (validation/checks/onprem.py refuses a pool with neither)."""
    if pool.size is not None:
        size = GPU_VM_SIZES[pool.size]
        shape = (size.gpus, size.facts.vcpus, size.memory_gib, size.infiniband, size.gpu_model, size.gpu_memory_gb)
    else:
        shape = (pool.gpus_per_node, pool.vcpus, pool.memory_gib, pool.infiniband, pool.gpu_model, pool.gpu_memory_gb)  # type: ignore[assignment]
    gpus, vcpus, memory, infiniband, model, gpu_memory = shape
    return SitePool(
        name, pool.nodes, int(gpus), int(vcpus), int(memory), bool(infiniband), str(model), int(gpu_memory),
        dict(pool.labels), tuple(pool.taints),
    )  # fmt: skip


def site_pools(site: OnPremClusterConfig) -> list[SitePool]:
    return [site_pool(name, pool) for name, pool in site.gpu_pools.items()]


def site_extensions(site: OnPremClusterConfig) -> list[ExtensionSpec]:
    """Governance (Azure Policy, Defender where the distribution has it), observability (Container
    Insights, managed Prometheus) and Flux, which brings the platform's baseline."""
    found = [
        ExtensionSpec("azurepolicy", *arc.POLICY_EXTENSION, "kube-system"),
        ExtensionSpec("azuremonitor-containers", *arc.CONTAINER_INSIGHTS_EXTENSION, "azuremonitor-containers"),
        ExtensionSpec("azuremonitor-metrics", *arc.METRICS_EXTENSION, "kube-system"),
        ExtensionSpec("flux", *arc.FLUX_EXTENSION, "flux-system"),
    ]
    if site.distribution in arc.DEFENDER_DISTRIBUTIONS:
        found.append(ExtensionSpec("microsoft-defender", *arc.DEFENDER_EXTENSION, "mdc"))
    return found


def site_egress_fqdns(region: str) -> tuple[str, ...]:
    """What a site's servers (and its API server's host) must reach in Azure over HTTPS, through
    the site's own egress: Arc's agents (without cluster connect or custom locations), Azure
    Policy's extension and the monitoring endpoints (facts/arc.py). The site's internet traffic does
    not cross the environment's firewalls: it leaves at the site, or at the hub (its owner's)."""
    agents = tuple(fqdn.format(region=region) for fqdn in arc.AGENT_FQDNS)
    return tuple(dict.fromkeys((*agents, *arc.POLICY_FQDNS, *monitoring_fqdns(region))))


# Azure Firewall's default for what it does not SNAT: IANA's private ranges (RFC 1918) and the
# shared address space (RFC 6598): learn.microsoft.com/azure/firewall/snat-private-range.
FIREWALL_PRIVATE_RANGES = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")


def site_api_rules(config: PlatformConfig, region: str) -> list[NetworkRule]:
    """What a region's firewall lets through to the sites: the region's dispatchers (their nodes:
    Kueue's MultiKueue controller and the token refresher) to each site's API server, and nothing
    else; sites reach Azure over the hub, never through a spoke's firewall."""
    dispatchers = [config.clusters[k] for k in config.jobs.dispatchers if config.clusters[k].region == region]
    sources = tuple(
        str(subnet)
        for cluster in dispatchers
        for subnet in (cluster.subnets.system, cluster.subnets.nodes, cluster.subnets.pods)
        if subnet is not None
    )
    if not sources:
        return []
    rules = []
    for key in config.dispatch_sites():
        server = config.on_prem_clusters[key].api_server
        port = urlsplit(server.url).port or 443
        rules.append(NetworkRule(f"site-{key}-api-server", ("TCP",), sources, (str(server.address),), (str(port),)))
    return rules


def site_kafka_rules(config: PlatformConfig, region: str) -> list[NetworkRule]:
    """What a region's firewall lets in from the sites: their servers to the listener for other
    networks of the region's Kafka that serves them (its bootstrap and brokers' load balancers
    take addresses of the host's node subnet), on that listener's port. The hub's gateway routes
    the node subnet through this firewall (firewall_routed_subnets), whose default deny holds the
    rest."""
    rules = []
    for host in config.kafka_clusters():
        clients = tuple(kafka_plan.site_peer_ranges(config, host))
        if config.clusters[host].region == region and clients:
            nodes = str(config.clusters[host].subnets.nodes)
            port = str(kafka_plan.REPLICATION_PORT)
            rules.append(NetworkRule(f"sites-to-kafka-{host}", ("TCP",), clients, (nodes,), (port,)))
    return rules


def firewall_routed_subnets(config: PlatformConfig, region: str) -> tuple[str, ...]:
    """The subnets of a region whose traffic leaves through its firewall (the clusters' system,
    nodes and pods subnets), with sites: what the hub's gateway must route to that firewall, so a
    site's traffic to them crosses the firewall that their answers cross (no route: the gateway
    sends it straight to the spoke, past the firewall, which denies the answers it never saw the
    start of; the firewall's default deny then applies to anything a site starts). The
    private-endpoint subnet has no route through the firewall: a site reaches it directly."""
    if not config.on_prem_clusters or config.network.egress.outbound_type != "userDefinedRouting":
        return ()
    return tuple(
        str(subnet)
        for cluster in config.clusters.values()
        if cluster.region == region
        for subnet in (cluster.subnets.system, cluster.subnets.nodes, cluster.subnets.pods)
        if subnet is not None
    )


def firewall_private_ranges(config: PlatformConfig) -> tuple[str, ...] | None:
    """The ranges a region's firewall does not SNAT, with sites: its default less the on-premises
    ranges. Traffic to a site leaves with the firewall's address, so the site's answers come back
    to the firewall that saw the request: the hub's gateway routes a spoke's own ranges straight to
    the spoke (peering), which would bypass the stateful firewall on the way back and drop the
    connection. None: the default (no sites)."""
    if not config.dispatch_sites():
        return None
    ranges = [IPv4Network(r) for r in FIREWALL_PRIVATE_RANGES]
    for on_premises in config.network.on_premises_ranges:
        ranges = [
            piece
            for r in ranges
            for piece in (r.address_exclude(on_premises) if on_premises.subnet_of(r) else (r,))
            if not piece.subnet_of(on_premises)
        ]
    return tuple(str(r) for r in sorted(ranges))


# What a site's workloads reach in Azure's private endpoints (HTTPS: blob, Key Vault, Cosmos DB;
# Event Hubs' Kafka port; PostgreSQL).
SITE_ENDPOINT_PORTS = ("443", "9093", "5432")


def on_premises_inbound(config: PlatformConfig, role: str, kafka_host: str | None = None) -> tuple[InboundRule, ...]:
    """What the on-premises ranges may reach in a region's subnets, with sites: the servers of the
    sites whose workloads sign in (their pods leave from the servers' addresses) reach the private
    endpoints on the data ports, and the node subnet of the cluster whose Kafka serves them
    (`kafka_host`: the listener's load balancers take their addresses there) on that listener's
    port; nothing else of the VNet: a cluster's subnets take nothing else from on-premises
    (gateway transit advertises the whole VNet to the sites, and an NSG's default rule admits
    every VirtualNetwork range, the on-premises routes included)."""
    if not config.on_prem_clusters or not config.network.on_premises_ranges:
        return ()
    routed = list(config.network.on_premises_ranges)
    # A site's pods leave from its servers' addresses where its CNI masquerades; where it does not,
    # from its pod range, which need not be inside the on-premises ranges.
    pods = [
        site.pod_cidr
        for site in config.on_prem_clusters.values()
        if not any(site.pod_cidr.subnet_of(r) for r in routed)
    ]
    ranges = tuple(str(r) for r in dict.fromkeys([*routed, *pods]))
    rules: list[InboundRule] = []
    if role == "privateEndpoints":
        servers = tuple(
            str(r) for site in config.on_prem_clusters.values() if site.workload_identity for r in site.node_ranges
        )
        if servers:
            rules.append(InboundRule("sites-to-endpoints", 3800, "Allow", "Tcp", servers, SITE_ENDPOINT_PORTS))
    if kafka_host is not None and (clients := tuple(kafka_plan.site_peer_ranges(config, kafka_host))):
        rules.append(InboundRule("sites-to-kafka", 3800, "Allow", "Tcp", clients, (str(kafka_plan.REPLICATION_PORT),)))
    rules.append(InboundRule("deny-on-premises", 3900, "Deny", "*", ranges, ("*",)))
    return tuple(rules)


# --- What fails with a site (docs/hybrid.md, "When a site fails") ---------------------------
SiteScenario = Literal["site", "link"]
SITE_SCENARIOS: tuple[SiteScenario, ...] = ("site", "link")


@dataclass(frozen=True)
class SiteCell:
    status: str  # keeps | degrades | lost
    what: str


@dataclass(frozen=True)
class SiteRow:
    service: str
    cells: dict[SiteScenario, SiteCell]


# Facts: Kueue v0.19.2's MultiKueue keeps a workload admitted for `workerLostTimeout` after its
# worker is lost, then requeues it (apis/config/v1beta2/configuration_types.go; the platform sets
# 15m: planning/gpu_stack.py); Arc marks a connected cluster Offline after 15 minutes without a
# heartbeat and its agents keep what they run, their managed identity certificate lasting 90 days
# offline (conceptual-connectivity-modes.md); a workload identity token is an Entra ID token the
# site's pods fetch over the link (workload-identity.md).
SITE_FAILURES: tuple[SiteRow, ...] = (
    SiteRow(
        "Jobs at the site",
        {
            "site": SiteCell(
                "lost",
                "the site's running jobs stop; after MultiKueue's workerLostTimeout (15 minutes) the dispatcher "
                "requeues them on a worker that remains, where they resume from their last checkpoint in Blob",
            ),
            "link": SiteCell(
                "degrades",
                "running jobs keep running, but the dispatcher cannot see them: after workerLostTimeout (15 "
                "minutes) it requeues them elsewhere, so a job may run twice. When the link returns, Kueue "
                "v0.19.2 does not reconcile two copies: the site's may count as the admitted one (its result "
                "finishes the job, or it stays and the newer copy is deleted). Stop the site's copies before "
                "the link returns; jobs that checkpoint to one path must tolerate a second writer",
            ),
        },
    ),
    SiteRow(
        "Workloads' Azure access from the site (storage, Key Vault, Kafka)",
        {
            "site": SiteCell("lost", "with the site"),
            "link": SiteCell(
                "lost",
                "the private endpoints and Entra ID are reached over the link: tokens are not renewed and data "
                "is not reached; jobs wait for it or fail",
            ),
        },
    ),
    SiteRow(
        "Governance (Azure Policy's constraints, Defender)",
        {
            "site": SiteCell("lost", "with the site"),
            "link": SiteCell(
                "degrades",
                "Gatekeeper keeps the constraints it holds but fails open if its own webhook is down; new "
                "assignments and compliance reports wait for the link; after 90 days without it the "
                "connected cluster's identity certificate expires and the site must be onboarded again",
            ),
        },
    ),
    SiteRow(
        "Observability (Container Insights, managed Prometheus)",
        {
            "site": SiteCell("lost", "with the site; its last data stays in the region's workspaces"),
            "link": SiteCell(
                "degrades",
                "the agents buffer what they can and send it when the link returns; Arc shows the cluster "
                "Offline after 15 minutes",
            ),
        },
    ),
    SiteRow(
        "Azure clusters, data and queues",
        {
            "site": SiteCell(
                "keeps", "nothing in Azure depends on the site; its jobs' quota returns to the dispatcher"
            ),
            "link": SiteCell("keeps", "as when the site is lost"),
        },
    ),
)
