"""Stream processing: Flink jobs and their capacity."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from facts.flink import FLINK_CRD_VERSION, FLINK_VERSION, OPERATOR_FLINK_VERSIONS, OPERATOR_VERSION
from facts.vm_sizes import (
    VM_SIZES,
)
from planning import streaming as streaming_plan
from stackconfig.keys import key
from stackconfig.model import (
    FlinkJobConfig,
    PlatformConfig,
)
from validation.checks.common import ConfigProblem

# Memory-optimized: Azure's E-series give 8 GiB per vCPU (RocksDB's block cache and write buffers
# live off-heap, in the TaskManager's managed memory).
STREAMING_MIN_GIB_PER_VCPU = 8


def check_streaming(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Where Flink runs, which teams' namespaces host it, and what each job needs
    (docs/decisions/0007-streaming.md)."""
    streaming = config.streaming
    for team, spec in config.teams.items():
        for namespace in spec.streaming_namespaces:
            where = key("teams", team, "streamingNamespaces")
            if streaming is None:
                yield ConfigProblem(where, f"{namespace}: there is no platform:streaming in this environment")
            if namespace not in spec.namespaces:
                yield ConfigProblem(where, f"{namespace} is not one of the team's namespaces")
            if namespace in spec.training_namespaces or namespace in spec.high_risk_namespaces:
                yield ConfigProblem(
                    where,
                    f"{namespace} is a training or high-risk namespace; Flink jobs run in their own namespace "
                    "(Pod Security restricted, outside Kueue)",
                )
    if streaming is None:
        return
    for cluster in streaming.clusters or []:
        if cluster not in config.clusters:
            yield ConfigProblem(
                key("streaming", "clusters"),
                f"{cluster} is not a cluster of platform:clusters ({', '.join(config.clusters)})",
            )
    if not streaming.high_availability and config.environment in streaming_plan.HIGH_AVAILABILITY_REQUIRED:
        yield ConfigProblem(
            key("streaming", "highAvailability"),
            f"is required in {' and '.join(streaming_plan.HIGH_AVAILABILITY_REQUIRED)}: without it a JobManager's "
            "failure stops every job until the operator restarts it from its last checkpoint",
        )
    size = VM_SIZES.get(streaming.pool.vm_size)
    if size is not None and (size.temp_disk_gib == 0 or size.memory_gib < STREAMING_MIN_GIB_PER_VCPU * size.vcpus):
        yield ConfigProblem(
            key("streaming", "pool", "vmSize"),
            f"{size.name} is not memory-optimized with a temporary disk (at least {STREAMING_MIN_GIB_PER_VCPU} GiB "
            "per vCPU, and a local disk for RocksDB's working files), e.g. Standard_E8ds_v5",
        )
    if streaming.jobs and streaming_plan.CHECKPOINT_ACCOUNT in config.storage.accounts:
        yield ConfigProblem(
            key("storage", "accounts", streaming_plan.CHECKPOINT_ACCOUNT),
            "is the Flink jobs' checkpoint account (platform:streaming.checkpoints); use another key",
        )
    if streaming.pool.min_count > streaming.pool.max_count:
        yield ConfigProblem(key("streaming", "pool", "minCount"), "is greater than maxCount")
    for name, job in streaming.jobs.items():
        yield from _job_problems(config, name, job)
    if size is not None:
        yield from _streaming_capacity(config)


def _job_problems(config: PlatformConfig, name: str, job: FlinkJobConfig) -> Iterator[ConfigProblem]:
    streaming = config.streaming
    assert streaming is not None
    where = partial(key, "streaming", "jobs", name)
    if name in config.workloads:
        yield ConfigProblem(
            where(),
            "is also a workload of platform:workloads; a job is a workload of its own (its identity, its "
            "service account): rename one",
        )
    team = config.teams.get(job.team)
    if team is None:
        yield ConfigProblem(
            where("team"), f"{job.team} is not a team of platform:teams ({', '.join(config.teams) or 'none'})"
        )
    elif job.namespace not in team.streaming_namespaces:
        yield ConfigProblem(
            where("namespace"),
            f"{job.namespace} is not one of {job.team}'s streamingNamespaces "
            f"({', '.join(team.streaming_namespaces) or 'none'})",
        )
    for cluster in job.clusters or []:
        if cluster not in config.streaming_clusters():
            yield ConfigProblem(
                where("clusters"),
                f"{cluster} has no streaming pool or operator: not one of platform:streaming.clusters "
                f"({', '.join(config.streaming_clusters()) or 'none'})",
            )
    crd_version = streaming_plan.flink_crd_version(job.flink_version)
    if crd_version not in OPERATOR_FLINK_VERSIONS:
        yield ConfigProblem(
            where("flinkVersion"),
            f"{job.flink_version} is not a Flink version the pinned operator {OPERATOR_VERSION} knows "
            f"({', '.join(v[1:].replace('_', '.') for v in OPERATOR_FLINK_VERSIONS)})",
        )
    elif crd_version != FLINK_CRD_VERSION:
        yield ConfigProblem(
            where("flinkVersion"),
            f"{job.flink_version}: the platform's Flink base image (images/flink/) is {FLINK_VERSION}; build the "
            f"job on it and declare {FLINK_CRD_VERSION[1:].replace('_', '.')}",
        )
    if job.image.endswith(":latest"):
        yield ConfigProblem(where("image"), "names `latest`; pin a tag or a digest, so that an upgrade is a change")
    if job.topics and config.kafka is None:
        yield ConfigProblem(where("topics"), "there is no platform:kafka in this environment")
    elif config.kafka is not None:
        known = [topic.name for topic in config.kafka.topics]
        for topic in job.topics:
            if topic not in known:
                yield ConfigProblem(
                    where("topics", topic), f"is not a topic of platform:kafka.topics ({', '.join(known) or 'none'})"
                )
    # The FlinkDeployment the job becomes, against the operator's own rules and the platform's
    # list of current Flink options (the identity's IDs change nothing these check).
    manifest = streaming_plan.flink_deployment(
        streaming_plan.job_spec(
            config, name, login_server="registry", account_name="account", client_id="id", tenant_id="tenant"
        )
    )
    for reason in streaming_plan.job_problems(manifest):
        yield ConfigProblem(where(), f"its FlinkDeployment: {reason}")
    if job.savepoint_retention_days > streaming.checkpoints.savepoint_retention_days:
        yield ConfigProblem(
            where("savepointRetentionDays"),
            f"{job.savepoint_retention_days} days is longer than the checkpoint storage keeps savepoints "
            f"(platform:streaming.checkpoints.savepointRetentionDays, {streaming.checkpoints.savepoint_retention_days})",
        )


def _streaming_capacity(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Each job, and every job of a cluster together, fit the `flink` pool at its maximum."""
    streaming = config.streaming
    assert streaming is not None
    room = streaming_plan.pool_node_room(config)
    pool = streaming.pool
    room_text = (
        f"{pool.vm_size} ({room[0] / 1000:g} CPUs, {room[1]:,} MiB and {room[2]} GiB of its {pool.os_disk_size_gb} GB "
        "OS disk free for pods per node)"
    )
    fits = {}
    for name, job in streaming.jobs.items():
        pods = streaming_plan.job_pods(config, name, job)
        nodes = streaming_plan.nodes_needed(pods, room)
        fits[name] = nodes is not None and nodes <= pool.max_count
        if nodes is None:
            yield ConfigProblem(
                key("streaming", "jobs", name), f"a JobManager or TaskManager does not fit a node of {room_text}"
            )
        elif nodes > pool.max_count:
            yield ConfigProblem(
                key("streaming", "jobs", name, "parallelism"),
                f"{job.parallelism} needs {streaming_plan.task_managers(job)} TaskManagers of {job.task_manager.slots} "
                f"slots (and {streaming_plan.job_manager_replicas(config)} JobManagers): {nodes} nodes of {room_text}; "
                f"platform:streaming.pool.maxCount is {pool.max_count}",
            )
    for cluster in config.streaming_clusters():
        jobs = [n for n in streaming.jobs if cluster in config.job_clusters(n) and fits.get(n)]
        pods = [p for n in jobs for p in streaming_plan.job_pods(config, n, streaming.jobs[n])]
        nodes = streaming_plan.nodes_needed(pods, room)
        if len(jobs) > 1 and nodes is not None and nodes > pool.max_count:
            yield ConfigProblem(
                key("streaming", "pool", "maxCount"),
                f"{pool.max_count} nodes of {room_text} do not hold the jobs of cluster {cluster} together "
                f"({', '.join(jobs)}: {nodes} nodes)",
            )
