"""Cosmos DB: the account's regions, consistency and backup; the workloads' data grants."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from facts.azure_regions import REGIONS
from planning import cosmosdb as cosmos_plan
from stackconfig.keys import key
from stackconfig.model import PlatformConfig
from validation.checks.common import ConfigProblem


def check_cosmos_db(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Choices Azure refuses or that lose what the config asks for (facts/cosmosdb.py):
    strong consistency with several write regions; strong over two regions; bounded staleness
    below its minimums; serverless beyond one region; continuous backup with several write
    regions (Azure's provisioning and migration pages list a single write region as a
    prerequisite, and Azure Verified Modules' account module requires periodic backup with
    multiple write locations: learn.microsoft.com/azure/cosmos-db/provision-account-continuous-backup)."""
    settings = config.cosmos_db
    if settings is None:
        yield from _grants_without_account(config)
        return
    where = partial(key, "cosmosDb")
    regions = cosmos_plan.account_regions(config)
    if settings.account_name is not None:
        problem = cosmos_plan.account_name_problem(settings.account_name)
        if problem:
            yield ConfigProblem(where("accountName"), problem)
    duplicates = sorted({r for r in regions if regions.count(r) > 1})
    if duplicates:
        yield ConfigProblem(where("regions"), f"lists {', '.join(duplicates)} twice")
    if settings.zone_redundant:
        flat = [r for r in regions if r in REGIONS and not REGIONS[r].zones]
        if flat:
            yield ConfigProblem(
                where("zoneRedundant"),
                f"{', '.join(flat)} has no availability zones: set it false, or choose regions with zones",
            )
    for reason in cosmos_plan.consistency_problems(settings.consistency, len(regions), settings.multi_region_writes):
        yield ConfigProblem(where("consistency"), reason)
    for name, reason in cosmos_plan.staleness_problems(settings, len(regions)):
        yield ConfigProblem(where(name), reason)
    if settings.multi_region_writes and settings.backup != "periodic":
        yield ConfigProblem(
            where("backup"),
            f"{settings.backup} needs a single write region (platform:cosmosDb.multiRegionWrites is true): "
            "use periodic, or write in one region",
        )
    if settings.multi_region_writes and len(regions) < 2:
        yield ConfigProblem(where("multiRegionWrites"), "needs two or more regions")
    if settings.capacity == "serverless":
        if len(regions) > 1:
            yield ConfigProblem(
                where("capacity"),
                f"serverless accounts run in one region, and the account has {len(regions)} ({', '.join(regions)}): "
                "set platform:cosmosDb.regions to one, or use provisioned",
            )
        if settings.multi_region_writes:
            yield ConfigProblem(where("multiRegionWrites"), "serverless accounts have one region")
    yield from _grant_problems(config)


def _grants_without_account(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, workload in config.workloads.items():
        if workload.cosmos_db:
            yield ConfigProblem(
                key("workloads", name, "cosmosDb"), "platform:cosmosDb is not set: this environment has no Cosmos DB"
            )


def _grant_problems(config: PlatformConfig) -> Iterator[ConfigProblem]:
    assert config.cosmos_db is not None
    databases = config.cosmos_db.databases
    for name, workload in config.workloads.items():
        for scope in workload.cosmos_db:
            where = key("workloads", name, "cosmosDb", scope)
            database, _, container = scope.partition("/")
            if database not in databases:
                yield ConfigProblem(
                    where, f"{database} is not a database of platform:cosmosDb.databases ({', '.join(databases)})"
                )
            elif container and container not in databases[database].containers:
                yield ConfigProblem(
                    where,
                    f"{container} is not a container of database {database} "
                    f"({', '.join(databases[database].containers)})",
                )
            elif container and database in workload.cosmos_db:
                yield ConfigProblem(where, f"the workload already holds database {database}, which contains it")
