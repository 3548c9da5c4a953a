"""Flink: state on private storage, high availability, no credentials, Kafka over authenticated TLS."""

from __future__ import annotations

import re

from guardrail import lookup, resource_policy, stack_policy
from pulumi_policy import Severity

FLINK_DEPLOYMENT = "kubernetes:flink.apache.org/v1beta1:FlinkDeployment"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
# The label the platform puts on the ConfigMaps of Kafka client properties it writes.
KAFKA_PROPERTIES_LABEL = "platform.ai/kafka-client-properties"
STATE_DIRECTORIES = ("execution.checkpointing.dir", "execution.checkpointing.savepoint-dir")
# An ADLS Gen2 path reached over TLS: abfss://<container>@<account>.dfs.core.windows.net/<path>.
ABFSS = re.compile(r"^abfss://[a-z0-9-]{3,63}@(?P<account>[a-z0-9]{3,24})\.dfs\.core\.windows\.net/")
# What a key, a SAS token or a connection string looks like, in an option's name or value.
CREDENTIAL_KEYS = re.compile(r"(account\.key|\.sas\b|sas\.token|password|secret|connection\.?string|sasl\.jaas)", re.I)
CREDENTIAL_VALUES = re.compile(r"(AccountKey=|SharedAccessKey|SharedAccessSignature|[?&]sig=|password=)", re.I)


def _configuration(props) -> dict:
    return dict(lookup(props, "spec.flinkConfiguration") or {})


def checkpoints_private(args, report):
    """Checkpoints, savepoints and HA metadata on abfss:// of a storage account of this platform
    that has no public network access and no shared keys (judged where the accounts are in the
    reviewed stack: the data unit's accounts and the jobs meet in the environment's review)."""
    accounts = {lookup(r.props, "accountName"): r.props for r in args.resources if r.resource_type == STORAGE_ACCOUNT}
    for resource in args.resources:
        if resource.resource_type != FLINK_DEPLOYMENT:
            continue
        config = _configuration(resource.props)
        keys = list(STATE_DIRECTORIES)
        if str(config.get("high-availability.type", "NONE")).lower() != "none":
            keys.append("high-availability.storageDir")
        for key in keys:
            value = str(config.get(key) or "")
            match = ABFSS.match(value)
            if not match:
                report(
                    f"{resource.name}: {key} is {value or 'unset'}, not an abfss:// path of ADLS Gen2.", resource.urn
                )
                continue
            if not accounts:
                continue
            account = accounts.get(match["account"])
            if account is None:
                report(
                    f"{resource.name}: {key} is on {match['account']}, not a storage account of the platform.",
                    resource.urn,
                )
            elif (
                lookup(account, "publicNetworkAccess") != "Disabled"
                or lookup(account, "allowSharedKeyAccess") is not False
            ):
                report(
                    f"{resource.name}: {key} is on {match['account']}, which is reachable publicly or with a shared key.",
                    resource.urn,
                )
        if config.get("state.backend.type") != "rocksdb":
            report(
                f"{resource.name}: state.backend.type is not rocksdb; state larger than memory is lost.", resource.urn
            )


HIGH_AVAILABILITY_SCHEMA = {"required": {"type": "boolean", "default": True}}


def high_availability(args, report):
    if args.resource_type != FLINK_DEPLOYMENT or not args.get_config().get("required", True):
        return
    config = _configuration(args.props)
    name = lookup(args.props, "metadata.name")
    if str(config.get("high-availability.type", "NONE")).lower() != "kubernetes":
        report(f"FlinkDeployment {name} has no Kubernetes HA: a JobManager failure stops the job.")
    elif not config.get("high-availability.storageDir"):
        report(f"FlinkDeployment {name} sets no high-availability.storageDir.")
    if int(lookup(args.props, "spec.jobManager.replicas") or 1) < 2:
        report(f"FlinkDeployment {name} runs one JobManager: no standby takes over.")


def no_credentials(args, report):
    if args.resource_type != FLINK_DEPLOYMENT:
        return
    name = lookup(args.props, "metadata.name")
    for key, value in _configuration(args.props).items():
        if CREDENTIAL_KEYS.search(key) or CREDENTIAL_VALUES.search(str(value)):
            report(f"FlinkDeployment {name}: flinkConfiguration {key} holds or names a credential.")
    for container in list(lookup(args.props, "spec.podTemplate.spec.containers") or []):
        for env in list(container.get("env") or []):
            if CREDENTIAL_VALUES.search(str(env.get("value", ""))):
                report(f"FlinkDeployment {name}: env {env.get('name')} holds a credential.")


def _properties(text: str) -> dict[str, str]:
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line and not line.lstrip().startswith("#"))
    return {k.strip(): v.strip() for k, v in pairs}


def kafka_authenticated_tls(args, report):
    """Kafka client properties the platform writes: TLS, and Entra ID tokens (OAUTHBEARER) or
    mutual TLS; never PLAINTEXT, and no password in a JAAS line."""
    if args.resource_type != CONFIG_MAP:
        return
    # The label's key has dots, so it is read from the labels map, not through lookup's path.
    if (lookup(args.props, "metadata.labels") or {}).get(KAFKA_PROPERTIES_LABEL) != "true":
        return
    name = lookup(args.props, "metadata.name")
    for file, text in (lookup(args.props, "data") or {}).items():
        properties = _properties(str(text))
        protocol = properties.get("security.protocol", "PLAINTEXT")
        if protocol not in ("SASL_SSL", "SSL"):
            report(f"ConfigMap {name} ({file}): security.protocol {protocol} is not TLS.")
        if protocol == "SASL_SSL" and properties.get("sasl.mechanism") != "OAUTHBEARER":
            report(f"ConfigMap {name} ({file}): sasl.mechanism {properties.get('sasl.mechanism')} is not OAUTHBEARER.")
        if "password" in properties.get("sasl.jaas.config", "").lower():
            report(f"ConfigMap {name} ({file}): sasl.jaas.config carries a password.")


POLICIES = [
    stack_policy(
        "flink-checkpoints-private",
        "Every FlinkDeployment keeps RocksDB state and writes checkpoints, savepoints and HA metadata to "
        "abfss:// paths of the platform's private storage (no public network, no shared keys).",
        checkpoints_private,
        severity=Severity.HIGH,
        remediation="Declare the job under platform:streaming.jobs; the platform sets its state directories on "
        "the checkpoint account (planning/streaming.py).",
    ),
    resource_policy(
        "flink-high-availability",
        "FlinkDeployments run Kubernetes HA with a standby JobManager where the environment requires it.",
        high_availability,
        severity=Severity.HIGH,
        remediation="Keep platform:streaming.highAvailability true (required in staging and prod).",
        config=HIGH_AVAILABILITY_SCHEMA,
    ),
    resource_policy(
        "flink-no-credentials",
        "No account key, SAS token, password or connection string in a Flink configuration or pod environment.",
        no_credentials,
        severity=Severity.CRITICAL,
        remediation="Sign in with the job's workload identity (the platform's ABFS and Kafka settings do).",
    ),
    resource_policy(
        "kafka-clients-authenticated-tls",
        "Kafka client properties the platform writes use TLS with Entra ID tokens (OAUTHBEARER) or mutual "
        "TLS, and carry no password.",
        kafka_authenticated_tls,
        severity=Severity.CRITICAL,
        remediation="Let the platform write the job's Kafka properties: declare the job's topics under "
        "platform:streaming.jobs (planning/streaming.py writes them).",
    ),
]
