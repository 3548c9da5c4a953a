"""GPU pools and the in-cluster GPU stack, read from each stack's captured plan.

Chart values are checked against the charts' published defaults and Kueue objects against
the upstream CRDs, both from the shared reference folder (SHARED_DIR, pinned in
reference.lock). A missing reference file fails these tests; it is never skipped.
"""

from __future__ import annotations

import pytest

from facts.gpu import GPU_VM_SIZES, MIG_SLICES_PER_GPU
from offline.chartcheck import chart_defaults, crd_problems, manifest_of, unread_values
from offline.reference import reference_file
from planning.charts import GPU_OPERATOR, KUEUE, NETWORK_OPERATOR, chart_named, merge_values
from tests.conftest import ALL_STACKS as STACKS
from tests.conftest import stack_values

POOL = "azure-native:containerservice:AgentPool"
RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE_CRDS = (
    "clusterqueues",
    "localqueues",
    "resourceflavors",
    "cohorts",
    "workloadpriorityclasses",
    # MultiKueue (planning/dispatch.py)
    "admissionchecks",
    "multikueueconfigs",
    "multikueueclusters",
)
GPU_TAINT = "nvidia.com/gpu=present:NoSchedule"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"


def gpu_pools(plan):
    return [p for p in plan.of_type(POOL) if "gpuProfile" in p.inputs]


def cluster_key_of(resource) -> str:
    """`aks-eus2-pool-h100` / `gpu-eus2-kueue` -> `eus2`."""
    return resource.name.split("-")[1]


def releases(plan, chart):
    return [r for r in plan.of_type(RELEASE) if r.inputs["name"] == chart.name]


def kueue_objects(plan):
    return [r for r in plan.resources if r.type.startswith("kubernetes:kueue.x-k8s.io/")]


def test_prod_trains_on_infiniband_h100_and_serves_on_nc_a100(plans):
    sizes = {p.inputs["vmSize"] for p in gpu_pools(plans["prod"])}
    assert "Standard_ND96isr_H100_v5" in sizes and GPU_VM_SIZES["Standard_ND96isr_H100_v5"].infiniband
    assert "Standard_NC24ads_A100_v4" in sizes
    h100 = [p for p in gpu_pools(plans["prod"]) if p.inputs["vmSize"] == "Standard_ND96isr_H100_v5"]
    assert all(p.inputs["nodeLabels"]["platform.ai/gpu-purpose"] == "training" for p in h100)


def test_dev_has_one_spot_gpu_pool_that_scales_to_zero(plans):
    (pool,) = gpu_pools(plans["dev"])
    inputs = pool.inputs
    assert inputs["scaleSetPriority"] == "Spot" and inputs["scaleSetEvictionPolicy"] == "Delete"
    assert inputs["spotMaxPrice"] == -1
    assert inputs["minCount"] == 0 and inputs["enableAutoScaling"] is True
    assert SPOT_TAINT in inputs["nodeTaints"]


@pytest.mark.parametrize("stack", STACKS)
def test_gpu_pools_are_tainted_labelled_and_left_to_the_autoscaler(plans, stack):
    pools = gpu_pools(plans[stack])
    assert pools
    for pool in pools:
        inputs, labels = pool.inputs, pool.inputs["nodeLabels"]
        size = GPU_VM_SIZES[inputs["vmSize"]]
        assert GPU_TAINT in inputs["nodeTaints"], f"{pool.name}: non-GPU pods could land on GPU nodes"
        assert (SPOT_TAINT in inputs["nodeTaints"]) == (inputs.get("scaleSetPriority") == "Spot")
        assert labels["accelerator"] == "nvidia"
        assert labels["platform.ai/gpu-model"] == size.gpu_model
        assert labels["platform.ai/gpu-purpose"] in ("training", "batch", "inference")
        assert labels["platform.ai/infiniband"] == str(size.infiniband).lower()
        slices = MIG_SLICES_PER_GPU[inputs["gpuInstanceProfile"]] if "gpuInstanceProfile" in inputs else 1
        assert labels["platform.ai/gpu-count"] == str(size.gpus * slices)
        # Autoscaled between the bounds; `count` is only the initial size and never managed.
        assert inputs["enableAutoScaling"] is True and 0 <= inputs["minCount"] <= inputs["maxCount"]
        assert "count" in pool.options.ignore_changes
        # Replacing a pool is loud in review, and the old pool goes first (fixed names).
        assert {"vmSize", "gpuInstanceProfile"} <= set(pool.options.replace_on_changes)
        assert pool.options.delete_before_replace
        # Room for CUDA images: 128 GiB or more, ephemeral where the size's local disk holds it.
        assert inputs["osDiskSizeGB"] >= 128
        assert inputs["osDiskType"] == "Managed" or inputs["osDiskSizeGB"] <= size.temp_disk_gib
        assert inputs["enableNodePublicIP"] is False
        assert (
            not inputs["upgradeSettings"]["maxSurge"].endswith("%")
            or int(inputs["upgradeSettings"]["maxSurge"][:-1]) <= 10
        )


@pytest.mark.parametrize("stack", STACKS)
def test_mig_only_on_mig_capable_sizes(plans, stack):
    for pool in gpu_pools(plans[stack]):
        if "gpuInstanceProfile" in pool.inputs:
            assert GPU_VM_SIZES[pool.inputs["vmSize"]].mig, pool.name
    assert any("gpuInstanceProfile" in p.inputs for p in gpu_pools(plans["staging"])), "staging shows MIG in use"


@pytest.mark.parametrize("stack", STACKS)
def test_one_os_and_one_driver_owner_per_cluster(plans, stack):
    """AKS installs the driver (Install) and the GPU operator does not, or the reverse;
    every GPU pool of a cluster runs the same OS (the GPU operator needs that)."""
    plan = plans[stack]
    for release in releases(plan, GPU_OPERATOR):
        cluster = cluster_key_of(release)
        pools = [p for p in gpu_pools(plan) if cluster_key_of(p) == cluster]
        drivers = {p.inputs["gpuProfile"]["driver"] for p in pools}
        assert len(drivers) == 1 and len({p.inputs["osSKU"] for p in pools}) == 1
        values = release.inputs["values"]
        aks_installs = drivers == {"Install"}
        assert values["driver"]["enabled"] is not aks_installs
        assert values["toolkit"]["enabled"] is not aks_installs
        if aks_installs:
            assert values["operator"]["runtimeClass"] == "nvidia-container-runtime", "AKS's runtime handler"
    expected = {"dev": {"Install"}, "staging": {"Install"}, "prod": {"None"}, "prod-scale": {"None"}}[stack]
    assert {p.inputs["gpuProfile"]["driver"] for p in gpu_pools(plan)} == expected


@pytest.mark.parametrize("stack", STACKS)
def test_gpu_operator_leaves_mig_to_aks_and_exports_gpu_health(plans, stack):
    plan = plans[stack]
    for release in releases(plan, GPU_OPERATOR):
        values = release.inputs["values"]
        assert values["mig"]["strategy"] == "single" and values["migManager"]["enabled"] is False
        assert values["dcgmExporter"]["enabled"] is True
        assert values["dcgmExporter"]["serviceMonitor"]["enabled"] is False, "AKS reads azmonitoring.coreos.com only"
        tolerated = {t["key"] for t in values["daemonsets"]["tolerations"]}
        assert "nvidia.com/gpu" in tolerated
        monitor = plan.one(
            "kubernetes:azmonitoring.coreos.com/v1:ServiceMonitor",
            f"gpu-{cluster_key_of(release)}-servicemonitor-gpu-operator-nvidia-dcgm-exporter",
        )
        assert monitor.inputs["metadata"]["namespace"] == release.inputs["namespace"]
        assert monitor.inputs["spec"]["selector"]["matchLabels"] == {"app": "nvidia-dcgm-exporter"}
        assert monitor.inputs["spec"]["endpoints"][0]["port"] == "gpu-metrics"


@pytest.mark.parametrize("stack", STACKS)
def test_every_cluster_with_gpus_gets_the_stack_and_infiniband_gets_the_network_operator(plans, stack):
    plan = plans[stack]
    clusters = {cluster_key_of(p) for p in gpu_pools(plan)}
    with_infiniband = {
        cluster_key_of(p) for p in gpu_pools(plan) if p.inputs["nodeLabels"]["platform.ai/infiniband"] == "true"
    }
    dispatchers = set(stack_values(stack).get("platform:jobs", {}).get("dispatchers", []))
    assert {cluster_key_of(r) for r in releases(plan, GPU_OPERATOR)} == clusters
    # Kueue on the GPU clusters, and alone on the MultiKueue dispatchers.
    assert {cluster_key_of(r) for r in releases(plan, KUEUE)} == clusters | dispatchers
    assert {cluster_key_of(r) for r in releases(plan, NETWORK_OPERATOR)} == with_infiniband
    assert len(plan.of_type("kubernetes:mellanox.com/v1alpha1:NicClusterPolicy")) == len(with_infiniband)
    assert bool(with_infiniband) == (stack != "dev")


@pytest.mark.parametrize("stack", STACKS)
def test_releases_are_pinned_and_run_through_the_clusters_kubelogin_provider(plans, stack):
    plan = plans[stack]
    for release in plan.of_type(RELEASE):
        chart = chart_named(release.inputs["name"])
        assert release.inputs["version"] == chart.version and chart.version[-1].isdigit()
        assert release.provider.split("::")[-2].endswith(f"aks-{cluster_key_of(release)}-k8s")
        assert release.inputs["atomic"] is True
    for provider in plan.of_type("pulumi:providers:kubernetes"):
        assert "kubelogin" in str(provider.inputs["kubeconfig"])


@pytest.mark.parametrize("stack", STACKS)
def test_every_helm_value_is_a_key_the_chart_reads(plans, stack):
    for release in plans[stack].of_type(RELEASE):
        chart = chart_named(release.inputs["name"])
        defaults = merge_values(
            chart_defaults(reference_file(f"reference/helm-values/{chart.values_file}")), chart.extra_defaults
        )
        assert unread_values(release.inputs["values"], defaults) == [], (
            f"{release.name} sets keys {chart.name} never reads"
        )


def test_the_helm_check_catches_a_misspelled_value():
    defaults = chart_defaults(reference_file(f"reference/helm-values/{GPU_OPERATOR.values_file}"))
    assert unread_values({"dcgmExporter": {"serviceMonitor": {"enable": False}}}, defaults) == [
        "dcgmExporter.serviceMonitor.enable"
    ]
    # Free-form defaults ({} or lists) take any content.
    assert unread_values({"daemonsets": {"labels": {"team": "x"}, "tolerations": [{}]}}, defaults) == []


def _crd_files():
    return [reference_file(f"schemas/kueue-0.19.2/{name}.yaml") for name in KUEUE_CRDS]


@pytest.mark.parametrize("stack", STACKS)
def test_kueue_objects_validate_against_the_upstream_crds(plans, stack):
    objects = kueue_objects(plans[stack])
    kinds = {"ResourceFlavor", "ClusterQueue", "LocalQueue"}
    if stack_values(stack).get("platform:jobs", {}).get("dispatchers"):
        kinds |= {"AdmissionCheck", "MultiKueueConfig", "MultiKueueCluster"}
    assert {r.inputs["kind"] for r in objects} == kinds
    for resource in objects:
        assert resource.inputs["apiVersion"] == "kueue.x-k8s.io/v1beta2"
        assert crd_problems(manifest_of(resource.inputs), _crd_files()) == [], resource.name


def test_the_crd_check_rejects_fields_the_api_server_would_prune():
    queue = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ClusterQueue",
        "metadata": {"name": "q"},
        "spec": {"cohort": "gpu", "resourceGroups": []},  # v1beta1's name for cohortName
    }
    problems = crd_problems(queue, _crd_files())
    assert any("'cohort' was unexpected" in p for p in problems), problems
    flavor = {
        "apiVersion": "kueue.x-k8s.io/v1beta2",
        "kind": "ResourceFlavor",
        "metadata": {"name": "f"},
        "spec": {"tolerations": [{"key": "k", "tolerationSeconds": "soon"}]},
    }
    assert crd_problems(flavor, _crd_files())


@pytest.mark.parametrize("stack", STACKS)
def test_queues_cover_every_pool_team_and_namespace_within_capacity(plans, stack):
    """Quotas are checked here against the AgentPools' own inputs, not the planner."""
    plan = plans[stack]
    from tests.conftest import stack_values

    teams = stack_values(stack)["platform:teams"]
    for cluster in {cluster_key_of(p) for p in gpu_pools(plan)}:
        pools = {p.inputs["agentPoolName"]: p.inputs for p in gpu_pools(plan) if cluster_key_of(p) == cluster}
        objects = [r for r in kueue_objects(plan) if cluster_key_of(r) == cluster]
        flavors = {
            r.inputs["metadata"]["name"]: r.inputs["spec"] for r in objects if r.inputs["kind"] == "ResourceFlavor"
        }
        assert set(flavors) == {f"gpu-{name}" for name in pools}
        for name in pools:
            flavor = flavors[f"gpu-{name}"]
            assert flavor["nodeLabels"] == {"platform.ai/gpu-pool": name}
            assert {t["key"] for t in flavor["tolerations"]} >= {"nvidia.com/gpu"}
        promised: dict[str, int] = {}
        queues = [r for r in objects if r.inputs["kind"] == "ClusterQueue"]
        assert queues
        for queue in queues:
            spec = queue.inputs["spec"]
            team = queue.inputs["metadata"]["name"].removeprefix("team-")
            assert spec["namespaceSelector"] == {"matchLabels": {"platform.ai/team": team}}
            for group in spec["resourceGroups"]:
                assert "nvidia.com/gpu" in group["coveredResources"]
                for flavor in group["flavors"]:
                    gpus = next(r["nominalQuota"] for r in flavor["resources"] if r["name"] == "nvidia.com/gpu")
                    promised[flavor["name"]] = promised.get(flavor["name"], 0) + gpus
            local = {
                r.inputs["metadata"]["namespace"]
                for r in objects
                if r.inputs["kind"] == "LocalQueue"
                and r.inputs["spec"]["clusterQueue"] == queue.inputs["metadata"]["name"]
            }
            # Every team namespace but the streaming ones, which Kueue leaves alone.
            assert local == set(teams[team]["namespaces"]) - set(teams[team].get("streamingNamespaces", []))
        for name, pool in pools.items():
            capacity = pool["maxCount"] * int(pool["nodeLabels"]["platform.ai/gpu-count"])
            assert promised.get(f"gpu-{name}", 0) <= capacity, f"{name}: quota beyond what the pool can hold"


@pytest.mark.parametrize("stack", STACKS)
def test_infiniband_pools_sit_in_one_zone_and_expose_rdma(plans, stack):
    import json

    plan = plans[stack]
    for pool in gpu_pools(plan):
        if GPU_VM_SIZES[pool.inputs["vmSize"]].infiniband:
            assert len(pool.inputs["availabilityZones"]) == 1, f"{pool.name}: InfiniBand does not span zones"
    for policy in plan.of_type("kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"):
        spec = policy.inputs["spec"]
        # The device plugin parses its config with json.Unmarshal.
        (resource,) = json.loads(spec["rdmaSharedDevicePlugin"]["config"])["configList"]
        assert resource["resourceName"] == "shared_ib" and resource["selectors"]["linkTypes"] == ["infiniband"]
        term = spec["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]
        assert term["matchExpressions"][0]["key"] == "platform.ai/infiniband"
        assert {t["key"] for t in spec["tolerations"]} >= {"nvidia.com/gpu"}


def test_kueue_configuration_keeps_the_charts_sections_and_adds_only_documented_ones(plans):
    """The manager config is one YAML string to Helm; compare its keys with the chart's own."""
    import yaml

    defaults = chart_defaults(reference_file(f"reference/helm-values/{KUEUE.values_file}"))
    chart_config = yaml.safe_load(defaults["managerConfig"]["controllerManagerConfigYaml"])
    for release in releases(plans["prod"], KUEUE):
        ours = yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
        assert ours["apiVersion"] == chart_config["apiVersion"] == "config.kueue.x-k8s.io/v1beta2"
        assert set(chart_config) <= set(ours), "replacing the config must not drop a chart section"
        # Configuration v1beta2 fields (kueue.sigs.k8s.io/docs/reference/kueue-config.v1beta2).
        # managedJobsNamespaceSelector: top-level in v1beta2 (apis/config/v1beta2/configuration_types.go
        # at v0.19.2); integrations.podOptions, its v1beta1 predecessor, is gone.
        # multiKueue: a dispatcher's own origin (planning/dispatch.py), its timeouts stated.
        assert set(ours) - set(chart_config) <= {
            "waitForPodsReady",
            "resources",
            "managedJobsNamespaceSelector",
            *(["multiKueue"] if release.name.startswith("kueue-") else []),
        }
        assert "podOptions" not in ours["integrations"]
        assert "enable" not in ours["waitForPodsReady"], "v1beta2 removed waitForPodsReady.enable"
        assert ours["clientConnection"] == chart_config["clientConnection"]


def test_a_capacity_reservation_is_usable_by_the_cluster_identity():
    from tests.conftest import run_with

    reservation = (
        "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/resourceGroups/rg-cap"
        "/providers/Microsoft.Compute/capacityReservationGroups/crg-h100"
    )

    def reserve(values):
        values["platform:clusters"]["eus2"]["gpuPools"]["h100"]["capacityReservationGroupId"] = reservation

    plan = run_with("staging", reserve)
    assert plan.ok, plan.error
    pool = plan.one(POOL, "aks-eus2-pool-h100")
    assert pool.inputs["capacityReservationGroupID"] == reservation
    (grant,) = [
        a for a in plan.of_type("azure-native:authorization:RoleAssignment") if a.inputs["scope"] == reservation
    ]
    assert grant.inputs["roleDefinitionId"].endswith("b24988ac-6180-42a0-ab88-20f7382dd24c")  # Contributor
    cluster = plan.one("azure-native:containerservice:ManagedCluster")
    assert grant.urn in cluster.dependencies


def test_a_missing_or_altered_reference_file_fails_instead_of_skipping(tmp_path, monkeypatch):
    from offline.reference import ReferenceError

    monkeypatch.setenv("SHARED_DIR", str(tmp_path))
    with pytest.raises(ReferenceError, match="make schemas"):
        reference_file("schemas/kueue-0.19.2/clusterqueues.yaml")
    altered = tmp_path / "schemas" / "kueue-0.19.2" / "clusterqueues.yaml"
    altered.parent.mkdir(parents=True)
    altered.write_text("kind: CustomResourceDefinition\n")
    with pytest.raises(ReferenceError, match="sha256"):
        reference_file("schemas/kueue-0.19.2/clusterqueues.yaml")


def test_the_lock_pins_the_same_bytes_and_urls_as_the_shared_sources():
    from offline.reference import pinned_files, shared_dir

    # The lock holds the files the project uses; the shared folder may hold more.
    sources = {}
    for line in (shared_dir() / "schemas" / "SOURCES.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            sha256, path, url = line.split()
            sources[f"schemas/{path}"] = (sha256, url)
    schema_pins = [pin for pin in pinned_files() if pin.path.startswith("schemas/")]
    assert schema_pins
    for pin in schema_pins:
        assert sources[pin.path] == (pin.sha256, pin.url), pin.path


def test_the_fleet_resources_api_version_is_the_one_docs_upgrades_names():
    """Fleet Manager rides on azure-native's default API version, a preview (docs/upgrades.md,
    "Fleet Manager's API version"): an SDK bump that changes it fails here until the doc is
    revisited."""
    import inspect
    from pathlib import Path

    from pulumi_azure_native import containerservice

    from tests.conftest import ROOT

    page = (ROOT / "docs" / "upgrades.md").read_text()
    for resource in (
        containerservice.Fleet,
        containerservice.FleetMember,
        containerservice.FleetUpdateStrategy,
        containerservice.AutoUpgradeProfile,
    ):
        source = Path(inspect.getsourcefile(resource) or "").read_text()
        version = source.split("Uses Azure REST API version ", 1)[1].split(". ", 1)[0]
        assert version == "2024-05-02-preview", resource.__name__
        assert f"`{version}` in the pinned" in page


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_the_golden_gang_gives_nccl_its_sizes_topology_and_only_infiniband_adapters(plans, stack):
    """NCCL reads the size's topology file (Azure/azhpc-images topology/, in the image at
    /etc/topology), and names no adapters: the RDMA plugin hands the pod only the node's
    InfiniBand adapters, so the accelerated-networking function is never NCCL's to open."""
    import json

    from contracts.queueing import admitted_pod_spec
    from tests.test_contracts import applicable

    found = applicable(plans, stack, "training-infiniband")
    assert found
    for view, item in found:
        pod = admitted_pod_spec(view, item.workload, item.pod["spec"])
        pool = view.config["platform:clusters"][view.key]["gpuPools"][pod["nodeSelector"]["platform.ai/gpu-pool"]]
        env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
        assert env["NCCL_TOPO_FILE"] == f"/etc/topology/{GPU_VM_SIZES[pool['vmSize']].nccl_topology}"
        assert GPU_VM_SIZES[pool["vmSize"]].nccl_topology == "ndv5-topo.xml"
        assert "NCCL_IB_HCA" not in env
        (policy,) = view.objects("kubernetes:mellanox.com/v1alpha1:NicClusterPolicy")
        config = json.loads(policy["spec"]["rdmaSharedDevicePlugin"]["config"])
        assert [c["selectors"]["linkTypes"] for c in config["configList"]] == [["infiniband"]]
