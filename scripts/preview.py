#!/usr/bin/env python3
"""Offline preview: run the Pulumi program under mocks and print what it would create.

    python scripts/preview.py --stack prod [--json out/prod.json] [--no-tree]
    python scripts/preview.py --stack dev --stack staging --stack prod
    python scripts/preview.py --stack prod --capacity   # the capacity plan as tables

No Pulumi CLI, cloud credentials or network needed. Exit 0 when every stack previews,
1 when a stack's program fails (bad config included), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402

from offline.engine import PROJECT_ROOT, preview_stack  # noqa: E402
from offline.render import capacity_table, headroom_table, print_error, print_plan  # noqa: E402
from offline.stackfile import available_stacks, read_stack_config  # noqa: E402
from planning.capacity import plan_capacity  # noqa: E402
from stackconfig.loader import parse_platform_config  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    stacks = available_stacks(PROJECT_ROOT)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", "-s", action="append", choices=stacks, help="stack to preview (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="write the captured plan as JSON (one stack: a file; several: a folder)")
    parser.add_argument("--no-tree", action="store_true", help="print counts only, not the resource tree")
    parser.add_argument("--capacity", action="store_true", help="also print the capacity plan and address headroom")
    args = parser.parse_args(argv)

    # Logs (CI, pipes) get whole lines: rich would crop them at 80 columns.
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 220)
    failed = False
    selected = args.stack or ["dev"]
    for stack in selected:
        plan = preview_stack(stack)
        if not plan.ok:
            print_error(plan, console)
            failed = True
            continue
        print_plan(plan, console, tree=not args.no_tree)
        # The program accepted this config, so it parses here too.
        capacity = plan_capacity(parse_platform_config(read_stack_config(PROJECT_ROOT, stack).values))
        console.print(f"[bold]Capacity:[/] {capacity.summary()}")
        if args.capacity:
            console.print(capacity_table(capacity))
            console.print(headroom_table(capacity))
        if args.json:
            target = Path(args.json)
            if len(selected) > 1:
                target = target / f"{stack}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(plan.to_json(), indent=2, sort_keys=True))
            console.print(f"[dim]plan written to {target}[/]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
