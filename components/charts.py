"""Installing a pinned chart (planning/charts.py holds the pins and their images) from the
environment's registry, where scripts/mirror_charts.py put it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from planning.charts import HelmChart, chart_reference


def helm_release(
    name: str,
    chart: HelmChart,
    namespace: pulumi.Input[str],
    values: dict[str, Any],
    *,
    login_server: str,
    provider: kubernetes.Provider,
    parent: pulumi.Resource,
    depends_on: Sequence[pulumi.Resource] = (),
) -> kubernetes.helm.v3.Release:
    """A pinned release that rolls back on failure and waits for its workloads.

    The chart comes from the registry over its private endpoint, as an OCI reference with no
    `repository_opts`: Helm signs in with the registry login the job made (helm registry
    login, in the provider's `helmReleaseSettings.registryConfigPath`), and the runner needs no
    route to any chart repository on the internet. The provider downloads the chart with the
    Helm v3 library it bundles (helm.sh/helm/v3 v3.20.2 in pulumi-kubernetes' provider/go.mod
    since April 2026), which takes the `@sha256:` references of `chart_reference` (Helm 3.17+).
    """
    return kubernetes.helm.v3.Release(
        name,
        kubernetes.helm.v3.ReleaseArgs(
            name=chart.name,
            chart=chart_reference(chart, login_server),
            version=chart.version,
            namespace=namespace,
            values=values,
            atomic=True,
            cleanup_on_fail=True,
            timeout=900,
            max_history=10,
        ),
        opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=list(depends_on)),
    )
