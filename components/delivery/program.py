"""The delivery project's composition: the state backend, the hub's custom roles, and each
environment's access (planning/delivery.py decides every name, role and grant)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pulumi
import pulumi_azure_native
import pulumi_azuread
import pulumi_github
from pulumi_azure_native import authorization

from components.delivery.access import EnvironmentAccess, EnvironmentAccessArgs, SubscriptionFeatures, custom_role
from components.delivery.entra import ServingApplications, ServingApplicationsArgs
from components.delivery.github import GitHubDelivery, GitHubDeliveryArgs
from components.delivery.hub import MinimalHubArgs, MinimalHubNetwork
from components.delivery.state import StateBackend, StateBackendArgs
from components.platform.context import own_hub_zones
from components.platform.groups import unit_groups
from planning import delivery as plan
from planning.entra_applications import ServedApplication, served_applications
from planning.hub import hub_ids, minimal_hub
from planning.layers import LAYERS
from planning.naming import Naming
from stackconfig.delivery import DELIVERY_NAMESPACE, DeliveryConfig
from validation.checks import ConfigProblem
from validation.delivery import DELIVERY_REFERENCE, parse_delivery_config
from validation.loader import ConfigError, current_stack_config, parse_platform_config
from validation.stackfile import available_stacks, read_stack_config, stack_file

REPOSITORY = Path(__file__).resolve().parent.parent.parent


def delivery_names(config: DeliveryConfig) -> plan.Delivery:
    return plan.Delivery(
        prefix=config.prefix,
        project=config.project,
        subject_prefix=config.subject_prefix,
        state_subscription=config.state.subscription_id,
        resource_group=config.resource_group,
        storage_account=config.storage_account,
        key_vault=config.key_vault,
        dns_zones_resource_group_id=hub_ids(config).zones_group_id,
        hub_vnet_id=hub_ids(config).vnet_id,
    )


def deliver(config: DeliveryConfig, environments: Mapping[str, plan.EnvironmentAccess]) -> None:
    names = delivery_names(config)
    tags = {"managed-by": "delivery", "purpose": f"pulumi delivery for {config.repository}", **config.tags}
    providers: dict[str, pulumi_azure_native.Provider] = {}

    def provider(subscription: str) -> pulumi_azure_native.Provider:
        # One explicit provider per subscription: nothing depends on where `az account` points.
        if subscription not in providers:
            providers[subscription] = pulumi_azure_native.Provider(
                f"subscription-{subscription}", subscription_id=subscription
            )
        return providers[subscription]

    hub = hub_ids(config)
    # The hub first, when the delivery makes it: the state's endpoints, the hub roles and the
    # environments' zone grants all need it to exist.
    after_hub: list[pulumi.Resource] = []
    created_hub = minimal_hub(config)
    if created_hub is not None:
        subzones = sorted({z.rsplit("/", 1)[-1] for env in environments.values() for z in env.api_server_zone_ids})
        hub_network = MinimalHubNetwork(
            "hub",
            MinimalHubArgs(plan=created_hub, api_server_zones=subzones, tags=tags),
            opts=pulumi.ResourceOptions(provider=provider(str(created_hub.settings.subscription_id))),
        )
        after_hub.append(hub_network)
        # What the platform's stack files name (network.hub, operations.privateLinkScope).
        pulumi.export(
            "hub",
            {
                "virtualNetworkId": created_hub.vnet_id,
                "privateDnsZonesResourceGroupId": created_hub.group_id,
                "privateLinkScopeId": created_hub.scope_id,
            },
        )
    client = authorization.get_client_config_output()
    state = StateBackend(
        "state",
        StateBackendArgs(
            delivery=names,
            location=config.state.location,
            tenant_id=client.tenant_id,
            environments=list(environments),
            storage_sku=config.state.storage_sku,
            retention_days=config.state.retention_days,
            lock=config.state.lock,
            endpoint_subnet_id=hub.endpoint_subnet_id,
            endpoint_provider=provider(hub.endpoint_subnet_id.split("/")[2]),
            tags=tags,
            admin_group_object_id=config.admin_group_object_id,
            endpoint_resource_group=hub.endpoint_resource_group,
        ),
        opts=pulumi.ResourceOptions(provider=provider(config.state.subscription_id), depends_on=after_hub),
    )
    shared: dict[str, tuple[plan.CustomRoleSpec, authorization.RoleDefinition]] = {}
    writer = plan.state_writer_role(names)
    shared[writer.name] = (
        writer,
        custom_role("state-writer", writer, state, provider(config.state.subscription_id), depends_on=[state.vault]),
    )
    for key, spec in plan.state_key_roles(names).items():
        shared[spec.name] = (
            spec,
            custom_role(
                f"state-key-{key}", spec, state, provider(config.state.subscription_id), depends_on=[state.vault]
            ),
        )
    if any(env.peered for env in environments.values()):
        for key, spec in plan.hub_roles(names).items():
            shared[spec.name] = (
                spec,
                custom_role(f"hub-{key}", spec, state, provider(spec.scope.split("/")[2]), depends_on=after_hub),
            )
    group_name = names.resource_group
    for subscription in dict.fromkeys(env.subscription for env in environments.values()):
        SubscriptionFeatures(f"subscription-{subscription}", provider(subscription))
    pulumi.export("subscriptions", {name: env.subscription for name, env in environments.items()})
    worker_roles = {}
    entra_provider: pulumi_azuread.Provider | None = None
    client_ids: dict[str, pulumi.Output[str]] = {}
    for name, env in environments.items():
        env_plan = plan.environment_delivery(names, env)
        # platform:jobs.workerRoleId of the environment's stack file.
        worker_roles[name] = plan.environment_roles(names, env)["multikueue"].guid
        access = EnvironmentAccess(
            name,
            EnvironmentAccessArgs(
                plan=env_plan,
                subject_prefix=names.subject_prefix,
                resource_group_name=group_name,
                location=config.state.location,
                shared_roles=shared,
                provider=provider(env.subscription),
                tags=tags,
                depends_on=[state, *after_hub],
            ),
            opts=pulumi.ResourceOptions(provider=provider(config.state.subscription_id)),
        )
        pulumi.export(f"{name}ClientIds", access.client_ids)
        served: dict[str, pulumi.Output[str]] = {}
        if env.applications:
            if entra_provider is None:
                # The tenant the administrator signed in to, named: Graph writes go nowhere else.
                entra_provider = pulumi_azuread.Provider("entra", tenant_id=client.tenant_id)
            served = ServingApplications(
                f"serving-{name}",
                ServingApplicationsArgs(
                    applications=env.applications,
                    assign_callers=env.serving_callers,
                    provider=provider(env.subscription),
                ),
                opts=pulumi.ResourceOptions(providers=[entra_provider]),
            ).client_ids
        # What the environment's platform stack file takes from the delivery (docs/deploying.md).
        pulumi.export(
            f"{name}StackSettings",
            {
                "platform:subscriptionId": env.subscription,
                "platform:entra.planIdentity.tenantsPrincipalObjectId": access.principal_ids[
                    names.planner(name, "tenants")
                ],
                "platform:entra.planIdentity.clusterPrincipalObjectId": access.principal_ids[
                    names.planner(name, "cluster")
                ],
                "platform:jobs.workerRoleId": worker_roles[name],
                **{f"platform:serving.apis.{api}.applicationClientId": client_id for api, client_id in served.items()},
            },
        )
        client_ids.update(access.client_ids)
    if config.github:
        owner, repository = config.repository.split("/", 1)
        # The administrator's own token (GITHUB_TOKEN in their shell), never CI's or the config's.
        provider_github = pulumi_github.Provider("github", owner=owner)
        GitHubDelivery(
            "github",
            GitHubDeliveryArgs(
                owner=owner,
                repository=repository,
                settings=config.github,
                environments=list(environments),
                subscriptions={name: env.subscription for name, env in environments.items()},
                client_ids=client_ids,
                deployer={(env, layer): names.deployer(env, layer) for env in environments for layer in LAYERS},
                planner={(env, layer): names.planner(env, layer) for env in environments for layer in LAYERS},
                tenant_id=client.tenant_id,
                state_account=names.storage_account,
            ),
            opts=pulumi.ResourceOptions(providers=[provider_github]),
        )
    pulumi.export("workerRoleIds", worker_roles)
    pulumi.export("stateAccountId", state.account_id)
    pulumi.export("vaultUri", state.vault_uri)


def environment_access(config: DeliveryConfig, root: Path = REPOSITORY) -> dict[str, plan.EnvironmentAccess]:
    """Each environment as the delivery grants it, its hub use read from its platform stack file
    (one home for the hub and zones: the platform's config)."""
    found, problems = {}, []
    for name, env in config.environments.items():
        zones: list[str] = []
        peered = False
        groups: dict[tuple[str, str, str], None] = {}
        tenant_groups: dict[str, None] = {}
        grafana_group: str | None = None
        modes = set()
        applications: dict[str, ServedApplication] = {}
        for stack in env.platform_stacks or [name]:
            path = stack_file(root, stack)
            if not path.exists():
                problems.append(
                    ConfigProblem(
                        f"{DELIVERY_NAMESPACE}:environments.{name}.platformStacks",
                        f"there is no platform stack file {path.relative_to(root)}",
                    )
                )
                continue
            # Before the stack file holds what this run supplies (a new API's client ID).
            platform = parse_platform_config(read_stack_config(root, stack).values, stack=stack, for_delivery=True)
            if platform.environment != name:
                problems.append(
                    ConfigProblem(
                        f"{DELIVERY_NAMESPACE}:environments.{name}.platformStacks",
                        f"{path.relative_to(root)} is environment {platform.environment}, not {name}",
                    )
                )
            if platform.subscription_id.lower() != str(env.subscription_id).lower():
                # The deploy identities' grants must be where the units deploy (check_subscription).
                problems.append(
                    ConfigProblem(
                        f"{DELIVERY_NAMESPACE}:environments.{name}.subscriptionId",
                        f"{path.relative_to(root)} deploys to {platform.subscription_id} "
                        f"(platform:subscriptionId), not {env.subscription_id}",
                    )
                )
            peered = peered or platform.network.hub is not None
            for application in served_applications(platform):
                if applications.setdefault(application.api, application) != application:
                    problems.append(
                        ConfigProblem(
                            f"{DELIVERY_NAMESPACE}:environments.{name}.platformStacks",
                            f"its stack files serve API {application.api} differently: one environment, one "
                            "application per API",
                        )
                    )
            modes.add(platform.resource_groups)
            if platform.resource_groups == "delivery":
                naming = Naming(platform.prefix, platform.environment)
                for unit, unit_group_list in unit_groups(platform).items():
                    for group in unit_group_list:
                        groups[(unit.layer, group.name, group.region)] = None
                        if unit.layer == "cluster":
                            tenant_groups[group.name] = None
                identity = naming.identity_group(platform.primary_region)
                tenant_groups = {identity: None, **tenant_groups}
                grafana_group = naming.regional("rg", platform.primary_region, "ops")
            zones += [
                f"{hub_ids(config).zones_group_id}/providers/Microsoft.Network/privateDnsZones/{zone}"
                for zone in own_hub_zones(platform)
                if zone not in zones
            ]
        if len(modes) > 1:
            problems.append(
                ConfigProblem(
                    f"{DELIVERY_NAMESPACE}:environments.{name}.platformStacks",
                    "its stack files disagree on platform:resourceGroups: one environment, one owner of its groups",
                )
            )
        found[name] = plan.EnvironmentAccess(
            name,
            env.subscription_id,
            peered=peered,
            own_hub=env.own_hub,
            api_server_zone_ids=tuple(dict.fromkeys(zones)),
            reservation_scopes=tuple(env.capacity_reservation_scopes),
            resource_groups=tuple(groups),
            tenant_groups=tuple(tenant_groups),
            grafana_group=grafana_group,
            applications=tuple(applications.values()),
            serving_callers=env.serving_callers,
        )
    if problems:
        raise ConfigError(problems, reference=DELIVERY_REFERENCE)
    return found


def load_delivery() -> tuple[DeliveryConfig, dict[str, plan.EnvironmentAccess]]:
    """The validated config of the delivery stack being deployed, and its environments."""
    config = parse_delivery_config(current_stack_config())
    return config, environment_access(config)


def delivery_of(stack: str, environment: str, wanted: str | None = None) -> tuple[str, DeliveryConfig]:
    """The delivery stack (delivery/stacks/) whose `delivery:environments.<environment>` lists this platform stack
    (its `platformStacks`, by default the environment's own name)."""
    found, problems = [], []
    for name in [wanted] if wanted else available_stacks(REPOSITORY / "delivery"):
        try:
            config = parse_delivery_config(read_stack_config(REPOSITORY / "delivery", name).values)
        except ConfigError as error:
            problems.append(f"delivery/stacks/Pulumi.{name}.yaml: {error}")
            continue
        env = config.environments.get(environment)
        if env is not None and stack in (env.platform_stacks or [environment]):
            found.append((name, config))
    if len(found) != 1:
        which = ", ".join(name for name, _ in found) or "none"
        raise LookupError(
            f"{len(found)} delivery stacks grant stack {stack} (environment {environment}): {which}; name one with "
            "--delivery-stack" + ("".join(f"\n{p}" for p in problems))
        )
    return found[0]
