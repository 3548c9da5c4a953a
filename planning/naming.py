"""Resource names, after the Cloud Adoption Framework abbreviations.

`rg-ailab-prod-eus2-network`, `aks-ailab-prod-eus2`, `vnet-ailab-prod-eus2`. Every name is
derived from config keys, never from random suffixes, so names are stable across runs.
"""

from __future__ import annotations

from dataclasses import dataclass

# Short region codes keep names within Azure's length limits.
REGION_CODES: dict[str, str] = {
    "australiaeast": "aue",
    "brazilsouth": "brs",
    "canadacentral": "cac",
    "centralus": "cus",
    "eastus": "eus",
    "eastus2": "eus2",
    "francecentral": "frc",
    "germanywestcentral": "gwc",
    "japaneast": "jpe",
    "northcentralus": "ncus",
    "northeurope": "neu",
    "southcentralus": "scus",
    "swedencentral": "sdc",
    "uksouth": "uks",
    "westeurope": "weu",
    "westus": "wus",
    "westus2": "wus2",
    "westus3": "wus3",
}


def region_code(region: str) -> str:
    return REGION_CODES.get(region, region)


@dataclass(frozen=True)
class Naming:
    prefix: str
    environment: str

    def name(self, abbreviation: str, *parts: str) -> str:
        return "-".join([abbreviation, self.prefix, self.environment, *parts])

    def regional(self, abbreviation: str, region: str, *parts: str) -> str:
        return self.name(abbreviation, region_code(region), *parts)

    def cluster(self, cluster_key: str) -> str:
        return self.name("aks", cluster_key)

    def node_resource_group(self, cluster_key: str, region: str) -> str:
        # AKS puts the node VMs, disks and load balancers here; the name is fixed at creation.
        return self.name("rg", cluster_key, "nodes", region)


@dataclass(frozen=True)
class ResourceId:
    subscription: str
    resource_group: str
    provider: str
    type: str
    name: str


def parse_resource_id(resource_id: str) -> ResourceId:
    """Split `/subscriptions/<s>/resourceGroups/<g>/providers/<ns>/<type>/<name>`."""
    parts = resource_id.strip("/").split("/")
    if len(parts) != 8 or parts[0].lower() != "subscriptions" or parts[2].lower() != "resourcegroups" or parts[4].lower() != "providers":
        raise ValueError(f"not a top-level Azure resource ID: {resource_id}")
    return ResourceId(parts[1], parts[3], parts[5], parts[6], parts[7])
