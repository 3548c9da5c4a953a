"""Private storage accounts for model weights, checkpoints and datasets, and their copies.

Entra ID is the only way in: no shared keys (so no account SAS), no anonymous blobs, no
SFTP local users, and no public endpoint; clients reach the blob (and dfs) endpoints through
private endpoints only. Data survives mistakes: blob and container soft delete, versioning,
and in prod the change feed, point-in-time restore, `protect` and a CanNotDelete lock.

Accounts with a hierarchical namespace (Data Lake Gen2) support soft delete but not
versioning, the change feed or point-in-time restore, so those stay off there.

Data survives its region too (`replication`, docs/resilience.md): an `objectReplication`
account has a replica in another region, in a resource group of that region, encrypted with
that region's key, with the same protection; a `geoFailover` account is geo-redundant.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi_azure_native import managedidentity, storage

from components.alerting import metric_alerts
from components.groups import Group, resource_group
from components.keyvault import CustomerManagedKey
from components.observability import send_logs
from components.private_dns import DataPlaneSettings
from components.rbac import assign_role, lock_against_deletion
from planning.naming import region_code, regional_container
from stackconfig.model import StorageAccountConfig, StorageConfig

# Data access to blobs: who read, wrote or deleted which blob.
BLOB_LOG_CATEGORIES = ("StorageRead", "StorageWrite", "StorageDelete")
# An object-replication filter's earliest creation time: every blob, not only those written
# after the policy (the portal's "copy over: everything").
EVERYTHING = "1601-01-01T00:00:00Z"
# Fixed at creation: a change deletes the account and its data, so review must see it.
ACCOUNT_REPLACED_BY = ["isHnsEnabled", "encryption.requireInfrastructureEncryption"]


@dataclass(frozen=True)
class PrivateStorageArgs:
    service: DataPlaneSettings
    settings: StorageConfig
    # account key -> the account's Azure name (validated against Azure's rules)
    account_names: dict[str, str]
    subscription_id: pulumi.Input[str]
    # region -> the key accounts there encrypt with (platform:storage.customerManagedKey): each
    # region's own vault, so a copy stays readable while another region is down.
    encryption_keys: Mapping[str, CustomerManagedKey]
    # account key -> (region, name) of its object-replication replica (planning.naming)
    replicas: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    # severity -> the action groups its Azure Monitor alerts reach (components/alerting.py)
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)


class PrivateStorage(pulumi.ComponentResource):
    """Outputs: `account_ids[account]`, `container_ids[account][container]`, and for accounts
    with object replication `replica_container_ids[account][container]`."""

    account_ids: dict[str, pulumi.Output[str]]
    container_ids: dict[str, dict[str, pulumi.Output[str]]]
    replica_container_ids: dict[str, dict[str, pulumi.Output[str]]]

    def __init__(self, name: str, args: PrivateStorageArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:data:PrivateStorage", name, None, opts)
        self._name = name
        self._args = args
        # region -> its resource group and encryption identity, made when a region first needs them
        self._groups: dict[str, Group] = {}
        self._encryption: dict[str, tuple[managedidentity.UserAssignedIdentity, pulumi.Resource]] = {}
        self.account_ids = {}
        self.container_ids = {}
        self.replica_container_ids = {}
        for account_key, account in args.settings.accounts.items():
            self._account(f"{name}-{account_key}", account_key, account)
        self.register_outputs({"accountIds": self.account_ids})

    def _group(self, region: str) -> Group:
        """The region's data resource group: a replica's group is in its own region, so its
        management does not depend on the region it is a copy from."""
        if region not in self._groups:
            service = self._args.service
            primary = region == service.region
            self._groups[region] = resource_group(
                self._name if primary else f"{self._name}-{region_code(region)}",
                service.naming.regional("rg", region, "data"),
                region,
                service.tags,
                parent=self,
                create=service.create_groups,
            )
        return self._groups[region]

    def _encryption_identity(self, region: str):
        """The identity accounts of a region use to wrap and unwrap their key: allowed that, on
        that key only (the region's own vault's). None without customer-managed keys."""
        args = self._args
        key = args.encryption_keys.get(region)
        if key is None:
            return None, None
        if region not in self._encryption:
            primary = region == args.service.region
            suffix = "" if primary else f"-{region_code(region)}"
            identity = managedidentity.UserAssignedIdentity(
                f"{self._name}-encryption-id{suffix}",
                resource_name_=args.service.naming.regional("id", region, "storage-encryption"),
                resource_group_name=self._group(region).name,
                location=region,
                tags=args.service.tags,
                opts=pulumi.ResourceOptions(parent=self),
            )
            grant = assign_role(
                f"{self._name}-encryption-key-access{suffix}",
                role="Key Vault Crypto Service Encryption User",
                scope=key.key_id,
                scope_key=f"{args.service.naming.environment}/keyvault{suffix}/keys/{key.key_name}",
                principal_id=identity.principal_id,
                principal_key=f"{args.service.naming.environment}/storage-encryption{suffix}",
                subscription_id=args.subscription_id,
                parent=self,
            )
            self._encryption[region] = (identity, grant)
        return self._encryption[region]

    def _account(self, name: str, account_key: str, account: StorageAccountConfig) -> None:
        args, settings = self._args, self._args.settings
        region = args.service.region
        replica = args.replicas.get(account_key)
        resource, containers = self._create(
            name,
            args.account_names[account_key],
            account,
            region,
            sku=account.sku or settings.sku,
            # Object replication reads the source's change feed.
            change_feed=settings.change_feed_days is not None or replica is not None,
            point_in_time_restore=True,
        )
        self.account_ids[account_key] = resource.id
        self.container_ids[account_key] = {c: created.id for c, created in containers.items()}
        if replica is None:
            return
        replica_region, replica_name = replica
        code = region_code(replica_region)
        copy, copies = self._create(
            f"{name}-{code}",
            replica_name,
            account,
            replica_region,
            sku=account.sku or args.settings.sku,
            change_feed=False,
            # The copy's content is the source's: restore the source, the copy follows.
            point_in_time_restore=False,
            # Writable beside the read-only copies: jobs in the replica's region write there.
            extra_containers=[regional_container(c, replica_region) for c in account.written_in_every_region],
        )
        self.replica_container_ids[account_key] = {c: created.id for c, created in copies.items()}
        self._replicate(
            name,
            resource,
            containers,
            copy,
            copies,
            replica_region,
            account,
            args.account_names[account_key],
            replica_name,
        )

    def _replicate(
        self,
        name: str,
        source: storage.StorageAccount,
        source_containers: Mapping[str, storage.BlobContainer],
        destination: storage.StorageAccount,
        destination_containers: Mapping[str, storage.BlobContainer],
        destination_region: str,
        account: StorageAccountConfig,
        source_name: str,
        destination_name: str,
    ) -> None:
        """Every container copied to the replica (learn.microsoft.com/azure/storage/blobs
        /object-replication-configure): the policy is written on the destination first, where
        Azure gives each rule its ID; the source's then carries those rule IDs. Both sides use one
        policy ID, a GUID derived from the two accounts' names, rather than the documented
        `default`, for which Azure names the policy itself: the provider would then track a
        resource `/default` that does not exist, so every refresh would lose the policy and
        every change would write a second one (Azure allows one per pair). Azure takes a GUID
        name on the destination (Azure/azure-quickstart-templates#8775). Full resource IDs, as
        `allowCrossTenantReplication: false` requires."""
        rules = [
            storage.ObjectReplicationPolicyRuleArgs(
                source_container=container,
                destination_container=container,
                # Blobs created since 1601: everything already there too, not only new blobs.
                filters=storage.ObjectReplicationPolicyFilterArgs(min_creation_time=EVERYTHING),
            )
            for container in account.containers
        ]
        policy_id = replication_policy_id(source_name, destination_name)
        on_destination = storage.ObjectReplicationPolicy(
            f"{name}-replication-destination",
            account_name=destination.name,
            resource_group_name=self._group(destination_region).name,
            object_replication_policy_id=policy_id,
            source_account=source.id,
            destination_account=destination.id,
            rules=rules,
            # Both sides' containers first (the destination validates the source's too).
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[*source_containers.values(), *destination_containers.values()],
            ),
        )
        storage.ObjectReplicationPolicy(
            f"{name}-replication-source",
            account_name=source.name,
            resource_group_name=self._group(self._args.service.region).name,
            object_replication_policy_id=policy_id,
            source_account=source.id,
            destination_account=destination.id,
            rules=on_destination.rules.apply(
                lambda created: [
                    storage.ObjectReplicationPolicyRuleArgs(
                        rule_id=rule.rule_id,
                        source_container=rule.source_container,
                        destination_container=rule.destination_container,
                        filters=storage.ObjectReplicationPolicyFilterArgs(min_creation_time=EVERYTHING),
                    )
                    for rule in created or []
                ]
            ),
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(source_containers.values())),
        )

    def _create(
        self,
        name: str,
        account_name: str,
        account: StorageAccountConfig,
        region: str,
        *,
        sku: str,
        change_feed: bool,
        point_in_time_restore: bool,
        extra_containers: Sequence[str] = (),
    ) -> tuple[storage.StorageAccount, dict[str, storage.BlobContainer]]:
        """One account in `region` with its containers, endpoints, logs and lock."""
        args, settings = self._args, self._args.settings
        key = args.encryption_keys.get(region)
        identity, key_grant = self._encryption_identity(region)
        group = self._group(region)
        flat = not account.hierarchical_namespace
        resource = storage.StorageAccount(
            name,
            account_name=account_name,
            resource_group_name=group.name,
            location=region,
            kind=storage.Kind.STORAGE_V2,
            sku=storage.SkuArgs(name=storage.SkuName(sku)),
            access_tier=storage.AccessTier.HOT,
            is_hns_enabled=account.hierarchical_namespace,
            **private_account(),
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
            resource_group_name=group.name,
            is_versioning_enabled=flat,
            delete_retention_policy=storage.DeleteRetentionPolicyArgs(
                enabled=True, days=settings.soft_delete_days, allow_permanent_delete=False
            ),
            container_delete_retention_policy=storage.DeleteRetentionPolicyArgs(
                enabled=True, days=settings.container_soft_delete_days
            ),
            # No retention set: Azure keeps the feed indefinitely.
            change_feed=storage.ChangeFeedArgs(enabled=True, retention_in_days=settings.change_feed_days)
            if flat and change_feed
            else None,
            restore_policy=storage.RestorePolicyPropertiesArgs(enabled=True, days=settings.point_in_time_restore_days)
            if flat and point_in_time_restore and settings.point_in_time_restore_days
            else None,
            opts=pulumi.ResourceOptions(parent=self),
        )
        containers = {
            container: storage.BlobContainer(
                f"{name}-{container}",
                container_name=container,
                account_name=resource.name,
                resource_group_name=group.name,
                public_access=storage.PublicAccess.NONE,
                opts=pulumi.ResourceOptions(parent=self, protect=args.service.protect, depends_on=[blob_service]),
            )
            for container in [*account.containers, *extra_containers]
        }
        if account.delete_after_days:
            self._lifecycle(name, resource, group, account, depends_on=list(containers.values()))
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
                resource_group_name=group.name,
                tags=args.service.tags,
                parent=self,
            )
        send_logs(
            f"{name}-blob-logs",
            resource_uri=resource.id.apply(lambda account_id: f"{account_id}/blobServices/default"),
            workspace_id=args.service.workspace(region),
            categories=BLOB_LOG_CATEGORIES,
            parent=self,
        )
        metric_alerts(
            f"{name}-alert",
            resource_id=resource.id,
            resource_type="Microsoft.Storage/storageAccounts",
            resource_group_name=group.name,
            routes=args.alert_routes,
            tags=args.service.tags,
            parent=self,
        )
        if args.service.lock:
            lock_against_deletion(
                f"{name}-lock", scope=resource.id, what=f"Storage account {account_name}", parent=self
            )
        return resource, containers

    def _lifecycle(
        self,
        name: str,
        account: storage.StorageAccount,
        group: Group,
        config: StorageAccountConfig,
        depends_on: Sequence[pulumi.Resource],
    ) -> None:
        """One rule per prefix: block blobs last changed more than that many days ago are deleted."""
        storage.ManagementPolicy(
            f"{name}-lifecycle",
            # The account's only lifecycle policy is always named `default`.
            management_policy_name="default",
            account_name=account.name,
            resource_group_name=group.name,
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


def private_account() -> dict[str, Any]:
    """What every storage account sets, the platform's and the delivery's state account: no
    public network, Entra ID only (no shared key, no local users), TLS 1.2, no anonymous or
    cross-tenant access, server-side copies only over Private Link."""
    return {
        "public_network_access": storage.PublicNetworkAccess.DISABLED,
        "network_rule_set": storage.NetworkRuleSetArgs(
            default_action=storage.DefaultAction.DENY, bypass=storage.Bypass.NONE
        ),
        "allow_shared_key_access": False,
        "default_to_o_auth_authentication": True,
        "allow_blob_public_access": False,
        # Server-side copies only from accounts reached over Private Link.
        "allowed_copy_scope": storage.AllowedCopyScope.PRIVATE_LINK,
        "allow_cross_tenant_replication": False,
        "minimum_tls_version": storage.MinimumTlsVersion.TLS1_2,
        "enable_https_traffic_only": True,
        # Local users are SFTP/SMB accounts with passwords or SSH keys: none here.
        "is_local_user_enabled": False,
        "is_sftp_enabled": False,
        "enable_nfs_v3": False,
    }


def replication_policy_id(source: str, destination: str) -> str:
    """One stable GUID per account pair: the policy's name on both accounts."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"objectreplication/{source}/{destination}"))


def lifecycle_rule_name(prefix: str) -> str:
    """Rule names are alphanumeric (learn.microsoft.com/azure/storage/blobs/lifecycle-management-overview)."""
    return "delete" + "".join(c for c in prefix if c.isalnum())
