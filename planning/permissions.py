"""The permission model: what a deployment does to Azure and Kubernetes, and who may do it.

Pure functions over a captured plan (offline/engine.py) and role definitions
(facts/azure_roles.py). `deploy_operations` lists every ARM and data-plane operation that
`pulumi up` of the plan performs, `preview_operations` those a preview or a drift check
(`pulumi preview --refresh`) performs, each at the scope Azure evaluates it. `check`
evaluates them against an identity's role assignments with Azure's semantics: an action is
allowed when a role assigned at the scope or above has an `actions` (or `dataActions`)
pattern that matches it and no `notActions` pattern of the same role that does; patterns
are case-insensitive and `*` matches any characters
(learn.microsoft.com/azure/role-based-access-control/role-definitions#actions).

Facts behind the linked operations (the "linked access checks" ARM makes on resources a
request references):
- a subnet, NSG, route table, NAT gateway or public IP that a resource attaches needs
  `join/action` on it (learn.microsoft.com/azure/virtual-network/virtual-network-manage-subnet#permissions,
  .../virtual-network-network-interface#permissions);
- a user-assigned identity given to a resource needs `assign/action` on the identity
  (learn.microsoft.com/entra/identity/managed-identities-azure-resources/how-manage-user-assigned-managed-identities);
- a peering needs `peer/action` on the remote VNet, a private DNS link `join/action` on the
  linked VNet (.../virtual-network-manage-peering#permissions, private DNS link docs);
- a private endpoint's DNS zone group needs `join/action` on every zone it writes to, and an
  auto-approved private endpoint `privateEndpointConnectionsApproval/action` on its target
  (learn.microsoft.com/azure/private-link/rbac-permissions).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from facts.aks_rbac import data_action
from facts.arm import UnknownArmType, arm_type, resource_id
from planning.charts import HELM_DRIVER
from planning.layers import parse_stack

AKS = "Microsoft.ContainerService/managedClusters"
USER_CREDENTIALS = f"{AKS}/listClusterUserCredential/action"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
# What an invoke needs: getClientConfig and getClientToken read only the caller's own token
# (getClientToken asks Entra ID for one to another audience: Managed Grafana's).
INVOKE_ACTIONS: dict[str, str | None] = {
    "azure-native:authorization:getClientConfig": None,
    "azure-native:authorization:getClientToken": None,
    "azure-native:containerservice:listManagedClusterUserCredentials": USER_CREDENTIALS,
    # A site's Container Insights names its workspace by customer ID (components/arc_site.py).
    "azure-native:operationalinsights:getWorkspace": "Microsoft.OperationalInsights/workspaces/read",
}

# Linked access checks: a reference to a resource of the key type needs this action on it.
LINKED_ACTIONS: dict[str, str] = {
    "Microsoft.Network/virtualNetworks/subnets": "join/action",
    "Microsoft.Network/networkSecurityGroups": "join/action",
    "Microsoft.Network/routeTables": "join/action",
    "Microsoft.Network/natGateways": "join/action",
    "Microsoft.Network/publicIPAddresses": "join/action",
    "Microsoft.Network/privateDnsZones": "join/action",
    "Microsoft.ManagedIdentity/userAssignedIdentities": "assign/action",
}
# Where the referencing type decides the action instead.
LINKED_ACTIONS_BY_REFERRER: dict[tuple[str, str], str] = {
    ("Microsoft.Network/virtualNetworks/virtualNetworkPeerings", "Microsoft.Network/virtualNetworks"): "peer/action",
    ("Microsoft.Network/privateDnsZones/virtualNetworkLinks", "Microsoft.Network/virtualNetworks"): "join/action",
    # A fleet member writes its membership onto the member cluster: the caller needs write on the
    # cluster (learn.microsoft.com/azure/kubernetes-fleet/quickstart-create-fleet-and-members,
    # "Prerequisites": managedClusters/write, fleetMemberships/write).
    ("Microsoft.ContainerService/fleets/members", "Microsoft.ContainerService/managedClusters"): "write",
    # A diagnostic setting sending to a workspace checks the caller may read its shared keys
    # (learn.microsoft.com/azure/azure-monitor/logs/manage-access, "use the workspace as a
    # destination for diagnostic settings"; JimGBritt/AzurePolicy#17: LinkedAuthorizationFailed).
    ("Microsoft.Insights/diagnosticSettings", "Microsoft.OperationalInsights/workspaces"): "sharedKeys/action",
}
# Inputs that name the resource an extension resource or a child lives on, not a link.
NOT_LINKS = frozenset({"scope", "resourceUri", "id"})

_ARM_ID = re.compile(r"(?i)^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/([^/]+)/(.+)$")


@dataclass(frozen=True)
class Operation:
    action: str
    # The resource ID (or scope) Azure evaluates the action at.
    scope: str
    # Whose request it is: the resource (type and logical name) or call that needs it.
    needed_by: str
    data: bool = False
    # Attributes a role-assignment condition sees (`RoleDefinitionId`, `PrincipalType`).
    attributes: tuple[tuple[str, str], ...] = ()

    def attribute(self, name: str) -> str | None:
        return dict(self.attributes).get(name)


@dataclass(frozen=True)
class RoleDefinition:
    name: str
    id: str
    actions: tuple[str, ...] = ()
    not_actions: tuple[str, ...] = ()
    data_actions: tuple[str, ...] = ()
    not_data_actions: tuple[str, ...] = ()

    def allows(self, action: str, data: bool) -> bool:
        allowed, denied = (self.data_actions, self.not_data_actions) if data else (self.actions, self.not_actions)
        return any(matches(p, action) for p in allowed) and not any(matches(p, action) for p in denied)


BLOBS = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs"
# A blob operation's attributes, as a storage condition sees them
# (learn.microsoft.com/azure/storage/blobs/storage-auth-abac-attributes): the blob's path
# below its container, or for a list (`blobs/read` with suboperation Blob.List) its prefix.
BLOB_PATH = "path"
BLOB_PREFIX = "prefix"
# The name of the Kubernetes object a request names (a Role's `resourceNames` sees it).
OBJECT_NAME = "name"


@dataclass(frozen=True)
class Condition:
    """An ABAC condition on a role assignment, as the sets of attributes it admits.

    The shapes the delivery writes (planning/delivery.py): for role-assignment delegation, pairs of (role
    definitions, principal types) a `roleAssignments/write` may name (a delete: the role);
    for state blobs, the paths (`fnmatch` patterns, the condition's StringLike) a blob may
    have and the prefixes (StringStartsWith) a list may ask for.
    """

    role_pairs: tuple[tuple[frozenset[str], frozenset[str]], ...] | None = None
    blob_paths: frozenset[str] | None = None
    blob_prefixes: frozenset[str] | None = None
    # A Kubernetes rule's `resourceNames`: only requests that name one of these objects.
    object_names: frozenset[str] | None = None

    def admits(self, operation: Operation) -> bool:
        if self.object_names is not None:
            return operation.attribute(OBJECT_NAME) in self.object_names
        action = operation.action.lower()
        # The delegation condition constrains writes and deletes (its ActionMatches clauses);
        # reading assignments it leaves alone.
        if (
            action.startswith("microsoft.authorization/roleassignments/")
            and action.endswith(("/write", "/delete"))
            and self.role_pairs is not None
        ):
            role = (operation.attribute("RoleDefinitionId") or "").lower()
            principal_type = (operation.attribute("PrincipalType") or "").lower()
            writes = action.endswith("/write")
            return any(role in roles and (not writes or principal_type in types) for roles, types in self.role_pairs)
        if action.startswith(BLOBS.lower() + "/"):
            prefix = operation.attribute(BLOB_PREFIX)
            if prefix is not None:
                return self.blob_prefixes is None or any(prefix.startswith(p) for p in self.blob_prefixes)
            path = operation.attribute(BLOB_PATH) or ""
            return self.blob_paths is None or any(fnmatch.fnmatchcase(path, p) for p in self.blob_paths)
        return True


@dataclass(frozen=True)
class Grant:
    """One role assignment of an identity: a role at a scope, perhaps with a condition."""

    role: RoleDefinition
    scope: str
    condition: Condition | None = None
    why: str = ""

    def covers(self, operation: Operation) -> bool:
        return (
            in_scope(operation.scope, self.scope)
            and self.role.allows(operation.action, operation.data)
            and (self.condition is None or self.condition.admits(operation))
        )


@dataclass(frozen=True)
class Denial:
    identity: str
    operation: Operation

    def __str__(self) -> str:
        kind = "data action" if self.operation.data else "action"
        blob = self.operation.attribute(BLOB_PATH) or self.operation.attribute(BLOB_PREFIX)
        what = f" ({'blob' if self.operation.attribute(BLOB_PATH) else 'list of'} {blob})" if blob else ""
        return (
            f"{self.identity} may not {self.operation.action} ({kind}) at {self.operation.scope}{what}, "
            f"which {self.operation.needed_by} needs"
        )


def matches(pattern: str, action: str) -> bool:
    """Azure's action matching: case-insensitive, `*` any characters (slashes included)."""
    return fnmatch.fnmatchcase(action.lower(), pattern.lower().replace("[", "[[]"))


def in_scope(scope: str, granted_at: str) -> bool:
    """Whether a role assigned at `granted_at` applies at `scope` (the scope or below it)."""
    scope, granted_at = scope.lower().rstrip("/"), granted_at.lower().rstrip("/")
    return granted_at in ("", "/") or scope == granted_at or scope.startswith(granted_at + "/")


def check(identity: str, grants: Sequence[Grant], operations: Iterable[Operation]) -> list[Denial]:
    """Every operation none of the identity's grants allows."""
    return [Denial(identity, op) for op in operations if not any(g.covers(op) for g in grants)]


# ---------------------------------------------------------------------------------------------
# What a plan does
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Backend:
    """Where an environment's stacks keep their state and secrets (the delivery project): one
    container, a path per stack inside it, and a secrets key per deployment layer."""

    state_container_id: str
    # layer -> the Key Vault key its stacks' secrets are encrypted with
    secrets_key_ids: Mapping[str, str]
    project: str = "platform"

    def key_of(self, stack: str) -> str:
        _, unit = parse_stack(stack)
        return self.secrets_key_ids[unit.layer if unit else "foundation"]

    def own_paths(self, stack: str) -> list[str]:
        """The blobs `pulumi up` of `stack` reads and writes, as the DIY backend lays them out
        (pulumi/pulumi pkg/backend/diy/store.go: StackBasePath, HistoryDir, BackupDir;
        stack_tags.go: `<stack>.pulumi-tags`, read before every update and preview (state.go,
        getTarget); lock.go: stackLockDir under `.pulumi/locks/<organization/project/stack>`)."""
        return [
            f".pulumi/stacks/{self.project}/{stack}.json",
            self.tags_path(stack),
            f".pulumi/history/{self.project}/{stack}/{stack}-0.history.json",
            f".pulumi/backups/{self.project}/{stack}/{stack}.0.json",
            f".pulumi/locks/organization/{self.project}/{stack}/0.json",
        ]

    def tags_path(self, stack: str) -> str:
        return f".pulumi/stacks/{self.project}/{stack}.pulumi-tags"

    def list_prefixes(self, stack: str) -> list[str]:
        """What `up` lists: its lock folder (lock.go, checkForLock) and, through the Automation
        API that pulumi/actions drives, its history (`stack.up` ends with `info()`, which is
        `pulumi stack history`: state.go getHistory lists HistoryDir)."""
        return [f".pulumi/locks/organization/{self.project}/{stack}/", f".pulumi/history/{self.project}/{stack}/"]

    def state_path(self, stack: str) -> str:
        """What a `StackReference` to `stack` reads (pkg/backend/diy/state.go)."""
        return f".pulumi/stacks/{self.project}/{stack}.json"


@dataclass
class PlanView:
    """The parts of a captured plan the model reads (duck-typed: offline.engine.Plan works)."""

    resources: Sequence[Any]
    calls: Sequence[Any]
    subscription: str
    clusters_by_provider: dict[str, str] = field(default_factory=dict)
    # Explicit azure-native providers (another subscription, e.g. the hub's) by URN.
    subscriptions_by_provider: dict[str, str] = field(default_factory=dict)
    # The stack the plan is of (whose state `up` writes).
    stack: str = ""
    # Container registries by login server (where the charts of Helm releases come from).
    registries: dict[str, str] = field(default_factory=dict)
    # PostgreSQL providers by URN -> the server host they sign in to.
    postgres_by_provider: dict[str, str] = field(default_factory=dict)

    def subscription_of(self, resource: Any) -> str:
        return self.subscriptions_by_provider.get(_provider_ref_urn(resource.provider), self.subscription)


def cluster_ids(resources: Iterable[Any], subscription: str) -> dict[str, str]:
    """The managed clusters among `resources`, name -> resource ID."""
    return {
        r.inputs.get("resourceName"): resource_id(r.type, r.name, r.inputs, subscription)
        for r in resources
        if r.type == "azure-native:containerservice:ManagedCluster"
    }


def registry_ids(resources: Iterable[Any], subscription: str) -> dict[str, str]:
    """The container registries among `resources`, login server -> resource ID."""
    return {
        f"{r.inputs.get('registryName')}.azurecr.io": resource_id(r.type, r.name, r.inputs, subscription)
        for r in resources
        if r.type == "azure-native:containerregistry:Registry"
    }


def view(
    plan: Any,
    subscription: str,
    clusters: Mapping[str, str] | None = None,
    registries: Mapping[str, str] | None = None,
) -> PlanView:
    """Index a captured plan: which cluster each Kubernetes provider reaches. `clusters` (name
    -> ID) adds the clusters of other stacks (the tenants' unit reaches every cluster's);
    `registries` (login server -> ID) the registries of other stacks (the foundation's, which
    the clusters' charts come from)."""
    known = {**(clusters or {}), **cluster_ids(plan.resources, subscription)}
    providers, subscriptions, postgres = {}, {}, {}
    for r in plan.resources:
        if r.type == POSTGRES_PROVIDER:
            postgres[r.urn] = str(r.inputs.get("host"))
        if r.type == "pulumi:providers:azure-native" and r.inputs.get("subscriptionId"):
            subscriptions[r.urn] = r.inputs["subscriptionId"]
        if r.type == "pulumi:providers:kubernetes":
            cluster = known.get(r.inputs.get("clusterIdentifier"))
            if cluster is None:
                raise LookupError(f"Kubernetes provider {r.name} names no cluster of this plan (clusterIdentifier)")
            providers[r.urn] = cluster
    return PlanView(
        plan.resources,
        plan.calls,
        subscription,
        providers,
        subscriptions,
        stack=plan.stack,
        registries={**(registries or {}), **registry_ids(plan.resources, subscription)},
        postgres_by_provider=postgres,
    )


def _arm_ids(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        if _ARM_ID.match(value):
            yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _arm_ids(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _arm_ids(inner)


def _references(inputs: Mapping[str, Any]) -> Iterator[str]:
    """Resource IDs a resource's inputs name, but for the one it extends or is (top-level
    `scope`, `resourceUri`, `id`); nested `{"id": ...}` objects are references."""
    for key, value in inputs.items():
        if key not in NOT_LINKS:
            yield from _arm_ids(value)


def type_of_id(arm_id: str) -> str:
    """`.../providers/Microsoft.Network/virtualNetworks/v/subnets/s` -> `Microsoft.Network/virtualNetworks/subnets`."""
    match = _ARM_ID.match(arm_id)
    if not match:
        raise ValueError(f"not a resource ID: {arm_id}")
    parts = match.group(2).split("/")
    return "/".join([match.group(1), *parts[0::2]])


def _linked(resource_type: str, references: Iterable[str], needed_by: str) -> Iterator[Operation]:
    for reference in sorted(set(references)):
        referenced = type_of_id(reference)
        action = LINKED_ACTIONS_BY_REFERRER.get((resource_type, referenced)) or LINKED_ACTIONS.get(referenced)
        if action:
            yield Operation(f"{referenced}/{action}", reference, needed_by)


def _provider_ref_urn(reference: str) -> str:
    return reference.rsplit("::", 1)[0] if reference else ""


def kubernetes_resource(token: str) -> tuple[str, str, bool]:
    """`kubernetes:networking.k8s.io/v1:NetworkPolicy` -> ("networking.k8s.io", "networkpolicies", patch?)."""
    _, group_version, kind = token.split(":", 2)
    group = group_version.rsplit("/", 1)[0] if "/" in group_version else ""
    group = "" if group == "core" else group
    patch = kind.endswith("Patch")
    kind = kind.removesuffix("Patch").lower()
    if kind.endswith("y"):
        plural = kind[:-1] + "ies"
    elif kind.endswith("s"):
        plural = kind + "es"
    else:
        plural = kind + "s"
    return group, plural, patch


def _kubernetes_scope(cluster_id: str, namespace: str | None) -> str:
    return f"{cluster_id}/namespaces/{namespace}" if namespace else cluster_id


def _in_cluster(view_: PlanView, r: Any) -> tuple[str, str | None]:
    cluster = view_.clusters_by_provider.get(_provider_ref_urn(r.provider))
    if cluster is None:
        raise LookupError(f"{r.type} {r.name} reaches no cluster of this plan through its provider")
    metadata = r.inputs.get("metadata") or {}
    namespace = metadata.get("namespace") if isinstance(metadata, Mapping) else None
    return cluster, namespace or r.inputs.get("namespace")


RBAC = "kubernetes:rbac.authorization.k8s.io/v1:"
# Kubernetes verbs as Azure RBAC for Kubernetes names them (facts/aks_rbac.py).
_AZURE_VERB = {
    "get": "read",
    "list": "read",
    "watch": "read",
    "create": "write",
    "update": "write",
    "patch": "write",
    "delete": "delete",
    "deletecollection": "delete",
}


def kubernetes_grants(
    view_: PlanView, user: str, kind: str = "User", subject_namespace: str | None = None
) -> list[Grant]:
    """What the plan's Kubernetes RBAC grants a user (AKS's username for a service principal or
    managed identity is its object ID), in Azure's terms, so one check covers both authorizers
    (AKS asks Azure RBAC, then Kubernetes RBAC: learn.microsoft.com/azure/aks/manage-azure-rbac).
    A rule's `resourceNames` become a condition on the object's name (a list names none); a
    subresource keeps its name (`pods/eviction` is not `pods`: evicting creates nothing)."""
    roles: dict[tuple[str, str | None, str], list[Mapping[str, Any]]] = {}
    for r in view_.resources:
        if r.type in (RBAC + "Role", RBAC + "ClusterRole"):
            cluster, namespace = _in_cluster(view_, r)
            role_kind = r.type.rsplit(":", 1)[1]
            key = (cluster, namespace if role_kind == "Role" else None, f"{role_kind}/{r.inputs['metadata']['name']}")
            roles[key] = list(r.inputs.get("rules") or [])
    grants = []
    for r in view_.resources:
        if r.type not in (RBAC + "RoleBinding", RBAC + "ClusterRoleBinding"):
            continue
        if not any(
            s.get("kind") == kind and s.get("name") == user and s.get("namespace") == subject_namespace
            for s in r.inputs.get("subjects") or []
        ):
            continue
        cluster, namespace = _in_cluster(view_, r)
        namespace = namespace if r.type.endswith(":RoleBinding") else None
        ref = r.inputs["roleRef"]
        rules = roles.get((cluster, namespace if ref["kind"] == "Role" else None, f"{ref['kind']}/{ref['name']}"))
        if rules is None:
            raise LookupError(f"{r.type} {r.name} binds {ref['kind']} {ref['name']}, which this plan does not make")
        for i, rule in enumerate(rules):
            actions = sorted(
                {
                    data_action(group, resource, _AZURE_VERB[verb])
                    for group in rule.get("apiGroups") or []
                    for resource in rule.get("resources") or []
                    for verb in rule.get("verbs") or []
                }
            )
            names = rule.get("resourceNames")
            grants.append(
                Grant(
                    RoleDefinition(
                        f"Kubernetes {ref['kind']} {ref['name']}", f"{r.name}#{i}", data_actions=tuple(actions)
                    ),
                    _kubernetes_scope(cluster, namespace),
                    Condition(object_names=frozenset(names)) if names else None,
                    f"{r.type} {r.name}",
                )
            )
    return grants


def _role_assignment_attributes(inputs: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    role = str(inputs.get("roleDefinitionId", "")).rsplit("/", 1)[-1]
    principal_type = inputs.get("principalType")
    return (("RoleDefinitionId", role),) + ((("PrincipalType", str(principal_type)),) if principal_type else ())


def resource_operations(view_: PlanView, r: Any, verbs: Sequence[str]) -> Iterator[Operation]:
    """The operations of one registered resource for the given verbs (read, write, delete)."""
    needed_by = f"{r.type} {r.name}"
    if r.type.startswith("azure-native:"):
        try:
            kind = arm_type(r.type)
        except UnknownArmType as error:
            raise UnknownArmType(f"{error} (needed by {needed_by})") from None
        at = resource_id(r.type, r.name, r.inputs, view_.subscription_of(r))
        attributes = _role_assignment_attributes(r.inputs) if r.type.endswith(":RoleAssignment") else ()
        for verb in verbs:
            yield Operation(f"{kind}/{verb}", at, needed_by, attributes=attributes)
        if r.type == COSMOS_ASSIGNMENT and ("write" in verbs or "delete" in verbs):
            # Long-running: the client polls the operation's result at the assignment, or its
            # status through the account's location at the subscription.
            yield Operation(COSMOS_ASSIGNMENT_POLL, at, f"{needed_by} (its operation's result)")
            subscription = f"/subscriptions/{view_.subscription_of(r)}"
            for action in COSMOS_LOCATION_POLLS:
                yield Operation(action, subscription, f"{needed_by} (its operation's status)")
        if "write" in verbs:
            yield from _linked(kind, _references(r.inputs), needed_by)
            if r.type == "azure-native:network:PrivateEndpoint":
                for connection in r.inputs.get("privateLinkServiceConnections") or []:
                    target = connection.get("privateLinkServiceId", "")
                    if _ARM_ID.match(target):
                        yield Operation(
                            f"{type_of_id(target)}/privateEndpointConnectionsApproval/action", target, needed_by
                        )
    elif r.type.startswith("postgresql:"):
        # A server's catalog, written over its own protocol as the role the provider signs in as:
        # what that role may do is the server's business (postgres_grants), not ARM's.
        host = view_.postgres_by_provider.get(_provider_ref_urn(r.provider))
        if host is None:
            raise LookupError(f"{needed_by} reaches no PostgreSQL provider of this plan")
        kind = r.type.rsplit(":", 1)[-1]
        for verb in verbs:
            yield Operation(f"{POSTGRES}/{kind}/{verb}", postgres_scope(host), needed_by, data=True)
    elif r.type.startswith("kubernetes:") and not r.type.startswith("pulumi:"):
        cluster, namespace = _in_cluster(view_, r)
        if r.type == HELM_RELEASE:
            # A release installs whatever its chart renders (CRDs, cluster roles, webhooks)
            # and keeps its record in its namespace, as the provider's Helm driver says.
            scope = _kubernetes_scope(cluster, namespace)
            records = "secrets" if HELM_DRIVER == "secret" else "configmaps"
            for verb in verbs:
                yield Operation(data_action("", records, verb), scope, needed_by, data=True)
            if "write" in verbs:
                yield Operation(f"{AKS}/*", cluster, f"{needed_by} (every kind its chart renders)", data=True)
            yield from _chart_pull(view_, r, needed_by)
            return
        group, plural, patch = kubernetes_resource(r.type)
        scope = _kubernetes_scope(cluster, namespace)
        metadata = r.inputs.get("metadata") or {}
        name = metadata.get("name") if isinstance(metadata, Mapping) else None
        named = ((OBJECT_NAME, str(name)),) if isinstance(name, str) else ()
        for verb in verbs:
            if patch and verb == "delete":
                continue  # a patch removes only its own fields: an update
            # A write may be a create, which names no object to Kubernetes RBAC (`resourceNames`
            # cannot limit it): only reads and deletes carry the name.
            attributes = named if verb != "write" else ()
            yield Operation(data_action(group, plural, verb), scope, needed_by, data=True, attributes=attributes)


COSMOS_ASSIGNMENT = "azure-native:cosmosdb:SqlResourceSqlRoleAssignment"
COSMOS_ASSIGNMENT_POLL = "Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments/operationResults/read"
COSMOS_LOCATION_POLLS = (
    "Microsoft.DocumentDB/locations/operationsStatus/read",
    "Microsoft.DocumentDB/locations/operationResults/read",
)
POSTGRES = "PostgreSQL"
POSTGRES_PROVIDER = "pulumi:providers:postgresql"
POSTGRES_ADMINISTRATOR = "azure-native:dbforpostgresql:AdministratorsMicrosoftEntra"
POSTGRES_LABEL = "postgresql:index/securityLabel:SecurityLabel"
# What an Entra administrator does on a flexible server (a member of azure_pg_admin, with
# CREATEROLE and CREATEDB: security/security-manage-entra-users.md), and what any login reads.
POSTGRES_ADMIN = RoleDefinition("PostgreSQL Entra administrator", "postgresql-admin", data_actions=(f"{POSTGRES}/*",))
POSTGRES_LOGIN = RoleDefinition(
    "PostgreSQL login (the catalog)", "postgresql-login", data_actions=(f"{POSTGRES}/*/read",)
)


def postgres_scope(host: str) -> str:
    return f"postgresql://{host}"


def postgres_grants(view_: PlanView, principal: str) -> list[Grant]:
    """What a principal may do on the plan's PostgreSQL servers: administer those that name it an
    Entra administrator, sign in to (and read the catalog of) those with a login role labelled
    with its object ID."""
    grants = []
    for r in view_.resources:
        if r.type == POSTGRES_ADMINISTRATOR and str(r.inputs.get("objectId")) == principal:
            host = f"{r.inputs.get('serverName')}.postgres.database.azure.com"
            grants.append(Grant(POSTGRES_ADMIN, postgres_scope(host), None, f"{r.type} {r.name}"))
        elif r.type == POSTGRES_LABEL and f"oid={principal}," in str(r.inputs.get("label")):
            login_host = view_.postgres_by_provider.get(_provider_ref_urn(r.provider))
            if login_host is not None:
                grants.append(Grant(POSTGRES_LOGIN, postgres_scope(login_host), None, f"{r.type} {r.name}"))
    return grants


def _chart_pull(view_: PlanView, r: Any, needed_by: str) -> Iterator[Operation]:
    """A release downloads its chart in a preview and a refresh as in an `up`: from a registry,
    that is a pull (an ARM action in a registry without ABAC repository permissions, which
    Reader's `*/read` and AcrPull grant: learn.microsoft.com/azure/container-registry,
    "Azure Container Registry Entra permissions and role assignments overview")."""
    chart = str(r.inputs.get("chart") or "")
    if not chart.startswith("oci://"):
        return
    host = chart.removeprefix("oci://").split("/", 1)[0]
    registry = view_.registries.get(host)
    if registry is None:
        raise LookupError(f"{needed_by} installs {chart} from {host}, which is no registry of this environment")
    yield Operation("Microsoft.ContainerRegistry/registries/pull/read", registry, f"{needed_by} (its chart)")


def call_operations(view_: PlanView, call: Any) -> Iterator[Operation]:
    if call.is_read and call.token.startswith("azure-native:"):
        # A read of an existing Azure resource (a site's connected cluster): a GET of it.
        yield Operation(f"{arm_type(call.token)}/read", str(call.resource_id), f"read of {call.token}")
        return
    if call.is_read:
        cluster = view_.clusters_by_provider.get(_provider_ref_urn(call.provider))
        if cluster is None:
            raise LookupError(f"read of {call.token} {call.resource_id} reaches no cluster of this plan")
        namespace, _, name = str(call.resource_id).rpartition("/")
        group, plural, _ = kubernetes_resource(call.token)
        yield Operation(
            data_action(group, plural, "read"),
            _kubernetes_scope(cluster, namespace or None),
            f"read of {call.token} {call.resource_id}",
            data=True,
            attributes=((OBJECT_NAME, name),),
        )
        return
    if call.token not in INVOKE_ACTIONS:
        raise UnknownArmType(f"no permission is recorded for invoke {call.token}; add it to planning/permissions.py")
    action = INVOKE_ACTIONS[call.token]
    if action is None:
        return
    if call.token == "azure-native:containerservice:listManagedClusterUserCredentials":
        at = (
            f"/subscriptions/{view_.subscription}/resourceGroups/{call.args.get('resourceGroupName')}"
            f"/providers/{AKS}/{call.args.get('resourceName')}"
        )
        yield Operation(action, at, f"invoke {call.token}")
    if call.token == "azure-native:operationalinsights:getWorkspace":
        at = (
            f"/subscriptions/{view_.subscription}/resourceGroups/{call.args.get('resourceGroupName')}"
            f"/providers/Microsoft.OperationalInsights/workspaces/{call.args.get('workspaceName')}"
        )
        yield Operation(action, at, f"invoke {call.token}")


def backend_operations(backend: Backend, stack: str, *, write: bool) -> Iterator[Operation]:
    """Reading (and for `up`, writing) the stack's state, and decrypting (encrypting) its secrets."""
    container = backend.state_container_id
    verbs = ("read", "write", "delete") if write else ("read",)
    # A preview reads the state file and the stack's tags (state.go, getTarget).
    paths = backend.own_paths(stack) if write else [backend.state_path(stack), backend.tags_path(stack)]
    for path in paths:
        for verb in verbs:
            yield Operation(
                f"{BLOBS}/{verb}", container, "the Pulumi state", data=True, attributes=((BLOB_PATH, path),)
            )
    for prefix in backend.list_prefixes(stack) if write else []:
        yield Operation(f"{BLOBS}/read", container, "the Pulumi state", data=True, attributes=((BLOB_PREFIX, prefix),))
    keys = "Microsoft.KeyVault/vaults/keys"
    for verb in ("decrypt", "encrypt") if write else ("decrypt",):
        yield Operation(f"{keys}/{verb}/action", backend.key_of(stack), "the stack's secrets", data=True)


def stack_reference_operations(backend: Backend, stack: str) -> Iterator[Operation]:
    """A `StackReference` reads the producer's whole state and builds its secrets manager,
    which decrypts with the producer's key even for plain outputs (pkg/backend/diy/state.go,
    getSnapshotStackOutputs; pulumi/pulumi#21436)."""
    needed_by = f"StackReference {stack}"
    yield Operation(
        f"{BLOBS}/read",
        backend.state_container_id,
        needed_by,
        data=True,
        attributes=((BLOB_PATH, backend.state_path(stack)),),
    )
    yield Operation("Microsoft.KeyVault/vaults/keys/decrypt/action", backend.key_of(stack), needed_by, data=True)


def _calls(view_: PlanView, backend: Backend | None) -> Iterator[Operation]:
    for call in view_.calls:
        if call.token == STACK_REFERENCE:
            if backend is not None:
                yield from stack_reference_operations(backend, str(call.resource_id))
            continue
        yield from call_operations(view_, call)


def deploy_operations(view_: PlanView, backend: Backend | None = None) -> list[Operation]:
    """Everything `pulumi up` (creates, updates, replacements) and `pulumi destroy` do."""
    operations: list[Operation] = []
    for r in view_.resources:
        if r.custom and not r.type.startswith("pulumi:providers:"):
            operations.extend(resource_operations(view_, r, ("read", "write", "delete")))
    operations.extend(_calls(view_, backend))
    if backend is not None:
        operations.extend(backend_operations(backend, view_.stack, write=True))
    return _unique(operations)


def refresh_operations(view_: PlanView, backend: Backend | None = None) -> list[Operation]:
    """What `pulumi preview --refresh` reads: every resource, every call, the state."""
    operations: list[Operation] = []
    for r in view_.resources:
        if r.custom and not r.type.startswith("pulumi:providers:"):
            operations.extend(resource_operations(view_, r, ("read",)))
    operations.extend(_calls(view_, backend))
    if backend is not None:
        operations.extend(backend_operations(backend, view_.stack, write=False))
    return _unique(operations)


def _unique(operations: list[Operation]) -> list[Operation]:
    seen: dict[tuple[str, str, bool, tuple[tuple[str, str], ...]], Operation] = {}
    for op in operations:
        seen.setdefault((op.action.lower(), op.scope.lower(), op.data, op.attributes), op)
    return list(seen.values())
