"""The fleet unit: Fleet Manager, its members and update runs."""

from __future__ import annotations

from collections.abc import Mapping

from components.fleet import FleetArgs, FleetMemberSpec, KubernetesFleet
from components.outputs import ClusterOutputs
from components.platform.context import (
    Context,
)


def build_fleet(ctx: Context, clusters: Mapping[str, ClusterOutputs]) -> KubernetesFleet:
    return KubernetesFleet(
        "fleet",
        FleetArgs(
            create_groups=ctx.create_groups,
            naming=ctx.naming,
            region=ctx.config.primary_region,
            settings=ctx.config.fleet_settings,
            members=[FleetMemberSpec(key, c.cluster_id) for key, c in clusters.items()],
            tags=ctx.tags,
        ),
        opts=ctx.opts,
    )
