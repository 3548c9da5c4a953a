"""Cosmos DB for NoSQL: one account per environment, reached only through Entra ID and private
endpoints (docs/databases.md).

The account (the data unit's): local (key) auth and key-based metadata writes disabled, so no
key or connection string signs anything in and control-plane roles give no data access; public
network access disabled, TLS 1.2, a private endpoint (`Sql`) in every region with clusters,
registered in `privatelink.documents.azure.com` by a zone group (which keeps the per-region
records as regions come and go); the configured regions in failover order with automatic
failover, zone redundancy in each, continuous or periodic backup; databases with autoscale
throughput and their containers, created through ARM (Entra's data roles cannot create them).

Each workload's access (the tenants unit's, `CosmosDataAccess`): a data-plane role assignment
of the built-in Data Reader or Contributor on exactly the database or container config names,
to the workload identity's object ID.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial

import pulumi
from pulumi_azure_native import cosmosdb

from components.data_service import watch_and_keep
from components.groups import resource_group
from components.private_dns import DataPlaneSettings
from facts.cosmosdb import PRIVATE_ENDPOINT_GROUP
from planning import cosmosdb as cosmos_plan
from stackconfig.model import CosmosDbConfig

# Data-plane requests (who did what, from which identity) and control-plane operations, into
# resource-specific tables (CDBDataPlaneRequests, CDBControlPlaneRequests).
LOG_CATEGORIES = ("DataPlaneRequests", "ControlPlaneRequests")
BACKUP_TIERS = {
    "continuous7Days": cosmosdb.ContinuousTier.CONTINUOUS7_DAYS,
    "continuous30Days": cosmosdb.ContinuousTier.CONTINUOUS30_DAYS,
}


def backup_policy(
    settings: CosmosDbConfig,
) -> cosmosdb.ContinuousModeBackupPolicyArgs | cosmosdb.PeriodicModeBackupPolicyArgs:
    if settings.backup == "periodic":
        # Azure's defaults, kept in geo-redundant storage: a copy every 4 hours, the last two kept.
        return cosmosdb.PeriodicModeBackupPolicyArgs(
            type=cosmosdb.BackupPolicyType.PERIODIC.value,
            periodic_mode_properties=cosmosdb.PeriodicModePropertiesArgs(
                backup_interval_in_minutes=240,
                backup_retention_interval_in_hours=8,
                backup_storage_redundancy=cosmosdb.BackupStorageRedundancy.GEO,
            ),
        )
    return cosmosdb.ContinuousModeBackupPolicyArgs(
        type=cosmosdb.BackupPolicyType.CONTINUOUS.value,
        continuous_mode_properties=cosmosdb.ContinuousModePropertiesArgs(tier=BACKUP_TIERS[settings.backup]),
    )


@dataclass(frozen=True)
class CosmosDbArgs:
    service: DataPlaneSettings
    settings: CosmosDbConfig
    account_name: str
    # Failover order, the write region first (planning/cosmosdb.py, account_regions).
    regions: Sequence[str]
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)


class CosmosDb(pulumi.ComponentResource):
    """Outputs: `account_id`, `endpoint` (`https://<account>.documents.azure.com:443/`)."""

    account_id: pulumi.Output[str]

    def __init__(self, name: str, args: CosmosDbArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:data:CosmosDb", name, None, opts)
        service, settings = args.service, args.settings
        naming = service.naming
        group = resource_group(
            name,
            naming.databases_group(service.region),
            service.region,
            service.tags,
            parent=self,
            create=service.create_groups,
        )
        serverless = settings.capacity == "serverless"
        consistency = cosmosdb.ConsistencyPolicyArgs(
            default_consistency_level=cosmosdb.DefaultConsistencyLevel(settings.consistency),
            max_interval_in_seconds=settings.max_staleness_seconds,
            max_staleness_prefix=settings.max_staleness_prefix,
        )
        account = cosmosdb.DatabaseAccount(
            name,
            account_name=args.account_name,
            resource_group_name=group.name,
            location=service.region,
            kind=cosmosdb.DatabaseAccountKind.GLOBAL_DOCUMENT_DB,
            database_account_offer_type=cosmosdb.DatabaseAccountOfferType.STANDARD,
            locations=[
                cosmosdb.LocationArgs(
                    location_name=region, failover_priority=i, is_zone_redundant=settings.zone_redundant
                )
                for i, region in enumerate(args.regions)
            ],
            consistency_policy=consistency,
            enable_automatic_failover=len(args.regions) > 1,
            enable_multiple_write_locations=settings.multi_region_writes,
            capabilities=[cosmosdb.CapabilityArgs(name="EnableServerless")] if serverless else None,
            # Entra ID only: keys and resource tokens are refused, and databases, containers and
            # throughput change through ARM alone (where the review sees them).
            disable_local_auth=True,
            disable_key_based_metadata_write_access=True,
            public_network_access=cosmosdb.PublicNetworkAccess.DISABLED,
            network_acl_bypass=cosmosdb.NetworkAclBypass.NONE,
            minimal_tls_version=cosmosdb.MinimalTlsVersion.TLS12,
            backup_policy=backup_policy(settings),
            tags=service.tags,
            opts=pulumi.ResourceOptions(parent=self, protect=service.protect),
        )
        self.account_id = account.id
        service.endpoints.connect(
            name,
            target_id=account.id,
            target_name=args.account_name,
            group_id=PRIVATE_ENDPOINT_GROUP,
            resource_group_name=group.name,
            tags=service.tags,
            parent=self,
        )
        watch_and_keep(
            name,
            service,
            resource_id=account.id,
            resource_type="Microsoft.DocumentDB/databaseAccounts",
            what=f"Cosmos DB account {args.account_name}",
            resource_group_name=group.name,
            log_categories=LOG_CATEGORIES,
            alert_routes=args.alert_routes,
            parent=self,
            # Its alert watches provisioned request units, which a serverless account has none of.
            alerts=not serverless,
        )
        for database_name, database in settings.databases.items():
            db = cosmosdb.SqlResourceSqlDatabase(
                f"{name}-{database_name}",
                account_name=account.name,
                resource_group_name=group.name,
                database_name=database_name,
                resource=cosmosdb.SqlDatabaseResourceArgs(id=database_name),
                options=None
                if serverless
                else cosmosdb.CreateUpdateOptionsArgs(
                    autoscale_settings=cosmosdb.AutoscaleSettingsArgs(max_throughput=database.autoscale_max_throughput)
                ),
                tags=service.tags,
                opts=pulumi.ResourceOptions(parent=self, protect=service.protect),
            )
            for container_name, container in database.containers.items():
                cosmosdb.SqlResourceSqlContainer(
                    f"{name}-{database_name}-{container_name}",
                    account_name=account.name,
                    resource_group_name=group.name,
                    database_name=db.name,
                    container_name=container_name,
                    resource=cosmosdb.SqlContainerResourceArgs(
                        id=container_name,
                        partition_key=cosmosdb.ContainerPartitionKeyArgs(
                            paths=[container.partition_key], kind=cosmosdb.PartitionKind.HASH, version=2
                        ),
                        default_ttl=container.default_ttl_seconds,
                    ),
                    tags=service.tags,
                    opts=pulumi.ResourceOptions(parent=self, protect=service.protect),
                )
        self.register_outputs({"accountId": account.id})


@dataclass(frozen=True)
class CosmosDataAccessArgs:
    environment: str
    account_id: pulumi.Input[str]
    account_name: str
    resource_group_name: str
    grants: Sequence[cosmos_plan.DataGrant]
    # workload -> its identity's object ID
    principal_ids: Mapping[str, pulumi.Input[str]]


class CosmosDataAccess(pulumi.ComponentResource):
    """Each workload's data role on exactly its database or container (the tenants unit's: it
    changes with the workloads)."""

    def __init__(self, name: str, args: CosmosDataAccessArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:data:CosmosDataAccess", name, None, opts)
        account_id = pulumi.Output.from_input(args.account_id)
        previous: pulumi.Resource | None = None
        for grant in args.grants:
            # One at a time: the account refuses concurrent control-plane writes (412, "another
            # user operation in progress": hashicorp/terraform-provider-azurerm#15842).
            previous = cosmosdb.SqlResourceSqlRoleAssignment(
                f"{name}-{grant.workload}-{grant.scope_key.replace('/', '-')}",
                account_name=args.account_name,
                resource_group_name=args.resource_group_name,
                role_assignment_id=cosmos_plan.role_assignment_id(args.environment, grant),
                role_definition_id=account_id.apply(partial(cosmos_plan.role_definition_id, role=grant.role)),
                scope=account_id.apply(
                    partial(cosmos_plan.role_scope, database=grant.database, container=grant.container)
                ),
                principal_id=args.principal_ids[grant.workload],
                # A new principal (a replaced identity) replaces it under the same ID: delete first.
                opts=pulumi.ResourceOptions(
                    parent=self, depends_on=[previous] if previous else None, delete_before_replace=True
                ),
            )
        self.register_outputs({})
