"""Who can reach what (planning/reach.py, offline/reach.py; docs/decisions/0009-who-reaches-what.md).

The permission model proves each identity may do its job; these prove nobody reaches more, on
every environment, from every entry point: an outside contributor's fork pull request, a
same-repository pull request, a maintainer who merges, each environment's approvers, each team,
each workload's pod, each node. A failure prints the path, edge by edge, with why each is
taken. The graph is built from the same unit plans as the permission model (shared, not
previewed again) and the delivery project's plan.
"""

from __future__ import annotations

import dataclasses

import pytest

from offline import identities as bootstrap
from offline import reach
from planning import lustre_csi
from planning import reach as graph_model
from planning.naming import region_code
from planning.permissions import Condition, Grant, RoleDefinition
from tests.conftest import ROOT
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

ALL = ("dev", "staging", "prod", "prod-scale")


def config_of(stack: str):
    return parse_platform_config(read_stack_config(ROOT, stack).values)


@pytest.fixture(scope="module")
def models(unit_plans) -> dict[str, reach.Model]:
    built = {}
    for stack in ALL:
        config = config_of(stack)
        built[stack] = reach.build(
            config,
            unit_plans[stack].plans,
            bootstrap.stack_identities(stack),
            bootstrap.backend(config.environment),
        )
    return built


def report(found: list[str]) -> str:
    return f"{len(found)} paths, the first:\n" + "\n".join(found[:5])


@pytest.mark.parametrize("stack", ALL)
def test_nothing_a_pull_request_runs_reaches_a_credential_that_writes(models, stack):
    """Paths 1 and 2 of the cold review: a branch's code runs as the plan identities (their
    GitHub environment admits every branch), which read states and Kafka's CA certificates;
    neither holds a credential that writes, and no runner carries an identity."""
    model = models[stack]
    assert model.graph.reach(reach.SAME_REPOSITORY_PR), "pull requests reach nothing at all: the model is empty"
    found = reach.pull_request_violations(model)
    assert not found, report(found)
    # What a pull request does reach: the plan identities and the states they read.
    reached = model.graph.reach(reach.SAME_REPOSITORY_PR)
    assert {graph_model.kind_of(n) for n in reached} >= {graph_model.GITHUB, graph_model.IDENTITY}
    assert not [n for n in model.graph.reach(reach.FORK_PR) if n != reach.FORK_PR]


@pytest.mark.parametrize("stack", ALL)
def test_nobody_outside_an_environments_approvers_writes_its_resources_or_administers_its_clusters(models, stack):
    """Prod's resources, states and clusters are reached only through prod's approvers (dev's
    through whoever merges: it has no reviewers); teams and their pods only in their own
    namespaces and on what their workloads were granted."""
    model = models[stack]
    found = reach.outside_approvers_violations(model, config_of(stack))
    assert not found, report(found)
    if model.environment == "prod":
        admins = [
            n for n in model.graph.reach(reach.approvers("prod")) if graph_model.kind_of(n) == graph_model.CLUSTER_ADMIN
        ]
        # Every AKS cluster and every site: the cluster layer writes a site's extensions, Flux
        # configuration and baseline, each of which runs as its cluster admin.
        assert len(admins) == len(config_of(stack).unit_cluster_keys()), "prod's approvers deploy every cluster"


@pytest.mark.parametrize("stack", ALL)
def test_no_environment_writes_a_hub_object_another_uses_or_another_environments_state(models, stack):
    """Path 3: the hub's VNet and shared zones are the hub owner's; an environment writes its own
    API server subzones only, and no state but its own."""
    config = config_of(stack)
    hub = config.network.hub
    scopes = [s for s in (hub.virtual_network_id, hub.private_dns_zones_resource_group_id) if s] if hub else []
    found = reach.other_environment_violations(
        models[stack], scopes, f"{config.prefix}-{config.environment}.privatelink."
    )
    assert not found, report(found)


@pytest.mark.parametrize("stack", ALL)
def test_each_team_reaches_only_its_own_namespaces_identities_and_data(models, stack):
    model = models[stack]
    found = reach.team_violations(model, config_of(stack))
    assert not found, report(found)
    for team in config_of(stack).teams:
        reached = model.graph.reach(reach.team_entry(team))
        assert any(graph_model.kind_of(n) == graph_model.PODS for n in reached), f"team {team} runs nothing"


@pytest.mark.parametrize("stack", ALL)
def test_a_node_reaches_only_its_kubelet_and_the_grants_of_its_pods(models, stack):
    model = models[stack]
    found = reach.node_violations(model)
    assert not found, report(found)


def test_a_grant_the_model_cannot_place_fails(unit_plans):
    """A role assignment to a principal the model does not know (here, a new identity the
    program would grant a role to) stops the model instead of being left out."""
    config = config_of("prod")
    plans = dict(unit_plans["prod"].plans)
    stack, plan = next((s, p) for s, p in plans.items() if any(r.type.endswith(":RoleAssignment") for r in p.resources))
    assignment = next(r for r in plan.resources if r.type.endswith(":RoleAssignment"))
    stranger = dataclasses.replace(
        assignment, inputs={**assignment.inputs, "principalId": "00000000-0000-4000-8000-00000000beef"}
    )
    plans[stack] = dataclasses.replace(plan, resources=[*plan.resources, stranger])
    with pytest.raises(graph_model.Unclassified, match="00000000-0000-4000-8000-00000000beef"):
        reach.build(config, plans, bootstrap.stack_identities("prod"), bootstrap.backend("prod"))


def test_a_persistent_volume_the_model_cannot_place_fails(unit_plans):
    """A host path volume would give a claim's pods the node's disk: the model refuses any volume
    but a claimed Lustre one rather than leaving it out."""
    config = config_of("prod")
    plans = dict(unit_plans["prod"].plans)
    stack = "prod.cluster-eus2"
    volume = next(r for r in plans[stack].resources if r.type == "kubernetes:core/v1:PersistentVolume")
    spec = {key: value for key, value in volume.inputs["spec"].items() if key != "csi"}
    host = dataclasses.replace(volume, inputs={**volume.inputs, "spec": {**spec, "hostPath": {"path": "/"}}})
    plans[stack] = dataclasses.replace(plans[stack], resources=[*plans[stack].resources, host])
    with pytest.raises(graph_model.Unclassified, match="persistent volume"):
        reach.build(config, plans, bootstrap.stack_identities("prod"), bootstrap.backend("prod"))


# ---------------------------------------------------------------------------------------------
# The graph's rules, on their own
# ---------------------------------------------------------------------------------------------
CLUSTER = "/subscriptions/s/resourceGroups/g/providers/Microsoft.ContainerService/managedClusters/c"
ONE = graph_model.Cluster(CLUSTER, {"kube-system": True, "team": False}, {"team": ("app", "default")})


def edges(grants, principal_type="ServicePrincipal", roles=None):
    return {target for target, _ in graph_model.grant_edges(grants, principal_type, roles or {}, [ONE])}


def test_a_principal_that_may_assign_a_role_to_its_own_kind_has_it():
    owner_like = RoleDefinition("Contributor", "b24988ac", ("*",), ("Microsoft.Authorization/*/Write",))
    delegation = RoleDefinition("RBAC Administrator", "f58310d9", ("Microsoft.Authorization/roleAssignments/write",))
    to_service_principals = Condition(role_pairs=((frozenset({"b24988ac"}), frozenset({"serviceprincipal"})),))
    to_groups = Condition(role_pairs=((frozenset({"b24988ac"}), frozenset({"group"})),))
    roles = {"b24988ac": owner_like}
    scope = "/subscriptions/s"
    assert graph_model.node(graph_model.WRITE, scope) in edges(
        [Grant(delegation, scope, to_service_principals)], roles=roles
    )
    assert graph_model.node(graph_model.WRITE, scope) not in edges([Grant(delegation, scope, to_groups)], roles=roles)


def test_writing_a_cluster_resource_is_administering_the_cluster():
    contributor = RoleDefinition("Contributor", "b24988ac", ("*",))
    assert graph_model.node(graph_model.CLUSTER_ADMIN, CLUSTER) in edges([Grant(contributor, CLUSTER)])
    reader = RoleDefinition("Reader", "acdd72a7", ("*/read",))
    assert not edges([Grant(reader, CLUSTER)])


def test_writing_cosmos_db_role_assignments_or_the_account_is_holding_its_data():
    """Cosmos DB's data roles have no delegation condition: whoever writes the account's role
    assignments (the tenants' custom role) or the account (turning keys back on) holds its data;
    reading it does not."""
    account = "/subscriptions/s/resourceGroups/rg-databases/providers/Microsoft.DocumentDB/databaseAccounts/cosmos"
    data = graph_model.node(graph_model.DATA, f"Cosmos DB data of the accounts at {account}")
    assigner = RoleDefinition("assigner", "a", ("Microsoft.DocumentDB/databaseAccounts/sqlRoleAssignments/write",))
    assert data in edges([Grant(assigner, account)])
    contributor = RoleDefinition("Contributor", "b24988ac", ("*",))
    assert data in edges([Grant(contributor, account)])
    reader = RoleDefinition("Reader", "acdd72a7", ("*/read",))
    assert not edges([Grant(reader, account)])


def test_pods_in_a_namespace_act_as_its_accounts_and_secrets_by_name_reach_only_those():
    aks = graph_model.AKS
    writer = RoleDefinition("writer", "w", data_actions=(f"{aks}/pods/write", f"{aks}/secrets/read"))
    reached = edges([Grant(writer, f"{CLUSTER}/namespaces/team")])
    assert graph_model.node(graph_model.PODS, f"{CLUSTER}/namespaces/team") in reached
    assert graph_model.node(graph_model.SECRETS, f"{CLUSTER}/namespaces/team") in reached
    assert graph_model.node(graph_model.CLUSTER_ADMIN, CLUSTER) not in reached
    # Cluster-wide pods include kube-system's: cluster admin.
    assert graph_model.node(graph_model.CLUSTER_ADMIN, CLUSTER) in edges([Grant(writer, CLUSTER)])
    named = RoleDefinition("ca reader", "r", data_actions=(f"{aks}/secrets/read",))
    reached = edges(
        [Grant(named, f"{CLUSTER}/namespaces/team", Condition(object_names=frozenset({"c-cluster-ca-cert"})))]
    )
    assert reached == {
        graph_model.node(graph_model.DATA, f"{aks}/secrets/read@{CLUSTER}/namespaces/team/c-cluster-ca-cert")
    }


def test_a_data_action_the_model_does_not_know_is_refused():
    unknown = RoleDefinition("new", "n", data_actions=("Microsoft.Sql/servers/databases/write",))
    with pytest.raises(graph_model.Unclassified, match=r"Microsoft\.Sql"):
        edges([Grant(unknown, "/subscriptions/s")])


def test_a_provider_that_keeps_a_credential_in_the_state_is_refused():
    """A provider's inputs are in the state, which plan identities read: the Grafana provider
    with a token (what dashboards were provisioned through before), or a kubeconfig with a
    token, would be a credential a pull request reaches."""
    from types import SimpleNamespace

    grafana = SimpleNamespace(type="pulumi:providers:grafana", name="dashboards-grafana", inputs={"auth": "token"})
    with pytest.raises(graph_model.Unclassified, match="grafana"):
        reach._provider_without_credentials("prod.tenants", grafana)
    kubeconfig = "users:\n- name: u\n  user:\n    token: abc\n"
    k8s = SimpleNamespace(type="pulumi:providers:kubernetes", name="aks-eus2-k8s", inputs={"kubeconfig": kubeconfig})
    with pytest.raises(graph_model.Unclassified, match="token"):
        reach._provider_without_credentials("prod.tenants", k8s)
    kubelogin = "users:\n- name: u\n  user:\n    exec:\n      command: kubelogin\n"
    reach._provider_without_credentials(
        "prod.tenants", SimpleNamespace(**{**vars(k8s), "inputs": {"kubeconfig": kubelogin}})
    )


@pytest.mark.parametrize("stack", ALL)
def test_the_delivery_administrators_set_every_deploy_environments_approvers_and_nothing_reaches_them(models, stack):
    """The delivery project applies GitHub's settings with an organization owner's token from the
    administrator's own shell: whoever holds it decides who approves, so it reaches every deploy
    identity of the environment, through GitHub; nothing else in the model leads to it."""
    model = models[stack]
    environment = config_of(stack).environment
    reached = model.graph.reach(reach.DELIVERY_ADMINS)
    for layer in ("foundation", "data", "cluster", "tenants", "fleet"):
        assert graph_model.node(graph_model.IDENTITY, f"id-ailab-deploy-{environment}-{layer}") in reached, layer
    assert not [
        source for source, edges in model.graph.edges.items() for e in edges if e.target == reach.DELIVERY_ADMINS
    ]


def test_a_key_role_that_can_disable_a_state_key_is_a_write_a_pull_request_must_not_reach(unit_plans):
    """Key Vault Crypto User can update a key (disable it, expire it), which ARM cannot undo; a
    plan identity holding it on its keys, as the delivery once granted, puts every branch within
    reach of breaking the environment's deploys. The delivery's key roles cannot."""
    config = config_of("prod")
    held = bootstrap.stack_identities("prod")
    crypto_user = bootstrap.built_in("12338af0-0e69-4776-bea7-57ae8d297424")
    assert crypto_user is not None
    planner = held.planner("foundation")
    held.grants[planner] = [
        dataclasses.replace(grant, role=crypto_user) if "/keys/" in grant.scope else grant
        for grant in held.grants[planner]
    ]
    model = reach.build(config, unit_plans["prod"].plans, held, bootstrap.backend(config.environment))
    found = reach.pull_request_violations(model)
    assert found and "secrets key" in found[0], found[:1]


@pytest.mark.parametrize("stack", ["prod"])
def test_writing_a_federated_credential_on_an_identity_is_becoming_it(models, stack):
    """A federated credential is all an identity checks: whoever may write one on it can make it
    trust a token of their own. Prod's tenants deploy identity writes the workloads' credentials
    through a role on the whole subscription, so it reaches every identity the program makes
    there, the clusters' kubelets included; the plan identities reach none."""
    model = models[stack]
    tenants = graph_model.node(graph_model.IDENTITY, "id-ailab-deploy-prod-tenants")
    edges = {e.target: e.why for e in model.graph.edges.get(tenants, []) if "federated credential" in e.why}
    kubelets = {t for t in edges if "kubelet" in t}
    assert kubelets and all("writes a federated credential on it" in edges[t] for t in kubelets)
    for layer in ("foundation", "data", "cluster", "tenants", "fleet"):
        planner = graph_model.node(graph_model.IDENTITY, f"id-ailab-plan-prod-{layer}")
        assert not [e for e in model.graph.edges.get(planner, []) if "federated credential" in e.why], layer


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_who_holds_the_postgresql_data_and_who_holds_only_a_login(models, stack):
    """The server's data is held by its Entra administrators (the tenants' deploy identity) and
    whoever can name them through ARM (the data unit's writers); a workload's pods hold exactly
    their role's grants; a pull request reaches the plan identity's login, no table."""
    model, config = models[stack], config_of(stack)
    host = f"psql-ailab-{config.environment}.postgres.database.azure.com"
    server = graph_model.node(graph_model.DATA, f"PostgreSQL data of {host}")
    for layer in ("tenants", "data"):
        deployer = graph_model.node(graph_model.IDENTITY, f"id-ailab-deploy-{config.environment}-{layer}")
        assert server in model.graph.reach(deployer), layer
    tables = [
        n
        for n in model.graph.reach(reach.team_entry("inference"))
        if graph_model.kind_of(n) == graph_model.DATA and n.startswith(f"{graph_model.DATA}: PostgreSQL ")
    ]
    assert any(" SELECT on experiments/public " in n for n in tables), tables
    assert not [n for n in tables if "INSERT" in n or "PostgreSQL data of" in n], tables
    pull_request = model.graph.reach(reach.SAME_REPOSITORY_PR)
    assert graph_model.node(graph_model.DATA, f"a PostgreSQL login to {host}") in pull_request
    assert not [n for n in pull_request if n.startswith(f"{graph_model.DATA}: PostgreSQL ")], "a branch reaches tables"


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_a_teams_lustre_directory_is_reached_by_its_pods_and_the_nodes_not_by_another_team(models, stack):
    """A training namespace's pods reach their team's directory through its claim; the GPU nodes
    of the region reach the whole file system (the kernel client, no root squash: docs/lustre.md
    says what that means); another team reaches neither."""
    model, config = models[stack], config_of(stack)
    directories = {
        n
        for n in model.graph.edges
        if graph_model.kind_of(n) == graph_model.DATA and "Managed Lustre" in n and "/teams/" in n
    }
    assert directories
    for team, spec in config.teams.items():
        reached = {n for n in model.graph.reach(reach.team_entry(team)) if n in directories}
        own = {n for n in directories if n.endswith(f"/teams/{team}")}
        assert reached == (own if spec.training_namespaces else set()), (team, reached)
    file_systems = {n.split("/teams/")[0] for n in directories}
    for key, cluster in model.clusters.items():
        # A dispatcher's node reaches training data too, as MultiKueue's identity, through the
        # jobs it may create on the workers: what it mounts itself is the question here.
        mounted = {n for n in model.graph.reach(graph_model.node(graph_model.NODE, cluster.id)) if n in file_systems}
        region = next(c.region for k, c in config.clusters.items() if key.endswith(f"-{k}"))
        expected = {n for n in file_systems if n.endswith(f"-{region_code(region)}")}
        mounts = any(key.endswith(f"-{k}") for k in lustre_csi.lustre_clusters(config))
        assert mounted == (expected if mounts else set()), (key, mounted)


def test_a_compromised_site_node_reaches_only_the_grants_of_the_workloads_that_run_there(models):
    """prod-scale's phx1 runs the trainer (through the site's Arc issuer): its nodes reach the
    trainer's identity and what it was granted, no other workload's identity, no cluster admin,
    no state, no other node."""
    model, config = models["prod-scale"], config_of("prod-scale")
    site = config.on_prem_clusters["phx1"]
    start = graph_model.node(graph_model.NODE, site.connected_cluster_id)
    reached = model.graph.reach(start)
    identities = {n for n in reached if graph_model.kind_of(n) == graph_model.IDENTITY}
    running = {w for w, spec in config.workloads.items() if "phx1" in spec.sites}
    assert running == {"trainer"}
    assert any("trainer" in n for n in identities), identities
    assert not [n for n in identities if "inference" in n], identities
    assert not [n for n in reached if graph_model.kind_of(n) in (graph_model.CLUSTER_ADMIN, graph_model.STATE_SECRETS)]
    assert not [n for n in reached if graph_model.kind_of(n) == graph_model.NODE and n != start]


def test_a_sites_administrators_act_as_its_workloads_and_reach_nothing_else(models):
    """Whoever administers phx1's Kubernetes can run pods as any workload there: they reach the
    trainer's identity and grants (docs/hybrid.md says so), and no state, no Azure cluster, no
    GitHub environment, no other workload's identity."""
    model, config = models["prod-scale"], config_of("prod-scale")
    assert not reach.site_violations(model), report(reach.site_violations(model))
    site = config.on_prem_clusters["phx1"]
    entry = reach.site_admins(site.connected_cluster_name)
    assert entry in model.entries
    identities = {n for n in model.graph.reach(entry) if graph_model.kind_of(n) == graph_model.IDENTITY}
    assert any("trainer" in n for n in identities) and not [n for n in identities if "inference" in n]


def test_from_azure_only_the_cluster_layers_deploys_administer_a_site(models):
    """A site's extensions and Flux configuration run as its cluster admin, and so does its Flux
    baseline: whoever writes any of them administers the site. In prod-scale that is prod's
    approvers (through the cluster layer's deploy identity: Contributor on the site's group, blob
    writes there to upload the baseline), the delivery's administrators (who set them) and the
    site's own administrators; not a pull request,
    not a team, not another layer's identity, not the site's Flux (it reads the baseline)."""
    model, config = models["prod-scale"], config_of("prod-scale")
    site = config.on_prem_clusters["phx1"]
    admin = graph_model.node(graph_model.CLUSTER_ADMIN, site.connected_cluster_id)
    holders = sorted(entry for entry in model.entries if admin in model.graph.reach(entry))
    # The delivery's administrators set prod's approvers, so they reach whatever those reach.
    expected = [reach.approvers("prod"), reach.site_admins(site.connected_cluster_name), reach.DELIVERY_ADMINS]
    assert holders == sorted(expected), holders
    found = model.graph.reach(reach.approvers("prod"))
    route = graph_model.path(found, admin)
    assert "Flux configurations" in route or "baseline" in route, route
    identities = [n for n in model.graph.nodes(graph_model.IDENTITY) if "flux" in n]
    assert identities, "the site's Flux identity is in the model"
    for flux in identities:
        reached = model.graph.reach(flux)
        assert not [n for n in reached if graph_model.kind_of(n) in graph_model.WRITING], graph_model.path(
            reached, next(n for n in reached if graph_model.kind_of(n) in graph_model.WRITING)
        )


TENANT = graph_model.node(graph_model.TENANT, "app-role assignments")


@pytest.mark.parametrize("stack", ALL)
def test_only_the_delivery_administrators_reach_the_tenants_app_roles_and_a_served_role_only_its_callers(models, stack):
    """Writing app-role assignments is tenant-wide (Graph's AppRoleAssignment.ReadWrite.All):
    the delivery's administrators hold it, and no pull request, merge, approver, team, pod or
    node reaches it. Each served API's role is held by the identities of the workloads config
    names as its callers, and by no one else's."""
    from planning.entra_applications import served_applications

    model = models[stack]
    config = config_of(stack)
    assert [entry for entry in model.entries if TENANT in model.graph.reach(entry)] == [reach.DELIVERY_ADMINS]
    held: dict[str, set[str]] = {}
    for source, edges in model.graph.edges.items():
        for edge in edges:
            if graph_model.kind_of(edge.target) == graph_model.SERVED_API and source != TENANT:
                held.setdefault(graph_model.name_of(edge.target), set()).add(source)
    expected: dict[str, set[str]] = {}
    for application in served_applications(config):
        for caller in application.callers:
            for role in caller.roles:
                expected.setdefault(f"{application.display_name} as {role}", set()).add(
                    graph_model.node(graph_model.IDENTITY, caller.identity_name)
                )
    assert held == expected
    assert bool(expected) == (config.serving is not None)


def test_an_app_role_of_another_resource_given_to_a_deploy_identity_joins_the_environments(unit_plans):
    """Were the delivery to give prod's tenants deploy identity an app role of another resource
    (Graph's AppRoleAssignment.ReadWrite.All, to assign the APIs' roles itself), the model places
    it as tenant-wide: prod's approvers would then reach past their environment."""
    import dataclasses as dc

    from offline.mocks import principal_id

    plan = bootstrap.delivery_plan("acme")
    (deployer,) = [
        r
        for r in plan.of_type("azure-native:managedidentity:UserAssignedIdentity")
        if r.inputs["resourceName"] == "id-ailab-deploy-prod-tenants"
    ]
    template = plan.of_type("azuread:index/appRoleAssignment:AppRoleAssignment")[0]
    graph_role = dc.replace(
        template,
        name="tenants-deployer-graph",
        urn=template.urn.rsplit("::", 1)[0] + "::tenants-deployer-graph",
        inputs={
            "appRoleId": "06b708a9-e830-4db3-a914-8e69da51d44f",
            "principalObjectId": principal_id(deployer, bootstrap.STATE_SUBSCRIPTION),
            "resourceObjectId": "a-lookup-of-microsoft-graph",
        },
        property_dependencies={},
    )
    identities = bootstrap.plan_identities("prod", dc.replace(plan, resources=[*plan.resources, graph_role]))
    assert identities.other_app_roles == {
        "id-ailab-deploy-prod-tenants": ["tenants-deployer-graph: app role 06b708a9-e830-4db3-a914-8e69da51d44f"]
    }
    model = reach.build(config_of("prod"), unit_plans["prod"].plans, identities, bootstrap.backend("prod"))
    found = reach.other_environment_violations(model, [], "")
    assert any("tenants-deployer-graph" in path for path in found), report(found)
