"""Azure Managed Lustre: a file system for training data per region with GPU clusters
(docs/lustre.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from facts.lustre import LUSTRE_TIERS
from stackconfig.model.base import Model, RegionName, Zone

# Checked against facts/lustre.py's tiers with the sizes (validation/checks/lustre.py).
LustreSku = Annotated[str, StringConstraints(pattern=r"^AMLFS-Durable-Premium-[0-9]+$")]
Weekday = Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


class LustreFileSystemConfig(Model):
    """One region's file system; its subnet is `platform:network.regions.<region>.subnets.lustre`."""

    sku: LustreSku = Field(
        default="AMLFS-Durable-Premium-250",
        description="`AMLFS-Durable-Premium-` and the MB/s of throughput per TiB: "
        + ", ".join(f"`{sku}`" for sku in LUSTRE_TIERS)
        + ". Fixed at creation.",
    )
    capacity_tib: int = Field(
        ge=4,
        description="Size in TiB, a multiple of the tier's step from its minimum (40: 48, 125: 16, 250: 8, 500: 4). "
        "Fixed at creation.",
    )
    zone: Zone = Field(
        default="1",
        description="The one availability zone it lives in; put the GPU pools that read it in the same zone. Fixed "
        "at creation.",
    )
    maintenance_day: Weekday = Field(default="Sunday", description="Day of Azure's weekly maintenance window.")
    maintenance_time_utc: Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")] = Field(
        default="03:00", description="Its start, `HH:MM` UTC."
    )


class LustreConfig(Model):
    """Azure Managed Lustre for training data: no blob integration (docs/lustre.md says why and
    how data is loaded)."""

    file_systems: dict[RegionName, LustreFileSystemConfig] = Field(
        min_length=1, description="A file system per region with GPU training clusters, by region."
    )
