"""How a deploy or preview job signs Helm in to the environment's registry, where every chart is
(planning/charts.py): its identity's Entra ID token, exchanged for a registry refresh token,
written where Helm reads registry credentials. Nothing of it enters the state.

The exchange is ACR's: `POST https://<registry>/oauth2/exchange` with
`grant_type=access_token`, `service=<registry>`, `tenant` and an Entra ID access token answers
`refresh_token`, which Helm presents as the password of the user
`00000000-0000-0000-0000-000000000000` (github.com/Azure/acr/blob/main/docs/AAD-OAuth.md; learn.microsoft.com,
"Push and pull Helm charts to an Azure container registry", `az acr login --expose-token`). A
refresh token lives three hours, so the job writes a fresh one every REFRESH_SECONDS. Helm reads
registry credentials from a Docker-style config (`auths` by host; helm/helm pkg/registry,
ORAS's credentials store). pulumi-kubernetes' Helm takes its path from the provider's
`helmReleaseSettings.registryConfigPath`, else PULUMI_K8S_HELM_REGISTRY_CONFIG_PATH, else Helm's
default under its config home (pulumi/pulumi-kubernetes provider/pkg/provider/provider.go), not
HELM_REGISTRY_CONFIG: registry_config_path() follows the same order.
"""

from __future__ import annotations

import base64
import urllib.parse
from collections.abc import Mapping
from pathlib import Path

# The registry's own audience: accepted by the exchange whether or not the registry still takes
# Resource Manager tokens (a built-in Azure Policy turns those off: "authentication-as-arm").
ACR_SCOPE = "https://containerregistry.azure.net/.default"
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


def registry_config_path(environ: Mapping[str, str], home: Path) -> Path:
    """Where the provider's Helm reads registry credentials (the program sets no
    registryConfigPath): PULUMI_K8S_HELM_REGISTRY_CONFIG_PATH, else Helm's config home
    (HELM_CONFIG_HOME, else $XDG_CONFIG_HOME/helm, else ~/.config/helm; helm/helm pkg/helmpath)."""
    if environ.get("PULUMI_K8S_HELM_REGISTRY_CONFIG_PATH"):
        return Path(environ["PULUMI_K8S_HELM_REGISTRY_CONFIG_PATH"])
    config_home = environ.get("HELM_CONFIG_HOME") or str(
        Path(environ.get("XDG_CONFIG_HOME") or home / ".config") / "helm"
    )
    return Path(config_home) / "registry" / "config.json"
