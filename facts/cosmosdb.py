"""Azure Cosmos DB for NoSQL: the names, roles and consistency rules the platform relies on.

Sources (MicrosoftDocs/azure-databases-docs, articles/cosmos-db/):
- how-to-configure-private-endpoints.md: sub-resource `Sql`, zone `privatelink.documents.azure.com`,
  one address for the global endpoint and one per region, kept by a private DNS zone group.
- nosql/security/how-to-setup-rbac.md and how-to-grant-data-plane-role-based-access.md: the
  built-in data roles, assignment scopes (account, `/dbs/<db>`, `/dbs/<db>/colls/<container>`),
  that control-plane roles give no data access, and that databases and containers are made through
  ARM, not the data plane.
- consistency-levels.md: strong consistency with multiple write regions is refused; bounded
  staleness minimums per account shape; RPO per configuration.
- Microsoft Learn, "Resiliency recommendations for Azure Cosmos DB for NoSQL": strong consistency
  keeps writes through a region's loss only with three or more regions.
- migrate-continuous-backup.md: periodic to continuous backup is one-way.
- pulumi-azure-native 3.29.0 `cosmosdb.DatabaseAccount` and `SqlResource*` (API 2025-10-15).
"""

from __future__ import annotations

PRIVATE_ENDPOINT_GROUP = "Sql"
PRIVATE_DNS_ZONE = "privatelink.documents.azure.com"

# Built-in data-plane role definitions (`<account ID>/sqlRoleDefinitions/<id>`).
DATA_ROLES: dict[str, str] = {
    "read": "00000000-0000-0000-0000-000000000001",  # Cosmos DB Built-in Data Reader
    "readWrite": "00000000-0000-0000-0000-000000000002",  # Cosmos DB Built-in Data Contributor
}

# What each built-in data role allows (how-to-setup-rbac.md, "Built-in role definitions").
DATA_ROLE_NAMES = {
    DATA_ROLES["read"]: "Cosmos DB Built-in Data Reader",
    DATA_ROLES["readWrite"]: "Cosmos DB Built-in Data Contributor",
}
DATA_ROLE_ACTIONS: dict[str, tuple[str, ...]] = {
    DATA_ROLES["read"]: (
        "Microsoft.DocumentDB/databaseAccounts/readMetadata",
        "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/executeQuery",
        "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/readChangeFeed",
        "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/read",
    ),
    DATA_ROLES["readWrite"]: (
        "Microsoft.DocumentDB/databaseAccounts/readMetadata",
        "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/*",
        "Microsoft.DocumentDB/databaseAccounts/sqlDatabases/containers/items/*",
    ),
}
# Control-plane actions that lead to the data: assigning data roles, or rewriting the account
# (turning local auth back on, then listing its keys).
DATA_ROLE_ASSIGNMENTS_WRITE = "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments/write"
ACCOUNT_WRITE = "Microsoft.DocumentDB/databaseAccounts/write"

CONSISTENCY_LEVELS = ("Strong", "BoundedStaleness", "Session", "ConsistentPrefix", "Eventual")
# Strong consistency keeps writes through the loss of one region from this many regions on.
STRONG_WRITES_SURVIVE_REGION_LOSS_FROM = 3
# Bounded staleness minimums: (writes behind, seconds behind), single region and multi-region.
BOUNDED_STALENESS_MINIMUM = {"single": (10, 5), "multi": (100_000, 300)}


def token_scope(account: str) -> str:
    """The Entra ID scope a data-plane client asks a token for."""
    return f"https://{account}.documents.azure.com/.default"


# RPO by account shape (consistency-levels.md, "Consistency levels and data durability"): what a
# region's loss may cost of acknowledged writes. Azure no longer publishes an RTO: failover of a
# write region takes as long as Microsoft takes to declare the outage (reliability-cosmos-db.md).
RPO_SINGLE_REGION = "under 240 minutes"
RPO_MULTI_REGION = "under 15 minutes"
RPO_STRONG = "0"
RPO_BOUNDED = "K writes or T seconds (maxStalenessPrefix, maxStalenessSeconds)"
