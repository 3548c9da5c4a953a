"""What one stack may not share with the repository's other stacks (stacks/Pulumi.<name>.yaml).

A stack file copied from another previews fine on its own; deployed, it would fight the original
for its resources. Three things collide:
- the prefix in the same environment: every resource name (`rg-<prefix>-<env>-...`) is the other
  stack's, and azure-native refuses to create what exists (or, after an import, two stacks own it);
- a globally unique name (storage accounts, Key Vaults, the registry): Azure gives it once, in any
  subscription, and keeps a deleted vault's name through its retention;
- a region's address space overlapping another stack's when both peer with the same hub: Azure
  refuses the second peering (`VnetAddressSpaceOverlapsWithAlreadyPeeredVnet`: "address space of
  the first virtual network overlaps with address space of third virtual network already peered",
  ARM's error code, as azure-sdk-for-go lists it), and the hub could route to only one of them.
Pod and service ranges are inside each cluster and may repeat; the hub's own ranges are shared.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from planning import naming as naming_rules
from planning.naming import Naming, storage_account_name
from stackconfig.keys import key
from stackconfig.model import PlatformConfig
from validation.checks.common import ConfigProblem


def global_names(config: PlatformConfig) -> Iterator[tuple[str, str]]:
    """Every globally unique name the stack deploys, with the key that decides it."""
    naming = Naming(config.prefix, config.environment)
    for region in dict.fromkeys(c.region for c in config.clusters.values()):
        yield naming.key_vault(region), key("prefix")
    yield naming.registry(), key("prefix")
    for cluster_key, cluster in config.clusters.items():
        if cluster.etcd_encryption:
            yield naming.etcd_key_vault(cluster_key), key("clusters", cluster_key)
    for account_key, account in config.storage.accounts.items():
        where = key("storage", "accounts", account_key, *(["accountName"] if account.account_name else []))
        yield storage_account_name(config, account_key), where
        if naming_rules.replica_region(config, account_key) is not None:
            replica = "replicaAccountName" if account.replica_account_name else "accountName"
            yield (
                naming_rules.replica_account_name(config, account_key),
                key("storage", "accounts", account_key, replica),
            )


def collisions(stack: str, config: PlatformConfig, others: Mapping[str, PlatformConfig]) -> Iterator[ConfigProblem]:
    """What `stack` shares with the other stacks of its repository, each named by this stack's key."""
    for other, theirs in sorted(others.items()):
        if other == stack:
            continue
        where = f"stacks/Pulumi.{other}.yaml"
        if (theirs.prefix, theirs.environment) == (config.prefix, config.environment):
            name = Naming(config.prefix, config.environment).name("rg")
            yield ConfigProblem(
                key("prefix"),
                f"give this stack a prefix of its own: {config.prefix!r} in environment {config.environment} is also "
                f"{where}'s, so every resource would have that stack's names ({name}-...)",
                cause=True,
            )
            continue  # every name below follows from this one
        taken = dict(global_names(theirs))
        for name, name_key in global_names(config):
            if name in taken:
                yield ConfigProblem(
                    name_key,
                    f"choose another name: {name} is also {where}'s ({taken[name]}), and Azure gives a global name once",
                )
        if config.network.hub is None or theirs.network.hub is None:
            continue
        if config.network.hub.virtual_network_id.lower() != theirs.network.hub.virtual_network_id.lower():
            continue
        for region, network in config.network.regions.items():
            for mine in network.address_space:
                for their_region, their_network in theirs.network.regions.items():
                    for range_ in their_network.address_space:
                        if mine.overlaps(range_):
                            yield ConfigProblem(
                                key("network", "regions", region, "addressSpace"),
                                f"give this stack ranges of its own: {mine} overlaps {range_} of {where} "
                                f"(network.regions.{their_region}), and both peer with the same hub, which refuses "
                                "the second peering (VnetAddressSpaceOverlapsWithAlreadyPeeredVnet)",
                            )
