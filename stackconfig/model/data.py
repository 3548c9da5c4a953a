"""Data: storage accounts and their replication, the Key Vault, the registry."""

from __future__ import annotations

import re
from typing import Annotated, Literal, Optional

from pydantic import AfterValidator, Field, StringConstraints

from stackconfig.model.base import (
    Model,
    RegionName,
    ShortName,
    UuidList,
)


def _container_name(value: str) -> str:
    if not re.match(r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$", value) or "--" in value:
        raise ValueError(
            f"{value!r} is not a valid container name: 3-63 lowercase letters, digits and "
            "single hyphens, starting and ending with a letter or digit"
        )
    return value


ContainerName = Annotated[str, AfterValidator(_container_name)]
# Key Vault object names: 1-127 letters, digits and hyphens.
SecretName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9-]{1,127}$")]
StorageSku = Literal["Standard_LRS", "Standard_ZRS", "Standard_GRS", "Standard_GZRS", "Standard_RAGZRS"]
ZONE_REDUNDANT_STORAGE = ("Standard_ZRS", "Standard_GZRS", "Standard_RAGZRS")
# Skus with a copy in the paired region, which a customer-managed failover promotes.
GEO_REDUNDANT_STORAGE = ("Standard_GRS", "Standard_GZRS", "Standard_RAGZRS")
StorageReplication = Literal["none", "objectReplication", "geoFailover"]
# Upstream registries as ACR artifact cache names them.
UpstreamRepository = Annotated[str, StringConstraints(pattern=r"^[a-z0-9.-]+\.[a-z]+(/[a-z0-9._-]+)*(/\*)?$")]
TargetRepository = Annotated[str, StringConstraints(pattern=r"^[a-z0-9._-]+(/[a-z0-9._-]+)*(/\*)?$")]
# A lifecycle rule's prefix: a container, then a path in it.
BlobPrefix = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]/[A-Za-z0-9._/-]*$")]


class StorageAccountConfig(Model):
    """One private storage account (e.g. `weights`, `datasets`)."""

    account_name: Optional[str] = Field(
        default=None,
        description="Azure's globally unique name, 3-24 lowercase letters and digits. Unset: "
        "`st<prefix><env><key>`, which must then fit those rules.",
    )
    hierarchical_namespace: bool = Field(
        default=False, description="Data Lake Gen2 (adds a `dfs` endpoint); fixed at creation."
    )
    containers: list[ContainerName] = Field(
        min_length=1, description="Blob containers (3-63 lowercase letters, digits, single hyphens)."
    )
    sku: Optional[StorageSku] = Field(
        default=None, description="This account's redundancy, instead of `platform:storage.sku`. Unset: that."
    )
    delete_after_days: dict[BlobPrefix, Annotated[int, Field(ge=1, le=36500)]] = Field(
        default_factory=dict,
        description="`{<container>/<path prefix>: days}`: a lifecycle rule deletes block blobs under the prefix "
        "this many days after their last change (soft delete still keeps them for `softDeleteDays`).",
    )
    replication: StorageReplication = Field(
        default="none",
        description="How the data survives the loss of its region (docs/resilience.md, \"Data\"): `none`; "
        "`objectReplication`, every container copied asynchronously to an account in `replicaRegion` that the "
        "clusters there read (flat namespace only); or `geoFailover`, a geo-redundant `sku` whose secondary a "
        "person promotes with a customer-managed failover (RPO under 15 minutes, about an hour). Not both: "
        "Azure refuses customer-managed failover on an account in an object-replication policy.",
    )
    replica_region: Optional[RegionName] = Field(
        default=None,
        description="With `objectReplication`: the region of the replica account, one with clusters other than "
        "the primary. Unset: the first such region.",
    )
    replica_account_name: Optional[str] = Field(
        default=None,
        description="With `objectReplication`: the replica's globally unique name. Unset: the account's name "
        "followed by the replica region's code, which must then fit Azure's rules.",
    )
    written_in_every_region: list[ContainerName] = Field(
        default_factory=list,
        description="With `objectReplication`: containers jobs write to wherever they run (training "
        "checkpoints). The replica's copy of a container is read-only while the replication runs, so the "
        "replica account also gets a writable `<container>-<region code>`, which jobs in the replica's region "
        "write to (a job requeued there when the primary region is lost writes its next checkpoint at once). "
        "Jobs find their region's location in the `platform-storage` ConfigMap of their namespace.",
    )


class StorageConfig(Model):
    """The environment's storage accounts and how their data is protected."""

    sku: StorageSku = Field(
        default="Standard_ZRS",
        description="`Standard_LRS`, `Standard_ZRS`, `Standard_GRS`, `Standard_GZRS` or `Standard_RAGZRS`; "
        "dev weakens it to `Standard_LRS`.",
    )
    soft_delete_days: int = Field(
        default=30, ge=1, le=365, description="Deleted or overwritten blobs stay recoverable, 1-365."
    )
    container_soft_delete_days: int = Field(
        default=30, ge=1, le=365, description="Deleted containers stay recoverable, 1-365."
    )
    change_feed_days: Optional[int] = Field(
        default=None,
        ge=1,
        le=146000,
        description="Keep a change feed (an ordered log of every change) this many days, flat-namespace "
        "accounts. Unset: off.",
    )
    point_in_time_restore_days: Optional[int] = Field(
        default=None,
        ge=1,
        le=364,
        description="Restore flat-namespace accounts to any point in this window; needs `changeFeedDays` "
        "longer than it and must be shorter than `softDeleteDays`. Unset: off.",
    )
    customer_managed_key: bool = Field(
        default=False,
        description="Encrypt with a key in the environment's Key Vault (a dedicated identity gets *Key Vault "
        "Crypto Service Encryption User* on that key only).",
    )
    accounts: dict[ShortName, StorageAccountConfig] = Field(
        default_factory=dict, description="Private storage accounts by a short key (e.g. `weights`, `datasets`)."
    )


class KeyVaultConfig(Model):
    """The environment's Key Vault: RBAC authorization, purge protection, private only."""

    sku: Literal["standard", "premium"] = Field(
        default="standard", description="`standard` or `premium` (HSM-backed keys)."
    )
    soft_delete_retention_days: int = Field(
        default=90,
        ge=7,
        le=90,
        description="7-90, fixed at creation; purge protection is always on, so a destroyed environment's "
        "vault name is free again only after this many days.",
    )
    secrets_officer_group_object_ids: UuidList = Field(
        default_factory=list,
        description="Groups that create and rotate secrets (*Key Vault Secrets Officer* on this vault); the "
        "program never holds a secret value.",
    )


class CacheRuleConfig(Model):
    source: UpstreamRepository = Field(
        description="The upstream repository, e.g. `docker.io/pytorch/*` or `quay.io/org/image` (upstreams "
        "that need no credentials)."
    )
    target: TargetRepository = Field(
        description="The repository (or namespace with `/*`) in the platform's registry, e.g. `pytorch/*`."
    )


class RegistryConfig(Model):
    """The environment's container registry (Premium): the only place clusters pull from."""

    zone_redundancy: bool = Field(default=True, description="Zone-redundant registry and replicas.")
    geo_replication: bool = Field(default=True, description="A replica in every other region with clusters.")
    untagged_retention_days: int = Field(
        default=7, ge=0, le=365, description="Untagged manifests are deleted after this many days (0-365)."
    )
    cache_rules: dict[Annotated[str, StringConstraints(pattern=r"^[a-zA-Z0-9-]{5,50}$")], CacheRuleConfig] = Field(
        default_factory=dict,
        description="Pull-through cache rules for teams' upstream images, beside the platform's own (which "
        "are always present).",
    )
