"""Pod Security Standards labels for the namespaces the platform creates.

Every namespace enforces a level (the kubernetes-platform policy pack checks it): `restricted`
for the platform's own controllers, `baseline` for team namespaces (no privileged pods, no host
namespaces, but images that run as root still work), and `privileged` only where node agents
need host access. Below `restricted`, pods that would fail it are also warned about and audited,
so teams see what tightening would break.

Training namespaces (`teams.<name>.trainingNamespaces`) are the one class in between: a
multi-node InfiniBand job needs IPC_LOCK, which `baseline` forbids, and Pod Security has no
per-capability exemption. There Pod Security enforces `privileged`, and the platform's
ValidatingAdmissionPolicy `platform-pod-security-training` (planning/admission.py) enforces
`baseline` minus exactly that capability, control by control from facts/pod_security.py.
"""

from __future__ import annotations

from planning.queues import TEAM_LABEL
from planning.sandbox import HIGH_RISK_NAMESPACE_LABEL
from stackconfig.model import TeamConfig

ENFORCE = "pod-security.kubernetes.io/enforce"
WARN = "pod-security.kubernetes.io/warn"
AUDIT = "pod-security.kubernetes.io/audit"

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
# Marks a training namespace; the admission binding of its baseline-plus-IPC_LOCK policy selects on it.
NAMESPACE_CLASS_LABEL = "platform.ai/namespace-class"
TRAINING_CLASS = "training"
# The one capability training pods may add beyond baseline's: NCCL registers memory with the
# InfiniBand adapters (GPUDirect RDMA), which needs it unless the memlock limit is unlimited.
TRAINING_EXTRA_CAPABILITIES = ("IPC_LOCK",)


def pod_security_labels(level: str) -> dict[str, str]:
    labels = {ENFORCE: level}
    if level == BASELINE:
        labels |= {WARN: RESTRICTED, AUDIT: RESTRICTED}
    return labels


def training_namespace_labels() -> dict[str, str]:
    """Pod Security out of the way, the class label in: admission enforces baseline + IPC_LOCK."""
    return {ENFORCE: PRIVILEGED, WARN: RESTRICTED, AUDIT: RESTRICTED, NAMESPACE_CLASS_LABEL: TRAINING_CLASS}


def team_namespace_labels(team: str, spec: TeamConfig, namespace: str) -> dict[str, str]:
    """A team namespace's labels (on AKS and at a site): its team, and its Pod Security level
    (training namespaces: admission's baseline with IPC_LOCK), high risk where declared."""
    training = namespace in spec.training_namespaces
    labels = {TEAM_LABEL: team, **(training_namespace_labels() if training else pod_security_labels(BASELINE))}
    if namespace in spec.high_risk_namespaces:
        labels[HIGH_RISK_NAMESPACE_LABEL] = "true"
    return labels
