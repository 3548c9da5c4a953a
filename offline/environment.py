"""Preview an environment as the graph of its stacks, the way the deploy workflow runs them.

Each unit's program runs in dependency order (planning/layers.py, `environment_units`); every
`pulumi.StackReference` it makes is answered with the outputs of the upstream unit's plan, as
the real engine would answer it with that stack's state. Units of one wave (the clusters) do
not read each other, so with `workers` > 1 they run in separate processes.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from offline.engine import PROJECT_ROOT, CapturedResource, Plan, preview_stack
from offline.policy import Pack, Review, load_pack_config, load_packs, parse_pack_config, review_plan
from planning.layers import UPSTREAM, Unit, environment_units, parse_stack
from stackconfig.model import PlatformConfig
from validation.loader import ConfigError, parse_platform_config
from validation.stackfile import read_stack_config


@dataclass
class EnvironmentPlan:
    environment: str
    # Each unit's plan by stack name, in deploy order.
    plans: dict[str, Plan] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return all(plan.ok for plan in self.plans.values())

    @property
    def error(self) -> str | None:
        errors = [f"{stack}: {plan.error}" for stack, plan in self.plans.items() if plan.error]
        return "\n".join(errors) or None

    @property
    def resources(self) -> list[CapturedResource]:
        """The union of the units' resources (each stack has its own URNs)."""
        return [resource for plan in self.plans.values() for resource in plan.resources]

    def plan(self, unit: Unit) -> Plan:
        return self.plans[unit.stack(self.environment)]


def parsed_environment(environment: str, project_dir: Path = PROJECT_ROOT) -> PlatformConfig:
    """The environment's validated config (raises ConfigError)."""
    return parse_platform_config(read_stack_config(project_dir, environment).values, stack=environment)


def waves(config: PlatformConfig) -> list[list[Unit]]:
    return environment_units(
        list(config.clusters), config.fleet_settings.canary_clusters, config.has_fleet, list(config.on_prem_clusters)
    )


def needed(units: Iterable[Unit], every: Sequence[Unit]) -> set[Unit]:
    """`units` and every unit they read, transitively."""
    wanted: set[Unit] = set()
    pending = list(units)
    while pending:
        unit = pending.pop()
        if unit in wanted:
            continue
        wanted.add(unit)
        pending += [other for other in every if other.layer in UPSTREAM[unit.layer]]
    return wanted


def _preview(args: tuple[str, Path, str | None, dict[str, dict[str, Any]], dict[str, list[str]]]) -> Plan:
    stack, project_dir, cloud, outputs, secrets = args
    return preview_stack(stack, project_dir, cloud=cloud, stack_outputs=outputs, stack_secrets=secrets)


def preview_environment(
    environment: str,
    project_dir: Path = PROJECT_ROOT,
    *,
    only: Sequence[Unit] | None = None,
    cloud: str | None = None,
    workers: int = 1,
) -> EnvironmentPlan:
    """Preview every unit of `environment` (or `only` those, with what they read) in order.

    Bad config: the foundation's program fails with the message every unit would give, and
    nothing else runs."""
    started = time.perf_counter()
    result = EnvironmentPlan(environment)
    try:
        config = parsed_environment(environment, project_dir)
    except ConfigError:
        stack = Unit("foundation").stack(environment)
        result.plans[stack] = preview_stack(stack, project_dir, cloud=cloud)
        result.seconds = time.perf_counter() - started
        return result
    every = [unit for wave in waves(config) for unit in wave]
    wanted = needed(only, every) if only else set(every)
    outputs: dict[str, dict[str, Any]] = {}
    secrets: dict[str, list[str]] = {}
    pool = ProcessPoolExecutor(workers) if workers > 1 else None
    try:
        for wave in waves(config):
            stacks = [unit.stack(environment) for unit in wave if unit in wanted]
            jobs = [(stack, project_dir, cloud, outputs, secrets) for stack in stacks]
            plans = list(pool.map(_preview, jobs)) if pool and len(jobs) > 1 else [_preview(job) for job in jobs]
            for stack, plan in zip(stacks, plans, strict=True):
                result.plans[stack] = plan
                outputs[stack] = plan.outputs
                secrets[stack] = plan.secret_outputs
            if any(not plan.ok for plan in plans):
                break  # the units after a failed one would read outputs it never made
    finally:
        if pool:
            pool.shutdown()
    result.seconds = time.perf_counter() - started
    return result


def union_plan(environment: EnvironmentPlan) -> Plan:
    """The environment's units as one plan: what the stack-wide policy rules (disjoint address
    ranges, private endpoints with their DNS, protected state) must see whole. URNs stay unique:
    each names its unit's stack."""
    plans = list(environment.plans.values())
    union = Plan(
        stack=environment.environment,
        project=plans[0].project if plans else "",
        preview=all(plan.preview for plan in plans),
    )
    for plan in plans:
        union.resources += plan.resources
        union.calls += plan.calls
        union.diagnostics += plan.diagnostics
    union.error = environment.error
    union.seconds = environment.seconds
    return union


def contract_plan(environment: EnvironmentPlan) -> Plan:
    """The union of the units with the outputs a single stack exports, gathered from the units that
    export them (the foundation: identities; the tenants: the workload context and Kafka clients;
    each cluster unit: its issuer), which is what the contracts read (contracts/)."""
    union = union_plan(environment)
    for plan in environment.plans.values():
        unit = parse_stack(plan.stack)[1]
        if unit is not None and unit.layer == "cluster":
            union.outputs.setdefault("clusters", {})[unit.cluster] = plan.outputs["cluster"]
        elif unit is not None and unit.layer in ("foundation", "tenants"):
            union.outputs.update(plan.outputs)
    return union


# The stack rule that holds federated credentials to the environment's own clusters sees each
# issuer's source cluster only within one stack; across units it is told their issuers.
ISSUER_POLICY = "federated-credential-trusted-issuer"

# Stack rules that judge a unit by resources of another unit, and so misjudge it when the packs
# run on that unit's stack alone (`pulumi preview -s prod.tenants --policy-pack ...`): the
# per-stack run turns them off for those layers, and the review of the environment's union (make
# review, which gates every deploy) judges them with everything in view. tests hold that each
# entry is needed and that nothing else differs.
UNIT_BLIND_RULES: dict[str, tuple[str, str]] = {
    ISSUER_POLICY: ("tenants", "the issuers are the clusters' (their units' outputs)"),
    "k8s-fqdn-policies-need-acns": ("tenants", "whether ACNS is on is the cluster's (its unit)"),
    "k8s-namespace-pod-security": ("tenants", "a training namespace's admission policy is the cluster's (its unit)"),
    "aks-upgrade-owner": ("cluster", "the Fleet that owns upgrades is the fleet unit's, deployed after the clusters"),
}


def unit_pack_document(pack: Pack, policy_environment: str, layer: str) -> dict[str, Any]:
    """The `--policy-pack-config` document of `pack` for a stack of `layer`: the environment's,
    with the rules that stack cannot judge alone turned off (UNIT_BLIND_RULES)."""
    document: dict[str, Any] = json.loads(pack.config_file(policy_environment).read_text())
    for policy, (blind_layer, _) in UNIT_BLIND_RULES.items():
        if blind_layer == layer and policy in pack.policy_names:
            current = document.get(policy)
            document[policy] = {**current, "enforcementLevel": "disabled"} if isinstance(current, dict) else "disabled"
    return document


def review_unit(plan: Plan, policy_environment: str) -> Review:
    """The packs on one unit's stack alone, configured as its real `pulumi preview` is."""
    _, unit = parse_stack(plan.stack)
    layer = unit.layer if unit else "foundation"
    configs = [
        parse_pack_config(pack, unit_pack_document(pack, policy_environment, layer), f"{pack.name} for {layer}")
        for pack in load_packs()
    ]
    return review_plan(plan, policy_environment, configs=configs)


def cluster_issuers(environment: EnvironmentPlan) -> list[str]:
    """The OIDC issuers the cluster units export (what the tenants' credentials may trust)."""
    return [
        plan.outputs["oidcIssuerUrl"]
        for stack, plan in environment.plans.items()
        if ".cluster-" in stack and isinstance(plan.outputs.get("oidcIssuerUrl"), str)
    ]


def review_environment(environment: EnvironmentPlan, policy_environment: str) -> Review:
    """The policy packs over the union of the units' plans, with the clusters' issuers trusted.

    Resource rules judge each resource as its own stack's review would; stack rules see the
    environment whole, as they saw the single stack."""
    issuers = cluster_issuers(environment)
    configs = []
    for pack in load_packs():
        config = load_pack_config(pack, policy_environment)
        if ISSUER_POLICY in config.levels:
            properties = dict(config.properties)
            trusted = list(properties.get(ISSUER_POLICY, {}).get("trustedIssuers", []))
            properties[ISSUER_POLICY] = {
                **properties.get(ISSUER_POLICY, {}),
                "trustedIssuers": trusted + [i for i in issuers if i not in trusted],
            }
            config = dataclasses.replace(config, properties=properties)
        configs.append(config)
    return review_plan(union_plan(environment), policy_environment, configs=configs)
