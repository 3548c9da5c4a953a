"""What the in-cluster GPU stack of one cluster installs, as plain values: the GPU and Network
Operators' chart values, the NicClusterPolicy of InfiniBand pools, the DCGM ServiceMonitor and
Kueue's configuration. `components/gpu_stack.py` installs them.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from facts.gpu import LABEL_PREFIX
from planning.charts import NETWORK_OPERATOR, SYSTEM_POOL_TOLERATION
from planning.cluster_traffic import GPU_OPERATOR_NAMESPACE, KUEUE_NAMESPACE
from planning.gpu import has_infiniband, node_agent_tolerations
from planning.images import mirrored
from planning.queues import KUEUE_FRAMEWORKS, TEAM_LABEL, Manifest
from planning.streaming import STREAMING_NAMESPACE_LABEL
from stackconfig.model import ClusterConfig

# The GPU operator's DCGM exporter Service (assets/state-dcgm-exporter in NVIDIA/gpu-operator).
DCGM_SERVICE_LABELS = {"app": "nvidia-dcgm-exporter"}
DCGM_PORT = "gpu-metrics"
# Extended resource the RDMA shared device plugin advertises on InfiniBand nodes; pods ask
# for `rdma/shared_ib: 1` (and IPC_LOCK) to use all of the node's IB links.
RDMA_RESOURCE_NAME = "shared_ib"
# Pods that share one node's InfiniBand adapters through the RDMA shared device plugin.
RDMA_HCA_MAX = 63
# The DOCA (MOFED) driver NVIDIA pairs with Network Operator 26.4.
DOCA_DRIVER_VERSION = "doca3.4.0-26.04-0.8.6.0-0"
KUEUE_VERSION = "v0.19.2"
MELLANOX_IMAGES = "nvcr.io/nvidia/mellanox"


def gpu_node_tolerations(cluster: ClusterConfig) -> list[dict[str, str]]:
    return node_agent_tolerations(cluster)


def gpu_operator_values(cluster: ClusterConfig) -> dict[str, Any]:
    """Values for NVIDIA's gpu-operator chart, derived from the cluster's one driver switch."""
    operator_installs_driver = cluster.gpu.driver == "operator"
    node_tolerations = gpu_node_tolerations(cluster)
    driver: dict[str, Any] = {"enabled": operator_installs_driver}
    if operator_installs_driver and has_infiniband(cluster):
        # GPUDirect RDMA (nvidia-peermem) against the DOCA driver of the Network Operator.
        driver["rdma"] = {"enabled": True}
    operator: dict[str, Any] = {"tolerations": [SYSTEM_POOL_TOLERATION]}
    if not operator_installs_driver:
        # AKS's GPU nodes register NVIDIA's runtime under this handler name, not the chart's
        # default `nvidia` (NVIDIA's GPU operator guide for AKS).
        operator["runtimeClass"] = "nvidia-container-runtime"
    return {
        # AKS's driver (gpuProfile.driver Install) ships its own container toolkit.
        "driver": driver,
        "toolkit": {"enabled": operator_installs_driver},
        # AKS partitions MIG at pool creation; each slice is one nvidia.com/gpu.
        "mig": {"strategy": "single"},
        "migManager": {"enabled": False},
        "devicePlugin": {"enabled": True},
        # DCGM's own host engine on each GPU node: the exporter and the health agents
        # (planning/gpu_health.py) share it instead of the exporter embedding one.
        "dcgm": {"enabled": True},
        "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": False}},
        "daemonsets": {"tolerations": node_tolerations},
        "operator": operator,
        # NFD labels the health agents' verdicts and taints faulty nodes (a NodeFeatureRule).
        "node-feature-discovery": {"worker": {"tolerations": node_tolerations}, "master": {"enableTaints": True}},
    }


def network_operator_values(cluster: ClusterConfig) -> dict[str, Any]:
    return {
        # The GPU operator already runs node feature discovery on every node.
        "nfd": {"enabled": False},
        "operator": {"tolerations": [SYSTEM_POOL_TOLERATION]},
    }


def nic_cluster_policy_spec(cluster: ClusterConfig, login_server: str) -> dict[str, Any]:
    """DOCA driver and RDMA shared device plugin on InfiniBand nodes only."""
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": f"{LABEL_PREFIX}/infiniband", "operator": "In", "values": ["true"]}]}
                ]
            }
        },
        "tolerations": gpu_node_tolerations(cluster),
        "ofedDriver": {
            "repository": mirrored(MELLANOX_IMAGES, login_server),
            "image": "doca-driver",
            "version": DOCA_DRIVER_VERSION,
            "upgradePolicy": {
                "autoUpgrade": True,
                "maxParallelUpgrades": 1,
                "drain": {"enable": True, "force": True, "deleteEmptyDir": True, "timeoutSeconds": 300},
            },
        },
        "rdmaSharedDevicePlugin": {
            "repository": mirrored(MELLANOX_IMAGES, login_server),
            "image": "k8s-rdma-shared-dev-plugin",
            "version": f"network-operator-{NETWORK_OPERATOR.version}",
            # The plugin reads this as config.json (json.Unmarshal): JSON, not YAML.
            "config": json.dumps(
                {
                    "configList": [
                        {
                            "resourceName": RDMA_RESOURCE_NAME,
                            "rdmaHcaMax": RDMA_HCA_MAX,
                            "selectors": {"vendors": ["15b3"], "linkTypes": ["infiniband"]},
                        }
                    ]
                }
            ),
        },
    }


def dcgm_service_monitor() -> Manifest:
    """Managed Prometheus scrapes DCGM through the CRD the AKS metrics add-on reads."""
    return Manifest(
        "ServiceMonitor",
        "nvidia-dcgm-exporter",
        {
            # Limits as in Azure's templates, so that no series is dropped.
            "labelLimit": 63,
            "labelNameLengthLimit": 511,
            "labelValueLengthLimit": 1023,
            "selector": {"matchLabels": DCGM_SERVICE_LABELS},
            "endpoints": [{"port": DCGM_PORT, "interval": "30s", "path": "/metrics"}],
        },
        namespace=GPU_OPERATOR_NAMESPACE,
        api_version="azmonitoring.coreos.com/v1",
    )


# The chart's metrics Service (charts/kueue/templates/manager/auth_proxy_service.yaml at v0.19.2).
KUEUE_METRICS_SERVICE_LABELS = {"app.kubernetes.io/component": "metrics-service"}


def kueue_service_monitor() -> Manifest:
    """Managed Prometheus scrapes Kueue's metrics, which it serves over HTTPS to authorized callers only.

    The collector presents its own service account token, as the chart's own monitor does
    (charts/kueue/templates/prometheus/monitor.yaml); `ama-metrics-serviceaccount` may already
    `get` the non-resource URL `/metrics` (its ClusterRole `ama-metrics-reader` in
    Azure/prometheus-collector otelcollector/deploy/addon-chart/azure-monitor-metrics-addon
    /templates/ama-metrics-clusterRole.yaml at v7.1.1-main-07-21-2026-39583fd5), which is what
    Kueue's authorization filter asks the API server. Kueue's serving certificate is its own
    self-signed one, so the chart skips verification; the token goes nowhere but this Service.
    """
    return Manifest(
        "ServiceMonitor",
        "kueue-controller-manager",
        {
            "labelLimit": 63,
            "labelNameLengthLimit": 511,
            "labelValueLengthLimit": 1023,
            "selector": {"matchLabels": KUEUE_METRICS_SERVICE_LABELS},
            "endpoints": [
                {
                    "port": "https",
                    "scheme": "https",
                    "path": "/metrics",
                    "interval": "30s",
                    "bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token",
                    "tlsConfig": {"insecureSkipVerify": True},
                }
            ],
        },
        namespace=KUEUE_NAMESPACE,
        api_version="azmonitoring.coreos.com/v1",
    )


def kueue_manager_config(multikueue_origin: str | None = None, pods_ready_timeout: str = "30m") -> str:
    """Kueue's controller configuration (config.kueue.x-k8s.io/v1beta2), as the chart takes it;
    on a dispatcher, MultiKueue's settings with the dispatcher's own origin (planning/dispatch.py)."""
    config: dict[str, Any] = {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2",
        "kind": "Configuration",
        "health": {"healthProbeBindAddress": ":8081"},
        # Per-queue quota and usage series, which the fleet dashboard reads (dashboards/).
        "metrics": {"bindAddress": ":8443", "enableClusterQueueResources": True},
        "webhook": {"port": 9443},
        "leaderElection": {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"},
        # The chart's defaults, kept: replacing the config must not lower them.
        "controller": {
            "groupKindConcurrency": {
                "Job.batch": 5,
                "Pod": 5,
                "Workload.kueue.x-k8s.io": 10,
                "LocalQueue.kueue.x-k8s.io": 5,
                "ClusterQueue.kueue.x-k8s.io": 5,
                "ResourceFlavor.kueue.x-k8s.io": 1,
            }
        },
        "clientConnection": {"qps": 300, "burst": 500},
        # All-or-nothing: a job whose pods are not all ready in time is evicted and requeued,
        # so a half-started gang does not hold GPUs. Long enough for the cluster's slowest GPU
        # pool (a dispatcher: its workers') to start cold from zero (planning/cold_start.py).
        "waitForPodsReady": {
            "timeout": pods_ready_timeout,
            "blockAdmission": False,
            "requeuingStrategy": {"timestamp": "Eviction", "backoffBaseSeconds": 60, "backoffMaxSeconds": 3600},
        },
        # Kueue manages jobs and pods in team namespaces only. The chart copies this selector into
        # every webhook it renders (charts/kueue/templates/webhook/manifests.yaml), whose
        # failurePolicy is Fail: without it, no pod could be created anywhere but kube-system and
        # kueue-system while Kueue is down, the GPU operator's and Kafka's included.
        # Streaming namespaces stay out: Flink's pods are bounded by a quota and their own pool.
        "managedJobsNamespaceSelector": {
            "matchExpressions": [
                {"key": TEAM_LABEL, "operator": "Exists"},
                {"key": STREAMING_NAMESPACE_LABEL, "operator": "DoesNotExist"},
            ]
        },
        # Queues account for cpu, memory and GPUs; requests for these do not need quota.
        "resources": {"excludeResourcePrefixes": ["ephemeral-storage", "hugepages-", "rdma/"]},
        "integrations": {"frameworks": list(KUEUE_FRAMEWORKS)},
    }
    if multikueue_origin:
        config["multiKueue"] = {
            "origin": multikueue_origin,
            # Kueue's defaults, stated: a worker unreachable this long has its jobs requeued on
            # the others; copies whose job is gone are removed every minute.
            "workerLostTimeout": "15m",
            "gcInterval": "1m",
        }
    return str(yaml.safe_dump(config, sort_keys=False))


def kueue_values(
    priority_class: str, multikueue_origin: str | None = None, pods_ready_timeout: str = "30m"
) -> dict[str, Any]:
    return {
        "controllerManager": {
            "manager": {
                # The chart's in-repo default is a staging image with pullPolicy Always; pin the release.
                "image": {"tag": KUEUE_VERSION, "pullPolicy": "IfNotPresent"},
                # Admission of every job goes through Kueue: never preempted by workloads.
                "priorityClassName": priority_class,
            },
            "replicas": 2,
            "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
            "tolerations": [SYSTEM_POOL_TOLERATION],
        },
        "managerConfig": {"controllerManagerConfigYaml": kueue_manager_config(multikueue_origin, pods_ready_timeout)},
    }
