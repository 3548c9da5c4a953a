#!/usr/bin/env python3
"""Sign Helm in to the environment's registry as this job's identity, and keep it signed in.

The Pulumi job runs it before `pulumi preview` or `up` of a unit with Helm releases: every chart
comes from the environment's registry (planning/charts.py), which takes no anonymous pull. It
trades the job's federated GitHub token (AZURE_FEDERATED_TOKEN_FILE, kept fresh by the job) for
an Entra ID token, that for a registry refresh token (planning/registry_token.py), and writes
Helm's registry config; with `--every` it does so again on that period until killed.

    venv/bin/python scripts/registry_login.py --stack prod [--out PATH] [--every SECONDS]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planning import multikueue_token, registry_token  # noqa: E402
from planning.naming import Naming  # noqa: E402
from stackconfig.stacks import stack_argument  # noqa: E402
from validation.loader import parse_platform_config  # noqa: E402
from validation.stackfile import read_stack_config  # noqa: E402


def _post(url: str, body: bytes) -> dict:
    request = urllib.request.Request(url, data=body, method="POST")
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.load(response))


def refresh_token(login_server: str) -> str:
    tenant, client = os.environ["AZURE_TENANT_ID"], os.environ["AZURE_CLIENT_ID"]
    assertion = Path(os.environ["AZURE_FEDERATED_TOKEN_FILE"]).read_text()
    url, body = multikueue_token.token_request(tenant, client, assertion, registry_token.ACR_SCOPE)
    access = str(_post(url, body)["access_token"])
    url, body = registry_token.exchange_request(login_server, tenant, access)
    return str(_post(url, body)["refresh_token"])


def write(out: Path, login_server: str, token: str) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    temporary = out.with_suffix(".new")
    temporary.write_text(json.dumps(registry_token.registry_config(login_server, token)))
    temporary.chmod(0o600)
    temporary.replace(out)  # Helm never reads half a file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--stack", required=True, type=stack_argument, help="whose registry (stacks/Pulumi.<stack>.yaml)"
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=registry_token.registry_config_path(os.environ, Path.home()),
        help="default: where the provider's Helm reads it",
    )
    parser.add_argument("--every", type=int, default=0, help="sign in again every SECONDS (0: once)")
    args = parser.parse_args(argv)
    config = parse_platform_config(read_stack_config(ROOT, args.stack).values, stack=args.stack)
    login_server = Naming(config.prefix, config.environment).registry_login_server()
    while True:
        try:
            write(args.out, login_server, refresh_token(login_server))
        except Exception as error:  # keep the last credentials; a later round may succeed
            print(f"{time.strftime('%H:%M:%S')} could not sign in to {login_server}: {error}", file=sys.stderr)
            if not args.every:
                return 1
        if not args.every:
            print(f"signed Helm in to {login_server}")
            return 0
        time.sleep(args.every)


if __name__ == "__main__":
    sys.exit(main())
