"""Operations: alerts, GPU health, logs, Azure Monitor private link, Grafana."""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field, StringConstraints

from stackconfig.model.base import (
    Duration,
    Model,
    NamespaceName,
    ShortName,
    UuidList,
)

EmailAddress = Annotated[str, StringConstraints(pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$", max_length=254)]
# An HTTPS endpoint without credentials in it (no user info, no query string): config holds no secret.
WebhookUrl = Annotated[str, StringConstraints(pattern=r"^https://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$")]
AlertSeverity = Literal["critical", "error", "warning", "informational"]
# Azure Monitor's severities (learn.microsoft.com/azure/azure-monitor/alerts/alerts-overview): Sev0-Sev3.
ALERT_SEVERITIES: dict[str, int] = {"critical": 0, "error": 1, "warning": 2, "informational": 3}


class AlertReceiverConfig(Model):
    """One group of people or systems alerts go to: an Azure Monitor action group."""

    emails: list[EmailAddress] = Field(default_factory=list, description="Addresses that get the alert by email.")
    webhooks: list[WebhookUrl] = Field(
        default_factory=list,
        description="HTTPS endpoints (an incident tool) that get it in the common alert schema; no credential "
        "in the URL (config holds no secret): the endpoint trusts the action group's Entra ID token.",
    )


class AlertsConfig(Model):
    """Who is told when something breaks (docs/operations.md, "Alerts")."""

    receivers: dict[ShortName, AlertReceiverConfig] = Field(
        default_factory=dict, description="Action groups by a short name (e.g. `oncall`, `platform`)."
    )
    routes: dict[AlertSeverity, list[ShortName]] = Field(
        default_factory=dict,
        description="`{critical|error|warning|informational: [receiver, ...]}`: which receivers each severity "
        "reaches. A severity with no route fires without telling anyone (it still shows in Azure Monitor).",
    )


class GpuRemediationConfig(Model):
    """How a GPU node with a fault leaves service: kured drains it (evictions, so PodDisruptionBudgets
    hold) and reboots it; the node's preflight runs again before it takes work."""

    enabled: bool = Field(
        default=True,
        description="Reboot faulty GPU nodes automatically. Off: a fault only taints the node and alerts; a person "
        "drains it.",
    )
    concurrency: int = Field(
        default=1,
        ge=1,
        le=20,
        description="GPU nodes of a cluster drained and rebooted at once (kured's lock): the rate limit that keeps a "
        "bad driver rollout from draining a whole pool.",
    )
    min_reboot_interval: Duration = Field(
        default="24h",
        description="A node asks for a reboot at most this often; a fault that survives a reboot stays tainted "
        "for a person (alert GpuNodeUnhealthy).",
    )
    wait_for_jobs: bool = Field(
        default=True,
        description="Never drain a node while a pod of an admitted Kueue job runs on it: a gang finishes (or fails "
        "by itself) first. Off: the node is drained at once.",
    )
    drain_timeout: Duration = Field(
        default="30m", description="Give up a drain after this long (the node is uncordoned and retried later)."
    )


class GpuHealthConfig(Model):
    """Preflight and passive health checks on every GPU node (docs/gpus.md, "Health")."""

    diag_level: Literal[1, 2, 3] = Field(
        default=1,
        description="Level of DCGM's diagnostic in preflight: 1 (software and configuration, seconds), 2 (adds "
        "PCIe/NVLink bandwidth and short GPU tests, minutes), 3 (adds stress, tens of minutes).",
    )
    check_interval: Duration = Field(
        default="60s",
        description="How often passive checks run (DCGM health watches, GPU count, InfiniBand ports). A node's "
        "result expires after three intervals without a check, closing the gate.",
    )
    remediation: GpuRemediationConfig = Field(
        default_factory=GpuRemediationConfig, description="How a faulty node is drained and rebooted."
    )


# The tables Container Insights writes (its data collection rule's streams, Microsoft's template
# in microsoft/Docker-Provider scripts/onboarding/aks/onboarding-msi-bicep), and the one of them
# whose plan may be Basic (learn.microsoft.com/azure/azure-monitor/logs/logs-table-plans: built-in
# tables that support Basic; the page converts ContainerLogV2 as its example).
ContainerInsightsTable = Literal[
    "ContainerLogV2",
    "KubeEvents",
    "KubePodInventory",
    "KubeNodeInventory",
    "KubePVInventory",
    "KubeServices",
    "KubeMonAgentEvents",
    "InsightsMetrics",
    "ContainerInventory",
    "ContainerNodeInventory",
    "Perf",
]
BASIC_PLAN_TABLES = ("ContainerLogV2",)


class LogTableConfig(Model):
    """One Log Analytics table's plan and retention."""

    plan: Literal["Analytics", "Basic"] = Field(
        default="Analytics",
        description="`Analytics` (full KQL, alerts; interactive retention up to 2 years) or `Basic` (about a fifth "
        "of the ingestion price, 30 days interactive, limited queries): for high-volume logs read only in incidents.",
    )
    retention_days: Optional[int] = Field(
        default=None,
        ge=4,
        le=730,
        description="Interactive retention of an Analytics table (4-730 days). Unset: the workspace's. Basic tables "
        "are fixed at 30.",
    )
    total_retention_days: Optional[int] = Field(
        default=None,
        ge=4,
        le=4383,
        description="Total retention, interactive plus long-term (up to 12 years), at the long-term price. Unset: "
        "the interactive retention.",
    )


class ContainerLogsConfig(Model):
    """Container Insights on every cluster: the Azure Monitor agent, with its managed identity,
    sends logs, events and inventory to its region's Log Analytics workspace (docs/operations.md, "Logs")."""

    enabled: bool = Field(default=True, description="Collect container logs, Kubernetes events and inventory.")
    interval: Duration = Field(default="1m", description="How often inventory and metrics are collected.")
    namespace_filtering_mode: Literal["Off", "Exclude"] = Field(
        default="Off",
        description="`Off` (every namespace but AKS's `kube-system` and `gatekeeper-system`, whose container "
        "logs the agent skips by default) or `Exclude` (also `namespaces`): container logs, inventory and metrics.",
    )
    namespaces: list[NamespaceName] = Field(
        default_factory=list, description="The namespaces `namespaceFilteringMode: Exclude` leaves out."
    )
    tables: dict[ContainerInsightsTable, LogTableConfig] = Field(
        default_factory=dict,
        description="Plan and retention per table; tables not named keep Analytics and the workspace's retention.",
    )


class MonitoringPrivateLinkConfig(Model):
    """Azure Monitor Private Link Scope (AMPLS): the agents' log and metric ingestion stays on
    private endpoints. A VNet can use one scope and Microsoft puts it with the DNS zones: the
    environment's own (one endpoint per region with clusters, in its zones), or the hub's."""

    enabled: bool = Field(
        default=True, description="Ingest through a private link scope; off, the agents use public endpoints."
    )
    scope_id: Optional[
        Annotated[
            str,
            StringConstraints(
                pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+"
                r"/providers/microsoft\.insights/privateLinkScopes/[-\w._]+$"
            ),
        ]
    ] = Field(
        default=None,
        description="The hub's scope, when the hub's shared zones serve several environments "
        "(`network.hub.privateDnsZonesResourceGroupId`): the hub's owner adds the environment's workspaces and "
        "endpoints to it (stack output `hubRequests`) and owns its private endpoint; the environment writes nothing "
        "there. Unset: the environment's own scope.",
    )
    query_access: Literal["Open", "PrivateOnly"] = Field(
        default="Open",
        description="Queries through the scope only (`PrivateOnly`) or from anywhere with Entra ID (`Open`): the "
        "portal's Container Insights views query through Azure Resource Manager and need `Open`.",
    )


class GrafanaConfig(Model):
    """Azure Managed Grafana: private, Entra ID sign-in, reading every region's Prometheus
    metrics; the dashboards in dashboards/ are provisioned by the tenants unit."""

    enabled: bool = Field(default=True, description="Create the environment's Grafana and its dashboards.")
    admins: UuidList = Field(
        default_factory=list,
        description="Entra ID groups with Grafana Admin (dashboards, data sources, users). Empty: the environment's "
        "`entra.adminGroupObjectIds`.",
    )
    viewers: UuidList = Field(default_factory=list, description="Entra ID groups with Grafana Viewer.")
    zone_redundant: bool = Field(default=False, description="Spread the instance over availability zones.")


class OperationsConfig(Model):
    log_retention_days: int = Field(default=90, ge=30, le=730, description="Log Analytics retention, 30-730.")
    defender: bool = Field(
        default=True,
        description="Microsoft Defender for Containers' sensor on each cluster, reporting to the "
        "environment's Log Analytics workspace; what it covers today: docs/operations.md, "
        "\"Defender\".",
    )
    image_cleaner_interval_hours: int = Field(
        default=168, ge=24, le=2160, description="How often unused images are removed from nodes."
    )
    secret_rotation_interval: Duration = Field(default="2m", description="Key Vault CSI driver rotation poll interval.")
    alerts: AlertsConfig = Field(
        default_factory=AlertsConfig,
        description="Alert receivers and severity routing; staging and prod must route critical alerts "
        "(policy alerting-on-every-cluster).",
    )
    gpu_health: GpuHealthConfig = Field(
        default_factory=GpuHealthConfig,
        description="GPU preflight and passive health checks and the remediation of faulty nodes.",
    )
    container_logs: ContainerLogsConfig = Field(
        default_factory=ContainerLogsConfig, description="Container Insights: logs, events and inventory."
    )
    private_link_scope: MonitoringPrivateLinkConfig = Field(
        default_factory=MonitoringPrivateLinkConfig, description="Private ingestion of logs and metrics (AMPLS)."
    )
    grafana: GrafanaConfig = Field(default_factory=GrafanaConfig, description="Azure Managed Grafana and dashboards.")
