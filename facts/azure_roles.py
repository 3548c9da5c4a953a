"""Azure's built-in roles: IDs and permissions, as Microsoft publishes them.

`azure_roles.json` beside this file holds, per role, the JSON block of its built-in roles page
(MicrosoftDocs/azure-docs `articles/role-based-access-control/built-in-roles/<page>.md`) with
the page and commit it was copied from. Role definition IDs are the same in every tenant.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SOURCE = Path(__file__).with_name("azure_roles.json")


@dataclass(frozen=True)
class BuiltInRole:
    name: str
    id: str
    page: str  # articles/role-based-access-control/built-in-roles/<page>.md
    commit: str  # MicrosoftDocs/azure-docs commit the permissions were copied from
    actions: tuple[str, ...]
    not_actions: tuple[str, ...]
    data_actions: tuple[str, ...]
    not_data_actions: tuple[str, ...]


@cache
def built_in_roles() -> dict[str, BuiltInRole]:
    """Every recorded built-in role by its name (`"Network Contributor"`)."""
    document = json.loads(SOURCE.read_text())
    return {
        name: BuiltInRole(
            name=name,
            id=entry["id"],
            page=entry["page"],
            commit=entry["commit"],
            actions=tuple(entry["actions"]),
            not_actions=tuple(entry["notActions"]),
            data_actions=tuple(entry["dataActions"]),
            not_data_actions=tuple(entry["notDataActions"]),
        )
        for name, entry in document["roles"].items()
    }


def role_id(name: str) -> str:
    """The GUID of a built-in role; a KeyError names a role that is not recorded."""
    return built_in_roles()[name].id


def role_by_id(role_definition_id: str) -> BuiltInRole | None:
    """The built-in role with this GUID (or `/.../roleDefinitions/<guid>` ID), if recorded."""
    guid = role_definition_id.rsplit("/", 1)[-1].lower()
    return next((role for role in built_in_roles().values() if role.id == guid), None)
