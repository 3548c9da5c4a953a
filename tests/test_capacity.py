"""The capacity planner against an independent oracle, and every AKS limit at its edge.

The oracle never reuses the planner's formulas: it counts addresses by enumerating them
with `ipaddress`, counts overlay /24 blocks by listing them, and rounds surge with integer
arithmetic. Property tests run plain functions over the config model (no Pulumi).
"""

from __future__ import annotations

import copy
from ipaddress import IPv4Network

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from facts.gpu import GPU_VM_SIZES
from planning import capacity
from stackconfig.model import PlatformConfig
from tests.conftest import stack_values
from validation.checks import find_problems

GPU_SIZES = sorted(GPU_VM_SIZES)
NODES_KEY = "platform:clusters.eus2.subnets.nodes"
POD_CIDR_KEY = "platform:network.podCidr"


def dev_section(streaming: bool = False) -> dict:
    """The dev stack's `platform:` values as the model takes them; without its Flink section
    (and its pool) unless asked, so that the boundaries below are the CPU and GPU pools'."""
    section = {key.removeprefix("platform:"): value for key, value in stack_values("dev").items()}
    if not streaming:
        section.pop("streaming", None)
        for team in section["teams"].values():
            team.pop("streamingNamespaces", None)
    return section


def config_of(section: dict) -> PlatformConfig:
    return PlatformConfig.model_validate(section)


def problem_keys(section: dict) -> set[str]:
    return {problem.key for problem in find_problems(config_of(section))}


# --- the oracle ------------------------------------------------------------------------


def oracle_usable_addresses(subnet: IPv4Network) -> int:
    """Azure reserves the first four addresses and the last one of every subnet."""
    addresses = list(subnet)
    return len(addresses[4:-1])


def oracle_overlay_nodes(pod_cidr: IPv4Network) -> int:
    return len(list(pod_cidr.subnets(new_prefix=24))) if pod_cidr.prefixlen <= 24 else 0


def oracle_surge(max_count: int, max_surge: str) -> int:
    if max_surge.endswith("%"):
        percent = int(max_surge[:-1])
        return (max_count * percent + 99) // 100  # round up, in integers
    return int(max_surge)


def oracle_peak(pool: dict) -> int:
    """A pool (as written in a stack file) at max count plus surge; pools default to 10%."""
    return pool["maxCount"] + oracle_surge(pool["maxCount"], pool.get("maxSurge", "10%"))


# --- generated fleets -----------------------------------------------------------------

surges = st.one_of(st.integers(1, 20).map(str), st.integers(1, 10).map(lambda p: f"{p}%"))
gpu_pools = st.dictionaries(
    keys=st.sampled_from(["ga", "gb", "gc", "gd"]),
    values=st.fixed_dictionaries(
        {
            "vmSize": st.sampled_from(GPU_SIZES),
            "purpose": st.sampled_from(["training", "batch", "inference"]),
            "maxCount": st.integers(1, 1000),
            "maxSurge": surges,
            "osDiskType": st.just("Managed"),
        }
    ),
    max_size=4,
)
cpu_surges = st.one_of(st.integers(1, 50).map(str), st.integers(1, 50).map(lambda p: f"{p}%"))


def generated_section(node_prefix: int, pod_prefix: int, cpu_max: int, cpu_surge: str):
    """dev (with its streaming pool) with a generated node subnet, pod CIDR and CPU pool."""
    section = dev_section(streaming=True)
    cluster = section["clusters"]["eus2"]
    nodes = IPv4Network(f"10.10.128.0/{node_prefix}")
    pod_cidr = IPv4Network(f"100.64.0.0/{pod_prefix}")
    section["network"]["podCidr"] = str(pod_cidr)
    cluster["subnets"]["nodes"] = str(nodes)
    cluster["nodePools"]["cpu"].update(maxCount=cpu_max, maxSurge=cpu_surge, minCount=0)
    return section, cluster, nodes, pod_cidr


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    node_prefix=st.integers(19, 28),
    pod_prefix=st.integers(12, 24),
    cpu_max=st.integers(1, 1000),
    cpu_surge=cpu_surges,
    pools=gpu_pools,
)
def test_planner_agrees_with_the_oracle_on_subnets_and_pod_cidr(node_prefix, pod_prefix, cpu_max, cpu_surge, pools):
    section, cluster, nodes, pod_cidr = generated_section(node_prefix, pod_prefix, cpu_max, cpu_surge)
    cluster["gpuPools"] = pools

    user_pools = [(cpu_max, cpu_surge)] + [(p["maxCount"], p["maxSurge"]) for p in pools.values()]
    if "streaming" in section:
        # The streaming pool (planning/streaming.py) counts like any pool of the cluster.
        streaming_pool = section["streaming"]["pool"]
        user_pools.append((streaming_pool["maxCount"], streaming_pool.get("maxSurge", "1")))
    system = cluster["systemPool"]
    system_peak = oracle_peak(system)
    user_peak = sum(m + oracle_surge(m, s) for m, s in user_pools)

    keys = problem_keys(section)
    assert (NODES_KEY in keys) == (user_peak > oracle_usable_addresses(nodes))
    assert (POD_CIDR_KEY in keys) == (system_peak + user_peak > oracle_overlay_nodes(pod_cidr))

    plan = capacity.plan_capacity(config_of(section))
    (cluster_plan,) = plan.clusters
    assert cluster_plan.max_nodes == system["maxCount"] + sum(m for m, _ in user_pools)
    assert cluster_plan.peak_nodes == system_peak + user_peak
    expected_gpus: dict[str, int] = {}
    for pool in pools.values():
        size = GPU_VM_SIZES[pool["vmSize"]]
        expected_gpus[size.gpu_model] = expected_gpus.get(size.gpu_model, 0) + pool["maxCount"] * size.gpus
    assert dict(plan.gpus_by_model) == expected_gpus


@settings(max_examples=150, deadline=None)
@given(
    node_prefix=st.integers(21, 28),
    pod_prefix=st.integers(14, 21),
    cpu_max=st.integers(1, 60),
    cpu_surge=cpu_surges,
    node_delta=st.integers(-2, 2),
)
def test_planner_agrees_with_the_oracle_at_the_edge(node_prefix, pod_prefix, cpu_max, cpu_surge, node_delta):
    """Random sizes rarely land on a boundary; these fleets end within two nodes of one."""
    from hypothesis import assume

    section, cluster, nodes, pod_cidr = generated_section(node_prefix, pod_prefix, cpu_max, cpu_surge)
    section.pop("streaming")
    for team in section["teams"].values():
        team.pop("streamingNamespaces", None)
    system = cluster["systemPool"]
    system_peak = oracle_peak(system)
    cpu_peak = cpu_max + oracle_surge(cpu_max, cpu_surge)
    # A filler GPU pool (surge 1) brings the user pools to the node subnet's edge + delta.
    filler = oracle_usable_addresses(nodes) + node_delta - cpu_peak - 1
    assume(1 <= filler <= 1000)
    cluster["gpuPools"] = {
        "fill": {
            "vmSize": "Standard_NC4as_T4_v3",
            "purpose": "batch",
            "maxCount": filler,
            "maxSurge": "1",
            "osDiskType": "Managed",
        }
    }
    user_peak = cpu_peak + filler + 1
    overlay_nodes = oracle_overlay_nodes(pod_cidr)
    keys = problem_keys(section)
    assert (NODES_KEY in keys) == (user_peak > oracle_usable_addresses(nodes)) == (node_delta > 0)
    assert (POD_CIDR_KEY in keys) == (system_peak + user_peak > overlay_nodes)


@settings(max_examples=100, deadline=None)
@given(
    block_count=st.integers(8, 600),
    delta=st.integers(-2, 2),
)
def test_overlay_capacity_agrees_with_the_oracle_at_the_edge(block_count, delta):
    section = dev_section()
    cluster = section["clusters"]["eus2"]
    cluster["subnets"]["nodes"] = "10.10.64.0/18"
    prefix = 24 - (block_count - 1).bit_length()
    pod_cidr = IPv4Network(f"100.64.0.0/{prefix}")
    overlay_nodes = oracle_overlay_nodes(pod_cidr)
    system = cluster["systemPool"]
    system_peak = oracle_peak(system)
    cpu = cluster["nodePools"]["cpu"]
    cpu_peak = oracle_peak(cpu)
    filler = overlay_nodes + delta - system_peak - cpu_peak - 1
    from hypothesis import assume

    assume(1 <= filler <= 1000)
    cluster["gpuPools"] = {
        "fill": {
            "vmSize": "Standard_NC4as_T4_v3",
            "purpose": "batch",
            "maxCount": filler,
            "maxSurge": "1",
            "osDiskType": "Managed",
        }
    }
    section["network"]["podCidr"] = str(pod_cidr)
    assert (POD_CIDR_KEY in problem_keys(section)) == (delta > 0)


@settings(max_examples=100, deadline=None)
@given(
    max_count=st.integers(1, 40),
    gpus=st.sampled_from(["Standard_NC24ads_A100_v4", "Standard_ND96isr_H100_v5", "Standard_NC80adis_H100_v5"]),
    mig=st.sampled_from([None, "MIG1g", "MIG2g", "MIG3g", "MIG7g"]),
    research=st.integers(1, 400),
    inference=st.integers(1, 400),
)
def test_quotas_never_exceed_what_a_pool_can_hold(max_count, gpus, mig, research, inference):
    section = dev_section()
    pool = {
        "vmSize": gpus,
        "purpose": "batch",
        "maxCount": max_count,
        "osDiskType": "Managed",
        "quotas": {"research": research, "inference": inference},
    }
    if mig:
        pool["migProfile"] = mig
    section["clusters"]["eus2"]["gpuPools"] = {"g": pool}
    # Oracle: enumerate every schedulable unit of the pool: node x GPU x slice.
    slices = {None: 1, "MIG1g": 7, "MIG2g": 3, "MIG3g": 2, "MIG7g": 1}[mig]
    units = sum(1 for _node in range(max_count) for _gpu in range(GPU_VM_SIZES[gpus].gpus) for _slice in range(slices))
    over = research + inference > units
    assert ("platform:clusters.eus2.gpuPools.g.quotas" in problem_keys(section)) == over


# --- every limit at its edge: the limit passes, one more is rejected naming the key ------


def with_gpu_pool(section: dict, name: str, max_count: int, **extra) -> None:
    section["clusters"]["eus2"].setdefault("gpuPools", {})[name] = {
        "vmSize": "Standard_ND96isr_H100_v5",
        "purpose": "training",
        "maxCount": max_count,
        **extra,
    }


def big_cluster_section() -> dict:
    """dev with room to grow to AKS's limits: a /10 pod CIDR and a /18 node subnet."""
    section = dev_section()
    section["network"]["podCidr"] = "100.64.0.0/10"
    section["clusters"]["eus2"]["subnets"]["nodes"] = "10.10.64.0/18"
    section["clusters"]["eus2"]["gpuPools"] = {}
    return section


def test_a_pool_of_1000_nodes_passes_and_1001_is_rejected():
    section = big_cluster_section()
    with_gpu_pool(section, "h100", 1000)
    assert not problem_keys(section)
    with_gpu_pool(section, "h100", 1001)
    assert "platform:clusters.eus2.gpuPools.h100.maxCount" in problem_keys(section)


def test_a_cluster_of_5000_nodes_passes_and_5001_is_rejected():
    section = big_cluster_section()
    cluster = section["clusters"]["eus2"]
    cluster["systemPool"]["maxCount"] = 3
    cluster["nodePools"]["cpu"]["maxCount"] = 997  # 3 + 997 + 4 x 1000 = 5,000
    for i in range(4):
        with_gpu_pool(section, f"h{i}", 1000)
    assert capacity.plan_capacity(config_of(section)).max_nodes == 5000
    assert not problem_keys(section)
    cluster["nodePools"]["cpu"]["maxCount"] = 998
    assert "platform:clusters.eus2" in problem_keys(section)


def test_100_pools_pass_and_101_are_rejected():
    section = big_cluster_section()
    for i in range(98):  # + system + cpu = 100
        with_gpu_pool(section, f"g{i}", 1, maxSurge="1")
    assert not problem_keys(section)
    with_gpu_pool(section, "g98", 1, maxSurge="1")
    assert "platform:clusters.eus2" in problem_keys(section)


def test_250_pods_per_node_pass_and_251_are_rejected():
    from pydantic import ValidationError

    section = big_cluster_section()
    section["clusters"]["eus2"]["nodePools"]["cpu"]["maxPods"] = 250
    config_of(section)
    section["clusters"]["eus2"]["nodePools"]["cpu"]["maxPods"] = 251
    with pytest.raises(ValidationError) as error:
        config_of(section)
    assert error.value.errors()[0]["loc"] == ("clusters", "eus2", "nodePools", "cpu", "maxPods")


def _fill(section: dict, nodes: int) -> None:
    """Make the user pools of dev's cluster peak at exactly `nodes` (no surge on the GPU pool)."""
    cluster = section["clusters"]["eus2"]
    cpu = cluster["nodePools"]["cpu"]
    cpu_peak = oracle_peak(cpu)
    with_gpu_pool(section, "fill", nodes - cpu_peak - 1, maxSurge="1")


def test_a_node_subnet_full_to_the_last_address_passes_and_one_node_more_is_rejected():
    section = dev_section()
    section["clusters"]["eus2"]["gpuPools"] = {}
    usable = oracle_usable_addresses(IPv4Network(section["clusters"]["eus2"]["subnets"]["nodes"]))
    section["network"]["podCidr"] = "100.64.0.0/12"
    _fill(section, usable)
    assert NODES_KEY not in problem_keys(section)
    _fill(section, usable + 1)
    assert NODES_KEY in problem_keys(section)


def test_an_overlay_pod_cidr_full_to_the_last_block_passes_and_one_node_more_is_rejected():
    section = big_cluster_section()
    section["network"]["podCidr"] = "100.64.0.0/19"  # 32 blocks of /24
    system = section["clusters"]["eus2"]["systemPool"]
    system_peak = oracle_peak(system)
    _fill(section, oracle_overlay_nodes(IPv4Network("100.64.0.0/19")) - system_peak)
    assert POD_CIDR_KEY not in problem_keys(section)
    _fill(section, oracle_overlay_nodes(IPv4Network("100.64.0.0/19")) - system_peak + 1)
    assert POD_CIDR_KEY in problem_keys(section)


def test_quota_equal_to_capacity_passes_and_one_gpu_more_is_rejected():
    section = big_cluster_section()
    with_gpu_pool(
        section,
        "a100",
        10,
        vmSize="Standard_NC24ads_A100_v4",
        migProfile="MIG3g",
        osDiskType="Managed",
        quotas={"research": 15, "inference": 5},
    )  # 10 nodes x 2 slices
    assert not problem_keys(section)
    section["clusters"]["eus2"]["gpuPools"]["a100"]["quotas"]["inference"] = 6
    assert "platform:clusters.eus2.gpuPools.a100.quotas" in problem_keys(section)


def test_summary_line_counts_clusters_nodes_and_gpus_by_model():
    section = copy.deepcopy(big_cluster_section())
    with_gpu_pool(section, "h100", 100)
    with_gpu_pool(section, "a100", 10, vmSize="Standard_NC24ads_A100_v4", osDiskType="Managed")
    summary = capacity.plan_capacity(config_of(section)).summary()
    system, cpu = (
        section["clusters"]["eus2"]["systemPool"]["maxCount"],
        section["clusters"]["eus2"]["nodePools"]["cpu"]["maxCount"],
    )
    assert summary == f"clusters 1 · max nodes {system + cpu + 110:,} · GPU nodes 110 · GPUs 10 A100, 800 H100"


# -- the teams' GPU quotas, as `make capacity` and the review show them ------------------------


def test_the_quotas_read_from_each_plan_are_the_configs_and_their_shares_of_each_pool(head_side):
    """offline/team_quotas.py reads Kueue's ClusterQueues and the AgentPools (so a review reads a
    base whatever code made it); they must say what the config promised, pool by pool."""
    from offline.cost import capacity as cost_capacity
    from offline.team_quotas import team_quotas
    from tests.conftest import ALL_STACKS, ROOT
    from tests.test_review import resources
    from validation.loader import parse_platform_config
    from validation.stackfile import read_stack_config

    for stack in ALL_STACKS:
        plan_resources = resources(head_side, stack)
        read = {
            (q.cluster, q.pool, q.team): (q.quota, q.pool_units)
            for q in team_quotas(plan_resources, cost_capacity(plan_resources))
        }
        config = parse_platform_config(read_stack_config(ROOT, stack).values)
        promised = {
            (cluster.key, pool.name, team): (quota, pool.max_gpu_units)
            for cluster in capacity.plan_capacity(config).clusters
            for pool, _ in capacity.quota_use(cluster)
            for team, quota in pool.gpu_pool.quotas.items()
        }
        assert read == promised and promised, stack


def test_a_quota_change_shows_the_teams_share_and_a_full_pool_says_what_more_takes(head_side):
    """A team onboarded onto prod's eus2/h100 with GPUs lent by research: the review's lines."""
    import dataclasses

    from offline.cost import capacity as cost_capacity
    from offline.team_quotas import quota_changes, team_quotas
    from tests.test_review import resources

    plan_resources = resources(head_side, "prod")
    base = team_quotas(plan_resources, cost_capacity(plan_resources))
    research = next(q for q in base if (q.cluster, q.pool, q.team) == ("eus2", "h100", "research"))
    head = [q for q in base if q is not research] + [
        dataclasses.replace(research, quota=research.quota - 400),
        dataclasses.replace(research, team="vision", quota=400),
    ]
    lines = quota_changes(base, head)
    assert lines[:2] == [
        f"- `research` on eus2/h100: 1,600 → 1,200 GPUs (80% → 60% of the pool's {research.pool_units:,})",
        f"- `vision` on eus2/h100: new quota of 400 GPUs (20% of the pool's {research.pool_units:,})",
    ]
    assert lines[2].startswith(
        "- eus2/h100 is now fully promised (2,000 of 2,000): more for a team takes a bigger pool"
    )
    assert "a quota of 0 here, borrowing what the others leave idle" in lines[2] and len(lines) == 3
    assert quota_changes(base, base) == []
