"""One environment's served APIs in Entra ID (planning/entra_applications.py decides names and
role IDs): per API an application with its app roles and v2.0 tokens, a service principal that
issues tokens only to principals assigned a role, and the callers' assignments.

The delivery's administrators run this with their own sign-in, which holds what Microsoft Graph
asks for: Application.ReadWrite.All (or the Application Administrator role) for the applications,
AppRoleAssignment.ReadWrite.All for the assignments (facts/entra.py: tenant-wide, which is why no
environment's deploy identity holds it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pulumi
import pulumi_azuread as azuread
from pulumi_azure_native import managedidentity

from facts import entra
from planning.entra_applications import ServedApplication


@dataclass(frozen=True)
class ServingApplicationsArgs:
    applications: Sequence[ServedApplication]
    # Assign the callers' roles: their identities exist (the environment's foundation is deployed).
    assign_callers: bool
    # The environment's subscription, where its workloads' identities are.
    provider: pulumi.ProviderResource


class ServingApplications(pulumi.ComponentResource):
    """Outputs: `client_ids` by API (the audience the gateway checks: the platform stack file's
    `platform:serving.apis.<api>.applicationClientId`)."""

    client_ids: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: ServingApplicationsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("delivery:entra:ServingApplications", name, None, opts)
        self.client_ids = {}
        for app in args.applications:
            # Protected: its client ID is in the platform's stack file, and a new application would
            # drop every caller's assignment; removing an API is a change of its own.
            application = azuread.Application(
                f"{name}-{app.api}",
                display_name=app.display_name,
                sign_in_audience=entra.SINGLE_TENANT,
                prevent_duplicate_names=True,
                # v2.0 tokens: the issuer the gateway's RequestAuthentication names (facts/entra.py).
                api=azuread.ApplicationApiArgs(requested_access_token_version=2),
                app_roles=[
                    azuread.ApplicationAppRoleArgs(
                        allowed_member_types=[entra.APPLICATION_MEMBER],
                        description=role.description,
                        display_name=role.value,
                        enabled=True,
                        id=role.id,
                        value=role.value,
                    )
                    for role in app.roles
                ],
                notes=f"Served API {app.api}: the platform's delivery project (docs/serving.md).",
                opts=pulumi.ResourceOptions(parent=self, protect=True),
            )
            principal = azuread.ServicePrincipal(
                f"{name}-{app.api}-principal",
                client_id=application.client_id,
                # Entra issues tokens for the API only to principals assigned one of its roles:
                # another identity of the tenant gets none, not just a token without roles.
                app_role_assignment_required=True,
                # Deleting it would drop every caller's assignment with it.
                opts=pulumi.ResourceOptions(parent=self, protect=True),
            )
            self.client_ids[app.api] = application.client_id
            if not args.assign_callers:
                continue
            for caller in app.callers:
                identity = managedidentity.get_user_assigned_identity_output(
                    resource_group_name=caller.identity_resource_group,
                    resource_name=caller.identity_name,
                    opts=pulumi.InvokeOutputOptions(provider=args.provider, parent=self),
                )
                for role in caller.roles:
                    azuread.AppRoleAssignment(
                        f"{name}-{app.api}-{caller.workload}-{role}",
                        app_role_id=app.role_id(role),
                        principal_object_id=identity.principal_id,
                        resource_object_id=principal.object_id,
                        # Not under the protected principal (children inherit `protect`): a caller
                        # leaves with a change to config alone.
                        opts=pulumi.ResourceOptions(parent=self),
                    )
        self.register_outputs({"clientIds": self.client_ids})
