"""PostgreSQL flexible server's high-availability rules (facts/postgresql.py, planning/postgresql.py)."""

from __future__ import annotations

import pytest

from facts.postgresql import HA_MODES, SKU_TIERS
from planning.postgresql import high_availability_problem


@pytest.mark.parametrize("tier", SKU_TIERS)
@pytest.mark.parametrize("mode", HA_MODES)
@pytest.mark.parametrize("zones", [True, False])
def test_high_availability_is_refused_on_burstable_and_zone_redundancy_without_zones(tier, mode, zones):
    refused = mode != "Disabled" and (tier == "Burstable" or (mode == "ZoneRedundant" and not zones))
    assert (high_availability_problem(tier, mode, zones) is not None) == refused
