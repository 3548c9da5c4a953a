"""Azure Managed Lustre inside a cluster (planning/lustre_csi.py says what and why):

- `LustreCsi` (the cluster unit): the CSI driver's node plugin on GPU nodes, and a persistent
  volume per training namespace on the region's file system (its team's directory). Volumes are
  cluster-scoped objects any of which could name a host path, so the unit that already
  administers the cluster makes them, not the tenants unit.
- `LustreClaims` (the tenants unit): each training namespace's claim, bound to its volume.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as kubernetes

from components.isolation import isolate, manifest_metadata
from facts import lustre as facts
from planning import lustre_csi as plan
from planning.network_policy import NamespaceTraffic
from planning.pod_security import PRIVILEGED, pod_security_labels
from stackconfig.model import ClusterConfig


@dataclass(frozen=True)
class LustreCsiArgs:
    cluster: ClusterConfig
    login_server: str
    traffic: NamespaceTraffic
    # The address clients mount the region's file system by (the data unit's output).
    mgs_address: pulumi.Input[str]
    volumes: Sequence[plan.TrainingVolume]
    # Image pulls' prerequisites and the cluster's admission policies.
    ready: Sequence[pulumi.Resource] = field(default_factory=list)


class LustreCsi(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: LustreCsiArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:lustre:Csi", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        namespace = kubernetes.core.v1.Namespace(
            f"{name}-ns",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=plan.NAMESPACE, labels=pod_security_labels(PRIVILEGED)),
            opts=in_cluster,
        )
        isolate(name, args.traffic, provider=provider, parent=self, namespace=namespace)
        manifest = plan.csi_driver()
        driver = kubernetes.storage.v1.CSIDriver(
            f"{name}-driver", metadata=manifest_metadata(manifest), spec=manifest["spec"], opts=in_cluster
        )
        account = kubernetes.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=plan.NODE_PLUGIN, namespace=plan.NAMESPACE),
            automount_service_account_token=False,
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace]),
        )
        plugins = []
        for flavor in facts.CSI_NODE_FLAVORS:
            manifest = plan.node_daemonset(flavor, args.cluster, args.login_server)
            plugins.append(
                kubernetes.apps.v1.DaemonSet(
                    f"{name}-node-{flavor.name}",
                    metadata=manifest_metadata(manifest),
                    spec=manifest["spec"],
                    opts=pulumi.ResourceOptions(
                        parent=self, provider=provider, depends_on=[driver, account, *args.ready]
                    ),
                )
            )
        self.volumes: dict[str, kubernetes.core.v1.PersistentVolume] = {}
        for volume in args.volumes:
            manifest = plan.persistent_volume(volume, args.mgs_address)
            self.volumes[volume.namespace] = kubernetes.core.v1.PersistentVolume(
                f"{name}-pv-{volume.namespace}",
                metadata=manifest_metadata(manifest),
                spec=manifest["spec"],
                # Never updated in place (its name says what it is made of: planning/lustre_csi.py);
                # a replaced one is left Released, for a person to delete once its claim has moved.
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[driver], retain_on_delete=True),
            )
        self.register_outputs({})


@dataclass(frozen=True)
class LustreClaimsArgs:
    volumes: Sequence[plan.TrainingVolume]
    # The team namespaces, and within one stack the volumes (the cluster unit's, deployed before).
    namespaces: Mapping[str, pulumi.Resource] = field(default_factory=dict)
    ready: Sequence[pulumi.Resource] = field(default_factory=list)


class LustreClaims(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: LustreClaimsArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:lustre:Claims", name, None, opts)
        for volume in args.volumes:
            waits = [*args.ready, *([args.namespaces[volume.namespace]] if volume.namespace in args.namespaces else [])]
            manifest = plan.persistent_volume_claim(volume)
            kubernetes.core.v1.PersistentVolumeClaim(
                f"{name}-{volume.namespace}",
                metadata=manifest_metadata(manifest),
                spec=manifest["spec"],
                # Pulumi waits for the claim to bind, which its pre-bound volume lets it at once.
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=waits),
            )
        self.register_outputs({})
