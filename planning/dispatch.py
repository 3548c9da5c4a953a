"""Jobs that fail over between regions: Kueue's MultiKueue, as plain manifests (pure planning).

A dispatch cluster (`role: dispatch`, listed in `platform:jobs.dispatchers`) runs Kueue as a
MultiKueue manager and no workloads; every GPU cluster of `platform:jobs.workers` is a worker.
Teams submit a job to a dispatcher's LocalQueue `any-region`; its team ClusterQueue holds the
sum of the team's quota on the workers, and the MultiKueue admission check copies the job to
the workers, where the first to admit it runs it and the copies elsewhere are removed (Kueue's
default dispatcher, AllAtOnce). A job for one region goes straight to that cluster's `gpu`
queue, as before.

Facts (Kueue v0.19.2, checked in its source; docs/decisions/0008-regional-failure.md):
- the manager cannot be its own worker (site/content/en/docs/concepts/multikueue.md,
  "Limitations"), hence dedicated dispatch clusters;
- a worker needs the job's namespace and a LocalQueue of the same name (setup_multikueue.md);
- a MultiKueueCluster reads a kubeconfig from a Secret in Kueue's namespace, key `kubeconfig`;
  exec plugins and token files are refused, an inline token is accepted, and a changed Secret
  rebuilds the worker's client (pkg/controller/admissionchecks/multikueue/multikueuecluster.go);
- the worker-side role: site/static/examples/multikueue/create-multikueue-kubeconfig.sh,
  narrowed to the job kinds the platform's Kueue manages, plus TrainJob, which it omits.

Who the dispatchers are on a worker (docs/decisions/0009-who-reaches-what.md, path 2): a
managed identity of the environment's (`DISPATCH_WORKLOAD`), whose Entra ID token a CronJob on
each dispatcher keeps in the kubeconfig Secrets (planning/multikueue_token.py); no credential
is in Pulumi's state. On each worker it reads the job kinds cluster-wide (MultiKueue's remote
watches have no namespace: a Kubernetes ClusterRole bound to the identity's object ID, AKS's
username for a service principal) and writes them only in the teams' job namespaces (the
custom Azure role "Platform MultiKueue worker", assigned at `<cluster>/namespaces/<ns>`,
learn.microsoft.com/azure/aks/manage-azure-rbac), never in a system namespace.

Imports facts, planning and the config model; nothing of Pulumi.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import yaml

from facts.aks_rbac import data_action
from facts.gpu import POOL_LABEL
from facts.workload_identity import USE_LABEL
from planning import multikueue_token
from planning.capacity import PoolCapacity, plan_cluster
from planning.images import PYTHON_SECURITY_CONTEXT, python_image
from planning.queues import (
    COHORT,
    COVERED_RESOURCES,
    KUEUE_FRAMEWORKS,
    TEAM_LABEL,
    Manifest,
    flavor_name,
    flavor_spec,
    quota_amounts,
)
from stackconfig.model import PlatformConfig, TeamConfig

# The LocalQueue teams submit to for "any region", on the dispatchers and (as MultiKueue
# requires) on every worker, where it feeds the team's own ClusterQueue.
ANY_REGION_QUEUE = "any-region"
ADMISSION_CHECK = "multikueue"
MULTIKUEUE_CONFIG = "workers"
CONTROLLER_NAME = "kueue.x-k8s.io/multikueue"
# The dispatchers' managed identity (made by the foundation beside the workloads').
DISPATCH_WORKLOAD = "multikueue"
# On each worker: the ClusterRole that lets it watch the job kinds everywhere.
WATCH_ROLE = "multikueue-watch"
# On each dispatcher: the CronJob (and its service account and Role) that keeps the kubeconfigs
# signed in, the ConfigMap of the workers' API servers and CAs it reads, and its script.
TOKEN_JOB = "multikueue-token"
WORKERS_CONFIG_MAP = "multikueue-workers"
TOKEN_SCRIPT = "multikueue_token.py"
# The key of the Secret a MultiKueueCluster reads (multikueue_types.go, KubeconfigKey).
KUBECONFIG_KEY = multikueue_token.KUBECONFIG_KEY
# Often enough that a token expiring within the script's renewal window is replaced in time.
TOKEN_SCHEDULE = "*/10 * * * *"

_JOB_VERBS = ["create", "delete", "get", "list", "watch"]
# create-multikueue-kubeconfig.sh's ClusterRole (Kueue v0.19.2), for the frameworks the
# platform's Kueue manages (planning/queues.py, KUEUE_FRAMEWORKS) and no others.
FRAMEWORK_RULES: dict[str, list[dict[str, Any]]] = {
    "batch/job": [
        {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": _JOB_VERBS},
        {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["get"]},
    ],
    "pod": [{"apiGroups": [""], "resources": ["pods"], "verbs": _JOB_VERBS}],
}
WORKER_RULES: list[dict[str, Any]] = [
    *(rule for framework in KUEUE_FRAMEWORKS for rule in FRAMEWORK_RULES[framework]),
    {
        "apiGroups": ["kueue.x-k8s.io"],
        "resources": ["workloads"],
        "verbs": [*_JOB_VERBS, "update", "patch"],
    },
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get", "patch", "update"]},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues"], "verbs": ["get", "list", "watch"]},
]


def kubeconfig_secret(worker: str) -> str:
    """The Secret on a dispatcher holding its kubeconfig for one worker (the refresher writes it)."""
    return multikueue_token.SECRET_PREFIX + worker


def origin(dispatcher: str) -> str:
    """The label value a dispatcher marks the workers' copies with. Distinct per dispatcher:
    each one's garbage collector removes copies of its own origin whose job it no longer has,
    so two dispatchers sharing an origin would delete each other's jobs."""
    return f"multikueue-{dispatcher}"


def watch_rules() -> list[dict[str, Any]]:
    """What the dispatchers read on a worker, cluster-wide: every kind of WORKER_RULES, read only."""
    return [{**rule, "verbs": [v for v in rule["verbs"] if v in ("get", "list", "watch")]} for rule in WORKER_RULES]


def worker_data_actions() -> list[str]:
    """The data actions of the custom role "Platform MultiKueue worker" (planning/delivery.py lists
    the same; tests/test_permissions.py holds them equal): read, write and delete of the kinds
    of WORKER_RULES (status is the kind's own action; custom resources are one data action)."""
    kinds = {
        (group, resource.split("/")[0])
        for rule in WORKER_RULES
        for group in rule["apiGroups"]
        for resource in rule["resources"]
    }
    return sorted(
        {data_action(group, resource, verb) for group, resource in kinds for verb in ("read", "write", "delete")}
    )


def server_and_ca(cluster_kubeconfig: str) -> tuple[str, str]:
    """A cluster's API server and CA from its (kubelogin) kubeconfig."""
    cluster = yaml.safe_load(cluster_kubeconfig)["clusters"][0]["cluster"]
    return cluster["server"], cluster["certificate-authority-data"]


def workers_config_map_data(
    endpoints: dict[str, tuple[str, str]], scopes: dict[str, str] | None = None
) -> dict[str, str]:
    """The ConfigMap the refresher mounts: `<worker>.server` and `<worker>.ca` per worker, and
    `<worker>.scope` where its API server takes another audience than AKS's (a site's)."""
    data = {}
    for worker, (server, ca) in endpoints.items():
        data[f"{worker}.server"], data[f"{worker}.ca"] = server, ca
    for worker, scope in (scopes or {}).items():
        data[f"{worker}.scope"] = scope
    return data


def token_role_rules(workers: list[str]) -> list[dict[str, Any]]:
    """The refresher's Role in Kueue's namespace: its own Secrets by name, and create (which
    Kubernetes cannot limit by name; it reads nothing it did not name)."""
    return [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "verbs": ["get", "update"],
            "resourceNames": [kubeconfig_secret(w) for w in workers],
        },
    ]


def token_cronjob(
    namespace: str, login_server: str, priority_class: str, tolerations: list[dict[str, Any]]
) -> dict[str, Any]:
    """The refresher: signs in with workload identity and rewrites the kubeconfig Secrets."""
    labels = {"app.kubernetes.io/name": TOKEN_JOB}
    container = {
        "name": "refresh",
        "image": python_image(login_server),
        "imagePullPolicy": "IfNotPresent",
        "command": ["python3", f"/script/{TOKEN_SCRIPT}", "/etc/multikueue/workers"],
        "volumeMounts": [
            {"name": "script", "mountPath": "/script", "readOnly": True},
            {"name": "workers", "mountPath": "/etc/multikueue/workers", "readOnly": True},
        ],
        "securityContext": PYTHON_SECURITY_CONTEXT,
        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"memory": "64Mi"}},
    }
    pod = {
        "metadata": {"labels": {**labels, USE_LABEL: "true"}},
        "spec": {
            "serviceAccountName": TOKEN_JOB,
            "restartPolicy": "OnFailure",
            "enableServiceLinks": False,
            "priorityClassName": priority_class,
            "tolerations": tolerations,
            "containers": [container],
            "volumes": [
                {"name": "script", "configMap": {"name": TOKEN_JOB}},
                {"name": "workers", "configMap": {"name": WORKERS_CONFIG_MAP}},
            ],
        },
    }
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": TOKEN_JOB, "namespace": namespace, "labels": labels},
        "spec": {
            "schedule": TOKEN_SCHEDULE,
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 300,
            "successfulJobsHistoryLimit": 1,
            "failedJobsHistoryLimit": 3,
            "jobTemplate": {"spec": {"backoffLimit": 2, "activeDeadlineSeconds": 300, "template": pod}},
        },
    }


def token_script() -> str:
    """The refresher's source, shipped in a ConfigMap."""
    return Path(multikueue_token.__file__).read_text()


# An on-premises site's quota, as a worker of the dispatchers: team -> pool -> amounts (the
# site's ClusterQueues hold the same: planning/site_baseline.py, `site_quotas`).
SiteQuotas = dict[str, dict[str, dict[str, int]]]


def team_quotas(
    workers: dict[str, list[PoolCapacity]], team: str, sites: dict[str, SiteQuotas] | None = None
) -> list[dict[str, Any]]:
    """A team's quota on a dispatcher: its quota on each worker's pools (an AKS cluster's or a
    site's), added up per pool name."""
    summed: dict[str, Counter[str]] = {}
    for pools in workers.values():
        for p in pools:
            if team in p.gpu_pool.quotas:
                amounts = quota_amounts(p.gpu_pool, p.gpu_units_per_node, p.gpu_pool.quotas[team])
                summed.setdefault(p.name, Counter()).update(amounts)
    for quotas in (sites or {}).values():
        for pool, amounts in quotas.get(team, {}).items():
            summed.setdefault(pool, Counter()).update(amounts)
    return [flavor_spec(pool, dict(amounts)) for pool, amounts in summed.items()]


def dispatcher_manifests(
    workers: dict[str, list[PoolCapacity]], teams: dict[str, TeamConfig], sites: dict[str, SiteQuotas] | None = None
) -> list[Manifest]:
    """Everything Kueue needs on a dispatcher: a flavor per pool name, the admission check and its
    workers (the AKS workers, then the on-premises sites), and per team a ClusterQueue and the
    `any-region` LocalQueues.

    The flavors carry the pools' node label, so a job that selects a pool is charged to that
    pool's quota here as on the workers; no node exists here, and MultiKueue never starts the
    dispatcher's own copy of a job, so the label only chooses the flavor."""
    sites = sites or {}
    pools = sorted(
        {p.name for capacity in workers.values() for p in capacity}
        | {pool for quotas in sites.values() for by_pool in quotas.values() for pool in by_pool}
    )
    manifests = [Manifest("ResourceFlavor", flavor_name(pool), {"nodeLabels": {POOL_LABEL: pool}}) for pool in pools]
    manifests.append(
        Manifest(
            "AdmissionCheck",
            ADMISSION_CHECK,
            {
                "controllerName": CONTROLLER_NAME,
                "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": MULTIKUEUE_CONFIG},
            },
        )
    )
    manifests.append(Manifest("MultiKueueConfig", MULTIKUEUE_CONFIG, {"clusters": [*workers, *sites]}))
    for worker in [*workers, *sites]:
        manifests.append(
            Manifest(
                "MultiKueueCluster",
                worker,
                {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": kubeconfig_secret(worker)}}},
            )
        )
    teams_with_quota = {t for capacity in workers.values() for p in capacity for t in p.gpu_pool.quotas}
    teams_with_quota |= {t for quotas in sites.values() for t in quotas}
    for team in sorted(teams_with_quota):
        manifests.append(
            Manifest(
                "ClusterQueue",
                f"team-{team}",
                {
                    "cohortName": COHORT,
                    "namespaceSelector": {"matchLabels": {TEAM_LABEL: team}},
                    "queueingStrategy": "BestEffortFIFO",
                    "resourceGroups": [
                        {"coveredResources": list(COVERED_RESOURCES), "flavors": team_quotas(workers, team, sites)}
                    ],
                    "admissionChecksStrategy": {"admissionChecks": [{"name": ADMISSION_CHECK}]},
                },
            )
        )
        manifests += any_region_queues(teams[team], team)
    return manifests


def any_region_queues(team: TeamConfig, team_name: str) -> list[Manifest]:
    """The `any-region` LocalQueue in each of the team's job namespaces (not streaming ones)."""
    return [
        Manifest("LocalQueue", ANY_REGION_QUEUE, {"clusterQueue": f"team-{team_name}"}, namespace=namespace)
        for namespace in team.namespaces
        if namespace not in team.streaming_namespaces
    ]


def worker_manifests(gpu_pools: list[PoolCapacity], teams: dict[str, TeamConfig]) -> list[Manifest]:
    """On a worker: the `any-region` LocalQueue beside `gpu`, for each team with quota there."""
    return [
        queue
        for team in sorted({t for p in gpu_pools for t in p.gpu_pool.quotas})
        for queue in any_region_queues(teams[team], team)
    ]


def worker_namespaces(gpu_pools: list[PoolCapacity], teams: dict[str, TeamConfig]) -> list[str]:
    """Where MultiKueue writes on a worker: the namespaces of its `any-region` queues."""
    return sorted({str(queue.namespace) for queue in worker_manifests(gpu_pools, teams)})


def worker_pools(config: PlatformConfig) -> dict[str, list[PoolCapacity]]:
    """Each worker's GPU pools, with their capacity and quotas."""
    return {worker: plan_cluster(config, worker).gpu_pools for worker in config.dispatch_workers()}


def worker_api_server_ranges(config: PlatformConfig) -> tuple[str, ...]:
    """Where a dispatcher's Kueue reaches the workers' API servers: their VNet-integrated
    subnets, across the regions' peering (validation requires the integration)."""
    return tuple(
        str(subnet) for w in config.dispatch_workers() if (subnet := config.clusters[w].subnets.api_server) is not None
    )
