"""Kueue objects for one cluster, as plain Kubernetes manifests (apiVersion kueue.x-k8s.io/v1beta2).

- A ResourceFlavor per GPU pool: the pool's node label, and the tolerations Kueue adds to
  admitted pods so they land on (tainted) GPU nodes. Not the preflight verdict: a label a node
  earns at run time would be missing from the autoscaler's template of a pool (from a node that
  has not earned it yet, or from the pool's spec at zero), and no gated job would scale the pool
  up; an unchecked node keeps work off with a startup taint instead (planning/gpu_health.py).
- A ClusterQueue per team holding quota on any pool: nominal GPUs (or MIG slices) from the
  pool's `quotas`, with CPU and memory in proportion to the node shape. All teams share a
  cohort, so idle quota can be borrowed and is reclaimed by its owner.
- A LocalQueue named `gpu` in each of the team's namespaces.

Jobs opt in with the label `kueue.x-k8s.io/queue-name: gpu`; Kueue admits a gang-scheduled
job only when its whole quota fits, so training jobs queue instead of half-starting.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from facts.gpu import GPU_RESOURCE, GPU_VM_SIZES, POOL_LABEL
from planning.capacity import PoolCapacity
from planning.gpu import platform_taints, toleration
from stackconfig.model import ClusterConfig, GpuPoolConfig, TeamConfig

API_VERSION = "kueue.x-k8s.io/v1beta2"
LOCAL_QUEUE = "gpu"
COHORT = "gpu"
TEAM_LABEL = "platform.ai/team"
COVERED_RESOURCES = ("cpu", "memory", GPU_RESOURCE)
# What a team's next GPUs take once the quotas fill a pool (docs/gpus.md, "Quotas"): said by the
# config check, `make capacity` and the review alike.
MORE_QUOTA = (
    "a bigger pool (its maxCount, or another pool), another team's quota lent (lowered there), or a quota "
    'of 0 here, borrowing what the others leave idle through the cohort (docs/gpus.md, "Quotas")'
)


# The job kinds Kueue manages: those whose controllers the platform runs and whose golden
# workloads pass the contracts (contracts/queueing.py: Jobs; Deployments' and bare pods' pods).
# MPIJob, TrainJob, JobSet, RayJob and RayCluster need operators the platform does not install,
# and their pods would fail the GPU queue's admission rule, which admits only the job
# controller's (planning/admission.py): enabling them advertised work nothing could run.
KUEUE_FRAMEWORKS = ("batch/job", "pod")


@dataclass(frozen=True)
class Manifest:
    """A custom resource to apply: apiVersion, kind, name (and namespace), spec."""

    kind: str
    name: str
    spec: dict[str, Any]
    namespace: str | None = None
    api_version: str = API_VERSION


def flavor_name(pool: str) -> str:
    return f"gpu-{pool}"


def resource_flavor(pool_name: str, pool: GpuPoolConfig, cluster: ClusterConfig) -> Manifest:
    taints = platform_taints(cluster.gpu.taint, pool.spot)
    return Manifest(
        "ResourceFlavor",
        flavor_name(pool_name),
        # Kueue writes these into every admitted pod's nodeSelector: a label AKS puts on every
        # node of the pool from its creation, and on the autoscaler's template of the pool.
        {
            "nodeLabels": {POOL_LABEL: pool_name},
            "tolerations": [toleration(t) for t in taints],
        },
    )


def quota_amounts(pool: GpuPoolConfig, units_per_node: int, gpus: int) -> dict[str, int]:
    """The GPUs, and the CPU (cores) and memory (GiB) that come with them, per covered resource."""
    size = GPU_VM_SIZES[pool.vm_size]
    share = gpus / units_per_node  # nodes' worth of this pool
    floor = 1 if gpus else 0  # a borrow-only team (0) is promised nothing of any resource
    return {
        "cpu": max(int(size.vcpus * share), floor),
        "memory": max(int(size.memory_gib * share), floor),
        GPU_RESOURCE: gpus,
    }


def flavor_spec(pool_name: str, amounts: dict[str, int]) -> dict[str, Any]:
    """A ClusterQueue flavor entry with these amounts (memory in GiB)."""
    return {
        "name": flavor_name(pool_name),
        "resources": [
            {"name": resource, "nominalQuota": f"{amounts[resource]}Gi" if resource == "memory" else amounts[resource]}
            for resource in COVERED_RESOURCES
        ],
    }


def flavor_quota(pool_name: str, pool: GpuPoolConfig, units_per_node: int, gpus: int) -> dict[str, Any]:
    """Quota on one flavor: the GPUs, and the CPU and memory that come with them."""
    return flavor_spec(pool_name, quota_amounts(pool, units_per_node, gpus))


def cluster_queue(team: str, pools: list[PoolCapacity]) -> Manifest:
    """The team's ClusterQueue over every pool it holds quota on."""
    flavors = [
        flavor_quota(p.name, p.gpu_pool, p.gpu_units_per_node, p.gpu_pool.quotas[team])
        for p in pools
        if team in p.gpu_pool.quotas
    ]
    return team_cluster_queue(team, flavors)


def team_cluster_queue(team: str, flavors: list[dict[str, Any]]) -> Manifest:
    """A team's ClusterQueue on a cluster that runs its jobs (an AKS cluster or a site), over
    these flavors' quotas, in the GPU cohort."""
    return Manifest(
        "ClusterQueue",
        f"team-{team}",
        {
            "cohortName": COHORT,
            "namespaceSelector": {"matchLabels": {TEAM_LABEL: team}},
            "queueingStrategy": "BestEffortFIFO",
            "preemption": {"reclaimWithinCohort": "Any", "withinClusterQueue": "LowerPriority"},
            "resourceGroups": [{"coveredResources": list(COVERED_RESOURCES), "flavors": flavors}],
        },
    )


def flavor_manifests(cluster: ClusterConfig, gpu_pools: list[PoolCapacity]) -> list[Manifest]:
    """The cluster's Kueue ResourceFlavors, one per GPU pool: the platform's, with the pools."""
    return [resource_flavor(p.name, p.gpu_pool, cluster) for p in gpu_pools]


def queue_manifests(gpu_pools: list[PoolCapacity], teams: dict[str, TeamConfig]) -> list[Manifest]:
    """Each team's ClusterQueue and a LocalQueue in each of its namespaces: the tenants'."""
    manifests = []
    for team in sorted({team for p in gpu_pools for team in p.gpu_pool.quotas}):
        manifests.append(cluster_queue(team, gpu_pools))
        # Streaming namespaces are outside Kueue (it has no FlinkDeployment integration).
        for namespace in (ns for ns in teams[team].namespaces if ns not in teams[team].streaming_namespaces):
            manifests.append(Manifest("LocalQueue", LOCAL_QUEUE, {"clusterQueue": f"team-{team}"}, namespace=namespace))
    return manifests


def cluster_manifests(
    cluster: ClusterConfig, gpu_pools: list[PoolCapacity], teams: dict[str, TeamConfig]
) -> list[Manifest]:
    """Every Kueue object of one cluster, flavors first."""
    return flavor_manifests(cluster, gpu_pools) + queue_manifests(gpu_pools, teams)
