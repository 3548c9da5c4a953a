"""GPU and fabric health on every GPU node (issue 22), as plain Kubernetes manifests.

Three parts, each with the least it needs:

- **The agent** (a DaemonSet per GPU pool, NVIDIA's DCGM image): `preflight` runs once per
  boot before the node takes work (GPU count, DCGM's diagnostic, InfiniBand ports at the
  size's speed), then `watch` repeats the passive checks (DCGM's health watches, which report
  XIDs and memory, PCIe, NVLink, thermal and power faults; GPU count; InfiniBand ports). Its
  checks hold no Kubernetes credential: they write the verdict into a node-feature-discovery
  feature file, and NFD (the GPU operator's) labels the node `platform.ai/preflight=passed|failed`
  and, on a fault, `platform.ai/gpu-fault=<check>`, which a NodeFeatureRule turns into the taint
  `platform.ai/gpu-unhealthy:NoSchedule`. A failed check is the pod's event (its readiness
  probe prints it) and, through kube-state-metrics' node labels, a metric and an alert.
- **The gate** (the agent pod's sidecar, planning/gpu_gate.py, the pod's only credential): keeps
  work off a boot that has not passed with a startup taint it applies before preflight starts,
  and cordons a node that failed (in the same write that lifts the taint) or whose passive
  checks hold a fault (before the fault is published). Why a startup taint and a cordon, not a
  label that Kueue's flavors require: the cluster autoscaler builds a pool's template for a
  scale-up from one of its real nodes that is Ready, stable for a minute and schedulable, and
  caches it for the life of the process (facts/autoscaler.py); a label earned at run time would
  be missing from a template taken while a node was still being checked, or from a failed node,
  and no gated job would ever fit it again: one failed node would freeze its pool. A node
  carrying a startup taint is not a candidate (the autoscaler counts it as upcoming), a cordoned
  node is not either, and startup taints are stripped from every template. AKS offers no taint
  the API server may remove: taints of the node-pool API are enforced by AKS's node webhook
  ("Use node taints": "aren't modifiable from the Kubernetes API"), and node initialization
  taints are a preview absent from the pinned SDK's API version (2025-09-01). Scale from zero
  needs only the pool's labels, which AKS puts on the template itself.
- **Remediation** (kured, the reboot daemon AKS documents for its nodes: MicrosoftDocs/
  azure-aks-docs upgrade-node-image-kured.md; on GPU nodes only): when the agent asks (a
  sentinel file, at most once per `minRebootInterval` per node), kured takes a cluster-wide
  lock held by at most `concurrency` nodes, waits while pods of admitted jobs run there
  (`waitForJobs`), cordons and drains the node through evictions (so PodDisruptionBudgets
  hold), reboots it and uncordons it; the preflight runs again on boot.
  A fault that survives stays tainted for a person (docs/gpus.md, "Health").
- **Rights**: the checks have none; the gate and kured may patch nodes (kured drains too), and
  a ValidatingAdmissionPolicy for each lets it touch only its own node (the service account
  token's node binding): the gate only its startup taint, the cordon and its annotation; kured
  only the fields a cordon and its lock annotations change.

Images come through the platform's registry: DCGM at the version the GPU operator pins, kured
at a release tag, the gate on Azure Linux's distroless Python.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from facts.gpu import (
    ACCELERATOR_LABEL,
    CORDON_ANNOTATION,
    GPU_VM_SIZES,
    LABEL_PREFIX,
    POOL_LABEL,
    PREFLIGHT_LABEL,
    PREFLIGHT_TAINT_KEY,
    PREFLIGHT_TAINT_VALUE,
    UNHEALTHY_TAINT_KEY,
)
from planning.admission import KUEUE_PODSET_LABEL
from planning.charts import NGC
from planning.cluster_traffic import (
    DCGM_PORT,
    GPU_GATE,
    GPU_HEALTH_NAMESPACE,
    GPU_OPERATOR_NAMESPACE,
    GPU_REMEDIATION,
)
from planning.gpu import node_agent_tolerations
from planning.images import PYTHON_SECURITY_CONTEXT, mirrored, python_image
from stackconfig.model import ClusterConfig, GpuHealthConfig, GpuPoolConfig, duration_seconds

HEALTH_NAMESPACE = GPU_HEALTH_NAMESPACE
AGENT = "gpu-health-agent"
REMEDIATION = GPU_REMEDIATION
FAULT_LABEL = f"{LABEL_PREFIX}/gpu-fault"
SCRIPT = Path(__file__).parent / "node_agents" / "gpu-health.sh"

# NVIDIA's DCGM image at the version gpu-operator v26.7.0 pins for its standalone host engine
# (`dcgm.version` in its values; tests/test_gpu_health.py checks they agree).
DCGM_REPOSITORY = f"{NGC}/cloud-native/dcgm"
DCGM_VERSION = "4.6.0-1-ubuntu24.04"
# The host engine the GPU operator runs on each GPU node with `dcgm.enabled` (assets/state-dcgm
# at v26.7.0: Service `nvidia-dcgm`, internalTrafficPolicy Local, so a client reaches the
# engine of its own node).
DCGM_SERVICE = "nvidia-dcgm"
# kured (kubereboot/kured), tag 1.23.0 (2026-06-30), published to ghcr.io by its release workflow.
KURED_REPOSITORY = "ghcr.io/kubereboot/kured"
KURED_VERSION = "1.23.0"
KURED_METRICS_PORT = 8080
# Where NFD's worker reads feature files: its `local` source (the customization guide of
# kubernetes-sigs/node-feature-discovery at v0.19.0, the version gpu-operator v26.7.0 bundles).
NFD_FEATURES_DIR = "/etc/kubernetes/node-feature-discovery/features.d"
# /var/run is a tmpfs: a reboot clears the sentinel. The reboot history survives in /var/lib.
SENTINEL_DIR = "/var/run/platform-gpu-health"
STATE_DIR = "/var/lib/platform-gpu-health"
NFD_API = "nfd.k8s-sigs.io/v1alpha1"
# What kured's drain needs (kured-rbac.yaml at 1.23.0), and its lock on its own DaemonSet.
REMEDIATION_RULES: list[dict[str, Any]] = [
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "delete", "get"]},
    {"apiGroups": ["apps"], "resources": ["daemonsets"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
]
REMEDIATION_LOCK_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["apps"], "resources": ["daemonsets"], "resourceNames": [REMEDIATION], "verbs": ["update"]},
]
# The service account token's node binding (KEP-4193, GA in Kubernetes 1.32), which
# admission sees as user info; kubernetes/kubernetes test/e2e/auth reads it the same way.
NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"
# Annotations kured writes on its node (cmd/kured/main.go at 1.23.0).
KURED_ANNOTATION_PREFIX = "weave.works/kured-"


# The one MIG profile that is a whole GPU (one instance of all its slices).
WHOLE_GPU_MIG_PROFILE = "MIG7g"
GATE = GPU_GATE
GATE_SCRIPT = Path(__file__).parent / "gpu_gate.py"
# The gate's token, mounted into the gate's container alone.
GATE_TOKEN_DIR = "/var/run/secrets/platform/gate"
# This boot's verdict (`passed` or `failed:<check>`), kept on the host's tmpfs: a restarted
# agent pod reuses it instead of running the diagnostic on GPUs that jobs now use.
BOOT_VERDICT = "preflight"
# Node fields the gate's guard holds fixed besides labels and annotations: whatever else a node
# patch could change that matters (an owner reference to a missing object would have the garbage
# collector delete the node).
GATE_FIXED_FIELDS = (
    ("metadata.finalizers", "[]"),
    ("metadata.ownerReferences", "[]"),
    ("spec.providerID", "''"),
    ("spec.podCIDR", "''"),
    ("spec.podCIDRs", "[]"),
    ("spec.configSource", "{}"),
)
# What the gate may do to its node (a JSON patch of its own node; its guard narrows it).
GATE_RULES: list[dict[str, Any]] = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "patch"]}]


def agent_script() -> str:
    return SCRIPT.read_text()


def gate_script() -> str:
    return GATE_SCRIPT.read_text()


def agent_name(pool: str) -> str:
    return f"{AGENT}-{pool}"


def pool_checks(pool: GpuPoolConfig, settings: GpuHealthConfig) -> dict[str, str]:
    """What the agent checks on this pool's nodes, as its environment."""
    size = GPU_VM_SIZES[pool.vm_size]
    interval = duration_seconds(settings.check_interval)
    remediation = settings.remediation
    # DCGM's diagnostic refuses GPUs whose MIG instances do not cover the whole GPU
    # (nvvs/src/Gpu.cpp IsMigModeDiagCompatible, NVIDIA/DCGM v4.6.0): there only the health
    # watches run.
    partitioned = bool(pool.mig_profile) and pool.mig_profile != WHOLE_GPU_MIG_PROFILE
    return {
        # DCGM counts physical GPUs, MIG or not.
        "EXPECTED_GPUS": str(size.gpus),
        # One InfiniBand link per GPU on the ND sizes.
        "IB_PORTS": str(size.gpus if size.infiniband else 0),
        "IB_GBPS": str(size.infiniband_gbps),
        "DIAG_LEVEL": "0" if partitioned else str(settings.diag_level),
        "CHECK_INTERVAL_SECONDS": str(interval),
        "REMEDIATE": str(remediation.enabled).lower(),
        "MIN_REBOOT_INTERVAL_SECONDS": str(duration_seconds(remediation.min_reboot_interval)),
        "PREFLIGHT_LABEL": PREFLIGHT_LABEL,
        "FAULT_LABEL": FAULT_LABEL,
        "DCGM_HOST": f"{DCGM_SERVICE}.{GPU_OPERATOR_NAMESPACE}.svc.cluster.local:{DCGM_PORT}",
    }


def _host_path(name: str, path: str, kind: str = "DirectoryOrCreate") -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path, "type": kind}}


def agent_daemonset(
    pool_name: str, pool: GpuPoolConfig, cluster: ClusterConfig, settings: GpuHealthConfig, login_server: str
) -> dict[str, Any]:
    """The agent on one GPU pool's nodes."""
    image = f"{mirrored(DCGM_REPOSITORY, login_server)}:{DCGM_VERSION}"
    env = [{"name": k, "value": v} for k, v in pool_checks(pool, settings).items()]
    mounts = [
        {"name": "script", "mountPath": "/agent", "readOnly": True},
        {"name": "status", "mountPath": "/status"},
        {"name": "features", "mountPath": "/host/features.d"},
        {"name": "sentinel", "mountPath": "/host/sentinel"},
        {"name": "state", "mountPath": "/host/state"},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    # Root to write into the host's directories; nothing else: no capabilities, no privilege.
    # InfiniBand ports are read from the container's own read-only /sys: RDMA devices are not
    # per network namespace in the shared mode the Network Operator's device plugin uses.
    security = {
        "runAsUser": 0,
        "runAsNonRoot": False,
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }

    def container(mode: str, cpu: str, memory: str) -> dict[str, Any]:
        return {
            "name": mode,
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "command": ["/bin/bash", "/agent/gpu-health.sh", mode],
            # dcgmi writes its log to the working directory; the root file system is read-only.
            "workingDir": "/tmp",
            "env": env,
            "volumeMounts": mounts,
            "securityContext": security,
            "resources": {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}},
        }

    watch = container("watch", "10m", "64Mi")
    gate = gate_container(login_server)
    # A failed check fails readiness; the kubelet records the probe's output (the check and
    # why) as the pod's `Unhealthy` event.
    watch["readinessProbe"] = {
        "exec": {"command": ["/bin/bash", "-c", "if [ -s /status/problem ]; then cat /status/problem; exit 1; fi"]},
        "periodSeconds": 30,
    }
    labels = {"app.kubernetes.io/name": AGENT, POOL_LABEL: pool_name}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": agent_name(pool_name), "namespace": HEALTH_NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            # A new agent runs preflight again, which would judge GPUs busy with jobs: a change
            # takes effect on a node's next boot (or when its agent pod is deleted).
            "updateStrategy": {"type": "OnDelete"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    # The gate's token is projected into its container alone.
                    "serviceAccountName": GATE,
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                    "priorityClassName": "system-node-critical",
                    "nodeSelector": {ACCELERATOR_LABEL: "nvidia", POOL_LABEL: pool_name},
                    "tolerations": node_agent_tolerations(cluster),
                    # The gate first (a sidecar whose startup probe waits until the node carries
                    # the taint), then preflight; the gate keeps running beside watch.
                    "initContainers": [gate, container("preflight", "100m", "256Mi")],
                    "containers": [watch],
                    "volumes": [
                        {"name": "script", "configMap": {"name": AGENT, "defaultMode": 0o555}},
                        {
                            "name": "gate-token",
                            "projected": {
                                "sources": [
                                    {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                                    {
                                        "configMap": {
                                            "name": "kube-root-ca.crt",
                                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                                        }
                                    },
                                ]
                            },
                        },
                        {"name": "status", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}},
                        _host_path("features", NFD_FEATURES_DIR),
                        _host_path("sentinel", SENTINEL_DIR),
                        _host_path("state", STATE_DIR),
                        {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
                    ],
                },
            },
        },
    }


def gate_container(login_server: str) -> dict[str, Any]:
    """The gate: a native sidecar (an init container that keeps running, Kubernetes 1.33 GA)."""
    python = "import os, sys; sys.exit(0 if os.path.exists('/status/armed') else 1)"
    env = {
        "TAINT_KEY": PREFLIGHT_TAINT_KEY,
        "ANNOTATION": CORDON_ANNOTATION,
        "STATUS_DIR": "/status",
        "BOOT_VERDICT": f"/host/sentinel/{BOOT_VERDICT}",
        "PERIOD_SECONDS": "5",
    }
    return {
        "name": "gate",
        "image": python_image(login_server),
        "imagePullPolicy": "IfNotPresent",
        "restartPolicy": "Always",
        "command": ["python3", "/agent/gpu_gate.py"],
        "env": [
            {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            *({"name": k, "value": v} for k, v in env.items()),
        ],
        # Preflight starts once the node carries the taint (or this boot was judged already).
        "startupProbe": {"exec": {"command": ["python3", "-c", python]}, "periodSeconds": 2, "failureThreshold": 900},
        "volumeMounts": [
            {"name": "script", "mountPath": "/agent", "readOnly": True},
            {"name": "status", "mountPath": "/status"},
            {"name": "sentinel", "mountPath": "/host/sentinel", "readOnly": True},
            {"name": "gate-token", "mountPath": GATE_TOKEN_DIR, "readOnly": True},
        ],
        "securityContext": PYTHON_SECURITY_CONTEXT,
        "resources": {"requests": {"cpu": "5m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
    }


def gate_guard() -> dict[str, Any]:
    """Admission for the gate's node writes: its own node only; of the taints only its startup
    taint, added or removed; a cordon, lifted only with its own annotation; no label and no
    other annotation."""
    account = f"system:serviceaccount:{HEALTH_NAMESPACE}:{GATE}"
    taints = "(has({0}.spec.taints) ? {0}.spec.taints : [])"
    others = "{0}.filter(t, t.key != '{1}')"
    annotations = "(has({0}.metadata.annotations) ? {0}.metadata.annotations : {{}})"
    new_a, old_a = annotations.format("object"), annotations.format("oldObject")
    key = CORDON_ANNOTATION
    unschedulable = "(has({0}.spec.unschedulable) && {0}.spec.unschedulable)"
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["nodes"]}
            ]
        },
        "matchConditions": [{"name": "is-gate", "expression": f"request.userInfo.username == '{account}'"}],
        "validations": [
            {
                "expression": f"'{NODE_NAME_EXTRA}' in request.userInfo.extra && "
                f"request.userInfo.extra['{NODE_NAME_EXTRA}'][0] == object.metadata.name",
                "message": f"{GATE} may change only the node it runs on",
            },
            {
                "expression": others.format(taints.format("object"), PREFLIGHT_TAINT_KEY)
                + " == "
                + others.format(taints.format("oldObject"), PREFLIGHT_TAINT_KEY)
                + f" && {taints.format('object')}.filter(t, t.key == '{PREFLIGHT_TAINT_KEY}')"
                f".all(t, t.value == '{PREFLIGHT_TAINT_VALUE}' && t.effect == 'NoSchedule')",
                "message": f"{GATE} may add or remove only {PREFLIGHT_TAINT_KEY}={PREFLIGHT_TAINT_VALUE}:NoSchedule",
            },
            {
                "expression": " && ".join(
                    f"(has(object.{field}) ? object.{field} : {empty}) == "
                    f"(has(oldObject.{field}) ? oldObject.{field} : {empty})"
                    for field, empty in GATE_FIXED_FIELDS
                ),
                "message": f"{GATE} may not change a node's finalizers, owners, provider ID, pod CIDRs or config",
            },
            {
                "expression": "(has(object.metadata.labels) ? object.metadata.labels : {}) == "
                "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})",
                "message": f"{GATE} may not change a node's labels",
            },
            {
                "expression": f"{new_a}.all(k, k == '{key}' || (k in {old_a} && {old_a}[k] == {new_a}[k])) && "
                f"{old_a}.all(k, k == '{key}' || k in {new_a})",
                "message": f"{GATE} may change only its own annotation ({key})",
            },
            {
                # Its annotation appears only in the write that cordons a schedulable node: a
                # cordon someone else made cannot be claimed, then lifted.
                "expression": f"!('{key}' in {new_a}) || ('{key}' in {old_a} && {old_a}['{key}'] == {new_a}['{key}']) || "
                f"({unschedulable.format('object')} && !{unschedulable.format('oldObject')})",
                "message": f"{GATE} may mark only a cordon it makes in the same write",
            },
            {
                "expression": f"{unschedulable.format('object')} || !{unschedulable.format('oldObject')} || "
                f"('{key}' in {old_a} && !('{key}' in {new_a}))",
                "message": f"{GATE} may lift only a cordon it made (with its annotation)",
            },
        ],
    }


def remediation_args(settings: GpuHealthConfig) -> list[str]:
    remediation = settings.remediation
    args = [
        "/usr/bin/kured",
        "--reboot-sentinel=/sentinel/reboot-required",
        f"--ds-namespace={HEALTH_NAMESPACE}",
        f"--ds-name={REMEDIATION}",
        f"--concurrency={remediation.concurrency}",
        "--period=1m",
        f"--drain-timeout={remediation.drain_timeout}",
        # A lock left by a node that died mid-reboot frees itself.
        "--lock-ttl=2h",
        "--annotate-nodes=true",
    ]
    if remediation.wait_for_jobs:
        # Any pod of an admitted Kueue job (the podset label Kueue puts on every pod it starts).
        args.append(f"--blocking-pod-selector={KUEUE_PODSET_LABEL}")
    return args


def remediation_daemonset(cluster: ClusterConfig, settings: GpuHealthConfig, login_server: str) -> dict[str, Any]:
    """kured on every GPU node: drains and reboots a node whose agent asked (kured-ds.yaml at 1.23.0)."""
    labels = {"app.kubernetes.io/name": REMEDIATION}
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": REMEDIATION, "namespace": HEALTH_NAMESPACE, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": REMEDIATION,
                    "priorityClassName": "system-node-critical",
                    # kured reboots through the host's init (nsenter into PID 1's mount namespace).
                    "hostPID": True,
                    "nodeSelector": {ACCELERATOR_LABEL: "nvidia"},
                    "tolerations": node_agent_tolerations(cluster),
                    "containers": [
                        {
                            "name": "kured",
                            "image": f"{mirrored(KURED_REPOSITORY, login_server)}:{KURED_VERSION}",
                            "imagePullPolicy": "IfNotPresent",
                            "command": remediation_args(settings),
                            "securityContext": {"privileged": True, "readOnlyRootFilesystem": True},
                            "env": [
                                {"name": "KURED_NODE_ID", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
                            ],
                            "ports": [{"containerPort": KURED_METRICS_PORT, "name": "metrics"}],
                            "volumeMounts": [{"name": "sentinel", "mountPath": "/sentinel", "readOnly": True}],
                            "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
                        }
                    ],
                    "volumes": [_host_path("sentinel", SENTINEL_DIR)],
                },
            },
        },
    }


def remediation_guard() -> dict[str, Any]:
    """Admission for kured's node writes: its own node only, and only what a cordon and kured's
    annotations change (not taints, labels, or anything else of the node)."""
    account = f"system:serviceaccount:{HEALTH_NAMESPACE}:{REMEDIATION}"
    others = f"!k.startsWith('{KURED_ANNOTATION_PREFIX}')"
    return {
        "failurePolicy": "Fail",
        "matchConstraints": {
            "resourceRules": [
                {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["nodes"]}
            ]
        },
        "matchConditions": [{"name": "is-remediation", "expression": f"request.userInfo.username == '{account}'"}],
        "variables": [
            {
                "name": "annotations",
                "expression": "has(object.metadata.annotations) ? object.metadata.annotations : {}",
            },
            {
                "name": "oldAnnotations",
                "expression": "has(oldObject.metadata.annotations) ? oldObject.metadata.annotations : {}",
            },
        ],
        "validations": [
            {
                "expression": f"'{NODE_NAME_EXTRA}' in request.userInfo.extra && "
                f"request.userInfo.extra['{NODE_NAME_EXTRA}'][0] == object.metadata.name",
                "message": "gpu-remediation may change only the node it runs on",
            },
            {
                "expression": "(has(object.spec.taints) ? object.spec.taints : []) == "
                "(has(oldObject.spec.taints) ? oldObject.spec.taints : []) && "
                "(has(object.metadata.labels) ? object.metadata.labels : {}) == "
                "(has(oldObject.metadata.labels) ? oldObject.metadata.labels : {})",
                "message": "gpu-remediation may not change a node's taints or labels",
            },
            {
                "expression": f"variables.annotations.all(k, {others} ? (k in variables.oldAnnotations && "
                "variables.oldAnnotations[k] == variables.annotations[k]) : true) && "
                f"variables.oldAnnotations.all(k, {others} ? k in variables.annotations : true)",
                "message": f"gpu-remediation may change only its own annotations ({KURED_ANNOTATION_PREFIX}*)",
            },
        ],
    }


def node_feature_rule() -> dict[str, Any]:
    """NFD turns the agent's fault label into the taint that keeps new work off the node."""
    return {
        "rules": [
            {
                "name": "gpu-fault",
                "taints": [{"key": UNHEALTHY_TAINT_KEY, "value": "true", "effect": "NoSchedule"}],
                "matchFeatures": [{"feature": "local.label", "matchExpressions": {FAULT_LABEL: {"op": "Exists"}}}],
            }
        ]
    }
