"""Deny-by-default networking for one namespace: its default-deny policy and its allows.

The policies come from `planning.network_policy.namespace_policies` (plain manifests, tested
on their own); this component only registers them, Kubernetes NetworkPolicies as typed
resources and Cilium policies as custom resources, after the namespace exists.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from planning.network_policy import NamespaceTraffic, namespace_policies


@dataclass(frozen=True)
class NamespaceIsolationArgs:
    traffic: NamespaceTraffic


def manifest_metadata(manifest: dict[str, Any]) -> kubernetes.meta.v1.ObjectMetaArgs:
    """A plain manifest's metadata (name, namespace if it has one, labels, annotations) as the SDK takes it."""
    metadata = manifest["metadata"]
    return kubernetes.meta.v1.ObjectMetaArgs(
        name=metadata["name"],
        namespace=metadata.get("namespace"),
        labels=metadata.get("labels"),
        annotations=metadata.get("annotations"),
    )


class NamespaceIsolation(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: NamespaceIsolationArgs,
        provider: kubernetes.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:network:NamespaceIsolation", name, None, opts)
        in_namespace = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on))
        deny, *allows = namespace_policies(args.traffic)
        created = [self._register(name, manifest, in_namespace) for manifest in allows]
        # Deny last: a live namespace is never cut off while its allows are still being applied.
        self._register(
            name, deny, pulumi.ResourceOptions.merge(in_namespace, pulumi.ResourceOptions(depends_on=created))
        )
        self.register_outputs({})

    def _register(self, name: str, manifest: dict[str, Any], opts: pulumi.ResourceOptions) -> pulumi.Resource:
        logical = f"{name}-{manifest['metadata']['name']}"
        if manifest["kind"] == "NetworkPolicy":
            return kubernetes.networking.v1.NetworkPolicy(
                logical, metadata=manifest_metadata(manifest), spec=manifest["spec"], opts=opts
            )
        return kubernetes.apiextensions.CustomResource(
            f"{logical}-cilium",
            api_version=manifest["apiVersion"],
            kind=manifest["kind"],
            metadata=manifest_metadata(manifest),
            spec=manifest["spec"],
            opts=opts,
        )


def isolate(
    owner: str,
    traffic: NamespaceTraffic,
    *,
    provider: kubernetes.Provider,
    parent: pulumi.Resource,
    namespace: pulumi.Resource,
) -> NamespaceIsolation:
    """Isolate `traffic.namespace` (created as `namespace` by `owner`)."""
    return NamespaceIsolation(
        f"{owner}-isolation-{traffic.namespace}",
        NamespaceIsolationArgs(traffic),
        provider=provider,
        depends_on=[namespace],
        opts=pulumi.ResourceOptions(parent=parent),
    )
