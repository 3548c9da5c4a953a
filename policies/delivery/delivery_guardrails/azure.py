"""The delivery's Azure side: who gets which role, under which condition, and whose tokens sign in.

The delivery project is the one program that hands out role administration (the deploy
identities assign their layer's roles), so its grants are held to what makes that safe: nobody
gets Owner or User Access Administrator, every grant that can write role assignments carries an
ABAC condition naming the roles it may hand out (and none of those administers roles itself),
custom roles stay inside one subscription, and the identities trust GitHub's tokens of one
environment only (learn.microsoft.com/azure/role-based-access-control/delegate-role-assignments-overview,
docs.github.com/actions/security-for-github-actions/security-hardening-your-deployments/configuring-openid-connect-in-azure).
"""

from __future__ import annotations

import re
from typing import Any

from guardrail import lookup, resource_policy, stack_policy
from pulumi_policy import Severity

ROLE_ASSIGNMENT = "azure-native:authorization:RoleAssignment"
ROLE_DEFINITION = "azure-native:authorization:RoleDefinition"
FEDERATED_CREDENTIAL = "azure-native:managedidentity:FederatedIdentityCredential"

OWNER = "8e3af657-a8ff-443c-a75c-2fe8c4bcb635"
USER_ACCESS_ADMINISTRATOR = "18d7d88d-d35e-4fb5-a5c3-7773c20a72d9"
RBAC_ADMINISTRATOR = "f58310d9-a9f6-439a-9e8d-f62e7b41a168"
CONTRIBUTOR = "b24988ac-6180-42a0-ab88-20f7382dd24c"
# Built-in roles that can write role assignments (same GUIDs in every tenant).
ROLE_ADMINISTRATORS = {
    OWNER: "Owner",
    USER_ACCESS_ADMINISTRATOR: "User Access Administrator",
    RBAC_ADMINISTRATOR: "Role Based Access Control Administrator",
}
# Never granted by the delivery: the roles that administer access without any condition.
FORBIDDEN = {OWNER: "Owner", USER_ACCESS_ADMINISTRATOR: "User Access Administrator"}

WRITE_ASSIGNMENTS = "Microsoft.Authorization/roleAssignments/write"
DELETE_ASSIGNMENTS = "Microsoft.Authorization/roleAssignments/delete"
_GUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_DELEGATED = re.compile(
    r"@(Request|Resource)\[Microsoft\.Authorization/roleAssignments:RoleDefinitionId\]\s+"
    r"ForAnyOfAnyValues:GuidEquals\s*\{([^}]*)\}",
    re.IGNORECASE,
)


def role_guid(role_definition_id: str) -> str:
    return role_definition_id.rstrip("/").rsplit("/", 1)[-1].lower()


def _action_matches(pattern: str, action: str) -> bool:
    """Whether a role's action (wildcards `*` allowed) covers `action` (case-insensitive)."""
    regex = "^" + ".*".join(re.escape(part) for part in pattern.lower().split("*")) + "$"
    return re.match(regex, action.lower()) is not None


def administers_roles(actions: list[str], not_actions: list[str]) -> bool:
    """Whether a role with these actions can write role assignments."""
    return any(_action_matches(a, WRITE_ASSIGNMENTS) for a in actions) and not any(
        _action_matches(n, WRITE_ASSIGNMENTS) for n in not_actions
    )


def _scope_breadth(scope: str) -> str | None:
    parts = [p.lower() for p in scope.strip("/").split("/") if p]
    if not parts:
        return "the tenant root"
    if parts[:2] == ["providers", "microsoft.management"] or "managementgroups" in parts[:4]:
        return "a management group"
    if parts[0] != "subscriptions":
        return "a scope outside any subscription"
    return None


def no_owner_grants(args, report):
    if args.resource_type != ROLE_ASSIGNMENT:
        return
    guid = role_guid(str(lookup(args.props, "roleDefinitionId") or ""))
    scope = str(lookup(args.props, "scope") or "")
    if guid in FORBIDDEN:
        report(f"{args.name} grants {FORBIDDEN[guid]} on {scope}: delegate the roles the layer assigns instead.")
    breadth = _scope_breadth(scope)
    if breadth:
        report(f"{args.name} grants a role at {breadth} ({scope}); the delivery grants inside subscriptions only.")


def _custom_roles(resources) -> dict[str, dict]:
    """Custom roles of the stack by GUID: their permissions."""
    roles = {}
    for resource in resources:
        if resource.resource_type == ROLE_DEFINITION:
            guid = str(lookup(resource.props, "roleDefinitionId") or "").lower()
            roles[guid] = resource
    return roles


def _role_administering(guid: str, custom: dict) -> bool:
    if guid in ROLE_ADMINISTRATORS:
        return True
    role = custom.get(guid)
    if role is None:
        return False
    for permission in lookup(role.props, "permissions") or []:
        if administers_roles(list(permission.get("actions") or []), list(permission.get("notActions") or [])):
            return True
    return False


def delegation_problems(condition: str | None, custom: dict) -> list[str]:
    """What is wrong with the condition of a grant that can write role assignments (empty: none)."""
    if not condition:
        return ["it has no condition, so it may assign any role, Owner included"]
    problems = []
    for action, side in ((WRITE_ASSIGNMENTS, "Request"), (DELETE_ASSIGNMENTS, "Resource")):
        if f"ActionMatches{{'{action}'}}".lower() not in condition.lower():
            problems.append(f"its condition does not constrain {action}")
        elif not any(m.group(1).lower() == side.lower() for m in _DELEGATED.finditer(condition)):
            problems.append(f"its condition does not name the roles {action} may touch (@{side}[...RoleDefinitionId])")
    delegated = {g.lower() for m in _DELEGATED.finditer(condition) for g in _GUID.findall(m.group(2).lower())}
    for guid in sorted(delegated):
        if _role_administering(guid, custom):
            name = ROLE_ADMINISTRATORS.get(guid) or lookup(custom[guid].props, "roleName") or guid
            problems.append(f"it delegates {name}, which administers roles itself")
    return problems


def role_administration_conditioned(args, report):
    custom = _custom_roles(args.resources)
    for resource in args.resources:
        if resource.resource_type != ROLE_ASSIGNMENT:
            continue
        guid = role_guid(str(lookup(resource.props, "roleDefinitionId") or ""))
        if not _role_administering(guid, custom):
            continue
        condition = lookup(resource.props, "condition")
        if condition and lookup(resource.props, "conditionVersion") != "2.0":
            report(f"{resource.name}: a role administration condition must be conditionVersion 2.0.", resource.urn)
        for problem in delegation_problems(condition, custom):
            report(f"{resource.name} can write role assignments, but {problem}.", resource.urn)


def custom_roles_narrow(args, report):
    if args.resource_type != ROLE_DEFINITION:
        return
    scopes = list(lookup(args.props, "assignableScopes") or [])
    if not scopes:
        report(f"{args.name} has no assignable scope.")
    for scope in scopes:
        breadth = _scope_breadth(str(scope))
        if breadth:
            report(f"{args.name} is assignable at {breadth} ({scope}); keep a custom role inside one subscription.")
    for permission in lookup(args.props, "permissions") or []:
        for action in list(permission.get("actions") or []) + list(permission.get("dataActions") or []):
            if (
                action.strip() == "*"
                or action.lower().startswith("*/")
                or action.lower() == "microsoft.authorization/*"
            ):
                report(f"{args.name} grants `{action}`: name the actions the layer needs.")


GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"
FEDERATION_SCHEMA: dict[str, dict[str, Any]] = {
    "issuer": {"type": "string", "default": GITHUB_ISSUER},
}


def federation_pinned(args, report):
    """A delivery identity trusts GitHub's token of one named environment: a branch, tag or pull
    request subject lets any workflow on it sign in, past the environment's reviewers."""
    if args.resource_type != FEDERATED_CREDENTIAL:
        return
    issuer = args.get_config().get("issuer", GITHUB_ISSUER)
    if lookup(args.props, "issuer") != issuer:
        report(f"{args.name} trusts {lookup(args.props, 'issuer')}, not {issuer}.")
    if list(lookup(args.props, "audiences") or []) != [EXCHANGE_AUDIENCE]:
        report(f"{args.name} must accept the audience {EXCHANGE_AUDIENCE} only.")
    if lookup(args.props, "claimsMatchingExpression") is not None:
        report(f"{args.name} matches claims by expression: pin one subject.")
    subject = str(lookup(args.props, "subject") or "")
    segments = subject.split(":")
    if "*" in subject or "?" in subject:
        report(f"{args.name}'s subject {subject!r} has a wildcard.")
    if len(segments) < 2 or segments[-2] != "environment" or not segments[-1]:
        report(
            f"{args.name}'s subject {subject!r} is not one GitHub environment's (…:environment:<name>): "
            "only an environment's protection rules stand between a workflow and this identity."
        )


POLICIES = [
    resource_policy(
        "delivery-no-owner-grants",
        "The delivery grants no Owner or User Access Administrator, and nothing outside a subscription.",
        no_owner_grants,
        severity=Severity.CRITICAL,
        remediation="Grant the narrow role the layer needs; to let a layer assign roles, grant Role Based Access "
        "Control Administrator with a condition naming those roles (planning/delivery.py, delegation()).",
    ),
    stack_policy(
        "delivery-role-administration-conditioned",
        "Every grant that can write role assignments has a condition naming the roles it may assign and "
        "remove, none of which administers roles itself.",
        role_administration_conditioned,
        severity=Severity.CRITICAL,
        remediation="Pass delegation([...]) as the grant's condition, listing the roles and principal types "
        "the layer assigns.",
    ),
    resource_policy(
        "delivery-custom-roles-narrow",
        "Custom roles are assignable inside a subscription only and name their actions (no `*`).",
        custom_roles_narrow,
        severity=Severity.HIGH,
        remediation="List the actions the layer's resources need and one subscription (or narrower) scope.",
    ),
    resource_policy(
        "delivery-federation-pinned",
        "Delivery identities trust GitHub's OIDC tokens for one environment each, with the exchange audience.",
        federation_pinned,
        severity=Severity.CRITICAL,
        remediation="Use the subject repo:<owner>/<repo>:environment:<name> (planning/delivery.py, IdentitySpec).",
        config=FEDERATION_SCHEMA,
    ),
]
