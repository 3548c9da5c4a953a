"""A stack's config, validated: the model's types first, then the rules relating several keys.

This layer sits above `planning`, whose plans (capacity, addresses, Kafka placement) the
relational checks compare against the config; `stackconfig` (the model) sits below both.
"""

from validation.checks import ConfigProblem
from validation.loader import ConfigError, load_environment, parse_platform_config

__all__ = ["ConfigError", "ConfigProblem", "load_environment", "parse_platform_config"]
