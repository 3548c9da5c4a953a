"""PostgreSQL: the server's name, tier, high availability and region; the workloads' grants."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from facts.azure_regions import REGIONS
from planning import postgresql as pg_plan
from stackconfig.keys import key
from stackconfig.model import PlatformConfig
from validation.checks.common import ConfigProblem


def check_postgresql(config: PlatformConfig) -> Iterator[ConfigProblem]:
    settings = config.postgresql
    if settings is None:
        for name, workload in config.workloads.items():
            if workload.postgresql:
                yield ConfigProblem(
                    key("workloads", name, "postgresql"),
                    "platform:postgresql is not set: this environment has no PostgreSQL",
                )
        return
    where = partial(key, "postgresql")
    if settings.server_name is not None and (problem := pg_plan.server_name_problem(settings.server_name)):
        yield ConfigProblem(where("serverName"), problem)
    region = REGIONS.get(config.primary_region)
    problem = pg_plan.high_availability_problem(
        settings.tier, settings.high_availability, region.zones if region else True
    )
    if problem:
        yield ConfigProblem(where("highAvailability"), f"{settings.high_availability}: {problem}")
    for i, database in enumerate(settings.databases):
        if database in pg_plan.RESERVED_DATABASES:
            yield ConfigProblem(where("databases", i), f"{database} is a database the server keeps for itself")
    administrators = [a.name for a in settings.administrators]
    for name, workload in config.workloads.items():
        if workload.postgresql and (problem := pg_plan.role_name_problem(name, administrators)):
            yield ConfigProblem(key("workloads", name), problem)
    duplicates = sorted({d for d in settings.databases if settings.databases.count(d) > 1})
    if duplicates:
        yield ConfigProblem(where("databases"), f"lists {', '.join(duplicates)} twice")
    if pg_plan.table_grants(config) and pg_plan.reader_object_id(config) is None:
        yield ConfigProblem(
            where("roleReaderObjectId"),
            "previews read the workloads' roles and grants as the tenants' plan identity: set it, or "
            "platform:entra.planIdentity.tenantsPrincipalObjectId",
        )
    for name, workload in config.workloads.items():
        for scope in workload.postgresql:
            database = scope.partition("/")[0]
            if database not in settings.databases:
                yield ConfigProblem(
                    key("workloads", name, "postgresql", scope),
                    f"{database} is not a database of platform:postgresql.databases ({', '.join(settings.databases)})",
                )
