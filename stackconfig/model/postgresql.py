"""Azure Database for PostgreSQL flexible server: one private, passwordless server per environment
(docs/databases.md)."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field, StringConstraints

from stackconfig.model.base import Model, Uuid

PostgresName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,62}$")]
PostgresSku = Annotated[str, StringConstraints(pattern=r"^Standard_[A-Za-z0-9_]+$")]


class PostgresAdministratorConfig(Model):
    """An Entra group that administers the server (creates roles, reads and writes everything)."""

    object_id: Uuid = Field(description="The group's object ID.")
    name: Annotated[str, StringConstraints(min_length=1, max_length=63)] = Field(
        description="Its display name: the role name its members sign in with."
    )


class PostgresConfig(Model):
    """The environment's PostgreSQL flexible server: Entra ID only, a private endpoint only."""

    server_name: Optional[str] = Field(
        default=None,
        description="Azure's globally unique name, 3-63 lowercase letters, digits and hyphens. Unset: "
        "`psql-<prefix>-<env>`.",
    )
    version: Literal["16", "17"] = Field(
        default="17",
        description="The PostgreSQL major version (16 or later: Azure's finer control of its administrators' role).",
    )
    tier: Literal["Burstable", "GeneralPurpose", "MemoryOptimized"] = Field(
        default="GeneralPurpose",
        description="`Burstable` (no high availability), `GeneralPurpose` or `MemoryOptimized`.",
    )
    sku: PostgresSku = Field(default="Standard_D4ds_v5", description="The compute size, e.g. `Standard_D4ds_v5`.")
    storage_gib: Literal[32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768] = Field(
        default=128,
        description="Storage at creation, GiB (Azure's sizes: 32 to 32768, powers of two); then it grows on its "
        "own when nearly full and never shrinks, so a later change here is not sent.",
    )
    high_availability: Literal["Disabled", "SameZone", "ZoneRedundant"] = Field(
        default="ZoneRedundant",
        description="A standby in another zone (`ZoneRedundant`: RPO 0, failover under 120 s), the same zone, or "
        "none. Burstable has none.",
    )
    geo_redundant_backup: bool = Field(
        default=True,
        description="Backups copied to the paired region (geo-restore there, RPO under an hour). Chosen at "
        "creation: a change is a new server.",
    )
    backup_retention_days: int = Field(default=14, ge=7, le=35, description="Point-in-time restore window, 7-35 days.")
    administrators: list[PostgresAdministratorConfig] = Field(
        min_length=1, description="Entra groups that administer the server (break-glass and DBAs)."
    )
    role_manager_object_id: Uuid = Field(
        description="Object ID of the tenants layer's deploy identity `id-<prefix>-deploy-<env>-tenants` (the "
        "delivery project's `<env>StackSettings` output): a server administrator under the role name "
        "`platform-tenants`, the one principal that creates the workloads' roles and grants."
    )
    role_reader_object_id: Optional[Uuid] = Field(
        default=None,
        description="Object ID of the tenants layer's plan identity: a login role (`platform-tenants-plan`) that "
        "reads the catalog, so previews see the roles and grants. Unset: "
        "`platform:entra.planIdentity.tenantsPrincipalObjectId`.",
    )
    max_connections: Optional[int] = Field(
        default=None,
        ge=25,
        le=5000,
        description="`max_connections`, a static parameter: a change takes effect when the server next restarts "
        "(a restart is yours to schedule). Unset: Azure's default for the size.",
    )
    databases: list[PostgresName] = Field(min_length=1, description="Databases (lowercase letters, digits, `_`).")
