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

# The Azure Lustre CSI driver (kubernetes-sigs/azurelustre-csi-driver, tag v0.4.0, commit
# 9011a5fc83654e814d014b029598082ed0165dc2): its name, the images of its node plugin, and what a
# statically provisioned volume carries (deploy/*.yaml, docs/examples/pv.yaml,
# pkg/azurelustre/nodeserver.go).
CSI_DRIVER = "azurelustre.csi.azure.com"
CSI_VERSION = "v0.4.0"
CSI_REPOSITORY = "mcr.microsoft.com/oss/v2/kubernetes-csi/azurelustre-csi"
LIVENESS_PROBE_IMAGE = ("mcr.microsoft.com/oss/kubernetes-csi/livenessprobe", "v2.15.0")
NODE_REGISTRAR_IMAGE = ("mcr.microsoft.com/oss/kubernetes-csi/csi-node-driver-registrar", "v2.13.0")


@dataclass(frozen=True)
class CsiNodeFlavor:
    """One of the driver's node DaemonSets: an image per Ubuntu release, each installing the
    Lustre client built for that release (deploy/csi-azurelustre-node-<flavor>.yaml)."""

    name: str  # the image tag's suffix and the DaemonSet's
    os_sku_effective: str  # AKS's `kubernetes.azure.com/os-sku-effective` label of its nodes
    lustre_version: str
    client_sha_suffix: str


CSI_NODE_FLAVORS: tuple[CsiNodeFlavor, ...] = (
    CsiNodeFlavor("jammy", "Ubuntu2204", "2.15.7", "33-g79ddf99"),
    CsiNodeFlavor("noble", "Ubuntu2404", "2.16.1", "14-gbc76088"),
)
# The ports the node plugin's containers serve their health on (hostNetwork: the node's).
CSI_NODE_HEALTH_PORT = 29763
# Every mount is `<mgs address>@tcp:/lustrefs[/<sub-dir>]`: AMLFS's file system is always named
# lustrefs, and the driver ignores `fs-name` on static volumes (nodeserver.go, DefaultLustreFsName).
FILE_SYSTEM_NAME = "lustrefs"
MOUNT_OPTIONS: tuple[str, ...] = ("noatime", "flock")
# Where the node plugin fetches the Lustre client for the node's exact kernel at every start
# (pkg/azurelustreplugin/entrypoint.sh): one of AKS's required outbound FQDNs, so the
# AzureKubernetesService FQDN tag already allows it (outbound-rules-control-egress.md).
CLIENT_PACKAGES_FQDN = "packages.microsoft.com"
# The node plugin's startup probe allows 120 x 5 s for the client install and module load.
CSI_NODE_STARTUP_SECONDS = 600
