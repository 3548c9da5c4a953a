"""GPU and fabric health on one cluster's GPU nodes: the health agent on every GPU pool, kured
to drain and reboot faulty nodes (rate-limited), the admission policy that keeps kured to its
own node's cordon, the preflight gate's rights and guard, and the NodeFeatureRule that turns a
fault into a taint. What each does and
why: planning/gpu_health.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes

from components.dispatch import rule_args
from components.isolation import isolate, manifest_metadata
from planning import gpu_health as plan
from planning.network_policy import NamespaceTraffic
from planning.pod_security import PRIVILEGED, pod_security_labels
from stackconfig.model import ClusterConfig, GpuHealthConfig


@dataclass(frozen=True)
class GpuHealthArgs:
    cluster: ClusterConfig
    settings: GpuHealthConfig
    login_server: str
    traffic: NamespaceTraffic
    # The GPU operator (DCGM's host engine, NFD and its CRDs) and the image pulls' prerequisites.
    ready: Sequence[pulumi.Resource] = field(default_factory=list)


class GpuHealth(pulumi.ComponentResource):
    def __init__(
        self,
        name: str,
        args: GpuHealthArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:gpu:Health", name, None, opts)
        cluster = args.cluster
        # Host directories and kured's reboot need a privileged namespace: a reviewed exception
        # (policy k8s-namespace-pod-security), whose traffic is denied but for DCGM and kured's API calls.
        namespace = kubernetes.core.v1.Namespace(
            f"{name}-ns",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(
                name=plan.HEALTH_NAMESPACE, labels=pod_security_labels(PRIVILEGED)
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        isolate(name, args.traffic, provider=provider, parent=self, namespace=namespace)
        in_namespace = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace, *args.ready])

        script = kubernetes.core.v1.ConfigMap(
            f"{name}-agent-script",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=plan.AGENT, namespace=plan.HEALTH_NAMESPACE),
            data={"gpu-health.sh": plan.agent_script(), "gpu_gate.py": plan.gate_script()},
            opts=in_namespace,
        )
        gate = self._gate(name, provider, in_namespace)
        for pool_name, pool in cluster.gpu_pools.items():
            manifest = plan.agent_daemonset(pool_name, pool, cluster, args.settings, args.login_server)
            kubernetes.apps.v1.DaemonSet(
                f"{name}-agent-{pool_name}",
                metadata=manifest_metadata(manifest),
                spec=manifest["spec"],
                opts=pulumi.ResourceOptions.merge(in_namespace, pulumi.ResourceOptions(depends_on=[script, *gate])),
            )

        kubernetes.apiextensions.CustomResource(
            f"{name}-fault-taint",
            api_version=plan.NFD_API,
            kind="NodeFeatureRule",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name="platform-gpu-health"),
            spec=plan.node_feature_rule(),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(args.ready)),
        )

        if args.settings.remediation.enabled:
            self._remediation(name, args, provider, in_namespace)
        self.register_outputs({})

    def _node_writer(
        self,
        name: str,
        account_name: str,
        rules: list[dict[str, Any]],
        guard_spec: Any,
        provider: kubernetes.Provider,
        in_namespace: pulumi.ResourceOptions,
        automount: bool | None = None,
    ) -> tuple[kubernetes.core.v1.ServiceAccount, kubernetes.rbac.v1.SubjectArgs, list[pulumi.Resource]]:
        """A node agent's service account, its cluster-wide node rights, and the admission guard
        (planning/gpu_health.py) that keeps them to its own node: (account, subject, what its pods
        wait for)."""
        account = kubernetes.core.v1.ServiceAccount(
            f"{name}-sa",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=account_name, namespace=plan.HEALTH_NAMESPACE),
            automount_service_account_token=automount,
            opts=in_namespace,
        )
        subject = kubernetes.rbac.v1.SubjectArgs(
            kind="ServiceAccount", name=account_name, namespace=plan.HEALTH_NAMESPACE
        )
        role = kubernetes.rbac.v1.ClusterRole(
            f"{name}-role",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=f"platform-{account_name}"),
            rules=[kubernetes.rbac.v1.PolicyRuleArgs(**rule_args(rule)) for rule in rules],
            opts=in_namespace,
        )
        binding = kubernetes.rbac.v1.ClusterRoleBinding(
            f"{name}-binding",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=f"platform-{account_name}"),
            role_ref=kubernetes.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role.metadata.name
            ),
            subjects=[subject],
            opts=in_namespace,
        )
        guard_name = f"platform-{account_name}-own-node"
        guard = kubernetes.admissionregistration.v1.ValidatingAdmissionPolicy(
            f"{name}-guard",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=guard_name),
            spec=guard_spec,
            opts=pulumi.ResourceOptions(parent=self, provider=provider),
        )
        # The guard is in place before the agent can write anything.
        guard_binding = kubernetes.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
            f"{name}-guard-binding",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(name=guard_name),
            spec=kubernetes.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpecArgs(
                policy_name=guard_name, validation_actions=["Deny"]
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[guard]),
        )
        return account, subject, [account, binding, guard_binding]

    def _gate(self, name: str, provider: kubernetes.Provider, in_namespace: pulumi.ResourceOptions) -> list[Any]:
        """The gate's service account, its right to patch nodes and the guard that narrows it."""
        _, _, ready = self._node_writer(
            f"{name}-gate", plan.GATE, plan.GATE_RULES, plan.gate_guard(), provider, in_namespace, automount=False
        )
        return ready

    def _remediation(
        self, name: str, args: GpuHealthArgs, provider: kubernetes.Provider, in_namespace: pulumi.ResourceOptions
    ) -> None:
        # The guard's spec is a manifest (planning/gpu_health.py), as the admission component passes its policies.
        account, subject, ready = self._node_writer(
            f"{name}-remediation",
            plan.REMEDIATION,
            plan.REMEDIATION_RULES,
            plan.remediation_guard(),
            provider,
            in_namespace,
        )
        lock_role = kubernetes.rbac.v1.Role(
            f"{name}-remediation-lock-role",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(
                name=f"{plan.REMEDIATION}-lock", namespace=plan.HEALTH_NAMESPACE
            ),
            rules=[
                kubernetes.rbac.v1.PolicyRuleArgs(**rule_args(rule), resource_names=rule["resourceNames"])
                for rule in plan.REMEDIATION_LOCK_RULES
            ],
            opts=in_namespace,
        )
        kubernetes.rbac.v1.RoleBinding(
            f"{name}-remediation-lock-binding",
            metadata=kubernetes.meta.v1.ObjectMetaArgs(
                name=f"{plan.REMEDIATION}-lock", namespace=plan.HEALTH_NAMESPACE
            ),
            role_ref=kubernetes.rbac.v1.RoleRefArgs(
                api_group="rbac.authorization.k8s.io", kind="Role", name=lock_role.metadata.name
            ),
            subjects=[subject],
            opts=in_namespace,
        )
        manifest = plan.remediation_daemonset(args.cluster, args.settings, args.login_server)
        kubernetes.apps.v1.DaemonSet(
            f"{name}-remediation",
            metadata=manifest_metadata(manifest),
            spec=manifest["spec"],
            opts=pulumi.ResourceOptions.merge(in_namespace, pulumi.ResourceOptions(depends_on=[account, ready[-1]])),
        )
