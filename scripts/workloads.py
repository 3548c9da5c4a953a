"""Fill a golden workload (examples/) for one cluster of a stack, and print it for kubectl.

    pulumi stack output --json -s prod.tenants > outputs.json
    python scripts/workloads.py examples/training-infiniband.yaml --outputs outputs.json --cluster eus2 \\
        --set NODES=16 | kubectl apply -f -

Without --outputs it previews the environment's tenants stack offline (`--stack`, default dev,
with the units it reads) and fills the template from that preview, which is how a pull request shows what a team would submit. A
template that needs something the stack does not have (an InfiniBand pool, a sandbox, a
workload identity) is refused with the placeholders it could not fill.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from planning.workloads import NotApplicable, placeholders, render, template_variables  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("template", type=Path)
    parser.add_argument("--outputs", type=Path, help="`pulumi stack output --json` of the <env>.tenants stack")
    parser.add_argument("--stack", default="dev", help="previewed offline when --outputs is not given")
    parser.add_argument("--cluster", help="cluster key (default: the stack's first)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a placeholder")
    args = parser.parse_args(argv)
    # A --set the template does not use is a typo (NODE=16 for NODES): refused before anything runs.
    used = placeholders(args.template.read_text())
    for item in args.set:
        name, equals, _ = item.partition("=")
        if not equals or name not in used:
            parser.error(
                f"--set {item}: {args.template.name} has no placeholder {name!r}"
                + ("" if equals else " (write NAME=VALUE)")
                + f"; it uses {', '.join(sorted(used))}"
            )

    if args.outputs:
        outputs = json.loads(args.outputs.read_text())
    else:
        from offline.environment import preview_environment
        from planning.layers import Unit

        environment = preview_environment(args.stack, only=[Unit("tenants")])
        if not environment.ok:
            print(environment.error, file=sys.stderr)
            return 1
        outputs = environment.plan(Unit("tenants")).outputs
    clusters = list(outputs["workloadContext"]["clusters"])
    cluster = args.cluster or clusters[0]
    if cluster not in clusters:
        print(f"no cluster {cluster!r}; the stack has {', '.join(clusters)}", file=sys.stderr)
        return 2
    variables = template_variables(outputs, cluster)
    variables.update(item.split("=", 1) for item in args.set)
    try:
        documents = render(args.template.read_text(), variables)
    except NotApplicable as missing:
        print(
            f"{args.template.name} does not apply to cluster {cluster}: it needs {missing}, which the stack's "
            "outputs do not provide",
            file=sys.stderr,
        )
        return 3
    print(yaml.safe_dump_all(documents, sort_keys=False), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
