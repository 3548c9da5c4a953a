"""One region's Azure Firewall: the only way out of the VNet with `userDefinedRouting`.

The firewall policy allows HTTPS (and plain HTTP where AKS's FQDN tag needs it) from the
cluster subnets to exactly the destinations of `planning.egress.application_rules`; the
firewall denies everything else by default. Threat intelligence denies known-malicious
destinations, Premium adds intrusion detection, and the DNS proxy is on so that any FQDN
network rule added later resolves names as the clients do. Every decision is logged to the
environment's Log Analytics workspace.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
from pulumi_azure_native import network

from components.alerting import metric_alerts
from components.groups import public_address, standard_public_ip
from components.observability import send_logs
from planning.egress import ApplicationRule, NetworkRule
from planning.naming import Naming
from stackconfig.model import FirewallConfig

# Resource-specific tables: application and network rule hits, DNS proxy, threat intel, IDPS.
FIREWALL_LOG_CATEGORIES = (
    "AZFWApplicationRule",
    "AZFWNetworkRule",
    "AZFWDnsQuery",
    "AZFWThreatIntel",
    "AZFWIdpsSignature",
)
RULE_COLLECTION_GROUP_PRIORITY = 200
ALLOW_COLLECTION_PRIORITY = 100


@dataclass(frozen=True)
class EgressFirewallArgs:
    naming: Naming
    region: str
    resource_group_name: pulumi.Input[str]
    subnet_id: pulumi.Input[str]
    settings: FirewallConfig
    rules: list[ApplicationRule]
    # The subnets whose traffic the rules allow (the clusters' node and pod subnets).
    source_ranges: list[str]
    zones: list[str]
    log_analytics_workspace_id: pulumi.Input[str]
    # severity -> the action groups its Azure Monitor alerts reach (components/alerting.py)
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    # Rules by address and port (a Managed Lustre subnet's: planning/egress.py, lustre_rules; the
    # dispatchers' to the sites' API servers: planning/onprem.py, site_api_rules).
    network_rules: Sequence[NetworkRule] = ()
    # What it does not SNAT (planning/onprem.py, firewall_private_ranges); None: Azure's default.
    private_ranges: Sequence[str] | None = None
    # Exact hosts of the region's Azure Monitor workspace query endpoint (KEDA's scaler).
    query_hosts: Sequence[pulumi.Input[str]] = ()


def _protocols(rule: ApplicationRule) -> list[network.FirewallPolicyRuleApplicationProtocolArgs]:
    protocols = [
        network.FirewallPolicyRuleApplicationProtocolArgs(
            protocol_type=network.FirewallPolicyRuleApplicationProtocolType.HTTPS, port=443
        )
    ]
    if rule.http:
        protocols.append(
            network.FirewallPolicyRuleApplicationProtocolArgs(
                protocol_type=network.FirewallPolicyRuleApplicationProtocolType.HTTP, port=80
            )
        )
    return protocols


def _allow(name: str, priority: int, rules: list[Any]) -> network.FirewallPolicyFilterRuleCollectionArgs:
    return network.FirewallPolicyFilterRuleCollectionArgs(
        rule_collection_type="FirewallPolicyFilterRuleCollection",
        name=name,
        priority=priority,
        action=network.FirewallPolicyFilterRuleCollectionActionArgs(
            type=network.FirewallPolicyFilterRuleCollectionActionType.ALLOW
        ),
        rules=rules,
    )


def allow_rule_collection(
    rules: list[ApplicationRule], source_ranges: list[str], query_hosts: Sequence[pulumi.Input[str]] = ()
) -> network.FirewallPolicyFilterRuleCollectionArgs:
    allowed = [
        network.ApplicationRuleArgs(
            rule_type="ApplicationRule",
            name=rule.name,
            source_addresses=list(rule.sources or source_ranges),
            fqdn_tags=list(rule.fqdn_tags) or None,
            target_fqdns=list(rule.fqdns) or None,
            protocols=_protocols(rule),
        )
        for rule in rules
    ]
    if query_hosts:
        # The workspace's own host, not `*.prometheus.monitor.azure.com`: every tenant's
        # workspaces share that domain (facts/azure_endpoints.py).
        allowed.append(
            network.ApplicationRuleArgs(
                rule_type="ApplicationRule",
                name="prometheus-query",
                source_addresses=list(source_ranges),
                target_fqdns=list(query_hosts),
                protocols=_protocols(ApplicationRule("prometheus-query")),
            )
        )
    return _allow("allow-egress", ALLOW_COLLECTION_PRIORITY, allowed)


NETWORK_COLLECTION_PRIORITY = 200


def network_rule_collection(rules: list[NetworkRule]) -> network.FirewallPolicyFilterRuleCollectionArgs:
    return _allow(
        "allow-network",
        NETWORK_COLLECTION_PRIORITY,
        [
            network.NetworkRuleArgs(
                rule_type="NetworkRule",
                name=rule.name,
                ip_protocols=[network.FirewallPolicyRuleNetworkProtocol(p) for p in rule.protocols],
                source_addresses=list(rule.sources),
                destination_addresses=list(rule.destinations),
                destination_ports=list(rule.ports),
            )
            for rule in rules
        ],
    )


def _first_private_ip(configs: Sequence[network.outputs.AzureFirewallIPConfigurationResponse] | None) -> str:
    """The firewall's private address (Azure assigns it on creation, the subnet's first usable)."""
    address = configs[0].private_ip_address if configs else None
    if not address:
        raise ValueError("Azure returned the firewall without a private IP address")
    return address


class EgressFirewall(pulumi.ComponentResource):
    """Outputs: `private_ip` (the next hop of the region's default route)."""

    private_ip: pulumi.Output[str]

    def __init__(self, name: str, args: EgressFirewallArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:network:EgressFirewall", name, None, opts)
        naming, region, settings = args.naming, args.region, args.settings
        child = pulumi.ResourceOptions(parent=self)
        premium = settings.sku == "Premium"

        public_ip = standard_public_ip(
            f"{name}-pip",
            naming.regional("pip", region, "firewall"),
            group_name=args.resource_group_name,
            region=region,
            zones=list(args.zones),
            tags=args.tags,
            parent=self,
        )
        policy = network.FirewallPolicy(
            f"{name}-policy",
            firewall_policy_name=naming.regional("afwp", region),
            resource_group_name=args.resource_group_name,
            location=region,
            sku=network.FirewallPolicySkuArgs(tier=network.FirewallPolicySkuTier(settings.sku)),
            threat_intel_mode=network.AzureFirewallThreatIntelMode(settings.threat_intel_mode),
            dns_settings=network.DnsSettingsArgs(enable_proxy=True),
            snat=network.FirewallPolicySNATArgs(private_ranges=list(args.private_ranges))
            if args.private_ranges is not None
            else None,
            intrusion_detection=network.FirewallPolicyIntrusionDetectionArgs(
                mode=network.FirewallPolicyIntrusionDetectionStateType(settings.intrusion_detection_mode)
            )
            if premium
            else None,
            tags=args.tags,
            opts=child,
        )
        rules = network.FirewallPolicyRuleCollectionGroup(
            f"{name}-rules",
            rule_collection_group_name="aks-egress",
            firewall_policy_name=policy.name,
            resource_group_name=args.resource_group_name,
            priority=RULE_COLLECTION_GROUP_PRIORITY,
            rule_collections=[
                allow_rule_collection(args.rules, args.source_ranges, args.query_hosts),
                *([network_rule_collection(list(args.network_rules))] if args.network_rules else []),
            ],
            opts=child,
        )
        firewall = network.AzureFirewall(
            f"{name}-firewall",
            azure_firewall_name=naming.regional("afw", region),
            resource_group_name=args.resource_group_name,
            location=region,
            sku=network.AzureFirewallSkuArgs(
                name=network.AzureFirewallSkuName.AZF_W_V_NET, tier=network.AzureFirewallSkuTier(settings.sku)
            ),
            firewall_policy=network.SubResourceArgs(id=policy.id),
            ip_configurations=[
                network.AzureFirewallIPConfigurationArgs(
                    name="egress",
                    subnet=network.SubResourceArgs(id=args.subnet_id),
                    public_ip_address=network.SubResourceArgs(id=public_ip.id),
                )
            ],
            zones=list(args.zones),
            tags=args.tags,
            # The policy's rules are written before the firewall starts using it: Azure
            # rejects a rule change while the firewall is still provisioning.
            opts=pulumi.ResourceOptions(parent=self, depends_on=[rules]),
        )
        send_logs(
            f"{name}-logs",
            resource_uri=firewall.id,
            workspace_id=args.log_analytics_workspace_id,
            categories=FIREWALL_LOG_CATEGORIES,
            parent=self,
        )
        metric_alerts(
            f"{name}-alert",
            resource_id=firewall.id,
            resource_type="Microsoft.Network/azureFirewalls",
            resource_group_name=args.resource_group_name,
            routes=args.alert_routes,
            tags=args.tags,
            parent=self,
        )
        self.private_ip = firewall.ip_configurations.apply(_first_private_ip)
        # Where the region's nodes reach the internet (and a public API server) from.
        self.public_ip = public_address(public_ip)
        self.policy_id = policy.id
        self.register_outputs({"privateIp": self.private_ip, "policyId": policy.id})
