"""Keeps a MultiKueue dispatcher's kubeconfig for each worker signed in: runs in the cluster.

A CronJob on each dispatcher (planning/dispatch.py, `token_cronjob`) runs this file with the
platform's Python image. It signs in as the dispatchers' managed identity with the pod's
workload identity token, asks Entra ID for a token for the AKS server application (and, for an
on-premises site, for the site's own application, which no AKS cluster accepts), and writes
each worker's kubeconfig Secret in Kueue's namespace: the worker's API server and CA (from the
mounted ConfigMap the tenants' unit writes) and the token, inline, which is the one credential
Kueue v0.19 accepts (it refuses exec plugins and token files: multikueuecluster.go,
validateKubeconfig) and reloads when the Secret changes. Nothing of it is in Pulumi's state.

The token lives an hour or more (Entra ID's default is 60-90 minutes,
learn.microsoft.com/entra/identity-platform/access-tokens#token-lifetime; a managed identity's
can last 24 hours); the job runs every ten minutes and asks for a new one when the one in the
Secret expires within 40 minutes, or the worker's server or CA changed. Revoking is removing
the identity's grants on the workers, which Kubernetes and Azure RBAC check on every request.

Python's standard library only: the image has nothing else. Kubernetes reads a kubeconfig as
YAML, of which JSON is a subset.
"""

from __future__ import annotations

import base64
import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

# The AKS server application every Entra ID token for an AKS API server is issued to
# (Azure/kubelogin; planning/kubeconfig.py AKS_SERVER_ID).
AKS_SERVER_SCOPE = "6dae42f8-4368-4678-94ff-3960e28e3630/.default"
KUBECONFIG_KEY = "kubeconfig"
# The Secret per worker a MultiKueueCluster names: `multikueue-<worker>`.
SECRET_PREFIX = "multikueue-"
RENEW_BEFORE_SECONDS = 40 * 60
USER = "multikueue"
SERVICE_ACCOUNT_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def kubeconfig(worker: str, server: str, certificate_authority_data: str, token: str) -> str:
    """What a MultiKueueCluster accepts: the server, its CA inline and an inline token."""
    return json.dumps(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": worker,
                    "cluster": {"server": server, "certificate-authority-data": certificate_authority_data},
                }
            ],
            "users": [{"name": USER, "user": {"token": token}}],
            "contexts": [{"name": worker, "context": {"cluster": worker, "user": USER}}],
            "current-context": worker,
        },
        indent=2,
    )


def expires_at(token: str) -> int:
    """A JWT's `exp` claim (not verified: only to decide when to renew); 0 if unreadable."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return int(claims.get("exp", 0))
    except (IndexError, ValueError):
        return 0


def audience_of(token: str) -> str | None:
    """The token's `aud` claim, None where it has none or is unreadable."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError):
        return None
    audience = claims.get("aud") if isinstance(claims, dict) else None
    return str(audience) if audience is not None else None


def needs_renewal(
    current: str | None, server: str, certificate_authority_data: str, now: float, scope: str = AKS_SERVER_SCOPE
) -> bool:
    """Whether a worker's kubeconfig must be rewritten: missing, for another server or CA, its
    token for another audience than the worker's scope, or expiring within RENEW_BEFORE_SECONDS."""
    if not current:
        return True
    try:
        config = json.loads(current)
        cluster = config["clusters"][0]["cluster"]
        token = config["users"][0]["user"]["token"]
    except (ValueError, KeyError, IndexError, TypeError):
        return True
    if cluster.get("server") != server or cluster.get("certificate-authority-data") != certificate_authority_data:
        return True
    audience = audience_of(token)
    if audience is not None and audience.lower() != scope.lower().removesuffix("/.default"):
        return True
    return expires_at(token) - now < RENEW_BEFORE_SECONDS


def token_request(tenant: str, client_id: str, assertion: str, scope: str = AKS_SERVER_SCOPE) -> tuple[str, bytes]:
    """The client-credentials request with a federated assertion (Entra ID's workload identity
    federation: learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow)."""
    authority = os.environ.get("AZURE_AUTHORITY_HOST", "https://login.microsoftonline.com/")
    url = f"{authority.rstrip('/')}/{tenant}/oauth2/v2.0/token"
    body = urllib.parse.urlencode(
        {
            "client_id": client_id,
            "scope": scope,
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
        }
    ).encode()
    return url, body


class Cluster:
    """The dispatcher's own API server, as the pod's service account."""

    def __init__(self, base: str, token: str, context: ssl.SSLContext, namespace: str):
        self.base, self.token, self.context, self.namespace = base, token, context, namespace

    @classmethod
    def in_cluster(cls) -> Cluster:
        host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
        context = ssl.create_default_context(cafile=str(SERVICE_ACCOUNT_DIR / "ca.crt"))
        token = (SERVICE_ACCOUNT_DIR / "token").read_text()
        namespace = (SERVICE_ACCOUNT_DIR / "namespace").read_text().strip()
        return cls(f"https://{host}:{port}", token, context, namespace)

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any] | None:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
                return dict(json.load(response))
        except urllib.error.HTTPError as error:
            if error.code == 404 and method == "GET":
                return None
            raise

    def secret_path(self, name: str = "") -> str:
        return f"/api/v1/namespaces/{self.namespace}/secrets" + (f"/{name}" if name else "")

    def write_kubeconfig(self, secret: str, current: dict[str, Any] | None, config: str) -> None:
        """Creates the Secret or replaces its data (its type is Opaque, and stays so)."""
        data = {KUBECONFIG_KEY: base64.b64encode(config.encode()).decode()}
        if current is None:
            body = {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": secret}, "data": data}
            self.request("POST", self.secret_path(), body)
        else:
            self.request("PUT", self.secret_path(secret), {**current, "data": data})


def scopes(directory: Path) -> dict[str, str]:
    """worker -> the token scope its API server takes, where it is not AKS's (`<worker>.scope`:
    an on-premises site's own audience, docs/hybrid.md)."""
    return {path.name.removesuffix(".scope"): path.read_text().strip() for path in sorted(directory.glob("*.scope"))}


def workers(directory: Path) -> dict[str, tuple[str, str]]:
    """worker -> (server, CA) from the mounted ConfigMap: keys `<worker>.server`, `<worker>.ca`."""
    found = {}
    for server in sorted(directory.glob("*.server")):
        worker = server.name.removesuffix(".server")
        found[worker] = (server.read_text().strip(), (directory / f"{worker}.ca").read_text().strip())
    return found


def refresh(
    cluster: Cluster,
    endpoints: dict[str, tuple[str, str]],
    secret_name: Any,
    fetch_token: Any,
    now: float,
    worker_scopes: dict[str, str] | None = None,
) -> list[str]:
    """Rewrites every worker's kubeconfig that needs it; returns the workers rewritten. One token
    per scope: AKS's for the AKS workers, each site's own for a site (`fetch_token(scope)`). A
    scope Entra ID refuses (or does not answer for) leaves its workers as they are and the others
    are still written; then `RefreshFailed` says which (the job fails and runs again)."""
    tokens: dict[str, str] = {}
    failed: dict[str, OSError] = {}
    written = []
    for worker, (server, ca) in endpoints.items():
        name = secret_name(worker)
        scope = (worker_scopes or {}).get(worker, AKS_SERVER_SCOPE)
        current = cluster.request("GET", cluster.secret_path(name))
        existing = base64.b64decode((current or {}).get("data", {}).get(KUBECONFIG_KEY, "")).decode() or None
        if scope in failed or not needs_renewal(existing, server, ca, now, scope):
            continue
        if scope not in tokens:
            try:
                tokens[scope] = fetch_token(scope)
            except OSError as error:  # urllib's errors are OSErrors
                failed[scope] = error
                continue
        cluster.write_kubeconfig(name, current, kubeconfig(worker, server, ca, str(tokens[scope])))
        written.append(worker)
    if failed:
        raise RefreshFailed(written, failed)
    return written


class RefreshFailed(OSError):
    """Some scopes' tokens could not be had; `written` are the workers rewritten anyway."""

    def __init__(self, written: list[str], failed: dict[str, OSError]):
        super().__init__(f"no token for {', '.join(sorted(failed))}: {next(iter(failed.values()))}")
        self.written = written
        self.failed = failed


def fetch_entra_token(scope: str = AKS_SERVER_SCOPE) -> str:
    assertion = Path(os.environ["AZURE_FEDERATED_TOKEN_FILE"]).read_text()
    url, body = token_request(os.environ["AZURE_TENANT_ID"], os.environ["AZURE_CLIENT_ID"], assertion, scope)
    with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=30) as response:
        return str(json.load(response)["access_token"])


def main() -> int:
    directory = Path(sys.argv[1] if len(sys.argv) > 1 else "/etc/multikueue/workers")
    try:
        written = refresh(
            Cluster.in_cluster(),
            workers(directory),
            lambda w: SECRET_PREFIX + w,
            fetch_entra_token,
            time.time(),
            scopes(directory),
        )
    except RefreshFailed as error:
        print(json.dumps({"rewritten": error.written, "failed": sorted(error.failed)}))
        return 1
    print(json.dumps({"rewritten": written}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
