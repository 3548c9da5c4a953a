"""Check captured azure-native inputs against the property names and enums the SDK declares.

Mocks accept any dict, so a misspelled ARM property (`networkPluginMod`) or value
(`overlayy`) would pass a preview and fail in Azure. Every typed `...Args` class of
pulumi-azure-native declares each property's wire name (`@pulumi.getter(name=...)`) and
type; this module walks a resource's inputs through those types, nested objects, lists
and maps included, and reports every key the SDK does not declare and every enum-typed
value outside its enum.
"""

from __future__ import annotations

import collections.abc
import importlib
import sys
import typing
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from typing import Any, get_args

from pulumi import _types as pulumi_types

from offline.engine import UNKNOWN, CapturedResource
from stackconfig.model import ContainerInsightsTable

# Container Insights' streams: one per table the config model names.
CONTAINER_INSIGHTS_STREAMS = frozenset(f"Microsoft-{table}" for table in get_args(ContainerInsightsTable))
# Values the SDK's enum does not list but Azure documents. Azure's "Known..." enums are
# open-ended (modelAsString); each exception names where it is documented.
DOCUMENTED_ENUM_EXTENSIONS: dict[tuple[str, str], frozenset[str]] = {
    # AKS's managed Prometheus template (Azure/prometheus-collector, AddonBicepTemplate)
    # routes this stream; KnownDataFlowStreams predates it.
    # Container Insights' streams likewise (microsoft/Docker-Provider scripts/onboarding/aks
    # /onboarding-msi-bicep, the data collection rule of Microsoft's own onboarding).
    ("azure-native:monitor:DataCollectionRule", "dataFlows[].streams[]"): frozenset(
        {"Microsoft-PrometheusMetrics", *CONTAINER_INSIGHTS_STREAMS}
    ),
    ("azure-native:monitor:DataCollectionRule", "dataSources.extensions[].streams[]"): CONTAINER_INSIGHTS_STREAMS,
    # Fleet Manager's auto-upgrade channels (Microsoft.ContainerService/fleets/autoUpgradeProfiles,
    # azure-rest-api-specs Fleet.Management autoupgradeprofile.tsp); the SDK merged this enum
    # with the managed cluster's lowercase UpgradeChannel.
    ("azure-native:containerservice:AutoUpgradeProfile", "channel"): frozenset({"Stable", "Rapid", "NodeImage"}),
    # The flexible server's Entra administrators (azure-rest-api-specs PostgreSQL stable/2025-08-01
    # AdministratorsMicrosoftEntra.json: User, Group, ServicePrincipal); the SDK's PrincipalType
    # of that name is Cosmos DB for PostgreSQL's lower-camel-case enum.
    ("azure-native:dbforpostgresql:AdministratorsMicrosoftEntra", "principalType"): frozenset(
        {"User", "Group", "ServicePrincipal"}
    ),
}


@dataclass
class Shape:
    """What a property may hold, read from its type annotation."""

    scalar: bool = False
    enums: list[type[Enum]] = field(default_factory=list)
    # Object classes it may hold: several for a union (e.g. a firewall policy's rule kinds).
    objs: list[type] = field(default_factory=list)
    items: Shape | None = None
    values: Shape | None = None
    anything: bool = False


def _namespace(cls: type) -> dict[str, Any]:
    return {**vars(typing), **vars(sys.modules[cls.__module__])}


def _shape(hint: Any, namespace: dict[str, Any], shape: Shape | None = None) -> Shape:
    shape = shape or Shape()
    if isinstance(hint, typing.ForwardRef):
        hint = hint.__forward_arg__
    if isinstance(hint, str):
        if hint.startswith("Output"):
            return shape  # Output[T] repeats T
        hint = eval(hint, namespace)
    origin = typing.get_origin(hint)
    if origin is typing.Union:
        for arg in typing.get_args(hint):
            _shape(arg, namespace, shape)
    elif origin is collections.abc.Awaitable or hint is type(None):
        pass  # an awaitable of the same type, or "unset"
    elif origin in (collections.abc.Sequence, list):
        (inner,) = typing.get_args(hint)
        shape.items = _shape(inner, namespace, shape.items)
    elif origin in (collections.abc.Mapping, dict):
        _, inner = typing.get_args(hint)
        shape.values = _shape(inner, namespace, shape.values)
    elif hint is Any:
        shape.anything = True
    elif isinstance(hint, type) and issubclass(hint, Enum):
        shape.enums.append(hint)
    elif hint in (str, int, float, bool):
        shape.scalar = True
    elif isinstance(hint, type) and pulumi_types._py_properties(hint):
        shape.objs.append(hint)
    else:
        shape.anything = True  # e.g. a raw JSON-typed property
    return shape


@cache
def wire_properties(cls: type) -> dict[str, Shape]:
    """{wire name: shape} for an SDK input class."""
    namespace = _namespace(cls)
    return {
        wire: _shape(prop.fget.__annotations__.get("return", Any), namespace)
        for _, wire, prop in pulumi_types._py_properties(cls)
    }


@cache
def resource_args_class(token: str) -> type:
    """`azure-native:network:Subnet` -> pulumi_azure_native.network.SubnetInitArgs."""
    package, module, name = token.split(":")
    if package != "azure-native":
        raise ValueError(f"{token} is not an azure-native resource")
    resource_class = getattr(importlib.import_module(f"pulumi_azure_native.{module}"), name)
    resource_module = sys.modules[resource_class.__module__]
    (args_name,) = [n for n in resource_module.__all__ if n.endswith("Args")]
    return getattr(resource_module, args_name)


def _enum_problem(token: str, path: str, value: str, enums: list[type[Enum]]) -> str | None:
    allowed = {member.value for enum in enums for member in enum}
    generic_path = "".join(part if not part.startswith("[") else "[]" for part in _split(path))
    if value in allowed or value in DOCUMENTED_ENUM_EXTENSIONS.get((token, generic_path), ()):
        return None
    names = "/".join(enum.__name__ for enum in enums)
    return f"{path}: {value!r} is not a {names} value ({', '.join(sorted(map(str, allowed)))})"


def _split(path: str) -> list[str]:
    parts, current = [], ""
    for char in path:
        if char == "[":
            parts.append(current)
            current = "["
        elif char == "]":
            parts.append(current + "]")
            current = ""
        else:
            current += char
    parts.append(current)
    return [p for p in parts if p]


def _check(token: str, path: str, value: Any, shape: Shape, problems: list[str]) -> None:
    if value is UNKNOWN or value is None or shape.anything:
        return
    if isinstance(value, dict):
        if shape.objs:
            # A union matches if one of its classes takes the object; else the closest one speaks.
            found: list[list[str]] = []
            for cls in shape.objs:
                found.append([])
                _check_object(token, path, value, cls, found[-1])
            problems.extend(sorted(found, key=len)[0])
        elif shape.values is not None:
            for key, item in value.items():
                _check(token, f"{path}.{key}", item, shape.values, problems)
        else:
            problems.append(f"{path}: an object where the SDK expects a scalar or list")
    elif isinstance(value, list):
        if shape.items is None:
            problems.append(f"{path}: a list where the SDK expects {'an object' if shape.objs else 'a scalar'}")
            return
        for item in value:
            _check(token, f"{path}[]", item, shape.items, problems)
    elif isinstance(value, str) and shape.enums:
        problem = _enum_problem(token, path, value, shape.enums)
        if problem:
            problems.append(problem)
    elif shape.objs and not shape.scalar and not shape.enums:
        problems.append(f"{path}: a {type(value).__name__} where the SDK expects an object")


def _check_object(token: str, path: str, value: dict, cls: type, problems: list[str]) -> None:
    known = wire_properties(cls)
    for key, item in value.items():
        where = f"{path}.{key}" if path else key
        if key not in known:
            problems.append(f"{where}: {cls.__name__} has no property {key!r}")
            continue
        _check(token, where, item, known[key], problems)


def input_problems(resource: CapturedResource) -> list[str]:
    """Every input of an azure-native resource that its SDK type does not declare."""
    problems: list[str] = []
    _check_object(resource.type, "", resource.inputs, resource_args_class(resource.type), problems)
    return problems
