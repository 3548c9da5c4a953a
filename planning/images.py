"""Where the platform's container images come from: the environment's registry, which
pulls each upstream repository through an artifact cache rule on first use.

Clusters therefore pull the platform's images only from the private registry (over its
private endpoint); only AKS's own system images still come from mcr.microsoft.com. Every image a chart would pull from an
upstream below must be rewritten with `mirrored()`; an upstream without a rule is an error
here rather than an image pull failure in the cluster.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CacheRule:
    name: str
    # Upstream repository namespace (ACR wildcard rules: `<registry>/<path>/*`).
    source: str
    # Where it appears in the platform's registry.
    target: str

    def maps(self, repository: str) -> str | None:
        """Where `repository` (or, for charts that append the image name, a repository
        namespace such as `nvcr.io/nvidia`) appears in the platform's registry."""
        if not self.source.endswith("/*"):
            return self.target if repository == self.source else None
        source_root, target_root = self.source.removesuffix("/*"), self.target.removesuffix("/*")
        if repository == source_root:
            return target_root
        if repository.startswith(source_root + "/"):
            return target_root + repository[len(source_root) :]
        return None


# The image of the platform's own in-cluster scripts (the MultiKueue token refresher, the GPU
# preflight gate): Azure Linux's distroless Python (no shell), through the registry's cache.
PYTHON_REPOSITORY = "mcr.microsoft.com/azurelinux/distroless/python"
PYTHON_TAG = "3.12-nonroot"


def python_image(login_server: str) -> str:
    return f"{mirrored(PYTHON_REPOSITORY, login_server)}:{PYTHON_TAG}"


# How the platform's scripts run in that image: its nonroot user, nothing more.
PYTHON_SECURITY_CONTEXT = {
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


# The upstreams of the platform's own charts: NVIDIA's GPU and Network Operators (NGC),
# Kubernetes SIG images (Kueue, node feature discovery), Strimzi's operator and Kafka, the
# Flink Kubernetes Operator, kured (GPU nodes' remediation), the Lustre CSI driver and Azure Linux's
# Python.
PLATFORM_CACHE_RULES = (
    CacheRule("nvcr-nvidia", "nvcr.io/nvidia/*", "nvidia/*"),
    CacheRule("registry-k8s-io", "registry.k8s.io/*", "k8s/*"),
    CacheRule("quay-strimzi", "quay.io/strimzi/*", "strimzi/*"),
    CacheRule("ghcr-flink-operator", "ghcr.io/apache/flink-kubernetes-operator", "apache/flink-kubernetes-operator"),
    CacheRule("ghcr-kured", "ghcr.io/kubereboot/kured", "kubereboot/kured"),
    # The Azure Lustre CSI driver's node plugin and its sidecars (planning/lustre_csi.py), as
    # Microsoft builds them: exact repositories, not all of mcr.microsoft.com/oss.
    CacheRule(
        "mcr-azurelustre-csi",
        "mcr.microsoft.com/oss/v2/kubernetes-csi/azurelustre-csi",
        "oss/v2/kubernetes-csi/azurelustre-csi",
    ),
    CacheRule(
        "mcr-csi-livenessprobe",
        "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe",
        "oss/kubernetes-csi/livenessprobe",
    ),
    CacheRule(
        "mcr-csi-node-registrar",
        "mcr.microsoft.com/oss/kubernetes-csi/csi-node-driver-registrar",
        "oss/kubernetes-csi/csi-node-driver-registrar",
    ),
    # The platform's scripts: the token refresher, the GPU preflight gate.
    CacheRule(
        "mcr-azurelinux-python", "mcr.microsoft.com/azurelinux/distroless/python", "azurelinux/distroless/python"
    ),
)


# Upstreams ACR's artifact cache can pull from without a credential set (learn.microsoft.com,
# "Artifact cache in Azure Container Registry"). Docker Hub and Google Artifact Registry
# need credentials in a Key Vault, which the platform does not hold.
ANONYMOUS_UPSTREAMS = ("mcr.microsoft.com", "public.ecr.aws", "ghcr.io", "quay.io", "registry.k8s.io", "nvcr.io")


def overlaps(first: str, second: str) -> bool:
    """Whether two cache-rule repositories (`a/b/*` or `a/b/c`) can match the same path.

    ACR rejects a wildcard rule that overlaps another wildcard rule.
    """
    first_root, second_root = first.removesuffix("/*"), second.removesuffix("/*")
    if first.endswith("/*") and (second_root == first_root or second_root.startswith(first_root + "/")):
        return True
    if second.endswith("/*") and (first_root == second_root or first_root.startswith(second_root + "/")):
        return True
    return first == second


class UncachedImage(ValueError):
    pass


def mirrored(repository: str, login_server: str, rules: tuple[CacheRule, ...] = PLATFORM_CACHE_RULES) -> str:
    """`nvcr.io/nvidia/k8s` -> `<login_server>/nvidia/k8s`."""
    for rule in rules:
        target = rule.maps(repository)
        if target is not None:
            return f"{login_server}/{target}"
    raise UncachedImage(f"no cache rule covers {repository}; add one to PLATFORM_CACHE_RULES")
