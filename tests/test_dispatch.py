"""Jobs that fail over between regions (planning/dispatch.py, components/dispatch.py): prod and
prod-scale run a MultiKueue dispatcher per region that hands "any region" jobs to both GPU
clusters. What Kueue, Kubernetes and the network would refuse is checked here: the kubeconfig
Kueue accepts, the worker-side role, the queues on both sides, the way to the workers' private
API servers, and that a worker admits the 8-GPU InfiniBand gang job that arrives that way."""

from __future__ import annotations

import base64
import ipaddress
import json

import pytest
import yaml

from contracts.golden import evaluate
from planning import dispatch, multikueue_token
from planning.cluster_traffic import KUEUE_NAMESPACE
from tests.conftest import stack_values
from tests.test_config_errors import expect_problem, set_in
from tests.test_contracts import applicable, report

MULTI_REGION = ("prod", "prod-scale")
SECRET = "kubernetes:core/v1:Secret"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
NETWORK_POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy"


def _in(plan, token: str, cluster: str) -> list:
    return [r for r in plan.of_type(token) if r.provider and r.provider.split("::")[-2] == f"aks-{cluster}-k8s"]


def _config(stack: str):
    """(values, dispatchers, the AKS workers); `_sites` lists the on-premises workers."""
    values = stack_values(stack)
    dispatchers = values["platform:jobs"]["dispatchers"]
    workers = [k for k, c in values["platform:clusters"].items() if c.get("gpuPools")]
    return values, dispatchers, workers


def _sites(stack: str) -> list[str]:
    return [k for k, site in stack_values(stack).get("platform:onPremClusters", {}).items() if site.get("teams")]


def _site_endpoint(stack: str, site: str) -> tuple[str, str]:
    """A site's API server and CA, as config declares them (no kubeconfig of a site is Pulumi's)."""
    server = stack_values(stack)["platform:onPremClusters"][site]["apiServer"]
    return server["url"], server["certificateAuthorityData"]


def _site_audience(stack: str, site: str) -> str:
    return str(stack_values(stack)["platform:onPremClusters"][site]["apiServer"]["tokenAudience"])


def _site_objects(plan, site: str, kind: str) -> list[dict]:
    """The objects of one kind in a site's baseline, as its Flux applies them (the plan's output)."""
    documents = plan.outputs["siteBaselines"][site]
    return [m for m in (yaml.safe_load(text) for text in documents.values()) if m["kind"] == kind]


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


class FakeDispatcher(multikueue_token.Cluster):
    """A dispatcher's API server as the refresher sees it: Secrets in Kueue's namespace."""

    def __init__(self):
        super().__init__("https://dispatcher", "sa-token", None, KUEUE_NAMESPACE)
        self.secrets: dict[str, dict] = {}
        self.writes = 0

    def request(self, method, path, body=None):
        name = path.rsplit("/", 1)[-1]
        if method == "GET":
            return self.secrets.get(name)
        self.writes += 1
        if method == "POST":
            assert body["metadata"]["name"] not in self.secrets, "create of an existing Secret"
            self.secrets[body["metadata"]["name"]] = body
        else:
            assert method == "PUT" and name in self.secrets and body["type"] == "Opaque"
            self.secrets[name] = body
        return body


def jwt(expires: float) -> str:
    claims = base64.urlsafe_b64encode(json.dumps({"exp": int(expires)}).encode()).decode().rstrip("=")
    return f"e30.{claims}.sig"


def secret_kubeconfig(cluster: FakeDispatcher, worker: str) -> str:
    data = cluster.secrets[dispatch.kubeconfig_secret(worker)]["data"][dispatch.KUBECONFIG_KEY]
    return base64.b64decode(data).decode()


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_each_dispatcher_reaches_every_worker_with_a_kubeconfig_kueue_accepts(plans, stack):
    """Kueue on each dispatcher reads a Secret per worker, which the refresher writes from the
    workers' API servers and CAs (a ConfigMap the tenants' unit makes from each worker's own
    kubeconfig) and an Entra ID token: what Kueue accepts, and nothing Pulumi holds."""
    plan = plans[stack]
    _, dispatchers, workers = _config(stack)
    workers = [*workers, *_sites(stack)]
    endpoints = {
        key: _site_endpoint(stack, key)
        if key in _sites(stack)
        else dispatch.server_and_ca(plan.outputs["kubeconfigs"][key])
        for key in workers
        if "kubeconfigs" in plan.outputs
    }
    assert set(endpoints) == set(workers)
    # No Secret of the platform's in Kueue's namespace anywhere: no token is in the state.
    assert not [s.name for s in plan.of_type(SECRET) if s.inputs["metadata"].get("namespace") == KUEUE_NAMESPACE]
    for key in dispatchers:
        (config,) = [m.inputs["spec"] for m in _in(plan, KUEUE + "MultiKueueConfig", key)]
        assert config["clusters"] == workers
        clusters = {m.inputs["metadata"]["name"]: m.inputs["spec"] for m in _in(plan, KUEUE + "MultiKueueCluster", key)}
        assert set(clusters) == set(workers)
        (workers_map,) = [
            c
            for c in _in(plan, "kubernetes:core/v1:ConfigMap", key)
            if c.inputs["metadata"]["name"] == dispatch.WORKERS_CONFIG_MAP
        ]
        assert workers_map.inputs["metadata"]["namespace"] == KUEUE_NAMESPACE
        mounted = {
            f"{w}.{part}": v for w, (server, ca) in endpoints.items() for part, v in (("server", server), ("ca", ca))
        }
        # A site's API server takes its own audience (docs/hybrid.md), an AKS worker's AKS's (the default).
        mounted |= {f"{s}.scope": f"{_site_audience(stack, s)}/.default" for s in _sites(stack)}
        assert workers_map.inputs["data"] == mounted
        # The refresher's first run on this dispatcher, from what it mounts.
        cluster = FakeDispatcher()
        written = multikueue_token.refresh(cluster, endpoints, dispatch.kubeconfig_secret, lambda scope: jwt(4e9), 1e9)
        assert written == workers
        for worker, spec in clusters.items():
            location = spec["clusterSource"]["kubeConfig"]
            assert location == {"locationType": "Secret", "location": dispatch.kubeconfig_secret(worker)}
            kubeconfig = secret_kubeconfig(cluster, worker)
            assert kueue_refusals(kubeconfig) == [], (key, worker)
            parsed = yaml.safe_load(kubeconfig)
            assert parsed["clusters"][0]["cluster"]["server"] == endpoints[worker][0]
        (check,) = [m.inputs["spec"] for m in _in(plan, KUEUE + "AdmissionCheck", key)]
        assert check["controllerName"] == "kueue.x-k8s.io/multikueue"
        assert check["parameters"] == {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": "workers"}


def test_the_refresher_renews_the_token_before_it_expires_and_when_a_worker_moves():
    """A day of the CronJob's runs, ten minutes apart: the token is renewed once it expires within
    40 minutes (so Kueue never holds an expired one), not on every run (each rewrite reconnects
    Kueue to the worker), and at once when a worker's API server or CA changes; one Entra ID
    token serves every worker of a run."""
    cluster, issued = FakeDispatcher(), []
    lifetime = 75 * 60  # within Entra ID's 60-90 minute default

    def token_at(now):
        def fetch(scope):
            issued.append(now)
            return jwt(now + lifetime)

        return fetch

    endpoints = {"eus2": ("https://eus2", "Q0E="), "scus": ("https://scus", "Q0E=")}
    start = 1_900_000_000
    for run in range(144):
        now = start + run * 600
        if run == 100:
            endpoints["scus"] = ("https://scus-new", "Q0E=")
        multikueue_token.refresh(cluster, endpoints, dispatch.kubeconfig_secret, token_at(now), now)
        for worker in endpoints:
            token = yaml.safe_load(secret_kubeconfig(cluster, worker))["users"][0]["user"]["token"]
            # Never expired, nor expiring before the next run could renew it.
            assert multikueue_token.expires_at(token) - now > 600, (run, worker)
    assert yaml.safe_load(secret_kubeconfig(cluster, "scus"))["clusters"][0]["cluster"]["server"] == "https://scus-new"
    assert start + 100 * 600 in issued
    # Renewed every 40 minutes or so, not every ten.
    assert 144 // 6 <= len(issued) <= 144 // 3, len(issued)


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_only_the_refresher_signs_in_as_the_dispatchers_identity(plans, stack):
    """The dispatchers' identity trusts one subject per dispatcher's issuer, the refresher's
    service account, whose pods may reach Entra ID; the refresher's Role reads and updates the
    workers' kubeconfig Secrets by name, nothing else there."""
    plan = plans[stack]
    _, dispatchers, workers = _config(stack)
    workers = [*workers, *_sites(stack)]
    credentials = [
        c
        for c in plan.of_type("azure-native:managedidentity:FederatedIdentityCredential")
        if c.name.startswith(f"workloads-{dispatch.DISPATCH_WORKLOAD}-")
    ]
    assert sorted(c.name.rsplit("-", 1)[-1] for c in credentials) == sorted(dispatchers)
    assert {c.inputs["subject"] for c in credentials} == {
        f"system:serviceaccount:{KUEUE_NAMESPACE}:{dispatch.TOKEN_JOB}"
    }
    for key in dispatchers:
        (role,) = [
            r
            for r in _in(plan, "kubernetes:rbac.authorization.k8s.io/v1:Role", key)
            if r.name.startswith("dispatch-refresher-")
        ]
        named = [rule for rule in role.inputs["rules"] if "resourceNames" in rule]
        assert named == [
            {
                "apiGroups": [""],
                "resources": ["secrets"],
                "verbs": ["get", "update"],
                "resourceNames": [dispatch.kubeconfig_secret(w) for w in workers],
            }
        ]
        unnamed = [rule for rule in role.inputs["rules"] if "resourceNames" not in rule]
        assert unnamed == [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]}]
        (job,) = _in(plan, "kubernetes:batch/v1:CronJob", key)
        pod = job.inputs["spec"]["jobTemplate"]["spec"]["template"]
        assert pod["metadata"]["labels"]["azure.workload.identity/use"] == "true"
        assert pod["spec"]["serviceAccountName"] == dispatch.TOKEN_JOB
        (account,) = [
            a
            for a in _in(plan, "kubernetes:core/v1:ServiceAccount", key)
            if a.inputs["metadata"]["name"] == dispatch.TOKEN_JOB
        ]
        assert account.inputs["metadata"]["annotations"]["azure.workload.identity/client-id"]
        fqdns = [
            name
            for policy in _in(plan, "kubernetes:cilium.io/v2:CiliumNetworkPolicy", key)
            if policy.inputs["metadata"]["namespace"] == KUEUE_NAMESPACE
            for rule in policy.inputs["spec"].get("egress") or []
            for match in rule.get("toFQDNs") or []
            for name in match.values()
        ]
        assert "login.microsoftonline.com" in fqdns, key


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
        queues = (
            _site_objects(plan, cluster, "ClusterQueue")
            if cluster in _sites(stack)
            else [q.inputs for q in _in(plan, KUEUE + "ClusterQueue", cluster)]
        )
        for queue in queues:
            for flavor in queue["spec"]["resourceGroups"][0]["flavors"]:
                for resource in flavor["resources"]:
                    found[(queue["metadata"]["name"], flavor["name"], resource["name"])] = int(
                        str(resource["nominalQuota"]).removesuffix("Gi")
                    )
        return found

    summed: dict = {}
    for worker in [*workers, *_sites(stack)]:
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


def with_kafka_address(item, address: str):
    """The golden training job carrying `address` literally, as it did before its namespace's
    `platform-kafka` ConfigMap gave it the address of wherever it runs."""

    def carry(job):
        (variable,) = [
            e for e in job["spec"]["template"]["spec"]["containers"][0]["env"] if e["name"] == "KAFKA_BOOTSTRAP_SERVERS"
        ]
        variable.pop("valueFrom")
        variable["value"] = address

    return item.changed(carry)


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_the_job_rendered_once_reaches_the_kafka_of_whichever_worker_runs_it(plans, stack):
    """MultiKueue copies the Job unchanged, so a team renders it once (here for the first worker)
    and every worker must connect it to its own Kafka: its namespace's `platform-kafka` names that
    worker's brokers. The address the example used to carry (the first worker's in-cluster Service
    name) is refused on every other worker, where that name does not resolve."""
    found = applicable(plans, stack, "training-infiniband", QUEUE=dispatch.ANY_REGION_QUEUE)
    (home, first) = found[0]

    literal = with_kafka_address(first, f"{home.key}-kafka-bootstrap.kafka.svc:9093")
    for view, _ in found:
        assert not any(evaluate(view, first).values()), (view.key, report(evaluate(view, first)))
        refused = [r for r in evaluate(view, literal)["reach"] if "does not resolve" in r]
        assert bool(refused) == (view.key != home.key), (view.key, refused)


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


def dispatcher_grants(plan, stack: str) -> tuple[str, list]:
    """What the dispatchers' identity holds on the workers, from the plan: Azure role assignments
    (the delivery's custom role by the GUID the stack names) and Kubernetes RBAC."""
    from offline import identities as bootstrap
    from offline.mocks import OFFLINE_SUBSCRIPTION_ID
    from planning import permissions

    (binding,) = {
        subject["name"]
        for b in plan.of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding")
        if b.inputs["metadata"]["name"] == dispatch.WATCH_ROLE
        for subject in b.inputs["subjects"]
    }
    grants = [
        *bootstrap.program_grants(plan, OFFLINE_SUBSCRIPTION_ID, binding, bootstrap.stack_identities(stack)),
        *permissions.kubernetes_grants(permissions.view(plan, OFFLINE_SUBSCRIPTION_ID), binding),
    ]
    return binding, grants


@pytest.mark.parametrize("stack", MULTI_REGION)
def test_the_dispatchers_do_on_a_worker_what_multikueue_does_and_nothing_in_a_system_namespace(plans, stack):
    """MultiKueue watches each job kind and Kueue's Workloads cluster-wide (its remote watch has
    no namespace) and creates and deletes them in the job's namespace: every kind the worker's
    Kueue manages is admitted so, in each team job namespace, or the job stays queued on the
    dispatcher forever. Nowhere else: a pod in kube-system is cluster-admin."""
    from contracts.cluster import ClusterView
    from contracts.queueing import FRAMEWORKS
    from facts.aks_rbac import data_action
    from offline.mocks import OFFLINE_SUBSCRIPTION_ID
    from planning.permissions import Operation, check, cluster_ids

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
    identity, grants = dispatcher_grants(plan, stack)
    clusters = cluster_ids(plan.resources, OFFLINE_SUBSCRIPTION_ID)
    prefix = f"aks-{values['platform:prefix']}-{values['platform:environment']}-"
    teams = values["platform:teams"]
    for worker in workers:
        cluster = clusters[prefix + worker]
        view = ClusterView(plan, worker, values)
        # Where jobs arrive: the namespaces of the worker's `any-region` queues.
        job_namespaces = {
            q.inputs["metadata"]["namespace"]
            for q in _in(plan, KUEUE + "LocalQueue", worker)
            if q.inputs["metadata"]["name"] == dispatch.ANY_REGION_QUEUE
        }
        assert job_namespaces and job_namespaces <= {ns for team in teams.values() for ns in team["namespaces"]}
        handled = [kinds[f] for f in view.kueue_config["integrations"]["frameworks"]] + [
            ("kueue.x-k8s.io", "workloads")
        ]

        def op(group, resource, verb, namespace=None, cluster=cluster):
            scope = f"{cluster}/namespaces/{namespace}" if namespace else cluster
            return Operation(data_action(group, resource, verb), scope, f"MultiKueue {verb} {resource}", data=True)

        needed = [op(g, r, "read") for g, r in handled]
        needed += [op(g, r, v, ns) for g, r in handled for v in ("write", "delete") for ns in job_namespaces]
        assert not check(identity, grants, needed), (worker, [str(d) for d in check(identity, grants, needed)])
        system = [op("", "pods", "write", ns) for ns in ("kube-system", KUEUE_NAMESPACE, "default")]
        system += [op("batch", "jobs", "write", ns) for ns in ("kube-system", KUEUE_NAMESPACE)]
        system += [op("", "pods", "write"), op("", "secrets", "read"), op("", "secrets", "read", "research")]
        assert len(check(identity, grants, system)) == len(system), worker


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
        (set_in("jobs.workerRoleId", None), "platform:jobs.workerRoleId", "is required with dispatchers"),
    ],
    ids=[
        "workloads-cluster",
        "role",
        "sandbox",
        "workload-on-dispatcher",
        "worker-without-gpus",
        "public-route",
        "unlisted",
        "no-worker-role",
    ],
)
def test_dispatch_choices_azure_or_kueue_would_refuse_name_their_keys(change, problem_key, reason):
    expect_problem("prod", change, problem_key, reason)
