"""Entry point for `pulumi up -s <env>`: validate the stack's config, build the platform."""

import pulumi

from components.platform import Platform, PlatformArgs
from planning.workloads import workload_context
from validation import load_environment

config = load_environment()
platform = Platform(f"platform-{config.environment}", PlatformArgs(config))

pulumi.export(
    "clusters",
    {
        key: {
            "name": cluster.cluster_name,
            "resourceGroup": cluster.resource_group_name,
            "oidcIssuerUrl": cluster.oidc_issuer_url,
        }
        for key, cluster in platform.clusters.items()
    },
)
# Client IDs of the workload identities, for pods outside the platform's service accounts.
pulumi.export("workloadIdentities", platform.identities.client_ids)
pulumi.export("registryLoginServer", platform.registry.login_server)
# Per Kafka client: bootstrap servers per cluster, security protocol, SASL mechanism, token
# scope, topics. No secret: clients sign in with their workload identity.
pulumi.export("kafkaClients", platform.kafka_connections)
# What the golden workloads (examples/) are filled in with: pools, accounts, queues, namespaces.
pulumi.export("workloadContext", workload_context(config))
# Kubeconfigs log in through kubelogin (Entra ID); they hold no credentials, but stay secret.
pulumi.export("kubeconfigs", {key: cluster.kubeconfig for key, cluster in platform.clusters.items()})
