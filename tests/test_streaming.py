"""Stream processing (issue 20), first step: the Flink and operator facts the capability is built
on (facts/flink.py) agree with the pinned upstream files: the FlinkDeployment CRD of operator
1.15.0 and the chart's default values."""

from __future__ import annotations

from typing import Any

import yaml

from facts import flink
from offline.chartcheck import crd_problems
from offline.reference import reference_file

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
    assert flink.FLINK_CRD_VERSION in versions
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
