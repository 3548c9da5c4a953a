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
    # Cosmos DB for NoSQL (facts/cosmosdb.py).
    "Sql": "privatelink.documents.azure.com",
    # PostgreSQL flexible server (facts/postgresql.py).
    "postgresqlServer": "privatelink.postgres.database.azure.com",
    # Azure Managed Grafana.
    "grafana": "privatelink.grafana.azure.com",
}
# Sub-resources whose endpoint registers in several zones: an Azure Monitor Private Link Scope
# (global endpoints, workspaces' ingestion and agent endpoints, and the agents' solution packs
# in Microsoft's storage).
ZONES_BY_GROUP_ID: dict[str, tuple[str, ...]] = {
    "azuremonitor": (
        "privatelink.monitor.azure.com",
        "privatelink.oms.opinsights.azure.com",
        "privatelink.ods.opinsights.azure.com",
        "privatelink.agentsvc.azure-automation.net",
        "privatelink.blob.core.windows.net",
    ),
}


def zones_of(group_id: str) -> tuple[str, ...]:
    """Every zone an endpoint to this sub-resource registers in."""
    return ZONES_BY_GROUP_ID.get(group_id) or (ZONE_BY_GROUP_ID[group_id],)


def api_server_zone(region: str, subzone: str | None = None) -> str:
    """The zone of private AKS API servers in a region (group ID `management`); with `subzone`,
    the subzone `<subzone>.privatelink.<region>.azmk8s.io`, which AKS accepts in its place
    (learn.microsoft.com/azure/aks/private-clusters, "Configure a private DNS zone"; the subzone
    at most 32 characters). In a hub's
    shared zones each environment has its own, so rights on it reach no other environment's
    API server records."""
    return f"{subzone + '.' if subzone else ''}privatelink.{region}.azmk8s.io"


def zone_config_name(zone: str) -> str:
    """A zone group's config name: the zone with dots as hyphens, as the portal names it."""
    return zone.replace(".", "-")
