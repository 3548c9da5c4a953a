"""The dashboards of dashboards/ and how they reach Managed Grafana (pure).

They are provisioned by the tenants' deploy job after its `pulumi up` (scripts/dashboards.py,
`.github/workflows/pulumi.yml`), through Grafana's HTTP API with an Entra ID token of the job's
own identity, not by a Pulumi provider: a provider's credentials are its inputs, which Pulumi
keeps in the state, and the tenants' state is read by its plan identity, which every branch's
preview signs in as (docs/decisions/0009-who-reaches-what.md). The token here lives in the job.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DASHBOARDS = Path(__file__).resolve().parent.parent / "dashboards"
# The Entra ID application a token for Managed Grafana's API is issued to (`az account
# get-access-token --resource <it>`): learn.microsoft.com/azure/managed-grafana/
# how-to-authenticate-data-plane-api (2026).
GRAFANA_TOKEN_AUDIENCE = "6f2d169c-08f3-4a4c-a982-bcaf2d038c45"
FOLDER_UID = "platform"
FOLDER_TITLE = "Platform"


def dashboard_files() -> dict[str, dict[str, Any]]:
    """Each dashboard of dashboards/, by file name (without .json)."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(DASHBOARDS.glob("*.json"))}


def requests(environment: str, boards: dict[str, dict[str, Any]]) -> list[tuple[str, str, dict[str, Any]]]:
    """Grafana API calls, in order: the folder, then each dashboard, overwritten by its uid
    (grafana.com/docs/grafana/latest/developers/http_api: folder, dashboard)."""
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("POST", "/api/folders", {"uid": FOLDER_UID, "title": FOLDER_TITLE})
    ]
    for stem, board in boards.items():
        calls.append(
            (
                "POST",
                "/api/dashboards/db",
                {
                    "dashboard": {**board, "id": None},
                    "folderUid": FOLDER_UID,
                    "overwrite": True,
                    "message": f"{environment}: dashboards/{stem}.json",
                },
            )
        )
    return calls
