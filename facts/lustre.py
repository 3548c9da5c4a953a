"""Azure Managed Lustre (AMLFS): the SKUs, sizes and subnets a file system is checked against.

Sources (MicrosoftDocs/azure-stack-docs, azure-managed-lustre/):
- create-file-system-resource-manager.md and create-file-system-portal.md: the SKU names
  `AMLFS-Durable-Premium-<MB/s per TiB>`, each tier's minimum size and increment, the default
  maximum (more through a support request), one availability zone per file system, and that size,
  key type and blob integration are fixed at creation. Per region, Azure's own figures are the
  `Microsoft.StorageCache/skus` capabilities "OSS capacity increment (TiB)" and "default maximum
  capacity (TiB)" (kubernetes-sigs/azurelustre-csi-driver reads them for dynamic provisioning).
- amlfs-prerequisites.md: the smallest subnet per capacity band, one subnet per file system,
  TCP 988 and 1019-1023 between clients and the file system.
- pulumi-azure-native 3.29.0 `storagecache.AmlFilesystem` (API 2024-03-01): the SKU is a plain
  string; `storage_capacity_ti_b`, `filesystem_subnet`, `maintenance_window` are required.
"""

from __future__ import annotations

from dataclasses import dataclass

SKU_PREFIX = "AMLFS-Durable-Premium-"


@dataclass(frozen=True)
class LustreTier:
    throughput_mbps_per_tib: int
    min_tib: int
    step_tib: int  # sizes are whole multiples of it
    default_max_tib: int  # beyond it, a support request


LUSTRE_TIERS: dict[str, LustreTier] = {
    f"{SKU_PREFIX}40": LustreTier(40, 48, 48, 768),
    f"{SKU_PREFIX}125": LustreTier(125, 16, 16, 128),
    f"{SKU_PREFIX}250": LustreTier(250, 8, 8, 128),
    f"{SKU_PREFIX}500": LustreTier(500, 4, 4, 128),
}

# (largest capacity in TiB, the longest subnet prefix that holds a file system of it).
SUBNET_PREFIX_BY_CAPACITY: tuple[tuple[int, int], ...] = ((16, 27), (40, 26), (92, 25), (196, 24), (400, 23))

# Client to file system, both ways (Lustre's LNet and its management ports).
LUSTRE_PORTS: tuple[str, ...] = ("988", "1019-1023")

# What a file system's own subnet must reach when its traffic leaves through a firewall
# (configure-firewall.md, 2025-09): these names on HTTP and HTTPS, these service tags on TCP 443,
# and NTP; traffic inside its subnet stays inside (the subnet's NSG keeps Azure's VNet rules).
EGRESS_FQDNS: tuple[str, ...] = (
    "*.azure.com",
    "*.windows.com",
    "*.windows.net",
    "*.microsoft.com",
    "*.azure.net",
    "*.archive.ubuntu.com",
    "*.cvd.clamav.net",
    "*.trafficmanager.net",
)
EGRESS_SERVICE_TAGS: tuple[str, ...] = (
    "ActionGroup",
    "ApiManagement",
    "AzureActiveDirectory",
    "AzureDataLake",
    "AzureKeyVault",
    "AzureMonitor",
    "AzureResourceManager",
    "EventHub",
    "GuestAndHybridManagement",
    "Storage",
)
NTP_PORT = "123"
# The time server the firewall and NSG pages name (configure-firewall.md, configure-network-security-group.md).
NTP_ADDRESS = "168.61.215.74/32"
