#!/usr/bin/env python3
"""Write each policy pack's `--policy-pack-config` file for one unit stack, as the Pulumi workflow
passes them: the environment's enforcement (policies/<pack>/config/<env>.json) with the stack
rules that unit cannot judge alone turned off (offline/environment.py, UNIT_BLIND_RULES; the
review of the environment's union, `make review`, judges those).

    python scripts/policy_config.py --stack prod-scale --layer tenants --out "$RUNNER_TEMP/policy"

The stack is named as `pulumi up` names it (its environment, here prod, picks the files).

writes <out>/<pack>.json for every pack and prints their paths, one per line, in pack order.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from offline.environment import unit_pack_document
from offline.policy import load_packs
from planning.layers import LAYERS
from stackconfig.stacks import environment_of, stack_argument


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--stack", required=True, type=stack_argument, help="the platform stack: prod, prod-scale")
    parser.add_argument("--layer", required=True, choices=LAYERS)
    parser.add_argument("--out", required=True, type=Path, help="folder to write <pack>.json into")
    args = parser.parse_args(argv)
    environment = environment_of(args.stack)
    assert environment is not None  # stack_argument checked the name
    args.out.mkdir(parents=True, exist_ok=True)
    for pack in load_packs():
        if not pack.config_file(environment).exists():
            parser.error(f"{pack.config_file(environment)} does not exist")
        target = args.out / f"{pack.name}.json"
        target.write_text(json.dumps(unit_pack_document(pack, environment, args.layer), indent=2) + "\n")
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
