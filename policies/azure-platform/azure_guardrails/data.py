"""Storage, Key Vault, Container Registry, Event Hubs and Managed Lustre: private, keyless, TLS 1.2,
recoverable."""

from __future__ import annotations

from guardrail import BuiltIn, lookup, resource_policy, stack_policy
from pulumi_policy import Severity

STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
BLOB_SERVICE = "azure-native:storage:BlobServiceProperties"
VAULT = "azure-native:keyvault:Vault"
REGISTRY = "azure-native:containerregistry:Registry"
EVENT_HUBS = "azure-native:eventhub:Namespace"
LUSTRE = "azure-native:storagecache:AmlFilesystem"

STORAGE_TLS = ("TLS1_2", "TLS1_3")
EVENT_HUBS_TLS = ("1.2", "1.3")


def storage_private(args, report):
    if args.resource_type != STORAGE_ACCOUNT:
        return
    if lookup(args.props, "publicNetworkAccess") != "Disabled":
        report("publicNetworkAccess is not Disabled.")
    if lookup(args.props, "networkRuleSet.defaultAction") != "Deny":
        report("networkRuleSet.defaultAction is not Deny.")
    if lookup(args.props, "allowBlobPublicAccess") is not False:
        report("allowBlobPublicAccess is not false: containers could be made anonymous.")


def storage_no_shared_key(args, report):
    if args.resource_type == STORAGE_ACCOUNT and lookup(args.props, "allowSharedKeyAccess") is not False:
        report(
            "allowSharedKeyAccess is not false (Azure's default is true): account keys and SAS "
            "tokens would bypass Entra ID."
        )


def storage_tls(args, report):
    if args.resource_type != STORAGE_ACCOUNT:
        return
    if lookup(args.props, "minimumTlsVersion") not in STORAGE_TLS:
        report(f"minimumTlsVersion is {lookup(args.props, 'minimumTlsVersion')!r} (Azure's default is TLS1_0).")
    if lookup(args.props, "enableHttpsTrafficOnly") is False:
        report("enableHttpsTrafficOnly is false.")


def storage_soft_delete(args, report):
    services = {}
    for resource in args.resources:
        if resource.resource_type == BLOB_SERVICE:
            for account in resource.property_dependencies.get("accountName", []):
                services[account.urn] = resource
    for resource in args.resources:
        if resource.resource_type != STORAGE_ACCOUNT:
            continue
        service = services.get(resource.urn)
        if service is None:
            report(
                f"{resource.name} has no BlobServiceProperties, so blob and container soft delete are off.",
                resource.urn,
            )
            continue
        for policy in ("deleteRetentionPolicy", "containerDeleteRetentionPolicy"):
            if lookup(service.props, f"{policy}.enabled") is not True:
                report(f"{resource.name}: {policy} is not enabled.", service.urn)


def vault_private(args, report):
    if args.resource_type != VAULT:
        return
    if lookup(args.props, "properties.publicNetworkAccess") != "Disabled":
        report("properties.publicNetworkAccess is not Disabled.")
    if lookup(args.props, "properties.networkAcls.defaultAction") != "Deny":
        report("properties.networkAcls.defaultAction is not Deny.")


def vault_rbac(args, report):
    if args.resource_type != VAULT:
        return
    if lookup(args.props, "properties.enableRbacAuthorization") is not True:
        report("properties.enableRbacAuthorization is not true: access policies bypass Azure RBAC and PIM.")
    if list(lookup(args.props, "properties.accessPolicies") or []):
        report("properties.accessPolicies is not empty.")


def vault_recoverable(args, report):
    if args.resource_type != VAULT:
        return
    if lookup(args.props, "properties.enableSoftDelete") is False:
        report("properties.enableSoftDelete is false.")
    if lookup(args.props, "properties.enablePurgeProtection") is not True:
        report("properties.enablePurgeProtection is not true: a deleted vault could be purged at once.")


def registry_private(args, report):
    if args.resource_type != REGISTRY:
        return
    if lookup(args.props, "publicNetworkAccess") != "Disabled":
        report("publicNetworkAccess is not Disabled.")


def registry_no_local_auth(args, report):
    if args.resource_type != REGISTRY:
        return
    if lookup(args.props, "adminUserEnabled") is not False:
        report("adminUserEnabled is not false: the admin user's password grants push and pull to anyone holding it.")
    if lookup(args.props, "anonymousPullEnabled") is True:
        report("anonymousPullEnabled is true.")


def event_hubs_private(args, report):
    if args.resource_type == EVENT_HUBS and lookup(args.props, "publicNetworkAccess") != "Disabled":
        report("publicNetworkAccess is not Disabled.")


def event_hubs_no_local_auth(args, report):
    if args.resource_type == EVENT_HUBS and lookup(args.props, "disableLocalAuth") is not True:
        report("disableLocalAuth is not true: SAS keys would bypass Entra ID.")


def event_hubs_tls(args, report):
    if args.resource_type == EVENT_HUBS and lookup(args.props, "minimumTlsVersion") not in EVENT_HUBS_TLS:
        report(f"minimumTlsVersion is {lookup(args.props, 'minimumTlsVersion')!r}.")


def lustre_no_blob_integration(args, report):
    if args.resource_type == LUSTRE and lookup(args.props, "hsm.settings") is not None:
        report(
            "hsm.settings links a blob container: Managed Lustre's import and export need shared-key access on "
            "its storage account and let Azure's resource provider mint SAS tokens (amlfs-prerequisites.md)."
        )


POLICIES = [
    resource_policy(
        "storage-public-network-disabled",
        "Storage accounts refuse public network access; data moves over private endpoints.",
        storage_private,
        severity=Severity.CRITICAL,
        remediation="Set publicNetworkAccess: Disabled, networkRuleSet.defaultAction: Deny and "
        "allowBlobPublicAccess: false (components/storage.py does).",
        builtin=BuiltIn(
            "b2982f36-99f2-4db5-8eff-283140c09693", "Storage accounts should disable public network access"
        ),
    ),
    resource_policy(
        "storage-shared-key-disabled",
        "Storage accounts disable shared key access, so only Entra ID identities reach the data.",
        storage_no_shared_key,
        severity=Severity.HIGH,
        remediation="Set allowSharedKeyAccess: false and grant Storage Blob Data roles to identities instead.",
        builtin=BuiltIn("8c6a50c6-9ffd-4ae7-986f-5fa6111f9a54", "Storage accounts should prevent shared key access"),
    ),
    resource_policy(
        "storage-minimum-tls",
        "Storage accounts require TLS 1.2 or later over HTTPS only.",
        storage_tls,
        severity=Severity.MEDIUM,
        remediation="Set minimumTlsVersion: TLS1_2 and enableHttpsTrafficOnly: true.",
        builtin=BuiltIn(
            "fe83a0eb-a853-422d-aac2-1bffd182c5d0", "Storage accounts should have the specified minimum TLS version"
        ),
    ),
    stack_policy(
        "storage-blob-soft-delete",
        "Every storage account has blob and container soft delete switched on.",
        storage_soft_delete,
        severity=Severity.HIGH,
        remediation="Give the account a BlobServiceProperties with deleteRetentionPolicy and "
        "containerDeleteRetentionPolicy enabled (storage.softDeleteDays).",
    ),
    resource_policy(
        "keyvault-public-network-disabled",
        "Key vaults refuse public network access.",
        vault_private,
        severity=Severity.CRITICAL,
        remediation="Set properties.publicNetworkAccess: Disabled and networkAcls.defaultAction: Deny.",
        builtin=BuiltIn("405c5871-3e91-4644-8a63-58e19d68ff5b", "Azure Key Vault should disable public network access"),
    ),
    resource_policy(
        "keyvault-rbac-authorization",
        "Key vaults authorize with Azure RBAC, never access policies.",
        vault_rbac,
        severity=Severity.HIGH,
        remediation="Set properties.enableRbacAuthorization: true and remove accessPolicies.",
        builtin=BuiltIn("12d4fa5e-1f9f-4c21-97a9-b99b3c6611b5", "Azure Key Vault should use RBAC permission model"),
    ),
    resource_policy(
        "keyvault-deletion-protection",
        "Key vaults keep soft delete and purge protection on.",
        vault_recoverable,
        severity=Severity.HIGH,
        remediation="Set properties.enablePurgeProtection: true and leave enableSoftDelete on.",
        builtin=BuiltIn("0b60c0b2-2dc2-4e1c-b5c9-abbed971de53", "Key vaults should have deletion protection enabled"),
    ),
    resource_policy(
        "registry-public-network-disabled",
        "Container registries refuse public network access.",
        registry_private,
        severity=Severity.HIGH,
        remediation="Set publicNetworkAccess: Disabled (Premium SKU) and pull over the private endpoint.",
        builtin=BuiltIn(
            "0fdf0491-d080-4575-b627-ad0e843cba0f", "Public network access should be disabled for Container registries"
        ),
    ),
    resource_policy(
        "registry-local-auth-disabled",
        "Container registries have no admin user and no anonymous pull.",
        registry_no_local_auth,
        severity=Severity.HIGH,
        remediation="Set adminUserEnabled: false and anonymousPullEnabled: false; grant AcrPull/AcrPush to identities.",
        builtin=BuiltIn(
            "dc921057-6b28-4fbe-9b83-f7bec05db6c2", "Container registries should have local admin account disabled."
        ),
    ),
    resource_policy(
        "eventhubs-public-network-disabled",
        "Event Hubs namespaces refuse public network access.",
        event_hubs_private,
        severity=Severity.HIGH,
        remediation="Set publicNetworkAccess: Disabled; clients connect through the private endpoint.",
        builtin=BuiltIn(
            "0602787f-9896-402a-a6e1-39ee63ee435e", "Event Hub Namespaces should disable public network access"
        ),
    ),
    resource_policy(
        "eventhubs-local-auth-disabled",
        "Event Hubs namespaces disable SAS (local) authentication.",
        event_hubs_no_local_auth,
        severity=Severity.HIGH,
        remediation="Set disableLocalAuth: true; clients use Entra ID (Data Sender/Receiver roles).",
        builtin=BuiltIn(
            "5d4e3c65-4873-47be-94f3-6f8b953a3598",
            "Azure Event Hub namespaces should have local authentication methods disabled",
        ),
    ),
    resource_policy(
        "eventhubs-minimum-tls",
        "Event Hubs namespaces require TLS 1.2 or later.",
        event_hubs_tls,
        severity=Severity.MEDIUM,
        remediation="Set minimumTlsVersion: '1.2'.",
    ),
    resource_policy(
        "lustre-no-blob-integration",
        "Managed Lustre file systems have no blob integration: its import and export need shared keys on the "
        "storage account; datasets are copied in by a job with its workload identity.",
        lustre_no_blob_integration,
        severity=Severity.HIGH,
        remediation="Leave hsm unset (components/lustre.py does) and load data as the Managed Lustre page of the docs "
        "shows (Loading data); an environment that needs it takes a waiver naming its dedicated account.",
    ),
]
