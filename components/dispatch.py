"""Jobs that fail over between regions: MultiKueue's dispatchers and their workers.

Who the dispatchers are on a worker is the environment's `multikueue` managed identity
(planning/dispatch.py): no token is made by Pulumi or kept in its state.
- On each worker (its cluster unit): a ClusterRole that reads the job kinds, bound to the
  identity's object ID, and the custom role "Platform MultiKueue worker" on each team job
  namespace it receives jobs in (`DispatchWorker`).
- On each dispatcher (its cluster unit): the refresher, a CronJob that signs in as the identity
  and keeps each worker's kubeconfig Secret signed in, with its service account and a Role on
  those Secrets alone (`DispatchRefresher`).
- The tenants' unit: the `any-region` LocalQueues on the workers, the identity's federated
  credentials (components/workload_identity.py), and on each dispatcher the workers' API servers
  and CAs for the refresher and the Kueue objects of planning/dispatch.py (`JobDispatch`).
- An on-premises site is a worker too: its side comes with its baseline (planning/site_baseline.py:
  the same roles, bound to the identity's object ID, which the site's API server takes from Entra
  ID tokens of that identity alone); the dispatchers' side is the same as for an AKS worker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from components.gpu_stack import apply_manifest
from components.rbac import assign_role, bound_role
from facts.workload_identity import CLIENT_ID_ANNOTATION, TENANT_ID_ANNOTATION
from planning import dispatch
from planning.capacity import PoolCapacity
from planning.cluster_traffic import KUEUE_NAMESPACE
from planning.queues import Manifest
from stackconfig.model import TeamConfig


@dataclass(frozen=True)
class DispatchWorkerArgs:
    environment: str
    cluster_key: str
    cluster_id: pulumi.Input[str]
    subscription_id: pulumi.Input[str]
    # The dispatchers' managed identity's object ID (the foundation's).
    principal_id: pulumi.Input[str]
    # The custom role "Platform MultiKueue worker (<prefix>-<env>)" (platform:jobs.workerRoleId).
    worker_role_id: str
    # The team job namespaces it receives jobs in (planning/dispatch.py, worker_namespaces).
    namespaces: Sequence[str]


class DispatchWorker(pulumi.ComponentResource):
    """What the dispatchers may do on one worker: read the job kinds everywhere, write them in
    the team job namespaces only."""

    def __init__(
        self,
        name: str,
        args: DispatchWorkerArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:gpu:DispatchWorker", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        role = kubernetes.rbac.v1.ClusterRole(
            f"{name}-watch",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=dispatch.WATCH_ROLE),
            rules=[kubernetes.rbac.v1.PolicyRuleArgs(**rule_args(rule)) for rule in dispatch.watch_rules()],
            opts=in_cluster,
        )
        # AKS names a service principal or managed identity by its object ID (Azure/kubelogin,
        # "service principal": the user in a binding is the object ID).
        kubernetes.rbac.v1.ClusterRoleBinding(
            f"{name}-watch-binding",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=dispatch.WATCH_ROLE),
            role_ref=kubernetes.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role.metadata.name
            ),
            subjects=[
                kubernetes.rbac.v1.SubjectArgs(
                    kind="User", name=args.principal_id, api_group="rbac.authorization.k8s.io"
                )
            ],
            opts=in_cluster,
        )
        for namespace in args.namespaces:
            assign_role(
                f"{name}-write-{namespace}",
                role=args.worker_role_id,
                scope=pulumi.Output.concat(args.cluster_id, "/namespaces/", namespace),
                scope_key=f"{args.environment}/{args.cluster_key}/namespaces/{namespace}",
                principal_id=args.principal_id,
                principal_key=f"{args.environment}/{dispatch.DISPATCH_WORKLOAD}",
                subscription_id=args.subscription_id,
                parent=self,
            )
        self.register_outputs({})


@dataclass(frozen=True)
class DispatchRefresherArgs:
    workers: Sequence[str]
    # The dispatchers' managed identity's client ID and its tenant.
    client_id: pulumi.Input[str]
    tenant_id: pulumi.Input[str]
    login_server: str
    priority_class: str
    tolerations: list[dict[str, Any]]
    # Kueue's namespace, which this writes into (the cluster's Kueue release makes it).
    ready: Sequence[pulumi.Resource] = ()


class DispatchRefresher(pulumi.ComponentResource):
    """On one dispatcher: the CronJob that keeps the workers' kubeconfig Secrets signed in."""

    def __init__(
        self,
        name: str,
        args: DispatchRefresherArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:gpu:DispatchRefresher", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(args.ready))
        metadata = kubernetes.meta.v1.ObjectMetaArgs(name=dispatch.TOKEN_JOB, namespace=KUEUE_NAMESPACE)
        account = kubernetes.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(
                name=dispatch.TOKEN_JOB,
                namespace=KUEUE_NAMESPACE,
                annotations={CLIENT_ID_ANNOTATION: args.client_id, TENANT_ID_ANNOTATION: args.tenant_id},
            ),
            opts=in_cluster,
        )
        bound_role(
            f"{name}-token",
            metadata,
            [
                kubernetes.rbac.v1.PolicyRuleArgs(**rule_args(rule), resource_names=rule.get("resourceNames"))
                for rule in dispatch.token_role_rules(list(args.workers))
            ],
            [kubernetes.rbac.v1.SubjectArgs(kind="ServiceAccount", name=dispatch.TOKEN_JOB, namespace=KUEUE_NAMESPACE)],
            in_cluster,
        )
        script = kubernetes.core.v1.ConfigMap(
            f"{name}-script",
            metadata=metadata,
            data={dispatch.TOKEN_SCRIPT: dispatch.token_script()},
            opts=in_cluster,
        )
        manifest = dispatch.token_cronjob(KUEUE_NAMESPACE, args.login_server, args.priority_class, args.tolerations)
        kubernetes.batch.v1.CronJob(
            f"{name}-cronjob",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(**manifest["metadata"]),
            spec=manifest["spec"],
            opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[account, script])),
        )
        self.register_outputs({})


@dataclass(frozen=True)
class ClusterAccess:
    provider: kubernetes.Provider
    # Within one stack: its Kueue and team namespaces, to wait for.
    ready: Sequence[pulumi.Resource] = ()


@dataclass(frozen=True)
class JobDispatchArgs:
    dispatchers: Mapping[str, ClusterAccess]
    workers: Mapping[str, ClusterAccess]
    # worker -> its cluster's (kubelogin) kubeconfig: the API server and CA the refresher reads
    worker_kubeconfigs: Mapping[str, pulumi.Input[str]]
    # worker -> its GPU pools (capacity and quotas)
    worker_pools: Mapping[str, list[PoolCapacity]]
    teams: Mapping[str, TeamConfig]
    team_namespaces: Mapping[str, Mapping[str, pulumi.Resource]] = field(default_factory=dict)
    # On-premises sites as workers: their quotas (planning/site_baseline.py, site_quotas) and their
    # API servers and CAs (from config: the site's own Kueue objects come with its baseline).
    site_quotas: Mapping[str, dispatch.SiteQuotas] = field(default_factory=dict)
    site_endpoints: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # site -> the token scope its API server takes (its own application's, never AKS's).
    site_scopes: Mapping[str, str] = field(default_factory=dict)


class JobDispatch(pulumi.ComponentResource):
    """The tenants' side: on each dispatcher the workers' API servers and CAs (a ConfigMap the
    refresher reads) and the Kueue objects; on each worker the `any-region` LocalQueues the
    copied jobs name."""

    def __init__(self, name: str, args: JobDispatchArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:gpu:JobDispatch", name, None, opts)
        for worker, access in args.workers.items():
            for manifest in dispatch.worker_manifests(args.worker_pools[worker], dict(args.teams)):
                self._apply(f"{name}-{worker}", manifest, access, args.team_namespaces.get(worker, {}))
        for key, access in args.dispatchers.items():
            opts_here = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=list(access.ready))
            endpoints = pulumi.Output.unsecret(
                pulumi.Output.all(*args.worker_kubeconfigs.values()).apply(
                    lambda configs: dispatch.workers_config_map_data(
                        {w: dispatch.server_and_ca(c) for w, c in zip(args.worker_kubeconfigs, configs, strict=True)}
                        | dict(args.site_endpoints),
                        dict(args.site_scopes),
                    )
                )
            )
            endpoint_maps = [
                kubernetes.core.v1.ConfigMap(
                    f"{name}-{key}-workers",
                    metadata=kubernetes.meta.v1.ObjectMetaArgs(
                        name=dispatch.WORKERS_CONFIG_MAP, namespace=KUEUE_NAMESPACE
                    ),
                    data=endpoints,
                    opts=opts_here,
                )
            ]
            for manifest in dispatch.dispatcher_manifests(
                dict(args.worker_pools), dict(args.teams), dict(args.site_quotas)
            ):
                self._apply(f"{name}-{key}", manifest, access, args.team_namespaces.get(key, {}), after=endpoint_maps)
        self.register_outputs({})

    def _apply(
        self,
        prefix: str,
        manifest: Manifest,
        access: ClusterAccess,
        namespaces: Mapping[str, pulumi.Resource],
        after: Sequence[pulumi.Resource] = (),
    ) -> None:
        namespace = namespaces.get(manifest.namespace or "")
        apply_manifest(
            prefix,
            manifest,
            pulumi.ResourceOptions(
                parent=self,
                provider=access.provider,
                depends_on=[*access.ready, *after, *([namespace] if namespace else [])],
            ),
        )


def rule_args(rule: Mapping[str, Any]) -> dict[str, list[str]]:
    return {"api_groups": rule["apiGroups"], "resources": rule["resources"], "verbs": rule["verbs"]}
