"""Cosmos DB for NoSQL: one private, keyless account per environment (docs/databases.md)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field, StringConstraints

from facts.cosmosdb import CONSISTENCY_LEVELS
from stackconfig.model.base import Model, RegionName

# Database and container ids: the platform keeps them to names that are also safe in an ARM path
# and a role scope (Cosmos DB itself allows more).
CosmosName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,62}$")]
PartitionKeyPath = Annotated[str, StringConstraints(pattern=r"^/[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")]
Consistency = Literal[CONSISTENCY_LEVELS]  # type: ignore[valid-type]
CosmosBackup = Literal["periodic", "continuous7Days", "continuous30Days"]


class CosmosContainerConfig(Model):
    """One container: its partition key, fixed at creation."""

    partition_key: PartitionKeyPath = Field(
        default="/id",
        description="The partition key path, e.g. `/runId`; fixed at creation (a change is a new container).",
    )
    default_ttl_seconds: Optional[int] = Field(
        default=None, ge=1, le=2_147_483_647, description="Items expire this long after their last write. Unset: never."
    )


class CosmosDatabaseConfig(Model):
    """One database: its containers and the throughput they share."""

    autoscale_max_throughput: int = Field(
        default=1000,
        ge=1000,
        le=1_000_000,
        multiple_of=1000,
        description="Autoscale RU/s the containers share, scaling down to a tenth of it (ignored by `serverless`).",
    )
    containers: dict[CosmosName, CosmosContainerConfig] = Field(
        min_length=1, description="Containers by name (lowercase letters, digits and hyphens)."
    )


class CosmosDbConfig(Model):
    """The environment's Cosmos DB account: Entra ID only (no keys), private endpoints only."""

    account_name: Optional[str] = Field(
        default=None,
        description="Azure's globally unique name, 3-44 lowercase letters, digits and hyphens. Unset: "
        "`cosmos-<prefix>-<env>`.",
    )
    capacity: Literal["provisioned", "serverless"] = Field(
        default="provisioned",
        description="`provisioned` (autoscale throughput per database) or `serverless` (pay per request: one "
        "region, no zone redundancy choice after creation; dev's cheapest secure shape). Fixed at creation.",
    )
    regions: Optional[list[RegionName]] = Field(
        default=None,
        description="Its regions, the write region first; each is a failover target in this order (automatic "
        "failover is on with two or more). Unset: every region with clusters, the primary first.",
    )
    zone_redundant: bool = Field(
        default=True,
        description="Zone redundancy in every region; Azure sets it only when a region is added, so a change "
        "means removing and re-adding the region (the review shows it).",
    )
    consistency: Consistency = Field(
        default="Session",
        description="The default consistency: `Strong`, `BoundedStaleness`, `Session`, `ConsistentPrefix` or "
        "`Eventual`. Strong with `multiRegionWrites` is refused, and over two regions it stops writes when "
        "either is lost (three or more keep them).",
    )
    max_staleness_prefix: Optional[int] = Field(
        default=None,
        ge=1,
        le=2_147_483_647,
        description="With `BoundedStaleness`: writes a read may lag (at least 100,000 with several regions, 10 "
        "with one).",
    )
    max_staleness_seconds: Optional[int] = Field(
        default=None,
        ge=5,
        le=86_400,
        description="With `BoundedStaleness`: seconds a read may lag (at least 300 with several regions).",
    )
    multi_region_writes: bool = Field(
        default=False,
        description="Every region takes writes (conflicts resolved last-writer-wins). Needs `backup: periodic` "
        "and a consistency other than Strong.",
    )
    backup: CosmosBackup = Field(
        default="continuous7Days",
        description="`continuous7Days` (free) or `continuous30Days` (point-in-time restore to a new account), "
        "or `periodic` (geo-redundant copies every 4 hours, kept 8). Periodic to continuous is one-way.",
    )
    databases: dict[CosmosName, CosmosDatabaseConfig] = Field(
        min_length=1, description="Databases by name, each with its containers."
    )
