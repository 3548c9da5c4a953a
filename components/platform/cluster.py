"""A cluster's unit: AKS and its pools, admission, the GPU stack and health, Kueue, MultiKueue's
worker and refresher, the Strimzi operator and its Kafka, stream processing's operator, the
Lustre CSI driver and the training namespaces' volumes.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import pulumi

from components.admission import ClusterAdmission, ClusterAdmissionArgs
from components.alerting import ClusterAlerts, ClusterAlertsArgs
from components.cluster import AksCluster, AksClusterArgs, ClusterNetwork
from components.collection_rules import ClusterMonitoring
from components.dispatch import (
    DispatchRefresher,
    DispatchRefresherArgs,
    DispatchWorker,
    DispatchWorkerArgs,
)
from components.gpu_health import GpuHealth, GpuHealthArgs
from components.gpu_stack import GpuStack, GpuStackArgs
from components.kafka import (
    KafkaClientSpec,
    MirrorIdentity,
    ReplicationEndpoint,
    StrimziKafka,
    StrimziKafkaArgs,
)
from components.lustre_csi import LustreCsi, LustreCsiArgs
from components.observability import ClusterLogSettings, ClusterLogSettingsArgs
from components.outputs import ClusterOutputs, DataOutputs, FoundationOutputs
from components.platform.context import (
    PRIVILEGED_NAMESPACES,
    Context,
    alert_routes,
    cluster_api_server_zone,
)
from components.serving import ServingGateway, ServingGatewayArgs
from components.streaming import StreamingPlatform, StreamingPlatformArgs
from components.tenancy import ClusterAdmins, ClusterAdminsArgs
from planning import alerts as alerts_plan
from planning import capacity, cold_start
from planning import dispatch as dispatch_plan
from planning import kafka as kafka_plan
from planning import lustre_csi as lustre_plan
from planning import serving as serving_plan
from planning import serving_scaling as scaling_plan
from planning import streaming as streaming_plan
from planning.charts import SYSTEM_POOL_TOLERATION
from planning.cluster_traffic import (
    GPU_HEALTH_NAMESPACE,
    cluster_traffic,
)
from planning.network_policy import NamespaceTraffic
from planning.priorities import PLATFORM_CRITICAL
from stackconfig.model import PlatformConfig


def build_cluster(ctx: Context, key: str, foundation: FoundationOutputs, data: DataOutputs) -> ClusterOutputs:
    config, naming = ctx.config, ctx.naming
    cluster = config.clusters[key]
    region = cluster.region
    subnet_ids = foundation.subnet_ids[region]
    login_server = naming.registry_login_server()
    aks = AksCluster(
        f"aks-{key}",
        AksClusterArgs(
            create_groups=ctx.create_groups,
            naming=naming,
            key=key,
            cluster=cluster,
            network=config.network,
            subnets=ClusterNetwork(
                system_subnet_id=subnet_ids[f"{key}-system"],
                nodes_subnet_id=subnet_ids[f"{key}-nodes"],
                api_server_subnet_id=subnet_ids.get(f"{key}-apiserver"),
                pods_subnet_id=subnet_ids.get(f"{key}-pods"),
                vnet_id=foundation.vnet_ids[region],
                api_server_dns_zone_id=foundation.dns_zone_ids.get(cluster_api_server_zone(config, region)),
            ),
            admin_group_object_ids=list(config.entra.admin_group_object_ids),
            tenant_id=config.entra.tenant_id or ctx.deployer.tenant_id,
            subscription_id=ctx.deployer.subscription_id,
            kubelogin_mode=config.entra.kubelogin_mode,
            operations=config.operations,
            # The cluster's own region's workspaces: its metrics and logs keep flowing when
            # another region is down.
            monitoring=ClusterMonitoring(
                log_analytics_workspace_id=foundation.workspaces(region)[0],
                monitor_workspace_id=foundation.workspaces(region)[1],
                monitor_workspace_region=region,
                data_collection_endpoint_id=foundation.collection_endpoint(region),
                container_logs=config.operations.container_logs,
            ),
            protect=config.protect,
            lock=config.lock_stateful_resources,
            key_vault_retention_days=config.key_vault.soft_delete_retention_days,
            alert_routes=alert_routes(config, foundation.action_group_ids),
            upgrade_channel=config.upgrade_channel(key),
            node_os_channel=config.node_os_channel(key),
            registry_id=foundation.registry_id,
            fleet_managed=config.has_fleet,
            dedicated_pools={
                **(kafka_plan.kafka_node_pools(config) if key in config.kafka_clusters() else {}),
                **(streaming_plan.streaming_node_pools(config) if key in config.streaming_clusters() else {}),
            },
            egress_ips=foundation.egress_ips[region],
            network_ready=[
                link
                for (zone, vnet), link in foundation.dns_links.items()
                if cluster.api_server.private
                and zone == cluster_api_server_zone(config, region)
                and vnet == naming.regional("vnet", region)
            ],
            tags={**ctx.tags, "cluster": key},
            mesh_revisions=serving_plan.revisions(config) if key in serving_plan.serving_clusters(config) else (),
            keda=key in scaling_plan.keda_clusters(config),
        ),
        opts=ctx.opts,
    )
    provider = aks.kubernetes_provider
    # Also the DNS links: a node resolves the registry only once its VNet is linked.
    pull_ready = [*foundation.after, aks.kubelet_pull_grant]
    traffic = cluster_traffic(config, key)
    if config.operations.container_logs.enabled:
        ClusterLogSettings(
            f"logs-{key}",
            ClusterLogSettingsArgs(container_logs=config.operations.container_logs),
            provider=provider,
            opts=ctx.opts,
        )
    admission = ClusterAdmission(
        f"admission-{key}",
        ClusterAdmissionArgs(
            cluster_key=key,
            cluster_id=aks.cluster_id,
            login_server=login_server,
            settings=config.admission,
            privileged_namespaces=[ns for ns in traffic if ns in PRIVILEGED_NAMESPACES],
            training_namespaces=[ns for team in config.teams.values() for ns in team.training_namespaces],
        ),
        provider=provider,
        opts=ctx.opts,
    )
    kueue = None
    gpu_pools = capacity.plan_cluster(config, key).gpu_pools
    dispatcher = key in config.jobs.dispatchers
    if gpu_pools or dispatcher:
        gpu_stack = GpuStack(
            f"kueue-{key}" if dispatcher else f"gpu-{key}",
            GpuStackArgs(
                cluster=cluster,
                gpu_pools=gpu_pools,
                login_server=login_server,
                pull_ready=pull_ready,
                traffic=traffic,
                priority_class=PLATFORM_CRITICAL.name,
                ready=admission.ready,
                multikueue_origin=dispatch_plan.origin(key) if dispatcher else None,
                pods_ready_timeout=cold_start.pods_ready_timeout(
                    max(
                        cold_start.cluster_cold_start(config.clusters[k], config.operations.gpu_health)
                        for k in ([key] + (list(config.dispatch_workers()) if dispatcher else []))
                    )
                ),
            ),
            provider=provider,
            opts=ctx.opts,
        )
        kueue = gpu_stack.kueue
        if gpu_stack.gpu_operator is not None:
            GpuHealth(
                f"gpu-health-{key}",
                GpuHealthArgs(
                    cluster=cluster,
                    settings=config.operations.gpu_health,
                    login_server=login_server,
                    traffic=traffic[GPU_HEALTH_NAMESPACE],
                    ready=[gpu_stack.gpu_operator, *pull_ready],
                ),
                provider=provider,
                opts=ctx.opts,
            )
    lustre = None
    if key in lustre_plan.lustre_clusters(config):
        lustre = LustreCsi(
            f"lustre-csi-{key}",
            LustreCsiArgs(
                cluster=cluster,
                login_server=login_server,
                traffic=traffic[lustre_plan.NAMESPACE],
                mgs_address=data.lustre_mgs_addresses[region],
                volumes=lustre_plan.training_volumes(config, key),
                ready=[*pull_ready, *admission.ready],
            ),
            provider=provider,
            opts=ctx.opts,
        )
    ClusterAdmins(
        f"admins-{key}",
        ClusterAdminsArgs(
            environment=config.environment,
            cluster_key=key,
            cluster_id=aks.cluster_id,
            admin_group_object_ids=list(config.entra.admin_group_object_ids),
            subscription_id=ctx.deployer.subscription_id,
        ),
        opts=ctx.opts,
    )
    kafka = None
    if _hosts_strimzi(config, key):
        kafka = _strimzi(ctx, key, foundation, provider, pull_ready, traffic, admission)
    streaming: list[pulumi.Resource] = []
    if key in config.streaming_clusters():
        platform = StreamingPlatform(
            f"streaming-{key}",
            StreamingPlatformArgs(
                cluster_key=key,
                config=config,
                login_server=login_server,
                priority_class=PLATFORM_CRITICAL.name,
                traffic=traffic,
                pull_ready=pull_ready,
                ready=admission.ready,
            ),
            provider=provider,
            opts=ctx.opts,
        )
        streaming = [platform.operator, *platform.namespaces.values()]
    ClusterAlerts(
        f"alerts-{key}",
        ClusterAlertsArgs(
            cluster_key=key,
            cluster_name=aks.cluster_name,
            resource_group_name=aks.resource_group_name,
            monitor_workspace_id=foundation.workspaces(region)[1],
            region=region,
            groups=alerts_plan.rule_groups(config, key),
            routes=alert_routes(config, foundation.action_group_ids),
            tags={**ctx.tags, "cluster": key},
        ),
        opts=ctx.opts,
    )
    if key in config.dispatch_workers():
        assert config.jobs.worker_role_id is not None, "validation requires platform:jobs.workerRoleId"
        DispatchWorker(
            f"dispatch-worker-{key}",
            DispatchWorkerArgs(
                environment=config.environment,
                cluster_key=key,
                cluster_id=aks.cluster_id,
                subscription_id=ctx.deployer.subscription_id,
                principal_id=foundation.identity_principal_ids[dispatch_plan.DISPATCH_WORKLOAD],
                worker_role_id=str(config.jobs.worker_role_id),
                namespaces=dispatch_plan.worker_namespaces(dispatch_plan.worker_pools(config)[key], dict(config.teams)),
            ),
            provider=provider,
            opts=ctx.opts,
        )
    if key in config.jobs.dispatchers:
        DispatchRefresher(
            f"dispatch-refresher-{key}",
            DispatchRefresherArgs(
                workers=[*config.dispatch_workers(), *config.dispatch_sites()],
                client_id=foundation.identity_client_ids[dispatch_plan.DISPATCH_WORKLOAD],
                tenant_id=config.entra.tenant_id or ctx.deployer.tenant_id,
                login_server=login_server,
                priority_class=PLATFORM_CRITICAL.name,
                tolerations=[SYSTEM_POOL_TOLERATION],
                ready=[kueue] if kueue is not None else [],
            ),
            provider=provider,
            opts=ctx.opts,
        )
    if key in serving_plan.serving_clusters(config):
        tenant = config.entra.tenant_id or ctx.deployer.tenant_id
        ServingGateway(
            f"serving-{key}",
            ServingGatewayArgs(
                cluster_key=key,
                render=partial(serving_plan.gateway_manifests, config, key, login_server=login_server),
                client_id=foundation.identity_client_ids[serving_plan.CERTIFICATE_WORKLOAD],
                tenant_id=tenant,
            ),
            provider=provider,
            opts=ctx.opts,
        )
    return ClusterOutputs(
        cluster_id=aks.cluster_id,
        oidc_issuer_url=aks.oidc_issuer_url,
        kubeconfig=aks.kubeconfig,
        kafka_id=kafka.id if kafka is not None else None,
        provider=provider,
        kafka=kafka,
        kueue=kueue,
        streaming=streaming,
        lustre=lustre,
        name=aks.cluster_name,
        resource_group_name=aks.resource_group_name,
    )


def _hosts_strimzi(config: PlatformConfig, key: str) -> bool:
    return config.kafka is not None and config.kafka.engine == "strimzi" and key in config.kafka_clusters()


def _kafka_clients(config: PlatformConfig, key: str, principal_ids: Mapping[str, pulumi.Input[str]]):
    kafka = config.kafka
    assert kafka is not None
    return [
        KafkaClientSpec(client, config.workloads[client].namespace, spec.authentication, principal_ids[client])
        for client, spec in kafka.clients.items()
        # Where it runs and where it fails over to: a client that moves finds its user there;
        # and the Kafka of the sites it runs at.
        if key in config.identity_clusters(client)
        or any(kafka_plan.site_host(config, site) == key for site in config.workloads[client].sites)
    ]


def _ca_readers(config: PlatformConfig, key: str) -> list[str]:
    """The plan identities whose previews read this Kafka's CA certificate: the tenants' (its
    clients' copies), and, in an environment with sites, the cluster layer's (a site's baseline
    copies its host's). Bound before any site has a client, so the change that gives a site its
    first client previews with the read it needs (the host's unit deploys after that change)."""
    plan = config.entra.plan_identity
    if plan is None:
        return []
    readers = [plan.tenants_principal_object_id]
    if config.on_prem_clusters:
        readers.append(plan.cluster_principal_object_id)
    return [str(reader) for reader in readers if reader is not None]


def _mirror_identity(config: PlatformConfig, foundation: FoundationOutputs) -> MirrorIdentity | None:
    if not kafka_plan.mirror_clusters(config):
        return None
    workload = kafka_plan.MIRROR_WORKLOAD
    return MirrorIdentity(foundation.identity_client_ids[workload], foundation.identity_principal_ids[workload])


def _strimzi(
    ctx: Context,
    key: str,
    foundation: FoundationOutputs,
    provider: Any,
    pull_ready: list[pulumi.Resource],
    traffic: dict[str, NamespaceTraffic],
    admission: ClusterAdmission,
) -> pulumi.CustomResource:
    config = ctx.config
    kafka = config.kafka
    assert kafka is not None
    mirrors = kafka_plan.mirror_clusters(config)
    region = config.clusters[key].region
    strimzi = StrimziKafka(
        f"kafka-{key}",
        StrimziKafkaArgs(
            cluster_key=key,
            kafka=kafka,
            clients=_kafka_clients(config, key, foundation.identity_principal_ids),
            # Managed identities, and so their tokens, belong to the subscription's tenant.
            tenant_id=ctx.deployer.tenant_id,
            remote_clusters=[other for other in mirrors if other != key],
            mirror=_mirror_identity(config, foundation),
            replication=ReplicationEndpoint(
                bootstrap_address=kafka_plan.replication_bootstrap_address(config, key),
                subnet_name=ctx.naming.regional("snet", region, f"{key}-nodes"),
                peer_ranges=kafka_plan.mirror_peer_ranges(config, key) + kafka_plan.site_peer_ranges(config, key),
            )
            if kafka_plan.remote_listener(config, key)
            else None,
            login_server=ctx.naming.registry_login_server(),
            pull_ready=pull_ready,
            protect=config.protect,
            traffic=traffic[kafka_plan.KAFKA_NAMESPACE],
            ready=admission.ready,
            ca_readers=_ca_readers(config, key),
            ca_certificates=[kafka_plan.cluster_ca_secret(c) for c in config.kafka_clusters()],
            exporter_groups=scaling_plan.exporter_groups(config, key),
        ),
        provider=provider,
        opts=ctx.opts,
    )
    return strimzi.kafka
