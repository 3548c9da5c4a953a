"""Write (or, with --check, verify) the generated pages under docs/.

Each page restates data the code holds (the config model, policies, catalogues, pins); a test
runs `--check` so a committed page never drifts from its source.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from offline.stackfile import available_stacks, read_stack_config  # noqa: E402
from stackconfig import reference  # noqa: E402
from validation.loader import ConfigError, parse_platform_config  # noqa: E402


def stack_configs() -> dict:
    configs = {}
    order = {"dev": 0, "staging": 1, "prod": 2}
    for stack in sorted(available_stacks(ROOT), key=lambda name: (order.get(name.split("-")[0], 3), name)):
        values = read_stack_config(ROOT, stack).values
        configs[stack] = parse_platform_config(values, stack=stack)
    return configs


def example_problems() -> str:
    """What prod's stack reports with a node subnet and a pod range too small for its pools."""
    values = dict(read_stack_config(ROOT, "prod").values)
    network = json.loads(values["platform:network"])
    network["podCidr"] = "100.64.0.0/16"
    clusters = json.loads(values["platform:clusters"])
    first = next(iter(clusters.values()))
    first["subnets"]["nodes"] = first["subnets"]["nodes"].rsplit("/", 1)[0] + "/22"
    values.update({"platform:network": json.dumps(network), "platform:clusters": json.dumps(clusters)})
    try:
        parse_platform_config(values, stack="prod")
    except ConfigError as error:
        return str(error)
    raise AssertionError("prod with a /22 node subnet and a /16 pod range should not validate")


def pages() -> dict[Path, str]:
    """Every generated page and its content."""
    return {ROOT / "docs" / "configuration.md": reference.render_markdown(stack_configs(), example_problems())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if a committed page differs")
    args = parser.parse_args(argv)
    stale = []
    for path, text in pages().items():
        if path.exists() and path.read_text() == text:
            continue
        if args.check:
            stale.append(path.relative_to(ROOT))
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("stale generated pages (run `make docs`): " + ", ".join(map(str, stale)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
