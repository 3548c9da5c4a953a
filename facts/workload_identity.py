"""AKS's workload identity webhook: what it reads and what it projects into a pod.

Source: learn.microsoft.com/azure/aks/workload-identity-overview ("Service account labels and
annotations", "Pod labels", "Environment variables and the projected token"); the webhook
(Azure/azure-workload-identity, pkg/webhook) mounts the federated token at the path below and
sets AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE and AZURE_AUTHORITY_HOST.

Imports nothing else from the project.
"""

from __future__ import annotations

# A pod is mutated only with this label (the webhook's object selector).
USE_LABEL = "azure.workload.identity/use"
# On the service account: which identity its pods sign in as, and in which tenant.
CLIENT_ID_ANNOTATION = "azure.workload.identity/client-id"
TENANT_ID_ANNOTATION = "azure.workload.identity/tenant-id"
# Where the webhook projects the federated token (AZURE_FEDERATED_TOKEN_FILE).
FEDERATED_TOKEN_FILE = "/var/run/secrets/azure/tokens/azure-identity-token"
