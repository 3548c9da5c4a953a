"""The resource groups each deployment unit puts its resources in, decided once: the delivery
project creates them and grants each layer's deploy identity Contributor on its own groups only
(planning/delivery.py), and the units build into them (components/groups.py,
`existing_group`). No layer needs Contributor on the subscription, so none can change another's
resources (docs/decisions/0006-deployment-units.md).

The rules are the builders' own: a network group per VNet region, a vault, workspace and zone
group per region with clusters (decision 0008), the registry's and the workload identities' in
the primary region, a data group per region holding a storage account or its replica, Event Hubs'
with the Event Hubs backbone, a group per cluster, and the fleet's with two or more clusters.
tests/test_deployment_units.py holds each unit's resources to exactly its groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from components.platform.context import endpoint_regions, replicas, shared_hub_zones
from planning.layers import Unit
from planning.naming import Naming
from stackconfig.model import PlatformConfig


@dataclass(frozen=True)
class Group:
    name: str
    region: str


def unit_groups(config: PlatformConfig) -> dict[Unit, list[Group]]:
    """Each unit of the environment -> the resource groups its resources go in."""
    naming = Naming(config.prefix, config.environment)
    primary = config.primary_region
    regions = endpoint_regions(config)

    def regional(region: str, purpose: str) -> Group:
        return Group(naming.regional("rg", region, purpose), region)

    foundation = [regional(r, "network") for r in config.network.regions]
    foundation += [regional(r, "ops") for r in regions]
    foundation += [regional(r, "security") for r in regions]
    foundation += [regional(primary, "registry"), regional(primary, "identity")]
    # The environment's own privatelink zones: the primary's unless the hub's zones serve it,
    # and each other region with clusters keeps its own data-plane set.
    zone_regions = [r for r in regions if r != primary] + ([] if shared_hub_zones(config) else [primary])
    foundation += [regional(r, "dns") for r in zone_regions]
    data_regions = [primary] if config.storage.accounts else []
    data_regions += [region for region, _ in replicas(config).values()]
    data = [regional(r, "data") for r in dict.fromkeys(data_regions)]
    if config.kafka is not None and config.kafka.engine == "eventhubs":
        data.append(regional(primary, "events"))
    if config.lustre is not None:
        data += [regional(region, "lustre") for region in config.lustre.file_systems]
    if config.cosmos_db is not None or config.postgresql is not None:
        data.append(Group(naming.databases_group(primary), primary))
    groups: dict[Unit, list[Group]] = {Unit("foundation"): foundation, Unit("data"): data}
    for key, cluster in config.clusters.items():
        groups[Unit("cluster", key)] = [Group(naming.name("rg", key, "cluster"), cluster.region)]
    # A site's group is the one its operators connect the cluster into (the delivery makes it and
    # the check of platform:onPremClusters holds the connected cluster's ID to its name).
    for key, site in config.on_prem_clusters.items():
        groups[Unit("cluster", key)] = [Group(naming.site_group(key), site.region)]
    groups[Unit("tenants")] = []
    if config.has_fleet:
        groups[Unit("fleet")] = [Group(naming.name("rg", "fleet"), primary)]
    return groups
