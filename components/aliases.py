"""Aliases for resources that moved from one component to another within a stack."""

from __future__ import annotations

import pulumi


def former_parent(component: str, component_type: str, opts: pulumi.ResourceOptions | None) -> pulumi.Output[str]:
    """The URN of component `component` (of `component_type`), a sibling of the component whose
    options are `opts`: where its resources used to be."""
    return pulumi.create_urn(component, component_type, parent=opts.parent if opts else None)


def moved_from(component: str, component_type: str, opts: pulumi.ResourceOptions | None) -> list[pulumi.Alias]:
    """The alias of a resource that used to be a child of that sibling component. With it, a
    deployed stack moves the resource instead of deleting and recreating it."""
    return [pulumi.Alias(parent=former_parent(component, component_type, opts))]
