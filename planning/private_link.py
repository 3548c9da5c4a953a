"""Private Link: which Private DNS zone serves each private endpoint sub-resource.

From Microsoft's "Azure Private Endpoint private DNS zone values" (public cloud); the
facts table in the shared reference lists the same pairs.
"""

from __future__ import annotations

# Private endpoint sub-resource (groupId) -> the zone its A records go into.
ZONE_BY_GROUP_ID: dict[str, str] = {
    "blob": "privatelink.blob.core.windows.net",
    "dfs": "privatelink.dfs.core.windows.net",
    "vault": "privatelink.vaultcore.azure.net",
    "registry": "privatelink.azurecr.io",
    # Event Hubs, including its Kafka endpoint.
    "namespace": "privatelink.servicebus.windows.net",
}


def api_server_zone(region: str) -> str:
    """The zone of private AKS API servers in a region (group ID `management`)."""
    return f"privatelink.{region}.azmk8s.io"


def zone_config_name(zone: str) -> str:
    """A zone group's config name: the zone with dots as hyphens, as the portal names it."""
    return zone.replace(".", "-")
