"""Stream processing in one cluster: the Flink Kubernetes Operator and its namespaces (the
cluster's unit), and the teams' PyFlink jobs (the tenants' unit).

- `StreamingPlatform`: the operator (pinned chart, image through the registry's cache rule,
  watching the streaming namespaces only, on the system pool, a PDB and leader election with
  two replicas, no admission webhook: docs/decisions/0007-streaming.md), and the streaming
  namespaces, which it must find when it installs its Roles there: default deny with the
  allows of planning.cluster_traffic, Pod Security `restricted`, outside Kueue, a
  ResourceQuota sized to the jobs, and the Role each job's JobManager needs to run its
  TaskManagers and keep its HA metadata.
- `StreamingJobs`: per job, its Kafka client properties (no secret) and its FlinkDeployment,
  valid against the pinned CRD and the operator's own rules (planning.streaming), and a
  PodMonitor for managed Prometheus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from components.charts import helm_release
from components.isolation import isolate
from facts import flink
from planning import streaming as streaming_plan
from planning.charts import FLINK_OPERATOR, SYSTEM_POOL_TOLERATION, mirrored_image_values
from planning.network_policy import NamespaceTraffic
from planning.pod_security import RESTRICTED, pod_security_labels
from planning.queues import TEAM_LABEL
from stackconfig.model import PlatformConfig

# What a JobManager in native mode does with its service account: create and delete its
# TaskManager pods, keep leader election and HA metadata in ConfigMaps, and own its pods
# through its Deployment (the chart's `flink-operator.jobRbacRules`, templates/rbac/_helpers.tpl,
# release-1.15.0; the chart would bind them to one `flink` account, the platform binds each
# job's own).
JOB_RULES = [
    {
        "apiGroups": [""],
        "resources": ["pods", "configmaps"],
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
    {
        "apiGroups": ["apps"],
        "resources": ["deployments", "deployments/finalizers"],
        "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
    },
]
JOB_ROLE = "flink-job"
OPERATOR_LEASE = "flink-operator-lease"


# The chart's default `defaultConfiguration."flink-conf.yaml"` (values.yaml, release-1.15.0),
# which a value for that key replaces: kept, with the platform's lines after it
# (tests/test_streaming.py holds it equal to the chart's).
CHART_OPERATOR_CONFIG = (
    "kubernetes.operator.metrics.reporter.slf4j.factory.class: org.apache.flink.metrics.slf4j.Slf4jReporterFactory\n"
    "kubernetes.operator.metrics.reporter.slf4j.interval: 5 MINUTE\n"
    "kubernetes.operator.reconcile.interval: 15 s\n"
    "kubernetes.operator.observer.progress-check.interval: 5 s\n"
)


def operator_values(config: PlatformConfig, login_server: str, priority_class: str) -> dict[str, Any]:
    """The operator chart's values (checked against the chart's defaults by the tests)."""
    streaming = config.streaming
    assert streaming is not None
    replicas = streaming.operator.replicas
    operator_config = {
        "kubernetes.operator.leader-election.enabled": "true" if replicas > 1 else "false",
        "kubernetes.operator.leader-election.lease-name": OPERATOR_LEASE,
    }
    values: dict[str, Any] = {
        **mirrored_image_values(FLINK_OPERATOR, login_server),
        "watchNamespaces": sorted(streaming_plan.streaming_namespaces(config)),
        "replicas": replicas,
        # One pod at a time without leader election; with it, a rolling update keeps one leading.
        "strategy": {"type": "RollingUpdate" if replicas > 1 else "Recreate"},
        # Jobs run under their own service accounts and Roles (StreamingPlatform), not the chart's.
        "rbac": {"jobRole": {"create": False}, "jobRoleBinding": {"create": False}},
        "jobServiceAccount": {"create": False},
        "operatorPod": {
            "priorityClassName": priority_class,
            "tolerations": [SYSTEM_POOL_TOLERATION],
            "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        },
        # Pod Security `restricted`, which the operator's namespace enforces.
        "podSecurityContext": {
            "runAsUser": 9999,
            "runAsGroup": 9999,
            "runAsNonRoot": True,
            "seccompProfile": {"type": "RuntimeDefault"},
        },
        "operatorSecurityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        # No cert-manager, so no webhook: the platform validates every FlinkDeployment against the
        # CRD and the operator's rules before applying it, and the controller validates again.
        "webhook": {"create": False},
        # The operator reads its options from `flink-conf.yaml`: while the chart's values carry
        # that key (they do by default, and Helm merges defaults in), templates/controller/
        # deployment.yaml mounts only it, never `config.yaml`.
        "defaultConfiguration": {
            "create": True,
            "append": True,
            "flink-conf.yaml": CHART_OPERATOR_CONFIG
            + "".join(f"{key}: {value}\n" for key, value in operator_config.items()),
        },
    }
    image = values["image"]
    image["tag"] = flink.OPERATOR_IMAGE_TAG
    return values


def job_quota(config: PlatformConfig, cluster_key: str, namespace: str) -> dict[str, str] | None:
    """The namespace's ResourceQuota: what its jobs run on this cluster, and one more of the
    largest TaskManager per job, so that a replacement can start before the old pod is gone."""
    streaming = config.streaming
    assert streaming is not None
    jobs = {
        name: job
        for name, job in streaming.jobs.items()
        if job.namespace == namespace and cluster_key in config.job_clusters(name)
    }
    if not jobs:
        return None
    pods = [pod for name, job in jobs.items() for pod in streaming_plan.job_pods(config, name, job)]
    spare = [streaming_plan.job_pods(config, name, job)[-1] for name, job in jobs.items()]
    cpu = sum(p.cpu_millicores for p in pods + spare)
    memory = sum(p.memory_mib for p in pods + spare)
    return {
        "pods": str(len(pods) + len(spare)),
        "requests.cpu": f"{cpu}m",
        "limits.cpu": f"{cpu}m",
        "requests.memory": f"{memory}Mi",
        "limits.memory": f"{memory}Mi",
    }


@dataclass(frozen=True)
class StreamingPlatformArgs:
    cluster_key: str
    config: PlatformConfig
    login_server: str
    priority_class: str
    # The operator's namespace and each streaming namespace's traffic (planning.cluster_traffic).
    traffic: Mapping[str, NamespaceTraffic]
    pull_ready: Sequence[pulumi.Resource]
    ready: Sequence[pulumi.Resource]


class StreamingPlatform(pulumi.ComponentResource):
    """Outputs: `namespaces[name]` (the streaming namespaces), `operator` (the release)."""

    def __init__(
        self,
        name: str,
        args: StreamingPlatformArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:streaming:Platform", name, None, opts)
        config, key = args.config, args.cluster_key
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)
        operator_namespace = kubernetes.core.v1.Namespace(
            f"{name}-ns-operator",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(
                name=streaming_plan.OPERATOR_NAMESPACE, labels=pod_security_labels(RESTRICTED)
            ),
            opts=in_cluster,
        )
        isolate(
            name,
            args.traffic[streaming_plan.OPERATOR_NAMESPACE],
            provider=provider,
            parent=self,
            namespace=operator_namespace,
        )
        self.namespaces: dict[str, kubernetes.core.v1.Namespace] = {}
        for namespace, team in streaming_plan.streaming_namespaces(config).items():
            created = kubernetes.core.v1.Namespace(
                f"{name}-ns-{namespace}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(
                    name=namespace,
                    labels={
                        TEAM_LABEL: team,
                        streaming_plan.STREAMING_NAMESPACE_LABEL: "true",
                        **pod_security_labels(RESTRICTED),
                    },
                ),
                opts=in_cluster,
            )
            self.namespaces[namespace] = created
            isolate(name, args.traffic[namespace], provider=provider, parent=self, namespace=created)
            after = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[created])
            kubernetes.core.v1.ServiceAccountPatch(
                f"{name}-sa-{namespace}-default",
                metadata=kubernetes.meta.v1.ObjectMetaPatchArgs(name="default", namespace=namespace),
                automount_service_account_token=False,
                opts=after,
            )
            kubernetes.rbac.v1.Role(
                f"{name}-role-{namespace}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(name=JOB_ROLE, namespace=namespace),
                rules=[
                    kubernetes.rbac.v1.PolicyRuleArgs(
                        api_groups=rule["apiGroups"], resources=rule["resources"], verbs=rule["verbs"]
                    )
                    for rule in JOB_RULES
                ],
                opts=after,
            )
            jobs = [
                job
                for job, spec in (config.streaming.jobs.items() if config.streaming else [])
                if spec.namespace == namespace and key in config.job_clusters(job)
            ]
            for job in jobs:
                kubernetes.rbac.v1.RoleBinding(
                    f"{name}-binding-{namespace}-{job}",
                    metadata=kubernetes.meta.v1.ObjectMetaArgs(name=f"{JOB_ROLE}-{job}", namespace=namespace),
                    role_ref=kubernetes.rbac.v1.RoleRefArgs(
                        api_group="rbac.authorization.k8s.io", kind="Role", name=JOB_ROLE
                    ),
                    subjects=[kubernetes.rbac.v1.SubjectArgs(kind="ServiceAccount", name=job, namespace=namespace)],
                    opts=after,
                )
            quota = job_quota(config, key, namespace)
            if quota is not None:
                kubernetes.core.v1.ResourceQuota(
                    f"{name}-quota-{namespace}",
                    metadata=kubernetes.meta.v1.ObjectMetaArgs(name="flink-jobs", namespace=namespace),
                    spec=kubernetes.core.v1.ResourceQuotaSpecArgs(hard=quota),
                    opts=after,
                )
        values = operator_values(config, args.login_server, args.priority_class)
        self.operator = helm_release(
            f"{name}-operator",
            FLINK_OPERATOR,
            operator_namespace.metadata.name,
            values,
            login_server=args.login_server,
            provider=provider,
            parent=self,
            # The chart puts the operator's Roles into the namespaces it watches.
            depends_on=[operator_namespace, *self.namespaces.values(), *args.pull_ready, *args.ready],
        )
        if values["replicas"] > 1:
            # The chart has no PodDisruptionBudget; with a standby, a drain keeps one operator.
            kubernetes.policy.v1.PodDisruptionBudget(
                f"{name}-operator-pdb",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(
                    name="flink-kubernetes-operator", namespace=streaming_plan.OPERATOR_NAMESPACE
                ),
                spec=kubernetes.policy.v1.PodDisruptionBudgetSpecArgs(
                    min_available=1,
                    selector=kubernetes.meta.v1.LabelSelectorArgs(
                        match_labels={"app.kubernetes.io/name": FLINK_OPERATOR.name}
                    ),
                ),
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[operator_namespace]),
            )
        self.register_outputs({})


@dataclass(frozen=True)
class StreamingJobsArgs:
    cluster_key: str
    config: PlatformConfig
    login_server: str
    account_name: str
    # Each job's workload identity client ID, and the tenant its tokens come from.
    client_ids: Mapping[str, pulumi.Input[str]]
    tenant_id: pulumi.Input[str]
    event_hubs_namespace: pulumi.Input[str] | None
    # What must exist first: the jobs' service accounts, grants, the brokers' CA copies.
    ready: Sequence[pulumi.Resource]


class StreamingJobs(pulumi.ComponentResource):
    """Outputs: `deployments[job]` (the FlinkDeployment custom resources)."""

    def __init__(
        self,
        name: str,
        args: StreamingJobsArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:streaming:Jobs", name, None, opts)
        config, key = args.config, args.cluster_key
        streaming = config.streaming
        assert streaming is not None
        self.deployments: dict[str, kubernetes.apiextensions.CustomResource] = {}
        for job_name in streaming.jobs:
            if key in config.job_clusters(job_name):
                self.deployments[job_name] = self._job(name, job_name, args, provider)
        self.register_outputs({})

    def _job(
        self, name: str, job_name: str, args: StreamingJobsArgs, provider: kubernetes.Provider
    ) -> kubernetes.apiextensions.CustomResource:
        config, key = args.config, args.cluster_key
        assert config.streaming is not None
        job = config.streaming.jobs[job_name]
        identity = pulumi.Output.all(
            client_id=args.client_ids[job_name], tenant_id=args.tenant_id, event_hubs=args.event_hubs_namespace
        )
        after_ready = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(args.ready))
        depends_on = list(args.ready)
        if job.topics:

            def properties(values: dict[str, Any]) -> str:
                return streaming_plan.properties_file(
                    streaming_plan.kafka_properties(
                        config,
                        job_name,
                        key,
                        tenant_id=values["tenant_id"],
                        client_id=values["client_id"],
                        event_hubs_namespace=values["event_hubs"],
                    )
                )

            depends_on.append(
                kubernetes.core.v1.ConfigMap(
                    f"{name}-{job_name}-kafka",
                    metadata=kubernetes.meta.v1.ObjectMetaArgs(
                        name=streaming_plan.kafka_properties_config_map(job_name),
                        namespace=job.namespace,
                        labels={streaming_plan.KAFKA_PROPERTIES_LABEL: "true"},
                    ),
                    data={streaming_plan.KAFKA_PROPERTIES_FILE: identity.apply(properties)},
                    opts=after_ready,
                )
            )

        def spec(values: dict[str, Any]) -> dict[str, Any]:
            manifest = streaming_plan.flink_deployment(
                streaming_plan.job_spec(
                    config,
                    job_name,
                    login_server=args.login_server,
                    account_name=args.account_name,
                    client_id=values["client_id"],
                    tenant_id=values["tenant_id"],
                )
            )
            return dict(manifest["spec"])

        deployment = kubernetes.apiextensions.CustomResource(
            f"{name}-{job_name}",
            api_version=flink.API_VERSION,
            kind="FlinkDeployment",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=job_name, namespace=job.namespace),
            spec=identity.apply(spec),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=depends_on),
        )
        kubernetes.apiextensions.CustomResource(
            f"{name}-{job_name}-podmonitor",
            api_version="azmonitoring.coreos.com/v1",
            kind="PodMonitor",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=job_name, namespace=job.namespace),
            spec={
                # Flink labels its pods with the deployment's name as `app`.
                "selector": {"matchLabels": {"app": job_name}},
                "podMetricsEndpoints": [{"port": streaming_plan.METRICS_PORT_NAME, "interval": "30s"}],
            },
            opts=after_ready,
        )
        return deployment
