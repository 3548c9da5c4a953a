"""An on-premises site under the platform's control (docs/hybrid.md): what Azure holds for one Arc
connected cluster, which the site's operators connected and the platform only references.

- Governance: Azure Policy's extension and the pod security initiative assigned on the connected
  cluster (as on AKS: components/admission.py), Defender's sensor where the distribution has it.
- Observability: Container Insights and managed Prometheus with their managed identities, and the
  same collection rules as an AKS cluster of the region (components/collection_rules.py), through
  the region's collection endpoint.
- The baseline: Pulumi cannot reach the site's API server, so the platform's in-cluster objects
  (planning/site_baseline.py) are files in the site's baseline container (a private storage
  account of the site's group, reached over the link through its private endpoint), and the site's
  Flux reads them with its workload identity: a federated credential of the site's Flux identity
  trusting the site's issuer, allowed to read that container alone. The unit exports the files
  (`baselineDocuments`) and its deploy job uploads them after `up` (scripts/site_baseline.py), as
  its own identity: pulumi-azure-native's `storage.Blob` signs with the account's shared key, which
  the account refuses (pulumi/pulumi-azure-native#2015, open).

Extensions pinned where Microsoft publishes versions (planning/onprem.py); Azure Monitor's and
Defender's follow the Stable train.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import kubernetes as arc
from pulumi_azure_native import kubernetesconfiguration as k8sconfig
from pulumi_azure_native import managedidentity, operationalinsights, storage

from components.admission import assign_pod_security
from components.alerting import metric_alerts
from components.collection_rules import (
    ClusterMonitoring,
    CollectionTarget,
    container_insights_collection,
    prometheus_collection,
)
from components.observability import send_logs
from components.private_dns import PrivateEndpoints
from components.rbac import assign_role
from components.storage import ACCOUNT_REPLACED_BY, BLOB_LOG_CATEGORIES, private_account
from components.workload_identity import TOKEN_EXCHANGE_AUDIENCE, service_account_subject
from facts import arc as arc_facts
from planning import site_baseline
from planning.naming import Naming, ResourceId, parse_resource_id
from planning.onprem import ExtensionSpec, site_extensions
from planning.site_baseline import BASELINE_CONTAINER, DIGEST_METADATA
from planning.workloads import blob_endpoint
from stackconfig.model import AdmissionConfig, OnPremClusterConfig, StorageConfig

FLUX_CONFIGURATION = "platform-baseline"
# How often the site's Flux looks for a new baseline, and applies it again (drift).
SOURCE_INTERVAL_SECONDS = 300
APPLY_INTERVAL_SECONDS = 600


# Where extensions and Flux configurations of a connected cluster live (their path parameters).
ARC_PROVIDER = "Microsoft.Kubernetes"
CONNECTED_CLUSTERS = "connectedClusters"


@dataclass(frozen=True)
class OnCluster:
    name: str
    group: str


@dataclass(frozen=True)
class ArcSiteArgs:
    naming: Naming
    key: str
    site: OnPremClusterConfig
    tenant_id: pulumi.Input[str]
    subscription_id: pulumi.Input[str]
    monitoring: ClusterMonitoring
    # The region's private-endpoint subnet and privatelink zones (the baseline account's endpoint).
    endpoints: PrivateEndpoints
    admission: AdmissionConfig
    # The site's training namespaces (baseline with IPC_LOCK, as on AKS).
    training_namespaces: Sequence[str]
    # The environment's blob recovery settings (platform:storage: soft delete, point-in-time restore).
    recovery: StorageConfig
    protect: bool
    tags: dict[str, str]
    # severity -> the action groups its Azure Monitor alerts reach (components/alerting.py)
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)
    # The digest of the baseline this deploy uploads (planning/site_baseline.py, baseline_digest).
    baseline_digest: pulumi.Input[str] = ""


class ArcSite(pulumi.ComponentResource):
    """Outputs: `connected_cluster_id`, `flux_client_id`, `baseline_url` (the container the
    baseline's files go to)."""

    def __init__(self, name: str, args: ArcSiteArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:arc:Site", name, None, opts)
        site, naming, key = args.site, args.naming, args.key
        child = pulumi.ResourceOptions(parent=self)
        group = parse_resource_id(site.connected_cluster_id).resource_group
        # A read: the preview fails where the site has not been connected (or is in another group).
        connected = arc.ConnectedCluster.get(f"{name}-connected-cluster", site.connected_cluster_id, opts=child)
        self.connected_cluster_id = connected.id
        on_cluster = OnCluster(site.connected_cluster_name, group)

        container, reader = self._baseline_source(name, args, group)
        flux_identity = managedidentity.UserAssignedIdentity(
            f"{name}-flux-identity",
            resource_name_=naming.name("id", key, "flux"),
            resource_group_name=group,
            location=site.region,
            tags=args.tags,
            opts=child,
        )
        self.flux_client_id = flux_identity.client_id
        credential = managedidentity.FederatedIdentityCredential(
            f"{name}-flux-source-controller",
            # Named after the cluster it trusts, as the workloads' credentials are.
            federated_identity_credential_resource_name=site.connected_cluster_name,
            resource_name_=flux_identity.name,
            resource_group_name=group,
            issuer=str(site.oidc_issuer_url),
            subject=service_account_subject(arc_facts.FLUX_NAMESPACE, arc_facts.FLUX_SOURCE_CONTROLLER),
            audiences=[TOKEN_EXCHANGE_AUDIENCE],
            opts=child,
        )
        grant = assign_role(
            f"{name}-flux-reads-baseline",
            role="Storage Blob Data Reader",
            scope=container.id,
            scope_key=f"{naming.environment}/sites/{key}/{BASELINE_CONTAINER}",
            principal_id=flux_identity.principal_id,
            principal_key=f"{naming.environment}/sites/{key}/flux",
            subscription_id=args.subscription_id,
            parent=self,
        )

        settings = {
            "azurepolicy": {},
            "azuremonitor-containers": {
                arc_facts.CONTAINER_INSIGHTS_AAD_SETTING: "true",
                "logAnalyticsWorkspaceResourceID": args.monitoring.log_analytics_workspace_id,
            },
            "azuremonitor-metrics": {"azure-monitor-workspace-resource-id": args.monitoring.monitor_workspace_id},
            "flux": dict(
                zip(
                    arc_facts.FLUX_WORKLOAD_IDENTITY_SETTINGS,
                    ["true", flux_identity.client_id, args.tenant_id],
                    strict=True,
                )
            )
            # The image automation controllers write to Git and read registries: not used here.
            | {"image-automation-controller.enabled": "false", "image-reflector-controller.enabled": "false"},
            "microsoft-defender": {"logAnalyticsWorkspaceResourceID": args.monitoring.log_analytics_workspace_id},
        }
        # Container Insights' agent finds its workspace by its customer ID, which az CLI and
        # Microsoft's managed-identity template always pass (`amalogs.secret.wsid`), with the key
        # unused under managed identity (azure-cli-extensions k8s-extension ContainerInsights.py:
        # "workspace key not used in case of AAD MSI auth").
        # A plain invoke once the workspace's ID is known (the foundation's output): the output
        # form of the invoke waits on the stack reference and stays unknown in a preview.
        customer_id = pulumi.Output.from_input(args.monitoring.log_analytics_workspace_id).apply(
            lambda workspace_id: _customer_id(parse_resource_id(workspace_id), self)
        )
        protected: dict[str, dict[str, pulumi.Input[str]]] = {
            "azuremonitor-containers": {"amalogs.secret.wsid": customer_id, "amalogs.secret.key": "<not_used>"},
        }
        extensions = {
            spec.name: self._extension(
                name, spec, on_cluster, settings[spec.name], connected, protected.get(spec.name, {})
            )
            for spec in site_extensions(site)
        }

        # The connected cluster by its ID (the read above fails the preview where it is missing).
        cluster_id = site.connected_cluster_id
        collect = CollectionTarget(naming, key, group, cluster_id, args.tags, self)
        prometheus_collection(name, args.monitoring, collect)
        if args.monitoring.container_logs.enabled:
            container_insights_collection(name, args.monitoring, collect)
        if args.admission.azure_policy.initiative != "none":
            assign_pod_security(
                name,
                cluster_key=key,
                cluster_id=cluster_id,
                settings=args.admission.azure_policy,
                excluded=list(arc_facts.SITE_SYSTEM_NAMESPACES),
                training_namespaces=list(args.training_namespaces),
                parent=self,
            )

        k8sconfig.FluxConfiguration(
            f"{name}-flux-baseline",
            flux_configuration_name=FLUX_CONFIGURATION,
            cluster_name=on_cluster.name,
            cluster_resource_name=CONNECTED_CLUSTERS,
            cluster_rp=ARC_PROVIDER,
            resource_group_name=on_cluster.group,
            namespace=arc_facts.FLUX_NAMESPACE,
            scope=k8sconfig.ScopeType.CLUSTER,
            source_kind=k8sconfig.SourceKindType.AZURE_BLOB,
            azure_blob=k8sconfig.AzureBlobDefinitionArgs(
                url=blob_endpoint(self.account_name),
                container_name=BASELINE_CONTAINER,
                # No credential here: the source-controller signs in with the extension's workload
                # identity (its AZURE_* environment). A managed identity's client ID here becomes a
                # Secret Flux reads as IMDS managed identity, which no server outside Azure has
                # (fluxcd/source-controller internal/bucket/azure; gitops-flux2-parameters.md: "not
                # yet available for Azure Arc-enabled Kubernetes").
                sync_interval_in_seconds=SOURCE_INTERVAL_SECONDS,
            ),
            kustomizations={
                path: k8sconfig.KustomizationDefinitionArgs(
                    path=f"./{path}",
                    depends_on=after,
                    prune=True,
                    wait=True,
                    sync_interval_in_seconds=APPLY_INTERVAL_SECONDS,
                    timeout_in_seconds=APPLY_INTERVAL_SECONDS,
                )
                for path, after in (
                    (site_baseline.PLATFORM_PATH, None),
                    # Kueue's objects after the platform's kustomization, whose Kueue brings the CRDs.
                    (site_baseline.QUEUES_PATH, [site_baseline.PLATFORM_PATH]),
                )
            },
            suspend=False,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[extensions["flux"], credential, grant, *reader]),
        )
        self.baseline_url = f"{blob_endpoint(self.account_name)}/{BASELINE_CONTAINER}"
        self.register_outputs({"connectedClusterId": connected.id, "fluxClientId": flux_identity.client_id})

    def _baseline_source(
        self, name: str, args: ArcSiteArgs, group: str
    ) -> tuple[storage.BlobContainer, list[pulumi.Resource]]:
        """The site's baseline container: a private account (no shared key, no public network),
        reached through the region's private endpoint, versioned so a bad baseline is undone."""
        child = pulumi.ResourceOptions(parent=self)
        recovery = args.recovery
        self.account_name = args.naming.site_baseline_account(args.key)
        account = storage.StorageAccount(
            f"{name}-baseline",
            account_name=self.account_name,
            resource_group_name=group,
            location=args.site.region,
            kind=storage.Kind.STORAGE_V2,
            sku=storage.SkuArgs(name=storage.SkuName.STANDARD_ZRS),
            access_tier=storage.AccessTier.HOT,
            is_hns_enabled=False,
            **private_account(),
            encryption=storage.EncryptionArgs(
                require_infrastructure_encryption=True,
                key_source=storage.KeySource.MICROSOFT_STORAGE,
                services=storage.EncryptionServicesArgs(
                    blob=storage.EncryptionServiceArgs(enabled=True, key_type=storage.KeyType.ACCOUNT)
                ),
            ),
            tags=args.tags,
            opts=pulumi.ResourceOptions(parent=self, protect=args.protect, replace_on_changes=ACCOUNT_REPLACED_BY),
        )
        service = storage.BlobServiceProperties(
            f"{name}-baseline-blob-service",
            blob_services_name="default",
            account_name=account.name,
            resource_group_name=group,
            # The environment's recovery settings, as its data accounts have them.
            is_versioning_enabled=True,
            delete_retention_policy=storage.DeleteRetentionPolicyArgs(
                enabled=True, days=recovery.soft_delete_days, allow_permanent_delete=False
            ),
            container_delete_retention_policy=storage.DeleteRetentionPolicyArgs(
                enabled=True, days=recovery.container_soft_delete_days
            ),
            change_feed=storage.ChangeFeedArgs(enabled=True, retention_in_days=recovery.change_feed_days)
            if recovery.point_in_time_restore_days
            else None,
            restore_policy=storage.RestorePolicyPropertiesArgs(enabled=True, days=recovery.point_in_time_restore_days)
            if recovery.point_in_time_restore_days
            else None,
            opts=child,
        )
        container = storage.BlobContainer(
            f"{name}-baseline-container",
            container_name=BASELINE_CONTAINER,
            account_name=account.name,
            resource_group_name=group,
            public_access=storage.PublicAccess.NONE,
            # What the last deploy uploaded: a baseline that changes without a change here (the
            # Kafka host's CA renewed) shows as this container's update in the nightly drift
            # check, which ignores reads and outputs (pulumi/pulumi#5087).
            metadata={DIGEST_METADATA: args.baseline_digest},
            opts=pulumi.ResourceOptions(parent=self, depends_on=[service]),
        )
        # Who read, wrote or deleted which file, and the account's availability, as every account.
        send_logs(
            f"{name}-baseline-blob-logs",
            resource_uri=account.id.apply(lambda account_id: f"{account_id}/blobServices/default"),
            workspace_id=args.monitoring.log_analytics_workspace_id,
            categories=BLOB_LOG_CATEGORIES,
            parent=self,
        )
        metric_alerts(
            f"{name}-baseline-alert",
            resource_id=account.id,
            resource_type="Microsoft.Storage/storageAccounts",
            resource_group_name=group,
            routes=args.alert_routes,
            tags=args.tags,
            parent=self,
        )
        endpoint = args.endpoints.connect(
            f"{name}-baseline",
            target_id=account.id,
            target_name=self.account_name,
            group_id="blob",
            resource_group_name=group,
            tags=args.tags,
            parent=self,
        )
        return container, endpoint

    def _extension(
        self,
        name: str,
        spec: ExtensionSpec,
        on_cluster: OnCluster,
        settings: Mapping[str, pulumi.Input[str]],
        connected: arc.ConnectedCluster,
        protected: Mapping[str, pulumi.Input[str]],
    ) -> k8sconfig.Extension:
        return k8sconfig.Extension(
            f"{name}-ext-{spec.name}",
            extension_name=spec.name,
            cluster_name=on_cluster.name,
            cluster_resource_name=CONNECTED_CLUSTERS,
            cluster_rp=ARC_PROVIDER,
            resource_group_name=on_cluster.group,
            extension_type=spec.extension_type,
            # Pinned: no minor upgrades behind the review; unpinned: the Stable train's.
            version=spec.version,
            auto_upgrade_minor_version=spec.version is None,
            release_train="Stable" if spec.version is None else None,
            identity=k8sconfig.IdentityArgs(type=k8sconfig.ResourceIdentityType.SYSTEM_ASSIGNED),
            scope=k8sconfig.ScopeArgs(cluster=k8sconfig.ScopeClusterArgs(release_namespace=spec.release_namespace)),
            configuration_settings=dict(settings) or None,
            configuration_protected_settings=dict(protected) or None,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[connected]),
        )


def _customer_id(workspace: ResourceId, parent: pulumi.Resource) -> str:
    found = operationalinsights.get_workspace(
        resource_group_name=workspace.resource_group,
        workspace_name=workspace.name,
        opts=pulumi.InvokeOptions(parent=parent),
    )
    return str(found.customer_id)
