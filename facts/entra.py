"""Microsoft Entra ID's v2.0 endpoints for a tenant (learn.microsoft.com/entra/identity-platform
`access-tokens.md`, "Validate tokens"; `access-token-claims-reference.md`): a v2.0 access token's
`iss` is `https://login.microsoftonline.com/<tenant>/v2.0` and its `aud` the resource
application's client ID; an application gets v2.0 tokens when its `requestedAccessTokenVersion`
is 2 (null or 1: v1.0, issuer `https://sts.windows.net/<tenant>/`)."""

from __future__ import annotations

AUTHORITY = "https://login.microsoftonline.com"


def issuer(tenant_id: str) -> str:
    return f"{AUTHORITY}/{tenant_id}/v2.0"


def jwks_uri(tenant_id: str) -> str:
    return f"{AUTHORITY}/{tenant_id}/discovery/v2.0/keys"


def token_endpoint(tenant_id: str) -> str:
    return f"{AUTHORITY}/{tenant_id}/oauth2/v2.0/token"
