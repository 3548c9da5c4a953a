"""On-premises clusters connected through Azure Arc (platform:onPremClusters, docs/hybrid.md): what
config declares about a site, and every problem of a bad one named by its key in one message."""

from __future__ import annotations

from typing import get_args

from contracts import reach
from contracts.cluster import ClusterView
from facts.arc import DISTRIBUTIONS, WORKLOAD_IDENTITY_DISTRIBUTIONS
from planning import onprem as onprem_plan
from planning.naming import Naming
from stackconfig.model import OnPremGpuPoolConfig
from stackconfig.model.onprem import Distribution
from tests.conftest import ROOT, assert_problems, run_with, stack_values
from validation.checks.onprem import pool_problem
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config


def test_prod_scale_declares_an_h100_infiniband_site_fed_by_its_regions_dispatcher():
    config = parse_platform_config(read_stack_config(ROOT, "prod-scale").values)
    (site,) = config.on_prem_clusters.values()
    (pool,) = site.gpu_pools.values()
    assert pool.size is not None and pool_problem(pool) is None
    dispatchers = {config.clusters[k].region for k in config.jobs.dispatchers}
    assert site.region in dispatchers and site.teams
    assert site.workload_identity and site.distribution in WORKLOAD_IDENTITY_DISTRIBUTIONS


def test_the_distributions_config_takes_are_the_ones_the_facts_describe():
    assert set(get_args(Distribution)) == set(DISTRIBUTIONS)
    assert set(DISTRIBUTIONS) >= WORKLOAD_IDENTITY_DISTRIBUTIONS


def test_a_pool_is_sized_by_a_catalogue_size_or_a_full_description():
    assert pool_problem(OnPremGpuPoolConfig(nodes=4, size="Standard_ND96isr_H100_v5")) is None
    assert "catalogue" in str(pool_problem(OnPremGpuPoolConfig(nodes=4, size="DGX-H100")))
    described = OnPremGpuPoolConfig(
        nodes=4, gpu_model="H200", gpus_per_node=8, gpu_memory_gb=141, vcpus=224, memory_gib=2048, infiniband=True
    )
    assert pool_problem(described) is None
    partly = OnPremGpuPoolConfig(nodes=4, gpu_model="H200", gpus_per_node=8)
    assert "gpuMemoryGb, vcpus, memoryGib, infiniband" in str(pool_problem(partly))


def test_a_bad_site_stops_the_preview_with_every_problem_by_key():
    def break_the_site(values):
        site = values["platform:onPremClusters"]["phx1"]
        site["distribution"] = "kubeadm"  # no Azure Policy extension, no workload identity
        site["nodeRanges"] = ["10.40.16.0/20", "172.20.0.0/20"]  # Azure's, and not routed by the hub
        site["podCidr"] = "100.64.0.0/16"  # the platform's pod range
        site["apiServer"]["address"] = "192.169.0.10"  # not the URL's either
        site["teams"] = ["research", "vision"]
        site["gpuPools"]["b200"] = {"nodes": 8, "gpuModel": "B200"}
        values["platform:onPremClusters"]["eus2"] = dict(site, teams=[])

    assert_problems(
        "prod-scale",
        break_the_site,
        {
            "platform:onPremClusters.phx1.distribution": "Azure Policy's Arc extension does not support it",
            "platform:onPremClusters.phx1.workloadIdentity": "does not support kubeadm",
            "platform:onPremClusters.phx1.nodeRanges[0]": "overlaps platform:network.regions.eastus2.addressSpace[0]",
            "platform:onPremClusters.phx1.nodeRanges[1]": "the hub does not route it",
            "platform:onPremClusters.phx1.podCidr": "overlaps platform:network.podCidr",
            "platform:onPremClusters.phx1.apiServer.address": "outside platform:network.onPremisesRanges",
            "platform:onPremClusters.phx1.teams[1]": "team vision is not declared",
            "platform:onPremClusters.phx1.gpuPools.b200": "set gpusPerNode, gpuMemoryGb",
            "platform:onPremClusters.eus2": "also an AKS cluster's key",
            "platform:onPremClusters.eus2.nodeRanges[0]": "overlaps platform:onPremClusters.phx1.nodeRanges[0]",
        },
    )


def test_a_site_gets_governance_observability_and_flux_pinned_where_microsoft_publishes_versions():
    config = parse_platform_config(read_stack_config(ROOT, "prod-scale").values)
    site = config.on_prem_clusters["phx1"]
    extensions = {e.extension_type: e for e in onprem_plan.site_extensions(site)}
    assert extensions["Microsoft.PolicyInsights"].version == "1.19.0"
    assert extensions["microsoft.flux"].version == "1.24.1"
    assert {"Microsoft.AzureMonitor.Containers", "Microsoft.AzureMonitor.Containers.Metrics"} <= set(extensions)
    # Defender's Arc sensor does not list K3s; an OpenShift site gets it.
    assert "microsoft.azuredefender.kubernetes" not in extensions
    openshift = site.model_copy(update={"distribution": "openshift"})
    assert "microsoft.azuredefender.kubernetes" in {e.extension_type for e in onprem_plan.site_extensions(openshift)}


def test_the_sites_egress_list_opens_arcs_agents_and_not_cluster_connect():
    """What the site's operators open at the site's own egress (docs/hybrid.md, step 2); no
    firewall of the environment carries the site's internet traffic."""
    fqdns = set(onprem_plan.site_egress_fqdns("eastus2"))
    assert {"management.azure.com", "eastus2.dp.kubernetesconfiguration.azure.com", "gbl.his.arc.azure.com"} <= fqdns
    assert "data.policy.core.windows.net" in fqdns
    assert not any("servicebus" in f or "guestnotificationservice" in f or "obo.arc" in f for f in fqdns)


def test_the_only_firewall_rule_from_a_site_is_to_its_regions_kafka_listener(plans):
    """A site's internet traffic leaves at the site (or the hub): no application rule of the
    environment names its ranges. The one network rule that does lets its servers reach, through
    eastus2's firewall (which the hub's gateway routes the cluster subnets to), the node subnet of
    eus2, whose Kafka serves the site, on that Kafka's listener for other networks."""
    config = parse_platform_config(read_stack_config(ROOT, "prod-scale").values)
    ranges = {str(r) for site in config.on_prem_clusters.values() for r in site.node_ranges}
    sourced = [
        (policy.name, rule)
        for policy in plans["prod-scale"].of_type("azure-native:network:FirewallPolicyRuleCollectionGroup")
        for collection in policy.inputs.get("ruleCollections") or []
        for rule in collection.get("rules") or []
        if set(rule.get("sourceAddresses") or []) & ranges
    ]
    assert len(sourced) == 1, [r["name"] for _, r in sourced]
    ((policy, rule),) = sourced
    assert "eastus2" in policy
    assert rule["ruleType"] == "NetworkRule" and rule["name"] == "sites-to-kafka-eus2"
    assert rule["sourceAddresses"] == sorted(ranges)
    assert rule["destinationAddresses"] == [str(config.clusters["eus2"].subnets.nodes)]
    assert rule["destinationPorts"] == ["9095"] and rule["ipProtocols"] == ["TCP"]
    assert str(config.clusters["eus2"].subnets.nodes) in onprem_plan.firewall_routed_subnets(config, "eastus2")


def test_the_reach_contract_does_not_lend_a_lustre_subnets_firewall_rules_to_the_clusters_pods(plans):
    """The Lustre subnet's rule allows `*.azure.com`, sourced from its own range: a cluster's pod is
    still refused there."""
    view = ClusterView(plans["prod-scale"], "eus2", stack_values("prod-scale"))
    assert reach._firewall_allows(view, "anything.azure.com", 443) is False
    assert reach._firewall_allows(view, "login.microsoftonline.com", 443) is True


def test_only_the_trainer_and_the_sites_flux_trust_the_sites_arc_issuer(plans):
    """One more federated credential for the workload that runs there, and the site's Flux
    source-controller's (it reads the baseline); no other identity trusts the site."""
    config = parse_platform_config(read_stack_config(ROOT, "prod-scale").values)
    site = config.on_prem_clusters["phx1"]
    credentials = {
        c["subject"]: c
        for c in (
            r.inputs
            for r in plans["prod-scale"].of_type("azure-native:managedidentity:FederatedIdentityCredential")
            if r.inputs["issuer"] == site.oidc_issuer_url
        )
    }
    assert sorted(credentials) == [
        "system:serviceaccount:flux-system:source-controller",
        "system:serviceaccount:research:trainer",
    ]
    trainer = credentials["system:serviceaccount:research:trainer"]
    assert trainer["resourceName"].endswith("trainer")
    assert trainer["federatedIdentityCredentialResourceName"] == site.connected_cluster_name
    flux = credentials["system:serviceaccount:flux-system:source-controller"]
    assert flux["resourceName"] == Naming(config.prefix, config.environment).name("id", "phx1", "flux")


def test_a_workload_on_a_site_is_checked_against_the_sites_identity_and_teams():
    def misplace(values):
        workloads = values["platform:workloads"]
        workloads["trainer"]["sites"] = ["phx1", "dal1"]
        values["platform:onPremClusters"]["phx1"]["workloadIdentity"] = False

    plan = run_with("prod-scale", misplace)
    assert plan.resources == [] and plan.error is not None
    expected = {
        "platform:workloads.trainer.sites[0]": "phx1 has no workload identity",
        "platform:workloads.trainer.sites[1]": "dal1 is not a site of platform:onPremClusters",
        "platform:onPremClusters.phx1.oidcIssuerUrl": "set without workloadIdentity",
    }
    for key, words in expected.items():
        assert any(line.strip().startswith(f"- {key}:") and words in line for line in plan.error.splitlines()), (
            f"{key}: {words!r} not in\n{plan.error}"
        )

    def other_team(values):
        values["platform:workloads"]["server"] = {
            "team": "inference",
            "namespace": "inference",
            "serviceAccount": "server",
            "sites": ["phx1"],
        }

    plan = run_with("prod-scale", other_team)
    assert plan.error is not None
    assert "platform:workloads.server.sites[0]: team inference may not run on phx1" in plan.error, plan.error


def test_the_site_failure_table_holds_to_the_plan(plans):
    """The table's claims, against prod-scale's plan: the dispatchers requeue a lost worker's jobs
    after the workerLostTimeout the table names, and the site reaches Azure's data only over its
    link (every storage account, vault and database refuses public access)."""
    config = parse_platform_config(read_stack_config(ROOT, "prod-scale").values)
    jobs = next(r for r in onprem_plan.SITE_FAILURES if r.service.startswith("Jobs at the site"))
    for key in config.jobs.dispatchers:
        view = ClusterView(plans["prod-scale"], key, stack_values("prod-scale"))
        timeout = view.kueue_config["multiKueue"]["workerLostTimeout"]
        assert timeout == "15m" and "workerLostTimeout (15 minutes)" in jobs.cells["link"].what
    access = next(r for r in onprem_plan.SITE_FAILURES if r.service.startswith("Workloads' Azure access"))
    assert access.cells["link"].status == "lost"
    private = {
        "azure-native:storage:StorageAccount": "publicNetworkAccess",
        "azure-native:keyvault:Vault": "properties.publicNetworkAccess",
        "azure-native:cosmosdb:DatabaseAccount": "publicNetworkAccess",
        "azure-native:dbforpostgresql:Server": "network.publicNetworkAccess",
    }
    for token, path in private.items():
        for resource in plans["prod-scale"].of_type(token):
            value = resource.inputs
            for part in path.split("."):
                value = value.get(part, {}) if isinstance(value, dict) else {}
            assert str(value).lower() == "disabled", (resource.name, value)
