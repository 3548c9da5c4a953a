"""Azure Arc-enabled Kubernetes: which distributions get which of the platform's needs, and what a
connected cluster's agents reach.

Sources (research notes of 2026-11-28; MicrosoftDocs/azure-management-docs at d923d58, under
articles/azure-arc/kubernetes/):
- workload-identity.md: workload identity federation (GA in agent 1.32.7, release-notes.md) on
  Ubuntu with K3s, AKS enabled by Azure Arc, Red Hat OpenShift, VMware Tanzu TKGm and AKS Edge
  Essentials; enabled by `az connectedk8s connect|update --enable-oidc-issuer
  --enable-workload-identity`, with the site's API server started with the Arc issuer
  (`--service-account-issuer`).
- extensions-release.md: the Azure Policy extension (`Microsoft.PolicyInsights`) "kubeadm is
  currently not supported"; the validated distributions are AKS on Azure Local, ARO, Kind, RKE2,
  Minikube, K3s, AKS Edge and TKG (EKS, GKE and RKE supported without validation).
- includes/network-requirements-azure-cloud.md (ms.date 06/11/2026): the agents' outbound
  endpoints, HTTPS 443; cluster connect and custom locations add more, which the platform does not
  use.
- pulumi-azure-native 3.29.0 `kubernetes.ConnectedCluster` (API 2024-02-01-preview): creating one
  needs the agent's public key, which only `az connectedk8s connect` generates with the agents'
  install (Azure/azure-rest-api-specs#23247): the platform references a connected cluster, never
  creates it.
"""

from __future__ import annotations

CONNECTED_CLUSTER_TYPE = "Microsoft.Kubernetes/connectedClusters"

# Distributions the platform knows, by the name config uses.
DISTRIBUTIONS = ("k3s", "aks-arc", "aks-edge", "openshift", "tanzu-tkgm", "rke2", "kubeadm")
# Where Arc's workload identity federation is supported (workload-identity.md).
WORKLOAD_IDENTITY_DISTRIBUTIONS = frozenset({"k3s", "aks-arc", "aks-edge", "openshift", "tanzu-tkgm"})
# Where the Azure Policy extension is not supported (extensions-release.md): such a site could not
# be governed by the platform's initiatives.
POLICY_UNSUPPORTED_DISTRIBUTIONS = frozenset({"kubeadm"})

# What the Arc agents must reach from the site (HTTPS 443), without cluster connect or custom
# locations; `{region}` is the connected cluster's region.
AGENT_FQDNS: tuple[str, ...] = (
    "management.azure.com",
    "{region}.dp.kubernetesconfiguration.azure.com",
    "login.microsoftonline.com",
    "{region}.login.microsoft.com",
    "login.windows.net",
    "mcr.microsoft.com",
    "*.data.mcr.microsoft.com",
    "gbl.his.arc.azure.com",
    "*.his.arc.azure.com",
    "linuxgeneva-microsoft.azurecr.io",
)

# Microsoft Defender for Containers' Arc sensor: its supported distributions (extensions-release.md,
# "Microsoft Defender for Containers"; public preview for Arc). K3s and RKE2 are not among them.
DEFENDER_DISTRIBUTIONS = frozenset({"aks-arc", "openshift", "tanzu-tkgm"})

# Cluster extensions the platform installs on a site (extension type, and the version it pins where
# the docs publish one: extensions-release.md "Azure Policy Extension Release Notes" 1.19.0,
# flux-gitops-release-notes.md "August 2026 - microsoft.flux version 1.24.1"). Azure Monitor's
# extensions publish no version list in these sources: they follow the Stable train's minor
# upgrades instead.
POLICY_EXTENSION = ("Microsoft.PolicyInsights", "1.19.0")
FLUX_EXTENSION = ("microsoft.flux", "1.24.1")
CONTAINER_INSIGHTS_EXTENSION = ("Microsoft.AzureMonitor.Containers", None)
METRICS_EXTENSION = ("Microsoft.AzureMonitor.Containers.Metrics", None)
DEFENDER_EXTENSION = ("microsoft.azuredefender.kubernetes", None)
# What Azure Policy's extension reaches besides Arc's own endpoints (policy-for-kubernetes.md).
POLICY_FQDNS: tuple[str, ...] = ("data.policy.core.windows.net", "store.policy.core.windows.net")

# Namespaces of a site that Azure Policy's pod security initiative leaves out: Kubernetes' own,
# Arc's agents, its extensions' (Azure Policy's Gatekeeper, Flux, Azure Monitor, Defender) and
# Kueue's; the initiatives' own defaults name AKS's (facts/azure_policy.py).
SITE_SYSTEM_NAMESPACES: tuple[str, ...] = (
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "azure-arc",
    "azure-arc-release",
    "gatekeeper-system",
    "flux-system",
    "azuremonitor-containers",
    "mdc",
    "kueue-system",
)

# Flux on a connected cluster signs in with workload identity from microsoft.flux 1.15.1
# (tutorial-use-gitops-flux2.md, "Workload identity in Arc-enabled Kubernetes clusters and AKS
# clusters"): the extension's settings name the identity, and each controller that reads a source
# is a federated subject of it. The source-controller is the only one that reads the platform's.
FLUX_NAMESPACE = "flux-system"
FLUX_SOURCE_CONTROLLER = "source-controller"
FLUX_WORKLOAD_IDENTITY_SETTINGS = (
    "workloadIdentity.enable",
    "workloadIdentity.azureClientId",
    "workloadIdentity.azureTenantId",
)
# Container Insights on a connected cluster with its managed identity (kubernetes-monitoring-
# enable-arc.md: `amalogs.useAADAuth=true`, the default from k8s-extension 1.43.0).
CONTAINER_INSIGHTS_AAD_SETTING = "amalogs.useAADAuth"
