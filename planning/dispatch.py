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
  exec plugins and token files are refused, an inline token is accepted
  (pkg/controller/admissionchecks/multikueue/multikueuecluster.go, validateKubeconfig);
- the worker-side role: site/static/examples/multikueue/create-multikueue-kubeconfig.sh,
  narrowed to the job kinds the platform's Kueue manages, plus TrainJob, which it omits.

Imports facts, planning and the config model; nothing of Pulumi.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import yaml

from facts.gpu import POOL_LABEL
from planning.capacity import PoolCapacity, plan_cluster
from planning.queues import COHORT, COVERED_RESOURCES, TEAM_LABEL, Manifest, flavor_name, flavor_spec, quota_amounts
from stackconfig.model import PlatformConfig, TeamConfig

# The LocalQueue teams submit to for "any region", on the dispatchers and (as MultiKueue
# requires) on every worker, where it feeds the team's own ClusterQueue.
ANY_REGION_QUEUE = "any-region"
ADMISSION_CHECK = "multikueue"
MULTIKUEUE_CONFIG = "workers"
CONTROLLER_NAME = "kueue.x-k8s.io/multikueue"
# On each worker: the identity the dispatchers act as, and its role.
WORKER_SERVICE_ACCOUNT = "multikueue"
WORKER_ROLE = "multikueue-worker"
# The key of the Secret a MultiKueueCluster reads (multikueue_types.go, KubeconfigKey).
KUBECONFIG_KEY = "kubeconfig"

_JOB_VERBS = ["create", "delete", "get", "list", "watch"]
# create-multikueue-kubeconfig.sh's ClusterRole (Kueue v0.19.2), for the frameworks the
# platform's Kueue manages (planning/gpu_stack.py) and TrainJob, which the script omits although
# 0.19.2 ships its MultiKueue adapter.
WORKER_RULES: list[dict[str, Any]] = [
    {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": _JOB_VERBS},
    {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": _JOB_VERBS},
    {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets"], "verbs": _JOB_VERBS},
    {"apiGroups": ["jobset.x-k8s.io"], "resources": ["jobsets/status"], "verbs": ["get"]},
    {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"], "verbs": _JOB_VERBS},
    {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs/status"], "verbs": ["get"]},
    {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs"], "verbs": _JOB_VERBS},
    {"apiGroups": ["trainer.kubeflow.org"], "resources": ["trainjobs/status"], "verbs": ["get"]},
    {"apiGroups": ["ray.io"], "resources": ["rayjobs"], "verbs": _JOB_VERBS},
    {"apiGroups": ["ray.io"], "resources": ["rayclusters"], "verbs": [*_JOB_VERBS, "update", "patch"]},
    {"apiGroups": ["ray.io"], "resources": ["rayjobs/status", "rayclusters/status"], "verbs": ["get"]},
    {
        "apiGroups": ["kueue.x-k8s.io"],
        "resources": ["workloads"],
        "verbs": [*_JOB_VERBS, "update", "patch"],
    },
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["workloads/status"], "verbs": ["get", "patch", "update"]},
    {"apiGroups": ["kueue.x-k8s.io"], "resources": ["clusterqueues", "localqueues"], "verbs": ["get", "list", "watch"]},
]


def kubeconfig_secret(worker: str) -> str:
    """The Secret on a dispatcher holding its kubeconfig for one worker."""
    return f"multikueue-{worker}"


def token_secret(generation: int) -> str:
    """The worker's token Secret: a new generation is a new Secret, so a new token."""
    return f"multikueue-token-{generation}"


def origin(dispatcher: str) -> str:
    """The label value a dispatcher marks the workers' copies with. Distinct per dispatcher:
    each one's garbage collector removes copies of its own origin whose job it no longer has,
    so two dispatchers sharing an origin would delete each other's jobs."""
    return f"multikueue-{dispatcher}"


def kubeconfig(worker: str, server: str, certificate_authority_data: str, token: str) -> str:
    """What a MultiKueueCluster accepts: the server, its CA inline and an inline token."""
    return str(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {
                        "name": worker,
                        "cluster": {"server": server, "certificate-authority-data": certificate_authority_data},
                    }
                ],
                "users": [{"name": WORKER_SERVICE_ACCOUNT, "user": {"token": token}}],
                "contexts": [{"name": worker, "context": {"cluster": worker, "user": WORKER_SERVICE_ACCOUNT}}],
                "current-context": worker,
            },
            sort_keys=False,
        )
    )


def server_and_ca(cluster_kubeconfig: str) -> tuple[str, str]:
    """A cluster's API server and CA from its (kubelogin) kubeconfig."""
    cluster = yaml.safe_load(cluster_kubeconfig)["clusters"][0]["cluster"]
    return cluster["server"], cluster["certificate-authority-data"]


def team_quotas(workers: dict[str, list[PoolCapacity]], team: str) -> list[dict[str, Any]]:
    """A team's quota on a dispatcher: its quota on each worker's pools, added up per pool name."""
    summed: dict[str, Counter[str]] = {}
    for pools in workers.values():
        for p in pools:
            if team in p.gpu_pool.quotas:
                amounts = quota_amounts(p.gpu_pool, p.gpu_units_per_node, p.gpu_pool.quotas[team])
                summed.setdefault(p.name, Counter()).update(amounts)
    return [flavor_spec(pool, dict(amounts)) for pool, amounts in summed.items()]


def dispatcher_manifests(workers: dict[str, list[PoolCapacity]], teams: dict[str, TeamConfig]) -> list[Manifest]:
    """Everything Kueue needs on a dispatcher: a flavor per pool name, the admission check and its
    workers, and per team a ClusterQueue and the `any-region` LocalQueues.

    The flavors carry the pools' node label, so a job that selects a pool is charged to that
    pool's quota here as on the workers; no node exists here, and MultiKueue never starts the
    dispatcher's own copy of a job, so the label only chooses the flavor."""
    pools = sorted({p.name for capacity in workers.values() for p in capacity})
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
    manifests.append(Manifest("MultiKueueConfig", MULTIKUEUE_CONFIG, {"clusters": list(workers)}))
    for worker in workers:
        manifests.append(
            Manifest(
                "MultiKueueCluster",
                worker,
                {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": kubeconfig_secret(worker)}}},
            )
        )
    for team in sorted({t for capacity in workers.values() for p in capacity for t in p.gpu_pool.quotas}):
        manifests.append(
            Manifest(
                "ClusterQueue",
                f"team-{team}",
                {
                    "cohortName": COHORT,
                    "namespaceSelector": {"matchLabels": {TEAM_LABEL: team}},
                    "queueingStrategy": "BestEffortFIFO",
                    "resourceGroups": [
                        {"coveredResources": list(COVERED_RESOURCES), "flavors": team_quotas(workers, team)}
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


def worker_pools(config: PlatformConfig) -> dict[str, list[PoolCapacity]]:
    """Each worker's GPU pools, with their capacity and quotas."""
    return {worker: plan_cluster(config, worker).gpu_pools for worker in config.dispatch_workers()}


def worker_api_server_ranges(config: PlatformConfig) -> tuple[str, ...]:
    """Where a dispatcher's Kueue reaches the workers' API servers: their VNet-integrated
    subnets, across the regions' peering (validation requires the integration)."""
    return tuple(
        str(subnet) for w in config.dispatch_workers() if (subnet := config.clusters[w].subnets.api_server) is not None
    )
