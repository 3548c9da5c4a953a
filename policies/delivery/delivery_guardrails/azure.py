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


# The one shape of condition a grant that writes role assignments may carry (planning/delivery.py,
# delegation()): writes allowed only for listed roles to listed principal types, deletes the same.
# Read as a grammar, not searched for: an extra OR, a negation or another attribute makes a
# condition that names the right roles and still admits others.
_GUIDS = r"[0-9a-f-]{36}(?:, [0-9a-f-]{36})*"
_TYPES = r"'(?:User|Group|ServicePrincipal)'(?:, '(?:User|Group|ServicePrincipal)')*"


def _clause(side: str) -> str:
    attribute = r"@" + side + r"\[Microsoft\.Authorization/roleAssignments:"
    return (
        r"\("
        + attribute
        + r"RoleDefinitionId\] ForAnyOfAnyValues:GuidEquals \{"
        + _GUIDS
        + r"\} AND "
        + attribute
        + r"PrincipalType\] ForAnyOfAnyValues:StringEqualsIgnoreCase \{"
        + _TYPES
        + r"\}\)"
    )


def _side(action: str, side: str) -> str:
    clause = _clause(side)
    return r"\(\(!\(ActionMatches\{'" + re.escape(action) + r"'\}\)\) OR \(" + clause + r"(?: OR " + clause + r")*\)\)"


_DELEGATION = re.compile(
    "^" + _side(WRITE_ASSIGNMENTS, "Request") + " AND " + _side(DELETE_ASSIGNMENTS, "Resource") + "$", re.IGNORECASE
)


def delegation_problems(condition: str | None, custom: dict) -> list[str]:
    """What is wrong with the condition of a grant that can write role assignments (empty: none)."""
    if not condition:
        return ["it has no condition, so it may assign any role, Owner included"]
    if not _DELEGATION.match(condition.strip()):
        return [
            "its condition is not the delegation shape (writes and deletes each limited to listed roles and "
            "principal types, and nothing else: planning/delivery.py, delegation())"
        ]
    problems = []
    delegated = {g.lower() for m in _DELEGATED.finditer(condition) for g in _GUID.findall(m.group(2).lower())}
    for guid in sorted(delegated):
        if _role_administering(guid, custom):
            name = ROLE_ADMINISTRATORS.get(guid) or lookup(custom[guid].props, "roleName") or guid
            problems.append(f"it delegates {name}, which administers roles itself")
    if re.search(r"'User'", condition):
        problems.append("it lets roles be assigned to users, whom no layer's program assigns anything")
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


# The built-in roles the delivery grants (planning/delivery.py; tests/test_delivery_policies.py
# keeps the list equal to what it grants): a grant of any other built-in role is a new power to
# review here first, not a line in a plan (Key Vault Data Access Administrator, say, also writes
# role assignments).
ALLOWED_BUILT_IN_ROLES = {
    "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b": "Azure Kubernetes Service RBAC Cluster Admin",
    "b24988ac-6180-42a0-ab88-20f7382dd24c": "Contributor",
    "22926164-76b3-42b3-bc55-97df8dab3e41": "Grafana Admin",
    "12338af0-0e69-4776-bea7-57ae8d297424": "Key Vault Crypto User",
    "28bf596f-4eb7-45ce-b5bc-6cf482fec137": "Locks Contributor",
    "4d97b98b-1d4f-4787-a291-c67834d212e7": "Network Contributor",
    "b12aa53e-6015-4669-85d0-8515ebb3ae7f": "Private DNS Zone Contributor",
    "acdd72a7-3385-48ef-bd42-f606fba81ae7": "Reader",
    "f58310d9-a9f6-439a-9e8d-f62e7b41a168": "Role Based Access Control Administrator",
    "ba92f5b4-2d11-453d-a403-e96b0029c9fe": "Storage Blob Data Contributor",
    "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1": "Storage Blob Data Reader",
}
ROLES_SCHEMA: dict[str, dict[str, Any]] = {
    "allowedBuiltInRoles": {"type": "array", "items": {"type": "string"}, "default": sorted(ALLOWED_BUILT_IN_ROLES)},
}


def roles_allowed(args, report):
    custom = _custom_roles(args.resources)
    allowed = {g.lower() for g in args.get_config().get("allowedBuiltInRoles", ALLOWED_BUILT_IN_ROLES)}
    for resource in args.resources:
        if resource.resource_type != ROLE_ASSIGNMENT:
            continue
        guid = role_guid(str(lookup(resource.props, "roleDefinitionId") or ""))
        if guid not in custom and guid not in allowed:
            report(
                f"{resource.name} grants role {guid}, neither a custom role of this stack nor a built-in role the "
                "delivery grants (allowedBuiltInRoles).",
                resource.urn,
            )


# Actions that let a holder grow its own power: rewrite a role it holds, or elevate to the root.
_SELF_ESCALATING = ("Microsoft.Authorization/roleDefinitions/write", "Microsoft.Authorization/elevateAccess/action")


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
            elif any(_action_matches(action, escalating) for escalating in _SELF_ESCALATING):
                report(f"{args.name} grants `{action}`, with which its holder rewrites its own roles.")


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
    if "*" in subject or "?" in subject:
        report(f"{args.name}'s subject {subject!r} has a wildcard.")
    if not SUBJECT.match(subject):
        report(
            f"{args.name}'s subject {subject!r} is not one repository's GitHub environment "
            "(repo:<owner>/<repo>:environment:<name>, or GitHub's immutable repo:<owner>@<id>/<repo>@<id>): only an "
            "environment's protection rules stand between a workflow and this identity, and a subject without its "
            "repository (a customized template) is one any repository can present."
        )


# The default subject of a job in an environment, by repository name or immutable IDs (GitHub's
# OIDC reference, "Filtering for a specific environment").
SUBJECT = re.compile(r"^repo:[^:/@]+(?:@[0-9]+)?/[^:/@]+(?:@[0-9]+)?:environment:(?P<environment>[^:]+)$")

ENVIRONMENT = "github:index/repositoryEnvironment:RepositoryEnvironment"
DEPLOYMENT_POLICY = "github:index/repositoryEnvironmentDeploymentPolicy:RepositoryEnvironmentDeploymentPolicy"
# Reader and Storage Blob Data Reader; and what reading roles' actions end with.
_READING_BUILT_INS = ("acdd72a7-3385-48ef-bd42-f606fba81ae7", "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1")
# A user kubeconfig (Entra ID sign-in, no credential in it) reads nothing by itself either.
_READ = ("/read", "/keys/decrypt/action", "/listclusterusercredential/action")


def _writes(role_props, guid: str) -> bool:
    """Whether a role changes anything (an action or data action past reading and decrypting)."""
    if guid in _READING_BUILT_INS:
        return False
    if role_props is None:
        return True
    for permission in lookup(role_props, "permissions") or []:
        for action in [*(permission.get("actions") or []), *(permission.get("dataActions") or [])]:
            if not action.lower().endswith(_READ):
                return True
    return False


def federation_bound(args, report):
    """Each identity trusts an environment the delivery makes (GitHub creates an unprotected one
    for any name a workflow uses), and one any branch may use (no main-only policy: the
    previews') only for an identity that changes nothing."""
    environments = {str(lookup(r.props, "environment")) for r in args.resources if r.resource_type == ENVIRONMENT}
    if not environments:
        return  # a delivery stack without GitHub's settings
    patterns: dict[str, list[str]] = {}
    for r in args.resources:
        if r.resource_type == DEPLOYMENT_POLICY:
            patterns.setdefault(str(lookup(r.props, "environment")), []).append(str(lookup(r.props, "branchPattern")))
    main_only = {environment for environment, named in patterns.items() if named == ["main"]}
    custom = _custom_roles(args.resources)
    grants: dict[str, list] = {}
    for r in args.resources:
        if r.resource_type == ROLE_ASSIGNMENT:
            for principal in r.property_dependencies.get("principalId", []):
                grants.setdefault(principal.urn, []).append(r)
    for credential in args.resources:
        if credential.resource_type != FEDERATED_CREDENTIAL:
            continue
        found = SUBJECT.match(str(lookup(credential.props, "subject") or ""))
        if not found:
            continue  # delivery-federation-pinned says why
        environment = found.group("environment")
        if environment not in environments:
            report(
                f"{credential.name} trusts GitHub environment {environment}, which this stack does not make: GitHub "
                "would create it, unprotected, for the first workflow that names it.",
                credential.urn,
            )
            continue
        if environment in main_only:
            continue
        for identity in credential.property_dependencies.get("resourceName", []):
            for grant in grants.get(identity.urn, []):
                guid = role_guid(str(lookup(grant.props, "roleDefinitionId") or ""))
                role = custom.get(guid)
                if _writes(role.props if role is not None else None, guid):
                    report(
                        f"{identity.name} trusts {environment}, which any branch may use, and {grant.name} lets it "
                        "change things: only a main-only environment's identity may.",
                        grant.urn,
                    )


_DEPLOYER = re.compile(
    r"^id-[a-z0-9]+-deploy-(?P<environment>[a-z][a-z0-9-]*)-(?:foundation|data|cluster|tenants|fleet)$"
)


def environments_isolated(args, report):
    """A deploy identity's grants on its environment's subscription reach everything in it: two
    environments in one subscription means the one with the weaker approvals (dev deploys on
    merge) writes the other's resources (docs/deploying.md, "Before you start")."""
    writers: dict[str, set[str]] = {}
    for r in args.resources:
        if r.resource_type != ROLE_ASSIGNMENT:
            continue
        identity = str(lookup(r.props, "description") or "").split(": ", 1)[0]
        found = _DEPLOYER.match(identity)
        # Grants on the whole subscription (the state's and the hub's objects are shared by design,
        # each grant on one object).
        scope = str(lookup(r.props, "scope") or "").rstrip("/").split("/")
        if found and len(scope) == 3 and scope[1].lower() == "subscriptions":
            writers.setdefault(scope[2].lower(), set()).add(found.group("environment"))
    for subscription, environments in sorted(writers.items()):
        if len(environments) > 1:
            report(
                f"subscription {subscription} holds the deploy grants of {', '.join(sorted(environments))}: each "
                "environment's deploy identities can write the others' resources there; give each its own."
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
    stack_policy(
        "delivery-environments-isolated",
        "No two environments' deploy identities hold grants in one subscription.",
        environments_isolated,
        severity=Severity.HIGH,
        remediation="A subscription per environment (delivery:environments.<env>.subscriptionId).",
    ),
    stack_policy(
        "delivery-roles-allowed",
        "The delivery grants its own custom roles and the built-in roles it is known to need, nothing else.",
        roles_allowed,
        severity=Severity.HIGH,
        remediation="Use a custom role with the actions needed, or add the built-in role to allowedBuiltInRoles "
        "(and planning/delivery.py) in a reviewed change.",
        config=ROLES_SCHEMA,
    ),
    stack_policy(
        "delivery-federation-bound",
        "Identities trust GitHub environments this stack makes, and only main-only environments' identities "
        "may change anything.",
        federation_bound,
        severity=Severity.CRITICAL,
        remediation="Federate deploy identities with `<env>-<layer>` (main only), plan identities with "
        "`<env>-<layer>-preview`, and grant the latter reading roles only.",
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
