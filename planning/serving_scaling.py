"""Scaling served Deployments with KEDA (docs/serving.md, "Scaling"; facts/keda.py).

Per Deployment of `platform:serving.scaling`, on each serving cluster its workload runs on:
- managed Prometheus scrapes the model server's metrics (a PodMonitor on its pods), or for a
  stream consumer, Strimzi's Kafka Exporter on the cluster's Kafka (the `strimzi` PodMonitor);
- a ScaledObject scales the Deployment on its queue depth (the model server's gauge of waiting
  requests, summed over the Deployment's pods on this cluster), `waitingPerReplica` each, or on
  its consumer group's lag, `lagPerReplica` each, between `minReplicas` and `maxReplicas`; while
  the metrics cannot be read it holds `fallbackReplicas`;
- with `scaleFromZero`, a second trigger wakes it from zero on the gateway's request rate to its
  Services (those metrics exist at zero replicas: the gateway answers 503 and counts it);
- KEDA's operator reads the region's Azure Monitor workspace as the `serving-scaler` identity
  (a federated credential for kube-system/keda-operator, Monitoring Data Reader on that
  workspace), named in a TriggerAuthentication beside the ScaledObject.

The ceiling is not KEDA's alone: Kueue's pod integration admits each new pod against the team's
quota, so a replica past it waits, gated, with no node (docs/serving.md).

Pure: config in, manifests out.
"""

from __future__ import annotations

from typing import Any

from facts import istio, keda, strimzi
from planning.kafka import KAFKA_NAMESPACE
from planning.naming import Naming
from stackconfig.model import PlatformConfig
from stackconfig.model.serving import ServingScalingConfig

SCALER_WORKLOAD = "serving-scaler"
TRIGGER_AUTHENTICATION = "platform-prometheus"
# How far back the gateway's request rate looks when waking a Deployment from zero.
WAKE_WINDOW = "2m"


def scaled(config: PlatformConfig) -> dict[str, ServingScalingConfig]:
    return dict(config.serving.scaling) if config.serving is not None else {}


def scaling_clusters(config: PlatformConfig, name: str) -> list[str]:
    """The serving clusters that run the Deployment's workload: where KEDA scales it."""
    assert config.serving is not None
    spec = config.serving.scaling[name]
    if spec.workload not in config.workloads:
        return []
    runs = config.workload_clusters(spec.workload)
    return [c for c in config.serving.clusters if c in runs]


def keda_clusters(config: PlatformConfig) -> list[str]:
    """Clusters with KEDA's add-on on: those that scale a Deployment."""
    found = {c for name in scaled(config) for c in scaling_clusters(config, name)}
    return [c for c in config.serving.clusters if c in found] if config.serving is not None else []


def keda_regions(config: PlatformConfig) -> list[str]:
    return list(dict.fromkeys(config.clusters[c].region for c in keda_clusters(config)))


def pod_labels(name: str, spec: ServingScalingConfig) -> dict[str, str]:
    return dict(spec.pod_labels) or {"app": name}


def wake_services(config: PlatformConfig, name: str) -> list[str]:
    """The Services (as the gateway's metrics name them) of the APIs the Deployment's workload serves."""
    assert config.serving is not None
    spec = config.serving.scaling[name]
    workload = config.workloads.get(spec.workload)
    if workload is None:
        return []
    return sorted(
        {
            f"{api.service_name}.{workload.namespace}.svc.cluster.local"
            for api in config.serving.apis.values()
            if api.workload == spec.workload
        }
    )


def queue_query(config: PlatformConfig, cluster: str, name: str) -> str:
    """The Deployment's waiting requests on one cluster: every series of its pods there (the
    region's workspace holds the region's clusters, managed Prometheus labels each `cluster`)."""
    assert config.serving is not None
    spec = config.serving.scaling[name]
    namespace = config.workloads[spec.workload].namespace
    aks = Naming(config.prefix, config.environment).cluster(cluster)
    return f'sum({spec.queue_metric}{{cluster="{aks}", namespace="{namespace}", pod=~"{name}-.*"}})'


def lag_query(config: PlatformConfig, cluster: str, name: str) -> str:
    """The consumer group's lag on this cluster's Kafka, every topic and partition it reads,
    as Strimzi's Kafka Exporter reports it (facts/strimzi.py)."""
    assert config.serving is not None
    spec = config.serving.scaling[name]
    aks = Naming(config.prefix, config.environment).cluster(cluster)
    return (
        f'sum({strimzi.EXPORTER_LAG_METRIC}{{cluster="{aks}", namespace="{KAFKA_NAMESPACE}", '
        f'consumergroup="{spec.consumer_group}"}})'
    )


def exporter_groups(config: PlatformConfig, cluster: str) -> list[str]:
    """The consumer groups whose lag this cluster's Kafka Exporter reports (none: no exporter)."""
    return sorted(
        str(spec.consumer_group)
        for name, spec in scaled(config).items()
        if spec.signal == "kafka-lag" and cluster in scaling_clusters(config, name)
    )


def wake_query(config: PlatformConfig, cluster: str, name: str) -> str:
    aks = Naming(config.prefix, config.environment).cluster(cluster)
    services = "|".join(wake_services(config, name))
    return (
        f'sum(rate(istio_requests_total{{cluster="{aks}", reporter="source", '
        f'source_workload_namespace="{istio.INGRESS_NAMESPACE}", destination_service=~"{services}", '
        # A request the gateway refused (no token, no role) wakes no GPU: HTTP's 401 and 403, and
        # gRPC's UNAUTHENTICATED and PERMISSION_DENIED (Envoy answers gRPC with a status, over 200).
        f'response_code!~"401|403", grpc_response_status!~"7|16"}}[{WAKE_WINDOW}]))'
    )


def trigger_authentication(namespace: str, client_id: str) -> dict[str, Any]:
    """KEDA signs in as the scaler identity through its operator's federated token: no secret."""
    return {
        "apiVersion": keda.API_VERSION,
        "kind": "TriggerAuthentication",
        "metadata": {"name": TRIGGER_AUTHENTICATION, "namespace": namespace},
        "spec": {"podIdentity": {"provider": keda.WORKLOAD_IDENTITY_PROVIDER, "identityId": client_id}},
    }


def _trigger(
    server: str, query: str, threshold: str, activation: str | None = None, *, empty_is_zero: bool = True
) -> dict[str, Any]:
    metadata = {"serverAddress": server, "query": query, "threshold": threshold}
    if activation is not None:
        metadata["activationThreshold"] = activation
    if not empty_is_zero:
        # No series is an error, not "no load": KEDA's fallback then holds the replicas instead of
        # scaling in because a scrape broke (the scaler's default reads an empty result as 0).
        metadata["ignoreNullValues"] = "false"
    return {
        "type": "prometheus",
        # AverageValue: the threshold is per replica, and `fallback` applies (facts/keda.py).
        "metricType": "AverageValue",
        "metadata": metadata,
        "authenticationRef": {"name": TRIGGER_AUTHENTICATION, "kind": "TriggerAuthentication"},
    }


def scaled_object(config: PlatformConfig, cluster: str, name: str, query_endpoint: str) -> dict[str, Any]:
    assert config.serving is not None
    spec = config.serving.scaling[name]
    namespace = config.workloads[spec.workload].namespace
    lag = spec.signal == "kafka-lag"
    # At zero replicas the queue has no series by design; with pods running, it must have one.
    triggers = [
        _trigger(
            query_endpoint,
            lag_query(config, cluster, name) if lag else queue_query(config, cluster, name),
            str(spec.lag_per_replica) if lag else f"{spec.waiting_per_replica:g}",
            # Lag exists with no consumer running: any wakes it from zero.
            activation="0" if lag and spec.scale_from_zero else None,
            empty_is_zero=spec.min_replicas == 0,
        )
    ]
    if spec.scale_from_zero and not lag:
        # Any request in the window wakes it (activation above 0); it adds nothing past one replica.
        triggers.append(_trigger(query_endpoint, wake_query(config, cluster, name), "1000000", activation="0"))
    return {
        "apiVersion": keda.API_VERSION,
        "kind": "ScaledObject",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicaCount": spec.min_replicas,
            "maxReplicaCount": spec.max_replicas,
            "fallback": {
                "failureThreshold": keda.FALLBACK_FAILURES,
                "replicas": spec.fallback_replicas or max(spec.min_replicas, 1),
            },
            "triggers": triggers,
        },
    }


def metrics_monitor(config: PlatformConfig, name: str) -> dict[str, Any]:
    """Managed Prometheus scrapes the Deployment's pods (their metrics port and path)."""
    assert config.serving is not None
    spec = config.serving.scaling[name]
    return {
        "apiVersion": "azmonitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": {"name": name, "namespace": config.workloads[spec.workload].namespace},
        "spec": {
            "selector": {"matchLabels": pod_labels(name, spec)},
            "podMetricsEndpoints": [
                {"targetPort": spec.metrics_port, "path": spec.metrics_path, "interval": "15s"},
            ],
        },
    }


def scaling_manifests(
    config: PlatformConfig, cluster: str, client_id: str, query_endpoint: str
) -> list[dict[str, Any]]:
    """What one cluster's tenants unit applies for its scaled Deployments."""
    found: list[dict[str, Any]] = []
    namespaces: list[str] = []
    for name, spec in scaled(config).items():
        if cluster not in scaling_clusters(config, name):
            continue
        namespace = config.workloads[spec.workload].namespace
        if namespace not in namespaces:
            namespaces.append(namespace)
            found.append(trigger_authentication(namespace, client_id))
        if spec.signal == "queue-depth":
            found.append(metrics_monitor(config, name))
        found.append(scaled_object(config, cluster, name, query_endpoint))
    return found
