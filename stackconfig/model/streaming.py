"""Stream processing: Flink jobs, the operator, the streaming pool, checkpoint storage."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field, StringConstraints

from stackconfig.model.base import (
    MaxSurge,
    Model,
    NamespaceName,
    ShortName,
    VmSize,
)
from stackconfig.model.data import (
    StorageSku,
)
from stackconfig.model.kafka import (
    KafkaAccess,
    TopicName,
)

FlinkJobName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{1,22}[a-z0-9]$")]
# An image in the platform's registry, pinned by tag or digest, without the registry host.
RegistryImage = Annotated[
    str,
    StringConstraints(
        pattern=r"^[a-z0-9]+([._-][a-z0-9]+)*(/[a-z0-9]+([._-][a-z0-9]+)*)*"
        r"(:[A-Za-z0-9_][A-Za-z0-9._-]{0,127}|@sha256:[a-f0-9]{64})$"
    ),
]
PythonFile = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_./-]*\.py$")]
# Flink durations as the operator's options take them: "30 min", "6 h", "7 d".
FlinkDuration = Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]* (s|min|h|d)$")]


class FlinkResourcesConfig(Model):
    """CPU and memory of a JobManager or TaskManager pod (Flink's total process memory)."""

    cpu: float = Field(ge=0.25, le=64, description="CPUs (requests and limits), e.g. `1` or `0.5`.")
    memory_mib: int = Field(
        ge=1024, le=1_048_576, alias="memoryMiB", description="Total process memory in MiB (at least 1024)."
    )


class TaskManagerConfig(FlinkResourcesConfig):
    slots: int = Field(default=2, ge=1, le=64, description="Task slots per TaskManager.")
    local_disk_gib: int = Field(
        default=32,
        ge=1,
        le=2048,
        alias="localDiskGiB",
        description="Local disk for RocksDB's working files, requested and limited per TaskManager (it "
        "is evicted alone if it grows beyond); counted against the pool's OS disk.",
    )


class FlinkJobConfig(Model):
    """One PyFlink job, run by the Flink operator in application mode."""

    team: ShortName = Field(description="A team of `platform:teams`.")
    namespace: NamespaceName = Field(description="One of the team's `streamingNamespaces`.")
    clusters: Optional[list[ShortName]] = Field(
        default=None,
        description="Streaming clusters it runs on, one instance each (its own state). Unset: every streaming cluster.",
    )
    image: RegistryImage = Field(
        description="The job's image in the platform's registry, built on the platform's Flink base "
        "(`images/flink/`), as `<repository>:<tag>` or `@sha256:<digest>` without the registry host; "
        "never `latest`."
    )
    python_file: PythonFile = Field(description="The job's entry point, relative to `/opt/flink/usrlib` in the image.")
    args: list[str] = Field(default_factory=list, description="The job's own arguments, after `-py <file>`.")
    flink_version: str = Field(
        default="2.2", description="`major.minor`; the platform's base image and operator 1.15.0 run 2.2."
    )
    parallelism: int = Field(ge=1, le=10_000, description="The job's parallelism.")
    job_manager: FlinkResourcesConfig = Field(
        default_factory=lambda: FlinkResourcesConfig(cpu=1, memory_mib=2048),
        description="Each JobManager's resources (two JobManagers with high availability).",
    )
    task_manager: TaskManagerConfig = Field(
        default_factory=lambda: TaskManagerConfig(cpu=2, memory_mib=8192),
        description="Each TaskManager's resources and slots; the job runs ⌈parallelism / slots⌉ of them.",
    )
    topics: dict[TopicName, KafkaAccess] = Field(
        default_factory=dict,
        description="`{topic: read | write | readWrite}` of `platform:kafka.topics`: ACLs (Strimzi) or Event "
        "Hubs roles, as for any Kafka client, signed in through the job's workload identity.",
    )
    upgrade_mode: Literal["savepoint", "last-state"] = Field(
        default="savepoint",
        description="How the operator carries state across an upgrade: `savepoint` (stop with a savepoint, "
        "start from it) or `last-state` (start from the last checkpoint; faster, for jobs whose "
        "state is compatible).",
    )
    checkpoint_interval_seconds: int = Field(default=60, ge=10, le=3600, description="Checkpoint every so often.")
    retained_checkpoints: int = Field(default=3, ge=1, le=20, description="Completed checkpoints kept.")
    savepoint_interval: Optional[FlinkDuration] = Field(
        default=None, description="Periodic savepoints, e.g. `6 h`. Unset: savepoints only on upgrades."
    )
    savepoint_retention_days: int = Field(
        default=7,
        ge=1,
        le=365,
        description="The operator disposes of the job's savepoints older than this (its savepoint history).",
    )


class FlinkOperatorConfig(Model):
    """The Apache Flink Kubernetes Operator, one per streaming cluster."""

    replicas: int = Field(
        default=2, ge=1, le=3, description="Operator pods; more than one elect a leader (a Lease) and get a PDB."
    )


class StreamingPoolConfig(Model):
    """The dedicated pool the JobManagers and TaskManagers run on: memory-optimized, with a local
    disk under the ephemeral OS disk where RocksDB keeps its working files."""

    vm_size: VmSize = Field(
        default="Standard_E8ds_v5",
        description="A memory-optimized size (8 GiB per vCPU or more) with a temporary disk.",
    )
    min_count: int = Field(default=0, ge=0, le=1000, description="Fewest nodes per streaming cluster.")
    max_count: int = Field(default=10, ge=1, le=1000, description="Most nodes per streaming cluster.")
    os_disk_size_gb: int = Field(
        default=256,
        ge=30,
        le=2048,
        alias="osDiskSizeGB",
        description="Ephemeral OS disk on the local temporary disk; holds RocksDB's working files.",
    )
    max_surge: MaxSurge = Field(default="1", description="Upgrade surge.")


class CheckpointStorageConfig(Model):
    """The ADLS Gen2 account that holds the jobs' checkpoints, savepoints and HA metadata."""

    account_name: Optional[str] = Field(
        default=None,
        description="Azure's globally unique name. Unset: `st<prefix><env>flink`, which must then fit Azure's rules.",
    )
    sku: StorageSku = Field(default="Standard_ZRS", description="Its redundancy (`Standard_ZRS` or better in prod).")
    replication: Literal["none", "geoFailover"] = Field(
        default="none",
        description="`geoFailover`: a geo-redundant `sku` whose secondary a person promotes when the region is "
        "lost (the account has a hierarchical namespace, which object replication does not serve). `none`: "
        "state lives and dies with the region.",
    )
    savepoint_retention_days: int = Field(
        default=30,
        ge=1,
        le=3650,
        description="A lifecycle rule deletes savepoints this many days old; at least every job's "
        "`savepointRetentionDays`. Checkpoints are Flink's to delete (incremental ones share files).",
    )


class StreamingConfig(Model):
    """Stream processing: PyFlink jobs under the Flink Kubernetes Operator (docs/streaming.md)."""

    clusters: Optional[list[ShortName]] = Field(
        default=None, description="Clusters Flink runs on (the operator, the pool, every job). Unset: every cluster."
    )
    high_availability: bool = Field(
        default=True,
        description="Kubernetes HA: two JobManagers, leader election, job metadata on the checkpoint storage; "
        "required in staging and prod, `false` is dev's explicit weakening.",
    )
    operator: FlinkOperatorConfig = Field(default_factory=FlinkOperatorConfig, description="The operator.")
    pool: StreamingPoolConfig = Field(
        default_factory=StreamingPoolConfig, description="The `flink` pool of each streaming cluster."
    )
    checkpoints: CheckpointStorageConfig = Field(
        default_factory=CheckpointStorageConfig, description="Where state is kept."
    )
    jobs: dict[FlinkJobName, FlinkJobConfig] = Field(
        default_factory=dict,
        description="Jobs by name (3-24 lowercase letters, digits, hyphens): the FlinkDeployment, the workload "
        "identity, the checkpoint container and the Kafka client share it, so it must not be a "
        "`platform:workloads` name.",
    )
