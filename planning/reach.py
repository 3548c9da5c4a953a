"""Who can reach what: the attack-path model (docs/decisions/0009-who-reaches-what.md).

The permission model (planning/permissions.py) proves that each identity may do what its stacks
need; this proves that nobody can do more. A directed graph: its nodes are who acts (people and
pipelines at the edge, GitHub environments, Entra principals, Kubernetes service accounts, a
cluster's nodes) and what they can then do (write an Azure scope, administer a cluster, run pods
in a namespace, read a state's secrets); an edge says why one leads to the next. Reaching a node
means every edge on some path can be taken; a failure prints the path.

The edges, each from a documented behaviour:
- GitHub: a job gets the OIDC token of the environment it runs in, after that environment's rules
  (offline/reach.py reads which workflow runs where);
- Entra: a federated credential lets that token (or a service account's) sign in as the identity;
- Azure RBAC: a role at a scope gives its actions there and below; a role assignment delegation
  (Role Based Access Control Administrator with a condition) gives every role it may assign to
  the principal's own type, since a principal can assign it to itself;
- Cosmos DB's data roles are the account's own (not Azure RBAC, no condition): writing its role
  assignments, or the account itself, is holding its data;
- writing a PostgreSQL server's Entra administrators (or the server) is holding its data; its
  administrators and the workloads' login roles hold what the server gives them;
- a write on a managed cluster (`managedClusters/write`) is cluster admin: it can turn local
  accounts on or change the admin groups (learn.microsoft.com/azure/aks/manage-local-accounts-managed-azure-ad);
- the state: reading a stack's state file and decrypting with its layer's key is reading its
  secrets, and a credential among them acts as whom it signs in as;
- Kubernetes (Azure RBAC data actions or Kubernetes RBAC, in one vocabulary): creating pods (or
  what makes pods: jobs, custom resources) in a namespace is acting as every service account
  there; writing Secrets there mints their tokens; in a namespace whose Pod Security admits
  privileged pods, or cluster-wide (kube-system), it is the node and cluster admin;
- workload identity: a service account with a federated credential signs in as its identity;
- Entra ID: an app-role assignment puts the role in its holder's tokens for that application
  (the served APIs' roles, which the gateway checks); writing assignments (Graph's
  AppRoleAssignment.ReadWrite.All, which the delivery's administrators hold) is every role of
  the tenant.

Pure: imports facts and planning only.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field

from facts import cosmosdb
from facts.aks_rbac import DATA_ACTION_PREFIX
from planning.permissions import Condition, Grant, RoleDefinition, matches

# Kinds of node.
ENTRY = "entry"  # who starts a path: a pull request, a merge, a team, a pod, a node
GITHUB = "github environment"
IDENTITY = "identity"  # an Entra principal: managed identity, service principal, group
SERVICE_ACCOUNT = "service account"
NODE = "node"  # root on a cluster's nodes
WRITE = "write"  # an Azure control-plane write at a scope
DATA = "data"  # a data-plane action at a scope (blobs, secrets, events)
CLUSTER_ADMIN = "cluster admin"
PODS = "pods in"  # create pods (or what makes pods) in a namespace: <cluster id>/namespaces/<ns>
SECRETS = "secrets in"  # read every Secret in a namespace
STATE_SECRETS = "secrets of state"  # a stack's state read and decrypted
STATE_WRITE = "state of"  # a stack's state written (its next deploy does what it says)
CREDENTIAL = "credential"  # a credential found in a state or a Secret
RUNNER = "runner"  # a self-hosted runner label: a network position, and whatever is attached there
KAFKA_ANY = "Kafka as any user"  # a client certificate the clients CA signs
# Microsoft Graph's permission to write app-role assignments (or another that reaches every app
# role): the holder grants any principal any role of any application, Graph's own included, and
# through them any directory role (facts/entra.py). Tenant-wide: past every environment.
TENANT = "the tenant's app roles"
SERVED_API = "served API"  # calls an API at the gateway: `<application> as <role>`

# What writes: reaching one of these is reaching a credential that writes.
WRITING = frozenset({WRITE, CLUSTER_ADMIN, PODS, STATE_WRITE, NODE, KAFKA_ANY, TENANT})

# Control-plane actions that change nothing of the scope they are checked on: reads, and the
# linked-access checks whose write happens on the caller's own resource (a peering, a zone link,
# a private endpoint's record), and a cluster's credential-free kubeconfig.
# (generateUserDelegationKey signs SAS tokens no wider than the caller's own data roles).
NOT_WRITES = (
    "/read",
    "/join/action",
    "/peer/action",
    "/listClusterUserCredential/action",
    "/generateUserDelegationKey/action",
)
ROLE_ASSIGNMENTS_WRITE = "Microsoft.Authorization/roleAssignments/write"
POSTGRES_ADMIN_WRITES = (
    "Microsoft.DBforPostgreSQL/flexibleServers/administrators/write",
    "Microsoft.DBforPostgreSQL/flexibleServers/write",
)
AKS = DATA_ACTION_PREFIX
# In-cluster data actions (facts/aks_rbac.py) that make pods run as a namespace's service accounts.
POD_MAKERS = tuple(
    f"{AKS}/{kind}/write"
    for kind in (
        "pods",
        "batch/jobs",
        "batch/cronjobs",
        "apps/deployments",
        "apps/daemonsets",
        "apps/statefulsets",
        "apps/replicasets",
        "customresources",  # JobSets, MPIJobs, FlinkDeployments, Ray: their controllers make pods
    )
)
# Data-plane families outside the clusters the model knows; anything else is unclassified.
DATA_FAMILIES = (
    "Microsoft.Storage/storageAccounts/",
    "Microsoft.KeyVault/vaults/",
    "Microsoft.EventHub/",
    "Microsoft.DocumentDB/databaseAccounts/",
    "Microsoft.Monitor/accounts/",
    "Microsoft.Insights/",
    "Microsoft.Dashboard/grafana/",
    "Microsoft.ContainerRegistry/registries/",
)


class Unclassified(LookupError):
    """A grant, principal or state content the model cannot place: extend the model first."""


def node(kind: str, name: str) -> str:
    return f"{kind}: {name}"


def kind_of(value: str) -> str:
    return value.split(": ", 1)[0]


def name_of(value: str) -> str:
    return value.split(": ", 1)[1]


@dataclass(frozen=True)
class Edge:
    target: str
    why: str


@dataclass
class Graph:
    edges: dict[str, list[Edge]] = field(default_factory=dict)

    def add(self, source: str, target: str, why: str) -> None:
        self.edges.setdefault(source, []).append(Edge(target, why))
        self.edges.setdefault(target, [])

    def reach(self, start: str) -> dict[str, tuple[str, str] | None]:
        """Every node reachable from `start` -> (the node before it, the edge's why)."""
        found: dict[str, tuple[str, str] | None] = {start: None}
        queue = deque([start])
        while queue:
            current = queue.popleft()
            for edge in self.edges.get(current, []):
                if edge.target not in found:
                    found[edge.target] = (current, edge.why)
                    queue.append(edge.target)
        return found

    def nodes(self, kind: str) -> list[str]:
        return sorted(n for n in self.edges if kind_of(n) == kind)


_ARM_PREFIX = re.compile(r"/subscriptions/([^/]+)(/resourceGroups/[^/]+)?(/providers/[^/]+/[^/]+/)?", re.IGNORECASE)


def short(text: str) -> str:
    """A node or reason with its resource IDs cut to the resource's own name and below."""
    return _ARM_PREFIX.sub(lambda m: "" if m.group(3) else f"subscription {m.group(1)[:8]}", text)


def path(found: Mapping[str, tuple[str, str] | None], target: str) -> str:
    """`a -[why]-> b -[why]-> ...` from a reach() result to `target`."""
    steps = []
    current = target
    while (previous := found[current]) is not None:
        steps.append(f"-[{short(previous[1])}]-> {short(current)}")
        current = previous[0]
    return "\n    ".join([short(current), *reversed(steps)])


def violations(graph: Graph, start: str, forbidden: Callable[[str], bool]) -> list[str]:
    """The paths from `start` to every node `forbidden` says it must not reach."""
    found = graph.reach(start)
    return [path(found, target) for target in sorted(found) if target != start and forbidden(target)]


# ---------------------------------------------------------------------------------------------
# Azure RBAC
# ---------------------------------------------------------------------------------------------
def delegated(grant: Grant, principal_type: str, roles: Mapping[str, RoleDefinition]) -> list[Grant]:
    """What a principal holding `grant` can give itself: with role assignments write at the
    scope, every role its condition lets it assign to its own principal type (all, without one)."""
    if not grant.role.allows(ROLE_ASSIGNMENTS_WRITE, data=False):
        return []
    condition = grant.condition
    if condition is None or condition.role_pairs is None:
        return [Grant(RoleDefinition("any role (unconditioned role assignment)", "*", ("*",), (), ("*",)), grant.scope)]
    given = []
    for role_ids, types in condition.role_pairs:
        if principal_type.lower() in types:
            for role_id in sorted(role_ids):
                role = roles.get(role_id.lower())
                if role is None:
                    raise Unclassified(f"{grant.why}: delegates role {role_id}, which no recorded role defines")
                given.append(Grant(role, grant.scope, None, f"self-assigned through {grant.role.name}"))
    return given


def writes(role: RoleDefinition) -> list[str]:
    """The role's control-plane actions that change something (patterns)."""
    found = []
    for pattern in role.actions:
        if pattern.lower().endswith(tuple(s.lower() for s in NOT_WRITES)) or pattern == ROLE_ASSIGNMENTS_WRITE:
            continue
        if any(matches(denied, pattern) for denied in role.not_actions):
            continue
        found.append(pattern)
    return found


@dataclass(frozen=True)
class Cluster:
    """What the model needs of one cluster: its ID, namespaces with their Pod Security level and
    service accounts, and its kubelet identity."""

    id: str
    # namespace -> whether its Pod Security admits privileged pods (host access: the node)
    namespaces: Mapping[str, bool]
    # namespace -> its service accounts
    service_accounts: Mapping[str, tuple[str, ...]]
    kubelet: str | None = None
    # namespaces holding an operator's release (its service accounts act cluster-wide)
    operators: frozenset[str] = frozenset()
    # An on-premises site: the container whose files its Flux applies as cluster admin
    # (components/arc_site.py); writing a file there is administering the site.
    baseline: str | None = None


# What an Arc connected cluster runs as its cluster admin, written from Azure (extensions-release.md:
# an extension installs its Helm chart with the Arc agents' rights; a Flux configuration's
# kustomizations apply with cluster-admin in cluster scope: conceptual-gitops-flux2.md).
CONNECTED_CLUSTERS = "microsoft.kubernetes/connectedclusters"
ARC_CONFIGURATION_WRITES = (
    "Microsoft.KubernetesConfiguration/extensions/write",
    "Microsoft.KubernetesConfiguration/fluxConfigurations/write",
)
BLOB_WRITE = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write"
# What rewrites an account's blobs through the control plane: shared keys back on (then its keys),
# a point-in-time restore, an object replication into it.
LIST_KEYS = "Microsoft.Storage/storageAccounts/listKeys/action"
BASELINE_ACCOUNT_WRITES = (
    "Microsoft.Storage/storageAccounts/write",
    "Microsoft.Storage/storageAccounts/restoreBlobRanges/action",
    "Microsoft.Storage/storageAccounts/objectReplicationPolicies/write",
)


def covers(scope: str, target: str) -> bool:
    """Whether a grant at `scope` applies to `target` (the same resource or one below it)."""
    scope, target = scope.lower().rstrip("/"), target.lower().rstrip("/")
    return target == scope or target.startswith(scope + "/") or scope in ("", "/")


def clusters_under(scope: str, clusters: Iterable[Cluster]) -> Iterator[tuple[Cluster, str | None]]:
    """The clusters a scope covers, and the one namespace it is limited to (None: all)."""
    scope = scope.lower().rstrip("/")
    for cluster in clusters:
        cid = cluster.id.lower()
        if scope == cid or cid.startswith(scope + "/") or scope in ("", "/"):
            yield cluster, None
        elif scope.startswith(cid + "/namespaces/"):
            yield cluster, scope.rsplit("/", 1)[1]


def in_cluster(grant: Grant, clusters: Iterable[Cluster]) -> Iterator[tuple[str, str]]:
    """What an in-cluster grant (Azure data actions or Kubernetes RBAC in their terms) reaches."""
    role = grant.role
    named = grant.condition is not None and grant.condition.object_names is not None
    for cluster, namespace in clusters_under(grant.scope, clusters):
        if CONNECTED_CLUSTERS in cluster.id.lower():
            # A site's Kubernetes honours no Azure role (Arc's Azure RBAC is off: its own RBAC,
            # from the baseline); AKS's data actions do not apply to a connected cluster.
            continue
        spaces = [namespace] if namespace else sorted(cluster.namespaces)
        why = f"{role.name} at {grant.scope.rsplit('/providers/', 1)[-1]}"
        if namespace is None and role.allows(f"{AKS}/pods/write", data=True) and not named:
            yield node(CLUSTER_ADMIN, cluster.id), f"{why}: pods in kube-system"
        if role.allows(f"{AKS}/rbac.authorization.k8s.io/clusterroles/bind/action", data=True) and namespace is None:
            yield node(CLUSTER_ADMIN, cluster.id), f"{why}: binds any role"
        if named:
            # A Role with resourceNames: only the objects it names (their kind decides).
            for name in sorted(grant.condition.object_names or ()):  # type: ignore[union-attr]
                if role.allows(f"{AKS}/secrets/read", data=True):
                    for space in spaces:
                        yield node(DATA, f"{AKS}/secrets/read@{cluster.id}/namespaces/{space}/{name}"), why
            continue
        for space in spaces:
            scope = f"{cluster.id}/namespaces/{space}"
            if any(role.allows(action, data=True) for action in POD_MAKERS):
                yield node(PODS, scope), why
            if role.allows(f"{AKS}/secrets/read", data=True):
                yield node(SECRETS, scope), why
            if role.allows(f"{AKS}/secrets/write", data=True):
                # A Secret of type service-account-token for any account there gets its token.
                for account in cluster.service_accounts.get(space, ()):
                    yield node(SERVICE_ACCOUNT, f"{cluster.id}/namespaces/{space}/{account}"), f"{why}: mints its token"


def data_nodes(grant: Grant) -> Iterator[tuple[str, str]]:
    """A grant's data-plane actions outside the clusters: one node per role and scope."""
    patterns = [p for p in grant.role.data_actions if not p.startswith(AKS) and p != "*"]
    for pattern in patterns:
        if not pattern.startswith(DATA_FAMILIES):
            raise Unclassified(f"{grant.why or grant.role.name}: data action {pattern} is not one the model knows")
    if patterns:
        yield node(DATA, f"{grant.role.name} at {grant.scope}"), f"{grant.role.name} at {grant.scope}"


def grant_edges(
    grants: Iterable[Grant],
    principal_type: str,
    roles: Mapping[str, RoleDefinition],
    clusters: list[Cluster],
) -> Iterator[tuple[str, str]]:
    """Every capability one principal's grants give it (delegations included)."""
    pending = list(grants)
    seen: set[tuple[str, str, Condition | None]] = set()
    while pending:
        grant = pending.pop()
        key = (grant.role.id.lower(), grant.scope.lower(), grant.condition)
        if key in seen:
            continue
        seen.add(key)
        pending.extend(delegated(grant, principal_type, roles))
        written = writes(grant.role)
        if written:
            yield node(WRITE, grant.scope), f"{grant.role.name} ({written[0]})"
        if any(matches(w, "Microsoft.ContainerService/managedClusters/write") for w in written):
            for cluster, _ in clusters_under(grant.scope, clusters):
                if CONNECTED_CLUSTERS in cluster.id.lower():
                    continue  # a site: what Azure writes there is below
                yield (
                    node(CLUSTER_ADMIN, cluster.id),
                    f"{grant.role.name} writes the cluster: local accounts, admin groups",
                )
        if any(matches(w, "Microsoft.KeyVault/vaults/write") for w in written):
            # A vault's writer can switch it to access policies and write one for itself (the
            # reason Key Vault now asks for roleAssignments/write to change the permission model:
            # learn.microsoft.com/azure/key-vault/general/rbac-migration): counted as its data.
            yield (
                node(DATA, f"keys and secrets of the vaults at {grant.scope}"),
                f"{grant.role.name} writes the vault's permission model",
            )
        if any(
            matches(w, action)
            for w in written
            for action in (cosmosdb.DATA_ROLE_ASSIGNMENTS_WRITE, cosmosdb.ACCOUNT_WRITE)
        ):
            # Cosmos DB's data roles are not Azure RBAC: no delegation condition narrows who may
            # assign them, so a writer of assignments (or of the account: local auth back on,
            # then its keys) holds every container's data (how-to-setup-rbac.md).
            yield (
                node(DATA, f"Cosmos DB data of the accounts at {grant.scope}"),
                f"{grant.role.name} assigns Cosmos DB data roles",
            )
        if any(matches(w, action) for w in written for action in POSTGRES_ADMIN_WRITES):
            # Naming oneself an Entra administrator of the server is holding its data.
            yield (
                node(DATA, f"PostgreSQL data of the servers at {grant.scope}"),
                f"{grant.role.name} names the servers' Entra administrators",
            )
        if any(matches(w, action) for w in written for action in ARC_CONFIGURATION_WRITES):
            for cluster, _ in clusters_under(grant.scope, clusters):
                if CONNECTED_CLUSTERS in cluster.id.lower():
                    yield (
                        node(CLUSTER_ADMIN, cluster.id),
                        f"{grant.role.name} writes the site's extensions and Flux configurations, which run as "
                        "its cluster admin",
                    )
        account_writes = [w for w in written if any(matches(w, a) for a in BASELINE_ACCOUNT_WRITES)]
        if account_writes or grant.role.allows(LIST_KEYS, data=False):
            for cluster in clusters:
                account = cluster.baseline.split("/blobServices/", 1)[0] if cluster.baseline else None
                if account and covers(grant.scope, account):
                    yield (
                        node(CLUSTER_ADMIN, cluster.id),
                        f"{grant.role.name} rewrites the site's baseline without a data role (its account's shared "
                        "key back on and its keys, an old version restored, a replication into it)",
                    )
        if grant.role.allows(BLOB_WRITE, data=True):
            for cluster in clusters:
                if cluster.baseline and covers(grant.scope, cluster.baseline):
                    yield (
                        node(CLUSTER_ADMIN, cluster.id),
                        f"{grant.role.name} writes the site's baseline, which its Flux applies as cluster admin",
                    )
        yield from in_cluster(grant, clusters)
        yield from data_nodes(grant)
