"""Admission: Azure Policy's pod security initiative and the platform's own policies."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from stackconfig.model.base import (
    Model,
)


class AzurePolicyConfig(Model):
    """The Azure Policy add-on's built-in pod security initiative, assigned on each cluster."""

    initiative: Literal["baseline", "restricted", "none"] = Field(
        default="baseline",
        description="The Azure Policy add-on's built-in pod security initiative assigned on each cluster: "
        "`baseline`, `restricted` or `none`.",
    )
    effect: Literal["Audit", "Deny"] = Field(
        default="Deny",
        description="`Deny` rejects violating pods (Gatekeeper); `Audit` only reports them in Azure Policy "
        "compliance, an explicit weakening. AKS's and the platform's privileged namespaces are excluded.",
    )


class AdmissionConfig(Model):
    """Admission control in workload (team) namespaces."""

    action: Literal["Deny", "Audit"] = Field(
        default="Deny",
        description="What the platform's ValidatingAdmissionPolicies do with a violating pod in a team "
        "namespace: `Deny` (rejected, audited) or `Audit` (admitted, audited, the client warned);"
        " dev audits.",
    )
    azure_policy: AzurePolicyConfig = Field(
        default_factory=AzurePolicyConfig,
        description="The Azure Policy add-on's built-in pod security initiative, assigned on each cluster.",
    )
