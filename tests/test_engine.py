"""The offline engine itself: isolation, completeness, options, secrets, errors, CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from offline.engine import preview_stack, run_program
from tests.conftest import ROOT, STACKS, second_preview
from validation.stackfile import SECRET_PLACEHOLDER, StackConfig, read_stack_config

FIXTURE = ROOT / "tests" / "fixtures" / "apply_program"


def signature(plan):
    return sorted((r.urn, json.dumps(r.inputs, sort_keys=True, default=str)) for r in plan.resources)


def test_one_process_previews_every_stack_and_repeats_identically(plans):
    """Every stack twice in this process (the engine keeps the pure layers loaded between runs,
    so a leak between runs would show here), and the same as the session's plans (which may
    come from another worker process)."""
    earlier = {stack: second_preview(stack) for stack in STACKS}
    again = {stack: preview_stack(stack) for stack in reversed(STACKS)}
    for stack in STACKS:
        assert again[stack].ok
        assert signature(again[stack]) == signature(earlier[stack]), f"{stack} differs on a repeat in one process"
        assert signature(again[stack]) == signature(plans[stack]), f"{stack} differs from the session's plan"
        assert {r.urn.split("::")[0] for r in again[stack].resources} == {f"urn:pulumi:{stack}"}


def test_no_resource_is_silently_missing_from_the_preview(plans):
    """Preview skips applies on unknown outputs; an update runs them all. Same resources in both
    means the mocks answer every output the program reads."""
    for stack in STACKS:
        update = preview_stack(stack, preview=False)
        assert update.ok, update.error
        assert sorted(r.urn for r in update.resources) == sorted(r.urn for r in plans[stack].resources)


def test_the_completeness_check_catches_a_resource_hidden_behind_an_unknown_output():
    config = read_stack_config(FIXTURE, "probe")
    preview = run_program(config, FIXTURE, preview=True)
    update = run_program(config, FIXTURE, preview=False)
    assert preview.ok and update.ok, (preview.error, update.error)
    previewed = {r.name for r in preview.resources}
    assert "known-output-child" in previewed, "a resource created in an apply on a known output is captured"
    assert "unknown-output-child" not in previewed
    assert "unknown-output-child" in {r.name for r in update.resources}
    assert preview.outputs["principal"]


def test_options_dependencies_and_parents_are_captured(plans):
    plan = plans["prod"]
    cluster = plan.one("azure-native:containerservice:ManagedCluster", "aks-eus2-aks")
    assert cluster.options.protect is True
    # The fleet owns prod's versions, so they are ignored beside the autoscaled count.
    assert cluster.options.ignore_changes == (
        "agentPoolProfiles[0].count",
        "kubernetesVersion",
        "agentPoolProfiles[0].orchestratorVersion",
    )
    assert plan.by_urn(cluster.parent).type == "platform:aks:Cluster"
    granted = {plan.by_urn(urn).name for urn in cluster.dependencies}
    assert {
        "aks-eus2-control-plane-joins-vnet",
        "aks-eus2-control-plane-operates-kubelet",
        "aks-eus2-control-plane-writes-api-dns",
    } <= granted
    pool = plan.one("azure-native:containerservice:AgentPool", "aks-eus2-pool-cpu")
    assert pool.options.delete_before_replace and pool.options.ignore_changes == ("count", "orchestratorVersion")
    assert plan.by_urn(pool.property_dependencies["resourceName"][0]).name == "aks-eus2-aks"
    for resource in plan.resources:
        if resource.type != "platform:index:Platform":
            assert resource.parent, f"{resource.name} is not parented to a component"


def test_secure_values_become_placeholders_and_secret_keys(tmp_path):
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_text("name: demo\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks" / "Pulumi.x.yaml").write_text(
        "config:\n  demo:token:\n    secure: AAABAcipher\n  demo:nested:\n    a:\n      secure: zzz\n    b: 1\n  plain: 3\n"
    )
    config = read_stack_config(tmp_path, "x")
    assert config.values["demo:token"] == SECRET_PLACEHOLDER
    assert json.loads(config.values["demo:nested"]) == {"a": SECRET_PLACEHOLDER, "b": 1}
    assert config.values["demo:plain"] == "3"
    assert sorted(config.secret_keys) == ["demo:nested", "demo:token"]


def test_a_program_error_is_reported_not_raised():
    base = read_stack_config(ROOT, "dev")
    plan = run_program(StackConfig(base.project, "dev", {}, []), ROOT)
    assert not plan.ok and "platform:environment: is required" in plan.error
    assert plan.resources == []


def test_cli_prints_each_unit_as_a_tree_with_counts_and_writes_json(tmp_path):
    out = tmp_path / "plans"
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "staging", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    units = ["staging.foundation", "staging.data", "staging.cluster-eus2", "staging.tenants"]
    headers = [result.stdout.index(f"Previewing update ({unit})") for unit in units]
    assert headers == sorted(headers), "units print in deploy order"
    assert "platform:aks:Cluster" in result.stdout and "└──" in result.stdout
    # Whole names, not cropped at the width of a terminal that is not there.
    assert "azure-native:authorization:RoleAssignment  aks-eus2-control-plane-operates-kubelet" in result.stdout
    assert "azure-native:containerservice:ManagedCluster" in result.stdout and "total" in result.stdout
    assert "staging: " in result.stdout and "resources in 4 stacks" in result.stdout
    plan = json.loads((out / "staging.cluster-eus2.json").read_text())
    assert (
        plan["stack"] == "staging.cluster-eus2" and plan["counts"]["azure-native:containerservice:ManagedCluster"] == 1
    )
    assert len(plan["resources"]) == sum(plan["counts"].values())
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{unit}.json" for unit in units)
    assert "Traceback" not in result.stderr


def test_cli_narrows_to_one_unit_and_what_it_reads():
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "dev", "--unit", "cluster-eus2", "--no-tree"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert "(dev.cluster-eus2)" in result.stdout and "read from: dev.foundation" in result.stdout
    assert "(dev.foundation)" not in result.stdout, "the units it reads are previewed, not printed"
    assert "(dev.tenants)" not in result.stdout and "(dev.data)" not in result.stdout
    wrong = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "dev", "--unit", "clusters"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert wrong.returncode == 2 and "not a deployment unit" in wrong.stderr


def test_the_alias_shortcut_changes_nothing_that_is_captured(plans, monkeypatch):
    """The harness's shortcuts (alias URNs and source positions nobody reads, the collector
    scanning less: offline/engine.py) change nothing the preview captures. On staging: the
    shortcuts act per resource the same way whatever its type, and staging has Strimzi, Flink,
    Cosmos DB and the firewall at a third of prod's resources (a slow preview of prod cost 13 s)."""
    monkeypatch.setattr("offline.engine.COLLECT_LESS", False)
    slow = preview_stack("staging", fast_aliases=False)
    assert slow.ok
    fast = plans["staging"]
    assert signature(slow) == signature(fast)
    assert {r.urn: r.aliases for r in slow.resources} == {r.urn: r.aliases for r in fast.resources}
    assert {r.urn: r.options for r in slow.resources} == {r.urn: r.options for r in fast.resources}
    cluster = fast.one("azure-native:containerservice:ManagedCluster", "aks-eus2-aks")
    assert len(cluster.aliases) > 100, "azure-native declares an alias per API version"


def test_a_duplicate_urn_fails_the_preview_as_it_fails_pulumi_up(monkeypatch):
    from pulumi.runtime.proto import resource_pb2

    from offline.engine import CapturingMonitor
    from offline.mocks import OfflineMocks

    monkeypatch.setattr("pulumi.runtime.mocks.get_stack", lambda: "dev")
    monkeypatch.setattr("pulumi.runtime.mocks.get_project", lambda: "platform")
    monitor = CapturingMonitor(OfflineMocks())
    request = resource_pb2.RegisterResourceRequest(type="random:index:Thing", name="same", custom=True)
    monitor.RegisterResource(request)
    with pytest.raises(ValueError, match="Duplicate resource URN"):
        monitor.RegisterResource(request)


REFERENCING = ROOT / "tests" / "fixtures" / "stack_reference"


def test_a_stack_reference_is_answered_with_the_upstream_plans_outputs():
    """A unit that reads another's outputs previews offline once the upstream unit's plan is
    known, as `pulumi preview` reads the upstream state (the deployment-units issue)."""
    config = read_stack_config(REFERENCING, "probe.tenants")
    plan = run_program(config, REFERENCING, stack_outputs={"probe.foundation": {"groupName": "rg-probe"}})
    assert plan.ok, plan.error
    assert plan.one("azure-native:resources:ResourceGroup", "tenants").inputs["resourceGroupName"] == "rg-probe-tenants"
    assert plan.outputs["upstreamGroup"] == "rg-probe"
    assert plan.outputs.get("upstreamOptional") is None, "a missing output is None, as get_output gives it"
    (read,) = [call for call in plan.calls if call.token == "pulumi:pulumi:StackReference"]
    assert read.resource_id == "probe.foundation"


def test_a_stack_reference_without_an_upstream_plan_fails_naming_the_stack():
    config = read_stack_config(REFERENCING, "probe.tenants")
    plan = run_program(config, REFERENCING, stack_outputs={})
    missing_output = run_program(config, REFERENCING, stack_outputs={"probe.foundation": {}})
    assert not plan.ok
    assert "StackReference to probe.foundation" in plan.error and "preview the units it depends on first" in plan.error
    assert not missing_output.ok and "groupName" in missing_output.error


def test_a_units_preview_reviews_it_as_its_own_pulumi_preview_does(capsys):
    """`make preview STACK=prod UNIT=cluster-eus2` (README): the cluster unit alone cannot see the
    Fleet that owns its upgrades, so `aks-upgrade-owner` is off for it, as the workflow's
    policy config turns it off; the output says the environment's review judges the rest."""
    from scripts import preview

    assert preview.main(["--stack", "prod", "--unit", "cluster-eus2", "--no-tree"]) == 0
    out = capsys.readouterr().out
    assert "aks-upgrade-owner" not in out and "0 mandatory" in out
    assert "`make review` judge those on the environment" in out


@pytest.mark.parametrize("unit, named", [("cluster-foo", "prod has no unit cluster-foo"), ("fleet", None)])
def test_a_unit_the_environment_does_not_have_is_refused_with_the_units_it_has(capsys, unit, named):
    from scripts import preview

    stack = "prod" if unit == "cluster-foo" else "dev"
    with pytest.raises(SystemExit) as exit_info:
        preview.main(["--stack", stack, "--unit", unit])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert (named or f"{stack} has no unit {unit}") in err
    assert "its units: foundation, data, cluster-eus2" in err


def test_outputs_are_a_count_by_default_and_a_tree_with_secrets_masked_when_asked(unit_plans):
    """The preview printed every output as a wrapped Python repr, kubeconfigs' neighbours
    included; now a count, and with --outputs a tree in which what the program exports as a
    secret (a cluster unit's kubeconfig) shows as `[secret]`, as `pulumi stack output` does."""
    from rich.console import Console

    from offline.render import print_plan

    plan = unit_plans["dev"].plans["dev.cluster-eus2"]
    assert plan.secret_outputs == ["kubeconfig"]
    quiet = Console(record=True, width=200)
    print_plan(plan, quiet, tree=False)
    text = quiet.export_text()
    assert f"Outputs: {len(plan.outputs)} (--outputs shows them, secrets masked)" in text
    assert plan.outputs["clusterId"] not in text
    shown = Console(record=True, width=400)
    print_plan(plan, shown, tree=False, outputs=True)
    text = shown.export_text()
    assert "kubeconfig: [secret]" in text
    assert "users:" not in text and "apiVersion" not in text and "{'" not in text, "no value of the secret, no repr"
    assert f"clusterId: {plan.outputs['clusterId']}" in text
    assert "── cluster" in text and f"name: {plan.outputs['cluster']['name']}" in text, "maps are branches"
