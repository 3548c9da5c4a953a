"""Cosmos DB: Entra ID only, private, TLS 1.2, zone redundant; data roles no wider than a database."""

from __future__ import annotations

from guardrail import lookup, resource_policy
from pulumi_policy import Severity

COSMOS_ACCOUNT = "azure-native:cosmosdb:DatabaseAccount"
COSMOS_ROLE_ASSIGNMENT = "azure-native:cosmosdb:SqlResourceSqlRoleAssignment"
# The built-in data roles (facts/cosmosdb.py): the pack runs in its own virtualenv and imports
# nothing of the program, so tests/test_pack_constants.py holds the two equal.
COSMOS_DATA_ROLES = ("00000000-0000-0000-0000-000000000001", "00000000-0000-0000-0000-000000000002")


def cosmos_private(args, report):
    if args.resource_type != COSMOS_ACCOUNT:
        return
    if lookup(args.props, "publicNetworkAccess") != "Disabled":
        report("publicNetworkAccess is not Disabled (Azure's default is Enabled).")
    if lookup(args.props, "networkAclBypass") == "AzureServices":
        report("networkAclBypass is AzureServices: Azure services reach it past its network rules.")


def cosmos_no_local_auth(args, report):
    if args.resource_type != COSMOS_ACCOUNT:
        return
    if lookup(args.props, "disableLocalAuth") is not True:
        report("disableLocalAuth is not true: the account's primary keys and resource tokens bypass Entra ID.")
    if lookup(args.props, "disableKeyBasedMetadataWriteAccess") is not True:
        report(
            "disableKeyBasedMetadataWriteAccess is not true: clients could create and change databases and "
            "containers outside the program."
        )


def cosmos_tls(args, report):
    if args.resource_type == COSMOS_ACCOUNT and lookup(args.props, "minimalTlsVersion") != "Tls12":
        report(f"minimalTlsVersion is {lookup(args.props, 'minimalTlsVersion')!r} (Azure's default is Tls).")


def cosmos_zone_redundant(args, report):
    if args.resource_type != COSMOS_ACCOUNT:
        return
    single = [
        lookup(location, "locationName")
        for location in lookup(args.props, "locations") or []
        if lookup(location, "isZoneRedundant") is not True
    ]
    if single:
        report(f"not zone redundant in {', '.join(map(str, single))}: a zone's loss stops the region's replica.")


def cosmos_data_role_narrow(args, report):
    if args.resource_type != COSMOS_ROLE_ASSIGNMENT:
        return
    scope = str(lookup(args.props, "scope") or "")
    role = str(lookup(args.props, "roleDefinitionId") or "").rsplit("/", 1)[-1]
    if scope and "/dbs/" not in scope:
        report(f"scope {scope!r} is the whole account: grant a database or a container.")
    if role and role not in COSMOS_DATA_ROLES:
        report(f"role {role} is not a built-in data role (Data Reader or Data Contributor).")


POLICIES = [
    resource_policy(
        "cosmosdb-public-network-disabled",
        "Cosmos DB accounts refuse public network access; clients connect through private endpoints.",
        cosmos_private,
        severity=Severity.CRITICAL,
        remediation="Set publicNetworkAccess: Disabled and networkAclBypass: None (components/cosmos_db.py does).",
    ),
    resource_policy(
        "cosmosdb-local-auth-disabled",
        "Cosmos DB accounts disable keys and resource tokens, and key-based metadata writes.",
        cosmos_no_local_auth,
        severity=Severity.CRITICAL,
        remediation="Set disableLocalAuth and disableKeyBasedMetadataWriteAccess: true; workloads sign in with "
        "their identity (platform:workloads.<name>.cosmosDb).",
    ),
    resource_policy(
        "cosmosdb-minimum-tls",
        "Cosmos DB accounts require TLS 1.2.",
        cosmos_tls,
        severity=Severity.MEDIUM,
        remediation="Set minimalTlsVersion: Tls12.",
    ),
    resource_policy(
        "cosmosdb-zone-redundant",
        "Cosmos DB accounts are zone redundant in every region.",
        cosmos_zone_redundant,
        severity=Severity.MEDIUM,
        remediation="Keep platform:cosmosDb.zoneRedundant (the default); Azure sets it only when a region is "
        "added, so an existing region is removed and added back (see the databases page of the docs).",
    ),
    resource_policy(
        "cosmosdb-data-role-narrow",
        "Cosmos DB data roles are built-in Data Reader or Contributor on one database or container, never the "
        "whole account.",
        cosmos_data_role_narrow,
        severity=Severity.HIGH,
        remediation="Grant through platform:workloads.<name>.cosmosDb, `<database>` or `<database>/<container>`.",
    ),
]
