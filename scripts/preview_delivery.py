#!/usr/bin/env python3
"""Offline preview of the delivery project (delivery/): what an administrator's `pulumi up`
of a delivery stack would create, without credentials.

    python scripts/preview_delivery.py [--stack acme] [--no-tree]

Each plan is then reviewed by the delivery's packs (policies/README.md: azure-platform with
config/delivery.json, and policies/delivery), as `pulumi preview -C delivery --policy-pack ...`
would. Exit 0 when every stack previews and passes its mandatory policies, 1 otherwise (bad
config included).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console

from offline.engine import run_program
from offline.identities import DELIVERY, identity_environment
from offline.policy import review_delivery
from offline.render import print_error, print_plan, print_review
from validation.stackfile import available_stacks, read_stack_config


def main(argv: list[str] | None = None) -> int:
    stacks = available_stacks(DELIVERY)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", "-s", action="append", choices=stacks, help="delivery stack (repeatable)")
    parser.add_argument("--no-tree", action="store_true", help="print counts only, not the resource tree")
    args = parser.parse_args(argv)
    console = Console(highlight=False, emoji=False, width=None if sys.stdout.isatty() else 220)
    failed = False
    for stack in args.stack or stacks:
        plan = run_program(read_stack_config(DELIVERY, stack), DELIVERY)
        if not plan.ok:
            print_error(plan, console)
            failed = True
            continue
        print_plan(plan, console, tree=not args.no_tree)
        identities = plan.of_type("azure-native:managedidentity:UserAssignedIdentity")
        environments = sorted({identity_environment(r.name) for r in identities})
        grants = plan.of_type("azure-native:authorization:RoleAssignment")
        console.print(
            f"[bold]{stack}:[/] {len(identities)} identities and {len(grants)} grants for "
            f"{', '.join(environments)}  [dim]({plan.seconds:.2f}s)[/]"
        )
        review = review_delivery(plan)
        print_review(review, console)
        failed |= not review.passed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
