"""Azure Kubernetes Fleet Manager."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stackconfig.model.base import (
    Model,
    ShortName,
)


class FleetConfig(Model):
    """Azure Kubernetes Fleet Manager, which environments of two or more clusters join.

    The fleet owns Kubernetes upgrades: it upgrades the canary clusters first, waits, then
    the rest. The clusters' own upgrade channel is off (node OS images stay per cluster).
    """

    upgrade_channel: Literal["Stable", "Rapid"] = Field(
        default="Stable", description="The fleet's Kubernetes auto-upgrade channel: `Stable` or `Rapid`."
    )
    node_image_selection: Literal["Latest", "Consistent"] = Field(
        default="Consistent", description="`Consistent` (one node image version across the fleet) or `Latest`."
    )
    canary_clusters: list[ShortName] = Field(
        default_factory=list,
        description="Clusters upgraded in the first stage; at least one cluster must be left for the second. "
        "Empty: the first cluster declared.",
    )
    soak_hours: int = Field(default=24, ge=0, le=168, description="Wait between the canary stage and the rest (0-168).")
