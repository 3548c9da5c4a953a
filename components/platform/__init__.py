"""The environment, as deployment units (planning/layers.py), in the order they are deployed:

1. `foundation`: observability, one network per region (peered with each other and the hub),
   private DNS, Key Vault, the container registry, the workloads' managed identities;
2. `data`: storage accounts (customer-managed keys from the foundation's vault), Event Hubs;
3. `cluster`, one per cluster: AKS and its pools, admission policies and PriorityClasses, the
   GPU stack, plan access, the Strimzi operator and its Kafka, the Lustre CSI driver and volumes
   (reading the data unit's file system addresses); every platform namespace denies all traffic
   but its allows; and one per on-premises site: its Arc extensions, collection rules, policy
   and the baseline its Flux applies (`site.py`);
4. `tenants`: the workloads' federated credentials and grants, team namespaces, service
   accounts and RBAC, Kueue queues, Kafka topics, users and CA copies, MirrorMaker;
5. `fleet`, with two or more clusters: Fleet Manager, members, update runs.

`deploy` builds one unit, reading the units before it through `pulumi.StackReference` and
the contracts of components/outputs.py. `Platform` builds every unit in one stack, wired in
process: the single-stack layout a deployed environment moves from (docs/migration.md), and
the reference tests/test_deployment_units.py holds the units' union to.

One module per unit (`foundation.py`, `data.py`, `cluster.py`, `tenants.py`, `fleet.py`), what they share in
`context.py`. This package is the only place that knows how capabilities connect; each component below it takes
plain typed arguments and can be read on its own.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as kubernetes

from components.outputs import ClusterOutputs, DataOutputs, FoundationOutputs
from components.platform.cluster import _hosts_strimzi, build_cluster
from components.platform.context import (
    STORAGE_ROLES,
    Context,
    check_subscription,
    data_plane_zones,
    endpoint_regions,
    identity_workloads,
    own_hub_zones,
    private_dns_zones,
    replicas,
    subnet_keys,
)
from components.platform.data import build_data
from components.platform.fleet import build_fleet
from components.platform.foundation import build_foundation
from components.platform.site import build_site
from components.platform.tenants import build_tenants
from planning import kafka as kafka_plan
from planning import serving_scaling as scaling_plan
from planning.charts import HELM_DRIVER
from planning.layers import Unit
from planning.lustre_csi import lustre_clusters
from planning.naming import Naming, replica_containers
from planning.workloads import workload_context
from stackconfig.model import PlatformConfig


@dataclass(frozen=True)
class PlatformArgs:
    config: PlatformConfig


class Platform(pulumi.ComponentResource):
    """Every unit of the environment in one stack, wired in process (see the module's doc)."""

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:index:Platform", name, None, opts)
        ctx = Context(args.config, parent=self)
        self.foundation = build_foundation(ctx)
        data = build_data(ctx, self.foundation)
        self.clusters = {key: build_cluster(ctx, key, self.foundation, data) for key in args.config.clusters}
        # Each site's Azure side, and its baseline's files (exported: the deploy job uploads them).
        self.sites = {
            key: build_site(ctx, key, self.foundation, self.clusters.get(kafka_plan.site_host(args.config, key) or ""))
            for key in args.config.on_prem_clusters
        }
        if args.config.has_fleet:
            build_fleet(ctx, self.clusters)
        self.kafka_connections = build_tenants(ctx, self.foundation, data, self.clusters)
        self.register_outputs(
            {
                "clusters": {key: c.name for key, c in self.clusters.items()},
                "registryLoginServer": ctx.naming.registry_login_server(),
                "workloadClientIds": self.foundation.identity_client_ids,
            }
        )


def _foundation_reference(config: PlatformConfig, regions: Sequence[str]) -> FoundationOutputs:
    """The foundation's outputs, with the networks of `regions` only (those the unit builds in)."""
    keys = subnet_keys(config)
    return FoundationOutputs.read(
        subnets={region: keys[region] for region in regions},
        zones=private_dns_zones(config),
        regional_zones={r: data_plane_zones(config) for r in endpoint_regions(config) if r != config.primary_region},
        workloads=identity_workloads(config),
        storage_key=config.storage.customer_managed_key,
        vault_regions=endpoint_regions(config),
        receivers=list(config.operations.alerts.receivers),
        grafana=config.operations.grafana.enabled,
        query_regions=scaling_plan.keda_regions(config),
    )


def _cluster_reference(config: PlatformConfig, key: str) -> ClusterOutputs:
    outputs = ClusterOutputs.read(key, kafka=_hosts_strimzi(config, key))
    # Named as the cluster unit's own provider (and as the single stack's), so resources moved
    # here with `pulumi state move` keep theirs (docs/migration.md).
    provider = kubernetes.Provider(
        f"aks-{key}-k8s",
        kubeconfig=outputs.kubeconfig,
        cluster_identifier=Naming(config.prefix, config.environment).cluster(key),
        enable_server_side_apply=True,
        helm_release_settings=kubernetes.HelmReleaseSettingsArgs(driver=HELM_DRIVER),
    )
    return dataclasses.replace(outputs, provider=provider)


def deploy(config: PlatformConfig, unit: Unit | None) -> None:
    """Build one deployment unit of the environment (None: all of them in one stack) and export
    its contract and what people use (kubeconfigs, Kafka connection info, workload context)."""
    check_subscription(config)
    if unit is None:
        _deploy_single_stack(config)
        return
    ctx = Context(config)
    if unit.layer == "foundation":
        foundation = build_foundation(ctx)
        for name, value in foundation.to_exports().items():
            pulumi.export(name, value)
        pulumi.export("registryLoginServer", ctx.naming.registry_login_server())
        # Client IDs of the workload identities, for pods outside the platform's service accounts.
        pulumi.export("workloadIdentities", foundation.identity_client_ids)
    elif unit.layer == "data":
        data = build_data(ctx, _foundation_reference(config, endpoint_regions(config)))
        for name, value in data.to_exports().items():
            pulumi.export(name, value)
    elif unit.layer == "cluster" and unit.cluster in config.on_prem_clusters:
        region = config.on_prem_clusters[unit.cluster].region
        # The cluster whose Kafka the site's clients reach: its CA goes into the site's baseline.
        host = kafka_plan.site_host(config, unit.cluster)
        served = host is not None and unit.cluster in kafka_plan.served_sites(config, host)
        site, documents, authentication = build_site(
            ctx,
            unit.cluster,
            _foundation_reference(config, [region]),
            _cluster_reference(config, host) if served and host is not None else None,
        )
        pulumi.export(
            "site",
            {
                "connectedClusterId": site.connected_cluster_id,
                "fluxClientId": site.flux_client_id,
                "baselineUrl": site.baseline_url,
                # The API server's --authentication-config (docs/hybrid.md, the site's steps).
                "authenticationConfiguration": authentication,
            },
        )
        # What the deploy job uploads to baselineUrl after `up` (scripts/site_baseline.py).
        pulumi.export("baselineDocuments", documents)
    elif unit.layer == "cluster":
        region = config.clusters[unit.cluster].region
        # The data unit's outputs a cluster reads: its region's Lustre file system, if it mounts one.
        data = DataOutputs.read(
            containers={},
            event_hubs=False,
            lustre_regions=[region] if unit.cluster in lustre_clusters(config) else [],
        )
        cluster = build_cluster(ctx, unit.cluster, _foundation_reference(config, [region]), data)
        for name, value in cluster.to_exports().items():
            pulumi.export(name, value)
        pulumi.export(
            "cluster",
            {
                "name": cluster.name,
                "resourceGroup": cluster.resource_group_name,
                "oidcIssuerUrl": cluster.oidc_issuer_url,
            },
        )
    elif unit.layer == "tenants":
        data_outputs = DataOutputs.read(
            containers={key: list(account.containers) for key, account in config.storage.accounts.items()},
            event_hubs=config.kafka is not None and config.kafka.engine == "eventhubs",
            replica_containers={key: replica_containers(config, key) for key in replicas(config)},
            cosmos_db=config.cosmos_db is not None,
        )
        clusters = {key: _cluster_reference(config, key) for key in config.clusters}
        foundation = _foundation_reference(config, [])
        connections = build_tenants(ctx, foundation, data_outputs, clusters)
        # Per Kafka client: bootstrap servers per cluster, security protocol, SASL mechanism,
        # token scope, topics. No secret: clients sign in with their workload identity.
        pulumi.export("kafkaClients", connections)
        # Where the deploy job provisions dashboards/ after `up` (scripts/dashboards.py).
        pulumi.export("grafanaEndpoint", foundation.grafana_endpoint)
        # What the golden workloads (examples/) are filled in with (scripts/workloads.py reads
        # this stack's outputs alone).
        pulumi.export("workloadContext", workload_context(config))
        pulumi.export("registryLoginServer", ctx.naming.registry_login_server())
    else:
        clusters = {key: ClusterOutputs.read(key, kafka=False) for key in config.clusters}
        fleet = build_fleet(ctx, clusters)
        pulumi.export("fleetId", fleet.fleet_id)


def _deploy_single_stack(config: PlatformConfig) -> None:
    platform = Platform(f"platform-{config.environment}", PlatformArgs(config))
    pulumi.export(
        "clusters",
        {
            key: {"name": c.name, "resourceGroup": c.resource_group_name, "oidcIssuerUrl": c.oidc_issuer_url}
            for key, c in platform.clusters.items()
        },
    )
    pulumi.export("workloadIdentities", platform.foundation.identity_client_ids)
    pulumi.export("registryLoginServer", Naming(config.prefix, config.environment).registry_login_server())
    pulumi.export("kafkaClients", platform.kafka_connections)
    pulumi.export("workloadContext", workload_context(config))
    # Kubeconfigs log in through kubelogin (Entra ID); they hold no credentials, but stay secret.
    pulumi.export("kubeconfigs", {key: c.kubeconfig for key, c in platform.clusters.items()})
    if platform.sites:
        pulumi.export("siteBaselines", {key: documents for key, (_, documents, _) in platform.sites.items()})
        pulumi.export(
            "siteAuthentication", {key: authentication for key, (_, _, authentication) in platform.sites.items()}
        )
    if platform.foundation.hub_requests is not None:
        pulumi.export("hubRequests", platform.foundation.hub_requests)


# What other modules import from the composition.
__all__ = ["STORAGE_ROLES", "Platform", "PlatformArgs", "deploy", "own_hub_zones"]
