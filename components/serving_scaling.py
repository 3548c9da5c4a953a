"""KEDA's objects for one cluster's scaled Deployments (planning/serving_scaling.py): the
TriggerAuthentication naming the `serving-scaler` identity, a PodMonitor and a ScaledObject per
Deployment. The tenants layer's: they change with the teams' Deployments."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from components.serving import register_rendered


@dataclass(frozen=True)
class ServingScalersArgs:
    cluster_key: str
    # The cluster's manifests given the scaler identity's client ID and the region's query endpoint.
    render: Callable[[str, str], list[dict[str, Any]]]
    client_id: pulumi.Input[str]
    query_endpoint: pulumi.Input[str]
    # The team namespaces to wait for, within one stack.
    team_namespaces: Mapping[str, pulumi.Resource] = field(default_factory=dict)


class ServingScalers(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: ServingScalersArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:serving:Scalers", name, None, opts)

        def options(manifest: dict[str, Any]) -> pulumi.ResourceOptions:
            namespace = manifest["metadata"]["namespace"]
            wait = [args.team_namespaces[namespace]] if namespace in args.team_namespaces else []
            return pulumi.ResourceOptions(parent=self, provider=provider, depends_on=wait)

        register_rendered(name, args.render, (args.client_id, args.query_endpoint), options, with_namespace=True)
        self.register_outputs({})
