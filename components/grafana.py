"""Azure Managed Grafana for the environment, and the dashboards in dashboards/.

- `ManagedGrafana` (foundation): the instance, private (a private endpoint in the primary
  region, public access off), Entra ID sign-in only (no API keys or service-account tokens:
  a Grafana Admin could mint one that outlives their Azure role), reading every region's Azure
  Monitor workspace (Monitoring Data Reader) and Log Analytics workspace (Monitoring Reader)
  with its own managed identity; Grafana Admin and Viewer for the configured groups.
- `Dashboards` (tenants): each JSON file of dashboards/ as a Grafana dashboard, through the
  pulumiverse Grafana provider signed in with the deploying identity's Entra ID token. It runs
  where the private endpoint is reachable (the hub's runners) and after the foundation, when
  the deploying identity's Grafana Admin has had time to apply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pulumi
import pulumiverse_grafana as grafana
from pulumi_azure_native import authorization, dashboard

from components.private_dns import PrivateEndpoints
from components.rbac import assign_role
from planning.naming import Naming

DASHBOARDS = Path(__file__).resolve().parent.parent / "dashboards"
# The Entra ID application a token for Managed Grafana's API is issued to (`az account
# get-access-token --resource <it>`): learn.microsoft.com/azure/managed-grafana/
# how-to-authenticate-data-plane-api (2026).
GRAFANA_TOKEN_AUDIENCE = "6f2d169c-08f3-4a4c-a982-bcaf2d038c45"
GROUP_ID = "grafana"


@dataclass(frozen=True)
class ManagedGrafanaArgs:
    naming: Naming
    region: str
    resource_group_name: pulumi.Input[str]
    zone_redundant: bool
    admin_group_ids: Sequence[str]
    viewer_group_ids: Sequence[str]
    # region -> workspace IDs Grafana reads
    monitor_workspace_ids: Mapping[str, pulumi.Input[str]]
    log_analytics_workspace_ids: Mapping[str, pulumi.Input[str]]
    endpoints: PrivateEndpoints
    subscription_id: pulumi.Input[str]
    tags: dict[str, str]


class ManagedGrafana(pulumi.ComponentResource):
    endpoint: pulumi.Output[str]

    def __init__(self, name: str, args: ManagedGrafanaArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:observability:Grafana", name, None, opts)
        naming = args.naming
        child = pulumi.ResourceOptions(parent=self)
        # At most 23 characters (validation/checks.py, check_monitoring).
        workspace_name = naming.name("grafana")
        instance = dashboard.Grafana(
            f"{name}-instance",
            workspace_name=workspace_name,
            resource_group_name=args.resource_group_name,
            location=args.region,
            sku=dashboard.ResourceSkuArgs(name="Standard"),
            identity=dashboard.ManagedServiceIdentityArgs(type=dashboard.ManagedServiceIdentityType.SYSTEM_ASSIGNED),
            properties=dashboard.ManagedGrafanaPropertiesArgs(
                public_network_access=dashboard.PublicNetworkAccess.DISABLED,
                api_key=dashboard.ApiKey.DISABLED,
                deterministic_outbound_ip=dashboard.DeterministicOutboundIP.DISABLED,
                zone_redundancy=dashboard.ZoneRedundancy.ENABLED
                if args.zone_redundant
                else dashboard.ZoneRedundancy.DISABLED,
                grafana_integrations=dashboard.GrafanaIntegrationsArgs(
                    azure_monitor_workspace_integrations=[
                        dashboard.AzureMonitorWorkspaceIntegrationArgs(azure_monitor_workspace_resource_id=id_)
                        for id_ in args.monitor_workspace_ids.values()
                    ]
                ),
            ),
            tags=args.tags,
            opts=child,
        )
        principal = instance.identity.apply(lambda identity: identity.principal_id if identity else "")
        scope_key = f"{naming.environment}/grafana"
        # Its own identity reads each region's metrics and logs.
        readers = [
            ("metrics", "amw", "Monitoring Data Reader", args.monitor_workspace_ids),
            ("logs", "log", "Monitoring Reader", args.log_analytics_workspace_ids),
        ]
        for what, kind, role, workspace_ids in readers:
            for region, workspace_id in workspace_ids.items():
                assign_role(
                    f"{name}-reads-{what}-{region}",
                    role=role,
                    scope=workspace_id,
                    scope_key=f"{naming.environment}/{kind}/{region}",
                    principal_id=principal,
                    principal_key=scope_key,
                    subscription_id=args.subscription_id,
                    parent=self,
                )
        grants = [(group, "Grafana Admin") for group in args.admin_group_ids]
        grants += [(group, "Grafana Viewer") for group in args.viewer_group_ids]
        for group, role in grants:
            assign_role(
                f"{name}-{role.split()[-1].lower()}-{group}",
                role=role,
                scope=instance.id,
                scope_key=scope_key,
                principal_id=group,
                principal_key=group,
                subscription_id=args.subscription_id,
                parent=self,
                principal_type=authorization.PrincipalType.GROUP,
            )
        # The tenants unit's deploying identity is Grafana Admin by the bootstrap (it provisions
        # the dashboards), as it holds its other rights.
        args.endpoints.connect(
            name,
            target_id=instance.id,
            target_name=workspace_name,
            group_id=GROUP_ID,
            resource_group_name=args.resource_group_name,
            tags=args.tags,
            parent=self,
        )
        self.endpoint = instance.properties.apply(lambda p: p.endpoint if p else "")
        self.register_outputs({"endpoint": self.endpoint})


def dashboard_files() -> dict[str, dict]:
    """Each dashboard of dashboards/, by file name (without .json)."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(DASHBOARDS.glob("*.json"))}


@dataclass(frozen=True)
class DashboardsArgs:
    environment: str
    grafana_endpoint: pulumi.Input[str]


class Dashboards(pulumi.ComponentResource):
    def __init__(self, name: str, args: DashboardsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:observability:Dashboards", name, None, opts)
        # The deploying identity's token for Grafana's API (it is Grafana Admin): Entra ID, no
        # Grafana API key. It lasts about an hour, enough for this unit's few writes.
        token = authorization.get_client_token_output(endpoint=GRAFANA_TOKEN_AUDIENCE).token
        # At the stack's root, as every provider (`pulumi state move` keeps them there).
        provider = grafana.Provider(f"{name}-grafana", url=args.grafana_endpoint, auth=pulumi.Output.secret(token))
        in_grafana = pulumi.ResourceOptions(parent=self, provider=provider)
        folder = grafana.oss.Folder(f"{name}-folder", title="Platform", uid="platform", opts=in_grafana)
        for stem, content in dashboard_files().items():
            grafana.oss.Dashboard(
                f"{name}-{stem}",
                folder=folder.uid,
                config_json=json.dumps(content, sort_keys=True),
                overwrite=True,
                message=f"{args.environment}: dashboards/{stem}.json",
                opts=in_grafana,
            )
        self.register_outputs({})
