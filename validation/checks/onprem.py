"""On-premises clusters (platform:onPremClusters): keys apart from AKS clusters', declared teams,
ranges routed through the hub and apart from Azure's, GPU pools the platform can size, and what the
distribution supports (facts/arc.py)."""

from __future__ import annotations

from collections.abc import Iterator
from ipaddress import IPv4Network, ip_address

from pydantic.alias_generators import to_camel

from facts.arc import POLICY_UNSUPPORTED_DISTRIBUTIONS, WORKLOAD_IDENTITY_DISTRIBUTIONS
from facts.gpu import GPU_VM_SIZES
from planning.kubeconfig import AKS_SERVER_ID
from planning.naming import Naming, parse_resource_id, storage_account_name_problem
from stackconfig.keys import key
from stackconfig.model import OnPremGpuPoolConfig, PlatformConfig
from validation.checks.common import ConfigProblem

# What describes a server when no Azure size does.
DESCRIPTION_FIELDS = ("gpu_model", "gpus_per_node", "gpu_memory_gb", "vcpus", "memory_gib", "infiniband")


def _azure_ranges(config: PlatformConfig) -> list[tuple[str, IPv4Network]]:
    network = config.network
    ranges = [
        (key("network", "regions", region, "addressSpace", i), space)
        for region, vnet in network.regions.items()
        for i, space in enumerate(vnet.address_space)
    ]
    ranges += [(key("network", "podCidr"), network.pod_cidr), (key("network", "serviceCidr"), network.service_cidr)]
    if network.hub is not None:
        ranges += [(key("network", "hub", "addressSpace", i), s) for i, s in enumerate(network.hub.address_space)]
    return ranges


def _is_address(host: str) -> bool:
    try:
        ip_address(host)
    except ValueError:
        return False
    return True


def pool_problem(pool: OnPremGpuPoolConfig) -> str | None:
    """Why the platform cannot size this pool (its quotas, flavors and capacity), or None."""
    if pool.size is not None:
        if pool.size not in GPU_VM_SIZES:
            return f"{pool.size} is not a GPU size the catalogue knows (facts/gpu.py); describe the servers instead"
        return None
    missing = [name for name in DESCRIPTION_FIELDS if getattr(pool, name) is None]
    if missing:
        names = ", ".join(to_camel(name) for name in missing)
        return f"no `size` and no description of its servers: set {names}"
    return None


def check_on_prem_clusters(config: PlatformConfig) -> Iterator[ConfigProblem]:
    azure = _azure_ranges(config)
    # Two sites' servers in one range would be routed to one of them.
    seen: list[tuple[str, IPv4Network]] = []
    for name, site in config.on_prem_clusters.items():
        for i, network in enumerate(site.node_ranges):
            at = key("onPremClusters", name, "nodeRanges", i)
            for other_at, other in seen:
                if network.overlaps(other):
                    yield ConfigProblem(at, f"{network} overlaps {other_at} ({other})")
            seen.append((at, network))
    routed = list(config.network.on_premises_ranges)
    dispatch_regions = {config.clusters[k].region for k in config.jobs.dispatchers if k in config.clusters}
    naming = Naming(config.prefix, config.environment)
    audiences: dict[str, str] = {}
    hub = config.network.hub
    if config.on_prem_clusters and (hub is None or not hub.use_remote_gateways):
        yield ConfigProblem(
            key("network", "hub", "useRemoteGateways"),
            "off, with on-premises sites: the spokes learn the sites' routes from the hub's gateway (gateway "
            "transit), without which the dispatchers never reach a site and a site never reaches the endpoints",
        )
    for name, site in config.on_prem_clusters.items():
        where = key("onPremClusters", name)
        if name in config.clusters:
            yield ConfigProblem(
                where, f"{name} is also an AKS cluster's key (platform:clusters); keys name one cluster"
            )
        if site.region not in config.network.regions:
            yield ConfigProblem(f"{where}.region", f"{site.region} is none of platform:network.regions")
        if site.teams and site.region not in dispatch_regions:
            yield ConfigProblem(
                f"{where}.teams",
                f"no dispatcher (platform:jobs.dispatchers) in {site.region} sends work to the site",
            )
        for i, team in enumerate(site.teams):
            if team not in config.teams:
                yield ConfigProblem(
                    key("onPremClusters", name, "teams", i), f"team {team} is not declared under platform:teams"
                )
        if site.distribution in POLICY_UNSUPPORTED_DISTRIBUTIONS:
            yield ConfigProblem(
                f"{where}.distribution",
                f"{site.distribution}: Azure Policy's Arc extension does not support it, so the site would run "
                "without the platform's admission policies",
            )
        if site.workload_identity and site.oidc_issuer_url is None:
            yield ConfigProblem(
                f"{where}.oidcIssuerUrl",
                "missing: workloadIdentity needs the site's Arc issuer (az connectedk8s show --query "
                "oidcIssuerProfile.issuerUrl)",
            )
        if site.oidc_issuer_url is not None and not site.workload_identity:
            yield ConfigProblem(f"{where}.oidcIssuerUrl", "set without workloadIdentity: nothing would trust it")
        if not site.workload_identity:
            yield ConfigProblem(
                f"{where}.workloadIdentity",
                "off: the site's Flux reads the platform's baseline with workload identity (microsoft.flux "
                "1.15.1+); without it only a key or a SAS in Azure would do, which the platform does not hand out",
            )
        found = parse_resource_id(site.connected_cluster_id)
        if found.subscription.lower() != config.subscription_id.lower():
            yield ConfigProblem(
                f"{where}.connectedClusterId",
                f"in subscription {found.subscription}, not the environment's ({config.subscription_id}): the "
                "site's unit writes beside it with the environment's identities",
            )
        group = naming.site_group(name)
        if config.resource_groups != "delivery":
            yield ConfigProblem(
                where,
                "a site needs platform:resourceGroups: delivery: the delivery makes its group and lets the "
                "cluster layer upload its baseline there (planning/delivery.py)",
            )
        elif found.resource_group.lower() != group.lower():
            yield ConfigProblem(
                f"{where}.connectedClusterId",
                f"in group {found.resource_group}: connect the site into {group}, the group the delivery makes "
                "for it and grants the cluster layer on",
            )
        account_problem = storage_account_name_problem(naming.site_baseline_account(name))
        if account_problem:
            yield ConfigProblem(where, f"the site's baseline account: {account_problem}; shorten the key")
        if site.workload_identity and site.distribution not in WORKLOAD_IDENTITY_DISTRIBUTIONS:
            yield ConfigProblem(
                f"{where}.workloadIdentity",
                f"Arc's workload identity does not support {site.distribution} "
                f"({', '.join(sorted(WORKLOAD_IDENTITY_DISTRIBUTIONS))} only)",
            )
        audience = str(site.api_server.token_audience).lower()
        if audience == AKS_SERVER_ID:
            yield ConfigProblem(
                f"{where}.apiServer.tokenAudience",
                "AKS's server application: a token for it works on every AKS cluster, so whoever holds the site's "
                "API server could replay the dispatchers' token there; register an application for the site",
            )
        elif audience in audiences:
            yield ConfigProblem(
                f"{where}.apiServer.tokenAudience",
                f"also {audiences[audience]}'s: a token one site receives would work at the other",
            )
        audiences.setdefault(audience, name)
        host = site.api_server.url.removeprefix("https://").rsplit(":", 1)[0]
        if _is_address(host) and host != str(site.api_server.address):
            yield ConfigProblem(
                f"{where}.apiServer.address", f"{site.api_server.address} is not the URL's address ({host})"
            )
        # The servers and the API server are reached through the hub: inside its on-premises ranges.
        reached = [(key("onPremClusters", name, "nodeRanges", i), r) for i, r in enumerate(site.node_ranges)]
        reached.append((f"{where}.apiServer.address", IPv4Network(f"{site.api_server.address}/32")))
        for at, network in reached:
            if not any(network.subnet_of(r) for r in routed):
                yield ConfigProblem(
                    at, f"{network} is outside platform:network.onPremisesRanges: the hub does not route it"
                )
        for at, network in [*reached, (f"{where}.podCidr", site.pod_cidr), (f"{where}.serviceCidr", site.service_cidr)]:
            for owner, other in azure:
                if network.overlaps(other):
                    yield ConfigProblem(at, f"{network} overlaps {owner} ({other})")
        training = [ns for team in site.teams if team in config.teams for ns in config.teams[team].training_namespaces]
        if config.lustre is not None and training and site.training_data is None:
            yield ConfigProblem(
                f"{where}.trainingData",
                f"missing: {', '.join(training)} mount the claim training-data in every region (Managed Lustre), "
                "and a job MultiKueue sends to the site would wait for it forever",
            )
        for pool_name, pool in site.gpu_pools.items():
            problem = pool_problem(pool)
            if problem:
                yield ConfigProblem(f"{where}.gpuPools.{pool_name}", problem)
