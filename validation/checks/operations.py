"""Alerts, logs and Grafana."""

from __future__ import annotations

from collections.abc import Iterator

from stackconfig.keys import key
from stackconfig.model import (
    BASIC_PLAN_TABLES,
    PlatformConfig,
)
from validation.checks.common import ConfigProblem


def check_alerts(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Routes name receivers that exist; a receiver reaches someone."""
    alerts = config.operations.alerts
    for name, receiver in alerts.receivers.items():
        if not receiver.emails and not receiver.webhooks:
            yield ConfigProblem(
                key("operations", "alerts", "receivers", name), "reaches nobody: give it emails or webhooks"
            )
    for severity, routed in alerts.routes.items():
        for i, target in enumerate(routed):
            if target not in alerts.receivers:
                yield ConfigProblem(
                    key("operations", "alerts", "routes", severity, i),
                    f"{target} is not a receiver of platform:operations.alerts.receivers "
                    f"({', '.join(alerts.receivers) or 'none'})",
                )


GRAFANA_NAME_MAX = 23


def check_monitoring(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Table plans the tables support; a namespace filter that names namespaces; one private
    link scope per DNS: the hub's when its shared zones serve the environment."""
    logs = config.operations.container_logs
    for table, settings in logs.tables.items():
        where = ("operations", "containerLogs", "tables", table)
        if settings.plan == "Basic" and table not in BASIC_PLAN_TABLES:
            yield ConfigProblem(
                key(*where, "plan"),
                f"{table} cannot use the Basic plan (of Container Insights' tables only {', '.join(BASIC_PLAN_TABLES)} can)",
            )
        if settings.plan == "Basic" and settings.retention_days is not None:
            yield ConfigProblem(
                key(*where, "retentionDays"),
                "a Basic table keeps 30 days interactive; set totalRetentionDays for longer",
            )
        interactive = settings.retention_days or (
            30 if settings.plan == "Basic" else config.operations.log_retention_days
        )
        if settings.total_retention_days is not None and settings.total_retention_days < interactive:
            yield ConfigProblem(
                key(*where, "totalRetentionDays"),
                f"{settings.total_retention_days} is shorter than the table's interactive retention ({interactive} days)",
            )
    if (logs.namespace_filtering_mode == "Off") != (not logs.namespaces):
        yield ConfigProblem(
            key("operations", "containerLogs", "namespaces"),
            "name namespaces exactly when namespaceFilteringMode is Exclude",
        )
    # Managed Grafana names: 2-23 letters, digits and hyphens (Microsoft.Dashboard/grafana).
    grafana_name = f"grafana-{config.prefix}-{config.environment}"
    if config.operations.grafana.enabled and len(grafana_name) > GRAFANA_NAME_MAX:
        yield ConfigProblem(
            key("operations", "grafana", "enabled"),
            f"the instance's name {grafana_name!r} is longer than Managed Grafana's {GRAFANA_NAME_MAX} characters: "
            "shorten platform:prefix or the environment's name",
        )
    scope = config.operations.private_link_scope
    shared_zones = config.network.hub is not None and config.network.hub.private_dns_zones_resource_group_id
    if scope.enabled and shared_zones and not scope.scope_id:
        yield ConfigProblem(
            key("operations", "privateLinkScope", "scopeId"),
            "the hub's shared zones serve this environment, and a VNet uses one Azure Monitor private link scope "
            "per DNS: name the hub's scope (or set enabled: false)",
        )
    hub = config.network.hub
    if hub is not None and hub.create_hub_side_peering and hub.private_dns_zones_resource_group_id:
        yield ConfigProblem(
            key("network", "hub", "createHubSidePeering"),
            "the hub's shared zones say it serves several environments, and such a hub is written by its owner "
            "alone (one environment could change another's peering): leave it false and hand the hub its half "
            "(stack output hubRequests)",
        )
    if scope.scope_id and not shared_zones:
        yield ConfigProblem(
            key("operations", "privateLinkScope", "scopeId"),
            "a hub's scope needs the hub's zones (network.hub.privateDnsZonesResourceGroupId); with the "
            "environment's own zones, leave it unset and the environment creates its own",
        )
