"""Pure rules for Azure Managed Lustre file systems (facts/lustre.py): valid sizes, the subnet a
size needs, and the throughput it gives."""

from __future__ import annotations

from facts.lustre import LUSTRE_TIERS, SUBNET_PREFIX_BY_CAPACITY


def size_problem(sku: str, capacity_tib: int) -> str | None:
    """Why `capacity_tib` is not a size Azure creates for `sku`, or None."""
    tier = LUSTRE_TIERS.get(sku)
    if tier is None:
        return f"{sku!r} is not a Managed Lustre SKU ({', '.join(LUSTRE_TIERS)})"
    if capacity_tib < tier.min_tib or capacity_tib % tier.step_tib:
        return f"{sku} takes multiples of {tier.step_tib} TiB from {tier.min_tib}, not {capacity_tib}"
    if capacity_tib > tier.default_max_tib:
        return (
            f"{capacity_tib} TiB is above {sku}'s default maximum of {tier.default_max_tib} TiB: "
            "Azure raises it on a support request, so ask first"
        )
    return None


def subnet_prefix(capacity_tib: int) -> int | None:
    """The longest prefix of a subnet that holds a file system of this size (None: above the
    documented table, where Azure's `get_required_aml_fs_subnets_size` says)."""
    return next((prefix for largest, prefix in SUBNET_PREFIX_BY_CAPACITY if capacity_tib <= largest), None)


def throughput_gbps(sku: str, capacity_tib: int) -> float:
    """Aggregate throughput the tier provisions for this size, in GB/s."""
    return LUSTRE_TIERS[sku].throughput_mbps_per_tib * capacity_tib / 1000
