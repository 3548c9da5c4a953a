"""Paths of the Pod Security Standards' table (facts/pod_security.py), parsed once.

`spec.containers[*].ports[*].hostPort` is a walk: into `spec`, over every item of
`containers`, over every item of `ports`, to `hostPort`; `annotations[prefix/*]` is every key
of a map that starts with `prefix/`. Two readers walk them: the CEL of the training
namespaces' admission policy (planning/admission.py) and the contract tests' Pod Security
evaluator (contracts/pod_security.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Step:
    name: str
    every_item: bool = False  # `name[*]`: every item of a list
    key_prefix: str | None = None  # `name[prefix*]`: every key of a map with the prefix


def parse(path: str) -> tuple[Step, ...]:
    steps = []
    rest = path
    while rest:
        if "[" in rest.split(".", 1)[0]:
            name, after = rest.split("[", 1)
            inside, rest = after.split("]", 1)
            rest = rest.removeprefix(".")
            if inside == "*":
                steps.append(Step(name, every_item=True))
            else:
                steps.append(Step(name, key_prefix=inside.removesuffix("*")))
        else:
            name, _, rest = rest.partition(".")
            steps.append(Step(name))
    return tuple(steps)
