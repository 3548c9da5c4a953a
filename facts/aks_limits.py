"""AKS and Azure limits the address plan and pool layout must respect.

Source: AKS quotas and limits (learn.microsoft.com/azure/aks/quotas-skus-regions) and
Azure virtual network docs; see ../shared/reference/azure-facts.md.
"""

MAX_NODES_PER_POOL = 1_000
MAX_NODES_PER_CLUSTER = 5_000
MAX_POOLS_PER_CLUSTER = 100
MAX_PODS_PER_NODE = 250
# Azure keeps the network address, the broadcast address and three more in every subnet.
AZURE_RESERVED_ADDRESSES_PER_SUBNET = 5
# Azure CNI Overlay hands every node a fixed /24 of the pod CIDR.
OVERLAY_NODE_PREFIX = 24
# API server VNet integration needs a delegated subnet of at least this size.
API_SERVER_SUBNET_MAX_PREFIX = 28
# The service CIDR must be smaller than a /12 (AKS rejects larger ones).
SERVICE_CIDR_MIN_PREFIX = 12
# AKS cannot use these for the service range, the pod range or the cluster VNet.
FORBIDDEN_RANGES = ("169.254.0.0/16", "172.30.0.0/16", "172.31.0.0/16", "192.0.2.0/24")
# A public API server takes at most this many authorized IP ranges.
MAX_AUTHORIZED_IP_RANGES = 200
# Authorized ranges broader than this are the internet in all but name (0.0.0.0/1 + 128.0.0.0/1).
MIN_AUTHORIZED_IP_PREFIX = 8
