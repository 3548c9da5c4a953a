"""Environment-wide observability: Log Analytics (audit logs, Defender) and the Azure
Monitor workspace that stores managed Prometheus metrics. Per-cluster wiring (data
collection endpoint/rule/association, diagnostic settings) lives in the cluster component."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import monitor, operationalinsights

from components.groups import resource_group
from planning.naming import Naming


@dataclass(frozen=True)
class ObservabilityArgs:
    naming: Naming
    region: str
    retention_days: int
    protect: bool
    tags: dict[str, str]


class Observability(pulumi.ComponentResource):
    resource_group_name: pulumi.Output[str]
    log_analytics_workspace_id: pulumi.Output[str]
    monitor_workspace_id: pulumi.Output[str]

    def __init__(self, name: str, args: ObservabilityArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:observability:Observability", name, None, opts)
        naming = args.naming
        stateful = pulumi.ResourceOptions(parent=self, protect=args.protect)

        group = resource_group(name, naming.regional("rg", args.region, "ops"), args.region, args.tags, parent=self)
        workspace = operationalinsights.Workspace(
            f"{name}-logs",
            workspace_name=naming.regional("log", args.region),
            resource_group_name=group.name,
            location=args.region,
            sku=operationalinsights.WorkspaceSkuArgs(name=operationalinsights.WorkspaceSkuNameEnum.PER_GB2018),
            retention_in_days=args.retention_days,
            # Entra ID only: no workspace shared keys for ingestion or queries.
            features=operationalinsights.WorkspaceFeaturesArgs(disable_local_auth=True),
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

        self.resource_group_name = group.name
        self.log_analytics_workspace_id = workspace.id
        self.monitor_workspace_id = metrics.id
        self.region = args.region
        self.register_outputs(
            {
                "logAnalyticsWorkspaceId": workspace.id,
                "monitorWorkspaceId": metrics.id,
            }
        )


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
