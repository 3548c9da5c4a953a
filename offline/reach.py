"""The attack-path model of one environment, built offline (planning/reach.py is the graph).

From: the environment's unit plans (every role assignment, Kubernetes RBAC object, namespace,
service account, federated credential and Secret the program makes, and each unit's outputs,
which its state holds), the delivery project's plan (the delivery identities, their grants and the
GitHub environments they trust: offline/identities.py), and the delivery's GitHub side (which
workflow runs in which GitHub environment, tests/test_delivery.py holds the workflows to it;
the environments' rules, docs/deploying.md "GitHub's settings").

Everything the program or the delivery grants must be placed: a principal, a data action or a
unit output the model does not know raises `Unclassified`, so a new grant fails the tests until
the model says what it reaches.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from facts import arc, cosmosdb, lustre
from facts.azure_roles import built_in_roles
from offline.identities import Identities, built_in
from offline.mocks import OFFLINE_SUBSCRIPTION_ID, arm_id
from planning import dispatch as dispatch_plan
from planning import kafka as kafka_plan
from planning import permissions, site_baseline
from planning.cluster_traffic import KUEUE_NAMESPACE
from planning.layers import LAYERS, parse_stack
from planning.naming import Naming, parse_resource_id
from planning.pod_security import ENFORCE, NAMESPACE_CLASS_LABEL, PRIVILEGED, TRAINING_CLASS
from planning.reach import (
    CLUSTER_ADMIN,
    CREDENTIAL,
    DATA,
    ENTRY,
    GITHUB,
    IDENTITY,
    KAFKA_ANY,
    NODE,
    PODS,
    RUNNER,
    SECRETS,
    SERVED_API,
    SERVICE_ACCOUNT,
    STATE_SECRETS,
    STATE_WRITE,
    TENANT,
    WRITE,
    WRITING,
    Cluster,
    Graph,
    Unclassified,
    grant_edges,
    kind_of,
    name_of,
    node,
    short,
    violations,
)
from stackconfig.model import PlatformConfig

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
# Who can run a job in which GitHub environment (docs/deploying.md, "GitHub's settings"; the
# workflows: pull-request.yml previews branches of this repository in `<env>-<layer>-preview`,
# deploy.yml runs `main` in `<env>-<layer>` after the environment's reviewers, forks get no OIDC
# token and no self-hosted runner).
SAME_REPOSITORY_PR = node(ENTRY, "a same-repository pull request")
FORK_PR = node(ENTRY, "an outside contributor's fork pull request")
MAINTAINER = node(ENTRY, "a maintainer who merges to main")
HUB_OWNERS = node(ENTRY, "the hub's owners")
# Whoever administers the repository or the organization changes what an environment's rules
# are: its reviewers and branch policy (the delivery project applies them with an organization
# owner's token from the administrator's own shell, never CI's or the config's: docs/deploying.md).
DELIVERY_ADMINS = node(ENTRY, "the delivery's administrators (GitHub organization owners)")


def approvers(environment: str) -> str:
    return node(ENTRY, f"{environment}'s approvers")


def team_entry(team: str) -> str:
    return node(ENTRY, f"team {team}")


def pod_entry(cluster: str, namespace: str, account: str) -> str:
    return node(ENTRY, f"a pod of {cluster}/{namespace} running as {account}")


def node_entry(cluster: str) -> str:
    return node(ENTRY, f"a node of {cluster}")


def site_admins(cluster: str) -> str:
    """The administrators of an on-premises site's cluster (the site's people, not the platform's)."""
    return node(ENTRY, f"the administrators of {cluster}")


# Unit outputs (what each state holds beside its resources) and whether any is a credential.
# Every output of every unit must be listed: a new one is placed here before it ships.
OUTPUTS_WITHOUT_CREDENTIALS = {
    "contractVersion": "a number",
    "site": "resource IDs, a client ID, a URL and the site's API server authentication (issuer, object IDs)",
    "siteAuthentication": "the sites' API server authentication: an issuer and object IDs",
    "baselineDocuments": "a site's baseline: Kubernetes objects, no credential (planning/site_baseline.py)",
    "siteBaselines": "the sites' baselines: Kubernetes objects, no credential",
    "actionGroupIds": "resource IDs",
    "cluster": "a name",
    "clusterId": "a resource ID",
    "containerIds": "resource IDs",
    "cosmosDbAccountId": "a resource ID",
    "dataCollectionEndpointId": "a resource ID",
    "dnsZoneIds": "resource IDs",
    "egressIps": "public addresses",
    "eventHubsNamespace": "a name and host",
    "fleetId": "a resource ID",
    "grafanaEndpoint": "a private URL",
    "hubRequests": "names and IDs for the hub's owner",
    "identities": "names, client and object IDs (not secrets)",
    "kafkaClients": "bootstrap addresses and topics",
    "lustreMgsAddresses": "private addresses",
    "kafkaId": "a resource ID",
    "keyVaultIds": "resource IDs",
    "kubeconfig": "kubelogin exec, no credential: signs in as whoever runs it",
    "logAnalyticsWorkspaceId": "a resource ID",
    "monitorWorkspaceId": "a resource ID",
    "oidcIssuerUrl": "a public URL",
    "regionalDnsZoneIds": "resource IDs",
    "regionalWorkspaces": "resource IDs",
    "prometheusQueryEndpoints": "host names",
    "registryId": "a resource ID",
    "registryLoginServer": "a host name",
    "replicaContainerIds": "resource IDs",
    "storageKeys": "Key Vault key IDs (customer-managed keys), not key material",
    "subnetIds": "resource IDs",
    "vnetIds": "resource IDs",
    "workloadContext": "names, client IDs, endpoints",
    "workloadIdentities": "client IDs (not secrets)",
}


@dataclass
class Model:
    environment: str
    graph: Graph
    clusters: dict[str, Cluster]
    # principal node -> its team, for workloads' identities and teams' groups
    team_of: dict[str, str] = field(default_factory=dict)
    # every entry point, by name
    entries: list[str] = field(default_factory=list)


COSMOS_ROLE_ASSIGNMENT = "azure-native:cosmosdb:SqlResourceSqlRoleAssignment"
FEDERATED_CREDENTIALS_WRITE = "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials/write"


def _identity(name: str) -> str:
    return node(IDENTITY, name)


def _roles(identities: Identities) -> dict[str, permissions.RoleDefinition]:
    roles = {}
    for role in built_in_roles().values():
        definition = built_in(role.id)
        assert definition is not None
        roles[role.id.lower()] = definition
    for custom in identities.custom_roles.values():
        roles[custom.definition.id.lower()] = custom.definition
        roles[custom.placeholder.lower()] = custom.definition
    return roles


def _principals(
    resources: Iterable[Any], config: PlatformConfig, identities: Identities
) -> tuple[dict[str, str], dict[str, str]]:
    """Principal ID -> node, and node -> team: the program's identities (by the ID Azure gives
    them, as the offline engine does), the clusters' kubelets, Grafana's, and the configured groups."""
    names: dict[str, str] = {}
    teams: dict[str, str] = {}
    from offline.mocks import principal_id

    for r in resources:
        if r.type == "azure-native:managedidentity:UserAssignedIdentity":
            names[principal_id(r)] = _identity(r.inputs["resourceName"])
        elif r.type == "azure-native:dashboard:Grafana":
            names[principal_id(r)] = _identity(f"Managed Grafana {r.inputs.get('workspaceName')}")
    for workload, spec in config.workloads.items():
        for value, principal in names.items():
            if principal.endswith(f"-workload-{workload}"):
                teams[names[value]] = spec.team
    for group in config.entra.admin_group_object_ids:
        names[str(group)] = _identity(f"platform admins group {group}")
    for team, team_spec in config.teams.items():
        for group in [*team_spec.entra_group_object_ids, *team_spec.reader_group_object_ids]:
            names[str(group)] = _identity(f"team {team} group {group}")
            teams[_identity(f"team {team} group {group}")] = team
    plan = config.entra.plan_identity
    if plan is not None and plan.tenants_principal_object_id is not None:
        # The object ID the stack file gives the delivery's tenants plan identity.
        names[str(plan.tenants_principal_object_id)] = _identity(identities.planner("tenants"))
    if plan is not None and plan.cluster_principal_object_id is not None:
        # ... and its cluster plan identity (it reads the CA certificate of a site's Kafka).
        names[str(plan.cluster_principal_object_id)] = _identity(identities.planner("cluster"))
    if config.postgresql is not None:
        # The object ID the stack file gives the delivery's tenants deploy identity.
        names[str(config.postgresql.role_manager_object_id)] = _identity(identities.deployer("tenants"))
        for admin in config.postgresql.administrators:
            names.setdefault(str(admin.object_id), _identity(f"PostgreSQL administrators group {admin.object_id}"))
    grafana = config.operations.grafana
    for group in [*grafana.admins, *grafana.viewers]:
        names.setdefault(str(group), _identity(f"Grafana group {group}"))
    for group in config.key_vault.secrets_officer_group_object_ids if config.key_vault else []:
        names.setdefault(str(group), _identity(f"Key Vault officers group {group}"))
    return names, teams


def _clusters(resources: list[Any], view: permissions.PlanView) -> dict[str, Cluster]:
    ids = permissions.cluster_ids(resources, OFFLINE_SUBSCRIPTION_ID)
    namespaces: dict[str, dict[str, bool]] = {cid: {"kube-system": True, "default": False} for cid in ids.values()}
    accounts: dict[str, dict[str, list[str]]] = {cid: {} for cid in ids.values()}
    kubelets: dict[str, str | None] = {}
    operators: dict[str, set[str]] = {cid: set() for cid in ids.values()}
    for r in resources:
        if r.type == "azure-native:containerservice:ManagedCluster":
            kubelet = ((r.inputs.get("identityProfile") or {}).get("kubeletidentity") or {}).get("objectId")
            kubelets[ids[r.inputs["resourceName"]]] = kubelet
        if not r.type.startswith("kubernetes:") or not r.provider:
            continue
        cluster = view.clusters_by_provider.get(r.provider.rsplit("::", 1)[0])
        if cluster is None:
            continue
        metadata = r.inputs.get("metadata") or {}
        if r.type == "kubernetes:core/v1:Namespace":
            labels = metadata.get("labels") or {}
            # Pod Security's level, unless the platform's admission holds a training namespace
            # to baseline plus IPC_LOCK (planning/pod_security.py, training_namespace_labels).
            namespaces[cluster][metadata["name"]] = (
                labels.get(ENFORCE, PRIVILEGED) == PRIVILEGED and labels.get(NAMESPACE_CLASS_LABEL) != TRAINING_CLASS
            )
        elif r.type == "kubernetes:helm.sh/v3:Release":
            # Its operator's service accounts act cluster-wide: pods there act as the cluster's.
            operators[cluster].add(str(r.inputs.get("namespace")))
        elif r.type == "kubernetes:core/v1:ServiceAccount":
            accounts[cluster].setdefault(metadata["namespace"], []).append(metadata["name"])
    return {
        name: Cluster(
            cid,
            namespaces[cid],
            {ns: (*accounts[cid].get(ns, []), "default") for ns in namespaces[cid]},
            kubelets.get(cid),
            frozenset(operators[cid]),
        )
        for name, cid in ids.items()
    }


def _sites(config: PlatformConfig) -> dict[str, Cluster]:
    """On-premises clusters, by their connected cluster's name (what their workloads' federated
    credentials are named): the namespaces of the workloads that run there, whose pods may run as
    those workloads' service accounts. Their Pod Security is the site's: the model takes it as
    baseline (docs/hybrid.md says who sets it), so only the site's nodes reach the accounts of
    every workload there."""
    sites = {}
    for key, site in config.on_prem_clusters.items():
        accounts: dict[str, list[str]] = {}
        for spec in config.workloads.values():
            if key in spec.sites:
                accounts.setdefault(spec.namespace, []).append(spec.service_account)
        name = site.connected_cluster_name
        # The site's Flux reads its baseline with the identity of its source-controller.
        accounts.setdefault(arc.FLUX_NAMESPACE, []).append(arc.FLUX_SOURCE_CONTROLLER)
        where = parse_resource_id(site.connected_cluster_id)
        account = Naming(config.prefix, config.environment).site_baseline_account(key)
        sites[name] = Cluster(
            site.connected_cluster_id,
            dict.fromkeys(accounts, False),
            {namespace: (*names, "default") for namespace, names in accounts.items()},
            baseline=f"/subscriptions/{where.subscription}/resourceGroups/{where.resource_group}/providers/Microsoft.Storage/"
            f"storageAccounts/{account}/blobServices/default/containers/{site_baseline.BASELINE_CONTAINER}",
        )
    return sites


def build(
    config: PlatformConfig,
    plans: Mapping[str, Any],
    identities: Identities,
    backend: permissions.Backend,
) -> Model:
    """The model of one environment: `plans` are its unit plans by stack name."""
    environment = config.environment
    resources = [r for plan in plans.values() for r in plan.resources]
    # As deployed: a sizing stack (prod-scale) deploys as its environment's stacks.
    deployed = {stack: f"{environment}.{stack.split('.', 1)[1]}" for stack in plans}
    stacks = sorted(deployed.values())
    union = type("Union", (), {"resources": resources, "calls": [], "stack": ""})()
    view = permissions.view(union, OFFLINE_SUBSCRIPTION_ID)
    sites = _sites(config)
    site_ids = {c.id for c in sites.values()}
    clusters = {**_clusters(resources, view), **sites}
    by_id = {c.id: c for c in clusters.values()}
    roles = _roles(identities)
    principals, team_of = _principals(resources, config, identities)
    graph = Graph()
    model = Model(environment, graph, clusters, team_of)

    # --- GitHub: who runs a job in which environment, and which identity trusts its token.
    model.entries += [FORK_PR, SAME_REPOSITORY_PR, MAINTAINER, HUB_OWNERS, DELIVERY_ADMINS]
    if environment != "dev":
        model.entries.append(approvers(environment))
    for layer in LAYERS:
        graph.add(
            DELIVERY_ADMINS,
            node(GITHUB, f"{environment}-{layer}"),
            "sets the environment's reviewers and branch policy (an owner's token, never in CI)",
        )
        graph.add(SAME_REPOSITORY_PR, node(GITHUB, f"{environment}-{layer}-preview"), "pull-request.yml, any branch")
        if environment == "dev":
            graph.add(MAINTAINER, node(GITHUB, f"dev-{layer}"), "deploy.yml on main; no reviewers")
        else:
            graph.add(approvers(environment), node(GITHUB, f"{environment}-{layer}"), "deploy.yml on main, approved")
    # Any job of this repository may ask for the runners' label; what it finds there is a
    # network position and whatever identity is attached to the machines (the delivery
    # attaches none: an identity on the runners would be an edge here).
    runner = node(RUNNER, "platform-preview")
    graph.add(SAME_REPOSITORY_PR, runner, "any workflow of a branch may ask for the label")
    # The deploy pool's hook admits deploy.yml on main alone (scripts/runner-job-started).
    graph.add(MAINTAINER, node(RUNNER, "platform-deploy"), "deploy.yml on main")
    for call in identities.commands:
        if "identity" in call and "assign" in call:
            for attached in (call[call.index("--identities") + 1] if "--identities" in call else "").split():
                for pool in ("platform-preview", "platform-deploy"):
                    graph.add(node(RUNNER, pool), _identity(attached.rsplit("/", 1)[-1]), "attached to the runners")
    for identity, subjects in identities.federated.items():
        for subject in subjects:
            issuer, _, claim = subject.partition(" ")
            if issuer != GITHUB_ISSUER or ":environment:" not in claim:
                raise Unclassified(f"{identity} trusts {subject}, which the model does not place")
            graph.add(node(GITHUB, claim.rsplit(":environment:", 1)[1]), _identity(identity), "OIDC token, federated")

    # --- Entra ID: the served APIs' app roles, and who writes app-role assignments at all.
    tenant = node(TENANT, "app-role assignments")
    graph.add(
        DELIVERY_ADMINS,
        tenant,
        "they run the delivery signed in with Graph's AppRoleAssignment.ReadWrite.All (components/delivery/entra.py)",
    )
    for holder_id, held_roles in identities.app_roles.items():
        holder = principals.get(holder_id)
        if holder is None:
            raise Unclassified(f"the delivery assigns {held_roles} to {holder_id}, whom the model does not know")
        for api_role in held_roles:
            graph.add(holder, node(SERVED_API, api_role), "an app-role assignment: Entra puts the role in its tokens")
            graph.add(tenant, node(SERVED_API, api_role), "writes any assignment")
    for holder_name, assignments in identities.other_app_roles.items():
        if not holder_name.startswith("id-"):
            raise Unclassified(f"{assignments[0]} is held by {holder_name}, whom the model does not know")
        graph.add(_identity(holder_name), tenant, f"{assignments[0]} (another resource's role: tenant-wide)")

    # --- Azure RBAC: the delivery's grants and the program's role assignments.
    grants: dict[str, list[permissions.Grant]] = {}
    kinds: dict[str, str] = {}
    for identity, held in identities.grants.items():
        grants.setdefault(_identity(identity), []).extend(held)
        kinds[_identity(identity)] = "ServicePrincipal"
    for r in resources:
        if r.type != "azure-native:authorization:RoleAssignment":
            continue
        principal = principals.get(str(r.inputs.get("principalId")))
        if principal is None:
            raise Unclassified(f"{r.name} grants a role to {r.inputs.get('principalId')}, whom the model does not know")
        role_id = str(r.inputs["roleDefinitionId"]).rsplit("/", 1)[-1].lower()
        role = roles.get(role_id)
        if role is None:
            raise Unclassified(f"{r.name} assigns role {role_id}, which no recorded or delivery role defines")
        grants.setdefault(principal, []).append(permissions.Grant(role, r.inputs["scope"], None, f"{r.type} {r.name}"))
        kinds[principal] = str(r.inputs.get("principalType") or "ServicePrincipal")
    # Cosmos DB's data roles, assigned through ARM on the account's own role definitions.
    for r in resources:
        if r.type != COSMOS_ROLE_ASSIGNMENT:
            continue
        principal = principals.get(str(r.inputs.get("principalId")))
        if principal is None:
            raise Unclassified(
                f"{r.name} grants a Cosmos DB role to {r.inputs.get('principalId')}, whom the model does not know"
            )
        role_id = str(r.inputs["roleDefinitionId"]).rsplit("/", 1)[-1].lower()
        if role_id not in cosmosdb.DATA_ROLE_ACTIONS:
            raise Unclassified(f"{r.name} assigns Cosmos DB role {role_id}, which is no built-in data role")
        role = permissions.RoleDefinition(
            cosmosdb.DATA_ROLE_NAMES[role_id], role_id, data_actions=cosmosdb.DATA_ROLE_ACTIONS[role_id]
        )
        grants.setdefault(principal, []).append(permissions.Grant(role, r.inputs["scope"], None, f"{r.type} {r.name}"))
    _postgres_edges(graph, resources, principals)
    # Kubernetes RBAC, in the same terms, for users (principals by object ID) and service accounts.
    for subject, held in _kubernetes_grants(view, resources, principals, by_id).items():
        grants.setdefault(subject, []).extend(held)
    for principal, held in grants.items():
        for target, why in grant_edges(held, kinds.get(principal, "ServicePrincipal"), roles, list(clusters.values())):
            graph.add(principal, target, why)
        _state_edges(graph, principal, held, backend, stacks)
    _join_database_nodes(graph, resources, str(config.subscription_id))
    # Whoever may write a federated credential on an identity can make it trust a token of their
    # own (any issuer, any subject): they are that identity (learn.microsoft.com, "Workload
    # identity federation": the credential is all the identity checks).
    program_identities = [
        (arm_id(r.type, r.name, r.inputs, OFFLINE_SUBSCRIPTION_ID), _identity(r.inputs["resourceName"]))
        for r in resources
        if r.type == "azure-native:managedidentity:UserAssignedIdentity"
    ]
    for principal, held in grants.items():
        for grant in held:
            if grant.condition is None and grant.role.allows(FEDERATED_CREDENTIALS_WRITE, data=False):
                for identity_id, target in program_identities:
                    if target != principal and permissions.in_scope(identity_id, grant.scope):
                        graph.add(principal, target, f"{grant.role.name}: writes a federated credential on it")

    # --- Inside the clusters (keyed by their resource names, aks-<prefix>-<env>-<key>).
    naming = Naming(config.prefix, config.environment)
    for key, cluster in clusters.items():
        admin = node(CLUSTER_ADMIN, cluster.id)
        for namespace, privileged in cluster.namespaces.items():
            scope = f"{cluster.id}/namespaces/{namespace}"
            graph.add(admin, node(PODS, scope), "cluster admin")
            graph.add(admin, node(SECRETS, scope), "cluster admin")
            for account in cluster.service_accounts.get(namespace, ()):
                graph.add(node(PODS, scope), node(SERVICE_ACCOUNT, f"{scope}/{account}"), "a pod may name any account")
            if privileged:
                graph.add(node(PODS, scope), node(NODE, cluster.id), "Pod Security admits host access here")
            if namespace in cluster.operators:
                graph.add(node(PODS, scope), admin, "an operator's service account there acts cluster-wide")
        # Root on a node: its kubelet's credentials (NodeRestriction: its own node's objects and
        # the tokens of the pods bound to it) and those pods' tokens: any team pod may land there.
        for namespace in cluster.namespaces:
            for account in cluster.service_accounts.get(namespace, ()):
                graph.add(
                    node(NODE, cluster.id),
                    node(SERVICE_ACCOUNT, f"{cluster.id}/namespaces/{namespace}/{account}"),
                    "a pod running as it may run on the node",
                )
        if cluster.kubelet:
            graph.add(
                node(NODE, cluster.id),
                principals.get(cluster.kubelet, _identity(f"kubelet of {key}")),
                "the node's kubelet identity",
            )
        model.entries.append(node_entry(key))
        graph.add(node_entry(key), node(NODE, cluster.id), "a compromised node")
        if cluster.id in site_ids:
            # The site's own administrators hold its Kubernetes, and so every workload there.
            model.entries.append(site_admins(key))
            graph.add(site_admins(key), node(CLUSTER_ADMIN, cluster.id), "they administer the site's cluster")
            # The baseline binds MultiKueue's worker role to the dispatchers' identity in the
            # site's job namespaces (planning/site_baseline.py, dispatcher_access): it makes jobs.
            site_key = next(k for k, s in config.on_prem_clusters.items() if s.connected_cluster_id == cluster.id)
            if site_key in config.dispatch_sites():
                for namespace in site_baseline.site_job_namespaces(config, site_key):
                    graph.add(
                        principals_by_name(principals, dispatch_plan.DISPATCH_WORKLOAD, environment),
                        node(PODS, f"{cluster.id}/namespaces/{namespace}"),
                        "the site's baseline binds it multikueue-worker there: it creates jobs",
                    )
        # What Secrets hold: the Kafka CAs' keys (an mTLS client certificate for any user), and
        # on a dispatcher the MultiKueue identity's tokens.
        if key in {naming.cluster(k) for k in config.kafka_clusters()} and config.strimzi is not None:
            graph.add(
                node(SECRETS, f"{cluster.id}/namespaces/{kafka_plan.KAFKA_NAMESPACE}"),
                node(CREDENTIAL, f"Kafka's clients CA key on {key}"),
                "Strimzi's <cluster>-clients-ca Secret",
            )
            graph.add(
                node(CREDENTIAL, f"Kafka's clients CA key on {key}"),
                node(KAFKA_ANY, key),
                "signs a certificate for any Kafka user (the mtls listener)",
            )
        if key in {naming.cluster(k) for k in config.jobs.dispatchers}:
            graph.add(
                node(SECRETS, f"{cluster.id}/namespaces/{KUEUE_NAMESPACE}"),
                principals_by_name(principals, dispatch_plan.DISPATCH_WORKLOAD, environment),
                "the multikueue-<worker> kubeconfig Secrets hold its token",
            )
    _lustre_edges(graph, plans, view.clusters_by_provider)
    # Service-account tokens Pulumi makes live in its state too.
    for stack, plan in plans.items():
        for r in plan.resources:
            if r.type == "kubernetes:core/v1:Secret" and r.inputs.get("type") == "kubernetes.io/service-account-token":
                cluster_id = view.clusters_by_provider.get(r.provider.rsplit("::", 1)[0]) if r.provider else None
                metadata = r.inputs["metadata"]
                account = metadata["annotations"]["kubernetes.io/service-account.name"]
                graph.add(
                    node(STATE_SECRETS, deployed[stack]),
                    node(SERVICE_ACCOUNT, f"{cluster_id}/namespaces/{metadata['namespace']}/{account}"),
                    f"Secret {metadata['name']}: a service-account token in the state",
                )
                graph.add(
                    node(SECRETS, f"{cluster_id}/namespaces/{metadata['namespace']}"),
                    node(SERVICE_ACCOUNT, f"{cluster_id}/namespaces/{metadata['namespace']}/{account}"),
                    f"Secret {metadata['name']}",
                )
        for r in plan.resources:
            if r.type.startswith("pulumi:providers:"):
                _provider_without_credentials(stack, r)
        for output in plan.outputs:
            if output not in OUTPUTS_WITHOUT_CREDENTIALS:
                raise Unclassified(f"{stack} exports {output}, which the model does not place (offline/reach.py)")

    # --- Workload identity: a service account signs in as the identity that trusts it.
    for r in resources:
        if r.type != "azure-native:managedidentity:FederatedIdentityCredential":
            continue
        trusted = clusters.get(str(r.inputs["federatedIdentityCredentialResourceName"]))
        if trusted is None:
            raise Unclassified(f"{r.name} trusts a cluster the model does not know")
        _, namespace, account = str(r.inputs["subject"]).rsplit(":", 2)
        graph.add(
            node(SERVICE_ACCOUNT, f"{trusted.id}/namespaces/{namespace}/{account}"),
            _identity(r.inputs["resourceName"]),
            "workload identity (federated credential)",
        )

    # --- People and pods at the edge.
    for team, spec in config.teams.items():
        model.entries.append(team_entry(team))
        for group in [*spec.entra_group_object_ids, *spec.reader_group_object_ids]:
            graph.add(team_entry(team), _identity(f"team {team} group {group}"), "a member")
        for key, cluster in clusters.items():
            for namespace in spec.namespaces:
                for account in cluster.service_accounts.get(namespace, ()):
                    entry = pod_entry(key, namespace, account)
                    model.entries.append(entry)
                    graph.add(
                        entry, node(SERVICE_ACCOUNT, f"{cluster.id}/namespaces/{namespace}/{account}"), "its own token"
                    )
                    model.team_of[entry] = team
    return model


def lustre_data(file_system: str, directory: str | None = None) -> str:
    return node(DATA, f"Managed Lustre {file_system}" + (f"/{directory}" if directory else ""))


def _lustre_edges(graph: Graph, plans: Mapping[str, Any], clusters_by_provider: Mapping[str, str]) -> None:
    """Managed Lustre: a node's kernel client mounts the whole file system as root (AMLFS squashes
    no root), a training namespace's pods their team's directory through their claim's volume.
    Every persistent volume must be placed: one the model does not know is `Unclassified`."""
    for plan in plans.values():
        for r in plan.resources:
            if r.type != "kubernetes:core/v1:PersistentVolume":
                continue
            spec = r.inputs["spec"]
            csi = spec.get("csi") or {}
            if csi.get("driver") != lustre.CSI_DRIVER or not spec.get("claimRef"):
                raise Unclassified(f"persistent volume {r.name}: the model places only Lustre volumes bound to a claim")
            cluster_id = clusters_by_provider.get(r.provider.rsplit("::", 1)[0]) if r.provider else None
            if cluster_id is None:
                raise Unclassified(f"persistent volume {r.name} is in a cluster the model does not know")
            file_system = str(csi["volumeHandle"]).split("/", 1)[0]
            directory = str(csi["volumeAttributes"]["sub-dir"])
            claim = spec["claimRef"]
            graph.add(
                node(NODE, cluster_id),
                lustre_data(file_system),
                "the node's Lustre client mounts the whole file system as root (no root squash)",
            )
            graph.add(lustre_data(file_system), lustre_data(file_system, directory), "a directory of it")
            graph.add(
                node(PODS, f"{cluster_id}/namespaces/{claim['namespace']}"),
                lustre_data(file_system, directory),
                f"claim {claim['name']}, bound to volume {r.inputs['metadata']['name']}",
            )


def _join_database_nodes(graph: Graph, resources: list[Any], subscription: str) -> None:
    """An ARM writer's hold on the databases under a scope (planning/reach.py) is a hold on each
    server's and account's data there: one node per server and per data grant, joined."""
    servers = {
        arm_id(
            r.type, r.name, r.inputs, OFFLINE_SUBSCRIPTION_ID
        ).lower(): f"{r.inputs.get('serverName')}.postgres.database.azure.com"
        for r in resources
        if r.type == "azure-native:dbforpostgresql:Server"
    }
    accounts = [
        arm_id(r.type, r.name, r.inputs, subscription).lower()
        for r in resources
        if r.type == "azure-native:cosmosdb:DatabaseAccount"
    ]
    data = [n for n in graph.edges if kind_of(n) == DATA]
    for held in data:
        name = name_of(held)
        if name.startswith("PostgreSQL data of the servers at "):
            scope = name.rsplit(" at ", 1)[1].lower()
            for server_id, host in servers.items():
                if permissions.in_scope(server_id, scope):
                    graph.add(held, node(DATA, f"PostgreSQL data of {host}"), "a server under the scope")
        elif name.startswith("Cosmos DB data of the accounts at "):
            scope = name.rsplit(" at ", 1)[1].lower()
            for account in accounts:
                if not permissions.in_scope(account, scope):
                    continue
                for other in data:
                    if other != held and account in name_of(other).lower():
                        graph.add(held, other, "a data role on an account under the scope")


def _postgres_edges(graph: Graph, resources: list[Any], principals: Mapping[str, str]) -> None:
    """PostgreSQL's own principals: an Entra administrator holds the server's data; a login role
    labelled with an object ID is that principal, and holds what its grants give."""
    hosts = {r.urn: str(r.inputs.get("host")) for r in resources if r.type == "pulumi:providers:postgresql"}
    logins: dict[tuple[str, str], str] = {}  # (host, role) -> principal node
    for r in resources:
        if r.type == "azure-native:dbforpostgresql:AdministratorsMicrosoftEntra":
            principal = principals.get(str(r.inputs.get("objectId")))
            if principal is None:
                raise Unclassified(
                    f"{r.name} makes {r.inputs.get('objectId')} a PostgreSQL administrator, whom the model does not know"
                )
            host = f"{r.inputs.get('serverName')}.postgres.database.azure.com"
            graph.add(principal, node(DATA, f"PostgreSQL data of {host}"), "an Entra administrator of the server")
        elif r.type == "postgresql:index/securityLabel:SecurityLabel":
            label = str(r.inputs.get("label"))
            oid = label.split("oid=", 1)[-1].split(",", 1)[0]
            principal = principals.get(oid)
            if principal is None:
                raise Unclassified(f"{r.name} maps a PostgreSQL role to {oid}, whom the model does not know")
            host = hosts.get(str(r.provider).rsplit("::", 1)[0], "?")
            logins[(host, str(r.inputs.get("objectName")))] = principal
            # A login reads the catalog of every database PUBLIC may still connect to.
            graph.add(
                principal, node(DATA, f"a PostgreSQL login to {host}"), f"its login role {r.inputs.get('objectName')}"
            )
    for r in resources:
        if r.type != "postgresql:index/grant:Grant":
            continue
        host = hosts.get(str(r.provider).rsplit("::", 1)[0], "?")
        if r.inputs.get("role") == "public" and not r.inputs.get("privileges"):
            continue  # PUBLIC's defaults taken back
        principal = logins.get((host, str(r.inputs.get("role"))))
        if principal is None:
            raise Unclassified(
                f"{r.name} grants to PostgreSQL role {r.inputs.get('role')}, which no principal signs in as"
            )
        where = "/".join(str(r.inputs[k]) for k in ("database", "schema") if r.inputs.get(k))
        privileges = ", ".join(sorted(r.inputs.get("privileges") or []))
        target = node(DATA, f"PostgreSQL {privileges} on {where} at {host}")
        graph.add(principal, target, f"its login role's grant {r.name}")
        graph.add(node(DATA, f"PostgreSQL data of {host}"), target, "the server's data holds it")


# A provider's inputs are in the state like a resource's: none may carry a credential. The
# providers the program uses and the inputs that would be one.
PROVIDER_CREDENTIALS = {
    "pulumi:providers:azure-native": (
        "clientSecret",
        "clientCertificatePassword",
        "clientCertificatePath",
        "oidcToken",
    ),
    "pulumi:providers:kubernetes": (),  # its kubeconfig is checked below
    "pulumi:providers:time": (),
    # Signs in with the job's Entra token (azureIdentityAuth): a password or client key would be one.
    "pulumi:providers:postgresql": ("password", "clientcert"),
}


def _provider_without_credentials(stack: str, provider: Any) -> None:
    import yaml

    if provider.type not in PROVIDER_CREDENTIALS:
        raise Unclassified(f"{stack}: provider {provider.type} {provider.name}, whose inputs the model does not place")
    held = [key for key in PROVIDER_CREDENTIALS[provider.type] if provider.inputs.get(key)]
    kubeconfig = provider.inputs.get("kubeconfig")
    if isinstance(kubeconfig, str) and kubeconfig.strip():
        for user in (yaml.safe_load(kubeconfig) or {}).get("users") or []:
            spec = user.get("user") or {}
            held += [key for key in ("token", "client-key-data", "password", "tokenFile") if spec.get(key)]
    if held:
        raise Unclassified(f"{stack}: provider {provider.name} keeps a credential in the state ({', '.join(held)})")


def principals_by_name(principals: Mapping[str, str], workload: str, environment: str) -> str:
    for principal in principals.values():
        if principal.endswith(f"-workload-{workload}"):
            return principal
    raise Unclassified(f"no identity of workload {workload} in {environment}")


def _kubernetes_grants(
    view: permissions.PlanView, resources: list[Any], principals: Mapping[str, str], clusters: Mapping[str, Cluster]
) -> dict[str, list[permissions.Grant]]:
    """Kubernetes RBAC bindings as grants of their subjects (users by object ID, service accounts)."""
    found: dict[str, list[permissions.Grant]] = {}
    subjects: set[tuple[str, str, str]] = set()
    for r in resources:
        if r.type in (permissions.RBAC + "RoleBinding", permissions.RBAC + "ClusterRoleBinding"):
            for subject in r.inputs.get("subjects") or []:
                subjects.add((subject["kind"], subject["name"], subject.get("namespace", "")))
    for kind, name, namespace in sorted(subjects):
        held = permissions.kubernetes_grants(view, name, kind=kind, subject_namespace=namespace or None)
        if kind == "User":
            principal = principals.get(name)
            if principal is None:
                raise Unclassified(f"a binding names user {name}, whom the model does not know")
            found.setdefault(principal, []).extend(held)
        elif kind == "ServiceAccount":
            for grant in held:
                cluster = next(c for c in clusters.values() if grant.scope.lower().startswith(c.id.lower()))
                found.setdefault(node(SERVICE_ACCOUNT, f"{cluster.id}/namespaces/{namespace}/{name}"), []).append(grant)
        else:
            raise Unclassified(f"a binding names {kind} {name}, which the model does not place")
    return found


def _state_edges(
    graph: Graph, principal: str, held: list[permissions.Grant], backend: permissions.Backend, stacks: list[str]
) -> None:
    """Blob grants on the state container and key grants on the secrets keys: which stacks'
    secrets the principal reads (state and its layer's key) and which states it writes."""
    container = backend.state_container_id.lower()
    keys = {key.lower(): layer for layer, key in backend.secrets_key_ids.items()}
    blob = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs"
    readable: dict[str, str] = {}
    writable: dict[str, str] = {}
    decrypts: set[str] = set()
    environment = backend.state_container_id.rsplit("/", 1)[-1].removeprefix("pulumi-state-")
    for grant in held:
        scope = grant.scope.lower()
        if scope in keys and grant.role.allows("Microsoft.KeyVault/vaults/keys/decrypt/action", data=True):
            decrypts.add(keys[scope])
        # Updating a key (disable, expire, change its operations) breaks every deploy of its
        # stacks, and ARM cannot undo it: a write of that state.
        for key, layer in keys.items():
            if (scope == key or key.startswith(scope + "/")) and any(
                grant.role.allows(f"Microsoft.KeyVault/vaults/keys/{verb}", data=True)
                for verb in ("update/action", "delete", "create/action")
            ):
                graph.add(
                    principal,
                    node(STATE_WRITE, f"{environment}.{layer} (its secrets key)"),
                    f"{grant.role.name} on the key: disables or deletes it",
                )
        if not (scope == container or container.startswith(scope + "/") or scope in ("", "/")):
            continue
        for stack in stacks:
            state = f".pulumi/stacks/{backend.project}/{stack}.json"
            probe = permissions.Operation(
                f"{blob}/read", backend.state_container_id, "", data=True, attributes=((permissions.BLOB_PATH, state),)
            )
            if grant.covers(probe):
                readable[stack] = grant.role.name
            if grant.covers(dataclasses.replace(probe, action=f"{blob}/write")):
                writable[stack] = grant.role.name
    for stack, why in sorted(writable.items()):
        graph.add(principal, node(STATE_WRITE, stack), f"{why} on its state")
    for stack, why in sorted(readable.items()):
        _, unit = parse_stack(stack)
        if (unit.layer if unit else "foundation") in decrypts:
            graph.add(principal, node(STATE_SECRETS, stack), f"{why} on its state, and its key")


# ---------------------------------------------------------------------------------------------
# The invariants (tests/test_reach.py holds them on dev, staging, prod and prod-scale)
# ---------------------------------------------------------------------------------------------
def _namespace_of(value: str) -> str | None:
    scope = name_of(value)
    return scope.split("/namespaces/", 1)[1].split("/", 1)[0] if "/namespaces/" in scope else None


def pull_request_violations(model: Model) -> list[str]:
    """Nothing a pull request runs reaches a credential that writes."""
    return [
        found
        for entry in (FORK_PR, SAME_REPOSITORY_PR)
        for found in violations(model.graph, entry, lambda n: kind_of(n) in WRITING)
    ]


def team_scopes(model: Model, team: str) -> set[str]:
    """What a team's own workloads may write: the scopes their identities hold grants on."""
    owned = set()
    for principal, owner in model.team_of.items():
        if owner == team and kind_of(principal) == IDENTITY:
            owned |= {name_of(e.target) for e in model.graph.edges.get(principal, []) if kind_of(e.target) == WRITE}
    return owned


def outside_approvers_violations(model: Model, config: PlatformConfig) -> list[str]:
    """Nobody but the environment's approvers (and the hub's owners, and the delivery's
    administrators, who set the approvers) reaches a write on its resources, its states or
    cluster admin; a team writes only in its own namespaces and on what its workloads were
    granted (team_violations), a node is checked by node_violations."""
    # Dev has no reviewers: whoever merges to main is its approver (docs/deploying.md).
    allowed = {
        approvers(model.environment),
        HUB_OWNERS,
        DELIVERY_ADMINS,
        *([MAINTAINER] if model.environment == "dev" else []),
    }
    found = []
    for entry in model.entries:
        # A site's administrators act as every workload there, by design: site_violations.
        if entry in allowed or entry.startswith((node(ENTRY, "a node of"), node(ENTRY, "the administrators of"))):
            continue
        team = model.team_of.get(entry) or next((t for t in config.teams if entry == team_entry(t)), None)
        own_namespaces = set(config.teams[team].namespaces) if team else set()
        owned = team_scopes(model, team) if team else set()

        def forbidden(n: str, own_namespaces=own_namespaces, owned=owned) -> bool:
            kind = kind_of(n)
            if kind in (PODS, SECRETS):
                return _namespace_of(n) not in own_namespaces
            if kind == WRITE:
                return name_of(n) not in owned
            return kind in WRITING

        found += violations(model.graph, entry, forbidden)
    return found


def team_violations(model: Model, config: PlatformConfig) -> list[str]:
    """Each team reaches only its own namespaces, its own workloads' identities and what those
    were granted; never cluster admin, a node or a state."""
    found = []
    for team, spec in config.teams.items():
        entries = [team_entry(team), *(e for e, t in model.team_of.items() if t == team and kind_of(e) == ENTRY)]
        for entry in entries:

            def forbidden(n: str, team=team, spec=spec) -> bool:
                kind = kind_of(n)
                if kind in (PODS, SECRETS):
                    return _namespace_of(n) not in spec.namespaces
                if kind == IDENTITY:
                    return model.team_of.get(n) != team
                return kind in (CLUSTER_ADMIN, NODE, STATE_SECRETS, STATE_WRITE, GITHUB, TENANT)

            found += violations(model.graph, entry, forbidden)
    return found


def node_violations(model: Model) -> list[str]:
    """A node reaches its kubelet's identity and what the pods that may run on it reach (their
    service accounts and identities), and no cluster admin, no state, no other node."""
    found = []
    for key, cluster in model.clusters.items():
        start = node(NODE, cluster.id)

        def forbidden(n: str, cluster=cluster, start=start) -> bool:
            kind = kind_of(n)
            if kind == NODE:
                return n != start
            return kind in (CLUSTER_ADMIN, STATE_SECRETS, STATE_WRITE, GITHUB, TENANT)

        found += violations(model.graph, node_entry(key), forbidden)
    return found


def site_violations(model: Model) -> list[str]:
    """A site's administrators reach its cluster, the workloads that run there and their grants:
    no state, no other cluster, no GitHub environment."""
    found = []
    for key, cluster in model.clusters.items():
        entry = site_admins(key)
        if entry not in model.entries:
            continue

        def forbidden(n: str, cluster=cluster) -> bool:
            kind = kind_of(n)
            if kind in (CLUSTER_ADMIN, NODE, PODS, SECRETS):
                return not name_of(n).startswith(cluster.id)
            return kind in (STATE_SECRETS, STATE_WRITE, GITHUB, TENANT)

        found += violations(model.graph, entry, forbidden)
    return found


def other_environment_violations(model: Model, hub_scopes: Iterable[str], own_subzone: str) -> list[str]:
    """No identity of this environment writes a hub object another environment uses (its own
    API server subzones are its own), nor reaches another environment's state."""
    hub = [scope.lower() for scope in hub_scopes]
    environment = model.environment

    def forbidden(n: str) -> bool:
        scope = name_of(n).lower()
        if kind_of(n) == TENANT:
            return True
        if kind_of(n) in (STATE_SECRETS, STATE_WRITE):
            return not scope.startswith(f"{environment}.")
        if kind_of(n) != WRITE:
            return False
        if any(scope == h or scope.startswith(h + "/") for h in hub):
            return own_subzone.lower() not in scope
        return "pulumi-state-" in scope and f"pulumi-state-{environment}" not in scope

    # The delivery's administrators hold the tenant's app roles by design (they make the APIs'
    # applications and assign their roles): the one entry that reaches them.
    return [
        found
        for entry in model.entries
        if entry != DELIVERY_ADMINS
        for found in violations(model.graph, entry, forbidden)
    ]


# ---------------------------------------------------------------------------------------------
# The generated table (docs/who-reaches-what.md, `make docs`)
# ---------------------------------------------------------------------------------------------
def _count(found: Iterable[str], kind: str) -> int:
    return sum(1 for n in found if kind_of(n) == kind)


def markdown_table(model: Model) -> str:
    """Per entry point: the GitHub environments and identities it becomes, and what of them
    writes (Azure scopes, clusters administered, namespaces with pods, states)."""
    lines = [
        "| entry point | GitHub environments | identities | writes (Azure scopes) | cluster admin "
        "| pods in namespaces | states read / written |",
        "|---|---|---|---|---|---|---|",
    ]
    grouped: dict[str, list[str]] = {}
    for entry in model.entries:
        # A team's pods are alike: one row, the first as the example.
        label = name_of(entry)
        if label.startswith("a pod of"):
            label = "a workload's pod (each alike)"
        grouped.setdefault(label, []).append(entry)
    for label, entries in grouped.items():
        found = model.graph.reach(entries[0])
        identities = sorted(short(name_of(n)) for n in found if kind_of(n) == IDENTITY)
        shown = ", ".join(f"`{i}`" for i in identities[:4]) + (
            f" and {len(identities) - 4} more" if len(identities) > 4 else ""
        )
        environments = sorted(name_of(n) for n in found if kind_of(n) == GITHUB)
        github = (
            f"{len(environments)}: `{environments[0]}`..."
            if len(environments) > 1
            else (f"`{environments[0]}`" if environments else "none")
        )
        lines.append(
            f"| {label} | {github} | {shown or 'none'} | {_count(found, WRITE) or 'none'} "
            f"| {_count(found, CLUSTER_ADMIN) or 'none'} | {_count(found, PODS) or 'none'} "
            f"| {_count(found, STATE_SECRETS)} / {_count(found, STATE_WRITE)} |"
        )
    return "\n".join(lines) + "\n"
