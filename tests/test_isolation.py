"""Inside the cluster (issue 7): egress allowlist, default-deny namespaces, admission control,
least-privilege RBAC, sandboxed pools, priorities; and every Kubernetes object the program
creates validated against the OpenAPI schema of its cluster's Kubernetes version."""

from __future__ import annotations

import json

import kubernetes_validate
import pytest

from contracts.cluster import AGENT_POOL as POOL
from contracts.cluster import CILIUM_POLICY, NAMESPACE, NETWORK_POLICY, VAP, cluster_of
from contracts.cluster import RULE_COLLECTION_GROUP as RULES
from contracts.cluster import VAP_BINDING as BINDING
from planning import egress as egress_plan
from planning import lustre_csi
from planning.admission import JOB_CONTROLLER, admission_rules
from planning.network_policy import ENTRA_ID_FQDN
from planning.sandbox import RUNTIME_CLASS, supports_nested_virtualization
from tests.conftest import ALL_STACKS, stack_values
from tests.support import k8s_schema

FIREWALL = "azure-native:network:AzureFirewall"
FIREWALL_POLICY = "azure-native:network:FirewallPolicy"


def config_of(stack: str) -> dict:
    # The parsed stack file, read once per process (conftest); a per-object parse of prod's file
    # cost the schema test seconds.
    return stack_values(stack)


def policies_in(plan, cluster: str, namespace: str) -> dict[str, dict]:
    """{kind/name: manifest} of the network policies of one namespace of one cluster."""
    return {
        f"{r.inputs['kind']}/{r.inputs['metadata']['name']}": r.inputs
        for r in plan.of_type(NETWORK_POLICY) + plan.of_type(CILIUM_POLICY)
        if cluster_of(r) == cluster and r.inputs["metadata"]["namespace"] == namespace
    }


# -- deny-by-default namespaces --------------------------------------------------------------------


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_namespace_denies_all_traffic_by_default_and_resolves_names(plans, stack):
    plan = plans[stack]
    namespaces = plan.of_type(NAMESPACE)
    assert namespaces
    for namespace in namespaces:
        name, cluster = namespace.inputs["metadata"]["name"], cluster_of(namespace)
        policies = policies_in(plan, cluster, name)
        deny = policies.get("NetworkPolicy/default-deny")
        assert deny is not None, f"{cluster}/{name} has no default-deny policy"
        assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
        dns = policies.get("NetworkPolicy/allow-dns") or policies.get("CiliumNetworkPolicy/allow-dns")
        assert dns is not None, f"{cluster}/{name} cannot resolve names"
        # Nothing opens the namespace to everything.
        for manifest in policies.values():
            for rule in manifest["spec"].get("egress", []) + manifest["spec"].get("ingress", []):
                for peer in rule.get("to", []) + rule.get("from", []):
                    assert peer.get("ipBlock", {}).get("cidr") != "0.0.0.0/0"
                assert "world" not in rule.get("toEntities", []) + rule.get("fromEntities", [])


def test_kueue_gets_its_webhooks_api_server_and_metrics(plans):
    policies = policies_in(plans["prod"], "eus2", "kueue-system")
    webhooks = policies["CiliumNetworkPolicy/allow-webhooks"]["spec"]["ingress"]
    ports = {p["port"] for rule in webhooks for p in rule["toPorts"][0]["ports"]}
    assert ports == {"9443", "8082"}  # admission webhooks, visibility API
    sources = [rule.get("fromEntities") or rule.get("fromCIDR") for rule in webhooks]
    # Konnectivity agents are host-network pods: their calls come from the node identities.
    assert ["kube-apiserver", "remote-node", "host"] in sources
    assert ["10.20.255.0/28"] in sources  # the VNet-integrated API server's subnet
    api = policies["CiliumNetworkPolicy/allow-api-server"]["spec"]["egress"]
    assert api == [{"toEntities": ["kube-apiserver"], "toPorts": [{"ports": [{"port": "443", "protocol": "TCP"}]}]}]
    metrics = policies["NetworkPolicy/allow-metrics"]["spec"]["ingress"][0]
    assert metrics["ports"] == [{"port": 8443, "protocol": "TCP"}]
    assert {"rsName": "ama-metrics"} in [peer["podSelector"]["matchLabels"] for peer in metrics["from"]]


def test_gpu_operator_reaches_the_api_server_and_builds_drivers_only_where_it_installs_them(plans):
    prod = policies_in(plans["prod"], "eus2", "gpu-operator")  # driver: operator
    assert "CiliumNetworkPolicy/allow-api-server" in prod
    (build,) = prod["CiliumNetworkPolicy/allow-fqdns"]["spec"]["egress"]
    assert {f["matchName"] for f in build["toFQDNs"]} == set(egress_plan.DRIVER_BUILD_FQDNS)
    assert {p["port"] for p in build["toPorts"][0]["ports"]} == {"80", "443"}
    assert {p["port"] for p in prod["NetworkPolicy/allow-metrics"]["spec"]["ingress"][0]["ports"]} == {9400, 8080}
    staging = policies_in(plans["staging"], "eus2", "gpu-operator")  # driver: aks
    assert "CiliumNetworkPolicy/allow-fqdns" not in staging


def test_team_namespaces_reach_only_what_they_were_granted(plans):
    prod = plans["prod"]
    research = policies_in(prod, "eus2", "research")
    # The trainer reads and writes blob containers: HTTPS to the private endpoints only.
    endpoints = research["NetworkPolicy/allow-to-private-endpoints"]["spec"]["egress"][0]
    assert endpoints == {"to": [{"ipBlock": {"cidr": "10.20.250.0/24"}}], "ports": [{"port": 443, "protocol": "TCP"}]}
    # A Kafka client (OAuth) reaches the brokers' OAuth listener and nothing else of Kafka.
    kafka = research["NetworkPolicy/allow-to-kafka"]["spec"]["egress"][0]
    assert kafka["ports"] == [{"port": 9093, "protocol": "TCP"}]
    assert kafka["to"][0]["namespaceSelector"]["matchLabels"] == {"kubernetes.io/metadata.name": "kafka"}
    # Entra ID for workload identity, then the team's own destinations, each by name.
    fqdn_rules = research["CiliumNetworkPolicy/allow-fqdns"]["spec"]["egress"]
    names = [[f.get("matchName") or f.get("matchPattern") for f in rule["toFQDNs"]] for rule in fqdn_rules]
    assert names == [
        [ENTRA_ID_FQDN],
        [
            "huggingface.co",
            "*.hf.co",
            "*.*.hf.co",
            "*.*.*.hf.co",
            "*.*.*.*.hf.co",
            "pypi.org",
            "files.pythonhosted.org",
        ],
    ]
    assert research["CiliumNetworkPolicy/allow-dns"]["spec"]["egress"][0]["toPorts"][0]["rules"] == {
        "dns": [{"matchPattern": "*"}]
    }
    # No workload there calls the Kubernetes API, and other teams' destinations stay closed.
    assert "CiliumNetworkPolicy/allow-api-server" not in research
    inference = policies_in(prod, "eus2", "inference")
    inference_names = {
        f.get("matchName")
        for rule in inference["CiliumNetworkPolicy/allow-fqdns"]["spec"]["egress"]
        for f in rule["toFQDNs"]
    }
    assert inference_names == {ENTRA_ID_FQDN}
    # A namespace with no workload reaches its team's destinations by name, and nothing else.
    batch = policies_in(prod, "eus2", "research-batch")
    assert set(batch) == {
        "NetworkPolicy/default-deny",
        "CiliumNetworkPolicy/allow-dns",
        "NetworkPolicy/allow-within-namespace",
        "NetworkPolicy/allow-metrics",
        "CiliumNetworkPolicy/allow-fqdns",
    }
    assert batch["CiliumNetworkPolicy/allow-fqdns"]["spec"]["egress"] == fqdn_rules[1:]


def test_event_hubs_clients_reach_the_namespace_through_its_private_endpoint(plans):
    (rule,) = policies_in(plans["dev"], "eus2", "inference")["NetworkPolicy/allow-to-event-hubs"]["spec"]["egress"]
    assert rule == {"to": [{"ipBlock": {"cidr": "10.10.250.0/24"}}], "ports": [{"port": 9093, "protocol": "TCP"}]}


def test_kafka_namespace_reaches_entra_id_and_the_other_region_only(plans):
    kafka = policies_in(plans["prod"], "eus2", "kafka")
    (entra,) = kafka["CiliumNetworkPolicy/allow-fqdns"]["spec"]["egress"]
    assert entra["toFQDNs"] == [{"matchName": ENTRA_ID_FQDN}]
    (remote,) = kafka["NetworkPolicy/allow-to-remote-kafka"]["spec"]["egress"]
    assert remote["ports"] == [{"port": 9095, "protocol": "TCP"}]
    assert [peer["ipBlock"]["cidr"] for peer in remote["to"]] == ["10.21.32.0/19"]  # scus nodes


def test_workloads_that_call_the_api_get_a_token_and_a_path_others_neither(plans):
    def change(values):
        values["platform:workloads"]["trainer"]["kubernetesApi"] = True

    from tests.conftest import run_with

    plan = run_with("dev", change)
    assert plan.ok, plan.error
    accounts = {r.inputs["metadata"]["name"]: r.inputs for r in plan.of_type("kubernetes:core/v1:ServiceAccount")}
    assert accounts["trainer"]["automountServiceAccountToken"] is True
    assert accounts["inference"]["automountServiceAccountToken"] is False
    api = policies_in(plan, "eus2", "research")["CiliumNetworkPolicy/allow-api-server"]["spec"]
    assert api["endpointSelector"] == {
        "matchExpressions": [{"key": "io.cilium.k8s.policy.serviceaccount", "operator": "In", "values": ["trainer"]}]
    }
    assert "CiliumNetworkPolicy/allow-api-server" not in policies_in(plans["dev"], "eus2", "research")


# -- egress at the Azure edge -----------------------------------------------------------------------


def allowed(plan, region: str) -> tuple[list[str], list[str], list[dict]]:
    """The region's application rules for the clusters' subnets (a Managed Lustre subnet's own
    rules are tests/test_lustre.py's)."""
    (group,) = [r for r in plan.of_type(RULES) if f"-{region}-" in r.name]
    collection = group.inputs["ruleCollections"][0]
    assert (
        collection["action"] == {"type": "Allow"}
        and collection["ruleCollectionType"] == "FirewallPolicyFilterRuleCollection"
    )
    lustre = str(config_of(plan.stack)["platform:network"]["regions"][region]["subnets"].get("lustre"))
    rules = [rule for rule in collection["rules"] if rule["sourceAddresses"] != [lustre]]
    tags = [tag for rule in rules for tag in rule.get("fqdnTags", [])]
    fqdns = [fqdn for rule in rules for fqdn in rule.get("targetFqdns", [])]
    return tags, fqdns, rules


def test_prod_firewall_allows_aks_monitoring_and_the_configured_list_only(plans):
    plan, config = plans["prod"], config_of("prod")
    tags, fqdns, rules = allowed(plan, "eastus2")
    assert tags == ["AzureKubernetesService"]
    team = config["platform:teams"]["research"]["egressFqdns"]
    # prod runs Defender's sensor, whose data goes to its own endpoint; prod's GPU operator
    # builds the driver (gpu.driver: operator).
    assert config["platform:operations"]["defender"] is True
    expected = [
        *egress_plan.monitoring_fqdns("eastus2"),
        *egress_plan.DEFENDER_FQDNS,
        *egress_plan.DRIVER_BUILD_FQDNS,
        *team,
    ]
    # KEDA's scaler reads eastus2's Azure Monitor workspace at its own query host, the last rule.
    assert fqdns[-1].startswith("amw-ailab-prod-eus2-") and fqdns[-1].endswith(".prometheus.monitor.azure.com")
    assert fqdns[:-1] == expected
    assert not any(egress_plan.reaches_public_registry(fqdn) for fqdn in fqdns)
    # From the cluster subnets of the region only, on web ports only.
    # eus2's subnets and eastus2's dispatcher's (dispeus2).
    assert {tuple(rule["sourceAddresses"]) for rule in rules} == {
        ("10.20.0.0/24", "10.20.32.0/19", "10.20.1.0/24", "10.20.2.0/27")
    }
    assert {(p["protocolType"], p["port"]) for rule in rules for p in rule["protocols"]} <= {
        ("Https", 443),
        ("Http", 80),
    }
    assert all(rule["ruleType"] == "ApplicationRule" for rule in rules)


@pytest.mark.parametrize(("stack", "tier", "idps"), [("prod", "Premium", "Deny"), ("staging", "Standard", None)])
def test_firewall_policy_denies_threats_and_proxies_dns(plans, stack, tier, idps):
    for policy in plans[stack].of_type(FIREWALL_POLICY):
        assert policy.inputs["sku"] == {"tier": tier}
        assert policy.inputs["threatIntelMode"] == "Deny"
        assert policy.inputs["dnsSettings"] == {"enableProxy": True}
        assert policy.inputs.get("intrusionDetection", {}).get("mode") == idps
    for firewall in plans[stack].of_type(FIREWALL):
        assert firewall.inputs["sku"] == {"name": "AZFW_VNet", "tier": tier}
        assert "/firewallPolicies/" in firewall.inputs["firewallPolicy"]["id"]
    regions = {r.inputs["location"] for r in plans[stack].of_type(FIREWALL)}
    assert regions == set(config_of(stack)["platform:network"]["regions"])


# -- admission ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stack", "actions"), [("dev", ["Warn", "Audit"]), ("staging", ["Deny", "Audit"]), ("prod", ["Deny", "Audit"])]
)
def test_admission_policies_use_the_environments_action(plans, stack, actions):
    plan = plans[stack]
    names = {rule.policy_name for rule in admission_rules("x")}
    clusters = {cluster_of(r) for r in plan.of_type(NAMESPACE)}
    for cluster in clusters:
        policies = {r.inputs["metadata"]["name"]: r.inputs for r in plan.of_type(VAP) if cluster_of(r) == cluster}
        bindings = {r.inputs["metadata"]["name"]: r.inputs for r in plan.of_type(BINDING) if cluster_of(r) == cluster}
        # GPU clusters also hold kured's and the preflight gate's guards, which always deny
        # (tests/test_gpu_health.py).
        for guard in ("platform-gpu-remediation-own-node", "platform-gpu-health-gate-own-node"):
            if guard in policies:
                assert bindings.pop(guard)["spec"]["validationActions"] == ["Deny"]
                del policies[guard]
        assert set(policies) == set(bindings) == names
        for name, binding in bindings.items():
            assert binding["spec"]["policyName"] == name
            assert policies[name]["spec"]["failurePolicy"] == "Fail"
            # Sandboxing, the training namespaces' Pod Security stand-in, and the serving edge's
            # guards (a team's Services, Istio Gateways: tests/test_serving.py; KEDA's sign-in:
            # tests/test_serving_scaling.py) deny everywhere.
            always = (
                "platform-sandboxed-runtime",
                "platform-pod-security-training",
                "platform-service-kinds",
                "platform-istio-gateways-platform-only",
                "platform-keda-authentication-platform-only",
                "platform-keda-triggers-to-azure-monitor",
            )
            expected = ["Deny", "Audit"] if name in always else actions
            assert binding["spec"]["validationActions"] == expected
        assert bindings["platform-no-privileged"]["spec"]["matchResources"]["namespaceSelector"] == {
            "matchExpressions": [{"key": "platform.ai/team", "operator": "Exists"}]
        }


def test_images_must_come_from_the_platforms_registry(plans):
    plan = plans["prod"]
    (registry,) = plan.of_type("azure-native:containerregistry:Registry")
    login_server = f"{registry.inputs['registryName'].lower()}.azurecr.io/"
    policy = next(r for r in plan.of_type(VAP) if r.inputs["metadata"]["name"] == "platform-platform-registry")
    (validation,) = policy.inputs["spec"]["validations"]
    assert f"c.image.startsWith('{login_server}')" in validation["expression"]


def test_azure_policy_initiative_is_assigned_per_cluster(plans):
    for stack, effect in (("dev", "Audit"), ("prod", "Deny")):
        assignments = [
            a
            for a in plans[stack].of_type("azure-native:authorization:PolicyAssignment")
            if "/policySetDefinitions/" in a.inputs["policyDefinitionId"]
        ]
        assert len(assignments) == len(config_of(stack)["platform:clusters"])
        for assignment in assignments:
            assert assignment.inputs["policyDefinitionId"].endswith("a8640138-9b0a-4a28-b8cb-1666c838647d")
            assert "/managedClusters/" in assignment.inputs["scope"]
            assert assignment.inputs["parameters"]["effect"] == {"value": effect}
            excluded = assignment.inputs["parameters"]["excludedNamespaces"]["value"]
            # Training namespaces leave the initiative for its definitions with IPC_LOCK (test_contracts).
            assert "kube-system" in excluded and "inference" not in excluded
            assert ("research" in excluded) is (stack == "prod")
    prod = next(
        a
        for a in plans["prod"].of_type("azure-native:authorization:PolicyAssignment")
        if "/policySetDefinitions/" in a.inputs["policyDefinitionId"]
    )
    assert "gpu-operator" in prod.inputs["parameters"]["excludedNamespaces"]["value"]


# -- sandboxing, RBAC, priorities -------------------------------------------------------------------


@pytest.mark.parametrize("stack", ("staging", "prod"))
def test_sandbox_pools_run_kata_on_nested_virtualization_and_high_risk_namespaces_need_it(plans, stack):
    plan, config = plans[stack], config_of(stack)
    pools = [p for p in plan.of_type(POOL) if p.inputs["agentPoolName"] == "sandbox"]
    # Every cluster that runs workloads; a dispatcher runs none.
    assert len(pools) == len([c for c in config["platform:clusters"].values() if c.get("role") != "dispatch"])
    for pool in pools:
        assert pool.inputs["workloadRuntime"] == "KataVmIsolation"
        assert pool.inputs["osSKU"] == "AzureLinux"
        assert supports_nested_virtualization(pool.inputs["vmSize"])
        assert "platform.ai/sandbox=kata:NoSchedule" in pool.inputs["nodeTaints"]
    high_risk = {ns for team in config["platform:teams"].values() for ns in team.get("highRiskNamespaces", [])}
    assert high_risk == {"evals"}
    labelled = {
        r.inputs["metadata"]["name"]
        for r in plan.of_type(NAMESPACE)
        if r.inputs["metadata"].get("labels", {}).get("platform.ai/high-risk") == "true"
    }
    assert labelled == high_risk
    policy = next(r for r in plan.of_type(VAP) if r.inputs["metadata"]["name"] == "platform-sandboxed-runtime")
    assert f"'{RUNTIME_CLASS}'" in policy.inputs["spec"]["validations"][0]["expression"]
    binding = next(r for r in plan.of_type(BINDING) if r.inputs["metadata"]["name"] == "platform-sandboxed-runtime")
    assert binding.inputs["spec"]["matchResources"]["namespaceSelector"] == {
        "matchLabels": {"platform.ai/high-risk": "true"}
    }


@pytest.mark.parametrize(
    ("size", "nested"),
    [
        ("Standard_D4s_v3", True),
        ("Standard_D8ds_v5", True),
        ("Standard_E16s_v5", True),
        ("Standard_F8s_v2", True),
        ("Standard_NC24ads_A100_v4", False),
        ("Standard_D4ps_v5", False),
        ("Standard_B4ms", False),
        ("Standard_ND96isr_H100_v5", False),
    ],
)
def test_nested_virtualization_catalogue(size, nested):
    assert supports_nested_virtualization(size) is nested


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_no_cluster_admin_binding_and_no_token_unless_asked(plans, stack):
    from components.streaming import JOB_ROLE, JOB_RULES
    from planning import dispatch, gpu_health, serving
    from planning import kafka as kafka_plan
    from planning.streaming import streaming_namespaces
    from tests.conftest import stack_values
    from validation.loader import parse_platform_config

    plan = plans[stack]
    config = parse_platform_config(stack_values(stack), stack=stack)
    jobs = config.streaming.jobs if config.streaming else {}
    # The only Kubernetes RBAC objects: each streaming namespace's job Role (what a JobManager
    # needs in native mode, nothing cluster-wide), bound to each job's own service account there;
    # on a MultiKueue worker, the dispatchers' identity's read-only watch role (its writes are an
    # Azure role on team namespaces); on a dispatcher, the token refresher's Role on its own
    # Secrets; in `kafka`, the CA certificates by name for the tenants' plan identity, and for the
    # cluster layer's in an environment with sites (a site's previews copy its host's).
    from contracts.cluster import cluster_of

    identities = config.entra.plan_identity

    def kafka_readers(cluster: str) -> list[str]:
        if identities is None:
            return []
        return [str(identities.tenants_principal_object_id)] + (
            [str(identities.cluster_principal_object_id)] if config.on_prem_clusters else []
        )

    for r in plan.resources:
        if not r.type.startswith("kubernetes:rbac.authorization.k8s.io/"):
            continue
        metadata = r.inputs["metadata"]
        if metadata["name"] == dispatch.WATCH_ROLE:
            assert r.inputs["kind"] in ("ClusterRole", "ClusterRoleBinding")
            if r.inputs["kind"] == "ClusterRole":
                assert r.inputs["rules"] == dispatch.watch_rules()
                assert {v for rule in r.inputs["rules"] for v in rule["verbs"]} == {"get", "list", "watch"}
            else:
                (subject,) = r.inputs["subjects"]
                assert subject["kind"] == "User"  # the dispatchers' identity's object ID
            continue
        if metadata["name"] == dispatch.TOKEN_JOB:
            assert metadata["namespace"] == "kueue-system" and r.inputs["kind"] in ("Role", "RoleBinding")
            if r.inputs["kind"] == "Role":
                assert r.inputs["rules"] == dispatch.token_role_rules(
                    [*config.dispatch_workers(), *config.dispatch_sites()]
                )
            else:
                assert r.inputs["subjects"] == [
                    {"kind": "ServiceAccount", "name": dispatch.TOKEN_JOB, "namespace": "kueue-system"}
                ]
            continue
        if metadata["name"] == kafka_plan.CA_READER_ROLE:
            assert metadata["namespace"] == kafka_plan.KAFKA_NAMESPACE
            if r.inputs["kind"] == "Role":
                (rule,) = r.inputs["rules"]
                assert rule["verbs"] == ["get"] and rule["resources"] == ["secrets"]
                assert all(n.endswith("-cluster-ca-cert") for n in rule["resourceNames"])
            else:
                assert [s["name"] for s in r.inputs["subjects"]] == kafka_readers(cluster_of(r))
            continue
        # GPU remediation (kured): the drain's rights and a lock on its own DaemonSet, bound to its
        # service account only; admission keeps it to its own node (tests/test_gpu_health.py).
        if metadata["name"] in ("platform-gpu-remediation", "gpu-remediation-lock"):
            assert r.inputs["kind"] in ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
            if r.inputs["kind"] in ("ClusterRole", "Role"):
                expected = (
                    gpu_health.REMEDIATION_RULES
                    if r.inputs["kind"] == "ClusterRole"
                    else gpu_health.REMEDIATION_LOCK_RULES
                )
                assert r.inputs["rules"] == expected
            else:
                assert r.inputs["subjects"] == [
                    {"kind": "ServiceAccount", "name": "gpu-remediation", "namespace": "gpu-health"}
                ]
            continue
        # The GPU preflight gate: get and patch nodes, bound to its service account only;
        # admission keeps it to its own node's gate (tests/test_gpu_health.py).
        if metadata["name"] == f"platform-{gpu_health.GATE}":
            assert r.inputs["kind"] in ("ClusterRole", "ClusterRoleBinding")
            if r.inputs["kind"] == "ClusterRole":
                assert r.inputs["rules"] == gpu_health.GATE_RULES
            else:
                assert r.inputs["subjects"] == [
                    {"kind": "ServiceAccount", "name": gpu_health.GATE, "namespace": "gpu-health"}
                ]
            continue
        assert r.inputs["kind"] in ("Role", "RoleBinding"), r.name
        assert metadata["namespace"] in streaming_namespaces(config), r.name
        if r.inputs["kind"] == "Role":
            assert r.inputs["rules"] == JOB_RULES
        else:
            (subject,) = r.inputs["subjects"]
            assert r.inputs["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": JOB_ROLE}
            assert subject["name"] in jobs and jobs[subject["name"]].namespace == metadata["namespace"]
    for account in plan.of_type("kubernetes:core/v1:ServiceAccount"):
        if account.inputs["metadata"]["name"] == gpu_health.REMEDIATION:
            continue  # kured calls the API server (drains, its lock)
        if account.inputs["metadata"]["name"] == dispatch.TOKEN_JOB:
            continue  # the refresher writes the kubeconfig Secrets through the API server
        if account.inputs["metadata"]["name"] == lustre_csi.NODE_PLUGIN:
            # The Lustre node plugin calls no API server (planning/lustre_csi.py).
            assert account.inputs["automountServiceAccountToken"] is False
            continue
        if account.inputs["metadata"]["name"] == gpu_health.GATE:
            # Its token is projected into the gate's container alone.
            assert account.inputs["automountServiceAccountToken"] is False
            continue
        if account.inputs["metadata"]["name"] == serving.CERTIFICATE_SYNC:
            # The serving gateway's certificate sync: the CSI driver reads Key Vault with its
            # projected token; the pod calls no API server.
            assert account.inputs["automountServiceAccountToken"] is False
            continue
        workload = config.workloads[account.inputs["metadata"]["labels"]["platform.ai/workload"]]
        assert account.inputs["automountServiceAccountToken"] is workload.kubernetes_api
    team_namespaces = {
        r.inputs["metadata"]["name"]
        for r in plan.of_type(NAMESPACE)
        if "platform.ai/team" in r.inputs["metadata"].get("labels", {})
    }
    patched = {
        r.inputs["metadata"]["namespace"]
        for r in plan.of_type("kubernetes:core/v1:ServiceAccountPatch")
        if r.inputs["metadata"]["name"] == "default" and r.inputs["automountServiceAccountToken"] is False
    }
    assert patched == team_namespaces


def test_priority_classes_and_the_platform_pods_that_use_them(plans):
    plan = plans["prod"]
    classes = {
        r.inputs["metadata"]["name"]: r.inputs
        for r in plan.of_type("kubernetes:scheduling.k8s.io/v1:PriorityClass")
        if cluster_of(r) == "eus2"
    }
    assert set(classes) == {"platform-critical", "training", "batch-preemptible"}
    assert classes["platform-critical"]["value"] > classes["training"]["value"] > classes["batch-preemptible"]["value"]
    assert classes["batch-preemptible"]["preemptionPolicy"] == "Never"
    assert not any(c["globalDefault"] for c in classes.values())
    releases = {
        r.inputs["name"]: r.inputs for r in plan.of_type("kubernetes:helm.sh/v3:Release") if cluster_of(r) == "eus2"
    }
    assert releases["kueue"]["values"]["controllerManager"]["manager"]["priorityClassName"] == "platform-critical"
    assert releases["strimzi-kafka-operator"]["values"]["priorityClassName"] == "platform-critical"
    # Disruption budgets of the platform's own controllers (Kafka's come from Strimzi).
    assert releases["kueue"]["values"]["controllerManager"]["podDisruptionBudget"] == {
        "enabled": True,
        "minAvailable": 1,
    }
    assert releases["strimzi-kafka-operator"]["values"]["podDisruptionBudget"] == {"enabled": True}
    for pool in plan.of_type("kubernetes:kafka.strimzi.io/v1:KafkaNodePool"):
        assert pool.inputs["spec"]["template"]["pod"]["priorityClassName"] == "platform-critical"


# -- the Kubernetes OpenAPI schema -------------------------------------------------------------------


BUILT_IN_GROUPS = {
    "core",
    "apps",
    "batch",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
}
# Cilium's CRDs are not in the pinned reference set, so CiliumNetworkPolicies are held to the
# structure the tests above assert.
CUSTOM_GROUPS = {
    "kafka.strimzi.io",
    "kueue.x-k8s.io",
    "mellanox.com",
    "azmonitoring.coreos.com",
    "cilium.io",
    "flink.apache.org",  # test_streaming validates every FlinkDeployment against the pinned CRD
    # NFD's CRDs are not in the pinned reference set either: test_gpu_health asserts the rule's structure.
    "nfd.k8s-sigs.io",
    # Istio's and the Secrets Store CSI driver's CRDs are not in the pinned reference set either:
    # tests/test_serving.py asserts the structure of what the gateway and the APIs apply.
    "networking.istio.io",
    "security.istio.io",
    "secrets-store.csi.x-k8s.io",
    # KEDA's CRDs neither (the AKS add-on installs them): tests/test_serving_scaling.py asserts
    # the ScaledObjects' and TriggerAuthentications' structure.
    "keda.sh",
}


def kubernetes_version(stack: str, cluster: str) -> str:
    version = config_of(stack)["platform:clusters"][cluster]["kubernetesVersion"]
    return version if version.count(".") == 2 else f"{version}.0"


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_built_in_kubernetes_object_validates_against_its_clusters_schema(plans, stack):
    """Each distinct object once per Kubernetes version: clusters and teams repeat the same
    objects (prod's 527 are 232 distinct), and the schema check is the cost."""
    checked: set[str] = set()
    validated: set[tuple[str, str]] = set()
    for resource in plans[stack].resources:
        if not resource.type.startswith("kubernetes:") or resource.type.startswith("kubernetes:helm.sh"):
            continue  # Helm releases are not objects
        group = resource.type.split(":")[1].split("/")[0]
        if group in CUSTOM_GROUPS:
            continue  # checked against their CRDs (test_kafka, test_gpu) or by test_isolation's structure tests
        assert group in BUILT_IN_GROUPS, f"{resource.type}: a new API group needs a schema check"
        if not resource.inputs.get("kind"):
            continue  # a read of an existing object (Secret.get), not one the program creates
        manifest = dict(resource.inputs)
        version = kubernetes_version(stack, cluster_of(resource))
        key = (json.dumps(manifest, sort_keys=True, default=str), version)
        if key not in validated:
            validated.add(key)
            k8s_schema.validate(manifest, version, strict=True)
        checked.add(manifest["kind"])
    assert {
        "Namespace",
        "NetworkPolicy",
        "ServiceAccount",
        "ValidatingAdmissionPolicy",
        "ValidatingAdmissionPolicyBinding",
        "PriorityClass",
    } <= checked


def test_the_schema_check_can_fail(plans):
    policy = plans["prod"].of_type(NETWORK_POLICY)[0].inputs
    broken = {**policy, "spec": {**policy["spec"], "policyType": ["Egress"]}}  # a misspelled field
    with pytest.raises(kubernetes_validate.ValidationError):
        k8s_schema.validate(broken, "1.35.0", strict=True)


# -- the admission rules, evaluated ------------------------------------------------------------------
# cel-python evaluates the policies' CEL the way the API server would for these pods (it does
# not type-check against the Pod schema, which the API server does when the policy is created).

LOGIN_SERVER = "crailabprod.azurecr.io"
GOOD_CONTAINER = {
    "name": "job",
    "image": f"{LOGIN_SERVER}/research/trainer:2.4.1",
    "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False},
    "resources": {
        "requests": {"nvidia.com/gpu": "8"},
        "limits": {"nvidia.com/gpu": "8", "cpu": "90", "memory": "1800Gi"},
    },
}


SANDBOXED = {
    "runtimeClassName": RUNTIME_CLASS,
    "nodeSelector": {"platform.ai/sandbox": "kata"},
    "tolerations": [{"key": "platform.ai/sandbox", "operator": "Equal", "value": "kata", "effect": "NoSchedule"}],
}


# A pod of a Job Kueue admitted (Kueue labels its pod template with the PodSet).
QUEUED = {"labels": {"kueue.x-k8s.io/podset": "main"}}


def good_pod(**spec) -> dict:
    return {"metadata": QUEUED, "spec": {"containers": [dict(GOOD_CONTAINER)], **SANDBOXED, **spec}}


def with_container(**fields) -> dict:
    pod = good_pod()
    pod["spec"]["containers"][0] = {**GOOD_CONTAINER, **fields}
    return pod


# The namespace the pods are tried in: a team's high-risk namespace (not a training one).
EVALS_LABELS = {"platform.ai/team": "research", "platform.ai/high-risk": "true"}


def failing_rules(pod: dict, creator: str = JOB_CONTROLLER) -> set[str]:
    """The admission policies (by name) whose validations `pod` fails."""
    import celpy

    from contracts.admission import cel_program
    from planning.admission import CONTAINERS

    obj = celpy.json_to_cel(pod)
    containers = cel_program(CONTAINERS).evaluate({"object": obj})
    namespace = celpy.json_to_cel({"metadata": {"name": "evals", "labels": EVALS_LABELS}})
    activation = {
        "object": obj,
        "namespaceObject": namespace,
        "request": celpy.json_to_cel({"operation": "CREATE", "userInfo": {"username": creator}}),
        "variables": celpy.celtypes.MapType({celpy.celtypes.StringType("containers"): containers}),
    }
    failed = set()
    from contracts.cluster import selector_matches

    for rule in admission_rules(LOGIN_SERVER):
        if rule.kind != "Pod" or not selector_matches(rule.namespace_selector, EVALS_LABELS):
            continue  # it checks Jobs, or its binding does not select this namespace
        for validation in rule.rules:
            if not cel_program(validation.expression).evaluate(activation):
                failed.add(rule.name)
    return failed


@pytest.mark.parametrize(
    ("case", "pod", "fails"),
    [
        ("a compliant GPU pod", good_pod(), set()),
        ("privileged", with_container(securityContext={"runAsNonRoot": True, "privileged": True}), {"no-privileged"}),
        (
            "privileged init container",
            {
                "metadata": QUEUED,
                "spec": {
                    **good_pod()["spec"],
                    "initContainers": [
                        {
                            **GOOD_CONTAINER,
                            "name": "init",
                            "securityContext": {"runAsNonRoot": True, "privileged": True},
                        }
                    ],
                },
            },
            {"no-privileged"},
        ),
        ("host network", good_pod(hostNetwork=True), {"no-host-access"}),
        ("host PID", good_pod(hostPID=True), {"no-host-access"}),
        ("host port", with_container(ports=[{"containerPort": 80, "hostPort": 80}]), {"no-host-access"}),
        ("host path", good_pod(volumes=[{"name": "root", "hostPath": {"path": "/"}}]), {"no-host-access"}),
        ("root by default", with_container(securityContext={}), {"run-as-non-root"}),
        (
            "non-root on the pod",
            {
                "metadata": QUEUED,
                "spec": {
                    **good_pod()["spec"],
                    "securityContext": {"runAsNonRoot": True},
                    "containers": [{**GOOD_CONTAINER, "securityContext": {}}],
                },
            },
            set(),
        ),
        ("user 0", with_container(securityContext={"runAsNonRoot": True, "runAsUser": 0}), {"run-as-non-root"}),
        (
            "GPU without cpu and memory limits",
            with_container(resources={"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}),
            {"gpu-limits"},
        ),
        ("CPU-only pod without limits", with_container(resources={"requests": {"cpu": "1"}}), set()),
        ("Docker Hub image", with_container(image="docker.io/library/python:3.12"), {"platform-registry"}),
        ("a look-alike registry", with_container(image=f"{LOGIN_SERVER}.evil.example/app:1.0"), {"platform-registry"}),
        ("latest", with_container(image=f"{LOGIN_SERVER}/app:latest"), {"pinned-images"}),
        ("no tag", with_container(image=f"{LOGIN_SERVER}/app"), {"pinned-images"}),
        ("a digest", with_container(image=f"{LOGIN_SERVER}/app@sha256:" + "a" * 64), set()),
        ("a GPU pod that skipped the queue", {"spec": good_pod()["spec"]}, {"gpu-queued"}),
        (
            "a queued plain pod, gated by Kueue",
            {
                "metadata": {"labels": {"kueue.x-k8s.io/queue-name": "gpu"}},
                "spec": {**good_pod()["spec"], "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]},
            },
            set(),
        ),
        (
            "a queue label without Kueue's gate",
            {"metadata": {"labels": {"kueue.x-k8s.io/queue-name": "gpu"}}, "spec": good_pod()["spec"]},
            {"gpu-queued"},
        ),
        (
            "runc in a high-risk namespace",
            {"metadata": QUEUED, "spec": {k: v for k, v in good_pod()["spec"].items() if k != "runtimeClassName"}},
            {"sandboxed-runtime"},
        ),
        (
            "Kata but off the sandbox pool",
            {"metadata": QUEUED, "spec": {k: v for k, v in good_pod()["spec"].items() if k != "tolerations"}},
            {"sandboxed-runtime"},
        ),
        ("a training job", good_pod(priorityClassName="training"), set()),
        ("a workload posing as the platform", good_pod(priorityClassName="platform-critical"), {"workload-priority"}),
    ],
)
def test_admission_rules_admit_good_pods_and_name_what_is_wrong(case, pod, fails):
    assert failing_rules(pod) == fails


def test_only_the_job_controller_creates_pods_with_kueues_podset_label():
    """A team member who labels a bare GPU pod as Kueue's does not get round the queue."""
    assert failing_rules(good_pod(), creator="someone@example.com") == {"gpu-queued"}
