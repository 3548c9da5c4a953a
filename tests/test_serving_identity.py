"""Who may call a served API, on Entra ID's side (components/delivery/entra.py, docs/serving.md):
the delivery project makes each API's application and assigns its roles to the callers' managed
identities; Entra then issues those identities, and no one else, tokens the gateway admits. The
tokens here are what the delivery's plan leaves the tenant issuing (offline/entra.py)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from contracts.cluster import ClusterView
from contracts.gateway import Call, refusals
from offline import entra as offline_entra
from offline.engine import run_program
from offline.identities import DELIVERY, delivery_plan, delivery_stack_of
from planning import serving as serving_plan
from planning.entra_applications import application_name
from planning.naming import Naming
from tests.conftest import stack_values
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

SERVING = ("staging", "prod")
TRAINER_POD = {"azure.workload.identity/use": "true", "job-name": "train-llm"}


@pytest.mark.parametrize("stack", SERVING)
def test_each_served_api_has_a_single_tenant_application_issuing_v2_tokens_to_assigned_principals_only(stack):
    """One application per API with exactly the API's roles, granted to applications (a managed
    identity's app-only token carries them), v2.0 tokens (the issuer the gateway names), and a
    service principal that refuses tokens to any principal without a role. Its client ID is the
    audience the platform's stack file names: what the delivery's `<env>StackSettings` exports."""
    config = parse_platform_config(stack_values(stack))
    plan = delivery_plan(delivery_stack_of(stack))
    applications, others = offline_entra.read(plan)
    assert others == []
    naming = Naming(config.prefix, config.environment)
    settings = plan.outputs[f"{config.environment}StackSettings"]
    for api, spec in config.serving.apis.items():
        application = applications[application_name(naming, api)]
        assert sorted(application.roles.values()) == sorted(spec.roles)
        assert application.token_version == 2 and application.assignment_required
        assert settings[f"platform:serving.apis.{api}.applicationClientId"] == application.client_id
        assert str(spec.application_client_id) == application.client_id


@pytest.mark.parametrize("stack", SERVING)
def test_entra_issues_a_token_for_an_api_only_to_the_workloads_config_names_as_its_callers(plans, stack):
    """Every workload's identity, every API: the callers get exactly their roles, every other
    workload no token at all (the API's service principal requires an assignment)."""
    config = parse_platform_config(stack_values(stack))
    delivery = delivery_plan(delivery_stack_of(stack))
    for api, spec in config.serving.apis.items():
        for workload in config.workloads:
            token = offline_entra.issued_token(config, plans[stack], delivery, api, workload)
            if workload in spec.callers:
                assert token is not None and token["roles"] == sorted(spec.callers[workload]), (api, workload)
                assert token["aud"] == str(spec.application_client_id)
            else:
                assert token is None, (api, workload)


def test_the_gateway_admits_a_caller_only_once_the_delivery_has_assigned_its_roles(plans):
    """Over time, for a new environment: the delivery runs before the foundation makes the
    workloads' identities, so its first run (servingCallers false) makes the applications and
    reads no identity: Entra issues the trainer no token and the gateway refuses it. Once the
    foundation is deployed, the delivery's next run (servingCallers true) assigns the roles and the
    same call is admitted; nothing on the cluster changed in between."""
    config = read_stack_config(DELIVERY, "acme")
    values = dict(config.values)
    environments = json.loads(values["delivery:environments"])
    environments["staging"] = {**environments["staging"], "servingCallers": False}
    values["delivery:environments"] = json.dumps(environments)
    first = run_program(dataclasses.replace(config, values=values), DELIVERY)
    assert first.ok, first.error
    assert not [c for c in first.calls if c.token.endswith("getUserAssignedIdentity") and "staging" in str(c.args)], (
        "the first run must not need the environment's identities"
    )
    platform = parse_platform_config(stack_values("staging"))
    host = serving_plan.api_host(platform, "generate")
    view = ClusterView(plans["staging"], platform.serving.clusters[0], stack_values("staging"))
    before = offline_entra.issued_token(platform, plans["staging"], first, "generate", "trainer")
    assert before is None
    call = Call(host, "/inference.v1.Generate/Stream", before, "research", TRAINER_POD)
    assert any("serving-require-token denies it" in r for r in refusals(view, call))
    after = offline_entra.issued_token(platform, plans["staging"], delivery_plan("acme"), "generate", "trainer")
    assert after is not None
    assert refusals(view, dataclasses.replace(call, claims=after)) == []


def test_a_new_api_is_made_by_the_delivery_before_the_stack_file_names_its_client_id(tmp_path):
    """The order of a new API: its stack file entry has no client ID yet; the delivery's run
    makes its application from it, while the platform refuses to serve it, naming the key and
    where the value comes from."""
    import shutil

    import yaml

    from components.delivery.program import environment_access
    from tests.conftest import ROOT, assert_problems
    from validation.delivery import parse_delivery_config

    def without_client_id(values):
        del values["platform:serving"]["apis"]["chat"]["applicationClientId"]

    assert_problems(
        "staging",
        without_client_id,
        {"platform:serving.apis.chat.applicationClientId": "stagingStackSettings carries the client ID"},
    )
    # The delivery reads the same stack file (the project's file and its stacks, nothing else).
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copytree(ROOT / "stacks", tmp_path / "stacks")
    path = tmp_path / "stacks" / "Pulumi.staging.yaml"
    document = yaml.safe_load(path.read_text())
    del document["config"]["platform:serving"]["apis"]["chat"]["applicationClientId"]
    path.write_text(yaml.safe_dump(document))
    access = environment_access(parse_delivery_config(read_stack_config(DELIVERY, "acme").values), tmp_path)
    assert sorted(a.api for a in access["staging"].applications) == ["chat", "generate"]
