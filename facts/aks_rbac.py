"""How Azure RBAC for Kubernetes names the requests it authorizes on an AKS cluster.

A request on a kind of a Kubernetes API group that Azure's operations list knows is the data
action `Microsoft.ContainerService/managedClusters/[<group>/]<resource>/<verb>` (no group
segment for the core group); get/list/watch are `read`, create/update/patch `write`,
delete/deletecollection `delete` (learn.microsoft.com/azure/role-based-access-control/permissions/containers,
MicrosoftDocs/azure-docs articles/role-based-access-control/permissions/containers.md).
Every other kind (custom resources, and kinds the list does not name) is
`.../managedClusters/customresources/<verb>` since resource provider API 2025-02-01
(learn.microsoft.com/azure/aks/manage-azure-rbac, "custom resources"; kubeguard/guard PR #409:
a resource that is not in the operations map is treated as a custom resource).
An assignment may be scoped to the cluster or to `<cluster id>/namespaces/<name>`.
"""

from __future__ import annotations

DATA_ACTION_PREFIX = "Microsoft.ContainerService/managedClusters"
CUSTOM_RESOURCES = "customresources"

# API groups whose kinds Azure's operations list names one by one ("" is the core group).
LISTED_GROUPS = frozenset(
    {
        "",
        "admissionregistration.k8s.io",
        "apiextensions.k8s.io",
        "apiregistration.k8s.io",
        "apps",
        "autoscaling",
        "batch",
        "certificates.k8s.io",
        "coordination.k8s.io",
        "discovery.k8s.io",
        "events.k8s.io",
        "extensions",
        "metrics.k8s.io",
        "networking.k8s.io",
        "node.k8s.io",
        "policy",
        "rbac.authorization.k8s.io",
        "scheduling.k8s.io",
        "storage.k8s.io",
    }
)
# Kinds of listed groups that the published list (permissions/containers.md) does not name:
# the API server's ValidatingAdmissionPolicy objects (GA in Kubernetes 1.30) are authorized as
# custom resources.
UNLISTED_RESOURCES = frozenset(
    {
        "admissionregistration.k8s.io/validatingadmissionpolicies",
        "admissionregistration.k8s.io/validatingadmissionpolicybindings",
    }
)


def data_action(group: str, resource: str, verb: str) -> str:
    """The data action Azure checks for `verb` (read, write, delete) on `<group>/<resource>`."""
    qualified = f"{group}/{resource}" if group else resource
    if group not in LISTED_GROUPS or qualified in UNLISTED_RESOURCES:
        qualified = CUSTOM_RESOURCES
    return f"{DATA_ACTION_PREFIX}/{qualified}/{verb}"
