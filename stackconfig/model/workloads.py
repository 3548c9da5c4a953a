"""Workloads: their identity, namespace, grants and failover."""

from __future__ import annotations

from typing import Annotated, Optional

from pydantic import Field, StringConstraints

from stackconfig.model.base import (
    Model,
    NamespaceName,
    ShortName,
)
from stackconfig.model.data import (
    SecretName,
)
from stackconfig.model.kafka import (
    Access,
)

# A PostgreSQL grant's scope: `<database>` (its `public` schema) or `<database>/<schema>`.
PostgresScope = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{0,62}(/[a-z][a-z0-9_]{0,62})?$")]
# A Cosmos DB grant's scope: `<database>` or `<database>/<container>`.
CosmosScope = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9-]{0,62}(/[a-z][a-z0-9-]{0,62})?$")]


class WorkloadConfig(Model):
    """A workload that signs in to Azure with Entra ID workload identity (no secrets)."""

    team: ShortName = Field(description="A team of `platform:teams`.")
    namespace: NamespaceName = Field(description="One of that team's namespaces.")
    service_account: NamespaceName = Field(
        description="The Kubernetes service account (one workload per service account)."
    )
    clusters: Optional[list[ShortName]] = Field(
        default=None,
        description="Clusters it runs on, one federated credential each (at most 20). Unset: every cluster.",
    )
    failover_clusters: list[ShortName] = Field(
        default_factory=list,
        description="Clusters it moves to when its own fail (not among `clusters`): its identity trusts them, "
        "its service account and Kafka user exist there, idle until it lands; counted in the 20 "
        "federated credentials; the connection info lists what to connect to there.",
    )
    sites: list[ShortName] = Field(
        default_factory=list,
        description="On-premises clusters it runs on (`platform:onPremClusters` with `workloadIdentity`): its "
        "identity trusts each site's Arc issuer, one more federated credential each (counted in the 20).",
    )
    storage: dict[ShortName, dict[str, Access]] = Field(
        default_factory=dict,
        description="`{account: {container: read | write}}`: Storage Blob Data Reader (`read`) or Contributor"
        " (`write`) on exactly that container.",
    )
    key_vault_secrets: list[SecretName] = Field(
        default_factory=list,
        description="Secrets it reads (Key Vault Secrets User on each); create them before the deploy that "
        "grants them.",
    )
    cosmos_db: dict[CosmosScope, Access] = Field(
        default_factory=dict,
        description="`{<database> | <database>/<container>: read | write}` of `platform:cosmosDb`: Cosmos DB "
        "Built-in Data Reader (`read`) or Contributor (`write`) on exactly that database or container.",
    )
    postgresql: dict[PostgresScope, Access] = Field(
        default_factory=dict,
        description="`{<database> | <database>/<schema>: read | write}` of `platform:postgresql`: its role may "
        "read (SELECT) or write (SELECT, INSERT, UPDATE, DELETE) the tables of that database's `public` schema, "
        "or of the named schema.",
    )
    kubernetes_api: bool = Field(
        default=False,
        description="The workload calls the Kubernetes API: its service account mounts a token and its pods "
        "may reach the API server (otherwise neither).",
    )
