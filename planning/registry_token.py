"""How a deploy or preview job signs Helm in to the environment's registry, where every chart is
(planning/charts.py): its identity's Entra ID token, exchanged for a registry refresh token,
written where Helm reads registry credentials. Nothing of it enters the state.

The exchange is ACR's: `POST https://<registry>/oauth2/exchange` with
`grant_type=access_token`, `service=<registry>`, `tenant` and an Entra ID access token for Azure
Resource Manager answers `refresh_token`, which Helm presents as the password of the user
`00000000-0000-0000-0000-000000000000` (github.com/Azure/acr/blob/main/docs/AAD-OAuth.md; learn.microsoft.com,
"Push and pull Helm charts to an Azure container registry", `az acr login --expose-token`). A
refresh token lives three hours, so the job writes a fresh one every REFRESH_SECONDS. Helm reads
registry credentials from a Docker-style config (`auths` by host; helm/helm pkg/registry,
ORAS's credentials store) at `$HELM_REGISTRY_CONFIG`, by default
`~/.config/helm/registry/config.json` (helm/helm pkg/helmpath), which the provider's Helm uses
unless `helmReleaseSettings.registryConfigPath` says otherwise.
"""

from __future__ import annotations

import base64
import urllib.parse

ARM_SCOPE = "https://management.azure.com/.default"
ACR_TOKEN_USER = "00000000-0000-0000-0000-000000000000"
# Well inside a refresh token's three hours, and short of a prod run's eight.
REFRESH_SECONDS = 30 * 60


def exchange_request(login_server: str, tenant: str, access_token: str) -> tuple[str, bytes]:
    """The registry's exchange of an Entra ID access token for its refresh token."""
    body = urllib.parse.urlencode(
        {"grant_type": "access_token", "service": login_server, "tenant": tenant, "access_token": access_token}
    ).encode()
    return f"https://{login_server}/oauth2/exchange", body


def registry_config(login_server: str, refresh_token: str) -> dict[str, dict[str, dict[str, str]]]:
    """Helm's registry config with the one registry's credentials."""
    auth = base64.b64encode(f"{ACR_TOKEN_USER}:{refresh_token}".encode()).decode()
    return {"auths": {login_server: {"auth": auth}}}
