"""PostgreSQL flexible server's high-availability rules (facts/postgresql.py, planning/postgresql.py)."""

from __future__ import annotations

from facts.postgresql import HA_MODES, SKU_TIERS
from planning.postgresql import high_availability_problem


def test_high_availability_is_refused_on_burstable_and_zone_redundancy_without_zones():
    for tier in SKU_TIERS:
        for mode in HA_MODES:
            for zones in (True, False):
                refused = mode != "Disabled" and (tier == "Burstable" or (mode == "ZoneRedundant" and not zones))
                assert (high_availability_problem(tier, mode, zones) is not None) == refused, (tier, mode, zones)
