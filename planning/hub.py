"""The hub as the delivery sees it: an existing hub's IDs from config, or the names and address
plan of the minimal hub the delivery creates (components/delivery/hub.py).

A minimal hub holds what the first deploy needs of a hub and nothing more: the state's private
endpoints and the runners in one VNet, the privatelink zones every private endpoint of the
platform registers in (linked to that VNet, so the runners resolve the state, the vaults, the
registries and the API servers), and an Azure Monitor private link scope (one per DNS: a VNet
resolves the monitor zones of one scope; docs/operations.md) with its endpoint there.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from planning.private_link import ZONE_BY_GROUP_ID, ZONES_BY_GROUP_ID
from stackconfig.delivery import DeliveryConfig, MinimalHub

# Every zone the platform's and the state's private endpoints register in, once.
SHARED_ZONES: tuple[str, ...] = tuple(
    dict.fromkeys([*ZONE_BY_GROUP_ID.values(), *(z for zones in ZONES_BY_GROUP_ID.values() for z in zones)])
)
ENDPOINT_SUBNET = "snet-private-endpoints"
RUNNER_SUBNET = "snet-runners"


@dataclass(frozen=True)
class HubIds:
    endpoint_subnet_id: str
    zones_group_id: str
    vnet_id: str
    # The existing group of the state's endpoints in the hub, if any.
    endpoint_resource_group: str | None = None


@dataclass(frozen=True)
class MinimalHubPlan:
    prefix: str
    settings: MinimalHub

    @property
    def resource_group(self) -> str:
        return f"rg-{self.prefix}-hub"

    @property
    def vnet(self) -> str:
        return f"vnet-{self.prefix}-hub"

    @property
    def scope(self) -> str:
        return f"ampls-{self.prefix}-hub"

    @property
    def group_id(self) -> str:
        return f"/subscriptions/{self.settings.subscription_id}/resourceGroups/{self.resource_group}"

    @property
    def vnet_id(self) -> str:
        return f"{self.group_id}/providers/Microsoft.Network/virtualNetworks/{self.vnet}"

    @property
    def scope_id(self) -> str:
        return f"{self.group_id}/providers/microsoft.insights/privateLinkScopes/{self.scope}"

    def subnets(self) -> dict[str, str]:
        """The endpoints' and the runners' subnets: the range's first two /24s."""
        network = ipaddress.ip_network(self.settings.address_space, strict=False)
        first, second = list(network.subnets(new_prefix=24))[:2]
        return {ENDPOINT_SUBNET: str(first), RUNNER_SUBNET: str(second)}

    def ids(self) -> HubIds:
        return HubIds(f"{self.vnet_id}/subnets/{ENDPOINT_SUBNET}", self.group_id, self.vnet_id, self.resource_group)


def minimal_hub(config: DeliveryConfig) -> MinimalHubPlan | None:
    return MinimalHubPlan(config.prefix, config.hub.create) if config.hub.create else None


def hub_ids(config: DeliveryConfig) -> HubIds:
    """The hub's IDs: the configured hub's, or the minimal hub's the delivery creates."""
    created = minimal_hub(config)
    if created is not None:
        return created.ids()
    hub = config.hub
    assert hub.endpoint_subnet_id and hub.private_dns_zones_resource_group_id and hub.virtual_network_id
    return HubIds(
        hub.endpoint_subnet_id,
        hub.private_dns_zones_resource_group_id,
        hub.virtual_network_id,
        hub.endpoint_resource_group,
    )
