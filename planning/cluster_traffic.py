"""Which traffic each namespace the platform creates needs, per cluster (pure planning).

One function per kind of namespace, each listing exactly what its pods must send and
receive; `planning.network_policy` turns that into policies. The config checks read the
same plan (a cluster whose namespaces reach hosts by name needs Advanced Container
Networking Services), so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from facts import istio
from planning import dispatch, lustre_csi
from planning import kafka as kafka_plan
from planning import postgresql as pg_plan
from planning import serving as serving_plan
from planning import streaming as streaming_plan
from planning.egress import DRIVER_BUILD_FQDNS, builds_drivers
from planning.gpu import has_infiniband
from planning.network_policy import (
    CILIUM_SERVICE_ACCOUNT_LABEL,
    ENTRA_ID_FQDN,
    HTTPS,
    FqdnRule,
    NamespaceTraffic,
    Peer,
    Port,
)
from stackconfig.model import PlatformConfig

GPU_OPERATOR_NAMESPACE = "gpu-operator"
NETWORK_OPERATOR_NAMESPACE = "nvidia-network-operator"
KUEUE_NAMESPACE = "kueue-system"
GPU_HEALTH_NAMESPACE = "gpu-health"
# kured's service account there: the one pod of the namespace that calls the API server.
GPU_REMEDIATION = "gpu-remediation"
GPU_GATE = "gpu-health-gate"
# The GPU operator's standalone DCGM host engine (its `dcgm.enabled`; assets/state-dcgm at v26.7.0).
DCGM_PORT = 5555
DCGM_POD_LABELS = {"app": "nvidia-dcgm"}

# Kueue's controller: admission webhooks, the visibility API (an aggregated API server)
# and its metrics endpoint (HTTPS), on the pods' container ports.
KUEUE_WEBHOOK_PORT = 9443
KUEUE_VISIBILITY_PORT = 8082
KUEUE_METRICS_PORT = 8443
# The GPU operator's DCGM exporter and the operator's own metrics.
DCGM_EXPORTER_PORT = 9400
GPU_OPERATOR_METRICS_PORT = 8080
# Strimzi: the cluster operator's metrics, and the Kafka pods' metrics port.
STRIMZI_OPERATOR_METRICS_PORT = 8080
KAFKA_METRICS_PORT = 9404
KAFKA_POD_LABELS = {"strimzi.io/kind": "Kafka"}
_ENTRA_ID = FqdnRule((ENTRA_ID_FQDN,))
_HTTP = 80


def private_endpoint_ranges(config: PlatformConfig, cluster_key: str) -> tuple[str, ...]:
    """Where the cluster reaches the data plane: its own region's private-endpoint subnet (every
    region with clusters has an endpoint of every data-plane resource, decision 0008)."""
    return (str(config.network.regions[config.clusters[cluster_key].region].subnets.private_endpoints),)


def _kafka_peer(config: PlatformConfig, cluster_key: str, clients: list[str]) -> Peer | None:
    """Egress from Kafka clients to the brokers (Strimzi) or Event Hubs (private endpoint)."""
    kafka = config.kafka
    if kafka is None or not clients:
        return None
    if kafka.engine == "eventhubs":
        return Peer(
            "event-hubs", (Port(kafka_plan.EVENT_HUBS_KAFKA_PORT),), cidrs=private_endpoint_ranges(config, cluster_key)
        )
    ports = sorted(
        {
            kafka_plan.OAUTH_PORT if kafka.clients[c].authentication == "oauth" else kafka_plan.MUTUAL_TLS_PORT
            for c in clients
        }
    )
    return Peer(
        "kafka", tuple(Port(p) for p in ports), namespace=kafka_plan.KAFKA_NAMESPACE, pod_labels=KAFKA_POD_LABELS
    )


def team_traffic(config: PlatformConfig, cluster_key: str, team: str, namespace: str) -> NamespaceTraffic:
    """A team namespace: its own pods, the data it was granted, Kafka, and its egressFqdns."""
    workloads = {
        name: spec
        for name, spec in config.workloads.items()
        # Where they run and where they fail over to: the namespace is ready when they land.
        if spec.namespace == namespace and cluster_key in config.identity_clusters(name)
    }
    clients = [name for name in workloads if config.kafka is not None and name in config.kafka.clients]
    egress: list[Peer] = []
    # Blob, Key Vault and Cosmos DB (its gateway, HTTPS) through the region's private endpoints.
    if any(spec.storage or spec.key_vault_secrets or spec.cosmos_db for spec in workloads.values()):
        egress.append(Peer("private-endpoints", (Port(HTTPS),), cidrs=private_endpoint_ranges(config, cluster_key)))
    if any(spec.postgresql for spec in workloads.values()):
        egress.append(Peer("postgresql", (Port(pg_plan.PORT),), cidrs=private_endpoint_ranges(config, cluster_key)))
    kafka = _kafka_peer(config, cluster_key, clients)
    if kafka is not None:
        egress.append(kafka)
    fqdns = []
    # Workload identity trades the pod's token for an Entra ID token at login.microsoftonline.com.
    if workloads:
        fqdns.append(_ENTRA_ID)
    team_fqdns = tuple(config.teams[team].egress_fqdns)
    if team_fqdns:
        fqdns.append(FqdnRule(team_fqdns))
    api_callers = sorted(spec.service_account for spec in workloads.values() if spec.kubernetes_api)
    ingress: tuple[Peer, ...] = ()
    if namespace in streaming_plan.streaming_namespaces(config):
        # The Flink operator observes and upgrades jobs through each JobManager's REST API.
        ingress = (
            Peer(
                "flink-operator",
                (Port(streaming_plan.JOB_MANAGER_REST_PORT),),
                namespace=streaming_plan.OPERATOR_NAMESPACE,
            ),
        )
    ingress += serving_ingress(config, cluster_key, namespace)
    egress += list(serving_egress(config, cluster_key, workloads))
    return NamespaceTraffic(
        namespace,
        ingress=ingress,
        # Only the service accounts of workloads that declare kubernetesApi reach the API server.
        api_server={
            "matchExpressions": [{"key": CILIUM_SERVICE_ACCOUNT_LABEL, "operator": "In", "values": api_callers}]
        }
        if api_callers
        else None,
        scraped=True,
        egress=tuple(egress),
        fqdns=tuple(fqdns),
    )


def _gateway_peer(name: str, ports: tuple[Port, ...]) -> Peer:
    return Peer(name, ports, namespace=istio.INGRESS_NAMESPACE, pod_labels=dict(istio.GATEWAY_SELECTOR))


def serving_ingress(config: PlatformConfig, cluster_key: str, namespace: str) -> tuple[Peer, ...]:
    """The serving gateway's pods reach the ports of the APIs served from this namespace, and no
    one else does (the namespace denies everything else)."""
    ports = tuple(
        dict.fromkeys(Port(p.port) for p in serving_plan.served_ports(config, cluster_key) if p.namespace == namespace)
    )
    return (_gateway_peer("serving-gateway", ports),) if ports else ()


def serving_egress(config: PlatformConfig, cluster_key: str, workloads: Mapping[str, Any]) -> tuple[Peer, ...]:
    """Callers of an API served on this cluster reach its gateway (the load balancer's address
    leads to the gateway's pods, which the policy sees)."""
    if config.serving is None or cluster_key not in serving_plan.serving_clusters(config):
        return ()
    callers = {caller for spec in config.serving.apis.values() for caller in spec.callers}
    if not callers & set(workloads):
        return ()
    # The gateway pods' port: policies see the traffic after the load balancer's translation.
    return (_gateway_peer("serving-gateway", (Port(istio.POD_HTTPS_PORT),)),)


def _driver_builds(config: PlatformConfig, cluster_key: str) -> tuple[FqdnRule, ...]:
    if not builds_drivers(config.clusters[cluster_key]):
        return ()
    return (FqdnRule(DRIVER_BUILD_FQDNS, (Port(_HTTP), Port(HTTPS))),)


def gpu_operator_traffic(config: PlatformConfig, cluster_key: str) -> NamespaceTraffic:
    """The GPU operator and its node agents: API server, metrics, driver builds."""
    driver = config.clusters[cluster_key].gpu.driver == "operator"
    return NamespaceTraffic(
        GPU_OPERATOR_NAMESPACE,
        api_server={},
        metrics_ports=(Port(DCGM_EXPORTER_PORT), Port(GPU_OPERATOR_METRICS_PORT)),
        # The health agents query their node's DCGM host engine.
        ingress=(Peer("gpu-health", (Port(DCGM_PORT),), namespace=GPU_HEALTH_NAMESPACE),),
        fqdns=_driver_builds(config, cluster_key) if driver else (),
    )


def gpu_health_traffic() -> NamespaceTraffic:
    """The GPU health agents reach only their node's DCGM, and their gate the API server (its
    node); kured, the API server (drains, its lock)."""
    return NamespaceTraffic(
        GPU_HEALTH_NAMESPACE,
        within_namespace=False,
        api_server={
            "matchExpressions": [
                {"key": CILIUM_SERVICE_ACCOUNT_LABEL, "operator": "In", "values": [GPU_GATE, GPU_REMEDIATION]}
            ]
        },
        egress=(Peer("dcgm", (Port(DCGM_PORT),), namespace=GPU_OPERATOR_NAMESPACE, pod_labels=DCGM_POD_LABELS),),
    )


def lustre_csi_traffic() -> NamespaceTraffic:
    """The Lustre CSI node plugin: nothing. Its pods are on the host's network (policies do not
    select them), call no API server and serve their health on the node (planning/lustre_csi.py)."""
    return NamespaceTraffic(lustre_csi.NAMESPACE, within_namespace=False)


def network_operator_traffic(config: PlatformConfig, cluster_key: str) -> NamespaceTraffic:
    """The Network Operator: API server, and the DOCA driver build on InfiniBand nodes."""
    return NamespaceTraffic(NETWORK_OPERATOR_NAMESPACE, api_server={}, fqdns=_driver_builds(config, cluster_key))


def kueue_traffic(config: PlatformConfig, cluster_key: str) -> NamespaceTraffic:
    """Kueue: the API server both ways (webhooks, visibility API), and its metrics; on a
    dispatcher, the workers' API servers too (MultiKueue creates and watches jobs there) and
    Entra ID (the refresher signs in there for the workers' tokens)."""
    api = config.clusters[cluster_key].api_server
    subnet = config.clusters[cluster_key].subnets.api_server
    workers = dispatch.worker_api_server_ranges(config) if cluster_key in config.jobs.dispatchers else ()
    return NamespaceTraffic(
        KUEUE_NAMESPACE,
        api_server={},
        webhook_ports=(Port(KUEUE_WEBHOOK_PORT), Port(KUEUE_VISIBILITY_PORT)),
        api_server_ranges=(str(subnet),) if api.vnet_integration and subnet is not None else (),
        metrics_ports=(Port(KUEUE_METRICS_PORT),),
        egress=(Peer("worker-api-servers", (Port(HTTPS),), cidrs=workers),) if workers else (),
        fqdns=(_ENTRA_ID,) if workers else (),
    )


def kafka_traffic(config: PlatformConfig, cluster_key: str) -> NamespaceTraffic:
    """Strimzi's namespace: operator and brokers talk among themselves and to the API
    server; clients come in through the listeners' own policies (Strimzi's
    `networkPolicyPeers`); brokers validate, and MirrorMaker fetches, Entra ID tokens;
    MirrorMaker reaches the other region's replication listener."""
    egress = []
    peers = (
        kafka_plan.mirror_peer_ranges(config, cluster_key) if cluster_key in kafka_plan.mirror_clusters(config) else []
    )
    if peers:
        egress.append(Peer("remote-kafka", (Port(kafka_plan.REPLICATION_PORT),), cidrs=tuple(peers)))
    return NamespaceTraffic(
        kafka_plan.KAFKA_NAMESPACE,
        api_server={},
        metrics_ports=(Port(KAFKA_METRICS_PORT), Port(STRIMZI_OPERATOR_METRICS_PORT)),
        egress=tuple(egress),
        fqdns=(_ENTRA_ID,),
    )


def flink_operator_traffic(config: PlatformConfig, cluster_key: str) -> NamespaceTraffic:
    """The Flink operator: the API server (it runs without its admission webhook), and each
    streaming namespace's JobManagers' REST API."""
    return NamespaceTraffic(
        streaming_plan.OPERATOR_NAMESPACE,
        api_server={},
        egress=tuple(
            Peer(f"jobs-{namespace}", (Port(streaming_plan.JOB_MANAGER_REST_PORT),), namespace=namespace)
            for namespace in streaming_plan.streaming_namespaces(config)
        ),
    )


def team_namespaces(config: PlatformConfig, cluster_key: str) -> dict[str, str]:
    """The team namespaces of this cluster (-> team): streaming namespaces exist on streaming
    clusters only."""
    streams = cluster_key in config.streaming_clusters()
    return {
        namespace: team
        for team, spec in config.teams.items()
        for namespace in spec.namespaces
        if streams or namespace not in spec.streaming_namespaces
    }


def cluster_traffic(config: PlatformConfig, cluster_key: str) -> dict[str, NamespaceTraffic]:
    """Every namespace the platform creates in this cluster, with its traffic."""
    cluster = config.clusters[cluster_key]
    traffic = {
        namespace: team_traffic(config, cluster_key, team, namespace)
        for namespace, team in team_namespaces(config, cluster_key).items()
    }
    if cluster.gpu_pools:
        traffic[GPU_OPERATOR_NAMESPACE] = gpu_operator_traffic(config, cluster_key)
        traffic[GPU_HEALTH_NAMESPACE] = gpu_health_traffic()
        if has_infiniband(cluster):
            traffic[NETWORK_OPERATOR_NAMESPACE] = network_operator_traffic(config, cluster_key)
    if cluster_key in lustre_csi.lustre_clusters(config):
        traffic[lustre_csi.NAMESPACE] = lustre_csi_traffic()
    if cluster.gpu_pools or cluster_key in config.jobs.dispatchers:
        traffic[KUEUE_NAMESPACE] = kueue_traffic(config, cluster_key)
    if cluster_key in config.kafka_clusters():
        traffic[kafka_plan.KAFKA_NAMESPACE] = kafka_traffic(config, cluster_key)
    if cluster_key in config.streaming_clusters():
        traffic[streaming_plan.OPERATOR_NAMESPACE] = flink_operator_traffic(config, cluster_key)
    return traffic


def fqdn_namespaces(config: PlatformConfig, cluster_key: str) -> list[str]:
    """Namespaces of the cluster whose pods reach hosts by name (they need ACNS)."""
    return [ns for ns, t in cluster_traffic(config, cluster_key).items() if t.needs_fqdn_policies]
