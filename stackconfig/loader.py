"""Read a stack's `platform:` config, validate it, and stop cleanly on any problem."""

from __future__ import annotations

import json
from typing import Any, Mapping

import pulumi
from pydantic import ValidationError

from stackconfig.checks import ConfigProblem, find_problems
from stackconfig.keys import NAMESPACE, key
from stackconfig.model import PlatformConfig


class ConfigError(pulumi.RunError):
    """Bad stack configuration. A RunError ends the program without a stack trace."""

    def __init__(self, problems: list[ConfigProblem]):
        self.problems = problems
        lines = "\n".join(f"  - {problem}" for problem in problems)
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        super().__init__(
            f"The stack configuration has {count}; nothing was deployed:\n{lines}\n"
            "Every key is documented in README.md under 'Configuration reference'."
        )


def _decode(value: Any) -> Any:
    """Pulumi hands structured config values to programs as JSON text."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _pydantic_problems(error: ValidationError) -> list[ConfigProblem]:
    problems = []
    for detail in error.errors():
        location = [part for part in detail["loc"] if part != "[key]"]
        reason = detail["msg"]
        if detail["type"] == "extra_forbidden":
            reason = "is not a known key (see README, 'Configuration reference')"
        elif detail["type"] == "missing":
            reason = "is required"
        elif detail["type"] == "literal_error":
            reason = f"{detail['input']!r} is not allowed: {reason[0].lower()}{reason[1:]}"
        elif detail["type"].startswith("ip_") or "pattern" in detail["type"]:
            reason = f"{detail['input']!r} is not valid: {reason[0].lower()}{reason[1:]}"
        elif detail["type"] == "value_error":
            reason = reason.removeprefix("Value error, ")
        problems.append(ConfigProblem(key(*location) if location else f"{NAMESPACE}:", reason))
    return problems


def parse_platform_config(raw: Mapping[str, Any]) -> PlatformConfig:
    """Validate `platform:` config given as {"platform:network": <json or value>, ...}.

    Keys of other namespaces (e.g. `azure-native:location`) are not ours and are ignored.
    Raises ConfigError listing every problem.
    """
    prefix = f"{NAMESPACE}:"
    section = {k[len(prefix) :]: _decode(v) for k, v in raw.items() if k.startswith(prefix)}
    try:
        config = PlatformConfig.model_validate(section)
    except ValidationError as error:
        raise ConfigError(sorted(set(_pydantic_problems(error)))) from None
    problems = find_problems(config)
    if problems:
        raise ConfigError(problems)
    return config


def current_stack_config() -> dict[str, Any]:
    """All config the Pulumi engine gave this program, from every source the SDK reads."""
    from pulumi.runtime import config as runtime_config

    merged = dict(runtime_config.get_config_env())
    merged.update(runtime_config.CONFIG.get())
    return merged


def load_environment() -> PlatformConfig:
    """The validated config of the stack being deployed."""
    return parse_platform_config(current_stack_config())
