"""Scheduling: which node pools would take this pod, and does it fit a node of its pool?

A pod lands on a pool whose labels satisfy its nodeSelector and required node affinity and
whose NoSchedule/NoExecute taints it all tolerates. The contract wants exactly one such pool,
the intended one, no toleration of a taint that pool does not carry, and requests within one
node's allocatable CPU and memory (facts/aks_node.py, less the node agents' headroom), GPUs
(the pool's `platform.ai/gpu-count` label: GPUs or MIG slices) and RDMA devices (the Network
Operator's plugin, on InfiniBand nodes only).
"""

from __future__ import annotations

from typing import Any

from contracts.cluster import DAEMON_SET, ClusterView, Pool, selector_matches
from facts import aks_node
from facts.gpu import GPU_RESOURCE, LABEL_PREFIX
from facts.vm_sizes import VM_SIZES

RDMA_RESOURCE = "rdma/shared_ib"
_UNITS = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4, "k": 1000, "M": 1000**2, "G": 1000**3}


def quantity(value: Any) -> float:
    """A Kubernetes quantity as a number (cores for CPU, bytes for memory)."""
    text = str(value)
    if text.endswith("m"):
        return float(text[:-1]) / 1000
    for suffix, factor in _UNITS.items():
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def tolerates(tolerations: list[dict[str, Any]], taint: str) -> bool:
    head, effect = taint.rsplit(":", 1)
    key, _, value = head.partition("=")
    for t in tolerations:
        if t.get("effect") and t["effect"] != effect:
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == key):
            return True
        if t.get("key") == key and t.get("value", "") == value:
            return True
    return False


def _affinity_matches(pod_spec: dict[str, Any], labels: dict[str, str]) -> bool:
    for key, value in (pod_spec.get("nodeSelector") or {}).items():
        if labels.get(key) != value:
            return False
    terms = (
        ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution"
        )
        or {}
    ).get("nodeSelectorTerms")
    if terms:
        return any(selector_matches({"matchExpressions": t.get("matchExpressions") or []}, labels) for t in terms)
    return True


def pools_for(view: ClusterView, pod_spec: dict[str, Any]) -> list[str]:
    tolerations = pod_spec.get("tolerations") or []
    return [
        pool.name
        for pool in view.pools.values()
        if _affinity_matches(pod_spec, pool.labels)
        and all(tolerates(tolerations, t) for t in pool.taints if not t.endswith(":PreferNoSchedule"))
    ]


def pod_requests(pod_spec: dict[str, Any]) -> dict[str, float]:
    """The pod's effective requests: the sum of its containers, or the largest init container."""

    def total(containers):
        sums: dict[str, float] = {}
        for c in containers:
            resources = c.get("resources") or {}
            for name, value in {**(resources.get("limits") or {}), **(resources.get("requests") or {})}.items():
                sums[name] = sums.get(name, 0) + quantity(value)
        return sums

    needed = total(pod_spec.get("containers") or [])
    for init in pod_spec.get("initContainers") or []:
        for name, value in total([init]).items():
            needed[name] = max(needed.get(name, 0), value)
    return needed


def capacity(view: ClusterView, pool: Pool) -> dict[str, float]:
    vcpus, memory_gib = (
        (VM_SIZES[pool.vm_size].vcpus, VM_SIZES[pool.vm_size].memory_gib)
        if pool.vm_size in VM_SIZES
        else pool.shape or (0, 0)
    )
    return {
        "cpu": (aks_node.allocatable_cpu_millicores(vcpus) - aks_node.NODE_AGENT_HEADROOM_MILLICORES) / 1000,
        "memory": aks_node.allocatable_memory_bytes(memory_gib, pool.max_pods)
        - aks_node.NODE_AGENT_HEADROOM_MIB * aks_node.MIB,
        GPU_RESOURCE: int(pool.labels.get(f"{LABEL_PREFIX}/gpu-count", 0)),
        RDMA_RESOURCE: view.rdma_per_node if pool.labels.get(f"{LABEL_PREFIX}/infiniband") == "true" else 0,
    }


def node_plugin_runs(view: ClusterView, driver: str, pool: Pool) -> bool:
    """Whether a DaemonSet that registers CSI `driver` with the kubelet (its socket under
    /var/lib/kubelet/plugins/<driver>) lands on the pool's nodes: only then can the kubelet there
    mount the driver's volumes."""
    for daemon_set in view.objects(DAEMON_SET):
        spec = daemon_set["spec"]["template"]["spec"]
        paths = {str((v.get("hostPath") or {}).get("path", "")).rstrip("/") for v in spec.get("volumes") or []}
        if f"/var/lib/kubelet/plugins/{driver}" not in paths:
            continue
        if _affinity_matches(spec, pool.labels) and all(
            tolerates(spec.get("tolerations") or [], t) for t in pool.taints if not t.endswith(":PreferNoSchedule")
        ):
            return True
    return False


def volume_refusals(view: ClusterView, namespace: str, pod_spec: dict[str, Any], target: str) -> list[str]:
    """Each claim the pod mounts is in its namespace and bound to a volume reserved for it
    (claimRef), and a CSI volume's node plugin runs on the target pool; otherwise the pod waits
    in Pending or ContainerCreating, holding its gang's quota until Kueue evicts it."""
    found = []
    for volume in pod_spec.get("volumes") or []:
        reference = volume.get("persistentVolumeClaim")
        if not reference:
            continue
        name = reference["claimName"]
        claim, persistent = view.claimed_volume(namespace, name)
        if claim is None:
            found.append(f"claim {name!r} is not in namespace {namespace}")
            continue
        if persistent is None:
            if claim["spec"].get("storageClassName") and not claim["spec"].get("volumeName"):
                # Provisioned by its StorageClass when a pod needs it (a site's own file system:
                # docs/hybrid.md); the platform's Lustre claims name their volume ("" class).
                continue
            found.append(f"claim {name!r} names no volume of the cluster ({claim['spec'].get('volumeName')!r})")
            continue
        claim_ref = persistent["spec"].get("claimRef") or {}
        if (claim_ref.get("namespace"), claim_ref.get("name")) != (namespace, name):
            found.append(f"volume {persistent['metadata']['name']!r} is reserved for another claim ({claim_ref})")
        csi = persistent["spec"].get("csi")
        pool = view.pools.get(target)
        if csi and pool is not None and not node_plugin_runs(view, csi["driver"], pool):
            found.append(
                f"no node plugin of {csi['driver']} runs on pool {target!r}: its kubelet cannot mount claim {name!r}"
            )
    return found


def refusals(view: ClusterView, pod_spec: dict[str, Any], target: str) -> list[str]:
    found = []
    pools = pools_for(view, pod_spec)
    if pools != [target]:
        found.append(
            f"lands on pools {pools or 'none'}, not exactly {target!r} (nodeSelector, affinity and tolerations)"
        )
    if target not in view.pools:
        return found + [f"cluster {view.key} has no pool {target!r}"]
    pool = view.pools[target]
    extra = [t for t in pod_spec.get("tolerations") or [] if not any(tolerates([t], taint) for taint in pool.taints)]
    if extra:
        found.append(f"tolerates {[t.get('key') for t in extra]}, which pool {target!r} does not carry")
    limits = capacity(view, pool)
    for name, value in pod_requests(pod_spec).items():
        if name in ("ephemeral-storage",):
            continue
        available = limits.get(name, 0)
        if value > available:
            found.append(
                f"requests {name} {value:g}, more than a {pool.vm_size} node of {target!r} offers ({available:g})"
            )
    return found
