"""The in-cluster GPU stack of one cluster: team namespaces, the NVIDIA GPU Operator, the
NVIDIA Network Operator where pools have InfiniBand, and Kueue with its queues.

Controllers run on the system pool (they tolerate CriticalAddonsOnly); node agents run on
GPU nodes (they tolerate the GPU and Spot taints). GPU health (DCGM) reaches managed
Prometheus through an `azmonitoring.coreos.com/v1` ServiceMonitor, the CRD the AKS metrics
add-on reads; the charts' own `monitoring.coreos.com` monitors are off.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from components.aliases import moved_from
from components.charts import helm_release
from components.isolation import isolate
from planning.capacity import PoolCapacity
from planning.charts import GPU_OPERATOR, KUEUE, NETWORK_OPERATOR, HelmChart, merge_values, mirrored_image_values
from planning.cluster_traffic import GPU_OPERATOR_NAMESPACE, KUEUE_NAMESPACE, NETWORK_OPERATOR_NAMESPACE
from planning.gpu import has_infiniband
from planning.gpu_stack import (
    dcgm_service_monitor,
    gpu_operator_values,
    kueue_service_monitor,
    kueue_values,
    network_operator_values,
    nic_cluster_policy_spec,
)
from planning.network_policy import NamespaceTraffic
from planning.pod_security import PRIVILEGED, RESTRICTED, pod_security_labels
from planning.queues import Manifest, flavor_manifests, queue_manifests
from stackconfig.model import ClusterConfig, TeamConfig


@dataclass(frozen=True)
class GpuStackArgs:
    cluster: ClusterConfig
    gpu_pools: list[PoolCapacity]
    # The platform's registry, which every image of the stack is pulled through.
    login_server: str
    # What must exist before images can be pulled (cache rules, endpoint, AcrPull grant).
    pull_ready: list[pulumi.Resource]
    # Traffic of the stack's namespaces (planning.cluster_traffic).
    traffic: dict[str, NamespaceTraffic]
    # PriorityClass of the controllers (components.priorities).
    priority_class: str
    ready: list[pulumi.Resource] = field(default_factory=list)
    # On a dispatch cluster (no GPU pools): Kueue alone, as a MultiKueue manager with this origin.
    multikueue_origin: str | None = None
    # Kueue's waitForPodsReady timeout (planning/cold_start.py).
    pods_ready_timeout: str = "30m"


class GpuStack(pulumi.ComponentResource):
    """The GPU operator, the Network Operator where pools have InfiniBand, and Kueue with a
    flavor per GPU pool; on a dispatch cluster, Kueue only."""

    def __init__(
        self,
        name: str,
        args: GpuStackArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:gpu:Stack", name, None, opts)
        cluster = args.cluster
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)

        def apply(manifest: Manifest, depends_on: list[pulumi.Resource]) -> kubernetes.apiextensions.CustomResource:
            return apply_manifest(
                name, manifest, pulumi.ResourceOptions(parent=self, provider=provider, depends_on=depends_on)
            )

        def namespace(ns: str, labels: dict[str, str]) -> kubernetes.core.v1.Namespace:
            created = kubernetes.core.v1.Namespace(
                f"{name}-ns-{ns}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(name=ns, labels=labels),
                opts=in_cluster,
            )
            isolate(name, args.traffic[ns], provider=provider, parent=self, namespace=created)
            return created

        def release(chart: HelmChart, namespace: kubernetes.core.v1.Namespace, values: dict[str, Any]):
            return helm_release(
                f"{name}-{chart.name}",
                chart,
                namespace.metadata.name,
                merge_values(values, mirrored_image_values(chart, args.login_server)),
                login_server=args.login_server,
                provider=provider,
                parent=self,
                depends_on=[*args.pull_ready, *args.ready],
            )

        # NVIDIA's node agents need host access (drivers, devices); nothing else runs here.
        privileged = pod_security_labels(PRIVILEGED)
        self.gpu_operator: pulumi.Resource | None = None
        if args.gpu_pools:
            gpu_operator = release(
                GPU_OPERATOR, namespace(GPU_OPERATOR_NAMESPACE, privileged), gpu_operator_values(cluster)
            )
            apply(dcgm_service_monitor(), depends_on=[gpu_operator])
            self.gpu_operator = gpu_operator

        if has_infiniband(cluster):
            network_operator = release(
                NETWORK_OPERATOR, namespace(NETWORK_OPERATOR_NAMESPACE, privileged), network_operator_values(cluster)
            )
            # The operator reconciles only the policy of this name.
            policy = nic_cluster_policy_spec(cluster, args.login_server)
            apply(
                Manifest("NicClusterPolicy", "nic-cluster-policy", policy, api_version="mellanox.com/v1alpha1"),
                depends_on=[network_operator],
            )

        kueue = release(
            KUEUE,
            namespace(KUEUE_NAMESPACE, pod_security_labels(RESTRICTED)),
            kueue_values(args.priority_class, args.multikueue_origin, args.pods_ready_timeout),
        )
        apply(kueue_service_monitor(), depends_on=[kueue])
        for manifest in flavor_manifests(cluster, args.gpu_pools):
            apply(manifest, depends_on=[kueue])
        self.kueue = kueue
        self.register_outputs({})


def apply_manifest(
    prefix: str, manifest: Manifest, opts: pulumi.ResourceOptions
) -> kubernetes.apiextensions.CustomResource:
    """A manifest as a custom resource named `<prefix>-<kind>-[<namespace>-]<name>`."""
    where = f"{manifest.namespace}-" if manifest.namespace else ""
    return kubernetes.apiextensions.CustomResource(
        f"{prefix}-{manifest.kind.lower()}-{where}{manifest.name}",
        api_version=manifest.api_version,
        kind=manifest.kind,
        metadata=kubernetes.meta.v1.ObjectMetaArgs(name=manifest.name, namespace=manifest.namespace),
        spec=manifest.spec,
        opts=opts,
    )


@dataclass(frozen=True)
class TeamQueuesArgs:
    cluster_key: str
    gpu_pools: list[PoolCapacity]
    teams: dict[str, TeamConfig]
    # Resources to wait for where they are in the same stack: Kueue, the team namespaces.
    kueue: pulumi.Resource | None = None
    team_namespaces: dict[str, pulumi.Resource] = field(default_factory=dict)


class TeamQueues(pulumi.ComponentResource):
    """The teams' Kueue queues on one cluster: a ClusterQueue per team with its GPU quotas, a
    LocalQueue in each of its namespaces. They change with the teams (the tenants' layer);
    the flavors they draw from are the cluster's (`GpuStack`)."""

    def __init__(
        self,
        name: str,
        args: TeamQueuesArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:gpu:TeamQueues", name, None, opts)
        # Named (and once parented) as the GPU stack's; the alias keeps them across the split
        # of a deployed single-stack environment (docs/migration.md).
        prefix = f"gpu-{args.cluster_key}"
        moved = moved_from(prefix, "platform:gpu:Stack", opts)
        for manifest in queue_manifests(args.gpu_pools, args.teams):
            depends_on = [args.kueue] if args.kueue else []
            if manifest.namespace in args.team_namespaces:
                depends_on.append(args.team_namespaces[manifest.namespace])
            apply_manifest(
                prefix,
                manifest,
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=depends_on, aliases=moved),
            )
        self.register_outputs({})
