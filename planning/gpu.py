"""What a GPU pool looks like to Kubernetes: its taints, labels and the tolerations for them.

The catalogue of GPU sizes and the label and taint names are facts/gpu.py.
"""

from __future__ import annotations

from facts.gpu import (
    ACCELERATOR_LABEL,
    GPU_VM_SIZES,
    LABEL_PREFIX,
    POOL_LABEL,
    PREFLIGHT_TAINT,
    PURPOSE_LABEL,
    SPOT_TAINT,
    UNHEALTHY_TAINT_KEY,
    GpuVmSize,
    gpu_units_per_node,
)
from stackconfig.model import ClusterConfig


def has_infiniband(cluster: ClusterConfig) -> bool:
    """Whether any GPU pool of `cluster` has InfiniBand (the Network Operator's)."""
    return any(GPU_VM_SIZES[pool.vm_size].infiniband for pool in cluster.gpu_pools.values())


def taint_key(taint: str) -> str:
    return taint.split("=", 1)[0]


def taint_effect(taint: str) -> str:
    return taint.rsplit(":", 1)[1]


def platform_taints(gpu_taint: str, spot: bool) -> list[str]:
    """The taints the platform puts on a GPU pool: the cluster's GPU taint, and Spot's."""
    return [gpu_taint] + ([SPOT_TAINT] if spot else [])


# The fault taint the GPU health checks put on a node (planning/gpu_health.py, through NFD).
UNHEALTHY_TAINT = f"{UNHEALTHY_TAINT_KEY}=true:NoSchedule"


def node_agent_tolerations(cluster: ClusterConfig) -> list[dict[str, str]]:
    """What a node agent on any GPU pool tolerates: the GPU and Spot taints, the preflight gate
    (drivers, device plugins and the checks themselves run before a node takes work) and the
    fault taint (agents keep running, and restart, on a node the health checks took out of
    service)."""
    any_spot = any(pool.spot for pool in cluster.gpu_pools.values())
    taints = [*platform_taints(cluster.gpu.taint, any_spot), PREFLIGHT_TAINT, UNHEALTHY_TAINT]
    return [toleration(t) for t in taints]


def gpu_pool_labels(pool: str, size: GpuVmSize, purpose: str, mig_profile: str | None) -> dict[str, str]:
    labels = {
        ACCELERATOR_LABEL: "nvidia",
        POOL_LABEL: pool,
        f"{LABEL_PREFIX}/gpu-model": size.gpu_model,
        f"{LABEL_PREFIX}/gpu-memory-gb": str(size.gpu_memory_gb),
        f"{LABEL_PREFIX}/gpu-count": str(gpu_units_per_node(size, mig_profile)),
        PURPOSE_LABEL: purpose,
        f"{LABEL_PREFIX}/infiniband": str(size.infiniband).lower(),
    }
    if mig_profile:
        labels[f"{LABEL_PREFIX}/mig-profile"] = mig_profile
    return labels


def toleration(taint: str) -> dict[str, str]:
    """A Kubernetes toleration for `key=value:Effect`, matching any value of the key."""
    return {"key": taint_key(taint), "operator": "Exists", "effect": taint_effect(taint)}
