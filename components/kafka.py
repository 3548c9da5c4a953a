"""The event backbone on AKS: Kafka run by the Strimzi operator (KRaft), one cluster per
hosting AKS cluster, named after it, and MirrorMaker 2 between them.

Per hosting cluster, in the `kafka` namespace:
- the Strimzi cluster operator (pinned chart, images through the platform's registry),
  watching only its own namespace, where every Strimzi resource lives;
- a StorageClass of Premium SSDs with `reclaimPolicy: Retain`, so a deleted claim leaves its
  disk (and the data) behind;
- `KafkaNodePool`s of three controllers and N brokers on the dedicated, tainted Kafka pool,
  one per node, spread over zones 1-3, on that class with `deleteClaim: false`;
- the `Kafka`: rack awareness by zone, TLS on every listener, OAuth (Entra ID tokens,
  validated against the tenant's keys) or client certificates, `simple` ACLs, RF 3 and
  min ISR 2 by default, Cruise Control with auto-rebalancing, the entity operators, and
  metrics for managed Prometheus;
- a `KafkaTopic` per topic and a `KafkaUser` per client carrying its ACLs: OAuth clients
  are named by their workload identity's object ID (the `oid` claim of their tokens).
The brokers' NetworkPolicy is the one Strimzi renders from each listener's
`networkPolicyPeers`: only the declared clients' namespaces (and MirrorMaker) get in.

`KafkaMirror` then runs a `KafkaMirrorMaker2` in each cluster, pulling the other clusters'
topics (as `<cluster>.<topic>`) over an internal load balancer listener reachable across
the peered VNets; MirrorMaker signs in with its own workload identity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from components.aliases import moved_from
from components.charts import helm_release
from components.isolation import isolate
from components.rbac import bound_role
from facts.aks_load_balancer import INTERNAL_LB, INTERNAL_LB_SUBNET, LB_IPV4
from facts.workload_identity import CLIENT_ID_ANNOTATION, FEDERATED_TOKEN_FILE, TENANT_ID_ANNOTATION, USE_LABEL
from planning import kafka as kafka_plan
from planning.charts import STRIMZI, SYSTEM_POOL_TOLERATION
from planning.gpu import toleration
from planning.images import mirrored
from planning.naming import WORKLOAD_LABEL
from planning.network_policy import NamespaceTraffic
from planning.pod_security import RESTRICTED, pod_security_labels
from planning.priorities import PLATFORM_CRITICAL
from stackconfig.model import KafkaConfig, KafkaTopicConfig

API_VERSION = "kafka.strimzi.io/v1"
STORAGE_CLASS = "kafka-premium-retain"
ZONE_LABEL = "topology.kubernetes.io/zone"
CLUSTER_LABEL = "strimzi.io/cluster"
CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# What the brokers' metrics reporter exposes to managed Prometheus.
METRICS_ALLOW_LIST = [
    "kafka_server_.*",
    "kafka_controller_.*",
    "kafka_log_.*",
    "kafka_network_.*",
    "kafka_cluster_partition_.*",
    "kafka_coordinator_.*",
]
MIRROR_METRICS_ALLOW_LIST = ["kafka_connect_.*", "kafka_connect_mirror_.*"]


def _after(value: str, _: object) -> str:
    """`value`, once the output it is applied to is known (an ordering, not a dependency on it)."""
    return value


@dataclass(frozen=True)
class KafkaClientSpec:
    name: str
    namespace: str
    authentication: str  # oauth | tls
    # The workload identity's object ID: the principal of an OAuth client.
    principal_id: pulumi.Input[str]


@dataclass(frozen=True)
class MirrorIdentity:
    """MirrorMaker's workload identity (it signs in to every cluster with it)."""

    client_id: pulumi.Input[str]
    principal_id: pulumi.Input[str]


@dataclass(frozen=True)
class ReplicationEndpoint:
    """The internal load balancer listener other networks reach: the other clusters' MirrorMakers
    and the workloads of the sites this Kafka serves (named `mirror`, as it was first)."""

    bootstrap_address: str
    subnet_name: str
    # Where they connect from: the other clusters' node (and pod, with classic CNI) subnets, the
    # served sites' servers.
    peer_ranges: list[str]


@dataclass(frozen=True)
class StrimziKafkaArgs:
    cluster_key: str
    kafka: KafkaConfig
    clients: list[KafkaClientSpec]
    tenant_id: pulumi.Input[str]
    # Other clusters that host Kafka (their topics are mirrored here as <cluster>.<topic>).
    remote_clusters: list[str]
    mirror: MirrorIdentity | None
    replication: ReplicationEndpoint | None
    login_server: str
    pull_ready: list[pulumi.Resource]
    protect: bool
    # The kafka namespace's traffic (planning.cluster_traffic).
    traffic: NamespaceTraffic
    # What must exist before pods are created (the PriorityClasses).
    ready: list[pulumi.Resource] = field(default_factory=list)
    # Who reads the CA certificates here, by name (the tenants' plan identity's object ID: its
    # previews copy them to clients); every Kafka cluster's, as MirrorMaker's copies are named.
    ca_readers: list[str] = field(default_factory=list)
    ca_certificates: list[str] = field(default_factory=list)
    # Consumer groups whose lag KEDA scales on (planning/serving_scaling.py): the Kafka Exporter
    # reports them; none, no exporter.
    exporter_groups: list[str] = field(default_factory=list)


def kafka_scheduling(cluster: str, pool_name: str | None = None) -> dict[str, Any]:
    """Pod template: only on the tainted Kafka pools; for node pools, one broker or controller
    per node and an even spread over the zones."""
    template: dict[str, Any] = {
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": kafka_plan.KAFKA_POOL_LABEL, "operator": "In", "values": ["true"]}
                            ]
                        }
                    ]
                }
            }
        },
        "tolerations": [toleration(kafka_plan.KAFKA_POOL_TAINT)],
        # Brokers never make room for workloads.
        "priorityClassName": PLATFORM_CRITICAL.name,
    }
    if pool_name:
        template["affinity"]["podAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    # Brokers and controllers only (the entity operator and Cruise Control are
                    # `strimzi.io/kind: Kafka` too, and may share their nodes).
                    "labelSelector": {"matchLabels": {CLUSTER_LABEL: cluster, "strimzi.io/component-type": "kafka"}},
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
        template["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": ZONE_LABEL,
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"strimzi.io/pool-name": pool_name}},
            }
        ]
    return template


def oauth_listener_authentication(audience: str, tenant_id: pulumi.Input[str]) -> dict[str, Any]:
    """SASL OAUTHBEARER with Strimzi's validator: Entra ID v2 tokens of this tenant, for this
    audience; the principal is the caller's object ID (`oid`)."""
    jaas = pulumi.Output.from_input(tenant_id).apply(
        lambda tenant: " ".join(
            [
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required",
                'unsecuredLoginStringClaim_sub="unused"',
                f'oauth.valid.issuer.uri="{kafka_plan.entra_issuer(tenant)}"',
                f'oauth.jwks.endpoint.uri="{kafka_plan.entra_jwks_uri(tenant)}"',
                'oauth.username.claim="oid"',
                # Entra ID puts `typ` in the token's header, not among its claims.
                'oauth.check.access.token.type="false"',
                'oauth.check.audience="true"',
                f'oauth.client.id="{audience}"',
                ";",
            ]
        )
    )
    return {
        "type": "custom",
        "sasl": True,
        "listenerConfig": {
            "sasl.enabled.mechanisms": "OAUTHBEARER",
            "oauthbearer.sasl.server.callback.handler.class": "io.strimzi.kafka.oauth.server.JaasServerOauthValidatorCallbackHandler",
            "oauthbearer.sasl.jaas.config": jaas,
            # Clients re-authenticate before their token's hour is up.
            "connections.max.reauth.ms": 3_600_000,
        },
    }


def oauth_client_authentication(
    audience: str, tenant_id: pulumi.Input[str], client_id: pulumi.Input[str]
) -> dict[str, Any]:
    """How a Strimzi-run client (MirrorMaker) gets its tokens: client credentials with the
    pod's federated workload identity token as the assertion; no secret anywhere."""
    jaas = pulumi.Output.all(tenant_id, client_id).apply(
        lambda values: " ".join(
            [
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required",
                f'oauth.token.endpoint.uri="{kafka_plan.entra_token_endpoint(values[0])}"',
                f'oauth.client.id="{values[1]}"',
                f'oauth.client.assertion.location="{FEDERATED_TOKEN_FILE}"',
                f'oauth.client.assertion.type="{CLIENT_ASSERTION_TYPE}"',
                f'oauth.scope="{kafka_plan.oauth_scope(audience)}"',
                ";",
            ]
        )
    )
    return {
        "type": "custom",
        "sasl": True,
        "config": {
            "sasl.mechanism": "OAUTHBEARER",
            "sasl.login.callback.handler.class": "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler",
            "sasl.jaas.config": jaas,
        },
    }


def namespace_peer(namespace: str) -> dict[str, Any]:
    return {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}


MIRROR_PODS = {"podSelector": {"matchLabels": {"strimzi.io/kind": "KafkaMirrorMaker2"}}}
# Strimzi reads an empty peer list as "everyone": a listener nobody uses admits this instead,
# which no connection comes from.
NO_PEER = {"ipBlock": {"cidr": "0.0.0.0/32"}}


def peers_or_none(peers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return peers or [NO_PEER]


def listeners(args: StrimziKafkaArgs) -> list[dict[str, Any]]:
    """TLS and authentication on every listener; each admits only the peers that use it."""
    strimzi = args.kafka.strimzi
    assert strimzi is not None
    oauth = oauth_listener_authentication(strimzi.oauth.audience, args.tenant_id)
    oauth_namespaces = dict.fromkeys(c.namespace for c in args.clients if c.authentication == "oauth")
    tls_namespaces = dict.fromkeys(c.namespace for c in args.clients if c.authentication == "tls")
    result = [
        {
            "name": "oauth",
            "port": kafka_plan.OAUTH_PORT,
            "type": "internal",
            "tls": True,
            "authentication": oauth,
            "networkPolicyPeers": peers_or_none(
                [namespace_peer(ns) for ns in oauth_namespaces] + ([MIRROR_PODS] if args.mirror else [])
            ),
        }
    ]
    if tls_namespaces:
        result.append(
            {
                "name": "mtls",
                "port": kafka_plan.MUTUAL_TLS_PORT,
                "type": "internal",
                "tls": True,
                "authentication": {"type": "tls"},
                "networkPolicyPeers": [namespace_peer(ns) for ns in tls_namespaces],
            }
        )
    if args.replication:
        replication = args.replication
        result.append(
            {
                "name": "mirror",
                "port": kafka_plan.REPLICATION_PORT,
                "type": "loadbalancer",
                "tls": True,
                "authentication": oauth,
                "configuration": {
                    # Keep the other clusters' source addresses (their node subnets) for the policy.
                    "externalTrafficPolicy": "Local",
                    "bootstrap": {
                        "annotations": {LB_IPV4: replication.bootstrap_address},
                        "alternativeNames": [replication.bootstrap_address],
                    },
                },
                "networkPolicyPeers": peers_or_none([{"ipBlock": {"cidr": cidr}} for cidr in replication.peer_ranges]),
            }
        )
    return result


def kafka_spec(args: StrimziKafkaArgs) -> dict[str, Any]:
    strimzi = args.kafka.strimzi
    assert strimzi is not None
    internal_lb: dict[str, Any] = {}
    if args.replication:
        annotations = {INTERNAL_LB: "true", INTERNAL_LB_SUBNET: args.replication.subnet_name}
        internal_lb = {
            "externalBootstrapService": {"metadata": {"annotations": annotations}},
            "perPodService": {"metadata": {"annotations": annotations}},
        }
    return {
        "kafka": {
            "version": kafka_plan.KAFKA_VERSION,
            "listeners": listeners(args),
            "authorization": {"type": "simple"},
            # Replicas of a partition in different zones; consumers fetch from their own zone.
            "rack": {"topologyKey": ZONE_LABEL},
            "config": {
                "default.replication.factor": 3,
                "min.insync.replicas": 2,
                "offsets.topic.replication.factor": 3,
                "transaction.state.log.replication.factor": 3,
                "transaction.state.log.min.isr": 2,
                # Topics exist because the spec declares them, not because a client asked.
                "auto.create.topics.enable": False,
                "replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector",
                # OAuth principals (User:<oid>) and certificate principals (User:CN=<name>) alike.
                "principal.builder.class": "io.strimzi.kafka.oauth.server.OAuthKafkaPrincipalBuilder",
            },
            "metricsConfig": {"type": "strimziMetricsReporter", "values": {"allowList": METRICS_ALLOW_LIST}},
            **({"template": internal_lb} if internal_lb else {}),
        },
        "entityOperator": {
            "topicOperator": {},
            "userOperator": {},
            "template": {"pod": kafka_scheduling(args.cluster_key)},
        },
        # Rebalances partitions onto added brokers and off brokers about to be removed.
        "cruiseControl": {
            "autoRebalance": [
                {"mode": "add-brokers", "template": {"name": REBALANCE_TEMPLATE}},
                {"mode": "remove-brokers", "template": {"name": REBALANCE_TEMPLATE}},
            ],
            "template": {"pod": kafka_scheduling(args.cluster_key)},
        },
        **(
            {
                # Strimzi's Kafka Exporter: the lag of these groups alone, on the Kafka pool.
                "kafkaExporter": {
                    "groupRegex": "^(" + "|".join(re.escape(g) for g in args.exporter_groups) + ")$",
                    "topicRegex": ".*",
                    "template": {"pod": kafka_scheduling(args.cluster_key)},
                }
            }
            if args.exporter_groups
            else {}
        ),
    }


REBALANCE_TEMPLATE = "rebalance-on-scale"


def node_pool_spec(
    cluster: str, role: str, replicas: int, storage_gib: int, cpu: int | str, memory_gib: int
) -> dict[str, Any]:
    return {
        "replicas": replicas,
        "roles": [role],
        "storage": {
            "type": "persistent-claim",
            "size": f"{storage_gib}Gi",
            "class": STORAGE_CLASS,
            # The claim (and, with Retain, the disk) outlives the pool and the cluster resource.
            "deleteClaim": False,
        },
        "resources": {
            "requests": {"cpu": str(cpu), "memory": f"{memory_gib}Gi"},
            "limits": {"memory": f"{memory_gib}Gi"},
        },
        "template": {"pod": kafka_scheduling(cluster, pool_name=f"{role}s")},
    }


def topic_spec(topic: KafkaTopicConfig) -> dict[str, Any]:
    return {
        "topicName": topic.name,
        "partitions": topic.partitions,
        "replicas": topic.replication_factor,
        "config": kafka_plan.topic_config(topic),
    }


def strimzi_resource(
    parent: pulumi.Resource,
    provider: kubernetes.Provider,
    prefix: str,
    kind: str,
    object_name: pulumi.Input[str],
    spec: dict[str, Any],
    *,
    logical: str,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    depends_on: list[pulumi.Resource],
    protect: bool = False,
    aliases: list[pulumi.Alias] | None = None,
) -> kubernetes.apiextensions.CustomResource:
    """A Strimzi custom resource in the `kafka` namespace, named `<prefix>-<kind>-<logical>`."""
    return kubernetes.apiextensions.CustomResource(
        f"{prefix}-{kind.lower()}-{logical}",
        api_version=API_VERSION,
        kind=kind,
        metadata=kubernetes.meta.v1.ObjectMetaArgs(
            name=object_name,
            namespace=kafka_plan.KAFKA_NAMESPACE,
            labels=labels,
            annotations=annotations,
        ),
        spec=spec,
        opts=pulumi.ResourceOptions(
            parent=parent, provider=provider, depends_on=depends_on, protect=protect, aliases=aliases
        ),
    )


class StrimziKafka(pulumi.ComponentResource):
    """Outputs: `kafka` (the Kafka custom resource), `namespace`."""

    def __init__(
        self,
        name: str,
        args: StrimziKafkaArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:kafka:StrimziKafka", name, None, opts)
        strimzi = args.kafka.strimzi
        assert strimzi is not None
        cluster = args.cluster_key
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        # Stateful: deleting these deletes brokers' pods, topics (and their data) or users.
        kept = pulumi.ResourceOptions(parent=self, provider=provider, protect=args.protect)

        namespace = kubernetes.core.v1.Namespace(
            f"{name}-ns",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(
                name=kafka_plan.KAFKA_NAMESPACE,
                labels=pod_security_labels(RESTRICTED),
            ),
            opts=in_cluster,
        )
        isolate(name, args.traffic, provider=provider, parent=self, namespace=namespace)
        registry, _, repository = mirrored("quay.io/strimzi", args.login_server).partition("/")
        operator = helm_release(
            f"{name}-operator",
            STRIMZI,
            namespace.metadata.name,
            {
                # Its own namespace only: every Strimzi resource of the platform lives there.
                "watchNamespaces": [],
                "watchAnyNamespace": False,
                "defaultImageRegistry": registry,
                "defaultImageRepository": repository,
                "replicas": 2,
                "leaderElection": {"enable": True},
                "podDisruptionBudget": {"enabled": True},
                "priorityClassName": PLATFORM_CRITICAL.name,
                "tolerations": [SYSTEM_POOL_TOLERATION],
                # Kafka's pods then satisfy the namespace's `restricted` Pod Security level.
                "extraEnvs": [{"name": "STRIMZI_POD_SECURITY_PROVIDER_CLASS", "value": "restricted"}],
            },
            login_server=args.login_server,
            provider=provider,
            parent=self,
            depends_on=[*args.pull_ready, *args.ready],
        )
        storage_class = kubernetes.storage.v1.StorageClass(
            f"{name}-storage-class",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=STORAGE_CLASS),
            provisioner="disk.csi.azure.com",
            parameters={"skuName": "Premium_LRS", "cachingMode": "None", "fsType": "xfs"},
            # The disk stays when its claim goes: a deleted broker's data can be re-attached.
            reclaim_policy="Retain",
            # Created in the zone of the broker that claims it.
            volume_binding_mode="WaitForFirstConsumer",
            allow_volume_expansion=True,
            opts=kept,
        )

        def custom(kind: str, object_name: pulumi.Input[str], spec: dict[str, Any], **options: Any):
            return strimzi_resource(self, provider, name, kind, object_name, spec, **options)

        of_cluster = {CLUSTER_LABEL: cluster}
        ready: list[pulumi.Resource] = [operator, namespace]
        pools = [
            custom(
                "KafkaNodePool",
                "controllers",
                node_pool_spec(cluster, "controller", kafka_plan.CONTROLLERS, strimzi.controller_storage_gib, 1, 4),
                logical="controllers",
                labels=of_cluster,
                depends_on=ready + [storage_class],
                protect=args.protect,
            ),
            custom(
                "KafkaNodePool",
                "brokers",
                node_pool_spec(
                    cluster,
                    "broker",
                    strimzi.brokers,
                    strimzi.broker_storage_gib,
                    strimzi.broker_cpu,
                    strimzi.broker_memory_gib,
                ),
                logical="brokers",
                labels=of_cluster,
                depends_on=ready + [storage_class],
                protect=args.protect,
            ),
        ]
        rebalance = custom(
            "KafkaRebalance",
            REBALANCE_TEMPLATE,
            {},
            logical=REBALANCE_TEMPLATE,
            annotations={"strimzi.io/rebalance-template": "true"},
            depends_on=ready,
        )
        self.kafka = custom(
            "Kafka",
            cluster,
            kafka_spec(args),
            logical=cluster,
            # Later steps (MirrorMaker, the CA copy) wait until the cluster is actually up
            # (pulumi-kubernetes#3134); nodes, disks and a rolling start take a while.
            annotations={"pulumi.com/waitFor": "condition=Ready", "pulumi.com/timeoutSeconds": "2700"},
            depends_on=ready + pools + [rebalance],
            protect=args.protect,
        )
        kubernetes.apiextensions.CustomResource(
            f"{name}-podmonitor",
            api_version="azmonitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name="strimzi", namespace=kafka_plan.KAFKA_NAMESPACE),
            spec={
                "selector": {
                    "matchExpressions": [
                        {"key": "strimzi.io/kind", "operator": "In", "values": ["Kafka", "KafkaMirrorMaker2"]}
                    ]
                },
                "podMetricsEndpoints": [{"port": "tcp-prometheus", "path": "/metrics", "interval": "30s"}],
            },
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace]),
        )
        if args.ca_readers:
            self._ca_readers(name, args, provider, namespace)
        self.namespace = namespace
        self.register_outputs({})

    def _ca_readers(
        self, name: str, args: StrimziKafkaArgs, provider: kubernetes.Provider, namespace: pulumi.Resource
    ) -> None:
        """The CA certificates, by name, and never the CAs' keys beside them: a Kubernetes Role
        with `resourceNames`, which Azure RBAC for Kubernetes cannot express (it scopes to a
        namespace at most), bound to each reader's object ID (AKS's username for it)."""
        metadata = kubernetes.meta.v1.ObjectMetaArgs(
            name=kafka_plan.CA_READER_ROLE, namespace=kafka_plan.KAFKA_NAMESPACE
        )
        in_namespace = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace])
        bound_role(
            f"{name}-ca-reader",
            metadata,
            [
                kubernetes.rbac.v1.PolicyRuleArgs(
                    api_groups=[""], resources=["secrets"], verbs=["get"], resource_names=sorted(args.ca_certificates)
                )
            ],
            [
                kubernetes.rbac.v1.SubjectArgs(kind="User", name=reader, api_group="rbac.authorization.k8s.io")
                for reader in args.ca_readers
            ],
            in_namespace,
        )


@dataclass(frozen=True)
class KafkaAccessArgs:
    cluster_key: str
    kafka: KafkaConfig
    clients: list[KafkaClientSpec]
    remote_clusters: list[str]
    mirror: MirrorIdentity | None
    # The cluster's `Kafka` resource's ID (its CA Secret exists once it is Ready).
    kafka_id: pulumi.Input[str]
    protect: bool
    # Resources to wait for where they are in the same stack: the Kafka, the team namespaces.
    kafka_resource: pulumi.Resource | None = None
    team_namespaces: dict[str, pulumi.Resource] = field(default_factory=dict)


class KafkaAccess(pulumi.ComponentResource):
    """What teams change on one cluster's Kafka: a `KafkaTopic` per topic, a `KafkaUser` per
    client (and MirrorMaker's) with its ACLs, and the cluster CA's certificate copied into each
    client namespace. The Kafka itself is `StrimziKafka`'s; this is the tenants' layer."""

    def __init__(
        self,
        name: str,
        args: KafkaAccessArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:kafka:KafkaAccess", name, None, opts)
        cluster = args.cluster_key
        # The resources are named (and used to be parented) as StrimziKafka's; the alias keeps
        # them across the split of a deployed single-stack environment (docs/migration.md).
        prefix = f"kafka-{cluster}"
        moved = moved_from(prefix, "platform:kafka:StrimziKafka", opts)
        after_kafka = [args.kafka_resource] if args.kafka_resource else []

        def custom(kind: str, object_name: pulumi.Input[str], spec: dict[str, Any], **options: Any):
            return strimzi_resource(self, provider, prefix, kind, object_name, spec, aliases=moved, **options)

        of_cluster = {CLUSTER_LABEL: cluster}
        for topic in args.kafka.topics:
            custom(
                "KafkaTopic",
                topic.name,
                topic_spec(topic),
                logical=topic.name,
                labels=of_cluster,
                depends_on=after_kafka,
                protect=args.protect,
            )
        for client in args.clients:
            user_spec: dict[str, Any] = {
                "authorization": {
                    "type": "simple",
                    "acls": kafka_plan.kafka_acls(args.kafka, client.name, args.remote_clusters),
                }
            }
            if client.authentication == "tls":
                user_spec["authentication"] = {"type": "tls"}
            custom(
                "KafkaUser",
                # An OAuth client's principal is User:<object ID>; a certificate's, User:CN=<name>.
                client.principal_id if client.authentication == "oauth" else client.name,
                user_spec,
                logical=client.name,
                labels={**of_cluster, WORKLOAD_LABEL: client.name},
                depends_on=after_kafka,
            )
        if args.mirror:
            custom(
                "KafkaUser",
                args.mirror.principal_id,
                {
                    "authorization": {
                        "type": "simple",
                        "acls": kafka_plan.mirror_acls(args.kafka, cluster, args.remote_clusters),
                    }
                },
                logical=kafka_plan.MIRROR_NAME,
                labels={**of_cluster, WORKLOAD_LABEL: kafka_plan.MIRROR_NAME},
                depends_on=after_kafka,
            )
        # Clients trust the brokers through Strimzi's cluster CA: its certificate (public) is
        # copied into each client namespace once the cluster is Ready (unknown before that).
        certificate = cluster_ca_certificate(
            f"{prefix}-cluster-ca-cert", cluster, args.kafka_id, pulumi.ResourceOptions(parent=self, provider=provider)
        )

        def waits(namespace_name: str) -> list[pulumi.Resource]:
            return [args.team_namespaces[namespace_name]] if namespace_name in args.team_namespaces else []

        for namespace_name in dict.fromkeys(client.namespace for client in args.clients):
            kubernetes.core.v1.ConfigMap(
                f"{prefix}-ca-{namespace_name}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(
                    name=kafka_plan.CA_CONFIG_MAP, namespace=namespace_name, labels=of_cluster
                ),
                data={"ca.crt": certificate},
                opts=pulumi.ResourceOptions(
                    parent=self, provider=provider, depends_on=waits(namespace_name), aliases=moved
                ),
            )
        for namespace_name in dict.fromkeys(c.namespace for c in args.clients if c.authentication == "oauth"):
            bootstrap_config_map(
                f"{prefix}-bootstrap-{namespace_name}",
                namespace_name,
                kafka_plan.strimzi_bootstrap(cluster, kafka_plan.OAUTH_PORT),
                kafka_plan.IN_CLUSTER_IDLE_MS,
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=waits(namespace_name)),
            )
        self.register_outputs({})


def bootstrap_config_map(
    name: str, namespace: str, bootstrap: pulumi.Input[str], idle_ms: int, opts: pulumi.ResourceOptions
) -> kubernetes.core.v1.ConfigMap:
    """Where the Kafka of this cluster is, for its OAuth clients' jobs that run wherever MultiKueue
    sends them (planning/kafka.py, BOOTSTRAP_CONFIG_MAP): Strimzi's brokers here, or Event Hubs;
    and how long a connection to it may idle."""
    return kubernetes.core.v1.ConfigMap(
        name,
        metadata=kubernetes.meta.v1.ObjectMetaArgs(name=kafka_plan.BOOTSTRAP_CONFIG_MAP, namespace=namespace),
        data={kafka_plan.BOOTSTRAP_KEY: bootstrap, kafka_plan.IDLE_KEY: str(idle_ms)},
        opts=opts,
    )


def cluster_ca_certificate(
    name: str, cluster: str, kafka_id: pulumi.Input[str], opts: pulumi.ResourceOptions
) -> pulumi.Output[str]:
    """The Kafka cluster CA's certificate (public, PEM), read from Strimzi's Secret once the Kafka
    is Ready (`kafka_id` known), with `opts`' provider for its cluster: by the tenants (into client
    namespaces) and by a site's unit (into its baseline)."""
    ca = kubernetes.core.v1.Secret.get(
        name,
        pulumi.Output.from_input(kafka_id).apply(
            partial(_after, f"{kafka_plan.KAFKA_NAMESPACE}/{kafka_plan.cluster_ca_secret(cluster)}")
        ),
        opts=opts,
    )
    return pulumi.Output.unsecret(ca.data.apply(lambda data: kafka_plan.ca_bundle(data or {})))


@dataclass(frozen=True)
class MirrorSource:
    cluster_key: str
    bootstrap_address: str
    provider: kubernetes.Provider
    # The source's `Kafka` resource's ID; the resource itself where it is in the same stack.
    kafka_id: pulumi.Input[str]
    kafka: pulumi.Resource | None = None


@dataclass(frozen=True)
class KafkaMirrorArgs:
    cluster_key: str
    kafka: KafkaConfig
    sources: list[MirrorSource]
    identity: MirrorIdentity
    tenant_id: pulumi.Input[str]
    local_kafka: pulumi.Resource | None = None


def topics_pattern(kafka: KafkaConfig) -> str:
    """The declared topics only: never the copies, or active/active would mirror in circles."""
    return "|".join(re.escape(topic.name) for topic in kafka.topics) or "^$"


class KafkaMirror(pulumi.ComponentResource):
    """One cluster's MirrorMaker 2, pulling every other cluster's topics into this one."""

    def __init__(
        self,
        name: str,
        args: KafkaMirrorArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:kafka:KafkaMirror", name, None, opts)
        strimzi = args.kafka.strimzi
        assert strimzi is not None
        audience = strimzi.oauth.audience
        authentication = oauth_client_authentication(audience, args.tenant_id, args.identity.client_id)
        cluster = args.cluster_key
        trusts = []
        for source in args.sources:
            # The other cluster's CA certificate (public), read once its Kafka is Ready; unknown
            # in the preview of a new environment, when there is nothing to read yet.
            secret_name = kafka_plan.cluster_ca_secret(source.cluster_key)
            remote_ca = kubernetes.core.v1.Secret.get(
                f"{name}-{source.cluster_key}-ca-source",
                # Named once the source's Kafka exists (its operator writes the CA Secret).
                pulumi.Output.from_input(source.kafka_id).apply(
                    partial(_after, f"{kafka_plan.KAFKA_NAMESPACE}/{secret_name}")
                ),
                opts=pulumi.ResourceOptions(parent=self, provider=source.provider),
            )
            trusts.append(
                kubernetes.core.v1.Secret(
                    f"{name}-{source.cluster_key}-ca",
                    metadata=kubernetes.meta.v1.ObjectMetaArgs(
                        name=secret_name,
                        namespace=kafka_plan.KAFKA_NAMESPACE,
                        labels={"platform.ai/copied-from": source.cluster_key},
                    ),
                    data=remote_ca.data.apply(lambda data: {"ca.crt": (data or {}).get("ca.crt", "")}),
                    opts=pulumi.ResourceOptions(parent=self, provider=provider),
                )
            )
        spec = {
            "version": kafka_plan.KAFKA_VERSION,
            "replicas": strimzi.mirror_maker.replicas,
            "target": {
                "alias": cluster,
                "bootstrapServers": kafka_plan.strimzi_bootstrap(cluster, kafka_plan.OAUTH_PORT),
                "groupId": kafka_plan.MIRROR_GROUP,
                "configStorageTopic": kafka_plan.MIRROR_INTERNAL_TOPICS[0],
                "offsetStorageTopic": kafka_plan.MIRROR_INTERNAL_TOPICS[1],
                "statusStorageTopic": kafka_plan.MIRROR_INTERNAL_TOPICS[2],
                "tls": {
                    "trustedCertificates": [{"secretName": kafka_plan.cluster_ca_secret(cluster), "pattern": "*.crt"}]
                },
                "authentication": authentication,
            },
            "mirrors": [
                {
                    "source": {
                        "alias": source.cluster_key,
                        "bootstrapServers": f"{source.bootstrap_address}:{kafka_plan.REPLICATION_PORT}",
                        "tls": {
                            "trustedCertificates": [
                                {"secretName": kafka_plan.cluster_ca_secret(source.cluster_key), "pattern": "*.crt"}
                            ]
                        },
                        "authentication": authentication,
                    },
                    "sourceConnector": {
                        "tasksMax": max(topic.partitions for topic in args.kafka.topics) if args.kafka.topics else 1,
                        "config": {
                            "replication.factor": -1,
                            "offset-syncs.topic.location": "target",
                            # ACLs are this program's; MirrorMaker must not copy them around.
                            "sync.topic.acls.enabled": "false",
                        },
                    },
                    "checkpointConnector": {
                        "config": {
                            "checkpoints.topic.replication.factor": -1,
                            "offset-syncs.topic.location": "target",
                            # Readers fail over to the other cluster at their mirrored offsets.
                            "sync.group.offsets.enabled": "true",
                        },
                    },
                    "topicsPattern": topics_pattern(args.kafka),
                    "groupsPattern": kafka_plan.mirrored_groups_pattern(args.kafka),
                }
                for source in args.sources
            ],
            "rack": {"topologyKey": ZONE_LABEL},
            "metricsConfig": {"type": "strimziMetricsReporter", "values": {"allowList": MIRROR_METRICS_ALLOW_LIST}},
            "template": {
                "pod": {
                    **kafka_scheduling(cluster),
                    "metadata": {"labels": {USE_LABEL: "true"}},
                },
                "serviceAccount": {
                    "metadata": {
                        "annotations": {
                            CLIENT_ID_ANNOTATION: args.identity.client_id,
                            TENANT_ID_ANNOTATION: args.tenant_id,
                        }
                    }
                },
            },
        }
        kubernetes.apiextensions.CustomResource(
            f"{name}-kafkamirrormaker2",
            api_version=API_VERSION,
            kind="KafkaMirrorMaker2",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(
                name=kafka_plan.MIRROR_NAME, namespace=kafka_plan.KAFKA_NAMESPACE
            ),
            spec=spec,
            opts=pulumi.ResourceOptions(
                parent=self,
                provider=provider,
                depends_on=[
                    *([args.local_kafka] if args.local_kafka else []),
                    *trusts,
                    *(s.kafka for s in args.sources if s.kafka),
                ],
            ),
        )
        self.register_outputs({})
