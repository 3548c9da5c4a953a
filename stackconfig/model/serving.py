"""Serving models privately (docs/serving.md): an internal gateway per serving cluster (AKS's Istio
add-on), per-team hostnames in a private zone the platform owns, TLS from Key Vault, Entra ID
tokens checked at the gateway against each route's app role, and Private Link for other
networks."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from stackconfig.model.base import Model, ShortName, Uuid

DnsZoneName = Annotated[
    str,
    StringConstraints(
        max_length=200, pattern=r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$"
    ),
]
DeploymentName = Annotated[str, StringConstraints(pattern=r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")]
RoleValue = Annotated[str, StringConstraints(pattern=r"^[A-Za-z][A-Za-z0-9._-]{0,119}$")]
# An HTTP path prefix (`/v1/`) or a gRPC service or method (`/package.Service/`, `/package.Service/Method`).
RoutePrefix = Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9._~/-]*$")]


class ServingRouteConfig(Model):
    """One route of an API: requests whose path starts with `prefix` need `role` in the token."""

    prefix: RoutePrefix = Field(
        description="An HTTP path prefix (`/v1/`), or a gRPC service (`/inference.v1.Generate/`) or method."
    )
    role: RoleValue = Field(description="The app role (a key of the API's `roles`) a caller's token must carry.")


class PrivateLinkConsumerConfig(Model):
    """A network outside the environment that reaches the gateway through Private Link."""

    subscription_id: Uuid = Field(description="The consumer's subscription, where its private endpoint is.")
    auto_approve: bool = Field(
        default=False,
        description="Approve its endpoints' connections on their own (listed in the Private Link service's "
        "auto-approval). `false`: they wait, Pending, for a person to approve each.",
    )


class ServingApiConfig(Model):
    """An API a team serves: its Service behind the gateway, at `<api>.<team>.<zone>`."""

    team: ShortName = Field(description="The team that serves it (`platform:teams`): the hostname's second label.")
    workload: str = Field(
        description="The `platform:workloads` entry whose pods serve it: their namespace, and the clusters it runs on."
    )
    service_name: Annotated[str, StringConstraints(pattern=r"^[a-z]([a-z0-9-]{0,61}[a-z0-9])?$")] = Field(
        description="The Kubernetes Service in the workload's namespace that the gateway routes to."
    )
    port: int = Field(
        ge=1,
        le=65535,
        description="The Service's port, which must be its pods' port too (their policy admits the gateway there).",
    )
    protocol: Literal["http", "grpc"] = Field(description="`grpc` (HTTP/2 to the pods, long-lived streams) or `http`.")
    application_client_id: Uuid | None = Field(
        None,
        description="The client ID of the API's Entra application, which the delivery project makes: the audience "
        "its callers' tokens name (the delivery's output `<env>StackSettings`, `platform:serving.apis.<api>."
        "applicationClientId`).",
    )
    roles: dict[RoleValue, Annotated[str, StringConstraints(min_length=1, max_length=200)]] = Field(
        min_length=1, description="The API's app roles: value -> what it allows."
    )
    routes: list[ServingRouteConfig] = Field(
        min_length=1, description="Its routes, each with the role it needs; a request no route matches is refused."
    )
    callers: dict[str, list[RoleValue]] = Field(
        default_factory=dict,
        description="`platform:workloads` entries whose identities hold app roles of the API: workload -> roles. The "
        "delivery project assigns them (`delivery:environments.<env>.servingCallers`); Entra issues no token for "
        "the API to any other principal.",
    )


class ServingScalingConfig(Model):
    """How KEDA scales one Deployment, on a signal read from managed Prometheus (docs/serving.md,
    "Scaling"): a model server's queue depth, or a stream consumer's Kafka lag."""

    workload: str = Field(description="The `platform:workloads` entry whose namespace holds the Deployment.")
    min_replicas: int = Field(1, ge=0, le=1000, description="Replicas kept with no load; 0 only with `scaleFromZero`.")
    max_replicas: int = Field(
        ge=1,
        le=1000,
        description="The most replicas KEDA asks for. Kueue admits each pod against the team's quota: a replica "
        "past it waits, gated, without a node.",
    )
    signal: Literal["queue-depth", "kafka-lag"] = Field(
        "queue-depth",
        description="`queue-depth`: the model server's waiting requests (its pods' metrics); `kafka-lag`: the "
        "records its consumer group has yet to read, from Strimzi's Kafka Exporter on the cluster's Kafka.",
    )
    metrics_port: int | None = Field(
        None,
        ge=1,
        le=65535,
        description="The pods' port that serves their Prometheus metrics (at `metricsPath`); for `queue-depth`.",
    )
    metrics_path: Annotated[str, StringConstraints(pattern=r"^/[A-Za-z0-9._~/-]*$")] = Field(
        "/metrics", description="Where the pods serve their metrics."
    )
    pod_labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels that select the Deployment's pods, for the metrics' scrape. Default `app: <name>`.",
    )
    queue_metric: Annotated[str, StringConstraints(pattern=r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")] = Field(
        "vllm:num_requests_waiting",
        description="The model server's gauge of requests waiting for a slot (vLLM's by default).",
    )
    waiting_per_replica: float = Field(
        4, gt=0, description="Waiting requests per replica KEDA aims for: above it, it adds replicas."
    )
    consumer_group: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9._-]{1,200}$")] | None = Field(
        None,
        description="For `kafka-lag`: the Deployment's consumer group (it starts with its client's prefix, "
        "`<workload>.`).",
    )
    lag_per_replica: int = Field(1000, ge=1, description="For `kafka-lag`: records behind per replica KEDA aims for.")
    scale_from_zero: bool = Field(
        False,
        description="Allow `minReplicas: 0`. The AKS add-on has no HTTP interceptor: at zero replicas a request "
        "gets the gateway's 503 until a pod is ready, so only for APIs whose callers retry. It wakes on the "
        "gateway's request rate to the Deployment's APIs (`queue-depth`), or on lag (`kafka-lag`).",
    )
    fallback_replicas: int | None = Field(
        None,
        ge=1,
        description="Replicas while the metrics cannot be read (3 failed reads in a row). Default: `minReplicas`, "
        "at least 1.",
    )


class ServingConfig(Model):
    """The environment's serving edge."""

    clusters: list[ShortName] = Field(
        min_length=1, description="The clusters that run a gateway (workload clusters; each API's workload runs there)."
    )
    zone: DnsZoneName = Field(
        description="The private DNS zone the platform owns for serving (e.g. `serve.ailab.internal`): an API is "
        "`<api>.<team>.<zone>`."
    )
    apis: dict[ShortName, ServingApiConfig] = Field(default_factory=dict, description="The APIs teams serve.")
    private_link: list[PrivateLinkConsumerConfig] = Field(
        default_factory=list,
        description="Networks outside the environment that reach the gateways through a Private Link service "
        "(none: no Private Link service).",
    )
    scaling: dict[DeploymentName, ServingScalingConfig] = Field(
        default_factory=dict,
        description="Deployments KEDA scales, by name: the AKS add-on on the serving clusters that run them, "
        "reading managed Prometheus with the `serving-scaler` identity.",
    )
    tls_certificate_prefix: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,60}$")] = Field(
        default="serving",
        description="Each team's certificate is the Key Vault certificate `<prefix>-<team>` (a wildcard for "
        "`*.<team>.<zone>`, issued into the region's vault by the lab's CA), synced to the gateway.",
    )
    istio_revisions: list[Annotated[str, StringConstraints(pattern=r"^asm-1-[0-9]{2}$")]] = Field(
        default_factory=list,
        max_length=2,
        description="The Istio add-on's revisions (`asm-1-30`): one, or two consecutive ones while a canary "
        "upgrade runs (docs/serving.md, \"Upgrading the mesh\"). Empty: the platform's pinned revision "
        "(facts/istio.py).",
    )
