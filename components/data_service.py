"""What every private data service gets beside its private endpoint (Event Hubs, Cosmos DB,
PostgreSQL): its logs in the workspace, its Azure Monitor alerts routed by severity, and, where the
environment locks stateful resources, a delete lock."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi

from components.alerting import metric_alerts
from components.observability import send_logs
from components.private_dns import DataPlaneSettings
from components.rbac import lock_against_deletion


def watch_and_keep(
    name: str,
    service: DataPlaneSettings,
    *,
    resource_id: pulumi.Input[str],
    resource_type: str,
    what: str,
    resource_group_name: pulumi.Input[str],
    log_categories: tuple[str, ...],
    alert_routes: Mapping[str, list[pulumi.Input[str]]],
    parent: pulumi.Resource,
    alerts: bool = True,
) -> None:
    """`resource_type` names its alerts (planning/alerts.py, AZURE_METRIC_ALERTS); `what` its lock."""
    if alerts:
        metric_alerts(
            f"{name}-alert",
            resource_id=resource_id,
            resource_type=resource_type,
            resource_group_name=resource_group_name,
            routes=alert_routes,
            tags=service.tags,
            parent=parent,
        )
    send_logs(
        f"{name}-logs",
        resource_uri=resource_id,
        workspace_id=service.log_analytics_workspace_id,
        categories=log_categories,
        parent=parent,
    )
    if service.lock:
        lock_against_deletion(f"{name}-lock", scope=resource_id, what=what, parent=parent)
