"""KEDA as AKS's add-on runs it (`workloadAutoScalerProfile.keda`), and what its managed
Prometheus scaler takes.

Sources: learn.microsoft.com/azure/aks/keda-workload-identity (the operator is
`kube-system/keda-operator`; a federated credential for that service account, then a
TriggerAuthentication with `podIdentity.provider: azure-workload` and the identity's client ID;
the operator pods restart once to pick the credential up); learn.microsoft.com/azure/azure-monitor/
essentials/integrate-keda (the `prometheus` trigger's `serverAddress` is the Azure Monitor
workspace's query endpoint, read with Monitoring Data Reader on the workspace); keda.sh/docs
"Scaling Deployments" (`fallback` applies to triggers of metric type AverageValue, the
Prometheus scaler's default; `activationThreshold` decides 0 <-> 1, `threshold` above).
The add-on has no HTTP add-on (its interceptor holds requests while a Deployment wakes).

Imports nothing else from the project.
"""

from __future__ import annotations

API_VERSION = "keda.sh/v1alpha1"
SCALED_OBJECT = f"kubernetes:{API_VERSION}:ScaledObject"
TRIGGER_AUTHENTICATION = f"kubernetes:{API_VERSION}:TriggerAuthentication"
OPERATOR_NAMESPACE = "kube-system"
OPERATOR_SERVICE_ACCOUNT = "keda-operator"
WORKLOAD_IDENTITY_PROVIDER = "azure-workload"
# The role the operator's identity needs on the Azure Monitor workspace it queries.
PROMETHEUS_READER_ROLE = "Monitoring Data Reader"
# Failed reads in a row before `fallback.replicas` applies.
FALLBACK_FAILURES = 3
# An Azure Monitor workspace's Prometheus query endpoint (`https://<workspace>-<suffix>.<region>.
# prometheus.monitor.azure.com`): only Microsoft receives what is sent there.
PROMETHEUS_QUERY_ENDPOINT = r"^https://[a-z0-9-]+[.][a-z0-9]+[.]prometheus[.]monitor[.]azure[.]com/?$"
