"""Mocks that answer like Azure would: ARM resource IDs, names, identity and OIDC values.

Every output the program reads must come back known, or an `apply` on it never runs in
preview and whatever it would register goes missing. Values are deterministic (uuid5 of
the resource's name), so two runs produce identical plans.
"""

from __future__ import annotations

import base64
import ipaddress
import uuid
from typing import Any

import yaml
from pulumi.runtime import Mocks, MockCallArgs, MockResourceArgs

OFFLINE_NAMESPACE = uuid.UUID("1f0e4c7a-5b7e-4d43-8a0a-6a3f0c1d2e3f")
# Placeholders for the deploying identity; clearly not a real tenant.
OFFLINE_SUBSCRIPTION_ID = str(uuid.uuid5(OFFLINE_NAMESPACE, "subscription"))
OFFLINE_TENANT_ID = str(uuid.uuid5(OFFLINE_NAMESPACE, "tenant"))
OFFLINE_CLIENT_OBJECT_ID = str(uuid.uuid5(OFFLINE_NAMESPACE, "deployer"))
# What a Secret read from a cluster holds offline: clearly not a real certificate.
OFFLINE_CA_CERTIFICATE = "-----BEGIN CERTIFICATE-----\nb2ZmbGluZQ==\n-----END CERTIFICATE-----\n"

# Pulumi type token -> (ARM provider namespace, resource type, input naming the resource,
# inputs naming the parent resources in path order).
ARM_TYPES: dict[str, tuple[str, str, str, tuple[tuple[str, str], ...]]] = {
    "azure-native:resources:ResourceGroup": ("", "", "resourceGroupName", ()),
    "azure-native:network:VirtualNetwork": ("Microsoft.Network", "virtualNetworks", "virtualNetworkName", ()),
    "azure-native:network:Subnet": (
        "Microsoft.Network", "subnets", "subnetName", (("virtualNetworks", "virtualNetworkName"),)
    ),
    "azure-native:network:VirtualNetworkPeering": (
        "Microsoft.Network", "virtualNetworkPeerings", "virtualNetworkPeeringName",
        (("virtualNetworks", "virtualNetworkName"),),
    ),
    "azure-native:network:NetworkSecurityGroup": (
        "Microsoft.Network", "networkSecurityGroups", "networkSecurityGroupName", ()
    ),
    "azure-native:network:NatGateway": ("Microsoft.Network", "natGateways", "natGatewayName", ()),
    "azure-native:network:PublicIPAddress": ("Microsoft.Network", "publicIPAddresses", "publicIpAddressName", ()),
    "azure-native:network:RouteTable": ("Microsoft.Network", "routeTables", "routeTableName", ()),
    "azure-native:network:AzureFirewall": ("Microsoft.Network", "azureFirewalls", "azureFirewallName", ()),
    "azure-native:network:FirewallPolicy": ("Microsoft.Network", "firewallPolicies", "firewallPolicyName", ()),
    "azure-native:network:FirewallPolicyRuleCollectionGroup": (
        "Microsoft.Network", "ruleCollectionGroups", "ruleCollectionGroupName",
        (("firewallPolicies", "firewallPolicyName"),),
    ),
    "azure-native:privatedns:PrivateZone": ("Microsoft.Network", "privateDnsZones", "privateZoneName", ()),
    "azure-native:privatedns:VirtualNetworkLink": (
        "Microsoft.Network", "virtualNetworkLinks", "virtualNetworkLinkName", (("privateDnsZones", "privateZoneName"),)
    ),
    "azure-native:managedidentity:UserAssignedIdentity": (
        "Microsoft.ManagedIdentity", "userAssignedIdentities", "resourceName", ()
    ),
    "azure-native:containerservice:ManagedCluster": (
        "Microsoft.ContainerService", "managedClusters", "resourceName", ()
    ),
    "azure-native:containerservice:AgentPool": (
        "Microsoft.ContainerService", "agentPools", "agentPoolName", (("managedClusters", "resourceName"),)
    ),
    "azure-native:containerservice:Fleet": ("Microsoft.ContainerService", "fleets", "fleetName", ()),
    "azure-native:containerservice:FleetMember": (
        "Microsoft.ContainerService", "members", "fleetMemberName", (("fleets", "fleetName"),)
    ),
    "azure-native:containerservice:FleetUpdateStrategy": (
        "Microsoft.ContainerService", "updateStrategies", "updateStrategyName", (("fleets", "fleetName"),)
    ),
    "azure-native:containerservice:AutoUpgradeProfile": (
        "Microsoft.ContainerService", "autoUpgradeProfiles", "autoUpgradeProfileName", (("fleets", "fleetName"),)
    ),
    "azure-native:containerservice:MaintenanceConfiguration": (
        "Microsoft.ContainerService", "maintenanceConfigurations", "configName",
        (("managedClusters", "resourceName"),),
    ),
    "azure-native:operationalinsights:Workspace": (
        "Microsoft.OperationalInsights", "workspaces", "workspaceName", ()
    ),
    "azure-native:monitor:AzureMonitorWorkspace": ("Microsoft.Monitor", "accounts", "azureMonitorWorkspaceName", ()),
    "azure-native:monitor:DataCollectionEndpoint": (
        "Microsoft.Insights", "dataCollectionEndpoints", "dataCollectionEndpointName", ()
    ),
    "azure-native:monitor:DataCollectionRule": (
        "Microsoft.Insights", "dataCollectionRules", "dataCollectionRuleName", ()
    ),
    "azure-native:network:PrivateEndpoint": ("Microsoft.Network", "privateEndpoints", "privateEndpointName", ()),
    "azure-native:network:PrivateDnsZoneGroup": (
        "Microsoft.Network", "privateDnsZoneGroups", "privateDnsZoneGroupName",
        (("privateEndpoints", "privateEndpointName"),),
    ),
    "azure-native:keyvault:Vault": ("Microsoft.KeyVault", "vaults", "vaultName", ()),
    "azure-native:keyvault:Key": ("Microsoft.KeyVault", "keys", "keyName", (("vaults", "vaultName"),)),
    "azure-native:storage:StorageAccount": ("Microsoft.Storage", "storageAccounts", "accountName", ()),
    "azure-native:storage:BlobServiceProperties": (
        "Microsoft.Storage", "blobServices", "blobServicesName", (("storageAccounts", "accountName"),)
    ),
    "azure-native:storage:BlobContainer": (
        "Microsoft.Storage", "containers", "containerName",
        (("storageAccounts", "accountName"), ("blobServices", "blobServicesName")),
    ),
    "azure-native:containerregistry:Registry": ("Microsoft.ContainerRegistry", "registries", "registryName", ()),
    "azure-native:containerregistry:Replication": (
        "Microsoft.ContainerRegistry", "replications", "replicationName", (("registries", "registryName"),)
    ),
    "azure-native:containerregistry:CacheRule": (
        "Microsoft.ContainerRegistry", "cacheRules", "cacheRuleName", (("registries", "registryName"),)
    ),
    "azure-native:eventhub:Namespace": ("Microsoft.EventHub", "namespaces", "namespaceName", ()),
    "azure-native:eventhub:EventHub": (
        "Microsoft.EventHub", "eventhubs", "eventHubName", (("namespaces", "namespaceName"),)
    ),
    "azure-native:eventhub:ConsumerGroup": (
        "Microsoft.EventHub", "consumergroups", "consumerGroupName",
        (("namespaces", "namespaceName"), ("eventhubs", "eventHubName")),
    ),
    "azure-native:managedidentity:FederatedIdentityCredential": (
        "Microsoft.ManagedIdentity", "federatedIdentityCredentials", "federatedIdentityCredentialResourceName",
        (("userAssignedIdentities", "resourceName"),),
    ),
}
# Extension resources live under another resource's ID.
EXTENSION_TYPES: dict[str, tuple[str, str, str]] = {
    "azure-native:authorization:RoleAssignment": (
        "scope", "Microsoft.Authorization/roleAssignments", "roleAssignmentName"
    ),
    "azure-native:monitor:DataCollectionRuleAssociation": (
        "resourceUri", "Microsoft.Insights/dataCollectionRuleAssociations", "associationName"
    ),
    "azure-native:monitor:DiagnosticSetting": ("resourceUri", "Microsoft.Insights/diagnosticSettings", "name"),
    "azure-native:authorization:ManagementLockByScope": ("scope", "Microsoft.Authorization/locks", "lockName"),
    "azure-native:authorization:PolicyAssignment": (
        "scope", "Microsoft.Authorization/policyAssignments", "policyAssignmentName"
    ),
}


def offline_uuid(*parts: str, namespace: uuid.UUID = OFFLINE_NAMESPACE) -> str:
    return str(uuid.uuid5(namespace, "/".join(parts)))


def arm_id(token: str, name: str, inputs: dict[str, Any], subscription: str = OFFLINE_SUBSCRIPTION_ID) -> str:
    """The resource ID Azure would give this resource."""
    if token in EXTENSION_TYPES:
        scope_key, arm_type, name_key = EXTENSION_TYPES[token]
        return f"{inputs.get(scope_key, '')}/providers/{arm_type}/{inputs.get(name_key, name)}"
    group = f"/subscriptions/{subscription}/resourceGroups/{inputs.get('resourceGroupName', name)}"
    if token not in ARM_TYPES:
        raise NotImplementedError(
            f"the offline engine does not know the ARM type of {token}; add it to ARM_TYPES in offline/mocks.py"
        )
    namespace, arm_type, name_key, parents = ARM_TYPES[token]
    if not namespace:
        return group
    path = f"{group}/providers/{namespace}"
    for parent_type, parent_key in parents:
        # A blob container's parent service is always `default` and not among its inputs.
        path += f"/{parent_type}/{inputs.get(parent_key, 'default')}"
    return f"{path}/{arm_type}/{inputs.get(name_key, name)}"


def fake_user_kubeconfig(cluster: str, server: str, tenant: str = OFFLINE_TENANT_ID) -> str:
    """What `listClusterUserCredential` returns for an Entra ID cluster (format=exec)."""
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": cluster,
                    "cluster": {
                        "server": server,
                        "certificate-authority-data": base64.b64encode(b"offline-ca").decode(),
                    },
                }
            ],
            "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": f"clusterUser_{cluster}"}}],
            "current-context": cluster,
            "users": [
                {
                    "name": f"clusterUser_{cluster}",
                    "user": {
                        "exec": {
                            "apiVersion": "client.authentication.k8s.io/v1beta1",
                            "command": "kubelogin",
                            "args": [
                                "get-token", "--environment", "AzurePublicCloud",
                                "--server-id", "6dae42f8-4368-4678-94ff-3960e28e3630",
                                "--client-id", "80faf920-1908-4b52-b5ef-a8e7bedfc67a",
                                "--tenant-id", tenant, "--login", "devicecode",
                            ],
                            "provideClusterInfo": False,
                        }
                    },
                }
            ],
        }
    )


class OfflineMocks(Mocks):
    """Answers resource registrations and invokes with Azure-shaped values.

    `cloud` names another (equally fake) tenant and subscription: every ID Azure would
    generate differs, which proves that what should be stable (role-assignment names) does
    not depend on them.
    """

    def __init__(self, cloud: str | None = None):
        self.namespace = uuid.uuid5(OFFLINE_NAMESPACE, cloud) if cloud else OFFLINE_NAMESPACE
        self.subscription_id = str(uuid.uuid5(self.namespace, "subscription"))
        self.tenant_id = str(uuid.uuid5(self.namespace, "tenant"))
        self.deployer_object_id = str(uuid.uuid5(self.namespace, "deployer"))
        # Subnet ID -> prefix, for the addresses Azure hands out inside a subnet.
        self.subnet_prefixes: dict[str, str] = {}

    def _uuid(self, *parts: str) -> str:
        return offline_uuid(*parts, namespace=self.namespace)

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict]:
        inputs = dict(args.inputs)
        token = args.typ
        if token == "kubernetes:core/v1:Secret" and args.resource_id:
            # A read of a Secret Strimzi made (a cluster's CA certificate): answer like the API.
            namespace, _, name = args.resource_id.rpartition("/")
            return args.resource_id, {
                "metadata": {"name": name, "namespace": namespace},
                "data": {"ca.crt": base64.b64encode(OFFLINE_CA_CERTIFICATE.encode()).decode()},
            }
        if not token.startswith("azure-native:"):
            return f"{args.name}-id", inputs
        resource_id = arm_id(token, args.name, inputs, self.subscription_id)
        state = {**inputs, "id": resource_id, "name": resource_id.rsplit("/", 1)[-1]}
        # Azure answers user-assigned identities as a map keyed by identity ID.
        identity = inputs.get("identity") or {}
        if isinstance(identity, dict) and isinstance(identity.get("userAssignedIdentities"), list):
            state["identity"] = {
                **identity,
                "userAssignedIdentities": {
                    identity_id: {
                        "principalId": self._uuid(identity_id, "principal"),
                        "clientId": self._uuid(identity_id, "client"),
                    }
                    for identity_id in identity["userAssignedIdentities"]
                },
            }
        if token == "azure-native:managedidentity:UserAssignedIdentity":
            state["principalId"] = self._uuid(resource_id, "principal")
            state["clientId"] = self._uuid(resource_id, "client")
            state["tenantId"] = self.tenant_id
        elif token == "azure-native:containerservice:ManagedCluster":
            location = inputs.get("location", "eastus2")
            cluster_uid = self._uuid(resource_id)
            state["oidcIssuerProfile"] = {
                **inputs.get("oidcIssuerProfile", {}),
                "issuerURL": f"https://{location}.oic.prod-aks.azure.com/{self.tenant_id}/{cluster_uid}/",
            }
            host = f"{inputs.get('dnsPrefix', args.name)}-{cluster_uid[:8]}"
            if inputs.get("apiServerAccessProfile", {}).get("enablePrivateCluster"):
                state["privateFQDN"] = f"{host}.{cluster_uid[:8]}.privatelink.{location}.azmk8s.io"
            else:
                state["fqdn"] = f"{host}.hcp.{location}.azmk8s.io"
            state["nodeResourceGroup"] = inputs.get("nodeResourceGroup")
        elif token == "azure-native:keyvault:Vault":
            state["properties"] = {
                **inputs.get("properties", {}),
                "vaultUri": f"https://{inputs.get('vaultName')}.vault.azure.net/",
            }
        elif token == "azure-native:keyvault:Key":
            state["keyUri"] = f"https://{inputs.get('vaultName')}.vault.azure.net/keys/{inputs.get('keyName')}"
        elif token == "azure-native:containerregistry:Registry":
            state["loginServer"] = f"{inputs.get('registryName', '').lower()}.azurecr.io"
        elif token == "azure-native:storage:StorageAccount":
            account = inputs.get("accountName")
            state["primaryEndpoints"] = {
                "blob": f"https://{account}.blob.core.windows.net/",
                "dfs": f"https://{account}.dfs.core.windows.net/",
            }
        elif token == "azure-native:network:Subnet":
            self.subnet_prefixes[resource_id] = inputs.get("addressPrefix", "")
        elif token == "azure-native:network:AzureFirewall":
            # Azure gives the firewall the first usable address of AzureFirewallSubnet (.4).
            configurations = [dict(c) for c in inputs.get("ipConfigurations", [])]
            for configuration in configurations:
                prefix = self.subnet_prefixes.get((configuration.get("subnet") or {}).get("id", ""))
                if prefix:
                    configuration["privateIPAddress"] = str(ipaddress.IPv4Network(prefix)[4])
            state["ipConfigurations"] = configurations
        elif token == "azure-native:network:PublicIPAddress":
            state["ipAddress"] = "198.51.100.10"  # TEST-NET-2, never routable
        return resource_id, state

    def call(self, args: MockCallArgs) -> dict:
        if args.token == "azure-native:authorization:getClientConfig":
            return {
                "clientId": self._uuid("deployer-client"),
                "objectId": self.deployer_object_id,
                "subscriptionId": self.subscription_id,
                "tenantId": self.tenant_id,
            }
        if args.token == "azure-native:containerservice:listManagedClusterUserCredentials":
            cluster = args.args.get("resourceName", "cluster")
            server = f"https://{cluster}.offline.azmk8s.io:443"
            value = base64.b64encode(fake_user_kubeconfig(cluster, server, self.tenant_id).encode()).decode()
            return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}
        raise NotImplementedError(
            f"the offline engine has no mock for invoke {args.token}; add one to offline/mocks.py"
        )
