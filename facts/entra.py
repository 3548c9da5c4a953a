"""Microsoft Entra ID's v2.0 endpoints for a tenant (learn.microsoft.com/entra/identity-platform
`access-tokens.md`, "Validate tokens"; `access-token-claims-reference.md`): a v2.0 access token's
`iss` is `https://login.microsoftonline.com/<tenant>/v2.0` and its `aud` the resource
application's client ID; an application gets v2.0 tokens when its `requestedAccessTokenVersion`
is 2 (null or 1: v1.0, issuer `https://sts.windows.net/<tenant>/`)."""

from __future__ import annotations

AUTHORITY = "https://login.microsoftonline.com"


def issuer(tenant_id: str) -> str:
    return f"{AUTHORITY}/{tenant_id}/v2.0"


def v1_issuer(tenant_id: str) -> str:
    """A v1.0 token's issuer: what an application without `requestedAccessTokenVersion: 2` gets."""
    return f"https://sts.windows.net/{tenant_id}/"


def jwks_uri(tenant_id: str) -> str:
    return f"{AUTHORITY}/{tenant_id}/discovery/v2.0/keys"


def token_endpoint(tenant_id: str) -> str:
    return f"{AUTHORITY}/{tenant_id}/oauth2/v2.0/token"


# Microsoft Graph, the resource whose app roles (application permissions) administer the tenant.
MICROSOFT_GRAPH_APP_ID = "00000003-0000-0000-c000-000000000000"
# Graph's application permissions that reach every app role, and so the whole tenant: writing
# app-role assignments (learn.microsoft.com/graph/api/serviceprincipal-post-approleassignedto:
# AppRoleAssignment.ReadWrite.All and Application.Read.All, no narrower permission) lets the
# holder grant itself RoleManagement.ReadWrite.Directory, and that any directory role.
TENANT_WIDE_GRAPH_ROLES: dict[str, str] = {
    "06b708a9-e830-4db3-a914-8e69da51d44f": "AppRoleAssignment.ReadWrite.All",
    "9e3f62cf-ca93-4989-b6ce-bf83c28f9fe8": "RoleManagement.ReadWrite.Directory",
    "1bfefb4e-e0b5-418b-a88f-73c46d2cc8e9": "Application.ReadWrite.All",
    "19dbc75e-c2e2-444c-a770-ec69d8559fc7": "Directory.ReadWrite.All",
}
# An app role whose allowed member type is Application is granted to service principals (a
# managed identity among them) and lands in their app-only tokens' `roles` claim
# (learn.microsoft.com/graph/api/resources/approle).
APPLICATION_MEMBER = "Application"
# An application's sign-in audience: this tenant alone.
SINGLE_TENANT = "AzureADMyOrg"
