"""The platform over time: sequences of events on prod's plan, checked at every step.

The golden-workload contracts check a freshly deployed cluster. These walk what happens next,
with the parts that act on their own modelled from their source and the platform's own
in-cluster logic run as it is:

- a GPU node failing preflight while its pool scales from zero (the cluster autoscaler's
  template choice, contracts/autoscaler.py, and the preflight gate, planning/gpu_gate.py);
- the MultiKueue dispatchers' credentials for their workers renewed hour after hour, through an
  Entra ID outage and a worker's new CA (planning/multikueue_token.py, run as the CronJob does);
- every value a unit exports and a later wave copies (identities, clusters' issuers and API
  servers), replaced by a deploy and followed wave by wave (contracts/rotation.py);
- Strimzi renewing a cluster CA, and the copies the tenants unit keeps of it, day by day;
- a gang admitted onto a pool at zero while its nodes start cold (planning/cold_start.py);
- the primary region lost, a training job requeued to the other and its next checkpoint.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
import yaml

from contracts.autoscaler import Autoscaler, Node, Template, candidate, fits, taint_text
from contracts.cluster import CONFIG_MAP, ClusterView, cluster_of
from contracts.golden import account_name, endpoint_subnet, evaluate, storage_target
from contracts.identity import refusals as identity_refusals
from contracts.queueing import admitted_pod_spec
from contracts.rotation import handoffs, units_of, walk
from facts import autoscaler as ca
from facts import gpu as gpu_health_facts
from facts import strimzi
from facts.gpu import CORDON_ANNOTATION, PREFLIGHT_LABEL, PREFLIGHT_PASSED, UNHEALTHY_TAINT_KEY
from offline.engine import Plan
from offline.environment import parsed_environment, waves
from planning import cold_start, dispatch, gpu_gate, gpu_health, multikueue_token, site_baseline
from planning import kafka as kafka_plan
from stackconfig.model import duration_seconds
from tests.conftest import ROOT, stack_values
from tests.support.json_patch import apply
from tests.support.plan_edits import changed
from tests.test_contracts import applicable
from validation.loader import parse_platform_config

DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
AGENT_POOL = "azure-native:containerservice:AgentPool"
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


# -- the dispatchers' credentials over hours ---------------------------------------------------

CRONJOB = "kubernetes:batch/v1:CronJob"
MULTIKUEUE_CLUSTER = "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster"


class SecretStore:
    """A dispatcher's Kueue namespace, as the refresher's calls see it."""

    def __init__(self) -> None:
        self.secrets: dict[str, dict[str, Any]] = {}

    def secret_path(self, name: str = "") -> str:
        return name

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
        if method == "GET":
            return self.secrets.get(path)
        assert body is not None
        self.secrets[body["metadata"]["name"]] = body
        return body

    def write_kubeconfig(self, secret: str, current: dict[str, Any] | None, config: str) -> None:
        multikueue_token.Cluster.write_kubeconfig(self, secret, current, config)  # type: ignore[arg-type]

    def token(self, secret: str) -> tuple[str, str, int] | None:
        """(server, CA, token expiry) of the kubeconfig Kueue reads from `secret`."""
        found = self.secrets.get(secret)
        if found is None:
            return None
        config = json.loads(base64.b64decode(found["data"][multikueue_token.KUBECONFIG_KEY]))
        cluster = config["clusters"][0]["cluster"]
        token = config["users"][0]["user"]["token"]
        return cluster["server"], cluster["certificate-authority-data"], multikueue_token.expires_at(token)


def _jwt(expires: int) -> str:
    claims = base64.urlsafe_b64encode(json.dumps({"exp": expires}).encode()).decode().rstrip("=")
    return f"e30.{claims}.sig"


def _cron_minutes(schedule: str) -> int:
    minute, *rest = schedule.split()
    assert minute.startswith("*/") and rest == ["*"] * 4, schedule
    return int(minute[2:])


@dataclass
class DispatcherTimeline:
    """One dispatcher of prod, minute by minute: its refresher runs on its CronJob's schedule and
    Kueue reads each worker's kubeconfig; Entra ID issues tokens of `lifetime` minutes (its
    shortest, 60: learn.microsoft.com/entra/identity-platform/access-tokens#token-lifetime)."""

    endpoints: dict[str, tuple[str, str]]
    secrets: dict[str, str]  # worker -> the Secret its MultiKueueCluster reads
    every: int
    lifetime: int = 60
    store: SecretStore = field(default_factory=SecretStore)
    down: set[int] = field(default_factory=set)  # minutes Entra ID does not answer
    invalid: list[str] = field(default_factory=list)

    def run(self, minutes: int, start: int = 0) -> None:
        for minute in range(start, start + minutes):
            if minute % self.every == 0:
                self._refresher(minute)
            for worker, secret in self.secrets.items():
                held = self.store.token(secret)
                server, ca = self.endpoints[worker]
                if held is None or held[:2] != (server, ca) or held[2] <= minute * MINUTE:
                    self.invalid.append(f"minute {minute}: {worker}")

    def _refresher(self, minute: int) -> None:
        def fetch(scope: str) -> str:
            if minute in self.down:
                raise OSError("Entra ID does not answer")
            return _jwt(minute * MINUTE + self.lifetime * MINUTE)

        # Entra down: the job fails, and the next run tries again.
        with contextlib.suppress(OSError):
            multikueue_token.refresh(
                self.store,  # type: ignore[arg-type]
                dict(self.endpoints),
                lambda w: multikueue_token.SECRET_PREFIX + w,
                fetch,
                minute * MINUTE,
            )

    def first_renewal(self) -> int:
        """The first run at which the token written at minute 0 is renewed."""
        margin = multikueue_token.RENEW_BEFORE_SECONDS // MINUTE
        return min(t for t in range(0, self.lifetime, self.every) if self.lifetime - t < margin)


def _dispatcher(plan: Plan) -> DispatcherTimeline:
    """The first dispatcher of prod: its workers' endpoints, the Secrets its MultiKueueClusters
    read, its refresher's schedule, all from the plan."""
    (cronjob, *_) = [r for r in plan.of_type(CRONJOB) if r.inputs["metadata"]["name"] == dispatch.TOKEN_JOB]
    key = cluster_of(cronjob)
    (workers,) = [
        r.inputs["data"]
        for r in plan.of_type(CONFIG_MAP)
        if cluster_of(r) == key and r.inputs["metadata"]["name"] == dispatch.WORKERS_CONFIG_MAP
    ]
    endpoints = {
        name.removesuffix(".server"): (value, workers[name.removesuffix(".server") + ".ca"])
        for name, value in workers.items()
        if name.endswith(".server")
    }
    secrets = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]["clusterSource"]["kubeConfig"]["location"]
        for r in plan.of_type(MULTIKUEUE_CLUSTER)
        if cluster_of(r) == key
    }
    assert set(secrets) == set(endpoints) and len(endpoints) >= 2
    return DispatcherTimeline(endpoints, secrets, _cron_minutes(cronjob.inputs["spec"]["schedule"]))


def test_prods_dispatchers_hold_a_valid_credential_for_every_worker_hour_after_hour(plans):
    """Six hours of a dispatcher: every worker's kubeconfig is valid at every minute from the
    refresher's first run, through an Entra ID outage of 25 minutes at the worst moment (just
    before a renewal is due), and a worker whose API server presents a new CA (an
    `az aks rotate-certs`, written by the tenants unit's next deploy) is signed in again within
    one run, well inside Kueue's workerLostTimeout (15 minutes)."""
    timeline = _dispatcher(plans["prod"])
    timeline.run(1)
    assert timeline.invalid == []
    # The first renewal falls due when under 40 minutes remain; Entra is down from just before.
    timeline.down = set(range(timeline.first_renewal() - 1, timeline.first_renewal() + 24))
    timeline.run(6 * 60 - 1, start=1)
    assert timeline.invalid == []
    # A worker's new CA: at most one run with the old one.
    worker = sorted(timeline.endpoints)[0]
    timeline.endpoints[worker] = (timeline.endpoints[worker][0], "bmV3LWNh")
    start = 6 * 60 + 1
    timeline.run(60, start=start)
    late = [int(m.split()[1].rstrip(":")) - start for m in timeline.invalid]
    assert late and max(late) < timeline.every and timeline.every < 15


def test_an_entra_outage_longer_than_the_tokens_margin_would_lose_the_workers(plans):
    """The bound the test above stays inside: 35 minutes down at the same moment outlasts the
    token the refresher holds, and Kueue would mark the workers lost."""
    timeline = _dispatcher(plans["prod"])
    timeline.down = set(range(timeline.first_renewal() - 1, timeline.first_renewal() + 34))
    timeline.run(3 * 60)
    assert timeline.invalid


# -- what later units copy, across the deploy waves ---------------------------------------------


def _waves(stack: str):
    return waves(parsed_environment(stack))


def test_no_deploy_of_prod_leaves_a_later_wave_holding_a_copy_of_something_deleted(unit_plans):
    """Every value a prod unit exports that a later wave copies (found by value in the units'
    plans), replaced by a deploy: at no wave does a copy name something already deleted, because
    each original is protected and `pulumi up` refuses to replace it. The dispatch credential's
    holders among them: the workers' bindings and Azure roles (each worker's cluster unit), the
    refreshers' service accounts (each dispatcher's), their federated credentials (tenants)."""
    environment, waves_ = unit_plans["prod"], _waves("prod")
    found = handoffs(environment, waves_)
    holders = {h.unit.stack("prod") for h in found if h.original.what == f"identity {dispatch.DISPATCH_WORKLOAD}"}
    assert holders == {
        "prod.cluster-eus2",
        "prod.cluster-scus",
        "prod.cluster-dispeus2",
        "prod.cluster-dispscus",
        "prod.tenants",
    }
    assert walk(found, waves_) == []
    # Unprotected, the same replacement would leave the refreshers signing in as a deleted
    # identity from the data wave until the dispatchers' clusters and tenants have run.
    exposed = [dataclasses.replace(h, original=dataclasses.replace(h.original, protected=False)) for h in found]
    dead = [d for d in walk(exposed, waves_) if "dispatch-refresher-dispeus2-sa" in d]
    assert [d.split(":")[0] for d in dead] == [
        "wave 1 (data)",
        "wave 2 (cluster-eus2)",
        "wave 3 (cluster-scus, cluster-dispeus2, cluster-dispscus)",
    ]


def test_an_environment_without_protection_is_told_what_a_rename_would_break(unit_plans):
    """Staging leaves protection off (it is rebuilt at will): the walk names each copy a rename
    would leave dead, which is what docs/operations.md's two-phase rename avoids."""
    dead = walk(handoffs(unit_plans["staging"], _waves("staging")), _waves("staging"))
    assert any("identity trainer" in d and "in tenants" in d for d in dead)


# -- Strimzi's CAs renewed, and the copies of them ---------------------------------------------

KAFKA = "kubernetes:kafka.strimzi.io/v1:Kafka"
SECRET = "kubernetes:core/v1:Secret"
BLOB_CONTAINER = "azure-native:storage:BlobContainer"


def _drift_days() -> int:
    """How often the drift check previews every unit stack (its cron, .github/workflows/drift.yml)."""
    workflow = yaml.safe_load((ROOT / ".github/workflows/drift.yml").read_text())
    (entry,) = workflow[True]["schedule"]  # PyYAML reads the key `on` as True
    minute, hour, day, month, weekday = entry["cron"].split()
    assert minute.isdigit() and hour.isdigit() and (day, month, weekday) == ("*", "*", "*"), entry
    return 1


def ca_copies_over_a_renewal(environment, renewal_days: int | None = None) -> tuple[list[str], list[str]]:
    """(the CA copies the tenants unit keeps, the days on which one no longer verifies the
    brokers), from the day Strimzi renews a cluster CA (a new certificate; the old one expires
    at the end of the renewal period): the drift check sees the copies differ at its next run,
    and a person deploys the tenants unit within CA_COPY_DEADLINE_DAYS."""
    units = units_of(environment)
    kafkas = {unit: r for unit, plan in units.items() for r in plan.of_type(KAFKA)}
    assert kafkas
    copies = [
        f"{unit.stack('').lstrip('.')}/{r.name}"
        for unit, plan in units.items()
        for r in plan.resources
        if (r.type == CONFIG_MAP and r.inputs["metadata"]["name"] == kafka_plan.CA_CONFIG_MAP)
        or (r.type == SECRET and "platform.ai/copied-from" in (r.inputs["metadata"].get("labels") or {}))
        # A site's copy is a file of its baseline, which its container's digest covers.
        or (r.type == BLOB_CONTAINER and site_baseline.DIGEST_METADATA in (r.inputs.get("metadata") or {}))
    ]
    sites = {f"cluster-{site}" for site in units_sites(units)}
    assert copies and {c.split("/")[0] for c in copies} == {"tenants", *sites}
    dead = []
    for unit, kafka in kafkas.items():
        authority = kafka.inputs["spec"].get("clusterCa") or {}
        window = renewal_days or authority.get("renewalDays", strimzi.CA_RENEWAL_DAYS)
        redeployed = _drift_days() + kafka_plan.CA_COPY_DEADLINE_DAYS
        for day in range(0, window + redeployed + 2):
            holds_new = day >= redeployed
            if not holds_new and day >= window:
                dead.append(f"day {day}: the copies of {unit.cluster}'s cluster CA")
    return copies, dead


def units_sites(units) -> list[str]:
    return [
        unit.cluster
        for unit, plan in units.items()
        if plan.of_type("azure-native:kubernetesconfiguration:FluxConfiguration")
    ]


@pytest.mark.parametrize("stack", ["prod", "prod-scale"])
def test_prods_copies_of_strimzis_renewed_cas_are_replaced_before_the_old_ones_expire(unit_plans, stack):
    """Every copy the tenants unit makes of a cluster's Strimzi CA (client namespaces' ConfigMaps,
    MirrorMaker's Secrets in the other cluster), and a site's (its baseline, whose digest its
    container carries), verifies the brokers on every day of a renewal: the nightly drift check
    shows the change, and the deploys the runbook asks for land well inside Strimzi's renewal
    period."""
    copies, dead = ca_copies_over_a_renewal(unit_plans[stack])
    assert len(copies) >= 4 and dead == []
    if stack == "prod-scale":
        assert [c for c in copies if c.startswith("cluster-phx1/")]
    # With a renewal period shorter than detection plus the runbook's deadline, they would not.
    _, short = ca_copies_over_a_renewal(unit_plans["prod"], renewal_days=5)
    assert short and short[0].startswith("day 5:")


# -- a gang admitted onto a pool at zero, while its nodes start cold ---------------------------

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def _kueue_timeout(plan: Plan, cluster: str) -> int:
    view = ClusterView(plan, cluster, {})
    return duration_seconds(view.kueue_config["waitForPodsReady"]["timeout"])


def test_prods_gang_is_not_evicted_while_its_pool_starts_cold_and_the_autoscaler_waits_for_it(plans):
    """The h100 gang admitted onto its pool at zero: its nodes boot, load the GPU operator's and
    the DOCA drivers and pass DCGM's level-2 diagnostic (the pool's cold-start budget), then the
    trainer's image is pulled. Kueue's waitForPodsReady on the worker, and on every dispatcher
    that may send it there, outlasts that, and the autoscaler neither gives up on the scale-up
    nor removes a node still being checked."""
    plan = plans["prod"]
    config = parse_platform_config(stack_values("prod"), stack="prod")
    view, pod = _gang(plan)
    pool = config.clusters[view.key].gpu_pools[pod["nodeSelector"]["platform.ai/gpu-pool"]]
    cold = cold_start.pool_cold_start(pool, config.clusters[view.key], config.operations.gpu_health)
    ready = cold + cold_start.PODS_READY_MARGIN
    assert ready > 30 * MINUTE  # Kueue's old fixed 30 minutes would have evicted it
    for cluster in [view.key, *config.jobs.dispatchers]:
        assert _kueue_timeout(plan, cluster) >= ready, cluster
    profile = view.managed_cluster.inputs["autoScalerProfile"]
    assert duration_seconds(profile["maxNodeProvisionTime"]) >= cold
    assert duration_seconds(profile["scaleDownUnreadyTime"]) > cold


def test_a_measured_cold_start_moves_every_timer_with_it():
    config = parse_platform_config(stack_values("prod"), stack="prod")
    cluster = config.clusters["eus2"]
    slow = cluster.model_copy(
        update={"gpu_pools": {k: p.model_copy(update={"cold_start": "50m"}) for k, p in cluster.gpu_pools.items()}}
    )
    health = config.operations.gpu_health
    assert cold_start.cluster_cold_start(slow, health) == 50 * MINUTE
    assert cold_start.pods_ready_timeout(cold_start.cluster_cold_start(slow, health)) == "60m"
    assert cold_start.autoscaler_times(slow, health) == ("50m", "55m")


# -- a region lost, a training job requeued, its next checkpoint --------------------------------

STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
REPLICATION_POLICY = "azure-native:storage:ObjectReplicationPolicy"


def test_a_training_job_requeued_to_the_other_region_when_prods_primary_is_lost_writes_its_next_checkpoint(plans):
    """Prod's gang runs in the primary region (eus2) and checkpoints there. eus2 is lost; after
    Kueue's workerLostTimeout its dispatcher in scus requeues the job onto scus unchanged (MultiKueue
    copies the spec). On scus the same spec passes every contract layer, and its checkpoint
    location is a container of an account in scus that no replication writes into, so Azure takes
    the write while eus2 is down, with no person acting first."""
    plan = plans["prod"]
    config = parse_platform_config(stack_values("prod"), stack="prod")
    primary = config.primary_region
    by_cluster = {view.key: (view, item) for view, item in applicable(plans, "prod", "training-infiniband")}
    home = next(key for key, (view, _) in by_cluster.items() if config.clusters[key].region == primary)
    other = next(key for key in by_cluster if config.clusters[key].region != primary)
    home_view, submitted = by_cluster[home]
    accounts = {r.inputs["accountName"]: r.inputs["location"] for r in plan.of_type(STORAGE_ACCOUNT)}
    copies = {
        (r.inputs["accountName"], rule["destinationContainer"])
        for r in plan.of_type(REPLICATION_POLICY)
        for rule in r.inputs["rules"]
    }

    def checkpoints(view: ClusterView) -> tuple[str, str]:
        target = storage_target(view, submitted)
        assert target is not None
        return target[0], target[1]

    # Before: in eus2, to eus2's account; it would resume from there and from what jobs wrote in
    # scus (the replica's twin, reached through its endpoint in eus2 while scus is up).
    account, _ = checkpoints(home_view)
    assert accounts[account] == primary
    (home_map,) = [
        m for m in home_view.objects(CONFIG_MAP, submitted.namespace) if m["metadata"]["name"] == "platform-storage"
    ]
    home_resume = home_map["data"]["WEIGHTS_CHECKPOINTS_RESUME_URLS"].split()
    assert len(home_resume) == 2 and home_resume[1].endswith("/checkpoints-scus")
    replica = home_resume[1].removeprefix("https://").split(".")[0]
    assert endpoint_subnet(home_view, f"/storageAccounts/{replica}")  # its endpoint in eus2
    # The region is lost; the same spec runs on the other region's worker.
    view = by_cluster[other][0]
    result = evaluate(view, submitted)
    assert all(not refusals for refusals in result.values()), result
    account, container = checkpoints(view)
    assert accounts[account] == config.clusters[other].region != primary
    assert (account, container) not in copies, "a replication destination is read-only"
    # It resumes from what it wrote in scus before and from scus's copy of what eus2 wrote, and
    # its identity may read both (a writer's Storage Blob Data Contributor reads too).
    (storage_map,) = [
        m for m in view.objects(CONFIG_MAP, submitted.namespace) if m["metadata"]["name"] == "platform-storage"
    ]
    resume = storage_map["data"]["WEIGHTS_CHECKPOINTS_RESUME_URLS"].split()
    assert [u.removeprefix("https://").split(".")[0] for u in resume] == [account, account]
    assert [u.rsplit("/", 1)[1] for u in resume] == [container, "checkpoints"]
    for url in resume:
        held = (account, url.rsplit("/", 1)[1], "write")
        assert identity_refusals(view, submitted.namespace, submitted.pod, "trainer", held) == []
    # The old fixed location (`${WEIGHTS_WRITE_URL}`, the account itself) was the lost region's.
    assert accounts[account_name(view, submitted.golden)] == primary


def test_a_whole_gpu_pool_starting_cold_never_stops_prods_autoscaler(plans):
    """Prod's h100 pool scaled from zero to its maximum at once: its nodes carry the preflight
    gate's startup taint past the autoscaler's 15 minutes of "not started", so they count as
    unready; with the default tolerance (3 unready, or 45% of the cluster) that would stop every
    scale-up and scale-down of the cluster until they pass. The cluster's profile tolerates them."""
    plan = plans["prod"]
    view, pod = _gang(plan)
    pool_name = pod["nodeSelector"]["platform.ai/gpu-pool"]
    pool = next(r for r in plan.of_type(AGENT_POOL) if r.inputs["agentPoolName"] == pool_name)
    profile = view.managed_cluster.inputs["autoScalerProfile"]
    ok = int(profile["okTotalUnreadyCount"])
    others = [
        Node(f"other-{i}", "other", {}, [], created=-3600, ready_since=-3600)
        for i in range(sum(int(p.get("minCount") or p.get("count") or 0) for p in _other_pools(plan, view)))
    ]
    gate = {"key": gpu_health_facts.PREFLIGHT_TAINT_KEY, "value": "pending", "effect": "NoSchedule"}
    cold = [
        Node(f"h100-{i}", pool_name, {ca.AZURE_GPU_LABEL: "nvidia"}, [dict(gate)], created=0, ready_since=240)
        for i in range(int(pool.inputs["maxCount"]))
    ]
    at = 20 * MINUTE  # past the 15 minutes, still being checked
    assert Autoscaler.healthy([*others, *cold], at, ok)
    assert not Autoscaler.healthy([*others, *cold], at)  # the default would stop the autoscaler


def _other_pools(plan: Plan, view: ClusterView) -> list[dict[str, Any]]:
    """The cluster's pools other than GPU pools (system, CPU, Kafka...), as planned."""
    name = view.managed_cluster.inputs["resourceName"]
    pools = [dict(p) for p in view.managed_cluster.inputs.get("agentPoolProfiles") or []]
    pools += [
        r.inputs
        for r in plan.of_type(AGENT_POOL)
        if r.inputs.get("resourceName") == name and "gpuProfile" not in r.inputs
    ]
    return pools
