"""How long a GPU node takes from the autoscaler's request to passing preflight, and what waits on it.

A gang job admitted onto a pool at zero waits for every node of the pool's scale-up to boot,
load its drivers and pass preflight. Three timers must outlast that, or the platform fights
itself:

- Kueue's `waitForPodsReady.timeout` (one setting per Kueue in v0.19.2: per-workload timeouts
  are a proposal, kubernetes-sigs/kueue#4803): shorter, and the gang is evicted and requeued
  while its nodes are still being checked, in a loop;
- the autoscaler's `max-node-provision-time`: shorter, and a scale-up whose nodes have not
  started counts as timed out and backs the pool off;
- the autoscaler's `scale-down-unready-time`: shorter, and a node still being checked (unready
  to the autoscaler while it carries the preflight gate's startup taint) is removed.

Each cluster's budget is its slowest GPU pool's: the pool's measured `coldStart` where config
has one, else the estimate below. What the estimate cannot change: the autoscaler counts a node
as starting for 15 minutes after its creation (clusterstate.go `MaxNodeStartupTime`; AKS exposes
no flag for it), after which a node still carrying the startup taint is unready, no longer an
upcoming node: a longer cold start can make it request more nodes than a gang needs, which
scale down again once they are idle (docs/gpus.md, "Cold start").
"""

from __future__ import annotations

from facts.autoscaler import MAX_NODE_STARTUP_SECONDS
from facts.gpu import GPU_VM_SIZES
from stackconfig.model import ClusterConfig, GpuHealthConfig, GpuPoolConfig, duration_seconds

MINUTE = 60
# Estimates of the phases of a GPU node's cold start, to be replaced by a pool's measured
# `coldStart`. The VM and AKS's node bootstrap:
PROVISION = 8 * MINUTE
# The NVIDIA driver: AKS's (installed while the node bootstraps) or the GPU operator's (a driver
# container that builds or loads the module, then the toolkit); the DOCA driver on InfiniBand.
AKS_DRIVER = 4 * MINUTE
OPERATOR_DRIVER = 10 * MINUTE
DOCA_DRIVER = 8 * MINUTE
# The GPU operator's validators, device plugin and DCGM's host engine.
VALIDATION = 2 * MINUTE
# DCGM's diagnostic by run level (DCGM user guide, "Run Levels": 1 quick, seconds; 2 medium,
# about 2 minutes; 3 long, about 30 minutes), and the InfiniBand links coming up.
DIAGNOSTIC = {0: 0, 1: MINUTE, 2: 3 * MINUTE, 3: 30 * MINUTE, 4: 120 * MINUTE}
LINKS = MINUTE
# After the nodes pass: pulling a training image of several gigabytes and starting the pods.
PODS_READY_MARGIN = 10 * MINUTE
# Never below Kueue's and the autoscaler's own defaults.
PODS_READY_FLOOR = 30 * MINUTE
PROVISION_FLOOR = 15 * MINUTE
UNREADY_FLOOR = 20 * MINUTE


def estimate(pool: GpuPoolConfig, driver: str, diag_level: int) -> int:
    """Seconds from a scale-up request to preflight passing on a node of this pool, estimated."""
    size = GPU_VM_SIZES[pool.vm_size]
    seconds = PROVISION + (OPERATOR_DRIVER if driver == "operator" else AKS_DRIVER) + VALIDATION
    if size.infiniband:
        seconds += DOCA_DRIVER + LINKS
    return seconds + DIAGNOSTIC[diag_level]


def pool_cold_start(pool: GpuPoolConfig, cluster: ClusterConfig, health: GpuHealthConfig) -> int:
    if pool.cold_start is not None:
        return duration_seconds(pool.cold_start)
    # Partly MIG-partitioned pools skip the diagnostic (planning/gpu_health.py, pool_checks).
    level = 0 if pool.mig_profile and pool.mig_profile != "MIG7g" else health.diag_level
    return estimate(pool, cluster.gpu.driver, level)


def cluster_cold_start(cluster: ClusterConfig, health: GpuHealthConfig) -> int:
    """The slowest GPU pool's cold start (0 without GPU pools)."""
    return max((pool_cold_start(p, cluster, health) for p in cluster.gpu_pools.values()), default=0)


def minutes(seconds: int) -> str:
    """A duration as Kueue and AKS take it, rounded up to whole minutes."""
    return f"{-(-seconds // MINUTE)}m"


def pods_ready_timeout(cold_start: int) -> str:
    """Kueue's waitForPodsReady timeout for a cluster whose (or whose workers') slowest pool
    starts cold in `cold_start` seconds."""
    return minutes(max(cold_start + PODS_READY_MARGIN, PODS_READY_FLOOR))


def autoscaler_times(cluster: ClusterConfig, health: GpuHealthConfig) -> tuple[str, str]:
    """(max-node-provision-time, scale-down-unready-time): config's, raised to the cold start."""
    cold = cluster_cold_start(cluster, health)
    scaler = cluster.autoscaler
    provision = max(duration_seconds(scaler.max_node_provision_time), cold, PROVISION_FLOOR)
    unready = max(duration_seconds(scaler.scale_down_unready_time), cold + 5 * MINUTE, UNREADY_FLOOR)
    return minutes(provision), minutes(unready)


def ok_unready_count(cluster: ClusterConfig, health: GpuHealthConfig) -> int:
    """How many unready nodes the autoscaler tolerates whatever their share (`ok-total-unready-count`,
    3 by default): where a GPU pool starts cold for longer than the autoscaler's 15 minutes of
    "not started", a whole scale-up of it is unready for a while, and past 45% of the cluster's
    nodes (`max-total-unready-percentage`) that would stop every scale-up and scale-down of the
    cluster (clusterstate.go IsClusterHealthy). Raised to the largest GPU pool's maximum there."""
    slow = [
        p.max_count
        for p in cluster.gpu_pools.values()
        if pool_cold_start(p, cluster, health) > MAX_NODE_STARTUP_SECONDS
    ]
    return max([cluster.autoscaler.ok_total_unready_count, *slow])
