"""GitHub's side of the delivery: the environments that bind each identity to an approval, the
runner groups, the ruleset that protects `main`, and the variables the workflows read.

What binds a deploy identity to a reviewed change is GitHub's, not Azure's: the identity trusts
the OIDC token of one GitHub environment (planning/delivery.py), and only the environment's
rules decide who gets that token. So they are code here, previewed and reviewed like the rest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
import pulumi_github as github

from planning.layers import LAYERS
from stackconfig.delivery import GitHubSettings

# GitHub Actions' app ID: a required check is satisfied only by a check run from Actions, not
# by a status any other app or token posts with the same name (github/docs, rulesets' required
# status checks, "integration_id").
GITHUB_ACTIONS_APP_ID = 15368
# The workflow whose jobs run `pulumi up`: deploy.yml calls environment.yml, which calls
# pulumi.yml, and a runner group restricted to workflows admits "only jobs directly defined
# within the selected workflows" (github/docs, "Changing which workflows can access a runner
# group"), so the group names the reusable workflow; the runners' job-started hook checks the
# caller (deploy.yml on main).
UP_WORKFLOW = ".github/workflows/pulumi.yml"


@dataclass(frozen=True)
class GitHubDeliveryArgs:
    owner: str
    repository: str  # the name, without the owner
    settings: GitHubSettings
    environments: Sequence[str]
    subscriptions: Mapping[str, str]  # environment -> subscription
    # identity name -> its client ID; names from planning/delivery.py
    client_ids: Mapping[str, pulumi.Input[str]]
    deployer: Mapping[tuple[str, str], str]  # (environment, layer) -> deploy identity name
    planner: Mapping[tuple[str, str], str]  # (environment, layer) -> plan identity name
    tenant_id: pulumi.Input[str]
    state_account: str


class GitHubDelivery(pulumi.ComponentResource):
    def __init__(self, name: str, args: GitHubDeliveryArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:delivery:GitHub", name, None, opts)
        settings, repo = args.settings, args.repository
        child = pulumi.ResourceOptions(parent=self)
        # Jobs get a read-only token by default and cannot approve pull requests.
        github.WorkflowRepositoryPermissions(
            f"{name}-workflow-permissions",
            repository=repo,
            default_workflow_permissions="read",
            can_approve_pull_request_reviews=False,
            opts=child,
        )
        self._ruleset(name, settings, repo)
        for variable, value in (
            ("AZURE_TENANT_ID", args.tenant_id),
            ("PULUMI_STATE_STORAGE_ACCOUNT", args.state_account),
        ):
            github.ActionsVariable(
                f"{name}-{variable}", repository=repo, variable_name=variable, value=value, opts=child
            )
        teams: dict[str, pulumi.Output[int]] = {}

        def team_id(slug: str) -> pulumi.Output[int]:
            if slug not in teams:
                found = github.get_team_output(
                    slug=slug, summary_only=True, opts=pulumi.InvokeOutputOptions(parent=self)
                )
                teams[slug] = found.id.apply(int)
            return teams[slug]

        for env in args.environments:
            reviewers = settings.reviewers.get(env)
            for layer in LAYERS:
                deploy = f"{env}-{layer}"
                slugs = (reviewers.layers.get(layer, reviewers.teams) if reviewers else []) or []
                environment = github.RepositoryEnvironment(
                    f"{name}-{deploy}",
                    repository=repo,
                    environment=deploy,
                    reviewers=[github.RepositoryEnvironmentReviewerArgs(teams=[team_id(s) for s in slugs])]
                    if slugs
                    else None,
                    prevent_self_review=bool(slugs) and (reviewers.prevent_self_review if reviewers else True),
                    # Admins too wait for the approval (the provider's default lets them bypass it).
                    can_admins_bypass=False,
                    deployment_branch_policy=github.RepositoryEnvironmentDeploymentBranchPolicyArgs(
                        protected_branches=False, custom_branch_policies=True
                    ),
                    opts=child,
                )
                # Only `main` deploys (deploy.yml runs on pushes to main).
                github.RepositoryEnvironmentDeploymentPolicy(
                    f"{name}-{deploy}-main",
                    repository=repo,
                    environment=environment.environment,
                    branch_pattern="main",
                    opts=child,
                )
                preview = github.RepositoryEnvironment(
                    f"{name}-{deploy}-preview",
                    repository=repo,
                    environment=f"{deploy}-preview",
                    # Read-only identities: any branch of this repository previews (never a fork's,
                    # which GitHub gives no OIDC token).
                    can_admins_bypass=False,
                    opts=child,
                )
                for target, identity in ((environment, args.deployer[env, layer]), (preview, args.planner[env, layer])):
                    for variable, value in (
                        ("AZURE_CLIENT_ID", args.client_ids[identity]),
                        ("AZURE_SUBSCRIPTION_ID", args.subscriptions[env]),
                    ):
                        github.ActionsEnvironmentVariable(
                            f"{name}-{identity}-{variable}",
                            repository=repo,
                            environment=target.environment,
                            variable_name=variable,
                            value=value,
                            opts=child,
                        )
        if settings.plan in ("team", "enterprise"):
            self._runner_groups(name, args)
        self.register_outputs({})

    def _ruleset(self, name: str, settings: GitHubSettings, repo: str) -> None:
        """`main` changes only through a reviewed pull request that passed the checks, for everyone."""
        github.RepositoryRuleset(
            f"{name}-main",
            name="main: reviewed and checked",
            repository=repo,
            target="branch",
            enforcement="active",
            conditions=github.RepositoryRulesetConditionsArgs(
                ref_name=github.RepositoryRulesetConditionsRefNameArgs(includes=["~DEFAULT_BRANCH"], excludes=[])
            ),
            bypass_actors=[],
            rules=github.RepositoryRulesetRulesArgs(
                deletion=True,
                non_fast_forward=True,
                pull_request=github.RepositoryRulesetRulesPullRequestArgs(
                    required_approving_review_count=1,
                    # .github/CODEOWNERS: what an administrator runs with owner rights, and the
                    # workflows that hold the deploy identities, need their owners' approval.
                    require_code_owner_review=settings.code_owner_review,
                    dismiss_stale_reviews_on_push=True,
                    require_last_push_approval=True,
                    required_review_thread_resolution=True,
                ),
                required_status_checks=github.RepositoryRulesetRulesRequiredStatusChecksArgs(
                    required_checks=[
                        github.RepositoryRulesetRulesRequiredStatusChecksRequiredCheckArgs(
                            context=check, integration_id=GITHUB_ACTIONS_APP_ID
                        )
                        for check in settings.required_checks
                    ],
                    strict_required_status_checks_policy=True,
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self),
        )

    def _runner_groups(self, name: str, args: GitHubDeliveryArgs) -> None:
        """The runner pools' groups, open to this repository only; on Enterprise the deploy pool's
        only to pulumi.yml on main, whose jobs deploy.yml calls (the runners' job-started hook
        admits only deploy.yml on main as the caller, on any plan)."""
        repo_id = github.get_repository_output(
            full_name=f"{args.owner}/{args.repository}", opts=pulumi.InvokeOutputOptions(parent=self)
        ).repo_id
        enterprise = args.settings.plan == "enterprise"
        for pool in ("preview", "deploy"):
            restricted = enterprise and pool == "deploy"
            github.ActionsRunnerGroup(
                f"{name}-runners-{pool}",
                name=f"platform-{pool}",
                visibility="selected",
                selected_repository_ids=[repo_id],
                allows_public_repositories=False,
                restricted_to_workflows=restricted,
                selected_workflows=[f"{args.owner}/{args.repository}/{UP_WORKFLOW}@refs/heads/main"]
                if restricted
                else None,
                opts=pulumi.ResourceOptions(parent=self),
            )
