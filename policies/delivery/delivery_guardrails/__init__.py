"""The delivery policy pack's policies, importable without starting the pack's server."""

from delivery_guardrails import azure, entra, github

PACK_NAME = "delivery"
# The Pulumi projects this pack reviews (offline/policy.py): the delivery project only.
PROJECTS = ("delivery",)
POLICIES = [*azure.POLICIES, *entra.POLICIES, *github.POLICIES]
