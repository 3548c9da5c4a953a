"""AKS Pod Sandboxing: which VM sizes can host Kata VMs, and how pods land there.

A sandbox pool runs `workloadRuntime: KataVmIsolation` on AzureLinux; each pod gets its
own lightweight VM, which needs nested virtualization from the node's VM size. AKS
installs the `kata-vm-isolation` RuntimeClass; high-risk namespaces are held to it by an
admission policy (planning/admission.py), and their pods tolerate the pool's taint.
"""

from __future__ import annotations

import re

from facts.gpu import LABEL_PREFIX

RUNTIME_CLASS = "kata-vm-isolation"
OS_SKU = "AzureLinux"
# The AgentPool of a cluster's `sandboxPool` (a name no other pool of the cluster may take).
SANDBOX_POOL_NAME = "sandbox"
SANDBOX_LABEL = f"{LABEL_PREFIX}/sandbox"
SANDBOX_TAINT = f"{SANDBOX_LABEL}=kata:NoSchedule"
# Marks a namespace whose pods must run sandboxed (the admission binding selects on it).
HIGH_RISK_NAMESPACE_LABEL = f"{LABEL_PREFIX}/high-risk"

# x86 general-purpose and memory-optimized families, v3 and later, that Azure documents
# with nested virtualization (Gen2): D/Ds/Dd/Dds/Da/Das/Dads and E likewise, and Fs_v2.
# Not GPU (N*), ARM (`p` sizes), burstable (B) or the Av2 basics.
NESTED_VIRTUALIZATION = re.compile(r"^Standard_[DE][0-9]+d?s?_v[3-5]$|^Standard_F[0-9]+s_v2$")


def supports_nested_virtualization(vm_size: str) -> bool:
    return NESTED_VIRTUALIZATION.match(vm_size) is not None
