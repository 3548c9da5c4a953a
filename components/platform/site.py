"""A site's unit (`cluster-<site>`, one per `platform:onPremClusters` key): what Azure holds for an
Arc-connected on-premises cluster (components/arc_site.py), in the connected cluster's group.
A site is a cluster of the cluster layer: its deploy identity's, deployed after the tenants in a
wave of its own (planning/layers.py), read by no other unit (the site's config is all they need).
It reads the cluster unit whose Kafka its clients reach, for that Kafka's CA certificate (a state
of its own layer).
"""

from __future__ import annotations

import pulumi
import yaml

from components.arc_site import ArcSite, ArcSiteArgs
from components.collection_rules import ClusterMonitoring
from components.kafka import cluster_ca_certificate
from components.outputs import ClusterOutputs, FoundationOutputs
from components.platform.context import PRIVATE_ENDPOINT_SUBNET, Context, alert_routes, data_plane_zones
from components.private_dns import PrivateEndpoints
from planning import dispatch as dispatch_plan
from planning import kafka as kafka_plan
from planning import site_baseline
from planning.naming import region_code


def build_site(
    ctx: Context, key: str, foundation: FoundationOutputs, kafka_host: ClusterOutputs | None = None
) -> tuple[ArcSite, pulumi.Output[dict[str, str]], pulumi.Output[str]]:
    """The site's Azure side; its baseline's files (planning/site_baseline.py), which its deploy
    job uploads (scripts/site_baseline.py); and the authentication configuration its API server
    takes to trust the dispatchers, which the site's operators install. `kafka_host`: the cluster
    whose Kafka the site's clients reach (kafka_plan.site_host), whose CA the baseline carries."""
    config = ctx.config
    kafka_ca: pulumi.Input[str] = ""
    host = kafka_plan.site_host(config, key)
    if key in kafka_plan.served_sites(config, host or ""):
        assert kafka_host is not None and kafka_host.kafka_id is not None and host is not None
        kafka_ca = cluster_ca_certificate(
            f"site-{key}-kafka-ca",
            host,
            kafka_host.kafka_id,
            pulumi.ResourceOptions.merge(ctx.opts, pulumi.ResourceOptions(provider=kafka_host.provider)),
        )
    site = config.on_prem_clusters[key]
    region = site.region
    log_analytics, monitor_workspace = foundation.workspaces(region)
    zones = foundation.dns_zone_ids if region == config.primary_region else foundation.regional_dns_zone_ids[region]
    training = sorted(
        namespace
        for namespace, team in site_baseline.site_job_namespaces(config, key).items()
        if namespace in config.teams[team].training_namespaces
    )
    principal = pulumi.Output.from_input(foundation.identity_principal_ids[dispatch_plan.DISPATCH_WORKLOAD])
    tenant = config.entra.tenant_id or ctx.deployer.tenant_id
    workloads = [name for name, spec in config.workloads.items() if key in spec.sites]
    documents = pulumi.Output.all(
        principal, tenant, kafka_ca, *(foundation.identity_client_ids[w] for w in workloads)
    ).apply(
        lambda values: site_baseline.baseline_documents(
            config,
            key,
            site_baseline.SiteIdentities(
                str(values[0]), str(values[1]), dict(zip(workloads, values[3:], strict=True)), str(values[2])
            ),
        )
    )
    # What the site's API server takes to trust the dispatchers (the operators install it).
    authentication = pulumi.Output.all(tenant, principal).apply(
        lambda values: yaml.safe_dump(
            site_baseline.authentication_config(
                str(values[0]).lower(), str(values[1]).lower(), str(site.api_server.token_audience).lower()
            ),
            sort_keys=False,
        )
    )
    site_resource = ArcSite(
        f"site-{key}",
        ArcSiteArgs(
            naming=ctx.naming,
            key=key,
            site=site,
            tenant_id=ctx.deployer.tenant_id,
            subscription_id=ctx.deployer.subscription_id,
            monitoring=ClusterMonitoring(
                log_analytics_workspace_id=log_analytics,
                monitor_workspace_id=monitor_workspace,
                monitor_workspace_region=region,
                data_collection_endpoint_id=foundation.collection_endpoint(region),
                container_logs=config.operations.container_logs,
            ),
            endpoints=PrivateEndpoints(
                region=region,
                subnet_id=foundation.subnet_ids[region][PRIVATE_ENDPOINT_SUBNET],
                zone_ids={zone: zones[zone] for zone in data_plane_zones(config)},
                suffix="" if region == config.primary_region else f"-{region_code(region)}",
            ),
            admission=config.admission,
            training_namespaces=training,
            recovery=config.storage,
            protect=config.protect,
            tags=ctx.tags,
            alert_routes=alert_routes(config, foundation.action_group_ids),
            baseline_digest=documents.apply(site_baseline.baseline_digest),
        ),
        opts=ctx.opts,
    )
    return site_resource, documents, authentication
