"""What an environment needs of Azure before its first deploy, beside its quota (quota.py):
its subscriptions reachable, their providers and features Registered, the hub's zones, links and
monitor scope, and the delivery's state, keys, identities and federated credentials.

Every answer is an ARM GET, `az rest --method get --url <resource ID>?api-version=<version>`
(az rest prefixes a URL without a host with the cloud's ARM endpoint:
learn.microsoft.com/cli/azure/reference-index#az-rest), with the API version of each
resource's REST reference below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from planning.delivery import FEATURES, GITHUB_AUDIENCE, GITHUB_ISSUER, Delivery, IdentitySpec
from planning.doctor import Answer, Finding, answer, items, unreadable
from planning.hub import hub_ids
from planning.providers import registrations, subscription_of
from stackconfig.delivery import DeliveryConfig
from stackconfig.model import PlatformConfig

# learn.microsoft.com/rest/api/...: resources/subscriptions/get, resources/providers/get,
# resources/features/get, resources/resource-groups/get, virtualnetwork/virtual-networks/get,
# dns/privatednszones/private-zones/get and virtual-network-links/list,
# monitor/private-link-scopes/get, storagerp/storage-accounts/get-properties and
# blob-containers/get, keyvault/keyvault/vaults/get and keys/get,
# managedidentity/user-assigned-identities/get and federated-identity-credentials/list.
API_VERSIONS = {
    "subscription": "2022-12-01",
    "provider": "2021-04-01",
    "feature": "2021-07-01",
    "group": "2021-04-01",
    "vnet": "2024-05-01",
    "dns": "2024-06-01",
    "scope": "2021-07-01-preview",
    "storage": "2023-05-01",
    "vault": "2023-07-01",
    "identity": "2023-01-31",
}
HUB_DOC = 'docs/deploying.md, "The hub"'
DELIVERY_DOC = 'docs/deploying.md, "The delivery project"'


def arm(resource_id: str, api: str) -> str:
    """The path `az rest --method get --url` reads a resource (or a list) at."""
    return f"{resource_id}?api-version={API_VERSIONS[api]}"


@dataclass(frozen=True)
class Identity:
    name: str
    id: str
    subject: str  # the one federated credential subject it trusts


@dataclass(frozen=True)
class AzureExpectations:
    environment: str
    stack: str  # the platform stack file (stacks/Pulumi.<stack>.yaml)
    delivery_stack: str  # delivery/stacks/Pulumi.<delivery_stack>.yaml
    subscriptions: Mapping[str, str]  # subscription (lower case) -> what it holds
    providers: Mapping[str, tuple[str, ...]]  # subscription -> providers to be Registered
    feature_subscriptions: tuple[str, ...]  # each needs planning/delivery.py's FEATURES Registered
    hub_vnet_id: str | None
    zones_group_id: str | None  # the hub's shared zones; None: the environment makes its own
    zones: tuple[str, ...]  # the zones it needs there, each linked to the hub VNet
    monitor_scope_id: str | None  # the hub's Azure Monitor private link scope it joins
    resource_group_id: str
    storage_id: str
    container_id: str
    vault_id: str
    key_ids: tuple[str, ...]
    identities: tuple[Identity, ...]
    # The units' resource groups the delivery creates (platform:resourceGroups: delivery).
    unit_group_ids: tuple[str, ...] = ()


def azure_expectations(
    *,
    stack: str,
    delivery_stack: str,
    platform: PlatformConfig,
    delivery: DeliveryConfig,
    names: Delivery,
    identities: Sequence[IdentitySpec],
    zones: Sequence[str],
    unit_group_ids: Sequence[str] = (),
) -> AzureExpectations:
    """One environment's needs. `names`: the delivery's names (components/delivery/program.py,
    delivery_names); `identities`: its identities (planning/delivery.py, environment_delivery);
    `zones`: the private DNS zones its stack needs (components/platform/context.py,
    private_dns_zones), in the hub's zones group when it has one."""
    environment = platform.environment
    subscription = delivery.environments[environment].subscription_id.lower()
    hub = platform.network.hub
    zones_group = hub.private_dns_zones_resource_group_id if hub else None
    scope = platform.operations.private_link_scope
    monitor_scope = scope.scope_id if scope.enabled and scope.scope_id else None
    holds: dict[str, list[str]] = {}
    for held, what in (
        (subscription, f"{environment}'s resources"),
        (hub.virtual_network_id if hub else None, "the hub VNet"),
        (zones_group, "the hub's private DNS zones"),
        (monitor_scope, "the hub's Azure Monitor private link scope"),
        (delivery.state.subscription_id, "the delivery's state, keys and identities"),
        (hub_ids(delivery).endpoint_subnet_id, "the state's private endpoints"),
    ):
        if held:
            # A subscription ID, or the ID of a resource in it.
            holds.setdefault(subscription_of(held) if "/" in held else held.lower(), []).append(what)
    layers = list(dict.fromkeys(spec.layer for spec in identities))
    return AzureExpectations(
        environment=environment,
        stack=stack,
        delivery_stack=delivery_stack,
        subscriptions={sub: "; ".join(dict.fromkeys(what)) for sub, what in holds.items()},
        providers={
            sub: tuple(namespaces)
            for sub, namespaces in registrations(delivery, [environment], [zones_group] if zones_group else []).items()
        },
        feature_subscriptions=(subscription,),
        hub_vnet_id=hub.virtual_network_id if hub else None,
        zones_group_id=zones_group,
        zones=tuple(zones) if zones_group else (),
        monitor_scope_id=monitor_scope,
        resource_group_id=names.group_id,
        storage_id=names.storage_id,
        container_id=names.container_id(environment),
        vault_id=names.vault_id,
        key_ids=tuple(names.key_id(environment, layer) for layer in layers),
        unit_group_ids=tuple(unit_group_ids),
        identities=tuple(
            Identity(
                spec.name,
                f"{names.group_id}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/{spec.name}",
                spec.subject(names.subject_prefix),
            )
            for spec in identities
        ),
    )


def zone_id(expect: AzureExpectations, zone: str) -> str:
    return f"{expect.zones_group_id}/providers/Microsoft.Network/privateDnsZones/{zone}"


def arm_reads(expect: AzureExpectations) -> list[str]:
    """Every ARM path the Azure checks read, in the order they are reported."""
    reads = [arm(f"/subscriptions/{sub}", "subscription") for sub in expect.subscriptions]
    for sub, namespaces in expect.providers.items():
        reads += [arm(f"/subscriptions/{sub}/providers/{namespace}", "provider") for namespace in namespaces]
    for sub in expect.feature_subscriptions:
        reads += [arm(_feature_id(sub, namespace, feature), "feature") for namespace, feature in FEATURES]
    if expect.hub_vnet_id:
        reads.append(arm(expect.hub_vnet_id, "vnet"))
    for zone in expect.zones:
        reads += [arm(zone_id(expect, zone), "dns"), arm(f"{zone_id(expect, zone)}/virtualNetworkLinks", "dns")]
    if expect.monitor_scope_id:
        reads.append(arm(expect.monitor_scope_id, "scope"))
    reads += [arm(expect.resource_group_id, "group"), arm(expect.storage_id, "storage")]
    reads += [arm(expect.container_id, "storage"), arm(expect.vault_id, "vault")]
    reads += [arm(key, "vault") for key in expect.key_ids]
    reads += [arm(group, "group") for group in expect.unit_group_ids]
    for identity in expect.identities:
        reads += [arm(identity.id, "identity"), arm(f"{identity.id}/federatedIdentityCredentials", "identity")]
    return reads


def _feature_id(subscription: str, namespace: str, feature: str) -> str:
    return f"/subscriptions/{subscription}/providers/Microsoft.Features/providers/{namespace}/features/{feature}"


def reachable(expect: AzureExpectations, arm_answers: Mapping[str, Answer]) -> set[str]:
    return {sub for sub in expect.subscriptions if answer(arm_answers, arm(f"/subscriptions/{sub}", "subscription")).ok}


def _not_checked(check: str, subscription: str) -> Finding:
    return Finding(
        check,
        f"not checked: subscription {subscription} is not reachable",
        "reach it first (the subscriptions check above says how), then run the doctor again",
    )


def check_subscriptions(expect: AzureExpectations, arm_answers: Mapping[str, Answer]) -> list[Finding]:
    findings = []
    for sub, holds in expect.subscriptions.items():
        found = answer(arm_answers, arm(f"/subscriptions/{sub}", "subscription"))
        where = f"subscription {sub} ({holds})"
        fix = (
            "`az account list --all --output table` lists what your sign-in reaches: ask for Reader there, or "
            f"correct the ID (delivery/stacks/Pulumi.{expect.delivery_stack}.yaml, stacks/Pulumi.{expect.stack}.yaml)"
        )
        problem = unreadable("subscriptions", found, where, fix)
        if problem:
            findings.append(
                Finding(
                    "subscriptions", f"{where} is not reachable ({found.status}: {found.message or 'not found'})", fix
                )
            )
        elif (found.body or {}).get("state", "Enabled") != "Enabled":
            findings.append(
                Finding(
                    "subscriptions",
                    f"{where} is {found.body['state']}",
                    "deploy into an Enabled subscription: its owner re-enables it (billing), or correct the ID",
                )
            )
    return findings


def check_providers(expect: AzureExpectations, arm_answers: Mapping[str, Answer]) -> list[Finding]:
    """Providers scripts/register-providers registers, and features the delivery project does."""
    findings = []
    reached = reachable(expect, arm_answers)
    register = f"`scripts/register-providers --stack {expect.delivery_stack}`"
    for sub, namespaces in expect.providers.items():
        for namespace in namespaces if sub in reached else ():
            found = answer(arm_answers, arm(f"/subscriptions/{sub}/providers/{namespace}", "provider"))
            fix = f"{register} (every provider the delivery needs), or `az provider register --namespace {namespace} --subscription {sub}`"
            problem = unreadable("providers", found, f"resource provider {namespace} in subscription {sub}", fix)
            state = (found.body or {}).get("registrationState") if found.ok else None
            if problem or state != "Registered":
                findings.append(
                    problem
                    or Finding("providers", f"resource provider {namespace} is {state} in subscription {sub}", fix)
                )
    for sub in expect.feature_subscriptions:
        for namespace, feature in FEATURES if sub in reached else ():
            found = answer(arm_answers, arm(_feature_id(sub, namespace, feature), "feature"))
            state = ((found.body or {}).get("properties") or {}).get("state") if found.ok else None
            if state == "Registered":
                continue
            waiting = state in ("Registering", "Pending")
            fix = (
                f"wait until it shows Registered (`az feature show --namespace {namespace} --name {feature} "
                f"--subscription {sub}`), then run {register} again so it reaches {namespace}"
                if waiting
                else f"the delivery project registers it (`pulumi up -s {expect.delivery_stack}` in delivery/, "
                f"{DELIVERY_DOC}), or `az feature register --namespace {namespace} --name {feature} --subscription "
                f"{sub}`; once it shows Registered, run {register} again so it reaches {namespace}"
            )
            findings.append(
                unreadable("providers", found, f"feature {namespace}/{feature} in subscription {sub}", fix)
                or Finding("providers", f"feature {namespace}/{feature} is {state} in subscription {sub}", fix)
            )
    return findings


def check_hub(expect: AzureExpectations, arm_answers: Mapping[str, Answer]) -> list[Finding]:
    if expect.hub_vnet_id is None:
        return []
    findings: list[Finding] = []
    config = f"stacks/Pulumi.{expect.stack}.yaml"
    reached = reachable(expect, arm_answers)
    for held in (expect.hub_vnet_id, expect.zones_group_id or expect.hub_vnet_id):
        if subscription_of(held) not in reached:
            return [_not_checked("hub", subscription_of(held))]
    problem = unreadable(
        "hub",
        answer(arm_answers, arm(expect.hub_vnet_id, "vnet")),
        f"the hub VNet {expect.hub_vnet_id}",
        f"the hub's owner creates it, or correct platform:network.hub.virtualNetworkId in {config} ({HUB_DOC})",
    )
    findings += [problem] if problem else []
    group = expect.zones_group_id or ""
    sub, group_name = subscription_of(group) if group else "", group.rsplit("/", 1)[-1]
    hub_vnet = (expect.hub_vnet_id or "").lower()
    link = (
        "`az network private-dns link vnet create --subscription {sub} --resource-group {group} --zone-name {zone} "
        "--name {name} --virtual-network {vnet} --registration-enabled false`"
    )
    for zone in expect.zones:
        create = (
            f"the hub's owner creates it and links it to the hub VNet ({HUB_DOC}; an API server subzone is "
            f"`hubRequests.apiServerZones`): `az network private-dns zone create --subscription {sub} "
            f"--resource-group {group_name} --name {zone}`, then "
            + link.format(sub=sub, group=group_name, zone=zone, name="hub", vnet=expect.hub_vnet_id)
        )
        problem = unreadable(
            "hub", answer(arm_answers, arm(zone_id(expect, zone), "dns")), f"private DNS zone {zone} in {group}", create
        )
        if problem:
            findings.append(problem)
            continue
        links = answer(arm_answers, arm(f"{zone_id(expect, zone)}/virtualNetworkLinks", "dns"))
        linked = {
            str(((entry.get("properties") or {}).get("virtualNetwork") or {}).get("id", "")).lower()
            for entry in items(links)
        }
        fix = f"the hub's owner links it ({HUB_DOC}): " + link.format(
            sub=sub, group=group_name, zone=zone, name="hub", vnet=expect.hub_vnet_id
        )
        problem = unreadable("hub", links, f"the VNet links of {zone}", fix)
        if problem or hub_vnet not in linked:
            findings.append(
                problem
                or Finding(
                    "hub", f"private DNS zone {zone} in {group} is not linked to the hub VNet {expect.hub_vnet_id}", fix
                )
            )
    if expect.monitor_scope_id:
        problem = unreadable(
            "hub",
            answer(arm_answers, arm(expect.monitor_scope_id, "scope")),
            f"the hub's Azure Monitor private link scope {expect.monitor_scope_id}",
            "the hub's owner creates it, or correct platform:operations.privateLinkScope.scopeId in "
            f"{config}: the environment joins that scope, and its foundation fails without it "
            '(docs/operations.md, "Private ingestion: one Azure Monitor Private Link Scope per DNS")',
        )
        findings += [problem] if problem else []
    return findings


def check_delivery(expect: AzureExpectations, arm_answers: Mapping[str, Answer]) -> list[Finding]:
    """The state account, its container, the vault and keys, the identities and their credentials."""
    group = expect.resource_group_id.rsplit("/", 1)[-1]
    state_subscription = subscription_of(expect.resource_group_id)
    if state_subscription not in reachable(expect, arm_answers):
        return [_not_checked("delivery", state_subscription)]
    findings = []
    up = (
        f"an administrator runs `pulumi up -s {expect.delivery_stack}` in delivery/ ({DELIVERY_DOC}; "
        f"{expect.environment} must be in delivery:environments of delivery/stacks/Pulumi.{expect.delivery_stack}.yaml)"
    )
    for resource_id, api, what in (
        (expect.resource_group_id, "group", "the delivery's resource group"),
        (expect.storage_id, "storage", "the state storage account"),
        (expect.container_id, "storage", f"the state container of {expect.environment}"),
        (expect.vault_id, "vault", "the state key vault"),
        *((key, "vault", "the state key") for key in expect.key_ids),
        # A unit deploys into its groups and cannot make them (a new cluster, region or the fleet
        # needs the delivery run first: docs/operations.md, "Adding or removing a unit").
        *((group, "group", "the unit resource group") for group in expect.unit_group_ids),
    ):
        problem = unreadable("delivery", answer(arm_answers, arm(resource_id, api)), f"{what} {resource_id}", up)
        findings += [problem] if problem else []
    for identity in expect.identities:
        problem = unreadable(
            "delivery", answer(arm_answers, arm(identity.id, "identity")), f"identity {identity.name}", up
        )
        if problem:
            findings.append(problem)
            continue
        credentials = answer(arm_answers, arm(f"{identity.id}/federatedIdentityCredentials", "identity"))
        trusted = [
            entry.get("properties") or {}
            for entry in items(credentials)
            if (entry.get("properties") or {}).get("subject") == identity.subject
        ]
        fix = (
            f"{up}; or by hand: `az identity federated-credential create --subscription {state_subscription} "
            f"--resource-group {group} --identity-name {identity.name} --name github --issuer {GITHUB_ISSUER} "
            f"--subject {identity.subject} --audiences {GITHUB_AUDIENCE}`"
        )
        problem = unreadable("delivery", credentials, f"the federated credentials of {identity.name}", fix)
        ok = any(c.get("issuer") == GITHUB_ISSUER and GITHUB_AUDIENCE in (c.get("audiences") or []) for c in trusted)
        # Any other credential is another way in (a pull request's subject, another issuer).
        others = [
            f"{(entry.get('properties') or {}).get('issuer')} {(entry.get('properties') or {}).get('subject')}"
            for entry in items(credentials)
            if (entry.get("properties") or {}).get("subject") != identity.subject
        ]
        if not problem and others:
            findings.append(
                Finding(
                    "delivery",
                    f"identity {identity.name} also trusts {', '.join(sorted(others))}: another way to sign in as it",
                    f"`az identity federated-credential delete --subscription {state_subscription} --resource-group "
                    f"{group} --identity-name {identity.name} --name <name>` for each (the delivery makes one only)",
                )
            )
        if problem or not ok:
            findings.append(
                problem
                or Finding(
                    "delivery",
                    f"identity {identity.name} has no federated credential for GitHub's {identity.subject} "
                    f"(issuer {GITHUB_ISSUER}, audience {GITHUB_AUDIENCE})",
                    fix,
                )
            )
    return findings
