"""The serving edge (docs/serving.md; planning/serving.py holds what each object says):

- `ServingZone` (the foundation's): the private zone the platform owns for serving, one copy per
  serving region with the same name, linked to that region's VNet (the primary's also to the
  hub's), where `*.<team>` resolves to the region's gateway: each region's callers reach their own
  region's gateway under the same names, and a region that fails takes only its own callers;
- `ServingGateway` (a serving cluster's): the platform's internal load balancer in front of the
  Istio add-on's gateway pods (pinned address, Private Link service where config names consumers),
  the `Gateway` with each serving team's server and certificate (synced from Key Vault with the
  `serving-tls` identity), Entra ID token validation and the DENY of a request without a token;
- `ServedApis` (the tenants'): per API and serving cluster, its `VirtualService` (and for gRPC its
  `DestinationRule`) in the team's namespace, and its ALLOW policy on the gateway.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes
from pulumi_azure_native import privatedns

from components.isolation import manifest_metadata
from components.private_dns import link_vnet


def register(
    name: str,
    manifest: dict[str, Any],
    opts: pulumi.ResourceOptions,
    values: pulumi.Output[dict[str, Any]] | None = None,
) -> pulumi.Resource:
    """A plain manifest as the SDK's resource of its kind (custom resources for Istio's and the
    Secrets Store CSI driver's kinds); `values`, where given, is the same manifest once the
    identities it names are known (its metadata and spec are taken from there)."""
    kind = manifest["kind"]
    metadata: Any = values.apply(lambda m: m["metadata"]) if values is not None else manifest_metadata(manifest)
    spec: Any = values.apply(lambda m: m.get("spec")) if values is not None else manifest.get("spec")
    if kind == "Service":
        return kubernetes.core.v1.Service(name, metadata=metadata, spec=spec, opts=opts)
    if kind == "ServiceAccount":
        return kubernetes.core.v1.ServiceAccount(
            name, metadata=metadata, automount_service_account_token=False, opts=opts
        )
    if kind == "Deployment":
        return kubernetes.apps.v1.Deployment(name, metadata=metadata, spec=spec, opts=opts)
    if kind == "NetworkPolicy":
        return kubernetes.networking.v1.NetworkPolicy(name, metadata=metadata, spec=spec, opts=opts)
    return kubernetes.apiextensions.CustomResource(
        name, api_version=manifest["apiVersion"], kind=kind, metadata=metadata, spec=spec, opts=opts
    )


@dataclass(frozen=True)
class ServingZoneArgs:
    zone: str
    region: str
    resource_group_name: pulumi.Input[str]
    # VNet name -> ID: the region's VNet, and for the primary region the hub's.
    vnet_ids: Mapping[str, pulumi.Input[str]]
    # Relative record name (`*.<team>`) -> the gateway address it resolves to.
    records: Mapping[str, str]
    tags: dict[str, str] = field(default_factory=dict)


class ServingZone(pulumi.ComponentResource):
    def __init__(self, name: str, args: ServingZoneArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:serving:Zone", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        zone = privatedns.PrivateZone(
            name,
            private_zone_name=args.zone,
            resource_group_name=args.resource_group_name,
            location="global",
            tags=args.tags,
            opts=child,
        )
        for vnet_name, vnet_id in args.vnet_ids.items():
            link_vnet(f"{name}-{vnet_name}", zone.name, args.resource_group_name, vnet_name, vnet_id, args.tags, child)
        for record, address in args.records.items():
            privatedns.PrivateRecordSet(
                f"{name}-{record.replace('*', 'any')}",
                private_zone_name=zone.name,
                resource_group_name=args.resource_group_name,
                record_type="A",
                relative_record_set_name=record,
                ttl=300,
                a_records=[privatedns.ARecordArgs(ipv4_address=address)],
                opts=child,
            )
        self.zone_id = zone.id
        self.register_outputs({})


@dataclass(frozen=True)
class ServingGatewayArgs:
    cluster_key: str
    # planning/serving.py's manifests for the cluster (the gateway Service, the certificates'
    # sync, the Gateway, token validation and the DENY without a token), given the `serving-tls`
    # identity's client ID and the tenant.
    render: Callable[[str, str], list[dict[str, Any]]]
    client_id: pulumi.Input[str]
    tenant_id: pulumi.Input[str]


def _manifest_at(index: int, manifests: list[dict[str, Any]]) -> dict[str, Any]:
    return manifests[index]


def register_rendered(
    name: str,
    render: Callable[[str, str], list[dict[str, Any]]],
    inputs: tuple[pulumi.Input[str], pulumi.Input[str]],
    options: Callable[[dict[str, Any]], pulumi.ResourceOptions],
    *,
    with_namespace: bool = False,
) -> None:
    """Each manifest a render makes from two outputs (an identity's client ID, a tenant or an
    endpoint). Which objects there are does not depend on them: their names come from a render
    without them, their contents from the render with them."""
    rendered = pulumi.Output.all(*inputs).apply(lambda values: render(str(values[0]), str(values[1])))
    for i, manifest in enumerate(render("", "")):
        metadata = manifest["metadata"]
        where = f"{metadata['namespace']}-" if with_namespace else ""
        register(
            f"{name}-{manifest['kind'].lower()}-{where}{metadata['name']}",
            manifest,
            options(manifest),
            values=rendered.apply(partial(_manifest_at, i)),
        )


class ServingGateway(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: ServingGatewayArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:serving:Gateway", name, None, opts)
        child = pulumi.ResourceOptions(parent=self, provider=provider)
        register_rendered(name, args.render, (args.client_id, args.tenant_id), lambda _: child)
        self.register_outputs({})


@dataclass(frozen=True)
class ServedApisArgs:
    cluster_key: str
    # planning/serving.py's manifests of the APIs served on the cluster.
    manifests: Sequence[dict[str, Any]]
    # The team namespaces to wait for, within one stack.
    team_namespaces: Mapping[str, pulumi.Resource] = field(default_factory=dict)


class ServedApis(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: ServedApisArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:serving:Apis", name, None, opts)
        for manifest in args.manifests:
            namespace = manifest["metadata"]["namespace"]
            wait = [args.team_namespaces[namespace]] if namespace in args.team_namespaces else []
            register(
                f"{name}-{manifest['kind'].lower()}-{namespace}-{manifest['metadata']['name']}",
                manifest,
                pulumi.ResourceOptions(parent=self, provider=provider, depends_on=wait),
            )
        self.register_outputs({})
