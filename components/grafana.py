"""Azure Managed Grafana for the environment, and the dashboards in dashboards/.

- `ManagedGrafana` (foundation): the instance, private (a private endpoint in the primary
  region, public access off), Entra ID sign-in only (no API keys or service-account tokens:
  a Grafana Admin could mint one that outlives their Azure role), reading every region's Azure
  Monitor workspace (Monitoring Data Reader) and Log Analytics workspace (Monitoring Reader)
  with its own managed identity; Grafana Admin and Viewer for the configured groups.
The dashboards of dashboards/ are not Pulumi resources: the tenants' deploy job provisions them
after its `pulumi up` with a token that never reaches the state (planning/dashboards.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import authorization, dashboard

from components.private_dns import PrivateEndpoints
from components.rbac import assign_role
from planning.naming import Naming

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
        # At most 23 characters (validation/checks/operations.py, check_monitoring).
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
        # The tenants unit's deploying identity is Grafana Admin by the delivery project (it provisions
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
