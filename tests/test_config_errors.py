"""Bad stack configuration: one clean message naming every problem's key, nothing registered.

Every case runs the real program through the offline engine with one change to a real
stack file, so it proves what `pulumi up` would do: stop before registering anything.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT, copy_project, run_with


def set_in(path: str, value):
    """A change that sets `platform:<top>.<a>.<b>` to value (creating dicts on the way)."""

    def change(values):
        top, *rest = path.split(".")
        if not rest:
            values[f"platform:{top}"] = value
            return
        node = values.setdefault(f"platform:{top}", {})
        for part in rest[:-1]:
            node = node.setdefault(part, {})
        node[rest[-1]] = value

    return change


def expect_problem(stack: str, change, key: str, *reason_parts: str) -> str:
    plan = run_with(stack, change)
    assert plan.resources == [], "a bad config must stop the program before any resource is registered"
    assert plan.error is not None
    lines = [line for line in plan.error.splitlines() if line.strip().startswith(f"- {key}:")]
    assert lines, f"no problem for {key} in:\n{plan.error}"
    for part in reason_parts:
        assert any(part in line for line in lines), f"{part!r} not in {lines}"
    assert plan.error.startswith("The stack configuration has"), "a config problem, not a program crash"
    assert "Traceback" not in plan.error
    return plan.error


CASES = {
    "unknown top-level key": ("dev", set_in("clusterz", {}), "platform:clusterz", "not a known key"),
    "unknown nested key": (
        "prod",
        set_in("network.regions.eastus2.subnets.gateway", "10.20.251.0/24"),
        "platform:network.regions.eastus2.subnets.gateway",
        "not a known key",
    ),
    "misspelled pool key": (
        "dev",
        set_in("clusters.eus2.nodePools.cpu.maxcount", 5),
        "platform:clusters.eus2.nodePools.cpu.maxcount",
        "not a known key",
    ),
    "malformed CIDR": ("dev", set_in("network.podCidr", "100.64.0.0/33"), "platform:network.podCidr", "not valid"),
    "CIDR with host bits": (
        "dev",
        set_in("network.serviceCidr", "172.16.0.1/16"),
        "platform:network.serviceCidr",
        "not valid",
    ),
    "subnets overlap": (
        "dev",
        set_in("clusters.eus2.subnets.nodes", "10.10.0.0/22"),
        "platform:clusters.eus2.subnets.nodes",
        "overlaps platform:clusters.eus2.subnets.system",
    ),
    "pod CIDR overlaps a VNet": (
        "staging",
        set_in("network.podCidr", "10.30.0.0/16"),
        "platform:network.podCidr",
        "overlaps platform:network.regions.eastus2.addressSpace[0]",
    ),
    "service CIDR overlaps the hub": (
        "prod",
        set_in("network.serviceCidr", "10.0.0.0/16"),
        "platform:network.serviceCidr",
        "overlaps platform:network.hub.addressSpace[0]",
    ),
    "VNet overlaps on-premises": (
        "prod",
        set_in("network.onPremisesRanges", ["10.21.0.0/20"]),
        "platform:network.regions.southcentralus.addressSpace[0]",
        "overlaps platform:network.onPremisesRanges[0]",
    ),
    "subnet outside its VNet": (
        "dev",
        set_in("clusters.eus2.subnets.system", "10.99.0.0/24"),
        "platform:clusters.eus2.subnets.system",
        "outside the eastus2 VNet",
    ),
    "AKS-reserved range": (
        "dev",
        set_in("network.serviceCidr", "172.30.0.0/16"),
        "platform:network.serviceCidr",
        "which AKS cannot use",
    ),
    "node subnet too small for max + surge": (
        "prod",
        set_in("clusters.eus2.subnets.nodes", "10.20.32.0/22"),
        "platform:clusters.eus2.subnets.nodes",
        "is too small",
        "1,509 nodes with surge (1,402 max + 107 surge)",
        "use a /21",
    ),
    "overlay pod CIDR too small": (
        "prod",
        set_in("network.podCidr", "100.64.0.0/16"),
        "platform:network.podCidr",
        "serves 256 nodes",
        "1,525 with surge",
    ),
    "dnsServiceIP outside serviceCidr": (
        "dev",
        set_in("network.dnsServiceIP", "172.17.0.10"),
        "platform:network.dnsServiceIP",
        "outside serviceCidr",
    ),
    "dnsServiceIP is kubernetes.default": (
        "dev",
        set_in("network.dnsServiceIP", "172.16.0.1"),
        "platform:network.dnsServiceIP",
        "first address",
    ),
    "min above max": (
        "dev",
        set_in("clusters.eus2.nodePools.cpu.minCount", 11),
        "platform:clusters.eus2.nodePools.cpu.minCount",
        "greater than maxCount 10",
    ),
    "more than 1,000 nodes in a pool": (
        "prod",
        set_in("clusters.eus2.nodePools.cpu.maxCount", 1001),
        "platform:clusters.eus2.nodePools.cpu.maxCount",
        "1,001 exceeds AKS's 1,000",
    ),
    "unknown environment": ("dev", set_in("environment", "qa"), "platform:environment", "'qa' is not allowed"),
    "a surge too large to compute": (
        "dev",
        set_in("clusters.eus2.systemPool.maxSurge", "1" + "0" * 400 + "%"),
        "platform:clusters.eus2.systemPool.maxSurge",
        "should match pattern",
    ),
    "malformed Kubernetes version": (
        "dev",
        set_in("clusters.eus2.kubernetesVersion", "v1.35"),
        "platform:clusters.eus2.kubernetesVersion",
        "not a Kubernetes version",
    ),
    "patch channel with a pinned patch": (
        "dev",
        set_in("clusters.eus2.kubernetesVersion", "1.35.2"),
        "platform:clusters.eus2.kubernetesVersion",
        "give major.minor only",
    ),
    "local accounts off without an admin group": (
        "prod",
        set_in("entra.adminGroupObjectIds", []),
        "platform:entra.adminGroupObjectIds",
        "local accounts are disabled on eus2, scus",
    ),
    "public API server open to the internet": (
        "dev",
        set_in("clusters.eus2.apiServer.authorizedIpRanges", ["0.0.0.0/0"]),
        "platform:clusters.eus2.apiServer.authorizedIpRanges[0]",
        "opens the API server",
    ),
    "public API server open to half the internet twice": (
        "dev",
        set_in("clusters.eus2.apiServer.authorizedIpRanges", ["0.0.0.0/1", "128.0.0.0/1"]),
        "platform:clusters.eus2.apiServer.authorizedIpRanges[1]",
        "/8 or narrower",
    ),
    "pod CIDR overlaps the service CIDR": (
        "dev",
        set_in("network.podCidr", "172.16.0.0/16"),
        "platform:network.podCidr",
        "overlaps platform:network.serviceCidr",
    ),
    "pod CIDR overlaps the hub": (
        "prod",
        set_in("network.podCidr", "10.0.0.0/12"),
        "platform:network.podCidr",
        "overlaps platform:network.hub.addressSpace[0]",
    ),
    "pod CIDR overlaps on-premises": (
        "prod",
        set_in("network.podCidr", "192.168.0.0/14"),
        "platform:network.podCidr",
        "overlaps platform:network.onPremisesRanges[0]",
    ),
    "system pool min above max": (
        "prod",
        set_in("clusters.scus.systemPool.minCount", 13),
        "platform:clusters.scus.systemPool.minCount",
        "greater than maxCount 12",
    ),
    "public API server without ranges": (
        "dev",
        set_in("clusters.eus2.apiServer.authorizedIpRanges", []),
        "platform:clusters.eus2.apiServer.authorizedIpRanges",
        "required for a public API server",
    ),
    "VNet integration without a subnet": (
        "dev",
        set_in("clusters.eus2.apiServer.vnetIntegration", True),
        "platform:clusters.eus2.subnets.apiServer",
        "required when apiServer.vnetIntegration",
    ),
    "firewall routing without a firewall subnet": (
        "dev",
        set_in("network.egress.outboundType", "userDefinedRouting"),
        "platform:network.regions.eastus2.subnets.firewall",
        "required when outboundType is userDefinedRouting",
    ),
    "cluster in an undeclared region": (
        "dev",
        set_in("clusters.eus2.region", "westus3"),
        "platform:clusters.eus2.region",
        "westus3 has no VNet",
    ),
    "a public registry among a team's destinations": (
        "dev",
        set_in("teams.research.egressFqdns", ["pypi.org", "ghcr.io"]),
        "platform:teams.research.egressFqdns[1]",
        "opens the public registry ghcr.io",
    ),
    "a wildcard over a public registry": (
        "staging",
        set_in("network.egress.firewall.allowedFqdns", ["*.docker.io"]),
        "platform:network.egress.firewall.allowedFqdns[0]",
        "opens the public registry docker.io",
    ),
    "a wildcard over a whole top-level domain": (
        "dev",
        set_in("network.egress.firewall.allowedFqdns", ["*.io"]),
        "platform:network.egress.firewall.allowedFqdns[0]",
        "is not a host name",
    ),
    "intrusion detection on a Standard firewall": (
        "staging",
        set_in("network.egress.firewall.intrusionDetection", "Deny"),
        "platform:network.egress.firewall.intrusionDetection",
        "needs the Premium sku",
    ),
    "firewall subnet below /26": (
        "staging",
        set_in("network.regions.eastus2.subnets.firewall", "10.30.254.0/27"),
        "platform:network.regions.eastus2.subnets.firewall",
        "smaller than the /26 Azure Firewall needs",
    ),
    "a firewall subnet with NAT egress": (
        "dev",
        set_in("network.regions.eastus2.subnets.firewall", "10.10.254.0/26"),
        "platform:network.regions.eastus2.subnets.firewall",
        "only used when outboundType is userDefinedRouting",
    ),
    "FQDN policies without Advanced Container Networking Services": (
        "dev",
        set_in("clusters.eus2.advancedNetworking", False),
        "platform:clusters.eus2.advancedNetworking",
        "must stay on",
        "research",
        "Advanced Container Networking",
    ),
    "sandbox pool on a size without nested virtualization": (
        "prod",
        set_in("clusters.eus2.sandboxPool.vmSize", "Standard_NC24ads_A100_v4"),
        "platform:clusters.eus2.sandboxPool.vmSize",
        "no nested virtualization",
        "Standard_D8ds_v5",
    ),
    "high-risk namespace and no sandbox pool": (
        "dev",
        set_in("teams.research.highRiskNamespaces", ["research"]),
        "platform:clusters.eus2.sandboxPool",
        "is required",
        "research",
    ),
    "high-risk namespace of another team": (
        "dev",
        set_in("teams.research.highRiskNamespaces", ["inference"]),
        "platform:teams.research.highRiskNamespaces[0]",
        "inference is not one of the team's namespaces",
    ),
    "training namespace of another team": (
        "prod",
        set_in("teams.research.trainingNamespaces", ["inference"]),
        "platform:teams.research.trainingNamespaces[0]",
        "inference is not one of the team's namespaces",
    ),
    "a sandboxed namespace allowed IPC_LOCK": (
        "prod",
        set_in("teams.research.trainingNamespaces", ["research", "evals"]),
        "platform:teams.research.trainingNamespaces[1]",
        "evals is high-risk",
        "Kata",
    ),
    "unknown admission action": (
        "dev",
        set_in("admission.action", "Warn"),
        "platform:admission.action",
        "'Deny' or 'Audit'",
    ),
    "team claims kube-system": (
        "dev",
        set_in("teams.research.namespaces", ["kube-system"]),
        "platform:teams.research.namespaces[0]",
        "reserved",
    ),
    "required tag missing": ("dev", set_in("tags", {"owner": "someone"}), "platform:tags.cost-center", "required"),
    # GPU pools
    "unknown GPU size": (
        "dev",
        set_in("clusters.eus2.gpuPools.a100spot.vmSize", "Standard_ND40rs_v2"),
        "platform:clusters.eus2.gpuPools.a100spot.vmSize",
        "not a supported GPU VM size",
        "Standard_ND96isr_H100_v5",
    ),
    "GPU pool without a purpose": (
        "dev",
        set_in("clusters.eus2.gpuPools.a100spot.purpose", "mining"),
        "platform:clusters.eus2.gpuPools.a100spot.purpose",
        "'training', 'batch' or 'inference'",
    ),
    "misspelled GPU pool key": (
        "dev",
        set_in("clusters.eus2.gpuPools.a100spot.migprofile", "MIG1g"),
        "platform:clusters.eus2.gpuPools.a100spot.migprofile",
        "not a known key",
    ),
    "MIG on a GPU without MIG": (
        "dev",
        lambda v: (
            set_in("clusters.eus2.gpuPools.a100spot.vmSize", "Standard_NC4as_T4_v3")(v),
            set_in("clusters.eus2.gpuPools.a100spot.migProfile", "MIG1g")(v),
        ),
        "platform:clusters.eus2.gpuPools.a100spot.migProfile",
        "does not support MIG",
    ),
    "GPU pool surging by a third": (
        "prod",
        set_in("clusters.eus2.gpuPools.h100.maxSurge", "33%"),
        "platform:clusters.eus2.gpuPools.h100.maxSurge",
        "spare GPU quota",
    ),
    "Spot pool on reserved capacity": (
        "dev",
        set_in(
            "clusters.eus2.gpuPools.a100spot.capacityReservationGroupId",
            "/subscriptions/0b1f6471-1bf0-4dda-aec3-111122223333/resourceGroups/rg-cap"
            "/providers/Microsoft.Compute/capacityReservationGroups/crg-a100",
        ),
        "platform:clusters.eus2.gpuPools.a100spot.capacityReservationGroupId",
        "cannot draw from a capacity reservation",
    ),
    "ephemeral OS disk larger than the temp disk": (
        "dev",
        set_in(
            "clusters.eus2.gpuPools.a100spot",
            {
                "vmSize": "Standard_NC24ads_A100_v4",
                "purpose": "batch",
                "maxCount": 4,
                "osDiskType": "Ephemeral",
                "osDiskSizeGB": 128,
            },
        ),
        "platform:clusters.eus2.gpuPools.a100spot.osDiskSizeGB",
        "64 GiB temporary disk",
    ),
    "GPU pool named like a CPU pool": (
        "dev",
        set_in("clusters.eus2.gpuPools.cpu", {"vmSize": "Standard_NC4as_T4_v3", "purpose": "batch", "maxCount": 1}),
        "platform:clusters.eus2.gpuPools.cpu",
        "also declared under nodePools",
    ),
    "one GPU node over the pool limit": (
        "prod",
        set_in("clusters.eus2.gpuPools.h100.maxCount", 1001),
        "platform:clusters.eus2.gpuPools.h100.maxCount",
        "1,001 exceeds AKS's 1,000",
    ),
    "quotas over the pool's GPUs": (
        "dev",
        set_in("clusters.eus2.gpuPools.a100spot.quotas", {"research": 3, "inference": 2}),
        "platform:clusters.eus2.gpuPools.a100spot.quotas",
        "add up to 5 GPUs",
        "at most 4 (4 nodes x 1)",
    ),
    "quotas over the pool's MIG slices": (
        "staging",
        set_in("clusters.eus2.gpuPools.a100.quotas", {"inference": 16, "research": 1}),
        "platform:clusters.eus2.gpuPools.a100.quotas",
        "17 MIG slices",
        "at most 16 (8 nodes x 2)",
    ),
    "quota for an undeclared team": (
        "dev",
        set_in("clusters.eus2.gpuPools.a100spot.quotas", {"ghosts": 1}),
        "platform:clusters.eus2.gpuPools.a100spot.quotas.ghosts",
        "not declared under platform:teams",
    ),
    # 0 is a borrow-only quota (docs/gpus.md, "Quotas"); below it, nothing.
    "negative quota": (
        "dev",
        set_in("clusters.eus2.gpuPools.a100spot.quotas", {"research": -1}),
        "platform:clusters.eus2.gpuPools.a100spot.quotas.research",
        "greater than or equal to 0",
    ),
    "MIG with the operator's driver": (
        "prod",
        set_in("clusters.eus2.gpuPools.a100.migProfile", "MIG3g"),
        "platform:clusters.eus2.gpuPools.a100.migProfile",
        "AKS partitions MIG with the driver it installs",
    ),
    "InfiniBand pool across zones": (
        "prod",
        set_in("clusters.eus2.gpuPools.h100.zones", ["1", "2"]),
        "platform:clusters.eus2.gpuPools.h100.zones",
        "does not span availability zones",
    ),
    # Fleets
    "fleet settings on a single cluster": (
        "dev",
        set_in("fleet", {"soakHours": 2}),
        "platform:fleet",
        "two or more clusters",
    ),
    "a cluster channel beside the fleet": (
        "prod",
        set_in("clusters.scus.upgrades.channel", "patch"),
        "platform:clusters.scus.upgrades.channel",
        "the fleet owns Kubernetes upgrades",
    ),
    "unknown canary cluster": (
        "prod",
        set_in("fleet.canaryClusters", ["wus3"]),
        "platform:fleet.canaryClusters[0]",
        "not a cluster of this environment",
    ),
    "every cluster a canary": (
        "prod",
        set_in("fleet.canaryClusters", ["eus2", "scus", "dispeus2", "dispscus"]),
        "platform:fleet.canaryClusters",
        "no cluster for the second stage",
    ),
    "unknown container in a workload grant": (
        "dev",
        set_in("workloads.trainer.storage.weights.modelz", "read"),
        "platform:workloads.trainer.storage.weights.modelz",
        "is not a container of storage account weights",
    ),
    "unknown storage account in a workload grant": (
        "dev",
        set_in("workloads.trainer.storage.logs", {"raw": "read"}),
        "platform:workloads.trainer.storage.logs",
        "is not a storage account",
    ),
    "workload in a namespace no team declares": (
        "dev",
        set_in("workloads.trainer.namespace", "sandbox"),
        "platform:workloads.trainer.namespace",
        "no team declares it",
    ),
    "workload in another team's namespace": (
        "prod",
        set_in("workloads.trainer.namespace", "inference"),
        "platform:workloads.trainer.namespace",
        "belongs to inference",
    ),
    "workload of an unknown team": (
        "dev",
        set_in("workloads.inference.team", "finance"),
        "platform:workloads.inference.team",
        "not a team",
    ),
    "workload on an unknown cluster": (
        "prod",
        set_in("workloads.inference.clusters", ["eus2", "weu"]),
        "platform:workloads.inference.clusters[1]",
        "not a cluster",
    ),
    "two workloads share a service account": (
        "dev",
        set_in("workloads.evaluator", {"team": "research", "namespace": "research", "serviceAccount": "trainer"}),
        "platform:workloads.evaluator.serviceAccount",
        "already the service account of trainer",
    ),
    "workload access level": (
        "dev",
        set_in("workloads.inference.storage.weights.models", "admin"),
        "platform:workloads.inference.storage.weights.models",
        "not allowed",
    ),
    "storage account name breaks Azure's rules": (
        "dev",
        set_in("storage.accounts.weights.accountName", "Weights_01"),
        "platform:storage.accounts.weights.accountName",
        "not a valid storage account name",
    ),
    "derived storage account name too long": (
        "prod-scale",
        set_in("storage.accounts.checkpoint", {"containers": ["ckpt"]}),
        "platform:storage.accounts.checkpoint",
        "stailabscaleprodcheckpoint",
        "set accountName",
    ),
    "two accounts with one name": (
        "dev",
        set_in("storage.accounts.datasets.accountName", "stailabdevweights"),
        "platform:storage.accounts.datasets.accountName",
        "already the name of account weights",
    ),
    "container name breaks Azure's rules": (
        "dev",
        set_in("storage.accounts.weights.containers", ["Models"]),
        "platform:storage.accounts.weights.containers[0]",
        "not a valid container name",
    ),
    "prefix too long for the Key Vault name": (
        "staging",
        set_in("prefix", "ailabresear"),
        "platform:prefix",
        "not valid",
    ),
    "prefix makes the Key Vault name too long": (
        "staging",
        set_in("prefix", "ailabresea"),
        "platform:prefix",
        "not a valid Key Vault name",
    ),
    "point-in-time restore not shorter than soft delete": (
        "prod",
        set_in("storage.pointInTimeRestoreDays", 30),
        "platform:storage.pointInTimeRestoreDays",
        "must be shorter than softDeleteDays (30)",
    ),
    "point-in-time restore without the change feed": (
        "dev",
        set_in("storage.pointInTimeRestoreDays", 5),
        "platform:storage.pointInTimeRestoreDays",
        "needs the change feed",
    ),
    "unknown storage key": (
        "dev",
        set_in("storage.softDeleteDay", 5),
        "platform:storage.softDeleteDay",
        "not a known key",
    ),
    "cache rule from an upstream that needs credentials": (
        "dev",
        set_in("registry.cacheRules.pytorch", {"source": "docker.io/pytorch/*", "target": "pytorch/*"}),
        "platform:registry.cacheRules.pytorch.source",
        "docker.io is not an upstream",
    ),
    "cache rule overlapping the platform's": (
        "dev",
        set_in("registry.cacheRules.kueue", {"source": "registry.k8s.io/kueue/*", "target": "kueue/*"}),
        "platform:registry.cacheRules.kueue.source",
        "overlaps the platform's rule registry-k8s-io",
    ),
    "cache rule into the platform's target": (
        "dev",
        set_in("registry.cacheRules.mirror", {"source": "ghcr.io/nvidia/*", "target": "nvidia/*"}),
        "platform:registry.cacheRules.mirror.target",
        "overlaps the platform's rule nvcr-nvidia",
    ),
    "cache rule into the mirrored charts": (
        "dev",
        set_in("registry.cacheRules.charts", {"source": "ghcr.io/acme/charts/*", "target": "charts/*"}),
        "platform:registry.cacheRules.charts.target",
        "overlaps the platform's mirrored charts",
    ),
    "cache rule with the platform's name": (
        "dev",
        set_in("registry.cacheRules.nvcr-nvidia", {"source": "ghcr.io/acme/*", "target": "acme/*"}),
        "platform:registry.cacheRules.nvcr-nvidia",
        "is the name of the platform's rule",
    ),
    "a secret listed twice": (
        "dev",
        set_in("workloads.trainer.keyVaultSecrets", ["hf-token", "hf-token"]),
        "platform:workloads.trainer.keyVaultSecrets",
        "lists hf-token twice",
    ),
    "bad central DNS zone group": (
        "prod",
        set_in("network.hub.privateDnsZonesResourceGroupId", "rg-hub-dns"),
        "platform:network.hub.privateDnsZonesResourceGroupId",
        "not valid",
    ),
    # What Azure accepts (facts/): names, sizes, versions, tags, labels.
    "a region that does not exist": (
        "dev",
        set_in("clusters.eus2.region", "eastus9"),
        "platform:clusters.eus2.region",
        "not an Azure region",
    ),
    "a VM size that does not exist": (
        "dev",
        set_in("clusters.eus2.systemPool.vmSize", "Standard_D5ds_v9"),
        "platform:clusters.eus2.systemPool.vmSize",
        "not a VM size the platform knows",
    ),
    "a VM size too small for a system pool": (
        "dev",
        set_in("clusters.eus2.systemPool.vmSize", "Standard_D2ds_v5"),
        "platform:clusters.eus2.systemPool.vmSize",
        "too small for an AKS system pool",
    ),
    "a burstable system pool": (
        "dev",
        set_in("clusters.eus2.systemPool.vmSize", "Standard_B4ms"),
        "platform:clusters.eus2.systemPool.vmSize",
        "too small for an AKS system pool",
    ),
    "a GPU size in a CPU pool": (
        "dev",
        set_in("clusters.eus2.nodePools.cpu.vmSize", "Standard_NC24ads_A100_v4"),
        "platform:clusters.eus2.nodePools.cpu.vmSize",
        "is a GPU size",
        "gpuPools",
    ),
    "a GPU size in the system pool": (
        "dev",
        set_in("clusters.eus2.systemPool.vmSize", "Standard_NC4as_T4_v3"),
        "platform:clusters.eus2.systemPool.vmSize",
        "is a GPU size",
    ),
    "an ephemeral OS disk on a size without a local disk": (
        "dev",
        set_in("clusters.eus2.nodePools.cpu.vmSize", "Standard_E16s_v5"),
        "platform:clusters.eus2.nodePools.cpu.osDiskType",
        "no temporary or cache disk",
    ),
    "an ephemeral OS disk larger than the cache disk": (
        "dev",
        set_in("clusters.eus2.nodePools.cpu.vmSize", "Standard_D4s_v3"),
        "platform:clusters.eus2.nodePools.cpu.osDiskSizeGB",
        "100 GiB cache disk",
    ),
    "a GPU OS disk too small for CUDA images": (
        "dev",
        set_in("clusters.eus2.gpuPools.a100spot.osDiskSizeGB", 64),
        "platform:clusters.eus2.gpuPools.a100spot.osDiskSizeGB",
        "at least 128",
    ),
    "a Kubernetes version AKS never offered": (
        "dev",
        set_in("clusters.eus2.kubernetesVersion", "1.99"),
        "platform:clusters.eus2.kubernetesVersion",
        "AKS never offered Kubernetes 1.99",
    ),
    "a retired Kubernetes minor": (
        "dev",
        set_in("clusters.eus2.kubernetesVersion", "1.31"),
        "platform:clusters.eus2.kubernetesVersion",
        "not a minor AKS supports",
        "az aks get-versions",
    ),
    "a tag name ARM refuses": ("dev", set_in("tags.cost/center", "x"), "platform:tags.cost/center", "cannot contain /"),
    "a tag name Azure reserves": (
        "dev",
        set_in("tags.azure-owner", "x"),
        "platform:tags.azure-owner",
        "reserved for Azure",
    ),
    "a tag value too long": ("dev", set_in("tags.owner", "x" * 257), "platform:tags.owner", "at most 256 characters"),
    "more tags than private DNS zones take": (
        "dev",
        lambda v: v["platform:tags"].update({f"t{i}": "x" for i in range(11)}),
        "platform:tags",
        "at most 15",
    ),
    "a node label Kubernetes refuses": (
        "dev",
        set_in("clusters.eus2.nodePools.cpu.labels", {"team/research!": "yes"}),
        "platform:clusters.eus2.nodePools.cpu.labels",
        "the name must be",
    ),
    "a node label value Kubernetes refuses": (
        "dev",
        set_in("clusters.eus2.nodePools.cpu.labels", {"team": "research team"}),
        "platform:clusters.eus2.nodePools.cpu.labels",
        "label values",
    ),
    "a node label under AKS's prefix": (
        "dev",
        set_in("clusters.eus2.gpuPools.a100spot.labels", {"kubernetes.azure.com/mode": "training"}),
        "platform:clusters.eus2.gpuPools.a100spot.labels",
        "AKS reserves the kubernetes.azure.com/ prefix",
    ),
    # What a new user gets wrong in a stack file.
    "a misspelt namespace": (
        "dev",
        lambda v: v.__setitem__("platfrom:protect", True),
        "platfrom:protect",
        "misspelt platform: key",
    ),
    "an environment that is not the stack's": (
        "prod",
        set_in("environment", "staging"),
        "platform:environment",
        "'prod' is a stack of prod, but its platform:environment is staging",
    ),
    "a boolean where a number belongs": (
        "dev",
        set_in("clusters.eus2.systemPool.maxCount", True),
        "platform:clusters.eus2.systemPool.maxCount",
        "true is not a whole number",
    ),
    "a number where a boolean belongs": ("dev", set_in("protect", 1), "platform:protect", "1 is not true or false"),
    "an admin group listed twice": (
        "dev",
        set_in("entra.adminGroupObjectIds", ["3f1c2a4e-8b7d-4c1a-9e2f-5a6b7c8d9e01"] * 2),
        "platform:entra.adminGroupObjectIds",
        "twice",
    ),
    "a team group listed twice": (
        "dev",
        set_in(
            "teams.research.entraGroupObjectIds",
            ["6b8e2d1f-4a3c-4e5b-8d7f-1c2b3a4d5e02", "6B8E2D1F-4A3C-4E5B-8D7F-1C2B3A4D5E02"],
        ),
        "platform:teams.research.entraGroupObjectIds",
        "twice",
    ),
    "a wildcard over every tenant's storage": (
        "dev",
        set_in("teams.research.egressFqdns", ["*.blob.core.windows.net"]),
        "platform:teams.research.egressFqdns[0]",
        "every tenant's blob.core.windows.net",
    ),
    "a wildcard over every tenant's vaults, on the firewall": (
        "prod",
        set_in("network.egress.firewall.allowedFqdns", ["*.azure.net"]),
        "platform:network.egress.firewall.allowedFqdns[0]",
        "every tenant's",
    ),
    "an absurd termination grace period": (
        "dev",
        set_in("clusters.eus2.autoscaler.maxGracefulTerminationSec", 10**30),
        "platform:clusters.eus2.autoscaler.maxGracefulTerminationSec",
        "less than or equal to",
    ),
    "an absurd retention": (
        "staging",
        lambda v: v["platform:kafka"]["topics"][0].__setitem__("retentionHours", 10**30),
        "platform:kafka.topics[0].retentionHours",
        "less than or equal to",
    ),
    # One environment writing a hub that others use could cut their peering off.
    "the hub's side of the peering of a hub several environments share": (
        "prod",
        set_in("network.hub.createHubSidePeering", True),
        "platform:network.hub.createHubSidePeering",
        "written by its owner alone",
    ),
    "Cosmos DB: strong consistency with writes in every region": (
        "prod",
        lambda v: v["platform:cosmosDb"].update(consistency="Strong", multiRegionWrites=True, backup="periodic"),
        "platform:cosmosDb.consistency",
        "cannot be combined with multiple write regions",
    ),
    "Cosmos DB: continuous backup with writes in every region": (
        "prod",
        set_in("cosmosDb.multiRegionWrites", True),
        "platform:cosmosDb.backup",
        "needs a single write region",
    ),
    "Cosmos DB: serverless in two regions": (
        "prod",
        set_in("cosmosDb.capacity", "serverless"),
        "platform:cosmosDb.capacity",
        "serverless accounts run in one region",
    ),
    "Cosmos DB: bounded staleness below Azure's minimum across regions": (
        "prod",
        lambda v: v["platform:cosmosDb"].update(
            consistency="BoundedStaleness", maxStalenessPrefix=10, maxStalenessSeconds=300
        ),
        "platform:cosmosDb.maxStalenessPrefix",
        "below Azure's minimum of 100,000",
    ),
    "Cosmos DB: a grant on a container the database lacks": (
        "dev",
        set_in("workloads.inference.cosmosDb", {"lab/features": "read"}),
        "platform:workloads.inference.cosmosDb.lab/features",
        "not a container of database lab",
    ),
    "Cosmos DB: a grant without an account": (
        "dev",
        lambda v: v.pop("platform:cosmosDb"),
        "platform:workloads.inference.cosmosDb",
        "no Cosmos DB",
    ),
    "PostgreSQL: high availability on Burstable": (
        "prod",
        lambda v: v["platform:postgresql"].update(tier="Burstable", sku="Standard_B2s"),
        "platform:postgresql.highAvailability",
        "the Burstable tier has no high availability",
    ),
    "PostgreSQL: a grant on a database the server lacks": (
        "staging",
        set_in("workloads.inference.postgresql", {"features": "read"}),
        "platform:workloads.inference.postgresql.features",
        "not a database of platform:postgresql.databases",
    ),
    "PostgreSQL: grants without a server": (
        "staging",
        lambda v: v.pop("platform:postgresql"),
        "platform:workloads.inference.postgresql",
        "no PostgreSQL",
    ),
    "PostgreSQL: no role manager": (
        "staging",
        lambda v: v["platform:postgresql"].pop("roleManagerObjectId"),
        "platform:postgresql.roleManagerObjectId",
        "required",
    ),
    "Lustre: a size its tier does not make": (
        "prod",
        lambda v: v["platform:lustre"]["fileSystems"]["eastus2"].update(capacityTib=100),
        "platform:lustre.fileSystems.eastus2.capacityTib",
        "takes multiples of 8 TiB",
    ),
    "Lustre: a subnet too small for its size": (
        "prod",
        lambda v: v["platform:network"]["regions"]["eastus2"]["subnets"].update(lustre="10.20.248.0/26"),
        "platform:network.regions.eastus2.subnets.lustre",
        "Azure needs a /24",
    ),
    "Lustre: a file system without its subnet": (
        "prod",
        lambda v: v["platform:network"]["regions"]["eastus2"]["subnets"].pop("lustre"),
        "platform:network.regions.eastus2.subnets.lustre",
        "needs a subnet of its own",
    ),
    "Lustre: its readers on Azure Linux": (
        "prod",
        lambda v: v["platform:clusters"]["eus2"].setdefault("gpu", {}).update(osSku="AzureLinux"),
        "platform:clusters.eus2.gpu.osSku",
        "runs on Ubuntu nodes only",
    ),
    "PostgreSQL: a database the server keeps for itself": (
        "staging",
        lambda v: v["platform:postgresql"].update(databases=["experiments", "azure_sys"]),
        "platform:postgresql.databases[1]",
        "keeps for itself",
    ),
    "Lustre: a zone none of its training pools is in": (
        "prod",
        lambda v: v["platform:lustre"]["fileSystems"]["eastus2"].update(zone="2"),
        "platform:lustre.fileSystems.eastus2.zone",
        "holds none of eastus2's training pools",
    ),
}

# Values that look like credentials: refused with the key and where secrets belong, never echoed.
STORAGE_KEY = "Zm9v" * 21 + "YQ=="  # 86 base64 characters and ==
CLIENT_SECRET = "abc8Q~" + "x" * 34
CREDENTIALS = {
    "a connection string in a tag": (
        "tags.note",
        "DefaultEndpointsProtocol=https;AccountName=st;AccountKey=" + STORAGE_KEY,
        "tags.note",
        "a connection string",
    ),
    "a storage key as a label": (
        "clusters.eus2.nodePools.cpu.labels",
        {"key": STORAGE_KEY},
        "clusters.eus2.nodePools.cpu.labels.key",
        "a storage account key",
    ),
    "a client secret as a prefix": ("prefix", CLIENT_SECRET, "prefix", "an Entra ID client secret"),
    "a SAS token in an egress host": (
        "teams.research.egressFqdns",
        ["st.blob.core.windows.net/?sv=2024-01-01&se=2030&sig=" + "A" * 43 + "%3D"],
        "teams.research.egressFqdns[0]",
        "a SAS token",
    ),
}


@pytest.mark.parametrize("case", CREDENTIALS.values(), ids=CREDENTIALS.keys())
def test_a_credential_anywhere_is_refused_and_never_echoed(case):
    path, value, where, kind = case
    secret = value if isinstance(value, str) else (value[0] if isinstance(value, list) else next(iter(value.values())))
    message = expect_problem("dev", set_in(path, value), f"platform:{where}", f"looks like {kind}", "Key Vault")
    assert secret not in message
    assert secret[:20] not in message


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_bad_config_names_the_key_and_registers_nothing(case):
    stack, change, key, *reason = case
    expect_problem(stack, change, key, *reason)


def test_more_than_5000_nodes_in_a_cluster():
    def change(values):
        pools = values["platform:clusters"]["eus2"]["nodePools"]
        for i in range(5):
            pools[f"cpu{i}"] = {"vmSize": "Standard_D32ds_v5", "minCount": 0, "maxCount": 1000}
        values["platform:clusters"]["eus2"]["subnets"]["nodes"] = "10.20.64.0/18"
        values["platform:network"]["regions"]["eastus2"]["addressSpace"] = ["10.20.0.0/16"]

    expect_problem("prod", change, "platform:clusters.eus2", "6,414 nodes, over AKS's 5,000")


def test_more_than_100_pools():
    def change(values):
        pools = values["platform:clusters"]["eus2"]["nodePools"]
        for i in range(92):  # with the system, cpu, sandbox, three Kafka, flink and two GPU pools: 101
            pools[f"p{i}"] = {"vmSize": "Standard_D4ds_v5", "minCount": 0, "maxCount": 1, "maxSurge": "1"}

    expect_problem("prod", change, "platform:clusters.eus2", "101 pools", "exceed AKS's 100")


def test_one_message_lists_every_problem_sorted_by_key():
    def change(values):
        set_in("clusters.eus2.nodePools.cpu.minCount", 50)(values)
        set_in("network.dnsServiceIP", "10.9.9.9")(values)
        set_in("entra.adminGroupObjectIds", [])(values)

    message = expect_problem("dev", change, "platform:clusters.eus2.nodePools.cpu.minCount")
    keys = [line.split(": ")[0].strip("- ").strip() for line in message.splitlines() if line.startswith("  - ")]
    assert (
        keys
        == sorted(keys)
        == [
            "platform:clusters.eus2.nodePools.cpu.minCount",
            "platform:entra.adminGroupObjectIds",
            "platform:network.dnsServiceIP",
        ]
    )
    assert message.startswith("The stack configuration has 3 problems; nothing was deployed")


def test_yaml_values_readers_disagree_on_are_refused_with_their_key(tmp_path):
    """`maxCount: yes` is 1 to YAML 1.1, `0777` is 511, `prefix: yes` the text "true": the stack
    file itself is read, so the real `pulumi up` refuses them too."""
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.dev.yaml"
    text = stack_file.read_text()
    text = text.replace("platform:prefix: ailab", "platform:prefix: yes")
    text = text.replace("          maxCount: 4\n", "          maxCount: 0777\n", 1)
    assert text.count("yes") >= 1 and "0777" in text
    stack_file.write_text(text)
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "dev"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert "platform:prefix: yes is a boolean to some YAML readers" in output
    assert "platform:clusters.eus2.gpuPools.a100spot.maxCount: 0777 is read differently" in output
    assert "Traceback" not in output


def test_preview_cli_reports_bad_config_without_a_traceback(tmp_path):
    """The CLI path a user runs: exit 1, the message, no Python traceback."""
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.dev.yaml"
    original = stack_file.read_text()
    stack_file.write_text(original.replace("podCidr: 100.64.0.0/16", "podCidr: 100.64.0.0/29"))
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "dev"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1
    output = result.stdout + result.stderr
    assert "platform:network.podCidr" in output and "smaller than one node's /24" in output
    # The environment's configuration, said once as a preview's: not as the first unit's, not deployed.
    assert re.search(r"error: the dev configuration has \d+ problems?; nothing was previewed:", output)
    assert "dev.foundation:" not in output and "nothing was deployed" not in output
    # An unknown key whose name is an emoji code is printed as typed, not as a rich emoji.
    stack_file.write_text(original.replace("\nconfig:\n", "\nconfig:\n  platform:x: 1\n", 1))
    result = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "dev"], cwd=project, capture_output=True, text=True
    )
    assert result.returncode == 1 and "platform:x: is not a known key" in result.stdout + result.stderr
    assert "Traceback" not in output


def test_config_is_read_from_every_source_the_cli_uses(monkeypatch):
    """Unknown keys can only be found by listing all config, which pulumi.Config cannot do;
    the loader reads the SDK's config map and the PULUMI_CONFIG variable the CLI sets."""
    import json

    import pulumi.runtime

    from validation.loader import current_stack_config

    monkeypatch.setenv("PULUMI_CONFIG", json.dumps({"platform:fromEnv": "1", "platform:both": "env"}))
    pulumi.runtime.set_all_config({"platform:fromMap": "2", "platform:both": "map"})
    try:
        merged = current_stack_config()
    finally:
        pulumi.runtime.set_all_config({})
    assert merged["platform:fromEnv"] == "1" and merged["platform:fromMap"] == "2"
    assert merged["platform:both"] == "map", "explicitly set config wins, as in pulumi.Config"


def test_more_than_20_clusters_for_one_workload():
    """Each cluster needs a federated credential on the workload's identity; Azure allows 20."""
    from scripts.bench import synthetic_fleet

    fleet = synthetic_fleet(21)

    def everywhere(values):
        values.clear()
        values.update(fleet)
        del values["platform:workloads"]["trainer"]["clusters"]

    expect_problem("prod", everywhere, "platform:workloads.trainer.clusters", "21 clusters", "20 per identity")


def test_configuration_reference_is_generated_from_the_model_and_current():
    """docs/configuration.md is what scripts/docs.py renders from the model (run `make docs` after
    changing it), every key in it has a description, and what each stack sets is in the page
    `make docs` writes beside it, out/docs/configuration-by-stack.md."""
    from scripts import docs
    from stackconfig.reference import keys

    undocumented = [key.path for key in keys() if len(key.description) < 10]
    assert undocumented == []
    page = ROOT / "docs" / "configuration.md"
    assert page.read_text() == docs.pages(page)[page], "docs/configuration.md is stale: run `make docs`"
    assert "| `podCidr` | CIDR | required | Overlay pod range" in page.read_text()
    text = docs.stack_views()[docs.OUT / "configuration-by-stack.md"]()
    assert "| `podCidr` | CIDR | required | dev: `100.64.0.0/16`" in text
    assert "dev: `Standard_LRS`" in text, "a stack's explicit weakening shows beside the default"
    assert "| `topics[].partitions` | integer, 1 to 10,000 | required | dev: `" in text, "list entries' values show"


def test_a_stack_file_that_is_not_yaml_or_sets_a_key_twice_is_named_with_file_and_line(tmp_path):
    """PyYAML raised a parser traceback without the file's name, and kept the last of two equal
    keys in silence (the Pulumi CLI's reader refuses them: gopkg.in/yaml.v3, "already defined")."""
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.dev.yaml"
    original = stack_file.read_text()
    stack_file.write_text(
        original.replace("  platform:prefix: ailab\n", "  platform:prefix: ailab\n  platform:prefix: other\n", 1)
    )
    twice = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "dev"], cwd=project, capture_output=True, text=True
    )
    line = original.splitlines().index("  platform:prefix: ailab") + 1
    assert twice.returncode == 1, twice.stdout
    assert f"stacks/Pulumi.dev.yaml:{line + 1}: platform:prefix is already set at line {line}; keep one" in twice.stdout
    stack_file.write_text(original.replace("  platform:environment: dev", "  platform:environment: [dev", 1))
    broken = subprocess.run(
        [sys.executable, "scripts/preview.py", "--stack", "dev"], cwd=project, capture_output=True, text=True
    )
    assert broken.returncode == 1 and "Traceback" not in broken.stdout + broken.stderr
    assert re.search(
        r"stacks/Pulumi\.dev\.yaml:\d+:\d+: not valid YAML: did not find expected ',' or '\]'", broken.stdout
    )


@pytest.mark.parametrize(
    "path, typo, suggestion",
    [
        ("clusters.eus2.apiServer", "vnetIntegraton", "vnetIntegration"),
        ("clusters.eus2", "gpuPool", "gpuPools"),
        ("storage.accounts.weights", "writtenInEveryRegon", "writtenInEveryRegion"),
    ],
)
def test_a_misspelt_key_suggests_the_nearest_known_one(path, typo, suggestion):
    def misspell(values):
        target = values[f"platform:{path.split('.')[0]}"]
        for part in path.split(".")[1:]:
            target = target[part]
        target[typo] = target.pop(suggestion, True)

    expect_problem("prod", misspell, f"platform:{path}.{typo}", f"is not a known key; did you mean {suggestion}?")


def test_a_problem_that_causes_others_comes_first():
    """Two regions with one address space: the overlap makes every subnet of the second fall
    outside its VNet; the overlap, the one thing to fix, is listed first."""

    def overlap(values):
        regions = values["platform:network"]["regions"]
        regions["southcentralus"]["addressSpace"] = list(regions["eastus2"]["addressSpace"])

    error = expect_problem(
        "prod",
        overlap,
        "platform:network.regions.southcentralus.addressSpace[0]",
        "overlaps platform:network.regions.eastus2.addressSpace[0]",
    )
    problems = [line for line in error.splitlines() if line.startswith("  - ")]
    assert len(problems) > 1 and "addressSpace[0]: 10.20.0.0/16 overlaps" in problems[0], problems[:2]
    assert all("is outside the southcentralus VNet" in line for line in problems[1:])


def test_a_stack_named_against_the_rule_is_refused_with_the_rule_and_a_name_that_fits():
    """`research-eu` deploying staging: the message is the one naming rule (stackconfig/stacks.py),
    first, with a name for the stack that fits it, and the same whatever the environment is."""
    from validation.loader import ConfigError, parse_platform_config
    from validation.stackfile import read_stack_config

    staging = read_stack_config(ROOT, "staging").values
    with pytest.raises(ConfigError) as refused:
        parse_platform_config(staging, stack="research-eu")
    first = str(refused.value).splitlines()[1].strip()
    assert first.startswith(
        "- stack: 'research-eu' breaks the stack naming rule; name it `staging` or `staging-researcheu`:"
    ), str(refused.value)
    with pytest.raises(ConfigError) as other:
        parse_platform_config(staging, stack="prod-eu")
    assert (
        "- platform:environment: 'prod-eu' is a stack of prod, but its platform:environment is staging; name the "
        "stack `staging-<variant>`"
    ) in str(other.value)
    assert parse_platform_config(staging, stack="staging-eu").environment == "staging"


def test_a_units_deploy_says_a_problem_may_be_another_units_key_and_stops_every_unit():
    """`pulumi up prod.foundation` with a team's key wrong: the foundation refuses (each unit
    checks the whole file) and says so, rather than reading as the foundation's own problem."""
    import json

    from planning.layers import Unit
    from validation.loader import ConfigError, parse_platform_config
    from validation.stackfile import read_stack_config

    values = dict(read_stack_config(ROOT, "prod").values)
    teams = json.loads(values["platform:teams"])
    teams["research"]["namespace"] = ["research"]  # a typo of `namespaces`
    values["platform:teams"] = json.dumps(teams)
    with pytest.raises(ConfigError) as refused:
        parse_platform_config(values, stack="prod", unit=Unit("foundation"), unit_stack="prod.foundation")
    header, first = str(refused.value).splitlines()[:2]
    assert header == (
        "The stack configuration has 1 problem; nothing was deployed (prod.foundation checks the environment's "
        "whole stack file, so every unit refuses until it is fixed):"
    )
    assert first.strip().startswith("- platform:teams.research.namespace: is not a known key; did you mean")
