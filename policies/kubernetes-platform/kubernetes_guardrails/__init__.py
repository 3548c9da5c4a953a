"""The kubernetes-platform policy pack's policies, importable without starting the pack's server."""

from kubernetes_guardrails import isolation, kafka, serving, streaming, volumes, workloads

PACK_NAME = "kubernetes-platform"
# The Pulumi projects this pack reviews (offline/policy.py).
PROJECTS = ("platform",)
POLICIES = [
    *workloads.POLICIES,
    *isolation.POLICIES,
    *kafka.POLICIES,
    *serving.POLICIES,
    *streaming.POLICIES,
    *volumes.POLICIES,
]
