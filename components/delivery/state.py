"""The state backend: the account that holds every unit's state, the vault of its secrets keys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import authorization, keyvault, network, resources, storage

from components.keyvault import private_vault_properties
from components.rbac import assign_role, lock_against_deletion
from components.storage import private_account
from planning.delivery import BLOB_DATA_CONTRIBUTOR, CRYPTO_USER, Delivery
from planning.layers import LAYERS


@dataclass(frozen=True)
class StateBackendArgs:
    delivery: Delivery
    location: str
    tenant_id: pulumi.Input[str]
    environments: Sequence[str]
    storage_sku: str
    retention_days: int
    # Delete locks on the account and the vault (delivery:state.lock).
    lock: bool
    endpoint_subnet_id: str
    # Reaches the endpoint subnet's subscription: a private endpoint must be in its VNet's
    # subscription (learn.microsoft.com/azure/private-link/private-endpoint-overview).
    endpoint_provider: pulumi.ProviderResource
    tags: Mapping[str, str]
    # The platform admins' group: the only principal that writes the backend's meta.yaml (the
    # first `pulumi login`), runs `stack init` with a key, and repairs state (break-glass).
    admin_group_object_id: str | None = None
    # An existing group for the endpoints in the hub subnet's subscription; None: one is made.
    endpoint_resource_group: str | None = None


# The hub's privatelink zone of each endpoint's group (planning/private_link.py names the same).
_ZONES = {"blob": "privatelink.blob.core.windows.net", "vault": "privatelink.vaultcore.azure.net"}


class StateBackend(pulumi.ComponentResource):
    """The delivery resource group, the state account (locked) with a container per environment,
    and the vault (locked) with a key per environment and layer; both reached only through private
    endpoints in the hub, with Entra ID (no shared key, no access policies)."""

    def __init__(self, name: str, args: StateBackendArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:delivery:StateBackend", name, None, opts)
        d = args.delivery
        keep = pulumi.ResourceOptions(parent=self, protect=True)
        group = resources.ResourceGroup(
            f"{name}-group",
            resource_group_name=d.resource_group,
            location=args.location,
            tags=dict(args.tags),
            opts=keep,
        )
        account = storage.StorageAccount(
            f"{name}-account",
            account_name=d.storage_account,
            resource_group_name=group.name,
            location=args.location,
            kind=storage.Kind.STORAGE_V2,
            sku=storage.SkuArgs(name=storage.SkuName(args.storage_sku)),
            access_tier=storage.AccessTier.HOT,
            **private_account(),
            encryption=storage.EncryptionArgs(
                require_infrastructure_encryption=True,
                key_source=storage.KeySource.MICROSOFT_STORAGE,
                services=storage.EncryptionServicesArgs(
                    blob=storage.EncryptionServiceArgs(enabled=True, key_type=storage.KeyType.ACCOUNT)
                ),
            ),
            tags=dict(args.tags),
            opts=keep,
        )
        storage.BlobServiceProperties(
            f"{name}-blob-service",
            blob_services_name="default",
            account_name=account.name,
            resource_group_name=group.name,
            # Every state write is a new version: a bad update is rolled back from the history.
            is_versioning_enabled=True,
            delete_retention_policy=storage.DeleteRetentionPolicyArgs(
                enabled=True, days=args.retention_days, allow_permanent_delete=False
            ),
            container_delete_retention_policy=storage.DeleteRetentionPolicyArgs(enabled=True, days=args.retention_days),
            opts=pulumi.ResourceOptions(parent=self),
        )

        def state_container(logical: str, container_name: str) -> storage.BlobContainer:
            return storage.BlobContainer(
                logical,
                container_name=container_name,
                account_name=account.name,
                resource_group_name=group.name,
                public_access=storage.PublicAccess.NONE,
                opts=keep,
            )

        self.containers = {env: state_container(f"{name}-{env}", d.container(env)) for env in args.environments}
        state_container(f"{name}-delivery", d.own_container)
        vault = keyvault.Vault(
            f"{name}-vault",
            vault_name=d.key_vault,
            resource_group_name=group.name,
            location=args.location,
            properties=private_vault_properties(args.tenant_id, retention_days=90),
            tags=dict(args.tags),
            opts=pulumi.ResourceOptions(
                parent=self, protect=True, replace_on_changes=["properties.softDeleteRetentionInDays"]
            ),
        )

        # The account and the vault are locked, not the group: the identities in the group come and
        # go with environments, and a group lock would refuse deleting them (ScopeLocked). Azure
        # refuses deleting a group that holds a locked resource, so the group is kept too.
        if args.lock:
            for what, resource in (("account", account), ("vault", vault)):
                lock_against_deletion(
                    f"{name}-{what}-lock",
                    scope=resource.id,
                    what=f"the state {what}",
                    parent=self,
                    notes="Holds every environment's Pulumi state and secrets keys; delivery:state.lock lifts it",
                )

        def state_key(logical: str, key_name: str) -> keyvault.Key:
            return keyvault.Key(
                logical,
                key_name=key_name,
                vault_name=vault.name,
                resource_group_name=group.name,
                properties=keyvault.KeyPropertiesArgs(
                    kty=keyvault.JsonWebKeyType.RSA,
                    key_size=3072,
                    key_ops=[
                        keyvault.JsonWebKeyOperation.ENCRYPT,
                        keyvault.JsonWebKeyOperation.DECRYPT,
                        keyvault.JsonWebKeyOperation.WRAP_KEY,
                        keyvault.JsonWebKeyOperation.UNWRAP_KEY,
                    ],
                ),
                tags=dict(args.tags),
                opts=keep,
            )

        # One key per environment and layer: a unit decrypts only its own secrets and the
        # outputs of the units it reads (planning/delivery.py grants them).
        self.keys = {
            (env, layer): state_key(f"{name}-{env}-{layer}", d.key(env, layer))
            for env in args.environments
            for layer in LAYERS
        }
        state_key(f"{name}-delivery-key", d.own_key)
        # The endpoints' group in the hub subnet's subscription: the hub owner's, or one of the
        # delivery group's name.
        hub_group: pulumi.Input[str] = (
            args.endpoint_resource_group
            or resources.ResourceGroup(
                f"{name}-endpoint-group",
                resource_group_name=f"{d.resource_group}-endpoints",
                location=args.location,
                tags=dict(args.tags),
                opts=pulumi.ResourceOptions(parent=self, provider=args.endpoint_provider),
            ).name
        )
        for target, group_id, target_name in ((account, "blob", d.storage_account), (vault, "vault", d.key_vault)):
            self._endpoint(name, group_id, target, target_name, hub_group, args)
        if args.admin_group_object_id:
            for what, scope, role in (
                ("account", account.id, BLOB_DATA_CONTRIBUTOR),
                ("vault", vault.id, CRYPTO_USER),
            ):
                assign_role(
                    f"{name}-admins-{what}",
                    role=role,
                    scope=scope,
                    scope_key=f"delivery/{what}",
                    principal_id=args.admin_group_object_id,
                    principal_key=args.admin_group_object_id,
                    subscription_id=d.state_subscription,
                    parent=self,
                    principal_type=authorization.PrincipalType.GROUP,
                    description=f"group {args.admin_group_object_id}: the platform admins' break-glass access to "
                    f"every state {'blob' if what == 'account' else 'key'}",
                )
        self.account_id = account.id
        self.vault = vault
        self.vault_id = vault.id
        self.vault_uri = vault.properties.vault_uri
        self.register_outputs({"accountId": account.id, "vaultId": vault.id})

    def _endpoint(
        self,
        name: str,
        group_id: str,
        target: pulumi.CustomResource,
        target_name: str,
        hub_group: pulumi.Input[str],
        args: StateBackendArgs,
    ) -> None:
        """A private endpoint in the hub's subnet whose zone group registers it in the hub's zone."""
        d = args.delivery
        on_hub = pulumi.ResourceOptions(parent=self, provider=args.endpoint_provider)
        endpoint = network.PrivateEndpoint(
            f"{name}-{group_id}-endpoint",
            private_endpoint_name=f"pe-{target_name}-{group_id}",
            resource_group_name=hub_group,
            location=args.location,
            subnet=network.SubnetArgs(id=args.endpoint_subnet_id),
            private_link_service_connections=[
                network.PrivateLinkServiceConnectionArgs(
                    name=group_id, private_link_service_id=target.id, group_ids=[group_id]
                )
            ],
            tags=dict(args.tags),
            opts=on_hub,
        )
        network.PrivateDnsZoneGroup(
            f"{name}-{group_id}-endpoint-dns",
            private_dns_zone_group_name="default",
            private_endpoint_name=endpoint.name,
            resource_group_name=hub_group,
            private_dns_zone_configs=[
                network.PrivateDnsZoneConfigArgs(name=group_id, private_dns_zone_id=d.zone_id(_ZONES[group_id]))
            ],
            opts=on_hub,
        )
