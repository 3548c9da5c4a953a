"""On-premises clusters connected through Azure Arc (platform:onPremClusters, docs/hybrid.md): what
config declares about a site, and every problem of a bad one named by its key in one message."""

from __future__ import annotations

from typing import get_args

from facts.arc import DISTRIBUTIONS, WORKLOAD_IDENTITY_DISTRIBUTIONS
from stackconfig.model import OnPremGpuPoolConfig
from stackconfig.model.onprem import Distribution
from tests.conftest import ROOT, run_with
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
        site["apiServer"]["address"] = "192.169.0.10"
        site["teams"] = ["research", "vision"]
        site["gpuPools"]["b200"] = {"nodes": 8, "gpuModel": "B200"}
        values["platform:onPremClusters"]["eus2"] = dict(site, teams=[])

    plan = run_with("prod-scale", break_the_site)
    assert plan.resources == [] and plan.error is not None and "Traceback" not in plan.error
    expected = {
        "platform:onPremClusters.phx1.distribution": "Azure Policy's Arc extension does not support it",
        "platform:onPremClusters.phx1.workloadIdentity": "does not support kubeadm",
        "platform:onPremClusters.phx1.nodeRanges[0]": "overlaps platform:network.regions.eastus2.addressSpace[0]",
        "platform:onPremClusters.phx1.nodeRanges[1]": "the hub does not route it",
        "platform:onPremClusters.phx1.podCidr": "overlaps platform:network.podCidr",
        "platform:onPremClusters.phx1.apiServer.address": "outside platform:network.onPremisesRanges",
        "platform:onPremClusters.phx1.teams[1]": "team vision is not declared",
        "platform:onPremClusters.phx1.gpuPools.b200": "set gpusPerNode, gpuMemoryGb",
        "platform:onPremClusters.eus2": "also an AKS cluster's key",
    }
    for key, words in expected.items():
        lines = [line for line in plan.error.splitlines() if line.strip().startswith(f"- {key}:")]
        assert any(words in line for line in lines), f"{key}: {words!r} not in\n{plan.error}"
