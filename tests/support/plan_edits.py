"""Changing a captured plan: one input, one option, a resource more or less, without re-running
the program (for tests of the policy packs, which read only the plan)."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from google.protobuf import json_format, struct_pb2

from offline.engine import CapturedResource, Plan


def wire_inputs(resource: CapturedResource) -> dict[str, Any]:
    return json_format.MessageToDict(resource.raw_inputs)


def set_path(document: dict[str, Any], path: str | tuple[str, ...], value: Any) -> None:
    """Set `a.b[0].c` (or a tuple of keys, for keys with dots) in a nested document; `value is
    DELETE` removes the key."""
    keys = (
        list(path)
        if isinstance(path, tuple)
        else [int(k) if k.isdigit() else k for k in re.findall(r"[^.\[\]]+", path)]
    )
    target: Any = document
    for key in keys[:-1]:
        target = target[key]
    if value is DELETE:
        del target[keys[-1]]
    else:
        target[keys[-1]] = value


DELETE = object()


def changed(
    plan: Plan, name: str, *, path: str | tuple[str, ...] | None = None, value: Any = None, **fields: Any
) -> Plan:
    """`plan` with one resource changed: an input at `path` (wire names), or resource fields
    (`options=`, `property_dependencies=`)."""
    resources = []
    found = False
    for resource in plan.resources:
        # A component may share its custom resource's name; it has no inputs to change.
        if resource.name == name and (path is None or resource.custom):
            found = True
            if path is not None:
                wire = wire_inputs(resource)
                set_path(wire, path, value)
                raw = struct_pb2.Struct()
                raw.update(wire)
                fields = {**fields, "raw_inputs": raw}
            resource = dataclasses.replace(resource, **fields)
        resources.append(resource)
    assert found, f"no resource named {name} in the {plan.stack} plan"
    return dataclasses.replace(plan, resources=resources)


def without(plan: Plan, name: str) -> Plan:
    assert any(r.name == name for r in plan.resources)
    return dataclasses.replace(plan, resources=[r for r in plan.resources if r.name != name])


def options(plan: Plan, name: str, **changes: Any) -> Plan:
    resource = next(r for r in plan.resources if r.name == name)
    return changed(plan, name, options=dataclasses.replace(resource.options, **changes))


def with_resource(plan: Plan, token: str, name: str, inputs: dict[str, Any]) -> Plan:
    """`plan` plus one Kubernetes object the program does not create today (pod-spec policies)."""
    raw = struct_pb2.Struct()
    raw.update(inputs)
    template = plan.of_type("kubernetes:core/v1:ConfigMap")[0]
    extra = dataclasses.replace(
        template,
        urn=template.urn.rsplit("::", 2)[0] + f"::{token}::{name}",
        type=token,
        name=name,
        inputs=inputs,
        raw_inputs=raw,
        dependencies=(),
        property_dependencies={},
    )
    return dataclasses.replace(plan, resources=[*plan.resources, extra])
