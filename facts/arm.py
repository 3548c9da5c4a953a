"""Which ARM resource type each azure-native resource of the program is, and its resource ID.

A Pulumi type token (`azure-native:network:Subnet`) names neither the ARM namespace nor the
parent path (`Microsoft.Network/virtualNetworks/subnets`), so both are recorded here, with
the inputs that name the resource and its parents. The offline mocks answer with the IDs
built here, and the permission model (planning/permissions.py) derives the ARM operations a
deployment performs from the same types. A token missing here fails both, loudly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ArmType:
    namespace: str  # "Microsoft.Network"
    # Resource types from the top-level one down, each with the input naming that level:
    # (("virtualNetworks", "virtualNetworkName"), ("subnets", "subnetName")).
    path: tuple[tuple[str, str], ...]

    @property
    def type(self) -> str:
        """`Microsoft.Network/virtualNetworks/subnets`: the prefix of its ARM operations."""
        return "/".join([self.namespace, *(segment for segment, _ in self.path)])


@dataclass(frozen=True)
class ExtensionType:
    """A resource that lives under another resource's ID (role assignments, locks, ...)."""

    scope_input: str  # the input holding the ID it extends
    type: str  # "Microsoft.Authorization/roleAssignments"
    name_input: str


def _t(namespace: str, *path: tuple[str, str]) -> ArmType:
    return ArmType(namespace, tuple(path))


# Resource groups are `Microsoft.Resources/subscriptions/resourceGroups` in operations.
RESOURCE_GROUP = "azure-native:resources:ResourceGroup"
RESOURCE_GROUP_TYPE = "Microsoft.Resources/subscriptions/resourceGroups"

ARM_TYPES: dict[str, ArmType] = {
    "azure-native:network:VirtualNetwork": _t("Microsoft.Network", ("virtualNetworks", "virtualNetworkName")),
    "azure-native:network:Subnet": _t(
        "Microsoft.Network", ("virtualNetworks", "virtualNetworkName"), ("subnets", "subnetName")
    ),
    "azure-native:network:VirtualNetworkPeering": _t(
        "Microsoft.Network",
        ("virtualNetworks", "virtualNetworkName"),
        ("virtualNetworkPeerings", "virtualNetworkPeeringName"),
    ),
    "azure-native:network:NetworkSecurityGroup": _t(
        "Microsoft.Network", ("networkSecurityGroups", "networkSecurityGroupName")
    ),
    "azure-native:network:NatGateway": _t("Microsoft.Network", ("natGateways", "natGatewayName")),
    "azure-native:network:PublicIPAddress": _t("Microsoft.Network", ("publicIPAddresses", "publicIpAddressName")),
    "azure-native:network:RouteTable": _t("Microsoft.Network", ("routeTables", "routeTableName")),
    "azure-native:network:AzureFirewall": _t("Microsoft.Network", ("azureFirewalls", "azureFirewallName")),
    "azure-native:network:FirewallPolicy": _t("Microsoft.Network", ("firewallPolicies", "firewallPolicyName")),
    "azure-native:network:FirewallPolicyRuleCollectionGroup": _t(
        "Microsoft.Network",
        ("firewallPolicies", "firewallPolicyName"),
        ("ruleCollectionGroups", "ruleCollectionGroupName"),
    ),
    "azure-native:privatedns:PrivateZone": _t("Microsoft.Network", ("privateDnsZones", "privateZoneName")),
    # The program writes A records only (the serving zone): their type is the path's segment.
    "azure-native:privatedns:PrivateRecordSet": _t(
        "Microsoft.Network", ("privateDnsZones", "privateZoneName"), ("A", "relativeRecordSetName")
    ),
    "azure-native:privatedns:VirtualNetworkLink": _t(
        "Microsoft.Network", ("privateDnsZones", "privateZoneName"), ("virtualNetworkLinks", "virtualNetworkLinkName")
    ),
    "azure-native:network:PrivateEndpoint": _t("Microsoft.Network", ("privateEndpoints", "privateEndpointName")),
    "azure-native:network:PrivateDnsZoneGroup": _t(
        "Microsoft.Network",
        ("privateEndpoints", "privateEndpointName"),
        ("privateDnsZoneGroups", "privateDnsZoneGroupName"),
    ),
    "azure-native:managedidentity:UserAssignedIdentity": _t(
        "Microsoft.ManagedIdentity", ("userAssignedIdentities", "resourceName")
    ),
    "azure-native:managedidentity:FederatedIdentityCredential": _t(
        "Microsoft.ManagedIdentity",
        ("userAssignedIdentities", "resourceName"),
        ("federatedIdentityCredentials", "federatedIdentityCredentialResourceName"),
    ),
    "azure-native:containerservice:ManagedCluster": _t(
        "Microsoft.ContainerService", ("managedClusters", "resourceName")
    ),
    # An Arc connected cluster: read, never written (components/arc_site.py).
    "azure-native:kubernetes:ConnectedCluster": _t("Microsoft.Kubernetes", ("connectedClusters", "clusterName")),
    "azure-native:containerservice:AgentPool": _t(
        "Microsoft.ContainerService", ("managedClusters", "resourceName"), ("agentPools", "agentPoolName")
    ),
    "azure-native:containerservice:MaintenanceConfiguration": _t(
        "Microsoft.ContainerService", ("managedClusters", "resourceName"), ("maintenanceConfigurations", "configName")
    ),
    "azure-native:containerservice:Fleet": _t("Microsoft.ContainerService", ("fleets", "fleetName")),
    "azure-native:containerservice:FleetMember": _t(
        "Microsoft.ContainerService", ("fleets", "fleetName"), ("members", "fleetMemberName")
    ),
    "azure-native:containerservice:FleetUpdateStrategy": _t(
        "Microsoft.ContainerService", ("fleets", "fleetName"), ("updateStrategies", "updateStrategyName")
    ),
    "azure-native:containerservice:AutoUpgradeProfile": _t(
        "Microsoft.ContainerService", ("fleets", "fleetName"), ("autoUpgradeProfiles", "autoUpgradeProfileName")
    ),
    "azure-native:operationalinsights:Workspace": _t("Microsoft.OperationalInsights", ("workspaces", "workspaceName")),
    "azure-native:monitor:AzureMonitorWorkspace": _t("Microsoft.Monitor", ("accounts", "azureMonitorWorkspaceName")),
    "azure-native:monitor:DataCollectionEndpoint": _t(
        "Microsoft.Insights", ("dataCollectionEndpoints", "dataCollectionEndpointName")
    ),
    "azure-native:monitor:DataCollectionRule": _t(
        "Microsoft.Insights", ("dataCollectionRules", "dataCollectionRuleName")
    ),
    "azure-native:monitor:ActionGroup": _t("Microsoft.Insights", ("actionGroups", "actionGroupName")),
    "azure-native:monitor:PrivateLinkScope": _t("Microsoft.Insights", ("privateLinkScopes", "scopeName")),
    "azure-native:monitor:PrivateLinkScopedResource": _t(
        "Microsoft.Insights", ("privateLinkScopes", "scopeName"), ("scopedResources", "name")
    ),
    "azure-native:resources:Deployment": _t("Microsoft.Resources", ("deployments", "deploymentName")),
    "azure-native:dashboard:Grafana": _t("Microsoft.Dashboard", ("grafana", "workspaceName")),
    "azure-native:monitor:MetricAlert": _t("Microsoft.Insights", ("metricAlerts", "ruleName")),
    "azure-native:alertsmanagement:PrometheusRuleGroup": _t(
        "Microsoft.AlertsManagement", ("prometheusRuleGroups", "ruleGroupName")
    ),
    "azure-native:keyvault:Vault": _t("Microsoft.KeyVault", ("vaults", "vaultName")),
    "azure-native:keyvault:Key": _t("Microsoft.KeyVault", ("vaults", "vaultName"), ("keys", "keyName")),
    "azure-native:storage:StorageAccount": _t("Microsoft.Storage", ("storageAccounts", "accountName")),
    "azure-native:storage:BlobServiceProperties": _t(
        "Microsoft.Storage", ("storageAccounts", "accountName"), ("blobServices", "blobServicesName")
    ),
    "azure-native:storage:BlobContainer": _t(
        "Microsoft.Storage",
        ("storageAccounts", "accountName"),
        # A blob container's parent service is always `default` and not among its inputs.
        ("blobServices", "blobServicesName"),
        ("containers", "containerName"),
    ),
    "azure-native:storage:ObjectReplicationPolicy": _t(
        "Microsoft.Storage",
        ("storageAccounts", "accountName"),
        ("objectReplicationPolicies", "objectReplicationPolicyId"),
    ),
    "azure-native:storage:ManagementPolicy": _t(
        "Microsoft.Storage", ("storageAccounts", "accountName"), ("managementPolicies", "managementPolicyName")
    ),
    "azure-native:containerregistry:Registry": _t("Microsoft.ContainerRegistry", ("registries", "registryName")),
    "azure-native:containerregistry:Replication": _t(
        "Microsoft.ContainerRegistry", ("registries", "registryName"), ("replications", "replicationName")
    ),
    "azure-native:containerregistry:CacheRule": _t(
        "Microsoft.ContainerRegistry", ("registries", "registryName"), ("cacheRules", "cacheRuleName")
    ),
    "azure-native:eventhub:Namespace": _t("Microsoft.EventHub", ("namespaces", "namespaceName")),
    "azure-native:eventhub:EventHub": _t(
        "Microsoft.EventHub", ("namespaces", "namespaceName"), ("eventhubs", "eventHubName")
    ),
    "azure-native:eventhub:ConsumerGroup": _t(
        "Microsoft.EventHub",
        ("namespaces", "namespaceName"),
        ("eventhubs", "eventHubName"),
        ("consumergroups", "consumerGroupName"),
    ),
    "azure-native:cosmosdb:DatabaseAccount": _t("Microsoft.DocumentDB", ("databaseAccounts", "accountName")),
    "azure-native:cosmosdb:SqlResourceSqlDatabase": _t(
        "Microsoft.DocumentDB", ("databaseAccounts", "accountName"), ("sqlDatabases", "databaseName")
    ),
    "azure-native:cosmosdb:SqlResourceSqlContainer": _t(
        "Microsoft.DocumentDB",
        ("databaseAccounts", "accountName"),
        ("sqlDatabases", "databaseName"),
        ("containers", "containerName"),
    ),
    "azure-native:storagecache:AmlFilesystem": _t("Microsoft.StorageCache", ("amlFilesystems", "amlFilesystemName")),
    "azure-native:dbforpostgresql:Server": _t("Microsoft.DBforPostgreSQL", ("flexibleServers", "serverName")),
    "azure-native:dbforpostgresql:AdministratorsMicrosoftEntra": _t(
        "Microsoft.DBforPostgreSQL", ("flexibleServers", "serverName"), ("administrators", "objectId")
    ),
    "azure-native:dbforpostgresql:Configuration": _t(
        "Microsoft.DBforPostgreSQL", ("flexibleServers", "serverName"), ("configurations", "configurationName")
    ),
    "azure-native:dbforpostgresql:Database": _t(
        "Microsoft.DBforPostgreSQL", ("flexibleServers", "serverName"), ("databases", "databaseName")
    ),
    # A data-plane role assignment, though written through ARM (its write is the account's
    # sqlRoleAssignments/write, which Cosmos DB Operator lacks and DocumentDB Account Contributor has).
    "azure-native:cosmosdb:SqlResourceSqlRoleAssignment": _t(
        "Microsoft.DocumentDB", ("databaseAccounts", "accountName"), ("sqlRoleAssignments", "roleAssignmentId")
    ),
}

EXTENSION_TYPES: dict[str, ExtensionType] = {
    "azure-native:authorization:RoleAssignment": ExtensionType(
        "scope", "Microsoft.Authorization/roleAssignments", "roleAssignmentName"
    ),
    "azure-native:authorization:ManagementLockByScope": ExtensionType(
        "scope", "Microsoft.Authorization/locks", "lockName"
    ),
    # The delivery project's custom roles (delivery/): a definition lives at its scope.
    "azure-native:authorization:RoleDefinition": ExtensionType(
        "scope", "Microsoft.Authorization/roleDefinitions", "roleDefinitionId"
    ),
    "azure-native:authorization:PolicyAssignment": ExtensionType(
        "scope", "Microsoft.Authorization/policyAssignments", "policyAssignmentName"
    ),
    "azure-native:monitor:DataCollectionRuleAssociation": ExtensionType(
        "resourceUri", "Microsoft.Insights/dataCollectionRuleAssociations", "associationName"
    ),
    "azure-native:monitor:DiagnosticSetting": ExtensionType(
        "resourceUri", "Microsoft.Insights/diagnosticSettings", "name"
    ),
}


# Resources of a subscription itself, outside any resource group: type and the inputs naming
# each level (`/subscriptions/<id>/providers/Microsoft.Features/featureProviders/<ns>/...`).
SUBSCRIPTION_TYPES: dict[str, ArmType] = {
    "azure-native:features:SubscriptionFeatureRegistration": _t(
        "Microsoft.Features",
        ("featureProviders", "providerNamespace"),
        ("subscriptionFeatureRegistrations", "featureName"),
    ),
}


# Resources of a Kubernetes cluster's own provider path (an AKS or an Arc connected cluster):
# `<cluster ID>/providers/Microsoft.KubernetesConfiguration/<type>/<name>`, the cluster named by
# clusterRp, clusterResourceName and clusterName.
CLUSTER_EXTENSION_TYPES: dict[str, tuple[str, str]] = {
    "azure-native:kubernetesconfiguration:Extension": ("Microsoft.KubernetesConfiguration/extensions", "extensionName"),
    "azure-native:kubernetesconfiguration:FluxConfiguration": (
        "Microsoft.KubernetesConfiguration/fluxConfigurations",
        "fluxConfigurationName",
    ),
}


class UnknownArmType(LookupError):
    pass


def arm_type(token: str) -> str:
    """The ARM resource type a Pulumi token deploys (the prefix of its operations)."""
    if token == RESOURCE_GROUP:
        return RESOURCE_GROUP_TYPE
    if token in ARM_TYPES:
        return ARM_TYPES[token].type
    if token in EXTENSION_TYPES:
        return EXTENSION_TYPES[token].type
    if token in SUBSCRIPTION_TYPES:
        return SUBSCRIPTION_TYPES[token].type
    if token in CLUSTER_EXTENSION_TYPES:
        return CLUSTER_EXTENSION_TYPES[token][0]
    raise UnknownArmType(f"no ARM type is recorded for {token}; add it to facts/arm.py")


def resource_id(token: str, name: str, inputs: Mapping[str, Any], subscription: str) -> str:
    """The ID Azure gives this resource, from its inputs (`name` when a name input is unset)."""
    if token in EXTENSION_TYPES:
        extension = EXTENSION_TYPES[token]
        return f"{inputs.get(extension.scope_input, '')}/providers/{extension.type}/{inputs.get(extension.name_input, name)}"
    if token in CLUSTER_EXTENSION_TYPES:
        kind_name, name_input = CLUSTER_EXTENSION_TYPES[token]
        cluster = (
            f"/subscriptions/{subscription}/resourceGroups/{inputs.get('resourceGroupName', '')}/providers/"
            f"{inputs.get('clusterRp', '')}/{inputs.get('clusterResourceName', '')}/{inputs.get('clusterName', '')}"
        )
        return f"{cluster}/providers/{kind_name}/{inputs.get(name_input, name)}"
    if token in SUBSCRIPTION_TYPES:
        kind = SUBSCRIPTION_TYPES[token]
        levels = "".join(f"/{segment}/{inputs.get(name_input, name)}" for segment, name_input in kind.path)
        return f"/subscriptions/{subscription}/providers/{kind.namespace}{levels}"
    group = f"/subscriptions/{subscription}/resourceGroups/{inputs.get('resourceGroupName', name)}"
    if token == RESOURCE_GROUP:
        return group
    if token not in ARM_TYPES:
        raise UnknownArmType(f"no ARM type is recorded for {token}; add it to facts/arm.py")
    kind = ARM_TYPES[token]
    path = f"{group}/providers/{kind.namespace}"
    for index, (segment, name_input) in enumerate(kind.path):
        last = index == len(kind.path) - 1
        path += f"/{segment}/{inputs.get(name_input, name if last else 'default')}"
    return path
