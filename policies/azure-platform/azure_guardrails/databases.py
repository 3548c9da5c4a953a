"""Cosmos DB and PostgreSQL: Entra ID only, private, TLS 1.2, zone redundant; data roles no wider
than a database, container or schema."""

from __future__ import annotations

import re

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


POSTGRES_SERVER = "azure-native:dbforpostgresql:Server"
POSTGRES_PARAMETER = "azure-native:dbforpostgresql:Configuration"
POSTGRES_ROLE = "postgresql:index/role:Role"
POSTGRES_GRANT = "postgresql:index/grant:Grant"
POSTGRES_LABEL = "postgresql:index/securityLabel:SecurityLabel"
# The PostgreSQL resources the program makes; any other (role memberships, default privileges,
# functions, schemas or databases with owners) is not a workload's access.
POSTGRES_TYPES = (POSTGRES_ROLE, POSTGRES_GRANT, POSTGRES_LABEL)
# What the program grants a workload's role per object type (planning/postgresql.py).
POSTGRES_PRIVILEGES = {
    "database": {"CONNECT"},
    "schema": {"USAGE"},
    "table": {"SELECT", "INSERT", "UPDATE", "DELETE"},
    "sequence": {"SELECT", "USAGE"},
}
# A role mapped to a managed identity, and nothing more (no `admin`, no group).
POSTGRES_LABEL_FORM = re.compile(r"^aadauth,oid=[0-9a-f-]{36},type=service$")
POSTGRES_ROLE_POWERS = ("superuser", "createRole", "createDatabase", "replication", "bypassRowLevelSecurity")
# Azure's administrators' role (security/security-manage-entra-users.md).
POSTGRES_ADMIN_ROLES = ("azure_pg_admin",)


def postgres_private(args, report):
    if args.resource_type != POSTGRES_SERVER:
        return
    if lookup(args.props, "network.publicNetworkAccess") != "Disabled":
        report(
            "network.publicNetworkAccess is not Disabled (Azure's default for a server without VNet integration is Enabled)."
        )


def postgres_entra_only(args, report):
    if args.resource_type != POSTGRES_SERVER:
        return
    if lookup(args.props, "authConfig.passwordAuth") != "Disabled":
        report(
            "authConfig.passwordAuth is not Disabled (the SDK's default is Enabled): a password signs in past Entra ID."
        )
    if lookup(args.props, "authConfig.activeDirectoryAuth") != "Enabled":
        report("authConfig.activeDirectoryAuth is not Enabled.")
    if lookup(args.props, "administratorLogin") or lookup(args.props, "administratorLoginPassword"):
        report("an administrator login and password are set.")


def postgres_tls(args, report):
    if args.resource_type != POSTGRES_PARAMETER:
        return
    name, value = lookup(args.props, "configurationName"), str(lookup(args.props, "value") or "")
    if name == "require_secure_transport" and value.lower() != "on":
        report(f"require_secure_transport is {value!r}: clients could connect without TLS.")
    if name == "ssl_min_protocol_version" and value not in ("TLSv1.2", "TLSv1.3"):
        report(f"ssl_min_protocol_version is {value!r}.")


def postgres_zone_redundant(args, report):
    if args.resource_type == POSTGRES_SERVER and lookup(args.props, "highAvailability.mode") != "ZoneRedundant":
        report(f"highAvailability.mode is {lookup(args.props, 'highAvailability.mode')!r}: a zone's loss stops it.")


def postgres_geo_backup(args, report):
    if args.resource_type == POSTGRES_SERVER and lookup(args.props, "backup.geoRedundantBackup") != "Enabled":
        report("backup.geoRedundantBackup is not Enabled: the region's loss takes the backups with it.")


def postgres_grant_narrow(args, report):
    if args.resource_type.startswith("postgresql:") and args.resource_type not in POSTGRES_TYPES:
        report(f"{args.resource_type} is not a workload's access (roles, their grants and labels only).")
    elif args.resource_type == POSTGRES_LABEL:
        label = str(lookup(args.props, "label") or "")
        if lookup(args.props, "labelProvider") != "pgaadauth" or not POSTGRES_LABEL_FORM.match(label):
            report(
                f"label {label!r}: a role maps one managed identity (aadauth,oid=<id>,type=service), no admin or group."
            )
    elif args.resource_type == POSTGRES_GRANT:
        if lookup(args.props, "role") == "public" and lookup(args.props, "privileges"):
            report("a grant to PUBLIC: every login would hold it.")
        kind = str(lookup(args.props, "objectType") or "")
        allowed = POSTGRES_PRIVILEGES.get(kind)
        privileges = {str(p).upper() for p in lookup(args.props, "privileges") or []}
        if allowed is None:
            report(f"a grant on a {kind!r}: workloads get databases, schemas and tables only.")
        elif privileges - allowed:
            report(f"{', '.join(sorted(privileges - allowed))} on a {kind}: beyond {', '.join(sorted(allowed))}.")
        if lookup(args.props, "withGrantOption") is True:
            report("with grant option: the role could pass its privileges on.")
    elif args.resource_type == POSTGRES_ROLE:
        powers = [p for p in POSTGRES_ROLE_POWERS if lookup(args.props, p) is True]
        if powers:
            report(f"the role has {', '.join(powers)}.")
        if set(lookup(args.props, "roles") or []) & set(POSTGRES_ADMIN_ROLES):
            report("the role is a member of azure_pg_admin.")


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
    resource_policy(
        "postgresql-public-network-disabled",
        "PostgreSQL servers refuse public network access; clients connect through private endpoints.",
        postgres_private,
        severity=Severity.CRITICAL,
        remediation="Set the server's publicNetworkAccess (in its network settings) to Disabled "
        "(components/postgresql.py does).",
    ),
    resource_policy(
        "postgresql-entra-only",
        "PostgreSQL servers sign in with Entra ID only: no password authentication, no administrator password.",
        postgres_entra_only,
        severity=Severity.CRITICAL,
        remediation="Set authConfig.passwordAuth: Disabled and activeDirectoryAuth: Enabled; administrators are "
        "platform:postgresql.administrators.",
    ),
    resource_policy(
        "postgresql-secure-transport",
        "PostgreSQL servers require TLS 1.2 or later.",
        postgres_tls,
        severity=Severity.HIGH,
        remediation="Keep require_secure_transport on and ssl_min_protocol_version TLSv1.2 or TLSv1.3.",
    ),
    resource_policy(
        "postgresql-zone-redundant",
        "PostgreSQL servers keep a standby in another zone.",
        postgres_zone_redundant,
        severity=Severity.MEDIUM,
        remediation="Keep platform:postgresql.highAvailability: ZoneRedundant (the default; not on Burstable).",
    ),
    resource_policy(
        "postgresql-geo-redundant-backup",
        "PostgreSQL servers copy their backups to the paired region.",
        postgres_geo_backup,
        severity=Severity.MEDIUM,
        remediation="Keep platform:postgresql.geoRedundantBackup (the default); it is chosen at creation.",
    ),
    resource_policy(
        "postgresql-grant-narrow",
        "A workload's PostgreSQL role maps one managed identity, logs in and holds CONNECT, USAGE, table and "
        "sequence privileges only: no superuser, role or database creation, memberships, grants to PUBLIC, "
        "other object types or grant option.",
        postgres_grant_narrow,
        severity=Severity.HIGH,
        remediation="Grant through platform:workloads.<name>.postgresql, `<database>` or `<database>/<schema>`.",
    ),
]
