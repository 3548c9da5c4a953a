"""On-premises sites (Arc connected clusters): governed and watched like the platform's AKS
clusters, or not configured at all (docs/hybrid.md)."""

from __future__ import annotations

from guardrail import lookup, stack_policy
from pulumi_policy import Severity

EXTENSION = "azure-native:kubernetesconfiguration:Extension"
FLUX_CONFIGURATION = "azure-native:kubernetesconfiguration:FluxConfiguration"
POLICY_ASSIGNMENT = "azure-native:authorization:PolicyAssignment"
COLLECTION_RULE_ASSOCIATION = "azure-native:monitor:DataCollectionRuleAssociation"
CONNECTED_CLUSTERS = "/providers/microsoft.kubernetes/connectedclusters/"
# Extension types (extensions-release.md), and the setting that gives Container Insights'
# agent its managed identity instead of the workspace's key (kubernetes-monitoring-enable-arc.md).
POLICY_EXTENSION = "microsoft.policyinsights"
CONTAINER_INSIGHTS = "microsoft.azuremonitor.containers"
MANAGED_PROMETHEUS = "microsoft.azuremonitor.containers.metrics"
AAD_AUTH = "amalogs.useAADAuth"
# Azure's built-in pod security initiatives (facts/azure_policy.py holds the same IDs).
POD_SECURITY_INITIATIVES = (
    "/providers/microsoft.authorization/policysetdefinitions/a8640138-9b0a-4a28-b8cb-1666c838647d",
    "/providers/microsoft.authorization/policysetdefinitions/42b8ef37-b724-4e24-bbc8-7a7708edfe00",
)


def _cluster_of_extension(resource) -> str | None:
    """The connected cluster an extension or Flux configuration is written on, lower case."""
    props = resource.props
    if str(lookup(props, "clusterResourceName") or "").lower() != "connectedclusters":
        return None
    group = str(lookup(props, "resourceGroupName") or "")
    name = str(lookup(props, "clusterName") or "")
    return f"{group}/{name}".lower()


def _cluster_of_scope(scope: str) -> str | None:
    """`<group>/<name>` of the connected cluster an ID names, lower case."""
    lowered = scope.lower()
    if CONNECTED_CLUSTERS not in lowered:
        return None
    parts = lowered.strip("/").split("/")
    return f"{parts[3]}/{parts[7]}" if len(parts) >= 8 else None


def connected_clusters_governed(args, report):
    """Every connected cluster the stack configures (an extension, a Flux configuration, a policy
    assignment or a collection rule on it) has Azure Policy's extension and a pod security
    initiative, Container Insights with its managed identity and its collection rule, and managed
    Prometheus with its collection rule: a site the platform feeds work is governed and watched as
    an AKS cluster is."""
    configured: dict[str, str] = {}  # cluster -> the URN of a resource that configures it
    extensions: dict[str, dict[str, object]] = {}  # cluster -> extension type -> the extension's props
    initiatives: set[str] = set()
    associations: dict[str, set[str]] = {}
    for resource in args.resources:
        if resource.resource_type in (EXTENSION, FLUX_CONFIGURATION):
            cluster = _cluster_of_extension(resource)
            if cluster is None:
                continue
            configured.setdefault(cluster, resource.urn)
            if resource.resource_type == EXTENSION:
                kind = str(lookup(resource.props, "extensionType") or "").lower()
                extensions.setdefault(cluster, {})[kind] = resource.props
        elif resource.resource_type == POLICY_ASSIGNMENT:
            cluster = _cluster_of_scope(str(lookup(resource.props, "scope") or ""))
            if cluster is not None:
                configured.setdefault(cluster, resource.urn)
                if str(lookup(resource.props, "policyDefinitionId") or "").lower() in POD_SECURITY_INITIATIVES:
                    initiatives.add(cluster)
        elif resource.resource_type == COLLECTION_RULE_ASSOCIATION:
            cluster = _cluster_of_scope(str(lookup(resource.props, "resourceUri") or ""))
            if cluster is not None:
                configured.setdefault(cluster, resource.urn)
                if lookup(resource.props, "dataCollectionRuleId"):
                    associations.setdefault(cluster, set()).add(str(lookup(resource.props, "associationName") or ""))
    for cluster, urn in sorted(configured.items()):
        installed = extensions.get(cluster, {})
        missing = []
        if POLICY_EXTENSION not in installed:
            missing.append("Azure Policy's extension (Microsoft.PolicyInsights)")
        if cluster not in initiatives:
            missing.append("a pod security initiative assigned on it")
        insights = installed.get(CONTAINER_INSIGHTS)
        if insights is None:
            missing.append("Container Insights (Microsoft.AzureMonitor.Containers)")
        elif str((lookup(insights, "configurationSettings") or {}).get(AAD_AUTH, "")).lower() != "true":
            # (The setting's name has a dot, which `lookup` would split on.)
            missing.append(f"Container Insights with its managed identity ({AAD_AUTH}: true)")
        if "ContainerInsightsExtension" not in associations.get(cluster, set()):
            missing.append("Container Insights' collection rule association (ContainerInsightsExtension)")
        if MANAGED_PROMETHEUS not in installed:
            missing.append("managed Prometheus (Microsoft.AzureMonitor.Containers.Metrics)")
        if not associations.get(cluster, set()) - {"ContainerInsightsExtension"}:
            missing.append("managed Prometheus' collection rule association")
        if missing:
            report(
                f"connected cluster {cluster.split('/')[-1]} is configured here without " + "; ".join(missing) + ".",
                urn,
            )


POLICIES = [
    stack_policy(
        "connected-clusters-governed",
        "Every on-premises site (Arc connected cluster) the stack configures runs Azure Policy's extension with "
        "a pod security initiative, and Container Insights (managed identity) and managed Prometheus with their "
        "collection rules.",
        connected_clusters_governed,
        severity=Severity.HIGH,
        remediation="Build the site through components/arc_site.py (platform:onPremClusters), which installs and "
        "associates all of them; a distribution Azure Policy's extension does not support cannot be a site.",
    ),
]
