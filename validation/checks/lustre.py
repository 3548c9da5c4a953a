"""Azure Managed Lustre: sizes per tier, its subnet, its region's GPU clusters and their OS."""

from __future__ import annotations

from collections.abc import Iterator

from facts.aks_node import ubuntu_effective
from facts.azure_regions import REGIONS
from facts.lustre import CSI_NODE_FLAVORS, CSI_VERSION
from planning import lustre as lustre_plan
from planning import lustre_csi
from stackconfig.keys import key
from stackconfig.model import PlatformConfig
from validation.checks.common import ConfigProblem


def check_lustre(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """The sizes Azure creates per tier, a subnet of its own big enough for the size
    (amlfs-prerequisites.md), a region with GPU training clusters to read it, and nodes the
    Lustre CSI driver runs on (Ubuntu only: use-csi-driver-kubernetes.md)."""
    lustre = config.lustre
    if lustre is None:
        return
    for region, spec in lustre.file_systems.items():
        where = key("lustre", "fileSystems", region)
        problem = lustre_plan.size_problem(spec.sku, spec.capacity_tib)
        if problem:
            yield ConfigProblem(f"{where}.capacityTib", problem)
        vnet = config.network.regions.get(region)
        clusters = {k: c for k, c in config.clusters.items() if c.region == region}
        trainers = {k: c for k, c in clusters.items() if any(p.purpose == "training" for p in c.gpu_pools.values())}
        if vnet is None or not trainers:
            yield ConfigProblem(
                where, f"no cluster with a training GPU pool runs in {region}: a file system there has no reader"
            )
            continue
        subnet = vnet.subnets.lustre
        subnet_key = key("network", "regions", region, "subnets", "lustre")
        needed = lustre_plan.subnet_prefix(spec.capacity_tib)
        if subnet is None:
            yield ConfigProblem(
                subnet_key, f"the {region} file system (platform:lustre) needs a subnet of its own", cause=True
            )
        elif needed is not None and subnet.prefixlen > needed:
            yield ConfigProblem(
                subnet_key, f"{subnet} is too small for {spec.capacity_tib} TiB: Azure needs a /{needed} or larger"
            )
        zones = REGIONS.get(region)
        if zones is not None and not zones.zones:
            yield ConfigProblem(f"{where}.zone", f"{region} has no availability zones")
        pool_zones = {
            zone
            for cluster in trainers.values()
            for pool in cluster.gpu_pools.values()
            if pool.purpose == "training"
            for zone in (pool.zones or cluster.zones or [])
        }
        if pool_zones and spec.zone not in pool_zones:
            yield ConfigProblem(
                f"{where}.zone",
                f"zone {spec.zone} holds none of {region}'s training pools (zones {', '.join(sorted(pool_zones))}): "
                "their reads would cross zones",
            )
        for cluster_key, cluster in trainers.items():
            if cluster.gpu.os_sku != "Ubuntu":
                yield ConfigProblem(
                    key("clusters", cluster_key, "gpu", "osSku"),
                    f"{cluster.gpu.os_sku}: the Lustre CSI driver (v0.4.0) runs on Ubuntu nodes only, and this "
                    f"cluster's training jobs read the {region} file system",
                )
                continue
            effective = ubuntu_effective(cluster.kubernetes_version)
            builds = [flavor.os_sku_effective for flavor in CSI_NODE_FLAVORS]
            if effective not in builds:
                yield ConfigProblem(
                    key("clusters", cluster_key, "kubernetesVersion"),
                    f"{cluster.kubernetes_version}: its Ubuntu GPU nodes run {effective}, for which the Lustre CSI "
                    f"driver {CSI_VERSION} has no build ({', '.join(builds)}); its training jobs could not mount "
                    f"the {region} file system",
                )
    # A job reads the same claim wherever it runs (MultiKueue copies it unchanged, a person
    # resubmits it elsewhere): every region that trains needs a file system, or the claim is missing there.
    for cluster_key, cluster in config.clusters.items():
        trains = any(pool.purpose == "training" for pool in cluster.gpu_pools.values())
        if trains and cluster.region not in lustre.file_systems:
            yield ConfigProblem(
                key("lustre", "fileSystems", cluster.region),
                f"missing: cluster {cluster_key} trains in {cluster.region}, and without a file system there its "
                f"training namespaces have no `{lustre_csi.CLAIM}` claim, so a job that reads one never starts there",
            )
    for region, vnet in config.network.regions.items():
        if vnet.subnets.lustre is not None and region not in lustre.file_systems:
            yield ConfigProblem(
                key("network", "regions", region, "subnets", "lustre"), "no file system of platform:lustre uses it"
            )
