"""Entra ID workload identities: narrowly scoped roles, trusted issuers only."""

from __future__ import annotations

import re

from guardrail import lookup, stack_policy
from pulumi_policy import Severity

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
FEDERATED_CREDENTIAL = "azure-native:managedidentity:FederatedIdentityCredential"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"

# Built-in roles that administer the scope they are granted on (same GUIDs in every tenant).
PRIVILEGED_ROLES = {
    "8e3af657-a8ff-443c-a75c-2fe8c4bcb635": "Owner",
    "b24988ac-6180-42a0-ab88-20f7382dd24c": "Contributor",
    "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9": "User Access Administrator",
    "f58310d9-a9f6-439a-9e8d-f62e7b41a168": "Role Based Access Control Administrator",
}


def _workload_identity_urns(resources) -> set[str]:
    """Identities that pods federate into: those with a federated credential in this stack."""
    urns = set()
    for resource in resources:
        if resource.resource_type == FEDERATED_CREDENTIAL:
            urns |= {
                r.urn for r in resource.property_dependencies.get("resourceName", []) if r.resource_type == IDENTITY
            }
    return urns


def _workload_grants(resources):
    workloads = _workload_identity_urns(resources)
    for resource in resources:
        if resource.resource_type != ROLE_ASSIGNMENT:
            continue
        principals = [r for r in resource.property_dependencies.get("principalId", []) if r.urn in workloads]
        if principals:
            yield resource, principals[0]


def broad_scope(scope: str) -> str | None:
    """'tenant root', 'management group', 'subscription' or 'resource group' when `scope` is that broad, else None."""
    parts = [p for p in scope.strip("/").split("/") if p]
    lowered = [p.lower() for p in parts]
    if not parts:
        return "tenant root"
    if lowered[:2] == ["providers", "microsoft.management"] or "managementgroups" in lowered[:4]:
        return "management group"
    if len(parts) <= 2 and lowered[:1] == ["subscriptions"]:
        return "subscription"
    if len(parts) <= 4 and lowered[2:3] == ["resourcegroups"]:
        return "resource group"
    return None


def role_scope(args, report):
    for grant, identity in _workload_grants(args.resources):
        breadth = broad_scope(str(lookup(grant.props, "scope") or "/"))
        if breadth:
            report(
                f"{grant.name} grants workload identity {identity.name} a role at {breadth} scope "
                f"({lookup(grant.props, 'scope')}); scope it to the one resource it needs.",
                grant.urn,
            )


POLICY_ASSIGNMENT = "azure-native:authorization:PolicyAssignment"
# The built-in pod security initiatives the platform assigns on its clusters (Azure/azure-policy
# policySetDefinitions/Kubernetes; components/admission.py assigns them).
POD_SECURITY_INITIATIVES = (
    "/providers/Microsoft.Authorization/policySetDefinitions/a8640138-9b0a-4a28-b8cb-1666c838647d",
    "/providers/Microsoft.Authorization/policySetDefinitions/42b8ef37-b724-4e24-bbc8-7a7708edfe00",
)
# The baseline initiative's five definitions, which training namespaces get one by one with
# IPC_LOCK allowed (facts/azure_policy.py; a test keeps the two lists equal).
BASELINE_DEFINITIONS = tuple(
    f"/providers/Microsoft.Authorization/policyDefinitions/{guid}"
    for guid in (
        "95edb821-ddaf-4404-9732-666045e056b4",
        "82985f06-dc18-4a48-bc1c-b9f4f0098cfe",
        "47a1ee2f-2a2a-4576-bf2a-e0e36709c2b8",
        "c26596ff-4d70-4e6a-9a30-c2506bd2f80c",
        "098fc59e-46c7-4d99-9b16-64990e543d75",
    )
)
ALLOWED_DEFINITIONS_SCHEMA = {
    "allowedDefinitions": {
        "type": "array",
        "items": {"type": "string"},
        "default": [*POD_SECURITY_INITIATIVES, *BASELINE_DEFINITIONS],
    },
}


def _is_cluster(scope: str) -> bool:
    """An AKS cluster, or an on-premises site's Arc connected cluster."""
    parts = [p.lower() for p in scope.strip("/").split("/")]
    return len(parts) == 8 and parts[4:7] in (
        ["providers", "microsoft.containerservice", "managedclusters"],
        ["providers", "microsoft.kubernetes", "connectedclusters"],
    )


def allowed_policy_assignments(args, report):
    allowed = {
        d.lower()
        for d in args.get_config().get("allowedDefinitions", [*POD_SECURITY_INITIATIVES, *BASELINE_DEFINITIONS])
    }
    for resource in args.resources:
        if resource.resource_type != POLICY_ASSIGNMENT:
            continue
        definition = str(lookup(resource.props, "policyDefinitionId") or "")
        scope = str(lookup(resource.props, "scope") or "")
        if definition.lower() not in allowed:
            report(
                f"{resource.name} assigns {definition}, which is not a definition the platform means to "
                "assign (allowedDefinitions).",
                resource.urn,
            )
        if scope and not _is_cluster(scope):
            report(
                f"{resource.name} assigns policy at {scope}; the deploy identity assigns policy on "
                "the platform's clusters only.",
                resource.urn,
            )


def _is_capacity_reservation(scope: str) -> bool:
    return "/providers/microsoft.compute/capacityreservationgroups/" in scope.lower()


def no_privilege_escalation(args, report):
    """Any principal: kubelets, control planes, groups, workload identities."""
    workloads = {resource.urn for resource, _ in _workload_grants(args.resources)}
    for resource in args.resources:
        if resource.resource_type != ROLE_ASSIGNMENT:
            continue
        role = str(lookup(resource.props, "roleDefinitionId") or "").rsplit("/", 1)[-1].lower()
        scope = str(lookup(resource.props, "scope") or "/")
        name = PRIVILEGED_ROLES.get(role)
        reservation = name == "Contributor" and _is_capacity_reservation(scope) and resource.urn not in workloads
        if name and not reservation:
            report(
                f"{resource.name} grants {name} at {scope}; the platform grants no administrative role "
                "(Contributor only on a capacity reservation group, which AKS requires).",
                resource.urn,
            )
        breadth = broad_scope(scope)
        if breadth in ("tenant root", "management group", "subscription"):
            report(f"{resource.name} assigns a role at {breadth} scope ({scope}).", resource.urn)


TRUSTED_ISSUERS_SCHEMA = {
    "trustedIssuers": {"type": "array", "items": {"type": "string", "format": "uri"}, "default": []},
}


# What an AKS cluster's OIDC issuer URL looks like: https://<region>.oic.prod-aks.azure.com/<tenant>/<cluster>/
# (learn.microsoft.com/azure/aks/use-oidc-issuer).
AKS_ISSUER = re.compile(r"^https://[a-z0-9]+\.oic\.prod-aks\.azure\.com/[0-9a-f-]{36}/[0-9a-f-]{36}/$")


def issuer_in_stack(args, report):
    trusted = set(args.get_config().get("trustedIssuers", []))
    for resource in args.resources:
        if resource.resource_type != FEDERATED_CREDENTIAL:
            continue
        issuer = lookup(resource.props, "issuer")
        clusters = [r for r in resource.property_dependencies.get("issuer", []) if r.resource_type == MANAGED_CLUSTER]
        if clusters:
            # Taken from a cluster; where the value is known it must look like an AKS issuer.
            if isinstance(issuer, str) and not AKS_ISSUER.match(issuer) and issuer not in trusted:
                report(f"{resource.name} trusts {issuer}, which is not an AKS OIDC issuer.", resource.urn)
            continue
        if issuer not in trusted:
            report(
                f"{resource.name} trusts tokens from {issuer}, which is not the OIDC issuer of a cluster "
                "in this stack (nor a trustedIssuers entry).",
                resource.urn,
            )


POLICIES = [
    stack_policy(
        "policy-assignment-allowed-definitions",
        "Azure Policy assignments assign only the definitions the platform means to, on its clusters.",
        allowed_policy_assignments,
        severity=Severity.HIGH,
        remediation="The deploy identity may write any policy assignment in its subscription (a custom role: "
        "conditions cannot narrow policy assignments), so this review is what keeps it to the "
        "pod security initiatives; add a definition to allowedDefinitions with a review.",
        config=ALLOWED_DEFINITIONS_SCHEMA,
    ),
    stack_policy(
        "role-assignments-not-privileged",
        "No principal (cluster, kubelet, workload identity or group) gets Owner, User Access "
        "Administrator, role administration or Contributor, nor any role at subscription, management "
        "group or tenant scope.",
        no_privilege_escalation,
        severity=Severity.CRITICAL,
        remediation="Grant the narrowest built-in role on the one resource the principal needs; Contributor "
        "only for a cluster identity on a GPU pool's capacity reservation group.",
    ),
    stack_policy(
        "workload-identity-narrow-scope",
        "Workload identities hold no role at subscription, management group or resource group scope.",
        role_scope,
        severity=Severity.HIGH,
        remediation="Grant the role on the one resource (storage container, vault secret, registry, event hub) "
        "the workload uses; planning/roles.py builds such scopes.",
    ),
    stack_policy(
        "federated-credential-trusted-issuer",
        "Federated identity credentials trust only the OIDC issuers of this stack's clusters.",
        issuer_in_stack,
        severity=Severity.CRITICAL,
        remediation="Take the issuer from the cluster's oidcIssuerProfile.issuerURL output; list other issuers "
        "(e.g. GitHub Actions) in trustedIssuers only with a waiver.",
        config=TRUSTED_ISSUERS_SCHEMA,
    ),
]
