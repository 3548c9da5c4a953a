"""Entry point for `pulumi up -s <env>.<unit>`: validate the environment's config, build the unit."""

from components.platform import deploy
from validation import load_environment

deploy(*load_environment())
