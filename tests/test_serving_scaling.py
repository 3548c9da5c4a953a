"""Scaling served models (planning/serving_scaling.py, docs/serving.md "Scaling"): KEDA's add-on
scales the model on its own queue depth, read from the region's managed Prometheus as the
`serving-scaler` identity, between the bounds config sets; from zero only where config allows,
waking on the gateway's requests; and holding its fallback while the metrics cannot be read."""

from __future__ import annotations

from urllib.parse import urlparse

import pytest

from contracts.cluster import ClusterView
from contracts.reach import Destination, ingress_refused
from facts import keda
from planning import serving_scaling as scaling_plan
from planning.naming import Naming
from planning.network_policy import METRICS_SCRAPERS
from tests.conftest import assert_problems, stack_values
from validation.loader import parse_platform_config

SERVING = ("staging", "prod")


def _scaled_objects(view: ClusterView, namespace: str) -> dict[str, dict]:
    return {o["metadata"]["name"]: o for o in view.objects(keda.SCALED_OBJECT, namespace)}


def _workspace_name(plan, config, region: str) -> str:
    """The name of the region's Azure Monitor workspace, which its query host starts with
    (Azure appends a suffix of its own: offline/mocks.py)."""
    name = Naming(config.prefix, config.environment).regional("amw", region)
    assert [
        r
        for r in plan.of_type("azure-native:monitor:AzureMonitorWorkspace")
        if r.inputs["azureMonitorWorkspaceName"] == name
    ]
    return name


@pytest.mark.parametrize("stack", SERVING)
def test_each_serving_cluster_scales_the_model_on_its_queue_depth_within_config_bounds(plans, stack):
    """On every serving cluster that runs the inference workload: KEDA's add-on is on, and a
    ScaledObject scales `serve-llm` on its pods' waiting requests there (this cluster's series
    only: the region's workspace holds its other clusters too), per replica, between the bounds
    config sets, read from the region's own workspace, signed in through the namespace's
    TriggerAuthentication as the scaler identity (no secret)."""
    config = parse_platform_config(stack_values(stack))
    plan = plans[stack]
    spec = config.serving.scaling["serve-llm"]
    clusters = scaling_plan.keda_clusters(config)
    assert clusters == list(config.serving.clusters)
    for managed in plan.of_type("azure-native:containerservice:ManagedCluster"):
        key = managed.name.removeprefix("aks-").removesuffix("-aks")
        enabled = (managed.inputs.get("workloadAutoScalerProfile") or {}).get("keda", {}).get("enabled", False)
        assert enabled == (key in clusters), key
    naming = Naming(config.prefix, config.environment)
    for key in clusters:
        view = ClusterView(plan, key, stack_values(stack))
        scaled = _scaled_objects(view, "inference")["serve-llm"]["spec"]
        assert scaled["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "serve-llm"}
        assert (scaled["minReplicaCount"], scaled["maxReplicaCount"]) == (spec.min_replicas, spec.max_replicas)
        queue = scaled["triggers"][0]
        assert (
            queue["metricType"] == "AverageValue" and float(queue["metadata"]["threshold"]) == spec.waiting_per_replica
        )
        query = queue["metadata"]["query"]
        assert spec.queue_metric in query and f'cluster="{naming.cluster(key)}"' in query
        assert 'namespace="inference"' in query
        region = config.clusters[key].region
        host = urlparse(queue["metadata"]["serverAddress"]).hostname
        assert host.startswith(_workspace_name(plan, config, region) + "-")
        (authentication,) = view.objects(keda.TRIGGER_AUTHENTICATION, "inference")
        assert queue["authenticationRef"]["name"] == authentication["metadata"]["name"]
        pod_identity = authentication["spec"]["podIdentity"]
        assert pod_identity["provider"] == keda.WORKLOAD_IDENTITY_PROVIDER
        assert set(authentication["spec"]) == {"podIdentity"}, "no secret, no other auth mode"
        (scaler,) = [
            r
            for r in plan.of_type("azure-native:managedidentity:UserAssignedIdentity")
            if r.inputs["resourceName"] == naming.workload_identity(scaling_plan.SCALER_WORKLOAD)
        ]
        from offline.mocks import client_id

        assert pod_identity["identityId"] == client_id(scaler)


@pytest.mark.parametrize("stack", SERVING)
def test_keda_reads_its_signal_as_the_scaler_identity_and_that_identity_reads_nothing_else(plans, stack):
    """The path to the signal as Azure and the cluster would take it: the scaler identity trusts
    kube-system/keda-operator on exactly the scaling clusters; it holds Monitoring Data Reader on
    each scaling region's workspace and no other role; the region's firewall lets the clusters
    reach that workspace's own query host (not the domain every tenant shares); managed
    Prometheus scrapes the model's pods on their metrics port, which their namespace admits."""
    config = parse_platform_config(stack_values(stack))
    plan = plans[stack]
    naming = Naming(config.prefix, config.environment)
    identity = naming.workload_identity(scaling_plan.SCALER_WORKLOAD)
    credentials = [
        r
        for r in plan.of_type("azure-native:managedidentity:FederatedIdentityCredential")
        if r.inputs["resourceName"] == identity
    ]
    assert {r.inputs["subject"] for r in credentials} == {
        f"system:serviceaccount:{keda.OPERATOR_NAMESPACE}:{keda.OPERATOR_SERVICE_ACCOUNT}"
    }
    assert len(credentials) == len(scaling_plan.keda_clusters(config))
    from facts.azure_roles import role_id
    from offline.mocks import principal_id

    (scaler,) = [
        r
        for r in plan.of_type("azure-native:managedidentity:UserAssignedIdentity")
        if r.inputs["resourceName"] == identity
    ]
    grants = [
        r
        for r in plan.of_type("azure-native:authorization:RoleAssignment")
        if r.inputs["principalId"] == principal_id(scaler)
    ]
    workspaces = {naming.regional("amw", region) for region in scaling_plan.keda_regions(config)}
    assert {str(r.inputs["roleDefinitionId"]).rsplit("/", 1)[-1] for r in grants} == {
        role_id(keda.PROMETHEUS_READER_ROLE)
    }
    assert {str(r.inputs["scope"]).rsplit("/", 1)[-1] for r in grants} == workspaces
    for region in scaling_plan.keda_regions(config):
        hosts = [
            fqdn
            for group in plan.of_type("azure-native:network:FirewallPolicyRuleCollectionGroup")
            if region in group.inputs["firewallPolicyName"] or naming.regional("afwp", region) in str(group.inputs)
            for collection in group.inputs["ruleCollections"]
            for rule in collection["rules"]
            if rule["name"] == "prometheus-query"
            for fqdn in rule["targetFqdns"]
        ]
        assert len(hosts) == 1 and hosts[0].startswith(naming.regional("amw", region) + "-"), (region, hosts)
        assert not any(
            "*" in fqdn and "prometheus" in fqdn
            for group in plan.of_type("azure-native:network:FirewallPolicyRuleCollectionGroup")
            for collection in group.inputs["ruleCollections"]
            for rule in collection["rules"]
            for fqdn in rule.get("targetFqdns") or []
        )
    spec = config.serving.scaling["serve-llm"]
    for key in scaling_plan.keda_clusters(config):
        view = ClusterView(plan, key, stack_values(stack))
        (monitor,) = [
            m
            for m in view.objects("kubernetes:azmonitoring.coreos.com/v1:PodMonitor", "inference")
            if m["metadata"]["name"] == "serve-llm"
        ]
        assert monitor["spec"]["selector"]["matchLabels"] == {"app": "serve-llm"}
        assert monitor["spec"]["podMetricsEndpoints"][0]["targetPort"] == spec.metrics_port
        metrics = Destination(spec.metrics_port, namespace="inference", pod_labels=(("app", "serve-llm"),))
        for scraper in METRICS_SCRAPERS:
            assert not ingress_refused(view, "kube-system", dict(scraper), metrics), scraper


@pytest.mark.parametrize("stack", SERVING)
def test_scale_from_zero_only_where_config_allows_it_and_then_it_wakes_on_the_gateways_requests(plans, stack):
    """staging idles at zero (config allows it: its callers retry): a second trigger wakes the
    model on the gateway's request rate to its Service, which exists while no pod does (the
    gateway answers 503 and counts it). prod keeps two replicas and has no such trigger. While
    the metrics cannot be read, prod holds its fallback; at zero replicas KEDA applies none
    (it only logs the error), so staging wakes only once the metrics are back."""
    config = parse_platform_config(stack_values(stack))
    spec = config.serving.scaling["serve-llm"]
    for key in scaling_plan.keda_clusters(config):
        view = ClusterView(plans[stack], key, stack_values(stack))
        scaled = _scaled_objects(view, "inference")["serve-llm"]["spec"]
        assert scaled["fallback"] == {"failureThreshold": keda.FALLBACK_FAILURES, "replicas": max(spec.min_replicas, 1)}
        triggers = scaled["triggers"]
        if stack == "staging":
            assert scaled["minReplicaCount"] == 0
            # At zero the queue has no series: that is no load, not a failure.
            assert "ignoreNullValues" not in triggers[0]["metadata"]
            wake = triggers[1]["metadata"]
            assert wake["activationThreshold"] == "0"
            assert "istio_requests_total" in wake["query"]
            assert "serve-llm.inference.svc.cluster.local" in wake["query"]
            # Calls the gateway refused wake nothing.
            assert 'response_code!~"401|403"' in wake["query"] and 'grpc_response_status!~"7|16"' in wake["query"]
        else:
            assert scaled["minReplicaCount"] == 2 and len(triggers) == 1
            # With pods running, no series means a broken scrape: an error, so the fallback holds
            # the replicas instead of KEDA reading it as no load and scaling in.
            assert triggers[0]["metadata"]["ignoreNullValues"] == "false"


def test_the_golden_inference_deployment_leaves_its_replica_count_to_keda():
    """An apply of the example would reset the count KEDA set, were `replicas` in it."""
    import yaml

    from tests.conftest import ROOT

    (deployment,) = [
        d for d in yaml.safe_load_all((ROOT / "examples" / "inference.yaml").read_text()) if d["kind"] == "Deployment"
    ]
    assert "replicas" not in deployment["spec"]
    assert deployment["spec"]["template"]["metadata"]["labels"]["app"] == deployment["metadata"]["name"]


def test_a_scaling_config_keda_cannot_honour_is_refused_by_key():
    def broken(values):
        serving = values["platform:serving"]
        serving["scaling"] = {
            "serve-llm": {"workload": "inference", "minReplicas": 0, "maxReplicas": 2, "metricsPort": 8000},
            "batch": {"workload": "trainer", "minReplicas": 3, "maxReplicas": 2, "metricsPort": 9000},
            "idle": {
                "workload": "inference",
                "maxReplicas": 1,
                "metricsPort": 9000,
                "fallbackReplicas": 4,
            },
            "ghost": {"workload": "nobody", "maxReplicas": 1, "metricsPort": 9000},
        }
        values["platform:workloads"]["trainer"]["clusters"] = ["eus2"]

    assert_problems(
        "prod",
        broken,
        {
            "platform:serving.scaling.serve-llm.minReplicas": "needs scaleFromZero",
            "platform:serving.scaling.batch.maxReplicas": "is below minReplicas",
            "platform:serving.scaling.idle.fallbackReplicas": "is above maxReplicas",
            "platform:serving.scaling.ghost.workload": "is not a workload",
        },
    )

    def no_api(values):
        values["platform:serving"]["scaling"] = {
            "trainer": {
                "workload": "trainer",
                "minReplicas": 0,
                "maxReplicas": 1,
                "metricsPort": 9000,
                "scaleFromZero": True,
            }
        }

    assert_problems("prod", no_api, {"platform:serving.scaling.trainer.scaleFromZero": "nothing would wake it"})


def test_only_the_platforms_authentication_signs_keda_in_and_only_to_azure_monitor():
    """Admission, always denying in team namespaces: whoever writes custom resources there (the
    tenants' deploy, MultiKueue's dispatchers) cannot have KEDA's operator sign in as the scaler
    identity for a TriggerAuthentication of their own, nor send its token anywhere but an Azure
    Monitor workspace, nor use a cluster-wide authentication."""
    import celpy

    from contracts.admission import cel_program
    from planning.admission import admission_rules, policy_manifest

    def denied(rule, subject: dict) -> list[str]:
        activation = {"object": celpy.json_to_cel(subject)}
        return [r.message for r in rule.rules if not cel_program(r.expression).evaluate(activation)]

    rules = {r.name: r for r in admission_rules("acr.example.azurecr.io")}
    authentication, triggers = rules["keda-authentication-platform-only"], rules["keda-triggers-to-azure-monitor"]
    assert authentication.always_deny and triggers.always_deny
    assert policy_manifest(triggers)["spec"]["matchConstraints"]["resourceRules"][0]["resources"] == [
        "scaledobjects",
        "scaledjobs",
    ]
    identity = {"podIdentity": {"provider": "azure-workload", "identityId": "scaler-client-id"}}
    assert denied(authentication, {"metadata": {"name": scaling_plan.TRIGGER_AUTHENTICATION}, "spec": identity}) == []
    assert denied(authentication, {"metadata": {"name": "mine"}, "spec": identity})
    assert denied(authentication, {"metadata": {"name": "mine"}, "spec": {"secretTargetRef": []}}) == []

    def scaler(server: str, ref: dict | None = None, kind: str = "prometheus") -> dict:
        trigger = {"type": kind, "metadata": {"serverAddress": server, "query": "up", "threshold": "1"}}
        trigger["authenticationRef"] = ref or {"name": scaling_plan.TRIGGER_AUTHENTICATION}
        return {
            "metadata": {"name": "s"},
            "spec": {"triggers": [{"type": "cpu", "metadata": {"value": "50"}}, trigger]},
        }

    workspace = "https://amw-ailab-prod-eus2-1a2b.eastus2.prometheus.monitor.azure.com"
    assert denied(triggers, scaler(workspace)) == []
    assert denied(triggers, scaler("https://collector.attacker.example/api"))
    assert denied(triggers, scaler("https://amw.eastus2.prometheus.monitor.azure.com.attacker.example"))
    assert denied(triggers, scaler(workspace, kind="metrics-api"))
    assert denied(triggers, scaler(workspace, {"name": "any", "kind": "ClusterTriggerAuthentication"}))
    # The platform's own objects pass.
    config = parse_platform_config(stack_values("prod"))
    for manifest in scaling_plan.scaling_manifests(config, "eus2", "client-id", workspace):
        rule = triggers if manifest["kind"] == "ScaledObject" else authentication
        if manifest["kind"] != "PodMonitor":
            assert denied(rule, manifest) == [], manifest["kind"]


def test_a_stream_consumer_scales_on_its_groups_lag_from_its_clusters_kafka_exporter(plans):
    """prod's checkpoint follower (the golden Kafka consumer) scales on its consumer group's lag:
    each cluster's Kafka runs Strimzi's Kafka Exporter for exactly the groups scaled there, on the
    Kafka pool; the platform's `strimzi` PodMonitor scrapes it (it carries the Kafka's labels and
    port), its namespace admits the scrapers; the ScaledObject reads that group's lag on that
    cluster, `lagPerReplica` each, and the example's group is the one config names."""
    import re

    import yaml

    from planning import kafka as kafka_plan
    from tests.conftest import ROOT

    config = parse_platform_config(stack_values("prod"))
    spec = config.serving.scaling["checkpoint-follower"]
    assert spec.signal == "kafka-lag"
    plan = plans["prod"]
    for key in scaling_plan.keda_clusters(config):
        view = ClusterView(plan, key, stack_values("prod"))
        (kafka,) = view.objects("kubernetes:kafka.strimzi.io/v1:Kafka", "kafka")
        exporter = kafka["spec"]["kafkaExporter"]
        assert re.fullmatch(exporter["groupRegex"], spec.consumer_group)
        assert not re.fullmatch(exporter["groupRegex"], "trainer.checkpoint-follower")
        assert (
            exporter["template"]["pod"]["tolerations"]
            == kafka["spec"]["entityOperator"]["template"]["pod"]["tolerations"]
        )
        (monitor,) = view.objects("kubernetes:azmonitoring.coreos.com/v1:PodMonitor", "kafka")
        assert {"key": "strimzi.io/kind", "operator": "In", "values": ["Kafka", "KafkaMirrorMaker2"]} in monitor[
            "spec"
        ]["selector"]["matchExpressions"]
        assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "tcp-prometheus"
        exporter_pod = (("strimzi.io/kind", "Kafka"), ("strimzi.io/name", f"{key}-kafka-exporter"))
        for scraper in METRICS_SCRAPERS:
            assert not ingress_refused(
                view, "kube-system", dict(scraper), Destination(9404, namespace="kafka", pod_labels=exporter_pod)
            )
        scaled = _scaled_objects(view, "inference")["checkpoint-follower"]["spec"]
        (trigger,) = scaled["triggers"]
        query = trigger["metadata"]["query"]
        assert (
            f'consumergroup="{spec.consumer_group}"' in query
            and f'cluster="{Naming(config.prefix, config.environment).cluster(key)}"' in query
        )
        assert trigger["metadata"]["threshold"] == str(spec.lag_per_replica)
        assert not [
            m
            for m in view.objects("kubernetes:azmonitoring.coreos.com/v1:PodMonitor", "inference")
            if m["metadata"]["name"] == "checkpoint-follower"
        ]
    (deployment,) = [
        d
        for d in yaml.safe_load_all((ROOT / "examples" / "kafka-consumer.yaml").read_text())
        if d["kind"] == "Deployment"
    ]
    assert "replicas" not in deployment["spec"]
    env = {e["name"]: e.get("value") for e in deployment["spec"]["template"]["spec"]["containers"][0]["env"]}
    group = env["KAFKA_GROUP_ID"].replace(
        "${WORKLOAD_KAFKA_GROUP_PREFIX}", kafka_plan.consumer_group_prefix("inference")
    )
    assert group == spec.consumer_group


def test_a_lag_scaling_config_kafka_cannot_feed_is_refused_by_key():
    def broken(values):
        values["platform:serving"]["scaling"] = {
            "follower": {
                "workload": "inference",
                "signal": "kafka-lag",
                "consumerGroup": "trainer.follower",
                "maxReplicas": 7,
            },
            "loader": {"workload": "inference", "maxReplicas": 2},
            "poller": {"workload": "inference", "signal": "kafka-lag", "consumerGroup": "x", "maxReplicas": 1},
        }
        values["platform:kafka"]["clients"]["inference"]["topics"] = {"checkpoint-events": "read"}

    assert_problems(
        "prod",
        broken,
        {
            "platform:serving.scaling.follower.consumerGroup": "starts with inference.",
            "platform:serving.scaling.follower.maxReplicas": "is above 6",
            "platform:serving.scaling.loader.metricsPort": "is required for queue-depth",
            "platform:serving.scaling.poller.consumerGroup": "starts with inference.",
        },
    )

    def on_event_hubs(values):
        kafka = values["platform:kafka"]
        kafka["engine"] = "eventhubs"
        kafka.pop("strimzi")
        kafka["eventHubs"] = {"sku": "Premium", "capacity": 1}
        for job in values["platform:streaming"]["jobs"].values():
            job.pop("topics", None)

    assert_problems(
        "prod", on_event_hubs, {"platform:serving.scaling.checkpoint-follower.signal": "reads Strimzi's Kafka Exporter"}
    )
