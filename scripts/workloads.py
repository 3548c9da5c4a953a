"""Fill a workload template (the golden ones in examples/, or a team's own) for one cluster of a
stack, as one of the stack's workloads, and print it for kubectl.

    pulumi stack output --json -s prod.tenants > outputs.json
    python scripts/workloads.py examples/training-infiniband.yaml --outputs outputs.json \\
        --workload vision-trainer --cluster eus2 --set NODES=16 | kubectl apply -f -

`WORKLOAD_*` placeholders are the workload's (`platform:workloads.<name>`: its namespace, service
account and Kafka client), `TOPIC` a topic it may use (`--topic`; default the first it may use);
a golden template defaults to the workload its contract uses (contracts/golden.py). The cluster
defaults to the stack's first declared one. Without --outputs it previews the environment's
tenants stack offline (`--stack`, default dev, with the units it reads) and fills the template
from that preview, which is how a pull request shows what a team would submit. A template that
needs something the stack does not have (an InfiniBand pool, a sandbox, a workload in that
cluster) is refused with the placeholders it could not fill.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from contracts.golden import BY_NAME  # noqa: E402
from planning.workloads import (  # noqa: E402
    NotApplicable,
    default_cluster,
    placeholders,
    render,
    template_variables,
    workload_topics,
)
from stackconfig.stacks import stack_argument  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("template", type=Path)
    parser.add_argument("--outputs", type=Path, help="`pulumi stack output --json` of the <stack>.tenants stack")
    parser.add_argument(
        "--stack", default="dev", type=stack_argument, help="previewed offline when --outputs is not given"
    )
    parser.add_argument("--cluster", help="cluster key (default: the stack's first declared)")
    parser.add_argument("--workload", help="the platform:workloads entry (default: a golden template's own)")
    parser.add_argument("--topic", help="a Kafka topic the workload may use (default: the first it may use)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a placeholder")
    args = parser.parse_args(argv)
    # A --set the template does not use is a typo (NODE=16 for NODES): refused before anything runs.
    template = args.template.read_text()
    used = placeholders(template)
    for item in args.set:
        name, equals, _ = item.partition("=")
        if equals and (name == "TOPIC" or name.startswith("WORKLOAD_")):
            # What the workload is allowed comes from its config: --workload and --topic, checked.
            parser.error(f"--set {item}: {name} is the workload's own; choose it with --workload or --topic")
        if not equals or name not in used:
            parser.error(
                f"--set {item}: {args.template.name} has no placeholder {name!r}"
                + ("" if equals else " (write NAME=VALUE)")
                + f"; it uses {', '.join(sorted(used))}"
            )
    golden = BY_NAME.get(args.template.stem) if args.template.resolve().parent == ROOT / "examples" else None
    workload = args.workload or (golden.workload if golden else None)
    if workload is None and any(name.startswith("WORKLOAD_") for name in used):
        parser.error(f"{args.template.name} is filled as one of the stack's workloads: name it with --workload")

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
    context = outputs["workloadContext"]
    # An on-premises site too (docs/hybrid.md): a job for its `gpu` queue, filled as the site has it.
    clusters = [*context["clusters"], *context.get("sites", {})]
    cluster = args.cluster or default_cluster(outputs, workload)
    if cluster not in clusters:
        print(f"no cluster {cluster!r}; the stack has {', '.join(clusters)}", file=sys.stderr)
        return 2
    if workload is not None and workload not in context["workloads"]:
        known = ", ".join(sorted(context["workloads"])) or "none"
        print(f"no workload {workload!r} in platform:workloads; the stack has {known}", file=sys.stderr)
        return 2
    topic = args.topic
    if workload is not None and "TOPIC" in used:
        # A golden template says how it uses its topic (a producer writes): only topics the
        # workload's ACLs allow that way will do.
        need = golden.topic[1] if golden and golden.topic else None
        topics = {
            t: a for t, a in workload_topics(outputs, workload).items() if need is None or a in (need, "readWrite")
        }
        wanted = golden.topic[0] if golden and golden.topic and workload == golden.workload else None
        topic = topic or wanted or next(iter(topics), None)
        if topic not in topics:
            allowed = ", ".join(f"{t} ({a})" for t, a in workload_topics(outputs, workload).items()) or "none"
            how = f" to {need}" if need else ""
            print(f"workload {workload} may not use topic {topic!r}{how}; its topics: {allowed}", file=sys.stderr)
            return 2
    variables = template_variables(outputs, cluster, workload, topic)
    variables.update(item.split("=", 1) for item in args.set)
    try:
        documents = render(template, variables)
    except NotApplicable as missing:
        where = f"cluster {cluster}" + (f" as workload {workload}" if workload else "")
        print(
            f"{args.template.name} does not apply to {where}: it needs {missing}, which the stack's outputs do not provide",
            file=sys.stderr,
        )
        return 3
    print(yaml.safe_dump_all(documents, sort_keys=False), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
