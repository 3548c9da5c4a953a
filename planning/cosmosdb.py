"""Pure rules for a Cosmos DB account (facts/cosmosdb.py): what a consistency and write-region
choice costs, and where a workload's data role applies."""

from __future__ import annotations

from facts.cosmosdb import STRONG_WRITES_SURVIVE_REGION_LOSS_FROM


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
