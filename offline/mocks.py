"""Mocks that answer like Azure would: ARM resource IDs, names, identity and OIDC values.

Every output the program reads must come back known, or an `apply` on it never runs in
preview and whatever it would register goes missing. Values are deterministic (uuid5 of
the resource's name), so two runs produce identical plans.
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import yaml
from pulumi.runtime import MockCallArgs, MockResourceArgs, Mocks

from facts.arm import UnknownArmType, resource_id

OFFLINE_NAMESPACE = uuid.UUID("1f0e4c7a-5b7e-4d43-8a0a-6a3f0c1d2e3f")
# Placeholders for the deploying identity; clearly not a real tenant.
OFFLINE_SUBSCRIPTION_ID = str(uuid.uuid5(OFFLINE_NAMESPACE, "subscription"))


def cloud_subscription(cloud: str | None) -> str:
    """The subscription the offline provider signs in to in `cloud` (None: the offline one)."""
    return str(uuid.uuid5(uuid.uuid5(OFFLINE_NAMESPACE, cloud) if cloud else OFFLINE_NAMESPACE, "subscription"))


OFFLINE_TENANT_ID = str(uuid.uuid5(OFFLINE_NAMESPACE, "tenant"))
OFFLINE_CLIENT_OBJECT_ID = str(uuid.uuid5(OFFLINE_NAMESPACE, "deployer"))
# What a Secret read from a cluster holds offline: clearly not a real certificate.
OFFLINE_CA_CERTIFICATE = "-----BEGIN CERTIFICATE-----\nb2ZmbGluZQ==\n-----END CERTIFICATE-----\n"


def offline_uuid(*parts: str, namespace: uuid.UUID = OFFLINE_NAMESPACE) -> str:
    return str(uuid.uuid5(namespace, "/".join(parts)))


def principal_id(resource: Any, subscription: str = OFFLINE_SUBSCRIPTION_ID) -> str:
    """The object ID the offline engine gives a plan's managed identity (or a resource's
    system-assigned one), as Azure gives one when it is created."""
    return offline_uuid(arm_id(resource.type, resource.name, resource.inputs, subscription), "principal")


def client_id(resource: Any, subscription: str = OFFLINE_SUBSCRIPTION_ID) -> str:
    """The client ID the offline engine gives a plan's user-assigned identity."""
    return offline_uuid(arm_id(resource.type, resource.name, resource.inputs, subscription), "client")


def arm_id(token: str, name: str, inputs: dict[str, Any], subscription: str = OFFLINE_SUBSCRIPTION_ID) -> str:
    """The resource ID Azure would give this resource (facts/arm.py)."""
    try:
        return resource_id(token, name, inputs, subscription)
    except UnknownArmType as error:
        raise NotImplementedError(f"the offline engine cannot answer for it: {error}") from None


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
                                "get-token",
                                "--environment",
                                "AzurePublicCloud",
                                "--server-id",
                                "6dae42f8-4368-4678-94ff-3960e28e3630",
                                "--client-id",
                                "80faf920-1908-4b52-b5ef-a8e7bedfc67a",
                                "--tenant-id",
                                tenant,
                                "--login",
                                "devicecode",
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

    def __init__(
        self,
        cloud: str | None = None,
        stack_outputs: Mapping[str, dict[str, Any]] | None = None,
        stack_secrets: Mapping[str, Sequence[str]] | None = None,
    ):
        self.namespace = uuid.uuid5(OFFLINE_NAMESPACE, cloud) if cloud else OFFLINE_NAMESPACE
        self.subscription_id = cloud_subscription(cloud)
        self.tenant_id = str(uuid.uuid5(self.namespace, "tenant"))
        self.deployer_object_id = str(uuid.uuid5(self.namespace, "deployer"))
        # Subnet ID -> prefix, for the addresses Azure hands out inside a subnet.
        self.subnet_prefixes: dict[str, str] = {}
        # Explicit azure-native providers' IDs -> their subscription: a resource they create gets
        # an ID in that subscription, as Azure gives it (the hub's, the state's).
        self.provider_subscriptions: dict[str, str] = {}
        # Outputs of the stacks this one references (`pulumi.StackReference`), by stack name: the
        # upstream units' plans, previewed first.
        self.stack_outputs = dict(stack_outputs or {})
        # Which of those outputs the upstream stack exported as secrets (a kubeconfig).
        self.stack_secrets = {stack: list(names) for stack, names in (stack_secrets or {}).items()}

    def _uuid(self, *parts: str) -> str:
        return offline_uuid(*parts, namespace=self.namespace)

    def _identity_ids(self, identity_id: str) -> dict[str, str]:
        """A user-assigned identity's object and client IDs, fixed by its resource ID: the same
        wherever it is created, referenced or read."""
        return {"principalId": self._uuid(identity_id, "principal"), "clientId": self._uuid(identity_id, "client")}

    def new_resource(self, args: MockResourceArgs) -> tuple[str, dict]:
        inputs = dict(args.inputs)
        token = args.typ
        if token == "pulumi:pulumi:StackReference":
            # A read of another stack's outputs; the real engine reads them even in a preview.
            stack = inputs.get("name") or args.resource_id
            if stack not in self.stack_outputs:
                known = ", ".join(sorted(self.stack_outputs)) or "none"
                raise LookupError(
                    f"StackReference to {stack}: no plan of that stack to answer with (previewed: {known}); "
                    "preview the units it depends on first"
                )
            secrets = self.stack_secrets.get(stack, [])
            return stack, {"name": stack, "outputs": self.stack_outputs[stack], "secretOutputNames": secrets}
        if token == "kubernetes:core/v1:Secret" and args.resource_id:
            # A read of a Secret Strimzi made (a cluster's CA certificate): answer like the API.
            namespace, _, name = args.resource_id.rpartition("/")
            return args.resource_id, {
                "metadata": {"name": name, "namespace": namespace},
                "data": {"ca.crt": base64.b64encode(OFFLINE_CA_CERTIFICATE.encode()).decode()},
            }
        if token == "kubernetes:core/v1:Secret" and inputs.get("type") == "kubernetes.io/service-account-token":
            # Kubernetes' token controller fills the token in, and the provider waits for it
            # (pulumi/pulumi-kubernetes#2048).
            token_value = base64.b64encode(f"offline-token-{args.name}".encode()).decode()
            return f"{args.name}-id", {**inputs, "data": {"token": token_value}}
        if token == "pulumi:providers:azure-native" and inputs.get("subscriptionId"):
            self.provider_subscriptions[f"{args.name}-id"] = str(inputs["subscriptionId"])
        if token == "azuread:index/application:Application":
            # Entra gives an application its client ID and object ID (Graph's `appId`, `id`).
            name = str(inputs.get("displayName", args.name))
            object_id = self._uuid("application", name)
            return object_id, {**inputs, "clientId": self._uuid("application", name, "client"), "objectId": object_id}
        if token == "azuread:index/servicePrincipal:ServicePrincipal":
            object_id = self._uuid("service principal", str(inputs.get("clientId")))
            return object_id, {**inputs, "objectId": object_id}
        if not token.startswith("azure-native:"):
            return f"{args.name}-id", inputs
        if args.resource_id:
            # A read of an existing resource (a site's connected cluster): Azure answers with it.
            return args.resource_id, {**inputs, "id": args.resource_id, "name": args.resource_id.rsplit("/", 1)[-1]}
        provider_id = (args.provider or "").rsplit("::", 1)[-1]
        subscription = self.provider_subscriptions.get(provider_id, self.subscription_id)
        resource_id = arm_id(token, args.name, inputs, subscription)
        state = {**inputs, "id": resource_id, "name": resource_id.rsplit("/", 1)[-1]}
        # Azure answers user-assigned identities as a map keyed by identity ID.
        identity = inputs.get("identity") or {}
        if isinstance(identity, dict) and isinstance(identity.get("userAssignedIdentities"), list):
            state["identity"] = {
                **identity,
                "userAssignedIdentities": {
                    identity_id: self._identity_ids(identity_id) for identity_id in identity["userAssignedIdentities"]
                },
            }
        if token == "azure-native:managedidentity:UserAssignedIdentity":
            state.update(self._identity_ids(resource_id), tenantId=self.tenant_id)
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
        elif token == "azure-native:dashboard:Grafana":
            workspace = inputs.get("workspaceName")
            state["properties"] = {
                **inputs.get("properties", {}),
                "endpoint": f"https://{workspace}-{self._uuid(resource_id)[:8]}.{inputs.get('location')}.grafana.azure.com",
            }
            state["identity"] = {**inputs.get("identity", {}), "principalId": self._uuid(resource_id, "principal")}
        elif token == "azure-native:monitor:AzureMonitorWorkspace":
            # Azure names the query endpoint after the workspace, with a suffix of its own.
            workspace = inputs.get("azureMonitorWorkspaceName")
            state["metrics"] = {
                "prometheusQueryEndpoint": f"https://{workspace}-{self._uuid(resource_id)[:4]}."
                f"{inputs.get('location')}.prometheus.monitor.azure.com",
                "internalId": self._uuid(resource_id, "metrics"),
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
        elif token == "azure-native:storage:ObjectReplicationPolicy":
            # Azure gives each rule written on the destination an ID, which the source's repeats
            # (learn.microsoft.com/azure/storage/blobs/object-replication-configure).
            state["policyId"] = inputs.get("objectReplicationPolicyId")
            state["rules"] = [
                {**rule, "ruleId": rule.get("ruleId") or self._uuid(resource_id, rule.get("sourceContainer", ""))}
                for rule in inputs.get("rules", [])
            ]
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
        elif token == "azure-native:storagecache:AmlFilesystem":
            # Azure gives the management service an address of the file system's subnet, which a
            # unit's preview cannot see (the foundation made it): an address of TEST-NET-1 (never
            # routable), the same for the same subnet in every layout.
            subnet = str(inputs.get("filesystemSubnet", "")).rsplit("/", 1)[-1]
            state["clientInfo"] = {
                "mgsAddress": f"192.0.2.{1 + int(hashlib.sha256(subnet.encode()).hexdigest(), 16) % 254}"
            }
        elif token == "azure-native:network:PublicIPAddress":
            state["ipAddress"] = "198.51.100.10"  # TEST-NET-2, never routable
        return resource_id, state

    # The SDK takes a bare dict as well as (dict, failures): pulumi/runtime/mocks.py, MockMonitor.Invoke.
    def call(self, args: MockCallArgs) -> dict:  # type: ignore[override]
        if args.token == "azure-native:authorization:getClientConfig":
            return {
                "clientId": self._uuid("deployer-client"),
                "objectId": self.deployer_object_id,
                "subscriptionId": self.subscription_id,
                "tenantId": self.tenant_id,
            }
        if args.token == "azure-native:authorization:getClientToken":
            return {"token": "offline-token"}
        if args.token == "azure-native:containerservice:listManagedClusterUserCredentials":
            cluster = args.args.get("resourceName", "cluster")
            server = f"https://{cluster}.offline.azmk8s.io:443"
            value = base64.b64encode(fake_user_kubeconfig(cluster, server, self.tenant_id).encode()).decode()
            return {"kubeconfigs": [{"name": "clusterUser", "value": value}]}
        if args.token == "azure-native:operationalinsights:getWorkspace":
            # A workspace's customer ID (what agents name it by): a GUID fixed by its name.
            name = f"{args.args.get('resourceGroupName')}/{args.args.get('workspaceName')}"
            return {"customerId": self._uuid("workspace", name), "name": args.args.get("workspaceName")}
        if args.token == "azure-native:managedidentity:getUserAssignedIdentity":
            # An existing identity, as its creator's preview saw it: the same IDs for the same
            # resource ID (a workload's identity, read by the delivery for its app roles).
            identity_id = arm_id(
                "azure-native:managedidentity:UserAssignedIdentity",
                str(args.args.get("resourceName")),
                {
                    "resourceGroupName": args.args.get("resourceGroupName"),
                    "resourceName": args.args.get("resourceName"),
                },
                self.provider_subscriptions.get((args.provider or "").rsplit("::", 1)[-1], self.subscription_id),
            )
            return {
                "id": identity_id,
                "name": args.args.get("resourceName"),
                **self._identity_ids(identity_id),
                "tenantId": self.tenant_id,
            }
        if args.token == "github:index/getTeam:getTeam":
            # GitHub's numeric team ID (reviewers name teams by it).
            slug = args.args.get("slug", "team")
            return {"id": str(uuid.uuid5(OFFLINE_NAMESPACE, f"team/{slug}").int % 10**7), "slug": slug, "name": slug}
        if args.token == "github:index/getRepository:getRepository":
            full_name = args.args.get("fullName", "owner/repo")
            return {"repoId": uuid.uuid5(OFFLINE_NAMESPACE, f"repo/{full_name}").int % 10**9, "fullName": full_name}
        raise NotImplementedError(
            f"the offline engine has no mock for invoke {args.token}; add one to offline/mocks.py"
        )
