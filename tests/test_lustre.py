"""Azure Managed Lustre's sizes, subnets and throughput (facts/lustre.py, planning/lustre.py)."""

from __future__ import annotations

import ipaddress

import pytest

from facts.lustre import LUSTRE_TIERS, SKU_PREFIX
from planning.lustre import size_problem, subnet_prefix, throughput_gbps
from tests.conftest import stack_values

TOP = f"{SKU_PREFIX}500"


@pytest.mark.parametrize(
    "sku, tib, allowed",
    [
        (TOP, 4, True),
        (TOP, 128, True),
        (TOP, 6, False),  # not a multiple of 4
        (TOP, 132, False),  # beyond the default maximum: a support request first
        (f"{SKU_PREFIX}40", 48, True),
        (f"{SKU_PREFIX}40", 16, False),
        (f"{SKU_PREFIX}125", 112, True),
        ("AMLFS-Durable-Premium-200", 8, False),
    ],
)
def test_a_size_is_accepted_only_as_azure_creates_it(sku, tib, allowed):
    assert (size_problem(sku, tib) is None) == allowed, size_problem(sku, tib)


def test_the_subnet_a_file_system_needs_grows_with_its_size():
    assert [subnet_prefix(tib) for tib in (4, 16, 20, 40, 48, 92, 128, 196, 200, 400)] == [
        27,
        27,
        26,
        26,
        25,
        25,
        24,
        24,
        23,
        23,
    ]
    assert subnet_prefix(768) is None, "beyond the table: Azure's own subnet-size call decides"


def test_the_largest_default_file_system_of_the_fastest_tier_reads_at_64_gb_per_second():
    tier = LUSTRE_TIERS[TOP]
    assert throughput_gbps(TOP, tier.default_max_tib) == 64.0
    for sku, tier in LUSTRE_TIERS.items():
        assert sku.endswith(str(tier.throughput_mbps_per_tib)) and tier.min_tib == tier.step_tib


@pytest.mark.parametrize("stack", ["prod", "prod-scale"])
def test_each_gpu_region_has_its_file_system_in_its_own_subnet_and_its_training_zone(plans, stack):
    """A file system per region with training pools, in the zone of its InfiniBand pools, in a
    subnet of its own that holds its size; only that subnet may reach Lustre's Azure services
    through the firewall (its wide FQDNs are not the nodes')."""
    plan = plans[stack]
    config = stack_values(stack)
    file_systems = {f.inputs["location"]: f.inputs for f in plan.of_type("azure-native:storagecache:AmlFilesystem")}
    training = {
        c["region"]: {
            z
            for p in c.get("gpuPools", {}).values()
            if p.get("purpose", "training") == "training"
            for z in p.get("zones", [])
        }
        for c in config["platform:clusters"].values()
        if any(p.get("purpose", "training") == "training" for p in c.get("gpuPools", {}).values())
    }
    assert set(file_systems) == set(training)
    subnets = {s.inputs["subnetName"]: s.inputs["addressPrefix"] for s in plan.of_type("azure-native:network:Subnet")}
    for region, inputs in file_systems.items():
        assert inputs["zones"][0] in training[region] or not training[region], region
        (prefix,) = [
            p for name, p in subnets.items() if name.endswith("-lustre") and inputs["filesystemSubnet"].endswith(name)
        ]
        assert ipaddress.ip_network(prefix).prefixlen <= subnet_prefix(int(inputs["storageCapacityTiB"]))
    for policy in plan.of_type("azure-native:network:FirewallPolicyRuleCollectionGroup"):
        for collection in policy.inputs["ruleCollections"]:
            for rule in collection["rules"]:
                lustre = rule["name"].startswith("lustre")
                sources = set(rule["sourceAddresses"])
                assert lustre == bool(sources & {p for n, p in subnets.items() if n.endswith("-lustre")}), rule["name"]


@pytest.mark.parametrize("stack", ["prod", "prod-scale"])
def test_only_the_gpu_nodes_of_its_region_reach_a_file_system(plans, stack):
    """Azure's default NSG rule lets the whole VNet, the peered regions and the hub in on every
    port, and no root squash is set: the Lustre subnet's NSG admits the region's GPU clusters'
    node subnets on Lustre's ports and denies the rest of the VNet."""
    config = stack_values(stack)
    nsgs = [n for n in plans[stack].of_type("azure-native:network:NetworkSecurityGroup") if n.name.endswith("-lustre")]
    assert len(nsgs) == len(config["platform:lustre"]["fileSystems"])
    for nsg in nsgs:
        rules = {r["name"]: r for r in nsg.inputs["securityRules"]}
        region = nsg.inputs["location"]
        nodes = {
            str(c["subnets"]["nodes"])
            for c in config["platform:clusters"].values()
            if c["region"] == region and c.get("gpuPools")
        }
        assert set(rules["lustre-clients"]["sourceAddressPrefixes"]) == nodes
        assert rules["lustre-clients"]["destinationPortRanges"] == ["988", "1019-1023"]
        deny = rules["deny-virtual-network"]
        assert deny["access"] == "Deny" and deny["sourceAddressPrefixes"] == ["VirtualNetwork"]
        assert all(r["priority"] < deny["priority"] for r in rules.values() if r["access"] == "Allow")
