"""Print what the delivery project grants an environment's deploy and plan identities, as the
permissions table of docs/deploying.md (`make docs` writes prod's there), from the same model the tests
check every stack against.

    venv/bin/python scripts/permissions.py [--stack prod]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from offline.identities import markdown_table, stack_identities  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="prod", help="stack whose environment to show (default prod)")
    args = parser.parse_args(argv)
    print(markdown_table(stack_identities(args.stack)), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
