#!/usr/bin/env python3
"""Offline preview and policy review: run the Pulumi program under mocks, print what it would
create, and evaluate the policy packs with the stack's environment's enforcement files.

    python scripts/preview.py --stack prod [--json out/prod.json] [--no-tree]
    python scripts/preview.py --stack dev --stack staging --stack prod --markdown out/review.md
    python scripts/preview.py --stack prod --capacity   # the capacity plan as tables
    python scripts/preview.py --stack prod --no-policies

No Pulumi CLI, cloud credentials or network needed. Exit 0 when every stack previews and passes
its mandatory policies, 1 when a stack's program fails (bad config included), a mandatory
policy is violated or a waiver has expired, 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console

from offline.engine import PROJECT_ROOT, preview_stack
from offline.policy import PolicyConfigError, review_plan
from offline.render import capacity_table, headroom_table, print_error, print_plan, print_review
from offline.report import StackReport, markdown
from validation.stackfile import available_stacks, read_stack_config
from planning.capacity import plan_capacity
from validation.loader import parse_platform_config


def main(argv: list[str] | None = None) -> int:
    stacks = available_stacks(PROJECT_ROOT)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", "-s", action="append", choices=stacks, help="stack to preview (repeatable)")
    parser.add_argument(
        "--json", metavar="PATH", help="write the captured plan as JSON (one stack: a file; several: a folder)"
    )
    parser.add_argument("--no-tree", action="store_true", help="print counts only, not the resource tree")
    parser.add_argument("--capacity", action="store_true", help="also print the capacity plan and address headroom")
    parser.add_argument("--no-policies", action="store_true", help="skip the policy review")
    parser.add_argument(
        "--markdown", metavar="PATH", help="write the review of every stack as Markdown (for a pull request)"
    )
    args = parser.parse_args(argv)

    # Logs (CI, pipes) get whole lines: rich would crop them at 80 columns.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 220)
    failed = False
    selected = args.stack or ["dev"]
    reports: list[StackReport] = []
    for stack in selected:
        plan = preview_stack(stack)
        if not plan.ok:
            print_error(plan, console)
            failed = True
            reports.append(StackReport(plan, None, None))
            continue
        print_plan(plan, console, tree=not args.no_tree)
        # The program accepted this config, so it parses here too.
        config = parse_platform_config(read_stack_config(PROJECT_ROOT, stack).values)
        capacity = plan_capacity(config)
        console.print(f"[bold]Capacity:[/] {capacity.summary()}")
        if args.capacity:
            console.print(capacity_table(capacity))
            console.print(headroom_table(capacity))
        review, problem = None, None
        if not args.no_policies:
            try:
                review = review_plan(plan, config.environment)
            except PolicyConfigError as error:
                problem = f"the policy configuration of {config.environment} is invalid:\n{error}"
                console.print(f"[bold red]error:[/] {problem}", highlight=False)
            else:
                print_review(review, console)
            failed |= problem is not None or review is None or not review.passed
        reports.append(StackReport(plan, review, capacity.summary(), problem))
        if args.json:
            target = Path(args.json)
            if len(selected) > 1:
                target = target / f"{stack}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(plan.to_json(), indent=2, sort_keys=True))
            console.print(f"[dim]plan written to {target}[/]")
    if args.markdown:
        target = Path(args.markdown)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(markdown(reports))
        console.print(f"[dim]review written to {target}[/]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
