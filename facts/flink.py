"""Apache Flink 2.2 and the Flink Kubernetes Operator 1.15.0, as stream processing uses them.

Sources:
- Flink's options: the ConfigOptions compiled into `flink-dist-2.2.0.jar` (PyPI
  `apache-flink-libraries==2.2.0`, `pyflink/lib/`), defined in flink-core's
  `CheckpointingOptions`, `StateBackendOptions`, `HighAvailabilityOptions`,
  `RestartStrategyOptions`, `MetricOptions` and the RocksDB state backend's `RocksDBOptions`;
  listed at nightlies.apache.org/flink/flink-docs-release-2.2/docs/deployment/config/. The
  `execution.checkpointing.*` names replaced the `state.*` ones in 1.20; the old names still
  resolve as deprecated aliases, which the platform never writes.
- PyFlink: `opt/flink-python-2.2.0.jar` (no Scala suffix in 2.x) holds
  `org.apache.flink.client.python.PythonDriver`, which takes `-py <file.py>` or `-pym <module>`
  before the job's own arguments (apache/flink-kubernetes-operator release-1.15.0,
  examples/flink-python-example). PyFlink 2.2 needs Python 3.9 or later.
- The operator: apache/flink-kubernetes-operator tag release-1.15.0 (helm chart
  `flink-kubernetes-operator`, repository archive.apache.org/dist/flink/flink-kubernetes-operator-1.15.0/;
  the FlinkDeployment CRD `flink.apache.org/v1beta1`; `DefaultValidator.java` for what it
  refuses; docs/layouts/shortcodes/generated/ for its `kubernetes.operator.*` options).

Imports nothing else from the project.
"""

from __future__ import annotations

from dataclasses import dataclass

FLINK_VERSION = "2.2.0"
# FlinkDeployment `spec.flinkVersion` for it (the CRD's enum stops at v2_2 in operator 1.15.0).
FLINK_CRD_VERSION = "v2_2"
# Every `spec.flinkVersion` operator 1.15.0's CRD accepts (tests/test_streaming.py reads the CRD).
OPERATOR_FLINK_VERSIONS = (
    "v1_13", "v1_14", "v1_15", "v1_16", "v1_17", "v1_18", "v1_19", "v1_20", "v2_0", "v2_1", "v2_2",
)  # fmt: skip
OPERATOR_VERSION = "1.15.0"
# Apache's archive keeps every release; downloads.apache.org drops a release once the next is out
# (the operator's quick start points there for the current one only).
OPERATOR_CHART_REPOSITORY = f"https://archive.apache.org/dist/flink/flink-kubernetes-operator-{OPERATOR_VERSION}/"
OPERATOR_IMAGE = "ghcr.io/apache/flink-kubernetes-operator"
# ghcr.io has no version tags: .github/workflows/docker_push.yml (release-1.15.0) tags each image
# with its commit's 7-character SHA only, and tools/releasing/create_source_release.sh writes
# that SHA into the released chart's values. Tag release-1.15.0 is commit 79d730bab4d8
# ("[release] Update version to 1.15.0"). The values in the repository say `latest`.
OPERATOR_IMAGE_TAG = "79d730b"
API_VERSION = "flink.apache.org/v1beta1"

PYFLINK_JAR = f"local:///opt/flink/opt/flink-python-{FLINK_VERSION}.jar"
PYTHON_DRIVER = "org.apache.flink.client.python.PythonDriver"
MIN_PYTHON = (3, 9)

PROMETHEUS_REPORTER_FACTORY = "org.apache.flink.metrics.prometheus.PrometheusReporterFactory"
PROMETHEUS_PORT = 9249

# `spec.job.upgradeMode` values; `last-state` and `savepoint` need a checkpoint directory,
# `savepoint` also a savepoint directory (DefaultValidator).
UPGRADE_MODES = ("last-state", "savepoint", "stateless")
# Keys the operator sets itself and refuses in a FlinkDeployment (DefaultValidator).
OPERATOR_OWNED_KEYS = ("kubernetes.namespace", "kubernetes.cluster-id", "high-availability.cluster-id")


@dataclass(frozen=True)
class FlinkOption:
    """One configuration option: its type as Flink parses it, and the names it replaced."""

    key: str
    type: str  # Duration, String, Integer, Boolean, Enum
    deprecated_keys: tuple[str, ...] = ()


# Every Flink option the platform may write into a FlinkDeployment's flinkConfiguration.
FLINK_OPTIONS: dict[str, FlinkOption] = {
    option.key: option
    for option in (
        FlinkOption("execution.checkpointing.interval", "Duration"),
        FlinkOption("execution.checkpointing.mode", "Enum"),  # EXACTLY_ONCE (default) | AT_LEAST_ONCE
        FlinkOption("execution.checkpointing.timeout", "Duration"),
        FlinkOption("execution.checkpointing.min-pause", "Duration"),
        FlinkOption("execution.checkpointing.storage", "String", ("state.checkpoint-storage",)),
        FlinkOption(
            "execution.checkpointing.dir", "String", ("state.checkpoints.dir", "state.backend.fs.checkpointdir")
        ),
        FlinkOption(
            "execution.checkpointing.savepoint-dir",
            "String",
            ("state.savepoints.dir", "savepoints.state.backend.fs.dir"),
        ),
        FlinkOption("execution.checkpointing.incremental", "Boolean", ("state.backend.incremental",)),
        FlinkOption("execution.checkpointing.num-retained", "Integer", ("state.checkpoints.num-retained",)),
        # DELETE_ON_CANCELLATION | RETAIN_ON_CANCELLATION | NO_EXTERNALIZED_CHECKPOINTS (default)
        FlinkOption("execution.checkpointing.externalized-checkpoint-retention", "Enum"),
        FlinkOption("taskmanager.numberOfTaskSlots", "Integer"),  # TaskManagerOptions, default 1
        FlinkOption("state.backend.type", "String", ("state.backend",)),  # hashmap (default) | rocksdb
        FlinkOption("state.backend.rocksdb.localdir", "String"),
        FlinkOption("high-availability.type", "String", ("high-availability", "recovery.mode")),  # NONE | kubernetes
        FlinkOption("high-availability.storageDir", "String"),
        FlinkOption("restart-strategy.type", "String", ("restart-strategy",)),
        FlinkOption("restart-strategy.exponential-delay.initial-backoff", "Duration"),
        FlinkOption("restart-strategy.exponential-delay.max-backoff", "Duration"),
        FlinkOption("restart-strategy.exponential-delay.backoff-multiplier", "Double"),
        FlinkOption("restart-strategy.exponential-delay.reset-backoff-threshold", "Duration"),
        FlinkOption("restart-strategy.exponential-delay.jitter-factor", "Double"),
        # Schemes Flink hands to Hadoop's own file systems when no plugin serves them
        # (core FileSystem: abfs and abfss are "directly supported", so only if listed here).
        FlinkOption("fs.allowed-fallback-filesystems", "String"),
        FlinkOption("metrics.reporter.prom.factory.class", "String"),
        FlinkOption("metrics.reporter.prom.port", "String"),
        # The operator's own options, read from the same flinkConfiguration.
        FlinkOption("kubernetes.operator.periodic.savepoint.interval", "String"),
        FlinkOption("kubernetes.operator.savepoint.history.max.age", "Duration"),
        FlinkOption("kubernetes.operator.savepoint.history.max.count", "Integer"),
        # Without it, pruning the history drops only the FlinkStateSnapshot resources, never the
        # savepoint's files (KubernetesOperatorConfigOptions, release-1.15.0: default false).
        FlinkOption("kubernetes.operator.savepoint.dispose-on-delete", "Boolean"),
        FlinkOption("kubernetes.operator.job.upgrade.last-state-fallback.enabled", "Boolean"),
    )
}


# Flink copies keys with this prefix, without it, into Hadoop's configuration (HadoopUtils,
# FLINK_CONFIG_PREFIXES).
FLINK_HADOOP_PREFIX = "flink.hadoop."

# Hadoop 3.4.1's ABFS with workload identity (HADOOP-18610; hadoop-azure's abfs page, r3.4.1,
# "Azure Workload Identity"): the provider re-reads the projected token file on every refresh.
ABFS_WORKLOAD_IDENTITY_PROVIDER = "org.apache.hadoop.fs.azurebfs.oauth2.WorkloadIdentityTokenProvider"
ABFS_MIN_HADOOP = "3.4.1"
ABFS_KEYS = (
    "fs.azure.account.auth.type",
    "fs.azure.account.oauth.provider.type",
    "fs.azure.account.oauth2.msi.tenant",
    "fs.azure.account.oauth2.client.id",
    "fs.azure.account.oauth2.token.file",
)


def deprecated_key(key: str) -> str | None:
    """The current name of `key` if it is a deprecated alias, else None."""
    for option in FLINK_OPTIONS.values():
        if key in option.deprecated_keys:
            return option.key
    return None
