"""What every check shares: the problem it reports, and small helpers."""

from __future__ import annotations

from dataclasses import dataclass, field

# Namespaces AKS and its add-ons own; a team must not claim them.
RESERVED_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease", "gatekeeper-system"})


def _n(value: int) -> str:
    return f"{value:,}"


@dataclass(frozen=True, order=True)
class ConfigProblem:
    key: str
    reason: str
    # A problem that causes others (an address space overlapping another's makes its subnets fall
    # outside it): listed first.
    cause: bool = field(default=False, compare=False)

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"


# Azure rejects a 21st federated identity credential on one managed identity.
MAX_FEDERATED_CREDENTIALS = 20
