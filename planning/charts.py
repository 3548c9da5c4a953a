"""The Helm charts the platform installs, pinned, with every image their values name.

A chart's default values are published beside it; the tests check every value the program
sets against `<shared>/reference/helm-values/<values_file>`, so a key the chart does not read
(a typo, a renamed option) fails review instead of silently doing nothing. Installing them is
`components.charts.helm_release`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from facts import flink
from planning.images import mirrored


@dataclass(frozen=True)
class HelmChart:
    chart: str  # a name in `repository`, or an oci:// reference
    version: str
    repository: str | None = None
    # Every image repository the chart's values name: value path -> upstream repository.
    # The releases point each one at the platform's registry (planning/images.py).
    images: Mapping[str, str] = field(default_factory=dict)
    # Defaults of subcharts that the published values file leaves out, from the subchart's
    # own values.yaml, so that the values check knows these keys too.
    subchart_defaults: Mapping[str, Any] = field(default_factory=dict)
    # Values its templates read that its values.yaml leaves out (a map rendered whole with
    # toYaml takes any of its type's fields; a key the chart's documentation lists).
    documented_defaults: Mapping[str, Any] = field(default_factory=dict)

    @property
    def extra_defaults(self) -> dict[str, Any]:
        """Keys the chart reads beyond its values.yaml: its subcharts' and its documented ones."""
        return merge_values(dict(self.subchart_defaults), dict(self.documented_defaults))

    @property
    def name(self) -> str:
        return self.chart.rsplit("/", 1)[-1]

    @property
    def values_file(self) -> str:
        """The file holding this chart's default values in the shared reference folder."""
        return f"{self.name}-{self.version}.yaml"


# Where Helm keeps its release records: ConfigMaps in the release's namespace, which the read-only
# plan identities read like any object, instead of Secrets, which they may not read there (a
# namespace holding a release's records also holds Secrets that write: Kueue's MultiKueue
# kubeconfigs, Strimzi's CA keys). The records hold the rendered manifests and the values, none
# of them secret (tests/test_permissions.py; docs/decisions/0009-who-reaches-what.md). The
# provider's `helmReleaseSettings.driver` (pulumi-kubernetes), Helm's `--storage-driver`.
HELM_DRIVER = "configmap"

# Operators run on the system pool (tainted CriticalAddonsOnly); node agents do not.
SYSTEM_POOL_TOLERATION = {"key": "CriticalAddonsOnly", "operator": "Exists"}

NVIDIA_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"

NGC = "nvcr.io/nvidia"
NFD_IMAGE = "registry.k8s.io/nfd/node-feature-discovery"

GPU_OPERATOR = HelmChart(
    "gpu-operator",
    "v26.7.0",
    NVIDIA_REPOSITORY,
    images={
        **{
            f"{component}.repository": NGC
            for component in (
                "validator",
                "operator",
                "driver",
                "devicePlugin",
                "gfd",
                "nodeStatusExporter",
                "sandboxDevicePlugin",
                "draDriver",
            )
        },
        **{
            f"{component}.repository": f"{NGC}/cloud-native"
            for component in (
                "driver.manager",
                "dcgm",
                "migManager",
                "gds",
                "gdrcopy",
                "vgpuManager.driverManager",
                "vgpuDeviceManager",
                "vfioManager",
                "vfioManager.driverManager",
                "kataSandboxDevicePlugin",
                "ccManager",
            )
        },
        "toolkit.repository": f"{NGC}/k8s",
        "dcgmExporter.repository": f"{NGC}/k8s",
        "node-feature-discovery.image.repository": NFD_IMAGE,
    },
    # kubernetes-sigs/node-feature-discovery deployment/helm/node-feature-discovery/values.yaml at
    # v0.19.0, the subchart gpu-operator v26.7.0 bundles (its Chart.yaml).
    subchart_defaults={
        "node-feature-discovery": {
            "image": {"repository": NFD_IMAGE, "pullPolicy": "IfNotPresent"},
            "master": {"enableTaints": False},
        }
    },
)
NETWORK_OPERATOR = HelmChart(
    "network-operator",
    "v26.4.1",
    NVIDIA_REPOSITORY,
    images={
        "operator.repository": f"{NGC}/cloud-native",
        "operator.ofedDriver.initContainer.repository": f"{NGC}/mellanox",
        "node-feature-discovery.image.repository": f"{NGC}/mellanox/node-feature-discovery",
        "maintenance-operator-chart.operator.image.repository": f"{NGC}/mellanox",
    },
)
KUEUE = HelmChart(
    "oci://registry.k8s.io/kueue/charts/kueue",
    "0.19.2",
    # The chart's in-repo defaults name staging images; releases are on registry.k8s.io.
    images={
        "controllerManager.manager.image.repository": "registry.k8s.io/kueue/kueue",
        "kueueViz.backend.image.repository": "registry.k8s.io/kueue/kueueviz-backend",
        "kueueViz.frontend.image.repository": "registry.k8s.io/kueue/kueueviz-frontend",
    },
)

# The chart composes every image as <defaultImageRegistry>/<defaultImageRepository>/<name>, so
# the release sets those two values (components/kafka.py) instead of per-image repositories.
STRIMZI = HelmChart("oci://quay.io/strimzi-helm/strimzi-kafka-operator", "1.2.0")

# The Apache Flink Kubernetes Operator (facts/flink.py); its values name the image `latest`,
# so the release pins the tag.
FLINK_OPERATOR = HelmChart(
    "flink-kubernetes-operator",
    flink.OPERATOR_VERSION,
    flink.OPERATOR_CHART_REPOSITORY,
    images={"image.repository": flink.OPERATOR_IMAGE},
    # templates/controller/deployment.yaml renders podSecurityContext whole (toYaml): any of a
    # PodSecurityContext's fields, beyond the two its values name.
    documented_defaults={"podSecurityContext": {"runAsNonRoot": True, "seccompProfile": {}}},
)

CHARTS = (GPU_OPERATOR, NETWORK_OPERATOR, KUEUE, STRIMZI, FLINK_OPERATOR)


def mirrored_image_values(chart: HelmChart, login_server: str) -> dict[str, Any]:
    """Chart values that point every image of `chart` at the platform's registry."""
    values: dict[str, Any] = {}
    for path, upstream in chart.images.items():
        *parents, leaf = path.split(".")
        node = values
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = mirrored(upstream, login_server)
    return values


def merge_values(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`base` with `extra` merged in, key by key (nested dicts merge, other values replace)."""
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_values(merged[key], value)
        else:
            merged[key] = value
    return merged
