"""Alerts that reach a person (issue 22, part 2): each cluster's rule groups in managed Prometheus,
action groups from config, and what the offline plan cannot show checked another way: every
expression parses as PromQL, and every metric it reads is one an exporter the platform deploys
emits (facts/metrics.py) and that the cluster actually scrapes."""

from __future__ import annotations

from functools import cache

import promql_parser
import pytest

from facts import metrics
from planning import alerts as alerts_plan
from stackconfig.model import ALERT_SEVERITIES
from tests.conftest import ALL_STACKS, stack_values
from tests.test_config_errors import expect_problem, set_in
from validation.loader import parse_platform_config

RULE_GROUP = "azure-native:alertsmanagement:PrometheusRuleGroup"
ACTION_GROUP = "azure-native:monitor:ActionGroup"
CLUSTER = "azure-native:containerservice:ManagedCluster"

# Which exporter each alert group reads, and the scrape configuration that brings its series
# into the cluster's workspace (AKS scrapes kube-state-metrics and node-exporter itself).
SOURCES = {
    "platform-nodes": (metrics.KUBE_STATE_METRICS, None),
    "platform-capacity": (metrics.KUBE_STATE_METRICS, None),
    "platform-gpu-health": (metrics.KUBE_STATE_METRICS, None),
    "platform-lustre": (metrics.KUBE_STATE_METRICS, None),
    "platform-gpus": (metrics.DCGM_METRICS, ("ServiceMonitor", "nvidia-dcgm-exporter")),
    "platform-kueue": (frozenset(metrics.KUEUE_METRICS), ("ServiceMonitor", "kueue-controller-manager")),
    "platform-kafka": (metrics.STRIMZI_METRICS, ("PodMonitor", "strimzi")),
    "platform-mirrormaker": (metrics.STRIMZI_METRICS, ("PodMonitor", "strimzi")),
    "platform-flink": (metrics.FLINK_METRICS, ("PodMonitor", None)),
    "platform-serving": (metrics.ISTIO_METRICS, ("PodMonitor", "serving-gateway")),
}


def selected_metrics(expression: str) -> set[str]:
    """The metric names an expression selects (its vector selectors), from the parsed AST."""
    found: set[str] = set()

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector) and node.name:
            found.add(node.name)

    promql_parser.walk(promql_parser.parse(expression), visit)
    return found


def test_the_parser_bites():
    assert selected_metrics('sum(rate(a_total{x="y"}[5m])) / b') == {"a_total", "b"}
    with pytest.raises(ValueError):
        promql_parser.parse("sum(rate(a_total[5m])")
    # A range where an instant vector belongs is a type error, as Prometheus reports it.
    with pytest.raises(ValueError):
        promql_parser.parse("max(a[5m]) > 1")


@cache
def _config(stack: str):
    return parse_platform_config(stack_values(stack), stack=stack)


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_expression_parses_and_reads_only_metrics_its_exporter_emits(stack):
    config = _config(stack)
    recorded = {record for rules in metrics.AKS_RECORDING_RULES.values() for record, _, _ in rules}
    for key in config.clusters:
        for group in alerts_plan.rule_groups(config, key):
            for record, expression, _ in group.recordings:
                promql_parser.parse(expression)  # Microsoft's own, verbatim: it must still parse
                assert record
            if not group.alerts:
                continue
            known, _ = SOURCES[group.name]
            for alert in group.alerts:
                unknown = selected_metrics(alert.expression) - known - recorded
                assert not unknown, (stack, key, alert.name, unknown)
                assert alert.why and alert.summary and alert.severity in ALERT_SEVERITIES


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_each_alert_groups_exporter_is_scraped_on_its_cluster(plans, stack):
    """A rule over series that never arrive never fires: each group's exporter has the scrape
    configuration (azmonitoring.coreos.com, the CRDs AKS's metrics add-on reads) on that cluster."""
    plan = plans[stack]
    config = _config(stack)
    monitors = {
        (
            r.provider.split("::")[-2].removeprefix("aks-").removesuffix("-k8s"),
            r.inputs["kind"],
            r.inputs["metadata"]["name"],
        )
        for r in plan.resources
        if r.type.startswith("kubernetes:azmonitoring.coreos.com/v1:")
    }
    for key in config.clusters:
        for group in alerts_plan.rule_groups(config, key):
            if not group.alerts:
                continue
            _, scrape = SOURCES[group.name]
            if scrape is None:
                continue
            kind, name = scrape
            assert any(c == key and k == kind and (name is None or n == name) for c, k, n in monitors), (
                stack,
                key,
                group.name,
            )


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_cluster_has_its_rule_groups_in_its_regions_workspace(plans, stack):
    plan = plans[stack]
    workspaces = {
        r.inputs["azureMonitorWorkspaceName"]: r.inputs["location"]
        for r in plan.of_type("azure-native:monitor:AzureMonitorWorkspace")
    }
    clusters = {c.inputs["resourceName"]: c.inputs["location"] for c in plan.of_type(CLUSTER)}
    groups = plan.of_type(RULE_GROUP)
    assert {g.inputs["clusterName"] for g in groups} == set(clusters)
    for group in groups:
        (scope,) = group.inputs["scopes"]
        assert workspaces[scope.rsplit("/", 1)[-1]] == group.inputs["location"] == clusters[group.inputs["clusterName"]]
        assert len(group.inputs["ruleGroupName"]) <= 260
    # AKS's dashboards read the recording rules: every cluster has all three groups.
    for name in clusters:
        recorded = {
            rule["record"]
            for g in groups
            if g.inputs["clusterName"] == name
            for rule in g.inputs["rules"]
            if "record" in rule
        }
        assert recorded == {r for rules in metrics.AKS_RECORDING_RULES.values() for r, _, _ in rules}


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_critical_alerts_reach_someone_in_staging_and_prod(plans, stack):
    plan = plans[stack]
    receivers = stack_values(stack)["platform:operations"]["alerts"]["routes"]["critical"]
    action_groups = {g.inputs["actionGroupName"]: g for g in plan.of_type(ACTION_GROUP)}
    assert action_groups and all(g.inputs["location"] == "Global" for g in action_groups.values())
    for group in action_groups.values():
        assert group.inputs.get("emailReceivers") or group.inputs.get("webhookReceivers")
        for hook in group.inputs.get("webhookReceivers", []):
            assert hook["useAadAuth"] is True and "?" not in hook["serviceUri"]
    critical = [
        rule
        for g in plan.of_type(RULE_GROUP)
        for rule in g.inputs["rules"]
        if rule.get("severity") == ALERT_SEVERITIES["critical"]
    ]
    for rule in critical:
        reached = {a["actionGroupId"].rsplit("/", 1)[-1] for a in rule["actions"]}
        assert reached == {f"ag-ailab-{stack}-{r}" for r in receivers}, rule["alert"]


def test_a_route_names_a_receiver_and_a_receiver_reaches_someone():
    expect_problem(
        "prod",
        set_in("operations.alerts.routes", {"critical": ["pager"]}),
        "platform:operations.alerts.routes.critical[0]",
        "not a receiver",
    )
    expect_problem(
        "prod",
        set_in("operations.alerts.receivers.platform", {"emails": []}),
        "platform:operations.alerts.receivers.platform",
        "reaches nobody",
    )
    expect_problem(
        "prod",
        set_in("operations.alerts.receivers.platform", {"webhooks": ["https://hooks.example.com/x?token=secret"]}),
        "platform:operations.alerts.receivers.platform.webhooks[0]",
    )


METRIC_ALERT = "azure-native:monitor:MetricAlert"
WATCHED = {
    "azure-native:network:AzureFirewall": "Microsoft.Network/azureFirewalls",
    "azure-native:storage:StorageAccount": "Microsoft.Storage/storageAccounts",
    "azure-native:keyvault:Vault": "Microsoft.KeyVault/vaults",
    "azure-native:eventhub:Namespace": "Microsoft.EventHub/namespaces",
    "azure-native:storagecache:AmlFilesystem": "Microsoft.StorageCache/amlFilesystems",
}


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_azure_side_signals_have_metric_alerts_on_every_resource(plans, stack):
    """What Prometheus does not see: each firewall, storage account (replicas too), vault and
    Event Hubs namespace has its Azure Monitor metric alerts, on itself, routed by severity."""
    from tests.test_private_data import resource_id

    plan = plans[stack]
    config = _config(stack)
    alerts_by_scope: dict[str, set[str]] = {}
    for alert in plan.of_type(METRIC_ALERT):
        (scope,) = alert.inputs["scopes"]
        (criterion,) = alert.inputs["criteria"]["allOf"]
        assert criterion["metricNamespace"] == alert.inputs["targetResourceType"]
        alerts_by_scope.setdefault(scope, set()).add(criterion["metricName"])
        severity = next(s for s, n in ALERT_SEVERITIES.items() if n == alert.inputs["severity"])
        assert len(alert.inputs.get("actions", [])) == len(config.operations.alerts.routes.get(severity, []))
    watched = [r for token in WATCHED for r in plan.of_type(token)]
    assert watched
    for resource in watched:
        expected = {a.metric for a in alerts_plan.AZURE_METRIC_ALERTS[WATCHED[resource.type]]}
        assert alerts_by_scope.get(resource_id(resource)) == expected, resource.name


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_node_labels_the_alerts_read_are_exported_by_each_cluster(plans, stack):
    """kube_node_labels carries only the labels AKS's kube-state-metrics is allowed to export:
    an alert matching `label_<name>` of any other label never fires."""
    config = _config(stack)
    exported = {alerts_plan.label_series(label) for label in alerts_plan.EXPORTED_NODE_LABELS}
    read: set[str] = set()

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector) and node.name == "kube_node_labels":
            read.update(m.name for m in node.matchers.matchers if m.name.startswith("label_"))

    for key in config.clusters:
        for group in alerts_plan.rule_groups(config, key):
            for alert in group.alerts:
                promql_parser.walk(promql_parser.parse(alert.expression), visit)
    assert read and read <= exported, read - exported
    for cluster in plans[stack].of_type(CLUSTER):
        ksm = cluster.inputs["azureMonitorProfile"]["metrics"]["kubeStateMetrics"]
        assert ksm["metricLabelsAllowlist"] == alerts_plan.kube_state_metric_labels(), cluster.name
