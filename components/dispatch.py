"""Jobs that fail over between regions: MultiKueue's dispatchers and their workers.

On each worker (its cluster unit): the service account the dispatchers act as, its role (what
MultiKueue creates and watches there) and a token for it. The tenants' unit adds the
`any-region` LocalQueues the copied jobs name, and on each dispatcher a kubeconfig Secret per
worker (the worker's private API server, its CA and
the token, inline: Kueue 0.19 refuses exec plugins, so Entra ID is not an option without the
alpha ClusterProfile path), and the Kueue objects of planning/dispatch.py.

The token is a service-account token Secret's: it does not expire, and works with local
accounts disabled (AKS disables the static admin credentials, not service accounts; with Azure
RBAC for Kubernetes, a service account is authorized by Kubernetes RBAC). It is rotated by
raising `platform:jobs.tokenGeneration`: the next deploy creates a new Secret on each worker,
rewrites the dispatchers' kubeconfigs, then deletes the old Secret, which revokes its token.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as kubernetes

from components.gpu_stack import apply_manifest
from planning import dispatch
from planning.capacity import PoolCapacity
from planning.cluster_traffic import KUEUE_NAMESPACE
from planning.queues import Manifest
from stackconfig.model import TeamConfig


@dataclass(frozen=True)
class DispatchWorkerArgs:
    # The cluster's own kubeconfig (kubelogin): its API server and CA go into the dispatchers'.
    cluster_kubeconfig: pulumi.Input[str]
    token_generation: int
    # Kueue's namespace, which this writes into (the cluster's Kueue release makes it).
    ready: Sequence[pulumi.Resource] = ()


class DispatchWorker(pulumi.ComponentResource):
    """The dispatchers' identity on one worker (the cluster's layer: cluster-scoped RBAC).

    Output: `kubeconfig`, a secret, which the tenants' unit writes on each dispatcher."""

    kubeconfig: pulumi.Output[str]

    def __init__(
        self,
        name: str,
        worker: str,
        args: DispatchWorkerArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:gpu:DispatchWorker", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(args.ready))
        account = kubernetes.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=dispatch.WORKER_SERVICE_ACCOUNT, namespace=KUEUE_NAMESPACE),
            automount_service_account_token=False,
            opts=in_cluster,
        )
        role = kubernetes.rbac.v1.ClusterRole(
            f"{name}-role",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=dispatch.WORKER_ROLE),
            rules=[kubernetes.rbac.v1.PolicyRuleArgs(**rule_args(rule)) for rule in dispatch.WORKER_RULES],
            opts=in_cluster,
        )
        kubernetes.rbac.v1.ClusterRoleBinding(
            f"{name}-binding",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=dispatch.WORKER_ROLE),
            role_ref=kubernetes.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role.metadata.name
            ),
            subjects=[
                kubernetes.rbac.v1.SubjectArgs(
                    kind="ServiceAccount", name=dispatch.WORKER_SERVICE_ACCOUNT, namespace=KUEUE_NAMESPACE
                )
            ],
            opts=in_cluster,
        )
        # Kubernetes fills in the token; the provider waits for it (pulumi/pulumi-kubernetes#2048).
        # A new generation is a new resource: created before the old one is deleted.
        token = kubernetes.core.v1.Secret(
            f"{name}-token-{args.token_generation}",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(
                name=dispatch.token_secret(args.token_generation),
                namespace=KUEUE_NAMESPACE,
                annotations={"kubernetes.io/service-account.name": dispatch.WORKER_SERVICE_ACCOUNT},
            ),
            type="kubernetes.io/service-account-token",
            opts=pulumi.ResourceOptions.merge(in_cluster, pulumi.ResourceOptions(depends_on=[account])),
        )
        self.kubeconfig = pulumi.Output.secret(
            pulumi.Output.all(args.cluster_kubeconfig, token.data).apply(
                lambda values: dispatch.kubeconfig(
                    worker,
                    *dispatch.server_and_ca(values[0]),
                    base64.b64decode((values[1] or {}).get("token", "")).decode(),
                )
            )
        )
        self.register_outputs({"kubeconfig": self.kubeconfig})


@dataclass(frozen=True)
class ClusterAccess:
    provider: kubernetes.Provider
    # Within one stack: its Kueue and team namespaces, to wait for.
    ready: Sequence[pulumi.Resource] = ()


@dataclass(frozen=True)
class JobDispatchArgs:
    dispatchers: Mapping[str, ClusterAccess]
    workers: Mapping[str, ClusterAccess]
    # worker -> the kubeconfig its DispatchWorker made (a secret)
    worker_kubeconfigs: Mapping[str, pulumi.Input[str]]
    # worker -> its GPU pools (capacity and quotas)
    worker_pools: Mapping[str, list[PoolCapacity]]
    teams: Mapping[str, TeamConfig]
    team_namespaces: Mapping[str, Mapping[str, pulumi.Resource]] = field(default_factory=dict)


class JobDispatch(pulumi.ComponentResource):
    """The tenants' side: on each dispatcher a kubeconfig Secret per worker and the Kueue
    objects; on each worker the `any-region` LocalQueues the copied jobs name."""

    def __init__(self, name: str, args: JobDispatchArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:gpu:JobDispatch", name, None, opts)
        for worker, access in args.workers.items():
            for manifest in dispatch.worker_manifests(args.worker_pools[worker], dict(args.teams)):
                self._apply(f"{name}-{worker}", manifest, access, args.team_namespaces.get(worker, {}))
        for key, access in args.dispatchers.items():
            opts_here = pulumi.ResourceOptions(parent=self, provider=access.provider, depends_on=list(access.ready))
            secrets = [
                kubernetes.core.v1.Secret(
                    f"{name}-{key}-{worker}-kubeconfig",
                    metadata=kubernetes.meta.v1.ObjectMetaArgs(
                        name=dispatch.kubeconfig_secret(worker), namespace=KUEUE_NAMESPACE
                    ),
                    string_data={dispatch.KUBECONFIG_KEY: pulumi.Output.secret(kubeconfig)},
                    opts=opts_here,
                )
                for worker, kubeconfig in args.worker_kubeconfigs.items()
            ]
            for manifest in dispatch.dispatcher_manifests(dict(args.worker_pools), dict(args.teams)):
                self._apply(f"{name}-{key}", manifest, access, args.team_namespaces.get(key, {}), after=secrets)
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


def rule_args(rule: Mapping[str, list[str]]) -> dict[str, list[str]]:
    return {"api_groups": rule["apiGroups"], "resources": rule["resources"], "verbs": rule["verbs"]}
