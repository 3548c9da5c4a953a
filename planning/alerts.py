"""What managed Prometheus evaluates for each cluster: recording rules and alert rules (pure planning).

Each cluster gets rule groups (azure-native `PrometheusRuleGroup`, one Azure Monitor workspace
each, scoped to the cluster by name): AKS's own recording rules, which its dashboards read, and
the platform's alerts for what breaks it. Every alert says why its threshold is what it is.
tests/test_alerts.py parses every expression (promql-parser) and checks every metric it reads
against facts/metrics.py, the names the exporters the platform deploys emit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from facts import istio
from facts.aks_node import AGENT_POOL_LABEL
from facts.gpu import POOL_LABEL, PREFLIGHT_LABEL, UNHEALTHY_TAINT_KEY
from facts.metrics import AKS_RECORDING_RULES
from planning import kafka as kafka_plan
from planning import lustre_csi
from planning import serving as serving_plan
from stackconfig.model import PlatformConfig


@dataclass(frozen=True)
class Alert:
    name: str
    expression: str
    # How long the condition holds before the alert fires (ISO 8601, as ARM takes it).
    for_: str
    severity: str  # critical | error | warning | informational
    summary: str
    # Why the threshold and the wait are what they are.
    why: str


@dataclass(frozen=True)
class RuleGroup:
    name: str
    description: str
    # (record, expression, labels), or alerts; a group holds one kind.
    recordings: tuple[tuple[str, str, dict[str, str]], ...] = ()
    alerts: tuple[Alert, ...] = field(default_factory=tuple)
    interval: str = "PT1M"


# Node labels kube-state-metrics exports as `kube_node_labels` (AKS's
# azureMonitorProfile.metrics.kubeStateMetrics.metricLabelsAllowlist; none by default): which
# pool a node is in, and whether it passed its GPU preflight.
EXPORTED_NODE_LABELS = (AGENT_POOL_LABEL, POOL_LABEL, PREFLIGHT_LABEL)


def kube_state_metric_labels() -> str:
    """The allowlist in kube-state-metrics' `--metric-labels-allowlist` syntax, as AKS takes it."""
    return f"nodes=[{','.join(EXPORTED_NODE_LABELS)}]"


def label_series(label: str) -> str:
    """The series label kube-state-metrics makes of a Kubernetes label (non-alphanumerics become _)."""
    return "label_" + "".join(c if c.isalnum() else "_" for c in label)


# Pending pods asking for GPUs (kube-state-metrics names the resource nvidia_com_gpu).
_PENDING_GPU_PODS = (
    'sum(kube_pod_container_resource_requests{resource="nvidia_com_gpu"} '
    '* on (namespace, pod) group_left () (kube_pod_status_phase{phase="Pending"} == 1)) > 0'
)


def pool_at_max_alerts(config: PlatformConfig, cluster_key: str) -> tuple[Alert, ...]:
    """One alert per autoscaled user pool: at its maximum while pods wait for what it has."""
    cluster = config.clusters[cluster_key]
    pools = [(name, pool.max_count, _PENDING_GPU_PODS) for name, pool in cluster.gpu_pools.items()]
    pools += [
        (name, pool.max_count, 'sum(kube_pod_status_phase{phase="Pending"}) > 0')
        for name, pool in cluster.node_pools.items()
    ]
    return tuple(
        Alert(
            f"PoolAtMax-{name}",
            f'count(kube_node_labels{{{label_series(AGENT_POOL_LABEL)}="{name}"}}) >= {max_count} and on () {pending}',
            "PT15M",
            "warning",
            f"Pool {name} is at its maximum of {max_count} nodes and pods are waiting.",
            "the autoscaler adds nodes until the pool's maxCount; at it, waiting pods wait for other jobs "
            "to end, so a lasting wait is a capacity decision (raise maxCount, or the queue's quota)",
        )
        for name, max_count, pending in sorted(pools)
    )


GPU_HEALTH_ALERTS = (
    Alert(
        "GpuNodeFailedPreflight",
        f'kube_node_labels{{{label_series(PREFLIGHT_LABEL)}="failed"}} == 1',
        "PT0M",
        "error",
        "GPU node {{ $labels.node }} failed its preflight checks and takes no jobs.",
        "a node that fails preflight holds no work but still costs; it needs a reimage or Azure support "
        "(the node's events name the failed check)",
    ),
    Alert(
        "GpuNodeUnhealthy",
        f'kube_node_spec_taint{{key="{UNHEALTHY_TAINT_KEY}"}} == 1',
        "PT0M",
        "error",
        "GPU node {{ $labels.node }} reported a GPU or fabric fault ({{ $labels.value }}) and takes no new jobs.",
        "the health checker taints a node on a fault that breaks gang jobs; remediation drains it at "
        "the configured rate, and a person decides whether Azure replaces the hardware",
    ),
    Alert(
        "GpuNodesUnhealthyMany",
        f'count(kube_node_spec_taint{{key="{UNHEALTHY_TAINT_KEY}"}}) > 3',
        "PT0M",
        "critical",
        "More than 3 GPU nodes are tainted unhealthy at once.",
        "hardware fails one node at a time; several at once points at a driver or image rollout, which "
        "the remediation rate limit holds back until a person looks",
    ),
)

NODE_ALERTS = (
    Alert(
        "NodeNotReady",
        'kube_node_status_condition{condition="Ready",status="true"} == 0',
        "PT15M",
        "error",
        "Node {{ $labels.node }} has not been Ready for 15 minutes.",
        "an upgrade or a reboot makes a node NotReady for a few minutes; 15 minutes is beyond any planned one",
    ),
    Alert(
        "PodsPendingLong",
        'sum by (namespace) (kube_pod_status_phase{phase="Pending"}) > 0',
        "PT30M",
        "warning",
        "Pods in {{ $labels.namespace }} have been Pending for 30 minutes.",
        "a GPU pool scales up from zero and loads its driver in up to 30 minutes (Kueue's "
        "waitForPodsReady is sized the same); longer means the pool is at its maximum or out of quota",
    ),
    Alert(
        "PodCrashLooping",
        "increase(kube_pod_container_status_restarts_total[15m]) > 3",
        "PT15M",
        "warning",
        "{{ $labels.namespace }}/{{ $labels.pod }} restarted more than 3 times in 15 minutes.",
        "the community mixin's KubePodCrashLooping threshold: a few restarts are a rollout, more are a loop",
    ),
)

GPU_ALERTS = (
    Alert(
        "GpuXidError",
        "DCGM_FI_DEV_XID_ERRORS > 0",
        "PT0M",
        "error",
        "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} reported XID {{ $value }}.",
        "any XID is a driver-reported fault (NVIDIA's XID catalogue); the node leaves gang work until checked",
    ),
    Alert(
        "GpuUncorrectableMemoryErrors",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS > 0 or DCGM_FI_DEV_ROW_REMAP_FAILURE > 0",
        "PT0M",
        "error",
        "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} has uncorrectable memory errors.",
        "a row remapped for an uncorrectable error needs a GPU reset; a failed remap means the GPU is done",
    ),
    Alert(
        "GpuTooHot",
        "DCGM_FI_DEV_GPU_TEMP > 87",
        "PT10M",
        "warning",
        "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} has been above 87 C for 10 minutes.",
        "H100 and A100 slow down near their ~87-90 C slowdown temperature; ten minutes rules out a burst",
    ),
)

KAFKA_ALERTS = (
    Alert(
        "KafkaOfflinePartitions",
        # Every controller reports the count: the largest, not their sum.
        "max(kafka_controller_kafkacontroller_offlinepartitionscount) > 0",
        "PT1M",
        "critical",
        "Kafka has offline partitions: producers and consumers of them fail.",
        "an offline partition has no leader: every client of it is down, so page at once",
    ),
    Alert(
        "KafkaUnderReplicatedPartitions",
        "sum(kafka_server_replicamanager_underreplicatedpartitions) > 0",
        "PT10M",
        "warning",
        "Kafka has under-replicated partitions for 10 minutes.",
        "a broker restart (a rolling update) under-replicates for minutes; ten minutes is a lost broker",
    ),
    Alert(
        "KafkaUnderMinIsr",
        "sum(kafka_cluster_partition_underminisr) > 0",
        "PT5M",
        "error",
        "Kafka partitions are below min.insync.replicas: producers with acks=all are refused.",
        "below min.insync.replicas (2) writes with acks=all fail; five minutes passes a broker's restart",
    ),
)

MIRROR_ALERTS = (
    Alert(
        "MirrorMakerLagging",
        "max(kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms_max) > 300000",
        "PT15M",
        "warning",
        "MirrorMaker 2 has taken more than five minutes to copy records for 15 minutes.",
        "the copy's lag is the Kafka row's RPO (docs/resilience.md); five minutes is what the table promises",
    ),
)

KUEUE_ALERTS = (
    Alert(
        "KueueWorkloadsInadmissible",
        'sum by (cluster_queue) (kueue_pending_workloads{status="inadmissible"}) > 0',
        "PT30M",
        "warning",
        "Queue {{ $labels.cluster_queue }} holds jobs that cannot be admitted at all.",
        "an inadmissible job asks for more than its queue could ever give (or a flavor that does "
        "not exist); it waits forever, and 30 minutes rules out a queue being edited",
    ),
    Alert(
        "KueueQueueStalled",
        "sum by (cluster_queue) (kueue_pending_workloads) > 0 "
        "unless sum by (cluster_queue) (increase(kueue_admitted_workloads_total[2h])) > 0",
        "PT15M",
        "warning",
        "Queue {{ $labels.cluster_queue }} has pending jobs and admitted none in two hours.",
        "a busy queue admits as jobs finish; two hours without one while jobs wait means quota "
        "held by stuck jobs or no nodes to place them on",
    ),
)

FLINK_ALERTS = (
    Alert(
        "FlinkJobRestarting",
        # A gauge holding the count since the job started: its change over the window.
        "delta(flink_jobmanager_job_numRestarts[30m]) > 3",
        "PT0M",
        "warning",
        "Flink job {{ $labels.job_name }} restarted more than 3 times in 30 minutes.",
        "a restart resumes from the last checkpoint; repeated ones mean the job cannot make progress",
    ),
    Alert(
        "FlinkCheckpointsFailing",
        "delta(flink_jobmanager_job_numberOfFailedCheckpoints[30m]) > 2",
        "PT0M",
        "error",
        "Flink job {{ $labels.job_name }} failed more than 2 checkpoints in 30 minutes.",
        "without checkpoints a restart replays from further back; two misses at a one-minute interval is noise, more is not",
    ),
)


_LUSTRE = f'namespace="{lustre_csi.NAMESPACE}"'
LUSTRE_ALERTS = (
    Alert(
        "LustreNodePluginNotReady",
        f"(kube_daemonset_status_desired_number_scheduled{{{_LUSTRE}}} - kube_daemonset_status_number_ready{{{_LUSTRE}}})"
        " > 0",
        "PT15M",
        "error",
        "{{ $value }} GPU node(s) have no ready Lustre CSI node plugin ({{ $labels.daemonset }}): jobs there "
        "cannot mount training-data.",
        "the plugin installs the Lustre client for the node's exact kernel at every start, within ten minutes; "
        "longer means a kernel with no client package yet (a new node image) or no route to "
        "packages.microsoft.com, and gangs placed there wait in ContainerCreating until Kueue requeues them",
    ),
)


# The serving gateway's requests to the APIs' Services (reporter="source": the gateway is the
# client), errors being 5xx for HTTP and, for gRPC, the codes a server fails with (UNKNOWN,
# DEADLINE_EXCEEDED, INTERNAL, UNAVAILABLE, DATA_LOSS; grpc/doc/statuscodes.md), not a caller's.
_SERVED = f'reporter="source", source_workload_namespace="{istio.INGRESS_NAMESPACE}"'
SERVING_SLO = 0.999  # a month's budget: 43 minutes of errors


def _error_ratio(window: str) -> str:
    errors = (
        f'sum by (destination_service) (rate(istio_requests_total{{{_SERVED}, response_code=~"5.."}}[{window}])) '
        f'or sum by (destination_service) (rate(istio_requests_total{{{_SERVED}, grpc_response_status=~"2|4|13|14|15"}}[{window}]))'
    )
    return f"({errors}) / sum by (destination_service) (rate(istio_requests_total{{{_SERVED}}}[{window}]))"


def _burn(long: str, short: str, rate: float) -> str:
    """Multiwindow burn rate (Google's SRE workbook, "Alerting on SLOs"): the budget burning
    `rate` times too fast over the long window, and still over the short one (so it resets soon)."""
    threshold = round(rate * (1 - SERVING_SLO), 6)
    return f"({_error_ratio(long)} > {threshold}) and ({_error_ratio(short)} > {threshold})"


SERVING_ALERTS = (
    Alert(
        "ServingErrorBudgetBurningFast",
        _burn("1h", "5m", 14.4),
        "PT2M",
        "critical",
        "An API behind the serving gateway is burning its 99.9% error budget 14x too fast.",
        "14.4x over an hour spends 2% of a month's budget: page (SRE workbook's first window)",
    ),
    Alert(
        "ServingErrorBudgetBurningSlowly",
        _burn("6h", "30m", 6),
        "PT15M",
        "warning",
        "An API behind the serving gateway is burning its 99.9% error budget 6x too fast.",
        "6x over six hours spends 5% of the budget: a ticket, not a page",
    ),
)


def rule_groups(config: PlatformConfig, cluster_key: str) -> list[RuleGroup]:
    """The cluster's rule groups: AKS's recording rules, then the platform's alerts for what runs there."""
    cluster = config.clusters[cluster_key]
    groups = [
        RuleGroup(name, f"AKS's recording rules ({name}), which its dashboards read.", recordings=rules)
        for name, rules in AKS_RECORDING_RULES.items()
    ]
    groups.append(RuleGroup("platform-nodes", "Nodes and pods.", alerts=NODE_ALERTS))
    if cluster.gpu_pools:
        groups.append(RuleGroup("platform-gpus", "GPU health from DCGM.", alerts=GPU_ALERTS))
        groups.append(RuleGroup("platform-gpu-health", "Preflight and passive GPU health.", alerts=GPU_HEALTH_ALERTS))
    if cluster_key in lustre_csi.lustre_clusters(config):
        groups.append(RuleGroup("platform-lustre", "The Lustre CSI node plugin.", alerts=LUSTRE_ALERTS))
    if cluster.gpu_pools or cluster.node_pools:
        groups.append(
            RuleGroup("platform-capacity", "Pools at their maximum.", alerts=pool_at_max_alerts(config, cluster_key))
        )
    # Kueue runs where jobs are admitted: every cluster with GPU pools, and each dispatcher.
    if cluster.gpu_pools or cluster.role == "dispatch":
        groups.append(RuleGroup("platform-kueue", "Kueue's queues.", alerts=KUEUE_ALERTS))
    if cluster_key in config.kafka_clusters():
        groups.append(RuleGroup("platform-kafka", "Strimzi Kafka.", alerts=KAFKA_ALERTS))
    if cluster_key in kafka_plan.mirror_clusters(config):
        groups.append(RuleGroup("platform-mirrormaker", "MirrorMaker 2.", alerts=MIRROR_ALERTS))
    if cluster_key in config.streaming_clusters() and config.streaming and config.streaming.jobs:
        groups.append(RuleGroup("platform-flink", "Flink jobs.", alerts=FLINK_ALERTS))
    if cluster_key in serving_plan.serving_clusters(config):
        groups.append(RuleGroup("platform-serving", "The serving gateway's APIs.", alerts=SERVING_ALERTS))
    return groups


# --- Azure-side signals Prometheus does not see: Azure Monitor metric alerts ---------------------


@dataclass(frozen=True)
class MetricAlert:
    name: str
    # The metric's name in Azure Monitor's REST API (learn.microsoft.com/azure/azure-monitor
    # /reference/supported-metrics/<namespace>-metrics).
    metric: str
    operator: str  # GreaterThan | LessThan
    threshold: float
    aggregation: str  # Average | Total | Maximum | Minimum
    window: str  # ISO 8601
    severity: str
    why: str


# Thresholds after Azure Monitor Baseline Alerts (azure.github.io/azure-monitor-baseline-alerts,
# the platform monitoring packs), where it has one.
AZURE_METRIC_ALERTS: dict[str, tuple[MetricAlert, ...]] = {
    "Microsoft.Network/azureFirewalls": (
        MetricAlert(
            "firewall-health",
            "FirewallHealth",
            "LessThan",
            90,
            "Average",
            "PT5M",
            "critical",
            "every node of the region leaves through its firewall: below 90% (the baseline's threshold) egress is failing",
        ),
        MetricAlert(
            "firewall-snat",
            "SNATPortUtilization",
            "GreaterThan",
            80,
            "Maximum",
            "PT5M",
            "error",
            "at 100% new outbound connections fail; 80% leaves time to add a public IP (the baseline's threshold)",
        ),
    ),
    "Microsoft.Storage/storageAccounts": (
        MetricAlert(
            "storage-availability",
            "Availability",
            "LessThan",
            99,
            "Average",
            "PT5M",
            "error",
            "weights, checkpoints and datasets: below 99% over five minutes jobs are failing reads and writes",
        ),
    ),
    "Microsoft.KeyVault/vaults": (
        MetricAlert(
            "keyvault-availability",
            "Availability",
            "LessThan",
            99,
            "Average",
            "PT5M",
            "error",
            "workloads read secrets and storage its keys at start: below 99% pods and accounts fail to start",
        ),
    ),
    "Microsoft.DocumentDB/databaseAccounts": (
        MetricAlert(
            "cosmosdb-ru-saturated",
            "NormalizedRUConsumption",
            "GreaterThan",
            90,
            "Maximum",
            "PT15M",
            "warning",
            "a partition at 100% of its request units throttles (429s): raise the database's autoscaleMaxThroughput",
        ),
    ),
    "Microsoft.DBforPostgreSQL/flexibleServers": (
        MetricAlert(
            "postgresql-storage",
            "storage_percent",
            "GreaterThan",
            90,
            "Maximum",
            "PT15M",
            "error",
            "auto-grow adds storage in steps; a server that fills anyway turns read-only",
        ),
    ),
    "Microsoft.StorageCache/amlFilesystems": (
        MetricAlert(
            "lustre-client-evictions",
            "LustreClientEvictions",
            "GreaterThan",
            0,
            "Total",
            "PT15M",
            "warning",
            "an evicted client loses its locks and unwritten data, and its job's reads fail: a node that stopped "
            "or lost its network; many at once point at the file system or its subnet (Azure Monitor's "
            "supported metrics for Microsoft.StorageCache/amlFilesystems). Capacity has no alert: Microsoft's "
            "is a ratio of two metrics, which a metric alert cannot compute (docs/lustre.md)",
        ),
    ),
    "Microsoft.EventHub/namespaces": (
        MetricAlert(
            "eventhubs-throttled",
            "ThrottledRequests",
            "GreaterThan",
            0,
            "Total",
            "PT5M",
            "warning",
            "any throttling means the namespace's capacity (units) is too small for the traffic",
        ),
    ),
}
