"""What a Kubernetes cluster sends to Azure Monitor, and how: the data collection rules and their
associations on one cluster resource. An AKS cluster and an Arc connected cluster take the same
rules (managed Prometheus into the region's Azure Monitor workspace, Container Insights into its
Log Analytics workspace), both through the region's collection endpoint, which is private when
the environment has a private link scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, get_args

import pulumi
from pulumi_azure_native import monitor

from planning.naming import Naming
from stackconfig.model import ContainerInsightsTable, ContainerLogsConfig

# The SDK's KnownDataFlowStreams enum does not list the Prometheus stream.
PROMETHEUS_STREAM = "Microsoft-PrometheusMetrics"


@dataclass(frozen=True)
class ClusterMonitoring:
    log_analytics_workspace_id: pulumi.Input[str]
    monitor_workspace_id: pulumi.Input[str]
    monitor_workspace_region: str
    # The region's collection endpoint (components/observability.py): Prometheus ingestion and
    # the agents' configuration, private when the environment uses a private link scope.
    data_collection_endpoint_id: pulumi.Input[str]
    container_logs: ContainerLogsConfig = field(default_factory=ContainerLogsConfig)


@dataclass(frozen=True)
class CollectionTarget:
    """The cluster the rules are associated with, and where the rules go."""

    naming: Naming
    key: str
    group_name: pulumi.Input[str]
    resource_uri: pulumi.Input[str]
    tags: dict[str, str]
    parent: pulumi.Resource


def prometheus_collection(name: str, monitoring: ClusterMonitoring, target: CollectionTarget) -> None:
    """Managed Prometheus: the rule lives in the Azure Monitor workspace's region (as in AKS's own
    template) and ingests through the region's endpoint; the association on the cluster."""
    naming, key = target.naming, target.key
    child = pulumi.ResourceOptions(parent=target.parent)
    rule = monitor.DataCollectionRule(
        f"{name}-prometheus-dcr",
        data_collection_rule_name=naming.name("dcr", key, "prometheus"),
        resource_group_name=target.group_name,
        location=monitoring.monitor_workspace_region,
        kind=monitor.KnownDataCollectionRuleResourceKind.LINUX,
        data_collection_endpoint_id=monitoring.data_collection_endpoint_id,
        data_sources=monitor.DataCollectionRuleDataSourcesArgs(
            prometheus_forwarder=[
                monitor.PrometheusForwarderDataSourceArgs(
                    name="PrometheusDataSource",
                    streams=[monitor.KnownPrometheusForwarderDataSourceStreams.MICROSOFT_PROMETHEUS_METRICS],
                    label_include_filter={},
                )
            ]
        ),
        destinations=monitor.DataCollectionRuleDestinationsArgs(
            monitoring_accounts=[
                monitor.MonitoringAccountDestinationArgs(
                    account_resource_id=monitoring.monitor_workspace_id, name="MonitoringAccount1"
                )
            ]
        ),
        data_flows=[monitor.DataFlowArgs(streams=[PROMETHEUS_STREAM], destinations=["MonitoringAccount1"])],
        tags=target.tags,
        opts=child,
    )
    monitor.DataCollectionRuleAssociation(
        f"{name}-prometheus-dcra",
        association_name=naming.name("dcra", key, "prometheus"),
        resource_uri=target.resource_uri,
        data_collection_rule_id=rule.id,
        opts=child,
    )


def container_insights_collection(name: str, monitoring: ClusterMonitoring, target: CollectionTarget) -> None:
    """Container Insights through the Azure Monitor agent (its managed identity, `useAADAuth`):
    the collection rule, and the cluster's two associations, as Microsoft's templates have them
    (microsoft/Docker-Provider scripts/onboarding/aks/onboarding-using-msi-auth, and
    templates/arc-k8s-extension-msi-auth for a connected cluster): the rule's
    `ContainerInsightsExtension`, and `configurationAccessEndpoint` (a name Azure requires) to the
    region's endpoint, private with a private link scope."""
    naming, key = target.naming, target.key
    logs = monitoring.container_logs
    child = pulumi.ResourceOptions(parent=target.parent)
    streams = [f"Microsoft-{table}" for table in get_args(ContainerInsightsTable)]
    settings: dict[str, Any] = {
        "interval": logs.interval,
        "namespaceFilteringMode": logs.namespace_filtering_mode,
        "enableContainerLogV2": True,
    }
    if logs.namespaces:
        settings["namespaces"] = list(logs.namespaces)
    rule = monitor.DataCollectionRule(
        f"{name}-logs-dcr",
        data_collection_rule_name=naming.name("dcr", key, "logs"),
        resource_group_name=target.group_name,
        location=monitoring.monitor_workspace_region,
        kind=monitor.KnownDataCollectionRuleResourceKind.LINUX,
        data_sources=monitor.DataCollectionRuleDataSourcesArgs(
            extensions=[
                monitor.ExtensionDataSourceArgs(
                    name="ContainerInsightsExtension",
                    extension_name="ContainerInsights",
                    streams=streams,
                    extension_settings={"dataCollectionSettings": settings},
                )
            ]
        ),
        destinations=monitor.DataCollectionRuleDestinationsArgs(
            log_analytics=[
                monitor.LogAnalyticsDestinationArgs(
                    name="ciworkspace", workspace_resource_id=monitoring.log_analytics_workspace_id
                )
            ]
        ),
        data_flows=[monitor.DataFlowArgs(streams=streams, destinations=["ciworkspace"])],
        tags=target.tags,
        opts=child,
    )
    monitor.DataCollectionRuleAssociation(
        f"{name}-logs-dcra",
        association_name="ContainerInsightsExtension",
        resource_uri=target.resource_uri,
        data_collection_rule_id=rule.id,
        opts=child,
    )
    monitor.DataCollectionRuleAssociation(
        f"{name}-config-dcea",
        association_name="configurationAccessEndpoint",
        resource_uri=target.resource_uri,
        data_collection_endpoint_id=monitoring.data_collection_endpoint_id,
        opts=child,
    )
