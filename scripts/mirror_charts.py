#!/usr/bin/env python3
"""Mirror the platform's pinned Helm charts into an environment's registry, where releases
install them from (planning/charts.py; docs/operations.md, "Charts in the registry").

Run by the delivery administrator, once per chart version bump and environment, from a machine
that reaches both the chart upstreams (helm.ngc.nvidia.com, registry.k8s.io, quay.io,
archive.apache.org) and the registry's private endpoint, signed in with `az login` as an
identity holding AcrPush and `Microsoft.ContainerRegistry/registries/metadata/write` (to lock
the tag; the registry's Contributor or Owner has both). The deploy and plan identities only
pull, and deploy runners never reach a chart upstream.

    venv/bin/python scripts/mirror_charts.py --stack prod            # every chart
    venv/bin/python scripts/mirror_charts.py --stack prod --chart kueue
    venv/bin/python scripts/mirror_charts.py --record --chart gpu-operator  # print a digest to pin

For each chart: `helm pull` the pinned version (an OCI upstream by its pinned manifest digest),
refuse an archive whose sha256 is not the pinned one, `helm push` it to
`oci://<registry>/charts`, and lock the tag (no overwrite, no delete). A chart with nothing to
check its bytes against is refused. A tag already in the registry is not pushed again.

The pushed manifest is reproducible: `helm push` (3.17 and later) writes the archive unchanged
as the layer, the Chart.yaml metadata as the config and, as `org.opencontainers.image.created`,
the archive file's modification time (helm/helm 02ef83fe2, "Use chart archive modifed time for
OCI push"; pkg/pusher/ocipusher.go). This script sets that time to CREATED_EPOCH and runs Helm
in UTC, so one Helm minor pushes the same manifest digest into every environment's registry;
record it as the chart's `mirrored_digest` and releases install by it.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planning.charts import CHART_NAMESPACE, CHARTS, HelmChart, chart_repository, upstream_pull  # noqa: E402
from planning.naming import Naming  # noqa: E402
from stackconfig.stacks import stack_argument  # noqa: E402
from validation.loader import parse_platform_config  # noqa: E402
from validation.stackfile import read_stack_config  # noqa: E402

# The archive's modification time before `helm push`, which Helm writes as the manifest's
# `created` annotation: any fixed value makes the manifest the same on every run.
CREATED_EPOCH = 0
# Digest references need Helm 3.17 (helm/helm#13588); the manifest's bytes may differ between
# Helm minors (its serialisation of Chart.yaml), so pinned `mirrored_digest`s come from this one.
MINIMUM_HELM = (3, 17)
MIRROR_HELM = (3, 20)
# Helm signs in to ACR with an Entra access token under this user name (learn.microsoft.com,
# "Push and pull Helm charts to an Azure container registry", "Authenticate with the registry").
ACR_TOKEN_USER = "00000000-0000-0000-0000-000000000000"

_PUSHED_DIGEST = re.compile(r"^digest:\s*(sha256:[0-9a-f]{64})\s*$", re.IGNORECASE | re.MULTILINE)
_HELM_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


class MirrorError(Exception):
    pass


def run(command: list[str], *, stdin: str | None = None, env: dict[str, str] | None = None) -> str:
    """The command's standard output and error; MirrorError with them when it fails."""
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise MirrorError(f"`{' '.join(command[:3])} ...` failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout + done.stderr


def helm_version() -> tuple[int, int, int]:
    text = run(["helm", "version", "--template", "{{.Version}}"]).strip()
    match = _HELM_VERSION.match(text)
    if not match:
        raise MirrorError(f"cannot read Helm's version from {text!r}")
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as archive:
        for block in iter(lambda: archive.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def pull(chart: HelmChart, into: Path) -> Path:
    """The chart's archive, pulled from its upstream and checked against the pinned sha256."""
    run(["helm", "pull", *upstream_pull(chart), "--destination", str(into)])
    archives = sorted(into.glob("*.tgz"))
    if len(archives) != 1:
        raise MirrorError(f"helm pull left {len(archives)} archives in {into}")
    actual = sha256_of(archives[0])
    if chart.archive_sha256 is not None and actual != chart.archive_sha256:
        raise MirrorError(
            f"refused: the archive's sha256 is {actual}, the pin (planning/charts.py) is {chart.archive_sha256}"
        )
    return archives[0]


def in_registry(registry: str, chart: HelmChart) -> str | None:
    """The manifest digest of `charts/<name>:<version>` in the registry, None when absent
    (listed first, so that a failing read is an error, never taken for absence)."""
    repository = chart_repository(chart)
    listing = ["--output", "tsv"]
    if repository not in run(["az", "acr", "repository", "list", "--name", registry, *listing]).split():
        return None
    tags = run(["az", "acr", "repository", "show-tags", "--name", registry, "--repository", repository, *listing])
    if chart.version not in tags.split():
        return None
    image = f"{repository}:{chart.version}"
    shown = ["--query", "digest", *listing]
    return run(["az", "acr", "repository", "show", "--name", registry, "--image", image, *shown]).strip()


def lock(registry: str, chart: HelmChart) -> None:
    """The tag can then be neither overwritten nor deleted (learn.microsoft.com, "Lock a
    container image in an Azure container registry")."""
    image = f"{chart_repository(chart)}:{chart.version}"
    locked = ["--write-enabled", "false", "--delete-enabled", "false", "--output", "none"]
    run(["az", "acr", "repository", "update", "--name", registry, "--image", image, *locked])


def mirror(chart: HelmChart, registry: str, login_server: str, work: Path) -> str:
    """Put `chart` into the registry and return its manifest digest there."""
    existing = in_registry(registry, chart)
    if existing is not None:
        if chart.mirrored_digest is not None and existing != chart.mirrored_digest:
            raise MirrorError(f"the registry holds {existing}, the pin is {chart.mirrored_digest}; not replaced")
        lock(registry, chart)
        return existing
    archive = pull(chart, work)
    os.utime(archive, (CREATED_EPOCH, CREATED_EPOCH))
    output = run(
        ["helm", "push", str(archive), f"oci://{login_server}/{CHART_NAMESPACE}"], env={**os.environ, "TZ": "UTC"}
    )
    match = _PUSHED_DIGEST.search(output)
    if not match:
        raise MirrorError(f"helm push printed no digest:\n{output}")
    pushed = match.group(1)
    if chart.mirrored_digest is not None and pushed != chart.mirrored_digest:
        # Left unlocked so that it can be deleted and pushed again with the Helm the pin came from.
        raise MirrorError(f"pushed {pushed}, the pin is {chart.mirrored_digest} (another Helm minor?); not locked")
    lock(registry, chart)
    return pushed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--stack",
        type=stack_argument,
        help="the platform stack (dev, staging, prod-x) whose registry receives the charts",
    )
    parser.add_argument("--chart", action="append", choices=[c.name for c in CHARTS], help="only these (repeatable)")
    parser.add_argument(
        "--record", action="store_true", help="pull and print each archive's sha256 to pin; push nothing"
    )
    args = parser.parse_args(argv)
    if not args.record and not args.stack:
        parser.error("--stack is required unless --record")
    charts = [c for c in CHARTS if not args.chart or c.name in args.chart]

    try:
        version = helm_version()
        if version[:2] < MINIMUM_HELM or (not args.record and version[:2] != MIRROR_HELM):
            wanted = ".".join(map(str, MIRROR_HELM))
            raise MirrorError(f"Helm {'.'.join(map(str, version))} found; the mirror pushes with Helm {wanted}.x")
        unpinned = [c.name for c in charts if not c.content_pinned]
        if unpinned and not args.record:
            raise MirrorError(
                f"no pinned digest for {', '.join(unpinned)}: run with --record, check the sha256 against "
                "the upstream's index.yaml and pin it as archive_sha256 in planning/charts.py"
            )
        if not args.record:
            config = parse_platform_config(read_stack_config(ROOT, args.stack).values, stack=args.stack)
            naming = Naming(config.prefix, config.environment)
            registry, login_server = naming.registry(), naming.registry_login_server()
            token_only = ["--output", "tsv", "--query", "accessToken"]
            token = run(["az", "acr", "login", "--name", registry, "--expose-token", *token_only]).strip()
            run(
                ["helm", "registry", "login", login_server, "--username", ACR_TOKEN_USER, "--password-stdin"],
                stdin=token,
            )
    except MirrorError as error:
        print(f"mirror_charts: {error}", file=sys.stderr)
        return 1

    failed = False
    for chart in charts:
        with tempfile.TemporaryDirectory(prefix=f"chart-{chart.name}-") as work:
            try:
                if args.record:
                    archive = pull(chart, Path(work))
                    print(f"{chart.name} {chart.version} archive_sha256 {sha256_of(archive)}")
                    continue
                digest = mirror(chart, registry, login_server, Path(work))
                print(f"{chart.name} {chart.version} {login_server}/{chart_repository(chart)}@{digest} (locked)")
            except MirrorError as error:
                print(f"mirror_charts: {chart.name} {chart.version}: {error}", file=sys.stderr)
                failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
