"""Each team's GPU quota and its share of each pool, read from a plan's resources.

Kueue's ClusterQueue `team-<team>` holds a team's nominal quota per flavor (`gpu-<pool>`,
planning/queues.py); the pool's AgentPool holds how many GPUs (or MIG slices) it can reach. Read
from resources rather than config, so a review compares a base and a head whatever code each
side ran. `make capacity` prints the table; `make review` shows what a change does to it.

When the quotas already fill a pool, a team gets more in one of three ways (docs/gpus.md,
"Quotas"): a bigger pool (`maxCount`, or another pool), another team's quota lent (lowered
there and raised here), or none here at all, borrowing idle GPUs through the shared cohort, which
Kueue reclaims for their owner (preemption within the cohort).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from facts.gpu import GPU_RESOURCE
from offline.cost import Capacity
from planning.queues import MORE_QUOTA

CLUSTER_QUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
# planning/queues.py's names: the component `gpu-<cluster>`, the queue `team-<team>`, flavors `gpu-<pool>`.
_QUEUE_NAME = re.compile(r"^gpu-(?P<cluster>[a-z0-9]+)-clusterqueue-")


@dataclass(frozen=True)
class TeamQuota:
    cluster: str
    pool: str
    team: str
    quota: int  # GPUs, or MIG slices
    pool_units: int  # the pool's GPUs (or slices) at its maximum
    mig: bool

    @property
    def unit(self) -> str:
        return "MIG slices" if self.mig else "GPUs"

    @property
    def share(self) -> float:
        return self.quota / self.pool_units if self.pool_units else 0.0


def team_quotas(resources: Iterable[Mapping[str, Any]], capacity: Capacity) -> list[TeamQuota]:
    """Every team's nominal GPU quota per cluster and pool, in cluster, pool, team order."""
    # AKS names the cluster aks-<prefix>-<env>-<cluster>.
    pools = {(pool.cluster.rsplit("-", 1)[-1], pool.name): pool for pool in capacity.pools}
    found = []
    for resource in resources:
        if resource["type"] != CLUSTER_QUEUE:
            continue
        match = _QUEUE_NAME.match(str(resource["name"]))
        inputs = resource.get("inputs") or {}
        name = str((inputs.get("metadata") or {}).get("name", ""))
        if not match or not name.startswith("team-"):
            continue
        cluster = match.group("cluster")
        for group in (inputs.get("spec") or {}).get("resourceGroups", []):
            for flavor in group.get("flavors", []):
                pool_name = str(flavor["name"]).removeprefix("gpu-")
                quota = next((r["nominalQuota"] for r in flavor["resources"] if r["name"] == GPU_RESOURCE), None)
                found_pool = pools.get((cluster, pool_name))
                if quota is None or found_pool is None:
                    continue
                units = found_pool.max_nodes * found_pool.gpu_units_per_node
                found.append(
                    TeamQuota(
                        cluster, pool_name, name.removeprefix("team-"), int(quota), units, bool(found_pool.mig_profile)
                    )
                )
    return sorted(found, key=lambda q: (q.cluster, q.pool, q.team))


def pool_totals(quotas: Iterable[TeamQuota]) -> dict[tuple[str, str], tuple[int, int]]:
    """(cluster, pool) -> (quota promised to all teams, the pool's units)."""
    totals: dict[tuple[str, str], tuple[int, int]] = {}
    for q in quotas:
        promised, _ = totals.get((q.cluster, q.pool), (0, q.pool_units))
        totals[(q.cluster, q.pool)] = (promised + q.quota, q.pool_units)
    return totals


def _percent(value: float) -> str:
    return f"{value:.0%}"


def quota_changes(base: list[TeamQuota], head: list[TeamQuota]) -> list[str]:
    """One Markdown line per team quota a change adds, removes or resizes, then each pool it
    leaves fully promised, with the options a team has there."""
    before = {(q.cluster, q.pool, q.team): q for q in base}
    after = {(q.cluster, q.pool, q.team): q for q in head}
    lines = []
    for where in sorted(before.keys() | after.keys()):
        old, new = before.get(where), after.get(where)
        if old and new and (old.quota, old.pool_units) == (new.quota, new.pool_units):
            continue
        cluster, pool, team = where
        if new is None:
            assert old is not None
            lines.append(f"- `{team}` on {cluster}/{pool}: quota of {old.quota:,} {old.unit} removed")
        elif old is None:
            lines.append(
                f"- `{team}` on {cluster}/{pool}: new quota of {new.quota:,} {new.unit} "
                f"({_percent(new.share)} of the pool's {new.pool_units:,})"
            )
        else:
            lines.append(
                f"- `{team}` on {cluster}/{pool}: {old.quota:,} → {new.quota:,} {new.unit} "
                f"({_percent(old.share)} → {_percent(new.share)} of the pool's {new.pool_units:,})"
            )
    changed = {(c, p) for c, p, _ in before.keys() ^ after.keys()} | {
        (c, p) for (c, p, t) in before.keys() & after.keys() if before[(c, p, t)] != after[(c, p, t)]
    }
    for (cluster, pool), (promised, units) in sorted(pool_totals(head).items()):
        if (cluster, pool) in changed and promised >= units:
            lines.append(
                f"- {cluster}/{pool} is now fully promised ({promised:,} of {units:,}): more for a team takes {MORE_QUOTA}"
            )
    return lines
