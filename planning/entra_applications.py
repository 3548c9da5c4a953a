"""The served APIs' Entra applications, as the delivery project makes them (docs/serving.md,
"Who may call"): per API of `platform:serving.apis`, an application whose app roles are the
API's `roles` (granted to applications only, so a caller's managed identity gets them in its
app-only token's `roles` claim), v2.0 access tokens (the issuer the gateway checks), and a
service principal that issues tokens only to principals assigned a role; then each caller
workload's identity is assigned the roles config gives it.

Why the delivery and not an environment's units: writing app-role assignments takes Microsoft
Graph's AppRoleAssignment.ReadWrite.All, which reaches the whole tenant (facts/entra.py). Held by
an environment's deploy identity it would join every environment; the delivery's administrators
hold it already. The attack-path model (offline/reach.py) places it.

Pure: the names and stable role IDs, from the environment's platform config.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from planning.naming import Naming
from stackconfig.model import PlatformConfig

# App role IDs are stable: a role's ID derives from its application's name and its value, so a
# renamed description keeps its assignments and a new value is a new role.
ROLE_NAMESPACE = uuid.UUID("6f1a9c2e-4b7d-5e8f-9a0b-1c2d3e4f5a6b")


@dataclass(frozen=True)
class AppRole:
    value: str
    description: str
    id: str


@dataclass(frozen=True)
class Caller:
    """A workload whose managed identity holds app roles of an API: the identity is the
    foundation's (components/workload_identity.py), found by its name in its resource group."""

    workload: str
    identity_resource_group: str
    identity_name: str
    roles: tuple[str, ...]


@dataclass(frozen=True)
class ServedApplication:
    api: str
    display_name: str
    roles: tuple[AppRole, ...]
    callers: tuple[Caller, ...]

    def role_id(self, value: str) -> str:
        return next(role.id for role in self.roles if role.value == value)


def application_name(naming: Naming, api: str) -> str:
    """`app-ailab-prod-serve-generate`: one application per environment and API."""
    return naming.name("app", "serve", api)


def app_role_id(display_name: str, value: str) -> str:
    return str(uuid.uuid5(ROLE_NAMESPACE, f"{display_name}/{value}"))


def served_applications(config: PlatformConfig) -> tuple[ServedApplication, ...]:
    if config.serving is None:
        return ()
    naming = Naming(config.prefix, config.environment)
    # The workloads' identities live in the primary region's identity group (foundation).
    group = naming.identity_group(config.primary_region)
    found = []
    for api, spec in config.serving.apis.items():
        name = application_name(naming, api)
        found.append(
            ServedApplication(
                api=api,
                display_name=name,
                roles=tuple(
                    AppRole(value, description, app_role_id(name, value))
                    for value, description in sorted(spec.roles.items())
                ),
                callers=tuple(
                    Caller(workload, group, naming.workload_identity(workload), tuple(sorted(roles)))
                    for workload, roles in sorted(spec.callers.items())
                ),
            )
        )
    return tuple(found)
