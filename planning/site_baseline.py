"""What the platform puts on an on-premises site (docs/hybrid.md), as plain manifests that Flux
applies there: Pulumi's Kubernetes provider cannot reach a site, so the site's cluster unit writes
these into the site's baseline container and the site's Flux reads them (components/arc_site.py).

Two Flux kustomizations, in order:
- `platform`: the PriorityClasses, the teams' namespaces (labelled as on AKS) with default-deny
  network policies and their allows and where their jobs read and write blobs, the service
  accounts of the workloads that run there, the platform's admission policies (images named by
  the platform's registry, as on AKS: a job MultiKueue copies here is the manifest a team wrote
  for any region), what the dispatchers may do there (MultiKueue's worker role, bound to the
  dispatchers' identity), and Kueue itself (the platform's chart and version: the chart from the
  site's registry, its image by the platform's registry's name);
- `queues` (after `platform`, whose Kueue brings the CRDs): the site's ResourceFlavors (one per
  GPU pool, selecting `platform.ai/gpu-pool`), each admitted team's ClusterQueue and the `gpu` and
  `any-region` LocalQueues in its job namespaces.

The site installs itself what needs its hardware and its network: the CNI, the NVIDIA drivers,
device plugin and (for InfiniBand) the network operator, and its registry mirror: its container
runtime pulls `<platform registry>/...` through it (K3s `registries.yaml` mirrors; containerd's
hosts.toml elsewhere), so pods name the same images on AKS and at the site.

Imports facts, planning and the config model; nothing of Pulumi.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from facts.arc import FLUX_NAMESPACE
from facts.gpu import GPU_RESOURCE, POOL_LABEL
from facts.workload_identity import CLIENT_ID_ANNOTATION, TENANT_ID_ANNOTATION
from planning import dispatch
from planning import kafka as kafka_plan
from planning.admission import admission_rules, binding_manifest, policy_manifest
from planning.charts import KUEUE, mirrored_image_values
from planning.cluster_traffic import KUEUE_NAMESPACE
from planning.gpu import toleration
from planning.gpu_stack import kueue_values
from planning.lustre_csi import CLAIM as TRAINING_DATA_CLAIM
from planning.naming import WORKLOAD_LABEL, Naming
from planning.network_policy import ENTRA_ID_FQDN, HTTPS, FqdnRule, NamespaceTraffic, Peer, Port, namespace_policies
from planning.onprem import SitePool, site_pools
from planning.pod_security import RESTRICTED, pod_security_labels, team_namespace_labels
from planning.priorities import PLATFORM_CRITICAL, PRIORITIES
from planning.queues import LOCAL_QUEUE, Manifest, flavor_name, flavor_spec, team_cluster_queue
from planning.workloads import STORAGE_CONFIG_MAP, region_storage_locations
from stackconfig.model import OnPremClusterConfig, PlatformConfig

# The container of the site's baseline account that Flux reads (components/arc_site.py).
BASELINE_CONTAINER = "baseline"
# The baseline container's folders, one per Flux kustomization, in the order they apply.
PLATFORM_PATH = "platform"
QUEUES_PATH = "queues"
# What the dispatchers' identity is bound to on the site: the same names as on AKS workers.
WORKER_ROLE = "multikueue-worker"
# Flux's APIs (Flux v2.7, which microsoft.flux 1.24.1 ships: flux-gitops-release-notes.md).
OCI_REPOSITORY_API = "source.toolkit.fluxcd.io/v1"
HELM_RELEASE_API = "helm.toolkit.fluxcd.io/v2"
# A Helm chart pushed by `helm push` is one layer of this type (helm/helm pkg/registry).
HELM_CHART_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


def team_share(pool: SitePool, teams: int) -> dict[str, int]:
    """Each admitted team's nominal quota on a pool: an equal share of its GPUs, with the CPU and
    memory that come with them; what one team leaves idle the others borrow (one cohort)."""
    gpus = pool.gpus // max(teams, 1)
    nodes = gpus / pool.gpus_per_node
    return {"cpu": int(pool.vcpus * nodes), "memory": int(pool.memory_gib * nodes), GPU_RESOURCE: gpus}


def site_quotas(config: PlatformConfig, key: str) -> dict[str, dict[str, dict[str, int]]]:
    """Each admitted team's quota at the site: team -> pool -> amounts (its ClusterQueue's, and
    what the dispatchers count for the site)."""
    site = config.on_prem_clusters[key]
    pools = site_pools(site)
    return {team: {pool.name: team_share(pool, len(site.teams)) for pool in pools} for team in site.teams}


def site_job_namespaces(config: PlatformConfig, key: str) -> dict[str, str]:
    """The namespaces jobs run in at the site (its teams' own, not streaming ones) -> their team."""
    site = config.on_prem_clusters[key]
    return {
        namespace: team
        for team in site.teams
        for namespace in config.teams[team].namespaces
        if namespace not in config.teams[team].streaming_namespaces
    }


def site_flavor(pool: SitePool) -> Manifest:
    return Manifest(
        "ResourceFlavor",
        flavor_name(pool.name),
        {"nodeLabels": {POOL_LABEL: pool.name, **pool.labels}, "tolerations": [toleration(t) for t in pool.taints]},
    )


def queue_manifests(config: PlatformConfig, key: str) -> list[Manifest]:
    """The site's Kueue objects: flavors, a ClusterQueue per admitted team, and its LocalQueues
    (`gpu` for jobs sent to the site, `any-region` for the copies MultiKueue makes)."""
    site = config.on_prem_clusters[key]
    manifests = [site_flavor(pool) for pool in site_pools(site)]
    for team, by_pool in site_quotas(config, key).items():
        manifests.append(team_cluster_queue(team, [flavor_spec(pool, amounts) for pool, amounts in by_pool.items()]))
    for namespace, team in site_job_namespaces(config, key).items():
        for queue in (LOCAL_QUEUE, dispatch.ANY_REGION_QUEUE):
            manifests.append(Manifest("LocalQueue", queue, {"clusterQueue": f"team-{team}"}, namespace=namespace))
    return manifests


def site_kafka_clients(config: PlatformConfig, key: str, namespace: str) -> list[str]:
    """The Kafka clients that run at the site in one namespace."""
    return [c for c in kafka_plan.site_clients(config, key) if config.workloads[c].namespace == namespace]


def site_team_traffic(config: PlatformConfig, key: str, namespace: str) -> NamespaceTraffic:
    """A team namespace at the site: its own pods, the region's private endpoints for the data its
    workloads were granted (reached over the link), Kafka for its clients (Strimzi: the listener
    for other networks of the region's host, whose load balancers take addresses of the host's
    node subnet; Event Hubs: its endpoint), and Entra ID for their tokens."""
    site = config.on_prem_clusters[key]
    endpoints = (str(config.network.regions[site.region].subnets.private_endpoints),)
    names = [n for n, s in config.workloads.items() if s.namespace == namespace and key in s.sites]
    workloads = [config.workloads[n] for n in names]
    kafka = config.kafka
    egress: list[Peer] = []
    if any(s.storage or s.key_vault_secrets or s.cosmos_db for s in workloads):
        egress.append(Peer("private-endpoints", (Port(HTTPS),), cidrs=endpoints))
    if kafka is not None and kafka.engine == "eventhubs" and site_kafka_clients(config, key, namespace):
        egress.append(Peer("event-hubs", (Port(kafka_plan.EVENT_HUBS_KAFKA_PORT),), cidrs=endpoints))
    host = kafka_plan.site_host(config, key)
    if host is not None and site_kafka_clients(config, key, namespace):
        nodes = (str(config.clusters[host].subnets.nodes),)
        egress.append(Peer("kafka", (Port(kafka_plan.REPLICATION_PORT),), cidrs=nodes))
    fqdns: tuple[FqdnRule, ...] = ()
    if workloads:
        if site.cni == "cilium":
            fqdns = (FqdnRule((ENTRA_ID_FQDN,)),)
        else:
            # No FQDN policies without Cilium: Entra ID by address is any public address on 443.
            egress.append(Peer("entra-id", (Port(HTTPS),), cidrs=("0.0.0.0/0",)))
    return NamespaceTraffic(namespace, egress=tuple(egress), fqdns=fqdns)


def _object(manifest: Manifest) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": manifest.name}
    if manifest.namespace:
        metadata["namespace"] = manifest.namespace
    return {"apiVersion": manifest.api_version, "kind": manifest.kind, "metadata": metadata, "spec": manifest.spec}


def dispatcher_access(principal_id: str, namespaces: list[str]) -> list[dict[str, Any]]:
    """What the dispatchers' identity may do at the site, as on an AKS worker: read the job kinds
    cluster-wide, write them only in the teams' job namespaces. The site's API server names it by
    its object ID (`authentication_config`)."""
    rbac = "rbac.authorization.k8s.io/v1"
    subject = [{"kind": "User", "name": principal_id, "apiGroup": "rbac.authorization.k8s.io"}]
    objects: list[dict[str, Any]] = [
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": dispatch.WATCH_ROLE},
         "rules": dispatch.watch_rules()},
        {"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": {"name": dispatch.WATCH_ROLE},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": dispatch.WATCH_ROLE},
         "subjects": subject},
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": {"name": WORKER_ROLE}, "rules": dispatch.WORKER_RULES},
    ]  # fmt: skip
    for namespace in namespaces:
        objects.append(
            {
                "apiVersion": rbac,
                "kind": "RoleBinding",
                "metadata": {"name": WORKER_ROLE, "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": WORKER_ROLE},
                "subjects": subject,
            }
        )
    return objects


def kueue_release(site: OnPremClusterConfig, login_server: str) -> list[dict[str, Any]]:
    """Kueue at the site, as a worker (no MultiKueue of its own): the platform's chart and version,
    which Flux fetches from the site's registry (it mirrors the platform's under the same paths),
    and its image by the platform's registry's name, which the site's runtime pulls through the
    mirror, as every image there. The source and the release live in Flux's own namespace and
    install into Kueue's: microsoft.flux enforces multi-tenancy, under which a release elsewhere
    than its configuration's namespace is refused (conceptual-gitops-flux2.md, "Multi-tenancy")."""
    values = kueue_values(PLATFORM_CRITICAL.name)
    values["controllerManager"]["manager"]["image"] |= mirrored_image_values(KUEUE, login_server)["controllerManager"][
        "manager"
    ]["image"]
    values["controllerManager"].pop("tolerations", None)  # AKS's system pool taint: not at a site
    reference: dict[str, str] = {"tag": KUEUE.version}
    if KUEUE.mirrored_digest:
        reference["digest"] = KUEUE.mirrored_digest
    return [
        # Restricted, as on AKS (components/gpu_stack.py).
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": KUEUE_NAMESPACE, "labels": pod_security_labels(RESTRICTED)},
        },
        {
            "apiVersion": OCI_REPOSITORY_API,
            "kind": "OCIRepository",
            "metadata": {"name": KUEUE.name, "namespace": FLUX_NAMESPACE},
            "spec": {
                "interval": "1h",
                "url": f"oci://{site.registry}/charts/{KUEUE.name}",
                "ref": reference,
                "layerSelector": {"mediaType": HELM_CHART_LAYER, "operation": "copy"},
            },
        },
        {
            "apiVersion": HELM_RELEASE_API,
            "kind": "HelmRelease",
            "metadata": {"name": KUEUE.name, "namespace": FLUX_NAMESPACE},
            "spec": {
                "interval": "1h",
                "chartRef": {"kind": "OCIRepository", "name": KUEUE.name},
                "targetNamespace": KUEUE_NAMESPACE,
                "releaseName": KUEUE.name,
                "install": {"crds": "CreateReplace"},
                "upgrade": {"crds": "CreateReplace"},
                "values": values,
            },
        },
    ]


@dataclass(frozen=True)
class SiteIdentities:
    """What the baseline names of Azure's: the dispatchers' identity's object ID, the tenant, the
    client ID of each workload that runs at the site (outputs of the foundation), and the CA of the
    Kafka its clients reach."""

    dispatcher_principal_id: str
    tenant_id: str = ""
    client_ids: Mapping[str, str] = field(default_factory=dict)
    # The CA certificate (PEM) of the Kafka the site's clients reach (its region's host), read
    # from that cluster by the site's unit: "" where no client runs at the site.
    kafka_ca: str = ""


def workload_accounts(config: PlatformConfig, key: str, ids: SiteIdentities) -> list[dict[str, Any]]:
    """The service accounts of the workloads that run at the site, annotated for workload identity
    as on AKS (Arc's workload identity runs the same webhook: workload-identity.md); their
    federated credentials trust the site's issuer (components/workload_identity.py)."""
    return [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {
                "name": spec.service_account,
                "namespace": spec.namespace,
                "labels": {WORKLOAD_LABEL: name},
                "annotations": {
                    CLIENT_ID_ANNOTATION: ids.client_ids.get(name, ""),
                    TENANT_ID_ANNOTATION: ids.tenant_id,
                },
            },
        }
        for name, spec in config.workloads.items()
        if key in spec.sites
    ]


def kafka_config_maps(config: PlatformConfig, key: str, namespace: str, certificate: str) -> list[dict[str, Any]]:
    """What a Kafka client at the site connects with, under the names every AKS client namespace
    has them (components/kafka.py): where its Kafka is (Strimzi: the region's host, over the link;
    Event Hubs: the namespace, through the region's endpoint) and, with Strimzi, that Kafka's CA
    certificate, which its brokers' certificates chain to."""
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": kafka_plan.BOOTSTRAP_CONFIG_MAP, "namespace": namespace},
            "data": {
                kafka_plan.BOOTSTRAP_KEY: kafka_plan.site_bootstrap(config, key),
                kafka_plan.IDLE_KEY: str(kafka_plan.ACROSS_NETWORKS_IDLE_MS),
            },
        }
    ]
    if config.strimzi is not None:  # Event Hubs' certificate chains to a public root
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": kafka_plan.CA_CONFIG_MAP, "namespace": namespace},
                "data": {"ca.crt": certificate},
            }
        )
    return objects


def platform_manifests(config: PlatformConfig, key: str, ids: SiteIdentities) -> list[dict[str, Any]]:
    """The `platform` kustomization: everything but the Kueue objects."""
    site = config.on_prem_clusters[key]
    locations = region_storage_locations(config, site.region)
    objects: list[dict[str, Any]] = [
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": p.name},
         "value": p.value, "globalDefault": False, "preemptionPolicy": p.preemption_policy,
         "description": p.description}
        for p in PRIORITIES
    ]  # fmt: skip
    namespaces = site_job_namespaces(config, key)
    for namespace, team in namespaces.items():
        labels = team_namespace_labels(team, config.teams[team], namespace)
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}})
        # Where jobs read and write blobs, as in every team namespace (planning/workloads.py).
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": STORAGE_CONFIG_MAP, "namespace": namespace},
                "data": locations,
            }
        )
        if site_kafka_clients(config, key, namespace):
            objects += kafka_config_maps(config, key, namespace, ids.kafka_ca)
        if site.training_data is not None and namespace in config.teams[team].training_namespaces:
            # The site's file system, where Azure's regions have Managed Lustre: the same claim.
            objects.append(
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": TRAINING_DATA_CLAIM, "namespace": namespace},
                    "spec": {
                        "accessModes": ["ReadWriteMany"],
                        "storageClassName": site.training_data.storage_class_name,
                        "resources": {"requests": {"storage": site.training_data.size}},
                    },
                }
            )
        traffic = site_team_traffic(config, key, namespace)
        objects += [
            p for p in namespace_policies(traffic) if site.cni == "cilium" or not p["kind"].startswith("Cilium")
        ]
    login_server = Naming(config.prefix, config.environment).registry_login_server()
    for rule in admission_rules(login_server):
        objects += [policy_manifest(rule), binding_manifest(rule, config.admission.action)]
    objects += workload_accounts(config, key, ids)
    objects += dispatcher_access(ids.dispatcher_principal_id, sorted(namespaces))
    objects += kueue_release(site, login_server)
    return objects


def document_name(manifest: dict[str, Any]) -> str:
    """The file one object is written to: `<kind>-[<namespace>-]<name>.yaml`, lower case."""
    metadata = manifest["metadata"]
    parts = [manifest["kind"], metadata.get("namespace", ""), metadata["name"]]
    return "-".join(p for p in parts if p).lower() + ".yaml"


# The baseline container's metadata key holding the digest of what the deploy uploaded.
DIGEST_METADATA = "platformbaselinesha256"


def baseline_digest(documents: Mapping[str, str]) -> str:
    """A digest of the whole baseline (each file's path and text, in order)."""
    digest = hashlib.sha256()
    for path in sorted(documents):
        digest.update(path.encode() + b"\0" + documents[path].encode() + b"\0")
    return digest.hexdigest()


def baseline_documents(config: PlatformConfig, key: str, ids: SiteIdentities) -> dict[str, str]:
    """The site's baseline as the files Flux reads: `<kustomization path>/<object>.yaml`."""
    documents: dict[str, str] = {}
    for path, objects in (
        (PLATFORM_PATH, platform_manifests(config, key, ids)),
        (QUEUES_PATH, [_object(m) for m in queue_manifests(config, key)]),
    ):
        for manifest in objects:
            name = f"{path}/{document_name(manifest)}"
            if name in documents:
                raise ValueError(f"two objects of the site's baseline would be written to {name}")
            documents[name] = yaml.safe_dump(manifest, sort_keys=False)
    return documents


# --- The site's API server: whom it trusts for the dispatchers ------------------------------


def authentication_config(tenant_id: str, dispatcher_principal_id: str, audience: str) -> dict[str, Any]:
    """The site's `AuthenticationConfiguration` (kube-apiserver `--authentication-config`,
    Kubernetes 1.30+: structured authentication, beta and on by default in 1.30, GA in 1.34): a
    JWT authenticator for Entra ID tokens of the dispatchers' identity and no other principal
    (`tid` and `oid` checked), for the site's own application (`audience`, which the refresher asks
    for: planning/multikueue_token.py), so a token the site receives works nowhere else; its
    username the object ID as on AKS, no groups. The v1 token's issuer is sts.windows.net; its
    discovery document is read from login.microsoftonline.com, which the site reaches already
    (the same issuer: Azure/ARO-RP#1611)."""
    return {
        "apiVersion": "apiserver.config.k8s.io/v1beta1",
        "kind": "AuthenticationConfiguration",
        "jwt": [
            {
                "issuer": {
                    "url": f"https://sts.windows.net/{tenant_id}/",
                    "discoveryURL": f"https://login.microsoftonline.com/{tenant_id}/.well-known/openid-configuration",
                    "audiences": [audience],
                },
                "claimValidationRules": [
                    {"expression": f"claims.tid == '{tenant_id}'", "message": "another tenant's token"},
                    {
                        "expression": f"claims.oid == '{dispatcher_principal_id}'",
                        "message": "only the platform's MultiKueue dispatchers sign in with Entra ID here",
                    },
                ],
                "claimMappings": {"username": {"claim": "oid", "prefix": ""}},
            }
        ],
    }
