"""The helpers in tests/support/ do what the tests that use them assume."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.fake_az import FakeAzure, named, option
from tests.support.github import Expression, condition, job_results, render
from tests.support.plan_edits import DELETE, changed, set_path, wire_inputs, without

CONTEXT = {"github": {"event_name": "push", "ref": "refs/heads/main"}, "inputs": {"stack": "prod"}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("github.event_name == 'push'", True),
        ("github.event_name != 'push'", False),
        ("github.event_name == 'push' && inputs.stack", "prod"),  # && returns its operand, as GitHub's does
        ("github.event_name == 'pull_request' || 'fallback'", "fallback"),
        ("!(github.ref == 'refs/heads/main')", False),
        ("format('{0}-{1}', inputs.stack, 'plan')", "prod-plan"),
        ("github.missing.deeper", ""),
        ("fromJSON('[\"eus2\"]')", ["eus2"]),
        ("!cancelled() && !failure() && inputs.stack != ''", True),
        ("always()", True),
    ],
)
def test_github_expressions_evaluate_as_github_does(text, expected):
    assert Expression(text, CONTEXT).evaluate() == expected


def test_render_keeps_a_whole_expressions_type_and_interpolates_the_rest():
    assert render("${{ github.event_name == 'push' }}", CONTEXT) is True
    assert render({"name": "deploy ${{ inputs.stack }}"}, CONTEXT) == {"name": "deploy prod"}
    assert condition("${{ inputs.stack == 'prod' }}", CONTEXT) and not condition("inputs.stack == 'dev'", CONTEXT)


def test_status_functions_read_the_ancestors_status():
    failed = {**CONTEXT, "status": "failure"}
    assert not Expression("!cancelled() && !failure()", failed).evaluate()
    assert Expression("failure()", failed).evaluate() and not Expression("success()", failed).evaluate()
    with pytest.raises(AssertionError, match="no function"):
        Expression("hashFiles('x')", CONTEXT).evaluate()


def test_an_unreadable_expression_fails_loudly():
    with pytest.raises(AssertionError):
        Expression("inputs.stack === 'prod'", CONTEXT).evaluate()


def test_the_fake_az_remembers_what_it_created_and_fails_on_request(tmp_path: Path):
    fake = FakeAzure(tmp_path)
    script = tmp_path / "probe"
    script.write_text(
        "#!/usr/bin/env bash\nset -e\naz group show --name rg-x || true\naz group create --name rg-x\n"
        "az group show --name rg-x --output none\n"
    )
    script.chmod(0o755)
    # A small script drives the fake, as scripts/register-providers does.
    run = subprocess.run(
        [str(script)],
        capture_output=True,
        text=True,
        env={"PATH": f"{fake.bin}:/usr/bin:/bin", "FAKE_AZ_LOG": str(fake.log), "FAKE_AZ_STATE": str(fake.state)},
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    assert "ResourceNotFound" in run.stderr, "the first show finds nothing"
    calls = fake.calls()
    assert [call[:2] for call in calls] == [["group", "show"], ["group", "create"], ["group", "show"]]
    assert option(named(calls, "group", "create")[0], "--name") == "rg-x"
    failing = subprocess.run(
        [str(fake.bin / "az"), "group", "create", "--name", "rg-y"],
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "FAKE_AZ_LOG": str(fake.log),
            "FAKE_AZ_STATE": str(fake.state),
            "FAKE_AZ_FAIL": "group create",
        },
    )
    assert failing.returncode == 1 and "AuthorizationFailed" in failing.stderr


def test_set_path_walks_dots_indexes_and_tuples_and_deletes():
    document = {"a": {"b": [{"c": 1}], "x.y": 2}}
    set_path(document, "a.b[0].c", 5)
    set_path(document, ("a", "x.y"), 3)
    assert document == {"a": {"b": [{"c": 5}], "x.y": 3}}
    set_path(document, "a.b[0].c", DELETE)
    assert document == {"a": {"b": [{}], "x.y": 3}}


def test_a_changed_plan_changes_one_resource_and_leaves_the_original(plans):
    plan = plans["dev"]
    cluster = plan.of_type("azure-native:containerservice:ManagedCluster")[0]
    edited = changed(plan, cluster.name, path="disableLocalAccounts", value=False)
    after = next(r for r in edited.resources if r.name == cluster.name)
    assert wire_inputs(after)["disableLocalAccounts"] is False
    assert wire_inputs(cluster)["disableLocalAccounts"] is True, "the captured plan is not modified"
    assert len(without(plan, cluster.name).resources) == len(plan.resources) - 1
    with pytest.raises(AssertionError, match="no resource named"):
        changed(plan, "no-such-resource", path="x", value=1)


def test_job_results_skip_what_follows_a_skipped_job_unless_it_says_otherwise():
    workflow = {
        "jobs": {
            "first": {},
            "maybe": {"needs": "first", "if": "inputs.stack == 'dev'"},
            "plain": {"needs": "maybe"},
            "guarded": {"needs": "maybe", "if": "${{ !cancelled() && !failure() }}"},
            "after": {"needs": "guarded"},
        }
    }
    results = job_results(workflow, CONTEXT)
    assert results == {
        "first": "success",
        "maybe": "skipped",
        "plain": "skipped",
        "guarded": "success",
        "after": "skipped",  # an ancestor was skipped: success() is false
    }
    failed = job_results(workflow, {"inputs": {"stack": "dev"}}, failing={"first"})
    assert failed["maybe"] == "skipped" and failed["guarded"] == "skipped"
