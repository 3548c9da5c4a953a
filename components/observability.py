"""A region's observability: Log Analytics (audit logs, Defender, Container Insights) with each
table's plan and retention, the Azure Monitor workspace that stores managed Prometheus
metrics, and the data collection endpoint its clusters' agents ingest and fetch their
configuration through (private when the environment uses a private link scope). Per-cluster
wiring (collection rules and associations, diagnostic settings) lives in the cluster component."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
import pulumi_kubernetes as kubernetes
from pulumi_azure_native import monitor, operationalinsights, resources

from components.groups import resource_group
from planning.naming import Naming
from stackconfig.model import ContainerLogsConfig


@dataclass(frozen=True)
class ObservabilityArgs:
    naming: Naming
    region: str
    retention_days: int
    protect: bool
    tags: dict[str, str]
    container_logs: ContainerLogsConfig = field(default_factory=ContainerLogsConfig)
    # Ingestion only through a private link scope: the endpoint and the workspace refuse public ingestion.
    private_ingestion: bool = False
    # The unit creates its resource groups (platform:resourceGroups: program), or uses the delivery's.
    create_groups: bool = False


class Observability(pulumi.ComponentResource):
    resource_group_name: pulumi.Output[str]
    log_analytics_workspace_id: pulumi.Output[str]
    monitor_workspace_id: pulumi.Output[str]
    data_collection_endpoint_id: pulumi.Output[str]
    # What PromQL queries go to (KEDA's scaler: planning/serving_scaling.py).
    prometheus_query_endpoint: pulumi.Output[str]

    def __init__(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:observability:Observability", name, None, opts)
        naming = args.naming
        stateful = pulumi.ResourceOptions(parent=self, protect=args.protect)

        group = resource_group(
            name,
            naming.regional("rg", args.region, "ops"),
            args.region,
            args.tags,
            parent=self,
            create=args.create_groups,
        )
        workspace = operationalinsights.Workspace(
            f"{name}-logs",
            workspace_name=naming.regional("log", args.region),
            resource_group_name=group.name,
            location=args.region,
            sku=operationalinsights.WorkspaceSkuArgs(name=operationalinsights.WorkspaceSkuNameEnum.PER_GB2018),
            retention_in_days=args.retention_days,
            # Entra ID only: no workspace shared keys for ingestion or queries.
            features=operationalinsights.WorkspaceFeaturesArgs(disable_local_auth=True),
            # Log Analytics ingestion ignores the scope's access mode: the workspace itself refuses
            # public ingestion. Queries stay open to Entra ID (the portal's Container Insights views
            # query through Resource Manager); learn.microsoft.com/azure/azure-monitor/logs/private-link-design.
            public_network_access_for_ingestion=operationalinsights.PublicNetworkAccessType.DISABLED
            if args.private_ingestion
            else operationalinsights.PublicNetworkAccessType.ENABLED,
            public_network_access_for_query=operationalinsights.PublicNetworkAccessType.ENABLED,
            tags=args.tags,
            opts=stateful,
        )
        metrics = monitor.AzureMonitorWorkspace(
            f"{name}-prometheus",
            azure_monitor_workspace_name=naming.regional("amw", args.region),
            resource_group_name=group.name,
            location=args.region,
            tags=args.tags,
            opts=stateful,
        )

        # One endpoint for the region's clusters: Prometheus ingestion (the rules' endpoint) and the
        # agents' configuration (the clusters' `configurationAccessEndpoint` association).
        endpoint = monitor.DataCollectionEndpoint(
            f"{name}-dce",
            data_collection_endpoint_name=naming.regional("dce", args.region),
            resource_group_name=group.name,
            location=args.region,
            kind=monitor.KnownDataCollectionEndpointResourceKind.LINUX,
            network_acls=monitor.DataCollectionEndpointNetworkAclsArgs(
                public_network_access=monitor.KnownPublicNetworkAccessOptions.DISABLED
                if args.private_ingestion
                else monitor.KnownPublicNetworkAccessOptions.ENABLED
            ),
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        if args.container_logs.tables:
            # Built-in tables exist with the workspace, and the provider refuses to create a
            # resource that exists (`cannot create already existing resource`): an incremental
            # ARM deployment PUTs the tables' plan and retention over them instead.
            resources.Deployment(
                f"{name}-tables",
                deployment_name=f"tables-{naming.regional('log', args.region)}"[:64],
                resource_group_name=group.name,
                properties=resources.DeploymentPropertiesArgs(
                    mode=resources.DeploymentMode.INCREMENTAL,
                    template=workspace.name.apply(
                        lambda workspace_name: tables_template(workspace_name, args.container_logs)
                    ),
                ),
                tags=args.tags,
                opts=pulumi.ResourceOptions(parent=self, depends_on=[workspace]),
            )

        self.resource_group_name = group.name
        self.log_analytics_workspace_id = workspace.id
        self.monitor_workspace_id = metrics.id
        self.prometheus_query_endpoint = metrics.metrics.apply(lambda m: m.prometheus_query_endpoint)
        self.data_collection_endpoint_id = endpoint.id
        self.region = args.region
        self.register_outputs(
            {
                "logAnalyticsWorkspaceId": workspace.id,
                "monitorWorkspaceId": metrics.id,
                "dataCollectionEndpointId": endpoint.id,
            }
        )


# The tables API version the template writes (Microsoft.OperationalInsights/workspaces/tables).
TABLES_API_VERSION = "2023-09-01"


def tables_template(workspace_name: str, logs: ContainerLogsConfig) -> dict:
    """An ARM template setting each configured table's plan and retention (interactive, total)."""
    tables = []
    for table, settings in logs.tables.items():
        properties: dict = {"plan": settings.plan}
        if settings.retention_days is not None:
            properties["retentionInDays"] = settings.retention_days
        if settings.total_retention_days is not None:
            properties["totalRetentionInDays"] = settings.total_retention_days
        tables.append(
            {
                "type": "Microsoft.OperationalInsights/workspaces/tables",
                "apiVersion": TABLES_API_VERSION,
                "name": f"{workspace_name}/{table}",
                "properties": properties,
            }
        )
    return {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
        "contentVersion": "1.0.0.0",
        "resources": tables,
    }


# The agent's own settings (microsoft/Docker-Provider kubernetes/container-azm-ms-agentconfig.yaml):
# container stdout/stderr logs are filtered here, not by the collection rule's namespace filter
# (which covers inventory and metrics). Without it the agent skips these two by default.
AGENT_CONFIG_MAP = "container-azm-ms-agentconfig"
AGENT_DEFAULT_EXCLUDED = ("kube-system", "gatekeeper-system")


def agent_config(logs: ContainerLogsConfig) -> dict[str, str]:
    """The agent's ConfigMap data: which namespaces' container logs it leaves out."""
    excluded = list(dict.fromkeys([*AGENT_DEFAULT_EXCLUDED, *logs.namespaces]))
    namespaces = ", ".join(f'"{namespace}"' for namespace in excluded)
    settings = "\n".join(
        [
            "[log_collection_settings]",
            *(
                f"  [log_collection_settings.{stream}]\n    enabled = true\n    exclude_namespaces = [{namespaces}]"
                for stream in ("stdout", "stderr")
            ),
        ]
    )
    return {"schema-version": "v1", "config-version": "ver1", "log-data-collection-settings": settings}


@dataclass(frozen=True)
class ClusterLogSettingsArgs:
    container_logs: ContainerLogsConfig


class ClusterLogSettings(pulumi.ComponentResource):
    """Inside one cluster: the Container Insights agent's settings (kube-system's ConfigMap)."""

    def __init__(
        self,
        name: str,
        args: ClusterLogSettingsArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:observability:ClusterLogSettings", name, None, opts)
        kubernetes.core.v1.ConfigMap(
            f"{name}-agent",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=AGENT_CONFIG_MAP, namespace="kube-system"),
            data=agent_config(args.container_logs),
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        self.register_outputs({})


def send_logs(
    name: str,
    *,
    resource_uri: pulumi.Input[str],
    workspace_id: pulumi.Input[str],
    categories: tuple[str, ...],
    parent: pulumi.Resource,
) -> monitor.DiagnosticSetting:
    """Send a resource's log categories to the environment's Log Analytics workspace."""
    return monitor.DiagnosticSetting(
        name,
        name="logs-to-log-analytics",
        resource_uri=resource_uri,
        workspace_id=workspace_id,
        # Resource-specific tables (AKSAudit, StorageBlobLogs, ...) rather than AzureDiagnostics.
        log_analytics_destination_type="Dedicated",
        logs=[monitor.DiagnosticsLogSettingsArgs(category=category, enabled=True) for category in categories],
        opts=pulumi.ResourceOptions(parent=parent),
    )
