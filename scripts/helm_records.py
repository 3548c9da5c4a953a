"""Copy Helm's release records from Secrets to ConfigMaps, once per cluster deployed before the
platform kept them as ConfigMaps (planning/charts.py, HELM_DRIVER; docs/upgrades.md).

Reads `kubectl get secrets -A -l owner=helm -o json` on stdin and writes the ConfigMaps to
apply on stdout, a Kubernetes List:

    kubectl get secrets -A -l owner=helm -o json \\
      | venv/bin/python scripts/helm_records.py | kubectl apply --server-side -f -

Both of Helm's drivers store the same encoded release under `release` with the same labels
and names (helm/helm pkg/storage/driver/secrets.go `newSecretsObject`, `Data:
map[string][]byte{"release": []byte(s)}`; cfgmaps.go `newConfigMapsObject`, `Data:
map[string]string{"release": s}`): the ConfigMap's value is the Secret's, decoded once from the
API's base64. The Secrets stay until removed by hand, after the first `pulumi up` succeeds:

    kubectl delete secrets -A -l owner=helm
"""

from __future__ import annotations

import base64
import json
import sys
from typing import Any

# Helm's record labels (both drivers set these; createdAt/modifiedAt on write).
LABELS = ("name", "owner", "status", "version", "createdAt", "modifiedAt")
RECORD_TYPE = "helm.sh/release.v1"


def config_map(secret: dict[str, Any]) -> dict[str, Any]:
    """One record: the Secret `sh.helm.release.v1.<release>.v<n>` as Helm's ConfigMap driver writes it."""
    if secret.get("type") != RECORD_TYPE:
        raise ValueError(f"{secret['metadata']['name']} is not a Helm release record (type {secret.get('type')})")
    metadata = secret["metadata"]
    labels = {k: v for k, v in (metadata.get("labels") or {}).items() if k in LABELS}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": metadata["name"], "namespace": metadata["namespace"], "labels": labels},
        "data": {"release": base64.b64decode(secret["data"]["release"]).decode()},
    }


def convert(secrets: dict[str, Any]) -> dict[str, Any]:
    items = [config_map(s) for s in secrets.get("items", []) if s.get("type") == RECORD_TYPE]
    return {"apiVersion": "v1", "kind": "List", "items": items}


def main() -> int:
    json.dump(convert(json.load(sys.stdin)), sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
