"""The policy packs run in their own virtualenv and cannot import the program, so they restate
some of its constants. Each restated constant must still equal the program's (or the SDK's)."""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

import pytest

from components.cluster import SYSTEM_POOL_TAINT
from facts import azure_policy, cosmosdb, entra, flink
from facts.aks_load_balancer import INTERNAL_LB
from facts.azure_roles import role_id
from facts.gpu import DEFAULT_GPU_TAINT, GPU_VM_SIZES, PURPOSE_LABEL
from facts.vm_sizes import VM_SIZES
from planning.gpu import taint_key
from planning.pod_security import NAMESPACE_CLASS_LABEL, TRAINING_CLASS, training_namespace_labels
from planning.streaming import KAFKA_PROPERTIES_LABEL
from stackconfig.model import REQUIRED_TAGS
from tests.support.packs import POLICIES, pack_module

AZURE = ("azure-platform", "azure_guardrails")
DELIVERY = ("delivery", "delivery_guardrails")
KUBERNETES = ("kubernetes-platform", "kubernetes_guardrails")

# (pack, module, constant) -> what the program holds.
RESTATED: list[tuple[tuple[str, str], str, str, Any]] = [
    (AZURE, "aks", "CRITICAL_ADDONS_TAINT", SYSTEM_POOL_TAINT),
    (AZURE, "aks", "GPU_TAINT_KEY", taint_key(DEFAULT_GPU_TAINT)),
    (AZURE, "aks", "DEFAULT_PURPOSE_LABEL", PURPOSE_LABEL),
    (AZURE, "stack", "REQUIRED_TAGS", ["environment", *REQUIRED_TAGS]),
    (AZURE, "identity", "BASELINE_DEFINITIONS", tuple(d.definition_id for d in azure_policy.BASELINE_DEFINITIONS)),
    (
        AZURE,
        "identity",
        "POD_SECURITY_INITIATIVES",
        tuple(azure_policy.initiative_id(name) for name in azure_policy.POD_SECURITY_INITIATIVES),
    ),
    (AZURE, "databases", "COSMOS_DATA_ROLES", (cosmosdb.DATA_ROLES["read"], cosmosdb.DATA_ROLES["readWrite"])),
    (DELIVERY, "entra", "TENANT_WIDE_GRAPH_ROLES", entra.TENANT_WIDE_GRAPH_ROLES),
    (DELIVERY, "entra", "SINGLE_TENANT", entra.SINGLE_TENANT),
    (KUBERNETES, "workloads", "NAMESPACE_CLASS_LABEL", NAMESPACE_CLASS_LABEL),
    (KUBERNETES, "workloads", "TRAINING_CLASS", TRAINING_CLASS),
    (KUBERNETES, "workloads", "INTERNAL_LB", INTERNAL_LB),
    (KUBERNETES, "streaming", "KAFKA_PROPERTIES_LABEL", KAFKA_PROPERTIES_LABEL),
    (KUBERNETES, "streaming", "FLINK_DEPLOYMENT", f"kubernetes:{flink.API_VERSION}:FlinkDeployment"),
]


@pytest.mark.parametrize(("pack", "module", "name", "expected"), RESTATED, ids=[r[2] for r in RESTATED])
def test_a_constant_the_pack_restates_equals_the_programs(pack, module, name, expected):
    value = getattr(pack_module(*pack, module), name)
    assert (sorted(value) if isinstance(value, (list, tuple)) else value) == (
        sorted(expected) if isinstance(expected, (list, tuple)) else expected
    )


def test_the_privileged_roles_the_pack_names_are_azures_built_in_roles():
    """`role-assignments-not-privileged` names roles by GUID; each is that built-in role in
    Microsoft's export (facts/azure_roles.json)."""
    privileged = pack_module(*AZURE, "identity").PRIVILEGED_ROLES
    assert privileged == {role_id(name): name for name in privileged.values()}
    assert set(privileged.values()) >= {"Owner", "Contributor", "User Access Administrator"}


def test_the_training_class_namespaces_enforce_privileged_as_the_pack_expects():
    module = pack_module(*KUBERNETES, "workloads")
    assert training_namespace_labels()[module.PSS_ENFORCE] == "privileged"


def test_the_packs_gpu_size_pattern_matches_exactly_the_gpu_catalogue():
    pattern = pack_module(*AZURE, "aks").GPU_VM_SIZE
    assert {size for size in VM_SIZES if pattern.match(size)} == set(GPU_VM_SIZES)


TOKEN = re.compile(r'"((?:azure-native|kubernetes):[A-Za-z0-9./-]+:[A-Za-z0-9]+)"')


@functools.cache
def _serving_tokens() -> frozenset[str]:
    """The types of the serving objects the program makes for prod (planning/serving.py)."""
    from planning import serving
    from tests.conftest import stack_values
    from validation.loader import parse_platform_config

    config = parse_platform_config(stack_values("prod"))
    assert config.serving is not None
    key = config.serving.clusters[0]
    manifests = serving.gateway_manifests(config, key, "client", "tenant", "registry") + serving.api_manifests(
        config, key
    )
    return frozenset(f"kubernetes:{m['apiVersion']}:{m['kind']}" for m in manifests)


def _sdk_has(token: str) -> bool:
    provider, module, name = token.split(":")
    if provider == "azure-native":
        package = f"pulumi_azure_native.{module}"
    elif module == "helm.sh/v3":
        package = "pulumi_kubernetes.helm.v3"
    elif module == "helm.sh/v4":
        package = "pulumi_kubernetes.helm.v4"
    else:
        group, _, version = module.rpartition("/")
        if "." in group and not group.endswith(".k8s.io"):
            # A custom resource (Strimzi, Cilium, Kueue, Flink): the CRD tests check those kinds
            # against the upstream schemas; here only that the pack spells a CRD the tests load.
            if group in ("networking.istio.io", "security.istio.io", "secrets-store.csi.x-k8s.io"):
                # Istio's and the CSI driver's CRDs are not pinned: the kinds the program emits.
                return token in _serving_tokens()
            return group in ("kafka.strimzi.io", "cilium.io", "kueue.x-k8s.io", "flink.apache.org")
        package = f"pulumi_kubernetes.{group.split('.')[0]}.{version}"
    try:
        return hasattr(importlib.import_module(package), name)
    except ModuleNotFoundError:
        return False


def test_every_resource_type_a_pack_names_is_one_the_sdk_defines():
    tokens = {token for source in POLICIES.glob("*/*_guardrails/*.py") for token in TOKEN.findall(source.read_text())}
    assert len(tokens) > 20
    assert [token for token in sorted(tokens) if not _sdk_has(token)] == []
