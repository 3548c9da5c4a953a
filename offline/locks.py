"""Deletes that a delete lock will refuse: predicted in the review, not met halfway through a deploy.

A `CanNotDelete` lock covers its scope and everything under it, role assignments included: Azure
answers the delete of a role assignment at or under a locked scope with `ScopeLocked`, while it
still lets new ones be created (MicrosoftDocs/azure-docs#110791; hashicorp/terraform-provider-azurerm#11770).
Prod locks its storage accounts, Key Vault, registry and Event Hubs namespace
(`platform:lockStatefulResources`), and other layers grant roles on exactly those: removing a
workload, a cluster or a team, or replacing an identity, deletes such grants. Deploy waves do not
help unless the lock is gone first: a lock removed by an upstream layer (planning/layers.py,
UPSTREAM) is gone before the layer that deletes the grant runs; one removed in the same stack
races with the delete (Pulumi orders deletes by dependency, and the two do not depend on each
other). The path is docs/operations.md, "Removing access under a delete lock".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from facts import arm
from planning.layers import UPSTREAM, parse_stack

LOCK = "azure-native:authorization:ManagementLockByScope"
# Deleted through their service's data plane, which locks do not govern (a lock applies to the
# control plane only: learn.microsoft.com, "Lock your resources"; Key Vault keys have no ARM
# delete, and azure-native deletes them through the vault: pulumi/pulumi-azure-native#354).
DATA_PLANE_DELETES = frozenset({"azure-native:keyvault:Key", "azure-native:keyvault:Secret"})


@dataclass(frozen=True)
class Lock:
    stack: str
    name: str
    scope: str


def _tail(arm_id: str) -> str:
    """An ARM ID without its subscription, lower case: the offline IDs of one environment's
    resources may name different subscriptions than the scopes it computes (they never
    collide within one environment's names)."""
    parts = arm_id.rstrip("/").lower().split("/")
    return "/".join(parts[3:]) if parts[1:2] == ["subscriptions"] else "/".join(parts)


def _scope(resource: Mapping[str, Any]) -> str | None:
    scope = (resource.get("inputs") or {}).get("scope")
    return _tail(scope) if isinstance(scope, str) and scope.startswith("/") else None


def _where(resource: Mapping[str, Any]) -> str | None:
    """The ID of a resource (an extension resource's sits under its scope), or None when its
    type is not one the model knows."""
    try:
        return _tail(arm.resource_id(resource["type"], resource["name"], resource.get("inputs") or {}, "-"))
    except arm.UnknownArmType:
        return None


def locks(stacks: Mapping[str, Mapping[str, Any]]) -> dict[str, Lock]:
    """Every delete or read-only lock of a side, by URN (either level refuses deletes below it)."""
    found = {}
    for stack, document in stacks.items():
        for resource in document.get("resources", []):
            scope = _scope(resource)
            if resource.get("type") == LOCK and scope:
                found[resource["urn"]] = Lock(stack, resource["name"], scope)
    return found


def _upstream(stack: str) -> set[str]:
    """The layers whose deploy finishes before `stack`'s starts (transitively)."""
    try:
        _, unit = parse_stack(stack)
    except ValueError:
        return set()
    if unit is None:
        return set()
    seen: set[str] = set()
    todo = list(UPSTREAM[unit.layer])
    while todo:
        layer = todo.pop()
        if layer not in seen:
            seen.add(layer)
            todo += UPSTREAM[layer]
    return seen


def _environment(stack: str) -> str:
    return stack.split(".", 1)[0]


def _layer(stack: str) -> str | None:
    try:
        _, unit = parse_stack(stack)
    except ValueError:
        return None
    return unit.layer if unit else None


def in_force(lock: Lock, removed: bool, stack: str) -> bool:
    """Whether `lock` still stands when `stack` deletes something: it stays, or it goes in a layer
    that does not finish before `stack` starts."""
    return not removed or _layer(lock.stack) not in _upstream(stack)


def under(scope: str, lock_scope: str) -> bool:
    return scope == lock_scope or scope.startswith(lock_scope + "/")


def blocking_lock(
    stack: str,
    resource: Mapping[str, Any],
    base_locks: Mapping[str, Lock],
    head_locks: Mapping[str, Lock],
) -> Lock | None:
    """The lock that will refuse deleting `resource` (a base resource the change deletes or
    replaces) from `stack`, or None. Locks the change adds stand from their own deploy on."""
    scope = _where(resource)
    if scope is None or resource.get("type") == LOCK or resource.get("type") in DATA_PLANE_DELETES:
        return None
    candidates: Iterable[tuple[Lock, bool]] = [
        *((lock, urn not in head_locks) for urn, lock in base_locks.items()),
        *((lock, False) for urn, lock in head_locks.items() if urn not in base_locks),
    ]
    for lock, removed in candidates:
        # Only a lock of the same deployment counts: prod's units, not another delivery stack.
        if _environment(lock.stack) != _environment(stack):
            continue
        if under(scope, lock.scope) and in_force(lock, removed, stack):
            return lock
    return None
