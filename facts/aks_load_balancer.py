"""The Service annotations AKS's cloud provider reads to shape an Azure load balancer
(cloud-provider-azure, "LoadBalancer annotations": learn.microsoft.com/azure/aks/internal-lb and
cloud-provider-azure.sigs.k8s.io/topics/loadbalancer/#loadbalancer-annotations)."""

# An internal load balancer, in the named subnet of the cluster's VNet, at a pinned address.
INTERNAL_LB = "service.beta.kubernetes.io/azure-load-balancer-internal"
INTERNAL_LB_SUBNET = "service.beta.kubernetes.io/azure-load-balancer-internal-subnet"
LB_IPV4 = "service.beta.kubernetes.io/azure-load-balancer-ipv4"
