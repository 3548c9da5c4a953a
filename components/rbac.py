"""Role assignments with deterministic names, scoped to one resource."""

from __future__ import annotations

import pulumi
from pulumi_azure_native import authorization

from planning import roles


def assign_role(
    logical_name: str,
    *,
    role: str,
    scope: pulumi.Input[str],
    scope_key: str,
    principal_id: pulumi.Input[str],
    principal_key: str,
    subscription_id: pulumi.Input[str],
    parent: pulumi.Resource,
    depends_on: list[pulumi.Resource] | None = None,
) -> authorization.RoleAssignment:
    """Grant a built-in role to a service principal on exactly one resource.

    The assignment's name is a GUID derived from (scope_key, principal_key, role), so the
    same grant keeps the same name on every run and is never replaced.
    """
    return authorization.RoleAssignment(
        logical_name,
        role_assignment_name=roles.assignment_name(scope_key, principal_key, role),
        role_definition_id=pulumi.Output.from_input(subscription_id).apply(
            lambda subscription: roles.role_definition_resource_id(subscription, role)
        ),
        principal_id=principal_id,
        # Declaring the type skips the directory lookup that fails for a just-created identity.
        principal_type=authorization.PrincipalType.SERVICE_PRINCIPAL,
        scope=scope,
        description=f"{role} for {principal_key} (managed by Pulumi)",
        opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on),
    )
