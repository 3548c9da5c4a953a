"""The resource group each component keeps its resources in."""

from __future__ import annotations

import pulumi
from pulumi_azure_native import resources


def resource_group(
    name: str, group_name: str, region: str, tags: dict[str, str], parent: pulumi.Resource
) -> resources.ResourceGroup:
    return resources.ResourceGroup(
        f"{name}-rg",
        resource_group_name=group_name,
        location=region,
        tags=tags,
        opts=pulumi.ResourceOptions(parent=parent),
    )
