"""Storage accounts and their replication, workloads' grants, the registry."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from facts.azure_regions import PAIRED_REGIONS
from planning.charts import CHART_NAMESPACE
from planning.images import ANONYMOUS_UPSTREAMS, PLATFORM_CACHE_RULES, CacheRule, overlaps
from stackconfig.keys import key
from stackconfig.model import (
    GEO_REDUNDANT_STORAGE,
    PlatformConfig,
)
from validation.checks.common import MAX_FEDERATED_CREDENTIALS, ConfigProblem


def check_storage(config: PlatformConfig) -> Iterator[ConfigProblem]:
    storage = config.storage
    restore_days = storage.point_in_time_restore_days
    if restore_days is not None:
        restore_key = key("storage", "pointInTimeRestoreDays")
        if storage.change_feed_days is None:
            yield ConfigProblem(restore_key, "needs the change feed: set platform:storage.changeFeedDays")
        elif storage.change_feed_days <= restore_days:
            yield ConfigProblem(
                restore_key,
                f"{restore_days} days needs a change feed kept longer (changeFeedDays is {storage.change_feed_days})",
            )
        if restore_days >= storage.soft_delete_days:
            yield ConfigProblem(
                restore_key,
                f"must be shorter than softDeleteDays ({storage.soft_delete_days}): Azure restores "
                "from soft-deleted data",
            )
    for account_key, account in storage.accounts.items():
        yield from _replication_problems(config, account_key)
        duplicates = sorted({c for c in account.containers if account.containers.count(c) > 1})
        if duplicates:
            yield ConfigProblem(
                key("storage", "accounts", account_key, "containers"), f"lists {', '.join(duplicates)} twice"
            )
        for prefix in account.delete_after_days:
            container = prefix.split("/", 1)[0]
            if container not in account.containers:
                yield ConfigProblem(
                    key("storage", "accounts", account_key, "deleteAfterDays"),
                    f"{prefix}: {container} is not a container of the account ({', '.join(account.containers)})",
                )


def _replication_problems(config: PlatformConfig, account_key: str) -> Iterator[ConfigProblem]:
    """How an account survives its region: choices Azure would refuse, named by both keys.

    learn.microsoft.com/azure/storage/blobs/object-replication-overview: object replication
    needs versioning and (on the source) the change feed, copies block blobs between
    flat-namespace accounts only, and rules out customer-managed failover on both accounts;
    /azure/storage/common/storage-disaster-recovery-guidance: failover needs a geo-redundant sku.
    """
    storage = config.storage
    account = storage.accounts[account_key]
    where = partial(key, "storage", "accounts", account_key)
    replication = where("replication")
    if account.replication == "objectReplication":
        if account.hierarchical_namespace:
            yield ConfigProblem(
                replication,
                f"object replication does not copy hierarchical-namespace accounts, and "
                f"{where('hierarchicalNamespace')} is true: use geoFailover",
            )
        primary = config.primary_region
        others = [r for r in dict.fromkeys(c.region for c in config.clusters.values()) if r != primary]
        if account.replica_region is None:
            if not others:
                yield ConfigProblem(
                    replication,
                    f"needs a region with clusters besides {primary} for the replica, and platform:clusters has none",
                )
        elif account.replica_region == primary:
            yield ConfigProblem(where("replicaRegion"), f"{primary} is the account's own region")
        elif account.replica_region not in others:
            yield ConfigProblem(
                where("replicaRegion"),
                f"{account.replica_region} has no clusters to read the replica ({', '.join(others) or 'none besides the primary'})",
            )
        for container in account.written_in_every_region:
            if container not in account.containers:
                yield ConfigProblem(where("writtenInEveryRegion"), f"{container} is not one of {where('containers')}")
    else:
        for setting, value in (
            ("replicaRegion", account.replica_region),
            ("replicaAccountName", account.replica_account_name),
            ("writtenInEveryRegion", account.written_in_every_region or None),
        ):
            if value is not None:
                yield ConfigProblem(
                    where(setting), f"applies to objectReplication only, and {replication} is {account.replication}"
                )
    sku = account.sku or storage.sku
    if account.replication == "geoFailover" and config.primary_region not in PAIRED_REGIONS:
        first = next(iter(config.clusters))
        yield ConfigProblem(
            replication,
            f"{config.primary_region} (platform:clusters.{first}.region, where the data lives) has no paired "
            "region to fail over to: use objectReplication",
        )
    elif account.replication == "geoFailover" and sku not in GEO_REDUNDANT_STORAGE:
        sku_key = where("sku") if account.sku else key("storage", "sku")
        yield ConfigProblem(
            replication,
            f"a failover needs a copy in the paired region, and {sku_key} is {sku}: use one of "
            f"{', '.join(GEO_REDUNDANT_STORAGE)}",
        )


def check_workloads(config: PlatformConfig) -> Iterator[ConfigProblem]:
    subjects: dict[tuple[str, str], str] = {}
    for name, workload in config.workloads.items():
        where = partial(key, "workloads", name)

        team = config.teams.get(workload.team)
        if team is None:
            yield ConfigProblem(
                where("team"), f"{workload.team} is not a team of platform:teams ({', '.join(config.teams) or 'none'})"
            )
        elif workload.namespace not in team.namespaces:
            owner = next((t for t, spec in config.teams.items() if workload.namespace in spec.namespaces), None)
            yield ConfigProblem(
                where("namespace"),
                f"{workload.namespace} is not a namespace of team {workload.team}"
                + (f" (it belongs to {owner})" if owner else " (no team declares it)"),
            )
        subject = (workload.namespace, workload.service_account)
        if subject in subjects:
            yield ConfigProblem(
                where("serviceAccount"),
                f"{workload.namespace}/{workload.service_account} is already the service account of "
                f"{subjects[subject]}; one service account carries one identity",
            )
        subjects.setdefault(subject, name)

        clusters = workload.clusters or list(config.clusters)
        for i, cluster in enumerate(workload.clusters or []):
            if cluster not in config.clusters:
                yield ConfigProblem(where("clusters", i), f"{cluster} is not a cluster of platform:clusters")
        for i, cluster in enumerate(workload.failover_clusters):
            if cluster not in config.clusters:
                yield ConfigProblem(where("failoverClusters", i), f"{cluster} is not a cluster of platform:clusters")
            elif cluster in clusters:
                yield ConfigProblem(
                    where("failoverClusters", i),
                    f"{cluster} is already one it runs on (platform:workloads.{name}.clusters, unset: every cluster)",
                )
        for i, site_key in enumerate(workload.sites):
            site = config.on_prem_clusters.get(site_key)
            if site is None:
                yield ConfigProblem(where("sites", i), f"{site_key} is not a site of platform:onPremClusters")
            elif not site.workload_identity:
                yield ConfigProblem(
                    where("sites", i), f"{site_key} has no workload identity (platform:onPremClusters.{site_key})"
                )
            elif workload.team not in site.teams:
                yield ConfigProblem(
                    where("sites", i), f"team {workload.team} may not run on {site_key} (its teams: {site.teams})"
                )
        trusted = set(clusters) | set(workload.failover_clusters) | set(workload.sites)
        if len(trusted) > MAX_FEDERATED_CREDENTIALS:
            yield ConfigProblem(
                where("clusters"),
                f"{len(trusted)} clusters need one federated credential each, but Azure allows "
                f"{MAX_FEDERATED_CREDENTIALS} per identity: split the workload",
            )

        for account_key, grants in workload.storage.items():
            account = config.storage.accounts.get(account_key)
            if account is None:
                yield ConfigProblem(
                    where("storage", account_key),
                    f"{account_key} is not a storage account of platform:storage.accounts "
                    f"({', '.join(config.storage.accounts) or 'none'})",
                )
                continue
            for container in grants:
                if container not in account.containers:
                    yield ConfigProblem(
                        where("storage", account_key, container),
                        f"{container} is not a container of storage account {account_key} "
                        f"({', '.join(account.containers)})",
                    )


def check_registry(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Team cache rules must be creatable next to the platform's own and each other."""
    taken = [(f"the platform's rule {rule.name}", rule) for rule in PLATFORM_CACHE_RULES]
    for name, rule in config.registry.cache_rules.items():
        where = key("registry", "cacheRules", name)
        host = rule.source.split("/", 1)[0]
        if host not in ANONYMOUS_UPSTREAMS:
            yield ConfigProblem(
                where + ".source",
                f"{host} is not an upstream the registry can pull from without credentials "
                f"({', '.join(ANONYMOUS_UPSTREAMS)})",
            )
        if rule.source.endswith("/*") != rule.target.endswith("/*"):
            yield ConfigProblem(where, "source and target must both end in /* or neither")
        if overlaps(rule.target, f"{CHART_NAMESPACE}/*"):
            # A rule there would answer chart pulls from its upstream instead of the mirror.
            yield ConfigProblem(
                where + ".target", f"{rule.target} overlaps the platform's mirrored charts ({CHART_NAMESPACE}/*)"
            )
        for owner, other in taken:
            if other.name == name:
                yield ConfigProblem(where, f"{name} is the name of {owner}")
            elif rule.source.endswith("/*") and other.source.endswith("/*") and overlaps(rule.source, other.source):
                yield ConfigProblem(where + ".source", f"{rule.source} overlaps {owner} ({other.source})")
            elif overlaps(rule.target, other.target):
                yield ConfigProblem(where + ".target", f"{rule.target} overlaps {owner} ({other.target})")
        taken.append((f"rule {name}", CacheRule(name, rule.source, rule.target)))
