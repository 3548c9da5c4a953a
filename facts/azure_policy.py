"""Azure Policy's built-in pod security initiatives for Kubernetes, and what the baseline one holds.

Source: Azure/azure-policy at commit f4a50ba (built-in policy release 3.2026.0417.1),
`built-in-policies/policySetDefinitions/Kubernetes/` and `policyDefinitions/Kubernetes/`; the
shared reference folder holds those files (`reference/azure-policy-k8s/`) and
tests/test_contracts.py checks every value below against them.

The baseline initiative's parameters are only effect, excludedNamespaces, namespaces and
allowedHostPaths: it hard-codes the capabilities it allows (the list Pod Security's baseline
allows). A namespace that needs one more capability (IPC_LOCK for InfiniBand) is excluded from
the initiative and gets the same five definitions assigned one by one, scoped to it
(`namespaces`), with that capability added.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFINITIONS = "/providers/Microsoft.Authorization/policyDefinitions/"
SET_DEFINITIONS = "/providers/Microsoft.Authorization/policySetDefinitions/"

# "Kubernetes cluster pod security baseline/restricted standards for Linux-based workloads".
POD_SECURITY_INITIATIVES = {
    "baseline": "a8640138-9b0a-4a28-b8cb-1666c838647d",
    "restricted": "42b8ef37-b724-4e24-bbc8-7a7708edfe00",
}
# The initiatives' default exclusions: AKS's system namespaces and its add-ons'.
AKS_SYSTEM_NAMESPACES = ("kube-system", "gatekeeper-system", "azure-arc", "azure-extensions-usage-system")


@dataclass(frozen=True)
class PolicyDefinition:
    """One definition of the baseline initiative, as the platform assigns it on its own: the
    version the initiative pins and the values it passes (its parameters' defaults where it
    passes its own parameter through)."""

    reference_id: str  # policyDefinitionReferenceId in the initiative
    guid: str
    file: str  # under reference/azure-policy-k8s/policyDefinitions/ (the definition's newest version)
    version: str  # the initiative's definitionVersion
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def definition_id(self) -> str:
        return DEFINITIONS + self.guid


# Capabilities the baseline initiative's ContainerCapabilities allows; its Rego lowercases both
# sides before comparing (samples/container-allowed-capabilities/template.yaml).
BASELINE_ALLOWED_CAPABILITIES = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FSETID",
    "FOWNER",
    "MKNOD",
    "NET_RAW",
    "SETGID",
    "SETUID",
    "SETFCAP",
    "SETPCAP",
    "NET_BIND_SERVICE",
    "SYS_CHROOT",
    "KILL",
    "AUDIT_WRITE",
)

BASELINE_DEFINITIONS = (
    PolicyDefinition(
        "NoPrivilegedContainers", "95edb821-ddaf-4404-9732-666045e056b4", "ContainerNoPrivilege.json", "9.*.*"
    ),
    PolicyDefinition(
        "BlockUsingHostNetwork",
        "82985f06-dc18-4a48-bc1c-b9f4f0098cfe",
        "HostNetworkPorts.json",
        "6.*.*",
        {"allowHostNetwork": False, "minPort": 0, "maxPort": 0},
    ),
    PolicyDefinition(
        "BlockUsingHostProcessIDAndIPC", "47a1ee2f-2a2a-4576-bf2a-e0e36709c2b8", "BlockHostNamespace.json", "5.*.*"
    ),
    PolicyDefinition(
        "ContainerCapabilities",
        "c26596ff-4d70-4e6a-9a30-c2506bd2f80c",
        "ContainerAllowedCapabilities.json",
        "6.*.*",
        {"allowedCapabilities": list(BASELINE_ALLOWED_CAPABILITIES), "requiredDropCapabilities": []},
    ),
    # The initiative passes its own allowedHostPaths, whose default (no paths) blocks every host path.
    PolicyDefinition(
        "NoHostPathVolume",
        "098fc59e-46c7-4d99-9b16-64990e543d75",
        "AllowedHostPaths.json",
        "6.*.*",
        {"allowedHostPaths": {"paths": []}},
    ),
)
CAPABILITIES_DEFINITION = "ContainerCapabilities"


def initiative_id(initiative: str) -> str:
    return SET_DEFINITIONS + POD_SECURITY_INITIATIVES[initiative]
