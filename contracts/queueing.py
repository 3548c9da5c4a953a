"""Queueing: would Kueue take this job, and could its ClusterQueue ever admit it?

What is queued: GPU work. A batch/v1 Job labelled `kueue.x-k8s.io/queue-name` is one Kueue
Workload of `min(parallelism, completions)` pods, admitted whole or not at all
(kubernetes-sigs/kueue v0.19.2 pkg/controller/jobs/job/job_controller.go, podsCount); a pod
of a Deployment with the label on its template is a Workload of its own (the `pod`
integration). CPU-only pods (Kafka clients, loaders, downloads) carry no queue label and Kueue
leaves them alone (manageJobsWithoutQueueName is off).

RDMA devices are outside quota (the configuration's excludeResourcePrefixes drops `rdma/`):
they are bounded per node by the device plugin (rdmaHcaMax) and per job by its GPU quota,
since every InfiniBand pod also takes whole nodes' GPUs.
"""

from __future__ import annotations

from typing import Any

from contracts.cluster import ClusterView, kueue, selector_matches
from contracts.scheduling import pod_requests, quantity
from facts.gpu import GPU_RESOURCE, POOL_LABEL

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
FRAMEWORKS = {"Job": "batch/job", "Deployment": "pod", "Pod": "pod"}


def queue_name(manifest: dict[str, Any]) -> str | None:
    if manifest["kind"] == "Job":
        return (manifest["metadata"].get("labels") or {}).get(QUEUE_LABEL)
    template = manifest["spec"].get("template", {}) if manifest["kind"] != "Pod" else manifest
    return (template.get("metadata", {}).get("labels") or {}).get(QUEUE_LABEL)


def pods_admitted_together(manifest: dict[str, Any]) -> int:
    if manifest["kind"] == "Job":
        spec = manifest["spec"]
        return min(int(spec.get("parallelism", 1)), int(spec.get("completions", spec.get("parallelism", 1))))
    return 1  # each pod of a Deployment is a Workload of its own


def refusals(
    view: ClusterView,
    manifest: dict[str, Any],
    pod_spec: dict[str, Any],
    target_pool: str,
    *,
    idle_cohort: bool = False,
) -> list[str]:
    """Why Kueue could never admit the workload on `target_pool`. On its nominal quota alone by
    default (what the team is promised); with `idle_cohort`, also on what the other ClusterQueues of
    its cohort leave idle, which Kueue lends when no borrowingLimit or lendingLimit says otherwise
    (kueue.sigs.k8s.io/docs/concepts/cluster_queue, "Cohort": borrowing stays within a flavor the
    borrower lists), and reclaims for their owners (reclaimWithinCohort)."""
    namespace = manifest["metadata"]["namespace"]
    requests = pod_requests(pod_spec)
    name = queue_name(manifest)
    if name is None:
        if requests.get(GPU_RESOURCE):
            return [f"requests {GPU_RESOURCE} without a queue ({QUEUE_LABEL}): it would bypass the team's quota"]
        return []
    found = []
    config = view.kueue_config
    labels = view.namespace_labels(namespace)
    if not selector_matches(config.get("managedJobsNamespaceSelector"), labels):
        found.append(f"Kueue's webhooks do not cover namespace {namespace!r} (managedJobsNamespaceSelector)")
    framework = FRAMEWORKS[manifest["kind"]]
    if framework not in (config.get("integrations") or {}).get("frameworks", []):
        found.append(f"Kueue's {framework} integration is off")
    local = [q for q in view.objects(kueue("LocalQueue"), namespace) if q["metadata"]["name"] == name]
    if not local:
        return found + [f"no LocalQueue {name!r} in namespace {namespace!r}: Kueue holds the job forever"]
    cluster_queue_name = local[0]["spec"]["clusterQueue"]
    cluster_queues = {q["metadata"]["name"]: q for q in view.objects(kueue("ClusterQueue"))}
    cluster_queue = cluster_queues.get(cluster_queue_name)
    if cluster_queue is None:
        return found + [f"LocalQueue {name!r} points at ClusterQueue {cluster_queue_name!r}, which does not exist"]
    if not selector_matches(cluster_queue["spec"].get("namespaceSelector"), labels):
        found.append(f"ClusterQueue {cluster_queue_name!r} does not select namespace {namespace!r}")
    flavors = {f["metadata"]["name"]: f for f in view.objects(kueue("ResourceFlavor"))}
    count = pods_admitted_together(manifest)
    total = {resource: value * count for resource, value in requests.items()}
    for group in cluster_queue["spec"]["resourceGroups"]:
        for flavor in group["flavors"]:
            node_labels = flavors[flavor["name"]]["spec"].get("nodeLabels", {})
            if node_labels.get(POOL_LABEL) != target_pool:
                continue
            quota = {r["name"]: quantity(r["nominalQuota"]) for r in flavor["resources"]}
            if idle_cohort:
                for resource, lent in _cohort_nominal(cluster_queues, cluster_queue, flavor["name"]).items():
                    quota[resource] = quota.get(resource, 0) + lent
            short = [
                f"{r} {total.get(r, 0):g} > {quota[r]:g}"
                for r in group["coveredResources"]
                if total.get(r, 0) > quota.get(r, 0)
            ]
            if short:
                found.append(
                    f"ClusterQueue {cluster_queue_name!r} flavor {flavor['name']!r} cannot admit the "
                    f"{count}-pod workload: {', '.join(short)}"
                )
            return found
    return found + [f"ClusterQueue {cluster_queue_name!r} has no flavor for pool {target_pool!r}"]


def _cohort_nominal(
    cluster_queues: dict[str, dict[str, Any]], borrower: dict[str, Any], flavor: str
) -> dict[str, float]:
    """The other cohort members' nominal quota on `flavor`: what they lend while idle."""
    cohort = borrower["spec"].get("cohortName")
    lent: dict[str, float] = {}
    for queue in cluster_queues.values():
        if queue is borrower or not cohort or queue["spec"].get("cohortName") != cohort:
            continue
        for group in queue["spec"]["resourceGroups"]:
            for entry in group["flavors"]:
                if entry["name"] == flavor:
                    for r in entry["resources"]:
                        lent[r["name"]] = lent.get(r["name"], 0) + quantity(r["nominalQuota"])
    return lent


def admitted_pod_spec(view: ClusterView, manifest: dict[str, Any], pod_spec: dict[str, Any]) -> dict[str, Any]:
    """The pod spec as Kueue starts it: the first flavor of its ClusterQueue that its nodeSelector
    allows, merged in (the flavor's node labels into nodeSelector, its tolerations appended:
    kubernetes-sigs/kueue v0.19.2 pkg/podset/podset.go, FromAssignment and Merge). Unqueued pods,
    and queues that do not resolve, are returned as written."""
    name = queue_name(manifest)
    namespace = manifest["metadata"]["namespace"]
    local = [q for q in view.objects(kueue("LocalQueue"), namespace) if q["metadata"]["name"] == name]
    if name is None or not local:
        return pod_spec
    cluster_queues = {q["metadata"]["name"]: q for q in view.objects(kueue("ClusterQueue"))}
    cluster_queue = cluster_queues.get(local[0]["spec"]["clusterQueue"])
    flavors = {f["metadata"]["name"]: f["spec"] for f in view.objects(kueue("ResourceFlavor"))}
    selector = pod_spec.get("nodeSelector") or {}
    for group in (cluster_queue or {"spec": {"resourceGroups": []}})["spec"]["resourceGroups"]:
        for flavor in group["flavors"]:
            spec = flavors[flavor["name"]]
            labels = spec.get("nodeLabels") or {}
            if all(selector.get(k, v) == v for k, v in labels.items()):
                return {
                    **pod_spec,
                    "nodeSelector": {**selector, **labels},
                    "tolerations": [*(pod_spec.get("tolerations") or []), *(spec.get("tolerations") or [])],
                }
    return pod_spec
