"""The data unit: storage accounts (customer-managed keys from the foundation's vault), Event
Hubs and the databases.
"""

from __future__ import annotations

import dataclasses

from components.cosmos_db import CosmosDb, CosmosDbArgs
from components.event_hubs import EventHubsBackbone, EventHubsBackboneArgs
from components.lustre import LustreFileSystems, LustreFileSystemsArgs
from components.outputs import DataOutputs, FoundationOutputs
from components.platform.context import (
    LUSTRE_SUBNET,
    Context,
    alert_routes,
    endpoint_regions,
    replicas,
)
from components.postgresql import PostgresServer, PostgresServerArgs
from components.storage import PrivateStorage, PrivateStorageArgs
from planning import cosmosdb as cosmos_plan
from planning import postgresql as pg_plan
from planning.naming import (
    storage_account_name,
)
from stackconfig.model import EventHubsConfig


def build_data(ctx: Context, foundation: FoundationOutputs) -> DataOutputs:
    config = ctx.config
    service = ctx.data_plane(
        foundation.subnet_ids,
        foundation.dns_zone_ids,
        foundation.regional_dns_zone_ids,
        {r: foundation.workspaces(r)[0] for r in endpoint_regions(config)},
    )
    storage = PrivateStorage(
        "storage",
        PrivateStorageArgs(
            service=service,
            settings=config.storage,
            account_names={key: storage_account_name(config, key) for key in config.storage.accounts},
            subscription_id=ctx.deployer.subscription_id,
            encryption_keys=foundation.storage_keys,
            replicas=replicas(config),
            alert_routes=alert_routes(config, foundation.action_group_ids),
        ),
        opts=ctx.opts,
    )
    namespace = None
    kafka = config.kafka
    if kafka is not None and kafka.engine == "eventhubs":
        backbone = EventHubsBackbone(
            "events",
            EventHubsBackboneArgs(
                service=service,
                kafka=kafka,
                settings=kafka.event_hubs or EventHubsConfig(),
                principal_ids={client: foundation.identity_principal_ids[client] for client in kafka.clients},
                subscription_id=ctx.deployer.subscription_id,
                alert_routes=alert_routes(config, foundation.action_group_ids),
            ),
            opts=ctx.opts,
        )
        namespace = backbone.namespace_name
    cosmos_account = None
    if config.cosmos_db is not None:
        cosmos_account = CosmosDb(
            "cosmos",
            CosmosDbArgs(
                service=service,
                settings=config.cosmos_db,
                account_name=cosmos_plan.account_name(config),
                regions=cosmos_plan.account_regions(config),
                alert_routes=alert_routes(config, foundation.action_group_ids),
            ),
            opts=ctx.opts,
        ).account_id
    if config.postgresql is not None:
        PostgresServer(
            "postgresql",
            PostgresServerArgs(
                # The databases group is made once (by Cosmos DB's component when there is one).
                service=dataclasses.replace(service, create_groups=service.create_groups and config.cosmos_db is None),
                settings=config.postgresql,
                server_name=pg_plan.server_name(config),
                tenant_id=config.entra.tenant_id or ctx.deployer.tenant_id,
                alert_routes=alert_routes(config, foundation.action_group_ids),
            ),
            opts=ctx.opts,
        )
    lustre_addresses = {}
    if config.lustre is not None:
        lustre_addresses = LustreFileSystems(
            "lustre",
            LustreFileSystemsArgs(
                service=service,
                settings=config.lustre,
                subnet_ids={
                    region: foundation.subnet_ids[region][LUSTRE_SUBNET] for region in config.lustre.file_systems
                },
                alert_routes=alert_routes(config, foundation.action_group_ids),
            ),
            opts=ctx.opts,
        ).mgs_addresses
    return DataOutputs(
        container_ids=storage.container_ids,
        event_hubs_namespace=namespace,
        replica_container_ids=storage.replica_container_ids,
        cosmos_db_account_id=cosmos_account,
        lustre_mgs_addresses=lustre_addresses,
    )
