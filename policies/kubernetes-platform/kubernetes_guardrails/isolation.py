"""Isolation inside the cluster: default-deny networking, FQDN policies that hold, admission
that denies, and no cluster-admin bindings."""

from __future__ import annotations

from collections.abc import Mapping

from guardrail import lookup, resource_policy, stack_policy
from pulumi_policy import Severity

NAMESPACE = "kubernetes:core/v1:Namespace"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"
CILIUM_POLICIES = (
    "kubernetes:cilium.io/v2:CiliumNetworkPolicy",
    "kubernetes:cilium.io/v2:CiliumClusterwideNetworkPolicy",
)
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
BINDING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding"
ROLE_BINDINGS = (
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding",
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding",
)
FQDN_POLICY_MODES = ("FQDN", "L7")


def _cluster(resource) -> str | None:
    """The Kubernetes provider (so the cluster) a resource belongs to: names repeat across clusters."""
    return resource.provider.urn if resource.provider else None


def _denies_everything(props: Mapping) -> bool:
    spec = lookup(props, "spec") or {}
    selector = spec.get("podSelector")
    types = set(spec.get("policyTypes") or [])
    return (
        isinstance(selector, Mapping)
        and not selector.get("matchLabels")
        and not selector.get("matchExpressions")
        and {"Ingress", "Egress"} <= types
        and not list(spec.get("ingress") or [])
        and not list(spec.get("egress") or [])
    )


def namespace_default_deny(args, report):
    denied = {
        (_cluster(r), lookup(r.props, "metadata.namespace"))
        for r in args.resources
        if r.resource_type == NETWORK_POLICY and _denies_everything(r.props)
    }
    for resource in args.resources:
        if resource.resource_type != NAMESPACE:
            continue
        name = lookup(resource.props, "metadata.name")
        if (_cluster(resource), name) not in denied:
            report(
                f"Namespace {name!r} has no default-deny NetworkPolicy: every pod there may send and receive "
                "anything the cluster's network allows.",
                resource.urn,
            )


def _uses_fqdns(props: Mapping) -> bool:
    for rule in list(lookup(props, "spec.egress") or []):
        if list(rule.get("toFQDNs") or []):
            return True
        for port in list(rule.get("toPorts") or []):
            if lookup(port, "rules.dns"):
                return True
    return False


def _enforces_fqdn_policies(cluster: Mapping) -> bool:
    advanced = lookup(cluster, "networkProfile.advancedNetworking") or {}
    security = advanced.get("security") or {}
    # AKS reads a missing advancedNetworkPolicies as FQDN once security is enabled.
    mode = security.get("advancedNetworkPolicies", "FQDN")
    return advanced.get("enabled") is True and security.get("enabled") is True and mode in FQDN_POLICY_MODES


def fqdn_policies_need_acns(args, report):
    clusters = {lookup(r.props, "resourceName"): r for r in args.resources if r.resource_type == MANAGED_CLUSTER}
    for resource in args.resources:
        if resource.resource_type not in CILIUM_POLICIES or not _uses_fqdns(resource.props):
            continue
        identifier = lookup(resource.provider.props, "clusterIdentifier") if resource.provider else None
        cluster = clusters.get(identifier)
        where = f"{resource.resource_type.rsplit(':', 1)[-1]} {resource.name}"
        if cluster is None:
            report(
                f"{where} filters egress by name, but its provider names no cluster of this stack "
                "(clusterIdentifier), so nothing shows that the cluster enforces it.",
                resource.urn,
            )
        elif not _enforces_fqdn_policies(cluster.props):
            report(
                f"{where} filters egress by name on cluster {identifier}, which does not enable Advanced "
                "Container Networking Services' FQDN policies: AKS would not enforce it.",
                resource.urn,
            )


def admission_binding_denies(args, report):
    if args.resource_type != BINDING:
        return
    actions = [str(a) for a in list(lookup(args.props, "spec.validationActions") or [])]
    if "Deny" not in actions:
        report(
            f"Binding {lookup(args.props, 'metadata.name')!r} only {' and '.join(actions) or 'does nothing'}: "
            "pods that break the policy are admitted."
        )


ADMIN_SCHEMA = {
    # Entra group object IDs that may hold cluster-admin through Kubernetes RBAC.
    "adminGroups": {"type": "array", "items": {"type": "string"}, "default": []},
}


def no_cluster_admin_binding(args, report):
    if args.resource_type not in ROLE_BINDINGS or lookup(args.props, "roleRef.name") != "cluster-admin":
        return
    allowed = set(args.get_config().get("adminGroups") or [])
    for subject in list(lookup(args.props, "subjects") or []):
        if subject.get("kind") != "Group" or subject.get("name") not in allowed:
            report(
                f"{lookup(args.props, 'metadata.name')!r} binds cluster-admin to {subject.get('kind')} "
                f"{subject.get('name')!r}, which is not an admin group."
            )


POLICIES = [
    stack_policy(
        "k8s-namespace-default-deny",
        "Every namespace the platform creates has a NetworkPolicy that denies all ingress and egress by default.",
        namespace_default_deny,
        severity=Severity.HIGH,
        remediation="Create the namespace through the platform's components, which isolate it "
        "(components/isolation.py), and open only what its pods need.",
    ),
    stack_policy(
        "k8s-fqdn-policies-need-acns",
        "Cilium FQDN egress policies exist only on clusters with Advanced Container Networking Services' FQDN "
        "policies on, which AKS needs to enforce them.",
        fqdn_policies_need_acns,
        severity=Severity.HIGH,
        remediation="Keep platform:clusters.<cluster>.advancedNetworking true on every cluster whose namespaces "
        "reach hosts by name.",
    ),
    resource_policy(
        "k8s-admission-binding-denies",
        "The platform's ValidatingAdmissionPolicyBindings deny violating pods (not only audit or warn).",
        admission_binding_denies,
        severity=Severity.HIGH,
        remediation="Set platform:admission.action: Deny in the stack (staging and prod do).",
    ),
    resource_policy(
        "k8s-no-cluster-admin-binding",
        "No ClusterRoleBinding or RoleBinding grants cluster-admin outside the admin groups.",
        no_cluster_admin_binding,
        severity=Severity.CRITICAL,
        remediation="Grant people cluster-wide rights through platform:entra.adminGroupObjectIds (Azure RBAC), "
        "and teams namespace roles through platform:teams.",
        config=ADMIN_SCHEMA,
    ),
]
