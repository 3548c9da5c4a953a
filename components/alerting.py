"""Alerts that reach a person: action groups (foundation) and each cluster's Prometheus rules.

`ActionGroups`: one Azure Monitor action group per receiver of `platform:operations.alerts`
(emails, webhooks in the common alert schema, authenticated with Entra ID). `ClusterAlerts`: the
cluster's rule groups (planning/alerts.py) in its region's Azure Monitor workspace, each alert
routed by severity to the receivers `routes` names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import alertsmanagement, monitor

from planning.alerts import AZURE_METRIC_ALERTS, RuleGroup
from stackconfig.model import ALERT_SEVERITIES, AlertsConfig


@dataclass(frozen=True)
class ActionGroupsArgs:
    settings: AlertsConfig
    # receiver -> the action group's resource name
    names: Mapping[str, str]
    resource_group_name: pulumi.Input[str]
    tags: dict[str, str]


class ActionGroups(pulumi.ComponentResource):
    """Outputs: `ids[receiver]`."""

    ids: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: ActionGroupsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:observability:ActionGroups", name, None, opts)
        self.ids = {}
        for receiver, spec in args.settings.receivers.items():
            group = monitor.ActionGroup(
                f"{name}-{receiver}",
                action_group_name=args.names[receiver],
                resource_group_name=args.resource_group_name,
                # Action groups are global resources.
                location="Global",
                # Shown in SMS and email subjects: at most 12 characters.
                group_short_name=receiver[:12],
                enabled=True,
                email_receivers=[
                    monitor.MicrosoftCommonEmailReceiverArgs(
                        name=f"email-{i}", email_address=address, use_common_alert_schema=True
                    )
                    for i, address in enumerate(spec.emails)
                ],
                webhook_receivers=[
                    monitor.WebhookReceiverArgs(
                        name=f"webhook-{i}", service_uri=url, use_common_alert_schema=True, use_aad_auth=True
                    )
                    for i, url in enumerate(spec.webhooks)
                ],
                tags=args.tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            self.ids[receiver] = group.id
        self.register_outputs({"actionGroupIds": self.ids})


@dataclass(frozen=True)
class ClusterAlertsArgs:
    cluster_key: str
    cluster_name: pulumi.Input[str]
    resource_group_name: pulumi.Input[str]
    # The cluster's region's Azure Monitor workspace, which its metrics go to.
    monitor_workspace_id: pulumi.Input[str]
    region: str
    groups: list[RuleGroup]
    # severity -> the action groups it reaches
    routes: Mapping[str, list[pulumi.Input[str]]]
    tags: dict[str, str]


class ClusterAlerts(pulumi.ComponentResource):
    def __init__(self, name: str, args: ClusterAlertsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:observability:ClusterAlerts", name, None, opts)
        for group in args.groups:
            rules = [
                alertsmanagement.PrometheusRuleArgs(
                    record=record, expression=expression, labels=labels or None, enabled=True
                )
                for record, expression, labels in group.recordings
            ] + [
                alertsmanagement.PrometheusRuleArgs(
                    alert=alert.name,
                    expression=alert.expression,
                    for_=alert.for_,
                    severity=ALERT_SEVERITIES[alert.severity],
                    enabled=True,
                    labels={"severity": alert.severity, "cluster": args.cluster_key},
                    annotations={"summary": alert.summary, "threshold": alert.why},
                    actions=[
                        alertsmanagement.PrometheusRuleGroupActionArgs(action_group_id=action_group)
                        for action_group in args.routes.get(alert.severity, [])
                    ],
                    # Resolved when the condition has been false for ten minutes.
                    resolve_configuration=alertsmanagement.PrometheusRuleResolveConfigurationArgs(
                        auto_resolved=True, time_to_resolve="PT10M"
                    ),
                )
                for alert in group.alerts
            ]
            alertsmanagement.PrometheusRuleGroup(
                f"{name}-{group.name}",
                rule_group_name=f"{group.name}-{args.cluster_key}",
                resource_group_name=args.resource_group_name,
                # In the workspace's region (its metrics' home), for this cluster's series only.
                location=args.region,
                scopes=[args.monitor_workspace_id],
                cluster_name=args.cluster_name,
                description=group.description,
                enabled=True,
                interval=group.interval,
                rules=rules,
                tags=args.tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs({})


def metric_alerts(
    name: str,
    *,
    resource_id: pulumi.Input[str],
    resource_type: str,
    resource_group_name: pulumi.Input[str],
    routes: Mapping[str, list[pulumi.Input[str]]],
    tags: dict[str, str],
    parent: pulumi.Resource,
) -> list[monitor.MetricAlert]:
    """The Azure-side alerts of one resource (planning.alerts.AZURE_METRIC_ALERTS), routed by severity."""
    created = []
    for alert in AZURE_METRIC_ALERTS[resource_type]:
        created.append(
            monitor.MetricAlert(
                f"{name}-{alert.name}",
                resource_group_name=resource_group_name,
                # Metric alert rules are global resources.
                location="global",
                description=alert.why,
                severity=ALERT_SEVERITIES[alert.severity],
                enabled=True,
                scopes=[resource_id],
                evaluation_frequency="PT1M",
                window_size=alert.window,
                auto_mitigate=True,
                target_resource_type=resource_type,
                criteria=monitor.MetricAlertSingleResourceMultipleMetricCriteriaArgs(
                    odata_type="Microsoft.Azure.Monitor.SingleResourceMultipleMetricCriteria",
                    all_of=[
                        monitor.MetricCriteriaArgs(
                            criterion_type="StaticThresholdCriterion",
                            name=alert.name,
                            metric_name=alert.metric,
                            metric_namespace=resource_type,
                            operator=alert.operator,
                            threshold=alert.threshold,
                            time_aggregation=alert.aggregation,
                        )
                    ],
                ),
                actions=[
                    monitor.MetricAlertActionArgs(action_group_id=group) for group in routes.get(alert.severity, [])
                ],
                tags=tags,
                opts=pulumi.ResourceOptions(parent=parent),
            )
        )
    return created
