"""Write (or, with --check, verify) the docs that restate data the code holds.

Two kinds, kept apart so that two pull requests onboarding teams never conflict on a page:
- Committed, from code alone (the config model, the policy packs, the catalogues, the failure
  table): whole pages (docs/configuration.md, docs/catalogue.md, ...) and marked blocks inside
  hand-written pages (`<!-- generated:NAME -->` ... `<!-- /generated:NAME -->`). A test runs the
  same code, so a committed page never drifts from its source.
- Written to out/docs/, never committed, from the stack files and their plans: the environments
  table and prod's diagram, what each stack sets, who can reach what, the delivery's grants and
  the migration commands (`stack_views`). Each pull request's review shows what it changes there.

    venv/bin/python scripts/docs.py [--check]      (make docs)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from facts.gpu import GPU_VM_SIZES, MIG_SLICES_PER_GPU  # noqa: E402
from facts.vm_sizes import VM_SIZES  # noqa: E402
from planning import addressing, resilience  # noqa: E402
from stackconfig import reference  # noqa: E402
from stackconfig.model import ClusterConfig, PlatformConfig  # noqa: E402
from validation.loader import ConfigError, parse_platform_config  # noqa: E402
from validation.stackfile import available_stacks, read_stack_config  # noqa: E402

ENVIRONMENT_ORDER = {"dev": 0, "staging": 1, "prod": 2}


def stack_configs() -> dict[str, PlatformConfig]:
    """Every stack's validated config, dev, staging, prod, then their variants."""
    configs = {}
    for stack in sorted(available_stacks(ROOT), key=lambda name: (ENVIRONMENT_ORDER.get(name.split("-")[0], 3), name)):
        configs[stack] = parse_platform_config(read_stack_config(ROOT, stack).values, stack=stack)
    return configs


def example_problems() -> str:
    """What prod's stack reports with a misspelt key, a value of the wrong type and a bad range:
    messages from the model alone, so the committed page changes with the model, never with a
    stack file (a relational check would quote the stack's values)."""
    values = dict(read_stack_config(ROOT, "prod").values)
    network = json.loads(values["platform:network"])
    network["podCidr"] = "100.64.0.0/33"
    values.update({"platform:prefx": "ailab", "platform:protect": "maybe", "platform:network": json.dumps(network)})
    try:
        parse_platform_config(values, stack="prod")
    except ConfigError as error:
        return str(error)
    raise AssertionError("prod with a misspelt key, a word for a boolean and a /33 should not validate")


# -- the environments table (README) ---------------------------------------------------------


def _distinct(values: list[str]) -> str:
    seen: list[str] = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return "; ".join(seen)


def _egress(config: PlatformConfig) -> str:
    egress = config.network.egress
    if egress.outbound_type == "userDefinedRouting":
        firewall = egress.firewall
        idps = f", IDPS {firewall.intrusion_detection_mode}" if firewall.sku == "Premium" else ""
        return f"Azure Firewall {firewall.sku} in each region{idps}, deny by default"
    count = egress.nat_gateway.public_ip_count
    return f"NAT gateway ({count} IP{'s' if count > 1 else ''})"


def _api_server(config: PlatformConfig) -> str:
    shapes = []
    for cluster in config.clusters.values():
        api = cluster.api_server
        if api.private:
            shapes.append("private" + (" + VNet integration" if api.vnet_integration else ""))
        else:
            shapes.append(f"**public**, {len(api.authorized_ip_ranges)} authorized range(s)")
    return _distinct(shapes)


def _gpu_pools(config: PlatformConfig) -> str:
    parts = []
    for name, cluster in config.clusters.items():
        pools = []
        for pool in cluster.gpu_pools.values():
            size = GPU_VM_SIZES[pool.vm_size]
            extras = [p for p in ("Spot" if pool.spot else "", pool.mig_profile or "") if p]
            extras += ["InfiniBand"] if size.infiniband else []
            pools.append(
                f"{pool.vm_size.removeprefix('Standard_')} {pool.purpose} {pool.min_count}-{pool.max_count:,}"
                + (f" ({', '.join(extras)})" if extras else "")
            )
        if pools:
            parts.append(f"{name}: " + ", ".join(pools))
    return "<br>".join(parts) or "none"


def _gpu_nodes(config: PlatformConfig) -> str:
    nodes = sum(p.max_count for c in config.clusters.values() for p in c.gpu_pools.values())
    gpus = sum(
        p.max_count * GPU_VM_SIZES[p.vm_size].gpus for c in config.clusters.values() for p in c.gpu_pools.values()
    )
    return f"{nodes:,} nodes, {gpus:,} GPUs"


def _upgrades(config: PlatformConfig) -> str:
    if config.has_fleet:
        fleet = config.fleet_settings
        canaries = fleet.canary_clusters or [next(iter(config.clusters))]
        return (
            f"Fleet Manager ({fleet.upgrade_channel}, {fleet.node_image_selection} node images): "
            f"{', '.join(canaries)} first, the rest after {fleet.soak_hours} h; node OS "
            + _distinct([config.node_os_channel(key) for key in config.clusters])
        )
    return _distinct(
        [f"channel `{config.upgrade_channel(key)}`, node OS `{config.node_os_channel(key)}`" for key in config.clusters]
    )


def _kafka(config: PlatformConfig) -> str:
    kafka = config.kafka
    if kafka is None:
        return "none"
    if kafka.engine == "eventhubs":
        hubs = kafka.event_hubs
        sku, capacity = (hubs.sku, hubs.capacity) if hubs else ("Premium", 1)
        return f"Event Hubs {sku} ({capacity} {'TU' if sku == 'Standard' else 'PU'}), {len(kafka.topics)} topics"
    strimzi = config.strimzi
    assert strimzi is not None
    hosts = config.kafka_clusters()
    mirrored = " + MirrorMaker 2 active/active" if len(hosts) > 1 and strimzi.mirror_maker.enabled else ""
    return (
        f"Strimzi in {', '.join(hosts)}: {strimzi.brokers} brokers each "
        f"({strimzi.node_pool.vm_size.removeprefix('Standard_')}){mirrored}, {len(kafka.topics)} topics"
    )


def _storage(config: PlatformConfig) -> str:
    storage = config.storage
    sku = storage.sku.removeprefix("Standard_")
    text = f"{sku if 'Z' in sku else f'**{sku}**'}, {storage.soft_delete_days}-day soft delete"
    if storage.change_feed_days:
        text += f", change feed {storage.change_feed_days} days"
    if storage.point_in_time_restore_days:
        text += f", point-in-time restore {storage.point_in_time_restore_days} days"
    return text


def _on(value: bool) -> str:
    return "on" if value else "**off**"


def _private_dns(config: PlatformConfig) -> str:
    hub = config.network.hub
    return "the hub's" if hub and hub.private_dns_zones_resource_group_id else "the environment's own"


def _registry(config: PlatformConfig) -> str:
    registry = config.registry
    regions = {cluster.region for cluster in config.clusters.values()}
    text = "zone redundant" if registry.zone_redundancy else "**not** zone redundant"
    return text + (", geo-replicated" if registry.geo_replication and len(regions) > 1 else "")


def _admission(config: PlatformConfig) -> str:
    policy = config.admission.azure_policy
    action = config.admission.action if config.admission.action == "Deny" else f"**{config.admission.action}**"
    effect = policy.effect if policy.effect == "Deny" else f"**{policy.effect}**"
    return f"platform policies {action}; Azure Policy {policy.initiative} ({effect})"


def _pod_cidr(config: PlatformConfig) -> str:
    cidr = config.network.pod_cidr
    return f"{cidr} ({addressing.overlay_node_capacity(cidr):,} nodes per cluster)"


def _per_cluster(render: Callable[[ClusterConfig], str]) -> Callable[[PlatformConfig], str]:
    return lambda config: _distinct([render(cluster) for cluster in config.clusters.values()])


ENVIRONMENT_ROWS: list[tuple[str, Callable[[PlatformConfig], str]]] = [
    ("clusters", lambda c: ", ".join(f"{k} ({v.region})" for k, v in c.clusters.items())),
    ("control plane", _per_cluster(lambda cluster: f"{cluster.tier if cluster.tier != 'Free' else '**Free**'} tier")),
    ("API server", _api_server),
    ("zones", _per_cluster(lambda cluster: ", ".join(cluster.zones))),
    ("egress", _egress),
    ("pod CIDR", _pod_cidr),
    ("GPU pools (min-max nodes)", _gpu_pools),
    ("GPU capacity at max", _gpu_nodes),
    ("NVIDIA driver", lambda c: _distinct([f"`{v.gpu.driver}`" for v in c.clusters.values() if v.gpu_pools]) or "—"),
    ("upgrades", _upgrades),
    ("admission", _admission),
    ("Defender", lambda c: _on(c.operations.defender)),
    ("local accounts", _per_cluster(lambda cluster: "off" if cluster.disable_local_accounts else "**on**")),
    (
        "etcd encryption",
        _per_cluster(lambda cluster: "own key, private vault" if cluster.etcd_encryption else "**platform-managed**"),
    ),
    ("`protect`", lambda c: _on(c.protect)),
    ("delete locks", lambda c: _on(c.lock_stateful_resources)),
    ("storage", _storage),
    ("Private DNS zones", _private_dns),
    ("registry", _registry),
    ("Kafka", _kafka),
    ("teams / workloads", lambda c: f"{len(c.teams)} / {len(c.workloads)}"),
]


def environments_table(configs: dict[str, PlatformConfig]) -> str:
    stacks = list(configs)
    lines = ["| | " + " | ".join(stacks) + " |", "|---|" + "---|" * len(stacks)]
    for label, render in ENVIRONMENT_ROWS:
        lines.append(f"| {label} | " + " | ".join(render(configs[s]) for s in stacks) + " |")
    return "\n".join(lines) + "\n"


# -- the policies and their enforcement (policies/README.md) --------------------------------


def policies_table() -> str:
    from offline.policy import load_pack_config, load_packs

    # The platform's environments, and the delivery project (its own enforcement file).
    columns = ("dev", "staging", "prod", "delivery")
    lines = [
        "| pack | policy | severity | " + " | ".join(columns) + " | what it holds |",
        "|---|---|---|" + "---|" * len(columns) + "---|",
    ]
    packs = {pack.name: pack for project in ("platform", "delivery") for pack in load_packs(project=project)}
    for pack in packs.values():
        configs = {env: load_pack_config(pack, env) for env in columns if pack.config_file(env).exists()}
        for policy in pack.policies:
            levels = []
            for env in columns:
                if env not in configs:
                    levels.append("—")
                    continue
                level = configs[env].levels[policy.name].value
                waived = any(w.policy == policy.name for w in configs[env].waivers)
                shown = level if level == "mandatory" else f"**{level}**"
                levels.append(shown + (" (waiver)" if waived else ""))
            severity = str(policy.severity.value if policy.severity is not None else "")
            lines.append(
                f"| {pack.name} | `{policy.name}` | {severity} | " + " | ".join(levels) + f" | {policy.description} |"
            )
    return "\n".join(lines) + "\n"


# -- the catalogue page ------------------------------------------------------------------------


def catalogue_page() -> str:
    from planning.charts import CHARTS
    from planning.images import PLATFORM_CACHE_RULES

    lines = [
        "# What the platform knows: VM sizes, GPU sizes, charts and images",
        "",
        "<!-- Generated by `make docs` from facts/vm_sizes.py, facts/gpu.py, planning/charts.py and",
        "planning/images.py; edit those, not this. -->",
        "",
        "Each table restates a catalogue the program reads; the sources of every figure are in the",
        "module's docstring. A size outside the catalogue is a config error.",
        "",
        "## VM sizes",
        "",
        "| size | vCPUs | memory GiB | GPUs | ephemeral OS disk up to GiB | quota family | Premium SSD |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, size in sorted(VM_SIZES.items()):
        lines.append(
            f"| `{name}` | {size.vcpus} | {size.memory_gib} | {size.gpus} | {size.ephemeral_os_disk_gib or '—'} | "
            f"{size.family} | {'yes' if size.premium_storage else 'no'} |"
        )
    lines += [
        "",
        "## GPU sizes",
        "",
        "MIG slices per GPU: " + ", ".join(f"{p} {n}" for p, n in MIG_SLICES_PER_GPU.items()) + ".",
        "",
        "| size | GPUs | model | GPU memory GB | MIG | InfiniBand |",
        "|---|---|---|---|---|---|",
    ]
    for name, gpu in GPU_VM_SIZES.items():
        lines.append(
            f"| `{name}` | {gpu.gpus} | {gpu.gpu_model} | {gpu.gpu_memory_gb} | {'yes' if gpu.mig else 'no'} | "
            f"{'yes' if gpu.infiniband else 'no'} |"
        )
    lines += [
        "",
        "## Helm charts",
        "",
        "Installed pinned from the environment's registry (`charts/<chart>`), where",
        "`scripts/mirror_charts.py` puts each version after checking its digest against the pin",
        "([operations](operations.md#charts-in-the-registry)); every image a chart names is pulled",
        "through the platform's registry.",
        "",
        "| chart | version | upstream (the mirror's source) | pinned content | images (value path → upstream) |",
        "|---|---|---|---|---|",
    ]
    for chart in CHARTS:
        images = "<br>".join(f"`{path}` → `{upstream}`" for path, upstream in sorted(chart.images.items())) or "—"
        pins = [
            f"{label} `{value}`"
            for label, value in (
                ("archive sha256", chart.archive_sha256),
                ("upstream manifest", chart.upstream_digest),
                ("mirrored manifest", chart.mirrored_digest),
            )
            if value
        ]
        lines.append(
            f"| {chart.name} | `{chart.version}` | `{chart.upstream}` | {'<br>'.join(pins) or 'none yet'} | {images} |"
        )
    lines += [
        "",
        "## Registry cache rules",
        "",
        "| rule | upstream | repository in the platform's registry |",
        "|---|---|---|",
    ]
    for rule in PLATFORM_CACHE_RULES:
        lines.append(f"| `{rule.name}` | `{rule.source}` | `{rule.target}` |")
    return "\n".join(lines) + "\n"


# -- the permissions table (docs/deploying.md) ------------------------------------------------


def permissions_table(stack: str = "prod") -> str:
    """What the delivery project grants a stack's deploy and plan identities."""
    from offline.identities import markdown_table, stack_identities

    return str(markdown_table(stack_identities(stack)))


def single_stack_plan(stack: str) -> Any:
    """A stack's single-stack offline preview (the tests hand in the run's shared one)."""
    from offline.engine import preview_stack

    return preview_stack(stack)


def environment_plan(stack: str) -> Any:
    """An environment previewed as its unit stacks (the tests hand in the run's shared one)."""
    from offline.environment import preview_environment

    return preview_environment(stack)


def migration_page(stack: str = "<stack>") -> str:
    """docs/migration.md: moving a deployed single-stack environment to its unit stacks (committed,
    for any stack); with a stack's name, out/docs/migration-<stack>.md adds its commands."""
    lines = _migration_steps(stack)
    if stack == "<stack>":
        return "\n".join(
            lines
            + [
                "Each unit's `pulumi state move` command, with every URN it moves, restates a stack's plan:",
                "`make docs` writes them to `out/docs/migration-<stack>.md` for each stack named after its",
                "environment (the single-stack layout had no variants).",
                "",
            ]
        )
    return "\n".join(lines + _migration_commands(stack))


def _migration_steps(stack: str) -> list[str]:
    return [
        "# Moving a single-stack environment to deployment units",
        "",
        "<!-- Generated by scripts/docs.py from planning/layers.py"
        + ("" if stack == "<stack>" else f" and the offline plan of stacks/Pulumi.{stack}.yaml")
        + "; run `make docs`. -->",
        "",
        "Environments deployed before the deployment units (docs/architecture.md, \"Deployment units\") hold",
        "everything in one stack named after the environment. This moves one to its unit stacks",
        "without deleting or re-creating anything; `protect` stays on. Shown for "
        f"`{stack}`; for another environment replace `{stack}` in every URN and command (the",
        "components are the same wherever the config has them).",
        "",
        "The commands need the Pulumi CLI 3.124 or later (the pinned 3.272.0 has the fixes for",
        "providers and parents of 3.126 to 3.226), both stacks' secrets-provider keys, and nobody else",
        "deploying: `pulumi state move` writes the destination first, then the source, and is not",
        "atomic (pulumi/pulumi#17187). Back up the state first (`pulumi stack export`).",
        "",
        "1. **Split the components inside the old stack.** `pulumi up -s " + stack + "` with this release.",
        "   Components that used to span layers were split (identities and their access, Kueue's",
        "   flavors and the teams' queues, the Kafka and its topics and users); aliases move their",
        "   resources into the new components within the stack, so the preview shows no create or",
        "   delete. This must happen before the move: aliases do not cross stacks (pulumi/pulumi#14302).",
        "2. **Create the unit stacks** with their secrets providers (`venv/bin/python scripts/units.py",
        "   --stack " + stack + " --init` prints the commands), e.g. `pulumi stack init " + stack + ".foundation ...`.",
        "3. **Move each unit's components, in this order** (each line moves a component with its",
        "   children; the providers they use, which sit at the stack's root since step 1, are copied).",
        "   Moved components land at the destination's root, where the unit programs declare them, and",
        "   `state move` rewrites their children's URNs (3.224+), so every URN matches.",
        "4. **Preview every unit**: `pulumi preview -s " + stack + ".<unit>` shows no create, replace",
        "   or delete (outputs and provider references may update). Then `pulumi up` each, in order.",
        "5. **Retire the old stack** once `pulumi stack -s " + stack + " --show-urns` lists nothing but",
        "   the stack, its Platform component and its providers (`state move` copies providers, so",
        "   the source keeps them): `pulumi stack rm " + stack + " --force --preserve-config`",
        "   (`--preserve-config` keeps stacks/Pulumi." + stack + ".yaml, which every unit reads).",
        "",
        "**Who runs it.** Steps 1 to 3 read and write the old stack and every unit's state and use both",
        "stacks' keys: run them from the hub as a platform admin (`delivery:adminGroupObjectId` holds",
        "the state account and the vault). Deploy the delivery project first (docs/deploying.md): it",
        "adds each layer's identities, keys and grants, and the old single-stack identity, made by hand",
        "or by an earlier release, still deploys step 1. Once the old stack is gone, delete `id-<prefix>-deploy-"
        + stack
        + "` and",
        "`id-<prefix>-plan-" + stack + "` and their role assignments, and the old key `pulumi-state-" + stack + "`",
        "(purge protection keeps it recoverable for its retention period).",
        "",
    ]


def _migration_commands(stack: str) -> list[str]:
    """Each unit's share of the stack's single-stack plan and its `pulumi state move` command, from
    the mapping (planning/layers.py) tests/test_deployment_units.py holds to the units' programs."""
    from planning.layers import LAYERS, Unit, units_of

    plan = single_stack_plan(stack)  # a stack named after the environment: the single-stack layout
    if not plan.ok:
        raise RuntimeError(f"{stack} does not preview: {plan.error}")
    clusters = list(parse_platform_config(read_stack_config(ROOT, stack).values).unit_cluster_keys())
    units = units_of(plan.resources, clusters)
    root = next(r for r in plan.resources if r.type == "platform:index:Platform")
    parents = {r.urn: r.parent for r in plan.resources}

    def top_level(urn: str) -> str:
        while parents.get(urn) not in (root.urn, None):
            urn = parents[urn] or urn
        return urn

    # A component moves with its children, which all belong to its unit (the tests hold that).
    moved: dict[str, Unit] = {}
    counts: dict[Unit, int] = {}
    for urn, unit in units.items():
        moved.setdefault(top_level(urn), unit)
        counts[unit] = counts.get(unit, 0) + 1
    by_unit: dict[Unit, list[str]] = {}
    for urn, unit in moved.items():
        by_unit.setdefault(unit, []).append(urn)
    order = sorted(by_unit, key=lambda u: (LAYERS.index(u.layer), u.cluster))
    lines = [
        "| unit stack | resources | components and resources to move |",
        "|---|---|---|",
    ]
    for unit in order:
        lines.append(f"| `{unit.stack(stack)}` | {counts.get(unit, 0)} | {len(by_unit[unit])} |")
    lines.append("")
    for unit in order:
        lines += [
            f"## {unit.stack(stack)}",
            "",
            "```sh",
            f"pulumi state move --source {stack} --dest {unit.stack(stack)} \\",
        ]
        urns = sorted(by_unit[unit])  # registration order varies between runs; URNs do not
        lines += [f"  '{urn}'" + (" \\" if i < len(urns) - 1 else "") for i, urn in enumerate(urns)]
        lines += ["```", ""]
    return lines


# -- pages and blocks ---------------------------------------------------------------------------

BLOCK = re.compile(r"(<!-- generated:(?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- /generated:(?P=name) -->)", re.S)


_SCENARIO_TITLES = {"zone": "a zone lost", "primary": "the primary region lost", "secondary": "another region lost"}


def failure_table() -> str:
    """README's regional failure table: each service's state in each scenario (planning/resilience.py)."""
    lines = [
        "| service | " + " | ".join(_SCENARIO_TITLES[s] for s in resilience.SCENARIOS) + " |",
        "|---|" + "---|" * len(resilience.SCENARIOS),
    ]
    for entry in resilience.FAILURE_TABLE:
        lines.append(f"| {entry.service} | " + " | ".join(entry.cells[s].status for s in resilience.SCENARIOS) + " |")
    return "\n".join(lines) + "\n"


def failure_cells() -> str:
    """docs/resilience.md's table: every cell of the failure table with its RPO, RTO and reason."""
    out = []
    for scenario in resilience.SCENARIOS:
        out += [
            f"### {_SCENARIO_TITLES[scenario][0].upper()}{_SCENARIO_TITLES[scenario][1:]}",
            "",
            "| service | status | RPO | RTO | why |",
            "|---|---|---|---|---|",
        ]
        for entry in resilience.FAILURE_TABLE:
            cell = entry.cells[scenario]
            out.append(f"| {entry.service} | {cell.status} | {cell.rpo} | {cell.rto} | {cell.why} |")
        out.append("")
    return "\n".join(out)


def site_failures() -> str:
    """docs/hybrid.md's table: what fails with an on-premises site (planning/onprem.py)."""
    from planning import onprem

    titles = {"site": "the site lost", "link": "the link to Azure lost"}
    lines = ["| | " + " | ".join(titles[s] for s in onprem.SITE_SCENARIOS) + " |", "|---|---|---|"]
    for entry in onprem.SITE_FAILURES:
        cells = [f"**{entry.cells[s].status}**: {entry.cells[s].what}" for s in onprem.SITE_SCENARIOS]
        lines.append(f"| {entry.service} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def site_egress() -> str:
    """docs/hybrid.md's list of what a site opens at its own egress (planning/onprem.py), for a site
    attached to eastus2."""
    from planning import onprem

    return "\n".join(f"- `{fqdn}`" for fqdn in onprem.site_egress_fqdns("eastus2")) + "\n"


def prod_diagram() -> str:
    """The Mermaid diagram of prod, as the pull-request review draws it (offline/diagram.py)."""
    from google.protobuf import json_format
    from pulumi.runtime import rpc

    from offline.diagram import mermaid
    from scripts.review_side import stacks_json

    environment = environment_plan("prod")
    assert environment.ok, environment.error
    stacks = stacks_json(environment, rpc, json_format)
    return "```mermaid\n" + mermaid(r for stack in stacks.values() for r in stack["resources"]) + "```\n"


REACH_INTRO = [
    "What each entry point can become and do, from the attack-path model",
    "([decision 0009](decisions/0009-who-reaches-what.md); planning/reach.py says which edges exist and why).",
    "`tests/test_reach.py` holds the invariants on every environment: nothing a pull request runs",
    "reaches a credential that writes; only an environment's approvers (dev: whoever merges) write",
    "its resources, states and clusters; no environment writes a hub object another uses; each team",
    "reaches only its own namespaces, identities and data; a node only its kubelet and its pods.",
    "Counts are nodes of the model: Azure scopes written, clusters administered, namespaces",
    "where pods can be created, states whose secrets are read / states written.",
]


def reach_page() -> str:
    """docs/who-reaches-what.md: what the model is and where its tables are (committed)."""
    return "\n".join(
        [
            "# Who can reach what",
            "",
            "<!-- Generated by scripts/docs.py; run `make docs`. -->",
            "",
            *REACH_INTRO,
            "",
            "The tables, one per stack, restate the stack files and their plans, so they are not committed:",
            "`make docs` writes them to `out/docs/who-reaches-what.md`, and the tests build the same model on",
            "every run.",
            "",
        ]
    )


def reach_tables() -> str:
    """out/docs/who-reaches-what.md: the attack-path model's summary per stack (offline/reach.py)."""
    from offline import identities, reach

    out = ["# Who can reach what, per stack", "", *REACH_INTRO, ""]
    for stack, config in stack_configs().items():
        environment = environment_plan(stack)
        assert environment.ok, environment.error
        model = reach.build(
            config, environment.plans, identities.stack_identities(stack), identities.backend(config.environment)
        )
        out += [f"## {stack}", "", reach.markdown_table(model)]
    return "\n".join(out)


def blocks() -> dict[tuple[Path, str], Callable[[], str]]:
    """Generated blocks inside hand-written pages: (page, block name) -> its content."""
    return {
        (ROOT / "README.md", "failure-table"): failure_table,
        (ROOT / "docs" / "resilience.md", "failure-cells"): failure_cells,
        (ROOT / "docs" / "hybrid.md", "site-failures"): site_failures,
        (ROOT / "docs" / "hybrid.md", "site-egress"): site_egress,
        (ROOT / "policies" / "README.md", "policies"): policies_table,
    }


OUT = ROOT / "out" / "docs"


def stack_views() -> dict[Path, Callable[[], str]]:
    """What restates the stack files and their plans: written to out/docs/, never committed (so
    two pull requests that onboard teams never conflict on a generated page)."""
    named = [s for s, c in stack_configs().items() if s == c.environment]  # the single-stack layout's
    views: dict[Path, Callable[[], str]] = {
        OUT / "environments.md": environments_page,
        OUT / "configuration-by-stack.md": lambda: reference.render_markdown(
            stack_configs(), example_problems(), header=_by_stack_header("configuration.md")
        ),
        OUT / "delivery-configuration-by-stack.md": delivery_configuration_by_stack,
        OUT / "who-reaches-what.md": reach_tables,
    }
    for stack in named:
        views[OUT / f"migration-{stack}.md"] = lambda stack=stack: migration_page(stack)  # type: ignore[misc]
        views[OUT / f"permissions-{stack}.md"] = lambda stack=stack: permissions_page(stack)  # type: ignore[misc]
    return views


def _by_stack_header(page: str) -> list[str]:
    return [
        "# Configuration by stack",
        "",
        f"docs/{page} with a column of what each stack file sets (`make docs`; not committed).",
        "",
    ]


def environments_page() -> str:
    """out/docs/environments.md: every stack side by side, and prod drawn from its plan."""
    return "\n".join(
        [
            "# The environments, from their stack files",
            "",
            "Written by `make docs`; **bold** marks a setting below the platform's secure default, each one an",
            "explicit line in the stack file that the policy packs see and review (docs/environments.md).",
            "",
            environments_table(stack_configs()),
            "## prod",
            "",
            "Drawn from its offline plan by the code that draws each pull request's change.",
            "",
            prod_diagram(),
        ]
    )


def permissions_page(stack: str) -> str:
    return f"# What the delivery grants {stack}\n\n" + permissions_table(stack)


def delivery_configuration_page() -> str:
    """docs/delivery-configuration.md: every `delivery:` key of the delivery project."""
    from stackconfig.delivery import DELIVERY_NAMESPACE, DeliveryConfig

    header = [
        "# Delivery configuration reference",
        "",
        "<!-- Generated by `make docs` from stackconfig/delivery.py; edit that, not this. -->",
        "",
        "The `delivery:` keys of the delivery project's stacks (delivery/stacks/Pulumi.<stack>.yaml;",
        "[deploying](deploying.md#the-delivery-project)). Unknown keys are errors; every problem is",
        "listed at once with its key, as for the platform ([configuration](configuration.md)).",
        "",
    ]
    return reference.render_markdown({}, "", model=DeliveryConfig, namespace=DELIVERY_NAMESPACE, header=header)


def delivery_configuration_by_stack() -> str:
    from stackconfig.delivery import DELIVERY_NAMESPACE, DeliveryConfig
    from validation.delivery import parse_delivery_config

    delivery = ROOT / "delivery"
    configs = {
        stack: parse_delivery_config(read_stack_config(delivery, stack).values) for stack in available_stacks(delivery)
    }
    header = _by_stack_header("delivery-configuration.md")
    return reference.render_markdown(configs, "", model=DeliveryConfig, namespace=DELIVERY_NAMESPACE, header=header)


def pages(only: Path | None = None) -> dict[Path, str]:
    """Every generated file and its whole content (`only`: that file's alone, if it is generated)."""
    whole: dict[Path, Callable[[], str]] = {
        ROOT / "docs" / "configuration.md": lambda: reference.render_markdown({}, example_problems()),
        ROOT / "docs" / "delivery-configuration.md": delivery_configuration_page,
        ROOT / "docs" / "catalogue.md": catalogue_page,
        ROOT / "docs" / "migration.md": migration_page,
        ROOT / "docs" / "who-reaches-what.md": reach_page,
    }
    result = {path: render() for path, render in whole.items() if only is None or path == only}
    for (path, name), render in blocks().items():
        if only is not None and path != only:
            continue
        text = result.get(path) or path.read_text()
        match = next((m for m in BLOCK.finditer(text) if m.group("name") == name), None)
        if match is None:
            raise LookupError(f"{path.relative_to(ROOT)} has no <!-- generated:{name} --> block")
        result[path] = text[: match.start("body")] + render() + text[match.end("body") :]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="fail if a committed page differs")
    args = parser.parse_args(argv)
    if not args.check:
        OUT.mkdir(parents=True, exist_ok=True)
        for path, render in stack_views().items():
            path.write_text(render())
            print(f"wrote {path.relative_to(ROOT)} (not committed)")
    stale = []
    for path, text in pages().items():
        if path.exists() and path.read_text() == text:
            continue
        if args.check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale generated docs (run `make docs`): " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
