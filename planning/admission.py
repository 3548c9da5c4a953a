"""The platform's admission rules for workload pods, as ValidatingAdmissionPolicies (CEL).

Built into Kubernetes (admissionregistration.k8s.io/v1), so no controller or webhook runs:
each policy below gets a binding that applies it to pods of team namespaces, with the
environment's action (`platform:admission.action`): `Deny` rejects a violating pod (and
records an audit annotation); `Audit` admits it, records the annotation and warns the
client, which is how dev learns what staging and prod will refuse.

Sandboxing is not a matter of taste: pods of high-risk namespaces must run in a Kata VM, so
that binding always denies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planning.gpu import LABEL_PREFIX
from planning.priorities import WORKLOAD_PRIORITIES
from planning.queues import TEAM_LABEL
from planning.sandbox import HIGH_RISK_NAMESPACE_LABEL, RUNTIME_CLASS, SANDBOX_LABEL

ADMISSION_API = "admissionregistration.k8s.io/v1"
GPU_RESOURCE = "nvidia.com/gpu"
POLICY_PREFIX = "platform"
# Container lists that share a type; ephemeral containers are a type of their own in CEL.
CONTAINERS = (
    "object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])"
)
EPHEMERAL = "(has(object.spec.ephemeralContainers) ? object.spec.ephemeralContainers : [])"


@dataclass(frozen=True)
class Rule:
    expression: str
    message: str


@dataclass(frozen=True)
class AdmissionRule:
    """One ValidatingAdmissionPolicy: what it checks and why, in the words a user sees."""

    name: str
    rules: tuple[Rule, ...]
    # Namespaces it binds to: team namespaces, or only the high-risk ones.
    namespace_selector: dict[str, Any]
    # Always deny, whatever the environment's action.
    always_deny: bool = False

    @property
    def policy_name(self) -> str:
        return f"{POLICY_PREFIX}-{self.name}"


def _no_field(path: str, field: str) -> str:
    return f"!has({path}.{field}) || !{path}.{field}"


def _every_container(expression: str, *, ephemeral: bool = True) -> str:
    """`expression` (over `c`) holds for every container; ephemeral ones too where the field exists."""
    check = f"variables.containers.all(c, {expression})"
    return f"{check} && {EPHEMERAL}.all(c, {expression})" if ephemeral else check


WORKLOAD_NAMESPACES = {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}
HIGH_RISK_NAMESPACES = {"matchLabels": {HIGH_RISK_NAMESPACE_LABEL: "true"}}


def admission_rules(login_server: str) -> list[AdmissionRule]:
    """Every policy, given the registry images must come from (`<name>.azurecr.io`)."""
    registry = login_server.rstrip("/") + "/"
    security = "has(c.securityContext)"
    return [
        AdmissionRule("no-privileged", (
            Rule(_every_container(f"!{security} || {_no_field('c.securityContext', 'privileged')}"),
                 "privileged containers are not allowed in workload namespaces"),
        ), WORKLOAD_NAMESPACES),
        AdmissionRule("no-host-access", (
            Rule(f"{_no_field('object.spec', 'hostNetwork')}", "pods may not use the host's network (hostNetwork)"),
            Rule(f"{_no_field('object.spec', 'hostPID')}", "pods may not share the host's process namespace (hostPID)"),
            Rule(f"{_no_field('object.spec', 'hostIPC')}", "pods may not share the host's IPC namespace (hostIPC)"),
            Rule(_every_container("!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)"),
                 "containers may not bind host ports (hostPort)"),
            Rule("!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))",
                 "pods may not mount host paths (hostPath volumes)"),
        ), WORKLOAD_NAMESPACES),
        AdmissionRule("run-as-non-root", (
            Rule(
                _every_container(
                    f"({security} && has(c.securityContext.runAsNonRoot)) ? c.securityContext.runAsNonRoot : "
                    "(has(object.spec.securityContext) && has(object.spec.securityContext.runAsNonRoot) && "
                    "object.spec.securityContext.runAsNonRoot)",
                    ephemeral=False,
                ),
                "containers must run as non-root: set securityContext.runAsNonRoot: true on the pod or container",
            ),
            Rule(
                "!(has(object.spec.securityContext) && has(object.spec.securityContext.runAsUser) && "
                "object.spec.securityContext.runAsUser == 0) && "
                + _every_container(f"!{security} || !has(c.securityContext.runAsUser) || c.securityContext.runAsUser != 0"),
                "containers may not run as user 0 (root)",
            ),
        ), WORKLOAD_NAMESPACES),
        AdmissionRule("gpu-limits", (
            Rule(
                _every_container(
                    f"!has(c.resources) || !((has(c.resources.requests) && '{GPU_RESOURCE}' in c.resources.requests) || "
                    f"(has(c.resources.limits) && '{GPU_RESOURCE}' in c.resources.limits)) || "
                    f"(has(c.resources.limits) && '{GPU_RESOURCE}' in c.resources.limits && "
                    "'cpu' in c.resources.limits && 'memory' in c.resources.limits)",
                    ephemeral=False,
                ),
                f"containers that use {GPU_RESOURCE} must set limits for it and for cpu and memory "
                "(a GPU node's CPU and memory are shared by the jobs on its GPUs)",
            ),
        ), WORKLOAD_NAMESPACES),
        AdmissionRule("platform-registry", (
            Rule(_every_container(f"c.image.startsWith('{registry}')"),
                 f"images must come from the platform's registry ({registry}); "
                 "add a cache rule (platform:registry.cacheRules) for an upstream image"),
        ), WORKLOAD_NAMESPACES),
        AdmissionRule("pinned-images", (
            Rule(
                # A tag is a colon after the last slash (a registry's port is before it).
                _every_container(
                    "c.image.contains('@sha256:') || (c.image.matches(':[^/:]+$') && !c.image.endsWith(':latest'))"
                ),
                "images must name a version tag other than latest, or a digest",
            ),
        ), WORKLOAD_NAMESPACES),
        AdmissionRule("workload-priority", (
            Rule(
                "!has(object.spec.priorityClassName) || object.spec.priorityClassName in "
                f"[{', '.join(repr(p) for p in WORKLOAD_PRIORITIES)}]",
                f"workload pods may use the priority classes {', '.join(WORKLOAD_PRIORITIES)} only "
                "(platform-critical keeps the platform's controllers and Kafka from being preempted)",
            ),
        ), WORKLOAD_NAMESPACES),
        AdmissionRule("sandboxed-runtime", (
            Rule(f"has(object.spec.runtimeClassName) && object.spec.runtimeClassName == '{RUNTIME_CLASS}'",
                 f"pods of high-risk namespaces must run sandboxed: set runtimeClassName: {RUNTIME_CLASS}"),
            # Onto the sandbox pool, whose taint keeps everything else off it.
            Rule(f"has(object.spec.nodeSelector) && '{SANDBOX_LABEL}' in object.spec.nodeSelector && "
                 f"object.spec.nodeSelector['{SANDBOX_LABEL}'] == 'kata' && has(object.spec.tolerations) && "
                 f"object.spec.tolerations.exists(t, has(t.key) && t.key == '{SANDBOX_LABEL}')",
                 f"pods of high-risk namespaces run on the sandbox pool: set nodeSelector {SANDBOX_LABEL}: kata "
                 f"and tolerate the taint {SANDBOX_LABEL}"),
        ), HIGH_RISK_NAMESPACES, always_deny=True),
    ]


def validation_actions(action: str) -> list[str]:
    """A binding's actions for the environment's `Deny` or `Audit` (Deny and Warn never together)."""
    return ["Deny", "Audit"] if action == "Deny" else ["Warn", "Audit"]


def policy_manifest(rule: AdmissionRule) -> dict[str, Any]:
    return {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": rule.policy_name, "labels": {f"{LABEL_PREFIX}/guardrail": rule.name}},
        "spec": {
            # A policy that cannot be evaluated rejects the pod instead of waving it through.
            "failurePolicy": "Fail",
            # New pods, and ephemeral containers added to running ones. Never other pod
            # updates: a pod admitted before a binding denied must still get its finalizers
            # and scheduling gates removed.
            "matchConstraints": {
                "resourceRules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]},
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"],
                     "resources": ["pods/ephemeralcontainers"]},
                ]
            },
            "variables": [{"name": "containers", "expression": CONTAINERS}],
            "validations": [{"expression": r.expression, "message": r.message} for r in rule.rules],
            "auditAnnotations": [],
        },
    }


def binding_manifest(rule: AdmissionRule, action: str) -> dict[str, Any]:
    return {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": rule.policy_name, "labels": {f"{LABEL_PREFIX}/guardrail": rule.name}},
        "spec": {
            "policyName": rule.policy_name,
            "validationActions": validation_actions("Deny" if rule.always_deny else action),
            "matchResources": {"namespaceSelector": rule.namespace_selector},
        },
    }
