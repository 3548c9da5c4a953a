"""Print a plan the way `pulumi preview` does: a resource tree, counts by type, policy results."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.tree import Tree

from offline.engine import PROJECT_ROOT, CapturedResource, Plan
from offline.policy import Review, Violation
from offline.team_quotas import TeamQuota, pool_totals
from planning import lustre as lustre_plan
from planning.capacity import CapacityPlan
from planning.queues import MORE_QUOTA
from stackconfig.model import PlatformConfig


def _label(resource: CapturedResource) -> str:
    marks = []
    if resource.options.protect:
        marks.append("[yellow]protected[/]")
    if resource.options.ignore_changes:
        marks.append(f"[dim]ignores {', '.join(resource.options.ignore_changes)}[/]")
    if resource.options.replace_on_changes:
        marks.append(f"[magenta]replaced if {', '.join(resource.options.replace_on_changes)} change[/]")
    suffix = f"  {' '.join(marks)}" if marks else ""
    style = "bold" if resource.is_component else "green"
    return f"[{style}]+ {resource.type}[/]  {resource.name}{suffix}"


def plan_tree(plan: Plan) -> Tree:
    root = Tree(f"[bold]pulumi:pulumi:Stack[/]  {plan.project}-{plan.stack}")
    nodes: dict[str | None, Tree] = {}
    by_parent: dict[str | None, list[CapturedResource]] = {}
    known = {resource.urn for resource in plan.resources}
    for resource in plan.resources:
        parent = resource.parent if resource.parent in known else None
        by_parent.setdefault(parent, []).append(resource)

    def attach(tree: Tree, parent: str | None) -> None:
        # Components first, then resources by type and name: stable across runs.
        children = sorted(by_parent.get(parent, []), key=lambda r: (r.custom, r.type, r.name))
        for resource in children:
            node = tree.add(_label(resource))
            nodes[resource.urn] = node
            attach(node, resource.urn)

    attach(root, None)
    return root


def counts_table(plan: Plan) -> Table:
    table = Table(title=f"Resources: {len(plan.resources)} to create", title_justify="left", box=None)
    table.add_column("type")
    table.add_column("count", justify="right")
    for token, count in plan.counts_by_type().items():
        table.add_row(token, str(count))
    table.add_row("[bold]total[/]", f"[bold]{len(plan.resources)}[/]")
    return table


def print_plan(plan: Plan, console: Console, *, tree: bool = True, outputs: bool = False) -> None:
    console.print(f"[bold]Previewing update ({plan.stack}), offline[/]  [dim]({plan.seconds:.2f}s)[/]")
    if tree:
        console.print(plan_tree(plan))
    console.print(counts_table(plan))
    if plan.diagnostics:
        console.print("[bold]Diagnostics:[/]")
        for message in plan.diagnostics:
            console.print(f"  {message}", highlight=False, markup=False)
    if plan.outputs and outputs:
        console.print(outputs_tree(plan.outputs, plan.secret_outputs))
    elif plan.outputs:
        console.print(f"[dim]Outputs: {len(plan.outputs)} (--outputs shows them, secrets masked)[/]")


SECRET = "[secret]"


def outputs_tree(outputs: Mapping[str, Any], secrets: Iterable[str]) -> Tree:
    """Stack outputs as `pulumi stack output` would list them: a tree of maps and lists, each
    exported secret (a unit's kubeconfig) masked as Pulumi masks it, never its value."""
    masked = set(secrets)
    root = Tree("[bold]Outputs[/]")

    def add(node: Tree, name: str, value: Any) -> None:
        if isinstance(value, Mapping) and value:
            branch = node.add(escape(name))
            for key in sorted(value):
                add(branch, str(key), value[key])
        elif isinstance(value, list) and value and any(isinstance(v, (Mapping, list)) for v in value):
            branch = node.add(escape(name))
            for index, item in enumerate(value):
                add(branch, f"[{index}]", item)
        else:
            shown = ", ".join(map(str, value)) if isinstance(value, list) else ("{}" if value == {} else str(value))
            node.add(f"{escape(name)}: [green]{escape(shown)}[/]")

    for name in sorted(outputs):
        if name in masked:
            root.add(f"{escape(name)}: [dim]{escape(SECRET)}[/]")
        else:
            add(root, name, outputs[name])
    return root


CONFIG_ERROR = re.compile(
    r"^(?:[\w.-]+: )?The stack configuration has (\d+ problems?); nothing was deployed(?: \([^)]*\))?:\n", re.M
)


def print_error(plan: Plan, console: Console) -> None:
    """Why a stack cannot be previewed. A configuration error is the environment's, whichever
    unit read it first (each reads the whole file): said once, as a preview's, not a deploy's."""
    error = plan.error or ""
    config = CONFIG_ERROR.search(error)
    if config:
        body = error[config.end() :]
        console.print(
            f"[bold red]error:[/] the {plan.stack} configuration has {config.group(1)}; nothing was previewed:"
        )
        console.print(body, markup=False, highlight=False)
        return
    console.print(f"[bold red]error:[/] the {plan.stack} stack cannot be previewed:")
    console.print(error, markup=False, highlight=False)


def capacity_table(capacity: CapacityPlan) -> Table:
    """Per pool: nodes at max and at peak (with surge), pods and GPUs; then address headroom."""
    table = Table(title="Capacity plan", title_justify="left", box=None)
    for column in ("cluster", "pool", "kind", "vm size", "max nodes", "peak", "max pods", "GPUs", "schedulable"):
        table.add_column(
            column, justify="right" if column in ("max nodes", "peak", "max pods", "GPUs", "schedulable") else "left"
        )
    for cluster in capacity.clusters:
        for pool in cluster.pools:
            gpus = f"{pool.max_gpus:,} {pool.gpu_model}" if pool.gpu_model else ""
            units = f"{pool.max_gpu_units:,}" if pool.gpu_model else ""
            table.add_row(
                cluster.key,
                pool.name,
                pool.kind,
                pool.pool.vm_size,
                f"{pool.max_nodes:,}",
                f"{pool.peak_nodes:,}",
                f"{pool.max_pods:,}",
                gpus,
                units,
            )
        table.add_row(
            f"[bold]{cluster.key}[/]",
            "[bold]total[/]",
            "",
            "",
            f"[bold]{cluster.max_nodes:,}[/]",
            f"[bold]{cluster.peak_nodes:,}[/]",
            f"[bold]{cluster.max_pods:,}[/]",
            ", ".join(f"{n:,} {m}" for m, n in sorted(cluster.gpus_by_model.items())),
            "",
        )
    return table


def headroom_table(capacity: CapacityPlan) -> Table:
    table = Table(title="Address headroom at peak", title_justify="left", box=None)
    for column in ("cluster", "range", "network", "needed", "available", "headroom"):
        table.add_column(column, justify="right" if column in ("needed", "available", "headroom") else "left")
    for cluster in capacity.clusters:
        for use in cluster.address_uses:
            style = "green" if use.fits else "red"
            table.add_row(
                cluster.key,
                use.key,
                str(use.network),
                f"{use.needed:,} {use.unit}",
                f"{use.available:,}",
                f"[{style}]{use.headroom:,}[/]",
            )
    return table


def lustre_table(config: PlatformConfig) -> Table:
    """Each region's Managed Lustre file system: tier, size and the throughput it provisions."""
    table = Table(title="Managed Lustre (training data)", title_justify="left", box=None)
    for column in ("region", "zone", "sku", "TiB", "GB/s"):
        table.add_column(column, justify="right" if column in ("TiB", "GB/s") else "left")
    for region, spec in (config.lustre.file_systems if config.lustre else {}).items():
        gbps = lustre_plan.throughput_gbps(spec.sku, spec.capacity_tib)
        table.add_row(region, spec.zone, spec.sku, f"{spec.capacity_tib:,}", f"{gbps:,.1f}")
    return table


def quota_table(quotas: list[TeamQuota]) -> Table:
    """Each team's Kueue quota per pool and its share, then what no team is promised."""
    table = Table(title="GPU quotas by team (Kueue)", title_justify="left", box=None)
    for column in ("cluster", "pool", "team", "quota", "share of pool"):
        table.add_column(column, justify="right" if column in ("quota", "share of pool") else "left")
    for (cluster, pool), (promised, units) in pool_totals(quotas).items():
        for quota in [q for q in quotas if (q.cluster, q.pool) == (cluster, pool)]:
            table.add_row(cluster, pool, quota.team, f"{quota.quota:,} {quota.unit}", f"{quota.share:.0%}")
        free = units - promised
        style = "green" if free > 0 else "yellow"
        share = f"{free / units:.0%}" if units else ""
        table.add_row(cluster, pool, "[dim]in no quota[/]", f"[{style}]{free:,} of {units:,}[/]", share)
    return table


def full_pools_note(quotas: list[TeamQuota]) -> str | None:
    """The pools whose quotas leave nothing unpromised, and what a team's next GPUs there take;
    the pools with GPUs in no quota, which Kueue never admits work onto (a cohort lends only its
    members' unused nominal quota, and the platform sets no Cohort-level quota)."""
    totals = pool_totals(quotas).items()
    full = [f"{c}/{p}" for (c, p), (promised, units) in totals if promised >= units]
    idle = [f"{c}/{p} ({units - promised:,})" for (c, p), (promised, units) in totals if promised < units]
    notes = []
    if full:
        notes.append(f"Fully promised: {', '.join(full)}. More for a team there takes {MORE_QUOTA}.")
    if idle:
        notes.append(
            f"In no team's quota: {', '.join(idle)}. Kueue admits nothing onto those GPUs, not even by borrowing "
            "(a cohort lends only its members' unused quota): give them to a team."
        )
    return "\n".join(notes) or None


def _resource_label(violation: Violation) -> str:
    return f"{violation.resource_type}: {violation.resource_name}"


def print_review(review: Review, console: Console) -> None:
    """The policy section of `pulumi preview`: per pack, each violation with its level, policy,
    resource and message (the policy's description, then what is wrong)."""
    console.print("[bold]Policies:[/]")
    for config in review.configs:
        pack = config.pack
        found = [v for v in review.violations if v.pack == pack.name]
        mark = "[red]❌[/]" if any(v.level == "mandatory" for v in found) else ("⚠️ " if found else "[green]✅[/]")
        console.print(f"    {mark} {pack.name}@v{pack.version} (local: {pack.directory.relative_to(PROJECT_ROOT)})")
        for violation in sorted(found, key=lambda v: (v.level != "mandatory", v.policy, v.resource_name)):
            style = "red" if violation.level == "mandatory" else "yellow"
            console.print(
                f"        - [{style}]\\[{violation.level}][/]  {violation.policy}  ({_resource_label(violation)})",
                highlight=False,
            )
            for line in violation.message.splitlines():
                console.print(f"          {line}", markup=False, highlight=False)
    for remediation in review.remediations:
        console.print(f"    [cyan]remediated[/] {remediation.policy} on {remediation.resource_name}", highlight=False)
    for waiver in review.waivers:
        expired = waiver.expired(review.today)
        state = "[red]EXPIRED[/]" if expired else f"until {waiver.expires or 'no expiry'}"
        console.print(
            f"    [dim]waiver[/] {waiver.pack}/{waiver.policy} ({waiver.level}, {state}, {waiver.approved_by}): "
            f"{waiver.reason}",
            highlight=False,
        )
    console.print(
        f"[bold]Policy review ({review.environment} enforcement):[/] {len(review.mandatory)} mandatory, "
        f"{len(review.advisory)} advisory across {sum(len(c.pack.policies) for c in review.configs)} policies "
        f"[dim]({review.seconds:.2f}s)[/]",
        highlight=False,
    )
