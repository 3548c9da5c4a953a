"""The environment's container registry: Premium, private, Entra ID only, and the one place
clusters pull images from.

Artifact cache rules pull upstream images (NGC, registry.k8s.io, and teams' own upstreams
from config) into the registry on first use, so the clusters' egress allowlist needs no
public registry for the platform's images (AKS's own system images still come from MCR).
Each other region with clusters gets a replica, so nodes pull locally.
Kubelet identities get AcrPull on this registry only (in the cluster component).
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
from pulumi_azure_native import containerregistry as acr

from components.groups import resource_group
from components.observability import send_logs
from components.private_dns import DataPlaneSettings
from components.rbac import lock_against_deletion
from planning.images import CacheRule
from stackconfig.model import RegistryConfig

REGISTRY_LOG_CATEGORIES = ("ContainerRegistryLoginEvents", "ContainerRegistryRepositoryEvents")


def _zone_redundancy(enabled: bool) -> acr.ZoneRedundancy:
    return acr.ZoneRedundancy.ENABLED if enabled else acr.ZoneRedundancy.DISABLED


@dataclass(frozen=True)
class ContainerRegistryArgs:
    service: DataPlaneSettings
    # Other regions with clusters; each gets a replica when geo-replication is on.
    replica_regions: list[str]
    settings: RegistryConfig
    cache_rules: tuple[CacheRule, ...]


class ContainerRegistry(pulumi.ComponentResource):
    """Outputs: `registry_id`, `login_server`, and `ready` (resources pulls depend on)."""

    registry_id: pulumi.Output[str]
    login_server: str

    def __init__(self, name: str, args: ContainerRegistryArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:registry:ContainerRegistry", name, None, opts)
        service, settings = args.service, args.settings
        naming, tags = service.naming, service.tags
        child = pulumi.ResourceOptions(parent=self)
        group = resource_group(
            name,
            naming.regional("rg", service.region, "registry"),
            service.region,
            tags,
            parent=self,
            create=service.create_groups,
        )
        registry_name = naming.registry()
        registry = acr.Registry(
            f"{name}-registry",
            registry_name=registry_name,
            resource_group_name=group.name,
            location=service.region,
            # Private endpoints, replicas and zone redundancy need Premium.
            sku=acr.SkuArgs(name=acr.SkuName.PREMIUM),
            admin_user_enabled=False,
            anonymous_pull_enabled=False,
            public_network_access=acr.PublicNetworkAccess.DISABLED,
            network_rule_set=acr.NetworkRuleSetArgs(default_action=acr.DefaultAction.DENY),
            # Trusted services (Defender's image scanning) still reach a private registry.
            network_rule_bypass_options=acr.NetworkRuleBypassOptions.AZURE_SERVICES,
            # Layers come from regional data endpoints (<name>.<region>.data.azurecr.io), which
            # the private endpoint covers too; no wildcard *.blob.core.windows.net is needed.
            data_endpoint_enabled=True,
            zone_redundancy=_zone_redundancy(settings.zone_redundancy),
            policies=acr.PoliciesArgs(
                # Images cannot be exported (az acr import/transfer) out of a private registry.
                export_policy=acr.ExportPolicyArgs(status=acr.ExportPolicyStatus.DISABLED),
                retention_policy=acr.RetentionPolicyArgs(
                    days=settings.untagged_retention_days, status=acr.PolicyStatus.ENABLED
                ),
            ),
            tags=tags,
            # Zone redundancy is fixed at creation; the preview names the replacement.
            opts=pulumi.ResourceOptions(parent=self, protect=service.protect, replace_on_changes=["zoneRedundancy"]),
        )
        ready: list[pulumi.Resource] = [registry]
        if settings.geo_replication:
            for region in args.replica_regions:
                ready.append(
                    acr.Replication(
                        f"{name}-replica-{region}",
                        replication_name=region,
                        registry_name=registry.name,
                        resource_group_name=group.name,
                        location=region,
                        region_endpoint_enabled=True,
                        zone_redundancy=_zone_redundancy(settings.zone_redundancy),
                        tags=tags,
                        opts=child,
                    )
                )
        for rule in args.cache_rules:
            ready.append(
                acr.CacheRule(
                    f"{name}-cache-{rule.name}",
                    cache_rule_name=rule.name,
                    registry_name=registry.name,
                    resource_group_name=group.name,
                    source_repository=rule.source,
                    target_repository=rule.target,
                    opts=child,
                )
            )
        ready += service.endpoints.connect(
            name,
            target_id=registry.id,
            target_name=registry_name,
            group_id="registry",
            resource_group_name=group.name,
            tags=tags,
            parent=self,
            # After the replicas, so that the endpoint carries every region's data endpoint.
            depends_on=list(ready),
        )
        send_logs(
            f"{name}-logs",
            resource_uri=registry.id,
            workspace_id=service.log_analytics_workspace_id,
            categories=REGISTRY_LOG_CATEGORIES,
            parent=self,
        )
        if service.lock:
            lock_against_deletion(f"{name}-lock", scope=registry.id, what="The container registry", parent=self)

        self.registry_id = registry.id
        self.registry_name = registry_name
        self.login_server = naming.registry_login_server()
        self.ready = ready
        self.register_outputs({"registryId": registry.id, "loginServer": self.login_server})
