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

from facts import aks_node, flink
from facts.gpu import LABEL_PREFIX
from facts.vm_sizes import VM_SIZES
from facts.workload_identity import FEDERATED_TOKEN_FILE, USE_LABEL
from planning import kafka as kafka_plan
from stackconfig.keys import key as config_key
from stackconfig.model import (
    FlinkJobConfig,
    KafkaClientConfig,
    NodePoolConfig,
    PlatformConfig,
    StorageAccountConfig,
    WorkloadConfig,
)

# Where a job's Python files live in the team's image (the operator's example layout).
USER_LIB = "/opt/flink/usrlib"
# RocksDB's working files: the TaskManager pool's local (temporary) disk.
ROCKSDB_LOCAL_DIR = "/mnt/rocksdb"

# The dedicated pool of each streaming cluster, tainted so that only Flink lands there.
STREAMING_POOL = "flink"
STREAMING_POOL_LABEL = f"{LABEL_PREFIX}/streaming"
STREAMING_POOL_TAINT = f"{STREAMING_POOL_LABEL}=true:NoSchedule"
# Streaming namespaces carry it: Kueue's managedJobsNamespaceSelector leaves them out.
STREAMING_NAMESPACE_LABEL = f"{LABEL_PREFIX}/streaming"
OPERATOR_NAMESPACE = "flink-operator"
# The JobManager's REST endpoint, which the operator polls (Flink's rest.port default).
JOB_MANAGER_REST_PORT = 8081
# Environments where a JobManager failure must not lose the job (Kubernetes HA).
HIGH_AVAILABILITY_REQUIRED = ("staging", "prod")
# The storage account key of the checkpoint account (in platform:storage.accounts after expansion).
CHECKPOINT_ACCOUNT = "flink"
# Where, inside a job's container, each kind of state lives.
CHECKPOINTS, SAVEPOINTS, HA = "checkpoints", "savepoints", "ha"
# Where the job's Kafka client properties are mounted (a ConfigMap the platform writes).
KAFKA_PROPERTIES_DIR = "/etc/platform/kafka"
KAFKA_PROPERTIES_FILE = "client.properties"
KAFKA_CA_DIR = "/etc/platform/kafka-ca"
# Labels the ConfigMaps of Kafka client properties the platform writes (the policy pack reads them).
KAFKA_PROPERTIES_LABEL = f"{LABEL_PREFIX}/kafka-client-properties"
# The Prometheus reporter's port, named on the main container for the PodMonitor.
METRICS_PORT_NAME = "metrics"
# The environment variable that tells the job where its Kafka client properties are.
KAFKA_PROPERTIES_ENV = "KAFKA_PROPERTIES_FILE"
# Strimzi's OAuth client: trades the projected token (a client assertion) for an Entra token.
STRIMZI_LOGIN_HANDLER = "io.strimzi.kafka.oauth.client.JaasClientOauthLoginCallbackHandler"


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
    # Local disk (ephemeral storage), requested and limited: RocksDB's working files.
    disk_gib: int | None = None

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"cpu": self.cpu, "memory": f"{self.memory_mib}m"}
        if self.disk_gib:
            spec["ephemeralStorage"] = f"{self.disk_gib}Gi"
        return spec


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
    savepoint_interval: str | None = None  # periodic savepoints, e.g. "6 h"
    # The operator's savepoint history: older (and more) savepoints are disposed of, files too;
    # the newest is always kept.
    savepoint_history_max_age: str | None = None  # e.g. "7 d"
    savepoint_history_max_count: int | None = None
    # ConfigMaps mounted into the pods: the job's Kafka client properties, the brokers' CA.
    kafka_properties_config_map: str | None = None
    kafka_ca_config_map: str | None = None


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
        "execution.checkpointing.dir": storage.uri(CHECKPOINTS),
        "execution.checkpointing.savepoint-dir": storage.uri(SAVEPOINTS),
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
        config["high-availability.storageDir"] = storage.uri(HA)
    if job.savepoint_interval:
        config["kubernetes.operator.periodic.savepoint.interval"] = job.savepoint_interval
    if job.savepoint_history_max_age:
        config["kubernetes.operator.savepoint.history.max.age"] = job.savepoint_history_max_age
    if job.savepoint_history_max_count:
        config["kubernetes.operator.savepoint.history.max.count"] = str(job.savepoint_history_max_count)
    if job.savepoint_history_max_age or job.savepoint_history_max_count:
        config["kubernetes.operator.savepoint.dispose-on-delete"] = "true"
    return config


# Pod Security `restricted`: the official Flink image's `flink` user (uid and gid 9999, the
# operator chart's podSecurityContext too), no privilege escalation, no capabilities.
POD_SECURITY_CONTEXT = {
    "runAsNonRoot": True,
    "runAsUser": 9999,
    "runAsGroup": 9999,
    "fsGroup": 9999,
    "seccompProfile": {"type": "RuntimeDefault"},
}
CONTAINER_SECURITY_CONTEXT = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
MAIN_CONTAINER = "flink-main-container"


def flink_deployment(job: FlinkJob) -> dict[str, Any]:
    """The job's FlinkDeployment (flink.apache.org/v1beta1, native, application mode)."""
    mounts: list[dict[str, Any]] = [{"name": "rocksdb", "mountPath": ROCKSDB_LOCAL_DIR}]
    env: list[dict[str, str]] = []
    # A TaskManager whose RocksDB outgrows its share is evicted alone, not the node's pods.
    rocksdb = {"sizeLimit": f"{job.task_manager.disk_gib}Gi"} if job.task_manager.disk_gib else {}
    volumes: list[dict[str, Any]] = [{"name": "rocksdb", "emptyDir": rocksdb}]
    if job.kafka_properties_config_map:
        mounts.append({"name": "kafka", "mountPath": KAFKA_PROPERTIES_DIR, "readOnly": True})
        env.append({"name": KAFKA_PROPERTIES_ENV, "value": f"{KAFKA_PROPERTIES_DIR}/{KAFKA_PROPERTIES_FILE}"})
        volumes.append({"name": "kafka", "configMap": {"name": job.kafka_properties_config_map}})
    if job.kafka_ca_config_map:
        mounts.append({"name": "kafka-ca", "mountPath": KAFKA_CA_DIR, "readOnly": True})
        volumes.append({"name": "kafka-ca", "configMap": {"name": job.kafka_ca_config_map}})
    # JobManagers and TaskManagers alike run on the streaming pool.
    pod_spec: dict[str, Any] = {
        "securityContext": dict(POD_SECURITY_CONTEXT),
        "containers": [
            {
                "name": MAIN_CONTAINER,
                "securityContext": dict(CONTAINER_SECURITY_CONTEXT),
                "ports": [{"name": METRICS_PORT_NAME, "containerPort": flink.PROMETHEUS_PORT, "protocol": "TCP"}],
                "volumeMounts": mounts,
                **({"env": env} if env else {}),
            }
        ],
        "volumes": volumes,
    }
    if job.node_selector:
        pod_spec["nodeSelector"] = dict(job.node_selector)
    if job.tolerations:
        pod_spec["tolerations"] = [dict(t) for t in job.tolerations]
    pod_template: dict[str, Any] = {"metadata": {"labels": {USE_LABEL: "true"}}, "spec": pod_spec}
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
            "taskManager": {"resource": job.task_manager.spec()},
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


# --- The platform's side: the pool, the namespaces, and what a job expands into. ---


def flink_crd_version(version: str) -> str:
    """`2.2` -> `v2_2`, as FlinkDeployment.spec.flinkVersion spells it."""
    return "v" + version.replace(".", "_")


def job_manager_replicas(config: PlatformConfig) -> int:
    streaming = config.streaming
    return 2 if streaming is not None and streaming.high_availability else 1


def task_managers(job: FlinkJobConfig) -> int:
    return -(-job.parallelism // job.task_manager.slots)


def streaming_node_pools(config: PlatformConfig) -> dict[str, NodePoolConfig]:
    """The `flink` pool of a streaming cluster (the same on each): JobManagers and TaskManagers,
    RocksDB's working files on the ephemeral OS disk, which sits on the local temporary disk."""
    streaming = config.streaming
    if streaming is None:
        return {}
    pool = streaming.pool
    return {
        STREAMING_POOL: NodePoolConfig(
            vm_size=pool.vm_size,
            min_count=pool.min_count,
            max_count=pool.max_count,
            max_surge=pool.max_surge,
            os_disk_type="Ephemeral",
            os_disk_size_gb=pool.os_disk_size_gb,
            labels={STREAMING_POOL_LABEL: "true"},
            taints=[STREAMING_POOL_TAINT],
        )
    }


def pool_selector() -> dict[str, str]:
    return {STREAMING_POOL_LABEL: "true"}


def pool_tolerations() -> tuple[dict[str, str], ...]:
    taint_key, rest = STREAMING_POOL_TAINT.split("=", 1)
    value, effect = rest.split(":")
    return ({"key": taint_key, "operator": "Equal", "value": value, "effect": effect},)


def streaming_namespaces(config: PlatformConfig) -> dict[str, str]:
    """Streaming namespace -> its team."""
    return {ns: team for team, spec in config.teams.items() for ns in spec.streaming_namespaces}


def expand(config: PlatformConfig) -> PlatformConfig:
    """The config with each Flink job also as what it is to the rest of the platform: a
    workload (identity, federated credentials on the streaming clusters, Storage Blob Data
    Contributor on its own checkpoint container, the Kubernetes API for native mode and HA), a
    Kafka client of its topics, and a container of the checkpoint account. Validated config
    only (validation.checks.check_streaming first)."""
    streaming = config.streaming
    if streaming is None:
        return config
    workloads = dict(config.workloads)
    for name, job in streaming.jobs.items():
        workloads[name] = WorkloadConfig(
            team=job.team,
            namespace=job.namespace,
            service_account=name,
            clusters=config.job_clusters(name),
            storage={CHECKPOINT_ACCOUNT: {name: "write"}},
            kubernetes_api=True,
        )
    update: dict[str, Any] = {"workloads": workloads}
    if streaming.jobs:
        account = StorageAccountConfig(
            account_name=streaming.checkpoints.account_name,
            hierarchical_namespace=True,
            containers=list(streaming.jobs),
            sku=streaming.checkpoints.sku,
            replication=streaming.checkpoints.replication,
            delete_after_days={
                f"{name}/{SAVEPOINTS}/": streaming.checkpoints.savepoint_retention_days for name in streaming.jobs
            },
        )
        storage = config.storage.model_copy(
            update={"accounts": {**config.storage.accounts, CHECKPOINT_ACCOUNT: account}}
        )
        update["storage"] = storage
    clients = {
        name: KafkaClientConfig(topics=dict(job.topics), authentication="oauth")
        for name, job in streaming.jobs.items()
        if job.topics
    }
    if clients and config.kafka is not None:
        update["kafka"] = config.kafka.model_copy(update={"clients": {**config.kafka.clients, **clients}})
    return config.model_copy(update=update)


def derived_key(config: PlatformConfig, problem_key: str) -> str:
    """A problem found on the expanded config, named as the user wrote it: a job's workload,
    Kafka client or checkpoint container is the job."""
    streaming = config.streaming
    if streaming is None:
        return problem_key
    for name in streaming.jobs:
        for derived in (config_key("workloads", name), config_key("kafka", "clients", name)):
            if problem_key == derived or problem_key.startswith(derived + "."):
                return config_key("streaming", "jobs", name)
    account = config_key("storage", "accounts", CHECKPOINT_ACCOUNT)
    if problem_key.startswith(account):
        setting = problem_key[len(account) + 1 :]
        # The checkpoint account's own keys keep their names; the rest are the platform's choices.
        if setting in ("sku", "replication", "accountName"):
            return config_key("streaming", "checkpoints", setting)
        return config_key("streaming", "checkpoints")
    return problem_key


# --- Capacity: what the jobs of a cluster need of the pool. ---


@dataclass(frozen=True)
class PodShape:
    job: str
    cpu_millicores: int
    memory_mib: int
    disk_gib: int = 0

    @property
    def needs(self) -> tuple[int, int, int]:
        return (self.cpu_millicores, self.memory_mib, self.disk_gib)


# What a pool node's OS disk keeps for itself before pods' local storage: the OS, the container
# images (Flink's with PyFlink is several GB) and logs, and the kubelet's hard eviction threshold
# of 10% (nodefs.available). An estimate, like facts/aks_node.py's headroom.
NODE_DISK_RESERVED_GIB = 40


def pool_node_room(config: PlatformConfig) -> tuple[int, int, int]:
    """(millicores, MiB, GiB of local disk) one pool node offers pods, less room for node agents
    (facts/aks_node.py) and for the OS disk's own use."""
    assert config.streaming is not None
    pool = config.streaming.pool
    size = VM_SIZES[pool.vm_size]
    cpu = aks_node.allocatable_cpu_millicores(size.vcpus) - aks_node.NODE_AGENT_HEADROOM_MILLICORES
    memory = aks_node.allocatable_memory_bytes(size.memory_gib, 110) // aks_node.MIB - aks_node.NODE_AGENT_HEADROOM_MIB
    disk = int(pool.os_disk_size_gb * 0.9) - NODE_DISK_RESERVED_GIB
    return cpu, memory, disk


def job_pods(config: PlatformConfig, name: str, job: FlinkJobConfig) -> list[PodShape]:
    manager = PodShape(name, int(job.job_manager.cpu * 1000), job.job_manager.memory_mib)
    worker = PodShape(
        name, int(job.task_manager.cpu * 1000), job.task_manager.memory_mib, job.task_manager.local_disk_gib
    )
    return [manager] * job_manager_replicas(config) + [worker] * task_managers(job)


def nodes_needed(pods: list[PodShape], room: tuple[int, int, int]) -> int | None:
    """Nodes of `room` that hold every pod (first fit, largest first); None if one never fits."""
    free: list[list[int]] = []
    for pod in sorted(pods, key=lambda p: (p.memory_mib, p.cpu_millicores, p.disk_gib), reverse=True):
        if any(need > have for need, have in zip(pod.needs, room, strict=True)):
            return None
        for node in free:
            if all(have >= need for have, need in zip(node, pod.needs, strict=True)):
                for i, need in enumerate(pod.needs):
                    node[i] -= need
                break
        else:
            free.append([have - need for have, need in zip(room, pod.needs, strict=True)])
    return len(free)


# --- A job as its FlinkDeployment and Kafka client properties. ---


def kafka_properties(
    config: PlatformConfig,
    job: str,
    cluster: str,
    *,
    tenant_id: str,
    client_id: str,
    event_hubs_namespace: str | None = None,
) -> dict[str, str]:
    """The Kafka client properties of a job (Flink's Kafka connector is a JVM Kafka client): SASL
    OAUTHBEARER over TLS with Strimzi's OAuth client, which trades the pod's projected token
    (a client assertion) for an Entra token (docs/decisions/0007-streaming.md). No secret."""
    info = kafka_plan.connection_info(config, job, event_hubs_namespace)
    properties = {
        "bootstrap.servers": info["bootstrapServers"][cluster],
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "OAUTHBEARER",
        "sasl.login.callback.handler.class": STRIMZI_LOGIN_HANDLER,
        "sasl.jaas.config": (
            "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
            f'oauth.token.endpoint.uri="{kafka_plan.entra_token_endpoint(tenant_id)}" '
            f'oauth.client.id="{client_id}" '
            f'oauth.client.assertion.location="{FEDERATED_TOKEN_FILE}" '
            f'oauth.scope="{info["tokenScope"]}";'
        ),
        # Consumers' group ids must start with the client's prefix (its ACLs allow that prefix).
        "group.id": f"{info['consumerGroupPrefix']}flink",
    }
    if config.kafka is not None and config.kafka.engine == "strimzi":
        # The brokers' CA (the kafka-cluster-ca ConfigMap, key ca.crt), as a PEM trust store.
        properties["ssl.truststore.type"] = "PEM"
        properties["ssl.truststore.location"] = f"{KAFKA_CA_DIR}/ca.crt"
    return properties


def job_spec(
    config: PlatformConfig,
    name: str,
    *,
    login_server: str,
    account_name: str,
    client_id: str,
    tenant_id: str,
) -> FlinkJob:
    """A job of `platform:streaming.jobs` as the FlinkDeployment builder takes it."""
    streaming = config.streaming
    assert streaming is not None
    job = streaming.jobs[name]
    kafka = bool(job.topics)
    strimzi = config.kafka is not None and config.kafka.engine == "strimzi"
    return FlinkJob(
        name=name,
        namespace=job.namespace,
        service_account=name,
        image=f"{login_server}/{job.image}",
        python_file=job.python_file,
        args=tuple(job.args),
        parallelism=job.parallelism,
        job_manager=Resources(job.job_manager.cpu, job.job_manager.memory_mib),
        task_manager=Resources(job.task_manager.cpu, job.task_manager.memory_mib, job.task_manager.local_disk_gib),
        task_slots=job.task_manager.slots,
        upgrade_mode=job.upgrade_mode,
        checkpoint_interval_seconds=job.checkpoint_interval_seconds,
        retained_checkpoints=job.retained_checkpoints,
        high_availability=streaming.high_availability,
        storage=CheckpointStorage(account_name, name),
        client_id=client_id,
        tenant_id=tenant_id,
        node_selector=pool_selector(),
        tolerations=pool_tolerations(),
        savepoint_interval=job.savepoint_interval,
        savepoint_history_max_age=f"{job.savepoint_retention_days} d",
        savepoint_history_max_count=savepoint_history_count(job),
        kafka_properties_config_map=kafka_properties_config_map(name) if kafka else None,
        kafka_ca_config_map=kafka_plan.CA_CONFIG_MAP if kafka and strimzi else None,
    )


def properties_file(properties: dict[str, str]) -> str:
    """Java properties, one `key=value` a line (values here need no escaping: no `\\` or newline)."""
    return "".join(f"{key}={value}\n" for key, value in properties.items())


# The operator's own default history length (KubernetesOperatorConfigOptions, release-1.15.0).
DEFAULT_SAVEPOINT_HISTORY = 10
_SECONDS = {"s": 1, "min": 60, "h": 3600, "d": 86400}


def flink_duration_seconds(value: str) -> int:
    """`6 h` -> 21600 (the FlinkDuration form the config takes)."""
    amount, unit = value.split()
    return int(amount) * _SECONDS[unit]


def savepoint_history_count(job: FlinkJobConfig) -> int:
    """Enough history entries that age, not count, decides: every periodic savepoint of the
    retention window and one more, or the operator's default without periodic savepoints."""
    if job.savepoint_interval is None:
        return DEFAULT_SAVEPOINT_HISTORY
    window = job.savepoint_retention_days * _SECONDS["d"]
    return max(DEFAULT_SAVEPOINT_HISTORY, -(-window // flink_duration_seconds(job.savepoint_interval)) + 1)


def kafka_properties_config_map(job: str) -> str:
    return f"{job}-kafka"
