#!/usr/bin/env python3
"""Offline preview and policy review: run the Pulumi program under mocks, print what it would
create, and evaluate the policy packs with the environment's enforcement files.

An environment (`--stack prod`, its file stacks/Pulumi.prod.yaml) previews as the graph of its
unit stacks in deploy order (prod.foundation, prod.data, prod.cluster-<key>..., prod.tenants,
prod.fleet), each reading the ones before it; the packs then review the units' union.

    python scripts/preview.py --stack prod [--json out/prod] [--no-tree]
    python scripts/preview.py --stack prod --unit cluster-eus2   # one unit (and what it reads)
    python scripts/preview.py --stack dev --stack staging --stack prod --markdown out/review.md
    python scripts/preview.py --stack prod --capacity   # the capacity plan and team quotas as tables
    python scripts/preview.py --stack dev --outputs     # each stack's outputs as a tree, secrets masked
    python scripts/preview.py --stack prod --workers 2  # a wave's units side by side
    python scripts/preview.py --stack prod --single-stack  # the layout docs/migration.md moves from

No Pulumi CLI, cloud credentials or network needed. Exit 0 when every stack previews and passes
its mandatory policies, 1 when a stack's program fails (bad config included), a mandatory
policy is violated or a waiver has expired, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console
from rich.markup import escape

from offline.cost import capacity as cost_capacity
from offline.engine import PROJECT_ROOT, Plan, preview_stack
from offline.environment import (
    parsed_environment,
    preview_environment,
    review_environment,
    review_unit,
    union_plan,
    waves,
)
from offline.policy import PolicyConfigError, Review, review_plan
from offline.render import (
    capacity_table,
    full_pools_note,
    headroom_table,
    lustre_table,
    print_error,
    print_plan,
    print_review,
    quota_table,
)
from offline.report import StackReport, markdown
from offline.team_quotas import team_quotas
from planning.capacity import plan_capacity
from planning.layers import UNIT_SEPARATOR, Unit, parse_stack
from validation.loader import ConfigError, parse_platform_config
from validation.stackfile import StackFileError, available_stacks, read_stack_config


def _missing_units(stack: str, wanted: list[Unit]) -> str | None:
    """Why `wanted` is not a unit of `stack`'s environment (naming the units it has), or None.
    A config error is the preview's to report."""
    try:
        config = parsed_environment(stack)
    except ConfigError:
        return None
    existing = [unit for wave in waves(config) for unit in wave]
    unknown = [unit for unit in wanted if unit not in existing]
    if not unknown:
        return None
    names = ", ".join(unit.stack("").lstrip(".") for unit in existing)
    return f"{stack} has no unit {', '.join(u.stack('').lstrip('.') for u in unknown)}; its units: {names}"


def _each_unit(reviews: dict[str, Callable[[str], Review]], console: Console) -> Callable[[str], Review]:
    """The selected units' reviews, each printed; the last one is returned (all must pass)."""

    def review_all(environment: str) -> Review:
        result: Review | None = None
        failed: Review | None = None
        for name, review in reviews.items():
            result = review(environment)
            if len(reviews) > 1:
                console.print(f"[bold]{name}[/]")
                print_review(result, console)
            if not result.passed:
                failed = result
        console.print(
            "[dim]A unit's review turns off the rules it cannot judge alone; `make preview STACK=<env>` "
            "(every unit) and `make review` judge those on the environment.[/]"
        )
        assert result is not None
        return failed or result

    return review_all


def main(argv: list[str] | None = None) -> int:
    # Environments: their config files (unit stacks' own files hold only a secrets provider).
    stacks = [stack for stack in available_stacks(PROJECT_ROOT) if UNIT_SEPARATOR not in stack]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", "-s", action="append", choices=stacks, help="environment to preview (repeatable)")
    parser.add_argument(
        "--unit",
        action="append",
        metavar="UNIT",
        help="preview only this unit (foundation, data, cluster-<key>, tenants, fleet) and what it reads",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes for the units of one wave (default 1)")
    parser.add_argument(
        "--single-stack", action="store_true", help="the whole environment as one stack (the migration source)"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="write the captured plan as JSON (one stack: a file; several: a folder)"
    )
    parser.add_argument("--no-tree", action="store_true", help="print counts only, not the resource tree")
    parser.add_argument(
        "--outputs", action="store_true", help="print each stack's outputs as a tree (secrets masked, as Pulumi does)"
    )
    parser.add_argument("--capacity", action="store_true", help="also print the capacity plan and address headroom")
    parser.add_argument("--no-policies", action="store_true", help="skip the policy review")
    parser.add_argument(
        "--markdown", metavar="PATH", help="write the review of every stack as Markdown (for a pull request)"
    )
    args = parser.parse_args(argv)

    # Logs (CI, pipes) get whole lines: rich would crop them at 80 columns.
    # emoji=False: config keys and messages print as typed (`platform:x:` is not an emoji).
    console = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else 220)
    failed = False
    selected = args.stack or ["dev"]
    reports: list[StackReport] = []
    try:
        only = [parse_stack(f"environment.{unit}")[1] for unit in args.unit or []]
    except ValueError as error:
        parser.error(str(error).replace("environment.", ""))
    for stack in selected:
        try:
            read_stack_config(PROJECT_ROOT, stack)
        except StackFileError as error:
            console.print(f"[bold red]error:[/] {escape(str(error))}", highlight=False)
            failed = True
            continue
        review_of: Callable[[str], Review]
        if only and not args.single_stack:
            missing = _missing_units(stack, [unit for unit in only if unit])
            if missing:
                parser.error(missing)
        if args.single_stack:
            plan = preview_stack(stack)
            units: dict[str, Plan] = {}
            review_of = functools.partial(review_plan, plan)
        else:
            environment = preview_environment(stack, only=[unit for unit in only if unit], workers=args.workers)
            plan, units = union_plan(environment), environment.plans
            review_of = functools.partial(review_environment, environment)
        if not plan.ok:
            print_error(plan, console)
            failed = True
            reports.append(StackReport(plan, None, None))
            continue
        selected = {unit.stack(stack) for unit in only if unit}
        for unit_plan in units.values() or [plan]:
            if selected and unit_plan.stack not in selected:
                continue  # previewed only for the outputs the selected units read
            print_plan(unit_plan, console, tree=not args.no_tree, outputs=args.outputs)
        if selected:
            upstream = [name for name in units if name not in selected]
            console.print(f"[dim]read from: {', '.join(upstream) or 'nothing'}[/]")
        if units:
            console.print(
                f"[bold]{stack}:[/] {len(plan.resources)} resources in {len(units)} stacks  "
                f"[dim]({plan.seconds:.2f}s)[/]"
            )
        # The program accepted this config, so it parses here too.
        config = parse_platform_config(read_stack_config(PROJECT_ROOT, stack).values)
        capacity = plan_capacity(config)
        console.print(f"[bold]Capacity:[/] {capacity.summary()}")
        if args.capacity:
            console.print(capacity_table(capacity))
            console.print(headroom_table(capacity))
            resources = [{"type": r.type, "name": r.name, "inputs": r.inputs} for r in plan.resources]
            quotas = team_quotas(resources, cost_capacity(resources))
            console.print(quota_table(quotas))
            if note := full_pools_note(quotas):
                console.print(note, highlight=False)
            if config.lustre is not None:
                console.print(lustre_table(config))
        review, problem = None, None
        if selected and units:
            # Each selected unit as its own `pulumi preview` reviews it: the rules it cannot judge
            # alone are off (offline/environment.py, UNIT_BLIND_RULES), as scripts/policy_config.py
            # turns them off in the workflow.
            reviews: dict[str, Callable[[str], Review]] = {
                name: functools.partial(review_unit, units[name]) for name in sorted(selected)
            }
            review_of = _each_unit(reviews, console)
        if not args.no_policies:
            try:
                review = review_of(config.environment)
            except PolicyConfigError as error:
                problem = f"the policy configuration of {config.environment} is invalid:\n{error}"
                console.print(f"[bold red]error:[/] {problem}", highlight=False)
            else:
                print_review(review, console)
            failed |= problem is not None or review is None or not review.passed
        reports.append(
            StackReport(
                plan, review, capacity.summary(), problem, {name: len(p.resources) for name, p in units.items()}
            )
        )
        if args.json:
            for written in units.values() or [plan]:
                target = Path(args.json) / f"{written.stack}.json"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(json.dumps(written.to_json(), indent=2, sort_keys=True))
                console.print(f"[dim]plan written to {target}[/]")
    if args.markdown:
        target = Path(args.markdown)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(markdown(reports))
        console.print(f"[dim]review written to {target}[/]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
