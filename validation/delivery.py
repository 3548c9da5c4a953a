"""Read the delivery project's `delivery:` config and stop cleanly on any problem."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from planning.layers import LAYERS
from stackconfig.delivery import DELIVERY_NAMESPACE, DeliveryConfig
from validation.checks import ConfigProblem
from validation.loader import ConfigError, _pydantic_problems

DELIVERY_REFERENCE = "docs/delivery-configuration.md"

# A stack of the delivery project may also configure its providers.
_KNOWN = (DELIVERY_NAMESPACE, "azure-native", "github", "pulumi")


def parse_delivery_config(raw: Mapping[str, Any]) -> DeliveryConfig:
    """Validate `delivery:` config given as {"delivery:state": <json or value>, ...}; raises
    ConfigError listing every problem with its key."""
    prefix = f"{DELIVERY_NAMESPACE}:"
    section: dict[str, Any] = {}
    problems = []
    for name, value in raw.items():
        namespace = name.split(":", 1)[0] if ":" in name else DELIVERY_NAMESPACE
        if namespace not in _KNOWN:
            problems.append(
                ConfigProblem(name, f"nothing reads the {namespace}: namespace (known: {', '.join(_KNOWN)})")
            )
        elif name.startswith(prefix):
            if isinstance(value, str) and value[:1] in ("{", "["):
                with contextlib.suppress(json.JSONDecodeError):
                    value = json.loads(value)
            section[name[len(prefix) :]] = value
    try:
        config = DeliveryConfig.model_validate(section)
    except ValidationError as error:
        problems += _pydantic_problems(error, DELIVERY_NAMESPACE)
        config = None
    if config is not None:
        problems += relational_problems(config)
    if problems or config is None:
        raise ConfigError(problems, reference=DELIVERY_REFERENCE)
    return config


def relational_problems(config: DeliveryConfig) -> list[ConfigProblem]:
    """What relates several keys, each named where it is wrong."""
    problems = []
    owners = [name for name, env in config.environments.items() if env.own_hub]
    for name in owners[1:]:
        problems.append(
            ConfigProblem(
                f"{DELIVERY_NAMESPACE}:environments.{name}.ownHub",
                f"{owners[0]} already has the hub to itself; at most one environment may (ownHub)",
            )
        )
    for name, env in config.environments.items():
        if env.subscription_id.lower() == config.state.subscription_id.lower():
            # Contributor there (every layer's deployer) would reach the deploy identities'
            # federated credentials and the state account's settings.
            problems.append(
                ConfigProblem(
                    f"{DELIVERY_NAMESPACE}:environments.{name}.subscriptionId",
                    "is the state subscription: the environment's deploy identities hold Contributor on it, which "
                    "would let them add a federated credential to any deploy identity or open the state account; "
                    "keep the state in a subscription of its own",
                )
            )
    for name, who in config.github.reviewers.items() if config.github else ():
        for layer, teams in who.layers.items():
            if layer not in LAYERS:
                problems.append(
                    ConfigProblem(
                        f"{DELIVERY_NAMESPACE}:github.reviewers.{name}.layers.{layer}",
                        f"is not a layer ({', '.join(LAYERS)})",
                    )
                )
            if len(teams) > 6:
                problems.append(
                    ConfigProblem(
                        f"{DELIVERY_NAMESPACE}:github.reviewers.{name}.layers.{layer}",
                        f"names {len(teams)} teams; GitHub takes at most six reviewers per environment",
                    )
                )
    for name in sorted(set(config.github.reviewers) - set(config.environments) if config.github else ()):
        problems.append(
            ConfigProblem(
                f"{DELIVERY_NAMESPACE}:github.reviewers.{name}",
                f"is not an environment ({', '.join(config.environments)})",
            )
        )
    return problems
