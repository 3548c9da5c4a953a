#!/usr/bin/env python3
"""Print an environment's registry login server, from its stack file (no Azure call).

python scripts/registry.py prod    # -> crailabprod.azurecr.io
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planning.naming import Naming  # noqa: E402
from validation.loader import parse_platform_config  # noqa: E402
from validation.stackfile import read_stack_config  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    config = parse_platform_config(read_stack_config(ROOT, argv[0]).values, stack=argv[0])
    print(Naming(config.prefix, config.environment).registry_login_server())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
