"""What may leave the environment: the Azure Firewall's allowlist, as plain data.

With `outboundType: userDefinedRouting` every node's traffic to the internet goes through
the region's Azure Firewall, whose policy allows, over HTTPS only:

- what AKS itself needs: the `AzureKubernetesService` FQDN tag (MCR for AKS's own images,
  the node image and package endpoints, Entra ID sign-in);
- the monitoring endpoints the cluster's add-ons send to (Container insights, managed
  Prometheus, Azure Policy, Defender when it is on);
- the environment's `allowedFqdns` and the union of the teams' `egressFqdns`.

Everything else is denied. The firewall sees node addresses (pods are SNATed), so it holds
the environment-wide union; which namespace may use which destination is decided in the
cluster by Cilium FQDN policies (planning/network_policy.py).

Data-plane services (storage, Key Vault, registry, Event Hubs) are reached over private
endpoints inside the VNet and never through the firewall; public registries are never
allowed, since every image is pulled through the platform's registry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from facts import lustre
from planning.gpu import has_infiniband

if TYPE_CHECKING:  # stackconfig's checks import this module
    from stackconfig.model import ClusterConfig

# The FQDN tag Azure maintains for AKS's required outbound destinations.
AKS_FQDN_TAG = "AzureKubernetesService"


# Required FQDNs of the add-ons every cluster runs, HTTPS only, as the union of AKS's
# "Outbound network and FQDN rules" (Azure Monitor for containers, Azure Policy, Defender)
# and Azure Monitor's "Kubernetes monitoring firewall" page. The FQDN tag already holds Entra ID
# sign-in and MCR.
def monitoring_fqdns(region: str) -> tuple[str, ...]:
    return (
        "dc.services.visualstudio.com",
        "*.ods.opinsights.azure.com",
        "*.oms.opinsights.azure.com",
        "*.monitoring.azure.com",
        "global.handler.control.monitor.azure.com",
        f"{region}.handler.control.monitor.azure.com",
        f"{region}.ingest.monitor.azure.com",
        "*.ingest.monitor.azure.com",
        "*.metrics.ingest.monitor.azure.com",
        # Azure Policy add-on.
        "data.policy.core.windows.net",
        "store.policy.core.windows.net",
    )


# Microsoft Defender for Containers' sensor sends its runtime data here (AKS's "Outbound network
# and FQDN rules", Microsoft Defender for Containers: login.microsoftonline.com, the two
# opinsights names above and this one), only where the environment runs Defender.
DEFENDER_FQDNS = ("*.cloud.defender.microsoft.com",)


# Registries (and their blob hosts) that images must never come from directly: the
# platform's registry caches what teams need (platform:registry.cacheRules).
PUBLIC_REGISTRY_DOMAINS = (
    "docker.io",
    "docker.com",
    "ghcr.io",
    "pkg-containers.githubusercontent.com",
    "quay.io",
    "registry.k8s.io",
    "k8s.gcr.io",
    "gcr.io",
    "pkg.dev",
    "nvcr.io",
    "public.ecr.aws",
    "azurecr.io",
    "mcr.microsoft.com",
)


def _domain(fqdn: str) -> str:
    return fqdn.removeprefix("*.")


def reaches_public_registry(fqdn: str) -> str | None:
    """The public registry domain `fqdn` would open, if any (a wildcard above one counts)."""
    domain = _domain(fqdn)
    for registry in PUBLIC_REGISTRY_DOMAINS:
        if domain == registry or domain.endswith("." + registry):
            return registry
        if fqdn.startswith("*.") and registry.endswith("." + domain):
            return registry
    return None


@dataclass(frozen=True)
class ApplicationRule:
    """One application rule of the firewall policy: HTTPS to an FQDN tag or to host names."""

    name: str
    fqdn_tags: tuple[str, ...] = ()
    fqdns: tuple[str, ...] = ()
    # AKS's tag covers a few plain-HTTP endpoints (e.g. the Ubuntu package mirrors).
    http: bool = False
    # Where the rule applies: these ranges (a file system's subnet), or the clusters' subnets.
    sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class NetworkRule:
    """A network rule: TCP or UDP from `sources` to service tags (or addresses) on ports."""

    name: str
    protocols: tuple[str, ...]
    sources: tuple[str, ...]
    destinations: tuple[str, ...]
    ports: tuple[str, ...]


@dataclass(frozen=True)
class InboundRule:
    """An NSG rule on a subnet's inbound side: `sources` may reach it on `ports` (all: `*`)."""

    name: str
    priority: int
    access: str  # Allow | Deny
    protocol: str  # Tcp | Udp | *
    sources: tuple[str, ...]
    ports: tuple[str, ...]


def lustre_inbound(subnet: str, clients: list[str]) -> tuple[InboundRule, ...]:
    """Who may reach a Managed Lustre subnet: its training clusters' nodes on Lustre's ports, the
    file system itself on anything (amlfs-prerequisites.md: all traffic within the subnet), Azure
    Monitor (configure-network-security-group.md); nothing else of the VNet, the peered regions
    or the hub (Azure's default rule would let them in on every port)."""
    return (
        InboundRule("lustre-clients", 100, "Allow", "Tcp", tuple(clients), lustre.LUSTRE_PORTS),
        InboundRule("lustre-itself", 110, "Allow", "*", (subnet,), ("*",)),
        InboundRule("azure-monitor", 120, "Allow", "Tcp", ("AzureMonitor",), ("*",)),
        InboundRule("deny-virtual-network", 4000, "Deny", "*", ("VirtualNetwork",), ("*",)),
    )


def lustre_rules(subnet: str) -> tuple[ApplicationRule, list[NetworkRule]]:
    """What a Managed Lustre file system's subnet must reach through the firewall, and no other
    subnet (facts/lustre.py)."""
    return (
        ApplicationRule("lustre", fqdns=lustre.EGRESS_FQDNS, http=True, sources=(subnet,)),
        [
            NetworkRule("lustre-services", ("TCP",), (subnet,), lustre.EGRESS_SERVICE_TAGS, ("443",)),
            NetworkRule("lustre-ntp", ("UDP",), (subnet,), (lustre.NTP_ADDRESS,), (lustre.NTP_PORT,)),
        ],
    )


# NVIDIA's driver containers (the GPU Operator's with `gpu.driver: operator`, the Network
# Operator's DOCA driver for InfiniBand) build kernel modules against the node's kernel
# headers, which they fetch from Ubuntu's archives (apt, plain HTTP).
DRIVER_BUILD_FQDNS = ("azure.archive.ubuntu.com", "archive.ubuntu.com", "security.ubuntu.com")


def builds_drivers(cluster: ClusterConfig) -> bool:
    """Whether driver containers on this cluster's nodes compile against kernel headers."""
    return bool(cluster.gpu_pools) and (cluster.gpu.driver == "operator" or has_infiniband(cluster))


def application_rules(
    region: str,
    *,
    allowed_fqdns: list[str],
    team_fqdns: dict[str, list[str]],
    driver_builds: bool = False,
    lustre_subnet: str | None = None,
    defender: bool = False,
) -> list[ApplicationRule]:
    """The firewall policy's allow rules in one region, in the order it lists them.

    Nodes need no network rules: they reach the API server through konnectivity or API server
    VNet integration (AKS's egress rules), and DNS goes to Azure's resolver. A Managed Lustre
    file system's subnet has rules of its own (`lustre_rules`), from that subnet only.
    """
    rules = [
        ApplicationRule("aks", fqdn_tags=(AKS_FQDN_TAG,), http=True),
        ApplicationRule("monitoring", fqdns=monitoring_fqdns(region)),
    ]
    if defender:
        rules.append(ApplicationRule("defender", fqdns=DEFENDER_FQDNS))
    if driver_builds:
        rules.append(ApplicationRule("gpu-driver-builds", fqdns=DRIVER_BUILD_FQDNS, http=True))
    if allowed_fqdns:
        rules.append(ApplicationRule("platform", fqdns=tuple(dict.fromkeys(allowed_fqdns))))
    for team, fqdns in team_fqdns.items():
        if fqdns:
            rules.append(ApplicationRule(f"team-{team}", fqdns=tuple(dict.fromkeys(fqdns))))
    if lustre_subnet is not None:
        rules.append(lustre_rules(lustre_subnet)[0])
    return rules
