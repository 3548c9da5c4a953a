"""An on-premises site's unit (components/arc_site.py) and the baseline its Flux applies
(planning/site_baseline.py): prod-scale's phx1, a K3s site of 256 H100 InfiniBand servers."""

from __future__ import annotations

import base64
import json

import yaml

from facts import arc
from offline.mocks import OFFLINE_CA_CERTIFICATE
from planning import dispatch, multikueue_token, onprem, site_baseline
from planning import kafka as kafka_plan
from planning.admission import admission_rules, policy_manifest
from planning.layers import Unit
from planning.naming import Naming
from planning.network_policy import DEFAULT_DENY
from planning.pod_security import ENFORCE, NAMESPACE_CLASS_LABEL
from planning.site_baseline import BASELINE_CONTAINER
from tests.conftest import ROOT, assert_problems
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

EXTENSION = "azure-native:kubernetesconfiguration:Extension"
FLUX = "azure-native:kubernetesconfiguration:FluxConfiguration"
SITE = "phx1"


def _config():
    return parse_platform_config(read_stack_config(ROOT, "prod-scale").values)


def _objects(documents: dict[str, str], kind: str) -> list[dict]:
    return [m for m in (yaml.safe_load(text) for text in documents.values()) if m["kind"] == kind]


def _site_plan(unit_plans):
    return unit_plans["prod-scale"].plan(Unit("cluster", SITE))


def test_the_sites_unit_references_its_connected_cluster_and_writes_only_beside_it(unit_plans):
    """The unit reads the connected cluster the operators made (never writes it) and puts every
    resource of its own in that cluster's group, the one the delivery makes for the site."""
    config, plan = _config(), _site_plan(unit_plans)
    site = config.on_prem_clusters[SITE]
    reads = [c for c in plan.calls if c.is_read and c.token == "azure-native:kubernetes:ConnectedCluster"]
    assert [c.resource_id for c in reads] == [site.connected_cluster_id]
    assert not plan.of_type("azure-native:kubernetes:ConnectedCluster")
    group = site.connected_cluster_id.split("/")[4]
    assert group == f"rg-{config.prefix}-{config.environment}-{SITE}-site"
    for r in plan.resources:
        if r.custom and "resourceGroupName" in r.inputs:
            assert r.inputs["resourceGroupName"] == group, r.name


def test_the_sites_extensions_sign_in_with_managed_identities_and_send_to_the_regions_workspaces(unit_plans):
    plan = _site_plan(unit_plans)
    extensions = {r.inputs["extensionType"]: r.inputs for r in plan.of_type(EXTENSION)}
    assert set(extensions) == {e.extension_type for e in onprem.site_extensions(_config().on_prem_clusters[SITE])}
    for extension in extensions.values():
        assert extension["clusterRp"] == "Microsoft.Kubernetes"
        assert extension["clusterResourceName"] == "connectedClusters"
        assert extension["identity"] == {"type": "SystemAssigned"}
        # Pinned extensions take no minor upgrade behind the review.
        assert extension["autoUpgradeMinorVersion"] is ("version" not in extension)
    insights = extensions["Microsoft.AzureMonitor.Containers"]["configurationSettings"]
    assert insights[arc.CONTAINER_INSIGHTS_AAD_SETTING] == "true"
    # Its workspace by customer ID, as az CLI passes it; the key unused under managed identity.
    protected = extensions["Microsoft.AzureMonitor.Containers"]["configurationProtectedSettings"]
    assert protected["amalogs.secret.key"] == "<not_used>" and len(protected["amalogs.secret.wsid"]) == 36
    flux = extensions["microsoft.flux"]["configurationSettings"]
    assert flux["workloadIdentity.enable"] == "true" and flux["workloadIdentity.azureClientId"]
    associations = {
        r.inputs["associationName"] for r in plan.of_type("azure-native:monitor:DataCollectionRuleAssociation")
    }
    assert {"ContainerInsightsExtension", "configurationAccessEndpoint"} <= associations and len(associations) == 3


def test_the_sites_flux_reads_only_its_baseline_container_with_its_workload_identity(unit_plans):
    config, plan = _config(), _site_plan(unit_plans)
    site = config.on_prem_clusters[SITE]
    (flux,) = plan.of_type(FLUX)
    source = flux.inputs["azureBlob"]
    assert source["containerName"] == BASELINE_CONTAINER
    assert not {"accountKey", "sasToken", "servicePrincipal", "localAuthRef"} & set(source)  # no key, no SAS
    assert flux.inputs["kustomizations"][site_baseline.QUEUES_PATH]["dependsOn"] == [site_baseline.PLATFORM_PATH]
    (identity,) = plan.of_type("azure-native:managedidentity:UserAssignedIdentity")
    (credential,) = plan.of_type("azure-native:managedidentity:FederatedIdentityCredential")
    assert credential.inputs["issuer"] == site.oidc_issuer_url
    assert credential.inputs["subject"] == "system:serviceaccount:flux-system:source-controller"
    (grant,) = plan.of_type("azure-native:authorization:RoleAssignment")
    assert grant.inputs["scope"].endswith(f"/blobServices/default/containers/{BASELINE_CONTAINER}")
    assert grant.inputs["roleDefinitionId"].endswith("2a2b9908-6ea1-4ae2-8e65-a410df84e7d1")  # Blob Data Reader
    (account,) = plan.of_type("azure-native:storage:StorageAccount")
    assert account.inputs["allowSharedKeyAccess"] is False and account.inputs["publicNetworkAccess"] == "Disabled"
    assert source["url"] == f"https://{account.inputs['accountName']}.blob.core.windows.net"
    assert identity.inputs["resourceName"] == credential.inputs["resourceName"]


def test_the_baseline_is_exported_for_the_deploy_job_and_holds_no_credential(unit_plans):
    """What the deploy job uploads (scripts/site_baseline.py): every file of the baseline, with no
    Secret and no token, and the dispatchers' identity as the only principal bound."""
    plan = _site_plan(unit_plans)
    documents = plan.outputs["baselineDocuments"]
    assert set(documents) == set(site_baseline.baseline_documents(_config(), SITE, site_baseline.SiteIdentities("x")))
    kinds = {yaml.safe_load(text)["kind"] for text in documents.values()}
    assert "Secret" not in kinds
    # The service accounts of the workloads that run there, each naming its identity's client ID.
    accounts = {(a["metadata"]["namespace"], a["metadata"]["name"]): a for a in _objects(documents, "ServiceAccount")}
    assert set(accounts) == {("research", "trainer")}
    client_ids = unit_plans["prod-scale"].plan(Unit("foundation")).outputs["workloadIdentities"]
    annotations = accounts[("research", "trainer")]["metadata"]["annotations"]
    assert annotations["azure.workload.identity/client-id"] == client_ids["trainer"]
    assert annotations["azure.workload.identity/tenant-id"]
    # Where its jobs read and write, as on AKS in the site's region.
    maps = {
        m["metadata"]["name"]: m for m in _objects(documents, "ConfigMap") if m["metadata"]["namespace"] == "research"
    }
    assert maps["platform-storage"]["data"]["WEIGHTS_URL"].startswith("https://")
    # Where its Kafka is (eastus2's host, eus2, over the link) and the certificate its brokers'
    # chain to, read from that cluster by the site's unit (the Secret the offline engine answers).
    # (10.40.31.254: the last usable address of eus2's node subnet, 10.40.16.0/20.)
    assert maps["platform-kafka"]["data"] == {
        "BOOTSTRAP_SERVERS": "10.40.31.254:9095",
        "CONNECTIONS_MAX_IDLE_MS": "180000",
    }
    assert maps["kafka-cluster-ca"]["data"] == {"ca.crt": OFFLINE_CA_CERTIFICATE}
    reads = [c for c in plan.calls if c.is_read and c.token == "kubernetes:core/v1:Secret"]
    assert [c.resource_id for c in reads] == ["kafka/eus2-cluster-ca-cert"] and "::aks-eus2-k8s::" in reads[0].provider
    bindings = _objects(documents, "RoleBinding") + _objects(documents, "ClusterRoleBinding")
    principals = {s["name"] for b in bindings for s in b["subjects"]}
    (identity,) = [
        r
        for stack in unit_plans["prod-scale"].plans.values()
        for r in stack.of_type("azure-native:managedidentity:UserAssignedIdentity")
        if r.name.endswith(dispatch.DISPATCH_WORKLOAD)
    ]
    assert len(principals) == 1 and principals != {""}, principals
    assert plan.outputs["site"]["baselineUrl"].endswith(f".blob.core.windows.net/{BASELINE_CONTAINER}")
    assert identity is not None


def test_the_site_applies_the_platforms_namespaces_admission_and_isolation():
    config = _config()
    documents = site_baseline.baseline_documents(
        config, SITE, site_baseline.SiteIdentities("00000000-0000-0000-0000-00000000d15a")
    )
    namespaces = {n["metadata"]["name"]: n["metadata"]["labels"] for n in _objects(documents, "Namespace")}
    research = config.teams["research"]
    for namespace in research.namespaces:
        assert namespaces[namespace][NAMESPACE_CLASS_LABEL] == "training"  # privileged PSA, admission's baseline
        assert namespaces[namespace][ENFORCE] == "privileged"
    denies = {
        p["metadata"]["namespace"]
        for p in _objects(documents, "NetworkPolicy")
        if p["metadata"]["name"] == DEFAULT_DENY
    }
    assert denies == set(research.namespaces)
    # The admission policies are AKS's: images named by the platform's registry, which the site's
    # runtime pulls through its mirror (a job MultiKueue copies there is the manifest written for
    # any region).
    site = config.on_prem_clusters[SITE]
    login_server = Naming(config.prefix, config.environment).registry_login_server()
    policies = {p["metadata"]["name"]: p for p in _objects(documents, "ValidatingAdmissionPolicy")}
    assert policies == {r.policy_name: policy_manifest(r) for r in admission_rules(login_server)}
    # Kueue is the platform's chart and version: the chart from the site's registry (Flux fetches
    # it), its image by the platform's name.
    (release,) = _objects(documents, "HelmRelease")
    (source,) = _objects(documents, "OCIRepository")
    assert source["spec"]["url"].startswith(f"oci://{site.registry}/") and source["spec"]["ref"]["tag"] == "0.19.2"
    image = release["spec"]["values"]["controllerManager"]["manager"]["image"]
    assert image["repository"].startswith(login_server) and image["tag"] == "v0.19.2"


def test_a_site_without_cilium_gets_no_cilium_policies_and_reaches_entra_by_address():
    config = _config()
    site = config.on_prem_clusters[SITE].model_copy(update={"cni": "calico"})
    other = config.model_copy(update={"on_prem_clusters": {SITE: site}})
    documents = site_baseline.baseline_documents(other, SITE, site_baseline.SiteIdentities("x"))
    assert not [d for d in documents if "cilium" in d]
    traffic = site_baseline.site_team_traffic(other, SITE, "research")
    assert not traffic.fqdns and any(p.name == "entra-id" for p in traffic.egress)
    with_cilium = site_baseline.site_team_traffic(config, SITE, "research")
    assert with_cilium.fqdns and not any(p.name == "entra-id" for p in with_cilium.egress)


def test_the_sites_quota_is_its_pools_and_the_dispatchers_count_it(plans):
    """phx1 opens its 256 servers of 8 H100 to research alone: research's ClusterQueue there holds
    2,048 GPUs, and each dispatcher's research queue holds that more than the AKS workers give."""
    config = _config()
    (queue,) = _objects(
        site_baseline.baseline_documents(config, SITE, site_baseline.SiteIdentities("x")), "ClusterQueue"
    )
    (flavor,) = queue["spec"]["resourceGroups"][0]["flavors"]
    gpus = {r["name"]: r["nominalQuota"] for r in flavor["resources"]}["nvidia.com/gpu"]
    assert gpus == 256 * 8
    local = {
        (q["metadata"]["namespace"], q["metadata"]["name"])
        for q in _objects(
            site_baseline.baseline_documents(config, SITE, site_baseline.SiteIdentities("x")), "LocalQueue"
        )
    }
    assert ("research", dispatch.ANY_REGION_QUEUE) in local
    without = dispatch.dispatcher_manifests(dispatch.worker_pools(config), dict(config.teams))
    with_site = dispatch.dispatcher_manifests(
        dispatch.worker_pools(config), dict(config.teams), {SITE: site_baseline.site_quotas(config, SITE)}
    )

    def research_gpus(manifests):
        (q,) = [m for m in manifests if m.kind == "ClusterQueue" and m.name == "team-research"]
        return sum(
            r["nominalQuota"]
            for f in q.spec["resourceGroups"][0]["flavors"]
            for r in f["resources"]
            if r["name"] == "nvidia.com/gpu"
        )

    assert research_gpus(with_site) - research_gpus(without) == gpus
    (clusters,) = [m.spec["clusters"] for m in with_site if m.kind == "MultiKueueConfig"]
    assert SITE in clusters


def test_the_site_trusts_the_dispatchers_identity_alone_with_the_token_the_refresher_asks_for(plans):
    """The API server's JWT authenticator takes Entra ID tokens for the site's own application (no
    AKS cluster takes them: a token the site receives works nowhere else), from this tenant, of
    the dispatchers' identity only, named by its object ID as the baseline's bindings name it."""
    config = _config()
    site = config.on_prem_clusters[SITE]
    authentication = yaml.safe_load(plans["prod-scale"].outputs["siteAuthentication"][SITE])
    (jwt,) = authentication["jwt"]
    assert jwt["issuer"]["audiences"] == [str(site.api_server.token_audience)]
    assert f"{jwt['issuer']['audiences'][0]}/.default" != multikueue_token.AKS_SERVER_SCOPE
    tenant = jwt["issuer"]["url"].removeprefix("https://sts.windows.net/").rstrip("/")
    assert (
        jwt["issuer"]["discoveryURL"] == f"https://login.microsoftonline.com/{tenant}/.well-known/openid-configuration"
    )
    assert jwt["claimMappings"]["username"] == {"claim": "oid", "prefix": ""}
    rules = [r["expression"] for r in jwt["claimValidationRules"]]
    assert rules[0] == f"claims.tid == '{tenant}'"
    (oid,) = {r.split("'")[1] for r in rules[1:]}
    documents = plans["prod-scale"].outputs["siteBaselines"][SITE]
    bound = {
        s["name"]
        for b in _objects(documents, "ClusterRoleBinding") + _objects(documents, "RoleBinding")
        for s in b["subjects"]
    }
    assert bound == {oid}
    assert "groups" not in jwt["claimMappings"]


def test_the_refresher_asks_the_sites_audience_for_the_site_and_aks_for_the_aks_workers(plans):
    """Each dispatcher's workers ConfigMap names the site's scope; the refresher signs the site's
    kubeconfig with a token for it, the AKS workers' with AKS's, and renews a token of another
    audience (a site whose application changed) at once."""
    from tests.test_dispatch import FakeDispatcher, secret_kubeconfig

    config = _config()
    scope = f"{config.on_prem_clusters[SITE].api_server.token_audience}/.default"
    maps = [
        c.inputs["data"]
        for c in plans["prod-scale"].of_type("kubernetes:core/v1:ConfigMap")
        if c.inputs["metadata"]["name"] == dispatch.WORKERS_CONFIG_MAP
    ]
    assert len(maps) == len(config.jobs.dispatchers) and all(m[f"{SITE}.scope"] == scope for m in maps)
    assert not [k for m in maps for k in m if k.endswith(".scope") and not k.startswith(SITE)]

    def token(audience: str, expires: float = 4e9) -> str:
        claims = {"aud": audience.removesuffix("/.default"), "exp": int(expires)}
        return "e30." + base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=") + ".sig"

    asked: list[str] = []

    def fetch(requested: str) -> str:
        asked.append(requested)
        return token(requested)

    endpoints = {"eus2": ("https://eus2", "Q0E="), SITE: ("https://192.168.0.10:6443", "Q0E=")}
    cluster = FakeDispatcher()
    written = multikueue_token.refresh(cluster, endpoints, dispatch.kubeconfig_secret, fetch, 1e9, {SITE: scope})
    assert written == ["eus2", SITE] and sorted(asked) == sorted([multikueue_token.AKS_SERVER_SCOPE, scope])
    signed = json.loads(secret_kubeconfig(cluster, SITE))["users"][0]["user"]["token"]
    assert multikueue_token.audience_of(signed) == scope.removesuffix("/.default")
    # Nothing to renew an hour later; a site token of another audience is renewed at once.
    later = 1e9 + 3600
    assert multikueue_token.refresh(cluster, endpoints, dispatch.kubeconfig_secret, fetch, later, {SITE: scope}) == []
    # The same audience in capitals is the same audience (Entra's GUIDs are case-insensitive).
    assert (
        multikueue_token.refresh(
            cluster,
            endpoints,
            dispatch.kubeconfig_secret,
            fetch,
            later,
            {SITE: scope.removesuffix("/.default").upper() + "/.default"},
        )
        == []
    )
    other = "11111111-2222-3333-4444-555555555555/.default"
    assert multikueue_token.refresh(cluster, endpoints, dispatch.kubeconfig_secret, fetch, later, {SITE: other}) == [
        SITE
    ]


def test_the_dispatchers_reach_the_sites_api_server_through_their_firewall_and_come_back(plans):
    """Each region with a dispatcher lets its nodes reach the site's API server (one rule, that
    address and port), and SNATs traffic to on-premises ranges, so the answers come back through
    the same firewall."""
    config = _config()
    site = config.on_prem_clusters[SITE]
    for region in ("eastus2", "southcentralus"):
        (rule,) = onprem.site_api_rules(config, region)
        assert rule.destinations == (str(site.api_server.address),) and rule.ports == ("6443",)
    for policy in plans["prod-scale"].of_type("azure-native:network:FirewallPolicy"):
        ranges = policy.inputs["snat"]["privateRanges"]
        assert "192.168.0.0/16" not in ranges and "10.0.0.0/8" in ranges
    for policy in plans["prod"].of_type("azure-native:network:FirewallPolicy"):
        assert "snat" not in policy.inputs  # no site: Azure's default


def test_the_spokes_take_from_on_premises_only_the_sites_servers_on_the_endpoints_data_ports(plans):
    """Gateway transit advertises the whole VNet to the sites, and an NSG's default rule admits
    every VirtualNetwork range (the on-premises routes included): the clusters' subnets deny the
    on-premises ranges, the endpoints' subnet admits the sites' servers on the data ports only,
    and the node subnet of the site's Kafka host admits them on its listener for other networks."""
    config = _config()
    site = config.on_prem_clusters[SITE]
    groups = {
        g.inputs["networkSecurityGroupName"]: g.inputs
        for g in plans["prod-scale"].of_type("azure-native:network:NetworkSecurityGroup")
    }
    for name, group in groups.items():
        rules = {r["name"]: r for r in group.get("securityRules") or []}
        if name.endswith("-lustre"):
            continue  # it denies the whole VirtualNetwork already
        # The on-premises ranges, and the site's pod range (outside them: reached unmasqueraded).
        assert rules["deny-on-premises"]["sourceAddressPrefixes"] == ["192.168.0.0/16", str(site.pod_cidr)], name
        assert rules["deny-on-premises"]["access"] == "Deny"
        if name.endswith("-privateEndpoints") or "private" in name.lower():
            allow = rules["sites-to-endpoints"]
            assert allow["sourceAddressPrefixes"] == [str(r) for r in site.node_ranges]
            assert allow["destinationPortRanges"] == list(onprem.SITE_ENDPOINT_PORTS)
            assert allow["priority"] < rules["deny-on-premises"]["priority"]
        else:
            assert "sites-to-endpoints" not in rules, name
        allows = sorted(r for r, rule in rules.items() if rule["access"] == "Allow" and "site" in r)
        if name.endswith("-eus2-nodes"):
            # The node subnet of the site's Kafka host: its listener for other networks, and no more.
            kafka = rules["sites-to-kafka"]
            assert kafka["sourceAddressPrefixes"] == [str(r) for r in site.node_ranges]
            assert kafka["destinationPortRanges"] == ["9095"] and kafka["protocol"] == "Tcp"
            assert kafka["priority"] < rules["deny-on-premises"]["priority"]
            assert allows == ["sites-to-kafka"]
        else:
            assert "sites-to-kafka" not in rules, name
    for group in plans["prod"].of_type("azure-native:network:NetworkSecurityGroup"):
        assert not [r for r in group.inputs.get("securityRules") or [] if "on-premises" in r["name"]]


def test_a_site_the_platform_cannot_feed_or_govern_is_refused_by_key():
    def break_the_site(values):
        site = values["platform:onPremClusters"]["phx1"]
        site["apiServer"]["tokenAudience"] = "6dae42f8-4368-4678-94ff-3960e28e3630"
        site["workloadIdentity"] = False
        site.pop("oidcIssuerUrl")
        site["connectedClusterId"] = site["connectedClusterId"].replace("rg-ailabscale-prod-phx1-site", "rg-phx1")
        values["platform:network"]["hub"]["useRemoteGateways"] = False
        values["platform:workloads"]["trainer"]["sites"] = []

    assert_problems(
        "prod-scale",
        break_the_site,
        {
            "platform:onPremClusters.phx1.workloadIdentity": "reads the platform's baseline with workload identity",
            "platform:onPremClusters.phx1.connectedClusterId": "connect the site into rg-ailabscale-prod-phx1-site",
            "platform:network.hub.useRemoteGateways": "gateway",
            "platform:onPremClusters.phx1.apiServer.tokenAudience": "replay the dispatchers' token",
        },
    )


def test_the_infiniband_gang_job_for_any_region_is_admitted_at_the_site_with_its_regions_kafka(plans):
    """The manifest a team submits for any region (rendered as for eus2, queue `any-region`), as
    MultiKueue copies it to phx1: the site's baseline admits it (admission), its pool and claim
    take it (scheduling: the pool is named as the AKS pool it selects, the claim is the site's own
    file system), its quota holds it (queueing), and its identity signs in there and reaches its
    blobs over the link and its metrics topic on eastus2's Kafka (identity: eus2's KafkaUser named
    by its identity; reach: its namespace's ConfigMap names eus2's listener for other networks,
    the site's policy lets it out to eus2's node subnet on that port, the listener lets the site's
    servers in)."""
    import copy

    from contracts.golden import BY_NAME, evaluate, rendered
    from contracts.site import SiteView
    from tests.test_contracts import config_of

    plan = plans["prod-scale"]
    view = SiteView(plan, SITE, config_of("prod-scale"), plan.outputs["siteBaselines"][SITE])
    item = rendered(BY_NAME["training-infiniband"], plan.outputs, "eus2", QUEUE=dispatch.ANY_REGION_QUEUE)
    assert item is not None
    assert not any(evaluate(view, item).values()), evaluate(view, item)
    # The address as the job carried it before the ConfigMap: eus2's in-cluster Service name,
    # which does not resolve at the site (nor in scus).
    from tests.test_dispatch import with_kafka_address

    literal = with_kafka_address(item, "eus2-kafka-bootstrap.kafka.svc:9093")
    assert any("does not resolve in phx1" in r for r in evaluate(view, literal)["reach"])
    # A baseline without the namespace's platform-kafka: the kubelet would not start the trainer.
    without = SiteView(plan, SITE, view.config, {k: v for k, v in view.documents.items() if "platform-kafka" not in k})
    assert [r for r in evaluate(without, item)["scheduling"] if "platform-kafka" in r] == [
        "trainer's KAFKA_BOOTSTRAP_SERVERS: no ConfigMap platform-kafka with BOOTSTRAP_SERVERS in research on phx1",
        "trainer's KAFKA_CONNECTIONS_MAX_IDLE_MS: no ConfigMap platform-kafka with CONNECTIONS_MAX_IDLE_MS in research on phx1",
    ]
    # Servers the listener does not know (a site that moved its ranges without a deploy) are refused.
    moved = copy.deepcopy(view.config)
    moved["platform:onPremClusters"][SITE]["nodeRanges"] = ["192.168.64.0/20"]
    elsewhere_view = SiteView(plan, SITE, moved, view.documents)
    assert evaluate(elsewhere_view, item)["reach"] == ["Kafka's mirror listener does not let phx1's servers in"]
    # A job that names another pool, or a queue the site lacks, is refused where it would wait.
    elsewhere = item.changed(
        lambda job: job["spec"]["template"]["spec"]["nodeSelector"].update({"platform.ai/gpu-pool": "h100b"})
    )
    assert evaluate(view, elsewhere)["scheduling"]


def test_the_deploy_pipeline_deploys_each_site_after_the_tenants_and_nothing_waits_on_it(capsys):
    """The environment workflow's site wave (a matrix of scripts/units.py's `sites`): after the
    tenants, which read nothing of a site, and needed by no job, so an Offline site (its extensions
    wait on its agents) fails its own job alone."""
    from scripts import units

    workflow = yaml.safe_load((ROOT / ".github/workflows/environment.yml").read_text())
    jobs = workflow["jobs"]
    assert jobs["preview-sites"]["needs"] == ["units", "up-tenants"]
    assert jobs["up-sites"]["needs"] == ["units", "preview-sites"]
    for name in ("preview-sites", "up-sites"):
        assert jobs[name]["strategy"]["matrix"]["cluster"] == "${{ fromJSON(needs.units.outputs.sites) }}"
        assert jobs[name]["with"]["layer"] == "cluster"
    waiting = [name for name, job in jobs.items() if {"up-sites", "preview-sites"} & set(job.get("needs") or [])]
    assert waiting == ["up-sites"]
    assert units.main(["--stack", "prod-scale", "--github"]) == 0
    printed = dict(line.split("=", 1) for line in capsys.readouterr().out.splitlines())
    assert json.loads(printed["sites"]) == [SITE] and SITE not in json.loads(printed["rest"])


def test_a_site_whose_token_entra_refuses_does_not_stop_the_aks_workers_renewals():
    """The site's application gone (or assignment required on it): Entra ID refuses its scope.
    The AKS workers' kubeconfigs are written all the same; the run fails, naming the site's scope,
    and the next one tries again."""
    from tests.test_dispatch import FakeDispatcher

    site_scope = "3f2c9d4e-7a1b-4c5d-9e8f-0a1b2c3d4e5f/.default"

    def fetch(scope: str) -> str:
        if scope == site_scope:
            raise OSError("AADSTS500011: the resource principal was not found")
        claims = {"aud": scope.removesuffix("/.default"), "exp": 4_000_000_000}
        return "e30." + base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=") + ".sig"

    endpoints = {
        "eus2": ("https://eus2", "Q0E="),
        SITE: ("https://192.168.0.10:6443", "Q0E="),
        "scus": ("https://scus", "Q0E="),
    }
    cluster = FakeDispatcher()
    try:
        multikueue_token.refresh(cluster, endpoints, dispatch.kubeconfig_secret, fetch, 1e9, {SITE: site_scope})
    except multikueue_token.RefreshFailed as error:
        assert error.written == ["eus2", "scus"] and list(error.failed) == [site_scope]
    else:
        raise AssertionError("a refused scope must fail the run")
    assert dispatch.kubeconfig_secret("scus") in cluster.secrets
    assert dispatch.kubeconfig_secret(SITE) not in cluster.secrets


def test_the_hubs_gateway_routes_the_clusters_subnets_through_their_regions_firewall(unit_plans, plans):
    """With a site, the foundation asks the hub's owner for routes on the gateway: each region's
    cluster subnets (whose answers leave through the region's firewall) to that firewall, so what a
    site starts toward them crosses the firewall both ways (and meets its default deny); the
    endpoints' subnet, which answers straight, gets none. Without a site, nothing is asked."""
    config = _config()
    foundation = unit_plans["prod-scale"].plan(Unit("foundation"))
    routes = foundation.outputs["hubRequests"]["gatewayRoutes"]
    # Each region's firewall, as its spokes' route tables send their traffic to it.
    firewalls = {
        t.inputs["location"]: t.inputs["routes"][0]["nextHopIpAddress"]
        for t in foundation.of_type("azure-native:network:RouteTable")
    }
    expected = {
        (str(subnet), firewalls[cluster.region])
        for cluster in config.clusters.values()
        for subnet in (cluster.subnets.system, cluster.subnets.nodes, cluster.subnets.pods)
        if subnet is not None
    }
    assert {(r["addressPrefix"], r["nextHopIpAddress"]) for r in routes} == expected
    assert {r["nextHopType"] for r in routes} == {"VirtualAppliance"}
    endpoints = {str(v.subnets.private_endpoints) for v in config.network.regions.values()}
    assert not endpoints & {r["addressPrefix"] for r in routes}
    assert "gatewayRoutes" not in (plans["prod"].outputs.get("hubRequests") or {})


def test_a_team_renders_a_job_for_the_site_and_is_told_what_it_lacks_there(plans, tmp_path, capsys):
    """scripts/workloads.py takes a site as a cluster: the golden training job for its own `gpu`
    queue, filled as the site has it (its pool, the platform's image names, its Kafka from the
    namespace's ConfigMap there); a template the site cannot fill says why (no sandbox there)."""
    from scripts import workloads

    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(plans["prod-scale"].outputs))
    training = str(ROOT / "examples" / "training-infiniband.yaml")
    assert workloads.main([training, "--outputs", str(outputs), "--cluster", SITE]) == 0
    (_, job) = yaml.safe_load_all(capsys.readouterr().out)
    spec = job["spec"]["template"]["spec"]
    assert spec["nodeSelector"]["platform.ai/gpu-pool"] == "h100a"
    assert spec["containers"][0]["image"].startswith(plans["prod-scale"].outputs["registryLoginServer"])
    (kafka,) = [e for e in spec["containers"][0]["env"] if e["name"] == "KAFKA_BOOTSTRAP_SERVERS"]
    assert kafka["valueFrom"]["configMapKeyRef"] == {"name": "platform-kafka", "key": "BOOTSTRAP_SERVERS"}
    sandboxed = str(ROOT / "examples" / "sandboxed-eval.yaml")
    assert workloads.main([sandboxed, "--outputs", str(outputs), "--cluster", SITE]) != 0
    assert "SANDBOX_NAMESPACE" in capsys.readouterr().err


def test_a_site_whose_kafka_clients_cannot_reach_kafka_is_refused_by_key():
    """A site's clients use their region's Kafka, over OAuth only; a site's previews read that
    Kafka's CA as the cluster layer's plan identity, whose object ID the stack must give."""

    def no_host_in_the_region(values):
        values["platform:kafka"]["strimzi"]["clusters"] = ["scus"]
        values["platform:workloads"]["trainer"]["clusters"] = ["scus"]
        del values["platform:entra"]["planIdentity"]["clusterPrincipalObjectId"]

    assert_problems(
        "prod-scale",
        no_host_in_the_region,
        {
            "platform:kafka.clients.trainer": "no cluster of its region eastus2 hosts Kafka",
            "platform:entra.planIdentity.clusterPrincipalObjectId": "previews of a site's unit read the CA",
        },
    )

    def certificates(values):
        values["platform:kafka"]["clients"]["trainer"]["authentication"] = "tls"

    assert_problems(
        "prod-scale",
        certificates,
        {"platform:kafka.clients.trainer.authentication": "only oauth reaches Kafka"},
    )


def test_only_the_kafka_of_the_sites_region_lets_the_sites_servers_in(plans):
    """eus2's listener for other networks (OAuth, TLS, an internal load balancer in its node
    subnet) admits the site's servers beside the other region's MirrorMaker; scus's admits only
    MirrorMaker; no listener in a cluster admits the site's pod range."""
    from contracts.cluster import cluster_of

    config = _config()
    site = config.on_prem_clusters[SITE]
    servers = {"ipBlock": {"cidr": str(site.node_ranges[0])}}
    for kafka in plans["prod-scale"].of_type("kubernetes:kafka.strimzi.io/v1:Kafka"):
        listeners = {item["name"]: item for item in kafka.inputs["spec"]["kafka"]["listeners"]}
        mirror = listeners["mirror"]
        assert mirror["type"] == "loadbalancer" and mirror["tls"] and mirror["authentication"]["sasl"]
        peers = [p for item in listeners.values() for p in item["networkPolicyPeers"]]
        assert {"ipBlock": {"cidr": str(site.pod_cidr)}} not in peers
        assert (servers in mirror["networkPolicyPeers"]) == (cluster_of(kafka) == "eus2"), cluster_of(kafka)
        assert [p for p in peers if p == servers] == ([servers] if cluster_of(kafka) == "eus2" else [])


def test_a_sites_clients_on_event_hubs_reach_its_endpoint_over_the_link(plans):
    """With Event Hubs (dev's engine) instead: the site's client namespace names the namespace's
    Kafka endpoint (as the data unit names it) in `platform-kafka`, carries no CA (Event Hubs'
    chains to a public root), and its policy lets it out to the region's endpoints on 9093, where
    the endpoints' NSG admits the site's servers; no Strimzi listener or host is involved."""
    config = _config()
    dev = parse_platform_config(read_stack_config(ROOT, "dev").values)
    assert dev.kafka is not None and config.kafka is not None
    kafka = dev.kafka.model_copy(update={"clients": {"trainer": dev.kafka.clients["trainer"]}})
    other = config.model_copy(update={"kafka": kafka})
    documents = site_baseline.baseline_documents(other, SITE, site_baseline.SiteIdentities("x"))
    maps = {
        m["metadata"]["name"]: m for m in _objects(documents, "ConfigMap") if m["metadata"]["namespace"] == "research"
    }
    assert set(maps) == {"platform-storage", "platform-kafka"}
    assert maps["platform-kafka"]["data"] == {
        "BOOTSTRAP_SERVERS": kafka_plan.event_hubs_bootstrap(other),
        "CONNECTIONS_MAX_IDLE_MS": "180000",
    }
    # The name the data unit gives the namespace (dev's plan), and what dev's clusters hold.
    (namespace,) = plans["dev"].of_type("azure-native:eventhub:Namespace")
    expected = f"{namespace.inputs['namespaceName']}.servicebus.windows.net:9093"
    assert kafka_plan.event_hubs_bootstrap(dev) == expected
    held = {
        (m.inputs["data"]["BOOTSTRAP_SERVERS"], m.inputs["data"]["CONNECTIONS_MAX_IDLE_MS"])
        for m in plans["dev"].of_type("kubernetes:core/v1:ConfigMap")
        if m.inputs["metadata"]["name"] == "platform-kafka"
    }
    assert held == {(expected, "180000")}
    egress = {p.name: p for p in site_baseline.site_team_traffic(other, SITE, "research").egress}
    assert "kafka" not in egress
    assert [port.port for port in egress["event-hubs"].ports] == [9093]
    assert egress["event-hubs"].cidrs == (str(config.network.regions["eastus2"].subnets.private_endpoints),)
    assert "9093" in onprem.SITE_ENDPOINT_PORTS
    assert onprem.site_kafka_rules(other, "eastus2") == []


def test_a_baseline_that_changes_without_a_change_to_the_site_shows_in_the_drift_check(unit_plans):
    """The baseline is a stack output and its CA a read, both of which `--expect-no-changes`
    ignores (pulumi/pulumi#5087): the site's baseline container carries the digest of the
    baseline its deploy uploaded, so a renewed Kafka CA (or any change of what the site gets)
    is an update of that container in the next preview."""
    plan = _site_plan(unit_plans)
    documents = plan.outputs["baselineDocuments"]
    (container,) = plan.of_type("azure-native:storage:BlobContainer")
    digest = container.inputs["metadata"][site_baseline.DIGEST_METADATA]
    assert digest == site_baseline.baseline_digest(documents)
    config = _config()
    renewed = site_baseline.baseline_documents(
        config, SITE, site_baseline.SiteIdentities("x", kafka_ca="-----BEGIN CERTIFICATE-----\nbmV3\n")
    )
    before = site_baseline.baseline_documents(
        config, SITE, site_baseline.SiteIdentities("x", kafka_ca=OFFLINE_CA_CERTIFICATE)
    )
    assert site_baseline.baseline_digest(renewed) != site_baseline.baseline_digest(before)
