"""One environment's delivery access: its subscription's registrations, custom roles, deploy and
plan identities (each trusting one GitHub environment), and every grant planning/delivery.py
decides, with its condition."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pulumi
from pulumi_azure_native import authorization, features, managedidentity, resources

from components.rbac import assign_role
from planning.delivery import (
    FEATURES,
    GITHUB_AUDIENCE,
    GITHUB_ISSUER,
    CustomRoleSpec,
    EnvironmentDelivery,
)
from planning.roles import assignment_name


@dataclass(frozen=True)
class EnvironmentAccessArgs:
    plan: EnvironmentDelivery
    subject_prefix: str
    resource_group_name: pulumi.Input[str]
    location: str
    # Custom roles made once for the delivery (the hub's), by name, beside this environment's own.
    shared_roles: Mapping[str, tuple[CustomRoleSpec, authorization.RoleDefinition]]
    # The environment's subscription (its registrations and custom roles live there).
    provider: pulumi.ProviderResource
    tags: Mapping[str, str]
    # Grants wait for these (the containers and keys they are scoped to).
    depends_on: Sequence[pulumi.Resource] = ()


def custom_role(
    name: str,
    spec: CustomRoleSpec,
    parent: pulumi.Resource,
    provider: pulumi.ProviderResource | None = None,
    depends_on: Sequence[pulumi.Resource] = (),
) -> authorization.RoleDefinition:
    """A custom role assignable on its one scope, its GUID fixed by name and scope."""
    return authorization.RoleDefinition(
        name,
        role_definition_id=spec.guid,
        role_name=spec.name,
        description=f"{spec.description} (delivery project)",
        role_type="CustomRole",
        scope=spec.scope,
        assignable_scopes=[spec.scope],
        permissions=[
            authorization.PermissionArgs(
                actions=list(spec.actions), data_actions=list(spec.data_actions), not_actions=[], not_data_actions=[]
            )
        ],
        # Its assignable scope must exist first (the vault, for the state key roles).
        opts=pulumi.ResourceOptions(parent=parent, provider=provider, depends_on=list(depends_on)),
    )


class SubscriptionFeatures(pulumi.ComponentResource):
    """The preview features the platform's resources need, once per subscription (several
    environments may share one). Retained on delete: another environment, or a registration made
    by hand, may rely on it. The resource providers themselves have no azure-native resource
    (pulumi/pulumi-azure-native#1075): scripts/register-providers registers them, and again once a
    feature is Registered (docs/deploying.md)."""

    def __init__(self, name: str, provider: pulumi.ProviderResource, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:delivery:SubscriptionFeatures", name, None, opts)
        for namespace, feature in FEATURES:
            features.SubscriptionFeatureRegistration(
                f"{name}-{feature}",
                provider_namespace=namespace,
                feature_name=feature,
                properties=features.SubscriptionFeatureRegistrationPropertiesArgs(),
                opts=pulumi.ResourceOptions(parent=self, provider=provider, retain_on_delete=True),
            )
        self.register_outputs({})


class EnvironmentAccess(pulumi.ComponentResource):
    def __init__(self, name: str, args: EnvironmentAccessArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:delivery:EnvironmentAccess", name, None, opts)
        plan = args.plan
        roles = dict(args.shared_roles)
        for spec in plan.custom_roles:
            key = spec.name.split(" (", 1)[0].removeprefix("Platform ").replace(" ", "-")
            roles[spec.name] = (spec, custom_role(f"{name}-{key}", spec, self, args.provider))
        # The units' resource groups (platform:resourceGroups: delivery), before the grants on them.
        groups = [
            resources.ResourceGroup(
                f"{name}-{group}",
                resource_group_name=group,
                location=region,
                tags={**args.tags, "environment": plan.environment.name, "layer": layer},
                opts=pulumi.ResourceOptions(parent=self, provider=args.provider, protect=True),
            )
            for layer, group, region in plan.environment.resource_groups
        ]
        self.client_ids: dict[str, pulumi.Output[str]] = {}
        self.principal_ids: dict[str, pulumi.Output[str]] = {}
        principals = {}
        for identity in plan.identities:
            created = managedidentity.UserAssignedIdentity(
                identity.name,
                resource_name_=identity.name,
                resource_group_name=args.resource_group_name,
                location=args.location,
                tags=dict(args.tags),
                opts=pulumi.ResourceOptions(parent=self),
            )
            # Attached to nothing: only a job in its GitHub environment signs in as it.
            managedidentity.FederatedIdentityCredential(
                f"{identity.name}-github",
                federated_identity_credential_resource_name="github",
                resource_name_=created.name,
                resource_group_name=args.resource_group_name,
                issuer=GITHUB_ISSUER,
                subject=identity.subject(args.subject_prefix),
                audiences=[GITHUB_AUDIENCE],
                opts=pulumi.ResourceOptions(parent=created),
            )
            principals[identity.name] = created.principal_id
            self.client_ids[identity.name] = created.client_id
            self.principal_ids[identity.name] = created.principal_id
        for grant in plan.grants:
            found = roles.get(grant.role)
            definition = found[1] if found else None
            role_guid = found[0].guid if found else grant.role
            assign_role(
                f"{grant.identity}-{assignment_name(grant.scope, grant.identity, role_guid)[:8]}",
                role=role_guid,
                scope=grant.scope,
                scope_key=grant.scope,
                principal_id=principals[grant.identity],
                principal_key=grant.identity,
                subscription_id=grant.scope.split("/")[2],
                parent=self,
                depends_on=[*args.depends_on, *groups, *([definition] if definition is not None else [])],
                description=grant.why,
                condition=grant.condition,
            )
        self.register_outputs({})
