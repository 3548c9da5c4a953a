"""Node pools: system, user, GPU and sandbox pools, and their shared settings."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field

from facts.aks_limits import MAX_NODES_PER_CLUSTER, MAX_NODES_PER_POOL, MAX_PODS_PER_NODE
from facts.gpu import DEFAULT_GPU_TAINT
from stackconfig.model.base import (
    CapacityReservationGroupId,
    Duration,
    GpuVmSizeName,
    MaxSurge,
    MigProfile,
    Model,
    Taint,
    VmSize,
    Zone,
)

OsSku = Literal["AzureLinux", "Ubuntu"]


class PoolSettings(Model):
    """Settings every node pool has: the system pool, CPU pools and GPU pools."""

    vm_size: VmSize = Field(
        description="A size of the catalogue (`facts/vm_sizes.py`); GPU sizes only in `gpuPools`. The system "
        "pool needs 4 vCPUs, 4 GiB and no B-series."
    )
    min_count: int = Field(
        ge=0,
        le=100_000,
        description="Fewest nodes the autoscaler keeps; the program never sets `count` after creation.",
    )
    max_count: int = Field(
        ge=1,
        le=100_000,
        description=f"Most nodes the autoscaler may add; AKS allows {MAX_NODES_PER_POOL:,} per pool and "
        f"{MAX_NODES_PER_CLUSTER:,} per cluster (checked with the capacity plan).",
    )
    max_pods: int = Field(default=110, ge=10, le=MAX_PODS_PER_NODE, description="Pods per node.")
    max_surge: MaxSurge = Field(
        default="10%",
        description="Extra nodes during an upgrade: `\"10%\"` or a count; surge nodes need addresses too.",
    )
    os_disk_size_gb: int = Field(
        default=128,
        ge=30,
        le=2048,
        alias="osDiskSizeGB",
        description="OS disk size; an ephemeral disk must fit the size's cache or temporary disk.",
    )
    os_disk_type: Literal["Ephemeral", "Managed"] = Field(
        default="Ephemeral",
        description="`Ephemeral` (on the VM's local disk) or `Managed`; sizes without a local disk that fits "
        "take `Managed`.",
    )
    zones: Optional[list[Zone]] = Field(
        default=None, description="Zones of the pool, a subset of the cluster's. Unset: the cluster's zones."
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Node labels, Kubernetes syntax; never under AKS's `kubernetes.azure.com/` or `kubernetes.io/`.",
    )
    taints: list[Taint] = Field(default_factory=list, description="Node taints, `key=value:Effect`.")


class PoolConfig(PoolSettings):
    """Settings shared by the system pool and CPU user pools."""

    os_sku: OsSku = Field(
        default="AzureLinux", description="Node OS image; Azure Linux is the smaller, AKS-maintained default."
    )


class SystemPoolConfig(PoolConfig):
    """The inline system pool; it always carries the CriticalAddonsOnly taint."""

    min_count: int = Field(default=3, ge=1, le=100_000, description="Fewest system nodes the autoscaler keeps.")
    max_count: int = Field(default=6, ge=1, le=100_000, description="Most system nodes the autoscaler may add.")


class NodePoolConfig(PoolConfig):
    """A CPU user pool, registered as its own AgentPool resource."""


class GpuPoolConfig(PoolSettings):
    """A GPU pool: an AgentPool of a catalogued GPU size (facts/gpu.py)."""

    vm_size: GpuVmSizeName = Field(description="A GPU size of the catalogue (`facts/gpu.py`).")
    purpose: Literal["training", "batch", "inference"] = Field(
        description="What the pool is for, read by policies and Kueue: `training` (gang-scheduled, "
        "InfiniBand), `batch` or `inference`."
    )
    min_count: int = Field(default=0, ge=0, le=100_000, description="Fewest nodes; GPU pools scale to zero when idle.")
    max_surge: MaxSurge = Field(
        default="1", description="GPU capacity is scarce: surge one node at a time (a percentage at most 10%)."
    )
    spot: bool = Field(
        default=False,
        description="Spot VMs: evicted (deleted) when Azure needs the capacity back, at any price up to on-"
        "demand; the Spot taint is added.",
    )
    mig_profile: Optional[MigProfile] = Field(
        default=None,
        description="Multi-Instance GPU partitioning, fixed at creation (MIG-capable sizes only): 7, 3, 2, 1 "
        "and 1 slices per GPU for MIG1g to MIG7g.",
    )
    capacity_reservation_group_id: Optional[CapacityReservationGroupId] = Field(
        default=None,
        description="A `Microsoft.Compute/capacityReservationGroups` ID to draw nodes from; not with Spot.",
    )
    quotas: dict[str, Annotated[int, Field(ge=0, le=1_000_000)]] = Field(
        default_factory=dict,
        description="GPUs (or MIG slices) of this pool each team may use through Kueue, `{team: count}`, "
        "summing to at most the pool's capacity. `0`: the team is promised none but may borrow what the "
        "others leave idle, through the teams' shared cohort, until they reclaim it (docs/gpus.md, \"Quotas\").",
    )
    cold_start: Optional[Duration] = Field(
        default=None,
        description="How long a new node of this pool takes from the autoscaler's request to passing "
        "preflight, as measured (the autoscaler's events and the agent's `preflight` log). Unset: the "
        "platform's estimate from the size, the driver and the diagnostic level (planning/cold_start.py). "
        "Kueue's `waitForPodsReady` and the autoscaler's provisioning and unready times follow it.",
    )


class GpuSettings(Model):
    """What all GPU pools of one cluster share."""

    driver: Literal["aks", "operator"] = Field(
        default="aks",
        description="Who installs the NVIDIA driver and container toolkit: `aks` (`gpuProfile.driver: "
        "Install`; the GPU operator skips both) or `operator` (driver `None`; the GPU operator "
        "installs them). One switch, so the pool and the operator cannot disagree.",
    )
    os_sku: OsSku = Field(
        default="Ubuntu",
        description="OS of every GPU pool of the cluster (the GPU operator does not support mixed OS versions"
        " across GPU nodes).",
    )
    taint: Taint = Field(
        default=DEFAULT_GPU_TAINT, description="Taint on every GPU pool; the GPU stack and Kueue flavors tolerate it."
    )


class SandboxPoolConfig(PoolSettings):
    """A pool for high-risk jobs: AKS Pod Sandboxing, each pod in its own Kata VM.

    AzureLinux only, on a VM size with nested virtualization (planning/sandbox.py). The
    pool carries the sandbox taint; pods of high-risk namespaces must use the
    `kata-vm-isolation` RuntimeClass (an admission policy enforces it) and tolerate it.
    """

    min_count: int = Field(
        default=0, ge=0, le=100_000, description="Fewest sandbox nodes; the pool scales to zero when idle."
    )
    max_surge: MaxSurge = Field(default="1", description="Extra nodes during an upgrade.")
