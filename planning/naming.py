"""Resource names, after the Cloud Adoption Framework abbreviations.

`rg-ailab-prod-eus2-network`, `aks-ailab-prod-eus2`, `vnet-ailab-prod-eus2`. Every name is
derived from config keys, never from random suffixes, so names are stable across runs.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from facts.gpu import LABEL_PREFIX
from stackconfig.model import PlatformConfig

# On a workload's service account and pods, and on its Strimzi KafkaUser: which workload of
# platform:workloads it is.
WORKLOAD_LABEL = f"{LABEL_PREFIX}/workload"

# Short region codes keep names within Azure's length limits.
REGION_CODES: dict[str, str] = {
    "australiaeast": "aue",
    "brazilsouth": "brs",
    "canadacentral": "cac",
    "centralus": "cus",
    "eastus": "eus",
    "eastus2": "eus2",
    "francecentral": "frc",
    "germanywestcentral": "gwc",
    "japaneast": "jpe",
    "northcentralus": "ncus",
    "northeurope": "neu",
    "southcentralus": "scus",
    "swedencentral": "sdc",
    "uksouth": "uks",
    "westeurope": "weu",
    "westus": "wus",
    "westus2": "wus2",
    "westus3": "wus3",
}


def region_code(region: str) -> str:
    return REGION_CODES.get(region, region)


@dataclass(frozen=True)
class Naming:
    prefix: str
    environment: str

    def name(self, abbreviation: str, *parts: str) -> str:
        return "-".join([abbreviation, self.prefix, self.environment, *parts])

    def regional(self, abbreviation: str, region: str, *parts: str) -> str:
        return self.name(abbreviation, region_code(region), *parts)

    def identity_group(self, region: str) -> str:
        """The workloads' managed identities' resource group (the primary region's)."""
        return self.regional("rg", region, "identity")

    def workload_identity(self, workload: str) -> str:
        return self.name("id", "workload", workload)

    def cluster(self, cluster_key: str) -> str:
        return self.name("aks", cluster_key)

    def node_resource_group(self, cluster_key: str, region: str) -> str:
        # AKS puts the node VMs, disks and load balancers here; the name is fixed at creation.
        return self.name("rg", cluster_key, "nodes", region)

    # Globally unique names; Azure allows no hyphens in the first two.
    def storage_account(self, account_key: str) -> str:
        return f"st{self.prefix}{self.environment}{account_key}"

    def site_group(self, site_key: str) -> str:
        """The resource group of an on-premises site's connected cluster, and of what the platform
        adds to it (extensions, collection rules, the baseline's account)."""
        return self.name("rg", site_key, "site")

    def site_baseline_account(self, site_key: str) -> str:
        """The private account a site's Flux reads its baseline from (components/arc_site.py)."""
        return self.storage_account(f"{site_key}flux")

    def databases_group(self, region: str) -> str:
        """The data unit's group for Cosmos DB and PostgreSQL, in the primary region."""
        return self.regional("rg", region, "databases")

    def registry(self) -> str:
        return f"cr{self.prefix}{self.environment}"

    def registry_login_server(self) -> str:
        """Known before the registry exists, so chart values and admission need not wait for it."""
        return f"{self.registry()}.azurecr.io"

    def key_vault(self, region: str) -> str:
        return self.regional("kv", region)

    def etcd_key_vault(self, cluster_key: str) -> str:
        """A cluster's own vault for its etcd key: globally unique, within Key Vault's 24
        characters (a digest of prefix, environment and cluster keeps it so)."""
        digest = hashlib.sha256(f"{self.prefix}/{self.environment}/{cluster_key}".encode()).hexdigest()[:6]
        return f"kv-{cluster_key[:9]}-etcd-{digest}"

    def api_server_subzone(self) -> str:
        """The environment's label in a hub's shared API server zones
        (`ailab-prod.privatelink.eastus2.azmk8s.io`): at most 18 characters (prefix and
        environment names are short by type), within AKS's 32."""
        return f"{self.prefix}-{self.environment}"


# Azure's naming rules for the globally named resources (learn.microsoft.com, "Naming rules
# and restrictions for Azure resources").
_STORAGE_ACCOUNT = re.compile(r"^[a-z0-9]{3,24}$")
_KEY_VAULT = re.compile(r"^[a-zA-Z](?!.*--)[a-zA-Z0-9-]{1,22}[a-zA-Z0-9]$")
_REGISTRY = re.compile(r"^[a-zA-Z0-9]{5,50}$")


def storage_account_name_problem(name: str) -> str | None:
    if _STORAGE_ACCOUNT.match(name):
        return None
    return f"{name!r} is not a valid storage account name: 3-24 lowercase letters and digits"


def key_vault_name_problem(name: str) -> str | None:
    if _KEY_VAULT.match(name):
        return None
    return f"{name!r} is not a valid Key Vault name: 3-24 letters, digits and single hyphens, starting with a letter"


def registry_name_problem(name: str) -> str | None:
    if _REGISTRY.match(name):
        return None
    return f"{name!r} is not a valid container registry name: 5-50 letters and digits"


@dataclass(frozen=True)
class ResourceId:
    subscription: str
    resource_group: str
    provider: str
    type: str
    name: str


def parse_resource_id(resource_id: str) -> ResourceId:
    """Split `/subscriptions/<s>/resourceGroups/<g>/providers/<ns>/<type>/<name>`."""
    parts = resource_id.strip("/").split("/")
    if (
        len(parts) != 8
        or parts[0].lower() != "subscriptions"
        or parts[2].lower() != "resourcegroups"
        or parts[4].lower() != "providers"
    ):
        raise ValueError(f"not a top-level Azure resource ID: {resource_id}")
    return ResourceId(parts[1], parts[3], parts[5], parts[6], parts[7])


def storage_account_name(config: PlatformConfig, account_key: str) -> str:
    """A storage account's name: the configured one, or the platform's."""
    account = config.storage.accounts[account_key]
    return account.account_name or Naming(config.prefix, config.environment).storage_account(account_key)


def replica_region(config: PlatformConfig, account_key: str) -> str | None:
    """Where an `objectReplication` account's replica lives: the configured region, else the
    first region with clusters other than the primary. None without replication or such a region."""
    account = config.storage.accounts[account_key]
    if account.replication != "objectReplication":
        return None
    if account.replica_region:
        return account.replica_region
    return next((c.region for c in config.clusters.values() if c.region != config.primary_region), None)


def replica_account_name(config: PlatformConfig, account_key: str) -> str:
    """The replica's name: the configured one, or the account's followed by its region's code."""
    account = config.storage.accounts[account_key]
    region = replica_region(config, account_key)
    assert region is not None, account_key
    return account.replica_account_name or storage_account_name(config, account_key) + region_code(region)


def regional_container(container: str, region: str) -> str:
    """The writable twin, in the replica account, of a container jobs write in every region."""
    return f"{container}-{region_code(region)}"


def replica_containers(config: PlatformConfig, account_key: str) -> list[str]:
    """The containers of an account's replica: the copies, then the writable twins."""
    account = config.storage.accounts[account_key]
    region = replica_region(config, account_key)
    assert region is not None, account_key
    return [*account.containers, *(regional_container(c, region) for c in account.written_in_every_region)]
