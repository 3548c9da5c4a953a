"""An on-premises site as the contract layers read it (docs/hybrid.md): its Kubernetes objects are
the baseline its Flux applies (the site unit's `baselineDocuments`, or the single stack's
`siteBaselines`), its pools are the servers config declares (with the labels and taints the site
sets), and its Azure side (the federated credentials, the private endpoints it reaches over the
link, the Azure Policy assignments on its connected cluster) is the plan's, as for an AKS cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from types import SimpleNamespace
from typing import Any

import yaml

from contracts.cluster import ClusterView, Pool
from planning.gpu_stack import RDMA_HCA_MAX
from planning.onprem import site_pools
from stackconfig.model import OnPremClusterConfig


def token_of(manifest: dict[str, Any]) -> str:
    """The Pulumi type token the object would have (`kubernetes:core/v1:Namespace`)."""
    version = manifest["apiVersion"]
    return f"kubernetes:{'core/' + version if '/' not in version else version}:{manifest['kind']}"


@dataclass
class SiteView(ClusterView):
    # path -> YAML: the site's baseline, as its Flux applies it.
    documents: dict[str, str] = field(default_factory=dict)

    @property
    def _site(self) -> dict[str, Any]:
        return dict(self.config["platform:onPremClusters"][self.key])

    @cached_property
    def manifests(self) -> list[dict[str, Any]]:
        return [yaml.safe_load(text) for _, text in sorted(self.documents.items())]

    def in_cluster(self, token: str) -> list[Any]:
        return [
            SimpleNamespace(inputs=m, name=m["metadata"]["name"], type=token)
            for m in self.manifests
            if token_of(m) == token
        ]

    @property
    def managed_cluster(self) -> Any:
        raise LookupError(f"{self.key} is an on-premises site: it has no managed cluster")

    @property
    def region(self) -> str:
        return str(self._site["region"])

    @property
    def oidc_issuer_url(self) -> str:
        return str(self._site.get("oidcIssuerUrl", ""))

    @property
    def nearest_accounts(self) -> dict[str, Any]:
        return dict(self.plan.outputs["workloadContext"]["sites"][self.key]["storageAccounts"])

    @property
    def firewall_nodes(self) -> str | None:
        return None  # the site's egress is its own: no firewall of the environment is in the way

    @property
    def node_ranges(self) -> list[str]:
        """Its servers: its CNI masquerades pods' traffic leaving the site (docs/hybrid.md, step 1)."""
        return [str(r) for r in self._site["nodeRanges"]]

    @property
    def policy_scope_suffix(self) -> str:
        return "/connectedClusters/" + str(self._site["connectedClusterId"]).rsplit("/", 1)[-1]

    @cached_property
    def pools(self) -> dict[str, Pool]:
        """The site's GPU pools, with the labels its servers carry (planning/onprem.py, node_labels)."""
        site = OnPremClusterConfig.model_validate(self._site)
        return {
            pool.name: Pool(
                pool.name,
                str(site.gpu_pools[pool.name].size or ""),
                {**pool.node_labels, "kubernetes.io/os": "linux"},
                pool.taints,
                110,
                "User",
                shape=(pool.vcpus, pool.memory_gib),
            )
            for pool in site_pools(site)
        }

    @cached_property
    def kueue_config(self) -> dict[str, Any]:
        for release in self.objects("kubernetes:helm.toolkit.fluxcd.io/v2:HelmRelease"):
            if release["metadata"]["name"] == "kueue":
                return dict(yaml.safe_load(release["spec"]["values"]["managerConfig"]["controllerManagerConfigYaml"]))
        return {}

    @cached_property
    def rdma_per_node(self) -> int:
        """What the site's network operator advertises on InfiniBand servers: as on AKS (the site's
        operators configure it so: docs/hybrid.md, step 1)."""
        return RDMA_HCA_MAX if any(p.labels.get("platform.ai/infiniband") == "true" for p in self.pools.values()) else 0
