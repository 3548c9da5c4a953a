"""A cluster: its settings and pools."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from stackconfig.model.base import (
    AgentPoolName,
    KubernetesVersion,
    Model,
    RegionName,
    Zone,
)
from stackconfig.model.cluster_settings import (
    ApiServerConfig,
    AutoscalerProfileConfig,
    ClusterSubnets,
    UpgradeConfig,
)
from stackconfig.model.pools import (
    GpuPoolConfig,
    GpuSettings,
    NodePoolConfig,
    SandboxPoolConfig,
    SystemPoolConfig,
)


class ClusterConfig(Model):
    region: RegionName = Field(
        description="An Azure region with availability zones (`facts/azure_regions.py`); it needs an entry in"
        " `network.regions`."
    )
    kubernetes_version: Optional[KubernetesVersion] = Field(
        default=None,
        description="`major.minor` (or `major.minor.patch` with channel `none`), a minor AKS supports "
        "(`facts/aks_versions.py`, from AKS's release calendar; refresh with `az aks get-"
        "versions`). Unset: AKS's default, allowed only where an upgrade channel owns the version"
        " (docs/upgrades.md).",
    )
    role: Literal["workloads", "dispatch"] = Field(
        default="workloads",
        description="`workloads`: runs the teams' jobs and services. `dispatch`: a MultiKueue manager listed in "
        "`platform:jobs.dispatchers`, which hands \"any region\" jobs to the workers and runs nothing itself: a "
        "system pool only, no GPUs, Kafka, Flink or workloads (Kueue's manager cannot be its own worker).",
    )
    tier: Literal["Free", "Standard", "Premium"] = Field(
        default="Standard", description="Control plane tier (Standard and Premium carry the uptime SLA)."
    )
    zones: list[Zone] = Field(
        default_factory=lambda: list[Zone](["1", "2", "3"]),
        min_length=1,
        description="Availability zones the pools may use.",
    )
    cni: Literal["overlay", "podSubnet"] = Field(
        default="overlay",
        description="`overlay` (Azure CNI Overlay) or `podSubnet` (classic Azure CNI, pods in "
        "`subnets.pods`); Cilium dataplane and policy either way.",
    )
    advanced_networking: bool = Field(
        default=True,
        description="Advanced Container Networking Services (FQDN network policies, flow observability). Must"
        " stay on while any namespace of the cluster reaches hosts by name (team `egressFqdns`, "
        "workload identity sign-in, Kafka's OAuth, driver builds).",
    )
    api_server: ApiServerConfig = Field(default_factory=ApiServerConfig, description="How the API server is reached.")
    disable_local_accounts: bool = Field(default=True, description="Entra ID only; `false` is an explicit weakening.")
    etcd_encryption: bool = Field(
        default=True,
        description="Kubernetes Secrets encrypted in etcd with a key of the cluster's own private Key Vault (AKS "
        "KMS, `securityProfile.azureKeyVaultKms`; components/etcd_encryption.py). A private vault needs "
        "`apiServer.vnetIntegration`. `false` leaves only Azure's platform-managed encryption at rest: an "
        "explicit weakening the packs see.",
    )
    etcd_key_generation: int = Field(
        default=1,
        ge=1,
        le=1000,
        description="Which key etcd is encrypted with, `etcd-encryption-<n>`: raise it by one to rotate (a new "
        "key, made through ARM; the previous one stays, as AKS still holds it), then re-encrypt the Secrets "
        "(docs/operations.md, \"Rotating the etcd key\").",
    )
    upgrades: UpgradeConfig = Field(
        default_factory=UpgradeConfig,
        description="Who upgrades Kubernetes and node images, and when (docs/upgrades.md).",
    )
    autoscaler: AutoscalerProfileConfig = Field(
        default_factory=AutoscalerProfileConfig, description="The cluster autoscaler profile, values as AKS takes them."
    )
    subnets: ClusterSubnets = Field(description="The cluster's subnets in its region's VNet.")
    system_pool: SystemPoolConfig = Field(
        description="The inline system pool; always tainted `CriticalAddonsOnly=true:NoSchedule`."
    )
    node_pools: dict[AgentPoolName, NodePoolConfig] = Field(
        default_factory=dict,
        description="CPU user pools, each its own AgentPool; names unique across `nodePools` and `gpuPools`.",
    )
    gpu: GpuSettings = Field(default_factory=GpuSettings, description="What all GPU pools of the cluster share.")
    gpu_pools: dict[AgentPoolName, GpuPoolConfig] = Field(
        default_factory=dict,
        description="GPU pools, each its own AgentPool of a catalogued GPU size; names unique across "
        "`nodePools` and `gpuPools`.",
    )
    sandbox_pool: Optional[SandboxPoolConfig] = Field(
        default=None,
        description="The Pod Sandboxing pool (AgentPool `sandbox`: `workloadRuntime: KataVmIsolation`, "
        "AzureLinux, tainted `platform.ai/sandbox=kata:NoSchedule`) for `highRiskNamespaces`; "
        "required on every cluster once a team has them. Its `vmSize` must support nested "
        "virtualization (Dsv3/Dsv4/Dsv5, Ddsv5, Esv5, Fsv2, ...).",
    )
