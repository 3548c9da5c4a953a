"""What the platform gives an on-premises cluster from Azure (docs/hybrid.md), as plain values: the
cluster extensions it installs, and what the site's agents may reach through the region's firewall.
"""

from __future__ import annotations

from dataclasses import dataclass

from facts import arc
from planning.egress import monitoring_fqdns
from stackconfig.model import OnPremClusterConfig, PlatformConfig


@dataclass(frozen=True)
class ExtensionSpec:
    """One cluster extension on the connected cluster."""

    name: str
    extension_type: str
    # Pinned (no automatic minor upgrade), or None: the Stable train's minor upgrades.
    version: str | None
    release_namespace: str


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
    """What a site's servers reach in Azure over HTTPS: Arc's agents (without cluster connect or
    custom locations), Azure Policy's extension and the monitoring endpoints (facts/arc.py)."""
    agents = tuple(fqdn.format(region=region) for fqdn in arc.AGENT_FQDNS)
    return tuple(dict.fromkeys((*agents, *arc.POLICY_FQDNS, *monitoring_fqdns(region))))


def region_sites(config: PlatformConfig, region: str) -> dict[str, tuple[str, ...]]:
    """The sites attached to `region`, by key, with their servers' ranges."""
    return {
        key: tuple(str(r) for r in site.node_ranges)
        for key, site in config.on_prem_clusters.items()
        if site.region == region
    }
