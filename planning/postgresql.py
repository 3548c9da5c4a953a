"""Pure rules for a PostgreSQL flexible server (facts/postgresql.py)."""

from __future__ import annotations


def high_availability_problem(tier: str, mode: str, region_has_zones: bool) -> str | None:
    """Why Azure refuses this high availability for the tier and region, or None."""
    if mode == "Disabled":
        return None
    if tier == "Burstable":
        return "the Burstable tier has no high availability: choose GeneralPurpose or MemoryOptimized, or Disabled"
    if mode == "ZoneRedundant" and not region_has_zones:
        return "the region has no availability zones: SameZone is the high availability it offers"
    return None
