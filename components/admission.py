"""Admission control for one cluster: what a pod must be to run in a workload namespace.

- The platform's ValidatingAdmissionPolicies and their bindings (planning/admission.py):
  built into Kubernetes, evaluated by the API server, no controller to run. Their action is
  the environment's `platform:admission.action`; sandboxing of high-risk namespaces always
  denies.
- The Azure Policy add-on's built-in pod security initiative, assigned on the cluster as a
  second, independently reported layer (`platform:admission.azurePolicy`), with the
  platform's privileged namespaces and AKS's own excluded. Training namespaces are excluded
  too and get the baseline initiative's five definitions assigned for them alone, with
  IPC_LOCK added to the allowed capabilities (facts/azure_policy.py).
- The cluster's PriorityClasses (planning/priorities.py), which the platform's pods use.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as kubernetes
from pulumi_azure_native import authorization

from facts.azure_policy import AKS_SYSTEM_NAMESPACES, BASELINE_DEFINITIONS, CAPABILITIES_DEFINITION, initiative_id
from planning.admission import admission_rules, binding_manifest, policy_manifest
from planning.pod_security import TRAINING_EXTRA_CAPABILITIES
from planning.priorities import PRIORITIES
from stackconfig.model import AdmissionConfig, AzurePolicyConfig


@dataclass(frozen=True)
class ClusterAdmissionArgs:
    cluster_key: str
    cluster_id: pulumi.Input[str]
    # The platform's registry, the only source of workload images.
    login_server: pulumi.Input[str]
    settings: AdmissionConfig
    # Platform namespaces whose node agents run privileged (kept out of the initiative).
    privileged_namespaces: list[str]
    # Namespaces where InfiniBand jobs add IPC_LOCK: out of the initiative, under its baseline
    # definitions with that capability allowed.
    training_namespaces: list[str] = field(default_factory=list)


def training_definition_parameters(reference_id: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """A baseline definition's parameters for training namespaces: IPC_LOCK joins the capabilities."""
    if reference_id != CAPABILITIES_DEFINITION:
        return parameters
    return {**parameters, "allowedCapabilities": [*parameters["allowedCapabilities"], *TRAINING_EXTRA_CAPABILITIES]}


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
            rule = rules.apply(operator.itemgetter(index))
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

        assign_pod_security(
            name,
            cluster_key=args.cluster_key,
            cluster_id=args.cluster_id,
            settings=args.settings.azure_policy,
            excluded=[*AKS_SYSTEM_NAMESPACES, *args.privileged_namespaces],
            training_namespaces=args.training_namespaces,
            parent=self,
        )
        self.register_outputs({})


def assign_pod_security(
    name: str,
    *,
    cluster_key: str,
    cluster_id: pulumi.Input[str],
    settings: AzurePolicyConfig,
    excluded: list[str],
    training_namespaces: list[str],
    parent: pulumi.Resource,
) -> None:
    """Azure Policy's pod security initiative on one cluster (an AKS cluster or an Arc connected
    cluster: its definitions' mode, Microsoft.Kubernetes.Data, covers both), with `excluded`
    namespaces out of it; training namespaces get its baseline definitions one by one."""
    if settings.initiative != "none":
        authorization.PolicyAssignment(
            f"{name}-pod-security",
            policy_assignment_name=f"pod-security-{settings.initiative}-{cluster_key}",
            display_name=f"Pod security ({settings.initiative}) on cluster {cluster_key}",
            scope=cluster_id,
            policy_definition_id=initiative_id(settings.initiative),
            enforcement_mode=authorization.EnforcementMode.DEFAULT,
            parameters={
                "effect": authorization.ParameterValuesValueArgs(value=settings.effect),
                "excludedNamespaces": authorization.ParameterValuesValueArgs(value=[*excluded, *training_namespaces]),
            },
            opts=pulumi.ResourceOptions(parent=parent),
        )
        # The initiative hard-codes its capabilities; training namespaces get its baseline
        # definitions one by one, only for them (`namespaces`), with IPC_LOCK allowed.
        for definition in BASELINE_DEFINITIONS if training_namespaces else ():
            parameters = training_definition_parameters(definition.reference_id, definition.parameters)
            authorization.PolicyAssignment(
                f"{name}-training-{definition.reference_id.lower()}",
                policy_assignment_name=f"training-{definition.reference_id.lower()}-{cluster_key}"[:64],
                display_name=f"Pod security (baseline with IPC_LOCK) in training namespaces of cluster "
                f"{cluster_key}: {definition.reference_id}",
                scope=cluster_id,
                policy_definition_id=definition.definition_id,
                definition_version=definition.version,
                enforcement_mode=authorization.EnforcementMode.DEFAULT,
                parameters={
                    "effect": authorization.ParameterValuesValueArgs(value=settings.effect),
                    "namespaces": authorization.ParameterValuesValueArgs(value=list(training_namespaces)),
                    **{key: authorization.ParameterValuesValueArgs(value=value) for key, value in parameters.items()},
                },
                opts=pulumi.ResourceOptions(parent=parent),
            )
