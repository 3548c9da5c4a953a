"""Teams: their namespaces, groups, quotas and egress."""

from __future__ import annotations

from pydantic import Field

from stackconfig.model.base import (
    Model,
    NamespaceName,
    UuidList,
)
from stackconfig.model.network import (
    Fqdn,
)


class TeamConfig(Model):
    entra_group_object_ids: UuidList = Field(
        min_length=1, description="The team's Entra groups (≥ 1): AKS RBAC Writer on the team's namespaces."
    )
    reader_group_object_ids: UuidList = Field(
        default_factory=list, description="Groups with AKS RBAC Reader on the team's namespaces."
    )
    namespaces: list[NamespaceName] = Field(
        min_length=1,
        description="Kubernetes namespaces the team owns; unique across teams, never `kube-*` or `default`.",
    )
    egress_fqdns: list[Fqdn] = Field(
        default_factory=list,
        description="HTTPS destinations the team's namespaces may reach (model hubs, package mirrors): "
        "allowed by the firewall and by a Cilium FQDN policy in each of the team's namespaces "
        "only; never a public registry. `*.example.com` matches hosts at any depth at the "
        "firewall; Cilium 1.18's `*` stays within one label, so the cluster's policy lists the "
        "pattern at each depth down to four labels (`*.*.example.com`, ...).",
    )
    high_risk_namespaces: list[NamespaceName] = Field(
        default_factory=list,
        description="Namespaces (of `namespaces`) whose pods run untrusted code: each pod must use the `kata-"
        "vm-isolation` RuntimeClass (admission always denies otherwise) and tolerate the sandbox "
        "pool's taint.",
    )
    training_namespaces: list[NamespaceName] = Field(
        default_factory=list,
        description="Namespaces (of `namespaces`) where multi-node InfiniBand jobs run: Pod Security enforces"
        " `privileged` there and the admission policy `platform-pod-security-training` enforces "
        "baseline plus exactly `IPC_LOCK`; Azure Policy's baseline initiative is replaced there "
        "by its five definitions with `IPC_LOCK` allowed (docs/gpus.md, \"Training namespaces\"); "
        "never a high-risk namespace.",
    )
    streaming_namespaces: list[NamespaceName] = Field(
        default_factory=list,
        description="Namespaces (of `namespaces`) where the team's Flink jobs (`platform:streaming.jobs`) run, "
        "on the streaming clusters only: watched by the Flink operator, outside Kueue, Pod Security "
        "`restricted`, capacity bounded by a ResourceQuota; never a training or high-risk namespace.",
    )
