"""What the delivery needs of GitHub before an environment's first deploy: per layer a deploy
environment (only `main`, the configured approvers) and a `-preview` environment, the ruleset
that protects `main`, and the runner groups: what components/delivery/github.py makes from
`delivery:github`, or an administrator set by hand (docs/deploying.md, "GitHub's settings").

Every answer is `gh api --method GET <path>` (api.github.com, REST version 2022-11-28):
- `/repos/{owner}/{repo}/environments` (docs.github.com/rest/deployments/environments, "List
  environments": `protection_rules` with the `required_reviewers` and `prevent_self_review`,
  `deployment_branch_policy`, `can_admins_bypass`);
- `/repos/{owner}/{repo}/environments/{environment}/deployment-branch-policies`
  (docs.github.com/rest/deployments/branch-policies, "List deployment branch policies");
- `/repos/{owner}/{repo}/rulesets` and `/repos/{owner}/{repo}/rulesets/{id}`
  (docs.github.com/rest/repos/rules, "Get all repository rulesets", "Get a repository ruleset");
- `/orgs/{org}/actions/runner-groups`, also with `visible_to_repository`
  (docs.github.com/rest/actions/self-hosted-runner-groups, "List self-hosted runner groups for an
  organization"; a classic token needs `admin:org`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from planning.doctor import Answer, Finding, answer, items, unreadable
from planning.layers import LAYERS
from stackconfig.delivery import DeliveryConfig

CHECK = "github"
# The ruleset components/delivery/github.py makes on `main`.
RULESET = "main: reviewed and checked"
RUNNER_GROUPS = ("platform-preview", "platform-deploy")
HAND_DOC = 'docs/deploying.md, "GitHub\'s settings"'


@dataclass(frozen=True)
class EnvironmentRule:
    name: str
    teams: tuple[str, ...] = ()  # required reviewers (team slugs); none: no approval
    prevent_self_review: bool = False
    main_only: bool = False  # only `main` deploys (a custom deployment branch policy)


@dataclass(frozen=True)
class GitHubExpectations:
    owner: str
    repository: str
    delivery_stack: str
    environments: tuple[EnvironmentRule, ...]
    configured: bool  # delivery:github is set: reviewers, ruleset and runner groups are known
    required_checks: tuple[str, ...] = ()
    actions_app_id: int | None = None
    runner_groups: tuple[str, ...] = ()
    # runner group -> the one workflow it may run (Enterprise's "selected workflows")
    restricted: Mapping[str, str] = field(default_factory=dict)
    # The OIDC subject's repository part the identities trust (delivery:githubSubjectPrefix).
    subject_prefix: str = ""

    @property
    def repo(self) -> str:
        return f"/repos/{self.owner}/{self.repository}"

    @property
    def up(self) -> str:
        return (
            f"the delivery project sets it (`pulumi up -s {self.delivery_stack}` in delivery/ with an organization "
            f"owner's GITHUB_TOKEN; docs/deploying.md, \"The delivery project\"), or by hand ({HAND_DOC})"
        )


def github_expectations(
    config: DeliveryConfig,
    environment: str,
    delivery_stack: str,
    *,
    up_workflow: str,
    actions_app_id: int,
    layers: Sequence[str] = LAYERS,
) -> GitHubExpectations:
    """One environment's GitHub needs, as components/delivery/github.py decides them
    (`up_workflow`: its UP_WORKFLOW; `actions_app_id`: its GITHUB_ACTIONS_APP_ID)."""
    owner, repository = config.repository.split("/", 1)
    settings = config.github
    who = settings.reviewers.get(environment) if settings else None
    rules = []
    for layer in layers:
        teams = tuple((who.layers.get(layer, who.teams) if who else []) or [])
        rules.append(
            EnvironmentRule(
                f"{environment}-{layer}",
                teams,
                prevent_self_review=bool(teams) and (who.prevent_self_review if who else True),
                main_only=True,
            )
        )
        rules.append(EnvironmentRule(f"{environment}-{layer}-preview"))
    if settings is None:
        return GitHubExpectations(
            owner, repository, delivery_stack, tuple(rules), configured=False, subject_prefix=config.subject_prefix
        )
    groups = RUNNER_GROUPS if settings.plan in ("team", "enterprise") else ()
    restricted = (
        {"platform-deploy": f"{owner}/{repository}/{up_workflow}@refs/heads/main"}
        if settings.plan == "enterprise"
        else {}
    )
    return GitHubExpectations(
        owner,
        repository,
        delivery_stack,
        tuple(rules),
        configured=True,
        required_checks=tuple(settings.required_checks),
        actions_app_id=actions_app_id,
        runner_groups=groups,
        restricted=restricted,
        subject_prefix=config.subject_prefix,
    )


def _environments(expect: GitHubExpectations) -> str:
    return f"{expect.repo}/environments?per_page=100"


def _branch_policies(expect: GitHubExpectations, environment: str) -> str:
    return f"{expect.repo}/environments/{environment}/deployment-branch-policies?per_page=100"


def _rulesets(expect: GitHubExpectations) -> str:
    return f"{expect.repo}/rulesets?includes_parents=true&per_page=100"


def _groups(expect: GitHubExpectations, visible: bool = False) -> str:
    only = f"visible_to_repository={expect.repository}&" if visible else ""
    return f"/orgs/{expect.owner}/actions/runner-groups?{only}per_page=100"


def github_reads(expect: GitHubExpectations) -> list[str]:
    reads = [_environments(expect), expect.repo, f"{expect.repo}/actions/oidc/customization/sub"]
    reads += [_branch_policies(expect, rule.name) for rule in expect.environments if rule.main_only]
    if expect.configured:
        reads.append(_rulesets(expect))
    if expect.runner_groups:
        reads += [_groups(expect), _groups(expect, visible=True)]
    return reads


def github_followups(expect: GitHubExpectations, answers: Mapping[str, Answer]) -> list[str]:
    """Reads that need a first answer: the rules of the rulesets named like the delivery's."""
    if not expect.configured:
        return []
    listed = answer(answers, _rulesets(expect))
    return [f"{expect.repo}/rulesets/{r['id']}" for r in items(listed) if r.get("name") == RULESET and "id" in r]


def check_environments(expect: GitHubExpectations, answers: Mapping[str, Answer]) -> list[Finding]:
    listing = answer(answers, _environments(expect))
    problem = unreadable(CHECK, listing, f"the environments of {expect.owner}/{expect.repository}", expect.up)
    if problem:
        return [problem]
    found = {str(env.get("name")): env for env in items(listing, "environments")}
    findings = []
    for rule in expect.environments:
        env = found.get(rule.name)
        where = f"GitHub environment {rule.name}"
        if env is None:
            findings.append(Finding(CHECK, f"{where} does not exist", expect.up))
            continue
        reviewers = [r for r in env.get("protection_rules") or [] if r.get("type") == "required_reviewers"]
        teams = {
            str((r.get("reviewer") or {}).get("slug"))
            for rule_ in reviewers
            for r in rule_.get("reviewers") or []
            if r.get("type") == "Team"
        }
        if rule.teams and not reviewers:
            findings.append(
                Finding(CHECK, f"{where} has no required reviewers (wanted: {', '.join(rule.teams)})", expect.up)
            )
        elif rule.teams and set(rule.teams) - teams:
            missing = ", ".join(sorted(set(rule.teams) - teams))
            findings.append(Finding(CHECK, f"{where}: required reviewers lack team {missing}", expect.up))
        elif rule.prevent_self_review and not any(r.get("prevent_self_review") for r in reviewers):
            findings.append(
                Finding(CHECK, f"{where} lets whoever started a run approve it (prevent self-review is off)", expect.up)
            )
        if rule.main_only:
            findings += _branch_findings(expect, rule, env, answers)
    return findings


def _branch_findings(
    expect: GitHubExpectations, rule: EnvironmentRule, env: Mapping[str, object], answers: Mapping[str, Answer]
) -> list[Finding]:
    where = f"GitHub environment {rule.name}"
    findings = []
    if env.get("can_admins_bypass"):
        findings.append(Finding(CHECK, f"{where} lets administrators bypass its rules", expect.up))
    policy = env.get("deployment_branch_policy")
    if not isinstance(policy, dict) or not policy.get("custom_branch_policies") or policy.get("protected_branches"):
        branches = (
            "protected branches" if isinstance(policy, dict) and policy.get("protected_branches") else "any branch"
        )
        return [*findings, Finding(CHECK, f"{where} deploys from {branches}, not from main only", expect.up)]
    listed = answer(answers, _branch_policies(expect, rule.name))
    problem = unreadable(CHECK, listed, f"the deployment branch policies of {rule.name}", expect.up)
    names = {(str(p.get("name")), str(p.get("type") or "branch")) for p in items(listed, "branch_policies")}
    if problem or names != {("main", "branch")}:
        allowed = ", ".join(sorted(f"{kind} {name}" for name, kind in names)) or "nothing"
        findings.append(problem or Finding(CHECK, f"{where} deploys from {allowed}, not from main only", expect.up))
    return findings


def check_ruleset(expect: GitHubExpectations, answers: Mapping[str, Answer]) -> list[Finding]:
    if not expect.configured:
        return []
    listing = answer(answers, _rulesets(expect))
    what = f'the ruleset "{RULESET}" on main of {expect.owner}/{expect.repository}'
    problem = unreadable(CHECK, listing, f"the rulesets of {expect.owner}/{expect.repository}", expect.up)
    if problem:
        return [problem]
    followups = github_followups(expect, answers)
    if not followups:
        return [Finding(CHECK, f"{what} does not exist", expect.up)]
    detail = answer(answers, followups[0])
    problem = unreadable(CHECK, detail, what, expect.up)
    if problem:
        return [problem]
    ruleset = detail.body if isinstance(detail.body, dict) else {}
    wrong = []
    if ruleset.get("enforcement") != "active":
        wrong.append(f"its enforcement is {ruleset.get('enforcement')}, not active")
    includes = ((ruleset.get("conditions") or {}).get("ref_name") or {}).get("include") or []
    if ruleset.get("target") != "branch" or not {"~DEFAULT_BRANCH", "refs/heads/main", "~ALL"} & set(includes):
        wrong.append("it does not apply to main")
    if ruleset.get("bypass_actors"):
        wrong.append("someone may bypass it")
    rules = {str(r.get("type")): r.get("parameters") or {} for r in ruleset.get("rules") or []}
    if "pull_request" not in rules:
        wrong.append("it does not require a pull request")
    checks = {
        str(c.get("context")): c.get("integration_id")
        for c in rules.get("required_status_checks", {}).get("required_status_checks") or []
    }
    for check in expect.required_checks:
        if check not in checks:
            wrong.append(f"it does not require the check {check!r}")
        elif checks[check] != expect.actions_app_id:
            wrong.append(f"its check {check!r} is not bound to GitHub Actions (integration {expect.actions_app_id})")
    return [Finding(CHECK, f"{what}: {reason}", expect.up) for reason in wrong]


def check_runner_groups(expect: GitHubExpectations, answers: Mapping[str, Answer]) -> list[Finding]:
    if not expect.runner_groups:
        return []
    listing = answer(answers, _groups(expect))
    problem = unreadable(CHECK, listing, f"the runner groups of {expect.owner}", expect.up)
    if problem:
        return [problem]
    found = {str(g.get("name")): g for g in items(listing, "runner_groups")}
    visible = {str(g.get("name")) for g in items(answer(answers, _groups(expect, visible=True)), "runner_groups")}
    findings = []
    for name in expect.runner_groups:
        group = found.get(name)
        where = f"runner group {name} of {expect.owner}"
        if group is None:
            findings.append(Finding(CHECK, f"{where} does not exist", expect.up))
            continue
        if group.get("visibility") == "all" or group.get("allows_public_repositories"):
            findings.append(
                Finding(CHECK, f"{where} is open to other repositories than {expect.repository}", expect.up)
            )
        elif name not in visible:
            findings.append(Finding(CHECK, f"{where} is not open to {expect.repository}", expect.up))
        workflow = expect.restricted.get(name)
        if workflow and not (
            group.get("restricted_to_workflows") and workflow in (group.get("selected_workflows") or [])
        ):
            findings.append(Finding(CHECK, f"{where} runs other workflows than {workflow}", expect.up))
    return findings


# Repositories created from this day on get GitHub's immutable subject by default,
# `repo:<owner>@<id>/<repo>@<id>` (github/docs, OIDC reference; docs/deploying.md, step 2).
IMMUTABLE_SUBJECTS_SINCE = "2026-07-15"


def check_subject(expect: GitHubExpectations, answers: Mapping[str, Answer]) -> list[Finding]:
    """The identities trust `<subject_prefix>:environment:<env>`: the repository's tokens must say that."""
    findings = []
    repository = answer(answers, expect.repo)
    problem = unreadable("github", repository, f"repository {expect.owner}/{expect.repository}", expect.up)
    if problem:
        return [problem]
    body = repository.body if isinstance(repository.body, Mapping) else {}
    owner_id, repo_id = (body.get("owner") or {}).get("id"), body.get("id")
    immutable = f"repo:{expect.owner}@{owner_id}/{expect.repository}@{repo_id}"
    by_name = f"repo:{expect.owner}/{expect.repository}"
    created = str(body.get("created_at") or "")
    wanted = immutable if created[:10] >= IMMUTABLE_SUBJECTS_SINCE else by_name
    if expect.subject_prefix not in (wanted, immutable):
        findings.append(
            Finding(
                "github",
                f"the identities trust {expect.subject_prefix}:environment:<env>, but GitHub issues this repository's "
                f"tokens (created {created[:10] or 'unknown'}) as {wanted}:environment:<env>: no job would sign in",
                f"set delivery:githubSubjectPrefix: {immutable} in delivery/stacks/Pulumi.{expect.delivery_stack}.yaml "
                "and run the delivery again",
            )
        )
    template = answer(answers, f"{expect.repo}/actions/oidc/customization/sub")
    custom = isinstance(template.body, Mapping) and template.body.get("use_default") is False
    if template.status == "ok" and custom:
        findings.append(
            Finding(
                "github",
                "the repository customizes its OIDC subject "
                f"({', '.join(template.body.get('include_claim_keys') or [])}): the identities trust the default one",
                f"`gh api --method PUT {expect.repo}/actions/oidc/customization/sub -F use_default=true`",
            )
        )
    return findings
