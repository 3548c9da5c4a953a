"""The environment's Key Vault: Azure RBAC only (no access policies), purge protection and
soft delete, reachable only through its private endpoint, every access audited.

With a customer-managed key for storage, the vault also holds that key, rotated yearly by
Key Vault itself; storage follows the newest version because it refers to the key without
one. The key is created through ARM (the management plane), which works although the
vault's data plane is private.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import authorization, keyvault

from components.alerting import metric_alerts
from components.groups import resource_group
from components.observability import send_logs
from components.private_dns import DataPlaneSettings
from components.rbac import assign_role, lock_against_deletion
from stackconfig.model import KeyVaultConfig

STORAGE_KEY_NAME = "storage-encryption"
# AuditEvent: every data-plane operation (who read which secret, when).
VAULT_LOG_CATEGORIES = ("AuditEvent",)


def private_vault_properties(
    tenant_id: pulumi.Input[str],
    *,
    retention_days: int,
    sku: keyvault.SkuName = keyvault.SkuName.STANDARD,
    bypass: keyvault.NetworkRuleBypassOptions = keyvault.NetworkRuleBypassOptions.NONE,
) -> keyvault.VaultPropertiesArgs:
    """A vault only Azure RBAC decides on (no access policies), reached only privately, whose
    deleted keys nobody, not even an owner, can purge before the retention ends."""
    return keyvault.VaultPropertiesArgs(
        tenant_id=tenant_id,
        sku=keyvault.SkuArgs(family=keyvault.SkuFamily.A, name=sku),
        enable_rbac_authorization=True,
        enable_soft_delete=True,
        soft_delete_retention_in_days=retention_days,
        enable_purge_protection=True,
        public_network_access=keyvault.PublicNetworkAccess.DISABLED,
        network_acls=keyvault.NetworkRuleSetArgs(default_action=keyvault.NetworkRuleAction.DENY, bypass=bypass),
        enabled_for_deployment=False,
        enabled_for_disk_encryption=False,
        enabled_for_template_deployment=False,
    )


def watch_vault(
    name: str,
    vault: keyvault.Vault,
    *,
    resource_group_name: pulumi.Input[str],
    workspace_id: pulumi.Input[str],
    routes: Mapping[str, list[pulumi.Input[str]]],
    tags: dict[str, str],
    lock: bool,
    what: str,
    parent: pulumi.Resource,
) -> None:
    """What every vault of the platform gets: every access audited, its Azure Monitor alerts, and
    (where stateful resources are locked) a lock against deletion."""
    send_logs(
        f"{name}-audit-logs",
        resource_uri=vault.id,
        workspace_id=workspace_id,
        categories=VAULT_LOG_CATEGORIES,
        parent=parent,
    )
    metric_alerts(
        f"{name}-alert",
        resource_id=vault.id,
        resource_type="Microsoft.KeyVault/vaults",
        resource_group_name=resource_group_name,
        routes=routes,
        tags=tags,
        parent=parent,
    )
    if lock:
        lock_against_deletion(f"{name}-lock", scope=vault.id, what=what, parent=parent)


@dataclass(frozen=True)
class CustomerManagedKey:
    """A key in the environment's vault that storage accounts encrypt with."""

    vault_uri: pulumi.Input[str]
    key_id: pulumi.Input[str]
    key_name: str


@dataclass(frozen=True)
class KeyVaultArgs:
    service: DataPlaneSettings
    tenant_id: pulumi.Input[str]
    subscription_id: pulumi.Input[str]
    settings: KeyVaultConfig
    # Create the key that storage accounts encrypt with (platform:storage.customerManagedKey).
    storage_encryption_key: bool
    # severity -> the action groups its Azure Monitor alerts reach (components/alerting.py)
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)


class KeyVault(pulumi.ComponentResource):
    """Outputs: `vault_id`, `vault_uri`, and `storage_key` (a CustomerManagedKey, or None)."""

    vault_id: pulumi.Output[str]
    vault_uri: pulumi.Output[str]

    def __init__(self, name: str, args: KeyVaultArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:security:KeyVault", name, None, opts)
        service, settings = args.service, args.settings
        naming, region, tags = service.naming, service.region, service.tags
        group = resource_group(
            name, naming.regional("rg", region, "security"), region, tags, parent=self, create=service.create_groups
        )
        vault_name = naming.key_vault(region)
        vault = keyvault.Vault(
            f"{name}-vault",
            vault_name=vault_name,
            resource_group_name=group.name,
            location=region,
            properties=private_vault_properties(
                args.tenant_id,
                retention_days=settings.soft_delete_retention_days,
                sku=keyvault.SkuName(settings.sku),
                # Trusted services still pass when public access is disabled; storage reaches its
                # customer-managed key this way.
                bypass=keyvault.NetworkRuleBypassOptions.AZURE_SERVICES,
            ),
            tags=tags,
            # The retention is fixed at creation; the preview names the replacement.
            opts=pulumi.ResourceOptions(
                parent=self, protect=service.protect, replace_on_changes=["properties.softDeleteRetentionInDays"]
            ),
        )
        service.endpoints.connect(
            name,
            target_id=vault.id,
            target_name=vault_name,
            group_id="vault",
            resource_group_name=group.name,
            tags=tags,
            parent=self,
        )
        watch_vault(
            name,
            vault,
            resource_group_name=group.name,
            workspace_id=service.log_analytics_workspace_id,
            routes=args.alert_routes,
            tags=tags,
            lock=service.lock,
            what="The Key Vault",
            parent=self,
        )
        for officers in settings.secrets_officer_group_object_ids:
            assign_role(
                f"{name}-secrets-officer-{officers}",
                role="Key Vault Secrets Officer",
                scope=vault.id,
                scope_key=f"{naming.environment}/{name}",
                principal_id=officers,
                principal_key=f"group/{officers}",
                principal_type=authorization.PrincipalType.GROUP,
                subscription_id=args.subscription_id,
                parent=self,
            )

        self.vault_id = vault.id
        self.vault_uri = vault.properties.apply(lambda properties: properties.vault_uri)
        self.storage_key: CustomerManagedKey | None = None
        if args.storage_encryption_key:
            key = keyvault.Key(
                f"{name}-storage-key",
                key_name=STORAGE_KEY_NAME,
                vault_name=vault.name,
                resource_group_name=group.name,
                properties=keyvault.KeyPropertiesArgs(
                    kty=keyvault.JsonWebKeyType.RS_A_HSM if settings.sku == "premium" else keyvault.JsonWebKeyType.RSA,
                    key_size=3072,
                    key_ops=[keyvault.JsonWebKeyOperation.WRAP_KEY, keyvault.JsonWebKeyOperation.UNWRAP_KEY],
                    rotation_policy=keyvault.RotationPolicyArgs(
                        attributes=keyvault.KeyRotationPolicyAttributesArgs(expiry_time="P1Y"),
                        lifetime_actions=[
                            keyvault.LifetimeActionArgs(
                                action=keyvault.ActionArgs(type=keyvault.KeyRotationPolicyActionType.ROTATE),
                                trigger=keyvault.TriggerArgs(time_before_expiry="P30D"),
                            )
                        ],
                    ),
                ),
                tags=tags,
                # Losing this key makes every account encrypted with it unreadable.
                opts=pulumi.ResourceOptions(parent=self, protect=service.protect),
            )
            self.storage_key = CustomerManagedKey(vault_uri=self.vault_uri, key_id=key.id, key_name=STORAGE_KEY_NAME)

        self.register_outputs({"vaultId": vault.id, "vaultUri": self.vault_uri})
