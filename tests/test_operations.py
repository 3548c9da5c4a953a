"""Dashboards and logs (issue 22, part 3): Container Insights on every cluster, private
ingestion through an Azure Monitor Private Link Scope in both DNS layouts, table plans and
retention from config, Managed Grafana private with Entra ID, and dashboards as code whose
every query parses and reads only series the platform collects."""

from __future__ import annotations

import json
import os

import promql_parser
import pytest

from facts import metrics
from planning import alerts as alerts_plan
from planning.dashboards import dashboard_files
from planning.private_link import ZONES_BY_GROUP_ID
from tests.conftest import ROOT, stack_values
from tests.test_alerts import selected_metrics
from tests.test_config_errors import expect_problem, set_in
from validation.loader import parse_platform_config

CLUSTER = "azure-native:containerservice:ManagedCluster"
DCR = "azure-native:monitor:DataCollectionRule"
DCRA = "azure-native:monitor:DataCollectionRuleAssociation"
DCE = "azure-native:monitor:DataCollectionEndpoint"
WORKSPACE = "azure-native:operationalinsights:Workspace"
DEPLOYMENT = "azure-native:resources:Deployment"
SCOPE = "azure-native:monitor:PrivateLinkScope"
SCOPED = "azure-native:monitor:PrivateLinkScopedResource"
ENDPOINT = "azure-native:network:PrivateEndpoint"
ZONE_GROUP = "azure-native:network:PrivateDnsZoneGroup"
GRAFANA = "azure-native:dashboard:Grafana"
ASSIGNMENT = "azure-native:authorization:RoleAssignment"


def _config(stack: str):
    return parse_platform_config(stack_values(stack), stack=stack)


def _name(resource_id: str) -> str:
    return resource_id.rstrip("/").rsplit("/", 1)[1]


def _names(plan, token: str, key: str) -> set[str]:
    return {r.inputs[key] for r in plan.of_type(token)}


# -- logs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_container_insights_on_every_cluster_with_its_managed_identity(plans, stack):
    plan = plans[stack]
    clusters = plan.of_type(CLUSTER)
    assert len(clusters) == len(_config(stack).clusters)
    rules = {r.inputs["dataCollectionRuleName"]: r.inputs for r in plan.of_type(DCR)}
    for cluster in clusters:
        agent = cluster.inputs["addonProfiles"]["omsagent"]
        assert agent["enabled"] is True
        assert agent["config"]["useAADAuth"] == "true"
        assert "/workspaces/" in agent["config"]["logAnalyticsWorkspaceResourceID"]
        key = cluster.inputs["tags"]["cluster"]
        logs = next(r for name, r in rules.items() if name.endswith(f"-{key}-logs"))
        (extension,) = logs["dataSources"]["extensions"]
        assert extension["extensionName"] == "ContainerInsights"
        assert "Microsoft-ContainerLogV2" in extension["streams"]
        assert extension["extensionSettings"]["dataCollectionSettings"]["enableContainerLogV2"] is True
        # Legacy ContainerLog doubles the bill for the same lines: not collected.
        assert "Microsoft-ContainerLog" not in extension["streams"]
    associations = [r.inputs for r in plan.of_type(DCRA)]
    names = [a["associationName"] for a in associations]
    assert names.count("ContainerInsightsExtension") == len(clusters)
    # AKS requires this exact name for the agents' configuration endpoint.
    assert names.count("configurationAccessEndpoint") == len(clusters)


def test_table_plans_and_retention_come_from_config(plans):
    """Set through an incremental ARM deployment: built-in tables exist with their workspace,
    and the provider refuses to create an existing resource."""
    workspaces = _names(plans["prod"], WORKSPACE, "workspaceName")
    deployments = [r for r in plans["prod"].of_type(DEPLOYMENT) if r.inputs["deploymentName"].startswith("tables-")]
    assert len(deployments) == len(workspaces)
    for deployment in deployments:
        assert deployment.inputs["properties"]["mode"] == "Incremental"
        tables = {
            r["name"].split("/")[1]: (r["name"].split("/")[0], r["properties"])
            for r in deployment.inputs["properties"]["template"]["resources"]
        }
        (workspace,) = {w for w, _ in tables.values()}
        assert workspace in workspaces
        assert tables["ContainerLogV2"][1] == {"plan": "Basic", "totalRetentionInDays": 90}
        assert tables["KubeEvents"][1] == {"plan": "Analytics", "retentionInDays": 90, "totalRetentionInDays": 365}


@pytest.mark.parametrize(
    ("path", "value", "key", "reason"),
    [
        (
            "operations.containerLogs.tables.KubeEvents",
            {"plan": "Basic"},
            "platform:operations.containerLogs.tables.KubeEvents.plan",
            "cannot use the Basic plan",
        ),
        (
            "operations.containerLogs.tables.ContainerLogV2",
            {"plan": "Basic", "retentionDays": 60},
            "platform:operations.containerLogs.tables.ContainerLogV2.retentionDays",
            "30 days interactive",
        ),
        (
            "operations.containerLogs.namespaces",
            [],
            "platform:operations.containerLogs.namespaces",
            "namespaceFilteringMode",
        ),
        (
            "operations.privateLinkScope.scopeId",
            None,
            "platform:operations.privateLinkScope.scopeId",
            "one Azure Monitor private link scope per DNS",
        ),
    ],
)
def test_bad_logging_config_names_its_key(path, value, key, reason):
    expect_problem("prod", set_in(path, value), key, reason)


def test_a_grafana_name_beyond_azures_limit_names_the_key():
    # `grafana-platformla-staging`: 26 characters.
    expect_problem(
        "staging",
        set_in("prefix", "platformla"),
        "platform:operations.grafana.enabled",
        "longer than Managed Grafana's 23 characters",
    )


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_the_agent_leaves_out_the_excluded_namespaces_container_logs(plans, stack):
    """Container logs are filtered by the agent's ConfigMap, not the collection rule (which
    covers inventory and metrics): parsed here as the agent parses it, TOML."""
    import tomllib

    excluded = set(_config(stack).operations.container_logs.namespaces)
    maps = [
        r.inputs
        for r in plans[stack].of_type("kubernetes:core/v1:ConfigMap")
        if r.inputs["metadata"]["name"] == "container-azm-ms-agentconfig"
    ]
    assert len(maps) == len(_config(stack).clusters)
    for config_map in maps:
        assert config_map["metadata"]["namespace"] == "kube-system"
        assert config_map["data"]["schema-version"] == "v1"
        settings = tomllib.loads(config_map["data"]["log-data-collection-settings"])["log_collection_settings"]
        for stream in ("stdout", "stderr"):
            assert settings[stream]["enabled"] is True
            assert {"kube-system", "gatekeeper-system"} | excluded == set(settings[stream]["exclude_namespaces"])


# -- private link scope, both layouts -----------------------------------------------------------


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_with_the_hubs_zones_the_hubs_owner_adds_the_environment_to_the_hubs_scope(plans, stack):
    """One scope per DNS, the hub's: the environment writes nothing there (a right to add its own
    members would be one to remove another environment's) and asks the hub's owner to add every
    workspace and collection endpoint (stack output hubRequests)."""
    plan = plans[stack]
    assert not plan.of_type(SCOPE) and not plan.of_type(SCOPED)
    members = plan.outputs["hubRequests"]["monitorScopeMembers"]
    workspaces = _names(plan, WORKSPACE, "workspaceName")
    endpoints = _names(plan, DCE, "dataCollectionEndpointName")
    assert workspaces and endpoints
    assert set(members) == workspaces | endpoints
    assert {_name(linked) for linked in members.values()} == workspaces | endpoints
    _refuse_public_ingestion(plan)


def test_with_its_own_zones_the_environment_has_its_own_scope_and_endpoints(plans):
    plan = plans["dev"]
    (scope,) = plan.of_type(SCOPE)
    assert scope.inputs["accessModeSettings"]["ingestionAccessMode"] == "PrivateOnly"
    assert scope.inputs["accessModeSettings"]["queryAccessMode"] == "Open"
    endpoints = [r for r in plan.of_type(ENDPOINT) if r.name.endswith("-pe-azuremonitor")]
    assert len(endpoints) == len({c.region for c in _config("dev").clusters.values()})
    groups = [r for r in plan.of_type(ZONE_GROUP) if r.name.startswith("monitoring-link-pe-azuremonitor")]
    for group in groups:
        zones = [c["name"] for c in group.inputs["privateDnsZoneConfigs"]]
        assert zones == [z.replace(".", "-") for z in ZONES_BY_GROUP_ID["azuremonitor"]]
    members = {_name(r.inputs["linkedResourceId"]) for r in plan.of_type(SCOPED)}
    assert members == _names(plan, WORKSPACE, "workspaceName") | _names(plan, DCE, "dataCollectionEndpointName")
    _refuse_public_ingestion(plan)


def _refuse_public_ingestion(plan):
    for endpoint in plan.of_type(DCE):
        assert endpoint.inputs["networkAcls"]["publicNetworkAccess"] == "Disabled", endpoint.name
    for workspace in plan.of_type(WORKSPACE):
        assert workspace.inputs["publicNetworkAccessForIngestion"] == "Disabled", workspace.name
    # Prometheus ingests through the region's endpoint, the one in the scope.
    endpoints = _names(plan, DCE, "dataCollectionEndpointName")
    for rule in plan.of_type(DCR):
        if "prometheusForwarder" in rule.inputs.get("dataSources", {}):
            assert _name(rule.inputs["dataCollectionEndpointId"]) in endpoints


# -- Grafana and dashboards ----------------------------------------------------------------------


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_grafana_is_private_entra_only_and_reads_every_regions_workspace(plans, stack):
    plan = plans[stack]
    (instance,) = plan.of_type(GRAFANA)
    properties = instance.inputs["properties"]
    assert properties["publicNetworkAccess"] == "Disabled"
    assert properties["apiKey"] == "Disabled"  # no service-account tokens that outlive a role
    monitor_workspaces = _names(plan, "azure-native:monitor:AzureMonitorWorkspace", "azureMonitorWorkspaceName")
    integrations = properties["grafanaIntegrations"]["azureMonitorWorkspaceIntegrations"]
    assert {_name(i["azureMonitorWorkspaceResourceId"]) for i in integrations} == monitor_workspaces
    assert [r for r in plan.of_type(ENDPOINT) if r.name == "grafana-pe-grafana"]
    readers = {
        _name(r.inputs["scope"])
        for r in plan.of_type(ASSIGNMENT)
        if r.inputs["roleDefinitionId"].endswith("b0d8363b-8ddd-447d-831f-62ca05bff136")
    }
    assert readers == monitor_workspaces
    admins = [
        r
        for r in plan.of_type(ASSIGNMENT)
        if r.inputs["roleDefinitionId"].endswith("22926164-76b3-42b3-bc55-97df8dab3e41")
    ]
    assert admins and all(r.inputs["principalType"] == "Group" for r in admins)


def test_the_dashboards_reach_grafana_with_a_token_that_never_enters_the_state(plans, tmp_path):
    """No Pulumi provider holds a Grafana credential (a provider's inputs are in the state, which
    every branch's preview reads); the tenants unit exports where Grafana is, and the deploy job
    runs scripts/dashboards.py, which trades the job's OIDC token for an Entra ID token for
    Grafana's API and posts the folder and every dashboard (against a fake Entra ID and Grafana)."""
    import http.server
    import subprocess
    import sys
    import threading

    assert not [r for r in plans["prod"].resources if r.type.startswith(("grafana:", "pulumi:providers:grafana"))]
    seen = []

    class Fake(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"])).decode()
            seen.append((self.path, self.headers.get("Authorization"), body))
            if self.path.endswith("/oauth2/v2.0/token"):
                assert "client_assertion=github-oidc-token" in body and "6f2d169c" in body
                answer, code = {"access_token": "grafana-token"}, 200
            elif self.path == "/api/folders" and len([p for p, _, _ in seen if p == "/api/folders"]) > 1:
                answer, code = {"message": "exists"}, 409
            else:
                answer, code = {"status": "success"}, 200
            self.send_response(code)
            self.end_headers()
            self.wfile.write(json.dumps(answer).encode())

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    token_file = tmp_path / "token"
    token_file.write_text("github-oidc-token")
    env = {
        **os.environ,
        "AZURE_FEDERATED_TOKEN_FILE": str(token_file),
        "AZURE_TENANT_ID": "tenant",
        "AZURE_CLIENT_ID": "client",
        "AZURE_AUTHORITY_HOST": base + "/",
    }
    script = [sys.executable, "scripts/dashboards.py", "--stack", "prod", "--endpoint", base]
    try:
        for _ in range(2):  # a second deploy: the folder exists, the dashboards are overwritten
            result = subprocess.run(script, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
            assert result.returncode == 0, result.stderr
    finally:
        server.shutdown()
    boards = [json.loads(body) for path, _, body in seen if path == "/api/dashboards/db"]
    assert sorted(b["dashboard"]["uid"] for b in boards) == sorted(2 * [b["uid"] for b in dashboard_files().values()])
    assert all(b["overwrite"] and b["folderUid"] == "platform" for b in boards)
    assert {auth for path, auth, _ in seen if path.startswith("/api/")} == {"Bearer grafana-token"}


def _queries(board):
    for panel in board["panels"]:
        for target in panel["targets"]:
            yield panel["title"], target["expr"].replace("$cluster", "c")


def test_every_dashboard_query_parses_and_reads_only_collected_series():
    known = (
        metrics.DCGM_METRICS
        | metrics.KUBE_STATE_METRICS
        | frozenset(metrics.KUEUE_METRICS)
        | metrics.STRIMZI_METRICS
        | metrics.ISTIO_METRICS
        | {record for rules in metrics.AKS_RECORDING_RULES.values() for record, _, _ in rules}
    )
    exported = {alerts_plan.label_series(label) for label in alerts_plan.EXPORTED_NODE_LABELS}
    boards = dashboard_files()
    assert {"fleet-capacity", "gpu-health", "kafka", "networking", "serving"} <= set(boards)
    assert len({b["uid"] for b in boards.values()}) == len(boards)
    for name, board in boards.items():
        for title, expression in _queries(board):
            unknown = selected_metrics(expression) - known
            assert not unknown, (name, title, unknown)
            labels: set[str] = set()

            def visit(node, labels=labels):
                if isinstance(node, promql_parser.VectorSelector) and node.name == "kube_node_labels":
                    labels.update(m.name for m in node.matchers.matchers if m.name.startswith("label_"))

            promql_parser.walk(promql_parser.parse(expression), visit)
            assert labels <= exported, (name, title, labels - exported)
