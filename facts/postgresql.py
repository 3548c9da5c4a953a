"""Azure Database for PostgreSQL flexible server: what the platform's choices rest on.

Sources (MicrosoftDocs/azure-databases-docs, articles/postgresql/):
- network/concepts-networking-private.md and concepts-networking-private-link.md: VNet integration
  and public access with private endpoints are chosen at creation and exclusive; Private Link is
  Microsoft's recommended alternative; the private endpoint's zone is
  `privatelink.postgres.database.azure.com` (group `postgresqlServer`, as Azure Verified Modules'
  avm/res/db-for-postgre-sql/flexible-server uses).
- high-availability/how-to-configure-high-availability.md: the Burstable tier has no high
  availability; a region without zones offers SameZone only.
- backup-restore/concepts-backup-restore.md and concepts-business-continuity.md: geo-redundant
  backup is chosen at creation only, into the paired region; geo-restore RPO under an hour, its RTO
  "varies"; high availability's RPO 0 and RTO under 120 s.
- security/security-data-encryption.md: customer-managed keys are chosen at creation; with
  geo-redundant backup the geo key is in a vault of the geo region, with an identity of its own.
- security/security-manage-entra-users.md and security-entra-configure.md: only an Entra
  administrator creates a role for an object ID, in the `postgres` database, with
  `pgaadauth_create_principal_with_oid`; clients ask tokens for the scope below.
- pulumi-azure-native 3.29.0 `dbforpostgresql.Server` (API 2025-08-01): `AuthConfigArgs.password_auth`
  defaults to "Enabled", so the platform sets "Disabled" itself; Entra administrators are
  `AdministratorsMicrosoftEntra`.
"""

from __future__ import annotations

PRIVATE_ENDPOINT_GROUP = "postgresqlServer"
PRIVATE_DNS_ZONE = "privatelink.postgres.database.azure.com"
TOKEN_SCOPE = "https://ossrdbms-aad.database.windows.net/.default"
SKU_TIERS = ("Burstable", "GeneralPurpose", "MemoryOptimized")
HA_MODES = ("Disabled", "SameZone", "ZoneRedundant")
# Where a managed identity's role is made, by an Entra administrator signed in with a token.
ROLE_DATABASE = "postgres"
CREATE_ROLE = "SELECT * FROM pgaadauth_create_principal_with_oid(%s, %s, 'service', false, false)"
# Chosen at creation, so a change is a new server (the review's replacement facts).
FIXED_AT_CREATION = ("network", "backup.geoRedundantBackup", "dataEncryption")
