"""Read a stack's `platform:` config, validate it, and stop cleanly on any problem."""

from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Mapping
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

import pulumi
from pydantic import BaseModel, ValidationError

from planning import streaming as streaming_plan
from planning.layers import UNIT_SEPARATOR, Unit, parse_stack
from stackconfig.credentials import WHERE_SECRETS_BELONG, find_credentials
from stackconfig.keys import NAMESPACE, key
from stackconfig.model import PlatformConfig
from stackconfig.stacks import environment_of, stack_name_problem
from stackconfig.yaml_scalars import ambiguous_scalars
from validation.checks import ConfigProblem, find_problems, ordered
from validation.checks.repository import collisions
from validation.checks.streaming import check_streaming
from validation.stackfile import StackFileError, available_stacks, read_stack_config, stack_file

# Config namespaces a stack file may use: the program's and its providers'. Anything else (a
# misspelt `platfrom:protect`) would be read by nothing.
KNOWN_NAMESPACES = (NAMESPACE, "azure-native", "kubernetes", "pulumi")
_ADDRESS = re.compile(r"^[0-9./]+$")


class ConfigError(pulumi.RunError):
    """Bad stack configuration. A RunError ends the program without a stack trace."""

    def __init__(
        self, problems: list[ConfigProblem], unit_stack: str | None = None, reference: str = "docs/configuration.md"
    ):
        self.problems = problems
        lines = "\n".join(f"  - {problem}" for problem in problems)
        count = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}"
        # A unit checks the environment's whole file: the problem may be in a key another unit
        # deploys, and every unit refuses until it is fixed.
        scope = (
            f" ({unit_stack} checks the environment's whole stack file, so every unit refuses until it is fixed)"
            if unit_stack
            else ""
        )
        super().__init__(
            f"The stack configuration has {count}; nothing was deployed{scope}:\n{lines}\n"
            f"Every key is documented in {reference}."
        )


def _pydantic_problems(error: ValidationError, namespace: str = NAMESPACE) -> list[ConfigProblem]:
    problems = []
    for detail in error.errors():
        location = [part for part in detail["loc"] if part != "[key]"]
        reason = detail["msg"]
        if detail["type"] == "extra_forbidden":
            nearest = _nearest_key(location)
            hint = f"; did you mean {nearest}?" if nearest else " (see docs/configuration.md)"
            reason = f"is not a known key{hint}"
        elif detail["type"] == "missing":
            reason = "is required"
        elif detail["type"] == "literal_error":
            reason = f"{detail['input']!r} is not allowed: {reason[0].lower()}{reason[1:]}"
        elif detail["type"] in ("int_type", "bool_type", "float_type", "string_type") and isinstance(
            detail["input"], (bool, int, float, str)
        ):
            wanted = {
                "int_type": "a whole number",
                "bool_type": "true or false",
                "float_type": "a number",
                "string_type": "text (quote it)",
            }[detail["type"]]
            reason = f"{json.dumps(detail['input'])} is not {wanted}; numbers and booleans are never converted"
        elif detail["type"].startswith("ip_") or "pattern" in detail["type"]:
            reason = f"{detail['input']!r} is not valid: {reason[0].lower()}{reason[1:]}"
        elif detail["type"] == "value_error" and isinstance(detail["input"], str) and _ADDRESS.match(detail["input"]):
            reason = f"{detail['input']!r} is not valid: {reason.removeprefix('Value error, ')}"
        elif detail["type"] == "value_error":
            reason = reason.removeprefix("Value error, ")
        where = key(*location) if location else f"{NAMESPACE}:"
        problems.append(ConfigProblem(namespace + where[len(NAMESPACE) :], reason))
    return problems


def _unwrap(annotation: Any) -> Any:
    """The type inside Optional[...] and Annotated[...]."""
    while get_origin(annotation) in (Annotated, Union, UnionType):
        arguments = [a for a in get_args(annotation) if a is not type(None)]
        annotation = arguments[0]
    return annotation


def _nearest_key(location: list[Any]) -> str | None:
    """The known key closest to a misspelt one, among its siblings in the config model."""
    current: Any = PlatformConfig
    for part in location[:-1]:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = next((f for n, f in current.model_fields.items() if part in (f.alias, n)), None)
            if field is None:
                return None
            current = _unwrap(field.annotation)
        elif get_origin(current) is dict:
            current = _unwrap(get_args(current)[1])
        elif get_origin(current) is list:
            current = _unwrap(get_args(current)[0])
        else:
            return None
    if not (isinstance(current, type) and issubclass(current, BaseModel)):
        return None
    known = [f.alias or n for n, f in current.model_fields.items()]
    matches = difflib.get_close_matches(str(location[-1]), known, n=1, cutoff=0.6)
    return matches[0] if matches else None


def _decode(value: Any) -> Any:
    """Pulumi hands structured config values to programs as JSON text."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _top_level_scalar(name: str, value: Any) -> Any:
    """The CLI hands top-level scalars over as text; read booleans and numbers as JSON, only
    where the model wants one (a `prefix: "123"` stays text)."""
    field = next((f for n, f in PlatformConfig.model_fields.items() if (f.alias or n) == name), None)
    if field is not None and field.annotation is bool and value in ("True", "False"):
        return value == "True"  # what `pulumi config set` may store, and the SDK's get_bool reads
    if field is not None and field.annotation in (bool, int) and isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return _decode(value)


def _namespace_problems(raw: Mapping[str, Any]) -> list[ConfigProblem]:
    problems = []
    for name in raw:
        namespace = name.split(":", 1)[0] if ":" in name else NAMESPACE
        if namespace not in KNOWN_NAMESPACES:
            problems.append(
                ConfigProblem(
                    name,
                    f"nothing reads the {namespace}: namespace (known: {', '.join(KNOWN_NAMESPACES)}); "
                    "is it a misspelt platform: key?",
                )
            )
    return problems


def unit_problems(config: PlatformConfig, unit: Unit, stack: str) -> list[ConfigProblem]:
    """A unit stack that names what the environment does not have."""
    if unit.layer == "cluster" and unit.cluster not in config.unit_cluster_keys():
        return [
            ConfigProblem(
                key("clusters"),
                f"stack {stack} deploys cluster {unit.cluster}, which is not one of the environment's "
                f"clusters or sites ({', '.join(config.unit_cluster_keys())})",
            )
        ]
    if unit.layer == "fleet" and not config.has_fleet:
        return [ConfigProblem(key("clusters"), f"stack {stack}: a fleet needs two or more clusters")]
    return []


# Keys whose values come from the delivery project's output `<env>StackSettings`, which the
# delivery itself never needs to read.
DELIVERY_SUPPLIED = re.compile(rf"^{NAMESPACE}:serving\.apis\.[^.]+\.applicationClientId$")


def parse_platform_config(
    raw: Mapping[str, Any],
    *,
    stack: str | None = None,
    stack_file: Path | None = None,
    unit: Unit | None = None,
    unit_stack: str | None = None,
    others: Mapping[str, PlatformConfig] | None = None,
    for_delivery: bool = False,
) -> PlatformConfig:
    """Validate `platform:` config given as {"platform:network": <json or value>, ...}.

    Keys of the providers' namespaces (e.g. `azure-native:location`) are not ours and pass;
    any other namespace is a problem. `stack` must follow the naming rule (stackconfig/stacks.py);
    `stack_file`, when given, is checked for values YAML would convert; `others` (the repository's
    other stacks) for names and ranges this stack may not share (checks/repository.py). Raises ConfigError
    listing every problem; no message repeats a value that looks like a credential.
    `for_delivery`: the delivery project reads the stack file before it holds what the delivery
    supplies (DELIVERY_SUPPLIED): those keys' problems are not its own.
    """
    prefix = f"{NAMESPACE}:"
    section = {k[len(prefix) :]: _top_level_scalar(k[len(prefix) :], v) for k, v in raw.items() if k.startswith(prefix)}
    problems = _namespace_problems(raw)
    if stack_file is not None and stack_file.exists():
        problems += [ConfigProblem(where, reason) for where, reason in ambiguous_scalars(stack_file.read_text())]
    credentials = find_credentials(section)
    hidden = {where for where, _, _ in credentials}
    problems += [ConfigProblem(where, f"looks like {kind}; {WHERE_SECRETS_BELONG}") for where, kind, _ in credentials]
    config = None
    try:
        config = PlatformConfig.model_validate_json(json.dumps(section), strict=True)
    except ValidationError as error:
        problems += [
            p
            for p in _pydantic_problems(error)
            if not any(p.key == h or p.key.startswith(h + ".") or p.key.startswith(h + "[") for h in hidden)
        ]
    if config is not None:
        problems += find_problems(config)
    if stack is not None and (naming := stack_name_problem(stack, config.environment if config else None)):
        # The name decides the policies, identities and GitHub environments a deploy gets.
        where = "stack" if environment_of(stack) is None else key("environment")
        problems.append(ConfigProblem(where, naming, cause=True))
    # Flink jobs become workloads, Kafka clients and a checkpoint account for the rest of the
    # program; expanded once, and only when they are sound (as find_problems expands them).
    expanded = config if config is None or list(check_streaming(config)) else streaming_plan.expand(config)
    if expanded is not None and stack is not None and others:
        problems += collisions(stack, expanded, others)
    if config is not None and unit is not None:
        problems += unit_problems(config, unit, unit_stack or unit.stack(config.environment))
    if for_delivery:
        problems = [p for p in problems if not DELIVERY_SUPPLIED.match(p.key)]
    if problems or config is None:
        raise ConfigError(
            _redacted(ordered(set(problems)), [value for _, _, value in credentials]),
            (unit_stack or unit.stack(stack or "")) if unit is not None else None,
        )
    assert expanded is not None  # config is, once no problem was found
    return expanded


def _redacted(problems: list[ConfigProblem], secrets: list[str]) -> list[ConfigProblem]:
    result = []
    for problem in problems:
        reason = problem.reason
        for secret in secrets:
            reason = reason.replace(secret, "<redacted>")
        result.append(ConfigProblem(problem.key, reason, cause=problem.cause))
    return result


def current_stack_config() -> dict[str, Any]:
    """All config the Pulumi engine gave this program, from every source the SDK reads."""
    from pulumi.runtime import config as runtime_config

    merged = dict(runtime_config.get_config_env())
    merged.update(runtime_config.CONFIG.get())
    return merged


def stack_file_of(stack: str, project_dir: Path | None = None) -> Path:
    """The stack file the CLI reads (Pulumi.yaml's stackConfigDir), relative to the project."""
    return stack_file(project_dir or Path.cwd(), stack)


def environment_config(environment: str, own: Mapping[str, Any], project_dir: Path | None = None) -> dict[str, str]:
    """What a unit of `environment` is configured with: the environment's stack file, read as
    the CLI reads a stack file. The unit's own stack file holds its secrets provider only;
    `platform:` keys there would be read by one unit and not the others, so they are problems,
    as are `secure:` values in the environment's file (a unit cannot decrypt another stack's)."""
    path = stack_file_of(environment, project_dir)
    stray = [name for name in own if name.startswith(f"{NAMESPACE}:")]
    problems = [
        ConfigProblem(name, f"is set on a unit's stack; it belongs in {path.name}, which every unit reads")
        for name in stray
    ]
    if not path.exists():
        problems.append(ConfigProblem(f"{NAMESPACE}:", f"{path.name} not found: every unit of {environment} reads it"))
        raise ConfigError(problems)
    document = read_stack_config(project_dir or Path.cwd(), environment)
    problems += [ConfigProblem(name, f"is a secret; {WHERE_SECRETS_BELONG}") for name in document.secret_keys]
    # Providers read their settings from the stack being deployed, never from this file.
    problems += [
        ConfigProblem(
            name,
            f"configures a provider, which reads only its own stack's file: set it in each unit's stack file, not {path.name}",
        )
        for name in document.values
        if ":" in name and name.split(":", 1)[0] in KNOWN_NAMESPACES and not name.startswith(f"{NAMESPACE}:")
    ]
    if problems:
        raise ConfigError(problems)
    return document.values


def load_environment() -> tuple[PlatformConfig, Unit | None]:
    """The validated config of the environment being deployed, and the unit of this stack
    (None for the single-stack layout)."""
    stack = pulumi.get_stack()
    try:
        environment, unit = parse_stack(stack)
    except ValueError as error:
        raise ConfigError([ConfigProblem("stack", str(error))]) from None
    others = repository_stacks(Path.cwd(), environment)
    if unit is None:
        config = parse_platform_config(
            current_stack_config(), stack=stack, stack_file=stack_file_of(stack), others=others
        )
        return config, None
    raw = environment_config(environment, current_stack_config())
    return (
        parse_platform_config(
            raw, stack=environment, stack_file=stack_file_of(environment), unit=unit, unit_stack=stack, others=others
        ),
        unit,
    )


def repository_stacks(project_dir: Path, stack: str) -> dict[str, PlatformConfig]:
    """The project's other platform stacks that are valid on their own (a broken one is its own
    preview's problem), to check what this stack may not share with them."""
    found = {}
    for other in available_stacks(project_dir):
        if other != stack and UNIT_SEPARATOR not in other:
            path = stack_file(project_dir, other)
            config = _valid_stack(project_dir, other, path.stat().st_mtime_ns)
            if config is not None:
                found[other] = config
    return found


@functools.lru_cache(maxsize=32)
def _valid_stack(project_dir: Path, stack: str, _mtime: int) -> PlatformConfig | None:
    try:
        return parse_platform_config(read_stack_config(project_dir, stack).values, stack=stack)
    except (ConfigError, StackFileError):
        return None
