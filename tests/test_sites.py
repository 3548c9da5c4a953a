"""An on-premises site's unit (components/arc_site.py) and the baseline its Flux applies
(planning/site_baseline.py): prod-scale's phx1, a K3s site of 256 H100 InfiniBand servers."""

from __future__ import annotations

import yaml

from components.arc_site import BASELINE_CONTAINER
from facts import arc
from planning import dispatch, multikueue_token, onprem, site_baseline
from planning.admission import admission_rules
from planning.layers import Unit
from planning.network_policy import DEFAULT_DENY
from planning.pod_security import ENFORCE, NAMESPACE_CLASS_LABEL
from tests.conftest import ROOT, run_with
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
    assert "configurationProtectedSettings" not in extensions["Microsoft.AzureMonitor.Containers"]
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
    assert set(documents) == set(site_baseline.baseline_documents(_config(), SITE, "x"))
    kinds = {yaml.safe_load(text)["kind"] for text in documents.values()}
    assert "Secret" not in kinds and "ServiceAccount" not in kinds
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
    documents = site_baseline.baseline_documents(config, SITE, "00000000-0000-0000-0000-00000000d15a")
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
    # The admission policies admit images of the site's registry, not the platform's (the site's
    # nodes have no identity to pull from it).
    site = config.on_prem_clusters[SITE]
    policies = {p["metadata"]["name"]: p for p in _objects(documents, "ValidatingAdmissionPolicy")}
    assert set(policies) == {r.policy_name for r in admission_rules(site.registry)}
    registry = yaml.safe_dump(policies["platform-platform-registry"])
    assert site.registry in registry and "azurecr.io" not in registry
    # Kueue is the platform's chart and version, from the site's registry.
    (release,) = _objects(documents, "HelmRelease")
    (source,) = _objects(documents, "OCIRepository")
    assert source["spec"]["url"].startswith(f"oci://{site.registry}/") and source["spec"]["ref"]["tag"] == "0.19.2"
    image = release["spec"]["values"]["controllerManager"]["manager"]["image"]
    assert image["repository"].startswith(site.registry) and image["tag"] == "v0.19.2"


def test_a_site_without_cilium_gets_no_cilium_policies_and_reaches_entra_by_address():
    config = _config()
    site = config.on_prem_clusters[SITE].model_copy(update={"cni": "calico"})
    other = config.model_copy(update={"on_prem_clusters": {SITE: site}})
    documents = site_baseline.baseline_documents(other, SITE, "x")
    assert not [d for d in documents if "cilium" in d]
    traffic = site_baseline.site_team_traffic(other, SITE, "research")
    assert not traffic.fqdns and any(p.name == "entra-id" for p in traffic.egress)
    with_cilium = site_baseline.site_team_traffic(config, SITE, "research")
    assert with_cilium.fqdns and not any(p.name == "entra-id" for p in with_cilium.egress)


def test_the_sites_quota_is_its_pools_and_the_dispatchers_count_it(plans):
    """phx1 opens its 256 servers of 8 H100 to research alone: research's ClusterQueue there holds
    2,048 GPUs, and each dispatcher's research queue holds that more than the AKS workers give."""
    config = _config()
    (queue,) = _objects(site_baseline.baseline_documents(config, SITE, "x"), "ClusterQueue")
    (flavor,) = queue["spec"]["resourceGroups"][0]["flavors"]
    gpus = {r["name"]: r["nominalQuota"] for r in flavor["resources"]}["nvidia.com/gpu"]
    assert gpus == 256 * 8
    local = {
        (q["metadata"]["namespace"], q["metadata"]["name"])
        for q in _objects(site_baseline.baseline_documents(config, SITE, "x"), "LocalQueue")
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
    """The API server's JWT authenticator takes Entra ID tokens for AKS's server application (the
    refresher's one scope), from this tenant, of the dispatchers' identity only, named by its
    object ID as the baseline's bindings name it."""
    config = _config()
    authentication = yaml.safe_load(plans["prod-scale"].outputs["siteAuthentication"][SITE])
    (jwt,) = authentication["jwt"]
    assert f"{jwt['issuer']['audiences'][0]}/.default" == multikueue_token.AKS_SERVER_SCOPE
    tenant = jwt["issuer"]["url"].removeprefix("https://sts.windows.net/").rstrip("/")
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
    assert config.on_prem_clusters[SITE].api_server.certificate_authority_data


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


def test_a_site_the_platform_cannot_feed_or_govern_is_refused_by_key():
    def break_the_site(values):
        site = values["platform:onPremClusters"]["phx1"]
        site["workloadIdentity"] = False
        site.pop("oidcIssuerUrl")
        site["connectedClusterId"] = site["connectedClusterId"].replace("rg-ailabscale-prod-phx1-site", "rg-phx1")
        values["platform:network"]["hub"]["useRemoteGateways"] = False
        values["platform:workloads"]["trainer"]["sites"] = []

    plan = run_with("prod-scale", break_the_site)
    assert plan.resources == [] and plan.error is not None and "Traceback" not in plan.error
    expected = {
        "platform:onPremClusters.phx1.workloadIdentity": "reads the platform's baseline with workload identity",
        "platform:onPremClusters.phx1.connectedClusterId": "connect the site into rg-ailabscale-prod-phx1-site",
        "platform:network.hub.useRemoteGateways": "gateway",
    }
    for key, words in expected.items():
        lines = [line for line in plan.error.splitlines() if line.strip().startswith(f"- {key}:")]
        assert any(words in line for line in lines), f"{key}: {words!r} not in\n{plan.error}"
