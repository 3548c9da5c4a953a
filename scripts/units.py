#!/usr/bin/env python3
"""A platform stack's unit stacks, as the workflows run them (planning/layers.py).

    python scripts/units.py --stack prod               # the deploy waves, as text
    python scripts/units.py --stack prod --github      # GitHub step outputs (key=JSON)
    python scripts/units.py --stack dev --stack staging --stack prod --github
    python scripts/units.py --stack dev --init   # the one-time `pulumi stack init` commands

Stacks are named as stackconfig/stacks.py says (`prod`, `prod-<variant>`).
GitHub outputs: `units` (every unit of the given stacks, for a matrix: environment, platform
stack, layer, cluster, unit stack), and with one stack `environment` (its environment),
`canary` and `rest` (the cluster keys of the
fleet's canary wave and of the wave after it), `sites` (the on-premises sites' keys, deployed after
the tenants) and `fleet` (true with two or more clusters).
`--init` prints, instead, the commands that create the environment's unit stacks once (its state
container, each stack's secrets key, its provider pinned to platform:subscriptionId), with the
names the delivery project gives them (the delivery stack that grants the environment;
`--delivery` names it when several do).
Bad config: the config message, exit 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from offline.environment import parsed_environment, waves
from stackconfig.stacks import stack_argument
from validation.loader import ConfigError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stack", action="append", required=True, type=stack_argument, help="a platform stack")
    parser.add_argument("--github", action="store_true", help="print key=value lines for $GITHUB_OUTPUT")
    parser.add_argument("--init", action="store_true", help="print the one-time stack init commands")
    parser.add_argument("--delivery", help="the delivery stack that names the state (default: the one granting it)")
    args = parser.parse_args(argv)
    if args.init:
        return print_init(args.stack, args.delivery)
    units = []
    for environment in args.stack:
        try:
            config = parsed_environment(environment)
        except ConfigError as error:
            print(error, file=sys.stderr)
            return 1
        environment_waves = waves(config)
        if not args.github:
            print(f"{environment}:")
            for number, wave in enumerate(environment_waves, 1):
                print(f"  {number}. " + ", ".join(unit.stack(environment) for unit in wave))
        units += [
            {
                "environment": config.environment,
                "platform_stack": environment,
                "layer": unit.layer,
                "cluster": unit.cluster,
                "stack": unit.stack(environment),
            }
            for wave in environment_waves
            for unit in wave
        ]
        if args.github and len(args.stack) == 1:
            print("environment=" + config.environment)
            canary = set(config.fleet_settings.canary_clusters)
            print("canary=" + json.dumps([key for key in config.clusters if key in canary]))
            print("rest=" + json.dumps([key for key in config.clusters if key not in canary]))
            print("fleet=" + json.dumps(config.has_fleet))
            print("sites=" + json.dumps(list(config.on_prem_clusters)))
    if args.github:
        print("units=" + json.dumps(units))
    return 0


def print_init(environments: list[str], delivery_stack: str | None) -> int:
    from components.delivery.program import delivery_names, delivery_of
    from planning.delivery import stack_init_commands

    for environment in environments:
        try:
            config = parsed_environment(environment)
            _, delivery = delivery_of(environment, config.environment, delivery_stack)
        except (ConfigError, LookupError) as error:
            print(error, file=sys.stderr)
            return 1
        stacks = [(unit.stack(environment), unit.layer) for wave in waves(config) for unit in wave]
        # The state container and keys are the environment's (a variant shares them), the stacks its own.
        for line in stack_init_commands(delivery_names(delivery), config.environment, config.subscription_id, stacks):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
