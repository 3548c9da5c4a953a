"""The validated environment config: one pydantic model read from the stack's `platform:` keys."""

from stackconfig.checks import ConfigProblem
from stackconfig.loader import ConfigError, load_environment, parse_platform_config
from stackconfig.model import PlatformConfig

__all__ = ["ConfigError", "ConfigProblem", "PlatformConfig", "load_environment", "parse_platform_config"]
