"""The kubernetes-platform policy pack's policies, importable without starting the pack's server."""

from kubernetes_guardrails import kafka, workloads

PACK_NAME = "kubernetes-platform"
POLICIES = [*workloads.POLICIES, *kafka.POLICIES]
