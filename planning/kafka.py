"""The event backbone's plain logic: one topic and client spec, read by either engine.

Pure functions over the validated config (no Pulumi): what each client may do to each topic
(as Kafka ACLs for Strimzi and as Event Hubs data roles), the Event Hubs tier limits the
spec must fit, the topic settings each engine applies, the dedicated Kafka node pool, and
what a client needs to connect. `validation.checks` reports spec problems with their keys;
`components.kafka` and `components.event_hubs` register the resources.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from facts import entra
from facts.gpu import LABEL_PREFIX
from planning.naming import Naming
from stackconfig.model import KafkaAccess, KafkaConfig, KafkaTopicConfig, NodePoolConfig, PlatformConfig

# A Kafka version Strimzi 1.2.0 supports (kafka-versions.yaml: 4.3.x since Strimzi 1.1.0).
KAFKA_VERSION = "4.3.0"
# KRaft quorum: three dedicated controllers survive the loss of one zone.
CONTROLLERS = 3
KAFKA_NAMESPACE = "kafka"
# The AKS pools Kafka runs on in each hosting cluster, one per zone (`kafka1` in zone 1, ...):
# a broker's disk lives in one zone, and only a zonal pool lets the autoscaler add a node there.
KAFKA_POOL_PREFIX = "kafka"
KAFKA_POOL_LABEL = f"{LABEL_PREFIX}/kafka"
KAFKA_POOL_TAINT = f"{KAFKA_POOL_LABEL}=true:NoSchedule"
KAFKA_ZONES = ["1", "2", "3"]

# Listener ports (Strimzi reserves 9090-9092 for itself; 9404 is its metrics port).
OAUTH_PORT = 9093
MUTUAL_TLS_PORT = 9094
REPLICATION_PORT = 9095
EVENT_HUBS_KAFKA_PORT = 9093

# Kafka ACL operations per access right (principal `User:<name>`).
TOPIC_OPERATIONS: dict[str, tuple[str, ...]] = {
    "read": ("Read", "Describe", "DescribeConfigs"),
    "write": ("Write", "Describe", "DescribeConfigs"),
    "readWrite": ("Read", "Write", "Describe", "DescribeConfigs"),
}
# Event Hubs data-plane roles per access right, each scoped to the client's event hub.
EVENT_HUBS_ROLES: dict[str, tuple[str, ...]] = {
    "read": ("Azure Event Hubs Data Receiver",),
    "write": ("Azure Event Hubs Data Sender",),
    "readWrite": ("Azure Event Hubs Data Sender", "Azure Event Hubs Data Receiver"),
}


def reads(access: KafkaAccess) -> bool:
    return access in ("read", "readWrite")


def topic_config(topic: KafkaTopicConfig) -> dict[str, str]:
    """The Kafka topic-level config Strimzi applies (Event Hubs maps retention and cleanup itself)."""
    config = {
        "cleanup.policy": topic.cleanup_policy,
        "min.insync.replicas": str(topic.min_in_sync_replicas),
    }
    hours_ms = str(topic.retention_hours * 3_600_000)
    if topic.cleanup_policy == "compact":
        # Compacted topics keep the latest record per key; tombstones go after this long.
        config["delete.retention.ms"] = hours_ms
    else:
        config["retention.ms"] = hours_ms
    return config


@dataclass(frozen=True)
class TopicGrant:
    client: str
    topic: str
    access: KafkaAccess


def topic_grants(kafka: KafkaConfig) -> list[TopicGrant]:
    """Every (client, topic, access) of the spec, in declaration order."""
    return [
        TopicGrant(client, topic, access)
        for client, spec in kafka.clients.items()
        for topic, access in spec.topics.items()
    ]


def reading_clients(kafka: KafkaConfig) -> list[str]:
    """Clients that consume any topic (and so use consumer groups)."""
    return list(dict.fromkeys(grant.client for grant in topic_grants(kafka) if reads(grant.access)))


def readers(kafka: KafkaConfig, topic: str) -> list[str]:
    """Clients that consume `topic`: each gets its own consumer group."""
    return [grant.client for grant in topic_grants(kafka) if grant.topic == topic and reads(grant.access)]


def mirrored_topic(source_cluster: str, topic: str) -> str:
    """The name MirrorMaker 2's default replication policy gives a remote topic's copy."""
    return f"{source_cluster}.{topic}"


def kafka_acls(kafka: KafkaConfig, client: str, remote_clusters: list[str]) -> list[dict[str, Any]]:
    """Strimzi `simple` ACLs of one client in one cluster.

    Readers may also read the copies MirrorMaker brings from the other clusters, and may use
    consumer groups whose id starts with the client's name (and only those).
    """
    acls: list[dict[str, Any]] = []
    spec = kafka.clients[client]
    for topic, access in spec.topics.items():
        acls.append(_acl("topic", topic, "literal", TOPIC_OPERATIONS[access]))
        if reads(access):
            acls += [
                _acl("topic", mirrored_topic(remote, topic), "literal", TOPIC_OPERATIONS["read"])
                for remote in remote_clusters
            ]
    if any(reads(access) for access in spec.topics.values()):
        acls.append(_acl("group", consumer_group_prefix(client), "prefix", ("Read", "Describe")))
    return acls


def consumer_group_prefix(client: str) -> str:
    """Consumer group ids a client may use start with this (`trainer.` never matches `trainers.`)."""
    return f"{client}."


def _acl(resource_type: str, name: str, pattern: str, operations: tuple[str, ...]) -> dict[str, Any]:
    return {
        "type": "allow",
        "resource": {"type": resource_type, "name": name, "patternType": pattern},
        "operations": list(operations),
    }


def kafka_node_pools(config: PlatformConfig) -> dict[str, NodePoolConfig]:
    """The AKS pools Kafka runs on, one per zone, each with a node per broker and controller
    the zone holds (pods spread evenly over the zones) plus spares, tainted so that only Kafka
    lands there; none when the environment has no Strimzi."""
    strimzi = config.strimzi
    if strimzi is None:
        return {}
    settings = strimzi.node_pool
    per_zone = -(-strimzi.brokers // len(KAFKA_ZONES)) + CONTROLLERS // len(KAFKA_ZONES)
    return {
        f"{KAFKA_POOL_PREFIX}{zone}": NodePoolConfig(
            vm_size=settings.vm_size,
            min_count=per_zone,
            max_count=per_zone + settings.spare_nodes_per_zone,
            max_surge=settings.max_surge,
            # Managed OS disks: Kafka's data is on Premium SSD claims, not the OS disk.
            os_disk_type="Managed",
            os_disk_size_gb=settings.os_disk_size_gb,
            zones=[zone],
            labels={KAFKA_POOL_LABEL: "true"},
            taints=[KAFKA_POOL_TAINT],
        )
        for zone in KAFKA_ZONES
    }


def oauth_scope(audience: str) -> str:
    """The scope a workload asks Entra ID for to reach the brokers."""
    return f"{audience}/.default"


# Entra ID's v2.0 endpoints (facts/entra.py), as the brokers and Strimzi's clients name them.
entra_issuer = entra.issuer
entra_jwks_uri = entra.jwks_uri
entra_token_endpoint = entra.token_endpoint


def event_hubs_scope(namespace_host: str) -> str:
    """Kafka clients of Event Hubs ask for a token for the namespace itself."""
    return f"https://{namespace_host}/.default"


def strimzi_bootstrap(cluster: str, port: int) -> str:
    """The in-cluster bootstrap address of the Kafka cluster named after its AKS cluster."""
    return f"{cluster}-kafka-bootstrap.{KAFKA_NAMESPACE}.svc:{port}"


# The workload identity MirrorMaker 2 signs in to every cluster's Kafka with.
MIRROR_WORKLOAD = "kafka-mirror"


def cluster_ca_secret(cluster: str) -> str:
    """Strimzi's Secret holding a Kafka cluster's CA certificate (public), beside `-cluster-ca`
    and `-clients-ca`, which hold the CAs' private keys (Strimzi, "Secrets generated by the
    operator"); MirrorMaker's copies of the other clusters' certificates carry the same names."""
    return f"{cluster}-cluster-ca-cert"


def ca_bundle(data: Mapping[str, str]) -> str:
    """The certificates clients must trust, from the `-cluster-ca-cert` Secret's data (base64):
    `ca.crt` and, while Strimzi replaces the CA's key, the old certificate it keeps beside it as
    `ca-<date>.crt` (Strimzi: clients add every `*.crt` of it), so a copy made during the
    replacement verifies the brokers before and after they roll."""
    names = sorted((name for name in data if name.endswith(".crt")), key=lambda name: (name != "ca.crt", name))
    return "".join(base64.b64decode(data[name]).decode() for name in names)


# The Role that lets the tenants' previews read the CA certificates above, by name only.
CA_READER_ROLE = "platform-ca-certificate-reader"
# The KafkaMirrorMaker2 of each hosting cluster, and the service account Strimzi gives it.
MIRROR_NAME = "mirror"
MIRROR_SERVICE_ACCOUNT = f"{MIRROR_NAME}-mirrormaker2"
# Kafka Connect's own topics and group, behind MirrorMaker 2 on its target cluster.
MIRROR_GROUP = MIRROR_NAME
MIRROR_INTERNAL_TOPICS = tuple(f"{MIRROR_NAME}.{kind}" for kind in ("configs", "offsets", "status"))


def offset_syncs_topic(source_cluster: str) -> str:
    """Kept on the target (`offset-syncs.topic.location: target`), where MirrorMaker names it
    after the *source* cluster; the source is then only read."""
    return f"mm2-offset-syncs.{source_cluster}.internal"


def mirror_acls(kafka: KafkaConfig, cluster: str, remote_clusters: list[str]) -> list[dict[str, Any]]:
    """ACLs of the MirrorMaker identity in one cluster, which is both the target of its own
    MirrorMaker and the source of the other clusters' MirrorMakers.

    As target: create and write the copies (`<remote>.<topic>`, and the checkpoints MirrorMaker
    keeps under the same prefix, with their partitions and configs), its Connect topics and
    group, the offset syncs of each source, and the readers' groups (it commits their
    translated offsets). As source: read the declared topics and the readers' group offsets.
    """
    copy_operations = ("Create", "Write", "Read", "Describe", "DescribeConfigs", "Alter", "AlterConfigs")
    internal_operations = ("Create", "Write", "Read", "Describe", "DescribeConfigs")
    acls = [_acl("topic", f"{remote}.", "prefix", copy_operations) for remote in remote_clusters]
    acls += [_acl("topic", topic, "literal", internal_operations) for topic in MIRROR_INTERNAL_TOPICS]
    acls += [_acl("topic", offset_syncs_topic(remote), "literal", internal_operations) for remote in remote_clusters]
    acls.append(_acl("group", MIRROR_GROUP, "literal", ("Read", "Describe")))
    acls += [_acl("topic", topic.name, "literal", TOPIC_OPERATIONS["read"]) for topic in kafka.topics]
    acls += [
        _acl("group", consumer_group_prefix(client), "prefix", ("Read", "Describe"))
        for client in reading_clients(kafka)
    ]
    return acls


def mirrored_groups_pattern(kafka: KafkaConfig) -> str:
    """The consumer groups whose offsets MirrorMaker translates: the readers' own groups."""
    return "|".join(re.escape(consumer_group_prefix(client)) + ".*" for client in reading_clients(kafka)) or "^$"


def event_hubs_namespace_host(namespace_name: str) -> str:
    return f"{namespace_name}.servicebus.windows.net"


def connection_info(config: PlatformConfig, client: str, event_hubs_namespace: str | None = None) -> dict[str, Any]:
    """What an application needs to connect, per cluster it runs on; no secret in it.

    Tokens come from the workload identity (azure-identity's WorkloadIdentityCredential) for
    `tokenScope`; consumer group ids must start with `consumerGroupPrefix`.
    """
    kafka = config.kafka
    assert kafka is not None
    spec = kafka.clients[client]
    clusters = config.workload_clusters(client)
    info: dict[str, Any] = {"engine": kafka.engine, "consumerGroupPrefix": consumer_group_prefix(client)}
    if kafka.engine == "eventhubs":
        assert event_hubs_namespace is not None
        host = event_hubs_namespace_host(event_hubs_namespace)
        info.update(
            # The sites' workloads too: the namespace's private endpoint, over the link.
            bootstrapServers=dict.fromkeys(
                [*clusters, *config.workloads[client].sites], f"{host}:{EVENT_HUBS_KAFKA_PORT}"
            ),
            securityProtocol="SASL_SSL",
            saslMechanism="OAUTHBEARER",
            tokenScope=event_hubs_scope(host),
            topics={topic: {"access": access} for topic, access in spec.topics.items()},
        )
        return info
    assert kafka.strimzi is not None
    oauth = spec.authentication == "oauth"
    port = OAUTH_PORT if oauth else MUTUAL_TLS_PORT
    failover = [c for c in config.identity_clusters(client) if c not in clusters]
    if failover:
        # Where the client connects if it is moved there (its own clusters lost), and what it
        # reads there: each topic and the copies MirrorMaker made of it, where its group's
        # offsets were synced (at-least-once: docs/kafka.md, "Failing over").
        info["failover"] = {
            cluster: {
                "bootstrapServers": strimzi_bootstrap(cluster, port),
                # Offsets are synced onto the copies of the lost cluster's topics only; the
                # surviving cluster's own topic was read there as a copy, whose offsets
                # MirrorMaker does not carry back (a cycle), so the group starts it from the
                # beginning: duplicates, never a gap. Kafka's own default, latest, would skip.
                "autoOffsetReset": "earliest",
                "topics": {
                    topic: [
                        topic,
                        *(mirrored_topic(source, topic) for source in mirror_clusters(config) if source != cluster),
                    ]
                    for topic, access in spec.topics.items()
                    if reads(access)
                },
            }
            for cluster in failover
        }
    info.update(
        bootstrapServers={cluster: strimzi_bootstrap(cluster, port) for cluster in clusters},
        securityProtocol="SASL_SSL" if oauth else "SSL",
        # The brokers' CA certificate, copied into the client's namespace (key ca.crt).
        trustedCaConfigMap=CA_CONFIG_MAP,
        topics={
            topic: _strimzi_topic_info(topic, access, clusters, mirror_clusters(config))
            for topic, access in spec.topics.items()
        },
    )
    for site in [site for site in config.workloads[client].sites if client in site_clients(config, site)]:
        # At a site: its host's listener for other networks, and what that host holds.
        served_by = site_host(config, site)
        info["bootstrapServers"][site] = site_bootstrap(config, site)
        for topic in info["topics"].values():
            if "copies" in topic and served_by in topic["copies"]:
                topic["copies"][site] = topic["copies"][served_by]
    if oauth:
        info.update(saslMechanism="OAUTHBEARER", tokenScope=oauth_scope(kafka.strimzi.oauth.audience))
    else:
        # Strimzi writes the key pair there; the program never handles private keys, so getting
        # it to the client's namespace is the team's (docs/kafka.md).
        info.update(clientCertificateSecret=f"{KAFKA_NAMESPACE}/{client}")
    return info


def _strimzi_topic_info(
    topic: str, access: KafkaAccess, clusters: list[str], mirrored_from: list[str]
) -> dict[str, Any]:
    info: dict[str, Any] = {"access": access}
    if reads(access) and mirrored_from:
        # The other clusters' records arrive as copies; readers subscribe to these too.
        info["copies"] = {
            cluster: [mirrored_topic(source, topic) for source in mirrored_from if source != cluster]
            for cluster in clusters
        }
    return info


# The ConfigMap holding the brokers' CA certificate in each client namespace.
CA_CONFIG_MAP = "kafka-cluster-ca"
# When Strimzi renews a cluster CA, the copies the tenants unit made (this ConfigMap in client
# namespaces, MirrorMaker's Secrets) show as a change in the next night's drift check; a person
# deploys the tenants unit within this many days (docs/operations.md, "Credentials over time"),
# well inside the renewal period (facts/strimzi.py), after which the old certificate expires.
CA_COPY_DEADLINE_DAYS = 7


def mirror_clusters(config: PlatformConfig) -> list[str]:
    """Clusters whose Kafkas mirror each other (active/active): two or more hosts, unless off."""
    strimzi, hosts = config.strimzi, config.kafka_clusters()
    if strimzi is None or not strimzi.mirror_maker.enabled or len(hosts) < 2:
        return []
    return hosts


def replication_bootstrap_address(config: PlatformConfig, cluster: str) -> str:
    """The address of the internal load balancer listener other networks reach (MirrorMaker from
    the other clusters, workloads at a site): the last usable address of the cluster's node subnet
    (Azure hands out node addresses from the bottom). The brokers' own load balancers take free
    addresses of that subnet, which are what clients connect to after the bootstrap."""
    subnet = config.clusters[cluster].subnets.nodes
    return str(subnet.broadcast_address - 1)


# Per client namespace on every cluster (and site) where a client runs: the address of the Kafka
# its jobs reach from there (key BOOTSTRAP_SERVERS), so a job MultiKueue copies unchanged to
# another region or a site connects to the Kafka of where it runs, as `platform-storage` answers
# for blobs (planning/workloads.py).
BOOTSTRAP_CONFIG_MAP = "platform-kafka"
BOOTSTRAP_KEY = "BOOTSTRAP_SERVERS"
# ... and how long its connections may idle before the client closes them (`connections.max.idle.ms`).
IDLE_KEY = "CONNECTIONS_MAX_IDLE_MS"
# Kafka's client default, in a cluster (no middlebox between client and broker).
IN_CLUSTER_IDLE_MS = 540_000
# Below the 4 minutes after which Azure's load balancers (a listener for other networks) and Event
# Hubs close an idle connection (learn.microsoft.com/azure/load-balancer/load-balancer-tcp-reset;
# Event Hubs for Kafka's recommended configuration: 180000), and Azure Firewall's east-west idle
# timeout (tcp-session-behavior.md): the client closes first, instead of writing into a dead flow.
ACROSS_NETWORKS_IDLE_MS = 180_000


def site_host(config: PlatformConfig, site: str) -> str | None:
    """The cluster whose Kafka a site's workloads use: the first Strimzi host in the site's region
    (reached over the link through its listener for other networks); None without one there
    (config checks refuse a site's Kafka client then)."""
    region = config.on_prem_clusters[site].region
    return next((key for key in config.kafka_clusters() if config.clusters[key].region == region), None)


def site_clients(config: PlatformConfig, site: str) -> list[str]:
    """The Kafka clients (OAuth: the only way in from a site) that run at a site, either engine."""
    kafka = config.kafka
    if kafka is None:
        return []
    return [
        client
        for client, spec in kafka.clients.items()
        if spec.authentication == "oauth" and client in config.workloads and site in config.workloads[client].sites
    ]


def served_sites(config: PlatformConfig, cluster: str) -> list[str]:
    """The sites whose Kafka clients this cluster's (Strimzi) Kafka serves."""
    if config.strimzi is None:
        return []
    return [
        site for site in config.on_prem_clusters if site_clients(config, site) and site_host(config, site) == cluster
    ]


def event_hubs_bootstrap(config: PlatformConfig) -> str:
    """The Event Hubs namespace's Kafka endpoint (components/event_hubs.py names it in the primary
    region), which a cluster or a site reaches through its region's private endpoint."""
    name = Naming(config.prefix, config.environment).regional("evhns", config.primary_region)
    return f"{event_hubs_namespace_host(name)}:{EVENT_HUBS_KAFKA_PORT}"


def site_bootstrap(config: PlatformConfig, site: str) -> str:
    """Where a site's clients bootstrap: Event Hubs' endpoint, or their Strimzi host's listener for
    other networks."""
    kafka = config.kafka
    if kafka is not None and kafka.engine == "eventhubs":
        return event_hubs_bootstrap(config)
    host = site_host(config, site)
    assert host is not None  # validation.checks.kafka refuses a site client without a host
    return f"{replication_bootstrap_address(config, host)}:{REPLICATION_PORT}"


def remote_listener(config: PlatformConfig, cluster: str) -> bool:
    """Whether a cluster's Kafka has the listener other networks reach: it mirrors, or serves sites."""
    return cluster in mirror_clusters(config) or bool(served_sites(config, cluster))


def site_peer_ranges(config: PlatformConfig, cluster: str) -> list[str]:
    """Where the served sites' clients connect from: their servers (a site's CNI masquerades its
    pods' traffic leaving the cluster to the server's address: docs/hybrid.md, step 1)."""
    return [str(r) for site in served_sites(config, cluster) for r in config.on_prem_clusters[site].node_ranges]


def mirror_peer_ranges(config: PlatformConfig, cluster: str) -> list[str]:
    """Where the other clusters' MirrorMakers connect from: their node subnets, and their pod
    subnets with classic CNI (overlay pods leave the node with its address)."""
    return [
        str(subnet)
        for other in mirror_clusters(config)
        if other != cluster
        for subnet in (config.clusters[other].subnets.nodes, config.clusters[other].subnets.pods)
        if subnet is not None
    ]
