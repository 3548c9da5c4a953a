"""Pure planning functions: address arithmetic, naming, role IDs, kubeconfig login."""

from ipaddress import IPv4Address, IPv4Network

import pytest
import yaml

from offline.mocks import fake_user_kubeconfig
from planning import addressing, naming, roles
from planning.kubeconfig import AKS_SERVER_ID, non_interactive_kubeconfig


@pytest.mark.parametrize(
    ("max_count", "max_surge", "expected"),
    [(100, "33%", 33), (10, "33%", 4), (1000, "10%", 100), (3, "10%", 1), (50, "5", 5), (0, "33%", 0)],
)
def test_surge_rounds_percentages_up_and_takes_counts_as_is(max_count, max_surge, expected):
    assert addressing.surge_nodes(max_count, max_surge) == expected


def test_usable_addresses_subtract_azures_five():
    assert addressing.usable_addresses(IPv4Network("10.0.0.0/24")) == 251
    assert addressing.usable_addresses(IPv4Network("10.0.0.0/19")) == 8187


def test_overlay_capacity_is_one_node_per_slash_24():
    assert addressing.overlay_node_capacity(IPv4Network("100.64.0.0/16")) == 256
    assert addressing.overlay_node_capacity(IPv4Network("100.64.0.0/10")) == 16384
    assert addressing.overlay_node_capacity(IPv4Network("100.64.0.0/25")) == 0


@pytest.mark.parametrize("addresses", [1, 3, 251, 252, 1100, 5000, 8187, 8188])
def test_smallest_prefix_holds_the_addresses_plus_reserved(addresses):
    prefix = addressing.smallest_prefix_for(addresses)
    fits = IPv4Network(f"10.0.0.0/{prefix}")
    assert addressing.usable_addresses(fits) >= addresses
    if prefix < 29:
        assert addressing.usable_addresses(IPv4Network(f"10.0.0.0/{prefix + 1}")) < addresses


@pytest.mark.parametrize(
    ("ip", "problem"),
    [
        ("172.16.0.10", None),
        ("10.0.0.10", "outside serviceCidr"),
        ("172.16.0.0", "network address"),
        ("172.16.0.1", "first address"),
        ("172.16.255.255", "broadcast"),
    ],
)
def test_dns_service_ip_rules(ip, problem):
    found = addressing.dns_service_ip_problem(IPv4Address(ip), IPv4Network("172.16.0.0/16"))
    assert (found is None) if problem is None else (problem in found)


def test_overlapping_pairs_names_both_sides():
    ranges = [
        addressing.NamedRange("a", IPv4Network("10.0.0.0/16")),
        addressing.NamedRange("b", IPv4Network("10.1.0.0/16")),
        addressing.NamedRange("c", IPv4Network("10.0.128.0/24")),
    ]
    assert [(x.key, y.key) for x, y in addressing.overlapping_pairs(ranges)] == [("a", "c")]


def test_role_assignment_names_are_stable_guids_that_differ_by_role_scope_and_principal():
    name = roles.assignment_name("prod/eus2/subnet/nodes", "prod/eus2/control-plane", "Network Contributor")
    assert name == roles.assignment_name("prod/eus2/subnet/nodes", "prod/eus2/control-plane", "Network Contributor")
    others = {
        roles.assignment_name("prod/eus2/subnet/system", "prod/eus2/control-plane", "Network Contributor"),
        roles.assignment_name("prod/eus2/subnet/nodes", "prod/scus/control-plane", "Network Contributor"),
        roles.assignment_name("prod/eus2/subnet/nodes", "prod/eus2/control-plane", "Reader"),
    }
    assert name not in others and len(others) == 3
    assert len(name) == 36 and name.count("-") == 4


def test_role_definition_ids_are_the_built_in_guids():
    assert roles.role_definition_resource_id("sub", "Network Contributor") == (
        "/subscriptions/sub/providers/Microsoft.Authorization/roleDefinitions/4d97b98b-1d4f-4787-a291-c67834d212e7"
    )
    with pytest.raises(KeyError):
        roles.role_id("Network Contributer")


def test_names_follow_the_caf_pattern_and_fit_azure_limits():
    names = naming.Naming("ailab", "staging")
    assert names.regional("vnet", "southcentralus") == "vnet-ailab-staging-scus"
    assert names.cluster("eus2") == "aks-ailab-staging-eus2"
    assert len(names.node_resource_group("eus2", "germanywestcentral")) <= 80


def test_parse_resource_id():
    parsed = naming.parse_resource_id(
        "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/resourceGroups/rg-hub/providers/Microsoft.Network/virtualNetworks/vnet-hub"
    )
    assert (parsed.resource_group, parsed.type, parsed.name) == ("rg-hub", "virtualNetworks", "vnet-hub")
    with pytest.raises(ValueError):
        naming.parse_resource_id("/subscriptions/x/resourceGroups/rg")


@pytest.mark.parametrize("mode", ["azurecli", "workloadidentity"])
def test_kubeconfig_logs_in_without_a_person(mode):
    converted = yaml.safe_load(non_interactive_kubeconfig(fake_user_kubeconfig("c", "https://c:443"), mode))
    exec_block = converted["users"][0]["user"]["exec"]
    assert exec_block["command"] == "kubelogin"
    assert exec_block["args"] == ["get-token", "--login", mode, "--server-id", AKS_SERVER_ID]
    assert exec_block["interactiveMode"] == "Never"
    assert "devicecode" not in str(converted)


def test_kubeconfig_with_static_credentials_is_refused():
    admin = yaml.safe_dump({"users": [{"name": "admin", "user": {"client-certificate-data": "x", "token": "t"}}]})
    with pytest.raises(ValueError, match="static credentials"):
        non_interactive_kubeconfig(admin, "azurecli")


def test_the_models_mig_profiles_are_the_catalogues():
    """stackconfig.model spells the MIG profiles out for type checkers; facts/gpu.py is their home."""
    import typing

    from facts.gpu import MIG_SLICES_PER_GPU
    from stackconfig.model import MigProfile

    assert typing.get_args(MigProfile) == tuple(MIG_SLICES_PER_GPU)
