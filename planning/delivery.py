"""What the delivery project makes, as plain data: identities, custom roles and grants.

The delivery project (`delivery/`, docs/deploying.md) creates the identities that deploy and
preview each environment, the roles they hold and the conditions that narrow them; this module
decides all of it from the project's config, and the components only register it. Grants carry
their condition as the text Azure evaluates (ABAC, conditions version 2.0), built here; the
permission and attack-path models parse that text back (offline/identities.py,
`parse_condition`) and check every operation of every unit against it.

Sources for the conditions: "Constrain roles and principal types"
(learn.microsoft.com/azure/role-based-access-control/delegate-role-assignments-examples;
writes are checked on @Request attributes, deletes on @Resource) and "Read, write, or delete
blobs in named containers with a blob path" (learn.microsoft.com/azure/storage/blobs/
storage-auth-abac-examples; lists on the blobs:prefix attribute).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from planning.entra_applications import ServedApplication
from planning.layers import LAYERS, UPSTREAM, Layer
from planning.roles import BUILT_IN_ROLES

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
GITHUB_AUDIENCE = "api://AzureADTokenExchange"

# Built-in roles the delivery grants, by the name facts/azure_roles.json records.
CONTRIBUTOR = BUILT_IN_ROLES["Contributor"]
READER = BUILT_IN_ROLES["Reader"]
RBAC_ADMINISTRATOR = BUILT_IN_ROLES["Role Based Access Control Administrator"]
NETWORK_CONTRIBUTOR = BUILT_IN_ROLES["Network Contributor"]
PRIVATE_DNS_ZONE_CONTRIBUTOR = BUILT_IN_ROLES["Private DNS Zone Contributor"]
BLOB_DATA_CONTRIBUTOR = BUILT_IN_ROLES["Storage Blob Data Contributor"]
BLOB_DATA_READER = BUILT_IN_ROLES["Storage Blob Data Reader"]
CRYPTO_USER = BUILT_IN_ROLES["Key Vault Crypto User"]
LOCKS_CONTRIBUTOR = BUILT_IN_ROLES["Locks Contributor"]
AKS_CLUSTER_ADMIN = BUILT_IN_ROLES["Azure Kubernetes Service RBAC Cluster Admin"]
GRAFANA_ADMIN = BUILT_IN_ROLES["Grafana Admin"]

# The roles each layer's program assigns (planning/roles.py, named in components/), and to
# which principal types: its deploy identity may assign and remove these and no others (no
# Owner, User Access Administrator, Role Based Access Control Administrator or Contributor),
# never to a user. tests/test_permissions.py proves each unit's assignments are admitted.
DELEGABLE: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = {
    # Key Vault Secrets Officer for the admins (components/keyvault.py); Grafana Admin and Viewer
    # for the configured groups; Monitoring Data Reader and Monitoring Reader for Grafana's own
    # identity (components/grafana.py).
    "foundation": (
        (
            (
                BUILT_IN_ROLES["Key Vault Secrets Officer"],
                BUILT_IN_ROLES["Grafana Admin"],
                BUILT_IN_ROLES["Grafana Viewer"],
            ),
            ("Group",),
        ),
        ((BUILT_IN_ROLES["Monitoring Data Reader"], BUILT_IN_ROLES["Monitoring Reader"]), ("ServicePrincipal",)),
    ),
    # Event Hubs Data Sender and Receiver for clients; Crypto Service Encryption User for the
    # storage accounts' key identity.
    "data": (
        (
            (
                BUILT_IN_ROLES["Azure Event Hubs Data Sender"],
                BUILT_IN_ROLES["Azure Event Hubs Data Receiver"],
                BUILT_IN_ROLES["Key Vault Crypto Service Encryption User"],
            ),
            ("ServicePrincipal",),
        ),
    ),
    # A cluster's own identities; cluster admin and cluster user for the platform admins' groups.
    # The MultiKueue worker role is added per environment (`environment_delivery`).
    "cluster": (
        (
            (
                NETWORK_CONTRIBUTOR,
                BUILT_IN_ROLES["Managed Identity Operator"],
                PRIVATE_DNS_ZONE_CONTRIBUTOR,
                BUILT_IN_ROLES["AcrPull"],
            ),
            ("ServicePrincipal",),
        ),
        ((AKS_CLUSTER_ADMIN, BUILT_IN_ROLES["Azure Kubernetes Service Cluster User Role"]), ("Group",)),
    ),
    # Workloads' data roles; the teams' groups' in-cluster roles. Never cluster admin.
    "tenants": (
        (
            (BLOB_DATA_READER, BLOB_DATA_CONTRIBUTOR, BUILT_IN_ROLES["Key Vault Secrets User"]),
            ("ServicePrincipal",),
        ),
        (
            (
                BUILT_IN_ROLES["Azure Kubernetes Service RBAC Writer"],
                BUILT_IN_ROLES["Azure Kubernetes Service RBAC Reader"],
                BUILT_IN_ROLES["Azure Kubernetes Service Cluster User Role"],
            ),
            ("Group",),
        ),
    ),
    "fleet": (),
}
# What a layer may assign only inside its own resource groups: AKS's control plane on its
# cluster's etcd key vault (components/etcd_encryption.py). Key Vault Contributor can switch a
# vault to access policies and give itself its secrets; delegated on the subscription, the layer
# could hand it to itself on the environment's own vaults.
# A site's Flux reads its baseline's container (components/arc_site.py): the only account in a
# cluster layer's groups, so the layer cannot hand itself another account's data.
DELEGABLE_IN_OWN_GROUPS: dict[str, tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]] = {
    "cluster": (
        (
            (BUILT_IN_ROLES["Key Vault Crypto User"], BUILT_IN_ROLES["Key Vault Contributor"], BLOB_DATA_READER),
            ("ServicePrincipal",),
        ),
    ),
}

_CLUSTERS = "Microsoft.ContainerService/managedClusters"
# What previews and the drift check read in the clusters, kind by kind: every kind the program
# manages (custom resources and admission policies are `customresources`) and no Secrets;
# Helm's release records are ConfigMaps (planning/charts.py, HELM_DRIVER). tests/test_permissions.py
# keeps this list equal to what the plans of every stack read.
PLAN_READS = (
    "namespaces",
    "configmaps",
    "serviceaccounts",
    "resourcequotas",
    "networking.k8s.io/networkpolicies",
    "rbac.authorization.k8s.io/roles",
    "rbac.authorization.k8s.io/rolebindings",
    "rbac.authorization.k8s.io/clusterroles",
    "rbac.authorization.k8s.io/clusterrolebindings",
    "policy/poddisruptionbudgets",
    "scheduling.k8s.io/priorityclasses",
    "storage.k8s.io/storageclasses",
    "storage.k8s.io/csidrivers",
    "persistentvolumes",
    "persistentvolumeclaims",
    "apps/daemonsets",
    # The serving gateway's load balancer and its certificates' sync (planning/serving.py).
    "services",
    "apps/deployments",
    "batch/cronjobs",
    "customresources",
)
# What the tenants layer writes in the clusters (not cluster admin).
TENANT_KINDS = (
    "namespaces",
    "serviceaccounts",
    "configmaps",
    "secrets",
    # The training namespaces' Lustre claims; their volumes are the cluster unit's.
    "persistentvolumeclaims",
    "networking.k8s.io/networkpolicies",
    "customresources",
)
# What MultiKueue's dispatchers do on a worker's team namespaces (planning/dispatch.py,
# worker_data_actions; tests keep the two equal).
MULTIKUEUE_KINDS = ("batch/jobs", "pods", "customresources")
_VERBS = ("read", "write", "delete")

# Resource providers and features each environment's subscription needs (tests/test_permissions.py
# keeps them equal to the plans' resource types). Encryption at host: every node pool sets it
# (learn.microsoft.com/azure/aks/enable-host-encryption#prerequisites); InfiniBand on ND-series
# pools (learn.microsoft.com/azure/aks/use-nvidia-gpu, "AKSInfinibandSupport").
RESOURCE_PROVIDERS = (
    "Microsoft.AlertsManagement",
    "Microsoft.Compute",
    "Microsoft.ContainerRegistry",
    "Microsoft.ContainerService",
    "Microsoft.DBforPostgreSQL",
    "Microsoft.Dashboard",
    "Microsoft.DocumentDB",
    "Microsoft.EventHub",
    # A site's connected cluster and its extensions (Arc's onboarding needs all three registered).
    "Microsoft.ExtendedLocation",
    "Microsoft.Insights",
    "Microsoft.KeyVault",
    "Microsoft.Kubernetes",
    "Microsoft.KubernetesConfiguration",
    "Microsoft.ManagedIdentity",
    "Microsoft.Monitor",
    "Microsoft.Network",
    "Microsoft.OperationalInsights",
    "Microsoft.PolicyInsights",
    "Microsoft.Storage",
    "Microsoft.StorageCache",
)
FEATURES = (("Microsoft.Compute", "EncryptionAtHost"), ("Microsoft.ContainerService", "AKSInfinibandSupport"))

# The shared zones each layer's endpoints register in (planning/private_link.py): join on those
# zones alone, not on the resource group, where other environments' API server subzones are.
SHARED_ZONES = {
    "foundation": ("privatelink.vaultcore.azure.net", "privatelink.azurecr.io", "privatelink.grafana.azure.com"),
    "data": (
        "privatelink.blob.core.windows.net",
        "privatelink.dfs.core.windows.net",
        "privatelink.servicebus.windows.net",
        "privatelink.documents.azure.com",
        "privatelink.postgres.database.azure.com",
    ),
}

SITE_ZONES = ("privatelink.blob.core.windows.net",)

# GUIDs of the custom roles: fixed by their name and assignable scope, so a stack file can name
# one (platform:jobs.workerRoleId) before it exists, and a re-run never makes another.
_ROLE_NAMESPACE = uuid.UUID("9a3c1f0e-6b2d-4e8f-a1c7-5d4b3e2f1a09")


@dataclass(frozen=True)
class Delivery:
    """The delivery system's shared names (docs/deploying.md, "The delivery project")."""

    prefix: str
    project: str  # the platform's Pulumi project, as its state paths name it
    subject_prefix: str  # `repo:OWNER/REPO` or GitHub's immutable `repo:OWNER@ID/REPO@ID`
    state_subscription: str
    resource_group: str
    storage_account: str
    key_vault: str
    dns_zones_resource_group_id: str
    hub_vnet_id: str

    @property
    def group_id(self) -> str:
        return f"/subscriptions/{self.state_subscription}/resourceGroups/{self.resource_group}"

    @property
    def storage_id(self) -> str:
        return f"{self.group_id}/providers/Microsoft.Storage/storageAccounts/{self.storage_account}"

    @property
    def vault_id(self) -> str:
        return f"{self.group_id}/providers/Microsoft.KeyVault/vaults/{self.key_vault}"

    def container(self, environment: str) -> str:
        return f"pulumi-state-{environment}"

    # The delivery project's own state and secrets key, moved here after its first, local run
    # (docs/deploying.md, "The delivery's own state"); only the admin group reaches them.
    own_container = "pulumi-state-delivery"
    own_key = "pulumi-state-delivery"

    def container_id(self, environment: str) -> str:
        return f"{self.storage_id}/blobServices/default/containers/{self.container(environment)}"

    def key(self, environment: str, layer: str) -> str:
        return f"pulumi-state-{environment}-{layer}"

    def key_id(self, environment: str, layer: str) -> str:
        return f"{self.vault_id}/keys/{self.key(environment, layer)}"

    def deployer(self, environment: str, layer: str) -> str:
        return f"id-{self.prefix}-deploy-{environment}-{layer}"

    def planner(self, environment: str, layer: str) -> str:
        return f"id-{self.prefix}-plan-{environment}-{layer}"

    def zone_id(self, zone: str) -> str:
        return f"{self.dns_zones_resource_group_id}/providers/Microsoft.Network/privateDnsZones/{zone}"


@dataclass(frozen=True)
class EnvironmentAccess:
    """One environment as the delivery sees it."""

    name: str
    subscription: str
    peered: bool = False  # its VNets peer with the hub, its endpoints register in the hub's zones
    own_hub: bool = False  # it has the hub to itself and writes the hub's side of its peerings
    api_server_zone_ids: tuple[str, ...] = ()  # its own subzones of the hub's API server zones
    reservation_scopes: tuple[str, ...] = ()  # capacity reservation groups its clusters use
    # (layer, name, region) of each unit's resource group, which the delivery creates and grants
    # on (components/platform/groups.py); empty: the units make their own and their deploy
    # identities hold Contributor on the subscription (platform:resourceGroups: program).
    resource_groups: tuple[tuple[str, str, str], ...] = ()
    # Where the tenants layer writes: the workload identities' group (their federated
    # credentials) and the clusters' groups (the teams' in-cluster objects); Grafana's group
    # (its dashboards).
    tenant_groups: tuple[str, ...] = ()
    grafana_group: str | None = None
    # The served APIs' Entra applications (planning/entra_applications.py), and whether their
    # callers' identities exist to be assigned roles (delivery:environments.<env>.servingCallers).
    applications: tuple[ServedApplication, ...] = ()
    serving_callers: bool = False

    def group_id(self, name: str) -> str:
        return f"/subscriptions/{self.subscription}/resourceGroups/{name}"

    def network_scopes(self) -> list[str]:
        """The foundation's network and privatelink zone groups, which other layers join."""
        return [
            self.group_id(name)
            for owner, name, _ in self.resource_groups
            if owner == "foundation" and name.endswith(("-network", "-dns"))
        ]

    def database_scopes(self) -> list[str]:
        """The data layer's databases groups (Cosmos DB, PostgreSQL), or the subscription."""
        if not self.resource_groups:
            return [f"/subscriptions/{self.subscription}"]
        return [
            self.group_id(name)
            for owner, name, _ in self.resource_groups
            if owner == "data" and name.endswith("-databases")
        ]

    def site_scopes(self) -> list[str]:
        """The cluster layer's groups of on-premises sites (their connected clusters, the baselines'
        accounts): planning/naming.py, `site_group`."""
        return [
            self.group_id(name)
            for owner, name, _ in self.resource_groups
            if owner == "cluster" and name.endswith("-site")
        ]

    def ops_scopes(self) -> list[str]:
        """The foundation's ops groups (the workspaces)."""
        return [
            self.group_id(name)
            for owner, name, _ in self.resource_groups
            if owner == "foundation" and name.endswith("-ops")
        ]

    def layer_scopes(self, layer: str) -> list[str]:
        """Where a layer's deploy identity writes: its groups, or the subscription."""
        if not self.resource_groups:
            return [f"/subscriptions/{self.subscription}"]
        if layer == "tenants":
            return [self.group_id(name) for name in self.tenant_groups]
        return [self.group_id(name) for owner, name, _ in self.resource_groups if owner == layer]


@dataclass(frozen=True)
class CustomRoleSpec:
    name: str
    description: str
    actions: tuple[str, ...]
    data_actions: tuple[str, ...]
    scope: str  # the one assignable scope

    @property
    def guid(self) -> str:
        return custom_role_guid(self.name, self.scope)


@dataclass(frozen=True)
class IdentitySpec:
    name: str
    environment: str
    layer: str
    kind: str  # "deploy" or "plan"
    github_environment: str

    def subject(self, subject_prefix: str) -> str:
        # Exact (Entra matches no wildcard); GitHub issues it only to a job in that environment.
        return f"{subject_prefix}:environment:{self.github_environment}"


@dataclass(frozen=True)
class GrantSpec:
    identity: str
    role: str  # a built-in role's GUID, or a custom role's name
    scope: str
    why: str
    condition: str | None = None


@dataclass
class EnvironmentDelivery:
    environment: EnvironmentAccess
    custom_roles: list[CustomRoleSpec] = field(default_factory=list)
    identities: list[IdentitySpec] = field(default_factory=list)
    grants: list[GrantSpec] = field(default_factory=list)


def custom_role_guid(name: str, scope: str) -> str:
    return str(uuid.uuid5(_ROLE_NAMESPACE, f"{scope.lower()}|{name}"))


def delegation(specs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> str:
    """A condition that lets a Role Based Access Control Administrator assign and remove only
    these roles, each to these principal types. Conditions cannot limit the scope: the
    assignment's own scope does that."""
    writes: list[str] = []
    deletes: list[str] = []
    for roles, types in specs:
        role_list = ", ".join(roles)
        type_list = ", ".join(f"'{t}'" for t in types)
        for side, into in (("Request", writes), ("Resource", deletes)):
            into.append(
                f"(@{side}[Microsoft.Authorization/roleAssignments:RoleDefinitionId] ForAnyOfAnyValues:GuidEquals "
                f"{{{role_list}}} AND @{side}[Microsoft.Authorization/roleAssignments:PrincipalType] "
                f"ForAnyOfAnyValues:StringEqualsIgnoreCase {{{type_list}}})"
            )
    return (
        f"((!(ActionMatches{{'Microsoft.Authorization/roleAssignments/write'}})) OR ({' OR '.join(writes)})) AND "
        f"((!(ActionMatches{{'Microsoft.Authorization/roleAssignments/delete'}})) OR ({' OR '.join(deletes)}))"
    )


_BLOBS = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs"


def state_condition(paths: Sequence[str], prefixes: Sequence[str] = ()) -> str:
    """A condition on a state container's blob role: reads, writes and deletes only of blobs whose
    path matches one of `paths` (StringLike), lists only under one of `prefixes` (none: no list)."""
    matched = " OR ".join(f"@Resource[{_BLOBS}:path] StringLike '{p}'" for p in paths)
    text = (
        f"((!(ActionMatches{{'{_BLOBS}/read'}} AND NOT SubOperationMatches{{'Blob.List'}}) AND "
        f"!(ActionMatches{{'{_BLOBS}/write'}}) AND !(ActionMatches{{'{_BLOBS}/add/action'}}) AND "
        f"!(ActionMatches{{'{_BLOBS}/delete'}})) OR ({matched}))"
    )
    if prefixes:
        listed = " OR ".join(f"@Request[{_BLOBS}:prefix] StringStartsWith '{p}'" for p in prefixes)
        return (
            text + f" AND ((!(ActionMatches{{'{_BLOBS}/read'}} AND SubOperationMatches{{'Blob.List'}})) OR ({listed}))"
        )
    return text + f" AND (!(ActionMatches{{'{_BLOBS}/read'}} AND SubOperationMatches{{'Blob.List'}}))"


def stacks_of(environment: str, layer: str) -> str:
    """The stacks of a layer as a pattern: prod.foundation, prod.cluster-* (one per cluster)."""
    return f"{environment}.cluster-*" if layer == "cluster" else f"{environment}.{layer}"


def own_state(project: str, environment: str, layer: Layer) -> str:
    """What a layer's stacks read and write in the state container, as the DIY backend lays it
    out (pulumi/pulumi pkg/backend/diy: the stack file and its .bak and .gz forms, its
    .pulumi-tags, history, backups, locks/organization/<project>/<stack>); lists: its lock
    folder and its history (the Automation API reads the last update after `up`)."""
    stacks = stacks_of(environment, layer)
    folder = stacks.removesuffix("*")
    return state_condition(
        [
            f".pulumi/stacks/{project}/{stacks}.json*",
            f".pulumi/stacks/{project}/{stacks}.pulumi-tags",
            f".pulumi/history/{project}/{stacks}/*",
            f".pulumi/backups/{project}/{stacks}/*",
            f".pulumi/locks/organization/{project}/{stacks}/*",
        ],
        [f".pulumi/locks/organization/{project}/{folder}", f".pulumi/history/{project}/{folder}"],
    )


def read_state(project: str, environment: str, layer: Layer) -> str:
    """The state files a layer reads: its own (with its tags), its upstream layers' (a
    StackReference reads the whole state file), and the backend's meta.yaml."""
    paths = [".pulumi/meta.yaml", f".pulumi/stacks/{project}/{stacks_of(environment, layer)}.pulumi-tags"]
    paths += [f".pulumi/stacks/{project}/{stacks_of(environment, other)}.json*" for other in (layer, *UPSTREAM[layer])]
    return state_condition(paths)


def _kinds(kinds: Iterable[str], verbs: Iterable[str]) -> tuple[str, ...]:
    return tuple(f"{_CLUSTERS}/{kind}/{verb}" for kind in kinds for verb in verbs)


def environment_roles(delivery: Delivery, env: EnvironmentAccess) -> dict[str, CustomRoleSpec]:
    """The custom roles of one environment, assignable in its subscription only, by purpose."""
    scope = f"/subscriptions/{env.subscription}"
    tag = f"{delivery.prefix}-{env.name}"
    roles = {}
    if env.resource_groups:
        # Linked access into the foundation's groups, which Contributor on one's own groups does
        # not give: an endpoint or a node pool joins the foundation's subnet, a zone group its
        # zone (learn.microsoft.com/azure/private-link/rbac-permissions).
        roles["joiner"] = CustomRoleSpec(
            f"Platform network joiner ({tag})",
            f"Joins {env.name}'s subnets and privatelink zones: join and read only",
            (
                "Microsoft.Network/virtualNetworks/read",
                "Microsoft.Network/virtualNetworks/subnets/read",
                "Microsoft.Network/virtualNetworks/subnets/join/action",
                "Microsoft.Network/privateDnsZones/read",
                "Microsoft.Network/privateDnsZones/join/action",
            ),
            (),
            scope,
        )
        # Diagnostic settings in other layers send to the foundation's workspaces, and Azure checks
        # the caller may read a workspace's shared keys (the workspaces take no shared-key
        # ingestion: components/observability.py disables local auth).
        roles["logs"] = CustomRoleSpec(
            f"Platform log sender ({tag})",
            f"Sends {env.name}'s resource logs to its workspaces: read them and their shared keys only",
            (
                "Microsoft.OperationalInsights/workspaces/read",
                "Microsoft.OperationalInsights/workspaces/sharedKeys/action",
            ),
            (),
            scope,
        )
        # The fleet joins the clusters as members and runs their updates: membership and write
        # on the clusters, not Contributor on their groups.
        roles["fleet"] = CustomRoleSpec(
            f"Platform fleet member writer ({tag})",
            f"Joins {env.name}'s clusters to its fleet: the clusters' memberships, read and write",
            (
                f"{_CLUSTERS}/read",
                f"{_CLUSTERS}/write",
                "Microsoft.ContainerService/fleetMemberships/read",
                "Microsoft.ContainerService/fleetMemberships/write",
                "Microsoft.ContainerService/fleetMemberships/delete",
            ),
            (),
            scope,
        )
    return roles | {
        "multikueue": CustomRoleSpec(
            f"Platform MultiKueue worker ({tag})",
            f"Creates and deletes the jobs MultiKueue hands to a worker of {env.name}: "
            "assigned by the program on single team namespaces",
            (),
            _kinds(MULTIKUEUE_KINDS, _VERBS),
            scope,
        ),
        "policy": CustomRoleSpec(
            f"Platform policy assigner ({tag})",
            f"Assigns Azure Policy definitions in {env.name}: policy assignments only, never definitions or exemptions",
            tuple(f"Microsoft.Authorization/policyAssignments/{verb}" for verb in _VERBS),
            (),
            scope,
        ),
        "reader": CustomRoleSpec(
            f"Platform in-cluster reader ({tag})",
            f"Read-only previews of {env.name}: cluster user credentials and the kinds the program manages, no Secrets",
            (f"{_CLUSTERS}/read", f"{_CLUSTERS}/listClusterUserCredential/action"),
            _kinds(PLAN_READS, ("read",)),
            scope,
        ),
        # Cosmos DB's data roles are the account's own, written through ARM: the tenants layer
        # assigns them (components/cosmos_db.py, CosmosDataAccess) on the databases' group only.
        # A write is a long-running operation whose result the client polls, authorized apart
        # (Azure/bicep#14976): the layer's Role Based Access Control Administrator on the
        # subscription reads (`*/read`), which the permission model checks.
        "cosmos": CustomRoleSpec(
            f"Platform Cosmos DB data access writer ({tag})",
            f"Assigns the workloads' Cosmos DB data roles in {env.name}: the accounts' role assignments only",
            (
                "Microsoft.DocumentDB/databaseAccounts/read",
                "Microsoft.DocumentDB/databaseAccounts/sqlRoleDefinitions/read",
                *(f"Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments/{verb}" for verb in _VERBS),
            ),
            (),
            scope,
        ),
        "tenants": CustomRoleSpec(
            f"Platform tenant writer ({tag})",
            f"The tenants layer of {env.name}: workload identities' federated credentials, "
            "and in the clusters only the kinds teams own",
            tuple(
                f"Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials/{verb}"
                for verb in _VERBS
            ),
            _kinds(TENANT_KINDS, _VERBS),
            scope,
        ),
    }


def hub_roles(delivery: Delivery) -> dict[str, CustomRoleSpec]:
    """The hub's custom roles (made once, when an environment peers with the hub).

    Joining a zone is all an endpoint or a private cluster takes
    (learn.microsoft.com/azure/private-link/rbac-permissions), not Private DNS Zone Contributor,
    which could change the zones and their links; a spoke's half of its peering needs peer/action
    on the remote VNet and nothing else of it
    (learn.microsoft.com/azure/virtual-network/virtual-network-manage-peering#permissions)."""
    return {
        "joiner": CustomRoleSpec(
            f"Platform private DNS zone joiner ({delivery.prefix})",
            "Joins private endpoints and private clusters to the hub's privatelink zones: join only",
            ("Microsoft.Network/privateDnsZones/read", "Microsoft.Network/privateDnsZones/join/action"),
            (),
            delivery.dns_zones_resource_group_id,
        ),
        "peer": CustomRoleSpec(
            f"Platform hub peer ({delivery.prefix})",
            "Peers an environment's VNets with the hub VNet: peer only, never the hub's own peerings",
            ("Microsoft.Network/virtualNetworks/read", "Microsoft.Network/virtualNetworks/peer/action"),
            (),
            delivery.hub_vnet_id,
        ),
    }


_KEYS = "Microsoft.KeyVault/vaults/keys"


def state_key_roles(delivery: Delivery) -> dict[str, CustomRoleSpec]:
    """What the units do with the state's secrets keys, and nothing else: the secrets provider
    (`azurekeyvault://`, gocloud's keeper) encrypts and decrypts. Key Vault Crypto User would
    also let them update a key (`keys/update/action`: disable it, expire it, change its
    operations), and an update is a write no one can undo through ARM; the preview environments
    admit every branch, so a branch's job could disable prod's keys."""
    return {
        "reader": CustomRoleSpec(
            f"Platform state key reader ({delivery.prefix})",
            "Decrypts a stack's secrets with its state key: read and decrypt only",
            (),
            (f"{_KEYS}/read", f"{_KEYS}/decrypt/action"),
            delivery.vault_id,
        ),
        "user": CustomRoleSpec(
            f"Platform state key user ({delivery.prefix})",
            "Encrypts and decrypts a stack's secrets with its state key: never updates or deletes the key",
            (),
            (f"{_KEYS}/read", f"{_KEYS}/encrypt/action", f"{_KEYS}/decrypt/action"),
            delivery.vault_id,
        ),
    }


def state_writer_role(delivery: Delivery) -> CustomRoleSpec:
    """What a layer's deploy identity does in its environment's state container: the blob
    actions the DIY backend uses (narrowed to its own stacks' paths by the grant's condition).
    Storage Blob Data Contributor would also let it delete or lease the whole container, every
    layer's state at once (containers/delete and containers/write)."""
    return CustomRoleSpec(
        f"Platform state writer ({delivery.prefix})",
        "Reads, writes and deletes its own stacks' state blobs: never the container",
        ("Microsoft.Storage/storageAccounts/blobServices/containers/read",),
        tuple(f"{_BLOBS}/{verb}" for verb in ("read", "write", "delete", "add/action")),
        delivery.storage_id,
    )


# What a layer writes into groups it does not own, each through a custom role that does only
# that (environment_roles): endpoints and node pools join the foundation's subnets and zones,
# diagnostic settings send to its workspaces, the fleet joins the clusters.
_JOIN = ("joiner", EnvironmentAccess.network_scopes, "joins {env}'s subnets and zones in {group}")
_LOGS = ("logs", EnvironmentAccess.ops_scopes, "sends logs to {env}'s workspaces in {group}")
CROSS_GROUP: dict[str, tuple[tuple[str, Callable[[EnvironmentAccess], list[str]], str], ...]] = {
    "data": (_LOGS, _JOIN),
    "cluster": (_LOGS, _JOIN),
    "fleet": (("fleet", lambda env: env.layer_scopes("cluster"), "joins {env}'s cluster in {group} to the fleet"),),
}


def _in(scope: str, subscription: str) -> str:
    return "" if scope == subscription else f" in {scope.rsplit('/', 1)[-1]}"


def environment_delivery(delivery: Delivery, env: EnvironmentAccess) -> EnvironmentDelivery:
    """One environment's identities (a deploy and a plan identity per layer), its custom roles
    and every grant, in the order the deploy needs them."""
    result = EnvironmentDelivery(env)
    roles = environment_roles(delivery, env)
    hub = hub_roles(delivery)
    keys = state_key_roles(delivery)
    result.custom_roles = list(roles.values())
    subscription = f"/subscriptions/{env.subscription}"
    container = delivery.container_id(env.name)
    project, name = delivery.project, env.name

    def grant(identity: str, role: str, scope: str, why: str, condition: str | None = None) -> None:
        result.grants.append(GrantSpec(identity, role, scope, f"{identity}: {why}", condition))

    for layer in LAYERS:
        deployer = delivery.deployer(name, layer)
        result.identities.append(IdentitySpec(deployer, name, layer, "deploy", f"{name}-{layer}"))
        scopes = env.layer_scopes(layer)
        if layer == "tenants":
            for scope in scopes:
                grant(
                    deployer,
                    roles["tenants"].name,
                    scope,
                    f"federated credentials and the teams' in-cluster objects in {name}"
                    + (f" ({scope.rsplit('/', 1)[-1]})" if scope != subscription else ""),
                )
            for scope in env.database_scopes():
                grant(deployer, roles["cosmos"].name, scope, f"assigns the workloads' Cosmos DB data roles in {name}")
            # A data action on Managed Grafana only: the environment's one instance.
            grafana = env.group_id(env.grafana_group) if env.resource_groups and env.grafana_group else subscription
            grant(deployer, GRAFANA_ADMIN, grafana, f"provisions {name}'s Grafana dashboards (dashboards/)")
        elif env.resource_groups:
            for scope in scopes:
                grant(deployer, CONTRIBUTOR, scope, f"Contributor on {name}'s {layer} group {scope.rsplit('/', 1)[-1]}")
            # Reads across groups as Contributor on the subscription gave them (a reference, a
            # resource provider's own read of what a resource names): reading changes nothing.
            grant(deployer, READER, subscription, f"reads {name}'s subscription")
            for role_key, scopes_of, why in CROSS_GROUP.get(layer, ()):
                for scope in scopes_of(env):
                    grant(deployer, roles[role_key].name, scope, why.format(env=name, group=scope.rsplit("/", 1)[-1]))
        else:
            # Units that create their own resource groups (platform:resourceGroups: program):
            # those do not exist to be scoped to before.
            grant(deployer, CONTRIBUTOR, subscription, f"Contributor on {name}'s subscription")
        specs = list(DELEGABLE[layer])
        if layer == "cluster":
            specs.append(((roles["multikueue"].guid,), ("ServicePrincipal",)))
        own = DELEGABLE_IN_OWN_GROUPS.get(layer, ())
        if own and env.resource_groups:
            for scope in scopes:
                grant(
                    deployer,
                    RBAC_ADMINISTRATOR,
                    scope,
                    f"assigns the {layer} layer's roles in its group {scope.rsplit('/', 1)[-1]}",
                    delegation(list(own)),
                )
        else:
            # Contributor on the subscription already writes every vault there.
            specs += own
        if specs:
            grant(
                deployer,
                RBAC_ADMINISTRATOR,
                subscription,
                f"assigns the {layer} layer's roles on {name}'s subscription",
                delegation(specs),
            )
        # The cluster layer's: its clusters' etcd key vaults.
        if layer in ("foundation", "data", "cluster"):
            for scope in scopes:
                grant(
                    deployer, LOCKS_CONTRIBUTOR, scope, f"locks {name}'s stateful resources{_in(scope, subscription)}"
                )
        if layer == "cluster":
            for scope in scopes:
                grant(
                    deployer,
                    roles["policy"].name,
                    scope,
                    f"assigns the pod security initiative on {name}'s clusters{_in(scope, subscription)}",
                )
                # The only identity with cluster admin: the platform's in-cluster baseline.
                grant(
                    deployer,
                    AKS_CLUSTER_ADMIN,
                    scope,
                    f"manages the in-cluster platform of {name}'s clusters{_in(scope, subscription)}",
                )
            # A site's baseline is uploaded after `up` (scripts/site_baseline.py): the site's group
            # holds one account, its baseline's. Data actions: Contributor on the group has none.
            for scope in env.site_scopes():
                grant(
                    deployer,
                    BLOB_DATA_CONTRIBUTOR,
                    scope,
                    f"uploads the baseline of {name}'s site in {scope.rsplit('/', 1)[-1]} (scripts/site_baseline.py)",
                )
        if env.peered:
            # A site's baseline account registers its blob endpoint (components/arc_site.py).
            site_zones = SITE_ZONES if layer == "cluster" and env.site_scopes() else ()
            for zone in (*SHARED_ZONES.get(layer, ()), *site_zones):
                grant(
                    deployer,
                    hub["joiner"].name,
                    delivery.zone_id(zone),
                    f"registers {name}'s endpoints in the hub's {zone}",
                )
            if layer == "foundation":
                grant(deployer, hub["peer"].name, delivery.hub_vnet_id, f"peers {name}'s VNets with the hub")
                if env.own_hub:
                    grant(
                        deployer,
                        NETWORK_CONTRIBUTOR,
                        delivery.hub_vnet_id,
                        f"writes the hub's side of the peerings of {name}, which has the hub to itself",
                    )
                for zone in env.api_server_zone_ids:
                    grant(
                        deployer,
                        PRIVATE_DNS_ZONE_CONTRIBUTOR,
                        zone,
                        f"links {name}'s VNets to its API server subzone {zone.rsplit('/', 1)[-1]}",
                    )
            if layer == "cluster":
                for zone in env.api_server_zone_ids:
                    short = zone.rsplit("/", 1)[-1]
                    grant(deployer, hub["joiner"].name, zone, f"names {name}'s API server subzone {short}")
                    grant(
                        deployer,
                        RBAC_ADMINISTRATOR,
                        zone,
                        f"lets {name}'s clusters write their API server records in {short}",
                        delegation([((PRIVATE_DNS_ZONE_CONTRIBUTOR,), ("ServicePrincipal",))]),
                    )
        if layer == "cluster":
            # AKS places reserved nodes only if the cluster identity is Contributor on the group.
            for scope in env.reservation_scopes:
                if scope.lower().startswith(f"{subscription.lower()}/"):
                    grant(
                        deployer,
                        RBAC_ADMINISTRATOR,
                        scope,
                        f"lets {name}'s clusters place nodes on {scope.rsplit('/', 1)[-1]}",
                        delegation([((CONTRIBUTOR,), ("ServicePrincipal",))]),
                    )
        # State: its own stacks' blobs, the upstream layers' state files, its key and theirs.
        grant(
            deployer,
            state_writer_role(delivery).name,
            container,
            f"writes the {name} {layer} state",
            own_state(project, name, layer),
        )
        grant(
            deployer,
            BLOB_DATA_READER,
            container,
            f"reads the {name} {layer} and upstream states",
            read_state(project, name, layer),
        )
        grant(deployer, keys["user"].name, delivery.key_id(name, layer), f"encrypts the {name} {layer} secrets")
        for other in UPSTREAM[layer]:
            grant(
                deployer,
                keys["reader"].name,
                delivery.key_id(name, other),
                f"decrypts the {name} {other} outputs it references",
            )

        planner = delivery.planner(name, layer)
        result.identities.append(IdentitySpec(planner, name, layer, "plan", f"{name}-{layer}-preview"))
        grant(planner, READER, subscription, f"reads {name}'s subscription")
        if layer in ("cluster", "tenants"):
            grant(planner, roles["reader"].name, subscription, f"reads {name}'s clusters")
        grant(
            planner,
            BLOB_DATA_READER,
            container,
            f"reads the {name} {layer} and upstream states",
            read_state(project, name, layer),
        )
        for other in (layer, *UPSTREAM[layer]):
            grant(planner, keys["reader"].name, delivery.key_id(name, other), f"decrypts the {name} {other} secrets")
        if layer in ("foundation", "cluster"):
            for zone in env.api_server_zone_ids:
                grant(planner, READER, zone, f"reads {name}'s API server subzone {zone.rsplit('/', 1)[-1]}")
    return result


def stack_init_commands(
    delivery: Delivery, environment: str, subscription: str, stacks: Sequence[tuple[str, str]]
) -> list[str]:
    """The one-time commands that create an environment's unit stacks (`stacks`: stack, layer):
    sign in to its state container, then each stack with its layer's key as secrets provider and
    its provider pinned to the environment's subscription (platform:subscriptionId). Every line
    is a complete shell command: nothing to edit, nothing commented out."""
    lines = [f"pulumi login 'azblob://{delivery.container(environment)}?storage_account={delivery.storage_account}'"]
    for stack, layer in stacks:
        key = f"azurekeyvault://{delivery.key_vault}.vault.azure.net/keys/{delivery.key(environment, layer)}"
        lines.append(f"pulumi stack init {stack} --secrets-provider '{key}'")
        lines.append(f"pulumi config set --stack {stack} azure-native:subscriptionId {subscription}")
    return lines
