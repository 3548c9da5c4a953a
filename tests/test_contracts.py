"""The platform admits and serves the work it exists for: the golden workloads (examples/), on
every stack where they apply, through all five contract layers (contracts/), and their
negative twins refused by the layer each targets. Also the tables the layers stand on: Pod
Security's controls (against the training namespaces' CEL), Azure Policy's baseline
definitions (against Azure's files) and real host names against both FQDN engines."""

from __future__ import annotations

import copy
import functools
import json
from typing import Any

import pytest
import yaml

from contracts import pod_security as pss_evaluator
from contracts.cluster import NAMESPACE, ClusterView, cluster_of, selector_matches
from contracts.golden import BY_NAME, GOLDEN, HUGGING_FACE_HOSTS, LAYERS, evaluate, rendered
from contracts.reach import cilium_matches, firewall_matches
from facts import azure_policy
from facts import pod_security as pss
from offline.reference import shared_dir
from planning.admission import pod_security_rules
from planning.network_policy import fqdn_selectors
from planning.pod_security import TRAINING_EXTRA_CAPABILITIES
from tests.conftest import ALL_STACKS, ROOT
from tests.conftest import stack_values as config_of

# Which stacks each golden workload serves (prod-scale, the training fleet, runs the trainer only).
APPLIES = {
    "training-infiniband": {"staging", "prod", "prod-scale"},
    "inference": {"staging", "prod"},
    "batch-spot": {"dev"},
    "kafka-producer": {"dev", "staging", "prod", "prod-scale"},
    "kafka-consumer": {"dev", "staging", "prod"},
    "weights-loader": {"dev", "staging", "prod"},
    "sandboxed-eval": {"staging", "prod"},
    "model-download": {"dev", "staging", "prod"},
    "cosmos-client": {"dev", "staging", "prod", "prod-scale"},
    "postgresql-client": {"staging", "prod", "prod-scale"},
}


def views(plans, stack: str) -> list[ClusterView]:
    config = config_of(stack)
    return [ClusterView(plans[stack], key, config) for key in config["platform:clusters"]]


def applicable(plans, stack: str, name: str, **overrides):
    """(view, rendered workload) for every cluster of the stack where the workload applies."""
    return [
        (view, item)
        for view in views(plans, stack)
        if (item := rendered(BY_NAME[name], plans[stack].outputs, view.key, **overrides)) is not None
    ]


def report(result: dict[str, list[str]]) -> str:
    return "; ".join(f"{layer} refused: {' | '.join(reasons)}" for layer, reasons in result.items() if reasons)


# -- the golden workloads pass every layer ----------------------------------------------------------


def test_every_golden_workload_has_its_file_and_applies_where_expected(plans):
    assert {g.name for g in GOLDEN} == set(APPLIES) == {p.stem for p in (ROOT / "examples").glob("*.yaml")}
    for stack in ALL_STACKS:
        serving = {g.name for g in GOLDEN if applicable(plans, stack, g.name)}
        assert serving == {name for name, stacks in APPLIES.items() if stack in stacks}, stack


@pytest.mark.parametrize("stack", ALL_STACKS)
@pytest.mark.parametrize("name", sorted(APPLIES))
def test_golden_workload_passes_admission_scheduling_queueing_reach_and_identity(plans, stack, name):
    if stack not in APPLIES[name]:
        assert not applicable(plans, stack, name)
        return
    results = {view.key: evaluate(view, item) for view, item in applicable(plans, stack, name)}
    assert results
    failures = {cluster: report(result) for cluster, result in results.items() if any(result.values())}
    assert not failures, f"{name} on {stack}: " + "; ".join(f"cluster {c}: {r}" for c, r in failures.items())


def test_prod_admits_an_8_gpu_infiniband_gang_in_research_with_ipc_lock(plans):
    """The headline: the job the platform exists for, as prod's first cluster sees it."""
    view, item = applicable(plans, "prod", "training-infiniband")[0]
    container = item.pod["spec"]["containers"][0]
    assert item.namespace == "research"
    assert container["securityContext"]["capabilities"]["add"] == ["IPC_LOCK"]
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "8"
    assert container["resources"]["requests"]["rdma/shared_ib"] == "1"
    assert item.workload["spec"]["parallelism"] == 2
    assert evaluate(view, item) == {layer: [] for layer in LAYERS}
    # Sixteen nodes (128 GPUs) still fit research's quota on the pool, as one workload.
    view, big = applicable(plans, "prod", "training-infiniband", NODES="16")[0]
    assert evaluate(view, big)["queueing"] == []


def test_the_fleet_admits_a_4096_gpu_gang_on_one_pool_and_refuses_one_beyond_the_teams_quota(plans):
    """prod-scale: 512 ND H100 nodes as one Kueue workload within research's 6,000 GPUs on h100a."""
    for view, item in applicable(plans, "prod-scale", "training-infiniband", NODES="512"):
        assert item.variables["TRAINING_POOL"] == "h100a"
        assert evaluate(view, item) == {layer: [] for layer in LAYERS}
    view, too_big = applicable(plans, "prod-scale", "training-infiniband", NODES="751")[0]
    assert any("nvidia.com/gpu 6008 > 6000" in r for r in evaluate(view, too_big)["queueing"])


# -- negative twins: each refused by the layer it targets -----------------------------------------


def _container(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]["containers"][0]


def _spec(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]


TWINS = [
    # (twin, golden workload, stack, change, the layer that must refuse it, words of the reason)
    (
        "privileged",
        "training-infiniband",
        "prod",
        lambda w: _container(w)["securityContext"].update(privileged=True),
        "admission",
        "Privileged",
    ),
    ("host network", "inference", "prod", lambda w: _spec(w).update(hostNetwork=True), "admission", "hostNetwork"),
    (
        "IPC_LOCK outside a training namespace",
        "inference",
        "prod",
        lambda w: _container(w)["securityContext"].update(capabilities={"add": ["IPC_LOCK"]}),
        "admission",
        "IPC_LOCK",
    ),
    (
        "SYS_ADMIN in a training namespace",
        "training-infiniband",
        "prod",
        lambda w: _container(w)["securityContext"]["capabilities"]["add"].append("SYS_ADMIN"),
        "admission",
        "SYS_ADMIN",
    ),
    (
        "root without IPC_LOCK",
        "training-infiniband",
        "prod",
        lambda w: _container(w)["securityContext"].pop("capabilities"),
        "admission",
        "root",
    ),
    (
        "a host path in a training namespace",
        "training-infiniband",
        "prod",
        lambda w: _spec(w)["volumes"].append({"name": "host", "hostPath": {"path": "/"}}),
        "admission",
        "hostPath",
    ),
    (
        "runc in the sandbox",
        "sandboxed-eval",
        "prod",
        lambda w: _spec(w).pop("runtimeClassName"),
        "admission",
        "sandbox",
    ),
    (
        "no queue",
        "training-infiniband",
        "prod",
        lambda w: w["metadata"]["labels"].clear(),
        "queueing",
        "without a queue",
    ),
    (
        "no queue, refused at admission too",
        "training-infiniband",
        "prod",
        lambda w: w["metadata"]["labels"].clear(),
        "admission",
        "name a queue",
    ),
    (
        "a forged PodSet label on a Deployment's pods",
        "inference",
        "prod",
        lambda w: (
            w["spec"]["template"]["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name"),
            w["spec"]["template"]["metadata"]["labels"].update({"kueue.x-k8s.io/podset": "main"}),
        ),
        "admission",
        "run through Kueue",
    ),
    (
        "an inference pod that skips the queue",
        "inference",
        "prod",
        lambda w: w["spec"]["template"]["metadata"]["labels"].pop("kueue.x-k8s.io/queue-name"),
        "admission",
        "Kueue",
    ),
    (
        "wrong queue",
        "training-infiniband",
        "prod",
        lambda w: w["metadata"]["labels"].update({"kueue.x-k8s.io/queue-name": "cpu"}),
        "queueing",
        "no LocalQueue",
    ),
    (
        "a gang larger than the quota",
        "training-infiniband",
        "prod",
        lambda w: w["spec"].update(parallelism=201, completions=201),
        "queueing",
        "cannot admit",
    ),
    (
        "an unqueued pod sent to a GPU pool",
        "weights-loader",
        "prod",
        lambda w: _spec(w).update(nodeSelector={"platform.ai/gpu-pool": "a100"}),
        "scheduling",
        "lands on",
    ),
    (
        "a Spot toleration on a regular pool",
        "inference",
        "prod",
        lambda w: (
            _spec(w)
            .setdefault("tolerations", [])
            .append({"key": "kubernetes.azure.com/scalesetpriority", "operator": "Exists", "effect": "NoSchedule"})
        ),
        "scheduling",
        "does not carry",
    ),
    (
        "more CPU than a node has",
        "training-infiniband",
        "prod",
        lambda w: _container(w)["resources"]["requests"].update(cpu="200"),
        "scheduling",
        "more than",
    ),
    (
        "two RDMA plugins' worth on an A100",
        "inference",
        "prod",
        lambda w: _container(w)["resources"]["requests"].update({"rdma/shared_ib": "1"}),
        "scheduling",
        "rdma",
    ),
    (
        "the default service account",
        "weights-loader",
        "prod",
        lambda w: _spec(w).update(serviceAccountName="default"),
        "identity",
        "no service account",
    ),
    (
        "no workload identity label",
        "weights-loader",
        "prod",
        lambda w: w["spec"]["template"]["metadata"]["labels"].clear(),
        "identity",
        "not labelled",
    ),
    (
        "another team's workload as the Cosmos DB client",
        "cosmos-client",
        "prod",
        lambda w: (w["metadata"].update(namespace="inference"), _spec(w).update(serviceAccountName="inference")),
        "identity",
        "names client ID",
    ),
    (
        "another team's identity",
        "weights-loader",
        "prod",
        lambda w: (w["metadata"].update(namespace="research"), _spec(w).update(serviceAccountName="trainer")),
        "identity",
        "inference",
    ),
]


@pytest.mark.parametrize(("twin", "name", "stack", "change", "layer", "reason"), TWINS, ids=[t[0] for t in TWINS])
def test_negative_twin_is_refused_by_the_layer_it_targets(plans, twin, name, stack, change, layer, reason):
    view, item = applicable(plans, stack, name)[0]
    result = evaluate(view, item.changed(change))
    assert result[layer], f"{twin}: the {layer} layer admitted it ({name} on {stack})"
    assert any(reason.lower() in r.lower() for r in result[layer]), result[layer]


def test_a_flavor_without_the_gpu_toleration_strands_the_training_job(plans):
    """The GPU toleration comes from Kueue's flavor, not the job: weaken the flavor, the job sits."""

    plan = copy.deepcopy(plans["prod"])
    for flavor in plan.of_type("kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"):
        flavor.inputs["spec"]["tolerations"] = []
    config = config_of("prod")
    view = ClusterView(plan, "eus2", config)
    item = rendered(BY_NAME["training-infiniband"], plan.outputs, "eus2")
    assert any("lands on pools none" in r for r in evaluate(view, item)["scheduling"])


@pytest.mark.parametrize(
    "host", ["github.com", "evil.example.com", "hf.co.evil.example.com", "a.b.c.d.e.hf.co", "registry-1.docker.io"]
)
def test_a_download_from_an_unlisted_host_is_refused_in_the_cluster(plans, host):
    view, item = applicable(plans, "prod", "model-download")[0]
    twin = item.golden.__class__(item.golden.name, item.golden.pool, hosts=(host,))
    result = evaluate(view, type(item)(twin, item.manifests, item.variables))
    assert any("no Cilium FQDN rule" in r for r in result["reach"]), result["reach"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_a_consumer_that_writes_is_refused_by_its_identitys_grants(plans, stack):
    """Event Hubs (dev) holds the inference identity to Data Receiver on the hub; Strimzi (prod)
    to its KafkaUser's read ACLs."""
    import dataclasses

    view, item = applicable(plans, stack, "kafka-consumer")[0]
    writer = dataclasses.replace(item.golden, topic=("checkpoint-events", "write"))
    result = evaluate(view, type(item)(writer, item.manifests, item.variables))
    assert result["identity"] and all("checkpoint-events" in r for r in result["identity"]), result["identity"]


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_the_cosmos_client_run_as_another_teams_workload_is_refused_by_its_identitys_data_roles(plans, stack):
    """The run tracker rendered as inference's workload (team inference): its identity reads
    `lab/models` and holds nothing on research's `lab/runs`, so the identity layer refuses it,
    and the other layers, which it passes, do not stand in for that."""
    import dataclasses

    as_inference = dataclasses.replace(BY_NAME["cosmos-client"], workload="inference")
    view = views(plans, stack)[0]
    item = rendered(as_inference, plans[stack].outputs, view.key)
    assert item is not None and item.namespace == "inference"
    result = evaluate(view, item)
    assert result["identity"] == ["inference's identity holds no Cosmos DB write role on lab/runs"], result
    assert not any(result[layer] for layer in LAYERS if layer != "identity"), result
    # Read access to its own container passes.
    reader = dataclasses.replace(as_inference, cosmos=("lab/models", "read"))
    assert not evaluate(view, rendered(reader, plans[stack].outputs, view.key))["identity"]


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_the_postgresql_client_run_as_another_teams_workload_is_refused_by_its_roles_grants(plans, stack):
    """The experiment log rendered as inference's workload: its role reads `experiments`, so
    writing is refused at the identity layer; reading passes."""
    import dataclasses

    as_inference = dataclasses.replace(BY_NAME["postgresql-client"], workload="inference")
    view = views(plans, stack)[0]
    item = rendered(as_inference, plans[stack].outputs, view.key)
    assert item is not None and item.variables["POSTGRES_USER"] == "inference"
    result = evaluate(view, item)
    assert result["identity"] == ["inference's role holds no write on the tables of experiments/public"], result
    reader = dataclasses.replace(as_inference, postgres=("experiments", "read"))
    assert not evaluate(view, rendered(reader, plans[stack].outputs, view.key))["identity"]


def test_dev_reports_what_staging_and_prod_deny(plans):
    """Dev's platform bindings warn: the same twin is flagged there, but as a warning."""
    view, item = applicable(plans, "dev", "weights-loader")[0]
    result = evaluate(view, item.changed(lambda w: _spec(w).update(hostNetwork=True)))
    assert any("warns" in r for r in result["admission"]) and not any("denies" in r for r in result["admission"])


# -- the Pod Security table, control by control ---------------------------------------------------


def _pod_with(path: str, value) -> dict:
    """A minimal pod with `value` at `path` (first item of each list; a map key's prefix + 'app')."""
    from planning.pss_paths import parse

    pod: dict = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "app", "image": "x"}]}}
    node = pod
    steps = parse(path)
    for i, step in enumerate(steps):
        last = i == len(steps) - 1
        if step.every_item:
            items = node.setdefault(step.name, [])
            if step.name.endswith("ontainers") and not items:
                items.append({"name": "c", "image": "x"})
            if last:
                items[:] = [value]
                return pod
            if not items:
                items.append({"name": "v"} if step.name == "volumes" else {})
            node = items[0]
        elif step.key_prefix is not None:
            node.setdefault(step.name, {})[step.key_prefix + "app"] = value
            return pod
        elif last:
            node[step.name] = value
        else:
            node = node.setdefault(step.name, {})
    return pod


@functools.cache
def _training_programs():
    import celpy

    env = celpy.Environment()
    return [
        env.program(env.compile(rule.expression))
        for rule in pod_security_rules(pss.BASELINE, TRAINING_EXTRA_CAPABILITIES)
    ]


def _training_vap_admits(pod: dict) -> bool:
    import celpy

    activation = {"object": celpy.json_to_cel(pod)}
    return all(program.evaluate(activation) for program in _training_programs())


BASELINE_CASES = [
    (control.name, path, value, allowed)
    for control in pss.controls(pss.BASELINE)
    for path in control.paths
    for value, allowed in [
        *((v, False) for v in control.forbidden),
        *((v, True) for v in control.allowed if v not in (pss.UNDEFINED,) and not str(v).endswith("*")),
    ]
]


@pytest.mark.parametrize(
    ("control", "path", "value", "allowed"), BASELINE_CASES, ids=[f"{c}:{p}={v!r}" for c, p, v, _ in BASELINE_CASES]
)
def test_baseline_control_by_control_in_pod_security_and_the_training_policy(control, path, value, allowed):
    pod = _pod_with(path, value)
    refused = control in pss_evaluator.evaluate(pod, pss.BASELINE)
    assert refused is not allowed, f"Pod Security baseline: {path} = {value!r}"
    # The training namespaces' CEL agrees, except for the one capability it adds.
    extra = control == "Capabilities" and value in TRAINING_EXTRA_CAPABILITIES
    assert _training_vap_admits(pod) is (allowed or extra), f"training policy: {path} = {value!r}"
    # Privileged admits anything.
    assert pss_evaluator.evaluate(pod, "privileged") == {}


RESTRICTED_CASES = [
    (control.name, value, allowed)
    for control in pss.CONTROLS
    if control.level == pss.RESTRICTED
    for value, allowed in [
        *((v, False) for v in control.forbidden),
        *((v, True) for v in control.allowed if v not in (pss.UNDEFINED, pss.NON_ZERO)),
    ]
]


def _restricted_pod(control: str, value: Any) -> dict[str, Any]:
    """A pod that passes restricted but for `value` in the control's container field."""
    security: dict[str, Any] = {
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "seccompProfile": {"type": "RuntimeDefault"},
        "capabilities": {"drop": ["ALL"]},
    }
    pod: dict[str, Any] = {
        "metadata": {"name": "p"},
        "spec": {
            "containers": [{"name": "app", "image": "x", "securityContext": security}],
            "volumes": [{"name": "v", "emptyDir": {}}],
        },
    }
    field = {
        "Privilege Escalation": ("allowPrivilegeEscalation",),
        "Running as Non-root": ("runAsNonRoot",),
        "Running as Non-root user": ("runAsUser",),
        "Seccomp (restricted)": ("seccompProfile", "type"),
        "Capabilities (restricted): drop": ("capabilities", "drop"),
        "Capabilities (restricted): add": ("capabilities", "add"),
        "/proc Mount Type (restricted)": ("procMount",),
    }.get(control, ())
    node: Any
    if control == "Volume Types":
        pod["spec"]["volumes"] = [{"name": "v", value: {}}]
    elif value == pss.UNDEFINED:
        node = security
        for part in field[:-1]:
            node = node[part]
        node.pop(field[-1], None)
    elif control == "Capabilities (restricted): add":
        security["capabilities"]["add"] = [value]
    else:
        node = security
        for part in field[:-1]:
            node = node[part]
        dropping = control == "Capabilities (restricted): drop"
        node[field[-1]] = list(value) if isinstance(value, tuple) else ([value] if dropping else value)
    return pod


@pytest.mark.parametrize(
    ("control", "value", "allowed"), RESTRICTED_CASES, ids=[f"{c}={v!r}" for c, v, _ in RESTRICTED_CASES]
)
def test_restricted_control_by_control(control, value, allowed):
    result = pss_evaluator.evaluate(_restricted_pod(control, value), pss.RESTRICTED)
    assert (control in result) is not allowed, result


def test_restricted_inherits_pod_level_settings_and_user_namespaces_waive_root_checks():
    container = {
        "name": "app",
        "image": "x",
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
    }
    pod = {
        "spec": {
            "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
            "containers": [container],
        }
    }
    assert pss_evaluator.evaluate(pod, pss.RESTRICTED) == {}
    root = {"spec": {**pod["spec"], "securityContext": {"runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}}}}
    assert set(pss_evaluator.evaluate(root, pss.RESTRICTED)) == {"Running as Non-root", "Running as Non-root user"}
    in_user_namespace = {"spec": {**root["spec"], "hostUsers": False}}
    assert pss_evaluator.evaluate(in_user_namespace, pss.RESTRICTED) == {}
    # An unmasked /proc: baseline waives it in a user namespace, restricted does not (1.35).
    unmasked = copy.deepcopy(in_user_namespace)
    unmasked["spec"]["containers"][0]["securityContext"]["procMount"] = "Unmasked"
    assert pss_evaluator.evaluate(unmasked, pss.BASELINE) == {}
    assert set(pss_evaluator.evaluate(unmasked, pss.RESTRICTED)) == {"/proc Mount Type (restricted)"}


def test_the_training_policy_covers_every_baseline_control_and_nothing_restricted():
    rules = pod_security_rules(pss.BASELINE, TRAINING_EXTRA_CAPABILITIES)
    assert [r.message.split("(", 1)[1].split(")", 1)[0] for r in rules] == [c.name for c in pss.controls(pss.BASELINE)]
    assert len(pss.SAFE_SYSCTLS) == 12 and len(pss.BASELINE_CAPABILITIES) == 13


# -- Azure Policy: the facts against Azure's files ------------------------------------------------


def _azure_policy_file(*parts: str) -> dict:
    return json.loads((shared_dir() / "reference" / "azure-policy-k8s" / "/".join(parts)).read_text())


def test_the_baseline_initiatives_definitions_and_values_are_azures():
    initiative = _azure_policy_file("policySetDefinitions", "PSPBaselineStandard.json")
    assert initiative["name"] == azure_policy.POD_SECURITY_INITIATIVES["baseline"]
    members = {d["policyDefinitionReferenceId"]: d for d in initiative["properties"]["policyDefinitions"]}
    assert set(members) == {d.reference_id for d in azure_policy.BASELINE_DEFINITIONS}
    assert members["ContainerCapabilities"]["parameters"]["allowedCapabilities"]["value"] == list(
        azure_policy.BASELINE_ALLOWED_CAPABILITIES
    )
    assert initiative["properties"]["parameters"]["excludedNamespaces"]["defaultValue"] == list(
        azure_policy.AKS_SYSTEM_NAMESPACES
    )
    defaults = {k: v.get("defaultValue") for k, v in initiative["properties"]["parameters"].items()}
    for definition in azure_policy.BASELINE_DEFINITIONS:
        member = members[definition.reference_id]
        assert member["policyDefinitionId"].endswith(definition.guid)
        assert _azure_policy_file("policyDefinitions", definition.file)["name"] == definition.guid
        # Assigned alone exactly as the initiative assigns it: its version, its values.
        assert definition.version == member["definitionVersion"]
        passed = {
            k: v["value"]
            for k, v in member["parameters"].items()
            if k not in ("effect", "excludedNamespaces", "namespaces")
        }
        resolved = {
            k: defaults[v[len("[parameters('") : -len("')]")]]
            if isinstance(v, str) and v.startswith("[parameters(")
            else v
            for k, v in passed.items()
        }
        assert resolved == definition.parameters, definition.reference_id
        # The definition takes `namespaces` and `effect` in every version the initiative pins.
        declared = _azure_policy_file("policyDefinitions", definition.file)["properties"]["parameters"]
        assert {"effect", "namespaces"} <= set(declared)


def test_cilium_wildcards_stay_within_one_label_and_the_firewalls_do_not():
    assert cilium_matches("*.hf.co", "cdn-lfs-us-1.hf.co")
    assert not cilium_matches("*.hf.co", "cas-server.xethub.hf.co")
    assert not cilium_matches("*.hf.co", "hf.co")
    assert firewall_matches("*.hf.co", "us-east1.us.gcp.cdn.hf.co") and not firewall_matches("*.hf.co", "hf.co")
    assert not cilium_matches("*.hf.co", "hf.co.evil.example.com")


# -- the examples as files a team applies ---------------------------------------------------------


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_rendered_golden_manifest_is_valid_for_its_clusters_kubernetes_version(plans, stack):
    from tests.support import k8s_schema

    checked = 0
    for name in APPLIES:
        for view, item in applicable(plans, stack, name):
            version = str(config_of(stack)["platform:clusters"][view.key]["kubernetesVersion"])
            version = version if version.count(".") == 2 else f"{version}.0"
            for manifest in item.manifests:
                k8s_schema.validate(manifest, version, strict=True)
                checked += 1
    assert checked >= 5


def test_the_render_script_fills_a_template_from_the_tenants_stacks_outputs_or_says_why_not(
    unit_plans, tmp_path, capsys
):
    """`pulumi stack output --json -s prod.tenants` is all the script needs."""
    from planning.layers import Unit
    from scripts.workloads import main

    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(unit_plans["prod"].plan(Unit("tenants")).outputs))
    assert (
        main(
            [
                str(ROOT / "examples" / "training-infiniband.yaml"),
                "--outputs",
                str(outputs),
                "--cluster",
                "scus",
                "--set",
                "NODES=16",
            ]
        )
        == 0
    )
    job = next(d for d in yaml.safe_load_all(capsys.readouterr().out) if d["kind"] == "Job")
    assert job["spec"]["parallelism"] == 16
    assert job["spec"]["template"]["spec"]["nodeSelector"]["platform.ai/gpu-pool"] == "h100"
    outputs.write_text(json.dumps(unit_plans["dev"].plan(Unit("tenants")).outputs))
    assert main([str(ROOT / "examples" / "training-infiniband.yaml"), "--outputs", str(outputs)]) == 3
    assert "TRAINING_POOL" in capsys.readouterr().err


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_training_namespaces_leave_the_initiative_for_its_definitions_with_ipc_lock(plans, stack):
    training = [ns for team in config_of(stack)["platform:teams"].values() for ns in team.get("trainingNamespaces", [])]
    assignments = [r.inputs for r in plans[stack].of_type("azure-native:authorization:PolicyAssignment")]
    for assignment in assignments:
        parameters = {k: v["value"] for k, v in assignment["parameters"].items()}
        if assignment["policyDefinitionId"] == azure_policy.initiative_id("baseline"):
            assert set(training) <= set(parameters["excludedNamespaces"])
        else:
            assert parameters["namespaces"] == training
            if assignment["policyDefinitionId"].endswith("c26596ff-4d70-4e6a-9a30-c2506bd2f80c"):
                assert parameters["allowedCapabilities"] == [*azure_policy.BASELINE_ALLOWED_CAPABILITIES, "IPC_LOCK"]
    clusters = len(config_of(stack)["platform:clusters"])
    assert len(assignments) == clusters * (1 + len(azure_policy.BASELINE_DEFINITIONS))


# -- Kueue's webhooks and the FQDN engines ------------------------------------------------------


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_kueues_webhooks_cover_team_namespaces_only(plans, stack):
    """The chart copies managedJobsNamespaceSelector into every webhook (failurePolicy Fail):
    when Kueue is down, the GPU operator, Kafka and kube-system still create pods."""
    config = config_of(stack)
    # Streaming namespaces are team namespaces outside Kueue (it has no FlinkDeployment integration).
    streams = {ns for team in config["platform:teams"].values() for ns in team.get("streamingNamespaces", [])}
    teams = {ns for team in config["platform:teams"].values() for ns in team["namespaces"]} - streams
    for view in views(plans, stack):
        selector = view.kueue_config["managedJobsNamespaceSelector"]
        namespaces = {
            r.inputs["metadata"]["name"]: r.inputs["metadata"].get("labels", {})
            for r in plans[stack].of_type(NAMESPACE)
            if cluster_of(r) == view.key
        }
        covered = {ns for ns, labels in namespaces.items() if selector_matches(selector, labels)}
        assert covered == teams & set(namespaces)
        assert not covered & streams
        for system in ("kube-system", "kueue-system", "kafka", "gpu-operator"):
            assert not selector_matches(selector, {"kubernetes.io/metadata.name": system})


@pytest.mark.parametrize("host", HUGGING_FACE_HOSTS)
def test_real_hugging_face_hosts_match_the_cluster_and_firewall_rules_for_the_configured_wildcard(host):
    configured = ["huggingface.co", "*.hf.co"]
    patterns = [s.get("matchName") or s.get("matchPattern") for f in configured for s in fqdn_selectors(f)]
    assert any(cilium_matches(p, host) for p in patterns)
    assert any(firewall_matches(f, host) for f in configured)


def test_every_framework_kueue_manages_has_a_golden_workload_admitted_on_every_stack(plans):
    """Kueue manages exactly the job kinds the platform runs (planning/queues.py): for each, a
    golden workload of that kind passes every contract layer on every stack it applies to (the
    parametrized test above); no framework is enabled for an operator the platform lacks."""
    import yaml

    from contracts.queueing import FRAMEWORKS
    from planning.queues import KUEUE_FRAMEWORKS

    covered: dict[str, list[str]] = {}
    for golden in GOLDEN:
        for manifest in yaml.safe_load_all(golden.file.read_text()):
            if manifest and manifest.get("kind") in FRAMEWORKS:
                covered.setdefault(FRAMEWORKS[manifest["kind"]], []).append(golden.name)
    assert set(KUEUE_FRAMEWORKS) == set(covered), covered
    for framework, names in covered.items():
        assert any(APPLIES[name] for name in names), framework


@pytest.mark.parametrize(
    "setting, why",
    [
        ("NODE=16", "has no placeholder 'NODE'"),
        ("NODES", "write NAME=VALUE"),
        ("WORKLOAD_NAMESPACE=kube-system", "is the workload's own; choose it with --workload"),
    ],
)
def test_the_render_script_refuses_a_set_the_template_does_not_use(capsys, setting, why):
    """`--set NODE=16` for NODES used to be ignored in silence: the job ran on the default 2 nodes."""
    from scripts.workloads import main

    with pytest.raises(SystemExit) as exited:
        main([str(ROOT / "examples" / "training-infiniband.yaml"), "--set", setting])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert why in err and (("it uses " in err and "NODES" in err) or "--workload" in err)


def test_a_borrow_only_team_is_admitted_on_an_idle_pool_through_the_cohort_and_promised_nothing():
    """dev's Spot pool given wholly to inference and research's quota set to 0: research's sweep
    (2 GPUs) is not promised (its nominal quota is 0) yet Kueue admits it while inference leaves
    the pool idle, since the ClusterQueue still lists the pool's flavor in the shared cohort."""
    from contracts import queueing
    from tests.conftest import run_with

    def borrow_only(values):
        values["platform:clusters"]["eus2"]["gpuPools"]["a100spot"]["quotas"] = {"research": 0, "inference": 4}

    plan = run_with("dev", borrow_only)
    assert plan.ok, plan.error
    config = config_of("dev")
    borrow_only(config)
    view = ClusterView(plan, "eus2", config)
    item = rendered(BY_NAME["batch-spot"], plan.outputs, "eus2")
    assert item is not None and item.namespace == "research"
    pool = item.variables["BATCH_POOL"]
    promised = queueing.refusals(view, item.workload, item.pod["spec"], pool)
    assert any("nvidia.com/gpu 2 > 0" in r for r in promised), promised
    assert queueing.refusals(view, item.workload, item.pod["spec"], pool, idle_cohort=True) == []


def test_the_render_script_fills_a_template_as_any_workload_with_its_topics_and_the_first_declared_cluster(
    unit_plans, tmp_path, capsys
):
    """The templates were tied to the sample workloads (`TRAINER_*`, topic `training-metrics`): a
    template now runs as any workload (its namespace, service account, Kafka client and topics)."""
    from planning.layers import Unit
    from planning.workloads import default_cluster
    from scripts.workloads import main

    # As `pulumi stack output --json` gives them: maps by key (dispeus2 before eus2).
    outputs = json.loads(json.dumps(unit_plans["prod"].plan(Unit("tenants")).outputs, sort_keys=True))
    path = tmp_path / "outputs.json"
    path.write_text(json.dumps(outputs))
    assert next(iter(config_of("prod")["platform:clusters"])) == "eus2" == default_cluster(outputs)
    declared = {"workloadContext": {"clusters": {"aeus": {}, "west": {}}, "clusterOrder": ["west", "aeus"]}}
    assert default_cluster(declared) == "west", "the declared order, not the map's"
    declared["workloadContext"]["workloads"] = {"w": {"clusters": ["aeus"]}}
    assert default_cluster(declared, "w") == "aeus", "the first declared cluster the workload runs in"
    assert (
        main([str(ROOT / "examples" / "kafka-producer.yaml"), "--outputs", str(path), "--workload", "inference"]) == 0
    )
    (producer,) = yaml.safe_load_all(capsys.readouterr().out)
    env = {e["name"]: e["value"] for e in producer["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert producer["metadata"]["namespace"] == "inference"
    assert producer["spec"]["template"]["spec"]["serviceAccountName"] == "inference"
    topics = outputs["kafkaClients"]["inference"]["topics"]
    written = [t for t, spec in topics.items() if spec["access"] in ("write", "readWrite")]
    assert env["KAFKA_TOPIC"] == sorted(written)[0], "a topic inference may write, not the trainer's"
    assert env["KAFKA_BOOTSTRAP_SERVERS"] == outputs["kafkaClients"]["inference"]["bootstrapServers"]["eus2"]
    assert (
        main(
            [
                str(ROOT / "examples" / "kafka-producer.yaml"),
                "--outputs",
                str(path),
                "--workload",
                "inference",
                "--topic",
                "training-metrics",
            ]
        )
        == 2
    )
    assert "may not use topic 'training-metrics' to write" in capsys.readouterr().err
    assert main([str(ROOT / "examples" / "kafka-producer.yaml"), "--outputs", str(path), "--workload", "vision"]) == 2
    assert "no workload 'vision' in platform:workloads; the stack has " in capsys.readouterr().err


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_the_contracts_judge_the_unit_stacks_as_they_judge_the_single_stack(plans, unit_plans, stack):
    """What is deployed is the unit stacks: a workload's grants and KafkaUser are made by the tenants
    unit for an identity the foundation made, linked by value through a stack reference, not by
    a dependency. Every golden workload gets the same verdict on the units as on the single stack."""
    from offline.environment import contract_plan

    units = contract_plan(unit_plans[stack])
    config = config_of(stack)
    checked = 0
    for view, item in [(v, i) for name in BY_NAME for v, i in applicable(plans, stack, name)]:
        on_units = ClusterView(units, view.key, config)
        assert evaluate(on_units, rendered(item.golden, units.outputs, view.key)) == evaluate(view, item), (
            item.golden.name
        )
        checked += 1
    assert checked >= 7
