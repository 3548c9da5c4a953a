"""The golden PyFlink job (examples/streaming/): the pods the operator and Flink create from its
FlinkDeployment, and each layer's verdict on them.

Flink's native Kubernetes integration builds the JobManager's Deployment and the TaskManagers'
pods from the deployment's pod template: it keeps the template's metadata, volumes, security
context, selectors and tolerations, fills the main container (`flink-main-container`) with the
image, the resources (CPU and memory as requests and limits) and its own ports, names the
service account, and labels the pods `app: <name>`, `component: jobmanager | taskmanager`,
`type: flink-native-kubernetes` (apache/flink release-2.2, flink-kubernetes
`KubernetesJobManagerFactory`, `KubernetesTaskManagerFactory`, `InitJobManagerDecorator`,
`InitTaskManagerDecorator`, `Constants`). `flink_pods` does the same, so that admission,
scheduling, the quota, reach and identity judge the pods the cluster would actually see.
"""

from __future__ import annotations

import copy
from typing import Any

from contracts import admission, identity, reach, scheduling
from contracts.cluster import CILIUM_POLICY, ClusterView, selector_matches
from contracts.golden import config_map_value, endpoint_subnet, kafka_listener_refusals
from contracts.reach import Destination
from contracts.scheduling import quantity
from planning import kafka as kafka_plan
from planning import streaming as streaming_plan
from planning.network_policy import CILIUM_NAMESPACE_LABEL, CILIUM_SERVICE_ACCOUNT_LABEL, ENTRA_ID_FQDN, HTTPS

FLINK_DEPLOYMENT = "kubernetes:flink.apache.org/v1beta1:FlinkDeployment"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
LAYERS = ("admission", "scheduling", "queueing", "reach", "identity")
# Flink's own container ports: the JobManager's REST, RPC and blob server, the TaskManager's RPC.
JOB_MANAGER_PORTS = (8081, 6123, 6124)


def deployment(view: ClusterView, job: str) -> dict[str, Any] | None:
    found = [d for d in view.objects(FLINK_DEPLOYMENT) if d["metadata"]["name"] == job]
    return found[0] if found else None


def flink_pods(flink_deployment: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """component -> the pod Flink creates for it (JobManager, TaskManager)."""
    spec = flink_deployment["spec"]
    name = flink_deployment["metadata"]["name"]
    pods = {}
    for component, key in (("jobmanager", "jobManager"), ("taskmanager", "taskManager")):
        template = copy.deepcopy(spec.get(key, {}).get("podTemplate") or spec["podTemplate"])
        resource = spec[key]["resource"]
        amount = {"cpu": str(resource["cpu"]), "memory": resource["memory"].replace("m", "Mi")}
        # The operator puts ephemeralStorage on the main container (FlinkConfigBuilder,
        # applyResourceToPodTemplate, release-1.15.0).
        if "ephemeralStorage" in resource:
            amount["ephemeral-storage"] = resource["ephemeralStorage"]
        pod_spec = template["spec"]
        pod_spec["serviceAccountName"] = spec["serviceAccount"]
        (main,) = [c for c in pod_spec["containers"] if c["name"] == "flink-main-container"]
        main.update(image=spec["image"], resources={"requests": dict(amount), "limits": dict(amount)})
        labels = {
            **(template.get("metadata", {}).get("labels") or {}),
            "app": name,
            "component": component,
            "type": "flink-native-kubernetes",
        }
        pods[component] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": f"{name}-{component}",
                "namespace": flink_deployment["metadata"]["namespace"],
                "labels": labels,
            },
            "spec": pod_spec,
        }
    return pods


def _api_server_refusals(view: ClusterView, namespace: str, pod: dict[str, Any]) -> list[str]:
    """The JobManager (TaskManagers, for HA) calls the API server: a Cilium policy of the
    namespace must allow the pod's service account to the kube-apiserver entity."""
    labels = {
        **pod["metadata"]["labels"],
        CILIUM_SERVICE_ACCOUNT_LABEL: pod["spec"]["serviceAccountName"],
        CILIUM_NAMESPACE_LABEL: namespace,
    }
    for policy in view.objects(CILIUM_POLICY, namespace):
        if not selector_matches(policy["spec"].get("endpointSelector"), labels):
            continue
        if any("kube-apiserver" in (rule.get("toEntities") or []) for rule in policy["spec"].get("egress") or []):
            return []
    return [f"{pod['metadata']['name']} may not reach the Kubernetes API server"]


def _operator_reaches_rest(view: ClusterView, namespace: str, job: str) -> list[str]:
    """The operator observes and upgrades the job through the JobManager's REST API."""
    rest = Destination(
        streaming_plan.JOB_MANAGER_REST_PORT,
        namespace=namespace,
        pod_labels=(("app", job), ("component", "jobmanager")),
    )
    refused = reach.refusals(
        view, streaming_plan.OPERATOR_NAMESPACE, {"app.kubernetes.io/name": "flink-kubernetes-operator"}, [rest]
    )
    refused = [r for r in refused if "kube-system" not in r]  # DNS is judged for the job's own pods
    ingress = any(
        "Ingress" in p["spec"].get("policyTypes", [])
        and any(
            selector_matches(
                peer.get("namespaceSelector"), {"kubernetes.io/metadata.name": streaming_plan.OPERATOR_NAMESPACE}
            )
            and any(
                int(port.get("port", 0)) == streaming_plan.JOB_MANAGER_REST_PORT for port in rule.get("ports") or []
            )
            for rule in p["spec"].get("ingress") or []
            for peer in rule.get("from") or []
        )
        for p in view.objects("kubernetes:networking.k8s.io/v1:NetworkPolicy", namespace)
    )
    return refused + ([] if ingress else [f"no policy of {namespace!r} lets the operator in on the REST port"])


def needs(view: ClusterView, job: str, account: str) -> list[Destination]:
    spec = view.config["platform:streaming"]["jobs"][job]
    found = [
        Destination(HTTPS, host=ENTRA_ID_FQDN),
        Destination(HTTPS, cidr=endpoint_subnet(view, f"/storageAccounts/{account}")),
        # TaskManagers and the JobManager talk within the namespace (RPC, blobs).
        *(
            Destination(port, namespace=spec["namespace"], pod_labels=(("app", job), ("component", "jobmanager")))
            for port in JOB_MANAGER_PORTS
        ),
    ]
    if spec.get("topics"):
        if view.config["platform:kafka"]["engine"] == "eventhubs":
            found.append(
                Destination(kafka_plan.EVENT_HUBS_KAFKA_PORT, cidr=endpoint_subnet(view, "/Microsoft.EventHub/"))
            )
        else:
            found.append(
                Destination(
                    kafka_plan.OAUTH_PORT,
                    namespace=kafka_plan.KAFKA_NAMESPACE,
                    pod_labels=(("strimzi.io/kind", "Kafka"),),
                )
            )
    return found


def _quota_refusals(view: ClusterView, namespace: str, pods: list[dict[str, Any]]) -> list[str]:
    """Streaming namespaces are outside Kueue; their ResourceQuota must admit the job's pods."""
    found = []
    labels = view.namespace_labels(namespace)
    if view.kueue_config and selector_matches(view.kueue_config.get("managedJobsNamespaceSelector"), labels):
        found.append(f"Kueue manages {namespace!r}, and has no FlinkDeployment integration")
    quotas = view.objects(RESOURCE_QUOTA, namespace)
    if not quotas:
        return found + [f"no ResourceQuota bounds {namespace!r}"]
    hard = quotas[0]["spec"]["hard"]
    total: dict[str, float] = {"pods": len(pods)}
    for pod in pods:
        for container in pod["spec"]["containers"]:
            for kind in ("requests", "limits"):
                for resource, value in (container.get("resources", {}).get(kind) or {}).items():
                    total[f"{kind}.{resource}"] = total.get(f"{kind}.{resource}", 0) + quantity(value)
    for resource, used in total.items():
        if resource in hard and used > quantity(hard[resource]):
            found.append(f"the job's {resource} {used:g} exceeds {namespace}'s quota {hard[resource]}")
    return found


def evaluate(view: ClusterView, job: str) -> dict[str, list[str]]:
    """Layer -> refusals for the job's pods on one cluster (every JobManager and TaskManager)."""
    flink_deployment = deployment(view, job)
    if flink_deployment is None:
        return {layer: [f"no FlinkDeployment {job} in cluster {view.key}"] for layer in LAYERS}
    spec = view.config["platform:streaming"]["jobs"][job]
    namespace = spec["namespace"]
    account = view.plan.outputs["workloadContext"]["storageAccounts"][streaming_plan.CHECKPOINT_ACCOUNT]["name"]
    pods = flink_pods(flink_deployment)
    replicas = int(flink_deployment["spec"]["jobManager"].get("replicas", 1))
    parallelism = int(flink_deployment["spec"]["job"]["parallelism"])
    slots = int(flink_deployment["spec"]["flinkConfiguration"]["taskmanager.numberOfTaskSlots"])
    all_pods = [pods["jobmanager"]] * replicas + [pods["taskmanager"]] * -(-parallelism // slots)
    result: dict[str, list[str]] = {layer: [] for layer in LAYERS}
    topics = list((spec.get("topics") or {}).items())
    for pod in pods.values():
        result["admission"] += admission.refusals(view, namespace, pod)
        result["scheduling"] += scheduling.refusals(view, pod["spec"], streaming_plan.STREAMING_POOL)
        result["reach"] += reach.refusals(view, namespace, pod["metadata"]["labels"], needs(view, job, account))
        result["reach"] += _api_server_refusals(view, namespace, pod)
        result["identity"] += identity.refusals(
            view, namespace, pod, job, (account, job, "write"), topics[0] if topics else None
        )
        for topic in topics[1:]:
            result["identity"] += identity.refusals(view, namespace, pod, job, None, topic)
    if topics and view.config["platform:kafka"]["engine"] == "strimzi":
        # Where the job's Kafka client connects: its properties file's bootstrap on this cluster.
        properties = config_map_value(
            view, namespace, streaming_plan.kafka_properties_config_map(job), streaming_plan.KAFKA_PROPERTIES_FILE
        )
        bootstrap = dict(line.split("=", 1) for line in properties.splitlines() if "=" in line)["bootstrap.servers"]
        result["reach"] += kafka_listener_refusals(view, namespace, bootstrap)
    result["queueing"] += _quota_refusals(view, namespace, all_pods)
    result["reach"] += _operator_reaches_rest(view, namespace, job)
    return {layer: sorted(set(reasons)) for layer, reasons in result.items()}
