"""The base of every config section and the value types the sections share."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints
from pydantic.alias_generators import to_camel

from facts.gpu import GPU_VM_SIZES, known_sizes


class Model(BaseModel):
    """Base for every config section: camelCase keys, unknown keys rejected, immutable."""

    model_config = ConfigDict(
        extra="forbid",
        alias_generator=to_camel,
        populate_by_name=True,
        frozen=True,
        str_strip_whitespace=True,
    )


EnvironmentName = Literal["dev", "staging", "prod"]
Zone = Literal["1", "2", "3"]
Uuid = Annotated[
    str,
    StringConstraints(pattern=r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"),
]


def _unique(values: list[str]) -> list[str]:
    seen: set[str] = set()
    for value in values:
        if str(value).lower() in seen:
            raise ValueError(
                f"lists {value} twice; name each once (a second grant of the same name stops a deploy midway)"
            )
        seen.add(str(value).lower())
    return values


# Group object IDs: each becomes role assignments named after it, so a repeat is a duplicate URN.
UuidList = Annotated[list[Uuid], AfterValidator(_unique)]
# Azure region names as ARM spells them: eastus2, southcentralus, swedencentral.
RegionName = Annotated[str, StringConstraints(pattern=r"^[a-z]+[0-9]*$", max_length=24)]
# Keys that become parts of resource names: short, lowercase, DNS-safe.
ShortName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,9}$")]
# AKS: Linux agent pool names are 1-12 lowercase alphanumerics starting with a letter.
AgentPoolName = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9]{0,11}$")]
# Kubernetes namespace: a DNS-1123 label.
NamespaceName = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63)]
VmSize = Annotated[str, StringConstraints(pattern=r"^Standard_[A-Za-z0-9_]+$")]
# "33%" or an absolute node count such as "5".
# A count up to a pool's 1,000 nodes or a percentage up to 100 (AKS's AgentPoolUpgradeSettings:
# "an integer or a percentage of the pool"): bounded here, so that no value overflows the
# capacity arithmetic (planning/addressing.py) instead of failing as config.
MaxSurge = Annotated[str, StringConstraints(pattern=r"^(100%|[1-9][0-9]?%|1000|[1-9][0-9]{0,2})$")]
# Go-style durations as the AKS autoscaler profile takes them: "10s", "10m", "1h".
Duration = Annotated[str, StringConstraints(pattern=r"^[0-9]+(s|m|h)$")]


def duration_seconds(value: str) -> int:
    """A `Duration` (`90s`, `30m`, `24h`) in seconds."""
    return int(value[:-1]) * {"s": 1, "m": 60, "h": 3600}[value[-1]]


# A Kubernetes taint as AKS takes it: key=value:Effect.
Taint = Annotated[
    str,
    StringConstraints(pattern=r"^[A-Za-z0-9][-A-Za-z0-9_./]*=[-A-Za-z0-9_.]*:(NoSchedule|PreferNoSchedule|NoExecute)$"),
]
KUBERNETES_VERSION = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*))?$")


def _kubernetes_version(value: str) -> str:
    if not KUBERNETES_VERSION.match(value):
        raise ValueError(
            f"{value!r} is not a Kubernetes version: use major.minor (e.g. 1.33) or major.minor.patch (e.g. 1.33.2)"
        )
    return value


KubernetesVersion = Annotated[str, AfterValidator(_kubernetes_version)]


def _gpu_vm_size(value: str) -> str:
    if value not in GPU_VM_SIZES:
        raise ValueError(f"{value!r} is not a supported GPU VM size; known sizes: {known_sizes()}")
    return value


GpuVmSizeName = Annotated[str, AfterValidator(_gpu_vm_size)]
# The MIG profiles of facts/gpu.py (a test holds them equal), spelt out for type checkers.
MigProfile = Literal["MIG1g", "MIG2g", "MIG3g", "MIG4g", "MIG7g"]
CapacityReservationGroupId = Annotated[
    str,
    StringConstraints(
        pattern=r"(?i)^/subscriptions/[0-9a-f-]{36}/resourceGroups/[-\w._()]+"
        r"/providers/Microsoft\.Compute/capacityReservationGroups/[-\w._]+$"
    ),
]
