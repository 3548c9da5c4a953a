"""Regional vCPU quota against the capacity plan at its peak.

Every pool of the plan (planning/capacity.py: system, CPU, GPU, sandbox, Kafka and streaming
pools) can reach its max count plus the surge nodes an upgrade adds (`maxSurge`, the plan's
`peak_nodes`, the "peak" column of `make capacity`). A VM counts against its family's regional
quota and against the region's total (Total Regional vCPUs, `cores`); a Spot VM against Total
Regional Low-priority vCPUs (`lowPriorityCores`) alone
(learn.microsoft.com/azure/virtual-machines/spot-vms, "Quotas";
learn.microsoft.com/azure/quotas/regional-quota-requests). The families are facts/vm_sizes.py's
(`az vm list-usage` names them the same). The answer per region is `az vm list-usage --location
<region> --subscription <id> --output json`: a list of `{"name": {"value", "localizedValue"},
"currentValue", "limit", "localName"}`, the numbers as strings (the CLI's
transform_vm_usage_list) over the Compute Usage API (learn.microsoft.com/rest/api/compute/usage/list).

What is in use counts as taken by something else: run it before the environment's first deploy,
or read "in use" as including the environment's own nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from facts.vm_sizes import VM_SIZES
from planning.capacity import plan_capacity
from planning.doctor import Answer, Finding, answer, items, unreadable
from stackconfig.model import GpuPoolConfig, PlatformConfig

CHECK = "quota"
REGIONAL = "cores"
LOW_PRIORITY = "lowPriorityCores"
_NAMES = {REGIONAL: "Total Regional vCPUs", LOW_PRIORITY: "Total Regional Low-priority vCPUs"}
PER_VM_FAMILY = "https://learn.microsoft.com/azure/quotas/per-vm-quota-requests"
REGIONAL_DOC = "https://learn.microsoft.com/azure/quotas/regional-quota-requests"
SPOT_DOC = "https://learn.microsoft.com/azure/quotas/spot-quota"


@dataclass(frozen=True)
class QuotaNeed:
    """The vCPUs the plan needs of one quota at its peak, and the pools that need them."""

    subscription: str
    region: str
    family: str  # list-usage's name.value: a VM family, `cores` or `lowPriorityCores`
    vcpus: int
    pools: tuple[str, ...]  # `<cluster>/<pool> <peak nodes>x<vCPUs>`
    sizes: tuple[str, ...]
    gpu: bool

    @property
    def label(self) -> str:
        return f"{_NAMES[self.family]} ({self.family})" if self.family in _NAMES else self.family


@dataclass(frozen=True)
class QuotaRow:
    need: QuotaNeed
    limit: int | None  # None: the region lists no such quota
    in_use: int | None

    @property
    def free(self) -> int | None:
        return None if self.limit is None or self.in_use is None else self.limit - self.in_use

    @property
    def short(self) -> int:
        free = self.free
        return self.need.vcpus if free is None else max(self.need.vcpus - free, 0)


def quota_needs(config: PlatformConfig, subscription: str) -> list[QuotaNeed]:
    """Per region and quota, the vCPUs of every pool at its peak (max count plus surge)."""
    totals: dict[tuple[str, str], tuple[int, list[str], list[str], bool]] = {}
    for cluster in plan_capacity(config).clusters:
        region = config.clusters[cluster.key].region
        for pool in cluster.pools:
            size = VM_SIZES[pool.pool.vm_size]
            spot = isinstance(pool.pool, GpuPoolConfig) and pool.pool.spot
            gpu = size.gpus > 0
            described = f"{pool.cluster}/{pool.name} {pool.peak_nodes:,}x{size.vcpus}"
            for family in (LOW_PRIORITY,) if spot else (size.family, REGIONAL):
                vcpus, pools, sizes, was_gpu = totals.get((region, family), (0, [], [], False))
                totals[region, family] = (
                    vcpus + pool.peak_nodes * size.vcpus,
                    [*pools, described],
                    [*sizes, size.name] if size.name not in sizes else sizes,
                    was_gpu or (gpu and family not in _NAMES),
                )
    return [
        QuotaNeed(subscription.lower(), region, family, vcpus, tuple(pools), tuple(sizes), gpu)
        for (region, family), (vcpus, pools, sizes, gpu) in sorted(totals.items())
    ]


def usage_reads(needs: Iterable[QuotaNeed]) -> list[tuple[str, str]]:
    """(subscription, region) pairs to ask `az vm list-usage` about."""
    return list(dict.fromkeys((need.subscription, need.region) for need in needs))


def usage_key(subscription: str, region: str) -> str:
    return f"{subscription.lower()}/{region}"


def _number(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def quota_rows(needs: Iterable[QuotaNeed], usages: Mapping[str, Answer]) -> list[QuotaRow]:
    """Each need beside its limit and use in the region (None where the answer lists none)."""
    rows = []
    for need in needs:
        found: dict[str, Any] = {}
        for entry in items(answer(usages, usage_key(need.subscription, need.region))):
            name = entry.get("name") or {}
            if str(name.get("value", "")).lower() == need.family.lower():
                found = entry
        rows.append(QuotaRow(need, _number(found.get("limit")), _number(found.get("currentValue"))))
    return rows


def _request(row: QuotaRow, target: int) -> str:
    need = row.need
    kind = "lowPriority" if need.family == LOW_PRIORITY else "dedicated"
    doc = {REGIONAL: REGIONAL_DOC, LOW_PRIORITY: SPOT_DOC}.get(need.family, PER_VM_FAMILY)
    return (
        f"`az quota update --resource-name {need.family} --scope /subscriptions/{need.subscription}/providers/"
        f"Microsoft.Compute/locations/{need.region} --limit-object value={target} --resource-type {kind}` (the "
        f"`quota` CLI extension), or the portal's Quotas page ({doc})"
    )


def check_quota(needs: Iterable[QuotaNeed], usages: Mapping[str, Answer], stack: str) -> list[Finding]:
    findings = []
    needs = list(needs)
    for subscription, region in usage_reads(needs):
        problem = unreadable(
            CHECK,
            answer(usages, usage_key(subscription, region)),
            f"the vCPU quotas of {region} in subscription {subscription}",
            f"check that the subscription offers {region}: `az account list-locations --output table`",
        )
        if problem:
            findings.append(problem)
    for row in quota_rows(needs, usages):
        need = row.need
        if not answer(usages, usage_key(need.subscription, need.region)).ok:
            continue
        where = f"in {need.region} (subscription {need.subscription})"
        pools = ", ".join(need.pools)
        if row.limit is None:
            findings.append(
                Finding(
                    CHECK,
                    f"{need.label}: the region lists no such quota {where}, so {', '.join(need.sizes)} may not be "
                    f"offered there; the plan needs {need.vcpus:,} vCPUs ({pools})",
                    f"`az vm list-skus --location {need.region} --size {need.sizes[0]} --output table` shows whether "
                    "it is offered (and its zone restrictions); pick another region or ask Microsoft for access",
                )
            )
            continue
        if not row.short:
            continue
        target = need.vcpus + (row.in_use or 0)
        what = (
            f"{need.label} {where}: the plan needs {need.vcpus:,} vCPUs at peak (max count plus upgrade surge: "
            f"{pools}), the limit is {row.limit:,} with {row.in_use:,} in use: {row.short:,} short"
        )
        if need.gpu:
            fix = (
                f"GPU quota is a capacity conversation with Microsoft, not a self-service increase: file the request "
                f"for {target:,} vCPUs ({_request(row, target)}) and take it to your Microsoft account team with "
                f"the plan (`make capacity STACK={stack}`); until it is granted, lower the pools' maxCount or "
                "choose a region with capacity"
            )
        else:
            fix = f"raise the limit to at least {target:,}: {_request(row, target)}"
        findings.append(Finding(CHECK, what, fix))
    return findings
