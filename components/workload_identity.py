"""Entra ID workload identity for every workload: no client secrets, no keys.

Per workload: one user-assigned managed identity, one federated identity credential per
cluster it runs on (that cluster's OIDC issuer, the workload's service account as subject),
and role assignments on exactly the resources it may touch (a blob container, a Key Vault
secret), never a resource group. The service accounts themselves, annotated with the
identity's client ID, are created in each cluster by `components.tenancy`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import managedidentity

from components.aliases import moved_from
from components.groups import resource_group
from components.rbac import assign_role
from planning.naming import Naming

# The audience AKS's workload identity webhook requests tokens for.
TOKEN_EXCHANGE_AUDIENCE = "api://AzureADTokenExchange"


def service_account_subject(namespace: str, service_account: str) -> str:
    return f"system:serviceaccount:{namespace}:{service_account}"


@dataclass(frozen=True)
class Grant:
    """A built-in role on one resource; `scope_key` names the resource stably for the GUID."""

    role: str
    scope: pulumi.Input[str]
    scope_key: str


@dataclass(frozen=True)
class WorkloadSpec:
    name: str
    namespace: str
    service_account: str
    # cluster key -> the cluster's OIDC issuer URL
    issuers: dict[str, pulumi.Input[str]]
    grants: list[Grant]
    # On-premises sites it runs on: site key -> (the connected cluster's name, its Arc issuer).
    sites: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class WorkloadIdentitiesArgs:
    naming: Naming
    region: str
    workloads: list[str]
    tags: dict[str, str] = field(default_factory=dict)
    # The unit creates its resource groups (platform:resourceGroups: program), or uses the delivery's.
    create_groups: bool = False
    # Later units hold each identity's client ID, object ID and name (service accounts, federated
    # credentials, role assignments): replacing one deletes the old at the end of this unit's
    # deploy, hours before they change (contracts/rotation.py). Protected, a deploy refuses to.
    protect: bool = False


class WorkloadIdentities(pulumi.ComponentResource):
    """One user-assigned identity per workload, in the environment's identity resource group.

    Outputs: `client_ids`, `principal_ids` and `names` (by workload), `resource_group_name`."""

    client_ids: dict[str, pulumi.Output[str]]
    principal_ids: dict[str, pulumi.Output[str]]
    names: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: WorkloadIdentitiesArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:identity:WorkloadIdentities", name, None, opts)
        naming = args.naming
        group = resource_group(
            name,
            naming.identity_group(args.region),
            args.region,
            args.tags,
            parent=self,
            create=args.create_groups,
        )
        self.client_ids, self.principal_ids, self.names = {}, {}, {}
        for workload in args.workloads:
            identity = managedidentity.UserAssignedIdentity(
                f"{name}-{workload}",
                resource_name_=naming.workload_identity(workload),
                resource_group_name=group.name,
                location=args.region,
                tags={**args.tags, "workload": workload},
                opts=pulumi.ResourceOptions(parent=self, protect=args.protect),
            )
            self.client_ids[workload] = identity.client_id
            self.principal_ids[workload] = identity.principal_id
            self.names[workload] = identity.name
        self.resource_group_name = group.name
        self.register_outputs({"clientIds": self.client_ids})


@dataclass(frozen=True)
class WorkloadAccessArgs:
    naming: Naming
    workloads: list[WorkloadSpec]
    # Each workload's identity (WorkloadIdentities): its name, object ID, and resource group.
    identity_names: Mapping[str, pulumi.Input[str]]
    principal_ids: Mapping[str, pulumi.Input[str]]
    identity_resource_group: pulumi.Input[str]
    subscription_id: pulumi.Input[str]


class WorkloadAccess(pulumi.ComponentResource):
    """What each workload's identity may do: one federated credential per cluster it runs on
    and a role assignment per grant. These change with the workloads (the tenants' layer);
    the identities themselves are the foundation's, so their client IDs stay put."""

    def __init__(self, name: str, args: WorkloadAccessArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:identity:WorkloadAccess", name, None, opts)
        naming = args.naming
        # Named (and once parented) as WorkloadIdentities'; the alias keeps them across the
        # split of a deployed single-stack environment (docs/migration.md).
        moved = moved_from(name, "platform:identity:WorkloadIdentities", opts)
        for workload in args.workloads:
            prefix = f"{name}-{workload.name}"
            previous: pulumi.Resource | None = None
            trusted = [(key, naming.cluster(key), issuer) for key, issuer in workload.issuers.items()]
            trusted += [(key, name, issuer) for key, (name, issuer) in workload.sites.items()]
            for cluster_key, credential_name, issuer in trusted:
                # One at a time: Azure rejects concurrent writes of credentials on one identity.
                previous = managedidentity.FederatedIdentityCredential(
                    f"{prefix}-{cluster_key}",
                    federated_identity_credential_resource_name=credential_name,
                    resource_name_=args.identity_names[workload.name],
                    resource_group_name=args.identity_resource_group,
                    issuer=issuer,
                    subject=service_account_subject(workload.namespace, workload.service_account),
                    audiences=[TOKEN_EXCHANGE_AUDIENCE],
                    opts=pulumi.ResourceOptions(
                        parent=self, depends_on=[previous] if previous else None, aliases=moved
                    ),
                )
            for grant in workload.grants:
                assign_role(
                    f"{prefix}-{grant.scope_key.replace('/', '-')}-{grant.role.lower().replace(' ', '-')}",
                    role=grant.role,
                    scope=grant.scope,
                    scope_key=f"{naming.environment}/{grant.scope_key}",
                    principal_id=args.principal_ids[workload.name],
                    principal_key=f"{naming.environment}/workload/{workload.name}",
                    subscription_id=args.subscription_id,
                    parent=self,
                    aliases=moved,
                )
        self.register_outputs({})
