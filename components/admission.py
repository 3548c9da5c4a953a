"""Admission control for one cluster: what a pod must be to run in a workload namespace.

- The platform's ValidatingAdmissionPolicies and their bindings (planning/admission.py):
  built into Kubernetes, evaluated by the API server, no controller to run. Their action is
  the environment's `platform:admission.action`; sandboxing of high-risk namespaces always
  denies.
- The Azure Policy add-on's built-in pod security initiative, assigned on the cluster as a
  second, independently reported layer (`platform:admission.azurePolicy`), with the
  platform's privileged namespaces and AKS's own excluded.
- The cluster's PriorityClasses (planning/priorities.py), which the platform's pods use.
"""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as kubernetes
from pulumi_azure_native import authorization

from planning.admission import admission_rules, binding_manifest, policy_manifest
from planning.priorities import PRIORITIES
from stackconfig.model import AdmissionConfig

# Built-in policy set definitions (Azure/azure-policy, policySetDefinitions/Kubernetes).
POD_SECURITY_INITIATIVES = {
    "baseline": "a8640138-9b0a-4a28-b8cb-1666c838647d",
    "restricted": "42b8ef37-b724-4e24-bbc8-7a7708edfe00",
}
# The initiatives' own default exclusions: AKS system namespaces and its add-ons'.
AKS_SYSTEM_NAMESPACES = ("kube-system", "gatekeeper-system", "azure-arc", "azure-extensions-usage-system")


@dataclass(frozen=True)
class ClusterAdmissionArgs:
    cluster_key: str
    cluster_id: pulumi.Input[str]
    # The platform's registry, the only source of workload images.
    login_server: pulumi.Input[str]
    settings: AdmissionConfig
    # Platform namespaces whose node agents run privileged (kept out of the initiative).
    privileged_namespaces: list[str]


def initiative_id(initiative: str) -> str:
    return f"/providers/Microsoft.Authorization/policySetDefinitions/{POD_SECURITY_INITIATIVES[initiative]}"


class ClusterAdmission(pulumi.ComponentResource):
    """Outputs: `ready` (what pods of the platform need to exist first: the PriorityClasses)."""

    def __init__(
        self,
        name: str,
        args: ClusterAdmissionArgs,
        provider: kubernetes.Provider,
        opts: pulumi.ResourceOptions | None = None,
    ):
        super().__init__("platform:admission:ClusterAdmission", name, None, opts)
        in_cluster = pulumi.ResourceOptions(parent=self, provider=provider)

        self.ready: list[pulumi.Resource] = [
            kubernetes.scheduling.v1.PriorityClass(
                f"{name}-priority-{priority.name}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(name=priority.name),
                value=priority.value,
                global_default=False,
                preemption_policy=priority.preemption_policy,
                description=priority.description,
                opts=in_cluster,
            )
            for priority in PRIORITIES
        ]

        # The rules name the registry, an output; their names and number do not depend on it.
        rules = pulumi.Output.from_input(args.login_server).apply(admission_rules)
        for index, rule_name in enumerate(rule.name for rule in admission_rules("")):
            rule = rules.apply(lambda rules, index=index: rules[index])
            policy_name = f"platform-{rule_name}"
            policy = kubernetes.admissionregistration.v1.ValidatingAdmissionPolicy(
                f"{name}-policy-{rule_name}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(name=policy_name),
                spec=rule.apply(lambda rule: policy_manifest(rule)["spec"]),
                opts=in_cluster,
            )
            kubernetes.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
                f"{name}-binding-{rule_name}",
                metadata=kubernetes.meta.v1.ObjectMetaArgs(name=policy_name),
                spec=rule.apply(lambda rule: binding_manifest(rule, args.settings.action)["spec"]),
                opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[policy]),
            )

        azure_policy = args.settings.azure_policy
        if azure_policy.initiative != "none":
            authorization.PolicyAssignment(
                f"{name}-pod-security",
                policy_assignment_name=f"pod-security-{azure_policy.initiative}-{args.cluster_key}",
                display_name=f"Pod security ({azure_policy.initiative}) on cluster {args.cluster_key}",
                scope=args.cluster_id,
                policy_definition_id=initiative_id(azure_policy.initiative),
                enforcement_mode=authorization.EnforcementMode.DEFAULT,
                parameters={
                    "effect": authorization.ParameterValuesValueArgs(value=azure_policy.effect),
                    "excludedNamespaces": authorization.ParameterValuesValueArgs(
                        value=[*AKS_SYSTEM_NAMESPACES, *args.privileged_namespaces]
                    ),
                },
                opts=pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs({})
