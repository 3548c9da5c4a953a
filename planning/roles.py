"""Built-in Azure role definition IDs and deterministic role-assignment names.

Role definition GUIDs are the same in every tenant
(learn.microsoft.com/azure/role-based-access-control/built-in-roles); they and the roles'
permissions live in facts/azure_roles.json.
"""

from __future__ import annotations

import re
import uuid

from facts.azure_roles import built_in_roles

# Every recorded built-in role's GUID by name (facts/azure_roles.json).
BUILT_IN_ROLES: dict[str, str] = {name: role.id for name, role in built_in_roles().items()}

# A fixed namespace so that the same (scope, principal, role) always yields the same name.
_ASSIGNMENT_NAMESPACE = uuid.UUID("6f1b7c1e-3c53-4d6e-9a55-2a8d0e8b7a10")


_GUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def role_id(role: str) -> str:
    """The GUID of a built-in role by name, or a custom role's GUID as given; a KeyError
    names roles this module does not know."""
    if _GUID.match(role):
        return role
    return BUILT_IN_ROLES[role]


def role_definition_resource_id(subscription_id: str, role: str) -> str:
    return f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization/roleDefinitions/{role_id(role)}"


def scope_subscription(scope: str) -> str | None:
    """The subscription a scope (`/subscriptions/<id>/...`) lies in, if it names one."""
    parts = scope.strip("/").split("/")
    return parts[1] if len(parts) > 1 and parts[0].lower() == "subscriptions" else None


def assignment_name(scope_key: str, principal_key: str, role: str) -> str:
    """A role assignment's GUID name, stable across runs so a re-run never replaces it.

    The keys are logical names chosen by the program (e.g. "dev/eus2/subnet/nodes"), not
    resource IDs, which are unknown until the resources exist.
    """
    return str(uuid.uuid5(_ASSIGNMENT_NAMESPACE, f"{scope_key}|{principal_key}|{role_id(role)}"))
