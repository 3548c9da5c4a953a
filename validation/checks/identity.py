"""Entra ID, teams and the Key Vault's grants."""

from __future__ import annotations

from collections.abc import Iterator

from stackconfig.keys import key
from stackconfig.model import (
    PlatformConfig,
)
from validation.checks.common import RESERVED_NAMESPACES, ConfigProblem


def check_identity(config: PlatformConfig) -> Iterator[ConfigProblem]:
    without_local = [n for n, c in config.clusters.items() if c.disable_local_accounts]
    if without_local and not config.entra.admin_group_object_ids:
        yield ConfigProblem(
            key("entra", "adminGroupObjectIds"),
            "is empty, but local accounts are disabled on "
            f"{', '.join(without_local)}: nobody could administer the cluster",
        )
    plan = config.entra.plan_identity
    strimzi = config.kafka is not None and config.kafka.engine == "strimzi"
    if plan is not None and strimzi and plan.tenants_principal_object_id is None:
        yield ConfigProblem(
            key("entra", "planIdentity", "tenantsPrincipalObjectId"),
            "is required with kafka.engine strimzi: previews of the tenants' stack read Kafka's CA "
            "certificates, which its plan identity may read only where the program grants it",
        )
    if plan is not None and strimzi and config.on_prem_clusters and plan.cluster_principal_object_id is None:
        yield ConfigProblem(
            key("entra", "planIdentity", "clusterPrincipalObjectId"),
            f"is required with sites ({', '.join(config.on_prem_clusters)}) and kafka.engine strimzi: previews of a "
            "site's unit read the CA certificate of its region's Kafka for its clients, which the cluster layer's "
            "plan identity may read only where the program grants it",
        )


def check_teams(config: PlatformConfig) -> Iterator[ConfigProblem]:
    owners: dict[str, str] = {}
    for team, spec in config.teams.items():
        for i, namespace in enumerate(spec.namespaces):
            namespace_key = key("teams", team, "namespaces", i)
            if namespace in RESERVED_NAMESPACES or namespace.startswith("kube-"):
                yield ConfigProblem(namespace_key, f"{namespace} is reserved for the cluster itself")
            elif namespace in owners:
                yield ConfigProblem(namespace_key, f"{namespace} already belongs to team {owners[namespace]}")
            else:
                owners[namespace] = team


def check_key_vault_grants(config: PlatformConfig) -> Iterator[ConfigProblem]:
    for name, workload in config.workloads.items():
        secrets = workload.key_vault_secrets
        duplicates = sorted({secret for secret in secrets if secrets.count(secret) > 1})
        if duplicates:
            yield ConfigProblem(key("workloads", name, "keyVaultSecrets"), f"lists {', '.join(duplicates)} twice")
