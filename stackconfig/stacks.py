"""The one naming rule for platform stacks, which every tool checks with the same message.

An environment (dev, staging, prod) is what the policy packs, the delivery identities, the state
container and the GitHub environments are keyed by (`policies/<pack>/config/<env>.json`,
`<env>-<layer>`); adding one is a change of code, not of config. A stack is one deployment of an
environment: `prod`, or a variant such as `prod-scale` with its own stack file, prefix and address
plan. Its unit stacks are `<stack>.<unit>` (planning/layers.py), so the name holds no dot.
"""

from __future__ import annotations

import re
from typing import get_args

from stackconfig.model.base import EnvironmentName

ENVIRONMENTS: tuple[str, ...] = get_args(EnvironmentName)
VARIANT_MAX = 10
STACK_NAME = re.compile(rf"^({'|'.join(ENVIRONMENTS)})(-[a-z0-9]{{1,{VARIANT_MAX}}})?$")
RULE = (
    "a platform stack is named after its environment: `dev`, `staging` or `prod`, or `<environment>-<variant>` "
    f"with a variant of 1-{VARIANT_MAX} lowercase letters and digits (`prod-scale`, `staging-eu`); its "
    "platform:environment is that environment (docs/environments.md)"
)


def environment_of(stack: str) -> str | None:
    """The environment a well-formed stack name deploys (`prod-scale` -> `prod`), else None."""
    match = STACK_NAME.fullmatch(stack)  # `$` would let a trailing newline through
    return match.group(1) if match else None


def stack_name_problem(stack: str, environment: str | None = None) -> str | None:
    """Why `stack` breaks the rule (or names another environment than `environment`), or None."""
    named = environment_of(stack)
    if named is None:
        fix = ""
        if environment in ENVIRONMENTS:
            # What the name says beyond its environment: `prod-synthetic-50` -> `prod-synthetic5`.
            rest = stack.lower().removeprefix(f"{environment}-")
            variant = re.sub(r"[^a-z0-9]", "", rest)[:VARIANT_MAX] or "x"
            fix = f"; name it `{environment}` or `{environment}-{variant}`"
        return f"{stack!r} breaks the stack naming rule{fix}: {RULE}"
    if environment is not None and named != environment:
        return (
            f"{stack!r} is a stack of {named}, but its platform:environment is {environment}; name the stack "
            f"`{environment}-<variant>` or set platform:environment: {named}: {RULE}"
        )
    return None


def stack_argument(value: str) -> str:
    """argparse `type=` for a tool's `--stack`: the rule's message instead of a traceback."""
    import argparse

    if problem := stack_name_problem(value):
        raise argparse.ArgumentTypeError(problem)
    return value
