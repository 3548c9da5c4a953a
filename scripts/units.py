#!/usr/bin/env python3
"""An environment's unit stacks, as the workflows run them (planning/layers.py).

    python scripts/units.py --environment prod               # the deploy waves, as text
    python scripts/units.py --environment prod --github      # GitHub step outputs (key=JSON)
    python scripts/units.py --environment dev --environment staging --environment prod --github

GitHub outputs: `units` (every unit of the given environments, for a matrix: environment,
layer, cluster, stack), and with one environment `canary` and `rest` (the cluster keys of the
fleet's canary wave and of the wave after it) and `fleet` (true with two or more clusters).
Bad config: the config message, exit 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from offline.environment import parsed_environment, waves
from validation.loader import ConfigError


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--environment", action="append", required=True)
    parser.add_argument("--github", action="store_true", help="print key=value lines for $GITHUB_OUTPUT")
    args = parser.parse_args(argv)
    units = []
    for environment in args.environment:
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
            {"environment": environment, "layer": unit.layer, "cluster": unit.cluster, "stack": unit.stack(environment)}
            for wave in environment_waves
            for unit in wave
        ]
        if args.github and len(args.environment) == 1:
            canary = set(config.fleet_settings.canary_clusters)
            print("canary=" + json.dumps([key for key in config.clusters if key in canary]))
            print("rest=" + json.dumps([key for key in config.clusters if key not in canary]))
            print("fleet=" + json.dumps(config.has_fleet))
    if args.github:
        print("units=" + json.dumps(units))
    return 0


if __name__ == "__main__":
    sys.exit(main())
