"""Read a project's Pulumi.yaml and a stack file the way the Pulumi CLI hands them over.

The offline engine reads a unit's own stack file with it (as the CLI would); the program reads
the environment's file with it, since every unit of an environment shares that one document."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

# What a `secure:` value becomes offline: the real ciphertext needs the stack's secrets provider.
SECRET_PLACEHOLDER = "offline-secret-placeholder"


@dataclass(frozen=True)
class StackConfig:
    project: str
    stack: str
    # Fully qualified keys ("platform:network") to the string the CLI would pass:
    # scalars as text, objects and lists as JSON.
    values: dict[str, str]
    secret_keys: list[str]


# libyaml's loader where PyYAML has it (the same YAML 1.1 data, several times faster).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _project(project_dir: Path) -> dict[str, Any]:
    document: dict[str, Any] = yaml.load((project_dir / "Pulumi.yaml").read_text(), Loader=_LOADER)
    return document


def project_name(project_dir: Path) -> str:
    return str(_project(project_dir)["name"])


def stacks_dir(project_dir: Path) -> Path:
    """Where the stack files live (`stackConfigDir` in Pulumi.yaml, as the CLI reads it)."""
    return project_dir / str(_project(project_dir).get("stackConfigDir", "."))


def stack_file(project_dir: Path, stack: str) -> Path:
    return stacks_dir(project_dir) / f"Pulumi.{stack}.yaml"


def available_stacks(project_dir: Path) -> list[str]:
    return sorted(path.name[len("Pulumi.") : -len(".yaml")] for path in stacks_dir(project_dir).glob("Pulumi.*.yaml"))


def _replace_secure(value: Any) -> tuple[Any, bool]:
    """Swap `{secure: <ciphertext>}` for a placeholder; report whether any was found."""
    if isinstance(value, dict):
        if set(value) == {"secure"}:
            return SECRET_PLACEHOLDER, True
        found = False
        replaced = {}
        for k, v in value.items():
            replaced[k], inner = _replace_secure(v)
            found = found or inner
        return replaced, found
    if isinstance(value, list):
        pairs = [_replace_secure(v) for v in value]
        return [v for v, _ in pairs], any(found for _, found in pairs)
    return value, False


def as_cli_string(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def read_stack_config(project_dir: Path, stack: str) -> StackConfig:
    path = stack_file(project_dir, stack)
    if not path.exists():
        known = ", ".join(available_stacks(project_dir)) or "none"
        raise FileNotFoundError(f"no stack file {path} (stacks: {known})")
    return read_stack_file(path, project_name(project_dir), stack)


class StackFileError(ValueError):
    """A stack file that is not valid YAML, or that names a key twice: file and line first."""


def _duplicates(node: yaml.Node, path: Path, within: str = "") -> list[str]:
    """Every key a mapping names twice, with both lines and its whole key (`platform:teams.vision`):
    the Pulumi CLI's reader refuses them (gopkg.in/yaml.v3, "mapping key ... already defined"),
    PyYAML keeps the last in silence."""
    found = []
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for name, value in node.value:
            line = name.start_mark.line + 1
            whole = f"{within}.{name.value}" if within else str(name.value)
            if name.value in first:
                found.append(f"{_shown(path)}:{line}: {whole} is already set at line {first[name.value]}; keep one")
            else:
                first[name.value] = line
            # The document's `config:` is not part of a key's name.
            found += _duplicates(value, path, "" if not within and name.value == "config" else whole)
    elif isinstance(node, yaml.SequenceNode):
        for index, value in enumerate(node.value):
            found += _duplicates(value, path, f"{within}[{index}]")
    return found


def _shown(path: Path) -> str:
    """The file as a person names it: relative to where they run the command, when it is below."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def load_stack_yaml(path: Path) -> Any:
    """The stack file's document; StackFileError (file and line) for invalid YAML or a key set twice."""
    text = path.read_text()
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(error, "problem", None) or str(error)
        context = getattr(error, "context", None)
        raise StackFileError(f"{where}: not valid YAML: {problem}" + (f" ({context})" if context else "")) from None
    duplicates = _duplicates(node, path) if node is not None else []
    if duplicates:
        raise StackFileError("\n".join(duplicates))
    return yaml.load(text, Loader=_LOADER)


def read_stack_file(path: Path, project: str, stack: str) -> StackConfig:
    """A stack file's config as the CLI would pass it to `project`'s stack `stack` (an example
    file outside the project's stacks, too)."""
    document = load_stack_yaml(path) or {}
    values: dict[str, str] = {}
    secret_keys: list[str] = []
    for raw_key, raw_value in (document.get("config") or {}).items():
        # Keys without a namespace belong to the project, as in the CLI.
        full_key = raw_key if ":" in raw_key else f"{project}:{raw_key}"
        value, secret = _replace_secure(raw_value)
        values[full_key] = as_cli_string(value)
        if secret:
            secret_keys.append(full_key)
    return StackConfig(project, stack, values, secret_keys)
