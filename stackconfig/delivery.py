"""The delivery project's config (`delivery:` keys in delivery/stacks/Pulumi.<stack>.yaml).

One stack makes the delivery system of one repository: the state backend every environment's
units use, and per environment its deploy and plan identities, custom roles and grants
(planning/delivery.py). An administrator runs it (docs/deploying.md, "The delivery project").
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from stackconfig.model.base import Model, RegionName, Uuid
from stackconfig.stacks import ENVIRONMENTS

DELIVERY_NAMESPACE = "delivery"


def _environment(name: str) -> str:
    if name not in ENVIRONMENTS:
        raise ValueError(
            f"is not an environment ({', '.join(ENVIRONMENTS)}); a variant such as {name!r} is a stack listed in an "
            "environment's platformStacks (docs/environments.md)"
        )
    return name


# The environments' names key the identities, state containers and GitHub environments.
DeliveryEnvironmentName = Annotated[str, AfterValidator(_environment)]
_RESOURCE_ID = r"^/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[^/]+"
ResourceGroupId = Annotated[str, StringConstraints(pattern=_RESOURCE_ID + r"$")]
SubnetId = Annotated[
    str, StringConstraints(pattern=_RESOURCE_ID + r"/providers/Microsoft\.Network/virtualNetworks/[^/]+/subnets/[^/]+$")
]
VnetId = Annotated[
    str, StringConstraints(pattern=_RESOURCE_ID + r"/providers/Microsoft\.Network/virtualNetworks/[^/]+$")
]


class StateSettings(Model):
    subscription_id: Uuid = Field(
        description="The subscription that holds the state account, its vault and the identities."
    )
    location: RegionName = Field("eastus2", description="Region of the delivery resource group and its resources.")
    resource_group: str | None = Field(None, description="Default `rg-<prefix>-delivery`.")
    storage_account: str | None = Field(
        None, pattern=r"^[a-z0-9]{3,24}$", description="The state account; default `st<prefix>pulumistate`."
    )
    storage_sku: str = Field(
        "Standard_GZRS",
        pattern=r"^(Standard|Premium)_(LRS|ZRS|GRS|GZRS|RAGRS|RAGZRS)$",
        description="The state account's redundancy: zone- and geo-redundant by default.",
    )
    key_vault: str | None = Field(
        None,
        pattern=r"^[a-zA-Z][a-zA-Z0-9-]{1,22}[a-zA-Z0-9]$",
        description="The secrets vault; default `kv-<prefix>-state`.",
    )
    retention_days: int = Field(30, ge=1, le=365, description="Soft delete of state blobs and containers, in days.")
    lock: bool = Field(
        True,
        description="`CanNotDelete` locks on the state account and the vault. They also refuse removing a grant on "
        "a state container or key (ScopeLocked), which removing an environment or replacing an identity does: "
        "lift them (`false`) in a change of its own first, `make review` says when (docs/operations.md, "
        '"Removing access under a delete lock").',
    )


class MinimalHub(Model):
    """A hub the delivery creates, for a team without one (dev from an empty subscription): a VNet
    with a private-endpoint subnet and a runner subnet (egress through a NAT gateway: open, unlike
    a hub firewall's allow-list), the privatelink zones the state and the platform register in,
    each linked to it, and an Azure Monitor private link scope with its endpoint. Its IDs follow
    from `prefix` (planning/hub.py); platform stack files name them (output `hub`)."""

    subscription_id: Uuid = Field(description="The hub's subscription (its own, or the state's).")
    location: RegionName = Field(description="The hub's region: where the runners and the endpoints live.")
    address_space: str = Field(
        pattern=r"^(10|172|192)\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}/(1[6-9]|2[0-3])$",
        description="The VNet's private range, /16 to /23, outside every environment's (the first /24 holds the "
        "endpoints, the second the runners).",
    )


class HubAccess(Model):
    """Where the delivery's private endpoints live and the hub's shared objects it grants on:
    an existing hub's IDs, or `create` for a minimal hub of the delivery's own."""

    endpoint_subnet_id: SubnetId | None = Field(
        None,
        description="The hub subnet of the state account's and vault's private endpoints. The endpoints are "
        "created in this subnet's subscription: a private endpoint must be in its VNet's subscription "
        "(learn.microsoft.com/azure/private-link/private-endpoint-overview).",
    )
    private_dns_zones_resource_group_id: ResourceGroupId | None = Field(
        None, description="The resource group of the hub's privatelink zones."
    )
    virtual_network_id: VnetId | None = Field(None, description="The hub VNet environments peer with.")
    endpoint_resource_group: str | None = Field(
        None,
        pattern=r"^[-\w._()]{1,90}$",
        description="An existing resource group in the endpoint subnet's subscription (the hub owner's) that "
        "holds the state's private endpoints. Default: the delivery creates `<resourceGroup>-endpoints` there, "
        "which needs resourceGroups/write on that subscription.",
    )
    create: MinimalHub | None = Field(
        None, description="A minimal hub of the delivery's own, instead of an existing hub's IDs."
    )

    @model_validator(mode="after")
    def _one_hub(self) -> HubAccess:
        given = [
            k
            for k in ("endpoint_subnet_id", "private_dns_zones_resource_group_id", "virtual_network_id")
            if getattr(self, k)
        ]
        if self.create is not None and (given or self.endpoint_resource_group):
            raise ValueError("create: a hub the delivery creates has its own IDs; leave out the existing hub's")
        if self.create is None and len(given) != 3:
            raise ValueError(
                "name an existing hub (endpointSubnetId, privateDnsZonesResourceGroupId, virtualNetworkId) or "
                "`create` a minimal one"
            )
        return self


TeamSlug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{0,99}$")]


class EnvironmentReviewers(Model):
    teams: list[TeamSlug] = Field(
        default_factory=list,
        description="Teams (slugs) whose members approve a deploy of this environment; one approval is enough "
        "(GitHub allows six reviewers).",
        max_length=6,
    )
    layers: dict[str, list[TeamSlug]] = Field(
        default_factory=dict,
        description="Other teams for one layer's environment, e.g. `data: [platform-leads, data-leads]` "
        "(replaces `teams` there).",
    )
    prevent_self_review: bool = Field(
        True, description="Whoever started the run (who merged) may not approve it (\"Prevent self-review\")."
    )


class GitHubSettings(Model):
    """GitHub's side of the delivery: environments, runner groups, the ruleset on `main`, variables.

    Applied with an organization owner's token (`GITHUB_TOKEN` in the administrator's shell, never
    in CI or in config): environments, rulesets and variables need the repository's
    Administration permission, runner groups the organization's (docs/deploying.md)."""

    plan: Literal["free", "pro", "team", "enterprise"] = Field(
        description="The organization's GitHub plan: it decides which rules GitHub enforces on a private "
        "repository (github/docs, \"Deployments and environments\")."
    )
    visibility: Literal["public", "private", "internal"] = Field(description="The repository's visibility.")
    reviewers: dict[str, EnvironmentReviewers] = Field(
        default_factory=dict, description="Who approves the deploys of each environment (by environment name)."
    )
    required_checks: list[str] = Field(
        default_factory=lambda: ["make test", "make review"],
        description="Checks a pull request into `main` must pass (the pull-request workflow's job names).",
    )
    code_owner_review: bool = Field(
        True,
        description="A change to a path `.github/CODEOWNERS` names needs its owners' approval: the delivery "
        "project, the scripts an administrator runs with owner rights, the workflows and the policy packs.",
    )

    @model_validator(mode="after")
    def _enforceable(self) -> GitHubSettings:
        gated = [name for name, who in self.reviewers.items() if who.teams or who.layers]
        if gated and self.visibility != "public" and self.plan != "enterprise":
            raise ValueError(
                f"reviewers: GitHub enforces required reviewers on a {self.visibility} repository only on "
                f"GitHub Enterprise (plan: {self.plan}; github/docs, \"Deployments and environments\"), so "
                f"{', '.join(gated)} would deploy without an approval; use Enterprise or a public repository, or "
                "remove the reviewers and accept that whoever merges to main deploys"
            )
        if self.visibility != "public" and self.plan == "free":
            raise ValueError(
                "plan: on GitHub Free a private repository has neither deployment branch policies nor "
                "rulesets, so nothing would bind a deploy to main; use Pro, Team or Enterprise"
            )
        return self


class DeliveryEnvironment(Model):
    subscription_id: Uuid = Field(description="The subscription the environment's units deploy into.")
    platform_stacks: list[str] | None = Field(
        None,
        description="The platform stack files (stacks/Pulumi.<name>.yaml) of this environment, named as every "
        "stack is (`prod`, `prod-<variant>`: stackconfig/stacks.py): the grants cover the hub use and API server "
        "subzones of each. Default: the environment's name.",
    )
    own_hub: bool = Field(
        False,
        description="The environment has the hub to itself: its foundation writes the hub's side of its peerings "
        "(Network Contributor on the hub VNet). At most one environment.",
    )
    capacity_reservation_scopes: list[str] = Field(
        default_factory=list,
        description="Capacity reservation groups (or their resource groups) in this subscription the clusters place "
        "nodes on: the cluster layer may make its clusters Contributor there, nothing else.",
    )
    serving_callers: bool = Field(
        False,
        description="Assign the environment's served APIs' app roles to their callers' managed identities "
        "(`platform:serving.apis.<api>.callers`). The identities are the foundation's, found by name: set it once "
        "the environment's foundation is deployed. Until then the applications exist, no caller holds a role, and "
        "the gateway refuses every call (docs/serving.md, \"Who may call\").",
    )


class DeliveryConfig(Model):
    repository: str = Field(
        pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$", description="The GitHub repository, `OWNER/REPO`."
    )
    github_subject_prefix: str | None = Field(
        None,
        pattern=r"^repo:[^:]+$",
        description="The OIDC subject's repository part: default `repo:OWNER/REPO`; GitHub's immutable form "
        "`repo:OWNER@ID/REPO@ID` survives a rename.",
    )
    prefix: str = Field(pattern=r"^[a-z][a-z0-9]{1,9}$", description="Short name in every delivery resource's name.")
    project: str = Field("platform", description="The platform's Pulumi project, as its state paths name it.")
    state: StateSettings = Field(
        description="The state backend every environment's units use: one account (a container per environment) "
        "and one vault (a key per environment and layer), reached only through private endpoints."
    )
    hub: HubAccess = Field(description="The hub the delivery's endpoints live in and the environments peer with.")
    environments: dict[DeliveryEnvironmentName, DeliveryEnvironment] = Field(
        min_length=1,
        description="Every environment the repository deploys: `dev`, `staging` or `prod` (the policy packs' "
        "configs, the GitHub environments and the identities are per environment; a variant is a stack in "
        "`platformStacks`).",
    )
    admin_group_object_id: Uuid | None = Field(
        None,
        description="The platform admins' group: reads and writes every state blob and uses every key (break-glass).",
    )
    tags: dict[str, str] = Field(default_factory=dict, description="Tags on every delivery resource.")
    github: GitHubSettings | None = Field(
        None, description="GitHub's settings as code; without it they are set by hand (docs/deploying.md)."
    )

    @property
    def subject_prefix(self) -> str:
        return self.github_subject_prefix or f"repo:{self.repository}"

    @property
    def resource_group(self) -> str:
        return self.state.resource_group or f"rg-{self.prefix}-delivery"

    @property
    def storage_account(self) -> str:
        return self.state.storage_account or f"st{self.prefix}pulumistate"

    @property
    def key_vault(self) -> str:
        return self.state.key_vault or f"kv-{self.prefix}-state"
