"""Stack-wide guardrails: private endpoints with DNS, protection of state, address plan, tags."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from guardrail import BuiltIn, lookup, resource_policy, stack_policy
from pulumi_policy import Severity

PRIVATE_ENDPOINT = "azure-native:network:PrivateEndpoint"
ZONE_GROUP = "azure-native:network:PrivateDnsZoneGroup"
VIRTUAL_NETWORK = "azure-native:network:VirtualNetwork"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
KEY_VAULT = "azure-native:keyvault:Vault"

# Services that hold data and have a private endpoint: each must be reached only through one.
PRIVATE_LINK_SERVICES = {
    "azure-native:storage:StorageAccount": "storage account",
    "azure-native:keyvault:Vault": "key vault",
    "azure-native:containerregistry:Registry": "container registry",
    "azure-native:eventhub:Namespace": "Event Hubs namespace",
    "azure-native:cosmosdb:DatabaseAccount": "Cosmos DB account",
    "azure-native:dbforpostgresql:Server": "PostgreSQL server",
}
# Resources whose deletion loses data (or, for the registry, every image teams pushed).
STATEFUL_KINDS = {**PRIVATE_LINK_SERVICES, "azure-native:storagecache:AmlFilesystem": "Managed Lustre file system"}
STATEFUL_TYPES = tuple(STATEFUL_KINDS)

# Azure resource types that take tags, as the azure-native SDK declares them (tests compare this
# list with the SDK for every type the program registers).
TAGGABLE_TYPES = frozenset(
    {
        "azure-native:alertsmanagement:PrometheusRuleGroup",
        "azure-native:containerregistry:Registry",
        "azure-native:containerregistry:Replication",
        "azure-native:containerservice:AgentPool",
        "azure-native:containerservice:Fleet",
        "azure-native:containerservice:ManagedCluster",
        "azure-native:cosmosdb:DatabaseAccount",
        "azure-native:cosmosdb:SqlResourceSqlContainer",
        "azure-native:cosmosdb:SqlResourceSqlDatabase",
        "azure-native:dashboard:Grafana",
        "azure-native:dbforpostgresql:Server",
        "azure-native:eventhub:Namespace",
        "azure-native:keyvault:Key",
        "azure-native:keyvault:Vault",
        "azure-native:managedidentity:UserAssignedIdentity",
        "azure-native:monitor:ActionGroup",
        "azure-native:monitor:AzureMonitorWorkspace",
        "azure-native:monitor:MetricAlert",
        "azure-native:monitor:DataCollectionEndpoint",
        "azure-native:monitor:DataCollectionRule",
        "azure-native:monitor:PrivateLinkScope",
        "azure-native:network:AzureFirewall",
        "azure-native:network:FirewallPolicy",
        "azure-native:network:NatGateway",
        "azure-native:network:NetworkSecurityGroup",
        "azure-native:network:PrivateEndpoint",
        "azure-native:network:PublicIPAddress",
        "azure-native:network:RouteTable",
        "azure-native:network:VirtualNetwork",
        "azure-native:operationalinsights:Workspace",
        "azure-native:privatedns:PrivateZone",
        "azure-native:privatedns:VirtualNetworkLink",
        "azure-native:resources:Deployment",
        "azure-native:resources:ResourceGroup",
        "azure-native:storagecache:AmlFilesystem",
        "azure-native:storage:StorageAccount",
    }
)
REQUIRED_TAGS = ["environment", "owner", "cost-center"]
AKS_DEFAULT_SERVICE_CIDR = "10.0.0.0/16"
AKS_DEFAULT_POD_CIDR = "10.244.0.0/16"


def _aks_linked_vaults(args) -> set[str]:
    """Key vaults a cluster's etcd encryption reaches privately: AKS makes their private endpoint
    itself, in the node resource group ("If you turn on KMS for a private key vault, AKS
    automatically creates a private endpoint and a private link in the node resource group",
    use-kms-etcd-encryption.md), where no program declares it."""
    linked = set()
    for resource in args.resources:
        if resource.resource_type != MANAGED_CLUSTER:
            continue
        if lookup(resource.props, "securityProfile.azureKeyVaultKms.keyVaultNetworkAccess") != "Private":
            continue
        linked |= {d.urn for d in resource.property_dependencies.get("securityProfile", [])}
    return linked


def private_endpoints(args, report):
    linked = _aks_linked_vaults(args)
    endpoints_of: dict[str, list] = {}
    zone_groups_of: dict[str, list] = {}
    for resource in args.resources:
        if resource.resource_type == PRIVATE_ENDPOINT:
            for target in resource.property_dependencies.get("privateLinkServiceConnections", []):
                endpoints_of.setdefault(target.urn, []).append(resource)
        elif resource.resource_type == ZONE_GROUP and list(lookup(resource.props, "privateDnsZoneConfigs") or []):
            for endpoint in resource.property_dependencies.get("privateEndpointName", []):
                zone_groups_of.setdefault(endpoint.urn, []).append(resource)
    for resource in args.resources:
        kind = PRIVATE_LINK_SERVICES.get(resource.resource_type)
        if kind is None or (resource.urn in linked and resource.resource_type == KEY_VAULT):
            continue
        endpoints = endpoints_of.get(resource.urn, [])
        if not endpoints:
            report(f"{kind} {resource.name} has no private endpoint.", resource.urn)
        for endpoint in endpoints:
            if not zone_groups_of.get(endpoint.urn):
                report(
                    f"private endpoint {endpoint.name} of {kind} {resource.name} has no DNS zone group, so its "
                    "name still resolves to the public address.",
                    endpoint.urn,
                )


FLUX_CONFIGURATION = "azure-native:kubernetesconfiguration:FluxConfiguration"


def site_baseline_accounts(resources) -> set[str]:
    """URNs of storage accounts an on-premises site's Flux reads its baseline from (a Flux
    configuration's Azure Blob source in the same review): only that site reads them, in its own
    region, and what they hold is rebuilt from code, so neither an endpoint per cluster region nor a
    copy outside the region serves anyone (components/arc_site.py)."""
    names = {
        str(lookup(r.props, "azureBlob.url") or "").removeprefix("https://").split(".", 1)[0]
        for r in resources
        if r.resource_type == FLUX_CONFIGURATION
    }
    return {
        r.urn
        for r in resources
        if r.resource_type == STORAGE_ACCOUNT and lookup(r.props, "accountName") in names - {""}
    }


def endpoints_in_cluster_regions(args, report):
    """Each region with clusters reaches every data-plane service through an endpoint of its own,
    so that losing another region does not cut it off (docs/decisions/0008-regional-failure.md).
    Judged where the clusters and the services are reviewed together (the environment's union)."""
    regions = sorted(
        {lookup(r.props, "location") for r in args.resources if r.resource_type == MANAGED_CLUSTER} - {None}
    )
    if not regions:
        return
    located: dict[str, set] = {}
    for resource in args.resources:
        if resource.resource_type == PRIVATE_ENDPOINT:
            for target in resource.property_dependencies.get("privateLinkServiceConnections", []):
                located.setdefault(target.urn, set()).add(lookup(resource.props, "location"))
    baselines = site_baseline_accounts(args.resources)
    for resource in args.resources:
        kind = PRIVATE_LINK_SERVICES.get(resource.resource_type)
        # No endpoint at all is private-endpoint-with-dns's finding.
        if kind is None or resource.urn not in located or resource.urn in baselines:
            continue
        missing = [r for r in regions if r not in located[resource.urn]]
        if missing:
            report(
                f"{kind} {resource.name} has no private endpoint in {', '.join(missing)}, where clusters run: "
                "they reach it through another region and lose it with that region.",
                resource.urn,
            )


STORAGE_ACCOUNT = "azure-native:storage:StorageAccount"
OBJECT_REPLICATION = "azure-native:storage:ObjectReplicationPolicy"
# Skus with a copy in the paired region, which a customer-managed failover promotes.
GEO_REDUNDANT_SKUS = ("Standard_GRS", "Standard_RAGRS", "Standard_GZRS", "Standard_RAGZRS")


def storage_survives_a_region(args, report):
    """With clusters in two or more regions, no account's data lives and dies with one region:
    each is geo-redundant (a customer-managed failover brings it back in the paired region) or
    in an object-replication policy (a replica in another region). Decision 0008."""
    regions = {lookup(r.props, "location") for r in args.resources if r.resource_type == MANAGED_CLUSTER} - {None}
    if len(regions) < 2:
        return
    replicated = {
        dependency.urn
        for policy in args.resources
        if policy.resource_type == OBJECT_REPLICATION
        for key in ("sourceAccount", "destinationAccount")
        for dependency in policy.property_dependencies.get(key, [])
    }
    replicated |= site_baseline_accounts(args.resources)
    for account in args.resources:
        if account.resource_type != STORAGE_ACCOUNT or account.urn in replicated:
            continue
        sku = lookup(account.props, "sku.name")
        if sku not in GEO_REDUNDANT_SKUS:
            report(
                f"storage account {account.name} ({sku}) has no copy outside {lookup(account.props, 'location')}: "
                "the clusters of the other regions lose its data with that region.",
                account.urn,
            )


RULE_GROUP = "azure-native:alertsmanagement:PrometheusRuleGroup"


def alerting_on_every_cluster(args, report):
    """Every cluster has Prometheus alert rules of its own, and the ones for what stops work now
    (severity 0, critical) reach an action group: nobody reads a dashboard at 3 a.m."""
    for cluster in args.resources:
        if cluster.resource_type != MANAGED_CLUSTER:
            continue
        groups = [
            group
            for group in args.resources
            if group.resource_type == RULE_GROUP
            and cluster.urn in {d.urn for d in group.property_dependencies.get("clusterName", [])}
        ]
        alerts = [rule for group in groups for rule in lookup(group.props, "rules") or [] if rule.get("alert")]
        if not alerts:
            report(f"cluster {cluster.name} has no Prometheus alert rules.", cluster.urn)
            continue
        silent = [rule["alert"] for rule in alerts if rule.get("severity") == 0 and not rule.get("actions")]
        if silent:
            report(
                f"cluster {cluster.name}'s critical alerts reach nobody ({', '.join(sorted(silent))}): route "
                "critical to a receiver.",
                cluster.urn,
            )


DATA_COLLECTION_ENDPOINT = "azure-native:monitor:DataCollectionEndpoint"
LOG_WORKSPACE = "azure-native:operationalinsights:Workspace"


def monitoring_private(args, report):
    """Every cluster sends its container logs with the agent's managed identity (Container
    Insights), and logs and metrics reach Azure Monitor only privately: no collection endpoint
    or workspace takes public ingestion."""
    public = {
        DATA_COLLECTION_ENDPOINT: ("data collection endpoint", "networkAcls.publicNetworkAccess"),
        LOG_WORKSPACE: ("Log Analytics workspace", "publicNetworkAccessForIngestion"),
    }
    for resource in args.resources:
        if resource.resource_type == MANAGED_CLUSTER:
            agent = lookup(resource.props, "addonProfiles.omsagent") or {}
            if not agent.get("enabled") or (agent.get("config") or {}).get("useAADAuth") != "true":
                report(
                    f"cluster {resource.name} collects no container logs with the agent's managed identity "
                    "(Container Insights, useAADAuth).",
                    resource.urn,
                )
        elif resource.resource_type in public:
            kind, path = public[resource.resource_type]
            if lookup(resource.props, path) != "Disabled":
                report(f"{kind} {resource.name} accepts public ingestion.", resource.urn)


def stateful_protected(args, report):
    for resource in args.resources:
        if resource.resource_type in STATEFUL_TYPES and not resource.opts.protect:
            report(
                f"{STATEFUL_KINDS[resource.resource_type]} {resource.name} is not protected: "
                "`pulumi destroy` or a replacement would delete its data.",
                resource.urn,
            )


def _networks(value) -> list:
    result = []
    for cidr in list(value or []) if not isinstance(value, str) else [value]:
        try:
            result.append(ipaddress.ip_network(cidr, strict=False))
        except ValueError:
            continue
    return result


def address_plan(args, report):
    vnets = []  # (label, network, urn)
    for resource in args.resources:
        if resource.resource_type == VIRTUAL_NETWORK:
            for network in _networks(lookup(resource.props, "addressSpace.addressPrefixes")):
                vnets.append((f"VNet {resource.name}", network, resource.urn))
    for i, (label_a, net_a, _) in enumerate(vnets):
        for label_b, net_b, urn_b in vnets[i + 1 :]:
            if net_a.overlaps(net_b):
                report(f"{label_b} ({net_b}) overlaps {label_a} ({net_a}): peered networks cannot route.", urn_b)
    for resource in args.resources:
        if resource.resource_type != MANAGED_CLUSTER:
            continue
        profile = lookup(resource.props, "networkProfile") or {}
        # Absent ranges are AKS's defaults, which overlap many address plans.
        overlay = profile.get("networkPluginMode") == "overlay" or profile.get("networkPlugin") == "kubenet"
        pods = profile.get("podCidrs") or profile.get("podCidr") or (AKS_DEFAULT_POD_CIDR if overlay else None)
        services = profile.get("serviceCidrs") or profile.get("serviceCidr") or AKS_DEFAULT_SERVICE_CIDR
        cluster_ranges = [("podCidr", n) for n in _networks(pods)]
        cluster_ranges += [("serviceCidr", n) for n in _networks(services)]
        for key, network in cluster_ranges:
            for label, vnet, _ in vnets:
                if network.overlaps(vnet):
                    report(f"{resource.name}: networkProfile.{key} {network} overlaps {label} ({vnet}).", resource.urn)
        for i, (key_a, net_a) in enumerate(cluster_ranges):
            for key_b, net_b in cluster_ranges[i + 1 :]:
                if net_a.overlaps(net_b):
                    report(f"{resource.name}: networkProfile.{key_a} {net_a} overlaps {key_b} {net_b}.", resource.urn)


TAGS_SCHEMA = {
    "requiredTags": {"type": "array", "items": {"type": "string"}, "default": REQUIRED_TAGS},
    # What the remediation writes for a missing tag (enforcementLevel "remediate").
    "defaults": {"type": "object", "additionalProperties": {"type": "string"}, "default": {}},
}


SUBNET = "azure-native:network:Subnet"
# Subnets Azure refuses a network security group on (learn.microsoft.com/azure/firewall/
# firewall-faq: "Network Security Groups (NSGs) aren't supported on AzureFirewallSubnet";
# the VPN/ExpressRoute gateway's GatewaySubnet and Route Server's RouteServerSubnet likewise).
NSG_NOT_ALLOWED = ("AzureFirewallSubnet", "AzureFirewallManagementSubnet", "GatewaySubnet", "RouteServerSubnet")


def subnet_nsg(args, report):
    if args.resource_type != SUBNET:
        return
    name = str(lookup(args.props, "subnetName") or args.name)
    if name in NSG_NOT_ALLOWED:
        return
    if not lookup(args.props, "networkSecurityGroup.id") and lookup(args.props, "networkSecurityGroup") is None:
        report(f"subnet {name} has no network security group; every subnet Azure allows one on gets one.")


def _missing_tags(args) -> list[str]:
    if args.resource_type not in TAGGABLE_TYPES:
        return []
    tags = lookup(args.props, "tags") or {}
    required = args.get_config().get("requiredTags", REQUIRED_TAGS)
    return [tag for tag in required if not (isinstance(tags, Mapping) and tags.get(tag))]


def required_tags(args, report):
    missing = _missing_tags(args)
    if missing:
        report(f"Missing tags: {', '.join(missing)}.")


def add_required_tags(args):
    """Remediation: add the missing tags from the policy config's `defaults`."""
    missing = _missing_tags(args)
    defaults = args.get_config().get("defaults", {})
    added = {tag: defaults[tag] for tag in missing if tag in defaults}
    if not added:
        return None
    props = {key: args.props[key] for key in args.props}
    props["tags"] = {**dict(lookup(args.props, "tags") or {}), **added}
    return props


POLICIES = [
    stack_policy(
        "private-endpoint-with-dns",
        "Every storage account, key vault, registry, Event Hubs namespace, Cosmos DB account and PostgreSQL "
        "server has a private endpoint with a DNS zone group.",
        private_endpoints,
        severity=Severity.CRITICAL,
        remediation="Connect the service with PrivateEndpoints.connect (components/private_dns.py), which adds "
        "the endpoint and its zone group in the service's privatelink zone.",
        builtin=BuiltIn("6edd7eda-6dd8-40f7-810d-67160c639cd9", "Storage accounts should use private link"),
    ),
    stack_policy(
        "private-endpoints-in-cluster-regions",
        "Every storage account, key vault, registry, Event Hubs namespace, Cosmos DB account and PostgreSQL "
        "server has a private endpoint in every region where the stack runs clusters.",
        endpoints_in_cluster_regions,
        severity=Severity.HIGH,
        remediation="Connect the service through Context.data_plane's RegionalEndpoints (components/platform/context.py), "
        "which adds an endpoint in each region with clusters, registered in that region's zones.",
    ),
    stack_policy(
        "storage-survives-a-region",
        "With clusters in two or more regions, every storage account is geo-redundant or in an object-replication "
        "policy, so its data outlives the loss of its region.",
        storage_survives_a_region,
        severity=Severity.HIGH,
        remediation="Set platform:storage.accounts.<account>.replication: objectReplication (flat namespace) or "
        "geoFailover with a geo-redundant sku (platform:streaming.checkpoints for Flink's account).",
    ),
    stack_policy(
        "alerting-on-every-cluster",
        "Every AKS cluster has Prometheus alert rules, and its critical alerts reach an action group.",
        alerting_on_every_cluster,
        severity=Severity.HIGH,
        remediation="Route critical alerts to a receiver: platform:operations.alerts.receivers and .routes "
        "(components/alerting.py makes the rules for every cluster).",
    ),
    stack_policy(
        "monitoring-private",
        "Every cluster sends container logs through Container Insights with its managed identity, and no "
        "data collection endpoint or Log Analytics workspace accepts public ingestion (Azure Monitor Private "
        "Link Scope).",
        monitoring_private,
        severity=Severity.HIGH,
        remediation="Keep platform:operations.containerLogs.enabled and platform:operations.privateLinkScope."
        "enabled (the defaults); with the hub's zones, name the hub's scope in privateLinkScope.scopeId.",
    ),
    stack_policy(
        "stateful-resources-protected",
        "Storage accounts, key vaults, registries, Event Hubs namespaces, Cosmos DB accounts, PostgreSQL "
        "servers and Managed Lustre file systems are protected from deletion.",
        stateful_protected,
        severity=Severity.HIGH,
        remediation="Set platform:protect: true in the stack (prod does); the resources then get "
        "`protect` and a CanNotDelete lock.",
    ),
    stack_policy(
        "address-ranges-disjoint",
        "VNet address spaces, pod CIDRs and service CIDRs do not overlap.",
        address_plan,
        severity=Severity.HIGH,
        remediation="Give each region its own addressSpace and keep podCidr/serviceCidr outside every VNet "
        "(platform:network).",
    ),
    resource_policy(
        "subnet-has-nsg",
        "Every subnet that Azure allows a network security group on has one.",
        subnet_nsg,
        severity=Severity.HIGH,
        remediation="Attach the region's NSG (components/network.py does for every subnet but "
        "AzureFirewallSubnet, GatewaySubnet and RouteServerSubnet).",
        builtin=BuiltIn(
            "e71308d3-144b-4262-b144-efdc3cc90517", "Subnets should be associated with a Network Security Group"
        ),
    ),
    resource_policy(
        "required-tags",
        "Taggable Azure resources carry the environment, owner and cost-center tags.",
        required_tags,
        severity=Severity.LOW,
        remediation="Set platform:tags (owner, cost-center); the program adds environment. At enforcement "
        "level 'remediate' the policy adds missing tags from its `defaults` config.",
        builtin=BuiltIn("871b6d14-10aa-478d-b590-94f262ecfa99", "Require a tag on resources"),
        config=TAGS_SCHEMA,
        remediate=add_required_tags,
    ),
]
