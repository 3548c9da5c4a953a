"""GitHub's side of the delivery: what decides who gets a deploy identity's token.

A deploy identity trusts one GitHub environment's token (azure.py); whoever can run a job in that
environment deploys. So the environment's rules (reviewers, the branches that may deploy, no admin
bypass), the runner groups, the default branch's ruleset and the workflow token's default are
held here like the Azure grants (docs.github.com: "Managing environments for deployment",
"Managing access to self-hosted runners using groups", "About rulesets").
"""

from __future__ import annotations

import fnmatch
from typing import Any

from guardrail import lookup, resource_policy, stack_policy
from pulumi_policy import Severity

ENVIRONMENT = "github:index/repositoryEnvironment:RepositoryEnvironment"
DEPLOYMENT_POLICY = "github:index/repositoryEnvironmentDeploymentPolicy:RepositoryEnvironmentDeploymentPolicy"
RUNNER_GROUP = "github:index/actionsRunnerGroup:ActionsRunnerGroup"
RULESET = "github:index/repositoryRuleset:RepositoryRuleset"
WORKFLOW_PERMISSIONS = "github:index/workflowRepositoryPermissions:WorkflowRepositoryPermissions"

ENVIRONMENT_SCHEMA: dict[str, dict[str, Any]] = {
    # Environments whose identities only read (the pull requests' previews): any branch may use them.
    "readOnlySuffix": {"type": "string", "default": "-preview"},
    # Deploy environments that need a required reviewer (fnmatch patterns).
    "reviewedEnvironments": {"type": "array", "items": {"type": "string"}, "default": ["staging-*", "prod-*"]},
}


def environments_protected(args, report):
    if args.resource_type != ENVIRONMENT:
        return
    config = args.get_config()
    name = str(lookup(args.props, "environment") or "")
    # The provider's default lets repository admins bypass the protection rules.
    if lookup(args.props, "canAdminsBypass", True) is not False:
        report(f"environment {name}: repository admins can bypass its protection rules (set can_admins_bypass=False).")
    if name.endswith(config.get("readOnlySuffix", "-preview")):
        return
    policy = lookup(args.props, "deploymentBranchPolicy")
    # "Protected branches" means branch protection rules, which a repository guarded by rulesets
    # may have none of, and then every branch may deploy (github/docs, "Deployment branches
    # and tags"): name the branch instead.
    if not policy or not policy.get("customBranchPolicies") or policy.get("protectedBranches"):
        report(f"environment {name}: deploys must come from named branches (custom branch policies), not any branch.")
    reviewed = config.get("reviewedEnvironments", ["staging-*", "prod-*"])
    if any(fnmatch.fnmatch(name.lower(), pattern.lower()) for pattern in reviewed):
        reviewers = lookup(args.props, "reviewers") or []
        if not any((r.get("teams") or r.get("users")) for r in reviewers):
            report(f"environment {name}: a deploy here needs a required reviewer (a team or a user).")
        elif not lookup(args.props, "preventSelfReview"):
            report(f"environment {name}: whoever triggered a deploy can approve it (set prevent_self_review).")


RUNNER_SCHEMA: dict[str, dict[str, Any]] = {
    # Runner groups whose runners hold deploy identities: only named workflows may use them.
    "deployGroups": {"type": "array", "items": {"type": "string"}, "default": ["platform-deploy"]},
}


def deploys_from_main_only(args, report):
    """Each deploy environment's branch policy names `main` and nothing else."""
    config = args.get_config()
    suffix = config.get("readOnlySuffix", "-preview")
    patterns: dict[str, list[str]] = {}
    for r in args.resources:
        if r.resource_type == DEPLOYMENT_POLICY:
            patterns.setdefault(str(lookup(r.props, "environment")), []).append(str(lookup(r.props, "branchPattern")))
    for r in args.resources:
        if r.resource_type != ENVIRONMENT:
            continue
        name = str(lookup(r.props, "environment"))
        if name.endswith(suffix):
            continue
        if patterns.get(name) != ["main"]:
            report(f"environment {name} deploys from {patterns.get(name) or 'no named branch'}, not main alone.", r.urn)


def runner_groups_restricted(args, report):
    if args.resource_type != RUNNER_GROUP:
        return
    name = str(lookup(args.props, "name") or args.name)
    if lookup(args.props, "visibility") != "selected" or not lookup(args.props, "selectedRepositoryIds"):
        report(f"runner group {name} is open to every repository of the organization; select the platform's.")
    if lookup(args.props, "allowsPublicRepositories"):
        report(f"runner group {name} admits public repositories, whose pull requests run anyone's code.")
    if name in args.get_config().get("deployGroups", ["platform-deploy"]):
        workflows = list(lookup(args.props, "selectedWorkflows") or [])
        if not lookup(args.props, "restrictedToWorkflows") or not workflows:
            report(f"runner group {name} deploys, but any workflow of the repository may use it.")
        for workflow in workflows:
            if not str(workflow).endswith("@refs/heads/main"):
                report(f"runner group {name} admits {workflow}, which is not pinned to refs/heads/main.")


RULESET_SCHEMA: dict[str, dict[str, Any]] = {
    # Changes to what runs with owner rights need their owners' approval (a team using no
    # CODEOWNERS turns this off with a waiver).
    "codeOwnerReview": {"type": "boolean", "default": True},
}


def default_branch_reviewed(args, report):
    """`main` changes only through a reviewed, checked pull request, and nobody bypasses it."""
    rulesets = [r for r in args.resources if r.resource_type == RULESET]
    if not any(r.resource_type.startswith("github:") for r in args.resources):
        return  # a delivery stack without GitHub's settings (another stack holds them)
    good = []
    for ruleset in rulesets:
        includes = lookup(ruleset.props, "conditions.refName.includes") or []
        if lookup(ruleset.props, "target") != "branch" or "~DEFAULT_BRANCH" not in includes:
            continue
        problems = []
        if lookup(ruleset.props, "enforcement") != "active":
            problems.append("it is not active")
        if lookup(ruleset.props, "bypassActors"):
            problems.append("it has bypass actors")
        if (lookup(ruleset.props, "rules.pullRequest.requiredApprovingReviewCount") or 0) < 1:
            problems.append("it requires no approving review")
        if args.get_config().get("codeOwnerReview", True) and not lookup(
            ruleset.props, "rules.pullRequest.requireCodeOwnerReview"
        ):
            problems.append("it does not require the code owners' review (.github/CODEOWNERS)")
        checks = lookup(ruleset.props, "rules.requiredStatusChecks.requiredChecks") or []
        if not checks:
            problems.append("it requires no status check")
        for check in checks:
            if not check.get("integrationId"):
                problems.append(f"the check {check.get('context')!r} may be posted by any app or token")
        for problem in problems:
            report(f"ruleset {lookup(ruleset.props, 'name')}: {problem}.", ruleset.urn)
        if not problems:
            good.append(ruleset)
    if not good:
        report("no active ruleset makes the default branch change only through a reviewed, checked pull request.")


def workflow_token_read_only(args, report):
    if args.resource_type != WORKFLOW_PERMISSIONS:
        return
    if lookup(args.props, "defaultWorkflowPermissions") != "read":
        report("workflows get a write token by default; set default_workflow_permissions='read'.")
    if lookup(args.props, "canApprovePullRequestReviews"):
        report("workflows may approve pull requests, which satisfies the review a ruleset requires.")


POLICIES = [
    resource_policy(
        "github-environments-protected",
        "Deploy environments admit only their branches, need a reviewer where configured, and admins cannot "
        "bypass them.",
        environments_protected,
        severity=Severity.CRITICAL,
        remediation="components/delivery/github.py: a main-only branch policy, reviewers from delivery:github.reviewers.",
        config=ENVIRONMENT_SCHEMA,
    ),
    stack_policy(
        "github-deploys-from-main",
        "Every deploy environment's deployment branch policy names main and no other branch.",
        deploys_from_main_only,
        severity=Severity.CRITICAL,
        remediation="components/delivery/github.py: one RepositoryEnvironmentDeploymentPolicy, branch_pattern main.",
        config={"readOnlySuffix": ENVIRONMENT_SCHEMA["readOnlySuffix"]},
    ),
    resource_policy(
        "github-runner-groups-restricted",
        "Runner groups are open to the platform's repository only, and deploy runners to named workflows on main.",
        runner_groups_restricted,
        severity=Severity.HIGH,
        remediation="visibility 'selected' with the repository's ID; on Enterprise, restricted_to_workflows with "
        "pulumi.yml@refs/heads/main (on Team, waive it: the runners' job-started hook checks the caller).",
        config=RUNNER_SCHEMA,
    ),
    stack_policy(
        "github-default-branch-reviewed",
        "An active ruleset without bypass makes the default branch change only through a pull request reviewed "
        "by its code owners whose required checks come from GitHub Actions.",
        default_branch_reviewed,
        severity=Severity.HIGH,
        remediation="components/delivery/github.py, _ruleset: required checks from delivery:github.requiredChecks, "
        "code owners' review from delivery:github.codeOwnerReview.",
        config=RULESET_SCHEMA,
    ),
    resource_policy(
        "github-workflow-token-read-only",
        "Workflow tokens are read-only by default and cannot approve pull requests.",
        workflow_token_read_only,
        severity=Severity.HIGH,
        remediation="default_workflow_permissions='read', can_approve_pull_request_reviews=False.",
    ),
]
