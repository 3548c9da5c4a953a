"""One hardened AKS cluster and everything it needs to be operated.

- Azure CNI Overlay (or classic CNI with a pod subnet) with the Cilium dataplane and policy,
  and Advanced Container Networking Services so that Cilium FQDN egress policies hold.
- Entra ID only: managed AAD, Azure RBAC for Kubernetes, local accounts disabled, OIDC
  issuer and workload identity on, user-assigned control-plane and kubelet identities.
- An optional Pod Sandboxing pool (Kata VMs, AzureLinux, tainted) for high-risk namespaces.
- The system pool inline (tainted CriticalAddonsOnly); every other pool a separate
  AgentPool, so the two never fight (pulumi-azure-native#2719). Autoscaled pools let the
  autoscaler own `count`.
- Upgrades: one owner of the Kubernetes version (see docs/upgrades.md) and maintenance
  windows for both upgrade channels.
- Operations: audit logs to Log Analytics, managed Prometheus wired end to end, Azure
  Policy, Key Vault secrets provider with rotation, image cleaner, Defender when enabled.
- Exports a kubeconfig that logs in through kubelogin non-interactively.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

import pulumi
import pulumi_kubernetes as kubernetes
import pulumiverse_time as time
from pulumi_azure_native import containerservice as aks
from pulumi_azure_native import managedidentity

from components.collection_rules import (
    ClusterMonitoring,
    CollectionTarget,
    container_insights_collection,
    prometheus_collection,
)
from components.etcd_encryption import ETCD_KEY_ROLES, EtcdEncryption, EtcdEncryptionArgs
from components.groups import Group, resource_group
from components.observability import send_logs
from components.rbac import assign_role
from facts.gpu import GPU_VM_SIZES
from planning import alerts as alerts_plan
from planning import cold_start, sandbox
from planning.charts import HELM_DRIVER
from planning.gpu import gpu_pool_labels, platform_taints
from planning.kubeconfig import non_interactive_kubeconfig
from planning.naming import Naming
from stackconfig.model import (
    ClusterConfig,
    GpuHealthConfig,
    GpuPoolConfig,
    NetworkConfig,
    NodePoolConfig,
    OperationsConfig,
    PoolSettings,
    SandboxPoolConfig,
)

SYSTEM_POOL_NAME = "system"
SYSTEM_POOL_TAINT = "CriticalAddonsOnly=true:NoSchedule"
# Cluster log categories sent to Log Analytics: API audit (without get/list noise), Entra ID
# authentication (guard), and the autoscaler's decisions.
DIAGNOSTIC_LOG_CATEGORIES = ("kube-audit-admin", "guard", "cluster-autoscaler")
# The exact names AKS gives meaning to (planned maintenance docs).
AUTO_UPGRADE_SCHEDULE = "aksManagedAutoUpgradeSchedule"
NODE_OS_UPGRADE_SCHEDULE = "aksManagedNodeOSUpgradeSchedule"
# Immutable pool properties: changing one deletes and recreates the pool (and its nodes),
# so the preview names the replacement explicitly.
POOL_REPLACED_BY = ["vmSize", "gpuInstanceProfile", "scaleSetPriority", "workloadRuntime"]
GRANT_PROPAGATION = "120s"


@dataclass(frozen=True)
class ClusterNetwork:
    """The subnets this cluster runs in (IDs from the regional network)."""

    system_subnet_id: pulumi.Input[str]
    nodes_subnet_id: pulumi.Input[str]
    api_server_subnet_id: pulumi.Input[str] | None = None
    pods_subnet_id: pulumi.Input[str] | None = None
    vnet_id: pulumi.Input[str] | None = None
    # privatelink.<region>.azmk8s.io, for a private API server.
    api_server_dns_zone_id: pulumi.Input[str] | None = None

    def subnets(self) -> dict[str, pulumi.Input[str]]:
        named = {
            "system": self.system_subnet_id,
            "nodes": self.nodes_subnet_id,
            "apiServer": self.api_server_subnet_id,
            "pods": self.pods_subnet_id,
        }
        return {role: subnet for role, subnet in named.items() if subnet is not None}


@dataclass(frozen=True)
class AksClusterArgs:
    naming: Naming
    key: str
    cluster: ClusterConfig
    network: NetworkConfig
    subnets: ClusterNetwork
    admin_group_object_ids: list[str]
    tenant_id: pulumi.Input[str]
    subscription_id: pulumi.Input[str]
    kubelogin_mode: str
    operations: OperationsConfig
    monitoring: ClusterMonitoring
    protect: bool
    # The cluster's own auto-upgrade channel ("none" when a fleet runs its upgrades).
    upgrade_channel: str
    node_os_channel: str
    # The environment's registry: the kubelet identity may pull from it (AcrPull), nothing more.
    registry_id: pulumi.Input[str]
    # A fleet owns this cluster's Kubernetes version (platform:fleet).
    fleet_managed: bool = False
    # Pools other sections dedicate to themselves: Kafka's (one per zone, planning.kafka) on
    # clusters that host Strimzi, and the `flink` pool on streaming clusters (planning.streaming).
    dedicated_pools: dict[str, NodePoolConfig] = field(default_factory=dict)
    # What must exist before AKS looks for it: the link of the API server's private DNS zone to
    # this cluster's VNet (AKS links a bring-your-own zone itself unless a link exists, and a
    # zone takes one link per VNet: Azure/AKS#2711, #4841; private-clusters.md's own example
    # creates the link before the cluster).
    network_ready: list[pulumi.Resource] = field(default_factory=list)
    # The public addresses this cluster's nodes egress from: a public API server must allow
    # them, or nodes cannot join (AKS adds only its own load balancer's outbound IP:
    # learn.microsoft.com/azure/aks/api-server-authorized-ip-ranges).
    egress_ips: pulumi.Input[Sequence[pulumi.Input[str]]] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    # A CanNotDelete lock on what holds data of its own (the etcd key vault).
    lock: bool = False
    key_vault_retention_days: int = 90
    # severity -> the action groups the etcd key vault's Azure Monitor alerts reach
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)
    # The unit creates its resource groups (platform:resourceGroups: program), or uses the delivery's.
    create_groups: bool = False
    # The Istio add-on's revisions where the cluster serves (planning/serving.py): its internal
    # ingress gateway, which the serving gateway fronts. Empty: no mesh.
    mesh_revisions: Sequence[str] = ()
    # KEDA's add-on, where the cluster scales served Deployments (planning/serving_scaling.py).
    keda: bool = False


def _issuer_url(profile: aks.outputs.ManagedClusterOIDCIssuerProfileResponse | None) -> str:
    """The OIDC issuer workload identities federate with (on, so AKS always returns it)."""
    if profile is None or not profile.issuer_url:
        raise ValueError("AKS returned the cluster without an OIDC issuer URL")
    return profile.issuer_url


def _upgrade_settings(pool: PoolSettings) -> aks.AgentPoolUpgradeSettingsArgs:
    return aks.AgentPoolUpgradeSettingsArgs(max_surge=pool.max_surge, drain_timeout_in_minutes=30)


class PoolInputs(TypedDict, total=False):
    """The inputs a pool takes under the same name in ManagedClusterAgentPoolProfileArgs (the
    inline system pool) and in AgentPool (user pools), so one builder serves both."""

    vm_size: str
    count: int
    enable_auto_scaling: bool
    min_count: int
    max_count: int
    max_pods: int
    availability_zones: list[str]
    os_type: aks.OSType
    os_sku: aks.OSSKU
    os_disk_type: aks.OSDiskType
    os_disk_size_gb: int
    enable_encryption_at_host: bool
    enable_node_public_ip: bool
    type: aks.AgentPoolType
    upgrade_settings: aks.AgentPoolUpgradeSettingsArgs
    security_profile: aks.AgentPoolSecurityProfileArgs
    node_labels: dict[str, str] | None
    node_taints: list[str] | None
    workload_runtime: aks.WorkloadRuntime
    gpu_profile: aks.GPUProfileArgs
    gpu_instance_profile: aks.GPUInstanceProfile | None
    capacity_reservation_group_id: str | None
    scale_set_priority: aks.ScaleSetPriority
    scale_set_eviction_policy: aks.ScaleSetEvictionPolicy
    spot_max_price: float


def _autoscaled_pool_inputs(pool: PoolSettings, zones: Sequence[str], os_sku: str) -> PoolInputs:
    """Inputs shared by the inline system pool and AgentPool resources (same property names)."""
    return PoolInputs(
        vm_size=pool.vm_size,
        # Only the initial size: the autoscaler owns `count` afterwards (ignored on update).
        count=pool.min_count,
        enable_auto_scaling=True,
        min_count=pool.min_count,
        max_count=pool.max_count,
        max_pods=pool.max_pods,
        availability_zones=list(pool.zones or zones),
        os_type=aks.OSType.LINUX,
        os_sku=aks.OSSKU(os_sku),
        os_disk_type=aks.OSDiskType(pool.os_disk_type),
        os_disk_size_gb=pool.os_disk_size_gb,
        enable_encryption_at_host=True,
        enable_node_public_ip=False,
        type=aks.AgentPoolType.VIRTUAL_MACHINE_SCALE_SETS,
        upgrade_settings=_upgrade_settings(pool),
        security_profile=aks.AgentPoolSecurityProfileArgs(ssh_access=aks.AgentPoolSSHAccess.DISABLED),
        node_labels=dict(pool.labels) or None,
        node_taints=list(pool.taints) or None,
    )


def sandbox_pool_inputs(pool: SandboxPoolConfig, cluster: ClusterConfig) -> PoolInputs:
    """AgentPool inputs of the Pod Sandboxing pool: Kata VMs on AzureLinux, tainted."""
    inputs = _autoscaled_pool_inputs(pool, cluster.zones, sandbox.OS_SKU)
    inputs.update(
        PoolInputs(
            workload_runtime=aks.WorkloadRuntime.KATA_VM_ISOLATION,
            node_labels={sandbox.SANDBOX_LABEL: "kata", **pool.labels},
            node_taints=[sandbox.SANDBOX_TAINT, *pool.taints],
        )
    )
    return inputs


def gpu_pool_inputs(pool_name: str, pool: GpuPoolConfig, cluster: ClusterConfig) -> PoolInputs:
    """AgentPool inputs of a GPU pool: labels and taints for scheduling, driver, MIG, Spot."""
    size = GPU_VM_SIZES[pool.vm_size]
    inputs = _autoscaled_pool_inputs(pool, cluster.zones, cluster.gpu.os_sku)
    taints = platform_taints(cluster.gpu.taint, pool.spot) + list(pool.taints)
    inputs.update(
        PoolInputs(
            node_labels={**gpu_pool_labels(pool_name, size, pool.purpose, pool.mig_profile), **pool.labels},
            node_taints=taints,
            # One switch decides who installs the driver; the GPU operator's values follow it.
            gpu_profile=aks.GPUProfileArgs(
                driver=aks.GPUDriver.INSTALL if cluster.gpu.driver == "aks" else aks.GPUDriver.NONE
            ),
            gpu_instance_profile=aks.GPUInstanceProfile(pool.mig_profile) if pool.mig_profile else None,
            capacity_reservation_group_id=pool.capacity_reservation_group_id,
        )
    )
    if pool.spot:
        inputs.update(
            PoolInputs(
                scale_set_priority=aks.ScaleSetPriority.SPOT,
                scale_set_eviction_policy=aks.ScaleSetEvictionPolicy.DELETE,
                spot_max_price=-1,  # pay up to the on-demand price; evicted only for capacity
            )
        )
    return inputs


class AksCluster(pulumi.ComponentResource):
    cluster_name: pulumi.Output[str]
    oidc_issuer_url: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]

    def __init__(self, name: str, args: AksClusterArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:aks:Cluster", name, None, opts)
        cfg, naming, key = args.cluster, args.naming, args.key
        region = cfg.region
        child = pulumi.ResourceOptions(parent=self)

        group = resource_group(
            name, naming.name("rg", key, "cluster"), region, args.tags, parent=self, create=args.create_groups
        )
        control_plane, kubelet = (
            managedidentity.UserAssignedIdentity(
                f"{name}-{role}-id",
                resource_name_=naming.name("id", key, role),
                resource_group_name=group.name,
                location=region,
                tags=args.tags,
                opts=child,
            )
            for role in ("control-plane", "kubelet")
        )

        def grant(action: str, role: str, scope: pulumi.Input[str], scope_key: str):
            """A role for the control-plane identity on exactly one resource."""
            return assign_role(
                f"{name}-control-plane-{action}",
                role=role,
                scope=scope,
                scope_key=f"{naming.environment}/{scope_key}",
                principal_id=control_plane.principal_id,
                principal_key=f"{naming.environment}/{key}/control-plane",
                subscription_id=args.subscription_id,
                parent=self,
            )

        # AKS assigns the kubelet identity to the node VMs on the control plane's behalf.
        grants = [grant("operates-kubelet", "Managed Identity Operator", kubelet.id, f"{key}/identity/kubelet")]
        # etcd's key, in a vault of the cluster's own: the control plane encrypts with it and
        # links the vault to the API server's network (components/etcd_encryption.py).
        etcd = None
        if cfg.etcd_encryption:
            etcd = EtcdEncryption(
                f"{name}-etcd",
                EtcdEncryptionArgs(
                    naming=naming,
                    cluster_key=key,
                    region=region,
                    group=group,
                    tenant_id=args.tenant_id,
                    log_analytics_workspace_id=args.monitoring.log_analytics_workspace_id,
                    protect=args.protect,
                    lock=args.lock,
                    soft_delete_retention_days=args.key_vault_retention_days,
                    generation=cfg.etcd_key_generation,
                    tags=args.tags,
                    alert_routes=args.alert_routes,
                ),
                opts=child,
            )
            for action, role in zip(("encrypts-etcd", "links-etcd-vault"), ETCD_KEY_ROLES, strict=True):
                grants.append(grant(action, role, etcd.vault_id, f"{key}/etcd-vault"))
        # A public cluster joins nodes, pods and the API server to our subnets: Network
        # Contributor on each subnet. A private cluster with our own DNS zone also links the
        # zone to its VNet, which AKS documents as Network Contributor on the VNet plus
        # Private DNS Zone Contributor on the zone. Never the resource group.
        network_scopes: dict[str, pulumi.Input[str]] = dict(args.subnets.subnets())
        if cfg.api_server.private:
            if args.subnets.vnet_id is None or args.subnets.api_server_dns_zone_id is None:
                raise ValueError(f"cluster {key}: a private API server needs its VNet and privatelink zone IDs")
            network_scopes = {"vnet": args.subnets.vnet_id}
            grants.append(
                grant(
                    "writes-api-dns",
                    "Private DNS Zone Contributor",
                    args.subnets.api_server_dns_zone_id,
                    f"{cfg.region}/private-dns/azmk8s",
                )
            )
        for scope_name, scope_id in network_scopes.items():
            grants.append(grant(f"joins-{scope_name}", "Network Contributor", scope_id, f"{key}/network/{scope_name}"))
        # AKS places reserved nodes only if the cluster identity may use the reservation
        # group (Contributor on the group itself, nothing wider); without it the pool is
        # created with on-demand capacity and a warning.
        reservations = sorted(
            {p.capacity_reservation_group_id for p in cfg.gpu_pools.values() if p.capacity_reservation_group_id}
        )
        for i, reservation in enumerate(reservations):
            grants.append(grant(f"uses-reservation-{i}", "Contributor", reservation, reservation.lower()))

        # Azure's authorization sees a new role assignment only once Entra ID has replicated it;
        # until then AKS refuses the cluster (LinkedAuthorizationFailed on a subnet,
        # CustomPrivateDNSZoneMissingPermissionError on the zone), and pulumi-azure-native does
        # not retry those (it retries 408, 429 and 5xx). Wait once after the grants are made
        # (again only if one is replaced), as Azure's own templates wait after role assignments
        # (Azure/AKS-Construction: 30 s; learn.microsoft.com/azure/aks/use-managed-identity:
        # permissions "can take time to propagate").
        settled = time.Sleep(
            f"{name}-grants-propagate",
            create_duration=GRANT_PROPAGATION,
            triggers={f"grant-{i}": grant.id for i, grant in enumerate(grants)},
            opts=pulumi.ResourceOptions(parent=self, depends_on=grants),
        )
        cluster = aks.ManagedCluster(
            f"{name}-aks",
            resource_name_=naming.cluster(key),
            resource_group_name=group.name,
            location=region,
            dns_prefix=naming.cluster(key),
            node_resource_group=naming.node_resource_group(key, region),
            kubernetes_version=cfg.kubernetes_version,
            sku=aks.ManagedClusterSKUArgs(
                name=aks.ManagedClusterSKUName.BASE, tier=aks.ManagedClusterSKUTier(cfg.tier)
            ),
            support_plan=aks.KubernetesSupportPlan.KUBERNETES_OFFICIAL,
            identity=aks.ManagedClusterIdentityArgs(
                type=aks.ResourceIdentityType.USER_ASSIGNED,
                user_assigned_identities=[control_plane.id],
            ),
            identity_profile={
                "kubeletidentity": aks.UserAssignedIdentityArgs(
                    resource_id=kubelet.id, client_id=kubelet.client_id, object_id=kubelet.principal_id
                )
            },
            enable_rbac=True,
            disable_local_accounts=cfg.disable_local_accounts,
            aad_profile=aks.ManagedClusterAADProfileArgs(
                managed=True,
                enable_azure_rbac=True,
                admin_group_object_ids=list(args.admin_group_object_ids),
                tenant_id=args.tenant_id,
            ),
            oidc_issuer_profile=aks.ManagedClusterOIDCIssuerProfileArgs(enabled=True),
            security_profile=self._security_profile(args, etcd),
            api_server_access_profile=self._api_server_profile(args),
            network_profile=self._network_profile(args),
            agent_pool_profiles=[self._system_pool(args)],
            auto_upgrade_profile=aks.ManagedClusterAutoUpgradeProfileArgs(
                upgrade_channel=aks.UpgradeChannel(args.upgrade_channel),
                node_os_upgrade_channel=aks.NodeOSUpgradeChannel(args.node_os_channel),
            ),
            auto_scaler_profile=self._autoscaler_profile(cfg, args.operations.gpu_health),
            addon_profiles={
                # Container Insights' agent, signing in with its managed identity (no workspace key).
                "omsagent": aks.ManagedClusterAddonProfileArgs(
                    enabled=args.monitoring.container_logs.enabled,
                    config={
                        "logAnalyticsWorkspaceResourceID": args.monitoring.log_analytics_workspace_id,
                        "useAADAuth": "true",
                    }
                    if args.monitoring.container_logs.enabled
                    else None,
                ),
                "azurepolicy": aks.ManagedClusterAddonProfileArgs(enabled=True),
                "azureKeyvaultSecretsProvider": aks.ManagedClusterAddonProfileArgs(
                    enabled=True,
                    config={
                        "enableSecretRotation": "true",
                        "rotationPollInterval": args.operations.secret_rotation_interval,
                    },
                ),
            },
            azure_monitor_profile=aks.ManagedClusterAzureMonitorProfileArgs(
                metrics=aks.ManagedClusterAzureMonitorProfileMetricsArgs(
                    enabled=True,
                    kube_state_metrics=aks.ManagedClusterAzureMonitorProfileKubeStateMetricsArgs(
                        metric_labels_allowlist=alerts_plan.kube_state_metric_labels(), metric_annotations_allow_list=""
                    ),
                )
            ),
            service_mesh_profile=aks.ServiceMeshProfileArgs(
                mode=aks.ServiceMeshMode.ISTIO,
                istio=aks.IstioServiceMeshArgs(
                    revisions=list(args.mesh_revisions),
                    components=aks.IstioComponentsArgs(
                        # Internal only: the platform serves nothing on a public address.
                        ingress_gateways=[
                            aks.IstioIngressGatewayArgs(enabled=True, mode=aks.IstioIngressGatewayMode.INTERNAL)
                        ]
                    ),
                ),
            )
            if args.mesh_revisions
            else None,
            workload_auto_scaler_profile=aks.ManagedClusterWorkloadAutoScalerProfileArgs(
                keda=aks.ManagedClusterWorkloadAutoScalerProfileKedaArgs(enabled=True)
            )
            if args.keda
            else None,
            storage_profile=aks.ManagedClusterStorageProfileArgs(
                disk_csi_driver=aks.ManagedClusterStorageProfileDiskCSIDriverArgs(enabled=True),
                snapshot_controller=aks.ManagedClusterStorageProfileSnapshotControllerArgs(enabled=True),
                # Azure Files CSI mounts with storage account keys; the platform allows none.
                file_csi_driver=aks.ManagedClusterStorageProfileFileCSIDriverArgs(enabled=False),
            ),
            tags=args.tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                protect=args.protect,
                depends_on=[*grants, settled, *args.network_ready],
                ignore_changes=self._ignored_cluster_changes(args),
            ),
        )

        user_pools: dict[str, PoolInputs] = {
            **{
                pool_name: _autoscaled_pool_inputs(pool, cfg.zones, pool.os_sku)
                for pool_name, pool in cfg.node_pools.items()
            },
            **{pool_name: gpu_pool_inputs(pool_name, pool, cfg) for pool_name, pool in cfg.gpu_pools.items()},
        }
        for pool_name, pool in args.dedicated_pools.items():
            user_pools[pool_name] = _autoscaled_pool_inputs(pool, cfg.zones, pool.os_sku)
        if cfg.sandbox_pool is not None:
            user_pools[sandbox.SANDBOX_POOL_NAME] = sandbox_pool_inputs(cfg.sandbox_pool, cfg)
        for pool_name, inputs in user_pools.items():
            aks.AgentPool(
                f"{name}-pool-{pool_name}",
                agent_pool_name=pool_name,
                resource_name_=cluster.name,
                resource_group_name=group.name,
                mode=aks.AgentPoolMode.USER,
                orchestrator_version=cfg.kubernetes_version,
                vnet_subnet_id=args.subnets.nodes_subnet_id,
                pod_subnet_id=args.subnets.pods_subnet_id,
                # GPU pools: what their nodes earn at run time, for the autoscaler's template.
                tags=args.tags,
                **inputs,
                opts=pulumi.ResourceOptions(
                    parent=self,
                    ignore_changes=["count"] + (["orchestratorVersion"] if self._version_owned_elsewhere(args) else []),
                    replace_on_changes=POOL_REPLACED_BY,
                    # Pool names are fixed, so a replacement must delete the old pool first.
                    delete_before_replace=True,
                ),
            )

        self._maintenance_windows(name, args, group, cluster)
        self._monitoring(name, args, group, cluster)

        credentials = aks.list_managed_cluster_user_credentials_output(
            resource_group_name=group.name,
            resource_name=cluster.name,
            format="exec",
            # Waits for the cluster; in a preview of a new cluster the kubeconfig stays unknown.
            opts=pulumi.InvokeOutputOptions(depends_on=[cluster]),
        )
        self.kubeconfig = pulumi.Output.secret(
            credentials.kubeconfigs.apply(
                lambda kubeconfigs: non_interactive_kubeconfig(
                    base64.b64decode(kubeconfigs[0].value).decode(), args.kubelogin_mode
                )
            )
        )
        self.kubelet_pull_grant = assign_role(
            f"{name}-kubelet-pulls",
            role="AcrPull",
            scope=args.registry_id,
            scope_key=f"{naming.environment}/registry",
            principal_id=kubelet.principal_id,
            principal_key=f"{naming.environment}/{key}/kubelet",
            subscription_id=args.subscription_id,
            parent=self,
        )
        # Every in-cluster resource goes through this provider, authenticated like a person
        # or a CI job would be (kubelogin), never with a local admin certificate. Who may
        # write in the cluster is configuration, not whoever runs Pulumi: the environment's
        # deploy identity holds Azure Kubernetes Service RBAC Cluster Admin on its subscription
        # (the delivery project), people belong to entra.adminGroupObjectIds.
        self.kubernetes_provider = kubernetes.Provider(
            f"{name}-k8s",
            kubeconfig=self.kubeconfig,
            # Names the cluster, so that a new kubeconfig (rotated credentials, another login
            # mode) does not replace every in-cluster resource; policies read it too.
            cluster_identifier=naming.cluster(key),
            enable_server_side_apply=True,
            helm_release_settings=kubernetes.HelmReleaseSettingsArgs(driver=HELM_DRIVER),
            # At the stack's root, where the tenants unit declares its provider for this cluster
            # too: `pulumi state move` copies providers with their parent, so one under this
            # component would point at a parent the destination does not have (docs/migration.md).
            # The alias keeps it where it was a child of the cluster.
            opts=pulumi.ResourceOptions(aliases=[pulumi.Alias(parent=self)]),
        )
        self.cluster_name = cluster.name
        self.cluster_id = cluster.id
        self.resource_group_name = group.name
        self.oidc_issuer_url = cluster.oidc_issuer_profile.apply(_issuer_url)
        self.kubelet_object_id = kubelet.principal_id
        self.register_outputs(
            {
                "clusterName": self.cluster_name,
                "oidcIssuerUrl": self.oidc_issuer_url,
                "kubeconfig": self.kubeconfig,
            }
        )

    @staticmethod
    def _version_owned_elsewhere(args: AksClusterArgs) -> bool:
        """AKS (stable/rapid channel) or the fleet moves the version, not this program."""
        return args.cluster.kubernetes_version is None or args.fleet_managed

    @classmethod
    def _ignored_cluster_changes(cls, args: AksClusterArgs) -> list[str]:
        ignored = ["agentPoolProfiles[0].count"]  # the autoscaler owns the system pool's size
        if cls._version_owned_elsewhere(args):
            ignored += ["kubernetesVersion", "agentPoolProfiles[0].orchestratorVersion"]
        return ignored

    @staticmethod
    def _system_pool(args: AksClusterArgs) -> aks.ManagedClusterAgentPoolProfileArgs:
        cfg = args.cluster
        pool = cfg.system_pool
        inputs = _autoscaled_pool_inputs(pool, cfg.zones, pool.os_sku)
        # Only critical add-ons schedule here; workloads go to user pools.
        inputs["node_taints"] = [SYSTEM_POOL_TAINT, *pool.taints]
        return aks.ManagedClusterAgentPoolProfileArgs(
            name=SYSTEM_POOL_NAME,
            mode=aks.AgentPoolMode.SYSTEM,
            orchestrator_version=cfg.kubernetes_version,
            vnet_subnet_id=args.subnets.system_subnet_id,
            pod_subnet_id=args.subnets.pods_subnet_id,
            **inputs,
        )

    @staticmethod
    def _security_profile(args: AksClusterArgs, etcd: EtcdEncryption | None) -> aks.ManagedClusterSecurityProfileArgs:
        operations = args.operations
        return aks.ManagedClusterSecurityProfileArgs(
            # Reached privately through the API server's VNet integration (validation requires it).
            azure_key_vault_kms=aks.AzureKeyVaultKmsArgs(
                enabled=True,
                key_id=etcd.key_id,
                key_vault_network_access=aks.KeyVaultNetworkAccessTypes.PRIVATE,
                key_vault_resource_id=etcd.vault_id,
            )
            if etcd
            else None,
            workload_identity=aks.ManagedClusterSecurityProfileWorkloadIdentityArgs(enabled=True),
            image_cleaner=aks.ManagedClusterSecurityProfileImageCleanerArgs(
                enabled=True, interval_hours=operations.image_cleaner_interval_hours
            ),
            defender=aks.ManagedClusterSecurityProfileDefenderArgs(
                log_analytics_workspace_resource_id=args.monitoring.log_analytics_workspace_id,
                security_monitoring=aks.ManagedClusterSecurityProfileDefenderSecurityMonitoringArgs(enabled=True),
            )
            if operations.defender
            else None,
        )

    @staticmethod
    def _api_server_profile(args: AksClusterArgs) -> aks.ManagedClusterAPIServerAccessProfileArgs:
        api = args.cluster.api_server
        return aks.ManagedClusterAPIServerAccessProfileArgs(
            enable_private_cluster=api.private,
            # Our zone, linked to the hub too (AKS's "system" zone links only the cluster VNet);
            # no public FQDN resolving to the private address.
            private_dns_zone=args.subnets.api_server_dns_zone_id if api.private else None,
            enable_private_cluster_public_fqdn=False if api.private else None,
            enable_vnet_integration=api.vnet_integration,
            subnet_id=args.subnets.api_server_subnet_id if api.vnet_integration else None,
            authorized_ip_ranges=pulumi.Output.from_input(args.egress_ips).apply(
                lambda ips: [str(r) for r in api.authorized_ip_ranges] + [f"{ip}/32" for ip in ips]
            )
            if api.authorized_ip_ranges
            else None,
        )

    @staticmethod
    def _network_profile(args: AksClusterArgs) -> aks.ContainerServiceNetworkProfileArgs:
        overlay = args.cluster.cni == "overlay"
        net = args.network
        profile = aks.ContainerServiceNetworkProfileArgs(
            network_plugin=aks.NetworkPlugin.AZURE,
            network_plugin_mode=aks.NetworkPluginMode.OVERLAY if overlay else None,
            network_dataplane=aks.NetworkDataplane.CILIUM,
            network_policy=aks.NetworkPolicy.CILIUM,
            pod_cidr=str(net.pod_cidr) if overlay else None,
            service_cidr=str(net.service_cidr),
            dns_service_ip=str(net.dns_service_ip),
            outbound_type=aks.OutboundType(net.egress.outbound_type),
            load_balancer_sku=aks.LoadBalancerSku.STANDARD,
            # Advanced Container Networking Services: Cilium FQDN policies (the namespaces'
            # egress allowlists) are enforced only with it; flow logs and metrics come along.
            advanced_networking=aks.AdvancedNetworkingArgs(
                enabled=True,
                observability=aks.AdvancedNetworkingObservabilityArgs(enabled=True),
                security=aks.AdvancedNetworkingSecurityArgs(
                    enabled=True, advanced_network_policies=aks.AdvancedNetworkPolicies.FQDN
                ),
            )
            if args.cluster.advanced_networking
            else None,
        )
        if not overlay:
            # The SDK fills in podCidr 10.244.0.0/16 when it is left out; classic Azure CNI
            # takes pod IPs from the pod subnet and rejects a pod CIDR.
            pulumi.set(profile, "pod_cidr", None)
        return profile

    @staticmethod
    def _autoscaler_profile(
        cfg: ClusterConfig, health: GpuHealthConfig
    ) -> aks.ManagedClusterPropertiesAutoScalerProfileArgs:
        scaler = cfg.autoscaler
        # A GPU node being checked is neither given up on nor removed (planning/cold_start.py).
        provision, unready = cold_start.autoscaler_times(cfg, health)
        # AKS takes every autoscaler setting as a string.
        return aks.ManagedClusterPropertiesAutoScalerProfileArgs(
            expander=aks.Expander(scaler.expander),
            balance_similar_node_groups=str(scaler.balance_similar_node_groups).lower(),
            scan_interval=scaler.scan_interval,
            scale_down_delay_after_add=scaler.scale_down_delay_after_add,
            scale_down_unneeded_time=scaler.scale_down_unneeded_time,
            scale_down_utilization_threshold=str(scaler.scale_down_utilization_threshold),
            max_graceful_termination_sec=str(scaler.max_graceful_termination_sec),
            max_node_provision_time=provision,
            scale_down_unready_time=unready,
            ok_total_unready_count=str(cold_start.ok_unready_count(cfg, health)),
            skip_nodes_with_system_pods=str(scaler.skip_nodes_with_system_pods).lower(),
            skip_nodes_with_local_storage=str(scaler.skip_nodes_with_local_storage).lower(),
        )

    def _maintenance_windows(self, name: str, args: AksClusterArgs, group: Group, cluster: aks.ManagedCluster) -> None:
        upgrades = args.cluster.upgrades
        window = upgrades.maintenance_window
        schedules = []
        # Fleet update runs also wait for the auto-upgrade window of each member.
        if args.upgrade_channel != "none" or args.fleet_managed:
            schedules.append(("auto-upgrade", AUTO_UPGRADE_SCHEDULE))
        if args.node_os_channel not in ("None", "Unmanaged"):
            schedules.append(("node-os", NODE_OS_UPGRADE_SCHEDULE))
        for label, config_name in schedules:
            aks.MaintenanceConfiguration(
                f"{name}-maintenance-{label}",
                config_name=config_name,
                resource_group_name=group.name,
                resource_name_=cluster.name,
                maintenance_window=aks.MaintenanceWindowArgs(
                    schedule=aks.ScheduleArgs(
                        weekly=aks.WeeklyScheduleArgs(day_of_week=aks.WeekDay(window.day_of_week), interval_weeks=1)
                    ),
                    duration_hours=window.duration_hours,
                    start_time=window.start_time,
                    utc_offset=window.utc_offset,
                ),
                opts=pulumi.ResourceOptions(parent=self),
            )

    def _monitoring(self, name: str, args: AksClusterArgs, group: Group, cluster: aks.ManagedCluster) -> None:
        monitoring = args.monitoring
        collect = CollectionTarget(args.naming, args.key, group.name, cluster.id, args.tags, self)
        prometheus_collection(name, monitoring, collect)
        if monitoring.container_logs.enabled:
            container_insights_collection(name, monitoring, collect)
        send_logs(
            f"{name}-audit-logs",
            resource_uri=cluster.id,
            workspace_id=monitoring.log_analytics_workspace_id,
            categories=DIAGNOSTIC_LOG_CATEGORIES,
            parent=self,
        )
