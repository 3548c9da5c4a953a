"""What a team needs to fill in the golden workloads (examples/), per cluster, as a stack output.

The examples are templates with `${NAME}` placeholders (envsubst's syntax); `scripts/workloads.py`
fills them from `pulumi stack output --json`: this module's `workloadContext`, with the registry
and each Kafka client's connection info. Nothing here is a secret.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from typing import Any

import yaml

from facts import aks_node
from facts.azure_regions import REGIONS
from facts.cosmosdb import token_scope
from facts.gpu import GPU_VM_SIZES, gpu_units_per_node
from facts.postgresql import TOKEN_SCOPE as POSTGRES_TOKEN_SCOPE
from planning import cosmosdb as cosmos_plan
from planning import postgresql as pg_plan
from planning.dispatch import ANY_REGION_QUEUE
from planning.naming import (
    Naming,
    regional_container,
    replica_account_name,
    replica_region,
    storage_account_name,
)
from planning.onprem import site_pools
from planning.queues import LOCAL_QUEUE
from stackconfig.model import PlatformConfig


def blob_endpoint(account_name: str) -> str:
    return f"https://{account_name}.blob.core.windows.net"


def _share_per_gpu(vm_size: str, units: int, max_pods: int) -> dict[str, int]:
    size = GPU_VM_SIZES[vm_size]
    cpu = aks_node.allocatable_cpu_millicores(size.vcpus) - aks_node.NODE_AGENT_HEADROOM_MILLICORES
    memory = (
        aks_node.allocatable_memory_bytes(size.memory_gib, max_pods) // aks_node.MIB - aks_node.NODE_AGENT_HEADROOM_MIB
    )
    return {"cpuPerGpu": cpu // 1000 // units, "memoryGiPerGpu": memory // 1024 // units}


def workload_context(config: PlatformConfig) -> dict[str, Any]:
    """Per cluster its GPU pools; the storage accounts, workloads, queue and namespace classes."""
    clusters = {
        key: {
            "gpuPools": {
                name: {
                    "purpose": pool.purpose,
                    "vmSize": pool.vm_size,
                    "gpusPerNode": gpu_units_per_node(GPU_VM_SIZES[pool.vm_size], pool.mig_profile),
                    "infiniband": GPU_VM_SIZES[pool.vm_size].infiniband,
                    "ncclTopology": GPU_VM_SIZES[pool.vm_size].nccl_topology,
                    "migProfile": pool.mig_profile,
                    "spot": pool.spot,
                    # What one GPU (or MIG slice) comes with: the node's allocatable CPU and memory,
                    # less room for node agents, shared evenly (facts/aks_node.py).
                    **_share_per_gpu(
                        pool.vm_size, gpu_units_per_node(GPU_VM_SIZES[pool.vm_size], pool.mig_profile), pool.max_pods
                    ),
                }
                for name, pool in cluster.gpu_pools.items()
            },
            "region": cluster.region,
            "sandbox": cluster.sandbox_pool is not None,
            "storageAccounts": _nearest_copies(config, cluster.region),
            "keyVaultUri": f"https://{Naming(config.prefix, config.environment).key_vault(cluster.region)}.vault.azure.net/",
        }
        for key, cluster in config.clusters.items()
        if cluster.role == "workloads"
    }
    # On-premises sites (docs/hybrid.md): their GPU pools as the site has them, the region they
    # attach to (the copies they read, over the link).
    sites = {
        key: {
            "gpuPools": {
                pool.name: {
                    "purpose": "training",
                    "vmSize": config.on_prem_clusters[key].gpu_pools[pool.name].size,
                    "gpusPerNode": pool.gpus_per_node,
                    "infiniband": pool.infiniband,
                    "ncclTopology": GPU_VM_SIZES[size].nccl_topology
                    if (size := config.on_prem_clusters[key].gpu_pools[pool.name].size)
                    else "",
                    "migProfile": None,
                    "spot": False,
                    # The servers' own CPU and memory, less the same room for node agents as on AKS.
                    "cpuPerGpu": (pool.vcpus * 1000 - aks_node.NODE_AGENT_HEADROOM_MILLICORES)
                    // 1000
                    // pool.gpus_per_node,
                    "memoryGiPerGpu": (pool.memory_gib * 1024 - aks_node.NODE_AGENT_HEADROOM_MIB)
                    // 1024
                    // pool.gpus_per_node,
                }
                for pool in site_pools(site)
            },
            "region": site.region,
            "sandbox": False,
            "storageAccounts": _nearest_copies(config, site.region),
            "keyVaultUri": f"https://{Naming(config.prefix, config.environment).key_vault(site.region)}.vault.azure.net/",
        }
        for key, site in config.on_prem_clusters.items()
    }
    return {
        "queue": LOCAL_QUEUE,
        "clusters": clusters,
        "sites": sites,
        # The declared order (a map's order does not survive `pulumi stack output`): the first is
        # the default cluster of scripts/workloads.py.
        "clusterOrder": list(clusters),
        # Where to submit a job for any region (planning/dispatch.py): these clusters' `anyRegionQueue`.
        "dispatchers": list(config.jobs.dispatchers),
        "anyRegionQueue": ANY_REGION_QUEUE,
        "storageAccounts": {
            key: {"name": name, "blobEndpoint": blob_endpoint(name), "containers": list(account.containers)}
            for key, account in config.storage.accounts.items()
            for name in (storage_account_name(config, key),)
        },
        "workloads": {
            name: {
                "namespace": spec.namespace,
                "serviceAccount": spec.service_account,
                "clusters": config.workload_clusters(name),
                "sites": list(spec.sites),
                "cosmosDb": dict(spec.cosmos_db),
                "postgresql": dict(spec.postgresql),
            }
            for name, spec in config.workloads.items()
        },
        # The account's global endpoint (its private endpoint answers for it in every region with
        # clusters) and its regions, the write region first: a client lists its cluster's region
        # first among its preferred locations.
        "cosmosDb": {
            "endpoint": cosmos_plan.endpoint(cosmos_plan.account_name(config)),
            "tokenScope": token_scope(cosmos_plan.account_name(config)),
            "regions": cosmos_plan.account_regions(config),
        }
        if config.cosmos_db is not None
        else None,
        # The server's host (its private endpoint's record) and the scope of the tokens clients
        # sign in with; a workload's role is its own name.
        "postgresql": {"host": pg_plan.host(pg_plan.server_name(config)), "tokenScope": POSTGRES_TOKEN_SCOPE}
        if config.postgresql is not None
        else None,
        "trainingNamespaces": [ns for team in config.teams.values() for ns in team.training_namespaces],
        "highRiskNamespaces": [ns for team in config.teams.values() for ns in team.high_risk_namespaces],
        "egressFqdns": {ns: list(team.egress_fqdns) for team in config.teams.values() for ns in team.namespaces},
    }


def _nearest_copies(config: PlatformConfig, region: str) -> dict[str, Any]:
    """Per account, the copy a cluster in `region` reads: the replica in its region, or the
    account. A replica is read-only while the replication runs (writes go to the account,
    `storageAccounts`), until a person ends it in a failover (README, "Regional failure")."""
    copies = {}
    for key in config.storage.accounts:
        replica = replica_region(config, key) == region
        name = replica_account_name(config, key) if replica else storage_account_name(config, key)
        copies[key] = {"name": name, "blobEndpoint": blob_endpoint(name), "readOnly": replica}
    return copies


# The ConfigMap in every team namespace of every cluster that says where its jobs read and write.
STORAGE_CONFIG_MAP = "platform-storage"


def _variable(*parts: str) -> str:
    return "_".join(part.upper().replace("-", "_") for part in parts)


def storage_locations(config: PlatformConfig, cluster_key: str) -> dict[str, str]:
    """What a job on this cluster reads and writes, by account: `<ACCOUNT>_URL`, the copy in the
    cluster's region; `<ACCOUNT>_WRITE_URL`, the account itself; and per container
    `<ACCOUNT>_<CONTAINER>_URL`, where a job on this cluster writes it: for a container written in
    every region, in the replica's region, the replica's writable twin (planning/naming.py,
    regional_container); else the account's container. `<ACCOUNT>_<CONTAINER>_RESUME_URLS`: where
    a job on this cluster finds earlier ones (space-separated): there, the twin and the replica's
    copy of the primary's container; elsewhere, the account's container and the twin (reached
    through the replica's endpoint in this region)."""
    return region_storage_locations(config, config.clusters[cluster_key].region)


def region_storage_locations(config: PlatformConfig, region: str) -> dict[str, str]:
    """`storage_locations` for any cluster in `region`: an AKS cluster's, or a site's (which
    reaches the same endpoints over the link)."""
    found = {}
    for key, copy in _nearest_copies(config, region).items():
        account = config.storage.accounts[key]
        own = blob_endpoint(storage_account_name(config, key))
        found[_variable(key, "url")] = copy["blobEndpoint"]
        found[_variable(key, "write", "url")] = own
        for container in account.containers:
            regional = container in account.written_in_every_region and replica_region(config, key) == region
            where = (
                f"{copy['blobEndpoint']}/{regional_container(container, region)}" if regional else f"{own}/{container}"
            )
            found[_variable(key, container, "url")] = where
            # Where a job resumes from (the newest step wins): in the replica's region, what jobs
            # wrote there and the copy of what the primary's wrote; elsewhere, the account and,
            # through its endpoint in this region while its region is up, the replica's twin.
            if regional:
                resume = [where, f"{copy['blobEndpoint']}/{container}"]
            elif container in account.written_in_every_region and (twin_region := replica_region(config, key)):
                twin = regional_container(container, twin_region)
                resume = [where, f"{blob_endpoint(replica_account_name(config, key))}/{twin}"]
            else:
                resume = [where]
            found[_variable(key, container, "resume", "urls")] = " ".join(resume)
    return found


def _first_pool(pools: dict[str, Any], wanted: Callable[[Any], bool]) -> tuple[str, dict[str, Any]] | None:
    # By name: outputs come back as maps, in no particular order.
    return next(((name, pools[name]) for name in sorted(pools) if wanted(pools[name])), None)


def default_cluster(outputs: dict[str, Any], workload: str | None = None) -> str:
    """The first declared cluster that runs workloads, and `workload` if given (a stack's outputs
    from before the order was exported: the first by name)."""
    context = outputs["workloadContext"]
    order = [str(key) for key in context.get("clusterOrder") or sorted(context["clusters"])]
    runs = (context["workloads"].get(workload) or {}).get("clusters") if workload else None
    return next((key for key in order if runs is None or key in runs), order[0])


def workload_topics(outputs: dict[str, Any], workload: str) -> dict[str, str]:
    """The Kafka topics a workload may use, with its access (read, write, readWrite)."""
    client = (outputs.get("kafkaClients") or {}).get(workload) or {}
    return {topic: spec["access"] for topic, spec in sorted((client.get("topics") or {}).items())}


def template_variables(
    outputs: dict[str, Any], cluster: str, workload: str | None = None, topic: str | None = None
) -> dict[str, str]:
    """The placeholders a cluster of a stack can fill, from its outputs (`pulumi stack output --json`).

    `WORKLOAD_*` are the given workload's (`platform:workloads.<name>`: its namespace, service
    account and Kafka client), `TOPIC` the given topic, so one template serves any workload. A
    placeholder that a stack cannot fill is absent: a template that needs it does not apply there
    (no InfiniBand pool, no sandbox, a workload that does not run in the cluster), and rendering
    says which."""
    context = outputs["workloadContext"]
    site = context.get("sites", {}).get(cluster)
    where = site if site is not None else context["clusters"][cluster]
    pools = where["gpuPools"]
    # A site's runtime pulls the platform registry's images through its mirror (docs/hybrid.md):
    # one manifest runs on AKS and at a site.
    found: dict[str, Any] = {"REGISTRY": outputs["registryLoginServer"], "QUEUE": context["queue"], "NODES": "2"}
    for prefix, wanted in (
        ("TRAINING", lambda p: p["purpose"] == "training" and p["infiniband"]),
        ("INFERENCE", lambda p: p["purpose"] == "inference"),
        ("BATCH", lambda p: p["spot"]),
    ):
        pool = _first_pool(pools, wanted)
        if pool:
            name, spec = pool
            found |= {
                f"{prefix}_POOL": name,
                f"{prefix}_GPUS": spec["gpusPerNode"],
                f"{prefix}_CPU_PER_GPU": spec["cpuPerGpu"],
                f"{prefix}_MEMORY_GI_PER_GPU": spec["memoryGiPerGpu"],
                f"{prefix}_CPU_PER_NODE": spec["cpuPerGpu"] * spec["gpusPerNode"],
                f"{prefix}_MEMORY_PER_NODE": spec["memoryGiPerGpu"] * spec["gpusPerNode"],
            }
            if spec.get("ncclTopology"):
                found[f"{prefix}_NCCL_TOPOLOGY"] = spec["ncclTopology"]
    nearest = where.get("storageAccounts", {})
    if "weights" in nearest:
        # Read from the copy in the cluster's region.
        found["WEIGHTS_URL"] = nearest["weights"]["blobEndpoint"]
    if "weights" in context["storageAccounts"]:
        # Write to the account itself.
        found["WEIGHTS_WRITE_URL"] = context["storageAccounts"]["weights"]["blobEndpoint"]
    spec = context["workloads"].get(workload or "")
    if spec and cluster in [*spec["clusters"], *spec.get("sites", [])]:
        found |= {"WORKLOAD_NAMESPACE": spec["namespace"], "WORKLOAD_SERVICE_ACCOUNT": spec["serviceAccount"]}
        cosmos = context.get("cosmosDb")
        if cosmos and spec.get("cosmosDb"):
            region = where.get("region")
            found |= {
                "COSMOS_ENDPOINT": cosmos["endpoint"],
                "COSMOS_TOKEN_SCOPE": cosmos["tokenScope"],
                # The cluster's own region first, then the account's failover order, as the SDKs
                # name regions (`preferred_locations`: display names).
                "COSMOS_PREFERRED_REGIONS": ",".join(
                    REGIONS[r].display_name if r in REGIONS else r
                    for r in dict.fromkeys([*([region] if region in cosmos["regions"] else []), *cosmos["regions"]])
                ),
            }
        postgres = context.get("postgresql")
        if postgres and spec.get("postgresql"):
            found |= {
                "POSTGRES_HOST": postgres["host"],
                "POSTGRES_TOKEN_SCOPE": postgres["tokenScope"],
                "POSTGRES_USER": pg_plan.workload_role(str(workload)),
            }
        client = (outputs.get("kafkaClients") or {}).get(workload)
        if client and cluster in client["bootstrapServers"]:
            found |= {
                "WORKLOAD_KAFKA_BOOTSTRAP": client["bootstrapServers"][cluster],
                "WORKLOAD_KAFKA_PROTOCOL": client["securityProtocol"],
                "WORKLOAD_KAFKA_SCOPE": client.get("tokenScope", ""),
                "WORKLOAD_KAFKA_GROUP_PREFIX": client["consumerGroupPrefix"],
            }
            if topic is not None and workload is not None and topic in workload_topics(outputs, workload):
                found["TOPIC"] = topic
    if where["sandbox"] and context["highRiskNamespaces"]:
        found["SANDBOX_NAMESPACE"] = context["highRiskNamespaces"][0]
    downloads = sorted(
        ns
        for ns, fqdns in context["egressFqdns"].items()
        if "huggingface.co" in fqdns and ns not in context["highRiskNamespaces"]
    )
    if downloads:
        found["DOWNLOAD_NAMESPACE"] = downloads[0]
    return {key: str(value) for key, value in found.items()}


class NotApplicable(Exception):
    """A template needs a placeholder the stack's cluster cannot fill."""


def placeholders(template: str) -> set[str]:
    """The `${NAME}` placeholders a template uses."""
    return {m.group("braced") for m in string.Template.pattern.finditer(template) if m.group("braced")}


def render(template: str, variables: dict[str, str]) -> list[dict[str, Any]]:
    """The template's documents with every `${NAME}` filled (`NotApplicable` names what is missing)."""
    missing = sorted(
        {
            match.group("braced")
            for match in string.Template.pattern.finditer(template)
            if match.group("braced") and match.group("braced") not in variables
        }
    )
    if missing:
        raise NotApplicable(", ".join(missing))
    return [doc for doc in yaml.safe_load_all(string.Template(template).substitute(variables)) if doc]
