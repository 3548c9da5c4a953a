"""Which input changes make the providers replace a resource, and which resources are stateful.

The Python SDKs carry no such knowledge; the providers decide at diff time. What they decide:

- azure-native 3.x (provider/pkg/provider/diff.go, `calculateDetailedDiff`): every *path
  parameter* of the resource's PUT (the resource group, the resource's own name, `scope`) replaces;
  so does a top-level property the REST spec marks create-only (`x-ms-mutability` without
  `update`, e.g. a TrackedResource's `location`) and each name in the hand-kept `forceNewMap`
  (provider/pkg/gen/replacement.go), which also reaches one level into nested objects (a
  cluster's `networkProfile.podCidr`); nested create-only properties only land in
  `reports/forceNewTypes.json` and do *not* replace (the provider's own example: a storage
  account's `encryption.services.blob.keyType`). A change below a replacing property replaces,
  and azure-native deletes the old resource before creating the new one (its Diff sets
  DeleteBeforeReplace with any replacement).
- kubernetes 4.x (provider/pkg/provider/provider.go `Diff`, diff.go `forceNew`): `metadata.name`
  and `metadata.namespace` for every kind, plus per-kind fields (below); custom resources,
  PriorityClasses and patches only the name and namespace; a Helm Release `name`/`namespace`.
  A provider whose `clusterIdentifier` changes replaces everything it deployed (`DiffConfig`).

Properties the providers send as in-place updates that Azure or the API server then refuses
(an agent pool's `osDiskType`, a subnet's `addressPrefix` in use, a PriorityClass's `value`,
a StorageClass's `reclaimPolicy`) are not here: `pulumi up` fails on them instead of replacing.

Sources are named per entry: AN = pulumi/pulumi-azure-native provider/pkg/gen/replacement.go
(`forceNewMap`) at the 3.29 line; PATH = a path parameter of the resource's PUT (diff.go);
SPEC = the REST spec's create-only `location` (common-types TrackedResource) at the SDK's default
API version; K8S = pulumi/pulumi-kubernetes provider/pkg/provider/diff.go at the 4.34 line.
"""

from __future__ import annotations

AN = "azure-native forceNewMap (provider/pkg/gen/replacement.go)"
PATH = "azure-native: a path parameter of the resource's PUT (provider/pkg/provider/diff.go)"
SPEC = "REST spec: create-only (x-ms-mutability) at the SDK's default API version"
K8S = "pulumi-kubernetes forceNew (provider/pkg/provider/diff.go)"
K8S_NAME = "pulumi-kubernetes: every kind (provider/pkg/provider/provider.go Diff)"


def _paths(source: str, *paths: str) -> dict[str, str]:
    return dict.fromkeys(paths, source)


# type token -> {Pulumi input path (wire names; `[*]` any item): source}.
FORCE_NEW: dict[str, dict[str, str]] = {
    "azure-native:containerservice:ManagedCluster": {
        **_paths(PATH, "resourceGroupName", "resourceName"),
        **_paths(AN, "location", "dnsPrefix", "fqdnSubdomain", "diskEncryptionSetID", "nodeResourceGroup"),
        **_paths(AN, "linuxProfile", "windowsProfile"),
        # Per leaf since pulumi/pulumi-azure-native#4771 (merged 2026-07-16, before 3.29.0): ACNS,
        # load balancer and NAT gateway profiles update in place. podCidrs and ipFamilies are in
        # the newest forceNewMap read (the fix for #4782); kept, as Azure cannot change them either.
        **_paths(
            AN,
            *(
                f"networkProfile.{leaf}"
                for leaf in (
                    "serviceCidr",
                    "serviceCidrs",
                    "dnsServiceIP",
                    "networkMode",
                    "networkPlugin",
                    "networkPluginMode",
                    "podCidr",
                    "podCidrs",
                    "networkDataplane",
                    "networkPolicy",
                    "outboundType",
                    "ipFamilies",
                )
            ),
        ),
    },
    "azure-native:containerservice:AgentPool": {
        **_paths(PATH, "resourceGroupName", "resourceName", "agentPoolName"),
        **_paths(AN, "vmSize", "gpuInstanceProfile", "networkProfile.nodePublicIPTags"),
    },
    "azure-native:network:VirtualNetwork": {
        **_paths(PATH, "resourceGroupName", "virtualNetworkName"),
        **_paths(AN, "location"),
    },
    "azure-native:network:Subnet": _paths(PATH, "resourceGroupName", "virtualNetworkName", "subnetName"),
    "azure-native:network:PrivateEndpoint": {
        **_paths(PATH, "resourceGroupName", "privateEndpointName"),
        **_paths(AN, "subnet"),
    },
    "azure-native:network:PublicIPAddress": {
        **_paths(PATH, "resourceGroupName", "publicIpAddressName"),
        **_paths(AN, "location", "publicIPAddressVersion", "publicIPPrefix", "sku"),
    },
    "azure-native:network:AzureFirewall": _paths(PATH, "resourceGroupName", "azureFirewallName"),
    "azure-native:network:NetworkSecurityGroup": _paths(PATH, "resourceGroupName", "networkSecurityGroupName"),
    "azure-native:network:VirtualNetworkPeering": _paths(
        PATH, "resourceGroupName", "virtualNetworkName", "virtualNetworkPeeringName"
    ),
    "azure-native:network:PrivateDnsZoneGroup": _paths(
        PATH, "resourceGroupName", "privateEndpointName", "privateDnsZoneGroupName"
    ),
    "azure-native:privatedns:PrivateZone": _paths(PATH, "resourceGroupName", "privateZoneName"),
    "azure-native:privatedns:VirtualNetworkLink": _paths(
        PATH, "resourceGroupName", "privateZoneName", "virtualNetworkLinkName"
    ),
    "azure-native:privatedns:PrivateRecordSet": _paths(
        PATH, "resourceGroupName", "privateZoneName", "recordType", "relativeRecordSetName"
    ),
    "azure-native:storage:StorageAccount": {
        **_paths(PATH, "resourceGroupName", "accountName"),
        **_paths(AN, "location", "isHnsEnabled"),
    },
    "azure-native:storage:BlobContainer": _paths(PATH, "resourceGroupName", "accountName", "containerName"),
    "azure-native:keyvault:Vault": _paths(PATH, "resourceGroupName", "vaultName"),
    "azure-native:keyvault:Key": _paths(PATH, "resourceGroupName", "vaultName", "keyName"),
    "azure-native:containerregistry:Registry": {
        **_paths(PATH, "resourceGroupName", "registryName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:containerregistry:Replication": {
        **_paths(PATH, "resourceGroupName", "registryName", "replicationName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:eventhub:Namespace": {
        **_paths(PATH, "resourceGroupName", "namespaceName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:eventhub:EventHub": _paths(PATH, "resourceGroupName", "namespaceName", "eventHubName"),
    "azure-native:cosmosdb:DatabaseAccount": _paths(PATH, "resourceGroupName", "accountName"),
    "azure-native:cosmosdb:SqlResourceSqlDatabase": _paths(PATH, "resourceGroupName", "accountName", "databaseName"),
    "azure-native:cosmosdb:SqlResourceSqlContainer": _paths(
        PATH, "resourceGroupName", "accountName", "databaseName", "containerName"
    ),
    "azure-native:cosmosdb:SqlResourceSqlRoleAssignment": {
        **_paths(PATH, "resourceGroupName", "accountName", "roleAssignmentId"),
        **_paths(AN, "principalId", "scope"),
    },
    "azure-native:dbforpostgresql:Server": {
        **_paths(PATH, "resourceGroupName", "serverName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:dbforpostgresql:Database": _paths(PATH, "resourceGroupName", "serverName", "databaseName"),
    # Create-only in the REST spec (storagecache 2024-03-01 amlfilesystem.json: x-ms-mutability
    # read, create): a change is a new, empty file system.
    "azure-native:storagecache:AmlFilesystem": {
        **_paths(PATH, "resourceGroupName", "amlFilesystemName"),
        **_paths(SPEC, "location", "sku", "storageCapacityTiB", "zones", "filesystemSubnet"),
    },
    "azure-native:dbforpostgresql:AdministratorsMicrosoftEntra": _paths(
        PATH, "resourceGroupName", "serverName", "objectId"
    ),
    "azure-native:dbforpostgresql:Configuration": _paths(PATH, "resourceGroupName", "serverName", "configurationName"),
    "azure-native:managedidentity:UserAssignedIdentity": {
        **_paths(PATH, "resourceGroupName", "resourceName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:managedidentity:FederatedIdentityCredential": _paths(
        PATH, "resourceGroupName", "resourceName", "federatedIdentityCredentialResourceName"
    ),
    "azure-native:authorization:RoleAssignment": {
        **_paths(PATH, "scope", "roleAssignmentName"),
        **_paths(AN, "principalId"),
    },
    "azure-native:operationalinsights:Workspace": {
        **_paths(PATH, "resourceGroupName", "workspaceName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:monitor:AzureMonitorWorkspace": {
        **_paths(PATH, "resourceGroupName", "azureMonitorWorkspaceName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:dashboard:Grafana": {
        **_paths(PATH, "resourceGroupName", "workspaceName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:containerservice:Fleet": {
        **_paths(PATH, "resourceGroupName", "fleetName"),
        **_paths(SPEC, "location"),
    },
    "azure-native:alertsmanagement:PrometheusRuleGroup": _paths(PATH, "resourceGroupName", "ruleGroupName"),
    "azure-native:authorization:ManagementLockByScope": _paths(PATH, "scope", "lockName"),
    "azure-native:authorization:PolicyAssignment": _paths(PATH, "scope", "policyAssignmentName"),
    "azure-native:containerregistry:CacheRule": _paths(PATH, "resourceGroupName", "registryName", "cacheRuleName"),
    "azure-native:containerservice:AutoUpgradeProfile": _paths(
        PATH, "resourceGroupName", "fleetName", "autoUpgradeProfileName"
    ),
    "azure-native:containerservice:FleetMember": _paths(PATH, "resourceGroupName", "fleetName", "fleetMemberName"),
    "azure-native:containerservice:FleetUpdateStrategy": _paths(
        PATH, "resourceGroupName", "fleetName", "updateStrategyName"
    ),
    "azure-native:containerservice:MaintenanceConfiguration": _paths(
        PATH, "resourceGroupName", "resourceName", "configName"
    ),
    "azure-native:eventhub:ConsumerGroup": _paths(
        PATH, "resourceGroupName", "namespaceName", "eventHubName", "consumerGroupName"
    ),
    "azure-native:monitor:ActionGroup": _paths(PATH, "resourceGroupName", "actionGroupName"),
    "azure-native:monitor:DataCollectionEndpoint": _paths(PATH, "resourceGroupName", "dataCollectionEndpointName"),
    "azure-native:monitor:DataCollectionRule": _paths(PATH, "resourceGroupName", "dataCollectionRuleName"),
    "azure-native:monitor:DataCollectionRuleAssociation": _paths(PATH, "resourceUri", "associationName"),
    # A site's extensions and Flux configuration, under its connected cluster's path.
    "azure-native:kubernetesconfiguration:Extension": _paths(
        PATH, "resourceGroupName", "clusterRp", "clusterResourceName", "clusterName", "extensionName"
    ),
    "azure-native:kubernetesconfiguration:FluxConfiguration": _paths(
        PATH, "resourceGroupName", "clusterRp", "clusterResourceName", "clusterName", "fluxConfigurationName"
    ),
    "azure-native:monitor:DiagnosticSetting": _paths(PATH, "resourceUri", "name"),
    "azure-native:monitor:MetricAlert": _paths(PATH, "resourceGroupName", "ruleName"),
    "azure-native:monitor:PrivateLinkScope": _paths(PATH, "resourceGroupName", "scopeName"),
    "azure-native:monitor:PrivateLinkScopedResource": _paths(PATH, "resourceGroupName", "scopeName", "name"),
    "azure-native:network:FirewallPolicy": _paths(PATH, "resourceGroupName", "firewallPolicyName"),
    "azure-native:network:FirewallPolicyRuleCollectionGroup": _paths(
        PATH, "resourceGroupName", "firewallPolicyName", "ruleCollectionGroupName"
    ),
    "azure-native:network:NatGateway": _paths(PATH, "resourceGroupName", "natGatewayName"),
    "azure-native:network:RouteTable": _paths(PATH, "resourceGroupName", "routeTableName"),
    "azure-native:resources:Deployment": _paths(PATH, "resourceGroupName", "deploymentName"),
    "azure-native:storage:BlobServiceProperties": _paths(PATH, "resourceGroupName", "accountName", "blobServicesName"),
    "azure-native:storage:ManagementPolicy": _paths(PATH, "resourceGroupName", "accountName", "managementPolicyName"),
    "azure-native:storage:ObjectReplicationPolicy": _paths(
        PATH, "resourceGroupName", "accountName", "objectReplicationPolicyId"
    ),
    "azure-native:resources:ResourceGroup": {
        **_paths(PATH, "resourceGroupName"),
        **_paths(AN, "location"),
    },
    # Kubernetes: per kind, beyond the name and namespace every kind has (K8S_FORCE_NEW below).
    "kubernetes:apps/v1:Deployment": _paths(K8S, "spec.selector"),
    "kubernetes:apps/v1:DaemonSet": _paths(K8S, "spec.selector"),
    "kubernetes:apps/v1:StatefulSet": _paths(
        K8S, "spec.podManagementPolicy", "spec.revisionHistoryLimit", "spec.selector", "spec.serviceName"
    )
    | _paths(K8S, "spec.volumeClaimTemplates"),
    "kubernetes:batch/v1:Job": _paths(K8S, "spec.completions", "spec.parallelism", "spec.selector", "spec.template"),
    "kubernetes:core/v1:PersistentVolumeClaim": _paths(
        K8S, "spec.accessModes", "spec.selector", "spec.storageClassName", "spec.volumeName"
    ),
    "kubernetes:core/v1:Service": _paths(K8S, "spec.clusterIP"),
    "kubernetes:core/v1:ResourceQuota": _paths(K8S, "spec.scopes"),
    # The provider's defaults (enableSecretMutable / enableConfigMapMutable false) replace on data.
    "kubernetes:core/v1:Secret": _paths(K8S, "type", "data", "stringData"),
    "kubernetes:core/v1:ConfigMap": _paths(K8S, "data", "binaryData"),
    "kubernetes:storage.k8s.io/v1:StorageClass": _paths(K8S, "parameters", "provisioner"),
    "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding": _paths(K8S, "roleRef"),
    "kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding": _paths(K8S, "roleRef"),
    "kubernetes:helm.sh/v3:Release": _paths("pulumi-kubernetes helm_release.go forceNewFields", "name", "namespace"),
    # A provider pointed at another cluster replaces what it deployed (its DiffConfig).
    "pulumi:providers:kubernetes": _paths("pulumi-kubernetes DiffConfig: another cluster", "clusterIdentifier"),
}
K8S_FORCE_NEW = _paths(K8S_NAME, "metadata.name", "metadata.namespace")

# type token -> {input path: why}: changes the provider sends as an in-place update that Azure
# performs only one way, or refuses (so `pulumi up` stops on them). Not replacements; still
# findings of the review, which names the way through.
ONE_WAY: dict[str, dict[str, str]] = {
    "azure-native:cosmosdb:DatabaseAccount": {
        # MicrosoftDocs/azure-databases-docs articles/cosmos-db/migrate-continuous-backup.md.
        "backupPolicy.type": "periodic to continuous backup is one-way: it cannot be switched back",
        # reliability-docs reliability-cosmos-db.md: set only when a region is added.
        "locations[*].isZoneRedundant": "Azure sets zone redundancy only when a region is added: fail over, "
        "remove the region and add it back",
        # capacity mode: how-to-change-capacity-mode.md (serverless to provisioned only, one-way).
        "capabilities": "serverless to provisioned is one-way, and provisioned never becomes serverless",
    },
    "azure-native:dbforpostgresql:Server": {
        # MicrosoftDocs/azure-databases-docs articles/postgresql: backup-restore/concepts-backup-restore.md
        # ("configured only at the time of server creation"), network/concepts-networking-private.md
        # (VNet integration or public access with private endpoints, chosen at creation),
        # security/security-data-encryption.md (keys chosen at creation).
        "backup.geoRedundantBackup": "Azure sets geo-redundant backup only when a server is created: restore "
        "into a new server with it, move the clients, remove the old one",
        "network.delegatedSubnetResourceId": "VNet integration is chosen at creation and excludes private "
        "endpoints: a new server (or the preview migrate-network command, about 10 minutes down)",
        "dataEncryption": "customer-managed keys are chosen at creation and cannot be turned off: a new server",
        # high-availability/how-to-configure-high-availability.md: SameZone to ZoneRedundant is a
        # disable-then-enable, with the standby rebuilt.
        "highAvailability.mode": "Azure changes the standby's zone only by turning high availability off and "
        "on: minutes without a standby",
    },
    "azure-native:cosmosdb:SqlResourceSqlContainer": {
        # nosql/change-partition-key.md: a container's partition key is fixed; data moves by a copy job.
        "resource.partitionKey": "Azure refuses a new partition key on a container: copy the items into a "
        "new container (a container copy job) and move the clients",
    },
}

# type token -> why losing it (a replacement or deletion) is more than a re-create. A predicted
# replacement or deletion of one of these is a finding that fails the review.
STATEFUL: dict[str, str] = {
    "azure-native:storage:StorageAccount": "holds the blobs; a new account starts empty",
    "azure-native:storage:BlobContainer": "holds blobs",
    "azure-native:keyvault:Vault": "holds keys and secrets; a deleted vault keeps its name for the soft-delete period",
    "azure-native:keyvault:Key": "data encrypted with it becomes unreadable",
    "azure-native:containerregistry:Registry": "holds the images and the pull-through cache",
    "azure-native:containerregistry:Replication": "a region's replica of the images",
    "azure-native:containerservice:ManagedCluster": "every node, workload and in-cluster state goes with it",
    "azure-native:containerservice:AgentPool": "its nodes are drained and recreated: running jobs stop",
    "azure-native:network:VirtualNetwork": "clusters and endpoints in it must go first",
    "azure-native:network:Subnet": "clusters and endpoints in it must go first",
    "azure-native:eventhub:Namespace": "holds events not yet consumed",
    "azure-native:eventhub:EventHub": "holds events not yet consumed",
    "azure-native:cosmosdb:DatabaseAccount": "holds every database; a new account starts empty",
    "azure-native:cosmosdb:SqlResourceSqlDatabase": "holds its containers' items",
    "azure-native:cosmosdb:SqlResourceSqlContainer": "holds its items",
    "azure-native:dbforpostgresql:Server": "holds every database; a new server starts empty (restore from a backup)",
    "azure-native:dbforpostgresql:Database": "holds its tables",
    "azure-native:storagecache:AmlFilesystem": "holds the training data loaded into it (not backed up: reload it)",
    "azure-native:managedidentity:UserAssignedIdentity": "a new principal: every role and federated credential to it is recreated",
    "azure-native:operationalinsights:Workspace": "holds the logs",
    "azure-native:monitor:AzureMonitorWorkspace": "holds the metrics",
    "azure-native:dashboard:Grafana": "holds dashboards people edited",
    "azure-native:privatedns:PrivateZone": "private endpoints stop resolving until records return",
    "kubernetes:core/v1:Namespace": "deleting a namespace deletes everything in it",
    "kubernetes:core/v1:PersistentVolumeClaim": "its volume, by its class's reclaim policy",
    "kubernetes:kafka.strimzi.io/v1:Kafka": "the brokers and the topics' data",
    "kubernetes:kafka.strimzi.io/v1:KafkaNodePool": "its brokers' volumes",
    "kubernetes:kafka.strimzi.io/v1:KafkaTopic": "the topic's messages",
    "kubernetes:flink.apache.org/v1beta1:FlinkDeployment": "the running job: it resumes only from a checkpoint that survives",
}


def force_new(type_: str) -> dict[str, str]:
    """The input paths whose change replaces a resource of `type_`, with their sources."""
    rules = dict(FORCE_NEW.get(type_, {}))
    if type_.startswith("azure-native:"):
        # Every ARM resource's resource group (or, for an extension resource, its scope) is in its path.
        rules = _paths(PATH, "resourceGroupName") | rules
    if type_.startswith("kubernetes:") and not type_.endswith("Patch") and type_ != "kubernetes:helm.sh/v3:Release":
        rules |= K8S_FORCE_NEW
    return rules
