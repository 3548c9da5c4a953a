"""Entra ID's side of the delivery: the served APIs' applications (components/delivery/entra.py).

The gateway admits a call on the token's issuer, audience and app role (docs/serving.md). That
holds only while the API's application is this tenant's alone, issues v2.0 tokens (the issuer
the gateway names), has no secret of its own, and its service principal issues tokens only to
principals assigned a role. And no app-role assignment the delivery writes may hand out a
permission that reaches the tenant (Microsoft Graph's that write assignments, applications,
directory roles): that is the delivery's administrators' alone
(learn.microsoft.com/graph/api/serviceprincipal-post-approleassignedto).
"""

from __future__ import annotations

from guardrail import lookup, resource_policy
from pulumi_policy import Severity

APPLICATION = "azuread:index/application:Application"
SERVICE_PRINCIPAL = "azuread:index/servicePrincipal:ServicePrincipal"
APP_ROLE_ASSIGNMENT = "azuread:index/appRoleAssignment:AppRoleAssignment"
SINGLE_TENANT = "AzureADMyOrg"
# Credentials an application or service principal could hold: with one, something other than the
# callers' managed identities could sign in as the API's application.
CREDENTIALS = (
    "azuread:index/applicationPassword:ApplicationPassword",
    "azuread:index/applicationCertificate:ApplicationCertificate",
    "azuread:index/applicationFederatedIdentityCredential:ApplicationFederatedIdentityCredential",
    "azuread:index/servicePrincipalPassword:ServicePrincipalPassword",
    "azuread:index/servicePrincipalCertificate:ServicePrincipalCertificate",
)
# Microsoft Graph's application permissions that reach every app role or directory role
# (restates facts/entra.py: tests/test_pack_constants.py).
TENANT_WIDE_GRAPH_ROLES = {
    "06b708a9-e830-4db3-a914-8e69da51d44f": "AppRoleAssignment.ReadWrite.All",
    "9e3f62cf-ca93-4989-b6ce-bf83c28f9fe8": "RoleManagement.ReadWrite.Directory",
    "1bfefb4e-e0b5-418b-a88f-73c46d2cc8e9": "Application.ReadWrite.All",
    "19dbc75e-c2e2-444c-a770-ec69d8559fc7": "Directory.ReadWrite.All",
}


def applications_locked(args, report):
    if args.resource_type == APPLICATION:
        name = lookup(args.props, "displayName")
        if lookup(args.props, "signInAudience") != SINGLE_TENANT:
            report(
                f"application {name}: other tenants' principals could get its tokens (sign_in_audience AzureADMyOrg)."
            )
        if lookup(args.props, "api.requestedAccessTokenVersion") != 2:
            report(
                f"application {name}: it issues v1.0 tokens, whose issuer the gateway refuses (requested_access_token_version=2)."
            )
        if lookup(args.props, "password"):
            report(f"application {name}: a client secret; the API's application needs no credential of its own.")
    elif args.resource_type in CREDENTIALS:
        report(
            f"{args.resource_type.rsplit(':', 1)[-1]}: the served APIs' applications hold no credential of their own."
        )
    elif args.resource_type == SERVICE_PRINCIPAL and lookup(args.props, "appRoleAssignmentRequired") is not True:
        report(
            "a served API's service principal issues tokens to every principal of the tenant "
            "(app_role_assignment_required=True)."
        )


def no_tenant_wide_app_roles(args, report):
    if args.resource_type != APP_ROLE_ASSIGNMENT:
        return
    role = str(lookup(args.props, "appRoleId") or "").lower()
    if role in TENANT_WIDE_GRAPH_ROLES:
        report(
            f"assigns Microsoft Graph's {TENANT_WIDE_GRAPH_ROLES[role]}, which reaches every app and directory role "
            "of the tenant: the delivery's administrators' alone, never an identity's."
        )


POLICIES = [
    resource_policy(
        "entra-applications-locked",
        "A served API's application is single-tenant, issues v2.0 tokens and holds no secret, certificate or "
        "federated credential; its service principal issues tokens only to principals assigned a role.",
        applications_locked,
        severity=Severity.HIGH,
        remediation="components/delivery/entra.py: sign_in_audience AzureADMyOrg, requested_access_token_version 2, "
        "no password, app_role_assignment_required=True.",
    ),
    resource_policy(
        "entra-no-tenant-wide-app-roles",
        "No app-role assignment grants a Microsoft Graph permission that reaches the whole tenant.",
        no_tenant_wide_app_roles,
        severity=Severity.CRITICAL,
        remediation="Keep AppRoleAssignment.ReadWrite.All and its kin with the delivery's administrators (docs/serving.md).",
    ),
]
