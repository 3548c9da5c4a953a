"""Kubernetes objects the program creates: pod security, pinned charts, private load balancers."""

from __future__ import annotations

import re
from collections.abc import Mapping

from guardrail import BuiltIn, lookup, resource_policy, stack_policy
from pulumi_policy import Severity

NAMESPACE = "kubernetes:core/v1:Namespace"
SERVICE = "kubernetes:core/v1:Service"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
HELM_CHART = "kubernetes:helm.sh/v4:Chart"
KAFKA = "kubernetes:kafka.strimzi.io/v1:Kafka"

# Where each workload kind keeps its pod spec.
POD_SPEC_PATHS = {
    "kubernetes:core/v1:Pod": "spec",
    "kubernetes:apps/v1:Deployment": "spec.template.spec",
    "kubernetes:apps/v1:StatefulSet": "spec.template.spec",
    "kubernetes:apps/v1:DaemonSet": "spec.template.spec",
    "kubernetes:apps/v1:ReplicaSet": "spec.template.spec",
    "kubernetes:batch/v1:Job": "spec.template.spec",
    "kubernetes:batch/v1:CronJob": "spec.jobTemplate.spec.template.spec",
}
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")
HOST_NAMESPACES = ("hostNetwork", "hostPID", "hostIPC")

PSS_ENFORCE = "pod-security.kubernetes.io/enforce"
VAP_BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
# A training namespace (planning/pod_security.py): Pod Security at privileged, and the platform's
# baseline-plus-IPC_LOCK admission policy, which must bind to it and deny, in its place.
NAMESPACE_CLASS_LABEL = "platform.ai/namespace-class"
TRAINING_CLASS = "training"
PSS_SAFE_LEVELS = ("baseline", "restricted")
INTERNAL_LB = "service.beta.kubernetes.io/azure-load-balancer-internal"
# An exact chart version: 1.2.3 or v1.2.3, optionally with a pre-release or build suffix.
EXACT_VERSION = re.compile(r"^v?\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")


def _pod_spec(args) -> Mapping | None:
    path = POD_SPEC_PATHS.get(args.resource_type)
    return lookup(args.props, path) if path else None


def _containers(spec: Mapping):
    for field in CONTAINER_LISTS:
        for container in list(spec.get(field) or []):
            yield field, container


# Namespace -> why its node agents may run privileged or share the host's PID namespace; a
# reviewed exception (the GPU health namespace's kured reboots its node through the host's init).
NODE_AGENT_SCHEMA = {
    "nodeAgentNamespaces": {
        "type": "object",
        "additionalProperties": {"type": "string", "minLength": 10},
        "default": {},
    },
}


def _node_agent(args) -> bool:
    namespace = lookup(args.props, "metadata.namespace")
    return namespace in args.get_config().get("nodeAgentNamespaces", {})


def no_privileged_containers(args, report):
    spec = _pod_spec(args)
    if spec is None or _node_agent(args):
        return
    for field, container in _containers(spec):
        context = container.get("securityContext") or {}
        if context.get("privileged") is True:
            report(f"{field} {container.get('name')!r} is privileged.")
        added = [str(c).upper() for c in list(lookup(context, "capabilities.add") or [])]
        if "SYS_ADMIN" in added or "ALL" in added:
            report(f"{field} {container.get('name')!r} adds capabilities {added}.")


def no_host_namespaces(args, report):
    spec = _pod_spec(args)
    if spec is None or _node_agent(args):
        return
    for field in HOST_NAMESPACES:
        if spec.get(field) is True:
            report(f"The pod sets {field}: true.")
    for field, container in _containers(spec):
        for port in list(container.get("ports") or []):
            if port.get("hostPort"):
                report(f"{field} {container.get('name')!r} binds hostPort {port.get('hostPort')}.")


PSS_SCHEMA = {
    # Namespace -> why it may run privileged pods; a reviewed exception, not a default.
    "privilegedNamespaces": {
        "type": "object",
        "additionalProperties": {"type": "string", "minLength": 10},
        "default": {},
    },
}


def _selects(selector: Mapping, labels: Mapping) -> bool:
    """Whether a matchLabels-only namespace selector selects these labels."""
    if selector.get("matchExpressions"):
        return False
    wanted = selector.get("matchLabels") or {}
    return bool(wanted) and all(labels.get(k) == v for k, v in wanted.items())


def _guards_training(binding, labels: Mapping) -> bool:
    spec = lookup(binding.props, "spec") or {}
    return (
        "Deny" in list(spec.get("validationActions") or [])
        and str(spec.get("policyName", "")).endswith("pod-security-training")
        and _selects(lookup(spec, "matchResources.namespaceSelector") or {}, labels)
    )


def _cluster(resource) -> str | None:
    """The cluster a Kubernetes object goes to: its provider's clusterIdentifier."""
    return lookup(resource.provider.props, "clusterIdentifier") if resource.provider else None


def namespace_pod_security(args, report):
    bindings = [r for r in args.resources if r.resource_type == VAP_BINDING]
    for resource in args.resources:
        if resource.resource_type != NAMESPACE:
            continue
        name = lookup(resource.props, "metadata.name")
        labels = lookup(resource.props, "metadata.labels") or {}
        level = labels.get(PSS_ENFORCE)
        if level in PSS_SAFE_LEVELS or name in args.get_config().get("privilegedNamespaces", {}):
            continue
        if labels.get(NAMESPACE_CLASS_LABEL) == TRAINING_CLASS:
            if any(_guards_training(b, labels) for b in bindings if _cluster(b) == _cluster(resource)):
                continue
            report(
                f"Training namespace {name!r} enforces Pod Security {level!r}, but no admission binding of "
                "the pod-security-training policy denies in it: nothing holds its pods to baseline.",
                resource.urn,
            )
            continue
        report(
            f"Namespace {name!r} enforces Pod Security level {level!r}: without {PSS_ENFORCE} set to baseline "
            "or restricted, any pod there may run privileged or share the node's namespaces.",
            resource.urn,
        )


def helm_pinned(args, report):
    if args.resource_type not in (HELM_RELEASE, HELM_CHART):
        return
    version = lookup(args.props, "version")
    chart = lookup(args.props, "chart")
    if not version:
        report(f"Chart {chart!r} has no version: each `pulumi up` would install whatever is newest.")
    elif not EXACT_VERSION.match(str(version)):
        report(f"Chart {chart!r} version {version!r} is a range, not one release.")
    if lookup(args.props, "devel") is True:
        report(f"Chart {chart!r} allows development versions (devel: true).")


def _internal(annotations) -> bool:
    return str((annotations or {}).get(INTERNAL_LB, "")).lower() == "true"


def no_public_load_balancer(args, report):
    if args.resource_type == SERVICE:
        if lookup(args.props, "spec.type") == "LoadBalancer" and not _internal(
            lookup(args.props, "metadata.annotations")
        ):
            report(
                f"Service {lookup(args.props, 'metadata.name')!r} is a public LoadBalancer; annotate it "
                f"{INTERNAL_LB}: \"true\"."
            )
    elif args.resource_type == KAFKA:
        # Strimzi creates the Services of `loadbalancer` listeners from the Kafka resource.
        template = lookup(args.props, "spec.kafka.template") or {}
        for listener in list(lookup(args.props, "spec.kafka.listeners") or []):
            if listener.get("type") != "loadbalancer":
                continue
            configuration = listener.get("configuration") or {}
            bootstrap = _internal(lookup(configuration, "bootstrap.annotations")) or _internal(
                lookup(template, "externalBootstrapService.metadata.annotations")
            )
            per_broker = list(configuration.get("brokers") or [])
            brokers = (bool(per_broker) and all(_internal(b.get("annotations")) for b in per_broker)) or _internal(
                lookup(template, "perPodService.metadata.annotations")
            )
            if not (bootstrap and brokers):
                report(
                    f"Kafka listener {listener.get('name')!r} creates public load balancers; annotate its "
                    f"bootstrap and per-broker services {INTERNAL_LB}: \"true\"."
                )


POLICIES = [
    resource_policy(
        "k8s-no-privileged-containers",
        "Pods the platform creates run no privileged containers and add no SYS_ADMIN/ALL capabilities.",
        no_privileged_containers,
        severity=Severity.CRITICAL,
        remediation="Drop securityContext.privileged and the added capabilities; a node agent that needs them "
        "goes in a namespace listed in nodeAgentNamespaces (with its reason) and in k8s-namespace-pod-security's "
        "privilegedNamespaces.",
        builtin=BuiltIn(
            "95edb821-ddaf-4404-9732-666045e056b4", "Kubernetes cluster should not allow privileged containers"
        ),
        config=NODE_AGENT_SCHEMA,
    ),
    resource_policy(
        "k8s-no-host-namespaces",
        "Pods the platform creates share no host network, PID or IPC namespace and bind no host ports.",
        no_host_namespaces,
        severity=Severity.HIGH,
        remediation="Remove hostNetwork/hostPID/hostIPC and hostPort; expose the pod through a Service. A node "
        "agent that needs them goes in a namespace listed in nodeAgentNamespaces, with its reason.",
        builtin=BuiltIn(
            "47a1ee2f-2a2a-4576-bf2a-e0e36709c2b8", "Kubernetes cluster containers should not share host namespaces"
        ),
        config=NODE_AGENT_SCHEMA,
    ),
    stack_policy(
        "k8s-namespace-pod-security",
        "Every namespace the platform creates enforces the baseline or restricted Pod Security Standard, "
        "except reviewed privileged namespaces and training namespaces, where the platform's admission "
        "policy enforces baseline plus IPC_LOCK and denies.",
        namespace_pod_security,
        severity=Severity.HIGH,
        remediation=f"Label the namespace {PSS_ENFORCE}: baseline (or restricted). A namespace that must run "
        "node agents goes in privilegedNamespaces with its reason.",
        config=PSS_SCHEMA,
    ),
    resource_policy(
        "helm-release-pinned",
        "Helm releases install one exact chart version.",
        helm_pinned,
        severity=Severity.MEDIUM,
        remediation="Set version to an exact release (planning/charts.py pins every chart).",
    ),
    resource_policy(
        "k8s-no-public-load-balancer",
        "Services of type LoadBalancer (including Strimzi listeners) use Azure internal load balancers.",
        no_public_load_balancer,
        severity=Severity.CRITICAL,
        remediation=f"Annotate the Service {INTERNAL_LB}: \"true\" (for Strimzi, through the listener's "
        "configuration or spec.kafka.template).",
        builtin=BuiltIn(
            "3fc4dc25-5baf-40d8-9b05-7fe74c1bc64e", "Kubernetes clusters should use internal load balancers"
        ),
    ),
]
