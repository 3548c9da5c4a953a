"""Kafka: the Strimzi and Event Hubs engines, topics, clients, mirroring."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from functools import partial

from facts.event_hubs import EVENT_HUBS_TIERS
from planning import kafka as kafka_plan
from stackconfig.keys import key
from stackconfig.model import (
    EventHubsConfig,
    KafkaConfig,
    PlatformConfig,
)
from validation.checks.common import MAX_FEDERATED_CREDENTIALS, ConfigProblem


def check_kafka(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """The topic and client spec, and the engine's limits. Keys name the topic by position
    (`platform:kafka.topics[2].partitions`), as the stack file lists them."""
    kafka = config.kafka
    if kafka is None:
        return
    other_engine = {"strimzi": ("eventHubs", kafka.event_hubs), "eventhubs": ("strimzi", kafka.strimzi)}
    section, value = other_engine[kafka.engine]
    if value is not None:
        yield ConfigProblem(key("kafka", section), f"belongs to the other engine; engine is {kafka.engine}")
    if kafka.engine == "strimzi" and kafka.strimzi is None:
        yield ConfigProblem(key("kafka", "strimzi"), "is required with engine strimzi (at least oauth.audience)")

    hosts, mirrors = config.kafka_clusters(), kafka_plan.mirror_clusters(config)
    seen: set[str] = set()
    for i, topic in enumerate(kafka.topics):
        where = partial(key, "kafka", "topics", i)

        if topic.name in seen:
            yield ConfigProblem(where("name"), f"{topic.name} is declared twice")
        seen.add(topic.name)
        copy_of = next((c for c in mirrors if topic.name.startswith(f"{c}.")), None)
        if copy_of:
            yield ConfigProblem(
                where("name"), f"names starting with {copy_of}. are MirrorMaker's copies of cluster {copy_of}'s topics"
            )
        if topic.min_in_sync_replicas > topic.replication_factor:
            yield ConfigProblem(
                where("minInSyncReplicas"),
                f"{topic.min_in_sync_replicas} is more than the topic's {topic.replication_factor} replicas: "
                "no write with acks=all could ever succeed",
            )
        if config.strimzi and topic.replication_factor > config.strimzi.brokers:
            yield ConfigProblem(
                where("replicationFactor"),
                f"{topic.replication_factor} replicas need as many brokers; platform:kafka.strimzi.brokers "
                f"is {config.strimzi.brokers}",
            )
    if kafka.engine == "eventhubs":
        yield from _event_hubs_limits(kafka)

    for client, spec in kafka.clients.items():
        if client not in config.workloads:
            yield ConfigProblem(
                key("kafka", "clients", client),
                f"{client} is not a workload of platform:workloads ({', '.join(config.workloads) or 'none'}); "
                "clients sign in with a workload's identity",
            )
        elif kafka.engine == "strimzi":
            elsewhere = [c for c in config.identity_clusters(client) if c not in hosts]
            if elsewhere:
                yield ConfigProblem(
                    key("kafka", "clients", client),
                    f"runs on {', '.join(elsewhere)}, which host no Kafka (platform:kafka.strimzi.clusters)",
                )
            sites = [s for s in config.workloads[client].sites if s in config.on_prem_clusters]
            if sites and spec.authentication != "oauth":
                yield ConfigProblem(
                    key("kafka", "clients", client, "authentication"),
                    f"runs at {', '.join(sites)}, where only oauth reaches Kafka: its client certificate lives in "
                    "the kafka namespace of an Azure cluster, which nothing copies to a site",
                )
            for site in sites:
                if kafka_plan.site_host(config, site) is None:
                    region = config.on_prem_clusters[site].region
                    yield ConfigProblem(
                        key("kafka", "clients", client),
                        f"runs at {site}, but no cluster of its region {region} hosts Kafka "
                        "(platform:kafka.strimzi.clusters): the site reaches its own region's brokers",
                    )
        for topic_name in spec.topics:
            if kafka.topic(topic_name) is None:
                names = [t.name for t in kafka.topics]
                nearest = difflib.get_close_matches(topic_name, names, n=1)
                yield ConfigProblem(
                    key("kafka", "clients", client, "topics", topic_name),
                    (f"did you mean {nearest[0]}? " if nearest else "")
                    + f"{topic_name} is not a topic of platform:kafka.topics ({', '.join(names) or 'none'})",
                )
        if spec.authentication == "tls" and kafka.engine == "eventhubs":
            yield ConfigProblem(
                key("kafka", "clients", client, "authentication"),
                "Event Hubs takes Entra ID (oauth) only; client certificates need engine strimzi",
            )

    if config.strimzi is not None:
        for team, team_spec in config.teams.items():
            if kafka_plan.KAFKA_NAMESPACE in team_spec.namespaces:
                yield ConfigProblem(
                    key("teams", team, "namespaces", team_spec.namespaces.index(kafka_plan.KAFKA_NAMESPACE)),
                    f"{kafka_plan.KAFKA_NAMESPACE} is where the platform runs Kafka (platform:kafka)",
                )
        if mirrors and kafka_plan.MIRROR_WORKLOAD in config.workloads:
            yield ConfigProblem(
                key("workloads", kafka_plan.MIRROR_WORKLOAD),
                "is the name of MirrorMaker's own identity; rename the workload",
            )
        for i, cluster in enumerate(config.strimzi.clusters or []):
            if cluster not in config.clusters:
                yield ConfigProblem(
                    key("kafka", "strimzi", "clusters", i), f"{cluster} is not a cluster of platform:clusters"
                )
        for cluster in hosts:
            host = config.clusters[cluster]
            if sorted(host.zones) != kafka_plan.KAFKA_ZONES:
                yield ConfigProblem(
                    key("clusters", cluster, "zones"),
                    "hosts Kafka, whose brokers and controllers spread over zones 1, 2 and 3",
                )
            for field, pools in (("nodePools", host.node_pools), ("gpuPools", host.gpu_pools)):
                for pool_name in kafka_plan.kafka_node_pools(config):
                    if pool_name in pools:
                        yield ConfigProblem(
                            key("clusters", cluster, field, pool_name),
                            "is the name of a Kafka pool this cluster gets as a Kafka host",
                        )
        if len(mirrors) > MAX_FEDERATED_CREDENTIALS:
            yield ConfigProblem(
                key("kafka", "strimzi", "clusters"),
                f"MirrorMaker's identity needs a federated credential in each of the {len(mirrors)} Kafka "
                f"clusters, but Azure allows {MAX_FEDERATED_CREDENTIALS} per identity",
            )


def _event_hubs_limits(kafka: KafkaConfig) -> Iterator[ConfigProblem]:
    settings = kafka.event_hubs or EventHubsConfig()
    tier = EVENT_HUBS_TIERS[settings.sku]
    sku = f"Event Hubs {settings.sku}"
    if settings.capacity not in tier.capacities:
        yield ConfigProblem(
            key("kafka", "eventHubs", "capacity"),
            f"{settings.capacity} is not a capacity of {sku} ({', '.join(map(str, tier.capacities[:5]))}"
            f"{'...' if len(tier.capacities) > 5 else ''})",
        )
    if len(kafka.topics) > tier.event_hubs_per_namespace:
        yield ConfigProblem(
            key("kafka", "topics"),
            f"{len(kafka.topics)} topics, but {sku} holds {tier.event_hubs_per_namespace} event hubs per namespace",
        )
    total_partitions = sum(topic.partitions for topic in kafka.topics)
    if tier.partitions_per_capacity_unit and total_partitions > tier.partitions_per_capacity_unit * settings.capacity:
        yield ConfigProblem(
            key("kafka", "topics"),
            f"{total_partitions} partitions in all, but {sku} allows {tier.partitions_per_capacity_unit} per "
            f"processing unit ({settings.capacity}); raise platform:kafka.eventHubs.capacity",
        )
    for i, topic in enumerate(kafka.topics):
        if topic.partitions > tier.partitions_per_event_hub:
            yield ConfigProblem(
                key("kafka", "topics", i, "partitions"),
                f"{topic.partitions} is over {sku}'s {tier.partitions_per_event_hub} partitions per event hub",
            )
        if topic.retention_hours > tier.max_retention_hours:
            yield ConfigProblem(
                key("kafka", "topics", i, "retentionHours"),
                f"{topic.retention_hours} is over {sku}'s {tier.max_retention_hours}-hour retention",
            )
        groups = len(kafka_plan.readers(kafka, topic.name)) + 1
        if groups > tier.consumer_groups_per_event_hub:
            yield ConfigProblem(
                key("kafka", "topics", i),
                f"{groups - 1} reading clients need {groups} consumer groups with $Default; {sku} allows "
                f"{tier.consumer_groups_per_event_hub} per event hub",
            )
