"""Metric names the platform's exporters emit, and AKS's own recording rules, pinned from their sources.

planning/alerts.py's rules read only these (tests/test_alerts.py parses every expression with
promql-parser and checks each metric it selects). A name here is one an exporter the platform
deploys emits at the pinned version; refresh from the sources named beside each list.

Imports nothing else from the project.
"""

from __future__ import annotations

# AKS's default recording rules, which its Grafana dashboards read: what enabling managed
# Prometheus creates (Linux groups; the Windows ones are off by default). Source:
# Azure/prometheus-collector AddonArmTemplate/FullAzureMonitorMetricsProfile.json at tag
# v7.1.1-main-07-21-2026-39583fd5. (record, expression, labels) per rule.
AKS_RECORDING_RULES: dict[str, tuple[tuple[str, str, dict[str, str]], ...]] = {
    "NodeRecordingRulesRuleGroup": (
        (
            "instance:node_num_cpu:sum",
            "count without (cpu, mode) (  node_cpu_seconds_total{job=\"node\",mode=\"idle\"})",
            {},
        ),
        (
            "instance:node_cpu_utilisation:rate5m",
            "1 - avg without (cpu) (  sum without (mode) (rate(node_cpu_seconds_total{job=\"node\", mode=~\"idle|iowait|steal\"}[5m])))",
            {},
        ),
        (
            "instance:node_load1_per_cpu:ratio",
            "(  node_load1{job=\"node\"}/  instance:node_num_cpu:sum{job=\"node\"})",
            {},
        ),
        (
            "instance:node_memory_utilisation:ratio",
            "1 - (  (    node_memory_MemAvailable_bytes{job=\"node\"}    or    (      node_memory_Buffers_bytes{job=\"node\"}      +      node_memory_Cached_bytes{job=\"node\"}      +      node_memory_MemFree_bytes{job=\"node\"}      +      node_memory_Slab_bytes{job=\"node\"}    )  )/  node_memory_MemTotal_bytes{job=\"node\"})",
            {},
        ),
        ("instance:node_vmstat_pgmajfault:rate5m", "rate(node_vmstat_pgmajfault{job=\"node\"}[5m])", {}),
        (
            "instance_device:node_disk_io_time_seconds:rate5m",
            "rate(node_disk_io_time_seconds_total{job=\"node\", device!=\"\"}[5m])",
            {},
        ),
        (
            "instance_device:node_disk_io_time_weighted_seconds:rate5m",
            "rate(node_disk_io_time_weighted_seconds_total{job=\"node\", device!=\"\"}[5m])",
            {},
        ),
        (
            "instance:node_network_receive_bytes_excluding_lo:rate5m",
            "sum without (device) (  rate(node_network_receive_bytes_total{job=\"node\", device!=\"lo\"}[5m]))",
            {},
        ),
        (
            "instance:node_network_transmit_bytes_excluding_lo:rate5m",
            "sum without (device) (  rate(node_network_transmit_bytes_total{job=\"node\", device!=\"lo\"}[5m]))",
            {},
        ),
        (
            "instance:node_network_receive_drop_excluding_lo:rate5m",
            "sum without (device) (  rate(node_network_receive_drop_total{job=\"node\", device!=\"lo\"}[5m]))",
            {},
        ),
        (
            "instance:node_network_transmit_drop_excluding_lo:rate5m",
            "sum without (device) (  rate(node_network_transmit_drop_total{job=\"node\", device!=\"lo\"}[5m]))",
            {},
        ),
    ),
    "KubernetesRecordingRulesRuleGroup": (
        (
            "node_namespace_pod_container:container_cpu_usage_seconds_total:sum_irate",
            "sum by (cluster, namespace, pod, container) (  irate(container_cpu_usage_seconds_total{job=\"cadvisor\", image!=\"\"}[5m])) * on (cluster, namespace, pod) group_left(node) topk by (cluster, namespace, pod) (  1, max by(cluster, namespace, pod, node) (kube_pod_info{node!=\"\"}))",
            {},
        ),
        (
            "node_namespace_pod_container:container_memory_working_set_bytes",
            "container_memory_working_set_bytes{job=\"cadvisor\", image!=\"\"}* on (namespace, pod) group_left(node) topk by(namespace, pod) (1,  max by(namespace, pod, node) (kube_pod_info{node!=\"\"}))",
            {},
        ),
        (
            "node_namespace_pod_container:container_memory_rss",
            "container_memory_rss{job=\"cadvisor\", image!=\"\"}* on (namespace, pod) group_left(node) topk by(namespace, pod) (1,  max by(namespace, pod, node) (kube_pod_info{node!=\"\"}))",
            {},
        ),
        (
            "node_namespace_pod_container:container_memory_cache",
            "container_memory_cache{job=\"cadvisor\", image!=\"\"}* on (namespace, pod) group_left(node) topk by(namespace, pod) (1,  max by(namespace, pod, node) (kube_pod_info{node!=\"\"}))",
            {},
        ),
        (
            "node_namespace_pod_container:container_memory_swap",
            "container_memory_swap{job=\"cadvisor\", image!=\"\"}* on (namespace, pod) group_left(node) topk by(namespace, pod) (1,  max by(namespace, pod, node) (kube_pod_info{node!=\"\"}))",
            {},
        ),
        (
            "cluster:namespace:pod_memory:active:kube_pod_container_resource_requests",
            "kube_pod_container_resource_requests{resource=\"memory\",job=\"kube-state-metrics\"}  * on (namespace, pod, cluster)group_left() max by (namespace, pod, cluster) (  (kube_pod_status_phase{phase=~\"Pending|Running\"} == 1))",
            {},
        ),
        (
            "namespace_memory:kube_pod_container_resource_requests:sum",
            "sum by (namespace, cluster) (    sum by (namespace, pod, cluster) (        max by (namespace, pod, container, cluster) (          kube_pod_container_resource_requests{resource=\"memory\",job=\"kube-state-metrics\"}        ) * on(namespace, pod, cluster) group_left() max by (namespace, pod, cluster) (          kube_pod_status_phase{phase=~\"Pending|Running\"} == 1        )    ))",
            {},
        ),
        (
            "cluster:namespace:pod_cpu:active:kube_pod_container_resource_requests",
            "kube_pod_container_resource_requests{resource=\"cpu\",job=\"kube-state-metrics\"}  * on (namespace, pod, cluster)group_left() max by (namespace, pod, cluster) (  (kube_pod_status_phase{phase=~\"Pending|Running\"} == 1))",
            {},
        ),
        (
            "namespace_cpu:kube_pod_container_resource_requests:sum",
            "sum by (namespace, cluster) (    sum by (namespace, pod, cluster) (        max by (namespace, pod, container, cluster) (          kube_pod_container_resource_requests{resource=\"cpu\",job=\"kube-state-metrics\"}        ) * on(namespace, pod, cluster) group_left() max by (namespace, pod, cluster) (          kube_pod_status_phase{phase=~\"Pending|Running\"} == 1        )    ))",
            {},
        ),
        (
            "cluster:namespace:pod_memory:active:kube_pod_container_resource_limits",
            "kube_pod_container_resource_limits{resource=\"memory\",job=\"kube-state-metrics\"}  * on (namespace, pod, cluster)group_left() max by (namespace, pod, cluster) (  (kube_pod_status_phase{phase=~\"Pending|Running\"} == 1))",
            {},
        ),
        (
            "namespace_memory:kube_pod_container_resource_limits:sum",
            "sum by (namespace, cluster) (    sum by (namespace, pod, cluster) (        max by (namespace, pod, container, cluster) (          kube_pod_container_resource_limits{resource=\"memory\",job=\"kube-state-metrics\"}        ) * on(namespace, pod, cluster) group_left() max by (namespace, pod, cluster) (          kube_pod_status_phase{phase=~\"Pending|Running\"} == 1        )    ))",
            {},
        ),
        (
            "cluster:namespace:pod_cpu:active:kube_pod_container_resource_limits",
            "kube_pod_container_resource_limits{resource=\"cpu\",job=\"kube-state-metrics\"}  * on (namespace, pod, cluster)group_left() max by (namespace, pod, cluster) ( (kube_pod_status_phase{phase=~\"Pending|Running\"} == 1) )",
            {},
        ),
        (
            "namespace_cpu:kube_pod_container_resource_limits:sum",
            "sum by (namespace, cluster) (    sum by (namespace, pod, cluster) (        max by (namespace, pod, container, cluster) (          kube_pod_container_resource_limits{resource=\"cpu\",job=\"kube-state-metrics\"}        ) * on(namespace, pod, cluster) group_left() max by (namespace, pod, cluster) (          kube_pod_status_phase{phase=~\"Pending|Running\"} == 1        )    ))",
            {},
        ),
        (
            "namespace_workload_pod:kube_pod_owner:relabel",
            "max by (cluster, namespace, workload, pod) (  label_replace(    label_replace(      kube_pod_owner{job=\"kube-state-metrics\", owner_kind=\"ReplicaSet\"},      \"replicaset\", \"$1\", \"owner_name\", \"(.*)\"    ) * on(replicaset, namespace) group_left(owner_name) topk by(replicaset, namespace) (      1, max by (replicaset, namespace, owner_name) (        kube_replicaset_owner{job=\"kube-state-metrics\"}      )    ),    \"workload\", \"$1\", \"owner_name\", \"(.*)\"  ))",
            {"workload_type": "deployment"},
        ),
        (
            "namespace_workload_pod:kube_pod_owner:relabel",
            "max by (cluster, namespace, workload, pod) (  label_replace(    kube_pod_owner{job=\"kube-state-metrics\", owner_kind=\"DaemonSet\"},    \"workload\", \"$1\", \"owner_name\", \"(.*)\"  ))",
            {"workload_type": "daemonset"},
        ),
        (
            "namespace_workload_pod:kube_pod_owner:relabel",
            "max by (cluster, namespace, workload, pod) (  label_replace(    kube_pod_owner{job=\"kube-state-metrics\", owner_kind=\"StatefulSet\"},    \"workload\", \"$1\", \"owner_name\", \"(.*)\"  ))",
            {"workload_type": "statefulset"},
        ),
        (
            "namespace_workload_pod:kube_pod_owner:relabel",
            "max by (cluster, namespace, workload, pod) (  label_replace(    kube_pod_owner{job=\"kube-state-metrics\", owner_kind=\"Job\"},    \"workload\", \"$1\", \"owner_name\", \"(.*)\"  ))",
            {"workload_type": "job"},
        ),
        (
            ":node_memory_MemAvailable_bytes:sum",
            "sum(  node_memory_MemAvailable_bytes{job=\"node\"} or  (    node_memory_Buffers_bytes{job=\"node\"} +    node_memory_Cached_bytes{job=\"node\"} +    node_memory_MemFree_bytes{job=\"node\"} +    node_memory_Slab_bytes{job=\"node\"}  )) by (cluster)",
            {},
        ),
        (
            "cluster:node_cpu:ratio_rate5m",
            "sum(rate(node_cpu_seconds_total{job=\"node\",mode!=\"idle\",mode!=\"iowait\",mode!=\"steal\"}[5m])) by (cluster) /count(sum(node_cpu_seconds_total{job=\"node\"}) by (cluster, instance, cpu)) by (cluster)",
            {},
        ),
    ),
    "UXRecordingRulesRuleGroup": (
        (
            "ux:pod_cpu_usage:sum_irate",
            "(sum by (namespace, pod, cluster, microsoft_resourceid) (\n\tirate(container_cpu_usage_seconds_total{container != \"\", pod != \"\", job = \"cadvisor\"}[5m])\n)) * on (pod, namespace, cluster, microsoft_resourceid) group_left (node, created_by_name, created_by_kind)\n(max by (node, created_by_name, created_by_kind, pod, namespace, cluster, microsoft_resourceid) (kube_pod_info{pod != \"\", job = \"kube-state-metrics\"}))",
            {},
        ),
        (
            "ux:controller_cpu_usage:sum_irate",
            "sum by (namespace, node, cluster, created_by_name, created_by_kind, microsoft_resourceid) (\nux:pod_cpu_usage:sum_irate\n)\n",
            {},
        ),
        (
            "ux:pod_workingset_memory:sum",
            "(\n\t    sum by (namespace, pod, cluster, microsoft_resourceid) (\n\t\tcontainer_memory_working_set_bytes{container != \"\", pod != \"\", job = \"cadvisor\"}\n\t    )\n\t) * on (pod, namespace, cluster, microsoft_resourceid) group_left (node, created_by_name, created_by_kind)\n(max by (node, created_by_name, created_by_kind, pod, namespace, cluster, microsoft_resourceid) (kube_pod_info{pod != \"\", job = \"kube-state-metrics\"}))",
            {},
        ),
        (
            "ux:controller_workingset_memory:sum",
            "sum by (namespace, node, cluster, created_by_name, created_by_kind, microsoft_resourceid) (\nux:pod_workingset_memory:sum\n)",
            {},
        ),
        (
            "ux:pod_rss_memory:sum",
            "(\n\t    sum by (namespace, pod, cluster, microsoft_resourceid) (\n\t\tcontainer_memory_rss{container != \"\", pod != \"\", job = \"cadvisor\"}\n\t    )\n\t) * on (pod, namespace, cluster, microsoft_resourceid) group_left (node, created_by_name, created_by_kind)\n(max by (node, created_by_name, created_by_kind, pod, namespace, cluster, microsoft_resourceid) (kube_pod_info{pod != \"\", job = \"kube-state-metrics\"}))",
            {},
        ),
        (
            "ux:controller_rss_memory:sum",
            "sum by (namespace, node, cluster, created_by_name, created_by_kind, microsoft_resourceid) (\nux:pod_rss_memory:sum\n)",
            {},
        ),
        (
            "ux:pod_container_count:sum",
            "sum by (node, created_by_name, created_by_kind, namespace, cluster, pod, microsoft_resourceid) (\n(\n(\nsum by (container, pod, namespace, cluster, microsoft_resourceid) (kube_pod_container_info{container != \"\", pod != \"\", container_id != \"\", job = \"kube-state-metrics\"})\nor sum by (container, pod, namespace, cluster, microsoft_resourceid) (kube_pod_init_container_info{container != \"\", pod != \"\", container_id != \"\", job = \"kube-state-metrics\"})\n)\n* on (pod, namespace, cluster, microsoft_resourceid) group_left (node, created_by_name, created_by_kind)\n(\nmax by (node, created_by_name, created_by_kind, pod, namespace, cluster, microsoft_resourceid) (\n\tkube_pod_info{pod != \"\", job = \"kube-state-metrics\"}\n)\n)\n)\n\n)",
            {},
        ),
        (
            "ux:controller_container_count:sum",
            "sum by (node, created_by_name, created_by_kind, namespace, cluster, microsoft_resourceid) (\nux:pod_container_count:sum\n)",
            {},
        ),
        (
            "ux:pod_container_restarts:max",
            "max by (node, created_by_name, created_by_kind, namespace, cluster, pod, microsoft_resourceid) (\n(\n(\nmax by (container, pod, namespace, cluster, microsoft_resourceid) (kube_pod_container_status_restarts_total{container != \"\", pod != \"\", job = \"kube-state-metrics\"})\nor sum by (container, pod, namespace, cluster, microsoft_resourceid) (kube_pod_init_status_restarts_total{container != \"\", pod != \"\", job = \"kube-state-metrics\"})\n)\n* on (pod, namespace, cluster, microsoft_resourceid) group_left (node, created_by_name, created_by_kind)\n(\nmax by (node, created_by_name, created_by_kind, pod, namespace, cluster, microsoft_resourceid) (\n\tkube_pod_info{pod != \"\", job = \"kube-state-metrics\"}\n)\n)\n)\n\n)",
            {},
        ),
        (
            "ux:controller_container_restarts:max",
            "max by (node, created_by_name, created_by_kind, namespace, cluster, microsoft_resourceid) (\nux:pod_container_restarts:max\n)",
            {},
        ),
        (
            "ux:pod_resource_limit:sum",
            "(sum by (cluster, pod, namespace, resource, microsoft_resourceid) (\n(\n\tmax by (cluster, microsoft_resourceid, pod, container, namespace, resource)\n\t (kube_pod_container_resource_limits{container != \"\", pod != \"\", job = \"kube-state-metrics\"})\n)\n)unless (count by (pod, namespace, cluster, resource, microsoft_resourceid)\n\t(kube_pod_container_resource_limits{container != \"\", pod != \"\", job = \"kube-state-metrics\"})\n!= on (pod, namespace, cluster, microsoft_resourceid) group_left()\n sum by (pod, namespace, cluster, microsoft_resourceid)\n (kube_pod_container_info{container != \"\", pod != \"\", job = \"kube-state-metrics\"}) \n)\n\n)* on (namespace, pod, cluster, microsoft_resourceid) group_left (node, created_by_kind, created_by_name)\n(\n\tkube_pod_info{pod != \"\", job = \"kube-state-metrics\"}\n)",
            {},
        ),
        (
            "ux:controller_resource_limit:sum",
            "sum by (cluster, namespace, created_by_name, created_by_kind, node, resource, microsoft_resourceid) (\nux:pod_resource_limit:sum\n)",
            {},
        ),
        (
            "ux:controller_pod_phase_count:sum",
            "sum by (cluster, phase, node, created_by_kind, created_by_name, namespace, microsoft_resourceid) ( (\n(kube_pod_status_phase{job=\"kube-state-metrics\",pod!=\"\"})\n or (label_replace((count(kube_pod_deletion_timestamp{job=\"kube-state-metrics\",pod!=\"\"}) by (namespace, pod, cluster, microsoft_resourceid) * count(kube_pod_status_reason{reason=\"NodeLost\", job=\"kube-state-metrics\"} == 0) by (namespace, pod, cluster, microsoft_resourceid)), \"phase\", \"terminating\", \"\", \"\"))) * on (pod, namespace, cluster, microsoft_resourceid) group_left (node, created_by_name, created_by_kind)\n(\nmax by (node, created_by_name, created_by_kind, pod, namespace, cluster, microsoft_resourceid) (\nkube_pod_info{job=\"kube-state-metrics\",pod!=\"\"}\n)\n)\n)",
            {},
        ),
        (
            "ux:cluster_pod_phase_count:sum",
            "sum by (cluster, phase, node, namespace, microsoft_resourceid) (\nux:controller_pod_phase_count:sum\n)",
            {},
        ),
        (
            "ux:node_cpu_usage:sum_irate",
            "sum by (instance, cluster, microsoft_resourceid) (\n(1 - irate(node_cpu_seconds_total{job=\"node\", mode=\"idle\"}[5m]))\n)",
            {},
        ),
        (
            "ux:node_memory_usage:sum",
            "sum by (instance, cluster, microsoft_resourceid) ((\nnode_memory_MemTotal_bytes{job = \"node\"}\n- node_memory_MemFree_bytes{job = \"node\"} \n- node_memory_cached_bytes{job = \"node\"}\n- node_memory_buffers_bytes{job = \"node\"}\n))",
            {},
        ),
        (
            "ux:node_network_receive_drop_total:sum_irate",
            "sum by (instance, cluster, microsoft_resourceid) (irate(node_network_receive_drop_total{job=\"node\", device!=\"lo\"}[5m]))",
            {},
        ),
        (
            "ux:node_network_transmit_drop_total:sum_irate",
            "sum by (instance, cluster, microsoft_resourceid) (irate(node_network_transmit_drop_total{job=\"node\", device!=\"lo\"}[5m]))",
            {},
        ),
    ),
}

# dcgm-exporter: the counters the GPU operator's exporter collects
# (DCGM_EXPORTER_COLLECTORS=/etc/dcgm-exporter/dcp-metrics-included.csv; GPU operator v26.7.0 ships
# image 4.6.0-4.8.3-distroless). Source: NVIDIA/dcgm-exporter etc/dcp-metrics-included.csv at tag
# 4.5.3-4.8.2, the newest tag stored here (its enabled lines equal default-counters.csv's).
# Every series carries gpu, UUID, pci_bus_id, device, modelName and Hostname (lowercase
# `hostname` in newer releases); XID errors carry err_code and err_msg.
DCGM_METRICS: frozenset[str] = frozenset(
    {
        "DCGM_FI_DEV_SM_CLOCK",
        "DCGM_FI_DEV_MEM_CLOCK",
        "DCGM_FI_DEV_MEMORY_TEMP",
        "DCGM_FI_DEV_GPU_TEMP",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
        "DCGM_FI_DEV_PCIE_REPLAY_COUNTER",
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_MEM_COPY_UTIL",
        "DCGM_FI_DEV_ENC_UTIL",
        "DCGM_FI_DEV_DEC_UTIL",
        "DCGM_FI_DEV_XID_ERRORS",
        "DCGM_FI_DEV_FB_FREE",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_FB_RESERVED",
        "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL",
        "DCGM_FI_DEV_VGPU_LICENSE_STATUS",
        "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS",
        "DCGM_FI_DEV_ROW_REMAP_FAILURE",
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
        "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
        "DCGM_FI_PROF_DRAM_ACTIVE",
        "DCGM_FI_PROF_PCIE_TX_BYTES",
        "DCGM_FI_PROF_PCIE_RX_BYTES",
    }
)

# Kueue v0.19.2: every metric pkg/metrics/metrics.go registers (site/content/en/docs/reference
# /metrics.md at the same tag lists the same). Histograms also expose _bucket, _sum, _count.
KUEUE_METRICS: dict[str, str] = {
    "kueue_admission_attempt_duration_seconds": "histogram",
    "kueue_admission_attempts_total": "counter",
    "kueue_admission_checks_wait_time_seconds": "histogram",
    "kueue_admission_cycle_preemption_skips": "gauge",
    "kueue_admission_wait_time_seconds": "histogram",
    "kueue_admitted_active_workloads": "gauge",
    "kueue_admitted_until_ready_wait_time_seconds": "histogram",
    "kueue_admitted_workloads_total": "counter",
    "kueue_build_info": "gauge",
    "kueue_cluster_queue_borrowing_limit": "gauge",
    "kueue_cluster_queue_info": "gauge",
    "kueue_cluster_queue_lending_limit": "gauge",
    "kueue_cluster_queue_nominal_quota": "gauge",
    "kueue_cluster_queue_resource_pending": "gauge",
    "kueue_cluster_queue_resource_reservation": "gauge",
    "kueue_cluster_queue_resource_usage": "gauge",
    "kueue_cluster_queue_status": "gauge",
    "kueue_cluster_queue_weighted_share": "gauge",
    "kueue_cohort_info": "gauge",
    "kueue_cohort_subtree_admitted_active_workloads": "gauge",
    "kueue_cohort_subtree_admitted_workloads_total": "counter",
    "kueue_cohort_subtree_quota": "gauge",
    "kueue_cohort_subtree_resource_reservations": "gauge",
    "kueue_cohort_weighted_share": "gauge",
    "kueue_evicted_workloads_once_total": "counter",
    "kueue_evicted_workloads_total": "counter",
    "kueue_finished_workloads": "gauge",
    "kueue_finished_workloads_total": "counter",
    "kueue_local_queue_admission_checks_wait_time_seconds": "histogram",
    "kueue_local_queue_admission_fair_sharing_usage": "gauge",
    "kueue_local_queue_admission_wait_time_seconds": "histogram",
    "kueue_local_queue_admitted_active_workloads": "gauge",
    "kueue_local_queue_admitted_until_ready_wait_time_seconds": "histogram",
    "kueue_local_queue_admitted_workloads_total": "counter",
    "kueue_local_queue_evicted_workloads_total": "counter",
    "kueue_local_queue_finished_workloads": "gauge",
    "kueue_local_queue_finished_workloads_total": "counter",
    "kueue_local_queue_pending_workloads": "gauge",
    "kueue_local_queue_quota_reserved_wait_time_seconds": "histogram",
    "kueue_local_queue_quota_reserved_workloads_total": "counter",
    "kueue_local_queue_ready_wait_time_seconds": "histogram",
    "kueue_local_queue_reserving_active_workloads": "gauge",
    "kueue_local_queue_resource_reservation": "gauge",
    "kueue_local_queue_resource_usage": "gauge",
    "kueue_local_queue_status": "gauge",
    "kueue_local_queue_unadmitted_workloads": "gauge",
    "kueue_pending_workloads": "gauge",
    "kueue_pod_scheduling_gate_removal_seconds": "histogram",
    "kueue_pods_ready_to_evicted_time_seconds": "histogram",
    "kueue_preempted_workloads_total": "counter",
    "kueue_quota_reserved_wait_time_seconds": "histogram",
    "kueue_quota_reserved_workloads_total": "counter",
    "kueue_ready_wait_time_seconds": "histogram",
    "kueue_replaced_workload_slices_total": "counter",
    "kueue_reserving_active_workloads": "gauge",
    "kueue_unadmitted_workloads": "gauge",
    "kueue_workload_creation_latency_seconds": "histogram",
    "kueue_workload_eviction_latency_seconds": "histogram",
}

# kube-state-metrics as AKS's metrics add-on scrapes it (v2.19.0-4, job kube-state-metrics) with
# its default minimal ingestion profile, which keeps only these (and kube_.*_labels,
# kube_.*_annotations). Source: Azure/prometheus-collector
# otelcollector/shared/configmap/mp/tomlparser-default-targets-metrics-keep-list.go
# (kubestateRegex_minimal_mac) at the tag above. kube_node_spec_unschedulable is not kept.
KUBE_STATE_METRICS: frozenset[str] = frozenset(
    {
        "kube_daemonset_status_current_number_scheduled",
        "kube_daemonset_status_desired_number_scheduled",
        "kube_daemonset_status_number_misscheduled",
        "kube_daemonset_status_number_ready",
        "kube_deployment_spec_replicas",
        "kube_deployment_status_replicas_available",
        "kube_deployment_status_replicas_ready",
        "kube_deployment_status_replicas_updated",
        "kube_job_failed",
        "kube_job_spec_completions",
        "kube_job_status_active",
        "kube_job_status_start_time",
        "kube_job_status_succeeded",
        "kube_namespace_status_phase",
        "kube_node_info",
        # Kept as kube_.*_labels; carries only the labels of metricLabelsAllowlist.
        "kube_node_labels",
        "kube_node_spec_taint",
        "kube_node_status_allocatable",
        "kube_node_status_capacity",
        "kube_node_status_condition",
        "kube_pod_container_info",
        "kube_pod_container_resource_limits",
        "kube_pod_container_resource_requests",
        "kube_pod_container_status_last_terminated_reason",
        "kube_pod_container_status_ready",
        "kube_pod_container_status_restarts_total",
        "kube_pod_container_status_running",
        "kube_pod_container_status_terminated",
        "kube_pod_container_status_waiting",
        "kube_pod_container_status_waiting_reason",
        "kube_pod_created",
        "kube_pod_deletion_timestamp",
        "kube_pod_info",
        "kube_pod_owner",
        "kube_pod_start_time",
        "kube_pod_status_phase",
        "kube_pod_status_reason",
        "kube_replicaset_owner",
        "kube_resourcequota",
        "kube_statefulset_status_replicas",
        "kube_statefulset_status_replicas_ready",
        "kube_statefulset_status_replicas_updated",
    }
)

# Strimzi 1.2.0's Kafka and MirrorMaker 2 through the Strimzi Metrics Reporter (0.4.0), within
# the allow lists components/kafka.py sets. Source: strimzi/strimzi-kafka-operator
# packaging/examples/metrics/grafana-dashboards (strimzi-kafka.json, strimzi-kafka-mirror-maker-2.json)
# at 1.2.0, and the reporter's naming (strimzi/metrics-reporter: lowercase domain_type_name).
STRIMZI_METRICS: frozenset[str] = frozenset(
    {
        "kafka_server_replicamanager_underreplicatedpartitions",
        "kafka_controller_kafkacontroller_offlinepartitionscount",
        "kafka_cluster_partition_underminisr",
        "kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms_max",
        "kafka_connect_mirror_mirrorsourceconnector_record_age_ms_max",
    }
)

# Flink's Prometheus reporter, job scope on the JobManager (gauges holding counts since the job
# started). Source: apache/flink's metrics documentation (ops, metrics: "Availability",
# "Checkpointing") and the reporter's naming (flink_<scope>_<name>, case kept).
FLINK_METRICS: frozenset[str] = frozenset(
    {"flink_jobmanager_job_numRestarts", "flink_jobmanager_job_numberOfFailedCheckpoints"}
)

# Istio's standard metrics from the serving gateway's Envoy (its pods' `http-envoy-prom` port,
# /stats/prometheus). Source: istio/istio.io content/en/docs/reference/config/metrics/index.md:
# `reporter="source"` at a gateway (it is the client of the upstream), `destination_service` the
# upstream's FQDN, `response_code` on HTTP metrics, `grpc_response_status` on gRPC ones. No route
# or path label by default: per API is per upstream Service and port.
ISTIO_METRICS: frozenset[str] = frozenset(
    {
        "istio_requests_total",
        "istio_request_duration_milliseconds_bucket",
        "istio_request_duration_milliseconds_count",
        "istio_request_duration_milliseconds_sum",
    }
)
