"""The event backbone on Azure Event Hubs' Kafka endpoint.

One namespace (Standard or Premium, zone redundant) with local (SAS key) auth disabled,
TLS 1.2, no public network access and a private endpoint registered in
`privatelink.servicebus.windows.net`. Each topic of the spec is an event hub with its
partitions, retention and cleanup policy; replication and in-sync replicas are the
service's own business and are ignored. Each reading client gets its own consumer group
(for AMQP readers: Kafka consumer groups are separate and created by the clients), and each
client's workload identity holds Azure Event Hubs Data Sender and/or Receiver on exactly
the event hubs it uses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import eventhub

from components.data_service import watch_and_keep
from components.groups import resource_group
from components.kafka import bootstrap_config_map
from components.private_dns import DataPlaneSettings
from components.rbac import assign_role
from planning import kafka as kafka_plan
from stackconfig.model import EventHubsConfig, KafkaConfig

CLEANUP_POLICIES = {
    "delete": eventhub.CleanupPolicyRetentionDescription.DELETE,
    "compact": eventhub.CleanupPolicyRetentionDescription.COMPACT,
}
# Management operations and Kafka client errors; Premium adds who connected and what they did
# (runtime audit logs exist on Premium and Dedicated only).
LOG_CATEGORIES = ("OperationalLogs", "KafkaUserErrorLogs")
PREMIUM_LOG_CATEGORIES = LOG_CATEGORIES + ("RuntimeAuditLogs",)


@dataclass(frozen=True)
class EventHubsBackboneArgs:
    service: DataPlaneSettings
    kafka: KafkaConfig
    settings: EventHubsConfig
    # workload -> its identity's principal ID (the clients of the spec).
    principal_ids: dict[str, pulumi.Input[str]]
    subscription_id: pulumi.Input[str]
    # severity -> the action groups its Azure Monitor alerts reach (components/alerting.py)
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)


class EventHubsBackbone(pulumi.ComponentResource):
    """Outputs: `namespace_name`, `namespace_host` (`<namespace>.servicebus.windows.net`),
    `event_hub_ids[topic]`."""

    namespace_name: str
    namespace_host: str
    event_hub_ids: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: EventHubsBackboneArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:kafka:EventHubsBackbone", name, None, opts)
        service, settings = args.service, args.settings
        naming = service.naming
        group = resource_group(
            name,
            naming.regional("rg", service.region, "events"),
            service.region,
            service.tags,
            parent=self,
            create=service.create_groups,
        )
        self.namespace_name = namespace_name = naming.regional("evhns", service.region)
        tier = eventhub.SkuTier(settings.sku)
        namespace = eventhub.Namespace(
            name,
            namespace_name=namespace_name,
            resource_group_name=group.name,
            location=service.region,
            sku=eventhub.SkuArgs(name=eventhub.SkuName(settings.sku), tier=tier, capacity=settings.capacity),
            zone_redundant=True,
            kafka_enabled=True,
            # Entra ID only: no SAS keys or connection strings exist to leak.
            disable_local_auth=True,
            minimum_tls_version=eventhub.TlsVersion.TLS_VERSION_1_2,
            public_network_access=eventhub.PublicNetworkAccess.DISABLED,
            tags=service.tags,
            opts=pulumi.ResourceOptions(parent=self, protect=service.protect),
        )
        service.endpoints.connect(
            name,
            target_id=namespace.id,
            target_name=namespace_name,
            group_id="namespace",
            resource_group_name=group.name,
            tags=service.tags,
            parent=self,
        )
        watch_and_keep(
            name,
            service,
            resource_id=namespace.id,
            resource_type="Microsoft.EventHub/namespaces",
            what=f"Event Hubs namespace {namespace_name}",
            resource_group_name=group.name,
            log_categories=PREMIUM_LOG_CATEGORIES if settings.sku == "Premium" else LOG_CATEGORIES,
            alert_routes=args.alert_routes,
            parent=self,
        )

        if args.kafka.topics:
            # As `pulumi preview` shows it: part of the spec does not apply to this engine.
            pulumi.log.info(
                "Event Hubs replicates every event hub itself: replicationFactor and minInSyncReplicas of "
                f"platform:kafka.topics ({', '.join(t.name for t in args.kafka.topics)}) do not apply",
                resource=self,
            )
        self.event_hub_ids = {}
        for topic in args.kafka.topics:
            compacted = topic.cleanup_policy == "compact"
            hub = eventhub.EventHub(
                f"{name}-{topic.name}",
                event_hub_name=topic.name,
                namespace_name=namespace.name,
                resource_group_name=group.name,
                partition_count=topic.partitions,
                retention_description=eventhub.RetentionDescriptionArgs(
                    cleanup_policy=CLEANUP_POLICIES[topic.cleanup_policy],
                    # Delete: records live this long. Compact: the latest per key stays, and
                    # deletes (tombstones) are kept this long.
                    retention_time_in_hours=None if compacted else topic.retention_hours,
                    tombstone_retention_time_in_hours=topic.retention_hours if compacted else None,
                ),
                # Partitions cannot be reduced, and a deleted event hub takes its events with it.
                opts=pulumi.ResourceOptions(parent=self, protect=service.protect),
            )
            self.event_hub_ids[topic.name] = hub.id
            for client in kafka_plan.readers(args.kafka, topic.name):
                eventhub.ConsumerGroup(
                    f"{name}-{topic.name}-{client}",
                    consumer_group_name=client,
                    event_hub_name=hub.name,
                    namespace_name=namespace.name,
                    resource_group_name=group.name,
                    user_metadata=f"Reader {client} (platform:kafka.clients.{client})",
                    opts=pulumi.ResourceOptions(parent=self),
                )

        for grant in kafka_plan.topic_grants(args.kafka):
            for role in kafka_plan.EVENT_HUBS_ROLES[grant.access]:
                assign_role(
                    f"{name}-{grant.client}-{grant.topic}-{role.lower().replace(' ', '-')}",
                    role=role,
                    scope=self.event_hub_ids[grant.topic],
                    scope_key=f"{naming.environment}/eventhubs/{grant.topic}",
                    principal_id=args.principal_ids[grant.client],
                    principal_key=f"{naming.environment}/workload/{grant.client}",
                    subscription_id=args.subscription_id,
                    parent=self,
                )
        self.namespace_host = kafka_plan.event_hubs_namespace_host(namespace_name)
        self.register_outputs({"namespaceHost": self.namespace_host})


@dataclass(frozen=True)
class EventHubsClientsArgs:
    # `<namespace>.servicebus.windows.net:9093`, from the data unit's namespace.
    bootstrap: pulumi.Input[str]
    # cluster -> the namespaces of the clients that run (or fail over) there
    namespaces: Mapping[str, list[str]]
    # cluster -> its Kubernetes provider, and its team namespaces to wait for (within one stack)
    providers: Mapping[str, pulumi.ProviderResource]
    team_namespaces: Mapping[str, Mapping[str, pulumi.Resource]] = field(default_factory=dict)


class EventHubsClients(pulumi.ComponentResource):
    """What Event Hubs' clients find in their namespaces on each cluster: `platform-kafka`, where
    the endpoint is (as Strimzi's clients find their brokers: components/kafka.py), so a job
    written once connects wherever MultiKueue runs it. The tenants' layer."""

    def __init__(self, name: str, args: EventHubsClientsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:kafka:EventHubsClients", name, None, opts)
        for cluster, namespaces in args.namespaces.items():
            waits = args.team_namespaces.get(cluster, {})
            for namespace in namespaces:
                bootstrap_config_map(
                    f"{name}-{cluster}-{namespace}",
                    namespace,
                    args.bootstrap,
                    kafka_plan.ACROSS_NETWORKS_IDLE_MS,
                    pulumi.ResourceOptions(
                        parent=self,
                        provider=args.providers[cluster],
                        depends_on=[waits[namespace]] if namespace in waits else [],
                    ),
                )
        self.register_outputs({})
