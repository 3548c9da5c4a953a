"""The validated shape of a stack's configuration.

Every key a stack file may set under the `platform:` namespace is a field here. Field names
are snake_case in Python and camelCase in the stack files (the alias); unknown keys are
errors. This module checks types and single-field rules only; rules that relate several
fields (address overlaps, subnet sizing, AKS limits) live in `validation.checks`, so that
they can report every problem at once with its full config key.

One module per section (`network.py`, `pools.py`, `clusters.py`, `kafka.py`...), shared value
types in `base.py`; this package's root holds `PlatformConfig` and re-exports every section.

Defaults here are the secure choice. Environments weaken a setting explicitly in their
stack file (for example `disableLocalAccounts: false`), where reviewers and policies see it.
"""

from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field, StringConstraints

from stackconfig.model.admission import AdmissionConfig, AzurePolicyConfig
from stackconfig.model.base import (
    KUBERNETES_VERSION,
    AgentPoolName,
    CapacityReservationGroupId,
    Duration,
    EnvironmentName,
    GpuVmSizeName,
    KubernetesVersion,
    MaxSurge,
    MigProfile,
    Model,
    NamespaceName,
    RegionName,
    ShortName,
    Taint,
    Uuid,
    UuidList,
    VmSize,
    Zone,
    duration_seconds,
)
from stackconfig.model.cluster_settings import (
    ApiServerConfig,
    AutoscalerProfileConfig,
    ClusterSubnets,
    MaintenanceWindowConfig,
    UpgradeChannel,
    UpgradeConfig,
)
from stackconfig.model.clusters import ClusterConfig
from stackconfig.model.cosmosdb import (
    CosmosBackup,
    CosmosContainerConfig,
    CosmosDatabaseConfig,
    CosmosDbConfig,
)
from stackconfig.model.data import (
    GEO_REDUNDANT_STORAGE,
    ZONE_REDUNDANT_STORAGE,
    BlobPrefix,
    CacheRuleConfig,
    ContainerName,
    KeyVaultConfig,
    RegistryConfig,
    SecretName,
    StorageAccountConfig,
    StorageConfig,
    StorageReplication,
    StorageSku,
    TargetRepository,
    UpstreamRepository,
)
from stackconfig.model.fleet import FleetConfig
from stackconfig.model.identity import EntraConfig, PlanIdentityConfig
from stackconfig.model.jobs import JobsConfig
from stackconfig.model.kafka import (
    Access,
    EventHubsConfig,
    KafkaAccess,
    KafkaClientConfig,
    KafkaConfig,
    KafkaNodePoolConfig,
    KafkaOauthConfig,
    KafkaTopicConfig,
    MirrorMakerConfig,
    PremiumStorageVmSize,
    StrimziConfig,
    TopicName,
)
from stackconfig.model.lustre import LustreConfig, LustreFileSystemConfig
from stackconfig.model.network import (
    FQDN,
    EgressConfig,
    FirewallConfig,
    Fqdn,
    HubConfig,
    NatGatewayConfig,
    NetworkConfig,
    RegionNetworkConfig,
    RegionSubnets,
    ResourceGroupId,
)
from stackconfig.model.onprem import (
    OnPremApiServer,
    OnPremClusterConfig,
    OnPremGpuPoolConfig,
    OnPremTrainingDataConfig,
)
from stackconfig.model.operations import (
    ALERT_SEVERITIES,
    BASIC_PLAN_TABLES,
    AlertReceiverConfig,
    AlertsConfig,
    AlertSeverity,
    ContainerInsightsTable,
    ContainerLogsConfig,
    EmailAddress,
    GpuHealthConfig,
    GpuRemediationConfig,
    GrafanaConfig,
    LogTableConfig,
    MonitoringPrivateLinkConfig,
    OperationsConfig,
    WebhookUrl,
)
from stackconfig.model.pools import (
    GpuPoolConfig,
    GpuSettings,
    NodePoolConfig,
    OsSku,
    PoolConfig,
    PoolSettings,
    SandboxPoolConfig,
    SystemPoolConfig,
)
from stackconfig.model.postgresql import PostgresAdministratorConfig, PostgresConfig
from stackconfig.model.serving import (
    PrivateLinkConsumerConfig,
    ServingApiConfig,
    ServingConfig,
    ServingRouteConfig,
)
from stackconfig.model.streaming import (
    CheckpointStorageConfig,
    FlinkDuration,
    FlinkJobConfig,
    FlinkJobName,
    FlinkOperatorConfig,
    FlinkResourcesConfig,
    PythonFile,
    RegistryImage,
    StreamingConfig,
    StreamingPoolConfig,
    TaskManagerConfig,
)
from stackconfig.model.teams import TeamConfig
from stackconfig.model.workloads import WorkloadConfig


class PlatformConfig(Model):
    """Everything one stack (one environment) may set under `platform:`."""

    environment: EnvironmentName = Field(
        description="The environment; also the `environment` tag. It must be the stack's name, or its prefix "
        "(`prod` for `prod-scale`): a stack never deploys another environment."
    )
    subscription_id: Uuid = Field(
        description="The subscription every unit of the environment deploys to. A unit whose Azure provider "
        "signs in to another (a manual `pulumi up` after `az account set` elsewhere) stops before it "
        "creates anything; each unit's stack file pins its provider with `azure-native:subscriptionId` "
        "set to this (docs/deploying.md). The delivery project's `environments.<env>.subscriptionId` "
        "must be the same."
    )
    prefix: ShortName = Field(
        description="First part of every resource name (`aks-<prefix>-<env>-<cluster>`); the globally unique "
        "names derived from it must fit Azure's rules (Key Vault `kv-<prefix>-<env>-<region "
        "code>` ≤ 24 characters, registry `cr<prefix><env>`)."
    )
    tags: dict[str, str] = Field(
        description="Tags on every taggable resource; must contain `owner` and `cost-center`; `environment` "
        "is added, not set here. ARM's rules apply (`facts/arm_tags.py`): names up to 128 "
        "characters without `< > % & \\ ? /` and not starting with `microsoft`, `azure` or "
        "`windows`, values up to 256, and at most 12 of your own (private DNS zones take 15 tags,"
        " the platform adds three)."
    )
    protect: bool = Field(
        default=True,
        description="Pulumi `protect` on stateful and hard-to-rebuild resources (clusters, VNets, workspaces,"
        " storage): a deletion or replacement fails instead of happening.",
    )
    entra: EntraConfig = Field(
        default_factory=EntraConfig, description="Entra ID settings shared by every cluster of the environment."
    )
    network: NetworkConfig = Field(
        description="The address plan: VNets, subnets, pod and service ranges, the hub, egress."
    )
    clusters: dict[ShortName, ClusterConfig] = Field(
        min_length=1, description="Clusters; the name (2-10 lowercase alphanumerics) is part of resource names."
    )
    teams: dict[ShortName, TeamConfig] = Field(
        default_factory=dict, description="Teams, by a short name: their Entra groups, namespaces and egress."
    )
    operations: OperationsConfig = Field(
        default_factory=OperationsConfig, description="Logging and security operations."
    )
    admission: AdmissionConfig = Field(
        default_factory=AdmissionConfig, description="Admission control in team namespaces."
    )
    resource_groups: Literal["delivery", "program"] = Field(
        description="Who creates the units' resource groups; required, because the wrong answer for a deployed "
        "environment deletes its groups. `delivery` (every new environment): the delivery project creates them "
        "and grants each layer Contributor on its own groups only, so no layer can change another's "
        "resources. `program`: each unit creates its own, as releases before this did, and its deploy "
        "identity holds Contributor on the whole subscription; the groups are kept (not deleted) when "
        "an environment moves to `delivery` (docs/upgrades.md, \"Resource groups from the delivery\").",
    )
    lock_stateful_resources: bool = Field(
        default=True,
        description="`CanNotDelete` locks on storage accounts, the Key Vault and the registry: deleting them "
        "(or a container) needs the lock removed first.",
    )
    storage: StorageConfig = Field(
        default_factory=StorageConfig, description="Storage accounts and how their data is protected."
    )
    key_vault: KeyVaultConfig = Field(default_factory=KeyVaultConfig, description="The environment's Key Vault.")
    registry: RegistryConfig = Field(
        default_factory=RegistryConfig, description="The environment's container registry."
    )
    workloads: dict[Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,23}$")], WorkloadConfig] = Field(
        default_factory=dict,
        description="Workloads with Entra ID workload identity (below); names are 1-24 lowercase letters, "
        "digits and hyphens.",
    )
    cosmos_db: Optional[CosmosDbConfig] = Field(
        default=None, description="The environment's Cosmos DB account. Unset: no Cosmos DB in this environment."
    )
    postgresql: Optional[PostgresConfig] = Field(
        default=None,
        description="The environment's PostgreSQL flexible server. Unset: no PostgreSQL in this environment.",
    )
    lustre: Optional[LustreConfig] = Field(
        default=None,
        description="Azure Managed Lustre for training data. Unset: none in this environment (jobs read Blob).",
    )
    on_prem_clusters: dict[ShortName, OnPremClusterConfig] = Field(
        default_factory=dict,
        description="On-premises Kubernetes clusters connected through Azure Arc, by key (docs/hybrid.md).",
    )
    fleet: Optional[FleetConfig] = Field(
        default=None,
        description="Fleet Manager settings; only for environments of two or more clusters, which always join"
        " a fleet. Unset: the defaults below.",
    )
    kafka: Optional[KafkaConfig] = Field(
        default=None, description="The event backbone. Unset: no Kafka in this environment."
    )
    streaming: Optional[StreamingConfig] = Field(
        default=None, description="Stream processing with Flink. Unset: no Flink in this environment."
    )
    jobs: JobsConfig = Field(
        default_factory=JobsConfig,
        description="Jobs that fail over between regions (MultiKueue dispatchers and workers).",
    )
    serving: Optional[ServingConfig] = Field(
        default=None,
        description="Serving models privately through an internal gateway (docs/serving.md). Unset: no gateway.",
    )

    @property
    def has_fleet(self) -> bool:
        return len(self.clusters) > 1

    @property
    def fleet_settings(self) -> FleetConfig:
        return self.fleet or FleetConfig()

    @property
    def primary_region(self) -> str:
        """Where environment-wide resources live: the first cluster's region."""
        return next(iter(self.clusters.values())).region

    @property
    def strimzi(self) -> StrimziConfig | None:
        """The Strimzi settings when Strimzi runs this environment's Kafka, else None."""
        kafka = self.kafka
        return kafka.strimzi if kafka is not None and kafka.engine == "strimzi" else None

    def workload_cluster_keys(self) -> list[str]:
        """Clusters that run teams' work: every one but the dispatchers."""
        return [key for key, cluster in self.clusters.items() if cluster.role == "workloads"]

    def kafka_clusters(self) -> list[str]:
        """Clusters that host Strimzi Kafka (none on Event Hubs)."""
        strimzi = self.strimzi
        if strimzi is None:
            return []
        return [c for c in (strimzi.clusters or self.workload_cluster_keys()) if c in self.clusters]

    def streaming_clusters(self) -> list[str]:
        """Clusters that run Flink (none without `streaming`)."""
        streaming = self.streaming
        if streaming is None:
            return []
        return [c for c in (streaming.clusters or self.workload_cluster_keys()) if c in self.clusters]

    def dispatch_workers(self) -> list[str]:
        """The clusters MultiKueue hands jobs to (none without dispatchers)."""
        if not self.jobs.dispatchers:
            return []
        workers = self.jobs.workers
        if workers is None:
            workers = [k for k in self.workload_cluster_keys() if self.clusters[k].gpu_pools]
        return [w for w in workers if w in self.clusters]

    def dispatch_sites(self) -> list[str]:
        """The on-premises sites MultiKueue hands jobs to: those open to a team (none without
        dispatchers)."""
        if not self.jobs.dispatchers:
            return []
        return [key for key, site in self.on_prem_clusters.items() if site.teams]

    def unit_cluster_keys(self) -> list[str]:
        """Every cluster with a unit of the cluster layer: the AKS clusters, then the sites."""
        return [*self.clusters, *self.on_prem_clusters]

    def job_clusters(self, job: str) -> list[str]:
        """The streaming clusters a Flink job runs on."""
        assert self.streaming is not None
        return list(self.streaming.jobs[job].clusters or self.streaming_clusters())

    def workload_clusters(self, workload: str) -> list[str]:
        return list(self.workloads[workload].clusters or self.workload_cluster_keys())

    def identity_clusters(self, workload: str) -> list[str]:
        """Clusters whose pods may sign in as the workload: where it runs and where it fails over to."""
        spec = self.workloads[workload]
        return self.workload_clusters(workload) + [c for c in spec.failover_clusters if c in self.clusters]

    def node_os_channel(self, cluster_key: str) -> str:
        configured = self.clusters[cluster_key].upgrades.node_os_channel
        return configured or ("SecurityPatch" if self.has_fleet else "NodeImage")

    def upgrade_channel(self, cluster_key: str) -> str:
        """The cluster's own auto-upgrade channel: off for fleet members (the fleet upgrades)."""
        configured = self.clusters[cluster_key].upgrades.channel
        return configured or ("none" if self.has_fleet else "patch")


REQUIRED_TAGS = ("owner", "cost-center")


__all__ = [
    "ALERT_SEVERITIES",
    "BASIC_PLAN_TABLES",
    "FQDN",
    "GEO_REDUNDANT_STORAGE",
    "KUBERNETES_VERSION",
    "REQUIRED_TAGS",
    "ZONE_REDUNDANT_STORAGE",
    "Access",
    "AdmissionConfig",
    "AgentPoolName",
    "AlertReceiverConfig",
    "AlertSeverity",
    "AlertsConfig",
    "ApiServerConfig",
    "AutoscalerProfileConfig",
    "AzurePolicyConfig",
    "BlobPrefix",
    "CacheRuleConfig",
    "CapacityReservationGroupId",
    "CheckpointStorageConfig",
    "ClusterConfig",
    "ClusterSubnets",
    "ContainerInsightsTable",
    "ContainerLogsConfig",
    "ContainerName",
    "CosmosBackup",
    "CosmosContainerConfig",
    "CosmosDatabaseConfig",
    "CosmosDbConfig",
    "Duration",
    "EgressConfig",
    "EmailAddress",
    "EntraConfig",
    "EnvironmentName",
    "EventHubsConfig",
    "FirewallConfig",
    "FleetConfig",
    "FlinkDuration",
    "FlinkJobConfig",
    "FlinkJobName",
    "FlinkOperatorConfig",
    "FlinkResourcesConfig",
    "Fqdn",
    "GpuHealthConfig",
    "GpuPoolConfig",
    "GpuRemediationConfig",
    "GpuSettings",
    "GpuVmSizeName",
    "GrafanaConfig",
    "HubConfig",
    "JobsConfig",
    "KafkaAccess",
    "KafkaClientConfig",
    "KafkaConfig",
    "KafkaNodePoolConfig",
    "KafkaOauthConfig",
    "KafkaTopicConfig",
    "KeyVaultConfig",
    "KubernetesVersion",
    "LogTableConfig",
    "LustreConfig",
    "LustreFileSystemConfig",
    "MaintenanceWindowConfig",
    "MaxSurge",
    "MigProfile",
    "MirrorMakerConfig",
    "Model",
    "MonitoringPrivateLinkConfig",
    "NamespaceName",
    "NatGatewayConfig",
    "NetworkConfig",
    "NodePoolConfig",
    "OnPremApiServer",
    "OnPremClusterConfig",
    "OnPremGpuPoolConfig",
    "OnPremTrainingDataConfig",
    "OperationsConfig",
    "OsSku",
    "PlanIdentityConfig",
    "PlatformConfig",
    "PoolConfig",
    "PoolSettings",
    "PostgresAdministratorConfig",
    "PostgresConfig",
    "PremiumStorageVmSize",
    "PrivateLinkConsumerConfig",
    "PythonFile",
    "RegionName",
    "RegionNetworkConfig",
    "RegionSubnets",
    "RegistryConfig",
    "RegistryImage",
    "ResourceGroupId",
    "SandboxPoolConfig",
    "SecretName",
    "ServingApiConfig",
    "ServingConfig",
    "ServingRouteConfig",
    "ShortName",
    "StorageAccountConfig",
    "StorageConfig",
    "StorageReplication",
    "StorageSku",
    "StreamingConfig",
    "StreamingPoolConfig",
    "StrimziConfig",
    "SystemPoolConfig",
    "Taint",
    "TargetRepository",
    "TaskManagerConfig",
    "TeamConfig",
    "TopicName",
    "UpgradeChannel",
    "UpgradeConfig",
    "UpstreamRepository",
    "Uuid",
    "UuidList",
    "VmSize",
    "WebhookUrl",
    "WorkloadConfig",
    "Zone",
    "duration_seconds",
]
