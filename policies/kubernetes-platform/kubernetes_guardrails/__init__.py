"""The kubernetes-platform policy pack's policies, importable without starting the pack's server."""

from kubernetes_guardrails import isolation, kafka, streaming, workloads

PACK_NAME = "kubernetes-platform"
POLICIES = [*workloads.POLICIES, *isolation.POLICIES, *kafka.POLICIES, *streaming.POLICIES]
