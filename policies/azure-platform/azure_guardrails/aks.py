"""AKS clusters and node pools: identity, network isolation, upgrades, GPU pools."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Optional

from guardrail import BuiltIn, lookup, resource_policy, stack_policy
from pulumi_policy import Severity

MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
AGENT_POOL = "azure-native:containerservice:AgentPool"
FLEET_MEMBER = "azure-native:containerservice:FleetMember"
FLEET_AUTO_UPGRADE = "azure-native:containerservice:AutoUpgradeProfile"

CRITICAL_ADDONS_TAINT = "CriticalAddonsOnly=true:NoSchedule"
NETWORK_POLICY_ENGINES = ("azure", "calico", "cilium")
# Channels where AKS upgrades Kubernetes by itself (`node-image` only refreshes node images);
# `none` needs another owner: a Fleet auto-upgrade profile on a Kubernetes channel.
SELF_UPGRADING_CHANNELS = ("patch", "stable", "rapid")
FLEET_KUBERNETES_CHANNELS = ("Stable", "Rapid", "TargetKubernetesVersion")
# An absent nodeOSUpgradeChannel means AKS's default (NodeImage), which is managed.
UNMANAGED_NODE_OS_CHANNELS = ("None", "Unmanaged")
# N-series VM sizes carry GPUs (NC, ND, NG, NV families).
GPU_VM_SIZE = re.compile(r"^Standard_N[CDGV]", re.IGNORECASE)
GPU_TAINT_KEY = "nvidia.com/gpu"
DEFAULT_PURPOSE_LABEL = "platform.ai/gpu-purpose"


def _clusters(args):
    return args.resource_type == MANAGED_CLUSTER


def _pools(args) -> list[tuple[str, Mapping]]:
    """(label, pool) for every node pool the resource declares: inline profiles or an AgentPool."""
    if args.resource_type == MANAGED_CLUSTER:
        profiles = lookup(args.props, "agentPoolProfiles") or []
        return [(f"agentPoolProfiles[{i}] ({p.get('name')})", p) for i, p in enumerate(profiles)]
    if args.resource_type == AGENT_POOL:
        return [(f"pool {lookup(args.props, 'agentPoolName') or args.name}", args.props)]
    return []


def local_accounts_disabled(args, report):
    if _clusters(args) and lookup(args.props, "disableLocalAccounts") is not True:
        report("disableLocalAccounts must be true: the cluster-admin certificate bypasses Entra ID and audit.")


def mesh_gateways_internal(args, report):
    """The Istio add-on's ingress gateways: internal only (an external one is a public load
    balancer with a public IP in front of the mesh)."""
    if not _clusters(args):
        return
    for gateway in lookup(args.props, "serviceMeshProfile.istio.components.ingressGateways") or []:
        if gateway.get("enabled") and gateway.get("mode") != "Internal":
            report(f"The service mesh's {gateway.get('mode')} ingress gateway has a public address.")


def etcd_encrypted(args, report):
    """Secrets in etcd under a key the platform holds, in a vault reached privately."""
    if not _clusters(args):
        return
    kms = lookup(args.props, "securityProfile.azureKeyVaultKms") or {}
    if kms.get("enabled") is not True:
        report(
            "securityProfile.azureKeyVaultKms is not enabled: Secrets in etcd are encrypted with Azure's "
            "platform-managed keys only."
        )
    elif kms.get("keyVaultNetworkAccess") != "Private" or not kms.get("keyVaultResourceId"):
        report("securityProfile.azureKeyVaultKms reaches its key vault publicly: set keyVaultNetworkAccess Private.")


def entra_id_with_azure_rbac(args, report):
    if not _clusters(args):
        return
    problems = []
    if lookup(args.props, "aadProfile.managed") is not True:
        problems.append("aadProfile.managed is not true")
    if lookup(args.props, "aadProfile.enableAzureRBAC") is not True:
        problems.append("aadProfile.enableAzureRBAC is not true")
    if lookup(args.props, "enableRBAC") is False:
        problems.append("enableRBAC is false")
    if problems:
        report("; ".join(problems) + ".")


def private_api_server(args, report):
    if not _clusters(args) or lookup(args.props, "apiServerAccessProfile.enablePrivateCluster") is True:
        return
    ranges = list(lookup(args.props, "apiServerAccessProfile.authorizedIPRanges") or [])
    if not ranges:
        report(
            "The API server is public and open to the internet: make it private "
            "(apiServerAccessProfile.enablePrivateCluster) or list authorizedIPRanges."
        )
        return
    networks = []
    for cidr in ranges:
        try:
            networks.append(ipaddress.ip_network(cidr, strict=False))
        except ValueError:
            report(f"authorizedIPRanges entry {cidr!r} is not a CIDR.")
    # 0.0.0.0/1 plus 128.0.0.0/1 is 0.0.0.0/0 too.
    for network in ipaddress.collapse_addresses(n for n in networks if n.version == 4):
        if network.prefixlen == 0:
            report(f"authorizedIPRanges {', '.join(map(str, ranges))} admit the whole internet.")


def cni_with_network_policy(args, report):
    if not _clusters(args):
        return
    plugin = lookup(args.props, "networkProfile.networkPlugin")
    policy = lookup(args.props, "networkProfile.networkPolicy")
    if plugin != "azure":
        report(f"networkProfile.networkPlugin is {plugin!r}; the platform runs Azure CNI ('azure').")
    if policy not in NETWORK_POLICY_ENGINES:
        report(
            f"networkProfile.networkPolicy is {policy!r}; NetworkPolicies need one of {', '.join(NETWORK_POLICY_ENGINES)}."
        )


def workload_identity_enabled(args, report):
    if not _clusters(args):
        return
    if lookup(args.props, "oidcIssuerProfile.enabled") is not True:
        report("oidcIssuerProfile.enabled is not true: workloads cannot federate their service account tokens.")
    if lookup(args.props, "securityProfile.workloadIdentity.enabled") is not True:
        report("securityProfile.workloadIdentity.enabled is not true: pods cannot get Entra ID tokens without secrets.")


def no_node_public_ip(args, report):
    for label, pool in _pools(args):
        if pool.get("enableNodePublicIP") is True:
            report(f"{label} gives every node a public IP (enableNodePublicIP).")


def system_pool_tainted(args, report):
    for label, pool in _pools(args):
        # A cluster's inline profile without a mode is its System pool.
        mode = pool.get("mode") or ("System" if args.resource_type == MANAGED_CLUSTER else "User")
        if mode == "System" and CRITICAL_ADDONS_TAINT not in list(pool.get("nodeTaints") or []):
            report(
                f"{label} is a System pool without the {CRITICAL_ADDONS_TAINT} taint, so workloads can "
                "crowd out CoreDNS, konnectivity and the other critical add-ons."
            )


def _minor(version: str) -> tuple[int, int] | None:
    match = re.match(r"^(\d+)\.(\d+)", str(version))
    return (int(match.group(1)), int(match.group(2))) if match else None


KUBERNETES_WINDOW_SCHEMA = {
    "oldestMinor": {"type": "string", "pattern": r"^\d+\.\d+$", "default": "1.33"},
    "newestMinor": {"type": "string", "pattern": r"^\d+\.\d+$", "default": "1.35"},
}


def kubernetes_version_supported(args, report):
    config = args.get_config()
    oldest = _minor(config.get("oldestMinor", KUBERNETES_WINDOW_SCHEMA["oldestMinor"]["default"]))
    newest = _minor(config.get("newestMinor", KUBERNETES_WINDOW_SCHEMA["newestMinor"]["default"]))
    versions = []
    if _clusters(args):
        versions.append(("kubernetesVersion", lookup(args.props, "kubernetesVersion")))
    versions += [(f"{label} orchestratorVersion", pool.get("orchestratorVersion")) for label, pool in _pools(args)]
    for where, version in versions:
        if version is None:
            continue  # AKS picks the version (an auto-upgrade channel owns it)
        minor = _minor(version)
        if minor is None or not (oldest <= minor <= newest):
            report(
                f"{where} is {version}, outside the supported window "
                f"{'.'.join(map(str, oldest))}-{'.'.join(map(str, newest))}."
            )


PAID_TIERS = ("Standard", "Premium")


def standard_tier(args, report):
    if _clusters(args) and lookup(args.props, "sku.tier") not in PAID_TIERS:
        report(
            f"sku.tier is {lookup(args.props, 'sku.tier')!r}: the Free tier has no API server SLA and "
            "limits the control plane; use Standard."
        )


# -- GPU pools ------------------------------------------------------------------------------------


def _gpu_pools(args) -> list[tuple[str, Mapping]]:
    return [(label, pool) for label, pool in _pools(args) if GPU_VM_SIZE.match(str(pool.get("vmSize") or ""))]


def _taints(pool: Mapping) -> list[tuple[str, str]]:
    """(key, effect) of each `key=value:Effect` taint."""
    result = []
    for taint in list(pool.get("nodeTaints") or []):
        key_value, _, effect = str(taint).partition(":")
        result.append((key_value.split("=", 1)[0], effect))
    return result


def gpu_pool_tainted(args, report):
    for label, pool in _gpu_pools(args):
        if (GPU_TAINT_KEY, "NoSchedule") not in _taints(pool):
            report(
                f"{label} ({pool.get('vmSize')}) has no {GPU_TAINT_KEY}:NoSchedule taint, so any pod can "
                "land on (and keep awake) a GPU node."
            )


def gpu_pool_autoscaled(args, report):
    for label, pool in _gpu_pools(args):
        if pool.get("enableAutoScaling") is not True or pool.get("maxCount") is None:
            report(f"{label} ({pool.get('vmSize')}) is not autoscaled: idle GPU nodes are paid for around the clock.")


def autoscaled_count_not_managed(args, report):
    ignored = set(args.opts.ignore_changes or [])
    if args.resource_type == AGENT_POOL:
        if lookup(args.props, "enableAutoScaling") is True and "count" not in ignored:
            report(
                "The pool is autoscaled but `count` is not in ignoreChanges: every `pulumi up` would "
                "reset the autoscaler's node count."
            )
    elif args.resource_type == MANAGED_CLUSTER:
        for index, profile in enumerate(lookup(args.props, "agentPoolProfiles") or []):
            if profile.get("enableAutoScaling") is True and f"agentPoolProfiles[{index}].count" not in ignored:
                report(f"agentPoolProfiles[{index}] is autoscaled but its count is not in ignoreChanges.")


SPOT_SCHEMA: dict[str, dict[str, Any]] = {
    "allowSpotTraining": {"type": "boolean", "default": False},
    "purposeLabel": {"type": "string", "default": DEFAULT_PURPOSE_LABEL},
}


def no_spot_training(args, report):
    config = args.get_config()
    if config.get("allowSpotTraining", False):
        return
    label_key = config.get("purposeLabel", DEFAULT_PURPOSE_LABEL)
    for label, pool in _gpu_pools(args):
        purpose = (pool.get("nodeLabels") or {}).get(label_key)
        if pool.get("scaleSetPriority") != "Spot":
            continue
        if purpose == "training":
            report(
                f"{label} runs training on Spot VMs: an eviction kills a multi-node job and its "
                "progress since the last checkpoint."
            )
        elif purpose is None:
            report(f"{label} is a Spot GPU pool without a {label_key} label, so nothing keeps training off it.")


# -- upgrades (stack-wide: ownership may sit with a Fleet) -------------------------------------------


def _cluster_key(resource_id: Any) -> Optional[str]:
    """`<resource group>/<name>` of a managed cluster's ID, lower case (ARM IDs ignore case)."""
    parts = resource_id.split("/") if isinstance(resource_id, str) else []
    lowered = [part.lower() for part in parts]
    if "resourcegroups" in lowered and "managedclusters" in lowered:
        return f"{lowered[lowered.index('resourcegroups') + 1]}/{lowered[lowered.index('managedclusters') + 1]}"
    return None


def upgrade_owner(args, report):
    fleet_members = {}
    fleets_with_auto_upgrade = set()
    for resource in args.resources:
        deps = resource.property_dependencies
        if resource.resource_type == FLEET_MEMBER:
            fleets = [f.urn for f in deps.get("fleetName", [])]
            for cluster in deps.get("clusterResourceId", []):
                fleet_members[cluster.urn] = fleets
            # A member in another stack (the fleet's unit) names its cluster by ID.
            key = _cluster_key(lookup(resource.props, "clusterResourceId"))
            if key:
                fleet_members[key] = fleets
        elif (
            resource.resource_type == FLEET_AUTO_UPGRADE
            and resource.props.get("disabled") is not True
            and resource.props.get("channel") in FLEET_KUBERNETES_CHANNELS
        ):
            fleets_with_auto_upgrade |= {f.urn for f in deps.get("fleetName", [])}
    for resource in args.resources:
        if resource.resource_type != MANAGED_CLUSTER:
            continue
        channel = lookup(resource.props, "autoUpgradeProfile.upgradeChannel")
        node_os = lookup(resource.props, "autoUpgradeProfile.nodeOSUpgradeChannel")
        key = f"{lookup(resource.props, 'resourceGroupName', '')}/{lookup(resource.props, 'resourceName', '')}".lower()
        members = fleet_members.get(resource.urn, []) + fleet_members.get(key, [])
        fleet_owned = any(f in fleets_with_auto_upgrade for f in members)
        if channel not in SELF_UPGRADING_CHANNELS and not fleet_owned:
            report(
                f"{resource.name}: upgradeChannel is {channel!r} and no Fleet auto-upgrade profile "
                "manages it, so nobody applies Kubernetes patches.",
                resource.urn,
            )
        if node_os in UNMANAGED_NODE_OS_CHANNELS:
            report(
                f"{resource.name}: nodeOSUpgradeChannel is {node_os!r}, so node images never get security patches.",
                resource.urn,
            )


POLICIES = [
    resource_policy(
        "aks-mesh-gateways-internal",
        "The Istio add-on's ingress gateways are internal: serving is never on a public address.",
        mesh_gateways_internal,
        severity=Severity.CRITICAL,
        remediation="Serve through platform:serving (its gateway is the add-on's internal one); reach "
        "consumers in other networks through platform:serving.privateLink.",
    ),
    resource_policy(
        "aks-etcd-encrypted",
        "AKS clusters encrypt Secrets in etcd with a customer-managed key in a private Key Vault (KMS).",
        etcd_encrypted,
        severity=Severity.HIGH,
        remediation="Leave platform:clusters.<c>.etcdEncryption on (components/etcd_encryption.py); it needs "
        "apiServer.vnetIntegration.",
    ),
    resource_policy(
        "aks-local-accounts-disabled",
        "AKS clusters disable local accounts, so every access goes through Entra ID.",
        local_accounts_disabled,
        severity=Severity.CRITICAL,
        remediation="Set disableLocalAccounts: true on the ManagedCluster (components/cluster.py does).",
        builtin=BuiltIn(
            "993c2fcd-2b29-49d2-9eb0-df2c3a730c32",
            "Azure Kubernetes Service Clusters should have local authentication methods disabled",
        ),
    ),
    resource_policy(
        "aks-entra-id-azure-rbac",
        "AKS clusters use AKS-managed Entra ID with Azure RBAC for Kubernetes authorization.",
        entra_id_with_azure_rbac,
        severity=Severity.HIGH,
        remediation="Set aadProfile.managed and aadProfile.enableAzureRBAC to true and keep enableRBAC on.",
        builtin=BuiltIn(
            "450d2877-ebea-41e8-b00c-e286317d21bf",
            "Azure Kubernetes Service Clusters should enable Microsoft Entra ID integration",
        ),
    ),
    resource_policy(
        "aks-private-api-server",
        "AKS API servers are private, or public only to authorized ranges that never include 0.0.0.0/0.",
        private_api_server,
        severity=Severity.HIGH,
        remediation="Set clusters.<name>.apiServer.private: true (staging, prod), or list "
        "clusters.<name>.apiServer.authorizedIpRanges without a /0 entry.",
        builtin=BuiltIn(
            "040732e8-d947-40b8-95d6-854c95024bf8", "Azure Kubernetes Service Private Clusters should be enabled"
        ),
    ),
    resource_policy(
        "aks-azure-cni-network-policy",
        "AKS clusters run Azure CNI with a network policy engine, so NetworkPolicies are enforced.",
        cni_with_network_policy,
        severity=Severity.HIGH,
        remediation="Use networkProfile.networkPlugin 'azure' with networkPolicy 'cilium' (or azure/calico).",
    ),
    resource_policy(
        "aks-workload-identity",
        "AKS clusters enable the OIDC issuer and workload identity, so pods authenticate without secrets.",
        workload_identity_enabled,
        severity=Severity.HIGH,
        remediation="Set oidcIssuerProfile.enabled and securityProfile.workloadIdentity.enabled to true.",
        builtin=BuiltIn(
            "2cc2e023-0dac-4046-875b-178f683929d5", "Azure Kubernetes Service Clusters should enable workload identity"
        ),
    ),
    resource_policy(
        "aks-no-node-public-ip",
        "AKS nodes have no public IP addresses.",
        no_node_public_ip,
        severity=Severity.HIGH,
        remediation="Set enableNodePublicIP: false on every pool; egress goes through NAT or the firewall.",
    ),
    resource_policy(
        "aks-system-pool-tainted",
        "AKS system pools carry the CriticalAddonsOnly taint, reserving them for critical add-ons.",
        system_pool_tainted,
        severity=Severity.MEDIUM,
        remediation=f"Add nodeTaints: ['{CRITICAL_ADDONS_TAINT}'] to every pool with mode System.",
    ),
    stack_policy(
        "aks-upgrade-owner",
        "Every AKS cluster has an upgrade owner: an auto-upgrade channel or a Fleet auto-upgrade profile, "
        "and a managed node OS channel.",
        upgrade_owner,
        severity=Severity.MEDIUM,
        remediation="Set clusters.<name>.upgrades.channel to patch/stable/rapid, or make the cluster a member "
        "of a Fleet with an auto-upgrade profile; set nodeOsChannel to NodeImage or SecurityPatch.",
        builtin=BuiltIn(
            "5c345cdf-2049-47e0-b8fe-b0e96bc2df35",
            "Azure Kubernetes Service Clusters should enable cluster auto-upgrade",
        ),
    ),
    resource_policy(
        "aks-kubernetes-version-supported",
        "AKS clusters and pools run a Kubernetes minor version inside the supported window.",
        kubernetes_version_supported,
        severity=Severity.HIGH,
        remediation="Raise clusters.<name>.kubernetesVersion to a supported minor (`az aks get-versions`); "
        "move the window in the policy config as AKS releases and retires versions.",
        config=KUBERNETES_WINDOW_SCHEMA,
    ),
    resource_policy(
        "aks-standard-tier",
        "AKS clusters use the Standard (or Premium) tier, with the financially backed API server SLA.",
        standard_tier,
        severity=Severity.MEDIUM,
        remediation="Set clusters.<name>.tier: Standard.",
    ),
    resource_policy(
        "gpu-pool-tainted",
        "GPU node pools carry the nvidia.com/gpu NoSchedule taint, so only GPU workloads land there.",
        gpu_pool_tainted,
        severity=Severity.HIGH,
        remediation="Keep the platform's nvidia.com/gpu=present:NoSchedule taint on every GPU pool.",
    ),
    resource_policy(
        "gpu-pool-autoscaled",
        "GPU node pools are autoscaled with an upper bound.",
        gpu_pool_autoscaled,
        severity=Severity.MEDIUM,
        remediation="Set enableAutoScaling with minCount/maxCount (clusters.<name>.gpuPools.<pool>.minCount/maxCount).",
    ),
    resource_policy(
        "autoscaled-pool-count-unmanaged",
        "Autoscaled pools leave `count` to the autoscaler (ignoreChanges), so `pulumi up` never resizes them.",
        autoscaled_count_not_managed,
        severity=Severity.HIGH,
        remediation="Add 'count' (or 'agentPoolProfiles[i].count') to the resource's ignore_changes.",
    ),
    resource_policy(
        "no-spot-training-pools",
        "Training GPU pools do not run on Spot VMs unless the environment allows it.",
        no_spot_training,
        severity=Severity.MEDIUM,
        remediation="Use Regular priority for pools whose purpose is training, or set allowSpotTraining "
        "in this environment's policy config with a waiver.",
        config=SPOT_SCHEMA,
    ),
]
