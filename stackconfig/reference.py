"""The configuration reference, read from the model: every key a stack file may set.

`docs/configuration.md` is generated from this (scripts/docs.py) and a test fails when the
committed page differs, so a field's `description` in `stackconfig.model` is the only place a
key is documented.
"""

from __future__ import annotations

import ast
import json
import re
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from stackconfig.keys import NAMESPACE
from stackconfig.model import PlatformConfig


@dataclass(frozen=True)
class Key:
    """One config key: `path` is dotted camelCase, `<name>` where a map takes any name, `[]` a list."""

    path: str
    model: type[BaseModel]
    field: str
    info: FieldInfo
    section: bool  # an object (or map or list of objects) whose keys are listed under it

    @property
    def description(self) -> str:
        return self.info.description or ""

    @property
    def required(self) -> bool:
        return self.info.is_required()


def _models_in(annotation: Any) -> list[tuple[type[BaseModel], str]]:
    """Models inside an annotation and how a path reaches them: "" direct, ".<name>" map, "[]" list."""
    found: list[tuple[type[BaseModel], str]] = []
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [(annotation, "")]
    origin = typing.get_origin(annotation)
    arguments = typing.get_args(annotation)
    if origin is dict:
        return [(model, ".<>" + step) for model, step in _models_in(arguments[1])]
    if origin is list:
        return [(model, "[]" + step) for model, step in _models_in(arguments[0])]
    for argument in arguments:
        found += _models_in(argument)
    return found


# What a map's keys are called in a path: `clusters.<cluster>.gpuPools.<pool>`.
PLACEHOLDERS = {
    "regions": "<region>",
    "clusters": "<cluster>",
    "nodePools": "<pool>",
    "gpuPools": "<pool>",
    "teams": "<team>",
    "workloads": "<workload>",
    "accounts": "<account>",
    "cacheRules": "<rule>",
    "clients": "<workload>",
    "quotas": "<team>",
    "storage": "<account>",
    "topics": "<topic>",
}


def keys(model: type[BaseModel] = PlatformConfig, prefix: str = "") -> list[Key]:
    """Every key under `model`, depth first, in declaration order."""
    result: list[Key] = []
    for name, info in model.model_fields.items():
        path = f"{prefix}{info.alias or name}"
        inner = _models_in(info.annotation)
        result.append(Key(path, model, name, info, section=bool(inner)))
        for nested, step in inner:
            step = step.replace("<>", PLACEHOLDERS.get(info.alias or name, "<name>"), 1)
            result += keys(nested, f"{path}{step}.")
    return result


# How the model's type names read in the reference.
TYPE_NAMES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "bool",
    "Uuid": "UUID",
    "UuidList": "list of UUID",
    "IPv4Network": "CIDR",
    "IPv4Address": "IPv4 address",
    "ShortName": "short name",
    "RegionName": "region",
    "AgentPoolName": "pool name",
    "NamespaceName": "namespace",
    "VmSize": "VM size",
    "GpuVmSizeName": "GPU VM size",
    "PremiumStorageVmSize": "VM size",
    "MaxSurge": "surge (`10%` or a count)",
    "Duration": "duration (`10s`, `10m`, `1h`)",
    "Taint": "taint (`key=value:Effect`)",
    "KubernetesVersion": "Kubernetes version",
    "CapacityReservationGroupId": "resource ID",
    "ResourceGroupId": "resource ID",
    "Fqdn": "host name or `*.domain`",
    "ContainerName": "container name",
    "SecretName": "secret name",
    "TopicName": "topic name",
    "UpstreamRepository": "repository",
    "TargetRepository": "repository",
}


def _literal_values(annotation: Any) -> list[str] | None:
    if typing.get_origin(annotation) is Literal:
        return [str(value) for value in typing.get_args(annotation)]
    if typing.get_origin(annotation) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        for argument in typing.get_args(annotation):
            if argument is not type(None) and (values := _literal_values(argument)) is not None:
                return values
    return None


def _type_text(node: ast.expr, namespace: dict[str, Any]) -> str:
    if isinstance(node, ast.Name):
        value = namespace.get(node.id)
        if isinstance(value, type) and issubclass(value, BaseModel):
            return "object"
        if (values := _literal_values(value)) is not None:
            return " \\| ".join(f"`{v}`" for v in values)
        return TYPE_NAMES.get(node.id, node.id)
    if isinstance(node, ast.Subscript):
        outer = ast.unparse(node.value)
        inner = node.slice
        if outer == "Optional":
            return _type_text(inner, namespace)
        if outer == "list":
            return f"list of {_type_text(inner, namespace)}"
        if outer == "dict" and isinstance(inner, ast.Tuple):
            key, value = inner.elts
            return f"map of {_type_text(key, namespace)} to {_type_text(value, namespace)}"
        if outer == "Annotated" and isinstance(inner, ast.Tuple):
            return _type_text(inner.elts[0], namespace)
        if outer == "Literal":
            return " \\| ".join(
                f"`{ast.literal_eval(e)}`" for e in (inner.elts if isinstance(inner, ast.Tuple) else [inner])
            )
    return ast.unparse(node)


def type_of(key: Key) -> str:
    """The key's type as the reference shows it, with its bounds."""
    import stackconfig.model as model_module

    owner = next(cls for cls in key.model.__mro__ if key.field in getattr(cls, "__annotations__", {}))
    source = owner.__annotations__[key.field]
    text = (
        _type_text(ast.parse(source, mode="eval").body, vars(model_module)) if isinstance(source, str) else str(source)
    )
    bounds = []
    for item in key.info.metadata:
        for kind, symbol in ((Ge, "≥"), (Gt, ">"), (Le, "≤"), (Lt, "<")):
            if isinstance(item, kind):
                bound = getattr(item, kind.__name__.lower())
                bounds.append(f"{symbol} {bound:,}" if isinstance(bound, int) else f"{symbol} {bound}")
        if isinstance(item, MinLen):
            bounds.append(f"at least {item.min_length}")
        if isinstance(item, MaxLen):
            bounds.append(f"at most {item.max_length}")
    if len(bounds) == 2 and bounds[0].startswith("≥") and bounds[1].startswith("≤"):
        bounds = [f"{bounds[0][2:]} to {bounds[1][2:]}"]
    return f"{text}, {', '.join(bounds)}" if bounds else text


def _shown(value: Any, limit: int = 48) -> str:
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    if isinstance(value, Enum):
        value = value.value
    if value is None:
        return "unset"
    if isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, (list, dict)):
        text = json.dumps(value, default=str, separators=(", ", ": "))
    else:  # numbers, strings, addresses and networks
        text = str(value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return f"`{text}`"


def default_of(key: Key) -> str:
    if key.required:
        return "required"
    factory = key.info.default_factory
    value = factory() if factory is not None else key.info.default  # type: ignore[call-arg]
    if isinstance(value, BaseModel):
        return ""
    return _shown(value)


def explicit_values(config: BaseModel, path: str) -> list[Any]:
    """Values a stack file sets at `path` (dotted aliases, `<...>` any map key, `[]` any entry)."""
    found: list[Any] = []

    def walk(node: Any, parts: list[str]) -> None:
        if not parts:
            return
        part, rest = parts[0], parts[1:]
        if isinstance(node, dict) and part.startswith("<"):
            for value in node.values():
                walk(value, rest)
            return
        if part == "[]":
            for value in node if isinstance(node, list) else []:
                walk(value, rest)
            return
        if part.endswith("[]"):
            part, rest = part[:-2], ["[]", *rest]
        if not isinstance(node, BaseModel):
            return
        name = next((n for n, f in type(node).model_fields.items() if (f.alias or n) == part), None)
        if name is None or name not in node.model_fields_set:
            return
        value = getattr(node, name)
        if rest:
            walk(value, rest)
        else:
            found.append(value)

    walk(config, _split(path))
    return found


def _split(path: str) -> list[str]:
    return re.findall(r"<[a-z]+>|[A-Za-z0-9]+(?:\[\])?", path)


INTRO = """\
All keys live under the `platform:` namespace of a stack file (`stacks/Pulumi.<stack>.yaml`).
Unknown keys are errors. A bad config never registers anything and never shows a traceback: one
message lists every problem with its full key. This is prod's stack with a misspelt key, a value
of the wrong type and a range that is not one:

```
{example}
```

Type and format problems are reported first; relations between keys (overlaps, sizes, limits)
are checked once every value has a valid type (`validation/checks/`, one module per capability). Defaults are the secure
choice; weakening one is an explicit line in a stack file (`make docs` writes
out/docs/configuration-by-stack.md: this page with what each stack sets).
"""


def _cell(text: str) -> str:
    """Text for one Markdown table cell: pipes escaped (once), one line."""
    return re.sub(r"(?<!\\)\|", r"\\|", text).replace("\n", " ")


def render_markdown(
    configs: Mapping[str, BaseModel],
    example: str,
    *,
    model: type[BaseModel] = PlatformConfig,
    namespace: str = NAMESPACE,
    header: Sequence[str] | None = None,
) -> str:
    """docs/configuration.md (or `model`'s page, `header` its title and introduction): every key,
    its type, default, what each stack sets, and why."""
    all_keys = keys(model)
    lines = (
        list(header)
        if header is not None
        else [
            "# Configuration reference",
            "",
            "<!-- Generated by `make docs` from stackconfig/model/; edit that, not this. -->",
            "",
            INTRO.format(example=example.strip()),
        ]
    )
    sections = [key for key in all_keys if "." not in key.path]
    groups = [("Top level", "", sections)]
    for section in sections:
        if section.section:
            inner = [
                key
                for key in all_keys
                if key.path.startswith(section.path + ".") or key.path.startswith(section.path + "[]")
            ]
            groups.append((f"`{namespace}:{section.path}`", section.path, inner))
    for title, prefix, group in groups:
        lines += [f"## {title}", ""]
        if prefix:
            lines += [next(k for k in sections if k.path == prefix).description, ""]
        if configs:
            lines += ["| key | type | default | stacks set | meaning |", "|---|---|---|---|---|"]
        else:  # the committed page: the model alone, so no stack file's change touches it
            lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
        for key in group:
            shown_path = key.path if not prefix else key.path[len(prefix) :].lstrip(".")
            shown_path = shown_path if prefix else f"{namespace}:{shown_path}"
            stacks = []
            if not key.section:
                for stack, config in configs.items():
                    values = explicit_values(config, key.path)
                    distinct: list[str] = []
                    for value in values:
                        text = _shown(value, 32)
                        if text not in distinct:
                            distinct.append(text)
                    if distinct:
                        stacks.append(f"{stack}: {', '.join(distinct)}")
            set_by = f"{_cell('<br>'.join(stacks))} | " if configs else ""
            lines.append(
                f"| `{shown_path}` | {_cell(type_of(key))} | {_cell(default_of(key))} | {set_by}{_cell(key.description)} |"
            )
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
