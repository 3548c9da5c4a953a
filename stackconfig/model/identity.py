"""Entra ID: the admins, the tenant, the plan identity."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field

from stackconfig.model.base import (
    Model,
    Uuid,
    UuidList,
)


class PlanIdentityConfig(Model):
    """The read-only identities previews and the drift check run as (the delivery project's `<env>StackSettings` output gives the IDs).

    Each layer has one; those of the cluster and tenants layers read every kind the program
    manages through a custom role on the subscription, but no Secrets (Helm keeps its release
    records in ConfigMaps: planning/charts.py, HELM_DRIVER). The one Secret a preview reads is
    Kafka's CA certificate, which the tenants' previews copy to clients (and a site's previews
    into its baseline); the program lets those identities read those Secrets by name and nothing
    beside them.
    """

    tenants_principal_object_id: Uuid | None = Field(
        default=None,
        description="Object ID of the tenants layer's plan identity `id-<prefix>-plan-<env>-tenants` (the delivery "
        "project's `<env>StackSettings` output); with Strimzi, previews of the tenants' stack read Kafka's CA certificates in the "
        "`kafka` namespace, and the program lets it read those Secrets by name, never the CAs' keys beside them "
        "(required with `kafka.engine: strimzi`).",
    )
    cluster_principal_object_id: Uuid | None = Field(
        default=None,
        description="Object ID of the cluster layer's plan identity `id-<prefix>-plan-<env>-cluster` (the delivery "
        "project's `<env>StackSettings` output); previews of a site's unit read the CA certificate of the Kafka its "
        "workloads reach, which the program lets this identity read by name as the tenants' (required with sites and "
        "Strimzi).",
    )


class EntraConfig(Model):
    """Entra ID integration shared by every cluster of the environment."""

    admin_group_object_ids: UuidList = Field(
        default_factory=list,
        description="Entra groups that are cluster admins. Required while any cluster disables local accounts.",
    )
    tenant_id: Optional[Uuid] = Field(
        default=None, description="Tenant of the admin groups. Unset: the tenant of the identity running the deploy."
    )
    kubelogin_mode: Literal["azurecli", "workloadidentity"] = Field(
        default="azurecli",
        description="How the exported kubeconfig logs in: `azurecli` (reuses `az login`, for people and self-"
        "hosted runners) or `workloadidentity` (a federated token file, for jobs in Kubernetes); "
        "both non-interactive. CI keeps `azurecli` in the kubeconfig and overrides it with "
        "`AAD_LOGIN_METHOD=msi` (docs/deploying.md, \"Who signs in how\").",
    )
    plan_identity: Optional[PlanIdentityConfig] = Field(
        default=None,
        description="The read-only identity previews and the drift check run as (the delivery project's `<env>StackSettings` output gives "
        "both IDs). Unset: no such identity in this environment (previews then need the deploy "
        "identity's rights).",
    )
