"""The golden workloads (examples/), what each needs, and all five layers run on one of them."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv4Network, ip_address, ip_network
from pathlib import Path
from typing import Any

from contracts import admission, identity, queueing, reach, scheduling
from contracts.cluster import CONFIG_MAP, KAFKA, PRIVATE_ENDPOINT, SUBNET, ClusterView
from contracts.reach import Destination
from facts import lustre
from facts.aks_load_balancer import INTERNAL_LB, INTERNAL_LB_SUBNET, LB_IPV4
from planning import kafka as kafka_plan
from planning.admission import KUEUE_ADMISSION_GATE, KUEUE_PODSET_LABEL
from planning.network_policy import ENTRA_ID_FQDN, HTTPS
from planning.postgresql import PORT as POSTGRES_PORT
from planning.workloads import STORAGE_CONFIG_MAP, NotApplicable, render, template_variables

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
LAYERS = ("admission", "scheduling", "queueing", "reach", "identity")
# The training example's rendezvous (torchrun's c10d store), between the pods of one job.
RENDEZVOUS_PORT = 29500
# Where the Kafka examples take their bootstrap address.
KAFKA_BOOTSTRAP_VARIABLE = "KAFKA_BOOTSTRAP_SERVERS"
# Hugging Face's download hosts at every depth below hf.co that it uses today (hub-docs
# "Downloading behind a proxy or firewall", huggingface.co/.well-known/meta.json).
HUGGING_FACE_HOSTS = (
    "huggingface.co",
    "cdn-lfs-us-1.hf.co",
    "cas-server.xethub.hf.co",
    "transfer.xethub-eu.hf.co",
    "us.aws.cdn.hf.co",
    "us-east1.us.gcp.cdn.hf.co",
)


@dataclass(frozen=True)
class Golden:
    name: str
    # The pool it must land on: a placeholder naming a GPU pool, or a pool name.
    pool: str
    # The platform:workloads entry whose identity it uses, and the blob container it touches.
    workload: str | None = None
    storage: tuple[str, str, str] | None = None  # (account key, container, read|write)
    # Blob containers it also reads, from its region's copy: (account key, container).
    reads: tuple[tuple[str, str], ...] = ()
    kafka: bool = False
    topic: tuple[str, str] | None = None  # (topic, read|write|readWrite) it uses
    cosmos: tuple[str, str] | None = None  # (<database>[/<container>], read|write) of Cosmos DB
    postgres: tuple[str, str] | None = None  # (<database>[/<schema>], read|write) of PostgreSQL
    hosts: tuple[str, ...] = ()
    # Pods of its own namespace it talks to (the workers of one job).
    peers: tuple[tuple[str, str], ...] = ()

    @property
    def file(self) -> Path:
        return EXAMPLES / f"{self.name}.yaml"


GOLDEN = (
    Golden(
        "training-infiniband",
        "${TRAINING_POOL}",
        "trainer",
        ("weights", "checkpoints", "write"),
        # Its dataset, staged into the region's Lustre file system by its first pod.
        reads=(("datasets", "curated"),),
        kafka=True,
        topic=("training-metrics", "write"),
        peers=(("job-name", "train-llm"),),
    ),
    Golden("inference", "${INFERENCE_POOL}", "inference", ("weights", "models", "read")),
    Golden("batch-spot", "${BATCH_POOL}", "trainer", ("weights", "checkpoints", "write")),
    Golden("kafka-producer", "cpu", "trainer", kafka=True, topic=("training-metrics", "write")),
    Golden("kafka-consumer", "cpu", "inference", kafka=True, topic=("checkpoint-events", "read")),
    Golden("weights-loader", "cpu", "inference", ("weights", "models", "read")),
    Golden("cosmos-client", "cpu", "trainer", cosmos=("lab/runs", "write")),
    Golden("postgresql-client", "cpu", "trainer", postgres=("experiments", "write")),
    Golden("sandboxed-eval", "sandbox"),
    Golden("model-download", "cpu", hosts=HUGGING_FACE_HOSTS),
)
BY_NAME = {g.name: g for g in GOLDEN}


@dataclass
class Rendered:
    golden: Golden
    manifests: list[dict[str, Any]]
    variables: dict[str, str]
    # The kind that carries the pods (Job, Deployment), the rest (Services) rides along.
    workload: dict[str, Any] = field(init=False)

    def __post_init__(self):
        (self.workload,) = [m for m in self.manifests if m["kind"] in ("Job", "Deployment", "Pod")]

    @property
    def namespace(self) -> str:
        return self.workload["metadata"]["namespace"]

    @property
    def pod(self) -> dict[str, Any]:
        """The pod the controller creates, as admission sees it."""
        if self.workload["kind"] == "Pod":
            return self.workload
        template = copy.deepcopy(self.workload["spec"]["template"])
        metadata = {**template.get("metadata", {}), "namespace": self.namespace}
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]}
        # What Kueue adds before admission policies see the pod (planning/admission.py, gpu-queued).
        if self.workload["kind"] == "Job" and queueing.queue_name(self.workload):
            metadata.setdefault("labels", {})[KUEUE_PODSET_LABEL] = "main"
        elif queueing.queue_name(self.workload):
            pod["spec"].setdefault("schedulingGates", []).append({"name": KUEUE_ADMISSION_GATE})
        return pod

    def changed(self, change: Callable[[dict[str, Any]], None]) -> Rendered:
        """A twin: the same workload with `change` applied to its manifests (a deep copy)."""
        twin = copy.deepcopy(self)
        change(twin.workload)
        twin.__post_init__()
        return twin


def rendered(golden: Golden, outputs: dict[str, Any], cluster: str, **overrides: str) -> Rendered | None:
    """The golden workload for one cluster of a stack, or None where it does not apply (a
    dispatcher runs no workloads: the workload context lists none)."""
    context = outputs["workloadContext"]
    if cluster not in context["clusters"] and cluster not in context.get("sites", {}):
        return None
    topic = golden.topic[0] if golden.topic else None
    variables = {**template_variables(outputs, cluster, golden.workload, topic), **overrides}
    try:
        return Rendered(golden, render(golden.file.read_text(), variables), variables)
    except NotApplicable:
        return None


def needs(view: ClusterView, item: Rendered) -> list[Destination]:
    golden, config = item.golden, view.config
    found = [Destination(RENDEZVOUS_PORT, namespace=item.namespace, pod_labels=(label,)) for label in golden.peers]
    if golden.workload:
        found.append(Destination(HTTPS, host=ENTRA_ID_FQDN))
    target = storage_target(view, item)
    if target:
        found.append(Destination(HTTPS, cidr=endpoint_subnet(view, f"/storageAccounts/{target[0]}")))
    for account in read_accounts(view, item):
        found.append(Destination(HTTPS, cidr=endpoint_subnet(view, f"/storageAccounts/{account}")))
    if golden.kafka and config["platform:kafka"]["engine"] == "eventhubs":
        found.append(Destination(kafka_plan.EVENT_HUBS_KAFKA_PORT, cidr=endpoint_subnet(view, "/Microsoft.EventHub/")))
    elif golden.kafka:
        bootstrap = kafka_bootstrap(view, item)
        with contextlib.suppress(LookupError):  # evaluate refuses an address that is no Kafka
            if bootstrap is not None:
                found.append(kafka_destination(view, bootstrap))
    if golden.cosmos:
        # The SDKs' gateway mode, HTTPS to the account's endpoint in the cluster's region.
        found.append(Destination(HTTPS, cidr=endpoint_subnet(view, "/Microsoft.DocumentDB/")))
    if golden.postgres:
        found.append(Destination(POSTGRES_PORT, cidr=endpoint_subnet(view, "/Microsoft.DBforPostgreSQL/")))
    found += [Destination(HTTPS, host=host) for host in golden.hosts]
    return found


def config_map_value(view: ClusterView, namespace: str, name: str, key: str) -> str:
    """A ConfigMap's value on this cluster, as the kubelet resolves a `configMapKeyRef`."""
    found = [m for m in view.objects(CONFIG_MAP, namespace) if m["metadata"]["name"] == name]
    if not found or key not in found[0].get("data", {}):
        raise LookupError(f"no ConfigMap {name} with {key} in {namespace} on {view.key}")
    return str(found[0]["data"][key])


def configured_location(view: ClusterView, item: Rendered) -> tuple[str, str] | None:
    """(account, container) of a blob URL the workload takes from its namespace's
    `platform-storage` ConfigMap on this cluster (planning/workloads.py, storage_locations), as
    the kubelet resolves it; None if it takes none."""
    for container in item.pod["spec"]["containers"]:
        for variable in container.get("env") or []:
            reference = (variable.get("valueFrom") or {}).get("configMapKeyRef")
            if not reference or reference["name"] != STORAGE_CONFIG_MAP:
                continue
            url = config_map_value(view, item.namespace, STORAGE_CONFIG_MAP, reference["key"])
            host, _, path = url.removeprefix("https://").partition("/")
            return host.split(".", 1)[0], path.split("/", 1)[0]
    return None


def config_map_refusals(view: ClusterView, item: Rendered) -> list[str]:
    """Every `configMapKeyRef` of the pod's containers resolves here: the kubelet does not start a
    container whose variable names a missing ConfigMap or key (CreateContainerConfigError)."""
    found = []
    for container in [*item.pod["spec"].get("initContainers", []), *item.pod["spec"]["containers"]]:
        for variable in container.get("env") or []:
            reference = (variable.get("valueFrom") or {}).get("configMapKeyRef")
            if reference and not reference.get("optional"):
                try:
                    config_map_value(view, item.namespace, reference["name"], reference["key"])
                except LookupError as missing:
                    found.append(f"{container['name']}'s {variable['name']}: {missing}")
    return found


def kafka_bootstrap(view: ClusterView, item: Rendered) -> str | None:
    """The bootstrap address the workload's pods connect to on this cluster: the value it carries,
    or its namespace's `platform-kafka` ConfigMap's here (planning/kafka.py, BOOTSTRAP_CONFIG_MAP);
    None where that does not resolve (config_map_refusals says why)."""
    for container in item.pod["spec"]["containers"]:
        for variable in container.get("env") or []:
            if variable["name"] != KAFKA_BOOTSTRAP_VARIABLE:
                continue
            if "value" in variable:
                return str(variable["value"])
            reference = variable["valueFrom"]["configMapKeyRef"]
            try:
                return config_map_value(view, item.namespace, reference["name"], reference["key"])
            except LookupError:
                return None
    raise LookupError(f"{item.golden.name} sets no {KAFKA_BOOTSTRAP_VARIABLE}")


def kafka_host(view: ClusterView, bootstrap: str) -> str:
    """The cluster whose Kafka a bootstrap address names: `<cluster>-kafka-bootstrap.kafka.svc`
    in a cluster, or an address of a cluster's node subnet (its listener for other networks)."""
    host = bootstrap.rsplit(":", 1)[0]
    suffix = f"-kafka-bootstrap.{kafka_plan.KAFKA_NAMESPACE}.svc"
    if host.endswith(suffix):
        return host.removesuffix(suffix)
    try:
        address = ip_address(host)
    except ValueError:
        raise LookupError(f"{bootstrap} is no cluster's Kafka") from None
    for key, cluster in view.config["platform:clusters"].items():
        if address in ip_network(cluster["subnets"]["nodes"]):
            return str(key)
    raise LookupError(f"{bootstrap} is no cluster's Kafka")


def kafka_destination(view: ClusterView, bootstrap: str) -> Destination:
    """Where the pods' connections go: in the cluster, the brokers' pods; across a network, the
    host's node subnet, where the listener's bootstrap and brokers' load balancers take addresses."""
    host, port = kafka_host(view, bootstrap), int(bootstrap.rsplit(":", 1)[1])
    if bootstrap.rsplit(":", 1)[0].endswith(".svc"):
        return Destination(port, namespace=kafka_plan.KAFKA_NAMESPACE, pod_labels=(("strimzi.io/kind", "Kafka"),))
    return Destination(port, cidr=str(view.config["platform:clusters"][host]["subnets"]["nodes"]))


def read_accounts(view: ClusterView, item: Rendered) -> list[str]:
    """The accounts of the workload's `reads`, as its cluster reaches them (its region's copy)."""
    nearest = view.nearest_accounts
    return [nearest[account]["name"] for account, _ in item.golden.reads]


def storage_target(view: ClusterView, item: Rendered) -> tuple[str, str, str] | None:
    """(account, container, access) the workload touches on this cluster."""
    golden = item.golden
    if golden.storage is None:
        return None
    configured = configured_location(view, item)
    if configured is not None:
        return (*configured, golden.storage[2])
    return (account_name(view, golden), *golden.storage[1:])


def account_name(view: ClusterView, golden: Golden) -> str:
    """The storage account's name, as the stack's outputs give it to teams: a reader uses the
    copy in its cluster's region, a writer the account itself (a replica is read-only)."""
    if golden.storage is None:
        raise ValueError(f"{golden.name} uses no storage")
    account, _, access = golden.storage
    context = view.plan.outputs["workloadContext"]
    if access == "read":
        return str(view.nearest_accounts[account]["name"])
    return context["storageAccounts"][account]["name"]


def endpoint_subnet(view: ClusterView, target: str) -> str:
    """The address range of the subnet holding the private endpoint of `target` (part of its ID)
    in the view's cluster's region, which its pods reach the data plane through."""
    region = view.region
    for endpoint in view.plan.of_type(PRIVATE_ENDPOINT):
        connection = endpoint.inputs["privateLinkServiceConnections"][0]["privateLinkServiceId"]
        if target.lower() in connection.lower() and endpoint.inputs["location"] == region:
            name = endpoint.inputs["subnet"]["id"].rsplit("/", 1)[-1]
            (subnet,) = [s.inputs["addressPrefix"] for s in view.plan.of_type(SUBNET) if s.inputs["subnetName"] == name]
            return subnet
    raise LookupError(f"no private endpoint for {target}")


def kafka_listener_refusals(view: ClusterView, namespace: str, bootstrap: str) -> list[str]:
    """The Kafka the bootstrap names must be this cluster's (another cluster's Service name does
    not resolve here) or, from a site, reachable across the networks; and Strimzi's own policy for
    the listener on that port must let the client in: its namespace, or the site's servers."""
    host, port = kafka_host(view, bootstrap), int(bootstrap.rsplit(":", 1)[1])
    across = not bootstrap.rsplit(":", 1)[0].endswith(".svc")
    if not across and host != view.key:
        return [f"{bootstrap} is cluster {host}'s Kafka, whose Service name does not resolve in {view.key}"]
    servers = [IPv4Network(r) for r in view.node_ranges] if across else []
    listeners = [
        listener
        for kafka in kafka_view(view, bootstrap).objects(KAFKA)
        for listener in kafka["spec"]["kafka"]["listeners"]
        if listener["port"] == port
    ]
    if not listeners:
        return [f"cluster {host}'s Kafka has no listener on {port}"]
    for listener in listeners:
        peers = listener.get("networkPolicyPeers") or []
        if across:
            found = across_networks_refusals(kafka_view(view, bootstrap), listener, bootstrap)
            if found:
                return found
            blocks = [IPv4Network(p["ipBlock"]["cidr"]) for p in peers if "ipBlock" in p]
            if not servers or not all(any(r.subnet_of(b) for b in blocks) for r in servers):
                return [f"Kafka's {listener['name']} listener does not let {view.key}'s servers in"]
        elif not any(
            (p.get("namespaceSelector") or {}).get("matchLabels", {}).get("kubernetes.io/metadata.name") == namespace
            for p in peers
        ):
            return [f"Kafka's {listener['name']} listener does not let namespace {namespace!r} in"]
    return []


def across_networks_refusals(host: ClusterView, listener: dict[str, Any], bootstrap: str) -> list[str]:
    """What a listener reached from another network needs, as Azure and Strimzi behave: internal
    load balancers in the host's node subnet (where the firewall rule and the NSG allow point), the
    bootstrap at the pinned address the clients are given, and the clients' own addresses kept
    (`externalTrafficPolicy: Local`), without which its policy sees a node's address instead."""
    name, configuration = listener["name"], listener.get("configuration") or {}
    found = []
    if listener.get("type") != "loadbalancer":
        found.append(f"Kafka's {name} listener is no load balancer listener")
    if configuration.get("externalTrafficPolicy") != "Local":
        found.append(f"Kafka's {name} listener does not keep its clients' addresses (externalTrafficPolicy)")
    address = bootstrap.rsplit(":", 1)[0]
    if (configuration.get("bootstrap") or {}).get("annotations", {}).get(LB_IPV4) != address:
        found.append(f"Kafka's {name} listener's bootstrap is not pinned at {address}")
    for kafka in host.objects(KAFKA):
        template = kafka["spec"]["kafka"].get("template") or {}
        for service in ("externalBootstrapService", "perPodService"):
            annotations = (template.get(service) or {}).get("metadata", {}).get("annotations", {})
            if annotations.get(INTERNAL_LB) != "true" or not str(annotations.get(INTERNAL_LB_SUBNET, "")).endswith(
                f"-{host.key}-nodes"
            ):
                found.append(f"Kafka's {service} is not an internal load balancer in {host.key}'s node subnet")
    return found


def kafka_view(view: ClusterView, bootstrap: str) -> ClusterView:
    """The cluster whose Kafka objects (listeners, users) the workload meets."""
    host = kafka_host(view, bootstrap)
    return view if host == view.key else ClusterView(view.plan, host, view.config)


def mounts_lustre(view: ClusterView, item: Rendered) -> bool:
    """Whether a claim the workload mounts is bound to a Managed Lustre volume on this cluster."""
    for volume in item.pod["spec"].get("volumes") or []:
        reference = volume.get("persistentVolumeClaim")
        if reference:
            _, persistent = view.claimed_volume(item.namespace, reference["claimName"])
            if persistent is not None and (persistent["spec"].get("csi") or {}).get("driver") == lustre.CSI_DRIVER:
                return True
    return False


def evaluate(view: ClusterView, item: Rendered) -> dict[str, list[str]]:
    """Layer -> refusals, for one rendered workload on one cluster."""
    golden, pod = item.golden, item.pod
    target = golden.pool if not golden.pool.startswith("${") else item.variables[golden.pool[2:-1]]
    reach_refusals = reach.refusals(view, item.namespace, pod["metadata"].get("labels") or {}, needs(view, item))
    brokers = view
    if golden.kafka and view.config["platform:kafka"]["engine"] == "strimzi":
        bootstrap = kafka_bootstrap(view, item)
        try:
            if bootstrap is not None:
                reach_refusals += kafka_listener_refusals(view, item.namespace, bootstrap)
                brokers = kafka_view(view, bootstrap)
        except LookupError as unknown:
            reach_refusals.append(str(unknown))
    if mounts_lustre(view, item):
        reach_refusals += reach.lustre_refusals(view)
    storage = storage_target(view, item)
    return {
        "admission": admission.refusals(view, item.namespace, pod, item.workload),
        "scheduling": scheduling.refusals(view, queueing.admitted_pod_spec(view, item.workload, pod["spec"]), target)
        + scheduling.volume_refusals(view, item.namespace, pod["spec"], target)
        + config_map_refusals(view, item),
        "queueing": queueing.refusals(view, item.workload, pod["spec"], target),
        "reach": reach_refusals,
        "identity": identity.refusals(
            view,
            item.namespace,
            pod,
            golden.workload,
            storage,
            golden.topic,
            golden.cosmos,
            golden.postgres,
            reads=tuple(zip(read_accounts(view, item), (c for _, c in golden.reads), strict=True)),
            kafka=brokers,
        )
        if golden.workload
        else [],
    }
