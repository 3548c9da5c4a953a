"""Azure Managed Lustre inside the clusters (pure planning): the Lustre CSI driver's node plugin
on GPU nodes, and a volume per training namespace (docs/lustre.md, "Mounting").

The driver (kubernetes-sigs/azurelustre-csi-driver v0.4.0, facts/lustre.py) is installed as
less than its own manifests:

- **Node plugin only.** Its controller serves dynamic provisioning alone (it creates AMLFS file
  systems with the node's cloud credentials); the platform makes file systems in the data unit,
  and a static volume with `attachRequired: false` never calls a controller.
- **No credential.** The node plugin reads `/etc/kubernetes/azure.json` only to build Azure and
  Kubernetes clients for provisioning and for removing an optional startup taint
  (pkg/azurelustre/azurelustre.go, NewDriver); mounting needs neither. So the node's cloud config
  is not mounted, the pods get no service account token, and no ClusterRole is bound (upstream
  binds cluster-wide `secrets get/list` and `nodes patch` to it).
- **Persistent volumes only.** The CSIDriver allows no inline (ephemeral) volumes, through which
  any pod could name a file system address and sub-directory itself; a pod reaches Lustre only
  through its namespace's claim, which is bound to one volume whose sub-directory is its team's.
- **GPU nodes only**, in a namespace of its own (Pod Security `privileged`, a reviewed exception
  of the policy packs): the plugin is privileged, on the host's network (LNet runs in the host's
  kernel) and loads kernel modules. It tolerates what the platform's other GPU node agents do.

Each node plugin start installs the Lustre client for the node's exact kernel from
packages.microsoft.com (AKS's own required FQDN) and loads its modules; the mount is the node's,
over its Ethernet interfaces (LNet `tcp`), so NSGs see node addresses and no pod NetworkPolicy is
involved.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from facts import lustre as facts
from facts.aks_node import OS_SKU_EFFECTIVE_LABEL
from facts.gpu import ACCELERATOR_LABEL, LABEL_PREFIX, PURPOSE_LABEL
from planning.gpu import node_agent_tolerations
from planning.images import mirrored
from planning.naming import Naming
from stackconfig.model import ClusterConfig, PlatformConfig

NAMESPACE = "azurelustre-csi"
NODE_PLUGIN = "csi-azurelustre-node"
# The claim every training namespace of a cluster with Lustre mounts its team's directory by.
CLAIM = "training-data"
TEAM_LABEL = f"{LABEL_PREFIX}/team"
CLAIM_REQUEST = "1Gi"
OS_SKU_LABEL = OS_SKU_EFFECTIVE_LABEL
_SOCKET = "/csi/csi.sock"
_REGISTRATION = f"/var/lib/kubelet/plugins/{facts.CSI_DRIVER}/csi.sock"


def lustre_clusters(config: PlatformConfig) -> list[str]:
    """Clusters whose GPU training pools read a file system: those in a region that has one."""
    if config.lustre is None:
        return []
    return [
        key
        for key, cluster in config.clusters.items()
        if cluster.region in config.lustre.file_systems
        and any(pool.purpose == "training" for pool in cluster.gpu_pools.values())
    ]


def team_directory(team: str) -> str:
    """The sub-directory of the file system a team's namespaces mount."""
    return f"teams/{team}"


@dataclass(frozen=True)
class TrainingVolume:
    """One training namespace's view of its region's file system."""

    namespace: str
    team: str
    file_system: str
    capacity_tib: int
    # What the file system is made of (sku, size, zone, subnet): a change replaces it, and with it
    # the address the volume names.
    file_system_spec: tuple[str, ...]

    @property
    def volume_name(self) -> str:
        """Named by everything the volume is made of, so the platform never updates a bound
        volume in place: once bound, its `claimRef` carries the claim's uid, which the PV
        controller owns, and an apply of the same field without it either conflicts (server-side
        apply) or, forced, unbinds the claim for good (`ClaimMisbound`, kubernetes
        pkg/controller/volume/persistentvolume/pv_controller.go; fluxcd/flux2#2250). A changed
        volume is a new one; its claim follows it (docs/lustre.md, "Replacing a volume")."""
        parts = (self.namespace, self.team, self.file_system, *self.file_system_spec, *facts.MOUNT_OPTIONS)
        digest = hashlib.sha256("\0".join(parts).encode()).hexdigest()[:8]
        return f"lustre-{self.namespace}-{digest}"


def training_volumes(config: PlatformConfig, cluster_key: str) -> list[TrainingVolume]:
    """A volume per training namespace on a cluster with Lustre, none elsewhere."""
    if cluster_key not in lustre_clusters(config):
        return []
    assert config.lustre is not None
    region = config.clusters[cluster_key].region
    spec = config.lustre.file_systems[region]
    made_of = (spec.sku, str(spec.capacity_tib), spec.zone, str(config.network.regions[region].subnets.lustre))
    return [
        TrainingVolume(namespace, team, file_system_name(config, region), spec.capacity_tib, made_of)
        for team, settings in config.teams.items()
        for namespace in settings.training_namespaces
    ]


def file_system_name(config: PlatformConfig, region: str) -> str:
    return Naming(config.prefix, config.environment).regional("amlfs", region)


def csi_driver() -> dict[str, Any]:
    """The CSIDriver object (deploy/csi-azurelustre-driver.yaml), persistent volumes only."""
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "CSIDriver",
        "metadata": {"name": facts.CSI_DRIVER},
        "spec": {
            "attachRequired": False,
            "podInfoOnMount": True,
            # The kubelet gives a pod's fsGroup the team's directory (upstream's setting), so a
            # non-root loader can write it; pods set fsGroupChangePolicy: OnRootMismatch, or the
            # kubelet would chown every file of a dataset at each mount (csi_mounter.go,
            # SetVolumeOwnership), not only a fresh directory's root.
            "fsGroupPolicy": "File",
            "volumeLifecycleModes": ["Persistent"],
        },
    }


def node_daemonset(flavor: facts.CsiNodeFlavor, cluster: ClusterConfig, login_server: str) -> dict[str, Any]:
    """The node plugin for one Ubuntu release (deploy/csi-azurelustre-node-<flavor>.yaml at
    v0.4.0, less its cloud config, service account token and taint removal), on GPU nodes."""
    labels = {"app": NODE_PLUGIN, "flavor": flavor.name}
    probe_image, probe_tag = facts.LIVENESS_PROBE_IMAGE
    registrar_image, registrar_tag = facts.NODE_REGISTRAR_IMAGE
    small = {"requests": {"cpu": "10m", "memory": "20Mi"}, "limits": {"cpu": "100m", "memory": "100Mi"}}
    socket = {"name": "socket-dir", "mountPath": "/csi"}
    plugin = {
        "name": "azurelustre",
        "image": f"{mirrored(facts.CSI_REPOSITORY, login_server)}:{facts.CSI_VERSION}-{flavor.name}",
        "imagePullPolicy": "IfNotPresent",
        "args": [
            "-v=5",
            "--endpoint=$(CSI_ENDPOINT)",
            "--nodeid=$(KUBE_NODE_NAME)",
            # The platform adds no startup taint for it, and the plugin has no API credential.
            "--remove-not-ready-taint=false",
            # Its default, stated: without a cloud config, NewDriver exits unless this is true
            # (azurelustre.go); it only affects dynamic provisioning, which a node never serves.
            "--enable-azurelustre-mock-dyn-prov=true",
        ],
        "env": [
            {"name": "CSI_ENDPOINT", "value": f"unix://{_SOCKET}"},
            {"name": "AZURELUSTRE_CSI_INSTALL_LUSTRE_CLIENT", "value": "yes"},
            {"name": "LUSTRE_VERSION", "value": flavor.lustre_version},
            {"name": "CLIENT_SHA_SUFFIX", "value": flavor.client_sha_suffix},
            {"name": "KUBE_NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}},
        ],
        # Loads kernel modules and mounts into the kubelet's directory (Bidirectional needs privileged).
        "securityContext": {"privileged": True},
        "ports": [{"containerPort": facts.CSI_NODE_HEALTH_PORT, "name": "healthz", "protocol": "TCP"}],
        "lifecycle": {"preStop": {"exec": {"command": ["/bin/sh", "-c", "lustre_rmmod"]}}},
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": "healthz"},
            "initialDelaySeconds": 60,
            "periodSeconds": 30,
            "timeoutSeconds": 10,
            "failureThreshold": 5,
        },
        "readinessProbe": {
            "exec": {"command": ["/app/readinessProbe.sh"]},
            "initialDelaySeconds": 10,
            "periodSeconds": 30,
            "timeoutSeconds": 10,
            "failureThreshold": 5,
        },
        "startupProbe": {
            "exec": {"command": ["/app/readinessProbe.sh"]},
            "initialDelaySeconds": 10,
            "periodSeconds": 5,
            "timeoutSeconds": 5,
            "failureThreshold": facts.CSI_NODE_STARTUP_SECONDS // 5,
        },
        "volumeMounts": [
            socket,
            {"name": "mountpoint-dir", "mountPath": "/var/lib/kubelet/", "mountPropagation": "Bidirectional"},
            {"name": "host-dev", "mountPath": "/dev"},
            {"name": "host-os-release", "mountPath": "/etc/host-os-release", "readOnly": True},
        ],
        "resources": {"requests": {"cpu": "10m", "memory": "20Mi"}, "limits": {"cpu": "1", "memory": "200Mi"}},
    }
    containers = [
        {
            "name": "liveness-probe",
            "image": f"{mirrored(probe_image, login_server)}:{probe_tag}",
            "args": [
                f"--csi-address={_SOCKET}",
                "--probe-timeout=120s",
                f"--health-port={facts.CSI_NODE_HEALTH_PORT}",
                "--v=2",
            ],
            "volumeMounts": [socket],
            "resources": small,
        },
        {
            "name": "node-driver-registrar",
            "image": f"{mirrored(registrar_image, login_server)}:{registrar_tag}",
            "args": ["--csi-address=$(ADDRESS)", "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)", "--v=2"],
            "livenessProbe": {
                "exec": {
                    "command": [
                        "/csi-node-driver-registrar",
                        "--kubelet-registration-path=$(DRIVER_REG_SOCK_PATH)",
                        "--mode=kubelet-registration-probe",
                    ]
                },
                # Fails until the plugin's socket exists: past the client install's startup budget,
                # not a restart loop while it runs (upstream restarts it after 60 s).
                "initialDelaySeconds": 30,
                "periodSeconds": 30,
                "failureThreshold": facts.CSI_NODE_STARTUP_SECONDS // 30 + 1,
                "timeoutSeconds": 15,
            },
            "env": [
                {"name": "ADDRESS", "value": _SOCKET},
                {"name": "DRIVER_REG_SOCK_PATH", "value": _REGISTRATION},
            ],
            "volumeMounts": [socket, {"name": "registration-dir", "mountPath": "/registration"}],
            "resources": small,
        },
        plugin,
    ]

    def host(name: str, path: str, kind: str) -> dict[str, Any]:
        return {"name": name, "hostPath": {"path": path, "type": kind}}

    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {
            "name": f"{NODE_PLUGIN}-{flavor.name}",
            "namespace": NAMESPACE,
            "labels": labels,
            # Pulumi would wait for every GPU node's plugin (up to ten minutes each, a tenth of the
            # pool at a time) and fail the cluster unit after its ten-minute DaemonSet timeout
            # (pulumi-kubernetes await/daemonset.go); the alert platform-lustre-node-plugins says
            # when a node's plugin is not ready instead.
            "annotations": {"pulumi.com/skipAwait": "true"},
        },
        "spec": {
            "selector": {"matchLabels": labels},
            # A restart reinstalls the client (minutes); mounted volumes stay mounted (they are the
            # node kernel's), only new mounts on that node wait. One node at a time would take
            # days across a large training pool.
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%"}},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "hostNetwork": True,
                    "dnsPolicy": "Default",
                    "serviceAccountName": NODE_PLUGIN,
                    "automountServiceAccountToken": False,
                    "enableServiceLinks": False,
                    "priorityClassName": "system-node-critical",
                    # AKS sets the effective OS label from the pool's osSku and Kubernetes version
                    # (`Ubuntu` is 22.04 up to 1.34 and 24.04 from 1.35: upgrade-os-version.md), so
                    # both flavors are installed and each finds its nodes across that upgrade.
                    "nodeSelector": {
                        "kubernetes.io/os": "linux",
                        ACCELERATOR_LABEL: "nvidia",
                        # Training pools only: nothing else has a claim, and every start downloads.
                        PURPOSE_LABEL: "training",
                        OS_SKU_LABEL: flavor.os_sku_effective,
                    },
                    "tolerations": node_agent_tolerations(cluster),
                    "containers": containers,
                    "volumes": [
                        host("socket-dir", f"/var/lib/kubelet/plugins/{facts.CSI_DRIVER}", "DirectoryOrCreate"),
                        host("registration-dir", "/var/lib/kubelet/plugins_registry/", "Directory"),
                        host("mountpoint-dir", "/var/lib/kubelet/", "Directory"),
                        host("host-dev", "/dev", "Directory"),
                        host("host-os-release", "/etc/os-release", "File"),
                    ],
                },
            },
        },
    }


def persistent_volume(volume: TrainingVolume, mgs_address: Any) -> dict[str, Any]:
    """The volume of one training namespace: its team's directory of the region's file system,
    bound to the namespace's claim alone (claimRef), kept when the claim goes (Retain: static
    volumes cannot be deleted by the driver)."""
    spec = {
        "capacity": {"storage": f"{volume.capacity_tib}Ti"},
        "accessModes": ["ReadWriteMany"],
        "persistentVolumeReclaimPolicy": "Retain",
        "storageClassName": "",
        "mountOptions": list(facts.MOUNT_OPTIONS),
        "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": volume.namespace, "name": CLAIM},
        "csi": {
            "driver": facts.CSI_DRIVER,
            # Unique in the cluster; not the driver's `#`-separated form, which it would parse.
            "volumeHandle": f"{volume.file_system}/{volume.volume_name}",
            "volumeAttributes": {"mgs-ip-address": mgs_address, "sub-dir": team_directory(volume.team)},
        },
    }
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": volume.volume_name, "labels": {TEAM_LABEL: volume.team}},
        "spec": spec,
    }


def persistent_volume_claim(volume: TrainingVolume) -> dict[str, Any]:
    """The namespace's claim, bound to its volume by name (no storage class provisions one)."""
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": CLAIM, "namespace": volume.namespace},
        "spec": {
            "accessModes": ["ReadWriteMany"],
            "storageClassName": "",
            "volumeName": volume.volume_name,
            # Any size the volume holds: the file system's size is the volume's, and a request
            # that followed it would change (replace) the claim with every resize.
            "resources": {"requests": {"storage": CLAIM_REQUEST}},
        },
    }
