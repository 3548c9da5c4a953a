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

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from facts import keda
from facts import pod_security as pss
from facts.gpu import LABEL_PREFIX
from facts.istio import INGRESS_NAMESPACE as ISTIO_INGRESS_NAMESPACE
from planning.network_policy import NAMESPACE_NAME_LABEL
from planning.pod_security import NAMESPACE_CLASS_LABEL, TRAINING_CLASS, TRAINING_EXTRA_CAPABILITIES
from planning.priorities import WORKLOAD_PRIORITIES
from planning.pss_paths import Step, parse
from planning.queues import LOCAL_QUEUE, TEAM_LABEL
from planning.sandbox import HIGH_RISK_NAMESPACE_LABEL, RUNTIME_CLASS, SANDBOX_LABEL
from planning.serving_scaling import TRIGGER_AUTHENTICATION

ADMISSION_API = "admissionregistration.k8s.io/v1"
GPU_RESOURCE = "nvidia.com/gpu"
POLICY_PREFIX = "platform"
# Container lists that share a type; ephemeral containers are a type of their own in CEL.
CONTAINERS = "object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : [])"
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
    # What it matches: new pods (and ephemeral containers added to them), or Jobs.
    kind: str = "Pod"

    @property
    def policy_name(self) -> str:
        return f"{POLICY_PREFIX}-{self.name}"


def _no_field(path: str, field: str) -> str:
    return f"!has({path}.{field}) || !{path}.{field}"


def _every_container(expression: str, *, ephemeral: bool = True) -> str:
    """`expression` (over `c`) holds for every container; ephemeral ones too where the field exists."""
    check = f"variables.containers.all(c, {expression})"
    return f"{check} && {EPHEMERAL}.all(c, {expression})" if ephemeral else check


# What Kueue (v0.19.2) puts on the pods it manages, so admission can tell them from pods that
# skipped the queue: a Job's pods are created only after admission, with the PodSet label on
# their template (pkg/controller/jobframework/reconciler.go, getPodSetsInfoFromStatus); a plain
# pod with a queue label gets Kueue's scheduling gate from its mutating webhook at creation
# (pkg/controller/jobs/pod/pod_webhook.go), which runs before validating admission policies.
KUEUE_PODSET_LABEL = "kueue.x-k8s.io/podset"
# Who creates a Job's pods: kube-controller-manager's job controller, signed in with its own
# service account (--use-service-account-credentials). A PodSet label on a pod anyone else
# creates is not Kueue's. Not verifiable offline on AKS's managed control plane: dev's Audit
# binding warns on every training pod, before staging denies, if AKS signs in otherwise.
JOB_CONTROLLER = "system:serviceaccount:kube-system:job-controller"
KUEUE_QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
KUEUE_ADMISSION_GATE = "kueue.x-k8s.io/admission"

WORKLOAD_NAMESPACES = {"matchExpressions": [{"key": TEAM_LABEL, "operator": "Exists"}]}
HIGH_RISK_NAMESPACES = {"matchLabels": {HIGH_RISK_NAMESPACE_LABEL: "true"}}
TRAINING_NAMESPACES = {"matchLabels": {NAMESPACE_CLASS_LABEL: TRAINING_CLASS}}


def _cel_literal(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def _allowed(value: str, allowed: tuple[object, ...]) -> str:
    """CEL: `value` is one of the table's allowed values (other than Undefined)."""
    choices = [a for a in allowed if a != pss.UNDEFINED]
    prefixes = [a for a in choices if isinstance(a, str) and a.endswith("*")]
    exact = [a for a in choices if a not in prefixes]
    terms = [f"{value}.startsWith({_cel_literal(p[:-1])})" for p in prefixes]
    if len(exact) == 1:
        terms.insert(0, f"{value} == {_cel_literal(exact[0])}")
    elif exact:
        terms.insert(0, f"{value} in [{', '.join(_cel_literal(a) for a in exact)}]")
    return " || ".join(terms) or "false"


def _walk(base: str, steps: tuple[Step, ...], check: Callable[[str], str], depth: int = 0) -> str:
    """CEL that holds when every value at the path below `base` passes `check` (absent passes)."""
    step, rest = steps[0], steps[1:]
    field = f"{base}.{step.name}"
    if step.every_item:
        item = f"x{depth}"
        inner = _walk(item, rest, check, depth + 1) if rest else f"({check(item)})"
        return f"!has({field}) || {field}.all({item}, {inner})"
    if step.key_prefix is not None:
        key = f"k{depth}"
        return (
            f"!has({field}) || {field}.all({key}, !{key}.startsWith({_cel_literal(step.key_prefix)}) || "
            f"({check(f'{field}[{key}]')}))"
        )
    if not rest:
        return f"!has({field}) || ({check(field)})"
    return f"!has({field}) || ({_walk(field, rest, check, depth)})"


def pod_security_rules(level: str, extra_capabilities: tuple[str, ...] = ()) -> tuple[Rule, ...]:
    """A Pod Security level's `values` controls as CEL, with extra capabilities allowed.

    Only the baseline level is needed (training namespaces); restricted's `required` checks
    are not generated."""
    rules = []
    for control in pss.controls(level):
        if control.check != "values":
            raise ValueError(f"{control.name}: only value controls become CEL")
        allowed = control.allowed + (extra_capabilities if control.name == "Capabilities" else ())
        check = partial(_allowed, allowed=allowed)
        expression = " && ".join(f"({_walk('object', parse(path), check)})" for path in control.paths).replace(
            " || (false)", ""
        )
        if control.waived_by:
            field, value = control.waived_by
            path = f"object.{field}"
            expression = f"(has({path}) && {path} == {_cel_literal(value)}) || ({expression})"
        shown = ", ".join("undefined" if a == pss.UNDEFINED else _cel_literal(a) for a in allowed)
        paths = ", ".join(control.paths[:2]) + (", ..." if len(control.paths) > 2 else "")
        rules.append(Rule(expression, f"Pod Security {level} ({control.name}): {paths} may only be {shown}"))
    return tuple(rules)


# A container of a training namespace that adds IPC_LOCK may run as root: a capability added to
# a non-root container never reaches its effective set (kubernetes#56374, still open; measured
# in NVIDIA/nvidia-container-toolkit#2037: uid 1000 keeps CapEff 0 and an 8 MiB memlock limit,
# and NCCL silently falls back to TCP when it cannot register memory). File capabilities on the
# interpreter would put it in secure-exec mode, where glibc ignores the LD_LIBRARY_PATH CUDA
# images rely on. docs/gpus.md, "Training namespaces".
IB_ROOT_EXEMPT = (
    f"(has(namespaceObject.metadata.labels) && '{NAMESPACE_CLASS_LABEL}' in namespaceObject.metadata.labels && "
    f"namespaceObject.metadata.labels['{NAMESPACE_CLASS_LABEL}'] == '{TRAINING_CLASS}' && has(c.securityContext) && "
    "has(c.securityContext.capabilities) && has(c.securityContext.capabilities.add) && "
    + " && ".join(f"'{cap}' in c.securityContext.capabilities.add" for cap in TRAINING_EXTRA_CAPABILITIES)
    + ")"
)


def _uses_gpu(container: str) -> str:
    return (
        f"has({container}.resources) && ((has({container}.resources.requests) && "
        f"'{GPU_RESOURCE}' in {container}.resources.requests) || (has({container}.resources.limits) && "
        f"'{GPU_RESOURCE}' in {container}.resources.limits))"
    )


def admission_rules(login_server: str) -> list[AdmissionRule]:
    """Every policy, given the registry images must come from (`<name>.azurecr.io`)."""
    registry = login_server.rstrip("/") + "/"
    security = "has(c.securityContext)"
    return [
        AdmissionRule(
            "no-privileged",
            (
                Rule(
                    _every_container(f"!{security} || {_no_field('c.securityContext', 'privileged')}"),
                    "privileged containers are not allowed in workload namespaces",
                ),
            ),
            WORKLOAD_NAMESPACES,
        ),
        AdmissionRule(
            "no-host-access",
            (
                Rule(f"{_no_field('object.spec', 'hostNetwork')}", "pods may not use the host's network (hostNetwork)"),
                Rule(
                    f"{_no_field('object.spec', 'hostPID')}",
                    "pods may not share the host's process namespace (hostPID)",
                ),
                Rule(f"{_no_field('object.spec', 'hostIPC')}", "pods may not share the host's IPC namespace (hostIPC)"),
                Rule(
                    _every_container("!has(c.ports) || c.ports.all(p, !has(p.hostPort) || p.hostPort == 0)"),
                    "containers may not bind host ports (hostPort)",
                ),
                Rule(
                    "!has(object.spec.volumes) || object.spec.volumes.all(v, !has(v.hostPath))",
                    "pods may not mount host paths (hostPath volumes)",
                ),
            ),
            WORKLOAD_NAMESPACES,
        ),
        AdmissionRule(
            "run-as-non-root",
            (
                Rule(
                    _every_container(
                        f"{IB_ROOT_EXEMPT} || (({security} && has(c.securityContext.runAsNonRoot)) ? c.securityContext.runAsNonRoot : "
                        "(has(object.spec.securityContext) && has(object.spec.securityContext.runAsNonRoot) && "
                        "object.spec.securityContext.runAsNonRoot))",
                        ephemeral=False,
                    ),
                    "containers must run as non-root: set securityContext.runAsNonRoot: true on the pod or container "
                    "(in a training namespace, a container that adds IPC_LOCK is exempt)",
                ),
                Rule(
                    "!(has(object.spec.securityContext) && has(object.spec.securityContext.runAsUser) && "
                    "object.spec.securityContext.runAsUser == 0) && "
                    + _every_container(
                        f"{IB_ROOT_EXEMPT} || !{security} || !has(c.securityContext.runAsUser) || "
                        "c.securityContext.runAsUser != 0"
                    ),
                    "containers may not run as user 0 (root), except those that add IPC_LOCK in a training namespace "
                    "(set runAsUser on that container, not the pod)",
                ),
            ),
            WORKLOAD_NAMESPACES,
        ),
        AdmissionRule(
            "gpu-limits",
            (
                Rule(
                    _every_container(
                        f"!({_uses_gpu('c')}) || "
                        f"(has(c.resources.limits) && '{GPU_RESOURCE}' in c.resources.limits && "
                        "'cpu' in c.resources.limits && 'memory' in c.resources.limits)",
                        ephemeral=False,
                    ),
                    f"containers that use {GPU_RESOURCE} must set limits for it and for cpu and memory "
                    "(a GPU node's CPU and memory are shared by the jobs on its GPUs)",
                ),
            ),
            WORKLOAD_NAMESPACES,
        ),
        AdmissionRule(
            "gpu-queued",
            (
                Rule(
                    f"!variables.containers.exists(c, {_uses_gpu('c')}) || (has(object.metadata.labels) && "
                    f"(('{KUEUE_PODSET_LABEL}' in object.metadata.labels && "
                    f"(request.operation != 'CREATE' || request.userInfo.username == '{JOB_CONTROLLER}')) || "
                    f"('{KUEUE_QUEUE_LABEL}' in object.metadata.labels && has(object.spec.schedulingGates) && "
                    f"object.spec.schedulingGates.exists(g, g.name == '{KUEUE_ADMISSION_GATE}'))))",
                    f"pods that use {GPU_RESOURCE} run through Kueue: create them from a Job labelled "
                    f"{KUEUE_QUEUE_LABEL}: {LOCAL_QUEUE} (or label the pod so), and the team's GPU quota counts them",
                ),
            ),
            WORKLOAD_NAMESPACES,
        ),
        AdmissionRule(
            "gpu-jobs-queued",
            (
                Rule(
                    f"!object.spec.template.spec.containers.exists(c, {_uses_gpu('c')}) || "
                    f"(has(object.metadata.labels) && '{KUEUE_QUEUE_LABEL}' in object.metadata.labels)",
                    f"Jobs that use {GPU_RESOURCE} name a queue: label the Job {KUEUE_QUEUE_LABEL}: {LOCAL_QUEUE}",
                ),
            ),
            WORKLOAD_NAMESPACES,
            kind="Job",
        ),
        AdmissionRule(
            "platform-registry",
            (
                Rule(
                    _every_container(f"c.image.startsWith('{registry}')"),
                    f"images must come from the platform's registry ({registry}); "
                    "add a cache rule (platform:registry.cacheRules) for an upstream image",
                ),
            ),
            WORKLOAD_NAMESPACES,
        ),
        AdmissionRule(
            "pinned-images",
            (
                Rule(
                    # A tag is a colon after the last slash (a registry's port is before it).
                    _every_container(
                        "c.image.contains('@sha256:') || (c.image.matches(':[^/:]+$') && !c.image.endsWith(':latest'))"
                    ),
                    "images must name a version tag other than latest, or a digest",
                ),
            ),
            WORKLOAD_NAMESPACES,
        ),
        AdmissionRule(
            "workload-priority",
            (
                Rule(
                    "!has(object.spec.priorityClassName) || object.spec.priorityClassName in "
                    f"[{', '.join(repr(p) for p in WORKLOAD_PRIORITIES)}]",
                    f"workload pods may use the priority classes {', '.join(WORKLOAD_PRIORITIES)} only "
                    "(platform-critical keeps the platform's controllers and Kafka from being preempted)",
                ),
            ),
            WORKLOAD_NAMESPACES,
        ),
        AdmissionRule(
            "sandboxed-runtime",
            (
                Rule(
                    f"has(object.spec.runtimeClassName) && object.spec.runtimeClassName == '{RUNTIME_CLASS}'",
                    f"pods of high-risk namespaces must run sandboxed: set runtimeClassName: {RUNTIME_CLASS}",
                ),
                # Onto the sandbox pool, whose taint keeps everything else off it.
                Rule(
                    f"has(object.spec.nodeSelector) && '{SANDBOX_LABEL}' in object.spec.nodeSelector && "
                    f"object.spec.nodeSelector['{SANDBOX_LABEL}'] == 'kata' && has(object.spec.tolerations) && "
                    f"object.spec.tolerations.exists(t, has(t.key) && t.key == '{SANDBOX_LABEL}')",
                    f"pods of high-risk namespaces run on the sandbox pool: set nodeSelector {SANDBOX_LABEL}: kata "
                    f"and tolerate the taint {SANDBOX_LABEL}",
                ),
            ),
            HIGH_RISK_NAMESPACES,
            always_deny=True,
        ),
        # A team's Services are what the serving gateway routes to and whom Private Link exposes:
        # none aliases another (ExternalName) or lists endpoints by hand (no selector), through
        # which a team could point the gateway at another team's model or beyond the cluster;
        # none publishes its own Private Link service (docs/serving.md).
        AdmissionRule(
            "service-kinds",
            (
                Rule(
                    "!has(object.spec.type) || object.spec.type != 'ExternalName'",
                    "ExternalName Services are not allowed in workload namespaces: name the Service's pods",
                ),
                Rule(
                    "has(object.spec.selector) && size(object.spec.selector) > 0",
                    "Services in workload namespaces select their pods (no hand-written endpoints)",
                ),
                Rule(
                    "!has(object.metadata.annotations) || "
                    "!object.metadata.annotations.exists(k, k.startsWith('service.beta.kubernetes.io/azure-pls-'))",
                    "Private Link services are the serving gateway's alone (platform:serving.privateLink)",
                ),
            ),
            WORKLOAD_NAMESPACES,
            always_deny=True,
            kind="Service",
        ),
        # Istio's Gateways select pods cluster-wide (classic selectors are not scoped to their
        # namespace): anyone who could create one elsewhere could attach servers to the serving
        # gateway's pods. Only the gateway's own namespace holds them.
        AdmissionRule(
            "istio-gateways-platform-only",
            (Rule("false", f"Istio Gateways live in {ISTIO_INGRESS_NAMESPACE} only (the platform's)"),),
            {
                "matchExpressions": [
                    {"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": [ISTIO_INGRESS_NAMESPACE]}
                ]
            },
            always_deny=True,
            kind="IstioGateway",
        ),
        # KEDA's operator signs in as the `serving-scaler` identity for any TriggerAuthentication
        # that names it, and sends the token to its triggers' servers (planning/serving_scaling.py).
        # Whoever writes custom resources in a team namespace (the tenants' deploy, MultiKueue's
        # dispatchers) could otherwise have it sent anywhere: only the platform's authentication
        # uses workload identity there, and every trigger using it queries Azure Monitor.
        AdmissionRule(
            "keda-authentication-platform-only",
            (
                Rule(
                    f"!has(object.spec.podIdentity) || object.metadata.name == '{TRIGGER_AUTHENTICATION}'",
                    f"in workload namespaces only the platform's {TRIGGER_AUTHENTICATION} signs KEDA in with an "
                    "identity (platform:serving.scaling)",
                ),
            ),
            WORKLOAD_NAMESPACES,
            always_deny=True,
            kind="KedaAuthentication",
        ),
        AdmissionRule(
            "keda-triggers-to-azure-monitor",
            (
                Rule(
                    "!has(object.spec.triggers) || object.spec.triggers.all(t, !has(t.authenticationRef) || "
                    "((!has(t.authenticationRef.kind) || t.authenticationRef.kind == 'TriggerAuthentication') && "
                    f"(t.authenticationRef.name != '{TRIGGER_AUTHENTICATION}' || (t.type == 'prometheus' && "
                    "has(t.metadata.serverAddress) && "
                    f"t.metadata.serverAddress.matches('{keda.PROMETHEUS_QUERY_ENDPOINT}')))))",
                    f"triggers that use {TRIGGER_AUTHENTICATION} query an Azure Monitor workspace "
                    "(https://<workspace>.<region>.prometheus.monitor.azure.com); none uses a cluster-wide "
                    "authentication",
                ),
            ),
            WORKLOAD_NAMESPACES,
            always_deny=True,
            kind="KedaScaler",
        ),
        # Training namespaces enforce Pod Security `privileged` (IPC_LOCK is beyond baseline and
        # Pod Security has no per-capability exemption); this holds their pods to baseline plus
        # exactly IPC_LOCK, and always denies, as Pod Security's enforce label would have.
        AdmissionRule(
            "pod-security-training",
            pod_security_rules(pss.BASELINE, TRAINING_EXTRA_CAPABILITIES),
            TRAINING_NAMESPACES,
            always_deny=True,
        ),
    ]


def validation_actions(action: str) -> list[str]:
    """A binding's actions for the environment's `Deny` or `Audit` (Deny and Warn never together)."""
    return ["Deny", "Audit"] if action == "Deny" else ["Warn", "Audit"]


MATCH = {
    # New pods, and ephemeral containers added to running ones. Never other pod updates: a pod
    # admitted before a binding denied must still get its finalizers and scheduling gates removed.
    "Pod": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]},
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"], "resources": ["pods/ephemeralcontainers"]},
    ],
    # Jobs as written and as changed (a queue label removed later counts too).
    "Job": [{"apiGroups": ["batch"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["jobs"]}],
    "Service": [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["services"]}
    ],
    "KedaAuthentication": [
        {
            "apiGroups": ["keda.sh"],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["triggerauthentications"],
        }
    ],
    "KedaScaler": [
        {
            "apiGroups": ["keda.sh"],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["scaledobjects", "scaledjobs"],
        }
    ],
    "IstioGateway": [
        {
            "apiGroups": ["networking.istio.io"],
            "apiVersions": ["*"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["gateways"],
        }
    ],
}


def policy_manifest(rule: AdmissionRule) -> dict[str, Any]:
    return {
        "apiVersion": ADMISSION_API,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": rule.policy_name, "labels": {f"{LABEL_PREFIX}/guardrail": rule.name}},
        "spec": {
            # A policy that cannot be evaluated rejects the pod instead of waving it through.
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": MATCH[rule.kind]},
            "variables": [{"name": "containers", "expression": CONTAINERS}] if rule.kind == "Pod" else [],
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
