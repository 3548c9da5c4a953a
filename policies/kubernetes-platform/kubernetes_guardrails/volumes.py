"""Persistent volumes the platform makes: reserved for one claim, on a CSI driver, and on Managed
Lustre a team's directory only (planning/lustre_csi.py)."""

from __future__ import annotations

from guardrail import lookup, resource_policy
from pulumi_policy import Severity

PERSISTENT_VOLUME = "kubernetes:core/v1:PersistentVolume"
CSI_DRIVER = "kubernetes:storage.k8s.io/v1:CSIDriver"
LUSTRE_DRIVER = "azurelustre.csi.azure.com"
TEAM_LABEL = "platform.ai/team"
# Volume sources that reach a node's own disk or another server around the CSI drivers.
HOST_SOURCES = ("hostPath", "local", "nfs", "iscsi", "fc", "cephfs", "glusterfs", "rbd", "flexVolume")


def volumes_scoped(args, report):
    if args.resource_type == CSI_DRIVER:
        name = lookup(args.props, "metadata.name")
        modes = list(lookup(args.props, "spec.volumeLifecycleModes") or ["Persistent"])
        if name == LUSTRE_DRIVER and "Ephemeral" in modes:
            report(
                f"CSIDriver {name} allows inline (Ephemeral) volumes: any pod could mount any file system "
                "address and directory without a claim."
            )
        return
    if args.resource_type != PERSISTENT_VOLUME:
        return
    spec = lookup(args.props, "spec") or {}
    name = lookup(args.props, "metadata.name")
    for source in HOST_SOURCES:
        if spec.get(source) is not None:
            report(f"Volume {name} is a {source} volume: it reaches around the platform's CSI drivers.")
    claim = spec.get("claimRef") or {}
    if not claim.get("namespace") or not claim.get("name"):
        report(f"Volume {name} names no claim (claimRef): any claim of a matching size in any namespace may bind it.")
    csi = spec.get("csi") or {}
    if csi.get("driver") != LUSTRE_DRIVER:
        return
    team = (lookup(args.props, "metadata.labels") or {}).get(TEAM_LABEL)
    directory = str((csi.get("volumeAttributes") or {}).get("sub-dir") or "")
    if not team:
        report(f"Lustre volume {name} has no {TEAM_LABEL} label: whose directory it mounts is not stated.")
    elif directory.strip("/") != f"teams/{team}":
        found = f"sub-dir {directory!r}" if directory else "no sub-dir, the whole file system"
        report(f"Lustre volume {name} of team {team} mounts {found}, not teams/{team}.")
    if spec.get("persistentVolumeReclaimPolicy") != "Retain":
        report(f"Lustre volume {name} is not Retain: the driver cannot delete a static volume's data.")


POLICIES = [
    resource_policy(
        "k8s-persistent-volumes-scoped",
        "Persistent volumes are reserved for one claim and reached through a CSI driver; a Managed Lustre "
        "volume mounts its team's directory only, and the Lustre driver takes no inline volumes.",
        volumes_scoped,
        severity=Severity.HIGH,
        remediation="Make volumes with planning/lustre_csi.py (claimRef, sub-dir teams/<team>, Retain) and keep "
        "the CSIDriver's volumeLifecycleModes at Persistent.",
    ),
]
