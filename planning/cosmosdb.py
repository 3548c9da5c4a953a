"""Pure rules for a Cosmos DB account (facts/cosmosdb.py): what a consistency and write-region
choice costs, and where a workload's data role applies."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from facts.cosmosdb import (
    BOUNDED_STALENESS_MINIMUM,
    DATA_ROLES,
    RPO_BOUNDED,
    RPO_MULTI_REGION,
    RPO_SINGLE_REGION,
    RPO_STRONG,
    STRONG_WRITES_SURVIVE_REGION_LOSS_FROM,
)
from stackconfig.model import CosmosDbConfig, PlatformConfig


def consistency_problems(consistency: str, regions: int, multi_region_writes: bool) -> list[str]:
    """Why this combination is refused (Azure refuses it, or it loses what config asked for)."""
    found = []
    if consistency == "Strong" and multi_region_writes:
        found.append("strong consistency cannot be combined with multiple write regions (Azure refuses it)")
    if consistency == "Strong" and 1 < regions < STRONG_WRITES_SURVIVE_REGION_LOSS_FROM:
        found.append(
            f"strong consistency over {regions} regions stops writes when either region is lost; "
            f"keeping writes through a region's loss takes {STRONG_WRITES_SURVIVE_REGION_LOSS_FROM} or more"
        )
    return found


def rpo(consistency: str, regions: int) -> str:
    """What a region's loss may cost of acknowledged writes, by Azure's table (facts/cosmosdb.py)."""
    if regions < 2:
        return RPO_SINGLE_REGION
    if consistency == "Strong":
        return RPO_STRONG
    if consistency == "BoundedStaleness":
        return RPO_BOUNDED
    return RPO_MULTI_REGION


def role_scope(account_id: str, database: str | None = None, container: str | None = None) -> str:
    """A data-role assignment's scope: the account, a database or one container (the narrowest
    the config allows is the one the platform assigns)."""
    if container is not None and database is None:
        raise ValueError("a container scope needs its database")
    scope = account_id
    if database is not None:
        scope += f"/dbs/{database}"
    if container is not None:
        scope += f"/colls/{container}"
    return scope


# Azure's rule for a database account's name (learn.microsoft.com, "Naming rules and restrictions
# for Azure resources", Microsoft.DocumentDB: 3-44 lowercase letters, digits and hyphens, starting
# with a letter or digit); it is the global host name `<name>.documents.azure.com`.
_ACCOUNT_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{2,43}$")


def account_name_problem(name: str) -> str | None:
    if _ACCOUNT_NAME.match(name):
        return None
    return f"{name!r} is not a valid Cosmos DB account name: 3-44 lowercase letters, digits and hyphens"


def account_name(config: PlatformConfig) -> str:
    """The account's name: the configured one, or `cosmos-<prefix>-<env>`."""
    settings = _settings(config)
    return settings.account_name or f"cosmos-{config.prefix}-{config.environment}"


def endpoint(account: str) -> str:
    """The account's global endpoint, which SDKs are given (they find the regional ones)."""
    return f"https://{account}.documents.azure.com:443/"


def account_regions(config: PlatformConfig) -> list[str]:
    """Its regions in failover order, the write region first: the configured ones, or every
    region with clusters, the primary first."""
    settings = _settings(config)
    if settings.regions:
        return list(settings.regions)
    return list(dict.fromkeys([config.primary_region, *(c.region for c in config.clusters.values())]))


def staleness_problems(settings: CosmosDbConfig, regions: int) -> list[tuple[str, str]]:
    """(key, why) of bounded staleness settings Azure refuses for this many regions."""
    found: list[tuple[str, str]] = []
    bounded = settings.consistency == "BoundedStaleness"
    given = {"maxStalenessPrefix": settings.max_staleness_prefix, "maxStalenessSeconds": settings.max_staleness_seconds}
    if not bounded:
        found += [(name, "applies to BoundedStaleness only") for name, value in given.items() if value is not None]
        return found
    prefix, seconds = BOUNDED_STALENESS_MINIMUM["multi" if regions > 1 else "single"]
    shape = f"{regions} region{'s' if regions > 1 else ''}"
    for name, value, minimum in (
        ("maxStalenessPrefix", settings.max_staleness_prefix, prefix),
        ("maxStalenessSeconds", settings.max_staleness_seconds, seconds),
    ):
        if value is None:
            found.append((name, f"BoundedStaleness needs it (at least {minimum:,} with {shape})"))
        elif value < minimum:
            found.append((name, f"{value:,} is below Azure's minimum of {minimum:,} with {shape}"))
    return found


@dataclass(frozen=True)
class DataGrant:
    """A workload's data role on one database or container."""

    workload: str
    database: str
    container: str | None
    access: str  # read | write

    @property
    def role(self) -> str:
        return DATA_ROLES["read" if self.access == "read" else "readWrite"]

    @property
    def scope_key(self) -> str:
        return self.database + (f"/{self.container}" if self.container else "")


def data_grants(config: PlatformConfig) -> list[DataGrant]:
    """Every workload's Cosmos DB grant, as config gives it."""
    found = []
    for workload, spec in config.workloads.items():
        for scope, access in spec.cosmos_db.items():
            database, _, container = scope.partition("/")
            found.append(DataGrant(workload, database, container or None, access))
    return found


# Role assignment names are GUIDs the caller picks: derived from what they mean, so a re-run
# finds the same assignment and a changed grant is a new one.
_ASSIGNMENTS = uuid.UUID("4b0c2f57-8f7e-4f55-9a0e-0c6a39d3d1c2")


def role_assignment_id(environment: str, grant: DataGrant) -> str:
    return str(uuid.uuid5(_ASSIGNMENTS, f"{environment}/{grant.workload}/{grant.scope_key}/{grant.role}"))


def role_definition_id(account_id: str, role: str) -> str:
    return f"{account_id}/sqlRoleDefinitions/{role}"


def _settings(config: PlatformConfig) -> CosmosDbConfig:
    if config.cosmos_db is None:
        raise ValueError("platform:cosmosDb is not set")
    return config.cosmos_db
