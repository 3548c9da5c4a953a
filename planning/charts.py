"""The Helm charts the platform installs, pinned, with every image their values name, and where
releases install them from: the environment's own registry, never the internet.

A chart's default values are published beside it; the tests check every value the program
sets against `<shared>/reference/helm-values/<values_file>`, so a key the chart does not read
(a typo, a renamed option) fails review instead of silently doing nothing. Installing them is
`components.charts.helm_release`.

Charts reach the registry through `scripts/mirror_charts.py`, run by the delivery administrator
once per chart version (docs/operations.md, "Charts in the registry"): it pulls each pinned
version from its upstream, refuses bytes other than the pinned digest, pushes it to
`charts/<name>` and locks the tag. ACR's artifact cache is documented for container images only
(learn.microsoft.com artifact-cache-overview; Azure/acr#780 asks for other artefacts), and NGC and
archive.apache.org serve classic index.yaml repositories no cache rule can front, so every chart
takes the one mirrored path.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from facts import flink
from planning.images import mirrored

# The registry's repository namespace holding the mirrored charts; no cache rule may target it.
CHART_NAMESPACE = "charts"

_MANIFEST_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
_ARCHIVE_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class HelmChart:
    # The chart's name in its Chart.yaml: `helm push` names the repository after it.
    name: str
    version: str
    # Where the mirror pulls it: a classic repository (https://..., its index.yaml), or an OCI
    # repository the chart sits under (oci://host/path, the chart being <upstream>/<name>).
    upstream: str
    # sha256 of the chart archive (.tgz): `digest:` in a classic repository's index.yaml. `helm
    # push` stores the archive unchanged as the manifest's one layer, so it is also the layer
    # digest in any registry (helm/helm v3.20.2 pkg/registry/client.go, Push).
    archive_sha256: str | None = None
    # OCI upstreams: the manifest digest the publisher pushed. The mirror pulls by it, and the
    # manifest pins the archive in turn.
    upstream_digest: str | None = None
    # The manifest digest `scripts/mirror_charts.py` pushes (the same in every environment's
    # registry, see there); once recorded, releases install by it as well as by version.
    mirrored_digest: str | None = None
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
    def values_file(self) -> str:
        """The file holding this chart's default values in the shared reference folder."""
        return f"{self.name}-{self.version}.yaml"

    @property
    def from_oci(self) -> bool:
        return self.upstream.startswith("oci://")

    @property
    def content_pinned(self) -> bool:
        """Whether the mirror can hold the bytes it pulls to a pin (it refuses the chart if not)."""
        return self.archive_sha256 is not None or (self.from_oci and self.upstream_digest is not None)


def pin_problems(chart: HelmChart) -> list[str]:
    """What is malformed in `chart`'s pins (an empty list when they are well formed)."""
    problems = []
    if chart.archive_sha256 is not None and not _ARCHIVE_SHA256.match(chart.archive_sha256):
        problems.append(f"archive_sha256 {chart.archive_sha256!r} is not 64 lowercase hex digits")
    for label, digest in (("upstream_digest", chart.upstream_digest), ("mirrored_digest", chart.mirrored_digest)):
        if digest is not None and not _MANIFEST_DIGEST.match(digest):
            problems.append(f"{label} {digest!r} is not sha256:<64 lowercase hex digits>")
    if chart.upstream_digest is not None and not chart.from_oci:
        problems.append("upstream_digest needs an oci:// upstream")
    if not chart.upstream.startswith(("oci://", "https://")):
        problems.append(f"upstream {chart.upstream!r} is neither oci:// nor https://")
    return problems


def chart_repository(chart: HelmChart) -> str:
    """The chart's repository in the platform's registry: `charts/<name>`."""
    return f"{CHART_NAMESPACE}/{chart.name}"


def chart_reference(chart: HelmChart, login_server: str) -> str:
    """The OCI reference a release installs `chart` from (with its version): the environment's
    registry, and the manifest digest once recorded. Helm 3.17 and later install
    `oci://...@sha256:...` and, given a version too, refuse a tag that names another manifest
    (helm/helm#13588; pkg/registry/client.go ValidateReference)."""
    reference = f"oci://{login_server}/{chart_repository(chart)}"
    return f"{reference}@{chart.mirrored_digest}" if chart.mirrored_digest else reference


def upstream_pull(chart: HelmChart) -> list[str]:
    """`helm pull` arguments that fetch the pinned version from the chart's upstream."""
    if chart.from_oci:
        reference = f"{chart.upstream}/{chart.name}"
        if chart.upstream_digest:
            reference += f"@{chart.upstream_digest}"
        return [reference, "--version", chart.version]
    return [chart.name, "--repo", chart.upstream, "--version", chart.version]


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
# No digest is pinned yet for the charts NGC serves and for Apache's: their index.yaml (`digest:`)
# could not be read where the pins were written. `scripts/mirror_charts.py --record` prints the
# archive's sha256; check it against the repository's index.yaml before committing it. Until
# then the mirror refuses these charts.

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
    "kueue",
    "0.19.2",
    "oci://registry.k8s.io/kueue/charts",
    # registry.k8s.io/images/k8s-staging-kueue/images.yaml, `charts/kueue` 0.19.2, which the
    # image promoter copies unchanged (kubernetes/k8s.io#9856, "Kueue: Promote v0.19.2").
    upstream_digest="sha256:ab436c33ef6c6b9b9e95b633e618bca0e0e436d6581d3b27bd12fc8a8026ab34",
    # The chart's in-repo defaults name staging images; releases are on registry.k8s.io.
    images={
        "controllerManager.manager.image.repository": "registry.k8s.io/kueue/kueue",
        "kueueViz.backend.image.repository": "registry.k8s.io/kueue/kueueviz-backend",
        "kueueViz.frontend.image.repository": "registry.k8s.io/kueue/kueueviz-frontend",
    },
)

# The chart composes every image as <defaultImageRegistry>/<defaultImageRepository>/<name>, so
# the release sets those two values (components/kafka.py) instead of per-image repositories.
STRIMZI = HelmChart(
    "strimzi-kafka-operator",
    "1.2.0",
    "oci://quay.io/strimzi-helm",
    # strimzi/strimzi.github.io charts/index.yaml, 1.2.0 (strimzi-kafka-operator-helm-3-chart-1.2.0.tgz,
    # commit a9168608d "Add Strimzi 1.2.0 to the website"); the release pushes that same archive
    # to quay.io/strimzi-helm (strimzi/github-actions .github/actions/build/publish-helm-chart).
    archive_sha256="0f8a50b2f19bd99482f9fd6e17cf42902f72f9e594a136813ac3f0b7af422efd",
)

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


def chart_named(name: str) -> HelmChart:
    """The pinned chart of that name (a release's `name`)."""
    return next(chart for chart in CHARTS if chart.name == name)


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
