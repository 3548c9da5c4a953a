"""The GPU VM sizes the platform supports, and the names GPU pools carry in Kubernetes.

Figures are from the Azure VM size pages (NC A100 v4, NC H100 v5, ND A100 v4, ND H100 v5,
ND H200 v5, NCasT4_v3); vCPUs, memory, GPUs and disks are facts/vm_sizes.py. The config model
validates sizes against this catalogue, the capacity planner counts GPUs with it, and the
cluster component labels and taints pools from it (planning/gpu.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from facts.autoscaler import STARTUP_TAINT_PREFIX
from facts.vm_sizes import VM_SIZES, VmSize


@dataclass(frozen=True)
class GpuVmSize:
    """What a GPU size means to the platform; vCPUs, memory, GPUs and disks are facts/vm_sizes.py."""

    vm_size: str
    gpu_model: str  # short name used in labels and plans: "A100", "H100", ...
    gpu_memory_gb: int  # per GPU
    mig: bool  # supports Multi-Instance GPU partitioning (gpuInstanceProfile)
    infiniband: bool  # RDMA over InfiniBand between VMs (needs the Network Operator)
    # Speed of each of the VM's InfiniBand links (one per GPU): HDR 200, NDR 400 Gb/s.
    infiniband_gbps: int = 0
    # NCCL's topology file for the size (`NCCL_TOPO_FILE`): Azure/azhpc-images topology/, which
    # Azure's HPC images install under /opt/microsoft and Azure's NCCL image for AKS copies to
    # /etc/topology (Azure/ai-infrastructure-on-azure, infrastructure_validations/aks/NCCL).
    nccl_topology: str = ""

    @property
    def facts(self) -> VmSize:
        return VM_SIZES[self.vm_size]

    @property
    def gpus(self) -> int:  # physical GPUs per VM
        return self.facts.gpus

    @property
    def vcpus(self) -> int:
        return self.facts.vcpus

    @property
    def memory_gib(self) -> int:
        return self.facts.memory_gib

    @property
    def temp_disk_gib(self) -> int:
        """The largest ephemeral OS disk the size holds."""
        return self.facts.ephemeral_os_disk_gib


GPU_VM_SIZES: dict[str, GpuVmSize] = {
    size.vm_size: size
    for size in (
        # NC A100 v4: PCIe A100 80 GB, no InfiniBand; inference and fine-tuning.
        GpuVmSize("Standard_NC24ads_A100_v4", "A100", 80, mig=True, infiniband=False),
        GpuVmSize("Standard_NC48ads_A100_v4", "A100", 80, mig=True, infiniband=False),
        GpuVmSize("Standard_NC96ads_A100_v4", "A100", 80, mig=True, infiniband=False),
        # NC H100 v5: H100 NVL 94 GB, no InfiniBand.
        GpuVmSize("Standard_NC40ads_H100_v5", "H100", 94, mig=True, infiniband=False),
        GpuVmSize("Standard_NC80adis_H100_v5", "H100", 94, mig=True, infiniband=False),
        # ND A100 v4 / ND H100 v5 / ND H200 v5: 8 SXM GPUs with NVLink and one InfiniBand
        # link per GPU (8 x 200 Gb/s HDR on A100 v4, 8 x 400 Gb/s NDR on H100 and H200 v5);
        # the training sizes.
        GpuVmSize("Standard_ND96asr_v4", "A100", 40, True, True, 200, "ndv4-topo.xml"),
        GpuVmSize("Standard_ND96amsr_A100_v4", "A100", 80, True, True, 200, "ndv4-topo.xml"),
        # H200 v5 shares H100 v5's layout and file (Azure/ai-infrastructure-on-azure's ND H200 runs).
        GpuVmSize("Standard_ND96isr_H100_v5", "H100", 80, True, True, 400, "ndv5-topo.xml"),
        GpuVmSize("Standard_ND96isr_H200_v5", "H200", 141, True, True, 400, "ndv5-topo.xml"),
        # NCasT4_v3: T4 16 GB; cheap inference and CI, no MIG.
        GpuVmSize("Standard_NC4as_T4_v3", "T4", 16, mig=False, infiniband=False),
        GpuVmSize("Standard_NC64as_T4_v3", "T4", 16, mig=False, infiniband=False),
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
# training, batch or inference (the pool's `purpose`): Kueue flavors and the policy packs read it.
PURPOSE_LABEL = f"{LABEL_PREFIX}/gpu-purpose"
# The preflight verdict a GPU node's health agent publishes (`passed` or `failed`), for alerts
# and people; what keeps work off an unchecked or failed node is the gate below.
PREFLIGHT_LABEL = f"{LABEL_PREFIX}/preflight"
PREFLIGHT_PASSED = "passed"
# The preflight gate (planning/gpu_health.py): the agent taints its node with this startup taint
# at boot, before anything can use the GPUs, and removes it when preflight passes; a node that
# fails loses the taint and is cordoned instead. The prefix is the cluster autoscaler's
# (facts/autoscaler.py): a node carrying it is "upcoming", never a template for a scale-up.
PREFLIGHT_TAINT_KEY = f"{STARTUP_TAINT_PREFIX}platform-gpu-preflight"
PREFLIGHT_TAINT_VALUE = "pending"
PREFLIGHT_TAINT = f"{PREFLIGHT_TAINT_KEY}={PREFLIGHT_TAINT_VALUE}:NoSchedule"
# On a node the agent cordoned: `<boot ID>:<check>`, so only a later boot's pass uncordons it.
CORDON_ANNOTATION = f"{LABEL_PREFIX}/gpu-health-cordon"
# Passive health: the checker taints a node whose GPUs or fabric report faults (NoSchedule: no
# new gang member lands there; what runs is drained by remediation, rate-limited).
UNHEALTHY_TAINT_KEY = f"{LABEL_PREFIX}/gpu-unhealthy"


def known_sizes() -> str:
    return ", ".join(sorted(GPU_VM_SIZES))


def gpu_units_per_node(size: GpuVmSize, mig_profile: str | None) -> int:
    """Schedulable `nvidia.com/gpu` per node: physical GPUs, or MIG slices."""
    return size.gpus * (MIG_SLICES_PER_GPU[mig_profile] if mig_profile else 1)
