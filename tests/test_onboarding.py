"""End to end: a new team onboarded to prod in one pull request, through the CLI a person uses
(docs/teams.md walks the same steps): a team, a GPU quota lent by another team, a workload
identity, a Kafka topic and client. Five realistic mistakes on the way each stop the preview with
a first problem that names the key and the fix; the finished change previews, passes review
showing each team's share of the pool, and prod admits the team's 8-GPU InfiniBand gang."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import yaml

from contracts.cluster import ClusterView
from contracts.golden import BY_NAME, LAYERS, evaluate, rendered
from offline.environment import contract_plan, preview_environment
from offline.plandiff import diff_sides
from offline.review_report import Side, render
from scripts.review_side import preview_side
from tests.conftest import copy_project
from tests.support.onboarding import GROUP, MISTAKES, STEPS, TEAM, TOPIC, WORKLOAD, onboarded, write_prod
from validation.stackfile import read_stack_config


def preview(project, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "prod", "--no-tree", *args],
        cwd=project,
        capture_output=True,
        text=True,
    )
    return result, time.perf_counter() - started


def first_problem(output: str) -> str:
    """The first line that names a problem: a config problem's `- key: reason`, or a stack file's
    `error: <file>:<line>: ...`."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    if lines and re.match(r"error: \S+\.yaml:\d+", lines[0]):
        return lines[0].removeprefix("error: ")
    return next(line for line in lines if line.startswith("- "))


def onboarded_project(tmp_path) -> tuple[Path, str]:
    """A copy of this checkout with the team onboarded to prod, and that stack file's text."""
    project = copy_project(tmp_path / "project")
    good = onboarded((project / "stacks" / "Pulumi.prod.yaml").read_text())
    write_prod(project, good)
    return project, good


# Three tests of one pull request, so that the workers run them side by side.


def test_each_onboarding_mistake_stops_the_preview_with_a_first_line_naming_its_key_and_fix(tmp_path):
    project, good = onboarded_project(tmp_path)
    times: dict[str, float] = {}
    for what, change, key, fix in MISTAKES:
        write_prod(project, change(good))
        result, times[what] = preview(project)
        assert result.returncode == 1, what
        assert "Traceback" not in result.stdout + result.stderr, what
        line = first_problem(result.stdout)
        team_lines = [n for n, text in enumerate(change(good).splitlines(), 1) if text == f"    {TEAM}:"]
        key = key.format(first=team_lines[0], second=team_lines[-1])
        assert line.startswith(f"- {key}:") or line.startswith(f"{key};"), f"{what}: {line}"
        assert fix in line, f"{what}: {line}"
    print("\n".join(f"{what}: {seconds:.1f} s" for what, seconds in times.items()))
    assert len(STEPS) == 5


def test_the_onboarded_team_previews_with_its_share_of_the_pool(tmp_path):
    project, _ = onboarded_project(tmp_path)
    result, seconds = preview(project, "--capacity")
    print(f"the onboarded change, make capacity: {seconds:.1f} s")
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert re.search(rf"eus2\s+h100\s+{TEAM}\s+400 GPUs\s+20%", out), out
    assert re.search(r"eus2\s+h100\s+research\s+1,200 GPUs\s+60%", out), out
    assert "Policy review (prod enforcement): 0 mandatory" in out


def test_the_onboarding_is_reviewed_as_the_teams_alone_and_prod_admits_its_infiniband_gang(tmp_path, head_side):
    project, _ = onboarded_project(tmp_path)
    times: dict[str, float] = {}
    # The pull request's review of prod, against this checkout (make review's head and base).
    started = time.perf_counter()
    environment = preview_environment("prod", project)
    assert environment.ok, environment.error
    head = preview_side(project, ["prod"], previewed={"prod": environment})
    base_side = {"environments": {"prod": head_side["environments"]["prod"]}}
    report = render(Side("head", None, head), Side("base", None, base_side), diff_sides(base_side, head))
    times["the review"] = time.perf_counter() - started
    (headline,) = [line for line in report.comment.splitlines() if line.startswith("- ✅ prod:")]
    assert "2 team quota changes" in headline and "replaced" not in headline, headline
    assert "- `research` on eus2/h100: 1,600 → 1,200 GPUs (80% → 60% of the pool's 2,000)" in report.comment
    assert f"- `{TEAM}` on eus2/h100: new quota of 400 GPUs (20% of the pool's 2,000)" in report.comment
    assert "- eus2/h100 is now fully promised (2,000 of 2,000): more for a team takes" in report.comment
    (diff,) = diff_sides(base_side, head)
    assert {d.action for d in diff.resources} <= {"create", "update"}, "onboarding replaces or deletes nothing"
    created = {d.name for d in diff.resources if d.action == "create"}
    assert any(TOPIC in name for name in created) and any(WORKLOAD in name for name in created)
    # Exactly the team's: each new resource is named by the team (its namespace, workload, topic,
    # queue) or by its group (its AKS role on each cluster).
    assert all(TEAM in name or GROUP in name for name in created), sorted(created)

    # The team's job, filled by the CLI from the tenants stack's outputs (`pulumi stack output
    # --json -s prod.tenants`), is admitted in eus2 as the unit stacks deploy it.
    started = time.perf_counter()
    plan = contract_plan(environment)
    outputs = environment.plans["prod.tenants"].outputs
    (tmp_path / "outputs.json").write_text(json.dumps(outputs))
    filled = subprocess.run(
        [
            sys.executable,
            "scripts/workloads.py",
            "examples/training-infiniband.yaml",
            "--outputs",
            str(tmp_path / "outputs.json"),
            "--workload",
            WORKLOAD,
        ],
        cwd=project,
        capture_output=True,
        text=True,
    )
    assert filled.returncode == 0, filled.stderr
    job = next(d for d in yaml.safe_load_all(filled.stdout) if d["kind"] == "Job")
    assert job["metadata"]["namespace"] == TEAM
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == WORKLOAD
    config = {
        k: yaml.safe_load(v) if v[:1] in "[{" else v for k, v in read_stack_config(project, "prod").values.items()
    }
    view = ClusterView(plan, "eus2", config)
    # The golden gang, run as the new team's workload with its own topic and checkpoints.
    golden = dataclasses.replace(BY_NAME["training-infiniband"], workload=WORKLOAD, topic=(TOPIC, "write"))
    item = rendered(golden, outputs, "eus2")
    assert item is not None and item.namespace == TEAM
    assert item.workload["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] == "8"
    assert evaluate(view, item) == {layer: [] for layer in LAYERS}
    times["the team's job through the contracts"] = time.perf_counter() - started
    print("\n".join(f"{what}: {seconds:.1f} s" for what, seconds in times.items()))
