"""Provision dashboards/ into an environment's Managed Grafana (planning/dashboards.py).

The tenants' deploy job runs it after `pulumi up`, signed in as its own identity: it trades the
job's GitHub OIDC token (the file AZURE_FEDERATED_TOKEN_FILE, kept fresh by the job) for an
Entra ID token for Grafana's API, which never leaves the job. A person passes a token instead:

    venv/bin/python scripts/dashboards.py --stack dev --endpoint https://<grafana endpoint> \\
      --token "$(az account get-access-token --resource 6f2d169c-08f3-4a4c-a982-bcaf2d038c45 --query accessToken -o tsv)"
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planning import dashboards, multikueue_token  # noqa: E402
from stackconfig.stacks import stack_argument  # noqa: E402


def entra_token() -> str:
    """The job's Entra ID token for Grafana, from its federated GitHub token."""
    assertion = Path(os.environ["AZURE_FEDERATED_TOKEN_FILE"]).read_text()
    url, body = multikueue_token.token_request(
        os.environ["AZURE_TENANT_ID"],
        os.environ["AZURE_CLIENT_ID"],
        assertion,
        f"{dashboards.GRAFANA_TOKEN_AUDIENCE}/.default",
    )
    with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=30) as response:
        return str(json.load(response)["access_token"])


def provision(endpoint: str, token: str, environment: str) -> int:
    calls = dashboards.requests(environment, dashboards.dashboard_files())
    for method, path, body in calls:
        request = urllib.request.Request(
            endpoint.rstrip("/") + path,
            data=json.dumps(body).encode(),
            method=method,
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=60):
                pass
        except urllib.error.HTTPError as error:
            # The folder exists already (Grafana answers 409 or 412): keep it.
            if path == "/api/folders" and error.code in (409, 412):
                continue
            raise SystemExit(f"Grafana refused {method} {path}: {error.code} {error.read().decode()[:300]}") from None
    print(f"{len(calls) - 1} dashboards provisioned into {endpoint}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True, type=stack_argument, help="the platform stack: prod, prod-scale")
    parser.add_argument("--endpoint", required=True, help="the Grafana endpoint (the tenants stack's grafanaEndpoint)")
    parser.add_argument("--token", help="an Entra ID token for Grafana; default: the job's, from its OIDC token")
    args = parser.parse_args(argv)
    return provision(args.endpoint, args.token or entra_token(), args.stack)


if __name__ == "__main__":
    sys.exit(main())
