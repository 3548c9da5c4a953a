"""Strimzi Kafka: authenticated TLS listeners, durable replication, retained and protected volumes."""

from __future__ import annotations

from guardrail import lookup, resource_policy, stack_policy
from pulumi_policy import Severity

KAFKA = "kubernetes:kafka.strimzi.io/v1:Kafka"
NODE_POOL = "kubernetes:kafka.strimzi.io/v1:KafkaNodePool"
TOPIC = "kubernetes:kafka.strimzi.io/v1:KafkaTopic"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
# The custom resources whose deletion deletes data: the cluster, its volumes' pools, its topics.
STATEFUL_KAFKA_TYPES = (KAFKA, NODE_POOL, TOPIC)


def listeners_secured(args, report):
    if args.resource_type != KAFKA:
        return
    for listener in list(lookup(args.props, "spec.kafka.listeners") or []):
        name = listener.get("name")
        if listener.get("tls") is not True:
            report(f"Listener {name!r} does not use TLS.")
        if not listener.get("authentication"):
            report(f"Listener {name!r} has no authentication: any pod that reaches it is anonymous.")
    if not lookup(args.props, "spec.kafka.authorization"):
        report("spec.kafka.authorization is not set: every authenticated client may do anything.")


DURABILITY_SCHEMA = {
    "minimumReplicas": {"type": "integer", "minimum": 1, "default": 3},
    "minimumInSyncReplicas": {"type": "integer", "minimum": 1, "default": 2},
}


def _int(value, default: int = 0) -> int:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return default


def replication_durable(args, report):
    config = args.get_config()
    replicas = config.get("minimumReplicas", 3)
    in_sync = config.get("minimumInSyncReplicas", 2)
    if args.resource_type == TOPIC:
        name = lookup(args.props, "metadata.name")
        if _int(lookup(args.props, "spec.replicas")) < replicas:
            report(f"Topic {name!r} has {lookup(args.props, 'spec.replicas')} replicas (at least {replicas}).")
        configured = lookup(args.props, "spec.config") or {}
        if "min.insync.replicas" in configured and _int(configured["min.insync.replicas"]) < in_sync:
            report(f"Topic {name!r} sets min.insync.replicas {configured['min.insync.replicas']} (at least {in_sync}).")
    elif args.resource_type == KAFKA:
        broker_config = lookup(args.props, "spec.kafka.config") or {}
        for key, minimum in (
            ("default.replication.factor", replicas),
            ("offsets.topic.replication.factor", replicas),
            ("min.insync.replicas", in_sync),
        ):
            if _int(broker_config.get(key), 1) < minimum:
                report(f"spec.kafka.config.{key} is {broker_config.get(key)} (at least {minimum}).")


def _cluster(resource) -> str | None:
    """The Kubernetes provider (so the cluster) a resource belongs to: names repeat across clusters."""
    return resource.provider.urn if resource.provider else None


def volumes_retained(args, report):
    reclaim = {
        (_cluster(r), lookup(r.props, "metadata.name")): lookup(r.props, "reclaimPolicy", "Delete")
        for r in args.resources
        if r.resource_type == STORAGE_CLASS
    }
    for resource in args.resources:
        if resource.resource_type != NODE_POOL:
            continue
        storage = lookup(resource.props, "spec.storage") or {}
        volumes = list(storage.get("volumes") or []) if storage.get("type") == "jbod" else [storage]
        for volume in volumes:
            if volume.get("type") == "ephemeral":
                report(f"{resource.name}: ephemeral storage loses the log when a pod restarts.", resource.urn)
                continue
            if volume.get("deleteClaim") is True:  # Strimzi's default is false
                report(f"{resource.name}: deleteClaim is true, so scaling down deletes the volume.", resource.urn)
            # AKS's built-in classes (managed-csi, default) delete the disk with its claim.
            policy = reclaim.get((_cluster(resource), volume.get("class")))
            if policy != "Retain":
                found = f"has reclaimPolicy {policy}" if policy else "is not a StorageClass this stack creates"
                report(
                    f"{resource.name}: StorageClass {volume.get('class')} {found}; a deleted claim would "
                    "delete the disk.",
                    resource.urn,
                )


def kafka_protected(args, report):
    for resource in args.resources:
        if resource.resource_type in STATEFUL_KAFKA_TYPES and not resource.opts.protect:
            report(
                f"{resource.resource_type.rsplit(':', 1)[-1]} {resource.name} is not protected: deleting it "
                "deletes data.",
                resource.urn,
            )


POLICIES = [
    resource_policy(
        "kafka-listeners-secured",
        "Kafka listeners use TLS and authentication, and the cluster authorizes every request.",
        listeners_secured,
        severity=Severity.CRITICAL,
        remediation="Give each listener tls: true and an authentication block (OAuth or mTLS), and set "
        "spec.kafka.authorization (components/kafka.py does).",
    ),
    resource_policy(
        "kafka-replication-durable",
        "Kafka keeps every record on at least three brokers and acknowledges writes on two.",
        replication_durable,
        severity=Severity.HIGH,
        remediation="Keep kafka.topics[].replicationFactor at 3 or more and minInSyncReplicas at 2 or more.",
        config=DURABILITY_SCHEMA,
    ),
    stack_policy(
        "kafka-volumes-retained",
        "Kafka node pools keep their volumes: persistent claims that are never deleted, on a Retain class "
        "this stack creates.",
        volumes_retained,
        severity=Severity.HIGH,
        remediation="Use persistent-claim storage with deleteClaim: false on a StorageClass with reclaimPolicy: Retain.",
    ),
    stack_policy(
        "kafka-resources-protected",
        "The Kafka cluster, its node pools and its topics are protected from deletion.",
        kafka_protected,
        severity=Severity.HIGH,
        remediation="Set platform:protect: true in the stack (prod does).",
    ),
]
