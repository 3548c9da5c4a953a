"""Stream processing (issue 20): the Flink and operator facts (facts/flink.py) against the pinned
CRD and chart values; each stack's FlinkDeployments, operator, checkpoint storage, grants and
pool as planned; the golden job through every layer; config errors naming their keys."""

from __future__ import annotations

import ast
import copy
import dataclasses
import json
import re
from typing import Any

import pytest
import yaml

from components.streaming import CHART_OPERATOR_CONFIG
from contracts import streaming as streaming_contract
from contracts.cluster import ClusterView
from facts import flink
from facts.workload_identity import FEDERATED_TOKEN_FILE, USE_LABEL
from offline.chartcheck import crd_problems
from offline.reference import reference_file
from planning import streaming
from planning.charts import FLINK_OPERATOR, chart_reference
from planning.images import mirrored
from planning.naming import Naming
from tests.conftest import ROOT, STACKS, stack_values
from tests.test_config_errors import expect_problem, set_in
from tests.test_identity import ASSIGNMENT, role_of
from validation.loader import parse_platform_config

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


# --- The platform's streaming, as each stack plans it -------------------------------------------


FLINK_DEPLOYMENT = "kubernetes:flink.apache.org/v1beta1:FlinkDeployment"
RELEASE = "kubernetes:helm.sh/v3:Release"
STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
LIFECYCLE = "azure-native:storage:ManagementPolicy"
POOL = "azure-native:containerservice:AgentPool"


def _config(stack: str):
    return parse_platform_config(stack_values(stack), stack=stack)


def _views(plans, stack: str) -> list[ClusterView]:
    config = _config(stack)
    return [ClusterView(plans[stack], key, stack_values(stack)) for key in config.streaming_clusters()]


def _cluster(resource) -> str:
    return resource.provider.split("::")[-2].removeprefix("aks-").removesuffix("-k8s")


@pytest.mark.parametrize("stack", STACKS)
def test_every_flinkdeployment_is_valid_against_the_pinned_crd_and_the_operators_rules(plans, stack):
    config = _config(stack)
    deployments = plans[stack].of_type(FLINK_DEPLOYMENT)
    expected = {(job, c) for job in config.streaming.jobs for c in config.job_clusters(job)}
    assert {(d.inputs["metadata"]["name"], _cluster(d)) for d in deployments} == expected
    for resource in deployments:
        manifest = {k: resource.inputs[k] for k in ("apiVersion", "kind", "metadata", "spec")}
        assert crd_problems(manifest, [reference_file(CRD)]) == [], resource.name
        assert streaming.job_problems(manifest) == [], resource.name
        spec = manifest["spec"]
        login_server = Naming(config.prefix, config.environment).registry_login_server()
        assert spec["image"] == f"{login_server}/{config.streaming.jobs[manifest['metadata']['name']].image}"
        high_availability = spec["flinkConfiguration"].get("high-availability.type") == "kubernetes"
        assert high_availability == config.streaming.high_availability == (spec["jobManager"]["replicas"] == 2)


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_staging_and_prod_run_kubernetes_ha_and_dev_may_not(plans, stack):
    for resource in plans[stack].of_type(FLINK_DEPLOYMENT):
        assert resource.inputs["spec"]["flinkConfiguration"]["high-availability.type"] == "kubernetes"
    assert not _config("dev").streaming.high_availability


@pytest.mark.parametrize("stack", STACKS)
def test_the_operator_is_pinned_mirrored_scoped_and_highly_available(plans, stack):
    config = _config(stack)
    releases = [r for r in plans[stack].of_type(RELEASE) if r.inputs["name"] == "flink-kubernetes-operator"]
    assert {_cluster(r) for r in releases} == set(config.streaming_clusters())
    login_server = Naming(config.prefix, config.environment).registry_login_server()
    for release in releases:
        values = release.inputs["values"]
        assert release.inputs["version"] == flink.OPERATOR_VERSION
        # Apache's archive is where the mirror fetches it; the release reads the registry.
        assert FLINK_OPERATOR.upstream == flink.OPERATOR_CHART_REPOSITORY
        assert release.inputs["chart"] == chart_reference(FLINK_OPERATOR, login_server)
        assert values["image"] == {
            "repository": mirrored(flink.OPERATOR_IMAGE, login_server),
            "tag": flink.OPERATOR_IMAGE_TAG,
        }
        assert values["watchNamespaces"] == sorted(streaming.streaming_namespaces(config))
        assert values["webhook"] == {"create": False}
        assert values["operatorPod"]["priorityClassName"] == "platform-critical"
        assert {"key": "CriticalAddonsOnly", "operator": "Exists"} in values["operatorPod"]["tolerations"]
        assert values["replicas"] == config.streaming.operator.replicas == 2
        # The file the operator mounts while the chart's values name it (they do by default).
        operator_config = values["defaultConfiguration"]["flink-conf.yaml"]
        assert "config.yaml" not in values["defaultConfiguration"]
        assert "kubernetes.operator.leader-election.enabled: true" in operator_config
        assert operator_config.startswith(CHART_OPERATOR_CONFIG)
    budgets = [
        r for r in plans[stack].of_type("kubernetes:policy/v1:PodDisruptionBudget") if r.name.startswith("streaming-")
    ]
    assert len(budgets) == len(releases) and all(b.inputs["spec"]["minAvailable"] == 1 for b in budgets)


@pytest.mark.parametrize("stack", STACKS)
def test_checkpoints_live_on_a_private_keyless_data_lake_with_a_savepoint_lifecycle(plans, stack):
    config = _config(stack)
    plan = plans[stack]
    (account,) = [a for a in plan.of_type(STORAGE_ACCOUNT) if a.name == "storage-flink"]
    inputs = account.inputs
    assert inputs["isHnsEnabled"] is True and inputs["allowSharedKeyAccess"] is False
    assert inputs["publicNetworkAccess"] == "Disabled" and inputs["sku"]["name"] == config.streaming.checkpoints.sku
    endpoints = {
        r.inputs["privateLinkServiceConnections"][0]["groupIds"][0]
        for r in plan.of_type("azure-native:network:PrivateEndpoint")
        if r.name.startswith("storage-flink-")
    }
    assert endpoints == {"blob", "dfs"}
    (service,) = [
        r for r in plan.of_type("azure-native:storage:BlobServiceProperties") if r.name.startswith("storage-flink")
    ]
    assert service.inputs["deleteRetentionPolicy"]["enabled"] is True
    (lifecycle,) = [r for r in plan.of_type(LIFECYCLE) if r.name.startswith("storage-flink")]
    rules = lifecycle.inputs["policy"]["rules"]
    # Savepoints only: incremental checkpoints share files of any age, which Flink deletes itself.
    assert [r["definition"]["filters"]["prefixMatch"] for r in rules] == [
        [f"{job}/savepoints/"] for job in config.streaming.jobs
    ]
    days = {r["definition"]["actions"]["baseBlob"]["delete"]["daysAfterModificationGreaterThan"] for r in rules}
    assert days == {config.streaming.checkpoints.savepoint_retention_days}
    locks = [
        r
        for r in plan.of_type("azure-native:authorization:ManagementLockByScope")
        if r.name.startswith("storage-flink")
    ]
    assert bool(locks) == config.lock_stateful_resources
    assert account.options.protect == config.protect


@pytest.mark.parametrize("stack", STACKS)
def test_each_job_writes_only_its_own_container_and_nobody_else_touches_it(plans, stack):
    config = _config(stack)
    account = next(a for a in plans[stack].of_type(STORAGE_ACCOUNT) if a.name == "storage-flink").inputs["accountName"]
    on_account = [a for a in plans[stack].of_type(ASSIGNMENT) if f"/storageAccounts/{account}" in a.inputs["scope"]]
    assert sorted((a.name, role_of(a), a.inputs["scope"].rsplit("/", 1)[-1]) for a in on_account) == sorted(
        (f"workloads-{job}-storage-flink-{job}-storage-blob-data-contributor", "Storage Blob Data Contributor", job)
        for job in config.streaming.jobs
    )


@pytest.mark.parametrize("stack", STACKS)
def test_the_flink_pool_is_dedicated_with_rocksdb_on_the_local_disk(plans, stack):
    config = _config(stack)
    pools = [p for p in plans[stack].of_type(POOL) if p.inputs["agentPoolName"] == streaming.STREAMING_POOL]
    assert len(pools) == len(config.streaming_clusters())
    for pool in pools:
        assert pool.inputs["vmSize"] == config.streaming.pool.vm_size
        assert pool.inputs["osDiskType"] == "Ephemeral"
        assert pool.inputs["nodeTaints"] == [streaming.STREAMING_POOL_TAINT]
        assert pool.inputs["nodeLabels"] == {streaming.STREAMING_POOL_LABEL: "true"}


# --- The golden job: admitted, scheduled, bounded, reaching what it needs, signed in ------------


@pytest.mark.parametrize("stack", STACKS)
def test_the_golden_job_passes_every_layer_on_every_streaming_cluster(plans, stack):
    views = _views(plans, stack)
    assert views
    for view in views:
        result = streaming_contract.evaluate(view, "inference-stats")
        assert result == {layer: [] for layer in streaming_contract.LAYERS}, (stack, view.key, result)


def _broken(plans, monkeypatch, stack: str, change) -> dict[str, list[str]]:
    """The golden job's verdicts with its FlinkDeployment changed as `change` says."""
    original = streaming_contract.deployment

    def patched(view, job):
        found = copy.deepcopy(original(view, job))
        change(found)
        return found

    monkeypatch.setattr(streaming_contract, "deployment", patched)
    return streaming_contract.evaluate(_views(plans, stack)[0], "inference-stats")


@pytest.mark.parametrize(
    "change, layer, words",
    [
        (
            lambda d: d["spec"]["podTemplate"]["spec"]["securityContext"].pop("runAsNonRoot"),
            "admission",
            "runAsNonRoot",
        ),
        (lambda d: d["spec"]["podTemplate"]["spec"].pop("tolerations"), "scheduling", ""),
        (lambda d: d["spec"]["job"].update(parallelism=64), "queueing", "quota"),
        (lambda d: d["spec"].update(serviceAccount="default"), "identity", "default"),
        (lambda d: d["spec"]["podTemplate"]["metadata"]["labels"].clear(), "identity", "not labelled"),
    ],
    ids=["root", "no toleration", "beyond the quota", "another service account", "no webhook label"],
)
def test_a_broken_job_is_refused_by_the_layer_it_breaks(plans, monkeypatch, change, layer, words):
    result = _broken(plans, monkeypatch, "prod", change)
    assert result[layer] and any(words in reason for reason in result[layer]), result
    assert all(not reasons for other, reasons in result.items() if other not in (layer, "reach")), result


def test_the_golden_jobs_files_are_what_the_stacks_and_the_platform_expect():
    source = (ROOT / "examples" / "streaming" / "inference_stats.py").read_text()
    tree = ast.parse(source)
    constants = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert streaming.KAFKA_PROPERTIES_ENV in constants
    for stack in STACKS:
        job = _config(stack).streaming.jobs["inference-stats"]
        assert job.python_file == "inference_stats.py" and set(job.topics) == {"inference-logs", "inference-stats"}
        assert job.flink_version == f"{flink.FLINK_VERSION.rsplit('.', 1)[0]}"
    dockerfile = (ROOT / "examples" / "streaming" / "Dockerfile").read_text()
    assert f"{streaming.USER_LIB}/inference_stats.py" in dockerfile
    assert f"/platform/flink:{flink.FLINK_VERSION}" in dockerfile


def test_the_base_image_pins_every_version_and_enables_no_azure_plugin():
    dockerfile = (ROOT / "images" / "flink" / "Dockerfile").read_text()
    assert f"ARG FLINK_VERSION={flink.FLINK_VERSION}" in dockerfile
    assert f"ARG HADOOP_VERSION={flink.ABFS_MIN_HADOOP}" in dockerfile
    assert "java17" in dockerfile and "apache-flink==${FLINK_VERSION}" in dockerfile
    # Either would make Flink mount a Hadoop ConfigMap into TaskManagers that nobody creates.
    assert not re.search(r"^\s*(ENV\s+)?HADOOP_(HOME|CONF_DIR)=", dockerfile, re.M)
    classpath = re.search(r"HADOOP_CLASSPATH=(\S+)", dockerfile)
    assert classpath and "tools/lib" not in classpath[1] and "etc/hadoop" not in classpath[1]
    # PEP 668: no pip into the system Python.
    assert "pip3 install" not in dockerfile and "python3 -m venv" in dockerfile
    # Flink's own azure plugin (Hadoop 3.3.4) would serve abfss:// instead of Hadoop 3.4.1's ABFS.
    assert "flink-azure-fs-hadoop" not in dockerfile.replace("No flink-azure-fs-hadoop plugin", "")
    froms = re.findall(r"^FROM (\S+)", dockerfile, re.M)
    assert froms and all(":" in image for image in froms) and not any(i.endswith(":latest") for i in froms)
    pom = (ROOT / "images" / "flink" / "pom.xml").read_text()
    versions = dict(re.findall(r"<artifactId>([^<]+)</artifactId>\s*<version>([^<]+)</version>", pom))
    assert versions["kafka-oauth-client"] == "0.18.0" and versions["kafka-clients"] == "4.2.0"
    assert versions["flink-connector-kafka"].startswith("5.0.0-")


# --- Config errors name the key -----------------------------------------------------------------

JOB = "streaming.jobs.inference-stats"


@pytest.mark.parametrize(
    "stack, change, key, words",
    [
        (
            "prod",
            set_in(f"{JOB}.topics", {"inference-logz": "read"}),
            f"platform:{JOB}.topics.inference-logz",
            "not a topic",
        ),
        ("prod", set_in(f"{JOB}.clusters", ["eus2", "west"]), f"platform:{JOB}.clusters", "no streaming pool"),
        (
            "prod",
            set_in("streaming.highAvailability", False),
            "platform:streaming.highAvailability",
            "required in staging and prod",
        ),
        ("prod", set_in(f"{JOB}.parallelism", 400), f"platform:{JOB}.parallelism", "maxCount is 20"),
        ("prod", set_in(f"{JOB}.flinkVersion", "2.3"), f"platform:{JOB}.flinkVersion", "pinned operator 1.15.0"),
        ("prod", set_in(f"{JOB}.flinkVersion", "1.20"), f"platform:{JOB}.flinkVersion", "base image"),
        ("prod", set_in(f"{JOB}.image", "streaming/inference-stats:latest"), f"platform:{JOB}.image", "latest"),
        ("prod", set_in(f"{JOB}.namespace", "inference"), f"platform:{JOB}.namespace", "streamingNamespaces"),
        (
            "prod",
            set_in("streaming.pool.vmSize", "Standard_D16ds_v5"),
            "platform:streaming.pool.vmSize",
            "memory-optimized",
        ),
        ("prod", set_in(f"{JOB}.savepointRetentionDays", 60), f"platform:{JOB}.savepointRetentionDays", "longer"),
        (
            "prod",
            set_in("workloads.inference-stats", {"team": "inference", "namespace": "inference", "serviceAccount": "x"}),
            f"platform:{JOB}",
            "also a workload",
        ),
        (
            "prod",
            set_in("teams.research.streamingNamespaces", ["research"]),
            "platform:teams.research.streamingNamespaces",
            "training or high-risk",
        ),
        (
            "prod",
            set_in(f"{JOB}.taskManager", {"cpu": 16, "memoryMiB": 8192}),
            f"platform:{JOB}",
            "does not fit a node",
        ),
    ],
    ids=[
        "unknown topic",
        "a cluster without the streaming pool",
        "HA off in prod",
        "parallelism beyond the pool",
        "a Flink the operator does not know",
        "a Flink the base image is not",
        "latest",
        "not a streaming namespace",
        "not memory-optimized",
        "savepoints kept longer than storage",
        "a job named like a workload",
        "a training namespace for streaming",
        "a TaskManager larger than a node",
    ],
)
def test_bad_streaming_config_names_the_key_and_registers_nothing(stack, change, key, words):
    expect_problem(stack, change, key, words)


def test_a_job_on_a_cluster_without_kafka_is_named_as_the_job():
    """The derived Kafka client's problem (Strimzi runs on eus2 only) names the job's key."""

    def change(values):
        values["platform:kafka"]["strimzi"]["clusters"] = ["eus2"]
        values["platform:kafka"]["strimzi"]["mirrorMaker"]["enabled"] = False
        for workload in values["platform:workloads"].values():
            workload["clusters"] = ["eus2"]

    expect_problem("prod", change, f"platform:{JOB}", "host no Kafka")


def test_the_checkpoint_account_key_is_reserved():
    expect_problem(
        "prod",
        set_in("storage.accounts.flink", {"containers": ["x1y"]}),
        "platform:storage.accounts.flink",
        "checkpoint account",
    )


def test_the_operator_config_the_platform_writes_keeps_the_charts_own_lines():
    defaults = yaml.safe_load(reference_file(VALUES).read_text())["defaultConfiguration"]
    chart = [line for line in defaults["flink-conf.yaml"].splitlines() if line and not line.startswith("#")]
    assert CHART_OPERATOR_CONFIG.splitlines() == chart
    # The deployment mounts `config.yaml` only when the values have no `flink-conf.yaml` key;
    # the defaults have it, so the platform writes there.
    assert "flink-conf.yaml" in defaults and "config.yaml" not in defaults


def test_savepoints_are_disposed_of_with_their_history_and_the_history_spans_the_retention():
    job = stack_values("prod")["platform:streaming"]["jobs"]["inference-stats"]
    config = _config("prod")
    spec = streaming.job_spec(
        config, "inference-stats", login_server="cr.example", account_name="st", client_id="c", tenant_id="t"
    )
    options = streaming.flink_configuration(spec)
    assert options["kubernetes.operator.savepoint.dispose-on-delete"] == "true"
    assert options["kubernetes.operator.savepoint.history.max.age"] == f"{job['savepointRetentionDays']} d"
    # Every 6 h for 7 days: 28 savepoints, and one more.
    assert options["kubernetes.operator.savepoint.history.max.count"] == "29"
    assert streaming.flink_duration_seconds("6 h") == 21600 and streaming.flink_duration_seconds("30 min") == 1800


def test_every_run_holds_the_jobs_flinkdeployment_to_the_operators_rules(monkeypatch):
    """The config checks build each job's FlinkDeployment and apply job_problems: a deprecated
    option (or one the operator refuses) slipping into the builder stops the run, naming the job."""
    from stackconfig.model import PlatformConfig
    from validation.checks import find_problems

    section = {key.removeprefix("platform:"): value for key, value in stack_values("prod").items()}
    config = PlatformConfig.model_validate(section)
    assert not find_problems(config)
    built = streaming.flink_configuration
    monkeypatch.setattr(
        streaming, "flink_configuration", lambda job: {**built(job), "state.backend.incremental": "true"}
    )
    assert [(p.key, p.reason) for p in find_problems(config)] == [
        (
            "platform:streaming.jobs.inference-stats",
            "its FlinkDeployment: state.backend.incremental is a deprecated name of execution.checkpointing.incremental",
        )
    ]
