"""Installing a pinned chart (planning/charts.py holds the pins and their images)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from planning.charts import HelmChart


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
            repository_opts=kubernetes.helm.v3.RepositoryOptsArgs(repo=chart.repository) if chart.repository else None,
            namespace=namespace,
            values=values,
            atomic=True,
            cleanup_on_fail=True,
            timeout=900,
            max_history=10,
        ),
        opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=list(depends_on)),
    )
