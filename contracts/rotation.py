"""What one deployment unit makes and a later one holds a copy of, walked across the deploy waves.

An environment deploys as waves of unit stacks (planning/layers.py). A credential-like value one
unit makes (a managed identity's client ID, object ID and name; a cluster's OIDC issuer, API
server and CA; a customer-managed key) is copied by the units after it: into service account
annotations, federated credentials, role assignments and bindings, ConfigMaps. If a deploy
replaces the original, Pulumi creates the new one, updates what depends on it in the same
stack, and deletes the old one at the end of that stack's update (create-before-delete, the
default), while a copy in a later wave still names the old one until that wave has run: for
hours, every consumer in between holds a dead copy (a service account signing in as a deleted
identity, a worker binding an object ID no token carries).

`handoffs` finds every such copy in an environment's unit plans by value: each unit's exported
values, searched in the inputs of every resource of a later wave (so a new consumer anywhere is
found without being listed). `walk` follows a replacement of each through the waves and reports
every step at which a consumer holds a copy whose original is gone. A producer that is protected
(`protect`, platform:protect) cannot be replaced by a deploy at all: `pulumi up` refuses, and the
rename is done in two phases by hand (docs/operations.md, "Renaming what later units copy").
Credentials that rotate on their own (Entra ID tokens, Strimzi's CAs) are walked over time in
tests/test_over_time.py instead.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from offline.engine import Plan
from offline.environment import EnvironmentPlan
from planning import dispatch
from planning.layers import Unit, parse_stack

IDENTITY = "azure-native:managedidentity:UserAssignedIdentity"
MANAGED_CLUSTER = "azure-native:containerservice:ManagedCluster"
KEY = "azure-native:keyvault:Key"


@dataclass(frozen=True)
class Original:
    """A value a unit exports that later units copy, and the resource it comes from."""

    what: str
    unit: Unit
    values: tuple[str, ...]
    protected: bool


@dataclass(frozen=True)
class Handoff:
    original: Original
    unit: Unit  # where the copy is
    resource: str  # the copy's resource (its logical name)


def units_of(environment: EnvironmentPlan) -> dict[Unit, Plan]:
    found = {}
    for stack, plan in environment.plans.items():
        _, unit = parse_stack(stack)
        assert unit is not None, stack
        found[unit] = plan
    return found


def _protected(plan: Plan, token: str, match: str) -> bool:
    resources = [r for r in plan.of_type(token) if match in json.dumps(r.inputs, default=str)]
    assert resources, f"no {token} matching {match}"
    return all(r.options.protect for r in resources)


def originals(environment: EnvironmentPlan) -> Iterator[Original]:
    """What the foundation and the cluster units export that a deploy could replace."""
    for unit, plan in units_of(environment).items():
        outputs = plan.outputs
        if unit.layer == "foundation":
            identities = outputs["identities"]
            for workload, name in identities["names"].items():
                values = (identities["clientIds"][workload], identities["principalIds"][workload], name)
                yield Original(f"identity {workload}", unit, values, _protected(plan, IDENTITY, name))
            for region, key in (outputs.get("storageKeys") or {}).items():
                name = key["keyId"].split("/keys/")[1].split("/")[0]
                yield Original(f"storage key {region}", unit, (key["keyId"],), _protected(plan, KEY, name))
        elif unit.layer == "cluster":
            # A replaced cluster has a new issuer and API server (its CA changes too, but only
            # the first two are unique to it in an offline plan).
            server, _ = dispatch.server_and_ca(outputs["kubeconfig"])
            endpoints = (outputs["oidcIssuerUrl"], server)
            protected = _protected(plan, MANAGED_CLUSTER, outputs["cluster"]["name"])
            yield Original(f"cluster {unit.cluster} (issuer, API server)", unit, endpoints, protected)


def handoffs(environment: EnvironmentPlan, waves: Sequence[Sequence[Unit]]) -> list[Handoff]:
    """Every resource of a later wave whose inputs hold a value an earlier unit exports."""
    wave_of = {unit: index for index, wave in enumerate(waves) for unit in wave}
    plans = units_of(environment)
    found = []
    for original in originals(environment):
        for unit, plan in plans.items():
            if wave_of[unit] <= wave_of[original.unit]:
                continue
            for resource in plan.resources:
                text = json.dumps(resource.inputs, default=str)
                if any(value in text for value in original.values):
                    found.append(Handoff(original, unit, resource.name))
    return found


def walk(found: Sequence[Handoff], waves: Sequence[Sequence[Unit]]) -> list[str]:
    """A deploy replacing each original in turn: at every wave from the one after its unit's
    until the copy's own has run, the copy names what no longer exists. Protected originals are
    not replaced (the deploy stops at their unit), so their copies stay valid throughout."""
    wave_of = {unit: index for index, wave in enumerate(waves) for unit in wave}
    dead = []
    for handoff in found:
        if handoff.original.protected:
            continue
        made, copied = wave_of[handoff.original.unit], wave_of[handoff.unit]
        for step in range(made + 1, copied + 1):
            dead.append(
                f"wave {step} ({', '.join(u.stack('') for u in waves[step]).replace('.', '')}): "
                f"{handoff.resource} in {handoff.unit.stack('').lstrip('.')} still names the old "
                f"{handoff.original.what}, deleted at the end of {handoff.original.unit.stack('').lstrip('.')}"
            )
    return dead
