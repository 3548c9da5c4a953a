"""The platform over time: sequences of events on prod's plan, checked at every step.

The golden-workload contracts check a freshly deployed cluster. These walk what happens next,
with the parts that act on their own modelled from their source and the platform's own
in-cluster logic run as it is:

- a GPU node failing preflight while its pool scales from zero (the cluster autoscaler's
  template choice, contracts/autoscaler.py, and the preflight gate, planning/gpu_gate.py);
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contracts.autoscaler import Autoscaler, Node, Template, candidate, fits, taint_text
from contracts.cluster import ClusterView, cluster_of
from contracts.queueing import admitted_pod_spec
from facts import autoscaler as ca
from facts.gpu import CORDON_ANNOTATION, PREFLIGHT_LABEL, PREFLIGHT_PASSED, UNHEALTHY_TAINT_KEY
from offline.engine import Plan
from planning import gpu_gate, gpu_health
from tests.support.json_patch import apply
from tests.support.plan_edits import changed
from tests.test_contracts import applicable

DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
FLAVOR = "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor"
MINUTE = 60


# -- a GPU pool scaling from zero past a node that fails preflight ----------------------------


@dataclass
class PoolTimeline:
    """One GPU pool of one cluster of a plan, as the autoscaler, the kubelet, the GPU operator,
    the health agent's gate and NFD change it. `step` runs the autoscaler's loop every ten
    seconds up to a time and records every moment the pending pod would not fit a new node."""

    view: ClusterView
    pool: str
    pod: dict[str, Any]
    nodes: list[Node] = field(default_factory=list)
    now: float = 0
    blocked: list[str] = field(default_factory=list)
    # Moments the pod could have started on a node that had not passed preflight.
    unchecked: list[str] = field(default_factory=list)
    verdicts: dict[str, str] = field(default_factory=dict)
    boots: dict[str, str] = field(default_factory=dict)
    # Labels the pool's template would carry beyond its spec's (the old node-template tag).
    tagged: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        spec = self.view.pools[self.pool]
        # The Azure provider's template of a scale set: the pool's labels, the GPU label it
        # predicts for NVIDIA sizes, the pool's taints (azure_template.go buildNodeTemplateFromVMSS).
        labels = {**spec.labels, ca.AZURE_GPU_LABEL: "nvidia", **self.tagged}
        self.autoscaler = Autoscaler({self.pool: Template(labels, spec.taints)})
        agent = next(
            r.inputs["spec"]["template"]["spec"]
            for r in self.view.in_cluster(DAEMON_SET)
            if r.inputs["metadata"]["name"] == gpu_health.agent_name(self.pool)
        )
        gate = next((c for c in agent["initContainers"] if c["name"] == "gate"), None)
        self.gate_env = {e["name"]: e["value"] for e in gate["env"] if "value" in e} if gate else None

    def step(self, until: float) -> None:
        while self.now <= until:
            template = self.autoscaler.loop(self.nodes, self.now)[self.pool]
            if not fits(self.pod, template):
                source = self.autoscaler.sources.get(self.pool) or "the pool's spec"
                self.blocked.append(f"t={self.now / MINUTE:.0f}m: template from {source} does not fit")
            assert self.autoscaler.healthy(self.nodes, self.now), f"t={self.now}: autoscaler stopped"
            for node in self.nodes:
                takes = node.ready_since is not None and node.gpus and not node.unschedulable
                own = Template(node.labels, tuple(taint_text(t) for t in node.taints))
                if takes and fits(self.pod, own) and self.verdicts.get(node.name) != PREFLIGHT_PASSED:
                    self.unchecked.append(f"t={self.now / MINUTE:.0f}m: {node.name}")
            self.now += 10

    def scale_up(self, name: str) -> Node:
        spec = self.view.pools[self.pool]
        node = Node(
            name,
            self.pool,
            {**spec.labels, ca.AZURE_GPU_LABEL: "nvidia"},
            [_taint(t) for t in spec.taints],
            created=self.now,
        )
        self.nodes.append(node)
        self.boots[name] = f"boot-{name}-{len(self.boots)}"
        return node

    def gate(self, node: Node, verdict: str | None = None, fault: str | None = None) -> list[dict[str, Any]]:
        """One round of the node's gate, as it runs there (nothing without a gate)."""
        if verdict:
            self.verdicts[node.name] = verdict
        if self.gate_env is None:
            return []
        ops = gpu_gate.patch(
            node.as_object(),
            self.boots[node.name],
            verdict,
            fault,
            self.gate_env["TAINT_KEY"],
            self.gate_env["ANNOTATION"],
        )
        if ops:
            node.update(apply(node.as_object(), ops))
        return ops

    def nfd(self, node: Node, verdict: str, fault: str | None = None) -> None:
        """NFD's labels from the agent's feature file, and its NodeFeatureRule's taint."""
        node.labels[PREFLIGHT_LABEL] = verdict
        if fault:
            node.labels[gpu_health.FAULT_LABEL] = fault
            node.taints.append({"key": UNHEALTHY_TAINT_KEY, "value": "true", "effect": "NoSchedule"})


def _taint(text: str) -> dict[str, str]:
    head, effect = text.rsplit(":", 1)
    key, _, value = head.partition("=")
    return {"key": key, "value": value, "effect": effect}


def _gang(plan: Plan) -> tuple[ClusterView, dict[str, Any]]:
    """The golden InfiniBand gang's pod as Kueue starts it on prod's first GPU cluster."""
    view, item = next((v, i) for v, i in applicable({"prod": plan}, "prod", "training-infiniband"))
    return view, admitted_pod_spec(view, item.workload, item.pod["spec"])


def walk_failed_node(plan: Plan, tagged: dict[str, str] | None = None) -> tuple[PoolTimeline, Node, Node]:
    """The h100 pool at zero; a gang is pending; two nodes come up; one fails its preflight
    diagnostic, one passes; later the healthy one holds a passive fault; then the pool empties
    and the autoscaler restarts. The autoscaler loops every ten seconds throughout."""
    view, pod = _gang(plan)
    pool = PoolTimeline(view, pod["nodeSelector"]["platform.ai/gpu-pool"], pod, tagged=tagged or {})
    pool.step(0)
    failing, healthy = pool.scale_up("aks-h100-0"), pool.scale_up("aks-h100-1")
    pool.step(4 * MINUTE)  # the VMs boot and register
    for node in (failing, healthy):
        node.ready_since = pool.now
    pool.step(pool.now + 20)  # the agent's gate starts (before the GPU operator's driver)
    for node in (failing, healthy):
        pool.gate(node)
    pool.step(20 * MINUTE)  # the driver, the device plugin: the GPUs appear
    for node in (failing, healthy):
        node.gpus = 8
    pool.step(35 * MINUTE)  # preflight: DCGM's diagnostic, InfiniBand
    pool.gate(failing, verdict="failed:dcgm-diag")
    pool.gate(healthy, verdict=PREFLIGHT_PASSED)
    pool.step(pool.now + MINUTE)  # NFD's next scan
    pool.nfd(failing, "failed", "dcgm-diag")
    pool.nfd(healthy, PREFLIGHT_PASSED)
    # The failed node's agent pod restarts in the same boot: its gate keeps the cordon.
    assert pool.gate(failing, verdict="failed:dcgm-diag") == []
    pool.step(50 * MINUTE)  # the gang waits for a second node: the autoscaler adds one
    pool.gate(healthy, verdict=PREFLIGHT_PASSED, fault="dcgm-health")  # a held fault: cordon first
    pool.step(pool.now + MINUTE)
    pool.nfd(healthy, PREFLIGHT_PASSED, "dcgm-health")
    pool.step(60 * MINUTE)
    pool.nodes.clear()  # both removed (scale-down of unneeded nodes, or a person)
    pool.step(70 * MINUTE)
    pool.autoscaler.cache.clear()  # the autoscaler restarts: templates from the pools' specs
    pool.step(80 * MINUTE)
    return pool, failing, healthy


def test_a_node_failing_preflight_never_stops_its_pool_from_scaling_up_for_prods_gang(plans):
    """At every loop of the autoscaler, from zero nodes through a failed preflight, a passive
    fault, an empty pool and a restart, a new node of the pool would take the pending gang,
    the failed node is never the pool's template, and the autoscaler keeps running."""
    pool, failing, healthy = walk_failed_node(plans["prod"])
    assert pool.blocked == []
    # And the gang's pods could start only on the node that passed, only once it had.
    assert pool.unchecked == []
    assert not failing.unschedulable or failing.annotations[CORDON_ANNOTATION].endswith(":dcgm-diag")
    assert failing.unschedulable and healthy.unschedulable
    assert all(t["key"] != pool.gate_env["TAINT_KEY"] for t in failing.taints + healthy.taints)
    # The node that passed was the template while it was healthy; the failed one never.
    assert pool.autoscaler.sources[pool.pool] == healthy.name
    assert not candidate(failing, pool.now)


def test_a_label_gated_flavor_would_freeze_the_pool_after_one_failed_node(plans):
    """The design this replaces, walked the same way: Kueue's flavor requiring the preflight
    label and no gate, and even granting that AKS's autoscaler honours the scale set's
    node-template tag. A node Ready with its GPUs but not yet judged becomes the template (a
    minute after Ready), lacks the label, and no new node would fit the gang again: the cached
    template outlives the node (maxCacheExpireTime), so even an empty pool stays frozen until
    the autoscaler restarts."""
    plan = plans["prod"]
    view, _ = _gang(plan)
    flavor = next(
        r for r in plan.of_type(FLAVOR) if cluster_of(r) == view.key and r.inputs["metadata"]["name"] == "gpu-h100"
    )
    labels = {**flavor.inputs["spec"]["nodeLabels"], PREFLIGHT_LABEL: PREFLIGHT_PASSED}
    old = changed(plan, flavor.name, inputs=dict(flavor.inputs, spec=dict(flavor.inputs["spec"], nodeLabels=labels)))
    agent = next(
        r
        for r in old.of_type(DAEMON_SET)
        if cluster_of(r) == view.key and r.inputs["metadata"]["name"] == gpu_health.agent_name("h100")
    )
    pod = agent.inputs["spec"]["template"]["spec"]
    ungated = dict(pod, initContainers=[c for c in pod["initContainers"] if c["name"] != "gate"])
    spec = dict(agent.inputs["spec"], template=dict(agent.inputs["spec"]["template"], spec=ungated))
    old = changed(old, agent.name, inputs=dict(agent.inputs, spec=spec))
    pool, _, _ = walk_failed_node(old, tagged={PREFLIGHT_LABEL: PREFLIGHT_PASSED})
    assert pool.blocked and pool.blocked[0].startswith("t=20m: template from aks-h100-0"), pool.blocked[:3]
    # Frozen through the empty pool, until the restart.
    assert any(b.startswith("t=65m") for b in pool.blocked)
    assert not any(b.startswith("t=75m") for b in pool.blocked)
