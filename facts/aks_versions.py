"""The Kubernetes minor versions AKS supports, and when the list was taken.

Source: MicrosoftDocs/azure-aks-docs `articles/aks/supported-kubernetes-versions.md` at f988e7e8
(2026-08-05), "AKS Kubernetes release calendar": GA minors with their end of life (the last
day of the month). Refresh: `az aks get-versions --location <region> --output table`, then
update SUPPORTED_MINORS and TAKEN_ON (and the policy packs' `oldestMinor`/`newestMinor`).
"""

from __future__ import annotations

TAKEN_ON = "2026-08-05"
# Minor -> end of life (community support), for minors AKS offers as GA on TAKEN_ON.
SUPPORTED_MINORS: dict[str, str] = {
    "1.34": "2026-11",
    "1.35": "2027-03",
    "1.36": "2027-06",
}
# Minors AKS has offered at all (GA, preview or retired): anything else never existed on AKS.
KNOWN_MINORS = tuple(f"1.{minor}" for minor in range(10, 38))


def minor_of(version: str) -> str:
    return ".".join(version.split(".")[:2])
