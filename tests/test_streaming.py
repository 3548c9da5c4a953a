"""Stream processing (issue 20), first step: the Flink and operator facts the capability is built
on (facts/flink.py) agree with the pinned upstream files: the FlinkDeployment CRD of operator
1.15.0 and the chart's default values."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
import yaml

from facts import flink
from facts.workload_identity import FEDERATED_TOKEN_FILE, USE_LABEL
from offline.chartcheck import crd_problems
from offline.reference import reference_file
from planning import streaming

CRD = "schemas/flink-operator-1.15.0/flinkdeployments.flink.apache.org-v1.yml"
VALUES = "reference/helm-values/flink-kubernetes-operator-1.15.0.yaml"


def _crd() -> dict[str, Any]:
    (document,) = [d for d in yaml.safe_load_all(reference_file(CRD).read_text()) if d]
    return document


def _spec_schema() -> dict[str, Any]:
    crd = _crd()
    (version,) = [v for v in crd["spec"]["versions"] if v["served"]]
    assert f"{crd['spec']['group']}/{version['name']}" == flink.API_VERSION
    return version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]


def test_the_pinned_operator_knows_the_pinned_flink_and_its_upgrade_modes():
    spec = _spec_schema()
    versions = spec["flinkVersion"]["enum"]
    assert tuple(versions) == flink.OPERATOR_FLINK_VERSIONS
    assert versions[-1] == flink.FLINK_CRD_VERSION, "the newest Flink this operator knows"
    assert "v" + "_".join(flink.FLINK_VERSION.split(".")[:2]) == flink.FLINK_CRD_VERSION
    assert tuple(sorted(spec["job"]["properties"]["upgradeMode"]["enum"])) == flink.UPGRADE_MODES


def test_a_pyflink_deployment_in_application_mode_is_valid_against_the_pinned_crd():
    """The shape every streaming job takes: the PyFlink driver jar of 2.2, the Python driver,
    `-py` first; flinkConfiguration with the current option names."""
    manifest = {
        "apiVersion": flink.API_VERSION,
        "kind": "FlinkDeployment",
        "metadata": {"name": "probe", "namespace": "streaming"},
        "spec": {
            "image": "crailabdev.azurecr.io/platform/flink:2.2.0",
            "flinkVersion": flink.FLINK_CRD_VERSION,
            "mode": "native",
            "serviceAccount": "probe",
            "flinkConfiguration": {"execution.checkpointing.interval": "60 s", "state.backend.type": "rocksdb"},
            "jobManager": {"replicas": 1, "resource": {"cpu": 1, "memory": "2048m"}},
            "taskManager": {"resource": {"cpu": 2, "memory": "8192m"}},
            "job": {
                "jarURI": flink.PYFLINK_JAR,
                "entryClass": flink.PYTHON_DRIVER,
                "args": ["-py", "/opt/flink/usrlib/job.py"],
                "parallelism": 2,
                "upgradeMode": "savepoint",
            },
        },
    }
    assert crd_problems(manifest, [reference_file(CRD)]) == []
    manifest["spec"]["flinkVersion"] = "v2_3"
    assert any("flinkVersion" in problem for problem in crd_problems(manifest, [reference_file(CRD)]))


def test_no_option_the_platform_writes_is_a_deprecated_alias_or_an_operator_owned_key():
    names = set(flink.FLINK_OPTIONS)
    aliases = {alias for option in flink.FLINK_OPTIONS.values() for alias in option.deprecated_keys}
    assert not names & aliases
    assert not names & set(flink.OPERATOR_OWNED_KEYS)
    assert flink.deprecated_key("state.checkpoints.dir") == "execution.checkpointing.dir"
    assert flink.deprecated_key("execution.checkpointing.dir") is None


def test_the_charts_defaults_name_the_operator_image_and_watch_every_namespace():
    """What the release must override: the image tag (`latest` in the chart) and the watched
    namespaces (all of them by default)."""
    values = yaml.safe_load(reference_file(VALUES).read_text())
    assert values["image"]["repository"] == flink.OPERATOR_IMAGE
    assert values["image"]["tag"] == "latest"
    assert values["watchNamespaces"] == []
    assert values["webhook"]["create"] is True


def _job(**changes: Any) -> streaming.FlinkJob:
    job = streaming.FlinkJob(
        name="clickstream",
        namespace="streaming",
        service_account="clickstream",
        image="crailabprod.azurecr.io/streaming/clickstream:1.4.0",
        python_file="clickstream.py",
        parallelism=8,
        job_manager=streaming.Resources(1, 2048),
        task_manager=streaming.Resources(4, 16384),
        task_slots=4,
        upgrade_mode="savepoint",
        checkpoint_interval_seconds=60,
        retained_checkpoints=3,
        high_availability=True,
        storage=streaming.CheckpointStorage("stailabprodflink", "clickstream"),
        client_id="00000000-0000-4000-8000-000000000001",
        tenant_id="00000000-0000-4000-8000-000000000002",
        args=("--window", "5m"),
        node_selector={"platform.ai/pool": "stream"},
        tolerations=({"key": "platform.ai/streaming", "operator": "Exists", "effect": "NoSchedule"},),
        savepoint_interval="6 h",
        kafka_properties_config_map="clickstream-kafka",
        kafka_ca_config_map="kafka-cluster-ca",
    )
    return dataclasses.replace(job, **changes)


def test_a_jobs_flinkdeployment_is_valid_and_admitted_by_the_operators_rules():
    manifest = streaming.flink_deployment(_job())
    assert crd_problems(manifest, [reference_file(CRD)]) == []
    assert streaming.job_problems(manifest) == []
    job = manifest["spec"]["job"]
    assert (job["jarURI"], job["entryClass"]) == (flink.PYFLINK_JAR, flink.PYTHON_DRIVER)
    assert job["args"] == ["-py", "/opt/flink/usrlib/clickstream.py", "--window", "5m"]
    assert manifest["spec"]["jobManager"]["replicas"] == 2  # a standby, with Kubernetes HA
    plain = streaming.flink_deployment(
        _job(high_availability=False, upgrade_mode="last-state", savepoint_interval=None)
    )
    assert crd_problems(plain, [reference_file(CRD)]) == [] and streaming.job_problems(plain) == []
    assert plain["spec"]["jobManager"]["replicas"] == 1
    assert "high-availability.type" not in plain["spec"]["flinkConfiguration"]


def test_state_goes_to_the_private_account_through_workload_identity_with_no_key():
    manifest = streaming.flink_deployment(_job())
    config = manifest["spec"]["flinkConfiguration"]
    prefix = "abfss://clickstream@stailabprodflink.dfs.core.windows.net/"
    for key in ("execution.checkpointing.dir", "execution.checkpointing.savepoint-dir", "high-availability.storageDir"):
        assert config[key].startswith(prefix), key
    assert config["state.backend.type"] == "rocksdb" and config["execution.checkpointing.incremental"] == "true"
    assert config["flink.hadoop.fs.azure.account.oauth.provider.type"] == flink.ABFS_WORKLOAD_IDENTITY_PROVIDER
    assert config["flink.hadoop.fs.azure.account.oauth2.client.id"] == "00000000-0000-4000-8000-000000000001"
    assert config["flink.hadoop.fs.azure.account.oauth2.token.file"] == FEDERATED_TOKEN_FILE
    assert "abfss" in config["fs.allowed-fallback-filesystems"].split(";")
    text = json.dumps(manifest).lower()
    for secret in ("account.key", "sharedaccesssignature", "accountkey=", "sas", "connectionstring"):
        assert secret not in text, secret
    # JobManagers and TaskManagers share the pod template: the webhook's label, the streaming
    # pool, the Kafka client properties and the brokers' CA.
    template = manifest["spec"]["podTemplate"]
    assert "podTemplate" not in manifest["spec"]["taskManager"]
    assert template["metadata"]["labels"] == {USE_LABEL: "true"}
    assert template["spec"]["nodeSelector"] == {"platform.ai/pool": "stream"}
    mounts = {m["name"]: m["mountPath"] for m in template["spec"]["containers"][0]["volumeMounts"]}
    assert mounts == {
        "rocksdb": streaming.ROCKSDB_LOCAL_DIR,
        "kafka": streaming.KAFKA_PROPERTIES_DIR,
        "kafka-ca": streaming.KAFKA_CA_DIR,
    }
    assert config["state.backend.rocksdb.localdir"] == streaming.ROCKSDB_LOCAL_DIR


def test_every_option_written_is_a_current_flink_option():
    config = streaming.flink_deployment(_job())["spec"]["flinkConfiguration"]
    for key in config:
        hadoop = key.removeprefix(flink.FLINK_HADOOP_PREFIX)
        assert key in flink.FLINK_OPTIONS or (key != hadoop and hadoop in flink.ABFS_KEYS), key
        assert flink.deprecated_key(key) is None, key


@pytest.mark.parametrize(
    "change, reason",
    [
        (
            lambda c: c.update({"state.checkpoints.dir": "abfss://x@y.dfs.core.windows.net/z"}),
            "deprecated name of execution.checkpointing.dir",
        ),
        (lambda c: c.update({"kubernetes.cluster-id": "x"}), "set by the operator"),
        (
            lambda c: c.pop("execution.checkpointing.savepoint-dir"),
            "savepoints need execution.checkpointing.savepoint-dir",
        ),
        (lambda c: c.pop("high-availability.type"), "more than one JobManager needs high-availability.type"),
        (lambda c: c.update({"fs.azure.account.key.x.dfs.core.windows.net": "secret"}), "not a Flink 2.2 option"),
    ],
)
def test_what_the_operator_would_refuse_is_named_before_anything_is_applied(change, reason):
    manifest = streaming.flink_deployment(_job())
    change(manifest["spec"]["flinkConfiguration"])
    assert any(reason in problem for problem in streaming.job_problems(manifest)), streaming.job_problems(manifest)
