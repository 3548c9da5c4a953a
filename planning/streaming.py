"""A PyFlink job as the Flink Kubernetes Operator runs it: its FlinkDeployment, from plain values.

The job runs in application mode (`local://` driver jar, the Python driver, `-py <file>`), keeps
RocksDB state with incremental checkpoints, and writes checkpoints, savepoints and HA metadata
to `abfss://` paths of the platform's private storage through Hadoop's ABFS with workload
identity: no key, no connection string (docs/decisions/0007-streaming.md). Every option written
is one of facts/flink.py's (current names, never the deprecated aliases), and `job_problems`
applies the operator's own refusals before anything is applied.

Pulumi-free; the streaming component fills the identity's client ID and tenant in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from facts import flink
from facts.workload_identity import FEDERATED_TOKEN_FILE, USE_LABEL

# Where a job's Python files live in the team's image (the operator's example layout).
USER_LIB = "/opt/flink/usrlib"
# RocksDB's working files: the TaskManager pool's local (temporary) disk.
ROCKSDB_LOCAL_DIR = "/mnt/rocksdb"


@dataclass(frozen=True)
class CheckpointStorage:
    """A container of an ADLS Gen2 account (hierarchical namespace) reached over `dfs`."""

    account: str
    container: str

    def uri(self, *path: str) -> str:
        return f"abfss://{self.container}@{self.account}.dfs.core.windows.net/" + "/".join(path)


@dataclass(frozen=True)
class Resources:
    cpu: float
    memory_mib: int

    def spec(self) -> dict[str, Any]:
        return {"cpu": self.cpu, "memory": f"{self.memory_mib}m"}


@dataclass(frozen=True)
class FlinkJob:
    name: str
    namespace: str
    service_account: str
    image: str
    # The job's Python file, relative to USER_LIB, and its own arguments.
    python_file: str
    parallelism: int
    job_manager: Resources
    task_manager: Resources
    task_slots: int
    upgrade_mode: str  # savepoint | last-state
    checkpoint_interval_seconds: int
    retained_checkpoints: int
    high_availability: bool
    storage: CheckpointStorage
    # The job's workload identity (its federated credential names this service account).
    client_id: str
    tenant_id: str
    args: tuple[str, ...] = ()
    # Node selector and tolerations of the TaskManager pool.
    node_selector: dict[str, str] = field(default_factory=dict)
    tolerations: tuple[dict[str, str], ...] = ()
    savepoint_interval: str | None = None  # periodic savepoints, e.g. "6h"


def flink_configuration(job: FlinkJob) -> dict[str, str]:
    """The job's flinkConfiguration: every value a string, as Flink reads its configuration."""
    storage = job.storage
    config = {
        "execution.checkpointing.interval": f"{job.checkpoint_interval_seconds} s",
        "execution.checkpointing.mode": "EXACTLY_ONCE",
        "execution.checkpointing.incremental": "true",
        "execution.checkpointing.num-retained": str(job.retained_checkpoints),
        "execution.checkpointing.externalized-checkpoint-retention": "RETAIN_ON_CANCELLATION",
        "execution.checkpointing.storage": "filesystem",
        "execution.checkpointing.dir": storage.uri(job.name, "checkpoints"),
        "execution.checkpointing.savepoint-dir": storage.uri(job.name, "savepoints"),
        "state.backend.type": "rocksdb",
        "state.backend.rocksdb.localdir": ROCKSDB_LOCAL_DIR,
        "restart-strategy.type": "exponential-delay",
        "restart-strategy.exponential-delay.initial-backoff": "10 s",
        "restart-strategy.exponential-delay.max-backoff": "5 min",
        "metrics.reporter.prom.factory.class": flink.PROMETHEUS_REPORTER_FACTORY,
        "metrics.reporter.prom.port": str(flink.PROMETHEUS_PORT),
        # abfss through Hadoop's own ABFS (3.4.1+, in the platform's Flink image), which signs
        # in with the pod's projected federated token.
        "fs.allowed-fallback-filesystems": "abfs;abfss",
    }
    hadoop = {
        "fs.azure.account.auth.type": "OAuth",
        "fs.azure.account.oauth.provider.type": flink.ABFS_WORKLOAD_IDENTITY_PROVIDER,
        "fs.azure.account.oauth2.msi.tenant": job.tenant_id,
        "fs.azure.account.oauth2.client.id": job.client_id,
        "fs.azure.account.oauth2.token.file": FEDERATED_TOKEN_FILE,
    }
    config.update({f"{flink.FLINK_HADOOP_PREFIX}{key}": value for key, value in hadoop.items()})
    if job.high_availability:
        config["high-availability.type"] = "kubernetes"
        config["high-availability.storageDir"] = storage.uri(job.name, "ha")
    if job.savepoint_interval:
        config["kubernetes.operator.periodic.savepoint.interval"] = job.savepoint_interval
    return config


def flink_deployment(job: FlinkJob) -> dict[str, Any]:
    """The job's FlinkDeployment (flink.apache.org/v1beta1, native, application mode)."""
    pod_spec: dict[str, Any] = {
        "containers": [
            {"name": "flink-main-container", "volumeMounts": [{"name": "rocksdb", "mountPath": ROCKSDB_LOCAL_DIR}]}
        ],
        "volumes": [{"name": "rocksdb", "emptyDir": {}}],
    }
    pod_template: dict[str, Any] = {"metadata": {"labels": {USE_LABEL: "true"}}, "spec": pod_spec}
    task_manager_spec: dict[str, Any] = dict(pod_spec)
    if job.node_selector:
        task_manager_spec["nodeSelector"] = dict(job.node_selector)
    if job.tolerations:
        task_manager_spec["tolerations"] = [dict(t) for t in job.tolerations]
    task_manager_template = {**pod_template, "spec": task_manager_spec}
    return {
        "apiVersion": flink.API_VERSION,
        "kind": "FlinkDeployment",
        "metadata": {"name": job.name, "namespace": job.namespace},
        "spec": {
            "image": job.image,
            "flinkVersion": flink.FLINK_CRD_VERSION,
            "mode": "native",
            "serviceAccount": job.service_account,
            "flinkConfiguration": {
                **flink_configuration(job),
                "taskmanager.numberOfTaskSlots": str(job.task_slots),
            },
            "podTemplate": pod_template,
            "jobManager": {"replicas": 2 if job.high_availability else 1, "resource": job.job_manager.spec()},
            "taskManager": {"resource": job.task_manager.spec(), "podTemplate": task_manager_template},
            "job": {
                "jarURI": flink.PYFLINK_JAR,
                "entryClass": flink.PYTHON_DRIVER,
                # The driver's own options come before the job's arguments.
                "args": ["-py", f"{USER_LIB}/{job.python_file}", *job.args],
                "parallelism": job.parallelism,
                "upgradeMode": job.upgrade_mode,
                "state": "running",
            },
        },
    }


def job_problems(manifest: dict[str, Any]) -> list[str]:
    """What the operator would refuse (its DefaultValidator), and any option the platform does
    not know or that is a deprecated alias: plain reasons, for the config message."""
    spec = manifest["spec"]
    config: dict[str, str] = spec.get("flinkConfiguration", {})
    problems = []
    for key in config:
        if key in flink.OPERATOR_OWNED_KEYS:
            problems.append(f"{key} is set by the operator, which refuses it in a FlinkDeployment")
        elif (current := flink.deprecated_key(key)) is not None:
            problems.append(f"{key} is a deprecated name of {current}")
        elif not (key in flink.FLINK_OPTIONS or _hadoop_key(key)):
            problems.append(f"{key} is not a Flink 2.2 option the platform knows (facts/flink.py)")
    mode = spec.get("job", {}).get("upgradeMode")
    if mode in ("last-state", "savepoint") and "execution.checkpointing.dir" not in config:
        problems.append(f"upgradeMode {mode} needs execution.checkpointing.dir")
    needs_savepoints = mode == "savepoint" or "kubernetes.operator.periodic.savepoint.interval" in config
    if needs_savepoints and "execution.checkpointing.savepoint-dir" not in config:
        problems.append("savepoints need execution.checkpointing.savepoint-dir")
    ha = config.get("high-availability.type", "NONE").lower() != "none"
    if spec.get("jobManager", {}).get("replicas", 1) > 1 and not ha:
        problems.append("more than one JobManager needs high-availability.type")
    return problems


def _hadoop_key(key: str) -> bool:
    return key.startswith(flink.FLINK_HADOOP_PREFIX) and key.removeprefix(flink.FLINK_HADOOP_PREFIX) in flink.ABFS_KEYS
