"""What the cluster autoscaler does on its own, from its source (kubernetes/autoscaler at
cluster-autoscaler-1.34.5; the same in 1.33), as the platform relies on it.

- Startup taints: a node carrying a taint whose key starts with one of these prefixes counts
  as not ready yet ("treated as still upcoming due to applied startup taint": utils/taints
  taints.go `StartupTaintPrefix`, `IgnoreTaintPrefix`; core/static_autoscaler.go
  obtainNodeLists, `FilterOutNodesWithStartupTaints`), and such taints, and status taints, are
  stripped from every template node (taints.go `SanitizeTaints`, from simulator
  node_info_utils.go createSanitizedNode). AKS exposes no `--startup-taint` flag (Azure/AKS#3276),
  so the platform uses the built-in prefix.
- Template candidates: a pool's template for a scale-up comes from one of its real nodes if
  one is ready (after the startup-taint and GPU filters), not cordoned, not being deleted, and
  Ready for at least a minute (processors/nodeinfosprovider/mixed_nodeinfos_processor.go,
  isNodeGoodTemplateCandidate, `stabilizationDelay`); that template is cached for the life of
  the process (`maxCacheExpireTime`, 87,660 hours) and used while the pool has no candidate;
  with neither, the cloud provider's template of the pool.
- GPU nodes: a node with the provider's GPU label and no allocatable GPU is not ready yet
  (processors/customresources/gpu_processor.go); on Azure the label is
  `kubernetes.azure.com/accelerator` (cloudprovider/azure azure_cloud_provider.go `GPULabel`).
- Health: more than `okTotalUnreadyCount` (3) unready nodes that are also more than
  `maxTotalUnreadyPercentage` (45) of the cluster stop all scaling (clusterstate.go
  IsClusterHealthy); a node unready for `MaxNodeStartupTime` (15 minutes) after its creation
  counts as unready.
"""

from __future__ import annotations

STARTUP_TAINT_PREFIX = "startup-taint.cluster-autoscaler.kubernetes.io/"
IGNORE_TAINT_PREFIX = "ignore-taint.cluster-autoscaler.kubernetes.io/"
STATUS_TAINT_PREFIX = "status-taint.cluster-autoscaler.kubernetes.io/"
# Taints the autoscaler puts on nodes it is removing (utils/taints: ToBeDeletedTaint).
TO_BE_DELETED_TAINT = "ToBeDeletedByClusterAutoscaler"
TEMPLATE_STABILIZATION_SECONDS = 60
MAX_NODE_STARTUP_SECONDS = 15 * 60
OK_TOTAL_UNREADY_COUNT = 3
MAX_TOTAL_UNREADY_PERCENTAGE = 45
AZURE_GPU_LABEL = "kubernetes.azure.com/accelerator"
