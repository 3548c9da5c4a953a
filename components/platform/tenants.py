"""The tenants unit: the workloads' federated credentials and grants (Cosmos DB's data roles too), team namespaces and RBAC,
queues, Kafka topics and users, MirrorMaker, Flink jobs, MultiKueue's dispatch.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

import pulumi

from components.cosmos_db import CosmosDataAccess, CosmosDataAccessArgs
from components.dispatch import (
    ClusterAccess,
    JobDispatch,
    JobDispatchArgs,
)
from components.event_hubs import EventHubsClients, EventHubsClientsArgs
from components.gpu_stack import TeamQueues, TeamQueuesArgs
from components.kafka import (
    KafkaAccess,
    KafkaAccessArgs,
    KafkaMirror,
    KafkaMirrorArgs,
    MirrorSource,
)
from components.lustre_csi import LustreClaims, LustreClaimsArgs
from components.outputs import ClusterOutputs, DataOutputs, FoundationOutputs
from components.platform.cluster import _kafka_clients, _mirror_identity
from components.platform.context import (
    Context,
    vault_key,
    workload_grants,
)
from components.postgresql import PostgresAccess, PostgresAccessArgs
from components.serving import ServedApis, ServedApisArgs
from components.serving_scaling import ServingScalers, ServingScalersArgs
from components.streaming import StreamingJobs, StreamingJobsArgs
from components.tenancy import ClusterTenancy, ClusterTenancyArgs, ServiceAccountSpec
from components.workload_identity import (
    Grant,
    WorkloadAccess,
    WorkloadAccessArgs,
    WorkloadSpec,
)
from facts import istio, keda
from planning import capacity, site_baseline
from planning import cosmosdb as cosmos_plan
from planning import dispatch as dispatch_plan
from planning import kafka as kafka_plan
from planning import lustre_csi as lustre_plan
from planning import postgresql as pg_plan
from planning import serving as serving_plan
from planning import serving_scaling as scaling_plan
from planning import streaming as streaming_plan
from planning.cluster_traffic import (
    KUEUE_NAMESPACE,
    cluster_traffic,
)
from planning.naming import (
    storage_account_name,
)
from planning.workloads import storage_locations


def build_tenants(
    ctx: Context,
    foundation: FoundationOutputs,
    data: DataOutputs,
    clusters: Mapping[str, ClusterOutputs],
) -> dict[str, Any]:
    """The tenants' unit; returns each Kafka client's connection info."""
    config, naming = ctx.config, ctx.naming
    mirrors = kafka_plan.mirror_clusters(config)
    workloads = [
        WorkloadSpec(
            name=workload,
            namespace=spec.namespace,
            service_account=spec.service_account,
            issuers={c: clusters[c].oidc_issuer_url for c in config.identity_clusters(workload)},
            grants=workload_grants(config, workload, data, foundation.key_vault_ids),
            # On-premises sites: their Arc issuer, from config (docs/hybrid.md).
            sites={
                s: (
                    config.on_prem_clusters[s].connected_cluster_name,
                    str(config.on_prem_clusters[s].oidc_issuer_url),
                )
                for s in spec.sites
            },
        )
        for workload, spec in config.workloads.items()
    ]
    if mirrors:
        # MirrorMaker signs in to every cluster's Kafka with an identity of its own.
        workloads.append(
            WorkloadSpec(
                name=kafka_plan.MIRROR_WORKLOAD,
                namespace=kafka_plan.KAFKA_NAMESPACE,
                service_account=kafka_plan.MIRROR_SERVICE_ACCOUNT,
                issuers={c: clusters[c].oidc_issuer_url for c in mirrors},
                grants=[],
            )
        )
    if config.jobs.dispatchers:
        # The dispatchers' refresher signs in as the environment's MultiKueue identity.
        workloads.append(
            WorkloadSpec(
                name=dispatch_plan.DISPATCH_WORKLOAD,
                namespace=KUEUE_NAMESPACE,
                service_account=dispatch_plan.TOKEN_JOB,
                issuers={c: clusters[c].oidc_issuer_url for c in config.jobs.dispatchers},
                grants=[],
            )
        )
    if config.serving is not None:
        # The gateways' certificate sync reads each serving team's certificate, in each serving
        # region's vault, and nothing else.
        regions = dict.fromkeys(config.clusters[c].region for c in serving_plan.serving_clusters(config))
        workloads.append(
            WorkloadSpec(
                name=serving_plan.CERTIFICATE_WORKLOAD,
                namespace=istio.INGRESS_NAMESPACE,
                service_account=serving_plan.CERTIFICATE_SYNC,
                issuers={c: clusters[c].oidc_issuer_url for c in serving_plan.serving_clusters(config)},
                grants=[
                    Grant(
                        "Key Vault Secrets User",
                        pulumi.Output.concat(foundation.key_vault_ids[region], "/secrets/", certificate),
                        f"{vault_key(config, region)}/secrets/{certificate}",
                    )
                    for region in regions
                    for certificate in (
                        serving_plan.certificate_name(config, team) for team in serving_plan.serving_teams(config)
                    )
                ],
            )
        )
    if scaling_plan.keda_clusters(config):
        # KEDA's operator signs in as the scaler identity on the clusters that scale.
        workloads.append(
            WorkloadSpec(
                name=scaling_plan.SCALER_WORKLOAD,
                namespace=keda.OPERATOR_NAMESPACE,
                service_account=keda.OPERATOR_SERVICE_ACCOUNT,
                issuers={c: clusters[c].oidc_issuer_url for c in scaling_plan.keda_clusters(config)},
                # Its one role, on the workspaces, is the foundation's grant (both are its own).
                grants=[],
            )
        )
    workload_access = WorkloadAccess(
        "workloads",
        WorkloadAccessArgs(
            naming=naming,
            workloads=workloads,
            identity_names=foundation.identity_names,
            principal_ids=foundation.identity_principal_ids,
            identity_resource_group=foundation.identity_resource_group,
            subscription_id=ctx.deployer.subscription_id,
        ),
        opts=ctx.opts,
    )
    grants = cosmos_plan.data_grants(config)
    if grants:
        assert data.cosmos_db_account_id is not None  # config validation: grants need the account
        CosmosDataAccess(
            "cosmos-access",
            CosmosDataAccessArgs(
                environment=config.environment,
                account_id=data.cosmos_db_account_id,
                account_name=cosmos_plan.account_name(config),
                resource_group_name=naming.databases_group(config.primary_region),
                grants=grants,
                principal_ids=foundation.identity_principal_ids,
            ),
            opts=ctx.opts,
        )
    tenant_id = config.entra.tenant_id or ctx.deployer.tenant_id
    if config.postgresql is not None:
        PostgresAccess(
            "postgresql-access",
            PostgresAccessArgs(
                host=pg_plan.host(pg_plan.server_name(config)),
                tenant_id=tenant_id,
                grants=pg_plan.table_grants(config),
                principal_ids=foundation.identity_principal_ids,
                reader_object_id=pg_plan.reader_object_id(config),
                databases=list(config.postgresql.databases),
            ),
            opts=ctx.opts,
        )
    namespaces: dict[str, dict[str, pulumi.Resource]] = {}
    tenancies: dict[str, pulumi.Resource] = {}
    for key in config.clusters:
        cluster = clusters[key]
        tenancy = ClusterTenancy(
            f"tenancy-{key}",
            ClusterTenancyArgs(
                environment=config.environment,
                cluster_key=key,
                cluster_id=cluster.cluster_id,
                teams=dict(config.teams),
                admin_group_object_ids=list(config.entra.admin_group_object_ids),
                service_accounts=[
                    ServiceAccountSpec(
                        workload,
                        spec.namespace,
                        spec.service_account,
                        foundation.identity_client_ids[workload],
                        kubernetes_api=spec.kubernetes_api,
                    )
                    for workload, spec in config.workloads.items()
                    if key in config.identity_clusters(workload)
                ],
                tenant_id=tenant_id,
                subscription_id=ctx.deployer.subscription_id,
                traffic=cluster_traffic(config, key),
                made_elsewhere=frozenset(streaming_plan.streaming_namespaces(config))
                if key in config.streaming_clusters()
                else frozenset(),
                namespaces_ready=list(cluster.streaming),
                storage_locations=storage_locations(config, key),
            ),
            provider=cluster.provider,
            opts=ctx.opts,
        )
        namespaces[key] = dict(tenancy.namespaces)
        tenancies[key] = tenancy
        volumes = lustre_plan.training_volumes(config, key)
        if volumes:
            LustreClaims(
                f"lustre-claims-{key}",
                LustreClaimsArgs(
                    volumes=volumes,
                    namespaces=namespaces[key],
                    ready=[cluster.lustre] if cluster.lustre is not None else [],
                ),
                provider=cluster.provider,
                opts=ctx.opts,
            )
        gpu_pools = capacity.plan_cluster(config, key).gpu_pools
        if gpu_pools:
            TeamQueues(
                f"queues-{key}",
                TeamQueuesArgs(
                    cluster_key=key,
                    gpu_pools=gpu_pools,
                    teams=dict(config.teams),
                    kueue=cluster.kueue,
                    team_namespaces=namespaces[key],
                ),
                provider=cluster.provider,
                opts=ctx.opts,
            )
        if key in scaling_plan.keda_clusters(config):
            ServingScalers(
                f"serving-scalers-{key}",
                ServingScalersArgs(
                    cluster_key=key,
                    render=partial(scaling_plan.scaling_manifests, config, key),
                    client_id=foundation.identity_client_ids[scaling_plan.SCALER_WORKLOAD],
                    query_endpoint=foundation.prometheus_query_endpoints[config.clusters[key].region],
                    team_namespaces=namespaces[key],
                ),
                provider=cluster.provider,
                opts=ctx.opts,
            )
        served = serving_plan.api_manifests(config, key) if key in serving_plan.serving_clusters(config) else []
        if served:
            ServedApis(
                f"serving-apis-{key}",
                ServedApisArgs(cluster_key=key, manifests=served, team_namespaces=namespaces[key]),
                provider=cluster.provider,
                opts=ctx.opts,
            )
    if config.jobs.dispatchers:

        def access(key: str) -> ClusterAccess:
            ready = [r for r in (clusters[key].kueue, tenancies[key]) if r is not None]
            return ClusterAccess(clusters[key].provider, ready)

        workers = config.dispatch_workers()
        JobDispatch(
            "dispatch",
            JobDispatchArgs(
                dispatchers={key: access(key) for key in config.jobs.dispatchers},
                workers={key: access(key) for key in workers},
                worker_kubeconfigs={key: clusters[key].kubeconfig for key in workers},
                worker_pools=dispatch_plan.worker_pools(config),
                teams=dict(config.teams),
                team_namespaces=namespaces,
                site_quotas={key: site_baseline.site_quotas(config, key) for key in config.dispatch_sites()},
                site_endpoints={
                    key: (site.api_server.url, site.api_server.certificate_authority_data)
                    for key, site in config.on_prem_clusters.items()
                    if key in config.dispatch_sites()
                },
                site_scopes={
                    key: f"{str(site.api_server.token_audience).lower()}/.default"
                    for key, site in config.on_prem_clusters.items()
                    if key in config.dispatch_sites()
                },
            ),
            opts=ctx.opts,
        )
    kafka_access: dict[str, pulumi.Resource] = {}
    connections = _kafka_tenants(ctx, foundation, data, clusters, namespaces, kafka_access)
    for key in config.streaming_clusters():
        StreamingJobs(
            f"flink-{key}",
            StreamingJobsArgs(
                cluster_key=key,
                config=config,
                login_server=naming.registry_login_server(),
                account_name=storage_account_name(config, streaming_plan.CHECKPOINT_ACCOUNT),
                client_ids=foundation.identity_client_ids,
                # Managed identities, and so their tokens, belong to the subscription's tenant.
                tenant_id=ctx.deployer.tenant_id,
                event_hubs_namespace=data.event_hubs_namespace,
                # Within one stack, also the operator (its CRD) and the namespaces; across unit
                # stacks, the cluster's unit deploys first and is destroyed last.
                ready=[
                    workload_access,
                    tenancies[key],
                    *([kafka_access[key]] if key in kafka_access else []),
                    *clusters[key].streaming,
                ],
            ),
            provider=clusters[key].provider,
            opts=ctx.opts,
        )
    return connections


def _kafka_tenants(
    ctx: Context,
    foundation: FoundationOutputs,
    data: DataOutputs,
    clusters: Mapping[str, ClusterOutputs],
    namespaces: Mapping[str, Mapping[str, pulumi.Resource]],
    accesses: dict[str, pulumi.Resource],
) -> dict[str, Any]:
    """Kafka topics, users and CA copies per hosting cluster (into `accesses`), MirrorMaker
    between them; each client's connection info."""
    config = ctx.config
    kafka = config.kafka
    if kafka is None:
        return {}
    if kafka.engine == "eventhubs":
        assert data.event_hubs_namespace is not None
        EventHubsClients(
            "event-hubs-clients",
            EventHubsClientsArgs(
                bootstrap=pulumi.Output.from_input(data.event_hubs_namespace).apply(
                    lambda name: f"{kafka_plan.event_hubs_namespace_host(name)}:{kafka_plan.EVENT_HUBS_KAFKA_PORT}"
                ),
                namespaces={
                    key: list(
                        dict.fromkeys(
                            config.workloads[c].namespace for c in kafka.clients if key in config.identity_clusters(c)
                        )
                    )
                    for key in clusters
                },
                providers={key: cluster.provider for key, cluster in clusters.items()},
                team_namespaces=namespaces,
            ),
            opts=ctx.opts,
        )
        return {
            client: pulumi.Output.from_input(data.event_hubs_namespace).apply(
                partial(kafka_plan.connection_info, config, client)
            )
            for client in kafka.clients
        }
    mirrors = kafka_plan.mirror_clusters(config)
    mirror = _mirror_identity(config, foundation)
    for key in config.kafka_clusters():
        cluster = clusters[key]
        assert cluster.kafka_id is not None  # every hosting cluster exports its Kafka
        accesses[key] = KafkaAccess(
            f"kafka-access-{key}",
            KafkaAccessArgs(
                cluster_key=key,
                kafka=kafka,
                clients=_kafka_clients(config, key, foundation.identity_principal_ids),
                remote_clusters=[other for other in mirrors if other != key],
                mirror=mirror,
                kafka_id=cluster.kafka_id,
                protect=config.protect,
                kafka_resource=cluster.kafka,
                team_namespaces=dict(namespaces[key]),
            ),
            provider=cluster.provider,
            opts=ctx.opts,
        )
    for key in mirrors:
        assert mirror is not None  # made whenever there are mirrors
        KafkaMirror(
            f"kafka-mirror-{key}",
            KafkaMirrorArgs(
                cluster_key=key,
                kafka=kafka,
                sources=[
                    MirrorSource(
                        other,
                        kafka_plan.replication_bootstrap_address(config, other),
                        clusters[other].provider,
                        kafka_id=clusters[other].kafka_id or "",
                        kafka=clusters[other].kafka,
                    )
                    for other in mirrors
                    if other != key
                ],
                identity=mirror,
                # Managed identities, and so their tokens, belong to the subscription's tenant.
                tenant_id=ctx.deployer.tenant_id,
                local_kafka=clusters[key].kafka,
            ),
            provider=clusters[key].provider,
            opts=ctx.opts,
        )
    return {client: kafka_plan.connection_info(config, client) for client in kafka.clients}
