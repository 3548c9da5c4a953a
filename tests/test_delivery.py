"""The delivery pipeline (docs/deploying.md, "Delivery pipeline"): the GitHub workflows and the
scripts they run. What the delivery creates (identities, grants, state, GitHub's settings) is the
delivery project's: tests/test_delivery_project.py.

Offline and quick: the workflows are checked against GitHub's schema (check-jsonschema's vendored
copy, with every proxy pointed at a closed port so that a download would fail) and read as data.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
REUSABLE = "./.github/workflows/pulumi.yml"
DEPLOYED = ("dev", "staging", "prod")
PACKS = ("azure-platform", "kubernetes-platform")

sys.path.insert(0, str(ROOT))
from planning.layers import LAYERS  # noqa: E402
from stackconfig.stacks import ENVIRONMENTS, environment_of, stack_name_problem  # noqa: E402
from tests.support.github import WORKFLOWS, all_workflows, condition, job_results, load, render  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Workflows as data
# ---------------------------------------------------------------------------------------------
RUNNER_TEMP = "/runner/temp"


def reusable_run(
    environment: str,
    layer: str,
    command: str,
    variables: dict[str, str] | None = None,
    cluster: str = "",
    stack: str = "",
) -> dict[str, Any]:
    """The shared Pulumi job as it runs for one unit and `command` (its expressions evaluated:
    the job's env first, which its steps then read)."""
    workflow = load("pulumi.yml")
    inputs = {
        "environment": environment,
        "stack": stack,
        "layer": layer,
        "cluster": cluster,
        "command": command,
        "refresh": False,
        "expect-no-changes": False,
    }
    job = workflow["jobs"]["pulumi"]
    context = {"inputs": inputs, "env": workflow["env"], "vars": variables or {}, "runner": {"temp": RUNNER_TEMP}}
    env = render(job["env"], context)
    return render({**job, "env": env}, {**context, "env": {**workflow["env"], **env}})


# One unit of each layer of each deployed environment, as the workflows name them.
def every_unit() -> list[tuple[str, str, str]]:
    return [(env, layer, "eus2" if layer == "cluster" else "") for env in DEPLOYED for layer in LAYERS]


def calls_of(workflow: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The jobs of a workflow that call the shared Pulumi workflow."""
    return {name: job for name, job in workflow["jobs"].items() if job.get("uses") == REUSABLE}


def step_uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
    return [step for step in job.get("steps", []) if str(step.get("uses", "")).startswith(action + "@")]


def needs_of(job: dict[str, Any]) -> set[str]:
    needs = job.get("needs", [])
    return {needs} if isinstance(needs, str) else set(needs)


def ancestors(workflow: dict[str, Any], name: str) -> set[str]:
    found: set[str] = set()
    pending = list(needs_of(workflow["jobs"][name]))
    while pending:
        current = pending.pop()
        if current not in found:
            found.add(current)
            pending.extend(needs_of(workflow["jobs"][current]))
    return found


# ---------------------------------------------------------------------------------------------
# Schema and shellcheck
# ---------------------------------------------------------------------------------------------
def check_jsonschema(*paths: Path) -> subprocess.CompletedProcess[str]:
    executable = Path(sys.executable).parent / "check-jsonschema"
    if not executable.exists():
        pytest.fail(f"{executable} is missing: check-jsonschema is in requirements-dev.txt; run `make install`")
    dead = "http://127.0.0.1:9"  # nothing listens there: any download fails the run
    env = {**os.environ, "HTTP_PROXY": dead, "HTTPS_PROXY": dead, "ALL_PROXY": dead, "NO_PROXY": ""}
    env.update({key.lower(): value for key, value in env.items() if key.endswith("_PROXY")})
    return subprocess.run(
        [str(executable), "--builtin-schema", "vendor.github-workflows", *map(str, paths)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_workflows_match_githubs_schema(tmp_path: Path):
    workflows = sorted(WORKFLOWS.glob("*.yml"))
    assert {path.name for path in workflows} >= {
        "pull-request.yml",
        "pull-request-comment.yml",
        "deploy.yml",
        "drift.yml",
        "pulumi.yml",
        "prices.yml",
    }
    result = check_jsonschema(*workflows)
    assert result.returncode == 0, result.stdout + result.stderr

    # The validator is live: a misspelled permission level is rejected.
    broken = tmp_path / "broken.yml"
    broken.write_text((WORKFLOWS / "deploy.yml").read_text().replace("contents: read", "contents: reed", 1))
    result = check_jsonschema(broken)
    assert result.returncode == 1 and "reed" in result.stdout + result.stderr, result.stdout + result.stderr


# ---------------------------------------------------------------------------------------------
# What each workflow may do
# ---------------------------------------------------------------------------------------------
def test_every_workflow_reads_only_by_default_and_uses_no_secrets():
    for name, workflow in all_workflows().items():
        assert workflow.get("permissions") == {"contents": "read"}, f"{name}: workflow permissions"
        text = (WORKFLOWS / name).read_text()
        assert "secrets." not in text and "secrets: inherit" not in text, f"{name} uses a secret"
        assert "pull_request_target" not in workflow["on"], f"{name} runs on pull_request_target"
        for job_name, job in workflow["jobs"].items():
            # Only a Pulumi run mints a GitHub OIDC token, in the job that names its GitHub
            # environment (pulumi.yml), and the jobs that call it pass the permission down.
            if "id-token" in job.get("permissions", {}):
                assert job["permissions"] == {"contents": "read", "id-token": "write"}, f"{name}/{job_name}"
                assert (name, job_name) == ("pulumi.yml", "pulumi") or job.get("uses") in (
                    REUSABLE,
                    "./.github/workflows/environment.yml",
                ), f"{name}/{job_name} asks for an OIDC token"
            assert not step_uses(job, "azure/login"), f"{name}/{job_name}: a one-shot CLI login"


def test_actions_are_pinned_to_a_release():
    for name, workflow in all_workflows().items():
        for job in workflow["jobs"].values():
            for step in job.get("steps", []):
                if "uses" in step:
                    assert re.fullmatch(r"[\w.-]+/[\w.-]+@(v\d+|[0-9a-f]{40})", step["uses"]), f"{name}: {step['uses']}"
            if "uses" in job:
                # Only the repository's own reusable workflows: one Pulumi run, one environment.
                assert job["uses"] in (REUSABLE, "./.github/workflows/environment.yml"), f"{name}: {job['uses']}"


def test_the_shared_pulumi_job_signs_in_only_as_the_github_environment_of_its_command_and_layer():
    """Who a job is comes from its GitHub environment (the OIDC subject its identity trusts), not
    from its runner: every job runs on the same identity-less runners and asks for an OIDC token."""
    for env, layer, cluster in every_unit():
        deploy = reusable_run(env, layer, "up", cluster=cluster)
        assert deploy["environment"] == f"{env}-{layer}"
        preview = reusable_run(env, layer, "preview", cluster=cluster)
        assert preview["environment"] == f"{env}-{layer}-preview"
        # Two pools, the deploy pool's hook admitting deploy.yml on main only (scripts/runner-job-started).
        assert deploy["runs-on"] == ["self-hosted", "platform-deploy"]
        assert preview["runs-on"] == ["self-hosted", "platform-preview"]
        # Dashboards go to Grafana from the tenants' deploy job, never through a provider whose
        # credential the state would keep (scripts/dashboards.py).
        (dashboards,) = [s for s in deploy["steps"] if "scripts/dashboards.py" in s.get("run", "")]
        assert "inputs.command == 'up' && inputs.layer == 'tenants'" in dashboards["if"]
        for job in (deploy, preview):
            assert job["permissions"] == {"contents": "read", "id-token": "write"}
            assert "make install" in "\n".join(step.get("run", "") for step in job["steps"])
            assert "--kubelogin-version" in "\n".join(step.get("run", "") for step in job["steps"])
            assert step_uses(job, "pulumi/actions")
            assert job["env"]["STACK"] == (f"{env}.cluster-{cluster}" if cluster else f"{env}.{layer}")


def test_the_shared_pulumi_job_refuses_a_unit_that_is_not_one():
    """The first step checks the inputs: the layer, and a cluster key exactly for the cluster layer."""
    (check,) = [
        step for step in load("pulumi.yml")["jobs"]["pulumi"]["steps"] if step.get("name", "").startswith("Check")
    ]
    script = check["run"]
    runs = []
    for layer, cluster in (("cluster", ""), ("tenants", "eus2"), ("network", ""), ("cluster", "eus2"), ("fleet", "")):
        env = {
            **os.environ,
            "ENVIRONMENT": "prod",
            "PLATFORM_STACK": "prod",
            "LAYER": layer,
            "CLUSTER": cluster,
            "COMMAND": "up",
            "ARM_CLIENT_ID": "c",
            "ARM_TENANT_ID": "t",
            "ARM_SUBSCRIPTION_ID": "s",
            "STATE_ACCOUNT": "a",
            "GITHUB_ENV": "/dev/null",
            "RUNNER_TEMP": "/tmp",
        }
        result = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True, timeout=30)
        runs.append(result.returncode)
    assert runs == [1, 1, 1, 0, 0]


def test_every_pulumi_run_applies_both_policy_packs_with_its_units_config():
    """Each pack with the environment's enforcement, made per unit by scripts/policy_config.py
    (the stack rules a unit cannot judge alone off), in pack order."""
    for env, layer, cluster in every_unit():
        for command in ("preview", "up"):
            job = reusable_run(env, layer, command, cluster=cluster)
            (pulumi,) = step_uses(job, "pulumi/actions")
            inputs = pulumi["with"]
            assert inputs["command"] == command and inputs["stack-name"] == job["env"]["STACK"]
            assert inputs["cloud-url"].startswith(f"azblob://pulumi-state-{env}?storage_account=")
            packs = inputs["policyPacks"].split()
            configs = inputs["policyPackConfigs"].split()
            assert packs == [f"policies/{pack}" for pack in PACKS]
            # The n-th config belongs to the n-th pack (pulumi's --policy-pack-config order).
            assert configs == [f"{RUNNER_TEMP}/policy/{pack}.json" for pack in PACKS]
            for path in packs:
                assert (ROOT / path).exists(), f"{path} does not exist"
            run = "\n".join(step.get("run", "") for step in job["steps"])
            assert (
                'scripts/policy_config.py --stack "$PLATFORM_STACK" --layer "$LAYER" --out "$RUNNER_TEMP/policy"' in run
            )
            assert (job["env"]["ENVIRONMENT"], job["env"]["LAYER"]) == (env, layer)


# How each consumer in a Pulumi run signs in, and whether its tokens renew for as long as the
# run lasts. A mode renews when each token it needs comes from a source that issues new ones:
# GitHub's token request URL, called again for each Entra ID token (azure-native with
# ARM_USE_OIDC, kubelogin's GitHub Actions credential), or a token file kept fresh for the whole
# job (the state backend). A one-shot `az login` does not (Azure/azure-cli#28708,
# Azure/login#180), nor a token given once (ARM_OIDC_TOKEN, ARM_OIDC_TOKEN_FILE_PATH: read when
# the credential is built, and preferred over the request URL), nor a secret or key.
ONE_SHOT = (
    "ARM_OIDC_TOKEN",
    "ARM_OIDC_TOKEN_FILE_PATH",
    "ARM_CLIENT_SECRET",
    "AZURE_CLIENT_SECRET",
    "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_KEYVAULT_AUTH_VIA_CLI",
    "ARM_USE_MSI",
    "ARM_USE_CLI",
)


def token_step(job: dict[str, Any]) -> dict[str, Any]:
    (step,) = [s for s in job["steps"] if "AZURE_FEDERATED_TOKEN_FILE" in s.get("run", "")]
    return step


def consumers(job: dict[str, Any]) -> dict[str, str]:
    """Each consumer's sign-in mode in a rendered job of the shared workflow."""
    env = job["env"]
    run = "\n".join(step.get("run", "") for step in job["steps"])
    file_kept_fresh = "nohup" in token_step(job)["run"] and "sleep 60" in token_step(job)["run"]
    return {
        # pulumi-azure-native: ARM_USE_OIDC with GitHub's request variables (auth_azidentity.go).
        "azure-native": "github" if env.get("ARM_USE_OIDC") == "true" and env.get("ARM_CLIENT_ID") else "other",
        # The azblob:// backend and azurekeyvault:// provider: DefaultAzureCredential, pinned.
        "state and secrets": "token file kept fresh"
        if env.get("AZURE_TOKEN_CREDENTIALS") == "WorkloadIdentityCredential" and file_kept_fresh
        else "chain",
        # kubelogin: AAD_LOGIN_METHOD overrides the kubeconfig's --login; workloadidentity with
        # GitHub's request variables set is its GitHub Actions credential (provider.go).
        "kubelogin": env.get("AAD_LOGIN_METHOD", "azurecli"),
        "azure cli": "login" if step_uses(job, "azure/login") or re.search(r"\baz login\b", run) else "none",
    }


def test_no_consumer_of_a_pulumi_run_depends_on_a_one_shot_login():
    for stack, layer, cluster in every_unit():
        for command in ("preview", "up"):
            job = reusable_run(
                stack, layer, command, {"AZURE_CLIENT_ID": "<the environment identity's client id>"}, cluster
            )
            assert consumers(job) == {
                "azure-native": "github",
                "state and secrets": "token file kept fresh",
                "kubelogin": "workloadidentity",
                "azure cli": "none",
            }, f"{command} {stack}"
            for name in ONE_SHOT:
                assert name not in job["env"], f"{command} {stack} sets {name}"
            # Every identity variable names the GitHub environment's identity.
            for name in ("ARM_CLIENT_ID", "AZURE_CLIENT_ID"):
                assert job["env"][name] == "<the environment identity's client id>"


def test_the_state_backends_token_file_stays_fresh_for_the_whole_run(tmp_path: Path):
    """The step that feeds go-cloud's workload identity credential: it writes GitHub's token
    before Pulumi starts and keeps rewriting it (here with a fake GitHub token endpoint that
    issues a new token per request, and `sleep` shortened), so whenever azidentity re-reads the
    file (its cache lasts ten minutes) it finds a token minted within the last minute; a
    failed renewal keeps the last token and the loop goes on."""
    import http.server
    import threading
    import time

    issued: list[str] = []
    requests: list[str] = []

    class Tokens(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            assert self.headers["Authorization"] == "bearer request-token"
            assert "audience=api://AzureADTokenExchange" in self.path
            requests.append(self.path)
            # GitHub unavailable once (curl retries it, a second later), then refusing once (not
            # retried: that renewal fails, and the loop keeps the last token and goes on).
            if len(requests) in (2, 3):
                self.send_response(503 if len(requests) == 2 else 403)
                self.end_headers()
                return
            issued.append(f"github-token-{len(issued)}")
            body = json.dumps({"value": issued[-1]}).encode()
            self.send_response(200)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Tokens)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    fast = tmp_path / "bin"
    fast.mkdir()
    (fast / "sleep").write_text("#!/bin/sh\nexec /bin/sleep 0.2\n")
    (fast / "sleep").chmod(0o755)
    github_env = tmp_path / "github_env"
    env = {
        **os.environ,
        "PATH": f"{fast}:{os.environ['PATH']}",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_ENV": str(github_env),
        "ACTIONS_ID_TOKEN_REQUEST_URL": f"http://127.0.0.1:{server.server_address[1]}/token?api-version=2.0",
        "ACTIONS_ID_TOKEN_REQUEST_TOKEN": "request-token",
    }
    script = token_step(reusable_run("prod", "cluster", "up", cluster="eus2"))["run"]
    try:
        result = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        token_file = Path(github_env.read_text().strip().split("=", 1)[1])
        assert token_file.read_text() == "github-token-0"  # there before the next step starts
        deadline = time.time() + 10
        while len(issued) < 4 and time.time() < deadline:
            time.sleep(0.1)
        assert len(issued) >= 4, "the background loop does not renew the token (or died on a failure)"
        assert token_file.read_text() != "github-token-0"
        assert "could not renew" in (tmp_path / "oidc" / "refresh.log").read_text()
    finally:
        subprocess.run(["pkill", "-f", str(tmp_path / "oidc" / "refresh")], check=False)
        server.shutdown()
    # Without id-token: write the step stops the job before Pulumi could fall back to anything.
    del env["ACTIONS_ID_TOKEN_REQUEST_URL"]
    result = subprocess.run(["bash", "-e", "-c", script], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "id-token: write" in result.stdout


def test_a_several_hour_prod_run_is_not_cut_short():
    """The job may run for hours (each Kafka's Ready wait alone is up to 45 minutes), and no
    credential in it expires: none is a token with a fixed lifetime (above)."""
    kafka_wait_minutes = 45
    for command in ("preview", "up"):
        job = reusable_run("prod", "cluster", command, cluster="eus2")
        assert job["timeout-minutes"] >= 4 * 60 + 2 * kafka_wait_minutes


def test_the_exported_kubeconfigs_log_in_as_people_do_and_ci_overrides_the_mode(plans):
    """People keep `azurecli`; CI's AAD_LOGIN_METHOD overrides it, so the kubeconfig (a
    provider input) is the same whoever runs Pulumi and previews show no provider change."""
    for stack in DEPLOYED:
        for provider in plans[stack].of_type("pulumi:providers:kubernetes"):
            config = yaml.safe_load(provider.inputs["kubeconfig"])
            (user,) = config["users"]
            args = user["user"]["exec"]["args"]
            assert args[args.index("--login") + 1] == "azurecli"
            assert "--client-id" not in args and "--disable-environment-override" not in args


def test_the_pulumi_cli_is_the_sdks_version():
    pinned = re.search(r"^pulumi==(\S+)$", (ROOT / "requirements.txt").read_text(), re.M)
    assert pinned, "requirements.txt pins pulumi"
    assert load("pulumi.yml")["env"]["PULUMI_VERSION"] == pinned.group(1)
    (pulumi,) = step_uses(reusable_run("dev", "foundation", "up"), "pulumi/actions")
    assert pulumi["with"]["pulumi-version"] == pinned.group(1)


def deployed_stacks() -> list[str]:
    """The platform stacks deploy.yml deploys, in its order: the one list of what is deployed."""
    return [
        job["with"]["stack"]
        for job in load("deploy.yml")["jobs"].values()
        if job.get("uses") == "./.github/workflows/environment.yml"
    ]


def test_pushes_to_main_deploy_dev_then_staging_then_prod():
    workflow = load("deploy.yml")
    assert workflow["on"]["push"] == {"branches": ["main"]}
    assert workflow["concurrency"] == {"group": "deploy", "cancel-in-progress": False}
    jobs = {
        job["with"]["stack"]: name
        for name, job in workflow["jobs"].items()
        if job.get("uses") == "./.github/workflows/environment.yml"
    }
    assert [environment_of(stack) for stack in jobs if stack in DEPLOYED] == list(DEPLOYED)
    for stack, name in jobs.items():
        assert stack_name_problem(stack) is None, name
        assert (ROOT / "stacks" / f"Pulumi.{stack}.yaml").exists(), f"{name} deploys {stack}, which has no stack file"
        # Every stack of an earlier environment is deployed before any stack of a later one.
        for earlier, earlier_name in jobs.items():
            if DEPLOYED.index(str(environment_of(earlier))) < DEPLOYED.index(str(environment_of(stack))):
                assert earlier_name in ancestors(workflow, name), f"{stack} deploys before {earlier}"
        assert workflow["jobs"][name]["permissions"] == {"contents": "read", "id-token": "write"}
        assert "if" not in workflow["jobs"][name]
    assert "review" in ancestors(workflow, jobs["dev"])


def _unit_jobs(workflow: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(command, wave) -> job name, where wave is a layer or `canary`/`clusters`."""
    jobs = {}
    for name, job in calls_of(workflow).items():
        wave = name.split("-", 1)[1]
        jobs[(job["with"]["command"], wave)] = name
        assert job["with"]["layer"] == ("cluster" if wave in ("canary", "clusters", "sites") else wave)
    return jobs


def test_an_environment_deploys_its_units_in_order_canary_clusters_first():
    """foundation, data, the canary wave, the other clusters, tenants, fleet: each unit previewed
    with its plan identity before its deploy, and each deploy after every unit it reads."""
    workflow = load("environment.yml")
    jobs = _unit_jobs(workflow)
    order = ["foundation", "data", "canary", "clusters", "tenants", "fleet"]
    # The sites deploy after the tenants too, beside the fleet (tests/test_sites.py).
    assert set(jobs) == {(command, wave) for command in ("preview", "up") for wave in [*order, "sites"]}
    for wave in order:
        assert jobs[("preview", wave)] in ancestors(workflow, jobs[("up", wave)])
    for earlier, later in itertools.pairwise(order):
        assert jobs[("up", earlier)] in ancestors(workflow, jobs[("preview", later)]), f"{later} before {earlier}"
    # The cluster waves are matrices over the units job's lists; fleet only with a fleet.
    for wave, output in (("canary", "canary"), ("clusters", "rest")):
        for command in ("preview", "up"):
            job = workflow["jobs"][jobs[(command, wave)]]
            assert job["strategy"]["matrix"]["cluster"] == f"${{{{ fromJSON(needs.units.outputs.{output}) }}}}"
            assert job["with"]["cluster"] == "${{ matrix.cluster }}"
    assert workflow["jobs"][jobs[("up", "canary")]]["strategy"]["fail-fast"] is True


@pytest.mark.parametrize(
    "outputs, failing, deployed",
    [
        # prod: a canary wave, the rest, a fleet.
        (
            {"canary": '["eus2"]', "rest": '["scus"]', "fleet": "true", "sites": "[]"},
            set(),
            {"foundation", "data", "canary", "clusters", "tenants", "fleet"},
        ),
        # dev: no canary wave (skipped, which must not skip what follows), no fleet.
        (
            {"canary": "[]", "rest": '["eus2"]', "fleet": "false", "sites": "[]"},
            set(),
            {"foundation", "data", "clusters", "tenants"},
        ),
        # A failed canary: nothing after it.
        (
            {"canary": '["eus2"]', "rest": '["scus"]', "fleet": "true", "sites": '["phx1"]'},
            {"up-canary"},
            {"foundation", "data"},
        ),
        # A failed data unit in dev: no cluster, no tenants.
        ({"canary": "[]", "rest": '["eus2"]', "fleet": "false", "sites": "[]"}, {"up-data"}, {"foundation"}),
        # prod-scale: a site deploys after the tenants; when it fails (its agents Offline), the fleet still does.
        (
            {"canary": '["eus2"]', "rest": '["scus"]', "fleet": "true", "sites": '["phx1"]'},
            set(),
            {"foundation", "data", "canary", "clusters", "tenants", "sites", "fleet"},
        ),
        (
            {"canary": '["eus2"]', "rest": '["scus"]', "fleet": "true", "sites": '["phx1"]'},
            {"up-sites"},
            {"foundation", "data", "canary", "clusters", "tenants", "fleet"},
        ),
    ],
)
def test_which_units_deploy_as_github_schedules_the_jobs(outputs, failing, deployed):
    """tests/support/github.py's `job_results` applies GitHub's rule that a job without a status
    function is skipped when any job before it was skipped or failed (actions/runner#2205)."""
    workflow = load("environment.yml")
    results = job_results(workflow, {"needs": {"units": {"outputs": outputs}}}, failing)
    ran = {name.split("-", 1)[1] for name, result in results.items() if name.startswith("up-") and result == "success"}
    assert ran == deployed, results


def test_pull_requests_read_only_and_never_give_forks_an_oidc_token():
    workflow = load("pull-request.yml")
    assert set(workflow["on"]) == {"pull_request"}
    assert {"labeled", "unlabeled", "synchronize"} <= set(workflow["on"]["pull_request"]["types"])
    jobs = workflow["jobs"]
    runs = {name: "\n".join(step.get("run", "") for step in job.get("steps", [])) for name, job in jobs.items()}
    assert "make test" in runs["test"] and "make review" in runs["review"]
    for name in ("test", "review"):
        assert jobs[name]["runs-on"].startswith("ubuntu-"), f"{name} must run on GitHub's runners"
        assert "permissions" not in jobs[name]
    assert "GITHUB_STEP_SUMMARY" in runs["review"] and "pr-number" in runs["review"]
    (upload,) = step_uses(jobs["review"], "actions/upload-artifact")
    assert upload["if"] == "always()" and upload["with"]["name"] == "review"
    checkout = step_uses(jobs["review"], "actions/checkout")[0]
    assert checkout["with"]["fetch-depth"] == 2, "the merge commit and its base, for the base's worktree"
    (cache,) = step_uses(jobs["review"], "actions/cache")
    assert cache["with"]["path"] == "~/.cache/platform-review/venvs", "where scripts/review.py keeps base venvs"
    assert 'make review BASE=HEAD^1 ACCEPT_FINDINGS="$ACCEPT_FINDINGS"' in runs["review"]
    (make_review,) = [step for step in jobs["review"]["steps"] if "make review" in step.get("run", "")]
    assert "accept-replacement" in make_review["env"]["ACCEPT_FINDINGS"], "data through env, not ${{ }} in run"

    fork = {
        "github": {
            "repository": "acme/ai-platform",
            "event": {"pull_request": {"head": {"repo": {"full_name": "someone/ai-platform"}}}},
        },
        "vars": {"AZURE_TENANT_ID": "t"},
    }
    branch = {
        "github": {
            "repository": "acme/ai-platform",
            "event": {"pull_request": {"head": {"repo": {"full_name": "acme/ai-platform"}}}},
        },
        "vars": {"AZURE_TENANT_ID": "t"},
    }
    unconfigured = {**branch, "vars": {}}
    for name, job in jobs.items():
        if job.get("uses") == REUSABLE:
            assert not condition(job["if"], fork), f"{name} would run for a fork"
            assert condition(job["if"], branch), f"{name} never runs"
            assert not condition(job["if"], unconfigured), f"{name} runs before Azure is set up"
            assert job["with"]["command"] == "preview"
            assert_every_unit(jobs, job)


def assert_every_unit(jobs: dict[str, Any], job: dict[str, Any]) -> None:
    """A matrix over scripts/units.py's list of every unit of dev, staging and prod."""
    assert job["strategy"]["matrix"] == {"include": "${{ fromJSON(needs.units.outputs.units) }}"}
    assert job["with"]["environment"] == "${{ matrix.environment }}"
    assert job["with"]["stack"] == "${{ matrix.platform_stack }}"
    assert job["with"]["layer"] == "${{ matrix.layer }}" and job["with"]["cluster"] == "${{ matrix.cluster }}"
    run = "\n".join(step.get("run", "") for step in jobs["units"]["steps"])
    assert "scripts/units.py " + " ".join(f"--stack {stack}" for stack in deployed_stacks()) + " --github" in run


def test_the_comment_workflow_writes_only_what_it_validated():
    workflow = load("pull-request-comment.yml")
    assert workflow["on"] == {"workflow_run": {"workflows": [load("pull-request.yml")["name"]], "types": ["completed"]}}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"actions": "read", "pull-requests": "write"}
    assert not step_uses(job, "actions/checkout"), "never check out the pull request's code here"
    assert not any("run" in step for step in job["steps"]), "no shell steps on untrusted data"
    (download,) = step_uses(job, "actions/download-artifact")
    assert download["with"]["run-id"] == "${{ github.event.workflow_run.id }}"
    assert download["with"]["name"] == "review"
    (script,) = step_uses(job, "actions/github-script")
    code = script["with"]["script"]
    assert "/^[1-9][0-9]{0,9}$/.test(raw)" in code, "the PR number is checked to be an integer"
    assert "pr.head.sha !== process.env.HEAD_SHA" in code, "the PR must be the one the review ran on"
    assert "updateComment" in code and "createComment" in code
    assert "${{" not in code, "no expressions inside the script: data goes in through env"


def test_prices_refresh_weekly_into_a_pull_request_with_no_credentials():
    """The Retail Prices API needs none; the job may push a branch and open a pull request, no more."""
    workflow = load("prices.yml")
    assert set(workflow["on"]) == {"schedule", "workflow_dispatch"}
    (job,) = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "write", "pull-requests": "write"}
    run = "\n".join(step.get("run", "") for step in job["steps"])
    assert "scripts/prices.py" in run and "gh pr create" in run
    assert "azure/login" not in (WORKFLOWS / "prices.yml").read_text() and "id-token" not in str(workflow)
    assert "${{" not in run, "data goes in through env"


def test_drift_runs_nightly_with_refresh_and_expect_no_changes():
    workflow = load("drift.yml")
    assert set(workflow["on"]) == {"schedule", "workflow_dispatch"}
    (schedule,) = workflow["on"]["schedule"]
    minute, hour, day, month, weekday = schedule["cron"].split()
    assert (day, month, weekday) == ("*", "*", "*") and minute.isdigit() and hour.isdigit()
    (name, job) = next(iter(calls_of(workflow).items()))
    assert_every_unit(workflow["jobs"], job)
    assert {key: job["with"][key] for key in ("command", "refresh", "expect-no-changes")} == {
        "command": "preview",
        "refresh": True,
        "expect-no-changes": True,
    }
    for env, layer, cluster in every_unit():
        rendered = reusable_run(env, layer, "preview", cluster=cluster)
        assert rendered["environment"] == f"{env}-{layer}-preview"  # read-only identity, no approval
    report = workflow["jobs"]["report"]
    assert name in needs_of(report) and "failure" in report["if"]
    assert report["permissions"] == {"issues": "write"}


def test_every_deployed_environment_has_a_stack_file_and_prod_scale_is_never_deployed():
    for name, workflow in all_workflows().items():
        for job_name, job in workflow["jobs"].items():
            environment = job.get("with", {}).get("environment")
            if environment and "${{" not in environment:
                assert environment in DEPLOYED, f"{name}/{job_name} runs {environment}"
                assert (ROOT / "stacks" / f"Pulumi.{environment}.yaml").exists()
            run = "\n".join(step.get("run", "") for step in job.get("steps", []))
            assert "prod-scale" not in run, f"{name}/{job_name} runs prod-scale"
    assert (ROOT / "stacks" / "Pulumi.prod-scale.yaml").exists()


def test_the_units_script_lists_each_environments_waves_as_the_workflows_read_them():
    result = subprocess.run(
        [sys.executable, "scripts/units.py", "--stack", "prod", "--github"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    outputs = dict(line.split("=", 1) for line in result.stdout.splitlines())
    assert (json.loads(outputs["canary"]), json.loads(outputs["rest"]), outputs["fleet"]) == (
        ["eus2"],
        ["scus", "dispeus2", "dispscus"],
        "true",
    )
    assert [unit["stack"] for unit in json.loads(outputs["units"])] == [
        "prod.foundation",
        "prod.data",
        "prod.cluster-eus2",
        "prod.cluster-scus",
        "prod.cluster-dispeus2",
        "prod.cluster-dispscus",
        "prod.tenants",
        "prod.fleet",
    ]
    every = subprocess.run(
        [sys.executable, "scripts/units.py", "--stack", "dev", "--stack", "staging", "--github"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    (line,) = every.stdout.splitlines()
    units = json.loads(line.removeprefix("units="))
    assert {(u["environment"], u["layer"], u["cluster"]) for u in units} >= {
        ("dev", "tenants", ""),
        ("staging", "cluster", "eus2"),
    }


REPO = "acme/ai-platform"


def test_helm_records_copied_to_configmaps_decode_to_the_same_release():
    """scripts/helm_records.py, which docs/upgrades.md pipes between two kubectl commands: a
    record Helm's Secret driver wrote (base64 of gzipped JSON, base64-encoded again by the API)
    becomes what its ConfigMap driver reads (helm/helm pkg/storage/driver/util.go decodeRelease:
    base64, then gzip), with Helm's labels and name; other Secrets are left alone."""
    import base64
    import gzip
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import helm_records

    release = {"name": "kueue", "namespace": "kueue-system", "version": 3, "info": {"status": "deployed"}}
    encoded = base64.b64encode(gzip.compress(json.dumps(release).encode())).decode()
    listed = {
        "items": [
            {
                "type": "helm.sh/release.v1",
                "metadata": {
                    "name": "sh.helm.release.v1.kueue.v3",
                    "namespace": "kueue-system",
                    "labels": {"name": "kueue", "owner": "helm", "status": "deployed", "version": "3"},
                    "uid": "x",
                },
                "data": {"release": base64.b64encode(encoded.encode()).decode()},
            },
            {"type": "Opaque", "metadata": {"name": "multikueue-eus2", "namespace": "kueue-system"}, "data": {}},
        ]
    }
    (config_map,) = helm_records.convert(listed)["items"]
    assert config_map["metadata"] == {
        "name": "sh.helm.release.v1.kueue.v3",
        "namespace": "kueue-system",
        "labels": {"name": "kueue", "owner": "helm", "status": "deployed", "version": "3"},
    }
    assert json.loads(gzip.decompress(base64.b64decode(config_map["data"]["release"]))) == release


MAIN_DEPLOY = f"{REPO}/.github/workflows/deploy.yml@refs/heads/main"


@pytest.mark.parametrize(
    "pool, event, head, ref, workflow, accepted",
    [
        ("preview", "pull_request", "acme/ai-platform", "refs/pull/7/merge", "", True),
        ("preview", "pull_request", "someone/ai-platform", "refs/pull/7/merge", "", False),
        ("preview", "pull_request_review", "someone/ai-platform", "refs/pull/7/merge", "", False),
        ("preview", "pull_request_target", "acme/ai-platform", "refs/heads/main", "", False),
        ("preview", "workflow_run", None, "refs/heads/main", "", False),
        ("preview", "schedule", None, "refs/heads/main", "", True),
        ("deploy", "push", None, "refs/heads/main", MAIN_DEPLOY, True),
        ("deploy", "workflow_dispatch", None, "refs/heads/main", MAIN_DEPLOY, True),
        # A branch's job asking for the deploy pool's label: its own workflow, or deploy.yml on it.
        ("deploy", "push", None, "refs/heads/evil", f"{REPO}/.github/workflows/x.yml@refs/heads/evil", False),
        ("deploy", "push", None, "refs/heads/main", f"{REPO}/.github/workflows/x.yml@refs/heads/main", False),
        (
            "deploy",
            "workflow_dispatch",
            None,
            "refs/heads/evil",
            f"{REPO}/.github/workflows/deploy.yml@refs/heads/evil",
            False,
        ),
        ("deploy", "pull_request", "acme/ai-platform", "refs/pull/7/merge", MAIN_DEPLOY, False),
    ],
)
def test_the_runners_job_started_hook_refuses_forks_and_keeps_branches_off_the_deploy_pool(
    tmp_path: Path, pool, event, head, ref, workflow, accepted
):
    """scripts/runner-job-started (docs/deploying.md, "Runners"): a fork's pull request never
    runs on the hub's runners, and nothing but deploy.yml on main on the deploy pool; it passes
    shellcheck."""
    hook = ROOT / "scripts" / "runner-job-started"
    assert subprocess.run(["shellcheck", str(hook)], capture_output=True, timeout=60).returncode == 0
    payload = tmp_path / "event.json"
    payload.write_text(json.dumps({"pull_request": {"head": {"repo": {"full_name": head}}}} if head else {}))
    env = {
        **os.environ,
        "GITHUB_EVENT_NAME": event,
        "GITHUB_EVENT_PATH": str(payload),
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_REF": ref,
        "GITHUB_WORKFLOW_REF": workflow,
        "PLATFORM_RUNNER_POOL": pool,
    }
    result = subprocess.run([str(hook)], env=env, capture_output=True, text=True, timeout=30)
    assert (result.returncode == 0) == accepted, result.stderr


def test_cluster_jobs_sign_helm_in_to_the_registry_before_pulumi_and_keep_it_signed_in():
    """Every chart comes from the environment's registry, which takes no anonymous pull: a cluster
    unit's job (preview or up) signs Helm in as its own identity before Pulumi runs, and renews
    it in the background well inside a registry refresh token's three hours, for the whole run."""
    from planning.registry_token import REFRESH_SECONDS

    for stack, layer, cluster in every_unit():
        for command in ("preview", "up"):
            steps = reusable_run(stack, layer, command, cluster=cluster)["steps"]
            names = [step.get("name", step.get("uses", "")) for step in steps]
            login = next(s for s in steps if "scripts/registry_login.py" in s.get("run", ""))
            assert names.index(login["name"]) < next(i for i, n in enumerate(names) if n.startswith("pulumi "))
            assert login["if"] == "inputs.layer == 'cluster'"
            run = login["run"]
            renew = re.search(
                r"nohup venv/bin/python scripts/registry_login.py .*--every (\d+)", run.replace("\\\n", "")
            )
            assert renew and int(renew.group(1)) == REFRESH_SECONDS < 3 * 3600
            assert run.index("--stack") and run.strip().endswith("&")


def test_the_pulumi_workflow_checks_a_stack_name_as_every_tool_does(tmp_path):
    """The workflow's shell check of its inputs and stackconfig/stacks.py accept the same names."""
    (check,) = [s for s in load("pulumi.yml")["jobs"]["pulumi"]["steps"] if s.get("name", "").startswith("Check")]
    cases = [
        ("prod", "prod"),
        ("prod", "prod-scale"),
        ("staging", "staging-eu"),
        ("staging", "research-eu"),
        ("staging", "prod-eu"),
        ("prod", "prod.data"),
        ("prod", "prod-a-b"),
        ("prod", "prod-abcdefghijk"),
        ("prod", "prod-Eu"),
        ("prod", "prod\nx"),
        ("qa", "qa"),
    ]
    for environment, stack in cases:
        variables = dict.fromkeys(("ARM_CLIENT_ID", "ARM_TENANT_ID", "ARM_SUBSCRIPTION_ID", "STATE_ACCOUNT"), "set")
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", check["run"]],
            env={
                "PATH": os.environ["PATH"],
                "ENVIRONMENT": environment,
                "PLATFORM_STACK": stack,
                "LAYER": "tenants",
                "CLUSTER": "",
                "COMMAND": "preview",
                "RUNNER_TEMP": str(tmp_path),
                "GITHUB_ENV": str(tmp_path / "env"),
                **variables,
            },
            capture_output=True,
            text=True,
        )
        expected = environment in ENVIRONMENTS and stack_name_problem(stack, environment) is None
        assert (result.returncode == 0) == expected, (environment, stack, result.stdout)
