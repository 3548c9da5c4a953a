"""The GPU VM sizes the platform supports, and what a GPU pool looks like to Kubernetes.

Plain data and functions: the config model validates sizes against this catalogue, the
capacity planner counts GPUs with it, and the cluster component labels and taints pools
from it. Figures are from the Azure VM size pages (NC A100 v4, NC H100 v5, ND A100 v4,
ND H100 v5, ND H200 v5, NCasT4_v3).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GpuVmSize:
    vm_size: str
    gpu_model: str  # short name used in labels and plans: "A100", "H100", ...
    gpus: int  # physical GPUs per VM
    gpu_memory_gb: int  # per GPU
    vcpus: int
    memory_gib: int
    temp_disk_gib: int  # the local temporary disk, which holds an ephemeral OS disk
    mig: bool  # supports Multi-Instance GPU partitioning (gpuInstanceProfile)
    infiniband: bool  # RDMA over InfiniBand between VMs (needs the Network Operator)


GPU_VM_SIZES: dict[str, GpuVmSize] = {
    size.vm_size: size
    for size in (
        # NC A100 v4: PCIe A100 80 GB, no InfiniBand; inference and fine-tuning.
        GpuVmSize("Standard_NC24ads_A100_v4", "A100", 1, 80, 24, 220, 64, mig=True, infiniband=False),
        GpuVmSize("Standard_NC48ads_A100_v4", "A100", 2, 80, 48, 440, 128, mig=True, infiniband=False),
        GpuVmSize("Standard_NC96ads_A100_v4", "A100", 4, 80, 96, 880, 256, mig=True, infiniband=False),
        # NC H100 v5: H100 NVL 94 GB, no InfiniBand.
        GpuVmSize("Standard_NC40ads_H100_v5", "H100", 1, 94, 40, 320, 3576, mig=True, infiniband=False),
        GpuVmSize("Standard_NC80adis_H100_v5", "H100", 2, 94, 80, 640, 7152, mig=True, infiniband=False),
        # ND A100 v4 / ND H100 v5 / ND H200 v5: 8 SXM GPUs with NVLink and one InfiniBand
        # link per GPU; the training sizes.
        GpuVmSize("Standard_ND96asr_v4", "A100", 8, 40, 96, 900, 6000, mig=True, infiniband=True),
        GpuVmSize("Standard_ND96amsr_A100_v4", "A100", 8, 80, 96, 1900, 6400, mig=True, infiniband=True),
        GpuVmSize("Standard_ND96isr_H100_v5", "H100", 8, 80, 96, 1900, 28000, mig=True, infiniband=True),
        GpuVmSize("Standard_ND96isr_H200_v5", "H200", 8, 141, 96, 1850, 1024, mig=True, infiniband=True),
        # NCasT4_v3: T4 16 GB; cheap inference and CI, no MIG.
        GpuVmSize("Standard_NC4as_T4_v3", "T4", 1, 16, 4, 28, 176, mig=False, infiniband=False),
        GpuVmSize("Standard_NC64as_T4_v3", "T4", 4, 16, 64, 440, 2816, mig=False, infiniband=False),
    )
}

# AKS partitions MIG-capable GPUs at pool creation (`gpuInstanceProfile`). With the device
# plugin's `single` strategy each slice is one schedulable `nvidia.com/gpu`.
MIG_SLICES_PER_GPU: dict[str, int] = {"MIG1g": 7, "MIG2g": 3, "MIG3g": 2, "MIG4g": 1, "MIG7g": 1}

GPU_RESOURCE = "nvidia.com/gpu"
DEFAULT_GPU_TAINT = "nvidia.com/gpu=present:NoSchedule"
# AKS puts this taint on Spot pools; declaring it too keeps the program and Azure in step.
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
# Labels on every GPU node, for nodeSelectors, Kueue flavors and policies.
LABEL_PREFIX = "platform.ai"
ACCELERATOR_LABEL = "accelerator"
POOL_LABEL = f"{LABEL_PREFIX}/gpu-pool"


def has_infiniband(cluster) -> bool:
    """Whether any GPU pool of `cluster` (a ClusterConfig) has InfiniBand (the Network Operator's)."""
    return any(GPU_VM_SIZES[pool.vm_size].infiniband for pool in cluster.gpu_pools.values())


def known_sizes() -> str:
    return ", ".join(sorted(GPU_VM_SIZES))


def gpu_units_per_node(size: GpuVmSize, mig_profile: str | None) -> int:
    """Schedulable `nvidia.com/gpu` per node: physical GPUs, or MIG slices."""
    return size.gpus * (MIG_SLICES_PER_GPU[mig_profile] if mig_profile else 1)


def taint_key(taint: str) -> str:
    return taint.split("=", 1)[0]


def taint_effect(taint: str) -> str:
    return taint.rsplit(":", 1)[1]


def platform_taints(gpu_taint: str, spot: bool) -> list[str]:
    """The taints the platform puts on a GPU pool: the cluster's GPU taint, and Spot's."""
    return [gpu_taint] + ([SPOT_TAINT] if spot else [])


def gpu_pool_labels(pool: str, size: GpuVmSize, purpose: str, mig_profile: str | None) -> dict[str, str]:
    labels = {
        ACCELERATOR_LABEL: "nvidia",
        POOL_LABEL: pool,
        f"{LABEL_PREFIX}/gpu-model": size.gpu_model,
        f"{LABEL_PREFIX}/gpu-memory-gb": str(size.gpu_memory_gb),
        f"{LABEL_PREFIX}/gpu-count": str(gpu_units_per_node(size, mig_profile)),
        f"{LABEL_PREFIX}/gpu-purpose": purpose,
        f"{LABEL_PREFIX}/infiniband": str(size.infiniband).lower(),
    }
    if mig_profile:
        labels[f"{LABEL_PREFIX}/mig-profile"] = mig_profile
    return labels


def toleration(taint: str) -> dict[str, str]:
    """A Kubernetes toleration for `key=value:Effect`, matching any value of the key."""
    return {"key": taint_key(taint), "operator": "Exists", "effect": taint_effect(taint)}
