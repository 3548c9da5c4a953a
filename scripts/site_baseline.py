"""Upload an on-premises site's baseline (planning/site_baseline.py) into its container, where the
site's Flux reads it (components/arc_site.py, docs/hybrid.md).

The site's deploy job runs it after `pulumi up` of `<stack>.cluster-<site>`, signed in as its own
identity (Storage Blob Data Contributor on the site's baseline container: planning/delivery.py):
it trades the job's GitHub OIDC token for an Entra ID token for Azure Storage, which never leaves
the job. pulumi-azure-native's `storage.Blob` cannot do this: it signs with the account's shared
key, which the account refuses (pulumi/pulumi-azure-native#2015). Files the baseline no longer has
are deleted, so Flux prunes their objects; the container keeps versions for 30 days.

    pulumi stack output baselineDocuments --json --stack prod.cluster-phx1 > baseline.json
    venv/bin/python scripts/site_baseline.py --url "$(pulumi stack output site --json | jq -r .baselineUrl)" \\
      --documents baseline.json --token "$(az account get-access-token --resource https://storage.azure.com \\
      --query accessToken -o tsv)"
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planning import multikueue_token  # noqa: E402

STORAGE_SCOPE = "https://storage.azure.com/.default"
# Entra ID authorization needs 2017-11-09 or later (learn.microsoft.com/rest/api/storageservices/
# authorize-with-azure-active-directory); the Put Blob, List Blobs and Delete Blob of this version.
API_VERSION = "2021-08-06"


def entra_token() -> str:
    """The job's Entra ID token for Azure Storage, from its federated GitHub token."""
    assertion = Path(os.environ["AZURE_FEDERATED_TOKEN_FILE"]).read_text()
    url, body = multikueue_token.token_request(
        os.environ["AZURE_TENANT_ID"], os.environ["AZURE_CLIENT_ID"], assertion, STORAGE_SCOPE
    )
    with urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=30) as response:
        return str(json.load(response)["access_token"])


def plan(documents: dict[str, str], present: list[str]) -> tuple[list[str], list[str]]:
    """What to write (every document: a write is idempotent) and what to delete (blobs that are
    no longer documents)."""
    return sorted(documents), sorted(set(present) - set(documents))


def _request(method: str, url: str, token: str, body: bytes | None = None, **headers: str) -> bytes:
    request = urllib.request.Request(
        url,
        data=body,
        method=method,
        headers={"Authorization": f"Bearer {token}", "x-ms-version": API_VERSION, **headers},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return bytes(response.read())
    except urllib.error.HTTPError as error:
        raise SystemExit(f"Azure Storage refused {method} {url}: {error.code} {error.read().decode()[:300]}") from None


def present_blobs(container_url: str, token: str) -> list[str]:
    names: list[str] = []
    marker = ""
    while True:
        query = {"restype": "container", "comp": "list", **({"marker": marker} if marker else {})}
        listing = ElementTree.fromstring(_request("GET", f"{container_url}?{urllib.parse.urlencode(query)}", token))
        names += [name.text or "" for name in listing.iter("Name")]
        marker = listing.findtext("NextMarker") or ""
        if not marker:
            return names


def upload(container_url: str, documents: dict[str, str], token: str) -> int:
    container_url = container_url.rstrip("/")
    writes, deletes = plan(documents, present_blobs(container_url, token))
    for name in writes:
        _request(
            "PUT",
            f"{container_url}/{urllib.parse.quote(name)}",
            token,
            documents[name].encode(),
            **{"x-ms-blob-type": "BlockBlob", "Content-Type": "application/yaml"},
        )
    for name in deletes:
        _request("DELETE", f"{container_url}/{urllib.parse.quote(name)}", token)
    print(f"{len(writes)} files written and {len(deletes)} deleted in {container_url}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the baseline container (the site stack's site.baselineUrl)")
    parser.add_argument("--documents", required=True, help="a JSON file of path -> YAML (output baselineDocuments)")
    parser.add_argument("--token", help="an Entra ID token for Azure Storage; default: the job's, from its OIDC token")
    args = parser.parse_args(argv)
    documents = json.loads(Path(args.documents).read_text())
    return upload(args.url, documents, args.token or entra_token())


if __name__ == "__main__":
    sys.exit(main())
