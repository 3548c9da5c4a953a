"""Private storage accounts for model weights, checkpoints and datasets.

Entra ID is the only way in: no shared keys (so no account SAS), no anonymous blobs, no
SFTP local users, and no public endpoint; clients reach the blob (and dfs) endpoints through
private endpoints only. Data survives mistakes: blob and container soft delete, versioning,
and in prod the change feed, point-in-time restore, `protect` and a CanNotDelete lock.

Accounts with a hierarchical namespace (Data Lake Gen2) support soft delete but not
versioning, the change feed or point-in-time restore, so those stay off there.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import managedidentity, storage

from components.groups import resource_group
from components.keyvault import CustomerManagedKey
from components.observability import send_logs
from components.private_dns import DataPlaneSettings
from components.rbac import assign_role, lock_against_deletion
from stackconfig.model import StorageAccountConfig, StorageConfig

# Data access to blobs: who read, wrote or deleted which blob.
BLOB_LOG_CATEGORIES = ("StorageRead", "StorageWrite", "StorageDelete")
# Fixed at creation: a change deletes the account and its data, so review must see it.
ACCOUNT_REPLACED_BY = ["isHnsEnabled", "encryption.requireInfrastructureEncryption"]


@dataclass(frozen=True)
class PrivateStorageArgs:
    service: DataPlaneSettings
    settings: StorageConfig
    # account key -> the account's Azure name (validated against Azure's rules)
    account_names: dict[str, str]
    subscription_id: pulumi.Input[str]
    encryption_key: CustomerManagedKey | None


class PrivateStorage(pulumi.ComponentResource):
    """Outputs: `account_ids[account]` and `container_ids[account][container]`."""

    account_ids: dict[str, pulumi.Output[str]]
    container_ids: dict[str, dict[str, pulumi.Output[str]]]

    def __init__(self, name: str, args: PrivateStorageArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:data:PrivateStorage", name, None, opts)
        self._args = args
        self._group = resource_group(
            name,
            args.service.naming.regional("rg", args.service.region, "data"),
            args.service.region,
            args.service.tags,
            parent=self,
        )
        self._encryption_identity = self._encryption_identity_with_key_access(name) if args.encryption_key else None
        self.account_ids = {}
        self.container_ids = {}
        for account_key, account in args.settings.accounts.items():
            self._account(f"{name}-{account_key}", account_key, account)
        self.register_outputs({"accountIds": self.account_ids})

    def _encryption_identity_with_key_access(self, name: str):
        """The identity accounts use to wrap and unwrap their key: allowed that, on that key only."""
        args = self._args
        key = args.encryption_key
        assert key is not None
        identity = managedidentity.UserAssignedIdentity(
            f"{name}-encryption-id",
            resource_name_=args.service.naming.regional("id", args.service.region, "storage-encryption"),
            resource_group_name=self._group.name,
            location=args.service.region,
            tags=args.service.tags,
            opts=pulumi.ResourceOptions(parent=self),
        )
        grant = assign_role(
            f"{name}-encryption-key-access",
            role="Key Vault Crypto Service Encryption User",
            scope=key.key_id,
            scope_key=f"{args.service.naming.environment}/keyvault/keys/{key.key_name}",
            principal_id=identity.principal_id,
            principal_key=f"{args.service.naming.environment}/storage-encryption",
            subscription_id=args.subscription_id,
            parent=self,
        )
        return identity, grant

    def _account(self, name: str, account_key: str, account: StorageAccountConfig) -> None:
        args, settings = self._args, self._args.settings
        account_name = args.account_names[account_key]
        key = args.encryption_key
        identity, key_grant = self._encryption_identity or (None, None)
        flat = not account.hierarchical_namespace
        resource = storage.StorageAccount(
            name,
            account_name=account_name,
            resource_group_name=self._group.name,
            location=args.service.region,
            kind=storage.Kind.STORAGE_V2,
            sku=storage.SkuArgs(name=storage.SkuName(account.sku or settings.sku)),
            access_tier=storage.AccessTier.HOT,
            is_hns_enabled=account.hierarchical_namespace,
            public_network_access=storage.PublicNetworkAccess.DISABLED,
            network_rule_set=storage.NetworkRuleSetArgs(
                default_action=storage.DefaultAction.DENY, bypass=storage.Bypass.NONE
            ),
            allow_shared_key_access=False,
            default_to_o_auth_authentication=True,
            allow_blob_public_access=False,
            # Server-side copies only from accounts reached over Private Link.
            allowed_copy_scope=storage.AllowedCopyScope.PRIVATE_LINK,
            allow_cross_tenant_replication=False,
            minimum_tls_version=storage.MinimumTlsVersion.TLS1_2,
            enable_https_traffic_only=True,
            # Local users are SFTP/SMB accounts with passwords or SSH keys: none here.
            is_local_user_enabled=False,
            is_sftp_enabled=False,
            enable_nfs_v3=False,
            identity=storage.IdentityArgs(
                type=storage.IdentityType.USER_ASSIGNED, user_assigned_identities=[identity.id]
            )
            if identity
            else None,
            encryption=storage.EncryptionArgs(
                # A second layer of encryption with a separate key, at the infrastructure level.
                require_infrastructure_encryption=True,
                key_source=storage.KeySource.MICROSOFT_KEYVAULT if key else storage.KeySource.MICROSOFT_STORAGE,
                # No key version: the account follows the key's rotation automatically.
                key_vault_properties=storage.KeyVaultPropertiesArgs(key_name=key.key_name, key_vault_uri=key.vault_uri)
                if key
                else None,
                encryption_identity=storage.EncryptionIdentityArgs(encryption_user_assigned_identity=identity.id)
                if identity
                else None,
                services=storage.EncryptionServicesArgs(
                    blob=storage.EncryptionServiceArgs(enabled=True, key_type=storage.KeyType.ACCOUNT),
                    file=storage.EncryptionServiceArgs(enabled=True, key_type=storage.KeyType.ACCOUNT),
                ),
            ),
            tags=args.service.tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.service.protect,
                replace_on_changes=ACCOUNT_REPLACED_BY,
                depends_on=[key_grant] if key_grant else None,
            ),
        )
        blob_service = storage.BlobServiceProperties(
            f"{name}-blob-service",
            blob_services_name="default",
            account_name=resource.name,
            resource_group_name=self._group.name,
            is_versioning_enabled=flat,
            delete_retention_policy=storage.DeleteRetentionPolicyArgs(
                enabled=True, days=settings.soft_delete_days, allow_permanent_delete=False
            ),
            container_delete_retention_policy=storage.DeleteRetentionPolicyArgs(
                enabled=True, days=settings.container_soft_delete_days
            ),
            change_feed=storage.ChangeFeedArgs(enabled=True, retention_in_days=settings.change_feed_days)
            if flat and settings.change_feed_days
            else None,
            restore_policy=storage.RestorePolicyPropertiesArgs(enabled=True, days=settings.point_in_time_restore_days)
            if flat and settings.point_in_time_restore_days
            else None,
            opts=pulumi.ResourceOptions(parent=self),
        )
        containers = {}
        container_resources = []
        for container in account.containers:
            created = storage.BlobContainer(
                f"{name}-{container}",
                container_name=container,
                account_name=resource.name,
                resource_group_name=self._group.name,
                public_access=storage.PublicAccess.NONE,
                opts=pulumi.ResourceOptions(parent=self, protect=args.service.protect, depends_on=[blob_service]),
            )
            containers[container] = created.id
            container_resources.append(created)
        if account.delete_after_days:
            self._lifecycle(name, resource, account, depends_on=container_resources)
        group_ids = ["blob"] + ([] if flat else ["dfs"])
        endpoints: list[pulumi.Resource] = []
        for group_id in group_ids:
            # After the previous sub-resource's: the account takes one operation at a time.
            endpoints += args.service.endpoints.connect(
                name,
                depends_on=endpoints[-2:-1],
                target_id=resource.id,
                target_name=account_name,
                group_id=group_id,
                resource_group_name=self._group.name,
                tags=args.service.tags,
                parent=self,
            )
        send_logs(
            f"{name}-blob-logs",
            resource_uri=resource.id.apply(lambda account_id: f"{account_id}/blobServices/default"),
            workspace_id=args.service.log_analytics_workspace_id,
            categories=BLOB_LOG_CATEGORIES,
            parent=self,
        )
        if args.service.lock:
            lock_against_deletion(
                f"{name}-lock", scope=resource.id, what=f"Storage account {account_name}", parent=self
            )
        self.account_ids[account_key] = resource.id
        self.container_ids[account_key] = containers

    def _lifecycle(
        self,
        name: str,
        account: storage.StorageAccount,
        config: StorageAccountConfig,
        depends_on: Sequence[pulumi.Resource],
    ) -> None:
        """One rule per prefix: block blobs last changed more than that many days ago are deleted."""
        storage.ManagementPolicy(
            f"{name}-lifecycle",
            # The account's only lifecycle policy is always named `default`.
            management_policy_name="default",
            account_name=account.name,
            resource_group_name=self._group.name,
            policy=storage.ManagementPolicySchemaArgs(
                rules=[
                    storage.ManagementPolicyRuleArgs(
                        name=lifecycle_rule_name(prefix),
                        enabled=True,
                        type=storage.RuleType.LIFECYCLE,
                        definition=storage.ManagementPolicyDefinitionArgs(
                            actions=storage.ManagementPolicyActionArgs(
                                base_blob=storage.ManagementPolicyBaseBlobArgs(
                                    delete=storage.DateAfterModificationArgs(days_after_modification_greater_than=days)
                                )
                            ),
                            filters=storage.ManagementPolicyFilterArgs(blob_types=["blockBlob"], prefix_match=[prefix]),
                        ),
                    )
                    for prefix, days in config.delete_after_days.items()
                ]
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(depends_on)),
        )


def lifecycle_rule_name(prefix: str) -> str:
    """Rule names are alphanumeric (learn.microsoft.com/azure/storage/blobs/lifecycle-management-overview)."""
    return "delete" + "".join(c for c in prefix if c.isalnum())
