"""The cluster autoscaler's view of a GPU pool over time, from its source (facts/autoscaler.py).

What the plan cannot show is what the autoscaler does on its own: which node it takes as the
template of a pool when it asks "would a new node of this pool fit the pending pod?", that it
keeps that template after the node is gone, and when it stops scaling altogether. This models
those choices, as kubernetes/autoscaler cluster-autoscaler-1.34.5 makes them, for tests that
walk a pool through a sequence of events (tests/test_over_time.py):

- readiness: a node is ready to the autoscaler if its Ready condition holds, it carries no
  startup taint, and, with the provider's GPU label, it advertises GPUs;
- template candidates: ready, Ready for a minute, not cordoned, not being deleted; each loop
  the first candidate of a pool becomes its template and is cached; without one, the cache;
  without that, the pool's spec (the cloud provider's template), startup and status taints
  stripped in every case;
- health: more than 3 unready nodes that are also more than 45% of all stop every scale-up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from contracts.scheduling import tolerates
from facts import autoscaler as ca


@dataclass
class Node:
    """One node as the API server holds it: metadata (labels, annotations), spec (taints,
    unschedulable), and what the model needs of its status."""

    name: str
    pool: str
    labels: dict[str, str]
    taints: list[dict[str, str]]
    created: float
    # When its Ready condition last became True; None while it is not Ready.
    ready_since: float | None = None
    unschedulable: bool = False
    gpus: int = 0
    annotations: dict[str, str] = field(default_factory=dict)
    resource_version: str = "1"

    def as_object(self) -> dict[str, Any]:
        """The node as the API returns it (what the preflight gate reads and patches)."""
        spec: dict[str, Any] = {"taints": [dict(t) for t in self.taints]}
        if self.unschedulable:
            spec["unschedulable"] = True
        return {
            "metadata": {
                "name": self.name,
                "labels": dict(self.labels),
                "annotations": dict(self.annotations),
                "resourceVersion": self.resource_version,
            },
            "spec": spec,
        }

    def update(self, obj: dict[str, Any]) -> None:
        """Takes the node's new metadata and spec (after a patch)."""
        self.labels = dict(obj["metadata"].get("labels") or {})
        self.annotations = dict(obj["metadata"].get("annotations") or {})
        self.taints = [dict(t) for t in obj["spec"].get("taints") or []]
        self.unschedulable = bool(obj["spec"].get("unschedulable"))
        self.resource_version = str(int(self.resource_version) + 1)


@dataclass(frozen=True)
class Template:
    labels: Mapping[str, str]
    taints: tuple[str, ...]  # `key=value:Effect`


def _ignored(key: str) -> bool:
    return key.startswith((ca.STARTUP_TAINT_PREFIX, ca.IGNORE_TAINT_PREFIX, ca.STATUS_TAINT_PREFIX))


def taint_text(taint: Mapping[str, str]) -> str:
    return f"{taint['key']}={taint.get('value', '')}:{taint['effect']}"


def sanitized(labels: Mapping[str, str], taints: Iterable[str]) -> Template:
    """A template node: startup, ignore and status taints stripped (taints.go SanitizeTaints)."""
    return Template(dict(labels), tuple(t for t in taints if not _ignored(t.partition("=")[0].partition(":")[0])))


def ready(node: Node) -> bool:
    """Ready to the autoscaler (static_autoscaler.go obtainNodeLists; gpu_processor.go)."""
    if node.ready_since is None:
        return False
    if any(t["key"].startswith((ca.STARTUP_TAINT_PREFIX, ca.IGNORE_TAINT_PREFIX)) for t in node.taints):
        return False
    return not (node.labels.get(ca.AZURE_GPU_LABEL) and node.gpus == 0)


def candidate(node: Node, now: float) -> bool:
    """isNodeGoodTemplateCandidate: ready, stable, schedulable, not being deleted."""
    stable = node.ready_since is not None and now - node.ready_since >= ca.TEMPLATE_STABILIZATION_SECONDS
    deleting = any(t["key"] == ca.TO_BE_DELETED_TAINT for t in node.taints)
    return ready(node) and stable and not node.unschedulable and not deleting


def fits(pod_spec: Mapping[str, Any], template: Template) -> bool:
    """Whether a new node like the template would take the pod: its nodeSelector and the taints
    that keep pods off (resources aside: a pool's nodes are all of one size)."""
    selector = pod_spec.get("nodeSelector") or {}
    if any(template.labels.get(k) != v for k, v in selector.items()):
        return False
    tolerations = list(pod_spec.get("tolerations") or [])
    return all(tolerates(tolerations, t) for t in template.taints if not t.endswith(":PreferNoSchedule"))


@dataclass
class Autoscaler:
    """The templates of a cluster's pools, loop after loop."""

    specs: Mapping[str, Template]  # pool -> the cloud provider's template (its spec)
    cache: dict[str, Template] = field(default_factory=dict)
    # pool -> the node its current template comes from ("" for the spec), per loop
    sources: dict[str, str] = field(default_factory=dict)

    def loop(self, nodes: Iterable[Node], now: float) -> dict[str, Template]:
        """One RunOnce: every pool's template (mixed_nodeinfos_processor.go Process)."""
        templates: dict[str, Template] = {}
        for node in nodes:
            if node.pool in templates or not candidate(node, now):
                continue
            templates[node.pool] = sanitized(node.labels, [taint_text(t) for t in node.taints])
            self.cache[node.pool] = templates[node.pool]
            self.sources[node.pool] = node.name
        for pool, spec in self.specs.items():
            if pool not in templates:
                templates[pool] = self.cache.get(pool) or spec
                self.sources.setdefault(pool, "")
        return templates

    @staticmethod
    def healthy(nodes: Iterable[Node], now: float, ok_count: int = ca.OK_TOTAL_UNREADY_COUNT) -> bool:
        """IsClusterHealthy: unready nodes past their startup time, within the thresholds."""
        listed = list(nodes)
        unready = sum(1 for n in listed if not ready(n) and now - n.created >= ca.MAX_NODE_STARTUP_SECONDS)
        return not (unready > ok_count and unready > ca.MAX_TOTAL_UNREADY_PERCENTAGE / 100 * len(listed))
