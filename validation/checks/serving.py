"""Serving (platform:serving): gateways on workload clusters, APIs of declared teams and workloads
that run there, routes and callers naming declared roles, an Istio revision AKS offers, and
Private Link consumers listed once."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from facts import istio
from planning import kafka as kafka_plan
from planning import serving as serving_plan
from planning import serving_scaling as scaling_plan
from stackconfig.keys import key
from stackconfig.model import PlatformConfig
from validation.checks.common import ConfigProblem

# A DNS name's limit (RFC 1035); certificates' names must be Key Vault object names.
MAX_HOST = 253


def check_serving(config: PlatformConfig) -> Iterator[ConfigProblem]:
    serving = config.serving
    if serving is None:
        return
    where = partial(key, "serving")
    for i, cluster in enumerate(serving.clusters):
        host = config.clusters.get(cluster)
        if host is None:
            yield ConfigProblem(where("clusters", i), f"{cluster} is not a cluster of platform:clusters")
        elif host.role != "workloads":
            yield ConfigProblem(where("clusters", i), f"{cluster} is a {host.role} cluster: it runs no workloads")
    revisions = list(serving.istio_revisions)
    for i, revision in enumerate(revisions):
        if revision not in istio.SUPPORTED_REVISIONS:
            yield ConfigProblem(
                where("istioRevisions", i),
                f"{revision} is not a revision AKS offered on {istio.TAKEN_ON} "
                f"({', '.join(istio.SUPPORTED_REVISIONS)}; `az aks mesh get-revisions`)",
            )
    if len(revisions) == 2 and all(r in istio.SUPPORTED_REVISIONS for r in revisions):
        first, second = (int(r.rsplit("-", 1)[1]) for r in revisions)
        if second - first not in (1, 2):
            yield ConfigProblem(
                where("istioRevisions"),
                "a canary upgrade runs from one revision to the next or the one after it (asm-1-28 to asm-1-29 "
                "or asm-1-30), the older first",
            )
    regions: dict[str, str] = {}
    for i, cluster in enumerate(serving.clusters):
        if cluster not in config.clusters:
            continue
        region = config.clusters[cluster].region
        if region in regions:
            yield ConfigProblem(
                where("clusters", i),
                f"{regions[region]} serves {region} already: a region's callers resolve the serving names to one "
                "gateway",
            )
        regions.setdefault(region, cluster)
    seen_subscriptions: set[str] = set()
    for i, consumer in enumerate(serving.private_link):
        if str(consumer.subscription_id).lower() in seen_subscriptions:
            yield ConfigProblem(where("privateLink", i, "subscriptionId"), "is listed twice")
        seen_subscriptions.add(str(consumer.subscription_id).lower())
    serving_clusters = [c for c in serving.clusters if c in config.clusters]
    for api, spec in serving.apis.items():
        at = partial(key, "serving", "apis", api)
        if spec.team not in config.teams:
            yield ConfigProblem(at("team"), f"{spec.team} is not a team of platform:teams")
        workload = config.workloads.get(spec.workload)
        if workload is None:
            yield ConfigProblem(at("workload"), f"{spec.workload} is not a workload of platform:workloads")
        else:
            if workload.team != spec.team:
                yield ConfigProblem(
                    at("workload"),
                    f"{spec.workload} belongs to team {workload.team}, not {spec.team}: a team serves its own",
                )
            if not any(c in config.workload_clusters(spec.workload) for c in serving_clusters):
                yield ConfigProblem(
                    at("workload"),
                    f"{spec.workload} runs on {', '.join(config.workload_clusters(spec.workload))}, none of which "
                    "runs a gateway (platform:serving.clusters)",
                )
        if spec.application_client_id is None:
            yield ConfigProblem(
                at("applicationClientId"),
                f"is not set: the delivery project makes the API's application, and its output "
                f"{config.environment}StackSettings carries the client ID (docs/serving.md)",
            )
        for i, route in enumerate(spec.routes):
            if route.role not in spec.roles:
                yield ConfigProblem(
                    at("routes", i, "role"), f"{route.role} is not a role of the API ({', '.join(spec.roles)})"
                )
        prefixes = [route.prefix for route in spec.routes]
        for i, prefix in enumerate(prefixes):
            if prefix in prefixes[:i]:
                yield ConfigProblem(at("routes", i, "prefix"), f"{prefix} is routed twice")
        for caller, roles in spec.callers.items():
            if caller not in config.workloads:
                yield ConfigProblem(at("callers", caller), f"{caller} is not a workload of platform:workloads")
            for role in roles:
                if role not in spec.roles:
                    yield ConfigProblem(
                        at("callers", caller), f"{role} is not a role of the API ({', '.join(spec.roles)})"
                    )
        if spec.team in config.teams and len(serving_plan.api_host(config, api)) > MAX_HOST:
            yield ConfigProblem(at(), f"{serving_plan.api_host(config, api)} is longer than a DNS name may be")
    yield from _check_scaling(config)


def _check_scaling(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """A scaled Deployment: a workload that runs on a serving cluster, bounds in order, zero only
    where allowed, and when allowed, an API of its workload whose requests wake it."""
    assert config.serving is not None
    for name, spec in config.serving.scaling.items():
        at = partial(key, "serving", "scaling", name)
        if spec.workload not in config.workloads:
            yield ConfigProblem(at("workload"), f"{spec.workload} is not a workload of platform:workloads")
        elif not scaling_plan.scaling_clusters(config, name):
            yield ConfigProblem(
                at("workload"),
                f"{spec.workload} runs on {', '.join(config.workload_clusters(spec.workload))}, none of which runs "
                "a gateway (platform:serving.clusters): KEDA runs on serving clusters",
            )
        if spec.max_replicas < spec.min_replicas:
            yield ConfigProblem(at("maxReplicas"), f"is below minReplicas ({spec.min_replicas})")
        if spec.min_replicas == 0 and not spec.scale_from_zero:
            yield ConfigProblem(
                at("minReplicas"),
                "0 needs scaleFromZero: true (with no HTTP interceptor in the AKS add-on, requests get 503 until a "
                "pod is ready)",
            )
        yield from _check_signal(config, name)
        if spec.scale_from_zero and spec.signal == "queue-depth" and not scaling_plan.wake_services(config, name):
            yield ConfigProblem(
                at("scaleFromZero"),
                f"no API of platform:serving.apis is served by workload {spec.workload}: nothing would wake it from zero",
            )
        if spec.fallback_replicas is not None and spec.fallback_replicas > spec.max_replicas:
            yield ConfigProblem(at("fallbackReplicas"), f"is above maxReplicas ({spec.max_replicas})")


def _check_signal(config: PlatformConfig, name: str) -> Iterator[ConfigProblem]:
    """The signal exists: the pods' metrics port for queue depth; for Kafka lag, a Strimzi Kafka on
    each cluster that scales it, whose client the workload is, with a group of its own prefix."""
    assert config.serving is not None
    spec = config.serving.scaling[name]
    at = partial(key, "serving", "scaling", name)
    if spec.signal == "queue-depth":
        if spec.metrics_port is None:
            yield ConfigProblem(at("metricsPort"), "is required for queue-depth: where the pods serve their metrics")
        return
    kafka = config.kafka
    if kafka is None or kafka.engine != "strimzi":
        yield ConfigProblem(at("signal"), "kafka-lag reads Strimzi's Kafka Exporter: platform:kafka.engine strimzi")
        return
    client = kafka.clients.get(spec.workload)
    if client is None:
        yield ConfigProblem(at("workload"), f"{spec.workload} is not a client of platform:kafka.clients")
        return
    prefix = kafka_plan.consumer_group_prefix(spec.workload)
    if spec.consumer_group is None or not spec.consumer_group.startswith(prefix):
        yield ConfigProblem(
            at("consumerGroup"), f"names the Deployment's consumer group, which starts with {prefix} (its ACLs)"
        )
    hosts = set(config.kafka_clusters())
    for cluster in scaling_plan.scaling_clusters(config, name):
        if cluster not in hosts:
            yield ConfigProblem(
                at("workload"), f"runs on {cluster}, which hosts no Kafka: its lag is read from the cluster's own"
            )
    partitions = max(
        (t.partitions for t in kafka.topics if kafka_plan.reads(client.topics.get(t.name, "write"))), default=0
    )
    if spec.max_replicas > partitions:
        yield ConfigProblem(
            at("maxReplicas"),
            f"is above {partitions}, the most partitions of a topic {spec.workload} reads: a group's consumers past "
            "its partitions sit idle",
        )
