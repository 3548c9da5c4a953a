"""A cluster's etcd encryption key: Kubernetes Secrets encrypted in etcd with a key the platform
holds (AKS KMS, `securityProfile.azureKeyVaultKms`), as mspnp/aks-baseline and Azure Verified
Modules offer it.

Each cluster gets a Key Vault of its own, holding nothing but this key, because AKS's control
plane identity needs *Key Vault Contributor* on the vault to make its private link to it
("For private key vaults, the Key Vault Contributor role is required to create a private link
between the private key vault and the cluster", use-kms-etcd-encryption.md): a management role
that can change the vault's permission model, so it must reach no other key or secret. The
vault is private (AKS creates the private endpoint from the API server's VNet integration in the
node resource group), RBAC-only, purge-protected and audited.

The key (RSA, encrypt and decrypt, as the page asks) has no expiry and no rotation policy:
legacy KMS uses one key *version* (its ID names it), and an expired key stops the API server from
decrypting Secrets (kms-observability.md, `KeyExpired`). ARM makes a key once and never a new
version of it, and the vault's data plane is private to AKS: a rotation is a new key,
`etcd-encryption-<generation>` (AKS takes "changing either the key name or the key version"),
with the previous generation kept (docs/operations.md, "Rotating the etcd key"). The newer "KMS data encryption", which follows
a versionless key, is a preview that does not support private endpoints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import keyvault

from components.groups import Group
from components.keyvault import private_vault_properties, watch_vault
from planning.naming import Naming

ETCD_KEY_NAME = "etcd-encryption"
# The roles AKS's control plane identity holds on the vault (use-kms-etcd-encryption.md).
ETCD_KEY_ROLES = ("Key Vault Crypto User", "Key Vault Contributor")


@dataclass(frozen=True)
class EtcdEncryptionArgs:
    naming: Naming
    cluster_key: str
    region: str
    group: Group
    tenant_id: pulumi.Input[str]
    log_analytics_workspace_id: pulumi.Input[str]
    protect: bool
    # A CanNotDelete lock on the vault (platform:lockStatefulResources).
    lock: bool = False
    # platform:keyVault.softDeleteRetentionDays, as the environment's own vaults keep it.
    soft_delete_retention_days: int = 90
    # platform:clusters.<c>.etcdKeyGeneration: the key in use is etcd-encryption-<generation>.
    generation: int = 1
    tags: dict[str, str] = field(default_factory=dict)
    # severity -> the action groups its Azure Monitor alerts reach (components/alerting.py)
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)


class EtcdEncryption(pulumi.ComponentResource):
    """Outputs: `vault_id`, `key_id` (the versioned key ID AKS takes)."""

    def __init__(self, name: str, args: EtcdEncryptionArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:security:EtcdEncryption", name, None, opts)
        vault = keyvault.Vault(
            f"{name}-vault",
            vault_name=args.naming.etcd_key_vault(args.cluster_key),
            resource_group_name=args.group.name,
            location=args.region,
            # AKS reaches it through its own private endpoint; nothing else needs to.
            properties=private_vault_properties(args.tenant_id, retention_days=args.soft_delete_retention_days),
            tags=args.tags,
            # The retention is fixed at creation; the preview names the replacement.
            opts=pulumi.ResourceOptions(
                parent=self, protect=args.protect, replace_on_changes=["properties.softDeleteRetentionInDays"]
            ),
        )
        # The generation in use and the one before it: AKS keeps using the previous key for what
        # it cached ("rotate the key twice" before removing one); older ones are soft-deleted.
        keys = {
            generation: keyvault.Key(
                f"{name}-key-{generation}",
                key_name=f"{ETCD_KEY_NAME}-{generation}",
                vault_name=vault.name,
                resource_group_name=args.group.name,
                properties=keyvault.KeyPropertiesArgs(
                    kty=keyvault.JsonWebKeyType.RSA,
                    key_size=2048,
                    key_ops=[keyvault.JsonWebKeyOperation.ENCRYPT, keyvault.JsonWebKeyOperation.DECRYPT],
                ),
                tags=args.tags,
                # Losing this key makes every Secret of the cluster unreadable.
                opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
            )
            for generation in range(max(args.generation - 1, 1), args.generation + 1)
        }
        key = keys[args.generation]
        watch_vault(
            name,
            vault,
            resource_group_name=args.group.name,
            workspace_id=args.log_analytics_workspace_id,
            routes=args.alert_routes,
            tags=args.tags,
            lock=args.lock,
            what="The etcd key vault",
            parent=self,
        )
        self.vault_id = vault.id
        self.key_id = key.key_uri_with_version
        self.register_outputs({"vaultId": vault.id, "keyId": self.key_id})
