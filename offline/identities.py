"""The delivery identities as the delivery project (delivery/) makes them, read from its plan.

The delivery project is the one place that grants the deploy and plan identities their roles;
this module previews it offline (delivery/stacks/Pulumi.acme.yaml) and turns the role
assignments it registers into `planning.permissions.Grant`s: built-in roles with Microsoft's
published permissions (facts/azure_roles.json), custom roles with the permissions the project
defines, delegation conditions as the role and principal-type sets they admit. The tests, and
the permissions table in docs/deploying.md (`make docs`), check every stack's operations
against them.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from components.platform import own_hub_zones
from facts.azure_roles import role_by_id
from offline import entra
from offline.engine import Plan, run_program
from offline.mocks import OFFLINE_SUBSCRIPTION_ID, principal_id
from planning.delivery import RESOURCE_PROVIDERS
from planning.entra_applications import application_name
from planning.layers import LAYERS
from planning.naming import Naming
from planning.permissions import Backend, Condition, Grant, RoleDefinition
from validation.loader import parse_platform_config

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DELIVERY = PROJECT_ROOT / "delivery"
DELIVERY_STACK = "acme"
STATE_SUBSCRIPTION = "11111111-1111-4111-8111-111111111111"
PREFIX = "ailab"


@dataclass(frozen=True)
class CustomRole:
    name: str
    placeholder: str  # what the dry run prints for its GUID
    definition: RoleDefinition


@dataclass
class Identities:
    """What the delivery makes for one environment: grants per identity, custom roles, registrations."""

    environment: str
    grants: dict[str, list[Grant]] = field(default_factory=dict)
    custom_roles: dict[str, CustomRole] = field(default_factory=dict)
    resource_providers: list[str] = field(default_factory=list)
    features: list[str] = field(default_factory=list)
    commands: list[list[str]] = field(default_factory=list)
    # identity -> the subjects of the federated credentials it trusts (GitHub's OIDC tokens)
    federated: dict[str, list[str]] = field(default_factory=dict)
    # principal object ID -> the served APIs' roles Entra issues it ("<application> as <role>")
    app_roles: dict[str, list[str]] = field(default_factory=dict)
    # principal (an identity's name, or an object ID the plan does not make) -> app-role
    # assignments on any other resource: Microsoft Graph's reach the whole tenant (offline/entra.py)
    other_app_roles: dict[str, list[str]] = field(default_factory=dict)

    def deployer(self, layer: str) -> str:
        return f"id-{PREFIX}-deploy-{self.environment}-{layer}"

    def planner(self, layer: str) -> str:
        return f"id-{PREFIX}-plan-{self.environment}-{layer}"

    def custom_role(self, name: str) -> CustomRole:
        return self.custom_roles[f"{name} ({PREFIX}-{self.environment})"]


def _stack_file_config(stack: str) -> dict[str, Any]:
    return dict(yaml.safe_load((PROJECT_ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"])


def stack_hub(stack: str) -> dict[str, Any] | None:
    return (_stack_file_config(stack).get("platform:network") or {}).get("hub")


def stack_identities(stack: str) -> Identities:
    """The delivery project's identities for one platform stack file: its environment's."""
    environment = _stack_file_config(stack)["platform:environment"]
    return plan_identities(environment, delivery_plan(delivery_stack_of(stack)))


@functools.cache
def delivery_stack_of(stack: str) -> str:
    """The delivery stack that grants a platform stack: the one whose environments list it
    (components/delivery/program.py, delivery_of; prod-scale's is acme-scale)."""
    from components.delivery.program import delivery_of

    return delivery_of(stack, _stack_file_config(stack)["platform:environment"])[0]


@functools.cache
def delivery_plan(stack: str = DELIVERY_STACK) -> Plan:
    """A delivery stack's offline preview (delivery/stacks/Pulumi.<stack>.yaml), once per process."""
    from validation.stackfile import read_stack_config

    plan = run_program(read_stack_config(DELIVERY, stack), DELIVERY)
    if not plan.ok:
        raise RuntimeError(f"the delivery project does not preview: {plan.error}")
    return plan


def identity_environment(identity: str) -> str:
    """`id-ailab-deploy-prod-cluster` -> prod (environment names may hold dashes)."""
    return identity.split("-", 3)[3].rsplit("-", 1)[0]


def plan_identities(environment: str, plan: Plan | None = None) -> Identities:
    """One environment's identities as the delivery project's plan makes them: the grants of its
    role assignments (conditions parsed), its custom roles, its identities' federated
    credentials and its subscription's feature registrations."""
    plan = plan or delivery_plan()
    found = Identities(environment, resource_providers=list(RESOURCE_PROVIDERS))
    custom: dict[str, RoleDefinition] = {}
    for r in plan.of_type("azure-native:authorization:RoleDefinition"):
        permission = r.inputs["permissions"][0]
        guid = str(r.inputs["roleDefinitionId"]).lower()
        definition = RoleDefinition(
            name=r.inputs["roleName"],
            id=guid,
            actions=tuple(permission.get("actions", [])),
            not_actions=tuple(permission.get("notActions", [])),
            data_actions=tuple(permission.get("dataActions", [])),
            not_data_actions=tuple(permission.get("notDataActions", [])),
        )
        custom[guid] = definition
        found.custom_roles[definition.name] = CustomRole(definition.name, guid, definition)
    for r in plan.of_type("azure-native:authorization:RoleAssignment"):
        why = str(r.inputs["description"])
        identity = why.split(": ", 1)[0]
        if not identity.startswith("id-") or identity_environment(identity) != environment:
            continue
        role = str(r.inputs["roleDefinitionId"]).rsplit("/", 1)[-1].lower()
        assigned = built_in(role) or custom.get(role)
        if assigned is None:
            raise LookupError(
                f"{r.name} assigns role {role}, which is neither a recorded built-in role nor the project's"
            )
        text = r.inputs.get("condition")
        found.grants.setdefault(identity, []).append(
            Grant(assigned, str(r.inputs["scope"]), parse_condition(text) if text else None, why)
        )
    # Registrations arrive in no fixed order (the SDK registers from threads): sort, so the
    # generated table in docs/deploying.md is the same on every run.
    for grants in found.grants.values():
        grants.sort(key=lambda grant: (grant.why, grant.scope, grant.role.name))
    # This environment's custom roles, and the shared (hub) ones its grants use.
    used = {grant.role.name for grants in found.grants.values() for grant in grants}
    found.custom_roles = {
        name: role
        for name, role in sorted(found.custom_roles.items())
        # "<purpose> (<prefix>-<environment>)"; prefixes hold no dash.
        if name.rsplit(" (", 1)[-1].rstrip(")").partition("-")[2] == environment or name in used
    }
    for r in plan.of_type("azure-native:managedidentity:FederatedIdentityCredential"):
        identity = plan.by_urn(r.parent or "").name
        if identity_environment(identity) == environment:
            found.federated.setdefault(identity, []).append(f"{r.inputs['issuer']} {r.inputs['subject']}")
    _entra_roles(plan, environment, found)
    subscription = plan.outputs["subscriptions"][environment]
    for r in plan.of_type("azure-native:features:SubscriptionFeatureRegistration"):
        if r.parent and plan.by_urn(r.parent).name == f"subscription-{subscription}":
            found.features.append(f"{r.inputs['providerNamespace']}/{r.inputs['featureName']}")
    return found


def stack_api_server_zones(stack: str) -> list[str]:
    """The API server subzones a stack's environment has in the hub's zones (none without them)."""
    return own_hub_zones(parse_platform_config(_stack_file_config(stack), stack=stack))


_PAIR = re.compile(
    r"@Request\[Microsoft\.Authorization/roleAssignments:RoleDefinitionId\] ForAnyOfAnyValues:GuidEquals \{([^}]*)\}"
    r" AND @Request\[Microsoft\.Authorization/roleAssignments:PrincipalType\] "
    r"ForAnyOfAnyValues:StringEqualsIgnoreCase \{([^}]*)\}"
)
_BLOB_PATH = re.compile(
    r"@Resource\[Microsoft\.Storage/storageAccounts/blobServices/containers/blobs:path\] StringLike '([^']*)'"
)
_BLOB_PREFIX = re.compile(
    r"@Request\[Microsoft\.Storage/storageAccounts/blobServices/containers/blobs:prefix\] StringStartsWith '([^']*)'"
)


def parse_condition(text: str) -> Condition:
    """What a delivery condition admits: for a delegation, the (roles, principal types) pairs a
    write may name; for a state blob role, the blob paths (StringLike, `*` any characters, as
    fnmatch) and list prefixes."""
    if "roleAssignments:" in text:
        write = text.split("AND ((!(ActionMatches{'Microsoft.Authorization/roleAssignments/delete'})", 1)[0]
        pairs = tuple(
            (
                frozenset(part.strip().lower() for part in roles.split(",")),
                frozenset(part.strip(" '").lower() for part in types.split(",")),
            )
            for roles, types in _PAIR.findall(write)
        )
        return Condition(role_pairs=pairs)
    return Condition(
        blob_paths=frozenset(_BLOB_PATH.findall(text)), blob_prefixes=frozenset(_BLOB_PREFIX.findall(text))
    )


def built_in(role_id: str) -> RoleDefinition | None:
    role = role_by_id(role_id)
    if role is None:
        return None
    return RoleDefinition(role.name, role.id, role.actions, role.not_actions, role.data_actions, role.not_data_actions)


def backend(environment: str) -> Backend:
    """The environment's state container and its layers' secrets keys, as the delivery names them."""
    group = f"/subscriptions/{STATE_SUBSCRIPTION}/resourceGroups/rg-{PREFIX}-delivery/providers"
    return Backend(
        state_container_id=f"{group}/Microsoft.Storage/storageAccounts/st{PREFIX}pulumistate"
        f"/blobServices/default/containers/pulumi-state-{environment}",
        secrets_key_ids={
            layer: f"{group}/Microsoft.KeyVault/vaults/kv-{PREFIX}-state/keys/pulumi-state-{environment}-{layer}"
            for layer in LAYERS
        },
    )


def program_grants(plan: Any, subscription: str, principal_id: str, identities: Identities) -> list[Grant]:
    """The role assignments a plan makes to one principal (e.g. the plan identity's namespace
    reads), as grants: built-in roles, or the delivery's custom roles by the GUID named."""
    custom = {role.definition.id.lower(): role.definition for role in identities.custom_roles.values()}
    grants = []
    for r in plan.resources:
        if r.type != "azure-native:authorization:RoleAssignment" or r.inputs.get("principalId") != principal_id:
            continue
        role = str(r.inputs.get("roleDefinitionId", "")).rsplit("/", 1)[-1].lower()
        definition = built_in(role) or custom.get(role)
        if definition is None:
            raise LookupError(f"{r.name} assigns role {role}, which no recorded or delivery role defines")
        grants.append(Grant(definition, r.inputs["scope"], None, f"{r.type} {r.name}"))
    return grants


def _symbolic(scope: str, environment: str) -> str:
    """A scope as docs/deploying.md shows it: subscriptions and the delivery group by role."""
    scope = scope.replace(f"/subscriptions/{OFFLINE_SUBSCRIPTION_ID}", f"<{environment} subscription>")
    scope = scope.replace(
        f"/subscriptions/{STATE_SUBSCRIPTION}/resourceGroups/rg-{PREFIX}-delivery/providers/", "<delivery>/"
    )
    return scope


def markdown_table(identities: Identities) -> str:
    """The delivery's grants of one environment, for docs/deploying.md (`make docs`)."""
    lines = ["| identity | role | scope | why |", "|---|---|---|---|"]
    custom = {c.definition.id: c.name for c in identities.custom_roles.values()}
    for identity in [who(layer) for layer in LAYERS for who in (identities.deployer, identities.planner)]:
        for grant in identities.grants.get(identity, []):
            role = grant.role.name
            condition = grant.condition
            if condition and condition.role_pairs:
                role += (
                    " (only: "
                    + "; ".join(
                        ", ".join(sorted((known.name if (known := role_by_id(r)) else custom.get(r, r)) for r in roles))
                        + f" to {', '.join(sorted(types))}"
                        for roles, types in condition.role_pairs
                    )
                    + ")"
                )
            elif condition and condition.blob_paths is not None:
                role += " (only: " + ", ".join(f"`{p}`" for p in sorted(condition.blob_paths)) + ")"
            why = grant.why.split(": ", 1)[-1]
            lines.append(f"| `{identity}` | {role} | `{_symbolic(grant.scope, identities.environment)}` | {why} |")
    lines += ["", "| custom role | actions | data actions |", "|---|---|---|"]
    for name, custom_role in identities.custom_roles.items():
        actions = ", ".join(f"`{a}`" for a in custom_role.definition.actions) or "none"
        data = ", ".join(f"`{a}`" for a in custom_role.definition.data_actions) or "none"
        lines.append(f"| {name} | {actions} | {data} |")
    return "\n".join(lines) + "\n"


def _entra_roles(plan: Plan, environment: str, found: Identities) -> None:
    """The served APIs' app roles the delivery assigns in this environment, and any app-role
    assignment on another resource, by the principal that holds it."""
    applications, others = entra.read(plan)
    own = application_name(Naming(PREFIX, environment), "")
    for application in applications.values():
        if not application.display_name.startswith(own):
            continue
        for principal, roles in application.holders.items():
            found.app_roles.setdefault(principal, []).extend(f"{application.display_name} as {r}" for r in roles)
    # The delivery's own identities, by the object ID Azure gives them in the state's subscription.
    subscriptions = {r.urn: str(r.inputs.get("subscriptionId")) for r in plan.of_type("pulumi:providers:azure-native")}
    names = {
        principal_id(r, subscriptions.get(r.provider.rsplit("::", 1)[0], STATE_SUBSCRIPTION)): str(
            r.inputs["resourceName"]
        )
        for r in plan.of_type("azure-native:managedidentity:UserAssignedIdentity")
    }
    for other in others:
        holder = names.get(other.principal_id, other.principal_id)
        found.other_app_roles.setdefault(holder, []).append(f"{other.name}: app role {other.app_role_id}")
