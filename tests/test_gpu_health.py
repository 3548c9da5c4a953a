"""GPU and fabric health (issue 22, part 1): every GPU pool of every stack is gated by preflight
and watched passively, and a faulty node leaves at a configured rate, with least privilege.

What the plan cannot show is checked another way: the agent's script runs here against a fake
DCGM and a fake sysfs (what it publishes, when it asks for a reboot); ShellCheck lints it;
kured's and the gate's admission guards are evaluated with a CEL interpreter against the node
writes they make and the ones they must not; the gate's transitions run as they do on a node.
That the golden InfiniBand job lands only on checked nodes while its pool scales from zero past a
failed one is walked over time in tests/test_over_time.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from contracts.admission import cel_program
from contracts.cluster import ClusterView, cluster_of
from facts.gpu import (
    CORDON_ANNOTATION,
    PREFLIGHT_LABEL,
    PREFLIGHT_PASSED,
    PREFLIGHT_TAINT,
    PREFLIGHT_TAINT_KEY,
    UNHEALTHY_TAINT_KEY,
)
from offline.reference import shared_dir
from planning import gpu_gate, gpu_health
from planning.charts import GPU_OPERATOR
from planning.gpu import UNHEALTHY_TAINT, platform_taints, taint_key
from stackconfig.model import GpuHealthConfig
from tests.conftest import ALL_STACKS, stack_values
from tests.support.json_patch import apply
from tests.support.plan_edits import changed, without
from validation.loader import parse_platform_config

DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
RULE = "kubernetes:nfd.k8s-sigs.io/v1alpha1:NodeFeatureRule"
RELEASE = "kubernetes:helm.sh/v3:Release"
NIC_POLICY = "kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"


def _config(stack: str):
    return parse_platform_config(stack_values(stack), stack=stack)


def _tolerated(tolerations: list[dict], taint: str) -> bool:
    return any(t.get("operator") == "Exists" and t.get("key") == taint_key(taint) for t in tolerations)


def ungated_pools(plan, config) -> list[str]:
    """Every GPU pool whose work is not held to checked nodes, and why: Kueue's flavor must
    require only labels the pool's spec puts on every node (and so on the autoscaler's template
    of the pool, at zero or from a node not judged yet), and one health agent must gate the
    pool's nodes: select them, tolerate their taints, the gate's and the fault taint, start the
    gate first (a sidecar that applies the startup taint before its startup probe lets
    preflight run), then preflight, publishing the verdict."""
    problems = []
    for key, cluster in config.clusters.items():
        view = ClusterView(plan, key, {})
        flavors = {r.inputs["metadata"]["name"]: r.inputs["spec"] for r in plan.of_type(FLAVOR) if cluster_of(r) == key}
        agents = [
            r.inputs["spec"]["template"]["spec"]
            for r in plan.of_type(DAEMON_SET)
            if cluster_of(r) == key and r.inputs["metadata"]["namespace"] == gpu_health.HEALTH_NAMESPACE
        ]
        for name, pool in cluster.gpu_pools.items():
            where = f"{key}/{name}"
            flavor = flavors.get(f"gpu-{name}")
            spec_labels = view.pools[name].labels
            earned = sorted(k for k, v in (flavor or {}).get("nodeLabels", {}).items() if spec_labels.get(k) != v)
            if flavor is None or earned:
                problems.append(f"{where}: Kueue's flavor requires labels the pool's nodes do not start with: {earned}")
            taints = [*platform_taints(cluster.gpu.taint, pool.spot), PREFLIGHT_TAINT, UNHEALTHY_TAINT]
            covering = [
                spec
                for spec in agents
                if spec["nodeSelector"].get("platform.ai/gpu-pool") == name
                and all(_tolerated(spec["tolerations"], t) for t in taints)
                and [c["name"] for c in spec["initContainers"]] == ["gate", "preflight"]
                and spec["initContainers"][0].get("restartPolicy") == "Always"
                and "startupProbe" in spec["initContainers"][0]
                and {"name": "TAINT_KEY", "value": PREFLIGHT_TAINT_KEY} in spec["initContainers"][0]["env"]
                and {"name": "PREFLIGHT_LABEL", "value": PREFLIGHT_LABEL} in spec["containers"][0]["env"]
            ]
            if len(covering) != 1:
                problems.append(f"{where}: {len(covering)} health agents gate its nodes")
    return problems


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_gpu_pool_of_every_stack_is_gated_by_preflight(plans, stack):
    config = _config(stack)
    assert any(cluster.gpu_pools for cluster in config.clusters.values())
    assert ungated_pools(plans[stack], config) == []


def test_a_flavor_needing_an_earned_label_or_a_pool_without_its_gate_is_named(plans):
    plan, config = plans["prod"], _config("prod")
    flavor = next(r for r in plan.of_type(FLAVOR) if r.inputs["metadata"]["name"] == "gpu-h100")
    labels = {"platform.ai/gpu-pool": "h100", PREFLIGHT_LABEL: PREFLIGHT_PASSED}
    earned = changed(plan, flavor.name, inputs=dict(flavor.inputs, spec=dict(flavor.inputs["spec"], nodeLabels=labels)))
    assert ungated_pools(earned, config) == [
        f"{cluster_of(flavor)}/h100: Kueue's flavor requires labels the pool's nodes do not start with: "
        f"['{PREFLIGHT_LABEL}']"
    ]
    agent = next(
        r
        for r in plan.of_type(DAEMON_SET)
        if cluster_of(r) == cluster_of(flavor) and r.inputs["metadata"]["name"] == gpu_health.agent_name("h100")
    )
    assert ungated_pools(without(plan, agent.name), config) == [
        f"{cluster_of(flavor)}/h100: 0 health agents gate its nodes"
    ]
    pod = agent.inputs["spec"]["template"]["spec"]
    ungated = dict(pod, initContainers=pod["initContainers"][1:])
    spec = dict(agent.inputs["spec"], template=dict(agent.inputs["spec"]["template"], spec=ungated))
    assert ungated_pools(changed(plan, agent.name, inputs=dict(agent.inputs, spec=spec)), config) == [
        f"{cluster_of(flavor)}/h100: 0 health agents gate its nodes"
    ]


# -- the agent, run here -----------------------------------------------------------------------


def _run_agent(
    tmp_path: Path,
    mode: str,
    *,
    gpus: int,
    ports: list[tuple[str, str, str]],
    env=None,
    fail_diag=False,
    dcgm_down=False,
):
    """Run the agent's script with a fake `dcgmi` and a fake sysfs (one entry per InfiniBand
    port: link layer, state, rate); returns the completed process."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    dcgmi = bin_dir / "dcgmi"
    diag = 'echo "| Memory | Fail |"; exit 226' if fail_diag else 'echo "| Memory | Pass |"'
    dcgmi.write_text(
        "#!/bin/bash\n"
        + ('echo "Error: unable to establish a connection to the specified host" >&2; exit 255\n' if dcgm_down else "")
        + 'case "$1" in\n'
        f'  discovery) echo "{gpus} GPUs found (Active)." ;;\n'
        f"  diag) {diag} ;;\n"
        '  health) if [ "$2" = "-c" ]; then echo "| Overall Health: ${FAKE_HEALTH:-Healthy} |"; fi ;;\n'
        "esac\n"
    )
    dcgmi.chmod(0o755)
    for index, (layer, state, rate) in enumerate(ports):
        port = tmp_path / "sys" / "class" / "infiniband" / f"mlx5_{index}" / "ports" / "1"
        port.mkdir(parents=True, exist_ok=True)
        (port / "link_layer").write_text(layer + "\n")
        (port / "state").write_text(state + "\n")
        (port / "rate").write_text(rate + "\n")
    for directory in ("host/features.d", "host/sentinel", "host/state", "status"):
        (tmp_path / directory).mkdir(parents=True, exist_ok=True)
    settings = GpuHealthConfig()
    pool = _config("prod").clusters["eus2"].gpu_pools["h100"]
    environment = {
        **os.environ,
        **gpu_health.pool_checks(pool, settings),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "HOST_ROOT": str(tmp_path / "host"),
        "STATUS_DIR": str(tmp_path / "status"),
        "SYSFS_ROOT": str(tmp_path / "sys"),
        "EXPECTED_GPUS": "8",
        "WAIT_SECONDS": "0",
        **(env or {}),
    }
    script = str(gpu_health.SCRIPT)
    if mode == "watch":  # one round of the loop
        return subprocess.run(
            ["timeout", "5", "bash", "-c", f'sleep() {{ exit 0; }}; export -f sleep; source "{script}" watch'],
            env=environment,
            capture_output=True,
            text=True,
        )
    return subprocess.run(["bash", script, mode], env=environment, capture_output=True, text=True, timeout=30)


NDR = [("InfiniBand", "4: ACTIVE", "400 Gb/sec (4X NDR)")] * 8
ETHERNET = [("Ethernet", "4: ACTIVE", "100 Gb/sec (4X EDR)")]


def _published(tmp_path: Path) -> dict[str, str]:
    text = (tmp_path / "host/features.d/platform-gpu-health").read_text()
    assert re.match(r"# \+expiry-time=\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n", text), text
    return dict(line.split("=", 1) for line in text.splitlines() if not line.startswith("#"))


def test_a_healthy_h100_node_passes_preflight_and_asks_for_nothing(tmp_path):
    result = _run_agent(tmp_path, "preflight", gpus=8, ports=NDR + ETHERNET)
    assert result.returncode == 0, result.stderr
    assert _published(tmp_path) == {PREFLIGHT_LABEL: "passed"}
    assert not (tmp_path / "host/sentinel/reboot-required").exists()
    assert not (tmp_path / "status/problem").exists()


@pytest.mark.parametrize(
    ("case", "gpus", "ports", "fail_diag", "check", "detail"),
    [
        ("a GPU fell off the bus", 7, NDR, False, "gpu-count", "found 7 GPUs, expected 8"),
        (
            "an IB link is down",
            8,
            NDR[:7] + [("InfiniBand", "1: DOWN", "400 Gb/sec (4X NDR)")],
            False,
            "infiniband",
            "7 of 8 InfiniBand ports active at 400 Gb/s",
        ),
        (
            "an IB link trained at HDR",
            8,
            NDR[:7] + [("InfiniBand", "4: ACTIVE", "200 Gb/sec (4X HDR)")],
            False,
            "infiniband",
            "7 of 8",
        ),
        ("DCGM's diagnostic fails", 8, NDR, True, "dcgm-diag", "Memory | Fail"),
    ],
)
def test_a_failed_check_is_labelled_reported_and_asks_for_one_reboot(
    tmp_path, case, gpus, ports, fail_diag, check, detail
):
    result = _run_agent(tmp_path, "preflight", gpus=gpus, ports=ports, fail_diag=fail_diag)
    assert result.returncode == 0, result.stderr
    assert _published(tmp_path) == {PREFLIGHT_LABEL: "failed", gpu_health.FAULT_LABEL: check}, case
    problem = (tmp_path / "status/problem").read_text()
    assert problem.startswith(f"{check}: ") and detail in problem, problem
    assert (tmp_path / "host/sentinel/reboot-required").exists()
    # The gate's verdict for this boot (the gate cordons the node and lifts its startup taint).
    assert (tmp_path / "host/sentinel/preflight").read_text() == f"failed:{check}\n"
    # The same failure after the reboot (the tmpfs is empty again), within minRebootInterval:
    # no second reboot.
    (tmp_path / "host/sentinel/reboot-required").unlink()
    (tmp_path / "host/sentinel/preflight").unlink()
    os.utime(tmp_path / "host/features.d/platform-gpu-health", (0, 0))  # published before the boot
    again = _run_agent(tmp_path, "preflight", gpus=gpus, ports=ports, fail_diag=fail_diag)
    assert not (tmp_path / "host/sentinel/reboot-required").exists(), again.stderr
    assert "no reboot" in again.stderr


def test_remediation_off_reports_without_asking_for_a_reboot(tmp_path):
    _run_agent(tmp_path, "preflight", gpus=7, ports=NDR, env={"REMEDIATE": "false"})
    assert _published(tmp_path)[gpu_health.FAULT_LABEL] == "gpu-count"
    assert not (tmp_path / "host/sentinel/reboot-required").exists()


def test_passive_health_taints_a_node_that_passed_preflight(tmp_path):
    assert _run_agent(tmp_path, "preflight", gpus=8, ports=NDR).returncode == 0
    healthy = _run_agent(tmp_path, "watch", gpus=8, ports=NDR)
    assert _published(tmp_path) == {PREFLIGHT_LABEL: "passed"}, healthy.stderr
    # One failing round is a blip (a driver reload, a link retraining): no taint, no reboot.
    _run_agent(tmp_path, "watch", gpus=8, ports=NDR, env={"FAKE_HEALTH": "Failure"})
    assert _published(tmp_path) == {PREFLIGHT_LABEL: "passed"}
    assert not (tmp_path / "host/sentinel/reboot-required").exists()
    # A fault that holds (here: for FAULT_AFTER=1 round) asks the gate for a cordon, then
    # taints the node and asks for a reboot (the gate has answered: the node is cordoned).
    (tmp_path / "status/cordoned").write_text("")
    _run_agent(tmp_path, "watch", gpus=8, ports=NDR, env={"FAKE_HEALTH": "Failure", "FAULT_AFTER": "1"})
    assert (tmp_path / "status/fault").read_text() == "dcgm-health\n"
    assert _published(tmp_path) == {PREFLIGHT_LABEL: "passed", gpu_health.FAULT_LABEL: "dcgm-health"}
    assert (tmp_path / "host/sentinel/reboot-required").exists()


def test_a_fault_is_published_even_if_the_gate_never_answers(tmp_path):
    assert _run_agent(tmp_path, "preflight", gpus=8, ports=NDR).returncode == 0
    env = {"FAKE_HEALTH": "Failure", "FAULT_AFTER": "1", "GATE_WAIT_SECONDS": "0"}
    result = _run_agent(tmp_path, "watch", gpus=8, ports=NDR, env=env)
    assert "tainting anyway" in result.stderr
    assert _published(tmp_path)[gpu_health.FAULT_LABEL] == "dcgm-health"


def test_a_restarted_agent_keeps_its_boots_verdict_without_a_second_diagnostic(tmp_path):
    """A new agent pod in the same boot (an update, an eviction) would run DCGM's diagnostic on
    GPUs that jobs use by now: it reuses the verdict on the host's tmpfs instead."""
    assert _run_agent(tmp_path, "preflight", gpus=8, ports=NDR).returncode == 0
    assert (tmp_path / "host/sentinel/preflight").read_text() == "passed\n"
    (tmp_path / "status/preflight").unlink()
    again = _run_agent(tmp_path, "preflight", gpus=8, ports=NDR, fail_diag=True)
    assert again.returncode == 0 and (tmp_path / "status/preflight").read_text() == "passed\n", again.stderr


def test_an_agent_from_before_the_gate_hands_its_verdict_to_the_first_one_with_it(tmp_path):
    """Rolling the gate out replaces agent pods on busy nodes whose boot an older agent judged
    (it published the verdict, not the boot's file): the new one adopts what was published
    since the boot instead of running the diagnostic on GPUs jobs use. Published before the
    boot, it counts for nothing."""
    assert _run_agent(tmp_path, "preflight", gpus=7, ports=NDR).returncode == 0
    (tmp_path / "host/sentinel/preflight").unlink()
    (tmp_path / "status/preflight").unlink()
    again = _run_agent(tmp_path, "preflight", gpus=8, ports=NDR)
    assert (tmp_path / "host/sentinel/preflight").read_text() == "failed:gpu-count\n", again.stderr
    (tmp_path / "host/sentinel/preflight").unlink()
    os.utime(tmp_path / "host/features.d/platform-gpu-health", (0, 0))
    assert _run_agent(tmp_path, "preflight", gpus=8, ports=NDR).returncode == 0
    assert (tmp_path / "host/sentinel/preflight").read_text() == "passed\n"


def test_a_node_whose_dcgm_is_not_up_yet_stays_unchecked_and_is_not_faulted(tmp_path):
    """DCGM's host engine starts after the driver: a preflight that cannot reach it judges
    nothing (no label, no taint, no reboot) and exits non-zero, so the kubelet runs it again."""
    result = _run_agent(tmp_path, "preflight", gpus=8, ports=NDR, dcgm_down=True)
    assert result.returncode != 0
    assert not (tmp_path / "host/features.d/platform-gpu-health").exists()
    assert not (tmp_path / "host/sentinel/reboot-required").exists()
    assert "unknown: DCGM's host engine not ready" in (tmp_path / "status/problem").read_text()
    # Nor do InfiniBand devices the driver has not brought up yet make a fault.
    result = _run_agent(tmp_path / "ib", "preflight", gpus=8, ports=[])
    assert result.returncode != 0 and not (tmp_path / "ib/host/sentinel/reboot-required").exists()


def test_passive_checks_keep_the_verdict_while_dcgm_restarts_then_let_it_lapse(tmp_path):
    assert _run_agent(tmp_path, "preflight", gpus=8, ports=NDR).returncode == 0
    (tmp_path / "host/features.d/platform-gpu-health").unlink()
    _run_agent(tmp_path, "watch", gpus=8, ports=NDR, dcgm_down=True)
    # First blind round: the verdict is kept (no fault); after three, the agent stops
    # refreshing it and NFD drops it at its expiry.
    assert _published(tmp_path) == {PREFLIGHT_LABEL: "passed"}
    assert not (tmp_path / "host/sentinel/reboot-required").exists()


def test_partly_mig_partitioned_pools_skip_dcgms_diagnostic():
    """nvvs refuses GPUs whose MIG instances do not cover the whole GPU (staging's MIG3g)."""
    settings = GpuHealthConfig(diag_level=2)
    a100 = _config("staging").clusters["eus2"].gpu_pools["a100"]
    assert a100.mig_profile == "MIG3g" and gpu_health.pool_checks(a100, settings)["DIAG_LEVEL"] == "0"
    h100 = _config("staging").clusters["eus2"].gpu_pools["h100"]
    assert gpu_health.pool_checks(h100, settings)["DIAG_LEVEL"] == "2"


def test_the_agent_passes_shellcheck():
    shellcheck = Path(sys.executable).parent / "shellcheck"
    result = subprocess.run([str(shellcheck), str(gpu_health.SCRIPT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


# -- rights ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_only_the_gate_holds_a_credential_and_nothing_holds_privilege(plans, stack):
    """The checks run DCGM against the node's GPUs with no Kubernetes credential; the gate's
    token is projected into its container alone (the pod mounts none by default), and its
    service account may only patch nodes, narrowed by its guard to its own node's gate."""
    agents = [
        r.inputs for r in plans[stack].of_type(DAEMON_SET) if r.inputs["metadata"]["name"].startswith(gpu_health.AGENT)
    ]
    assert agents
    for agent in agents:
        pod = agent["spec"]["template"]["spec"]
        assert pod["automountServiceAccountToken"] is False and pod["serviceAccountName"] == gpu_health.GATE
        assert not pod.get("hostPID") and not pod.get("hostNetwork")
        (token,) = [v for v in pod["volumes"] if "projected" in v]
        for container in [*pod["initContainers"], *pod["containers"]]:
            context = container["securityContext"]
            assert context["allowPrivilegeEscalation"] is False and context["capabilities"] == {"drop": ["ALL"]}
            assert "privileged" not in context
            mounts = {m["name"] for m in container["volumeMounts"]}
            assert (token["name"] in mounts) is (container["name"] == "gate"), container["name"]
        host_paths = sorted(v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v)
        assert host_paths == sorted([gpu_health.NFD_FEATURES_DIR, gpu_health.SENTINEL_DIR, gpu_health.STATE_DIR])
    for role in plans[stack].of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"):
        if role.inputs["metadata"]["name"] == f"platform-{gpu_health.GATE}":
            assert role.inputs["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]


def test_the_gate_and_the_agent_agree_on_where_the_boots_verdict_lives():
    gate = gpu_health.gate_container("example.azurecr.io")
    env = {e["name"]: e.get("value") for e in gate["env"]}
    # The script's default, with the pod's mount of the host's tmpfs at /host/sentinel.
    assert "VERDICT=${BOOT_VERDICT:-$HOST/sentinel/preflight}" in gpu_health.agent_script()
    assert env["BOOT_VERDICT"] == f"/host/sentinel/{gpu_health.BOOT_VERDICT}"
    assert {m["mountPath"]: m["name"] for m in gate["volumeMounts"]}["/host/sentinel"] == "sentinel"


# -- the gate's writes ----------------------------------------------------------------------------

BOOT, EARLIER = "boot-2", "boot-1"


def _gpu_node(**spec) -> dict[str, Any]:
    return {
        "metadata": {"name": "aks-h100-1", "labels": {"platform.ai/gpu-pool": "h100"}, "resourceVersion": "7"},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}], **spec},
    }


def _gate(node: dict[str, Any], verdict: str | None = None, fault: str | None = None) -> dict[str, Any]:
    ops = gpu_gate.patch(node, BOOT, verdict, fault, PREFLIGHT_TAINT_KEY, CORDON_ANNOTATION)
    return apply(node, ops) if ops else node


def _startup_tainted(node: dict[str, Any]) -> bool:
    return any(t["key"] == PREFLIGHT_TAINT_KEY for t in node["spec"].get("taints") or [])


def test_the_gate_arms_a_new_boot_lifts_it_on_a_pass_and_cordons_a_failure_in_one_write():
    fresh = _gpu_node()
    armed = _gate(fresh)
    assert _startup_tainted(armed) and not armed["spec"].get("unschedulable")
    assert gpu_gate.patch(armed, BOOT, None, None, PREFLIGHT_TAINT_KEY, CORDON_ANNOTATION) == []
    passed = _gate(armed, PREFLIGHT_PASSED)
    assert not _startup_tainted(passed) and not passed["spec"].get("unschedulable")
    assert passed["spec"]["taints"] == fresh["spec"]["taints"]
    ops = gpu_gate.patch(armed, BOOT, "failed:dcgm-diag", None, PREFLIGHT_TAINT_KEY, CORDON_ANNOTATION)
    # The resourceVersion first: a node changed since it was read is not overwritten.
    assert ops[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": "7"}
    failed = apply(armed, ops)
    assert not _startup_tainted(failed) and failed["spec"]["unschedulable"] is True
    assert failed["metadata"]["annotations"] == {CORDON_ANNOTATION: f"{BOOT}:dcgm-diag"}


def test_the_gate_keeps_its_own_cordon_in_the_same_boot_and_lifts_an_earlier_boots_on_a_pass():
    cordoned = _gate(_gate(_gpu_node()), "failed:infiniband")
    # A restarted agent pod in the same boot: nothing changes, whatever it read.
    assert gpu_gate.patch(cordoned, BOOT, "failed:infiniband", None, PREFLIGHT_TAINT_KEY, CORDON_ANNOTATION) == []
    # A fault on a node that passed: cordoned, annotated with the check.
    faulted = _gate(_gate(_gate(_gpu_node()), PREFLIGHT_PASSED), PREFLIGHT_PASSED, "dcgm-health")
    assert faulted["spec"]["unschedulable"] is True
    assert faulted["metadata"]["annotations"][CORDON_ANNOTATION] == f"{BOOT}:dcgm-health"
    # After a reboot (an earlier boot's cordon) the new boot's pass lifts it; a fail keeps it.
    rebooted = dict(cordoned, metadata=dict(cordoned["metadata"], annotations={CORDON_ANNOTATION: f"{EARLIER}:x"}))
    lifted = _gate(_gate(rebooted), PREFLIGHT_PASSED)
    assert not lifted["spec"]["unschedulable"] and CORDON_ANNOTATION not in lifted["metadata"]["annotations"]
    kept = _gate(_gate(rebooted), "failed:gpu-count")
    assert kept["spec"]["unschedulable"] and kept["metadata"]["annotations"][CORDON_ANNOTATION] == f"{EARLIER}:x"
    # A cordon someone else made (a person, kured's drain) is never lifted by a pass.
    drained = _gpu_node(unschedulable=True)
    assert _gate(_gate(drained), PREFLIGHT_PASSED)["spec"]["unschedulable"] is True


def _gate_guard(old: dict, new: dict, node_name: str = "aks-h100-1") -> list[str]:
    import celpy

    guard = gpu_health.gate_guard()
    activation = {
        "object": celpy.json_to_cel(new),
        "oldObject": celpy.json_to_cel(old),
        "request": celpy.json_to_cel(
            {
                "userInfo": {
                    "username": f"system:serviceaccount:{gpu_health.HEALTH_NAMESPACE}:{gpu_health.GATE}",
                    "extra": {gpu_health.NODE_NAME_EXTRA: [node_name]},
                }
            }
        ),
    }
    assert all(cel_program(c["expression"]).evaluate(activation) for c in guard["matchConditions"])
    return [v["message"] for v in guard["validations"] if not cel_program(v["expression"]).evaluate(activation)]


def test_the_gates_guard_admits_each_write_the_gate_makes_and_nothing_else():
    """Every transition the gate makes, evaluated with a CEL interpreter against its guard."""
    fresh = _gpu_node()
    armed = _gate(fresh)
    failed = _gate(armed, "failed:dcgm-diag")
    rebooted = dict(failed, metadata=dict(failed["metadata"], annotations={CORDON_ANNOTATION: f"{EARLIER}:x"}))
    for old, new in [
        (fresh, armed),
        (armed, _gate(armed, PREFLIGHT_PASSED)),
        (armed, failed),
        (rebooted, _gate(rebooted, PREFLIGHT_PASSED)),
    ]:
        assert new != old and _gate_guard(old, new) == [], new
    gate = gpu_health.GATE
    assert _gate_guard(fresh, armed, node_name="aks-h100-2") == [f"{gate} may change only the node it runs on"]
    untainted = dict(fresh, spec=dict(fresh["spec"], taints=[]))
    assert _gate_guard(fresh, untainted) == [f"{gate} may add or remove only {PREFLIGHT_TAINT}"]
    relabelled = dict(fresh, metadata=dict(fresh["metadata"], labels={PREFLIGHT_LABEL: PREFLIGHT_PASSED}))
    assert _gate_guard(fresh, relabelled) == [f"{gate} may not change a node's labels"]
    annotated = dict(fresh, metadata=dict(fresh["metadata"], annotations={"other": "x"}))
    assert _gate_guard(fresh, annotated) == [f"{gate} may change only its own annotation ({CORDON_ANNOTATION})"]
    drained = _gpu_node(unschedulable=True)
    assert _gate_guard(drained, _gpu_node(unschedulable=False)) == [
        f"{gate} may lift only a cordon it made (with its annotation)"
    ]
    # Claiming someone else's cordon first, to lift it in a second write:
    claimed = dict(drained, metadata=dict(drained["metadata"], annotations={CORDON_ANNOTATION: "boot-0:x"}))
    assert _gate_guard(drained, claimed) == [f"{gate} may mark only a cordon it makes in the same write"]
    # Its own taint key with another effect (NoExecute would evict the gang), or another value:
    evicting = dict(
        fresh,
        spec=dict(
            fresh["spec"],
            taints=[*fresh["spec"]["taints"], {"key": PREFLIGHT_TAINT_KEY, "value": "pending", "effect": "NoExecute"}],
        ),
    )
    assert _gate_guard(fresh, evicting) == [f"{gate} may add or remove only {PREFLIGHT_TAINT}"]
    # An owner the garbage collector would follow, a finalizer:
    owned = dict(fresh, metadata=dict(fresh["metadata"], ownerReferences=[{"kind": "ConfigMap", "name": "x"}]))
    assert _gate_guard(fresh, owned) == [
        f"{gate} may not change a node's finalizers, owners, provider ID, pod CIDRs or config"
    ]


def test_the_gates_taint_is_the_one_the_platform_declares():
    """The gate runs alone in its pod (it cannot import the platform's facts)."""
    assert f"{PREFLIGHT_TAINT_KEY}={gpu_gate.TAINT_VALUE}:NoSchedule" == PREFLIGHT_TAINT


def _node(name: str, **changes) -> dict:
    node: dict[str, Any] = {
        "metadata": {"name": name, "labels": {"platform.ai/gpu-pool": "h100"}, "annotations": {"a": "b"}},
        "spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]},
    }
    for path, value in changes.items():
        section, key = path.split("__")
        node[section] = {**node[section], key: value}
    return node


def _guard_allows(old: dict, new: dict, node_name: str = "aks-h100-1") -> list[str]:
    import celpy

    guard = gpu_health.remediation_guard()
    activation = {
        "object": celpy.json_to_cel(new),
        "oldObject": celpy.json_to_cel(old),
        "request": celpy.json_to_cel(
            {
                "userInfo": {
                    "username": f"system:serviceaccount:{gpu_health.HEALTH_NAMESPACE}:{gpu_health.REMEDIATION}",
                    "extra": {gpu_health.NODE_NAME_EXTRA: [node_name]},
                }
            }
        ),
    }
    assert all(cel_program(c["expression"]).evaluate(activation) for c in guard["matchConditions"])
    activation["variables"] = celpy.celtypes.MapType(
        {
            celpy.celtypes.StringType(v["name"]): cel_program(v["expression"]).evaluate(activation)
            for v in guard["variables"]
        }
    )
    return [v["message"] for v in guard["validations"] if not cel_program(v["expression"]).evaluate(activation)]


def test_kured_may_cordon_and_annotate_only_its_own_node():
    old = _node("aks-h100-1")
    cordon = _node("aks-h100-1", spec__unschedulable=True)
    assert _guard_allows(old, cordon) == []
    lock = _node("aks-h100-1", metadata__annotations={"a": "b", "weave.works/kured-reboot-in-progress": "t"})
    assert _guard_allows(old, lock) == []
    # Another node, even the same change:
    assert _guard_allows(_node("aks-h100-2"), _node("aks-h100-2", spec__unschedulable=True)) == [
        "gpu-remediation may change only the node it runs on"
    ]
    # Its own node, but lifting a taint, relabelling, or touching others' annotations:
    assert _guard_allows(old, _node("aks-h100-1", spec__taints=[])) == [
        "gpu-remediation may not change a node's taints or labels"
    ]
    assert _guard_allows(old, _node("aks-h100-1", metadata__labels={PREFLIGHT_LABEL: "passed"})) == [
        "gpu-remediation may not change a node's taints or labels"
    ]
    assert _guard_allows(old, _node("aks-h100-1", metadata__annotations={})) == [
        "gpu-remediation may change only its own annotations (weave.works/kured-*)"
    ]


@pytest.mark.parametrize("stack", ["prod", "staging"])
def test_remediation_is_rate_limited_waits_for_jobs_and_guarded(plans, stack):
    config = _config(stack)
    remediation = config.operations.gpu_health.remediation
    for kured in (
        r for r in plans[stack].of_type(DAEMON_SET) if r.inputs["metadata"]["name"] == gpu_health.REMEDIATION
    ):
        container = kured.inputs["spec"]["template"]["spec"]["containers"][0]
        assert f"--concurrency={remediation.concurrency}" in container["command"]
        assert ("--blocking-pod-selector=kueue.x-k8s.io/podset" in container["command"]) is remediation.wait_for_jobs
        assert container["image"].endswith(f"/kubereboot/kured:{gpu_health.KURED_VERSION}")
        assert kured.inputs["spec"]["template"]["spec"]["serviceAccountName"] == gpu_health.REMEDIATION
        assert (f"platform-{gpu_health.REMEDIATION}-own-node", cluster_of(kured)) in {
            (r.inputs["metadata"]["name"], cluster_of(r))
            for r in plans[stack].of_type("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding")
            if r.inputs["spec"]["validationActions"] == ["Deny"]
        }


# -- NFD, the GPU operator and every node agent ---------------------------------------------------


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_node_agent_keeps_running_on_a_node_it_took_out_of_service(plans, stack):
    """A NoSchedule taint keeps a DaemonSet's pod off the node unless it tolerates it: DCGM, the
    driver, the device plugin, NFD's worker, the Network Operator and the health agents must
    start on a node the gate holds (or preflight could never run) and keep running on a node
    the health checks took out of service."""
    plan = plans[stack]
    for release in plan.of_type(RELEASE):
        if release.inputs["name"] == GPU_OPERATOR.name:
            values = release.inputs["values"]
            for taint in (PREFLIGHT_TAINT, UNHEALTHY_TAINT):
                assert _tolerated(values["daemonsets"]["tolerations"], taint)
                assert _tolerated(values["node-feature-discovery"]["worker"]["tolerations"], taint)
            # DCGM's own host engine (the agents' and the exporter's), and NFD's taints.
            assert values["dcgm"]["enabled"] is True
            assert values["node-feature-discovery"]["master"]["enableTaints"] is True
    for policy in plan.of_type(NIC_POLICY):
        assert _tolerated(policy.inputs["spec"]["tolerations"], PREFLIGHT_TAINT)
        assert _tolerated(policy.inputs["spec"]["tolerations"], UNHEALTHY_TAINT)
    for agent in plan.of_type(DAEMON_SET):
        if agent.inputs["metadata"]["namespace"] == gpu_health.HEALTH_NAMESPACE:
            assert _tolerated(agent.inputs["spec"]["template"]["spec"]["tolerations"], PREFLIGHT_TAINT)
            assert _tolerated(agent.inputs["spec"]["template"]["spec"]["tolerations"], UNHEALTHY_TAINT)


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_nfd_taints_a_node_the_agent_reports_faulty(plans, stack):
    """NFD's CRDs are not in the pinned reference set: the rule's structure, as NFD v0.19.0's
    customization guide defines a taint rule over the local source's labels."""
    rules = plans[stack].of_type(RULE)
    gpu_clusters = {key for key, c in _config(stack).clusters.items() if c.gpu_pools}
    assert {cluster_of(r) for r in rules} == gpu_clusters
    for rule in rules:
        (only,) = rule.inputs["spec"]["rules"]
        assert only["taints"] == [{"key": UNHEALTHY_TAINT_KEY, "value": "true", "effect": "NoSchedule"}]
        assert only["matchFeatures"] == [
            {"feature": "local.label", "matchExpressions": {gpu_health.FAULT_LABEL: {"op": "Exists"}}}
        ]


def test_the_agents_dcgm_is_the_version_the_gpu_operator_pins():
    values = yaml.safe_load((shared_dir() / "reference/helm-values" / GPU_OPERATOR.values_file).read_text())
    assert values["dcgm"]["version"] == gpu_health.DCGM_VERSION
    assert values["dcgm"]["repository"] + "/" + values["dcgm"]["image"] == gpu_health.DCGM_REPOSITORY


# -- the GPU metrics' path -----------------------------------------------------------------------


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_dcgm_series_reach_managed_prometheus_through_the_gpu_operators_namespace_policy(plans, stack):
    """gpu-operator v26.7.0 runs dcgm-exporter as an ordinary pod (no hostNetwork: its
    assets/state-dcgm-exporter DaemonSet, and `dcgmExporter.hostNetwork: false` in its values)
    that reads the standalone host engine `nvidia-dcgm` (no hostNetwork either) on 5555, so the
    namespace's policies apply to both paths: managed Prometheus's scrapers in kube-system reach
    the exporter on 9400, the exporter reaches the host engine, and so do the health agents."""
    from contracts.reach import Destination, ingress_refused
    from planning.cluster_traffic import DCGM_EXPORTER_PORT, DCGM_PORT, GPU_OPERATOR_NAMESPACE
    from planning.network_policy import METRICS_SCRAPERS

    values = yaml.safe_load((shared_dir() / "reference/helm-values" / GPU_OPERATOR.values_file).read_text())
    assert values["dcgmExporter"].get("hostNetwork", False) is False
    exporter = Destination(
        DCGM_EXPORTER_PORT, namespace=GPU_OPERATOR_NAMESPACE, pod_labels=(("app", "nvidia-dcgm-exporter"),)
    )
    engine = Destination(DCGM_PORT, namespace=GPU_OPERATOR_NAMESPACE, pod_labels=(("app", "nvidia-dcgm"),))
    gpu_clusters = {key for key, c in _config(stack).clusters.items() if c.gpu_pools}
    for key in gpu_clusters:
        view = ClusterView(plans[stack], key, {})
        for scraper in METRICS_SCRAPERS:
            assert not ingress_refused(view, "kube-system", dict(scraper), exporter), (key, scraper)
        assert not ingress_refused(view, GPU_OPERATOR_NAMESPACE, {"app": "nvidia-dcgm-exporter"}, engine), key
        assert not ingress_refused(
            view, gpu_health.HEALTH_NAMESPACE, {"app.kubernetes.io/name": gpu_health.AGENT}, engine
        )
        # And the policy does isolate: anything else is refused.
        assert ingress_refused(view, "research", {"app": "x"}, exporter), key
