"""The served APIs' Entra applications as the delivery project's plan makes them
(components/delivery/entra.py): each application's roles, whether its service principal issues
tokens only to assigned principals, and who holds which role. The contracts build a caller's
token from this (Entra puts the values of the roles assigned to the caller's service principal in
its app-only token's `roles` claim: learn.microsoft.com/graph/api/resources/approleassignment);
the attack-path model places the holders, and every other assignment (an app role of another
resource, Microsoft Graph's among them) as tenant-wide."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from facts import entra
from offline.mocks import OFFLINE_TENANT_ID, principal_id
from planning.entra_applications import application_name
from planning.naming import Naming

APPLICATION = "azuread:index/application:Application"
SERVICE_PRINCIPAL = "azuread:index/servicePrincipal:ServicePrincipal"
ASSIGNMENT = "azuread:index/appRoleAssignment:AppRoleAssignment"


@dataclass
class Application:
    display_name: str
    client_id: str
    # app role ID -> value, for the roles principals may be assigned (Application members)
    roles: dict[str, str]
    token_version: int | None
    # The service principal issues tokens only to principals assigned a role.
    assignment_required: bool
    # principal object ID -> the role values assigned to it
    holders: dict[str, list[str]] = field(default_factory=dict)

    def token_roles(self, principal_id: str) -> list[str] | None:
        """The `roles` claim of the token Entra issues the principal for this API; None: Entra
        issues it no token (assignment required, and it holds none)."""
        held = sorted(self.holders.get(principal_id, []))
        if not held and self.assignment_required:
            return None
        return held


@dataclass(frozen=True)
class OtherAssignment:
    """An app-role assignment on a resource that is none of the served APIs."""

    name: str
    principal_id: str
    app_role_id: str


def _application_roles(inputs: dict[str, Any]) -> dict[str, str]:
    return {
        str(role["id"]): str(role["value"])
        for role in inputs.get("appRoles") or []
        if role.get("enabled", True) and entra.APPLICATION_MEMBER in (role.get("allowedMemberTypes") or [])
    }


def read(plan: Any) -> tuple[dict[str, Application], list[OtherAssignment]]:
    """The plan's applications by display name, and its assignments on anything else."""
    by_urn: dict[str, Application] = {}
    found: dict[str, Application] = {}
    for r in plan.of_type(APPLICATION):
        application = Application(
            display_name=str(r.inputs["displayName"]),
            client_id="",
            roles=_application_roles(r.inputs),
            token_version=(r.inputs.get("api") or {}).get("requestedAccessTokenVersion"),
            assignment_required=False,
        )
        by_urn[r.urn] = found[application.display_name] = application
    principals: dict[str, Application] = {}
    for r in plan.of_type(SERVICE_PRINCIPAL):
        (application_urn,) = r.property_dependencies.get("clientId") or (None,)
        owner = by_urn.get(application_urn or "")
        if owner is None:
            raise LookupError(f"service principal {r.name} is of no application the plan makes")
        owner.client_id = str(r.inputs["clientId"])
        owner.assignment_required = bool(r.inputs.get("appRoleAssignmentRequired"))
        principals[r.urn] = owner
    others = []
    for r in plan.of_type(ASSIGNMENT):
        resource = next(iter(r.property_dependencies.get("resourceObjectId") or ()), None)
        on = principals.get(resource or "")
        role = str(r.inputs["appRoleId"])
        if on is None or role not in on.roles:
            others.append(OtherAssignment(r.name, str(r.inputs["principalObjectId"]), role))
            continue
        on.holders.setdefault(str(r.inputs["principalObjectId"]), []).append(on.roles[role])
    return found, others


def issued_token(config: Any, platform_plan: Any, delivery_plan: Any, api: str, workload: str) -> dict[str, Any] | None:
    """The claims of the v2.0 token Entra issues a workload's identity for an API's application,
    as the two plans leave the tenant (None: Entra refuses to issue one)."""
    naming = Naming(config.prefix, config.environment)
    applications, _ = read(delivery_plan)
    application = applications[application_name(naming, api)]
    (identity,) = [
        r
        for r in platform_plan.of_type("azure-native:managedidentity:UserAssignedIdentity")
        if r.inputs["resourceName"] == naming.workload_identity(workload)
    ]
    roles = application.token_roles(principal_id(identity))
    if roles is None:
        return None
    tenant = str(config.entra.tenant_id or OFFLINE_TENANT_ID)
    # A null or 1 requestedAccessTokenVersion gets v1.0 tokens, whose issuer differs.
    issuer = entra.issuer(tenant) if application.token_version == 2 else entra.v1_issuer(tenant)
    return {"iss": issuer, "aud": application.client_id, "roles": roles}
