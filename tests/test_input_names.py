"""Every azure-native input key and enum value is one the SDK declares (section 3)."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from offline.inputs import input_problems
from tests.conftest import STACKS, azure_resources


@pytest.mark.parametrize("stack", STACKS)
def test_every_input_matches_the_sdk(plans, stack):
    problems = [f"{r.type} {r.name}: {p}" for r in azure_resources(plans[stack]) for p in input_problems(r)]
    assert problems == []


def with_inputs(resource, change):
    inputs = copy.deepcopy(resource.inputs)
    change(inputs)
    return dataclasses.replace(resource, inputs=inputs)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda i: i.update(disableLocalAccount=True), "disableLocalAccount: ManagedClusterArgs has no property"),
        (lambda i: i["networkProfile"].update(networkPluginMod="overlay"), "networkProfile.networkPluginMod"),
        (lambda i: i["agentPoolProfiles"][0].update(vmSzie="Standard_D4ds_v5"), "agentPoolProfiles[].vmSzie"),
        (lambda i: i["aadProfile"].update(enableAzureRbac=True), "aadProfile.enableAzureRbac"),
        (lambda i: i["networkProfile"].update(networkDataplane="ciliumm"), "'ciliumm' is not a NetworkDataplane value"),
        (lambda i: i["autoUpgradeProfile"].update(upgradeChannel="Patch"), "'Patch' is not a UpgradeChannel value"),
        (lambda i: i["addonProfiles"]["azurepolicy"].update(enabeld=True), "addonProfiles.azurepolicy.enabeld"),
        (lambda i: i.update(networkProfile=["azure"]), "networkProfile: a list"),
    ],
)
def test_a_misspelled_property_or_value_fails(plans, change, expected):
    cluster = plans["prod"].one("azure-native:containerservice:ManagedCluster", "aks-eus2-aks")
    problems = input_problems(with_inputs(cluster, change))
    assert any(expected in problem for problem in problems), problems


def test_a_misspelled_subnet_property_fails(plans):
    subnet = next(r for r in plans["dev"].resources if r.type == "azure-native:network:Subnet")
    problems = input_problems(with_inputs(subnet, lambda i: i.update(defaultOutboundAcess=False)))
    assert problems == ["defaultOutboundAcess: SubnetInitArgs has no property 'defaultOutboundAcess'"]


def test_documented_enum_extensions_stay_narrow(plans):
    rule = plans["dev"].one("azure-native:monitor:DataCollectionRule", "aks-eus2-prometheus-dcr")
    problems = input_problems(
        with_inputs(rule, lambda i: i["dataFlows"][0].update(streams=["Microsoft-PrometheusMetricz"]))
    )
    assert problems and "KnownDataFlowStreams" in problems[0]
