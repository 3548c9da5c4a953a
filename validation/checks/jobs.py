"""MultiKueue: dispatchers and workers."""

from __future__ import annotations

from collections.abc import Iterator

from planning import dispatch as dispatch_plan
from stackconfig.keys import key
from stackconfig.model import (
    PlatformConfig,
)
from validation.checks.common import ConfigProblem

# MultiKueueConfig: 1-20 clusters (kueue v0.19.2, apis/kueue/v1beta2/multikueue_types.go).
MAX_MULTIKUEUE_WORKERS = 20


def check_jobs(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """MultiKueue: dispatchers are dispatch clusters and nothing else runs on them; workers are
    GPU clusters whose API servers the dispatchers reach in the workers' VNets."""
    jobs = config.jobs
    for i, name in enumerate(jobs.dispatchers):
        where = key("jobs", "dispatchers", i)
        if name not in config.clusters:
            yield ConfigProblem(where, f"{name} is not a cluster of platform:clusters")
        elif config.clusters[name].role != "dispatch":
            yield ConfigProblem(
                where,
                f"{name} runs workloads (platform:clusters.{name}.role); Kueue's manager cannot be its own "
                "worker, so a dispatcher is a cluster of its own with role dispatch",
            )
    for name, cluster in config.clusters.items():
        if cluster.role != "dispatch":
            continue
        if name not in jobs.dispatchers:
            yield ConfigProblem(
                key("clusters", name, "role"), "is dispatch, but the cluster is not in platform:jobs.dispatchers"
            )
        for pools, present in (
            ("nodePools", cluster.node_pools),
            ("gpuPools", cluster.gpu_pools),
            ("sandboxPool", cluster.sandbox_pool),
        ):
            if present:
                yield ConfigProblem(
                    key("clusters", name, pools),
                    f"a dispatch cluster runs no workloads (platform:clusters.{name}.role is dispatch): remove it",
                )
    dispatchers = set(jobs.dispatchers)
    named = [
        *(
            key("kafka", "strimzi", "clusters", i)
            for i, c in enumerate((config.strimzi.clusters or []) if config.strimzi else [])
            if c in dispatchers
        ),
        *(
            key("streaming", "clusters", i)
            for i, c in enumerate((config.streaming.clusters or []) if config.streaming else [])
            if c in dispatchers
        ),
    ]
    for workload, spec in config.workloads.items():
        for field_name, values in (("clusters", spec.clusters or []), ("failoverClusters", spec.failover_clusters)):
            named += [key("workloads", workload, field_name, i) for i, c in enumerate(values) if c in dispatchers]
    for where in named:
        yield ConfigProblem(where, "names a dispatch cluster, which runs no workloads (platform:jobs.dispatchers)")
    if jobs.workers is not None and not jobs.dispatchers:
        yield ConfigProblem(key("jobs", "workers"), "applies only with platform:jobs.dispatchers")
    if not jobs.dispatchers:
        return
    for i, name in enumerate(jobs.workers or []):
        where = key("jobs", "workers", i)
        if name not in config.clusters:
            yield ConfigProblem(where, f"{name} is not a cluster of platform:clusters")
        elif config.clusters[name].role != "workloads" or not config.clusters[name].gpu_pools:
            yield ConfigProblem(where, f"{name} has no GPU pools to run the dispatched jobs on")
    if jobs.worker_role_id is None:
        yield ConfigProblem(
            key("jobs", "workerRoleId"),
            "is required with dispatchers: the custom role \"Platform MultiKueue worker\" the delivery project "
            "defines (its `<env>StackSettings` output), which the dispatchers' identity gets on the workers' team "
            "job namespaces",
        )
    if dispatch_plan.DISPATCH_WORKLOAD in config.workloads:
        yield ConfigProblem(
            key("workloads", dispatch_plan.DISPATCH_WORKLOAD),
            "is the name of the MultiKueue dispatchers' own identity; rename the workload",
        )
    workers = config.dispatch_workers()
    if not workers:
        yield ConfigProblem(key("jobs", "dispatchers"), "there is no worker: no workloads cluster has GPU pools")
    elif len(workers) > MAX_MULTIKUEUE_WORKERS:
        yield ConfigProblem(
            key("jobs", "workers"), f"{len(workers)} workers; a MultiKueueConfig holds at most {MAX_MULTIKUEUE_WORKERS}"
        )
    for name in workers:
        api = config.clusters[name].api_server
        if not (api.private and api.vnet_integration):
            yield ConfigProblem(
                key("clusters", name, "apiServer", "vnetIntegration" if api.private else "private"),
                "a MultiKueue worker's API server must be private and VNet-integrated: the dispatchers reach it "
                "in its subnet, across the regions' peering (platform:jobs)",
            )
