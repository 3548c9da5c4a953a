"""The output contract of each deployment unit: what its stack exports for the units after it.

One module that producers and consumers both import (docs/decisions/0006-deployment-units.md):
a producer exports `to_exports()`, a consumer reads the same dataclass back with `read(...)`
from a `pulumi.StackReference`, so a renamed field fails in both at once. Each export carries
`contractVersion`; a consumer refuses a producer of another version instead of reading a
field that moved. Bump CONTRACT_VERSION with any change a consumer would misread, and deploy
producers first (the workflow's order does).

Keys of the maps (regions, subnets, zones, workloads, storage accounts) come from the
environment's config, which every unit validates whole; values come from the producer's
state. In the single-stack composition the same dataclasses carry the resources' outputs
directly, plus `after`: resources to wait for, which only exist within one stack.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.keyvault import STORAGE_KEY_NAME, CustomerManagedKey
from planning.layers import Unit, parse_stack

# 2: the foundation exports each non-primary region's data-plane zones (regionalDnsZoneIds).
# 3: a Key Vault and workspaces per region with clusters (keyVaultIds, storageKeys by region,
#    regionalWorkspaces), the alert receivers' action groups (actionGroupIds); the data unit
#    exports the object-replication replicas' containers (replicaContainerIds); a MultiKueue
#    worker's cluster unit exports the dispatchers' kubeconfig (dispatchKubeconfig, a secret).
# 4: the foundation exports its data collection endpoints and Managed Grafana's endpoint.
# 5: no cluster unit exports dispatchKubeconfig: the dispatchers sign in with an identity of
#    their own, whose token never leaves the dispatcher (components/dispatch.py).
# 6: the data unit exports the Cosmos DB account's ID (the tenants unit assigns its data roles).
# 7: the data unit exports each Managed Lustre file system's address (lustreMgsAddresses), which
#    the cluster units read (their training namespaces' volumes).
# 8: the foundation exports each region's Azure Monitor workspace query endpoint
#    (prometheusQueryEndpoints), which the tenants unit's KEDA triggers read.
CONTRACT_VERSION = 8
VERSION_KEY = "contractVersion"


class ContractMismatch(pulumi.RunError):
    """A producer stack exports another contract version than this program reads."""


def _checked(reference: pulumi.StackReference, stack: str) -> pulumi.Output[Any]:
    def check(version: Any) -> Any:
        if version != CONTRACT_VERSION:
            raise ContractMismatch(
                f"stack {stack} exports output contract {version!r}, this program reads {CONTRACT_VERSION}: "
                f"deploy {stack} from this commit first (units deploy in order: docs/deploying.md)"
            )
        return version

    return reference.require_output(VERSION_KEY).apply(check)


class _Producer:
    """One upstream stack of this stack's environment (`prod-scale.cluster-eus2` reads
    `prod-scale.foundation`): each output read once and checked against the contract version,
    then a field picked from it (lifting a large map once per field would be quadratic in the
    size of a fleet)."""

    def __init__(self, unit: Unit):
        self.stack = unit.stack(parse_stack(pulumi.get_stack())[0])
        self.reference = pulumi.StackReference(self.stack)
        self.version = _checked(self.reference, self.stack)
        self.outputs: dict[str, pulumi.Output[Any]] = {}

    def get(self, name: str, *path: str) -> pulumi.Output[Any]:
        if name not in self.outputs:
            self.outputs[name] = pulumi.Output.all(self.version, self.reference.require_output(name)).apply(
                lambda values: values[1]
            )
        return self.outputs[name].apply(lambda value: _pick(value, path))


def _pick(value: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        value = value[part]
    return value


@dataclass(frozen=True)
class FoundationOutputs:
    """Networks, DNS, registry, Key Vault and the workloads' identities."""

    log_analytics_workspace_id: pulumi.Input[str]
    monitor_workspace_id: pulumi.Input[str]
    # The primary region's data collection endpoint (Prometheus ingestion, agents' configuration)
    data_collection_endpoint_id: pulumi.Input[str]
    # region -> {"logAnalytics": ID, "monitor": ID, "dataCollectionEndpoint": ID}: each non-primary
    # region with clusters
    regional_workspaces: Mapping[str, Mapping[str, pulumi.Input[str]]]
    # alert receiver -> its action group's ID
    action_group_ids: Mapping[str, pulumi.Input[str]]
    # region -> its Azure Monitor workspace's Prometheus query endpoint (every region with clusters)
    prometheus_query_endpoints: Mapping[str, pulumi.Input[str]]
    # region -> VNet ID; region -> subnet key (`<cluster>-nodes`, `private-endpoints`) -> ID
    vnet_ids: Mapping[str, pulumi.Input[str]]
    subnet_ids: Mapping[str, Mapping[str, pulumi.Input[str]]]
    # region -> the public addresses its egress leaves from (NAT or firewall)
    egress_ips: Mapping[str, pulumi.Input[Sequence[pulumi.Input[str]]]]
    # private DNS zone name -> ID (the shared zones)
    dns_zone_ids: Mapping[str, pulumi.Input[str]]
    # region -> zone name -> ID: the data-plane zones of each non-primary region with clusters
    regional_dns_zone_ids: Mapping[str, Mapping[str, pulumi.Input[str]]]
    registry_id: pulumi.Input[str]
    # region -> its Key Vault's ID, and the key its storage accounts encrypt with (if any)
    key_vault_ids: Mapping[str, pulumi.Input[str]]
    storage_keys: Mapping[str, CustomerManagedKey]
    # workload -> its managed identity's client ID, object ID and name
    identity_client_ids: Mapping[str, pulumi.Input[str]]
    identity_principal_ids: Mapping[str, pulumi.Input[str]]
    identity_names: Mapping[str, pulumi.Input[str]]
    identity_resource_group: pulumi.Input[str]
    # The environment's Managed Grafana (its endpoint), if it has one
    grafana_endpoint: pulumi.Input[str] | None = None
    # What the hub's owner makes for this environment (peerings' hub side, links, subzones, scope
    # members): for the hub, no unit reads it.
    hub_requests: Mapping[str, Any] | None = field(default=None, compare=False)
    # Within one stack: what clusters wait for (DNS links, registry endpoint and cache rules),
    # and the DNS zones' VNet links by (zone, VNet name).
    after: Sequence[pulumi.Resource] = field(default=(), compare=False)
    dns_links: Mapping[tuple[str, str], pulumi.Resource] = field(default_factory=dict, compare=False)

    def workspaces(self, region: str) -> tuple[pulumi.Input[str], pulumi.Input[str]]:
        """The Log Analytics and Azure Monitor workspaces of a region (the primary's if it has none)."""
        own = self.regional_workspaces.get(region)
        if own is None:
            return self.log_analytics_workspace_id, self.monitor_workspace_id
        return own["logAnalytics"], own["monitor"]

    def collection_endpoint(self, region: str) -> pulumi.Input[str]:
        """The data collection endpoint a region's clusters use (the primary's if it has none)."""
        own = self.regional_workspaces.get(region)
        return self.data_collection_endpoint_id if own is None else own["dataCollectionEndpoint"]

    def to_exports(self) -> dict[str, Any]:
        return {
            VERSION_KEY: CONTRACT_VERSION,
            "logAnalyticsWorkspaceId": self.log_analytics_workspace_id,
            "monitorWorkspaceId": self.monitor_workspace_id,
            "dataCollectionEndpointId": self.data_collection_endpoint_id,
            "regionalWorkspaces": {region: dict(ids) for region, ids in self.regional_workspaces.items()},
            "prometheusQueryEndpoints": dict(self.prometheus_query_endpoints),
            "actionGroupIds": dict(self.action_group_ids),
            "vnetIds": dict(self.vnet_ids),
            "subnetIds": {region: dict(ids) for region, ids in self.subnet_ids.items()},
            "egressIps": dict(self.egress_ips),
            "dnsZoneIds": dict(self.dns_zone_ids),
            "regionalDnsZoneIds": {region: dict(ids) for region, ids in self.regional_dns_zone_ids.items()},
            "registryId": self.registry_id,
            "grafanaEndpoint": self.grafana_endpoint,
            "keyVaultIds": dict(self.key_vault_ids),
            "storageKeys": {
                region: {"vaultUri": key.vault_uri, "keyId": key.key_id} for region, key in self.storage_keys.items()
            },
            "identities": {
                "clientIds": dict(self.identity_client_ids),
                "principalIds": dict(self.identity_principal_ids),
                "names": dict(self.identity_names),
                "resourceGroup": self.identity_resource_group,
            },
            **({"hubRequests": dict(self.hub_requests)} if self.hub_requests is not None else {}),
        }

    @staticmethod
    def read(
        *,
        subnets: Mapping[str, Sequence[str]],
        zones: Sequence[str],
        workloads: Sequence[str],
        storage_key: bool,
        regional_zones: Mapping[str, Sequence[str]],
        vault_regions: Sequence[str],
        receivers: Sequence[str] = (),
        grafana: bool = False,
        query_regions: Sequence[str] = (),
    ) -> FoundationOutputs:
        """The foundation's outputs a unit uses: `subnets` (region -> keys: the regions it builds
        in), `zones`, `workloads`, the regions with a vault, from config."""
        get = _Producer(Unit("foundation")).get

        return FoundationOutputs(
            log_analytics_workspace_id=get("logAnalyticsWorkspaceId"),
            monitor_workspace_id=get("monitorWorkspaceId"),
            data_collection_endpoint_id=get("dataCollectionEndpointId"),
            regional_workspaces={
                region: {
                    kind: get("regionalWorkspaces", region, kind)
                    for kind in ("logAnalytics", "monitor", "dataCollectionEndpoint")
                }
                for region in regional_zones
            },
            action_group_ids={receiver: get("actionGroupIds", receiver) for receiver in receivers},
            prometheus_query_endpoints={region: get("prometheusQueryEndpoints", region) for region in query_regions},
            vnet_ids={region: get("vnetIds", region) for region in subnets},
            subnet_ids={
                region: {key: get("subnetIds", region, key) for key in keys} for region, keys in subnets.items()
            },
            egress_ips={region: get("egressIps", region) for region in subnets},
            dns_zone_ids={zone: get("dnsZoneIds", zone) for zone in zones},
            regional_dns_zone_ids={
                region: {zone: get("regionalDnsZoneIds", region, zone) for zone in names}
                for region, names in regional_zones.items()
            },
            registry_id=get("registryId"),
            grafana_endpoint=get("grafanaEndpoint") if grafana else None,
            key_vault_ids={region: get("keyVaultIds", region) for region in vault_regions},
            storage_keys={
                region: CustomerManagedKey(
                    vault_uri=get("storageKeys", region, "vaultUri"),
                    key_id=get("storageKeys", region, "keyId"),
                    # A fixed name (components/keyvault.py), part of role assignment names: not an output.
                    key_name=STORAGE_KEY_NAME,
                )
                for region in (vault_regions if storage_key else ())
            },
            identity_client_ids={w: get("identities", "clientIds", w) for w in workloads},
            identity_principal_ids={w: get("identities", "principalIds", w) for w in workloads},
            identity_names={w: get("identities", "names", w) for w in workloads},
            identity_resource_group=get("identities", "resourceGroup"),
        )


@dataclass(frozen=True)
class DataOutputs:
    """Storage accounts and their containers; the Event Hubs namespace where it is the engine."""

    # account key -> container -> ID
    container_ids: Mapping[str, Mapping[str, pulumi.Input[str]]]
    event_hubs_namespace: pulumi.Input[str] | None
    # account key -> container -> ID of its replica's copy (accounts with object replication)
    replica_container_ids: Mapping[str, Mapping[str, pulumi.Input[str]]] = field(default_factory=dict)
    # The Cosmos DB account, where the environment has one.
    cosmos_db_account_id: pulumi.Input[str] | None = None
    # region -> the address clients mount its Managed Lustre file system by (its MGS).
    lustre_mgs_addresses: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)

    def to_exports(self) -> dict[str, Any]:
        return {
            VERSION_KEY: CONTRACT_VERSION,
            "containerIds": {account: dict(ids) for account, ids in self.container_ids.items()},
            "cosmosDbAccountId": self.cosmos_db_account_id,
            "eventHubsNamespace": self.event_hubs_namespace,
            "lustreMgsAddresses": dict(self.lustre_mgs_addresses),
            "replicaContainerIds": {account: dict(ids) for account, ids in self.replica_container_ids.items()},
        }

    @staticmethod
    def read(
        *,
        containers: Mapping[str, Sequence[str]],
        event_hubs: bool,
        replica_containers: Mapping[str, Sequence[str]] | None = None,
        cosmos_db: bool = False,
        lustre_regions: Sequence[str] = (),
    ) -> DataOutputs:
        """`replica_containers`: per account with a replica, its containers (copies and twins)."""
        get = _Producer(Unit("data")).get
        return DataOutputs(
            container_ids={
                account: {name: get("containerIds", account, name) for name in names}
                for account, names in containers.items()
            },
            event_hubs_namespace=get("eventHubsNamespace") if event_hubs else None,
            replica_container_ids={
                account: {name: get("replicaContainerIds", account, name) for name in names}
                for account, names in (replica_containers or {}).items()
            },
            cosmos_db_account_id=get("cosmosDbAccountId") if cosmos_db else None,
            lustre_mgs_addresses={region: get("lustreMgsAddresses", region) for region in lustre_regions},
        )


@dataclass(frozen=True)
class ClusterOutputs:
    """One AKS cluster: what tenants and the fleet reach it by."""

    cluster_id: pulumi.Input[str]
    oidc_issuer_url: pulumi.Input[str]
    # A kubelogin kubeconfig: no credential in it, but kept secret like any kubeconfig.
    kubeconfig: pulumi.Input[str]
    # The cluster's `Kafka` resource, where it hosts one.
    kafka_id: pulumi.Input[str] | None
    # Within one stack: the Kubernetes provider, the Kafka and Kueue resources to wait for.
    provider: Any = field(default=None, compare=False)
    kafka: pulumi.Resource | None = field(default=None, compare=False)
    kueue: pulumi.Resource | None = field(default=None, compare=False)
    # The Flink operator's release and the streaming namespaces, where the cluster streams.
    streaming: list[pulumi.Resource] = field(default_factory=list, compare=False)
    # The Lustre CSI driver and the training namespaces' volumes, where the cluster mounts Lustre.
    lustre: pulumi.Resource | None = field(default=None, compare=False)
    # For people (the cluster unit's `cluster` export), not read by other units.
    name: pulumi.Input[str] | None = field(default=None, compare=False)
    resource_group_name: pulumi.Input[str] | None = field(default=None, compare=False)

    def to_exports(self) -> dict[str, Any]:
        return {
            VERSION_KEY: CONTRACT_VERSION,
            "clusterId": self.cluster_id,
            "oidcIssuerUrl": self.oidc_issuer_url,
            "kubeconfig": self.kubeconfig,
            "kafkaId": self.kafka_id,
        }

    @staticmethod
    def read(cluster: str, *, kafka: bool) -> ClusterOutputs:
        get = _Producer(Unit("cluster", cluster)).get
        return ClusterOutputs(
            cluster_id=get("clusterId"),
            oidc_issuer_url=get("oidcIssuerUrl"),
            kubeconfig=pulumi.Output.secret(get("kubeconfig")),
            kafka_id=get("kafkaId") if kafka else None,
        )
