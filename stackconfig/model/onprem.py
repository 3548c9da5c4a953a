"""On-premises Kubernetes clusters, connected through Azure Arc: declared members of the platform
(docs/hybrid.md)."""

from __future__ import annotations

from ipaddress import IPv4Address, IPv4Network
from typing import Annotated, Literal, Optional

from pydantic import Field, StringConstraints

from stackconfig.model.base import Model, RegionName, ShortName, Taint, Uuid

# facts/arc.py's DISTRIBUTIONS (tests/test_onprem.py holds the two equal).
Distribution = Literal["k3s", "aks-arc", "aks-edge", "openshift", "tanzu-tkgm", "rke2", "kubeadm"]
ConnectedClusterId = Annotated[
    str,
    StringConstraints(
        pattern=r"^/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[^/]+/providers/Microsoft\.Kubernetes/connectedClusters/[^/]+$"
    ),
]
LabelMap = dict[str, str]


class OnPremApiServer(Model):
    """Where the site's API server is reached from Azure: the dispatchers' MultiKueue and nothing else."""

    url: Annotated[str, StringConstraints(pattern=r"^https://[^/\s]+$")] = Field(
        description="`https://<host>[:port]`, as the dispatchers reach it over the hub's private route."
    )
    address: IPv4Address = Field(
        description="The address that URL resolves to, inside `platform:network.onPremisesRanges` (the route and "
        "the firewall rule are made for it)."
    )
    token_audience: Uuid = Field(
        description="The application (client) ID of the Entra ID app registration whose tokens this API server "
        "alone accepts from the dispatchers (no permissions, no credentials, v1 tokens: the default). Not AKS's "
        "server application: a token for that works on every AKS cluster, so whoever holds the site's API server "
        "could replay the dispatchers' token there."
    )
    certificate_authority_data: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9+/]+={0,2}$")] = Field(
        description="The API server's CA certificate, base64 of its PEM as a kubeconfig's "
        "`certificate-authority-data` carries it (public: the dispatchers verify the site with it)."
    )


class OnPremGpuPoolConfig(Model):
    """A pool of GPU servers as it exists at the site: described by an Azure size with the same GPUs,
    or by its own numbers."""

    nodes: int = Field(ge=1, le=10_000, description="Servers in the pool.")
    size: Optional[str] = Field(
        default=None,
        description="An Azure GPU size with the same GPUs, InfiniBand and shape (facts/gpu.py), e.g. "
        "`Standard_ND96isr_H100_v5` for an 8x H100 NDR server. Unset: describe it with the fields below.",
    )
    gpu_model: Optional[str] = Field(default=None, description="GPU model (`H100`), when `size` is unset.")
    gpus_per_node: Optional[int] = Field(default=None, ge=1, le=16, description="GPUs per server.")
    gpu_memory_gb: Optional[int] = Field(default=None, ge=1, description="Memory per GPU, GB.")
    vcpus: Optional[int] = Field(default=None, ge=1, description="vCPUs (hardware threads) per server.")
    memory_gib: Optional[int] = Field(default=None, ge=1, description="Memory per server, GiB.")
    infiniband: Optional[bool] = Field(default=None, description="Servers joined by InfiniBand.")
    labels: LabelMap = Field(
        default_factory=dict,
        description="Node labels the site sets on the pool's servers, besides `platform.ai/gpu-pool: <pool>` "
        "(which every server of the pool carries: the pool's Kueue flavor selects it).",
    )
    taints: list[Taint] = Field(
        default_factory=list,
        description="Node taints the site sets, `key=value:Effect`; the pool's Kueue flavor tolerates them.",
    )


class OnPremTrainingDataConfig(Model):
    """The site's own shared file system for training data: what its training namespaces' claim
    `training-data` binds to, as Managed Lustre's volume does in Azure (docs/lustre.md)."""

    storage_class_name: Annotated[
        str, StringConstraints(pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$", max_length=253)
    ] = Field(description="The site's StorageClass for it (its parallel file system's CSI driver, ReadWriteMany).")
    size: Annotated[str, StringConstraints(pattern=r"^[1-9][0-9]*(Gi|Ti|Pi)$")] = Field(
        description="What each training namespace's claim asks, e.g. `100Ti`."
    )


class OnPremClusterConfig(Model):
    """One on-premises cluster, connected to Azure Arc by the site's operators (docs/hybrid.md)."""

    site: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        description="The datacenter, as people name it."
    )
    region: RegionName = Field(
        description="The Azure region it is attached to: its workspaces, its dispatcher, its route through the hub."
    )
    distribution: Distribution = Field(
        description="The Kubernetes distribution (what Arc's extensions and workload identity support depends on)."
    )
    connected_cluster_id: ConnectedClusterId = Field(
        description="The Arc connected cluster's resource ID, which `az connectedk8s connect` made: referenced, "
        "never created by the platform."
    )
    api_server: OnPremApiServer = Field(description="The site's API server, as Azure reaches it.")
    node_ranges: list[IPv4Network] = Field(
        min_length=1, description="The servers' addresses, inside `platform:network.onPremisesRanges`."
    )
    pod_cidr: IPv4Network = Field(description="The site's pod range; must not overlap Azure's.")
    service_cidr: IPv4Network = Field(description="The site's service range; must not overlap Azure's.")
    cni: Literal["cilium", "calico", "flannel", "other"] = Field(
        description="The site's CNI. Only `cilium` gets the platform's FQDN egress policies; elsewhere egress is "
        "by address."
    )
    gpu_pools: dict[ShortName, OnPremGpuPoolConfig] = Field(
        min_length=1, description="The site's GPU pools as they exist."
    )
    registry: Annotated[str, StringConstraints(pattern=r"^[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[0-9]+)?$")] = Field(
        description="The site's mirror of the platform's registry (an ACR connected registry, or its own), under "
        "the same paths: servers outside Azure have no identity ACR accepts without a key. The site's container "
        "runtime pulls the platform registry's images through it (K3s `registries.yaml` mirrors), so pods name the "
        "same images as on AKS; the site's Flux fetches the platform's charts from it."
    )
    training_data: Optional[OnPremTrainingDataConfig] = Field(
        default=None,
        description="The site's own file system for training data, claimed as `training-data` in each training "
        "namespace there (required where the environment has Lustre: a job MultiKueue sends here mounts that "
        "claim).",
    )
    teams: list[ShortName] = Field(
        default_factory=list, description="Teams whose jobs may run there (each a key of `platform:teams`)."
    )
    workload_identity: bool = Field(
        default=False,
        description="Workloads sign in with their managed identity through the site's Arc issuer (supported "
        "distributions only, with the issuer enabled on the site). Off: they reach no Azure data from the site.",
    )
    oidc_issuer_url: Optional[Annotated[str, StringConstraints(pattern=r"^https://[^\s]+/$")]] = Field(
        default=None,
        description="The site's Arc OIDC issuer, as `az connectedk8s show --query oidcIssuerProfile.issuerUrl` "
        "prints it (the pinned SDK's connected cluster cannot read it); required with `workloadIdentity`.",
    )

    @property
    def connected_cluster_name(self) -> str:
        """The connected cluster's name (the last segment of its ID)."""
        return self.connected_cluster_id.rsplit("/", 1)[-1]
