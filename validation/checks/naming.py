"""Names and tags: Azure's naming rules, required tags, lengths of derived names."""

from __future__ import annotations

from collections.abc import Iterator

from facts import aks_versions, arm_tags
from facts.azure_regions import REGIONS
from planning import naming as naming_rules
from planning.naming import Naming, storage_account_name
from stackconfig.keys import key
from stackconfig.model import (
    REQUIRED_TAGS,
    PlatformConfig,
)
from validation.checks.common import ConfigProblem


def check_tags(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for tag in REQUIRED_TAGS:
        if not config.tags.get(tag):
            yield ConfigProblem(key("tags", tag), "is required on every resource (owner, cost-center)")
    if "environment" in config.tags:
        yield ConfigProblem(key("tags", "environment"), "is set from platform:environment; remove it here")


def check_tag_rules(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """ARM's tag rules, on the platform's tags as every resource gets them (facts/arm_tags.py)."""
    for name, value in config.tags.items():
        for reason in arm_tags.tag_problems(name, value):
            yield ConfigProblem(key("tags", name), reason)
    # The platform adds environment, managed-by and (on cluster resources) cluster.
    total = len(set(config.tags) | {"environment", "managed-by", "cluster"})
    if total > arm_tags.MAX_TAGS_PRIVATE_DNS:
        yield ConfigProblem(
            key("tags"),
            f"{total} tags with the platform's own; private DNS zones and their links take at most "
            f"{arm_tags.MAX_TAGS_PRIVATE_DNS}",
        )


def check_azure_names(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Regions, zones and Kubernetes versions Azure and AKS actually offer (facts/)."""
    known = ", ".join(sorted(REGIONS))
    for region_name in config.network.regions:
        if region_name not in REGIONS:
            yield ConfigProblem(
                key("network", "regions", region_name), f"{region_name} is not an Azure region (known: {known})"
            )
    for name, cluster in config.clusters.items():
        region = REGIONS.get(cluster.region)
        if region is None:
            yield ConfigProblem(
                key("clusters", name, "region"), f"{cluster.region} is not an Azure region (known: {known})"
            )
        elif not region.zones and cluster.zones:
            yield ConfigProblem(
                key("clusters", name, "zones"),
                f"{cluster.region} has no availability zones; choose a region with zones (the platform spreads pools over zones)",
            )
        version = cluster.kubernetes_version
        if version is not None:
            minor = aks_versions.minor_of(version)
            if minor not in aks_versions.KNOWN_MINORS:
                yield ConfigProblem(key("clusters", name, "kubernetesVersion"), f"AKS never offered Kubernetes {minor}")
            elif minor not in aks_versions.SUPPORTED_MINORS:
                yield ConfigProblem(
                    key("clusters", name, "kubernetesVersion"),
                    f"Kubernetes {minor} is not a minor AKS supports (GA on {aks_versions.TAKEN_ON}: "
                    f"{', '.join(aks_versions.SUPPORTED_MINORS)}; refresh with az aks get-versions and facts/aks_versions.py)",
                )


def check_resource_names(config: PlatformConfig) -> Iterator[ConfigProblem]:
    """Globally named resources must fit Azure's rules before anything is deployed."""
    naming = Naming(config.prefix, config.environment)
    # A Key Vault per region with clusters (decision 0008).
    regions = dict.fromkeys(c.region for c in config.clusters.values())
    for problem in (
        *(naming_rules.key_vault_name_problem(naming.key_vault(region)) for region in regions),
        naming_rules.registry_name_problem(naming.registry()),
    ):
        if problem:
            yield ConfigProblem(key("prefix"), f"{problem}; use a shorter prefix")
    for cluster_key, cluster in config.clusters.items():
        problem = naming_rules.key_vault_name_problem(naming.etcd_key_vault(cluster_key))
        if cluster.etcd_encryption and problem:
            yield ConfigProblem(key("clusters", cluster_key), f"its etcd key vault's name: {problem}")
    seen: dict[str, str] = {}
    for account_key, account in config.storage.accounts.items():
        name = storage_account_name(config, account_key)
        where = key("storage", "accounts", account_key, *(["accountName"] if account.account_name else []))
        problem = naming_rules.storage_account_name_problem(name)
        if problem:
            hint = "" if account.account_name else " (derived from prefix, environment and key; set accountName)"
            yield ConfigProblem(where, problem + hint)
        elif name in seen:
            yield ConfigProblem(where, f"{name} is already the name of account {seen[name]}")
        seen.setdefault(name, account_key)
        if naming_rules.replica_region(config, account_key) is None:
            continue
        replica = naming_rules.replica_account_name(config, account_key)
        where = key("storage", "accounts", account_key, "replicaAccountName" if account.replica_account_name else "")
        where = where.rstrip(".")
        problem = naming_rules.storage_account_name_problem(replica)
        if problem:
            hint = (
                ""
                if account.replica_account_name
                else " (the account's name and the region's code; set replicaAccountName)"
            )
            yield ConfigProblem(where, f"its replica: {problem}{hint}")
        elif replica in seen:
            yield ConfigProblem(where, f"its replica's name {replica} is already the name of account {seen[replica]}")
        seen.setdefault(replica, account_key)
