"""Pure rules for a PostgreSQL flexible server (facts/postgresql.py)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from stackconfig.model import PlatformConfig, PostgresConfig


def high_availability_problem(tier: str, mode: str, region_has_zones: bool) -> str | None:
    """Why Azure refuses this high availability for the tier and region, or None."""
    if mode == "Disabled":
        return None
    if tier == "Burstable":
        return "the Burstable tier has no high availability: choose GeneralPurpose or MemoryOptimized, or Disabled"
    if mode == "ZoneRedundant" and not region_has_zones:
        return "the region has no availability zones: SameZone is the high availability it offers"
    return None


# Azure's rule for a flexible server's name (learn.microsoft.com, "Naming rules and restrictions
# for Azure resources", Microsoft.DBforPostgreSQL/flexibleServers: 3-63 lowercase letters, digits
# and hyphens, not starting or ending with a hyphen); it is the host `<name>.postgres.database.azure.com`.
_SERVER_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{1,61}[a-z0-9])$")
PORT = 5432
# The roles the platform signs in as (their Entra principal names on the server).
ROLE_MANAGER = "platform-tenants"
ROLE_READER = "platform-tenants-plan"
DEFAULT_SCHEMA = "public"
PRIVILEGES = {"read": ("SELECT",), "write": ("SELECT", "INSERT", "UPDATE", "DELETE")}
# On the schema's sequences: reading their values, and (writers) `nextval` for serial columns.
SEQUENCE_PRIVILEGES = {"read": ("SELECT",), "write": ("SELECT", "USAGE")}


# Names the server keeps for itself (configure-maintain/concepts-limits.md: azure_maintenance,
# azure_sys; PostgreSQL's own postgres, template0 and template1).
RESERVED_DATABASES = frozenset({"postgres", "azure_maintenance", "azure_sys", "template0", "template1"})
# Role names a workload may not take: the platform's, PUBLIC, and PostgreSQL's and Azure's prefixes.
RESERVED_ROLE_PREFIXES = ("pg_", "azure_")


def role_name_problem(workload: str, administrators: list[str]) -> str | None:
    """Why a workload's role name (its own name) cannot be a role on the server, or None."""
    role = workload_role(workload)
    if (
        role in (ROLE_MANAGER, ROLE_READER, "public")
        or role in administrators
        or role.startswith(RESERVED_ROLE_PREFIXES)
    ):
        return f"its role would be named {role!r}, which is the platform's, an administrator's or the server's"
    return None


def server_name_problem(name: str) -> str | None:
    if _SERVER_NAME.match(name):
        return None
    return f"{name!r} is not a valid PostgreSQL server name: 3-63 lowercase letters, digits and hyphens"


def server_name(config: PlatformConfig) -> str:
    settings = _settings(config)
    return settings.server_name or f"psql-{config.prefix}-{config.environment}"


def host(name: str) -> str:
    """The server's host name, which its private endpoint's record answers for."""
    return f"{name}.postgres.database.azure.com"


def workload_role(workload: str) -> str:
    """A workload's role: the name it signs in with, mapped to its identity's object ID."""
    return workload


@dataclass(frozen=True)
class TableGrant:
    """A workload's access to the tables of one schema of one database."""

    workload: str
    database: str
    schema: str
    access: str  # read | write

    @property
    def privileges(self) -> tuple[str, ...]:
        return PRIVILEGES[self.access]

    @property
    def sequence_privileges(self) -> tuple[str, ...]:
        return SEQUENCE_PRIVILEGES[self.access]

    @property
    def key(self) -> str:
        return f"{self.database}-{self.schema}"


def table_grants(config: PlatformConfig) -> list[TableGrant]:
    found = []
    for workload, spec in config.workloads.items():
        for scope, access in spec.postgresql.items():
            database, _, schema = scope.partition("/")
            found.append(TableGrant(workload, database, schema or DEFAULT_SCHEMA, access))
    return found


def reader_object_id(config: PlatformConfig) -> str | None:
    settings = _settings(config)
    plan = config.entra.plan_identity
    chosen = settings.role_reader_object_id or (plan.tenants_principal_object_id if plan else None)
    return str(chosen) if chosen else None


def _settings(config: PlatformConfig) -> PostgresConfig:
    if config.postgresql is None:
        raise ValueError("platform:postgresql is not set")
    return config.postgresql
