"""Capacity and cost of an environment, read from its offline plan and priced from a snapshot.

Capacity: nodes and GPUs at each pool's minimum and maximum, and the regional vCPU quota per VM
family that a subscription must allow before `pulumi up` (the maximum plus the upgrade surge:
AKS adds surge nodes while it upgrades a pool). Spot pools draw on the region's low-priority
vCPU quota instead of a family's.

Cost: every fixed hourly or daily meter the plan implies (pool VMs, the AKS Standard tier,
firewalls, public IPs, private endpoints, Premium registries and replicas, Event Hubs units,
Cosmos DB autoscale throughput per region, PostgreSQL vCores),
priced from facts/retail_prices.json, a committed snapshot of Azure's unauthenticated Retail
Prices API that scripts/prices.py refreshes for exactly these meters (never typed by hand). A
meter the snapshot lacks is "unpriced" and listed; usage-priced meters (GB stored or processed,
log ingestion) are listed as such and not in the monthly figure.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from facts.gpu import MIG_SLICES_PER_GPU
from facts.vm_sizes import VM_SIZES

SNAPSHOT = Path(__file__).resolve().parent.parent / "facts" / "retail_prices.json"
# A month is 730 hours (365 × 24 / 12), the convention of Azure's pricing calculator.
HOURS_PER_MONTH = 730
TOTAL_REGIONAL_VCPUS = "Total Regional vCPUs"
# What one retail price buys, as a share of a month (the units this report prices).
PER_MONTH = {"1 Hour": HOURS_PER_MONTH, "1/Day": HOURS_PER_MONTH / 24, "1/Month": 1}


@dataclass(frozen=True)
class Meter:
    """One Retail Prices API meter, as the API's `$filter` fields name it (values are case
    sensitive in api-version 2023-01-01-preview)."""

    service: str
    region: str
    unit: str
    arm_sku: str | None = None  # armSkuName (VMs)
    product: str | None = None
    sku: str | None = None
    meter: str | None = None
    spot: bool = False  # VMs: the Spot rows, else pay-as-you-go Linux

    @property
    def key(self) -> str:
        parts = [
            self.service,
            self.region,
            self.arm_sku,
            self.product,
            self.sku,
            self.meter,
            "Spot" if self.spot else None,
        ]
        return " · ".join(part for part in parts if part)

    def api_filter(self) -> str:
        terms = [("serviceName", self.service), ("armRegionName", self.region), ("priceType", "Consumption")]
        terms += [
            (name, value)
            for name, value in (
                ("armSkuName", self.arm_sku),
                ("productName", self.product),
                ("skuName", self.sku),
                ("meterName", self.meter),
            )
            if value
        ]
        return " and ".join(f"{name} eq '{value}'" for name, value in terms)

    def accepts(self, record: Mapping[str, Any]) -> bool:
        """The record is this meter's pay-as-you-go price (first tier)."""
        fields = {
            "serviceName": self.service,
            "armRegionName": self.region,
            "armSkuName": self.arm_sku,
            "productName": self.product,
            "skuName": self.sku,
            "meterName": self.meter,
            "unitOfMeasure": self.unit,
            "type": "Consumption",
        }
        if any(value is not None and record.get(name) != value for name, value in fields.items()):
            return False
        if record.get("tierMinimumUnits", 0) not in (0, 0.0):
            return False
        if self.arm_sku:  # VMs: Linux, and Spot or not as asked (Low Priority is Batch's)
            names = f"{record.get('skuName', '')} {record.get('meterName', '')}"
            if "Windows" in str(record.get("productName", "")) or "Low Priority" in names:
                return False
            return names.count(" Spot") > 0 if self.spot else " Spot" not in names
        return True


@dataclass(frozen=True)
class Pool:
    cluster: str
    region: str
    name: str
    vm_size: str
    min_nodes: int
    max_nodes: int
    surge_nodes: int
    spot: bool
    mig_profile: str | None = None  # gpuInstanceProfile: Kueue's quota counts slices

    @property
    def gpus_per_node(self) -> int:
        return VM_SIZES[self.vm_size].gpus if self.vm_size in VM_SIZES else 0

    @property
    def gpu_units_per_node(self) -> int:
        """Schedulable `nvidia.com/gpu` per node: GPUs, or MIG slices (facts/gpu.py)."""
        return self.gpus_per_node * MIG_SLICES_PER_GPU.get(self.mig_profile or "", 1)

    @property
    def quota_family(self) -> str:
        if self.spot:
            return "lowPriorityCores (Spot)"
        return VM_SIZES[self.vm_size].family if self.vm_size in VM_SIZES else f"unknown size {self.vm_size}"

    @property
    def quota_vcpus(self) -> int:
        vcpus = VM_SIZES[self.vm_size].vcpus if self.vm_size in VM_SIZES else 0
        return vcpus * (self.max_nodes + self.surge_nodes)


@dataclass(frozen=True)
class LineItem:
    what: str
    meter: Meter
    quantity_min: float
    quantity_max: float


@dataclass
class Capacity:
    pools: list[Pool] = field(default_factory=list)
    items: list[LineItem] = field(default_factory=list)
    usage: list[str] = field(default_factory=list)  # usage-priced meters, named
    counts: dict[str, int] = field(default_factory=dict)  # storage accounts, firewalls, ...

    def quota(self) -> dict[tuple[str, str], int]:
        """(region, family) -> vCPUs the subscription's quota must allow."""
        needed: dict[tuple[str, str], int] = defaultdict(int)
        for pool in self.pools:
            needed[(pool.region, pool.quota_family)] += pool.quota_vcpus
            # Every family also counts against the region's total ("Total Regional vCPUs"; Spot
            # has its own low-priority total): learn.microsoft.com/azure/virtual-machines/quotas.
            if not pool.spot:
                needed[(pool.region, TOTAL_REGIONAL_VCPUS)] += pool.quota_vcpus
        return dict(sorted(needed.items()))

    def gpus(self) -> tuple[int, int]:
        return (
            sum(p.min_nodes * p.gpus_per_node for p in self.pools),
            sum(p.max_nodes * p.gpus_per_node for p in self.pools),
        )

    def nodes(self) -> tuple[int, int]:
        return sum(p.min_nodes for p in self.pools), sum(p.max_nodes for p in self.pools)


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) else default


def _surge(upgrade: Mapping[str, Any], max_nodes: int) -> int:
    surge = str(
        upgrade.get("maxSurge") or "10%"
    )  # AKS's default surge is 10% (learn.microsoft.com/azure/aks/upgrade-cluster)
    if surge.endswith("%"):
        return math.ceil(max_nodes * float(surge[:-1]) / 100)
    return int(surge) if surge.isdigit() else 0


def _pool(cluster: str, region: str, inputs: Mapping[str, Any], name: str) -> Pool:
    count = _int(inputs.get("count"))
    low, high = _int(inputs.get("minCount"), count), _int(inputs.get("maxCount"), count)
    if not inputs.get("enableAutoScaling"):
        low = high = count
    return Pool(
        cluster=cluster,
        region=region,
        name=str(inputs.get("name") or inputs.get("agentPoolName") or name),
        vm_size=str(inputs.get("vmSize", "?")),
        min_nodes=low,
        max_nodes=high,
        surge_nodes=_surge(inputs.get("upgradeSettings") or {}, high),
        spot=inputs.get("scaleSetPriority") == "Spot",
        mig_profile=str(inputs["gpuInstanceProfile"]) if inputs.get("gpuInstanceProfile") else None,
    )


def capacity(resources: Iterable[Mapping[str, Any]]) -> Capacity:
    """What an environment's plan holds and runs, from its resources' inputs."""
    every = list(resources)
    result = Capacity()

    def of(tail: str) -> list[Mapping[str, Any]]:
        return [r for r in every if r["type"].startswith("azure-native:") and r["type"].endswith(":" + tail)]

    regions = {}
    for cluster in of("ManagedCluster"):
        inputs = cluster["inputs"]
        name, region = str(inputs.get("resourceName", cluster["name"])), str(inputs.get("location", "?"))
        regions[name] = region
        for profile in inputs.get("agentPoolProfiles", []):
            result.pools.append(_pool(name, region, profile, "system"))
        if (inputs.get("sku") or {}).get("tier") == "Standard":
            meter = Meter(
                "Azure Kubernetes Service",
                region,
                "1 Hour",
                None,
                "Azure Kubernetes Service",
                "Standard",
                "Standard Uptime SLA",
            )
            result.items.append(LineItem(f"AKS Standard tier: {name}", meter, 1, 1))
    for agent_pool in of("AgentPool"):
        owner = str(agent_pool["inputs"].get("resourceName", "?"))
        result.pools.append(_pool(owner, regions.get(owner, "?"), agent_pool["inputs"], agent_pool["name"]))
    # Registration order is the engine's (asynchronous): one order for reports and diffs.
    result.pools.sort(key=lambda p: (p.cluster, p.name != "system", p.name))
    for pool in result.pools:
        meter = Meter("Virtual Machines", pool.region, "1 Hour", arm_sku=pool.vm_size, spot=pool.spot)
        result.items.append(LineItem(f"pool {pool.cluster}/{pool.name}", meter, pool.min_nodes, pool.max_nodes))
    for firewall in of("AzureFirewall"):
        inputs = firewall["inputs"]
        tier, region = str((inputs.get("sku") or {}).get("tier", "Standard")), str(inputs.get("location", "?"))
        meter = Meter("Azure Firewall", region, "1 Hour", None, "Azure Firewall", tier, f"{tier} Deployment")
        result.items.append(
            LineItem(f"Azure Firewall {tier}: {inputs.get('azureFirewallName', firewall['name'])}", meter, 1, 1)
        )
        result.usage.append(f"Azure Firewall {tier} data processed (per GB), {region}")
    for address in of("PublicIPAddress"):
        inputs = address["inputs"]
        meter = Meter(
            "Virtual Network",
            str(inputs.get("location", "?")),
            "1 Hour",
            None,
            "IP Addresses",
            "Standard",
            "Standard IPv4 Static Public IP",
        )
        result.items.append(LineItem(f"public IP {inputs.get('publicIpAddressName', address['name'])}", meter, 1, 1))
    endpoints: dict[str, int] = defaultdict(int)
    for endpoint in of("PrivateEndpoint"):
        endpoints[str(endpoint["inputs"].get("location", "?"))] += 1
    for region, count in sorted(endpoints.items()):
        meter = Meter(
            "Virtual Network",
            region,
            "1 Hour",
            None,
            "Virtual Network Private Link",
            "Standard",
            "Standard Private Endpoint",
        )
        result.items.append(LineItem(f"{count} private endpoints, {region}", meter, count, count))
        result.usage.append(f"Private Link data processed (per GB), {region}")
    registries = {str(r["inputs"].get("registryName")): r for r in of("Registry")}
    for name, registry in registries.items():
        sku, region = (
            str((registry["inputs"].get("sku") or {}).get("name", "Standard")),
            str(registry["inputs"].get("location", "?")),
        )
        meter = Meter("Container Registry", region, "1/Day", None, "Container Registry", sku, f"{sku} Registry Unit")
        result.items.append(LineItem(f"{sku} registry {name}", meter, 1, 1))
    for replica in of("Replication"):
        parent = registries.get(str(replica["inputs"].get("registryName")))
        sku = str((parent["inputs"].get("sku") or {}).get("name", "Premium")) if parent else "Premium"
        region = str(replica["inputs"].get("location", "?"))
        meter = Meter("Container Registry", region, "1/Day", None, "Container Registry", sku, f"{sku} Registry Unit")
        result.items.append(LineItem(f"registry replica {region}", meter, 1, 1))
    for namespace in of("Namespace"):
        inputs = namespace["inputs"]
        hub_sku = inputs.get("sku") or {}
        units = _int(hub_sku.get("capacity"), 1)
        tier = str(hub_sku.get("tier") or hub_sku.get("name") or "Standard")
        unit_name = {"Premium": "Premium Processing Unit", "Standard": "Standard Throughput Unit"}.get(
            tier, f"{tier} Unit"
        )
        meter = Meter("Event Hubs", str(inputs.get("location", "?")), "1 Hour", None, None, tier, unit_name)
        result.items.append(
            LineItem(f"Event Hubs {tier} {inputs.get('namespaceName', namespace['name'])}", meter, units, units)
        )
    # Cosmos DB: autoscale bills the highest RU/s reached each hour, between a tenth of the maximum
    # and the maximum, in every region (the maximum prices the worst month); serverless by request.
    cosmos = {str(a["inputs"].get("accountName")): a["inputs"] for a in of("DatabaseAccount")}
    for database in of("SqlResourceSqlDatabase"):
        inputs = database["inputs"]
        account = cosmos.get(str(inputs.get("accountName")), {})
        maximum = _int(((inputs.get("options") or {}).get("autoscaleSettings") or {}).get("maxThroughput"))
        if not maximum:
            continue
        for location in account.get("locations") or []:
            region = str(location.get("locationName", "?"))
            meter = Meter("Azure Cosmos DB", region, "1 Hour", None, "Azure Cosmos DB autoscale", "RUs", "100 RU/s")
            result.items.append(
                LineItem(
                    f"Cosmos DB {inputs.get('databaseName')} autoscale {region}",
                    meter,
                    maximum // 1000,
                    maximum // 100,
                )
            )
    for name, inputs in cosmos.items():
        serverless = any(c.get("name") == "EnableServerless" for c in inputs.get("capabilities") or [])
        if serverless:
            result.usage.append(f"Cosmos DB {name} serverless: request units consumed (per million)")
        result.usage.append(f"Cosmos DB {name}: data stored, per region (per GB-month)")
    # PostgreSQL: the server's vCores every hour, twice with a standby; storage and backups by size.
    for server in of("Server"):
        inputs = server["inputs"]
        if not str(server.get("type", "")).startswith("azure-native:dbforpostgresql:"):
            continue
        server_sku: Mapping[str, Any] = inputs.get("sku") or {}
        size = VM_SIZES.get(str(server_sku.get("name")))
        vcores = size.vcpus if size else 0
        standby = (inputs.get("highAvailability") or {}).get("mode") not in (None, "Disabled")
        copies = 2 if standby else 1
        region = str(inputs.get("location", "?"))
        meter = Meter(
            "Azure Database for PostgreSQL",
            region,
            "1 Hour",
            None,
            f"Azure Database for PostgreSQL Flexible Server {server_sku.get('tier')} {server_sku.get('name')}",
            None,
            "vCore",
        )
        result.items.append(
            LineItem(
                f"PostgreSQL {inputs.get('serverName')} ({copies} × {vcores} vCores)",
                meter,
                copies * vcores,
                copies * vcores,
            )
        )
        result.usage.append(
            f"PostgreSQL {inputs.get('serverName')}: {(inputs.get('storage') or {}).get('storageSizeGb')} GiB "
            "provisioned storage and backups (per GB-month)"
        )
    # Managed Lustre: provisioned capacity by the hour, priced per TiB of its throughput tier.
    for file_system in of("AmlFilesystem"):
        inputs = file_system["inputs"]
        tier = str((inputs.get("sku") or {}).get("name", "?"))
        tib = int(float(inputs.get("storageCapacityTiB") or 0))
        region = str(inputs.get("location", "?"))
        meter = Meter("Azure Managed Lustre", region, "1 Hour", None, "Azure Managed Lustre", tier, "Capacity")
        result.items.append(LineItem(f"Managed Lustre {inputs.get('amlFilesystemName')} ({tib} TiB)", meter, tib, tib))
    accounts = of("StorageAccount")
    for account in accounts:
        inputs = account["inputs"]
        result.usage.append(
            f"storage {inputs.get('accountName')} ({(inputs.get('sku') or {}).get('name')}): data stored (per GB-month)"
        )
    if of("Workspace"):
        result.usage.append("Log Analytics ingestion (per GB)")
    if of("AzureMonitorWorkspace"):
        result.usage.append("Managed Prometheus ingestion (per 10M samples)")
    result.counts = {
        "storage accounts": len(accounts),
        "firewalls": len(of("AzureFirewall")),
        "private endpoints": sum(endpoints.values()),
        "clusters": len(of("ManagedCluster")),
    }
    if of("AmlFilesystem"):
        result.counts["TiB of Managed Lustre"] = sum(
            int(float(f["inputs"].get("storageCapacityTiB") or 0)) for f in of("AmlFilesystem")
        )
    return result


# --- prices ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    fetched: str | None
    source: str
    currency: str
    records: tuple[Mapping[str, Any], ...]

    def price(self, meter: Meter) -> Mapping[str, Any] | None:
        matches = [r for r in self.records if meter.accepts(r)]
        return matches[0] if len(matches) == 1 else None


def load_snapshot(path: Path = SNAPSHOT) -> Snapshot:
    document = json.loads(path.read_text())
    return Snapshot(document.get("fetched"), document["source"], document["currency"], tuple(document["items"]))


@dataclass
class Priced:
    monthly_min: float = 0.0
    monthly_max: float = 0.0
    unpriced: list[LineItem] = field(default_factory=list)
    rows: list[tuple[LineItem, float, float, float]] = field(default_factory=list)  # item, unit price, min, max


def price(items: Iterable[LineItem], snapshot: Snapshot) -> Priced:
    """Monthly cost at min and max from the snapshot; items it cannot price are listed."""
    result = Priced()
    for item in items:
        record = snapshot.price(item.meter)
        per_month = PER_MONTH.get(item.meter.unit)
        if record is None or per_month is None:
            result.unpriced.append(item)
            continue
        unit_price = float(record["retailPrice"])
        low, high = unit_price * per_month * item.quantity_min, unit_price * per_month * item.quantity_max
        result.monthly_min += low
        result.monthly_max += high
        result.rows.append((item, unit_price, low, high))
    return result


def meters(items: Iterable[LineItem]) -> list[Meter]:
    """The distinct meters (what scripts/prices.py asks the API for)."""
    return sorted({item.meter for item in items}, key=lambda m: m.key)
