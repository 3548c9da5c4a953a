"""Kafka: topics, clients, the Strimzi and Event Hubs engines."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field, StringConstraints

from facts.event_hubs import EVENT_HUBS_TIERS
from stackconfig.model.base import (
    MaxSurge,
    Model,
    ShortName,
    Uuid,
)

Access = Literal["read", "write"]


KafkaAccess = Literal["read", "write", "readWrite"]
# One name for the Kafka topic, the KafkaTopic resource and the event hub: lowercase letters,
# digits, dots and hyphens (a DNS subdomain, which all three accept unchanged).
TopicName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([a-z0-9.-]{0,98}[a-z0-9])?$")]


class KafkaTopicConfig(Model):
    """One topic, the same on either engine."""

    name: TopicName = Field(
        description="Lowercase letters, digits, dots and hyphens; unique; not `<cluster>.…` (MirrorMaker's copies)."
    )
    partitions: int = Field(
        ge=1,
        le=10_000,
        description="Partitions (Event Hubs: at most "
        + ", ".join(f"{t.partitions_per_event_hub} on {name}" for name, t in EVENT_HUBS_TIERS.items())
        + ").",
    )
    replication_factor: int = Field(
        default=3,
        ge=1,
        le=100,
        description="Copies of each partition, at most `strimzi.brokers` (ignored by Event Hubs).",
    )
    min_in_sync_replicas: int = Field(
        default=2,
        ge=1,
        le=100,
        description="Copies a write with `acks=all` needs, at most `replicationFactor` (ignored by Event Hubs).",
    )
    retention_hours: int = Field(
        default=168,
        ge=1,
        le=87_600,
        description="How long records (`delete`) or tombstones (`compact`) are kept; Event Hubs: at most "
        + ", ".join(f"{t.max_retention_hours:,} on {name}" for name, t in EVENT_HUBS_TIERS.items())
        + ".",
    )
    cleanup_policy: Literal["delete", "compact"] = Field(
        default="delete", description="`delete` or `compact` (the latest record per key stays)."
    )


class KafkaClientConfig(Model):
    """A workload of platform:workloads that uses Kafka, and what it may do per topic."""

    topics: dict[str, KafkaAccess] = Field(min_length=1, description="`{topic: read | write | readWrite}`.")
    authentication: Literal["oauth", "tls"] = Field(
        default="oauth",
        description="`oauth` (Entra ID tokens) or `tls` (a Strimzi client certificate in Secret "
        "`kafka/<client>`; not on Event Hubs).",
    )


# VM sizes whose name says they take Premium SSDs (the `s` feature letter: D8ds_v5, E16s_v5).
PremiumStorageVmSize = Annotated[str, StringConstraints(pattern=r"^Standard_[A-Z]+[0-9]+[a-z]*s[a-z]*(_v[0-9]+)?$")]


class KafkaNodePoolConfig(Model):
    """The dedicated pool Kafka runs on in each hosting cluster (zones 1-3, tainted)."""

    vm_size: PremiumStorageVmSize = Field(
        default="Standard_E8ds_v5",
        description="The Kafka pool's size; must take Premium SSDs (an `s` in its features).",
    )
    spare_nodes_per_zone: int = Field(
        default=1,
        ge=0,
        le=10,
        description="Nodes the autoscaler may add to each zone's pool beyond one per broker and controller there.",
    )
    os_disk_size_gb: int = Field(default=128, ge=30, le=2048, alias="osDiskSizeGB", description="Managed OS disk size.")
    max_surge: MaxSurge = Field(default="1", description="Upgrade surge.")


class KafkaOauthConfig(Model):
    """The Entra ID application whose access tokens the brokers accept."""

    audience: Uuid = Field(
        description="Application (client) ID of the app registration that stands for the Kafka API: tokens "
        "are requested for `<audience>/.default` and carry it in `aud`. It must be registered in "
        "the workload identities' tenant (the subscription's)."
    )


class MirrorMakerConfig(Model):
    """Active/active mirroring between the two clusters that host Kafka."""

    enabled: bool = Field(default=True, description="With two or more Kafka clusters, mirror them active/active.")
    replicas: int = Field(default=2, ge=1, le=10, description="MirrorMaker pods per cluster.")


class StrimziConfig(Model):
    """Kafka on AKS, run by the Strimzi operator (KRaft, no ZooKeeper)."""

    clusters: Optional[list[ShortName]] = Field(
        default=None,
        description="Clusters that host Kafka; each needs zones 1, 2 and 3 (at most 20 when mirrored: "
        "MirrorMaker's identity has a federated credential in each). Unset: every cluster.",
    )
    brokers: int = Field(
        default=3, ge=3, le=100, description="Brokers per cluster (3-100); three KRaft controllers run beside them."
    )
    broker_storage_gib: int = Field(
        default=1024, ge=10, le=32767, alias="brokerStorageGiB", description="Each broker's Premium SSD claim."
    )
    controller_storage_gib: int = Field(
        default=64, ge=10, le=1024, alias="controllerStorageGiB", description="Each controller's claim."
    )
    broker_cpu: int = Field(default=4, ge=1, le=64, description="CPU each broker requests.")
    broker_memory_gib: int = Field(
        default=32, ge=4, le=512, alias="brokerMemoryGiB", description="Memory each broker requests and is limited to."
    )
    node_pool: KafkaNodePoolConfig = Field(
        default_factory=KafkaNodePoolConfig,
        description="The dedicated pool Kafka runs on in each hosting cluster (zones 1-3, tainted).",
    )
    oauth: KafkaOauthConfig = Field(description="The Entra ID application whose access tokens the brokers accept.")
    mirror_maker: MirrorMakerConfig = Field(
        default_factory=MirrorMakerConfig, description="Active/active mirroring between the clusters that host Kafka."
    )


class EventHubsConfig(Model):
    """Azure Event Hubs' Kafka endpoint (Standard or higher has one)."""

    sku: Literal["Standard", "Premium"] = Field(default="Premium", description="`Standard` or `Premium`.")
    capacity: int = Field(
        default=1,
        ge=1,
        le=40,
        description="Throughput units (Standard, 1-40) or processing units (Premium: 1, 2, 4, 8, 16).",
    )


class KafkaConfig(Model):
    """The event backbone: one topic and client spec, either engine."""

    engine: Literal["strimzi", "eventhubs"] = Field(
        description="`strimzi` (Kafka on AKS) or `eventhubs` (Event Hubs' Kafka endpoint)."
    )
    topics: list[KafkaTopicConfig] = Field(
        default_factory=list,
        description="The topics; one name for the Kafka topic, the `KafkaTopic` and the event hub.",
    )
    clients: dict[str, KafkaClientConfig] = Field(
        default_factory=dict,
        description="`{workload: client}`: workloads of `platform:workloads` that produce or consume; on "
        "Strimzi, every cluster a client runs on must host Kafka.",
    )
    strimzi: Optional[StrimziConfig] = Field(
        default=None, description="Strimzi's settings, with `engine: strimzi`; leave it out on Event Hubs."
    )
    event_hubs: Optional[EventHubsConfig] = Field(
        default=None, description="Event Hubs' settings, with `engine: eventhubs`; leave it out on Strimzi."
    )

    def topic(self, name: str) -> KafkaTopicConfig | None:
        return next((topic for topic in self.topics if topic.name == name), None)


# A Flink job: its FlinkDeployment, workload identity, checkpoint container and Kafka client.
