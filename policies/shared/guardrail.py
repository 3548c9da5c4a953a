"""Building blocks shared by the platform's policy packs.

Each pack folder holds a symlink to this file, so a pack stays self-contained for
`pulumi preview --policy-pack policies/<pack>` while both packs share one implementation.

Every policy carries what a reviewer needs when it fires: a severity, remediation steps, and,
where one exists, the Azure Policy built-in it mirrors (so the same rule can be audited in Azure
after deployment). Every policy also accepts a `waiver` in its config: lowering a policy's
enforcement level in an environment's file comes with why, who approved it, and until when
(JSON has no comments, so the waiver is the comment, and the review prints it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from pulumi_policy import (
    PolicyComplianceFramework,
    PolicyConfigSchema,
    ResourceValidationPolicy,
    Severity,
    StackValidationPolicy,
)

# A waiver documents a relaxation in the enforcement file; the offline review lists them and
# fails on an expired one.
WAIVER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", "minLength": 10},
        "approvedBy": {"type": "string", "minLength": 3},
        "expires": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
    },
    "required": ["reason", "approvedBy", "expires"],
    "additionalProperties": False,
}

_POLICY_DEFINITION_URL = (
    "https://portal.azure.com/#view/Microsoft_Azure_Policy/PolicyDetailBlade/definitionId/"
    "%2Fproviders%2FMicrosoft.Authorization%2FpolicyDefinitions%2F{guid}"
)


@dataclass(frozen=True)
class BuiltIn:
    """The Azure Policy built-in definition a rule mirrors."""

    guid: str
    display_name: str

    def framework(self) -> PolicyComplianceFramework:
        return PolicyComplianceFramework(
            name="Azure Policy built-in", reference=self.guid, specification=self.display_name
        )

    @property
    def url(self) -> str:
        return _POLICY_DEFINITION_URL.format(guid=self.guid)


def _metadata(severity, remediation, builtin, config, tags) -> dict[str, Any]:
    """What every policy carries for a reviewer, and the config schema (with `waiver`)."""
    return {
        "severity": severity,
        "remediation_steps": remediation,
        "framework": builtin.framework() if builtin else None,
        "url": builtin.url if builtin else None,
        "config_schema": PolicyConfigSchema(properties={**(config or {}), "waiver": WAIVER_SCHEMA}),
        "tags": tags,
    }


def resource_policy(
    name: str,
    description: str,
    validate: Callable[..., None],
    *,
    severity: Severity,
    remediation: str,
    builtin: Optional[BuiltIn] = None,
    config: Optional[Mapping[str, dict[str, Any]]] = None,
    remediate: Optional[Callable[..., Any]] = None,
    tags: Optional[list[str]] = None,
) -> ResourceValidationPolicy:
    return ResourceValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        remediate=remediate,
        **_metadata(severity, remediation, builtin, config, tags),
    )


def stack_policy(
    name: str,
    description: str,
    validate: Callable[..., None],
    *,
    severity: Severity,
    remediation: str,
    builtin: Optional[BuiltIn] = None,
    config: Optional[Mapping[str, dict[str, Any]]] = None,
    tags: Optional[list[str]] = None,
) -> StackValidationPolicy:
    return StackValidationPolicy(
        name=name, description=description, validate=validate, **_metadata(severity, remediation, builtin, config, tags)
    )


def lookup(props: Mapping[str, Any], path: str, default: Any = None) -> Any:
    """`lookup(props, "apiServerAccessProfile.enablePrivateCluster")`: a nested value or `default`.

    Reading through the pulumi-policy proxy raises its UnknownValueError on a value computed
    during preview, which the analyzer reports as "can't run policy ... during preview".
    """
    value: Any = props
    for key in path.split("."):
        if not isinstance(value, Mapping) or key not in value:
            return default
        value = value[key]
    return value
