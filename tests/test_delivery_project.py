"""The delivery project (delivery/): previewed offline like the platform. Its plan is what the
permission and attack-path models read (offline/identities.py; tests/test_permissions.py and
tests/test_reach.py hold every identity to its job); these tests hold what the models do not:
federation, GitHub's settings, the state backend, config errors and the one script step."""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml

from offline import identities as offline_identities
from offline.engine import Plan, run_program
from offline.mocks import OFFLINE_NAMESPACE, OFFLINE_SUBSCRIPTION_ID
from planning.layers import LAYERS
from tests.conftest import ALL_STACKS, ROOT
from tests.support.fake_az import FakeAzure, commands, option
from validation.delivery import parse_delivery_config
from validation.loader import ConfigError
from validation.stackfile import read_stack_config

DELIVERY = ROOT / "delivery"
ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
ROLE_DEFINITION = "azure-native:authorization:RoleDefinition"


def delivery_plan(stack: str = "acme") -> Plan:
    return offline_identities.delivery_plan(stack)


def delivered(stack: str) -> Plan:
    """The plan of the delivery stack that grants a platform stack's environment."""
    return delivery_plan(offline_identities.delivery_stack_of(stack))


def environment(stack: str) -> str:
    document = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return str(document["config"]["platform:environment"])


def custom_roles(plan: Plan) -> dict[str, dict[str, Any]]:
    """Custom roles by name: GUID, permissions and assignable scopes."""
    found = {}
    for r in plan.of_type(ROLE_DEFINITION):
        permission = r.inputs["permissions"][0]
        found[r.inputs["roleName"]] = {
            "guid": r.inputs["roleDefinitionId"],
            "actions": list(permission.get("actions", [])),
            "dataActions": list(permission.get("dataActions", [])),
            "scopes": list(r.inputs["assignableScopes"]),
        }
    return found


def test_the_delivery_project_previews_offline_with_its_own_project_and_stack():
    plan = delivery_plan()
    assert plan.project == "delivery" and plan.stack == "acme"
    assert len(plan.of_type(ROLE_ASSIGNMENT)) > 200
    assert plan.outputs["workerRoleIds"]


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_each_identity_trusts_exactly_its_github_environment(stack):
    """A deploy identity trusts the token of `<env>-<layer>`, a plan identity `<env>-<layer>-preview`,
    GitHub's issuer and the token exchange audience only; nothing else signs in as them."""
    env, plan = environment(stack), delivered(stack)
    identities = {r.name for r in plan.of_type("azure-native:managedidentity:UserAssignedIdentity")}
    trusted = {
        plan.by_urn(r.parent).name: (r.inputs["issuer"], r.inputs["subject"], tuple(r.inputs["audiences"]))
        for r in plan.of_type("azure-native:managedidentity:FederatedIdentityCredential")
        if offline_identities.identity_environment(plan.by_urn(r.parent).name) == env
    }
    github = ("https://token.actions.githubusercontent.com",)
    audience = ("api://AzureADTokenExchange",)
    expected = {}
    for layer in LAYERS:
        expected[f"id-ailab-deploy-{env}-{layer}"] = (
            *github,
            f"repo:acme/ai-platform:environment:{env}-{layer}",
            audience,
        )
        expected[f"id-ailab-plan-{env}-{layer}"] = (
            *github,
            f"repo:acme/ai-platform:environment:{env}-{layer}-preview",
            audience,
        )
    assert trusted == expected
    assert set(trusted) <= identities


@pytest.mark.parametrize("stack", ["acme", "acme-scale"])
def test_custom_roles_are_fixed_by_name_and_their_one_assignable_scope(stack):
    """A custom role's GUID is uuid5 of its scope and name (planning/delivery.py), so a platform
    stack file can name one (platform:jobs.workerRoleId) before the delivery runs; it is
    assignable at that one scope only."""
    from planning.delivery import custom_role_guid

    for name, role in custom_roles(delivery_plan(stack)).items():
        assert len(role["scopes"]) == 1, name
        assert role["guid"] == custom_role_guid(name, role["scopes"][0]), name


@pytest.mark.parametrize("stack", ["prod", "prod-scale"])
def test_the_platform_stack_names_the_worker_role_the_delivery_defines(stack):
    values = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    assert values["platform:jobs"]["workerRoleId"] == delivered(stack).outputs["workerRoleIds"][environment(stack)]


def test_state_and_keys_are_private_keyless_protected_and_their_endpoints_sit_in_the_hubs_subscription():
    plan = delivery_plan()
    account = plan.of_type("azure-native:storage:StorageAccount")[0]
    assert account.inputs["allowSharedKeyAccess"] is False
    assert account.inputs["publicNetworkAccess"] == "Disabled"
    assert account.options.protect
    vault = plan.of_type("azure-native:keyvault:Vault")[0]
    assert vault.inputs["properties"]["enableRbacAuthorization"] is True
    assert vault.inputs["properties"]["enablePurgeProtection"] is True
    assert vault.inputs["properties"]["publicNetworkAccess"] == "Disabled"
    assert all(key.options.protect for key in plan.of_type("azure-native:keyvault:Key"))
    hub_subscription = read_stack_config(DELIVERY, "acme").values["delivery:hub"]
    hub_subscription = json.loads(hub_subscription)["endpointSubnetId"].split("/")[2]
    for endpoint in plan.of_type("azure-native:network:PrivateEndpoint"):
        provider = plan.by_urn(endpoint.provider.rsplit("::", 1)[0])
        # A private endpoint must be in its VNet's subscription (private-endpoint-overview).
        assert provider.inputs["subscriptionId"] == hub_subscription, endpoint.name
    assignments = plan.of_type(ROLE_ASSIGNMENT)
    assert {a.inputs["principalType"] for a in assignments} == {"ServicePrincipal", "Group"}
    owner, access_admin = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635", "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9"
    assert not [a for a in assignments if a.inputs["roleDefinitionId"].rsplit("/", 1)[-1] in (owner, access_admin)]


def test_bad_delivery_config_names_every_key_at_once():
    with pytest.raises(ConfigError) as raised:
        parse_delivery_config(
            {
                "delivery:repository": "not a repo",
                "delivery:prefix": "ailab",
                "delivery:state": json.dumps({"subscriptionId": "x", "colour": "blue"}),
                "delivery:environments": json.dumps(
                    {
                        "Prod": {"subscriptionId": OFFLINE_SUBSCRIPTION_ID},
                        "dev": {"subscriptionId": OFFLINE_SUBSCRIPTION_ID},
                    }
                ),
                "delivry:hub": "{}",
            }
        )
    message = str(raised.value)
    for where in (
        "delivery:repository",
        "delivery:state.subscriptionId",
        "delivery:state.colour",
        "delivery:hub",
        "delivry:hub",
        "delivery:environments.Prod",
    ):
        assert where in message, (where, message)


def test_a_program_that_fails_its_config_registers_nothing(tmp_path: Path):
    config = read_stack_config(DELIVERY, "acme")
    values = dict(config.values)
    values["delivery:prefix"] = "A!"
    plan = run_program(type(config)(config.project, config.stack, values, []), DELIVERY)
    assert not plan.ok and "delivery:prefix" in (plan.error or "")
    assert [r for r in plan.resources if not r.type.startswith("pulumi:")] == []


REGISTER = ROOT / "scripts" / "register-providers"


def test_register_providers_registers_every_provider_in_every_subscription_that_needs_it():
    """The one delivery step that cannot be a resource: each environment's providers, the hub's
    for private clusters and endpoints, the state subscription's for the delivery itself."""
    from planning.delivery import RESOURCE_PROVIDERS

    result = subprocess.run([sys.executable, str(REGISTER), "--dry-run"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    calls = commands(result.stdout)
    registered = {
        (option(c, "--subscription"), option(c, "--namespace")) for c in calls if c[:2] == ["provider", "register"]
    }
    config = json.loads(read_stack_config(DELIVERY, "acme").values["delivery:hub"])
    hub = config["privateDnsZonesResourceGroupId"].split("/")[2]
    assert {(OFFLINE_SUBSCRIPTION_ID, n) for n in RESOURCE_PROVIDERS} <= registered
    # AKS private clusters: Microsoft.ContainerService in the zones' subscription too.
    assert {(hub, "Microsoft.ContainerService"), (hub, "Microsoft.Network")} <= registered
    assert all(c[:2] == ["provider", "register"] for c in calls)


def test_register_providers_registers_a_featured_provider_again_once_its_feature_is_registered(tmp_path: Path):
    from planning.delivery import FEATURES

    fake = FakeAzure(tmp_path)
    environment = {"PATH": f"{fake.bin}:/usr/bin:/bin", "FAKE_AZ_LOG": str(fake.log), "FAKE_AZ_STATE": str(fake.state)}

    def run() -> subprocess.CompletedProcess[str]:
        fake.log.write_text("")
        return subprocess.run(
            [sys.executable, str(REGISTER)], capture_output=True, text=True, check=False, env=environment, timeout=120
        )

    # Before the delivery project registered the features: every provider, and it says to come back.
    first = run()
    assert first.returncode == 3 and "features not registered yet" in first.stderr, first.stderr
    # The delivery project registered them (what features:SubscriptionFeatureRegistration does).
    for namespace, feature in FEATURES:
        subprocess.run(
            [
                "az",
                "feature",
                "register",
                "--namespace",
                namespace,
                "--name",
                feature,
                "--subscription",
                OFFLINE_SUBSCRIPTION_ID,
            ],
            env=environment,
            check=True,
        )
    second = run()
    assert second.returncode == 0, second.stderr
    changes = [c for c in fake.calls() if "register" in c]
    # Every provider was registered by the first run; now only the featured ones, again.
    assert sorted(str(option(c, "--namespace")) for c in changes) == sorted(namespace for namespace, _ in FEATURES)


def test_make_preview_delivery_previews_every_delivery_stack(capsys):
    from scripts.preview_delivery import main

    assert main(["--no-tree"]) == 0
    out = capsys.readouterr().out
    for stack, environments in (("acme", "dev, prod, staging"), ("acme-scale", "prod")):
        plan = delivery_plan(stack)
        identities = len(plan.of_type("azure-native:managedidentity:UserAssignedIdentity"))
        grants = len(plan.of_type(ROLE_ASSIGNMENT))
        assert f"{stack}: {identities} identities and {grants} grants for {environments}" in out


def github_environments(plan: Plan) -> dict[str, Any]:
    return {
        r.inputs["environment"]: r for r in plan.of_type("github:index/repositoryEnvironment:RepositoryEnvironment")
    }


def test_each_github_environment_points_at_the_identity_that_trusts_it_and_nothing_else():
    """The variables a job reads name the identity whose federated credential trusts exactly
    that job's GitHub environment: deploy identities in `<env>-<layer>`, plan identities in
    `<env>-<layer>-preview`, and the environment's own subscription."""
    plan = delivery_plan()
    subject_of = {
        plan.by_urn(r.parent or "").name: r.inputs["subject"]
        for r in plan.of_type("azure-native:managedidentity:FederatedIdentityCredential")
    }
    variables: dict[str, dict[str, str]] = {}
    for r in plan.of_type("github:index/actionsEnvironmentVariable:ActionsEnvironmentVariable"):
        variables.setdefault(r.inputs["environment"], {})[r.inputs["variableName"]] = r.inputs["value"]
    environments = github_environments(plan)
    assert set(variables) == set(environments) and len(environments) == 3 * 5 * 2
    for name, values in variables.items():
        trusted = [n for n, subject in subject_of.items() if subject == f"repo:acme/ai-platform:environment:{name}"]
        assert len(trusted) == 1, name
        expected_kind = "plan" if name.endswith("-preview") else "deploy"
        assert f"-{expected_kind}-" in trusted[0], (name, trusted)
        assert values["AZURE_SUBSCRIPTION_ID"] == OFFLINE_SUBSCRIPTION_ID
        assert set(values) == {"AZURE_CLIENT_ID", "AZURE_SUBSCRIPTION_ID"}
        environment = offline_identities.identity_environment(trusted[0])
        assert values["AZURE_CLIENT_ID"] == plan.outputs[f"{environment}ClientIds"][trusted[0]], name
    repository = {r.inputs["variableName"] for r in plan.of_type("github:index/actionsVariable:ActionsVariable")}
    assert repository == {"AZURE_TENANT_ID", "PULUMI_STATE_STORAGE_ACCOUNT"}


def test_deploys_need_main_and_the_configured_approvers_and_admins_wait_too():
    plan = delivery_plan()
    environments = github_environments(plan)
    policies = {
        r.inputs["environment"]: r.inputs.get("branchPattern")
        for r in plan.of_type(
            "github:index/repositoryEnvironmentDeploymentPolicy:RepositoryEnvironmentDeploymentPolicy"
        )
    }
    teams = {
        slug: int(str(uuid.uuid5(OFFLINE_NAMESPACE, f"team/{slug}").int % 10**7))
        for slug in ("platform", "platform-leads", "data-leads", "network-leads")
    }
    for name, environment in environments.items():
        assert environment.inputs["canAdminsBypass"] is False, name
        reviewers = [t for group in environment.inputs.get("reviewers", []) for t in group.get("teams", [])]
        if name.endswith("-preview"):
            assert not reviewers and name not in policies and "deploymentBranchPolicy" not in environment.inputs
            continue
        assert policies[name] == "main", name
        assert environment.inputs["deploymentBranchPolicy"] == {
            "protectedBranches": False,
            "customBranchPolicies": True,
        }
        expected = {
            "prod-data": {"platform-leads", "data-leads"},
            "prod-foundation": {"platform-leads", "network-leads"},
        }.get(
            name,
            {"platform-leads"} if name.startswith("prod-") else {"platform"} if name.startswith("staging-") else set(),
        )
        assert sorted(reviewers) == sorted(teams[t] for t in expected), name
        assert environment.inputs.get("preventSelfReview", False) is bool(expected), name


def test_main_takes_only_reviewed_pull_requests_that_passed_the_pull_request_workflows_checks():
    plan = delivery_plan()
    (ruleset,) = plan.of_type("github:index/repositoryRuleset:RepositoryRuleset")
    assert ruleset.inputs["enforcement"] == "active" and not ruleset.inputs.get("bypassActors")
    assert ruleset.inputs["conditions"]["refName"]["includes"] == ["~DEFAULT_BRANCH"]
    rules = ruleset.inputs["rules"]
    assert rules["pullRequest"]["requiredApprovingReviewCount"] >= 1 and rules["pullRequest"]["requireLastPushApproval"]
    assert rules["deletion"] and rules["nonFastForward"]
    checks = {c["context"]: c["integrationId"] for c in rules["requiredStatusChecks"]["requiredChecks"]}
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pull-request.yml").read_text())
    jobs = {job.get("name") for job in workflow["jobs"].values()}
    assert set(checks) <= jobs, "a required check no job of the pull-request workflow reports"
    assert set(checks.values()) == {15368}  # GitHub Actions, not any app posting that name
    (permissions,) = plan.of_type("github:index/workflowRepositoryPermissions:WorkflowRepositoryPermissions")
    assert permissions.inputs["defaultWorkflowPermissions"] == "read"


def test_the_deploy_runner_group_runs_only_the_up_jobs_of_main_and_no_group_is_open_to_all():
    """A group restricted to workflows admits only jobs defined in them (github/docs): the `up`
    jobs are pulumi.yml's, which deploy.yml calls through environment.yml."""
    plan = delivery_plan()
    groups = {r.inputs["name"]: r.inputs for r in plan.of_type("github:index/actionsRunnerGroup:ActionsRunnerGroup")}
    assert set(groups) == {"platform-preview", "platform-deploy"}
    assert all(g["visibility"] == "selected" and len(g["selectedRepositoryIds"]) == 1 for g in groups.values())
    assert groups["platform-deploy"]["restrictedToWorkflows"] is True
    (selected,) = groups["platform-deploy"]["selectedWorkflows"]
    assert selected == "acme/ai-platform/.github/workflows/pulumi.yml@refs/heads/main"
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pulumi.yml").read_text())
    runs_on = [str(job.get("runs-on")) for job in workflow["jobs"].values()]
    assert any("platform-deploy" in r for r in runs_on), "pulumi.yml defines the jobs that run on the deploy pool"


@pytest.mark.parametrize(
    "github, problem",
    [
        (
            {"plan": "team", "visibility": "private", "reviewers": {"prod": {"teams": ["leads"]}}},
            "GitHub enforces required reviewers on a private repository only on GitHub Enterprise",
        ),
        ({"plan": "free", "visibility": "private"}, "on GitHub Free a private repository"),
        (
            {"plan": "enterprise", "visibility": "private", "reviewers": {"qa": {"teams": ["x"]}}},
            "reviewers.qa: is not an",
        ),
    ],
)
def test_github_settings_github_would_not_enforce_are_config_errors(github, problem):
    values = dict(read_stack_config(DELIVERY, "acme").values)
    values["delivery:github"] = json.dumps(github)
    with pytest.raises(ConfigError, match="delivery:github") as raised:
        parse_delivery_config(values)
    assert problem in str(raised.value)


def test_the_admin_group_alone_has_break_glass_access_to_every_blob_and_key_and_features_are_per_subscription():
    """As delivery:adminGroupObjectId grants it: the only principal that writes the
    backend's meta.yaml and uses every key; and a feature is registered once per subscription,
    kept when an environment leaves (azure-native refuses a second registration of one)."""
    plan = delivery_plan()
    group = read_stack_config(DELIVERY, "acme").values["delivery:adminGroupObjectId"]
    groups = [r for r in plan.of_type(ROLE_ASSIGNMENT) if r.inputs["principalType"] != "ServicePrincipal"]
    assert {
        (r.inputs["principalId"], r.inputs["principalType"], r.inputs["roleDefinitionId"].rsplit("/", 1)[-1])
        for r in groups
    } == {
        (group, "Group", "ba92f5b4-2d11-453d-a403-e96b0029c9fe"),
        (group, "Group", "12338af0-0e69-4776-bea7-57ae8d297424"),
    }
    features = plan.of_type("azure-native:features:SubscriptionFeatureRegistration")
    assert len(features) == len({(r.inputs["providerNamespace"], r.inputs["featureName"]) for r in features})
    assert all(r.options.retain_on_delete for r in features)


def test_relational_delivery_problems_name_their_keys():
    values = dict(read_stack_config(DELIVERY, "acme").values)
    state = json.loads(values["delivery:state"])["subscriptionId"]
    environments = json.loads(values["delivery:environments"])
    environments["dev"]["subscriptionId"] = state
    values["delivery:environments"] = json.dumps(environments)
    github = json.loads(values["delivery:github"])
    github["reviewers"]["prod"]["layers"]["cluster-eus2"] = ["platform-leads"]
    values["delivery:github"] = json.dumps(github)
    with pytest.raises(ConfigError) as raised:
        parse_delivery_config(values)
    message = str(raised.value)
    assert "delivery:environments.dev.subscriptionId: is the state subscription" in message
    assert "delivery:github.reviewers.prod.layers.cluster-eus2: is not a layer" in message


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_no_identity_can_delete_a_state_container_or_disable_a_state_key(stack):
    """Both break every deploy of the environment at once and neither is a blob of one's own
    state: no grant of any deploy or plan identity covers them (the admins' break-glass group is
    not an identity of a layer)."""
    from planning.permissions import Operation, check

    config = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    backend = offline_identities.backend(config["platform:environment"])
    held = offline_identities.stack_identities(stack)
    dangerous = [
        Operation(
            "Microsoft.Storage/storageAccounts/blobServices/containers/delete", backend.state_container_id, "test"
        ),
        Operation(
            "Microsoft.Storage/storageAccounts/blobServices/containers/write", backend.state_container_id, "test"
        ),
        *(
            Operation(f"Microsoft.KeyVault/vaults/keys/{verb}", key, "test", data=True)
            for key in backend.secrets_key_ids.values()
            for verb in ("update/action", "delete")
        ),
    ]
    for identity, grants in held.grants.items():
        assert len(check(identity, grants, dangerous)) == len(dangerous), identity


def test_the_hub_owners_group_can_hold_the_state_endpoints():
    """Without resourceGroups/write in the hub's subscription: the endpoints go into the hub
    owner's group named by delivery:hub.endpointResourceGroup, and no group is made there."""
    config = read_stack_config(DELIVERY, "acme")
    values = dict(config.values)
    hub = json.loads(values["delivery:hub"])
    values["delivery:hub"] = json.dumps({**hub, "endpointResourceGroup": "rg-hub-endpoints"})
    plan = run_program(type(config)(config.project, config.stack, values, []), DELIVERY)
    assert plan.ok, plan.error
    endpoints = plan.of_type("azure-native:network:PrivateEndpoint")
    assert endpoints and {e.inputs["resourceGroupName"] for e in endpoints} == {"rg-hub-endpoints"}
    # The delivery's own group, and the environments' units' groups (in their subscriptions).
    groups = {r.inputs["resourceGroupName"] for r in plan.of_type("azure-native:resources:ResourceGroup")}
    assert "rg-ailab-delivery" in groups and not {g for g in groups if "hub" in g}


def test_the_delivery_grants_where_the_platform_deploys():
    """An environment's deploy identities get their roles on the subscription the delivery names;
    its units deploy to platform:subscriptionId (and stop elsewhere): the two must be one."""
    from components.delivery.program import environment_access

    values = dict(read_stack_config(DELIVERY, "acme").values)
    environments = json.loads(values["delivery:environments"])
    environments["staging"]["subscriptionId"] = "0b1f6471-1bf0-4dda-aec3-999999999999"
    values["delivery:environments"] = json.dumps(environments)
    with pytest.raises(ConfigError) as raised:
        environment_access(parse_delivery_config(values), ROOT)
    assert (
        "delivery:environments.staging.subscriptionId: stacks/Pulumi.staging.yaml deploys to "
        "d2bf8eeb-1057-5d65-84b7-d7af78a77b77 (platform:subscriptionId), not 0b1f6471-1bf0-4dda-aec3-999999999999"
    ) in str(raised.value)


@pytest.mark.parametrize("environment", ["dev", "staging", "prod", "prod-scale"])
def test_the_stack_init_commands_create_exactly_the_units_with_the_deliverys_keys(environment):
    """What a first deploy pastes (scripts/units.py --init): complete commands (nothing commented
    out or to edit), one stack per unit the workflows deploy (a fleet only with two clusters),
    each with the key the delivery creates for its layer and pinned to the environment's subscription.
    A variant (prod-scale) has stacks of its own in its environment's container, with its keys."""
    import shlex

    from offline.environment import parsed_environment, waves

    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "units.py"), "--stack", environment, "--init"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    config = parsed_environment(environment)
    keys = {r.inputs["keyName"] for r in delivery_plan().of_type("azure-native:keyvault:Key")}
    commands = [shlex.split(line, comments=True) for line in result.stdout.splitlines()]
    assert [len(c) for c in commands] == [len(shlex.split(line)) for line in result.stdout.splitlines()], "a # inside"
    login, *rest = commands
    assert login[:2] == ["pulumi", "login"] and f"pulumi-state-{config.environment}?" in login[2]
    created = [c[3] for c in rest if c[:3] == ["pulumi", "stack", "init"]]
    assert created == [unit.stack(environment) for wave in waves(config) for unit in wave]
    assert any(s.endswith(".fleet") for s in created) == config.has_fleet
    for command in rest:
        if command[:3] == ["pulumi", "stack", "init"]:
            assert command[4] == "--secrets-provider"
            assert command[5].rsplit("/", 1)[-1] in keys
            assert command[5].rsplit("/", 1)[-1].endswith(f"-{command[3].split('.', 1)[1].split('-')[0]}")
        else:
            assert command == [
                "pulumi",
                "config",
                "set",
                "--stack",
                command[4],
                "azure-native:subscriptionId",
                config.subscription_id,
            ]


def test_the_deliverys_own_state_moves_into_a_container_and_key_only_the_admins_reach():
    """docs/deploying.md starts the delivery's state on the administrator's machine (step 4) and
    moves it into the account the delivery creates (step 6): the container and key it names are
    in the plan, protected, and no deploy or plan identity has a grant on either (the admins'
    group does, on the account and the vault)."""
    import re

    from planning.delivery import Delivery

    plan = delivery_plan()
    containers = {r.inputs["containerName"]: r for r in plan.of_type("azure-native:storage:BlobContainer")}
    keys = {r.inputs["keyName"]: r for r in plan.of_type("azure-native:keyvault:Key")}
    assert containers[Delivery.own_container].options.protect and keys[Delivery.own_key].options.protect
    account = plan.of_type("azure-native:storage:StorageAccount")[0].inputs["accountName"]
    vault = plan.of_type("azure-native:keyvault:Vault")[0].inputs["vaultName"]
    for r in plan.of_type(ROLE_ASSIGNMENT):
        scope = r.inputs["scope"]
        if r.inputs.get("principalType") != "Group":
            assert Delivery.own_container not in scope and not scope.endswith(f"/keys/{Delivery.own_key}"), r.name
    admins = {
        r.inputs["scope"].rsplit("/", 1)[-1]
        for r in plan.of_type(ROLE_ASSIGNMENT)
        if r.inputs.get("principalType") == "Group"
    }
    assert {account, vault} <= admins
    page = (ROOT / "docs" / "deploying.md").read_text()
    step = page.split("6. **Move the delivery's state into its account**", 1)[1].split("\n7. ", 1)[0]
    assert f"pulumi login 'azblob://{Delivery.own_container}?storage_account={account}'" in step
    assert f"'azurekeyvault://{vault}.vault.azure.net/keys/{Delivery.own_key}'" in step
    assert re.search(
        r"pulumi stack export .*\n.*pulumi login .*\n.*\n.*pulumi stack init .*\n.*pulumi stack import", step
    )


def test_what_runs_with_owner_rights_changes_only_with_its_code_owners_approval():
    """The administrator runs the delivery project and scripts/ with an organization owner's
    token and Owner on the subscriptions, and the workflows hold the deploy identities: every file
    of theirs has an owner in .github/CODEOWNERS (the last matching pattern, as GitHub reads it),
    a team the delivery knows, and the ruleset on main requires that owner's review."""
    import fnmatch

    lines = [line.split() for line in (ROOT / ".github" / "CODEOWNERS").read_text().splitlines()]
    rules = [(parts[0], parts[1:]) for parts in lines if parts and not parts[0].startswith("#")]

    def owners(path: str) -> list[str]:
        found: list[str] = []
        for pattern, who in rules:
            anchored = pattern.lstrip("/")
            if (anchored.endswith("/") and path.startswith(anchored)) or fnmatch.fnmatch(path, anchored):
                found = who
        return found

    sensitive = [
        *(f"delivery/{p.name}" for p in (ROOT / "delivery").iterdir() if p.is_file()),
        *(str(p.relative_to(ROOT)) for p in (ROOT / "components" / "delivery").glob("*.py")),
        *(str(p.relative_to(ROOT)) for p in (ROOT / "scripts").iterdir() if p.is_file()),
        *(str(p.relative_to(ROOT)) for p in (ROOT / ".github").rglob("*") if p.is_file()),
        *(str(p.relative_to(ROOT)) for p in (ROOT / "policies").rglob("*.py") if "venv" not in p.parts),
        "planning/delivery.py",
        "stackconfig/delivery.py",
        "validation/delivery.py",
        "requirements.txt",
    ]
    values = read_stack_config(DELIVERY, "acme").values
    teams = {t for who in json.loads(values["delivery:github"])["reviewers"].values() for t in who.get("teams", [])}
    owner = f"@{values['delivery:repository'].split('/')[0]}/"
    for path in sensitive:
        assert owners(path), f"{path} has no code owner"
        assert all(o.startswith(owner) and o.removeprefix(owner) in teams for o in owners(path)), path
    ruleset = delivery_plan().of_type("github:index/repositoryRuleset:RepositoryRuleset")[0]
    assert ruleset.inputs["rules"]["pullRequest"]["requireCodeOwnerReview"] is True


STARTER = ROOT / "examples" / "delivery" / "Pulumi.starter.yaml"


def starter_config():
    from validation.stackfile import read_stack_file

    return read_stack_file(STARTER, "delivery", "starter")


@functools.cache
def starter_plan() -> Plan:
    """The example delivery of a team without a hub (examples/delivery/Pulumi.starter.yaml)."""
    plan = run_program(starter_config(), DELIVERY)
    assert plan.ok, plan.error
    return plan


def test_a_minimal_hub_holds_what_a_first_deploy_needs_of_one():
    """delivery/stacks/Pulumi.starter.yaml has no hub: the delivery makes one. The state's
    endpoints sit in its endpoint subnet and register in zones it creates; every zone the
    platform's endpoints use is linked to its VNet, so the runners resolve them; the runners'
    subnet leaves through a NAT gateway (no default outbound access); its monitor scope ingests
    privately only, through an endpoint in the hub; its output is what a stack file names."""
    from planning.hub import ENDPOINT_SUBNET, RUNNER_SUBNET, SHARED_ZONES

    plan = starter_plan()
    hub = plan.outputs["hub"]
    (vnet,) = plan.of_type("azure-native:network:VirtualNetwork")
    subnets = {s["name"]: s for s in vnet.inputs["subnets"]}
    assert set(subnets) == {ENDPOINT_SUBNET, RUNNER_SUBNET}
    assert all(s["defaultOutboundAccess"] is False for s in subnets.values())
    assert "natGateway" in subnets[RUNNER_SUBNET] and "natGateway" not in subnets[ENDPOINT_SUBNET]
    zones = {r.inputs["privateZoneName"] for r in plan.of_type("azure-native:privatedns:PrivateZone")}
    assert set(SHARED_ZONES) <= zones
    linked = {
        plan.by_urn(r.parent).inputs["privateZoneName"]
        for r in plan.of_type("azure-native:privatedns:VirtualNetworkLink")
        if r.inputs["virtualNetwork"]["id"] == hub["virtualNetworkId"]
    }
    assert linked == zones
    endpoints = {r.name: r for r in plan.of_type("azure-native:network:PrivateEndpoint")}
    state = [r for name, r in endpoints.items() if name.startswith("state-")]
    assert len(state) == 2 and all(
        r.inputs["subnet"]["id"] == f"{hub['virtualNetworkId']}/subnets/{ENDPOINT_SUBNET}" for r in state
    )
    for group in plan.of_type("azure-native:network:PrivateDnsZoneGroup"):
        for config in group.inputs["privateDnsZoneConfigs"]:
            assert config["privateDnsZoneId"].startswith(hub["privateDnsZonesResourceGroupId"] + "/"), group.name
    (scope,) = plan.of_type("azure-native:monitor:PrivateLinkScope")
    assert scope.inputs["accessModeSettings"]["ingestionAccessMode"] == "PrivateOnly"
    monitor = [
        r for r in endpoints.values() if r.inputs["privateLinkServiceConnections"][0]["groupIds"] == ["azuremonitor"]
    ]
    assert len(monitor) == 1 and hub["privateLinkScopeId"].endswith("/" + scope.inputs["scopeName"])


HUB_VNET = "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/resourceGroups/rg/providers/Microsoft.Network/virtualNetworks/v"


@pytest.mark.parametrize(
    "hub, message",
    [
        ({}, "name an existing hub"),
        (
            {
                "virtualNetworkId": HUB_VNET,
                "create": {
                    "subscriptionId": "11111111-1111-4111-8111-111111111111",
                    "location": "eastus2",
                    "addressSpace": "10.250.0.0/22",
                },
            },
            "create: a hub the delivery creates has its own IDs",
        ),
        (
            {
                "create": {
                    "subscriptionId": "11111111-1111-4111-8111-111111111111",
                    "location": "eastus2",
                    "addressSpace": "10.250.0.0/25",
                }
            },
            "delivery:hub.create.addressSpace",
        ),
    ],
)
def test_a_hub_is_either_named_or_created(hub, message):
    values = dict(starter_config().values)
    values["delivery:hub"] = json.dumps(hub)
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_delivery_config(values)


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_no_layer_can_write_another_layers_resources(stack):
    """platform:resourceGroups: delivery. Each layer's deploy identity holds Contributor on its
    own groups, never on the subscription: a write into another layer's group (a VM in the
    foundation's network group by the data layer, say) is refused, as Azure would, by its grants."""
    from components.platform.groups import unit_groups
    from offline.environment import parsed_environment
    from planning.permissions import Operation, check

    config = parsed_environment(stack)
    ids = offline_identities.stack_identities(stack)
    subscription = f"/subscriptions/{OFFLINE_SUBSCRIPTION_ID}"
    owner = {group.name: unit.layer for unit, groups in unit_groups(config).items() for group in groups}
    for layer in LAYERS:
        grants = ids.grants[ids.deployer(layer)]
        assert not [g for g in grants if g.role.name == "Contributor" and g.scope.lower() == subscription.lower()], (
            layer
        )
        for group, other in owner.items():
            write = Operation(
                "Microsoft.Compute/virtualMachines/write",
                f"{subscription}/resourceGroups/{group}/providers/Microsoft.Compute/virtualMachines/x",
                "a write into another layer's group",
            )
            denied = check(ids.deployer(layer), grants, [write])
            assert bool(denied) == (other != layer), (layer, group)


def test_a_delivery_environment_is_one_the_packs_know_and_a_variant_is_a_platform_stack():
    """`delivery:environments` takes dev, staging and prod (their packs' files, GitHub
    environments and identities exist); `research-eu` is refused naming the key, and a variant
    is listed as one of an environment's `platformStacks`, checked by the same rule."""
    values = dict(read_stack_config(ROOT / "delivery", "acme").values)
    environments = json.loads(values["delivery:environments"])
    environments["research-eu"] = environments["staging"]
    with pytest.raises(ConfigError) as refused:
        parse_delivery_config({**values, "delivery:environments": json.dumps(environments)})
    assert "delivery:environments.research-eu" in str(refused.value)
    assert str(refused.value).endswith("Every key is documented in docs/delivery-configuration.md.")
