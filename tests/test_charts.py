"""Charts come from the environment's registry, never the internet: every release installs an
OCI reference in its own registry at a pinned version (and digest, once recorded), and the
mirror that puts charts there refuses bytes other than the pinned ones.

The mirror (scripts/mirror_charts.py) runs against a fake `helm` and `az` on PATH: the fake
`helm push` derives its digest from the archive's bytes, its modification time and the time
zone, as Helm's manifest does (the `created` annotation), so the tests also show that two runs
push the same manifest."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from planning.charts import (
    CHART_NAMESPACE,
    CHARTS,
    KUEUE,
    NETWORK_OPERATOR,
    STRIMZI,
    HelmChart,
    chart_named,
    chart_reference,
    pin_problems,
    upstream_pull,
)
from planning.naming import Naming
from scripts import mirror_charts
from tests.conftest import ROOT, STACKS
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

RELEASE = "kubernetes:helm.sh/v3:Release"
REGISTRY = "azure-native:containerregistry:Registry"
MIRROR = ROOT / "scripts" / "mirror_charts.py"
# Hosts and paths a chart was fetched from before it came from the registry.
UPSTREAMS = ("helm.ngc.nvidia.com", "archive.apache.org", "quay.io/strimzi-helm", "registry.k8s.io/kueue/charts")


@pytest.mark.parametrize("stack", STACKS)
def test_every_release_installs_from_its_environments_registry_at_a_pinned_version(plans, stack):
    plan = plans[stack]
    login_server = plan.one(REGISTRY).inputs["registryName"] + ".azurecr.io"
    releases = plan.of_type(RELEASE)
    assert releases and {r.inputs["name"] for r in releases} <= {c.name for c in CHARTS}
    for release in releases:
        chart = chart_named(release.inputs["name"])
        reference = release.inputs["chart"]
        assert reference == chart_reference(chart, login_server), release.name
        assert reference.startswith(f"oci://{login_server}/{CHART_NAMESPACE}/{chart.name}"), release.name
        if chart.mirrored_digest:
            assert reference.endswith(f"@{chart.mirrored_digest}"), release.name
        assert release.inputs["version"] == chart.version and chart.version[-1].isdigit(), release.name
        assert not release.inputs.get("repositoryOpts"), f"{release.name} names a chart repository"
        inputs = json.dumps(release.inputs)
        assert not [u for u in UPSTREAMS if u in inputs], f"{release.name} names an internet chart source"


def test_every_chart_has_well_formed_pins_and_the_fetched_ones_are_recorded():
    assert len({c.name for c in CHARTS}) == len(CHARTS)
    for chart in CHARTS:
        assert pin_problems(chart) == [], chart.name
    # The pins found with a citable source (planning/charts.py says where); the others wait for
    # `mirror_charts.py --record` and the mirror refuses them meanwhile.
    assert STRIMZI.archive_sha256 == "0f8a50b2f19bd99482f9fd6e17cf42902f72f9e594a136813ac3f0b7af422efd"
    assert KUEUE.upstream_digest == "sha256:ab436c33ef6c6b9b9e95b633e618bca0e0e436d6581d3b27bd12fc8a8026ab34"
    assert {c.name for c in CHARTS if c.content_pinned} >= {"kueue", "strimzi-kafka-operator"}


def test_pin_problems_name_what_is_malformed():
    chart = HelmChart("demo", "1.0.0", "http://charts.example/", archive_sha256="ABC", upstream_digest="sha256:1")
    assert pin_problems(chart) == [
        "archive_sha256 'ABC' is not 64 lowercase hex digits",
        "upstream_digest 'sha256:1' is not sha256:<64 lowercase hex digits>",
        "upstream_digest needs an oci:// upstream",
        "upstream 'http://charts.example/' is neither oci:// nor https://",
    ]


def test_the_reference_pins_the_digest_once_recorded():
    digest = "sha256:" + "a" * 64
    assert chart_reference(KUEUE, "crx.azurecr.io") == "oci://crx.azurecr.io/charts/kueue"
    assert chart_reference(replace(KUEUE, mirrored_digest=digest), "crx.azurecr.io") == (
        f"oci://crx.azurecr.io/charts/kueue@{digest}"
    )


def test_the_mirror_pulls_oci_upstreams_by_digest_and_classic_ones_by_version():
    assert upstream_pull(KUEUE) == [
        "oci://registry.k8s.io/kueue/charts/kueue@sha256:ab436c33ef6c6b9b9e95b633e618bca0e0e436d6581d3b27bd12fc8a8026ab34",
        "--version",
        "0.19.2",
    ]
    assert upstream_pull(STRIMZI) == ["oci://quay.io/strimzi-helm/strimzi-kafka-operator", "--version", "1.2.0"]
    assert upstream_pull(NETWORK_OPERATOR) == [
        "network-operator",
        "--repo",
        "https://helm.ngc.nvidia.com/nvidia",
        "--version",
        "v26.4.1",
    ]


# -- the mirror, against a fake helm and az ------------------------------------------------------

FAKE_HELM = r"""#!/usr/bin/env python3
import hashlib, json, os, pathlib, sys
args = sys.argv[1:]
log = pathlib.Path(os.environ["FAKE_LOG"])
entry = {"tool": "helm", "args": args}
if args[:1] == ["version"]:
    print(os.environ.get("FAKE_HELM_VERSION", "v3.20.2"), end="")
elif args[:2] == ["registry", "login"]:
    entry["password"] = sys.stdin.read()
elif args[:1] == ["pull"]:
    destination = pathlib.Path(args[args.index("--destination") + 1])
    (destination / "chart-from-upstream.tgz").write_bytes(os.environ["FAKE_ARCHIVE"].encode())
elif args[:1] == ["push"]:
    archive = pathlib.Path(args[1])
    entry["mtime"], entry["tz"] = archive.stat().st_mtime, os.environ.get("TZ")
    # As Helm's manifest: the archive as layer, its modification time as `created`.
    seen = archive.read_bytes() + f"{entry['mtime']}{entry['tz']}".encode()
    print(f"Pushed: {args[2][6:]}/{os.environ['FAKE_NAME']}:{os.environ['FAKE_VERSION']}")
    print("Digest: sha256:" + hashlib.sha256(seen).hexdigest())
    (pathlib.Path(os.environ["FAKE_STATE"]) / "pushed").write_text("sha256:" + hashlib.sha256(seen).hexdigest())
with log.open("a") as f:
    f.write(json.dumps(entry) + "\n")
"""

FAKE_AZ = r"""#!/usr/bin/env python3
import json, os, pathlib, sys
args = sys.argv[1:]
state = pathlib.Path(os.environ["FAKE_STATE"])
with pathlib.Path(os.environ["FAKE_LOG"]).open("a") as f:
    f.write(json.dumps({"tool": "az", "args": args}) + "\n")
if args[:2] == ["acr", "login"]:
    print("entra-access-token")
elif args[:3] == ["acr", "repository", "list"]:
    print("\n".join(sorted({p.name.split(":")[0].replace("_", "/") for p in state.glob("*:*")})))
elif args[:3] == ["acr", "repository", "show-tags"]:
    repository = args[args.index("--repository") + 1].replace("/", "_")
    print("\n".join(p.name.split(":")[1] for p in state.glob(f"{repository}:*")))
elif args[:3] == ["acr", "repository", "show"]:
    print((state / args[args.index("--image") + 1].replace("/", "_")).read_text())
elif args[:3] == ["acr", "repository", "update"]:
    (state / "locked").write_text(" ".join(args))
"""


class FakeTools:
    def __init__(self, root: Path):
        self.bin, self.state, self.log = root / "bin", root / "state", root / "log"
        self.bin.mkdir(parents=True)
        self.state.mkdir()
        for name, text in (("helm", FAKE_HELM), ("az", FAKE_AZ)):
            (self.bin / name).write_text(text)
            (self.bin / name).chmod(0o755)

    def env(self, archive: bytes, chart: HelmChart, **extra: str) -> dict[str, str]:
        return {
            "PATH": f"{self.bin}:/usr/bin:/bin",
            "FAKE_LOG": str(self.log),
            "FAKE_STATE": str(self.state),
            "FAKE_ARCHIVE": archive.decode(),
            "FAKE_NAME": chart.name,
            "FAKE_VERSION": chart.version,
            **extra,
        }

    def calls(self, tool: str) -> list[dict]:
        if not self.log.exists():
            return []
        return [c for c in map(json.loads, self.log.read_text().splitlines()) if c["tool"] == tool]

    def verbs(self, tool: str) -> list[str]:
        return [" ".join(c["args"][:3] if tool == "az" else c["args"][:1]) for c in self.calls(tool)]

    def already_holds(self, chart: HelmChart, digest: str) -> None:
        (self.state / f"{CHART_NAMESPACE}_{chart.name}:{chart.version}").write_text(digest)


def run_mirror(tools: FakeTools, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(MIRROR), *args], env=env, capture_output=True, text=True, cwd=ROOT, check=False
    )


def dev_registry() -> tuple[str, str]:
    config = parse_platform_config(read_stack_config(ROOT, "dev").values, stack="dev")
    naming = Naming(config.prefix, config.environment)
    return naming.registry(), naming.registry_login_server()


def mirror_in_process(monkeypatch, tools: FakeTools, chart: HelmChart, archive: bytes, *args: str) -> int:
    """The script's main() with `chart` as the only pinned chart (its real pins cannot be met by
    a fake archive)."""
    for key, value in tools.env(archive, chart).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(mirror_charts, "CHARTS", (chart,))
    return mirror_charts.main(["--stack", "dev", *args])


def test_the_mirror_refuses_an_archive_whose_sha256_differs_from_the_pin(tmp_path):
    tools = FakeTools(tmp_path)
    done = run_mirror(tools, tools.env(b"not strimzi's bytes", STRIMZI), "--stack", "dev", "--chart", STRIMZI.name)
    assert done.returncode == 1
    assert "refused: the archive's sha256 is" in done.stderr and STRIMZI.archive_sha256 in done.stderr
    assert tools.verbs("helm") == ["version", "registry", "pull"], "pulled, never pushed"
    assert not (tools.state / "locked").exists()


def test_the_mirror_refuses_a_chart_it_cannot_check_before_reaching_anything(tmp_path):
    tools = FakeTools(tmp_path)
    unpinned = next(c for c in CHARTS if not c.content_pinned)
    done = run_mirror(tools, tools.env(b"x", unpinned), "--stack", "dev", "--chart", unpinned.name)
    assert done.returncode == 1
    assert f"no pinned digest for {unpinned.name}" in done.stderr
    assert tools.verbs("helm") == ["version"] and tools.calls("az") == []


def test_the_mirror_pulls_an_oci_upstream_by_its_pinned_digest(tmp_path):
    tools = FakeTools(tmp_path)
    done = run_mirror(tools, tools.env(b"kueue", KUEUE), "--stack", "dev", "--chart", KUEUE.name)
    assert done.returncode == 0, done.stderr
    pull = next(c["args"] for c in tools.calls("helm") if c["args"][0] == "pull")
    assert pull[1:4] == upstream_pull(KUEUE)
    _, login_server = dev_registry()
    assert f"{login_server}/charts/kueue@sha256:" in done.stdout


def test_the_mirror_pushes_a_verified_chart_reproducibly_and_locks_it(tmp_path, monkeypatch):
    archive = b"demo chart archive"
    chart = HelmChart("demo", "1.0.0", "https://charts.example/", archive_sha256=hashlib.sha256(archive).hexdigest())
    registry, login_server = dev_registry()
    digests = []
    for run in ("first", "second"):
        tools = FakeTools(tmp_path / run)
        assert mirror_in_process(monkeypatch, tools, chart, archive) == 0
        helm = {c["args"][0]: c for c in tools.calls("helm")}
        assert helm["pull"]["args"][1:6] == ["demo", "--repo", "https://charts.example/", "--version", "1.0.0"]
        assert helm["push"]["args"][2] == f"oci://{login_server}/charts"
        assert (helm["push"]["mtime"], helm["push"]["tz"]) == (mirror_charts.CREATED_EPOCH, "UTC")
        login = helm["registry"]
        assert login["args"][2:5] == [login_server, "--username", mirror_charts.ACR_TOKEN_USER]
        assert login["password"] == "entra-access-token"
        assert (tools.state / "locked").read_text() == (
            f"acr repository update --name {registry} --image charts/demo:1.0.0 "
            "--write-enabled false --delete-enabled false --output none"
        )
        digests.append((tools.state / "pushed").read_text())
    assert digests[0] == digests[1], "two environments' registries get the same manifest"

    # With that digest pinned the mirror agrees; with another it refuses and leaves the tag unlocked.
    tools = FakeTools(tmp_path / "pinned")
    assert mirror_in_process(monkeypatch, tools, replace(chart, mirrored_digest=digests[0]), archive) == 0
    tools = FakeTools(tmp_path / "other-helm")
    other = "sha256:" + "0" * 64
    assert mirror_in_process(monkeypatch, tools, replace(chart, mirrored_digest=other), archive) == 1
    assert not (tools.state / "locked").exists()


def test_a_tag_already_in_the_registry_is_kept_and_locked_not_pushed_again(tmp_path, monkeypatch):
    archive = b"demo chart archive"
    chart = HelmChart("demo", "1.0.0", "https://charts.example/", archive_sha256=hashlib.sha256(archive).hexdigest())
    tools = FakeTools(tmp_path)
    tools.already_holds(chart, "sha256:" + "b" * 64)
    assert mirror_in_process(monkeypatch, tools, chart, archive) == 0
    assert "pull" not in tools.verbs("helm") and "push" not in tools.verbs("helm")
    assert (tools.state / "locked").exists()
    # A tag holding another manifest than the pin is reported, not replaced.
    tools = FakeTools(tmp_path / "drifted")
    tools.already_holds(chart, "sha256:" + "b" * 64)
    assert mirror_in_process(monkeypatch, tools, replace(chart, mirrored_digest="sha256:" + "c" * 64), archive) == 1


def test_the_mirror_needs_a_helm_that_installs_by_digest_and_pushes_reproducibly(tmp_path):
    tools = FakeTools(tmp_path)
    done = run_mirror(
        tools, tools.env(b"kueue", KUEUE, FAKE_HELM_VERSION="v3.16.4"), "--stack", "dev", "--chart", "kueue"
    )
    assert done.returncode == 1 and "the mirror pushes with Helm 3.20.x" in done.stderr
    assert tools.calls("az") == []


def test_record_prints_the_archive_digest_to_pin_and_pushes_nothing(tmp_path):
    tools = FakeTools(tmp_path)
    unpinned = next(c for c in CHARTS if not c.content_pinned)
    done = run_mirror(tools, tools.env(b"upstream bytes", unpinned), "--record", "--chart", unpinned.name)
    assert done.returncode == 0, done.stderr
    expected = hashlib.sha256(b"upstream bytes").hexdigest()
    assert done.stdout.strip() == f"{unpinned.name} {unpinned.version} archive_sha256 {expected}"
    assert "push" not in tools.verbs("helm") and tools.calls("az") == []


def test_the_mirror_is_executable():
    assert os.access(MIRROR, os.X_OK)


def test_a_job_signs_helm_in_with_a_registry_token_for_its_own_identity(tmp_path, monkeypatch):
    """scripts/registry_login.py: the job's federated token buys an Entra ID token for Resource
    Manager, which the registry exchanges for its refresh token; Helm's registry config then
    holds it for the environment's registry alone, as the ACR token user, readable by the job only."""
    import base64
    import importlib.util
    import json
    import stat
    import urllib.parse

    spec = importlib.util.spec_from_file_location("registry_login", ROOT / "scripts" / "registry_login.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    (tmp_path / "oidc").write_text("github-oidc-token")
    monkeypatch.setenv("AZURE_FEDERATED_TOKEN_FILE", str(tmp_path / "oidc"))
    monkeypatch.setenv("AZURE_TENANT_ID", "tenant-1")
    monkeypatch.setenv("AZURE_CLIENT_ID", "client-1")
    posted = []

    def post(url: str, body: bytes) -> dict:
        posted.append((url, dict(urllib.parse.parse_qsl(body.decode()))))
        return {"access_token": "entra-token"} if "login.microsoftonline.com" in url else {"refresh_token": "acr-token"}

    monkeypatch.setattr(module, "_post", post)
    out = tmp_path / "helm" / "config.json"
    assert module.main(["--stack", "dev", "--out", str(out)]) == 0
    (entra, entra_body), (exchange, exchange_body) = posted
    assert entra == "https://login.microsoftonline.com/tenant-1/oauth2/v2.0/token"
    assert entra_body["client_assertion"] == "github-oidc-token" and entra_body["client_id"] == "client-1"
    assert entra_body["scope"] == "https://containerregistry.azure.net/.default"
    assert exchange == "https://crailabdev.azurecr.io/oauth2/exchange"
    assert exchange_body == {
        "grant_type": "access_token",
        "service": "crailabdev.azurecr.io",
        "tenant": "tenant-1",
        "access_token": "entra-token",
    }
    auths = json.loads(out.read_text())["auths"]
    assert list(auths) == ["crailabdev.azurecr.io"]
    assert base64.b64decode(auths["crailabdev.azurecr.io"]["auth"]).decode() == (
        "00000000-0000-0000-0000-000000000000:acr-token"
    )
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    # A failed round keeps the last credentials and says so.
    monkeypatch.setattr(module, "_post", lambda url, body: (_ for _ in ()).throw(OSError("no route")))
    assert module.main(["--stack", "dev", "--out", str(out)]) == 1
    assert (
        "acr-token" in base64.b64decode(json.loads(out.read_text())["auths"]["crailabdev.azurecr.io"]["auth"]).decode()
    )


def test_the_job_writes_helm_credentials_where_the_providers_helm_reads_them(tmp_path):
    """pulumi-kubernetes' Helm ignores HELM_REGISTRY_CONFIG: its own variable first, then Helm's
    config home (HELM_CONFIG_HOME, XDG_CONFIG_HOME, ~/.config)."""
    from planning.registry_token import registry_config_path

    home = tmp_path / "home"
    assert registry_config_path({}, home) == home / ".config/helm/registry/config.json"
    assert registry_config_path({"HELM_REGISTRY_CONFIG": "/x"}, home) == home / ".config/helm/registry/config.json"
    assert registry_config_path({"XDG_CONFIG_HOME": "/xdg"}, home) == Path("/xdg/helm/registry/config.json")
    assert registry_config_path({"HELM_CONFIG_HOME": "/h", "XDG_CONFIG_HOME": "/xdg"}, home) == Path(
        "/h/registry/config.json"
    )
    assert registry_config_path(
        {"PULUMI_K8S_HELM_REGISTRY_CONFIG_PATH": "/p.json", "HELM_CONFIG_HOME": "/h"}, home
    ) == Path("/p.json")
