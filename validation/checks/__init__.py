"""Rules that relate several config fields, one module per capability: naming, compute (pools,
GPUs, capacity, fleets, upgrades), network, identity, data, cosmosdb, postgresql, lustre, onprem, kafka, streaming, operations, jobs.

Each check returns `ConfigProblem`s instead of raising, so that one run reports every
problem of a stack at once. Keys are written as a user finds them in the stack file:
`platform:clusters.prod1.subnets.nodes`.
"""

from __future__ import annotations

import re

from planning import streaming as streaming_plan
from stackconfig.model import PlatformConfig
from validation.checks.common import ConfigProblem as ConfigProblem
from validation.checks.compute import (
    check_cluster_capacity,
    check_fleet,
    check_gpu_pools,
    check_gpu_quotas,
    check_pools,
    check_upgrades,
    check_vm_sizes,
)
from validation.checks.cosmosdb import check_cosmos_db
from validation.checks.data import check_registry, check_storage, check_workloads
from validation.checks.identity import check_identity, check_key_vault_grants, check_teams
from validation.checks.jobs import check_jobs
from validation.checks.kafka import check_kafka
from validation.checks.lustre import check_lustre
from validation.checks.naming import (
    check_azure_names,
    check_resource_names,
    check_tag_rules,
    check_tags,
)
from validation.checks.network import (
    check_address_overlaps,
    check_api_servers,
    check_egress,
    check_isolation,
    check_regions,
    check_service_network,
    check_subnets,
)
from validation.checks.onprem import check_on_prem_clusters
from validation.checks.operations import check_alerts, check_monitoring
from validation.checks.postgresql import check_postgresql
from validation.checks.serving import check_serving
from validation.checks.streaming import check_streaming

CHECKS = (
    check_tag_rules,
    check_azure_names,
    check_vm_sizes,
    check_tags,
    check_regions,
    check_address_overlaps,
    check_subnets,
    check_service_network,
    check_pools,
    check_cluster_capacity,
    check_gpu_pools,
    check_gpu_quotas,
    check_fleet,
    check_egress,
    check_isolation,
    check_api_servers,
    check_identity,
    check_upgrades,
    check_teams,
    check_resource_names,
    check_storage,
    check_workloads,
    check_registry,
    check_key_vault_grants,
    check_cosmos_db,
    check_postgresql,
    check_lustre,
    check_on_prem_clusters,
    check_kafka,
    check_serving,
    check_jobs,
    check_alerts,
    check_monitoring,
)


def ordered(problems: set[ConfigProblem]) -> list[ConfigProblem]:
    """The problems that cause others first, then by key."""
    return sorted(problems, key=lambda problem: (not problem.cause, problem))


def find_problems(config: PlatformConfig) -> list[ConfigProblem]:
    """Every cross-field problem of a schema-valid config: the ones that cause others first,
    then by key.

    Flink jobs are checked as written, then (if they are sound) as what they expand into,
    workloads, Kafka clients and a checkpoint account (planning.streaming.expand), so that the
    identity, Kafka, storage and isolation rules hold for them too; those problems name the job."""
    problems = set(check_streaming(config))
    if problems or config.streaming is None:
        return ordered(problems | {problem for check in CHECKS for problem in check(config)})
    expanded = streaming_plan.expand(config)
    return ordered(
        {
            ConfigProblem(
                streaming_plan.derived_key(config, problem.key),
                # Keys the reason names too: `platform:storage.accounts.flink.sku` is the job's checkpoints' sku.
                re.sub(
                    r"platform:[\w.\[\]-]+", lambda m: streaming_plan.derived_key(config, m.group(0)), problem.reason
                ),
                cause=problem.cause,
            )
            for check in CHECKS
            for problem in check(expanded)
        }
    )
