"""Azure Event Hubs' limits per tier, as the Kafka spec is checked against them.

Source: learn.microsoft.com/azure/event-hubs/event-hubs-quotas (Standard and Premium columns:
partitions per event hub, event hubs per namespace, retention, consumer groups per event hub,
throughput or processing units, partitions per processing unit on Premium).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EventHubsTier:
    """Per-tier limits (learn.microsoft.com, "Azure Event Hubs quotas and limits")."""

    partitions_per_event_hub: int
    consumer_groups_per_event_hub: int  # `$Default` included
    max_retention_hours: int
    event_hubs_per_namespace: int
    capacities: tuple[int, ...]  # throughput units (Standard) or processing units (Premium)
    # Premium also caps the partitions of all its event hubs together, per processing unit.
    partitions_per_capacity_unit: int | None = None


EVENT_HUBS_TIERS: dict[str, EventHubsTier] = {
    "Standard": EventHubsTier(32, 20, 7 * 24, 10, tuple(range(1, 41))),
    "Premium": EventHubsTier(100, 100, 90 * 24, 100, (1, 2, 4, 8, 16), partitions_per_capacity_unit=200),
}
