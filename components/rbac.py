"""Role assignments with deterministic names, scoped to one resource; a namespaced Kubernetes
Role bound to its subjects."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as kubernetes
from pulumi_azure_native import authorization

from planning import roles


def assign_role(
    logical_name: str,
    *,
    role: str,
    scope: pulumi.Input[str],
    scope_key: str,
    principal_id: pulumi.Input[str],
    principal_key: pulumi.Input[str],
    subscription_id: pulumi.Input[str],
    parent: pulumi.Resource,
    principal_type: authorization.PrincipalType | None = authorization.PrincipalType.SERVICE_PRINCIPAL,
    depends_on: list[pulumi.Resource] | None = None,
    aliases: list[pulumi.Alias] | None = None,
    description: str | None = None,
    condition: str | None = None,
) -> authorization.RoleAssignment:
    """Grant a role (built-in by name, or any by GUID) to a principal on exactly one resource,
    narrowed by an ABAC `condition` (version 2.0) if one is given.

    The assignment's name is a GUID derived from (scope_key, principal_key, role), so the
    same grant keeps the same name on every run and is never replaced. `principal_type`
    skips the directory lookup that fails for a just-created identity; leave it None only
    for a principal whose kind is not known (the identity running the deploy).
    """
    principal = pulumi.Output.from_input(principal_key)
    return authorization.RoleAssignment(
        logical_name,
        role_assignment_name=principal.apply(lambda key: roles.assignment_name(scope_key, key, role)),
        # Under the subscription of the scope, which may be another one (the hub's DNS zones).
        role_definition_id=pulumi.Output.all(subscription_id, scope).apply(
            lambda values: roles.role_definition_resource_id(roles.scope_subscription(values[1]) or values[0], role)
        ),
        principal_id=principal_id,
        principal_type=principal_type,
        scope=scope,
        description=description or principal.apply(lambda key: f"{role} for {key} (managed by Pulumi)"),
        condition=condition,
        condition_version="2.0" if condition else None,
        # The name is fixed by the grant, so a new principal (a replaced identity) needs the
        # old assignment gone first: Azure rejects a second one of the same name.
        opts=pulumi.ResourceOptions(parent=parent, depends_on=depends_on, delete_before_replace=True, aliases=aliases),
    )


def lock_against_deletion(
    logical_name: str, *, scope: pulumi.Input[str], what: str, parent: pulumi.Resource, notes: str | None = None
):
    """A CanNotDelete management lock: the resource (and its children) can change, not go."""
    return authorization.ManagementLockByScope(
        logical_name,
        lock_name="do-not-delete",
        level=authorization.LockLevel.CAN_NOT_DELETE,
        scope=scope,
        notes=notes
        or f"{what} holds data that must not be lost; remove this lock (platform:lockStatefulResources) first",
        opts=pulumi.ResourceOptions(parent=parent),
    )


def bound_role(
    logical_name: str,
    metadata: kubernetes.meta.v1.ObjectMetaArgs,
    rules: Sequence[kubernetes.rbac.v1.PolicyRuleArgs],
    subjects: Sequence[kubernetes.rbac.v1.SubjectArgs],
    opts: pulumi.ResourceOptions,
) -> kubernetes.rbac.v1.Role:
    """A Kubernetes Role and its RoleBinding, both named by `metadata` (one namespace)."""
    role = kubernetes.rbac.v1.Role(logical_name, metadata=metadata, rules=list(rules), opts=opts)
    kubernetes.rbac.v1.RoleBinding(
        f"{logical_name}-binding",
        metadata=metadata,
        role_ref=kubernetes.rbac.v1.RoleRefArgs(
            api_group="rbac.authorization.k8s.io", kind="Role", name=role.metadata.name
        ),
        subjects=list(subjects),
        opts=opts,
    )
    return role
