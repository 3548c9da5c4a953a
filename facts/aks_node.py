"""What AKS keeps of a node for itself: allocatable CPU and memory of a Linux node (1.29 and later).

Source: MicrosoftDocs/azure-aks-docs `articles/aks/node-resource-reservations.md` (commit
fb060abe6, 2026-06-11): kube-reserved CPU by core count (the table below), and kube-reserved
memory of the lesser of 20 MB per max pod + 50 MB and 25% of the VM's memory, plus the
kubelet's 100 Mi hard eviction threshold. The page's CPU table stops at 64 cores; its steps
are 10 millicores per core beyond four (8: 180, 16: 260, 32: 420, 64: 740), which
`kube_reserved_cpu_millicores` extends to larger sizes (96 cores: 1,060). Node agents'
requests (DaemonSets: Cilium, CSI drivers, monitoring, the GPU and Network operators' agents)
come out of allocatable too; their sum is not published, so the platform keeps
`NODE_AGENT_HEADROOM` free for them, an estimate that only a real node (`kubectl describe
node`) can confirm.
"""

from __future__ import annotations

# The label AKS puts on every node with its pool's name.
AGENT_POOL_LABEL = "kubernetes.azure.com/agentpool"
# Published kube-reserved CPU (millicores) by core count.
KUBE_RESERVED_CPU_TABLE = {1: 60, 2: 100, 4: 140, 8: 180, 16: 260, 32: 420, 64: 740}
EVICTION_MEMORY_MIB = 100
MIB = 1024 * 1024
MB = 1000 * 1000
# Kept free on every node for DaemonSets' requests (an estimate; see above).
NODE_AGENT_HEADROOM_MILLICORES = 2000
NODE_AGENT_HEADROOM_MIB = 8 * 1024


def kube_reserved_cpu_millicores(cores: int) -> int:
    if cores in KUBE_RESERVED_CPU_TABLE:
        return KUBE_RESERVED_CPU_TABLE[cores]
    if cores < 4:
        raise ValueError(f"no published reservation for {cores} cores")
    return KUBE_RESERVED_CPU_TABLE[4] + 10 * (cores - 4)


def kube_reserved_memory_bytes(memory_gib: int, max_pods: int) -> int:
    total = memory_gib * 1024 * MIB
    return min(20 * MB * max_pods + 50 * MB, total // 4)


def allocatable_cpu_millicores(cores: int) -> int:
    return cores * 1000 - kube_reserved_cpu_millicores(cores)


def allocatable_memory_bytes(memory_gib: int, max_pods: int) -> int:
    return memory_gib * 1024 * MIB - kube_reserved_memory_bytes(memory_gib, max_pods) - EVICTION_MEMORY_MIB * MIB


# The label AKS puts on every node with the OS its image actually runs (what `osSku: Ubuntu`
# resolves to): `Ubuntu` is Ubuntu 22.04 for Kubernetes 1.25 to 1.34 and Ubuntu 24.04 from 1.35
# (learn.microsoft.com/azure/aks/upgrade-os-version, "Supported OS versions"), and Ubuntu 26.04
# from 1.38 (AKS release notes 2026-10-25, github.com/Azure/AKS/releases: "Starting with
# Kubernetes 1.38, node pools that use the Ubuntu OS SKU will default to Ubuntu 26.04"; quoted
# by a review, not re-read here).
OS_SKU_EFFECTIVE_LABEL = "kubernetes.azure.com/os-sku-effective"
UBUNTU_BY_VERSION: tuple[tuple[tuple[int, int], str], ...] = (
    ((1, 38), "Ubuntu2604"),
    ((1, 35), "Ubuntu2404"),
    ((1, 25), "Ubuntu2204"),
)


def ubuntu_effective(kubernetes_version: str | None) -> str:
    """The effective OS of an `Ubuntu` pool at a Kubernetes version (None: AKS's default, 1.35's today)."""
    if kubernetes_version is None:
        return "Ubuntu2404"
    major, minor = (int(part) for part in kubernetes_version.split(".")[:2])
    return next(os for since, os in UBUNTU_BY_VERSION if (major, minor) >= since)
