"""Azure Monitor Private Link Scope (AMPLS): the clusters' agents ingest logs and metrics, and
fetch their configuration, through private endpoints instead of public ones.

A VNet can use one scope, and Microsoft's guidance is one scope per DNS: the scope's endpoint
writes records for shared global names (learn.microsoft.com/azure/azure-monitor/logs/
private-link-design). So there are two layouts, following the environment's zones:

- its own zones: the environment's own scope, ingestion `PrivateOnly`, with an endpoint in
  each region with clusters registered in that region's zones (as every data-plane endpoint);
- the hub's shared zones: the hub's scope and its endpoint (the hub team's), to which the hub's
  owner adds the environment's workspaces and collection endpoints (`members`, in the stack
  output `hubRequests`). The environment holds no right on the scope: one that could add its own
  members could remove another environment's, whose agents would then fail to ingest.

Either way the workspaces and collection endpoints refuse public ingestion
(components/observability.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import monitor

from components.private_dns import RegionalEndpoints
from planning.naming import Naming
from stackconfig.model import MonitoringPrivateLinkConfig

GROUP_ID = "azuremonitor"


@dataclass(frozen=True)
class MonitoringPrivateLinkArgs:
    naming: Naming
    settings: MonitoringPrivateLinkConfig
    resource_group_name: pulumi.Input[str]
    # region -> what its clusters' agents send to: Log Analytics workspace, collection endpoint
    workspace_ids: Mapping[str, pulumi.Input[str]]
    endpoint_ids: Mapping[str, pulumi.Input[str]]
    # Where the environment's own scope gets its endpoints (one per region with clusters).
    endpoints: RegionalEndpoints
    tags: dict[str, str]


class MonitoringPrivateLink(pulumi.ComponentResource):
    """Output `members`: scoped resource name -> the workspace or collection endpoint it links."""

    members: dict[str, pulumi.Input[str]]

    def __init__(self, name: str, args: MonitoringPrivateLinkArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:observability:PrivateLinkScope", name, None, opts)
        naming, settings = args.naming, args.settings
        # Names are the members' own: unique in a scope several environments share.
        self.members = {
            **{naming.regional("log", region): id_ for region, id_ in args.workspace_ids.items()},
            **{naming.regional("dce", region): id_ for region, id_ in args.endpoint_ids.items()},
        }
        if settings.scope_id:
            # The hub's scope: its owner adds the members.
            self.scope_id: pulumi.Input[str] = settings.scope_id
            self.register_outputs({"scopeId": self.scope_id})
            return
        scope = monitor.PrivateLinkScope(
            f"{name}-scope",
            scope_name=naming.name("ampls"),
            resource_group_name=args.resource_group_name,
            location="global",
            access_mode_settings=monitor.AccessModeSettingsArgs(
                ingestion_access_mode=monitor.AccessMode.PRIVATE_ONLY,
                query_access_mode=monitor.AccessMode(settings.query_access),
            ),
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        in_scope = pulumi.ResourceOptions(parent=self, depends_on=[scope])
        self.scope_id = scope.id
        args.endpoints.connect(
            name,
            target_id=scope.id,
            target_name=naming.name("ampls"),
            group_id=GROUP_ID,
            resource_group_name=args.resource_group_name,
            tags=args.tags,
            parent=self,
        )
        for member, resource_id in self.members.items():
            monitor.PrivateLinkScopedResource(
                f"{name}-{member}",
                name=member,
                scope_name=scope.name,
                resource_group_name=args.resource_group_name,
                linked_resource_id=resource_id,
                opts=in_scope,
            )
        self.register_outputs({"scopeId": self.scope_id})
