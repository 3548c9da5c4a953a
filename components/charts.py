"""The Helm charts the platform installs, pinned, and one way to install them.

A chart's default values are published beside it; `tests/test_helm_values.py` checks every
value the program sets against `<shared>/reference/helm-values/<values_file>`, so a key
the chart does not read (a typo, a renamed option) fails review instead of silently doing
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pulumi
import pulumi_kubernetes as kubernetes


@dataclass(frozen=True)
class HelmChart:
    chart: str  # a name in `repository`, or an oci:// reference
    version: str
    repository: str | None = None

    @property
    def name(self) -> str:
        return self.chart.rsplit("/", 1)[-1]

    @property
    def values_file(self) -> str:
        """The file holding this chart's default values in the shared reference folder."""
        return f"{self.name}-{self.version}.yaml"


NVIDIA_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"

GPU_OPERATOR = HelmChart("gpu-operator", "v26.7.0", NVIDIA_REPOSITORY)
NETWORK_OPERATOR = HelmChart("network-operator", "v26.4.1", NVIDIA_REPOSITORY)
KUEUE = HelmChart("oci://registry.k8s.io/kueue/charts/kueue", "0.19.2")

CHARTS = (GPU_OPERATOR, NETWORK_OPERATOR, KUEUE)


def helm_release(
    name: str,
    chart: HelmChart,
    namespace: pulumi.Input[str],
    values: dict[str, Any],
    *,
    provider: kubernetes.Provider,
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
) -> kubernetes.helm.v3.Release:
    """A pinned release that rolls back on failure and waits for its workloads."""
    return kubernetes.helm.v3.Release(
        name,
        kubernetes.helm.v3.ReleaseArgs(
            name=chart.name,
            chart=chart.chart,
            version=chart.version,
            repository_opts=kubernetes.helm.v3.RepositoryOptsArgs(repo=chart.repository)
            if chart.repository
            else None,
            namespace=namespace,
            values=values,
            atomic=True,
            cleanup_on_fail=True,
            timeout=900,
            max_history=10,
        ),
        opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=list(depends_on)),
    )
