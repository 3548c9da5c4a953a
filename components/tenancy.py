"""Who may do what in one cluster: team namespaces, workload service accounts, and the
AKS Azure RBAC roles of people (Entra groups).

- The admin groups get Azure Kubernetes Service RBAC Cluster Admin on the cluster.
- Each team's groups get RBAC Writer (or Reader, for reader groups) on each of the team's
  namespaces only (`<cluster>/namespaces/<ns>` scopes), never on the cluster.
- Every group gets the Cluster User Role, which lets it fetch the (credential-free,
  kubelogin) kubeconfig.
- Workload service accounts carry their identity's client ID for the workload identity
  webhook; pods opt in with the label `azure.workload.identity/use: "true"`. They mount no
  Kubernetes API token unless the workload declares `kubernetesApi`, and neither does each
  namespace's `default` service account.
- Each namespace denies all traffic but what planning.cluster_traffic allows it, and is
  labelled high-risk (pods must run sandboxed) where its team says so.
- No ClusterRoleBinding is created: cluster-wide rights exist only through the admin
  groups' Azure RBAC role.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as kubernetes
from pulumi_azure_native import authorization

from components.aliases import former_parent, moved_from
from components.isolation import isolate
from components.rbac import assign_role
from facts.workload_identity import CLIENT_ID_ANNOTATION, TENANT_ID_ANNOTATION
from planning.naming import WORKLOAD_LABEL
from planning.network_policy import NamespaceTraffic
from planning.pod_security import team_namespace_labels
from planning.workloads import STORAGE_CONFIG_MAP
from stackconfig.model import TeamConfig

CLUSTER_ADMIN = "Azure Kubernetes Service RBAC Cluster Admin"
CLUSTER_USER = "Azure Kubernetes Service Cluster User Role"
NAMESPACE_ROLES = {"writer": "Azure Kubernetes Service RBAC Writer", "reader": "Azure Kubernetes Service RBAC Reader"}


@dataclass(frozen=True)
class ServiceAccountSpec:
    workload: str
    namespace: str
    name: str
    client_id: pulumi.Input[str]
    kubernetes_api: bool = False


@dataclass(frozen=True)
class ClusterTenancyArgs:
    environment: str
    cluster_key: str
    cluster_id: pulumi.Input[str]
    teams: dict[str, TeamConfig]
    admin_group_object_ids: list[str]
    service_accounts: list[ServiceAccountSpec]
    tenant_id: pulumi.Input[str]
    subscription_id: pulumi.Input[str]
    # Each team namespace's traffic (planning.cluster_traffic): default deny plus its allows;
    # its keys are the team namespaces this cluster has (streaming ones on streaming clusters).
    traffic: dict[str, NamespaceTraffic]
    # Team namespaces the cluster's own unit creates (streaming: the Flink operator's Roles
    # go there with the operator): granted and given service accounts here, not created.
    made_elsewhere: frozenset[str] = frozenset()
    # Within one stack, what the service accounts there wait for (those namespaces).
    namespaces_ready: list[pulumi.Resource] = field(default_factory=list)
    # Where this cluster's jobs read and write blobs (planning/workloads.py, storage_locations):
    # the `platform-storage` ConfigMap of each team namespace.
    storage_locations: dict[str, str] = field(default_factory=dict)


def group_grants(args: ClusterTenancyArgs) -> list[tuple[str, str, str]]:
    """(role, scope suffix below the cluster, group object ID) for every person-facing grant."""
    return admin_grants(args.admin_group_object_ids) + team_grants(args)


def admin_grants(admin_group_object_ids: list[str]) -> list[tuple[str, str, str]]:
    """The platform admins: cluster admin and the credentials to reach the cluster. The cluster's
    own unit grants these; the tenants' identity may not hand out cluster admin."""
    return [(role, "", group) for group in admin_group_object_ids for role in (CLUSTER_ADMIN, CLUSTER_USER)]


def team_grants(args: ClusterTenancyArgs) -> list[tuple[str, str, str]]:
    """Each team's groups: writer or reader on its namespaces, and the cluster's credentials
    (unless an admin grant gives them already)."""
    grants = []
    for team in args.teams.values():
        for namespace in (ns for ns in team.namespaces if ns in args.traffic):
            grants += [(NAMESPACE_ROLES["writer"], f"/namespaces/{namespace}", g) for g in team.entra_group_object_ids]
            grants += [(NAMESPACE_ROLES["reader"], f"/namespaces/{namespace}", g) for g in team.reader_group_object_ids]
    every_group = dict.fromkeys(group for _, _, group in grants if group not in args.admin_group_object_ids)
    return grants + [(CLUSTER_USER, "", group) for group in every_group]


def assign_group_grants(
    name: str,
    grants: list[tuple[str, str, str]],
    *,
    environment: str,
    cluster_key: str,
    cluster_id: pulumi.Input[str],
    subscription_id: pulumi.Input[str],
    parent: pulumi.Resource,
    aliases: list[pulumi.Alias] | None = None,
) -> None:
    """Azure RBAC for Kubernetes: one role assignment per (role, scope below the cluster, group)."""
    cluster_scope_key = f"{environment}/{cluster_key}/cluster"
    for role, below, group in grants:
        suffix = below.replace("/namespaces/", "-ns-")
        assign_role(
            f"{name}-{role.lower().replace(' ', '-')}{suffix}-{group}",
            role=role,
            scope=pulumi.Output.concat(cluster_id, below),
            scope_key=cluster_scope_key + below,
            principal_id=group,
            principal_key=f"group/{group}",
            principal_type=authorization.PrincipalType.GROUP,
            subscription_id=subscription_id,
            parent=parent,
            aliases=aliases,
        )


@dataclass(frozen=True)
class ClusterAdminsArgs:
    environment: str
    cluster_key: str
    cluster_id: pulumi.Input[str]
    admin_group_object_ids: list[str]
    subscription_id: pulumi.Input[str]


class ClusterAdmins(pulumi.ComponentResource):
    """The platform admins' grants on one cluster (cluster admin, cluster user): part of the
    cluster's own unit, so that only its identity may grant cluster admin."""

    def __init__(self, name: str, args: ClusterAdminsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:tenancy:ClusterAdmins", name, None, opts)
        # Named (and once parented) as the tenancy's; the alias keeps them across the split of
        # a deployed single-stack environment (docs/migration.md).
        prefix = f"tenancy-{args.cluster_key}"
        assign_group_grants(
            prefix,
            admin_grants(args.admin_group_object_ids),
            environment=args.environment,
            cluster_key=args.cluster_key,
            cluster_id=args.cluster_id,
            subscription_id=args.subscription_id,
            parent=self,
            aliases=moved_from(prefix, "platform:tenancy:ClusterTenancy", opts),
        )
        self.register_outputs({})


class ClusterTenancy(pulumi.ComponentResource):
    """Outputs: `namespaces[name]` (Namespace resources other components place objects in)."""

    namespaces: dict[str, kubernetes.core.v1.Namespace]

    def __init__(
        self,
        name: str,
        args: ClusterTenancyArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:tenancy:ClusterTenancy", name, None, opts)
        # Team namespaces used to belong to the GPU stack; the alias keeps them (and everything
        # running in them) across that move instead of deleting and recreating them.
        former = former_parent(f"gpu-{args.cluster_key}", "platform:gpu:Stack", opts)
        self.namespaces = {
            namespace: kubernetes.core.v1.Namespace(
                f"{name}-ns-{namespace}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(
                    name=namespace, labels=team_namespace_labels(team, spec, namespace)
                ),
                opts=pulumi.ResourceOptions(
                    parent=self,
                    provider=provider,
                    aliases=[pulumi.Alias(name=f"gpu-{args.cluster_key}-ns-{namespace}", parent=former)],
                ),
            )
            for team, spec in args.teams.items()
            for namespace in spec.namespaces
            if namespace in args.traffic and namespace not in args.made_elsewhere
        }
        for namespace, resource in self.namespaces.items():
            if args.storage_locations:
                # Per cluster: a job MultiKueue moves to another region finds that region's copy
                # and checkpoint location there, though its spec is copied unchanged.
                kubernetes.core.v1.ConfigMap(
                    f"{name}-storage-{namespace}",
                    metadata=kubernetes.meta.v1.ObjectMetaArgs(name=STORAGE_CONFIG_MAP, namespace=namespace),
                    data=args.storage_locations,
                    opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[resource]),
                )
            isolate(name, args.traffic[namespace], provider=provider, parent=self, namespace=resource)
            # Pods that name no service account get `default`: it mounts no API token.
            kubernetes.core.v1.ServiceAccountPatch(
                f"{name}-sa-{namespace}-default",
                metadata=kubernetes.meta.v1.ObjectMetaPatchArgs(name="default", namespace=namespace),
                automount_service_account_token=False,
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[resource]),
            )
        for account in args.service_accounts:
            kubernetes.core.v1.ServiceAccount(
                f"{name}-sa-{account.namespace}-{account.name}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(
                    name=account.name,
                    namespace=account.namespace,
                    labels={WORKLOAD_LABEL: account.workload},
                    annotations={CLIENT_ID_ANNOTATION: account.client_id, TENANT_ID_ANNOTATION: args.tenant_id},
                ),
                # The webhook projects its own Entra token; the Kubernetes API token is mounted
                # only for workloads that declare kubernetesApi.
                automount_service_account_token=account.kubernetes_api,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    provider=provider,
                    depends_on=[self.namespaces[account.namespace]]
                    if account.namespace in self.namespaces
                    else list(args.namespaces_ready),
                ),
            )

        assign_group_grants(
            name,
            team_grants(args),
            environment=args.environment,
            cluster_key=args.cluster_key,
            cluster_id=args.cluster_id,
            subscription_id=args.subscription_id,
            parent=self,
        )
        self.register_outputs({})
