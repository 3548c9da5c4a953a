"""Serving models privately (docs/serving.md): staging and prod serve the inference team's model
through each serving cluster's internal gateway, over gRPC and HTTP, to a caller whose token
carries the route's app role, and refuse everyone else; the gateway, its certificates, its names
and its Private Link service as Azure and Istio would take them."""

from __future__ import annotations

import pytest

from contracts.cluster import ClusterView
from contracts.gateway import Call, refusals
from facts import entra, istio
from offline.mocks import OFFLINE_TENANT_ID
from planning import serving as serving_plan
from planning.naming import Naming
from tests.conftest import assert_problems, stack_values
from validation.loader import parse_platform_config

SERVING = ("staging", "prod")
TRAINER_POD = {"azure.workload.identity/use": "true", "job-name": "train-llm"}


def _config(stack: str):
    return parse_platform_config(stack_values(stack))


def _token(config, api: str, roles: list[str], tenant: str | None = None) -> dict:
    """The claims of the v2.0 token Entra ID issues a caller for the API's application, with the
    app roles assigned to the caller's identity."""
    assert config.serving is not None
    return {
        "iss": entra.issuer(tenant or str(config.entra.tenant_id or OFFLINE_TENANT_ID)),
        "aud": str(config.serving.apis[api].application_client_id),
        "roles": roles,
    }


def _issued(plans, stack: str, api: str, workload: str = "trainer") -> dict | None:
    """The token Entra issues the workload's identity for the API, as the delivery's plan leaves
    the tenant (offline/entra.py)."""
    from offline.entra import issued_token
    from offline.identities import delivery_plan, delivery_stack_of

    return issued_token(_config(stack), plans[stack], delivery_plan(delivery_stack_of(stack)), api, workload)


def _views(plans, stack: str):
    config = _config(stack)
    return config, [
        ClusterView(plans[stack], key, stack_values(stack)) for key in serving_plan.serving_clusters(config)
    ]


@pytest.mark.parametrize("stack", SERVING)
def test_a_caller_with_the_app_role_reaches_the_model_over_grpc_and_http_on_every_serving_cluster(plans, stack):
    """The trainer (team research, its own namespace) calls the inference team's gRPC generation
    and its HTTP chat API with the tokens Entra issues its identity (the roles the delivery
    assigned it): every layer admits both calls, on each serving cluster, and the gRPC route
    speaks HTTP/2 to the pods."""
    config, views = _views(plans, stack)
    generate_token, chat_token = _issued(plans, stack, "generate"), _issued(plans, stack, "chat")
    assert generate_token is not None and generate_token["roles"] == ["Generate.Invoke", "Models.Read"]
    assert chat_token is not None and chat_token["roles"] == ["Chat.Invoke"]
    assert views and [v.key for v in views] == list(config.serving.clusters)
    generate = serving_plan.api_host(config, "generate")
    chat = serving_plan.api_host(config, "chat")
    assert generate == f"generate.inference.{config.serving.zone}"
    for view in views:
        grpc = Call(generate, "/inference.v1.Generate/Stream", generate_token, "research", TRAINER_POD)
        assert refusals(view, grpc) == [], view.key
        http = Call(chat, "/v1/chat/completions", chat_token, "research", TRAINER_POD)
        assert refusals(view, http) == [], view.key
        # gRPC clients send the port in the authority; the gateway's routes ignore it, its
        # ALLOW must take it (Istio compares `hosts` to the authority exactly).
        with_port = Call(f"{generate}:443", grpc.path, grpc.claims, "research", TRAINER_POD)
        assert refusals(view, with_port) == [], view.key
        # HTTP/2 to the gRPC port alone: the chat port on the same Service keeps HTTP/1.1.
        (rule,) = view.objects("kubernetes:networking.istio.io/v1:DestinationRule", "inference")
        assert rule["spec"]["host"] == "serve-llm.inference.svc.cluster.local"
        assert "connectionPool" not in rule["spec"]["trafficPolicy"]
        (level,) = rule["spec"]["trafficPolicy"]["portLevelSettings"]
        assert level["port"] == {"number": 8001} and level["connectionPool"]["http"]["h2UpgradePolicy"] == "UPGRADE"


@pytest.mark.parametrize("stack", SERVING)
def test_the_gateway_refuses_every_call_that_lacks_the_routes_role_or_a_valid_token(plans, stack):
    """Default deny at the door: no token (DENY), a token without the route's role, a token for
    another API's application, another tenant's token, a path no route takes, a host no API
    serves, and a pod whose namespace may not reach the gateway."""
    config, views = _views(plans, stack)
    host = serving_plan.api_host(config, "generate")
    path = "/inference.v1.Generate/Stream"
    view = views[0]
    cases = {
        "no token": (Call(host, path, None, "research", TRAINER_POD), "serving-require-token denies it"),
        "another role": (
            Call(host, path, _token(config, "generate", ["Models.Read"]), "research", TRAINER_POD),
            "no ALLOW policy",
        ),
        "no role at all": (
            Call(host, path, _token(config, "generate", []), "research", TRAINER_POD),
            "no ALLOW policy",
        ),
        "another API's token": (
            Call(host, path, _token(config, "chat", ["Generate.Invoke"]), "research", TRAINER_POD),
            "no ALLOW policy",
        ),
        "another tenant": (
            Call(
                host,
                path,
                _token(config, "generate", ["Generate.Invoke"], tenant="0" * 8 + "-0000-0000-0000-" + "0" * 12),
                "research",
                TRAINER_POD,
            ),
            "(401)",
        ),
        "a path no route takes": (
            Call(
                host,
                "/inference.v1.Admin/Shutdown",
                _token(config, "generate", ["Generate.Invoke"]),
                "research",
                TRAINER_POD,
            ),
            "(404)",
        ),
        "a host no API serves": (
            Call(
                f"admin.inference.{config.serving.zone}",
                path,
                _token(config, "generate", ["Generate.Invoke"]),
                "research",
                TRAINER_POD,
            ),
            "no VirtualService binds",
        ),
        "a namespace that calls nothing": (
            Call(host, path, _token(config, "generate", ["Generate.Invoke"]), "research-batch", {}),
            "no network policy in 'research-batch' allows it",
        ),
    }
    for case, (call, reason) in cases.items():
        found = refusals(view, call)
        assert any(reason in r for r in found), (case, found)


@pytest.mark.parametrize("stack", SERVING)
def test_only_the_gateways_pods_reach_the_served_ports(plans, stack):
    """The inference namespace admits the gateway's pods on the APIs' ports, and no other
    namespace's pods there (the trainer reaches the model only through the gateway)."""
    from contracts.reach import Destination, ingress_refused

    _, views = _views(plans, stack)
    for view in views:
        for port in (8000, 8001):
            served = Destination(port, namespace="inference", pod_labels=(("app", "serve-llm"),))
            assert not ingress_refused(view, istio.INGRESS_NAMESPACE, dict(istio.GATEWAY_SELECTOR), served)
            assert ingress_refused(view, "research", TRAINER_POD, served)


@pytest.mark.parametrize("stack", SERVING)
def test_each_gateway_is_an_internal_load_balancer_at_its_pinned_address(plans, stack):
    """The platform's own Service in front of the add-on's gateway pods: internal, in the node
    subnet, at the address the serving zone names; Private Link only where config lists
    consumers, visible to them alone and approving none of them unasked."""
    config, views = _views(plans, stack)
    for view in views:
        (service,) = view.objects("kubernetes:core/v1:Service", istio.INGRESS_NAMESPACE)
        annotations = service["metadata"]["annotations"]
        assert annotations["service.beta.kubernetes.io/azure-load-balancer-internal"] == "true"
        address = serving_plan.gateway_address(config, view.key)
        assert annotations["service.beta.kubernetes.io/azure-load-balancer-ipv4"] == address
        assert annotations["service.beta.kubernetes.io/azure-load-balancer-internal-subnet"].endswith(
            f"-{view.key}-nodes"
        )
        assert service["spec"]["selector"] == istio.GATEWAY_SELECTOR
        consumers = [str(c.subscription_id) for c in config.serving.private_link]
        assert annotations.get(serving_plan.PLS_VISIBILITY, "") == " ".join(consumers)
        assert (serving_plan.PLS_CREATE in annotations) == bool(consumers)
        assert serving_plan.PLS_AUTO_APPROVAL not in annotations
    assert bool(config.serving.private_link) == (stack == "prod")


@pytest.mark.parametrize("stack", SERVING)
def test_each_serving_region_resolves_the_teams_names_to_its_own_gateway(plans, stack):
    """A copy of the serving zone per serving region, linked to that region's VNet: `*.inference`
    there is its own gateway's address, so callers stay in their region and a lost region takes
    only its own callers."""
    config = _config(stack)
    plan = plans[stack]
    naming = Naming(config.prefix, config.environment)
    zones = [
        z
        for z in plan.of_type("azure-native:privatedns:PrivateZone")
        if z.inputs["privateZoneName"] == config.serving.zone
    ]
    assert len(zones) == len(config.serving.clusters)
    for cluster in config.serving.clusters:
        region = config.clusters[cluster].region
        group = naming.regional("rg", region, "network")
        (record,) = [
            r
            for r in plan.of_type("azure-native:privatedns:PrivateRecordSet")
            if r.inputs["resourceGroupName"] == group
        ]
        assert record.inputs["relativeRecordSetName"] == "*.inference"
        assert record.inputs["aRecords"] == [{"ipv4Address": serving_plan.gateway_address(config, cluster)}]
        links = [
            link.inputs["virtualNetwork"]["id"].rsplit("/", 1)[-1]
            for link in plan.of_type("azure-native:privatedns:VirtualNetworkLink")
            if link.inputs["resourceGroupName"] == group and link.inputs["privateZoneName"] == config.serving.zone
        ]
        assert links == [naming.regional("vnet", region)]


@pytest.mark.parametrize("stack", SERVING)
def test_the_certificates_come_from_key_vault_through_the_serving_tls_identity_alone(plans, stack):
    """Each serving team's certificate is synced from its region's vault by a SecretProviderClass
    read with the `serving-tls` workload identity, which trusts the gateways' sync pods alone and
    reads exactly those certificates; the gateway's server names the synced Secret, TLS 1.2+."""
    config, views = _views(plans, stack)
    plan = plans[stack]
    naming = Naming(config.prefix, config.environment)
    (identity,) = [
        r for r in plan.of_type("azure-native:managedidentity:UserAssignedIdentity") if r.name.endswith("-serving-tls")
    ]
    credentials = [
        r.inputs
        for r in plan.of_type("azure-native:managedidentity:FederatedIdentityCredential")
        if r.inputs["resourceName"] == identity.inputs["resourceName"]
    ]
    assert {c["subject"] for c in credentials} == {
        f"system:serviceaccount:{istio.INGRESS_NAMESPACE}:{serving_plan.CERTIFICATE_SYNC}"
    }
    assert len(credentials) == len(views)
    grants = [g.inputs for g in plan.of_type("azure-native:authorization:RoleAssignment") if "serving-tls" in g.name]
    regions = {config.clusters[c].region for c in config.serving.clusters}
    assert len(grants) == len(regions)
    assert all(g["scope"].endswith("/secrets/serving-inference") for g in grants)
    for view in views:
        (spc,) = view.objects("kubernetes:secrets-store.csi.x-k8s.io/v1:SecretProviderClass", istio.INGRESS_NAMESPACE)
        assert spc["spec"]["parameters"]["keyvaultName"] == naming.key_vault(config.clusters[view.key].region)
        assert spc["spec"]["secretObjects"][0]["type"] == "kubernetes.io/tls"
        (gateway,) = view.objects("kubernetes:networking.istio.io/v1:Gateway", istio.INGRESS_NAMESPACE)
        (server,) = gateway["spec"]["servers"]
        assert server["tls"] == {
            "mode": "SIMPLE",
            "credentialName": "serving-inference",
            "minProtocolVersion": "TLSV1_2",
        }
        # Only the inference team's namespaces may bind its names.
        assert server["hosts"] == [
            f"{ns}/*.inference.{config.serving.zone}" for ns in config.teams["inference"].namespaces
        ]
        # One sync per team, two pods over the zones, no token of its own in the pod.
        (sync,) = view.objects("kubernetes:apps/v1:Deployment", istio.INGRESS_NAMESPACE)
        pod = sync["spec"]["template"]["spec"]
        assert {v["csi"]["volumeAttributes"]["secretProviderClass"] for v in pod["volumes"]} == {"serving-inference"}
        assert sync["spec"]["replicas"] == 2 and pod["automountServiceAccountToken"] is False
        assert "azure.workload.identity/use" not in sync["spec"]["template"]["metadata"]["labels"]


@pytest.mark.parametrize("stack", SERVING)
def test_serving_clusters_run_the_istio_add_on_with_an_internal_gateway_only(plans, stack):
    config = _config(stack)
    for cluster in plans[stack].of_type("azure-native:containerservice:ManagedCluster"):
        key = cluster.name.removeprefix("aks-").removesuffix("-aks")
        mesh = cluster.inputs.get("serviceMeshProfile")
        if key not in config.serving.clusters:
            assert mesh is None, key
            continue
        assert mesh["mode"] == "Istio" and mesh["istio"]["revisions"] == [istio.REVISION]
        assert mesh["istio"]["components"]["ingressGateways"] == [{"enabled": True, "mode": "Internal"}]


def test_a_serving_config_the_gateway_cannot_serve_is_refused_by_key():
    def broken(values):
        serving = values["platform:serving"]
        serving["clusters"] = ["eus2", "dispeus2"]
        serving["istioRevisions"] = ["asm-1-20"]
        api = serving["apis"]["generate"]
        api["workload"] = "trainer"
        api["routes"][0]["role"] = "Generate.Everything"
        api["callers"] = {"nobody": ["Models.Read"]}
        serving["privateLink"] = [
            {"subscriptionId": "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"},
            {"subscriptionId": "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"},
        ]

    assert_problems(
        "prod",
        broken,
        {
            "platform:serving.clusters[1]": "dispatch cluster",
            "platform:serving.istioRevisions[0]": "not a revision AKS offered",
            "platform:serving.apis.generate.workload": "belongs to team research",
            "platform:serving.apis.generate.routes[0].role": "is not a role of the API",
            "platform:serving.apis.generate.callers.nobody": "is not a workload",
            "platform:serving.privateLink[1].subscriptionId": "is listed twice",
        },
    )


@pytest.mark.parametrize("stack", SERVING)
def test_the_golden_inference_workload_is_what_the_gateway_serves(plans, stack):
    """The inference example as a team renders it for each serving cluster: its Service is the one
    the APIs name, on their ports, selecting the Deployment's pods on the same container ports,
    which admit the gateway's pods and no one else."""
    from contracts.golden import BY_NAME, rendered
    from contracts.reach import Destination, ingress_refused

    config, views = _views(plans, stack)
    for view in views:
        item = rendered(BY_NAME["inference"], plans[stack].outputs, view.key)
        assert item is not None
        (service,) = [m for m in item.manifests if m["kind"] == "Service"]
        labels = item.workload["spec"]["template"]["metadata"]["labels"]
        assert all(labels.get(k) == v for k, v in service["spec"]["selector"].items())
        ports = {
            p["containerPort"] for c in item.workload["spec"]["template"]["spec"]["containers"] for p in c["ports"]
        }
        for api, spec in config.serving.apis.items():
            assert service["metadata"]["name"] == spec.service_name and service["metadata"]["namespace"] == "inference"
            (port,) = [p for p in service["spec"]["ports"] if p["port"] == spec.port]
            assert port["targetPort"] == spec.port and spec.port in ports, api
            assert port["appProtocol"] == spec.protocol
            served = Destination(spec.port, namespace="inference", pod_labels=tuple(labels.items()))
            assert not ingress_refused(view, istio.INGRESS_NAMESPACE, dict(istio.GATEWAY_SELECTOR), served)
            assert ingress_refused(view, "research", TRAINER_POD, served)


@pytest.mark.parametrize("stack", SERVING)
def test_a_consumer_network_reaches_the_gateway_only_through_its_private_link_service(plans, stack):
    """prod lists one consumer subscription: each serving cluster's Private Link service is visible
    to it alone, its endpoints' connections wait for approval, and the service's NAT addresses come
    from the node subnet, which the node subnet's NSG admits (only the on-premises ranges are
    denied there). staging lists none: no Private Link service."""
    config, views = _views(plans, stack)
    plan = plans[stack]
    for view in views:
        (service,) = view.objects("kubernetes:core/v1:Service", istio.INGRESS_NAMESPACE)
        annotations = service["metadata"]["annotations"]
        if not config.serving.private_link:
            assert not [a for a in annotations if "azure-pls" in a]
            continue
        assert annotations[serving_plan.PLS_VISIBILITY] == "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f"
        nodes = annotations["service.beta.kubernetes.io/azure-load-balancer-internal-subnet"]
        assert annotations[serving_plan.PLS_SUBNET] == nodes
        (subnet,) = [s for s in plan.of_type("azure-native:network:Subnet") if s.inputs["subnetName"] == nodes]
        # Azure requires them off for the service's NAT addresses; the cloud provider turns them
        # off, and the program says so too (the SDK's default, Enabled, would undo it each deploy).
        assert subnet.inputs["privateLinkServiceNetworkPolicies"] == "Disabled"
        (group,) = [
            g
            for g in plan.of_type("azure-native:network:NetworkSecurityGroup")
            if subnet.inputs["networkSecurityGroup"]["id"].endswith("/" + g.inputs["networkSecurityGroupName"])
        ]
        from contracts.reach import nsg_admits

        nat = str(config.clusters[view.key].subnets.nodes.network_address + 10)
        assert nsg_admits(group.inputs.get("securityRules") or [], nat, istio.HTTPS_PORT)


@pytest.mark.parametrize("stack", SERVING)
def test_the_gateway_reaches_only_the_served_models_istiod_and_dns(plans, stack):
    """The gateway's pods may open connections to the served APIs' ports, istiod and DNS, and
    nowhere else: a route cannot make it a proxy into the VNet, another team's pods, or out."""
    from contracts.reach import Destination
    from contracts.reach import refusals as reach_refusals

    _, views = _views(plans, stack)
    gateway = dict(istio.GATEWAY_SELECTOR)
    for view in views:
        allowed = [Destination(8000, namespace="inference"), Destination(8001, namespace="inference")]
        assert reach_refusals(view, istio.INGRESS_NAMESPACE, gateway, allowed) == []
        for elsewhere in (
            Destination(8000, namespace="research"),
            Destination(9093, namespace="kafka", pod_labels=(("strimzi.io/kind", "Kafka"),)),
            Destination(443, cidr="10.0.0.0/8"),
        ):
            assert reach_refusals(view, istio.INGRESS_NAMESPACE, gateway, [elsewhere]), elsewhere


def _denied(rule, subject: dict) -> list[str]:
    """The messages of an admission rule's validations that `subject` fails (CEL, as the API server)."""
    import celpy

    from contracts.admission import cel_program

    activation = {"object": celpy.json_to_cel(subject)}
    return [r.message for r in rule.rules if not cel_program(r.expression).evaluate(activation)]


def test_teams_cannot_alias_services_publish_private_link_or_attach_gateways():
    """Admission, always denying: a team's Service selects its pods (no ExternalName, no
    hand-written endpoints: either could point the gateway at another team's model) and publishes
    no Private Link service; an Istio Gateway outside the gateway's namespace is refused (classic
    Gateways select pods cluster-wide)."""
    from planning.admission import admission_rules, policy_manifest

    rules = {r.name: r for r in admission_rules("acr.example.azurecr.io")}
    services = rules["service-kinds"]
    assert services.always_deny and services.kind == "Service"
    assert policy_manifest(services)["spec"]["matchConstraints"]["resourceRules"][0]["resources"] == ["services"]
    good = {"metadata": {"name": "serve-llm"}, "spec": {"selector": {"app": "serve-llm"}, "ports": [{"port": 8000}]}}
    assert _denied(services, good) == []
    alias = {"metadata": {"name": "x"}, "spec": {"type": "ExternalName", "externalName": "serve-b.b.svc.cluster.local"}}
    assert any("ExternalName" in m for m in _denied(services, alias))
    assert any("select their pods" in m for m in _denied(services, {"metadata": {"name": "x"}, "spec": {}}))
    published = {
        "metadata": {"name": "x", "annotations": {"service.beta.kubernetes.io/azure-pls-create": "true"}},
        "spec": {"selector": {"app": "x"}},
    }
    assert _denied(services, published) == [
        "Private Link services are the serving gateway's alone (platform:serving.privateLink)"
    ]
    gateways = rules["istio-gateways-platform-only"]
    assert gateways.kind == "IstioGateway" and gateways.always_deny
    assert gateways.namespace_selector["matchExpressions"][0]["values"] == [istio.INGRESS_NAMESPACE]
    assert _denied(gateways, {"metadata": {"name": "g"}, "spec": {}})


@pytest.mark.parametrize("stack", SERVING)
def test_each_serving_cluster_pages_on_a_fast_burn_of_the_error_budget(plans, stack):
    """Managed Prometheus scrapes the gateway's Envoy; each serving cluster's rule group pages when
    an API burns its 99.9% budget 14.4x too fast over an hour (and still over five minutes), and
    opens a ticket at 6x over six hours (the SRE workbook's windows), both reading the gateway's
    own view of each API (reporter="source")."""
    from planning import alerts as alerts_plan

    config = _config(stack)
    plan = plans[stack]
    for key in config.clusters:
        names = {g.name for g in alerts_plan.rule_groups(config, key)}
        assert ("platform-serving" in names) == (key in config.serving.clusters), key
    fast, slow = alerts_plan.SERVING_ALERTS
    assert (fast.severity, slow.severity) == ("critical", "warning")
    for alert, windows, threshold in ((fast, ("[1h]", "[5m]"), "0.0144"), (slow, ("[6h]", "[30m]"), "0.006")):
        assert all(w in alert.expression for w in windows) and f"> {threshold}" in alert.expression
        assert 'reporter="source"' in alert.expression and "istio_requests_total" in alert.expression
    groups = [
        g
        for g in plan.of_type("azure-native:alertsmanagement:PrometheusRuleGroup")
        if g.inputs["ruleGroupName"].startswith("platform-serving")
    ]
    assert len(groups) == len(config.serving.clusters)
