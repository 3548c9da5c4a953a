"""The azure-platform policy pack's policies, importable without starting the pack's server."""

from azure_guardrails import aks, arc, data, databases, identity, stack

PACK_NAME = "azure-platform"
# The Pulumi projects this pack reviews (offline/policy.py).
PROJECTS = ("platform", "delivery")
POLICIES = [*aks.POLICIES, *arc.POLICIES, *data.POLICIES, *databases.POLICIES, *identity.POLICIES, *stack.POLICIES]
