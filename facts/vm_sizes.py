"""The VM sizes the platform allows, with what Azure publishes about each.

Sources: the VM size pages (MicrosoftDocs/azure-compute-docs `articles/virtual-machines/sizes/`)
for vCPUs, memory, GPUs and the temporary (resource) or cache disk; the Resource SKU API (as
captured in microsoft/ga4gh-tes `src/TesApi.Web/BatchSupportedVmSizeInformation_AZURECLOUD.json`)
for quota families and where the pages disagree with it (the NC H100 v5 "temp disk" the page
lists is its NVMe disk; the resource disk that holds an ephemeral OS disk is 128/256 GiB; for
ND96amsr_A100_v4 the smaller of the two figures is kept). Refresh: `az vm list-skus -l <region>
--size <size>` (capabilities MaxResourceVolumeMB, CachedDiskBytes, vCPUs, MemoryGB, GPUs) and
`az vm list-usage -l <region>` for the family names.

An ephemeral OS disk must fit the size's cache or temporary disk (learn.microsoft.com/azure/
virtual-machines/ephemeral-os-disks: "Cache, temp, or NVMe disk size for the VM size");
sizes without either take managed OS disks only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VmSize:
    name: str
    vcpus: int
    memory_gib: int
    gpus: int
    temp_disk_gib: int  # 0: no temporary disk
    cache_gib: int  # 0: no cache disk published (the temporary disk holds ephemeral OS disks)
    family: str  # the regional vCPU quota family
    premium_storage: bool
    arm64: bool = False
    burstable: bool = False

    @property
    def ephemeral_os_disk_gib(self) -> int:
        """The largest ephemeral OS disk the size can hold (cache placement where it has one)."""
        return max(self.cache_gib, self.temp_disk_gib)


def _s(
    name: str,
    vcpus: int,
    memory: int,
    gpus: int,
    temp: int,
    cache: int,
    family: str,
    premium: bool = True,
    **kind: bool,
) -> VmSize:
    return VmSize(name, vcpus, memory, gpus, temp, cache, family, premium, **kind)


VM_SIZES: dict[str, VmSize] = {
    size.name: size
    for size in (
        # General purpose, Ddsv5 / Dsv3 / Ddv5 / Dpsv5 / Bs.
        _s("Standard_D2ds_v5", 2, 8, 0, 75, 0, "standardDDSv5Family"),
        _s("Standard_D4ds_v5", 4, 16, 0, 150, 0, "standardDDSv5Family"),
        _s("Standard_D8ds_v5", 8, 32, 0, 300, 0, "standardDDSv5Family"),
        _s("Standard_D16ds_v5", 16, 64, 0, 600, 0, "standardDDSv5Family"),
        _s("Standard_D32ds_v5", 32, 128, 0, 1200, 0, "standardDDSv5Family"),
        _s("Standard_D2s_v3", 2, 8, 0, 16, 50, "standardDSv3Family"),
        _s("Standard_D4s_v3", 4, 16, 0, 32, 100, "standardDSv3Family"),
        _s("Standard_D8d_v5", 8, 32, 0, 300, 0, "standardDDv5Family", premium=False),
        _s("Standard_D4ps_v5", 4, 16, 0, 0, 0, "standardDPSv5Family", arm64=True),
        _s("Standard_B4ms", 4, 16, 0, 32, 0, "standardBSFamily", burstable=True),
        # Memory optimized, Edsv5 / Esv5; compute optimized, Fsv2.
        _s("Standard_E4ds_v5", 4, 32, 0, 150, 0, "standardEDSv5Family"),
        _s("Standard_E8ds_v5", 8, 64, 0, 300, 0, "standardEDSv5Family"),
        _s("Standard_E16ds_v5", 16, 128, 0, 600, 0, "standardEDSv5Family"),
        _s("Standard_E16s_v5", 16, 128, 0, 0, 0, "standardESv5Family"),
        _s("Standard_F8s_v2", 8, 16, 0, 64, 0, "standardFSv2Family"),
        # GPU: NC A100 v4, NC H100 v5, ND A100 v4, ND H100 v5, ND H200 v5, NCasT4_v3.
        _s("Standard_NC24ads_A100_v4", 24, 220, 1, 64, 0, "StandardNCADSA100v4Family"),
        _s("Standard_NC48ads_A100_v4", 48, 440, 2, 128, 0, "StandardNCADSA100v4Family"),
        _s("Standard_NC96ads_A100_v4", 96, 880, 4, 256, 0, "StandardNCADSA100v4Family"),
        _s("Standard_NC40ads_H100_v5", 40, 320, 1, 128, 0, "StandardNCadsH100v5Family"),
        _s("Standard_NC80adis_H100_v5", 80, 640, 2, 256, 0, "StandardNCadsH100v5Family"),
        _s("Standard_ND96asr_v4", 96, 900, 8, 6000, 0, "Standard NDASv4_A100 Family"),
        _s("Standard_ND96amsr_A100_v4", 96, 1900, 8, 2900, 0, "standard NDAMSv4_A100Family"),
        _s("Standard_ND96isr_H100_v5", 96, 1900, 8, 1024, 0, "standardNDSH100v5Family"),
        _s("Standard_ND96isr_H200_v5", 96, 1850, 8, 1024, 0, "standardNDISRH200V5Family"),
        _s("Standard_NC4as_T4_v3", 4, 28, 1, 176, 0, "Standard NCASv3_T4 Family"),
        _s("Standard_NC64as_T4_v3", 64, 440, 4, 2816, 0, "Standard NCASv3_T4 Family"),
    )
}

# AKS: "System node pools require a VM SKU of at least 4 vCPUs and 4 GB of memory"; "B series VMs
# aren't supported for system node pools" (learn.microsoft.com/azure/aks/use-system-pools).
SYSTEM_POOL_MIN_VCPUS = 4
SYSTEM_POOL_MIN_MEMORY_GIB = 4
# AKS gives a pool an ephemeral OS disk by default only where the temporary disk holds at least
# 128 GiB, and managed OS disks of 128 GiB and more otherwise (learn.microsoft.com/azure/aks/
# concepts-storage, "Ephemeral OS disk"). GPU nodes pull multi-GB CUDA images and, with the GPU
# operator, build the driver in a container: the platform holds them to that floor.
GPU_POOL_MIN_OS_DISK_GIB = 128


def known_sizes() -> str:
    return ", ".join(sorted(VM_SIZES))
