"""Deployment units (planning/layers.py, components/platform/ `deploy`): the units of each
environment together build exactly the single-stack layout, each unit builds what the
migration mapping assigns it, units read only the units before them, and every unit refuses
bad config as the single stack did (issue: deployment units sized for a fleet)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.outputs import CONTRACT_VERSION, VERSION_KEY
from offline.engine import CapturedResource, preview_stack
from offline.environment import ISSUER_POLICY, UNIT_BLIND_RULES, preview_environment, review_environment, review_unit
from offline.policy import review_plan
from planning.layers import (
    LAYERS,
    UPSTREAM,
    Unit,
    UnmappedResource,
    environment_units,
    is_deployed_resource,
    parse_stack,
    unit_of,
    units_of,
)
from planning.naming import Naming
from tests.conftest import ALL_STACKS, ROOT, run_with, stack_values

# The in-cluster kinds the tenants layer writes: its custom in-cluster role grants exactly these
# (never cluster-admin).
TENANT_KINDS = {
    "kubernetes:core/v1:Namespace",
    "kubernetes:core/v1:ServiceAccount",
    "kubernetes:core/v1:ServiceAccountPatch",
    "kubernetes:core/v1:Secret",
    "kubernetes:core/v1:ConfigMap",
    "kubernetes:core/v1:PersistentVolumeClaim",
    "kubernetes:networking.k8s.io/v1:NetworkPolicy",
    "kubernetes:cilium.io/v2:CiliumNetworkPolicy",
    "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue",
    "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue",
    "kubernetes:kueue.x-k8s.io/v1beta2:ResourceFlavor",
    "kubernetes:kueue.x-k8s.io/v1beta2:AdmissionCheck",
    "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueConfig",
    "kubernetes:kueue.x-k8s.io/v1beta2:MultiKueueCluster",
    "kubernetes:kafka.strimzi.io/v1:KafkaTopic",
    "kubernetes:kafka.strimzi.io/v1:KafkaUser",
    "kubernetes:kafka.strimzi.io/v1:KafkaMirrorMaker2",
    "kubernetes:flink.apache.org/v1beta1:FlinkDeployment",
    "kubernetes:azmonitoring.coreos.com/v1:PodMonitor",
    # The APIs served through the gateway (planning/serving.py).
    "kubernetes:networking.istio.io/v1:VirtualService",
    "kubernetes:networking.istio.io/v1:DestinationRule",
    "kubernetes:security.istio.io/v1:AuthorizationPolicy",
    # KEDA's objects for the scaled Deployments (planning/serving_scaling.py).
    "kubernetes:keda.sh/v1alpha1:ScaledObject",
    "kubernetes:keda.sh/v1alpha1:TriggerAuthentication",
}


def _clusters(stack: str) -> list[str]:
    """The keys of the stack's cluster units: its AKS clusters and its sites."""
    values = stack_values(stack)
    return [*values["platform:clusters"], *values.get("platform:onPremClusters", {})]


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_resource_belongs_to_exactly_one_unit(plans, stack):
    plan = plans[stack]
    clusters = _clusters(stack)
    units = units_of(plan.resources, clusters)
    deployed = [r for r in plan.resources if is_deployed_resource(r)]
    assert len(units) == len(deployed) == len({r.urn for r in deployed})
    layers = Counter(unit.layer for unit in units.values())
    expected = {"foundation", "cluster", "tenants"} | ({"fleet"} if len(clusters) > 1 else set())
    expected |= {"data"} if stack_values(stack).get("platform:storage", {}).get("accounts") else set()
    assert set(layers) == expected, layers
    assert {unit.cluster for unit in units.values() if unit.layer == "cluster"} == set(clusters)
    assert all(unit.cluster == "" for unit in units.values() if unit.layer != "cluster")


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_a_cluster_unit_holds_its_own_cluster_only(plans, stack):
    plan = plans[stack]
    units = units_of(plan.resources, _clusters(stack))
    for resource in plan.resources:
        unit = units.get(resource.urn)
        if resource.type == "azure-native:containerservice:ManagedCluster":
            assert unit == Unit("cluster", resource.name.removeprefix("aks-").removesuffix("-aks")), resource.name
        if resource.type.startswith("kubernetes:") and unit is not None and unit.layer == "cluster":
            # In-cluster objects go through their cluster's provider (`aks-<key>-k8s`).
            assert f"::aks-{unit.cluster}-k8s::" in (resource.provider or ""), (resource.name, resource.provider)


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_only_cluster_and_tenants_write_inside_clusters_and_tenants_only_its_kinds(plans, stack):
    plan = plans[stack]
    units = units_of(plan.resources, _clusters(stack))
    inside = Counter(
        (units[r.urn].layer, r.type) for r in plan.resources if r.type.startswith("kubernetes:") and r.urn in units
    )
    assert {layer for layer, _ in inside} <= {"cluster", "tenants"}
    assert {kind for layer, kind in inside if layer == "tenants"} <= TENANT_KINDS


@pytest.mark.parametrize("stack", ["staging", "prod"])
def test_only_the_foundation_writes_into_the_hubs_subscription(plans, stack):
    plan = plans[stack]
    units = units_of(plan.resources, _clusters(stack))
    hub_providers = {
        r.urn for r in plan.resources if r.type == "pulumi:providers:azure-native" and r.inputs.get("subscriptionId")
    }
    in_hub = [r for r in plan.resources if r.provider and r.provider.rsplit("::", 1)[0] in hub_providers]
    assert in_hub, "staging and prod peer with the hub and link its zones"
    assert {units[r.urn] for r in in_hub} == {Unit("foundation")}


def test_an_unmapped_component_is_an_error_not_a_guess(plans):
    plan = plans["dev"]
    by_urn = {r.urn: r for r in plan.resources}
    resource = next(r for r in plan.resources if r.type == "azure-native:containerservice:ManagedCluster")
    with pytest.raises(UnmappedResource, match="no cluster"):
        unit_of(resource, by_urn, ["other"])


def test_unit_stacks_are_named_after_the_environment():
    assert Unit("foundation").stack("prod") == "prod.foundation"
    assert Unit("cluster", "eus2").stack("prod") == "prod.cluster-eus2"
    assert LAYERS == ("foundation", "data", "cluster", "tenants", "fleet")
    assert parse_stack("prod-scale.cluster-eus2") == ("prod-scale", Unit("cluster", "eus2"))
    assert parse_stack("prod") == ("prod", None)
    for wrong in ("prod.clusters", "prod.cluster", "prod.foundation-eus2"):
        with pytest.raises(ValueError, match="not a deployment unit"):
            parse_stack(wrong)


def _stable(resource: CapturedResource) -> tuple[str, str, str]:
    """What survives the move to another stack: URNs name the stack and the parents, these do not.
    References the units resolve through stack outputs compare by the value they resolve to."""
    return resource.type, resource.name, json.dumps(resource.inputs, sort_keys=True, default=str)


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_the_units_together_build_exactly_the_single_stack(plans, unit_plans, stack):
    """Nothing lost in the split: the union of the units' plans holds every resource of the
    single-stack plan, same type, name and inputs, and none twice."""
    single = Counter(_stable(r) for r in plans[stack].resources if is_deployed_resource(r))
    units = Counter(_stable(r) for r in unit_plans[stack].resources if is_deployed_resource(r))
    assert max(units.values()) == 1
    missing, extra = single - units, units - single
    assert not missing and not extra, (
        f"only in the single stack: {sorted(k[:2] for k in missing)[:10]}; "
        f"only in the units: {sorted(k[:2] for k in extra)[:10]}"
    )


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_each_unit_builds_what_the_migration_mapping_gives_it(plans, unit_plans, stack):
    """docs/migration.md moves each resource to the unit `unit_of` names; that must be the unit
    whose program builds it, or the moved resource would be deleted and created again."""
    single = plans[stack]
    mapping = units_of(single.resources, _clusters(stack))
    by_name = {(r.type, r.name): mapping[r.urn] for r in single.resources if r.urn in mapping}
    environment = unit_plans[stack]
    for unit_stack, plan in environment.plans.items():
        _, unit = parse_stack(unit_stack)
        built = {by_name[(r.type, r.name)] for r in plan.resources if is_deployed_resource(r)}
        assert built == {unit}, (unit_stack, built)


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_units_run_in_order_and_read_only_the_units_before_them(unit_plans, stack):
    environment = unit_plans[stack]
    order = list(environment.plans)
    config = stack_values(stack)
    expected = environment_units(
        list(config["platform:clusters"]),
        config.get("platform:fleet", {}).get("canaryClusters", []),
        len(config["platform:clusters"]) > 1,
        list(config.get("platform:onPremClusters", {})),
    )
    assert order == [unit.stack(stack) for wave in expected for unit in wave]
    for unit_stack, plan in environment.plans.items():
        _, unit = parse_stack(unit_stack)
        assert unit is not None
        read = {call.resource_id for call in plan.calls if call.token == "pulumi:pulumi:StackReference"}
        allowed = {s for s in order if parse_stack(s)[1].layer in UPSTREAM[unit.layer]}
        if unit.cluster in config.get("platform:onPremClusters", {}):
            # A site reads the AKS cluster whose Kafka serves it (its CA): a state of its own
            # layer, which the layer's identities read already (planning/delivery.py, read_state).
            allowed |= {Unit("cluster", key).stack(stack) for key in config["platform:clusters"]}
        assert read <= allowed, (unit_stack, read - allowed)
        assert all(order.index(s) < order.index(unit_stack) for s in read)
    # The tenants read every AKS cluster (a site's unit exports nothing they need); a fleet reads them too.
    tenants = environment.plan(Unit("tenants"))
    clusters = {Unit("cluster", key).stack(stack) for key in config["platform:clusters"]}
    assert clusters <= {c.resource_id for c in tenants.calls if c.token == "pulumi:pulumi:StackReference"}


def test_the_canary_cluster_deploys_in_a_wave_before_the_others():
    waves = environment_units(["eus2", "scus", "wus3"], ["scus"], True)
    assert [[u.stack("prod") for u in wave] for wave in waves] == [
        ["prod.foundation"],
        ["prod.data"],
        ["prod.cluster-scus"],
        ["prod.cluster-eus2", "prod.cluster-wus3"],
        ["prod.tenants"],
        ["prod.fleet"],
    ]


def test_previewing_one_unit_previews_what_it_reads_and_nothing_else():
    environment = preview_environment("prod", only=[Unit("fleet")])
    assert environment.ok, environment.error
    assert list(environment.plans) == [
        "prod.foundation",
        # The clusters read the data unit's Lustre addresses.
        "prod.data",
        "prod.cluster-eus2",
        "prod.cluster-scus",
        "prod.cluster-dispeus2",
        "prod.cluster-dispscus",
        "prod.fleet",
    ]


def _environment_project(tmp_path: Path, stack: str, change: Callable[[dict[str, Any]], None]) -> Path:
    """A project whose environment file is `stack`'s with `change` applied (the program and its
    packages are the repository's)."""
    shutil.copy(ROOT / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    (tmp_path / "stacks").mkdir()
    document = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    change(document)
    (tmp_path / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


@pytest.mark.parametrize("unit", ["foundation", "data", "cluster-eus2", "tenants"])
def test_every_unit_validates_the_whole_environment_and_registers_nothing_when_it_is_bad(tmp_path, unit):
    def break_two_keys(document: dict[str, Any]) -> None:
        document["config"]["platform:network"]["podCidr"] = "10.0.0.0/33"
        document["config"]["platform:teams"]["research"]["nodePools"] = ["no-such-pool"]

    project = _environment_project(tmp_path, "dev", break_two_keys)
    plan = preview_stack(f"dev.{unit}", project)
    assert not plan.ok and plan.resources == []
    assert "platform:network.podCidr" in plan.error and "platform:teams.research" in plan.error
    assert "Traceback" not in plan.error


def test_a_unit_stack_that_sets_platform_keys_or_names_no_cluster_of_the_environment_is_refused(tmp_path):
    project = _environment_project(tmp_path, "dev", lambda document: None)
    (project / "stacks" / "Pulumi.dev.data.yaml").write_text("config:\n  platform:protect: true\n")
    plan = preview_stack("dev.data", project)
    assert not plan.ok and plan.resources == []
    assert "platform:protect" in plan.error and "Pulumi.dev.yaml, which every unit reads" in plan.error
    plan = preview_stack("dev.cluster-wus3", project)
    assert not plan.ok and plan.resources == []
    assert "platform:clusters" in plan.error and "cluster wus3" in plan.error
    plan = preview_stack("dev.fleet", project)
    assert "a fleet needs two or more clusters" in (plan.error or "")


def test_provider_settings_in_the_environments_file_are_refused_where_no_provider_would_read_them(tmp_path):
    def locate(document: dict[str, Any]) -> None:
        document["config"]["azure-native:location"] = "eastus2"

    project = _environment_project(tmp_path, "dev", locate)
    plan = preview_stack("dev.foundation", project)
    assert not plan.ok and plan.resources == []
    assert "azure-native:location: configures a provider" in plan.error and "each unit's stack file" in plan.error


def test_a_consumer_refuses_a_producer_of_another_contract_version(unit_plans):
    foundation = dict(unit_plans["dev"].plan(Unit("foundation")).outputs)
    assert foundation[VERSION_KEY] == CONTRACT_VERSION
    foundation[VERSION_KEY] = CONTRACT_VERSION + 1
    plan = preview_stack("dev.data", stack_outputs={"dev.foundation": foundation})
    assert not plan.ok
    assert f"exports output contract {CONTRACT_VERSION + 1}" in plan.error and "deploy dev.foundation" in plan.error


def test_a_cluster_stack_exports_its_kubeconfig_as_a_secret(unit_plans):
    plan = unit_plans["prod"].plan(Unit("cluster", "eus2"))
    assert "kubeconfig" in plan.secret_outputs
    assert "kubelogin" in plan.outputs["kubeconfig"]


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_the_review_of_the_units_finds_what_the_single_stack_review_finds(plans, unit_plans, stack):
    """Resource rules judge each unit's resources; the stack-wide rules (fleet owns upgrades,
    credentials trust only the environment's clusters, address ranges, protected state) see the
    units' union, so the split loses nothing the review caught (staging's audit findings)."""
    environment = "prod" if stack.startswith("prod") else stack
    single = review_plan(plans[stack], environment)
    units = review_environment(unit_plans[stack], environment)

    def found(review):
        return sorted((v.pack, v.policy, v.resource_type, v.resource_name, v.level) for v in review.violations)

    assert found(units) == found(single)
    if stack == "staging":
        assert found(single), "staging audits rather than denies: its review has findings to compare"


@pytest.mark.parametrize("stack", ["dev", "staging", "prod"])
def test_each_unit_reviewed_alone_as_ci_runs_it_finds_nothing_the_union_does_not(unit_plans, stack):
    """A real `pulumi preview -s <unit> --policy-pack ...` sees one unit; with its generated
    config (scripts/policy_config.py) it reports only what the environment's review reports."""
    environment = unit_plans[stack]
    union = {(v.policy, v.resource_name) for v in review_environment(environment, stack).violations}
    for unit_stack, plan in environment.plans.items():
        alone = {(v.policy, v.resource_name) for v in review_unit(plan, stack).violations}
        assert alone <= union, (unit_stack, sorted(alone - union)[:5])


def test_every_rule_turned_off_for_a_unit_would_misjudge_it(unit_plans):
    """UNIT_BLIND_RULES holds no more than it must: each rule, left on, reports a resource of
    prod or staging that the union's review finds fine."""
    misjudged = set()
    for stack in ("staging", "prod"):
        environment = unit_plans[stack]
        union = {(v.policy, v.resource_name) for v in review_environment(environment, stack).violations}
        for plan in environment.plans.values():
            alone = review_plan(plan, stack)
            misjudged |= {v.policy for v in alone.violations if (v.policy, v.resource_name) not in union}
    assert misjudged == set(UNIT_BLIND_RULES)


def test_the_policy_config_script_writes_each_packs_file_for_a_unit(tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "scripts/policy_config.py",
            "--stack",
            "prod-scale",
            "--layer",
            "tenants",
            "--out",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    paths = result.stdout.split()
    assert [Path(p).name for p in paths] == ["azure-platform.json", "kubernetes-platform.json"]
    azure = json.loads(Path(paths[0]).read_text())
    issuer = azure[ISSUER_POLICY]  # a string, or (with trustedIssuers, as prod's) an object
    assert (issuer["enforcementLevel"] if isinstance(issuer, dict) else issuer) == "disabled"
    assert azure["all"] == "mandatory"
    assert "aks-upgrade-owner" not in azure  # a cluster unit's blind rule, not the tenants'


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_providers_sit_at_the_stacks_root_in_both_layouts(plans, unit_plans, stack):
    """`pulumi state move` copies providers with their parent: a provider under a component
    that moves (or stays) would name a parent the destination lacks. At the root, the copy is
    what the unit's program declares (docs/migration.md)."""
    checked = 0
    for plan in [plans[stack], *unit_plans[stack].plans.values()]:
        for provider in [r for r in plan.resources if r.type.startswith("pulumi:providers:")]:
            checked += 1
            assert provider.parent is None or provider.parent.endswith(f"pulumi:pulumi:Stack::platform-{plan.stack}"), (
                plan.stack,
                provider.name,
                provider.parent,
            )
    assert checked > 2
    # In the single stack, each keeps its former place through an alias (no replacement).
    single = {r.name: r for r in plans[stack].resources if r.type == "pulumi:providers:kubernetes"}
    assert single and all(any('"parentUrn"' in alias for alias in r.aliases) for r in single.values())


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_each_unit_builds_only_into_the_resource_groups_the_delivery_makes_for_it(unit_plans, stack):
    """platform:resourceGroups: delivery. The units create no resource group; every resource they
    make in the environment's subscription goes into a group components/platform/groups.py gives
    their unit (which the delivery creates and grants the unit's layer Contributor on alone);
    the tenants write into the foundation's identity group (federated credentials) and the data
    unit's databases group (Cosmos DB's data-role assignments) only."""
    from components.platform.groups import unit_groups
    from offline.environment import parsed_environment

    config = parsed_environment(stack)
    groups = unit_groups(config)
    identity = Naming(config.prefix, config.environment).identity_group(config.primary_region)
    for name, plan in unit_plans[stack].plans.items():
        _, unit = parse_stack(name)
        assert unit is not None
        assert plan.of_type("azure-native:resources:ResourceGroup") == [], name
        databases = Naming(config.prefix, config.environment).databases_group(config.primary_region)
        allowed = {g.name for g in groups[unit]} | ({identity, databases} if unit.layer == "tenants" else set())
        used = {
            r.inputs["resourceGroupName"]
            for r in plan.resources
            if r.custom
            and r.type.startswith("azure-native:")
            and isinstance(r.inputs.get("resourceGroupName"), str)
            and "subscription-" not in (r.provider or "")  # the hub's, through its own provider
        }
        assert (used and used <= allowed) or (not used and unit.layer == "tenants"), (name, used - allowed)


def test_units_that_make_their_own_groups_keep_them_when_they_leave_the_program():
    """platform:resourceGroups: program (an environment deployed before the delivery made its
    groups): the program creates exactly those groups, retained on delete, so moving the
    environment to the delivery's groups later forgets them instead of deleting them and all
    they hold."""
    from components.platform.groups import unit_groups
    from offline.environment import parsed_environment

    plan = run_with("dev", lambda values: values.__setitem__("platform:resourceGroups", "program"))
    made = plan.of_type("azure-native:resources:ResourceGroup")
    expected = [group for groups in unit_groups(parsed_environment("dev")).values() for group in groups]
    assert sorted((r.inputs["resourceGroupName"], r.inputs["location"]) for r in made) == sorted(
        (g.name, g.region) for g in expected
    )
    assert made and all(r.options.retain_on_delete for r in made)
