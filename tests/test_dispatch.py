"""Jobs that fail over between regions (planning/dispatch.py, components/dispatch.py): prod and
prod-scale run a MultiKueue dispatcher per region that hands "any region" jobs to both GPU
clusters. What Kueue, Kubernetes and the network would refuse is checked here: the kubeconfig
Kueue accepts, the worker-side role, the queues on both sides, the way to the workers' private
API servers, and that a worker admits the 8-GPU InfiniBand gang job that arrives that way."""

from __future__ import annotations

import ipaddress
import json

import pytest
import yaml
from google.protobuf import json_format

from contracts.golden import evaluate
from offline.engine import _SECRET_VALUE
from planning import dispatch
from planning.cluster_traffic import KUEUE_NAMESPACE
from tests.conftest import run_with, stack_values
from tests.test_config_errors import expect_problem, set_in
from tests.test_contracts import applicable, report

MULTI_REGION = ("prod", "prod-scale")
SECRET = "kubernetes:core/v1:Secret"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"


def _in(plan, token: str, cluster: str) -> list:
    return [r for r in plan.of_type(token) if r.provider and r.provider.split("::")[-2] == f"aks-{cluster}-k8s"]


def _config(stack: str):
    values = stack_values(stack)
    dispatchers = values["platform:jobs"]["dispatchers"]
    workers = [k for k, c in values["platform:clusters"].items() if c.get("gpuPools")]
    return values, dispatchers, workers


def kueue_refusals(kubeconfig: str) -> list[str]:
    """What Kueue v0.19.2 refuses in a MultiKueueCluster's kubeconfig (pkg/controller/admissionchecks
    /multikueue/multikueuecluster.go, validateKubeconfig and validateRestConfig)."""
    found = []
    config = yaml.safe_load(kubeconfig)
    for cluster in config["clusters"]:
        spec = cluster["cluster"]
        if not spec.get("server"):
            found.append("no server")
        if spec.get("insecure-skip-tls-verify"):
            found.append("insecure-skip-tls-verify")
        if "certificate-authority" in spec or not spec.get("certificate-authority-data"):
            found.append("a CA file, not certificate-authority-data")
    for user in config["users"]:
        spec = user["user"]
        for refused in ("tokenFile", "exec", "auth-provider", "username", "password"):
            if refused in spec:
                found.append(refused)
        if not spec.get("token"):
            found.append("no credential")
    return found


def test_kueues_refusals_are_the_ones_that_bite():
    """The check above refuses what a kubelogin kubeconfig has: an exec plugin (Entra ID)."""
    kubelogin = {
        "clusters": [{"name": "c", "cluster": {"server": "https://x", "certificate-authority-data": "Q0E="}}],
        "users": [{"name": "u", "user": {"exec": {"command": "kubelogin"}}}],
    }
    assert kueue_refusals(yaml.safe_dump(kubelogin)) == ["exec", "no credential"]


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_each_dispatcher_reaches_every_worker_with_a_kubeconfig_kueue_accepts(plans, stack):
    plan = plans[stack]
    _, dispatchers, workers = _config(stack)
    tokens = {}
    for worker in workers:
        (token,) = [
            s for s in _in(plan, SECRET, worker) if s.inputs.get("type") == "kubernetes.io/service-account-token"
        ]
        assert token.inputs["metadata"]["annotations"] == {
            "kubernetes.io/service-account.name": dispatch.WORKER_SERVICE_ACCOUNT
        }
        assert token.inputs["metadata"]["namespace"] == KUEUE_NAMESPACE
        # The token Kubernetes fills in (here, the offline engine's stand-in for its token controller).
        tokens[worker] = f"offline-token-{token.name}"
    servers = {
        key: yaml.safe_load(plan.outputs["kubeconfigs"][key])["clusters"][0]["cluster"]["server"]
        for key in workers
        if "kubeconfigs" in plan.outputs
    }
    for key in dispatchers:
        (config,) = [m.inputs["spec"] for m in _in(plan, KUEUE + "MultiKueueConfig", key)]
        assert config["clusters"] == workers
        clusters = {m.inputs["metadata"]["name"]: m.inputs["spec"] for m in _in(plan, KUEUE + "MultiKueueCluster", key)}
        assert set(clusters) == set(workers)
        secrets = {s.inputs["metadata"]["name"]: s for s in _in(plan, SECRET, key)}
        for worker, spec in clusters.items():
            location = spec["clusterSource"]["kubeConfig"]
            assert location["locationType"] == "Secret"
            secret = secrets[location["location"]]
            assert secret.inputs["metadata"]["namespace"] == KUEUE_NAMESPACE, "Kueue reads its own namespace only"
            kubeconfig = secret.inputs["stringData"][dispatch.KUBECONFIG_KEY]
            assert kueue_refusals(kubeconfig) == [], (key, worker)
            parsed = yaml.safe_load(kubeconfig)
            assert parsed["users"][0]["user"]["token"] == tokens[worker]
            if servers:
                assert parsed["clusters"][0]["cluster"]["server"] == servers[worker]
            # The token travels as a secret: encrypted in state, masked in previews.
            assert _SECRET_VALUE in json.dumps(json_format.MessageToDict(secret.raw_inputs)["stringData"])
        (check,) = [m.inputs["spec"] for m in _in(plan, KUEUE + "AdmissionCheck", key)]
        assert check["controllerName"] == "kueue.x-k8s.io/multikueue"
        assert check["parameters"] == {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "workers"}


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_the_dispatchers_have_origins_of_their_own(plans, stack):
    """Each dispatcher's garbage collector deletes the workers' copies of its origin whose job it
    does not have: two dispatchers with one origin would delete each other's jobs."""
    from contracts.cluster import ClusterView

    values, dispatchers, workers = _config(stack)
    origins = [ClusterView(plans[stack], key, values).kueue_config["multiKueue"]["origin"] for key in dispatchers]
    assert len(set(origins)) == len(dispatchers) == 2
    for worker in workers:
        assert "multiKueue" not in ClusterView(plans[stack], worker, values).kueue_config


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_a_dispatchers_quota_is_what_the_workers_grant_no_more(plans, stack):
    """Quotas stay within each region's capacity: a team's quota on a dispatcher, per flavor, is
    the sum of its quotas on the workers, each of which the capacity checks bound by its pools."""
    plan = plans[stack]
    _, dispatchers, workers = _config(stack)

    def quotas(cluster):
        found = {}
        for queue in _in(plan, KUEUE + "ClusterQueue", cluster):
            for flavor in queue.inputs["spec"]["resourceGroups"][0]["flavors"]:
                for resource in flavor["resources"]:
                    found[(queue.inputs["metadata"]["name"], flavor["name"], resource["name"])] = int(
                        str(resource["nominalQuota"]).removesuffix("Gi")
                    )
        return found

    summed: dict = {}
    for worker in workers:
        for k, v in quotas(worker).items():
            summed[k] = summed.get(k, 0) + v
    for key in dispatchers:
        assert quotas(key) == summed
        for queue in _in(plan, KUEUE + "ClusterQueue", key):
            assert queue.inputs["spec"]["admissionChecksStrategy"] == {"admissionChecks": [{"name": "multikueue"}]}


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_a_worker_admits_the_8_gpu_infiniband_gang_job_that_arrives_from_a_dispatcher(plans, stack):
    """The job keeps its queue label when copied (Kueue copies the labels), so each worker needs
    an `any-region` LocalQueue in `research` that reaches the team's GPU quota; then admission,
    scheduling, queueing, reach and identity pass as for a job submitted there. MultiKueue copies
    the Job only: the rendezvous Service goes to each worker beforehand (docs/resilience.md,
    "Jobs"), which is why the example carries it as a separate document."""
    _, _, workers = _config(stack)
    found = applicable(plans, stack, "training-infiniband", QUEUE=dispatch.ANY_REGION_QUEUE)
    assert sorted(view.key for view, _ in found) == sorted(workers)
    for view, item in found:
        assert [m["kind"] for m in item.manifests] == ["Service", "Job"]
        assert item.workload["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "any-region"
        assert not any(evaluate(view, item).values()), (view.key, report(evaluate(view, item)))
    # On each dispatcher the same job passes Kueue's queueing: its namespace is covered, the
    # `any-region` LocalQueue leads to the team's ClusterQueue, and the flavor of the pool it
    # selects holds quota for the whole gang.
    from contracts import queueing
    from contracts.cluster import ClusterView

    values, dispatchers, _ = _config(stack)
    view, item = found[0]
    pool = item.variables["TRAINING_POOL"]
    for key in dispatchers:
        dispatcher = ClusterView(plans[stack], key, values)
        assert queueing.refusals(dispatcher, item.workload, item.pod["spec"], pool) == [], key
        # ... and the same job asking for more than both regions grant is refused there.
        greedy = item.changed(lambda job: job["spec"].update(parallelism=10_000, completions=10_000))
        assert queueing.refusals(dispatcher, greedy.workload, greedy.pod["spec"], pool), key


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_dispatchers_reach_the_workers_private_api_servers(plans, stack):
    """Kueue on a dispatcher reaches each worker's VNet-integrated API server: its namespace's
    egress policy allows the workers' API-server subnets on 443, the regions' VNets are peered,
    and the dispatcher's VNet resolves each worker region's private API-server zone."""
    plan = plans[stack]
    values, dispatchers, workers = _config(stack)
    clusters = values["platform:clusters"]
    subnets = {w: clusters[w]["subnets"]["apiServer"] for w in workers}
    for key in dispatchers:
        allowed = [
            to["ipBlock"]["cidr"]
            for policy in _in(plan, NETWORK_POLICY, key)
            if policy.inputs["metadata"]["namespace"] == KUEUE_NAMESPACE
            for rule in policy.inputs["spec"].get("egress") or []
            if any(p["port"] == 443 for p in rule.get("ports", []))
            for to in rule.get("to", [])
            if "ipBlock" in to
        ]
        for worker, subnet in subnets.items():
            assert any(ipaddress.ip_network(subnet).subnet_of(ipaddress.ip_network(cidr)) for cidr in allowed), (
                key,
                worker,
            )
    links = {
        (str(link.inputs["privateZoneName"]), str(link.inputs["virtualNetwork"]["id"]))
        for link in plan.of_type("azure-native:privatedns:VirtualNetworkLink")
    }
    vnets = {v.inputs["location"]: v for v in plan.of_type("azure-native:network:VirtualNetwork")}
    from tests.test_private_data import resource_id

    # The workers' API server zones: the region's, or the environment's own subzone of the hub's.
    subzone = f"{stack_values(stack)['platform:prefix']}-{stack_values(stack)['platform:environment']}."
    shared = bool((stack_values(stack)["platform:network"].get("hub") or {}).get("privateDnsZonesResourceGroupId"))
    for key in dispatchers:
        own = resource_id(vnets[clusters[key]["region"]])
        for worker in workers:
            zone = f"{subzone if shared else ''}privatelink.{clusters[worker]['region']}.azmk8s.io"
            assert (zone, own) in links, (key, worker)
    regions = {c["region"] for c in clusters.values()}
    peered = {
        (p.inputs["virtualNetworkName"], p.inputs["remoteVirtualNetwork"]["id"].rsplit("/", 1)[-1])
        for p in plan.of_type("azure-native:network:VirtualNetworkPeering")
    }
    names = {r: vnets[r].inputs["virtualNetworkName"] for r in regions}
    for a in regions:
        for b in regions - {a}:
            assert (names[a], names[b]) in peered


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_the_worker_role_covers_every_job_kind_the_platforms_kueue_manages(plans, stack):
    """MultiKueue creates and watches the job's own kind on the worker; a kind missing from the
    role leaves the job queued on the dispatcher forever."""
    from contracts.cluster import ClusterView
    from contracts.queueing import FRAMEWORKS

    plan = plans[stack]
    values, _, workers = _config(stack)
    kinds = {
        "batch/job": ("batch", "jobs"),
        "jobset.x-k8s.io/jobset": ("jobset.x-k8s.io", "jobsets"),
        "kubeflow.org/mpijob": ("kubeflow.org", "mpijobs"),
        "trainer.kubeflow.org/trainjob": ("trainer.kubeflow.org", "trainjobs"),
        "ray.io/rayjob": ("ray.io", "rayjobs"),
        "ray.io/raycluster": ("ray.io", "rayclusters"),
        "pod": ("", "pods"),
    }
    assert set(FRAMEWORKS.values()) <= set(kinds)
    for worker in workers:
        frameworks = ClusterView(plan, worker, values).kueue_config["integrations"]["frameworks"]
        (role,) = [
            r
            for r in _in(plan, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", worker)
            if r.name.startswith("dispatch-")
        ]
        granted = {
            (g, res): set(rule["verbs"])
            for rule in role.inputs["rules"]
            for g in rule["apiGroups"]
            for res in rule["resources"]
        }
        for framework in frameworks:
            group, resource = kinds[framework]
            assert {"create", "delete", "get", "list", "watch"} <= granted[(group, resource)], (worker, framework)
        assert {"create", "delete", "update", "patch"} <= granted[("kueue.x-k8s.io", "workloads")]
        (binding,) = [
            b
            for b in _in(plan, "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding", worker)
            if b.name.startswith("dispatch-")
        ]
        assert binding.inputs["subjects"] == [
            {"kind": "ServiceAccount", "name": "multikueue", "namespace": KUEUE_NAMESPACE}
        ]


def test_raising_the_token_generation_replaces_every_workers_token_and_kubeconfig(plans):
    def rotate(values):
        values["platform:jobs"]["tokenGeneration"] = 2

    plan = run_with("prod", rotate)
    assert plan.ok, plan.error
    before = {s.name for s in plans["prod"].of_type(SECRET)}
    after = {s.name for s in plan.of_type(SECRET)}
    assert after - before == {"dispatch-worker-eus2-token-2", "dispatch-worker-scus-token-2"}
    assert before - after == {"dispatch-worker-eus2-token-1", "dispatch-worker-scus-token-1"}
    kubeconfig = plan.one(SECRET, "dispatch-dispscus-eus2-kubeconfig").inputs["stringData"]["kubeconfig"]
    assert "offline-token-dispatch-worker-eus2-token-2" in yaml.safe_load(kubeconfig)["users"][0]["user"]["token"]


@pytest.mark.parametrize(
    "change, problem_key, reason",
    [
        (set_in("jobs.dispatchers", ["eus2", "dispscus"]), "platform:jobs.dispatchers[0]", "cannot be its own worker"),
        (
            set_in("clusters.dispeus2.role", "workloads"),
            "platform:jobs.dispatchers[0]",
            "role dispatch",
        ),
        (
            set_in("clusters.dispscus.sandboxPool", {"vmSize": "Standard_D8ds_v5", "minCount": 0, "maxCount": 2}),
            "platform:clusters.dispscus.sandboxPool",
            "runs no workloads",
        ),
        (
            set_in("workloads.trainer.clusters", ["eus2", "dispeus2"]),
            "platform:workloads.trainer.clusters[1]",
            "dispatch cluster",
        ),
        (set_in("jobs.workers", ["eus2", "dispscus"]), "platform:jobs.workers[1]", "no GPU pools"),
        (
            set_in("clusters.scus.apiServer.vnetIntegration", False),
            "platform:clusters.scus.apiServer.vnetIntegration",
            "MultiKueue worker",
        ),
        (
            set_in("jobs.dispatchers", ["dispeus2"]),
            "platform:clusters.dispscus.role",
            "not in platform:jobs.dispatchers",
        ),
    ],
    ids=[
        "workloads-cluster",
        "role",
        "sandbox",
        "workload-on-dispatcher",
        "worker-without-gpus",
        "public-route",
        "unlisted",
    ],
)
def test_dispatch_choices_azure_or_kueue_would_refuse_name_their_keys(change, problem_key, reason):
    expect_problem("prod", change, problem_key, reason)
