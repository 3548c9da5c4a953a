"""Which resource providers and preview features each subscription of a delivery needs Registered.

Resource provider registration is a POST with no azure-native resource
(pulumi/pulumi-azure-native#1075), so it is the one step of the delivery outside the delivery
project: scripts/register-providers registers what this module lists, and scripts/doctor.py
checks it is Registered. Where each list comes from:
- each environment's subscription: every provider the platform's resources use
  (planning/delivery.py, RESOURCE_PROVIDERS, which tests/test_permissions.py keeps equal to the
  plans' resource types), and the preview features (FEATURES) the delivery project registers;
- the subscription of the hub's private DNS zones: Microsoft.ContainerService and
  Microsoft.Network. A private cluster whose zone is in another subscription needs
  Microsoft.ContainerService in both (learn.microsoft.com/azure/aks/private-clusters,
  "Considerations for private DNS"), and a private endpoint needs Microsoft.Network in the
  subscriptions of both its VNet and its target
  (learn.microsoft.com/azure/private-link/private-endpoint-overview);
- the subscription of the hub's endpoint subnet: Microsoft.Network (the state's endpoints);
- the state subscription: the providers of the delivery's own resources.
"""

from __future__ import annotations

from collections.abc import Iterable

from planning.delivery import RESOURCE_PROVIDERS
from planning.hub import hub_ids
from stackconfig.delivery import DeliveryConfig

# The delivery's own resources; Microsoft.Network too: the account and vault are the targets of
# private endpoints, and both subscriptions of an endpoint need it (private-endpoint-overview).
STATE_PROVIDERS = ("Microsoft.KeyVault", "Microsoft.ManagedIdentity", "Microsoft.Network", "Microsoft.Storage")
HUB_PROVIDERS = ("Microsoft.ContainerService", "Microsoft.Network")


def subscription_of(resource_id: str) -> str:
    """`/subscriptions/<id>/...` -> the subscription, lower case (as Azure compares them)."""
    return resource_id.split("/")[2].lower()


def _selected(config: DeliveryConfig, environments: Iterable[str] | None) -> list[str]:
    names = list(config.environments) if environments is None else list(environments)
    unknown = [name for name in names if name not in config.environments]
    if unknown:
        raise KeyError(f"not an environment of the delivery: {', '.join(unknown)} ({', '.join(config.environments)})")
    return names


def registrations(
    config: DeliveryConfig, environments: Iterable[str] | None = None, hub_zone_groups: Iterable[str] = ()
) -> dict[str, list[str]]:
    """Subscription (lower case) -> the providers to register there, in order: each selected
    environment's (default: every environment of the delivery), the hub's, the state's.
    `hub_zone_groups`: resource groups of other private DNS zones the environments register in
    (a platform stack's `network.hub.privateDnsZonesResourceGroupId`, when it is not the
    delivery's)."""
    wanted: dict[str, list[str]] = {}

    def want(subscription: str, namespaces: tuple[str, ...]) -> None:
        listed = wanted.setdefault(subscription.lower(), [])
        listed += [n for n in namespaces if n not in listed]

    for name in _selected(config, environments):
        want(config.environments[name].subscription_id, RESOURCE_PROVIDERS)
    hub = hub_ids(config)
    for group in (hub.zones_group_id, *hub_zone_groups):
        want(subscription_of(group), HUB_PROVIDERS)
    want(subscription_of(hub.endpoint_subnet_id), ("Microsoft.Network",))
    want(config.state.subscription_id, STATE_PROVIDERS)
    return wanted


def feature_subscriptions(config: DeliveryConfig, environments: Iterable[str] | None = None) -> list[str]:
    """The subscriptions (lower case, each once) whose features must be Registered: the
    environments'; each needs every one of planning/delivery.py's FEATURES."""
    return list(
        dict.fromkeys(config.environments[name].subscription_id.lower() for name in _selected(config, environments))
    )
