"""Azure Database for PostgreSQL flexible server: Entra ID only, a private endpoint only
(docs/databases.md, decision 0010).

The server (the data unit's): password authentication disabled and Entra ID enabled, so the only
sign-in is a token for an Entra principal the server knows; public network access disabled and
a private endpoint (`postgresqlServer`) in every region with clusters, registered in
`privatelink.postgres.database.azure.com` (a private endpoint, not VNet integration: the two are
exclusive and fixed at creation, and Microsoft recommends Private Link); high availability and
geo-redundant backup from config; the configured Entra groups and the tenants' deploy identity as
its Entra administrators; TLS required (`require_secure_transport`, TLS 1.2 at least); its
databases.

The workloads' access (the tenants unit's, `PostgresAccess`): through the pulumi-postgresql
provider, signed in with the deploy job's Entra identity (`azureIdentityAuth`; the role name is
the job's `PGUSER`, set by .github/workflows/pulumi.yml), from the hub's runners through the
private endpoint: per workload a login role mapped to its identity's object ID (the `pgaadauth`
security label, as `pgaadauth_create_principal_with_oid` makes it) and exactly its grants; a login
role for the tenants' plan identity, which previews sign in as to read the catalog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_postgresql as postgresql
from pulumi_azure_native import dbforpostgresql as pg

from components.data_service import watch_and_keep
from components.groups import resource_group
from components.private_dns import DataPlaneSettings
from facts.postgresql import PRIVATE_ENDPOINT_GROUP, ROLE_DATABASE
from planning import postgresql as pg_plan
from stackconfig.model import PostgresConfig

# The server's own log (connections, errors, slow statements) and its sessions.
LOG_CATEGORIES = ("PostgreSQLLogs", "PostgreSQLFlexSessions")
# Server parameters the platform relies on (security/security-tls.md: TLS 1.2 and 1.3 only).
PARAMETERS = {"require_secure_transport": "on", "ssl_min_protocol_version": "TLSv1.2"}


def parameters(settings: PostgresConfig) -> dict[str, str]:
    found = dict(PARAMETERS)
    if settings.max_connections is not None:
        found["max_connections"] = str(settings.max_connections)
    return found


@dataclass(frozen=True)
class PostgresServerArgs:
    service: DataPlaneSettings
    settings: PostgresConfig
    server_name: str
    tenant_id: pulumi.Input[str]
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)


class PostgresServer(pulumi.ComponentResource):
    """Outputs: `server_id`, `host`."""

    server_id: pulumi.Output[str]

    def __init__(self, name: str, args: PostgresServerArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:data:PostgresServer", name, None, opts)
        service, settings = args.service, args.settings
        group = resource_group(
            name,
            service.naming.databases_group(service.region),
            service.region,
            service.tags,
            parent=self,
            create=service.create_groups,
        )
        server = pg.Server(
            name,
            server_name=args.server_name,
            resource_group_name=group.name,
            location=service.region,
            version=pg.PostgresMajorVersion(settings.version),
            sku=pg.SkuArgs(name=settings.sku, tier=pg.SkuTier(settings.tier)),
            storage=pg.StorageArgs(storage_size_gb=settings.storage_gib, auto_grow=pg.StorageAutoGrow.ENABLED),
            # The SDK's default for password_auth is Enabled: no administrator login or password
            # is ever set, and Entra ID is the only way in.
            auth_config=pg.AuthConfigArgs(
                active_directory_auth=pg.MicrosoftEntraAuth.ENABLED,
                password_auth=pg.PasswordBasedAuth.DISABLED,
                tenant_id=args.tenant_id,
            ),
            network=pg.NetworkArgs(public_network_access=pg.ServerPublicNetworkAccessState.DISABLED),
            high_availability=pg.HighAvailabilityArgs(
                mode=pg.PostgreSqlFlexibleServerHighAvailabilityMode(settings.high_availability)
            ),
            backup=pg.BackupArgs(
                backup_retention_days=settings.backup_retention_days,
                geo_redundant_backup=pg.GeographicallyRedundantBackup.ENABLED
                if settings.geo_redundant_backup
                else pg.GeographicallyRedundantBackup.DISABLED,
            ),
            tags=service.tags,
            # Auto-grow raises the size, which never shrinks: config is the size at creation and
            # the floor, not a value to send back (concepts-storage.md).
            opts=pulumi.ResourceOptions(parent=self, protect=service.protect, ignore_changes=["storage.storageSizeGb"]),
        )
        self.server_id = server.id
        # One change at a time: the server refuses concurrent administrator and parameter writes.
        previous: pulumi.Resource = server
        # The flexible server's principal types (REST spec 2025-08-01, AdministratorsMicrosoftEntra.json:
        # User, Group, ServicePrincipal); the SDK's PrincipalType enum of the same name is Cosmos DB for
        # PostgreSQL's (server_group_role.py).
        administrators = [(a.object_id, a.name, "Group") for a in settings.administrators]
        administrators.append((settings.role_manager_object_id, pg_plan.ROLE_MANAGER, "ServicePrincipal"))
        for object_id, principal, kind in administrators:
            previous = pg.AdministratorsMicrosoftEntra(
                f"{name}-admin-{principal}",
                resource_group_name=group.name,
                server_name=server.name,
                object_id=str(object_id),
                principal_name=principal,
                principal_type=kind,
                tenant_id=args.tenant_id,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[previous]),
            )
        for parameter, value in parameters(settings).items():
            previous = pg.Configuration(
                f"{name}-{parameter.replace('_', '-')}",
                resource_group_name=group.name,
                server_name=server.name,
                configuration_name=parameter,
                value=value,
                source="user-override",
                opts=pulumi.ResourceOptions(parent=self, depends_on=[previous]),
            )
        for database in settings.databases:
            previous = pg.Database(
                f"{name}-{database}",
                resource_group_name=group.name,
                server_name=server.name,
                database_name=database,
                charset="UTF8",
                collation="en_US.utf8",
                opts=pulumi.ResourceOptions(parent=self, protect=service.protect, depends_on=[previous]),
            )
        service.endpoints.connect(
            name,
            target_id=server.id,
            target_name=args.server_name,
            group_id=PRIVATE_ENDPOINT_GROUP,
            resource_group_name=group.name,
            tags=service.tags,
            parent=self,
            # Its auto-approval is a write on the server too: after the chain.
            depends_on=[previous],
        )
        watch_and_keep(
            name,
            service,
            resource_id=server.id,
            resource_type="Microsoft.DBforPostgreSQL/flexibleServers",
            what=f"PostgreSQL server {args.server_name}",
            resource_group_name=group.name,
            log_categories=LOG_CATEGORIES,
            alert_routes=args.alert_routes,
            parent=self,
        )
        self.register_outputs({"serverId": server.id})


@dataclass(frozen=True)
class PostgresAccessArgs:
    host: str
    tenant_id: pulumi.Input[str]
    grants: Sequence[pg_plan.TableGrant]
    # workload -> its identity's object ID
    principal_ids: Mapping[str, pulumi.Input[str]]
    # The tenants' plan identity, which previews sign in as.
    reader_object_id: str | None
    # The server's databases, whose PUBLIC privileges are taken back.
    databases: Sequence[str] = ()


def _login(name: str, role: str, object_id: pulumi.Input[str], opts: pulumi.ResourceOptions) -> postgresql.Role:
    """A login role that only an Entra token for `object_id` opens: what
    pgaadauth_create_principal_with_oid(role, oid, 'service', ...) makes, as a resource the
    provider reads back (security/security-manage-entra-users.md, the SECURITY LABEL form)."""
    made = postgresql.Role(f"{name}-role", name=role, login=True, opts=opts)
    postgresql.SecurityLabel(
        f"{name}-label",
        object_type="role",
        object_name=made.name,
        label_provider="pgaadauth",
        label=pulumi.Output.concat("aadauth,oid=", object_id, ",type=service"),
        opts=opts,
    )
    return made


class PostgresAccess(pulumi.ComponentResource):
    """Each workload's role and grants; the plan identity's login (the tenants unit's)."""

    def __init__(self, name: str, args: PostgresAccessArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:data:PostgresAccess", name, None, opts)
        provider = postgresql.Provider(
            f"{name}-provider",
            host=args.host,
            port=pg_plan.PORT,
            database=ROLE_DATABASE,
            sslmode="verify-full",
            azure_identity_auth=True,
            azure_tenant_id=args.tenant_id,
            # An Entra administrator of a flexible server is not a superuser.
            superuser=False,
            # At the stack's root: `pulumi state move` copies a provider with its parent.
        )
        within = pulumi.ResourceOptions(parent=self, provider=provider)
        # PostgreSQL gives PUBLIC (every login: each workload, the plan identity) CONNECT and TEMP
        # on every database, and Azure's new databases let PUBLIC create in `public`: take both
        # back, so a role reaches what its grants say (security/security-access-control.md).
        for database in args.databases:
            postgresql.Grant(
                f"{name}-{database}-public-connect",
                database=database,
                role="public",
                object_type="database",
                privileges=[],
                opts=within,
            )
            postgresql.Grant(
                f"{name}-{database}-public-schema",
                database=database,
                role="public",
                schema=pg_plan.DEFAULT_SCHEMA,
                object_type="schema",
                privileges=[],
                opts=within,
            )
        if args.reader_object_id is not None:
            _login(f"{name}-reader", pg_plan.ROLE_READER, args.reader_object_id, within)
        roles: dict[str, postgresql.Role] = {}
        connected: set[tuple[str, str]] = set()
        for grant in args.grants:
            if grant.workload not in roles:
                roles[grant.workload] = _login(
                    f"{name}-{grant.workload}",
                    pg_plan.workload_role(grant.workload),
                    args.principal_ids[grant.workload],
                    within,
                )
            role = roles[grant.workload]
            prefix = f"{name}-{grant.workload}-{grant.key}"
            # A grant resource holds a role's whole privilege set on its object: one per database.
            if (grant.workload, grant.database) not in connected:
                connected.add((grant.workload, grant.database))
                postgresql.Grant(
                    f"{name}-{grant.workload}-{grant.database}-connect",
                    database=grant.database,
                    role=role.name,
                    object_type="database",
                    privileges=["CONNECT"],
                    opts=within,
                )
            # The schema, then every table and sequence in it as the deploy finds them (an empty
            # list: all of them); the tenants' `up` refreshes first, so tables made since the last
            # deploy are granted by the next (.github/workflows/pulumi.yml).
            for suffix, object_type, privileges, objects in (
                ("usage", "schema", ("USAGE",), None),
                ("tables", "table", grant.privileges, []),
                ("sequences", "sequence", grant.sequence_privileges, []),
            ):
                postgresql.Grant(
                    f"{prefix}-{suffix}",
                    database=grant.database,
                    role=role.name,
                    schema=grant.schema,
                    object_type=object_type,
                    objects=objects,
                    privileges=list(privileges),
                    opts=within,
                )
        self.register_outputs({})
