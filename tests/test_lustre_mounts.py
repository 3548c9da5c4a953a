"""Training namespaces mount Managed Lustre (planning/lustre_csi.py): the CSI node plugin on GPU
nodes only and without a credential, a volume per training namespace on its team's directory of
its region's file system, and the node-level path the kernel client takes."""

from __future__ import annotations

import copy
import dataclasses
import ipaddress

import pytest

from contracts import reach, scheduling
from contracts.cluster import ClusterView
from contracts.golden import BY_NAME, evaluate, rendered
from facts import lustre
from facts.aks_node import OS_SKU_EFFECTIVE_LABEL, ubuntu_effective
from planning import cold_start
from planning import lustre_csi as plan
from planning.cluster_traffic import team_namespaces
from stackconfig.model import PlatformConfig
from tests.conftest import ROOT, run_with, stack_values
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

LUSTRE_STACKS = ["staging", "prod", "prod-scale"]
KUBELET_MOUNT_RETRY_SECONDS = 2 * 60 + 2
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"


def _config(stack: str) -> PlatformConfig:
    return parse_platform_config(read_stack_config(ROOT, stack).values)


def _view(plans, stack: str, key: str) -> ClusterView:
    return ClusterView(plans[stack], key, stack_values(stack))


def _training_job(plans, stack: str, key: str):
    item = rendered(BY_NAME["training-infiniband"], plans[stack].outputs, key)
    assert item is not None, f"the training job does not apply to {stack}/{key}"
    return item


@pytest.mark.parametrize("stack", LUSTRE_STACKS)
def test_the_node_plugin_runs_on_every_training_pool_of_a_lustre_cluster_and_nowhere_else(plans, stack):
    config = _config(stack)
    clusters = plan.lustre_clusters(config)
    assert clusters, f"{stack} mounts Lustre nowhere"
    for key, cluster in config.clusters.items():
        view = _view(plans, stack, key)
        on = {name for name, pool in view.pools.items() if scheduling.node_plugin_runs(view, lustre.CSI_DRIVER, pool)}
        training = {name for name, pool in cluster.gpu_pools.items() if pool.purpose == "training"}
        expected = training if key in clusters else set()
        assert on == expected, (key, on)


def test_both_ubuntu_flavors_are_installed_so_a_kubernetes_upgrade_across_1_35_keeps_the_mounts(plans):
    """`osSku: Ubuntu` becomes Ubuntu 24.04 at Kubernetes 1.35: a GPU pool upgraded from 1.34
    changes image, and only the noble DaemonSet selects its new nodes."""
    assert (ubuntu_effective("1.34"), ubuntu_effective("1.35")) == ("Ubuntu2204", "Ubuntu2404")
    view = _view(plans, "prod", "eus2")
    pool = next(iter(view.pools[name] for name in _config("prod").clusters["eus2"].gpu_pools))
    for effective in ("Ubuntu2204", "Ubuntu2404"):
        upgraded = dataclasses.replace(pool, labels={**pool.labels, OS_SKU_EFFECTIVE_LABEL: effective})
        assert scheduling.node_plugin_runs(view, lustre.CSI_DRIVER, upgraded), effective
    azure_linux = dataclasses.replace(pool, labels={**pool.labels, OS_SKU_EFFECTIVE_LABEL: "AzureLinux3"})
    assert not scheduling.node_plugin_runs(view, lustre.CSI_DRIVER, azure_linux)


def test_the_node_plugin_holds_no_kubernetes_or_azure_credential_and_serves_no_inline_volumes(plans):
    """Upstream binds cluster-wide `secrets get/list` and `nodes patch` to the node plugin and
    mounts the node's /etc/kubernetes (azure.json); a privileged pod on every GPU node with those
    would turn one compromised node into every Secret of the cluster."""
    resources = plans["prod"].resources
    in_namespace = [r for r in resources if (r.inputs.get("metadata") or {}).get("namespace") == plan.NAMESPACE]
    assert {r.type for r in in_namespace} <= {
        DAEMON_SET,
        "kubernetes:core/v1:ServiceAccount",
        "kubernetes:networking.k8s.io/v1:NetworkPolicy",
        "kubernetes:cilium.io/v2:CiliumNetworkPolicy",
    }
    for binding in plans["prod"].of_type("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding"):
        assert all(s.get("namespace") != plan.NAMESPACE for s in binding.inputs.get("subjects") or [])
    daemon_sets = [r for r in in_namespace if r.type == DAEMON_SET]
    assert len(daemon_sets) == 2 * len(plan.lustre_clusters(_config("prod")))
    for daemon_set in daemon_sets:
        spec = daemon_set.inputs["spec"]["template"]["spec"]
        assert spec["automountServiceAccountToken"] is False
        paths = {v["hostPath"]["path"] for v in spec["volumes"]}
        assert not any(p.startswith("/etc/kubernetes") for p in paths), paths
        (driver,) = [c for c in spec["containers"] if c["name"] == "azurelustre"]
        assert "--remove-not-ready-taint=false" in driver["args"]
        assert all(c["image"].startswith(plans["prod"].outputs["registryLoginServer"]) for c in spec["containers"])
    (csi_driver,) = {
        str(r.inputs["spec"]) for r in plans["prod"].of_type("kubernetes:storage.k8s.io/v1:CSIDriver")
    }  # one spec, on every Lustre cluster
    assert "'volumeLifecycleModes': ['Persistent']" in csi_driver


@pytest.mark.parametrize("stack", LUSTRE_STACKS)
def test_each_training_namespace_claims_its_teams_directory_of_its_regions_file_system(plans, stack):
    config = _config(stack)
    for key in plan.lustre_clusters(config):
        view = _view(plans, stack, key)
        owners = team_namespaces(config, key)
        training = {ns for team in config.teams.values() for ns in team.training_namespaces}
        claims = {c["metadata"]["namespace"]: c for c in view.objects(PVC)}
        assert set(claims) == training
        region = config.clusters[key].region
        for namespace, claim in claims.items():
            assert claim["metadata"]["name"] == plan.CLAIM
            _, volume = view.claimed_volume(namespace, plan.CLAIM)
            assert volume is not None
            spec = volume["spec"]
            assert spec["claimRef"]["namespace"] == namespace and spec["claimRef"]["name"] == plan.CLAIM
            assert spec["csi"]["volumeAttributes"]["sub-dir"] == plan.team_directory(owners[namespace])
            assert spec["persistentVolumeReclaimPolicy"] == "Retain"
            assert config.lustre is not None and region in config.lustre.file_systems


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_a_cluster_unit_mounts_the_address_its_regions_file_system_has_in_the_data_unit(unit_plans, stack):
    """The address reaches the cluster units through the data unit's outputs (contract 7)."""
    plans = unit_plans[stack].plans
    addresses = plans[f"{stack}.data"].outputs["lustreMgsAddresses"]
    config = _config(stack)
    for key in plan.lustre_clusters(config):
        volumes = plans[f"{stack}.cluster-{key}"].of_type(PV)
        assert volumes
        for volume in volumes:
            attributes = volume.inputs["spec"]["csi"]["volumeAttributes"]
            assert attributes["mgs-ip-address"] == addresses[config.clusters[key].region]


def test_a_job_requeued_to_another_region_finds_its_claim_there_on_that_regions_file_system(plans):
    """MultiKueue copies a job unchanged to whichever worker admits it: the claim it names must
    exist in every training region, each on the region's own file system (the data there is the
    region's: docs/lustre.md, "Loading data")."""
    config = _config("prod")
    workers = config.dispatch_workers()
    assert len({config.clusters[k].region for k in workers}) > 1
    seen = {}
    for key in workers:
        view = _view(plans, "prod", key)
        result = evaluate(view, _training_job(plans, "prod", key))
        assert not any(result.values()), (key, result)
        _, volume = view.claimed_volume("research", plan.CLAIM)
        assert volume is not None
        seen[config.clusters[key].region] = volume["spec"]["csi"]["volumeAttributes"]["mgs-ip-address"]
    assert len(set(seen.values())) == len(seen), seen


def test_a_gpu_pool_without_the_node_plugin_strands_the_training_job_at_scheduling(plans):
    view = _view(plans, "prod", "eus2")
    item = _training_job(plans, "prod", "eus2")
    target = item.variables["TRAINING_POOL"]
    pool = view.pools[target]
    view.pools[target] = dataclasses.replace(pool, labels={**pool.labels, OS_SKU_EFFECTIVE_LABEL: "AzureLinux3"})
    refused = evaluate(view, item)["scheduling"]
    assert any("no node plugin of azurelustre.csi.azure.com" in r for r in refused), refused


def test_a_claim_the_namespace_does_not_have_is_refused_at_scheduling(plans):
    view = _view(plans, "prod", "eus2")
    item = _training_job(plans, "prod", "eus2")

    def other_claim(workload):
        for volume in workload["spec"]["template"]["spec"]["volumes"]:
            if "persistentVolumeClaim" in volume:
                volume["persistentVolumeClaim"]["claimName"] = "datasets-of-another-team"

    refused = evaluate(view, item.changed(other_claim))["scheduling"]
    assert any("not in namespace research" in r for r in refused), refused


def test_the_kernel_client_reaches_the_file_system_from_gpu_node_subnets_only(plans):
    """The mount is the node's (LNet over its Ethernet interface): the Lustre subnet's NSG is what
    admits it, not a pod NetworkPolicy. A cluster without GPU pools in the region is refused."""
    config = _config("prod")
    for key in plan.lustre_clusters(config):
        assert reach.lustre_refusals(_view(plans, "prod", key)) == []
    (dispatcher,) = [k for k in config.jobs.dispatchers if config.clusters[k].region == "eastus2"]
    refused = reach.lustre_refusals(_view(plans, "prod", dispatcher))
    assert any("TCP 988" in r for r in refused) and any("TCP 1023" in r for r in refused), refused


def test_a_rule_that_shadows_the_clients_rule_is_seen(plans):
    nsg = next(
        n for n in plans["prod"].of_type("azure-native:network:NetworkSecurityGroup") if n.name.endswith("-lustre")
    )
    rules = copy.deepcopy(nsg.inputs["securityRules"])
    nodes = next(r for r in rules if r["name"] == "lustre-clients")["sourceAddressPrefixes"][0]
    assert reach.nsg_admits(rules, nodes, 988)
    rules.append(
        {
            "name": "deny-everything-first",
            "priority": 90,
            "direction": "Inbound",
            "access": "Deny",
            "protocol": "*",
            "sourceAddressPrefixes": ["*"],
            "destinationPortRanges": ["*"],
        }
    )
    assert not reach.nsg_admits(rules, nodes, 988)
    # A deny of part of the node subnet, before the clients' rule, refuses too.
    partial = copy.deepcopy(nsg.inputs["securityRules"])
    partial.append({**rules[-1], "sourceAddressPrefixes": [str(next(ipaddress.IPv4Network(nodes).subnets(4)))]})
    assert not reach.nsg_admits(partial, nodes, 988)


def test_a_node_from_zero_mounts_lustre_before_kueue_gives_up_on_its_gang():
    """Scale from zero: the node plugin starts when the node is Ready, beside the drivers and
    preflight, and may take its whole startup budget to install the client (its registrar waits as
    long: planning/lustre_csi.py), and the kubelet's next mount retry may come 2m2s later; the
    gang's pods then still start within Kueue's waitForPodsReady timeout, not evicted and
    requeued in a loop."""
    for stack in LUSTRE_STACKS:
        config = _config(stack)
        for key in plan.lustre_clusters(config):
            budget = cold_start.cluster_cold_start(config.clusters[key], config.operations.gpu_health)
            timeout = int(cold_start.pods_ready_timeout(budget).removesuffix("m")) * 60
            lustre_ready = (
                cold_start.PROVISION
                + lustre.CSI_NODE_STARTUP_SECONDS
                # The kubelet retries a failed mount with backoff up to 2m2s (kubernetes
                # pkg/util/goroutinemap/exponentialbackoff, maxDurationBeforeRetry).
                + KUBELET_MOUNT_RETRY_SECONDS
                + cold_start.PODS_READY_MARGIN
            )
            assert lustre_ready <= timeout, (stack, key, lustre_ready, timeout)


def test_a_training_region_without_a_file_system_is_refused_with_its_key():
    def drop_scus(values):
        values["platform:lustre"]["fileSystems"].pop("southcentralus")
        values["platform:network"]["regions"]["southcentralus"]["subnets"].pop("lustre")

    result = run_with("prod", drop_scus)
    assert not result.ok
    assert "platform:lustre.fileSystems.southcentralus" in result.error
    assert "training-data" in result.error and not result.resources


def test_a_lustre_cluster_on_a_kubernetes_version_whose_ubuntu_the_driver_does_not_build_is_refused():
    """`Ubuntu` becomes Ubuntu 26.04 at Kubernetes 1.38, which v0.4.0 has no node plugin for."""
    assert ubuntu_effective("1.38") == "Ubuntu2604"

    def upgrade(values):
        values["platform:clusters"]["eus2"]["kubernetesVersion"] = "1.38"

    result = run_with("prod", upgrade)
    assert not result.ok
    assert "platform:clusters.eus2.kubernetesVersion" in result.error and "Ubuntu2604" in result.error, result.error


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_no_pod_egress_policy_reaches_the_lustre_subnet(plans, stack):
    """Pods' traffic to the VNet leaves from their node's address (Azure CNI Overlay SNATs it), so
    the file system's NSG cannot tell a pod from the node's kernel client: every namespace's
    default-deny egress is what keeps pods from Lustre's ports. No NetworkPolicy or
    CiliumNetworkPolicy may open an address range that covers the Lustre subnet."""
    config = _config(stack)
    subnets = [
        ipaddress.IPv4Network(str(vnet.subnets.lustre))
        for vnet in config.network.regions.values()
        if vnet.subnets.lustre is not None
    ]
    assert subnets
    opened = []
    for policy in plans[stack].of_type("kubernetes:networking.k8s.io/v1:NetworkPolicy"):
        for rule in policy.inputs["spec"].get("egress") or []:
            for peer in rule.get("to") or []:
                block = peer.get("ipBlock")
                if block:
                    opened.append((policy.name, block["cidr"], block.get("except") or []))
            if not rule.get("to"):
                opened.append((policy.name, "0.0.0.0/0", []))
    for policy in plans[stack].of_type("kubernetes:cilium.io/v2:CiliumNetworkPolicy"):
        for rule in policy.inputs["spec"].get("egress") or []:
            assert not set(rule.get("toEntities") or []) & {"world", "all"}, policy.name
            opened += [(policy.name, cidr, []) for cidr in rule.get("toCIDR") or []]
            opened += [(policy.name, c["cidr"], c.get("except") or []) for c in rule.get("toCIDRSet") or []]
    assert opened, "no egress range at all: the scan reads nothing"
    for name, cidr, excepted in opened:
        network = ipaddress.IPv4Network(cidr)
        for subnet in subnets:
            covered = network.overlaps(subnet) and not any(subnet.subnet_of(ipaddress.IPv4Network(e)) for e in excepted)
            assert not covered, f"{name} opens {cidr}, which covers the Lustre subnet {subnet}"
