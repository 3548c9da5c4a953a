"""The serving edge's plain logic (docs/serving.md): names, addresses and the Istio objects of each
serving cluster's internal gateway, as manifests (no Pulumi).

Per serving cluster, in the add-on's gateway namespace (`aks-istio-ingress`, platform-owned):
- `serving-gateway`: the platform's own internal load balancer Service in front of the add-on's
  gateway pods, at a pinned address of the node subnet, carrying the Private Link service's
  annotations where other networks consume it (the add-on's own Service reverts annotations off
  its allowlist, Private Link's among them: facts/istio.py);
- the Istio `Gateway` `serving`: one HTTPS server per team, `*.<team>.<zone>`, TLS 1.2 or later
  with the team's certificate (synced from Key Vault), bindable only by VirtualServices of the
  team's own namespaces;
- `RequestAuthentication`: Entra ID v2.0 tokens of the tenant, for the APIs' applications;
- `AuthorizationPolicy` `serving-require-token` (DENY a request without a valid token) and one
  ALLOW per API: each route's host and path prefix, for tokens naming the API's application and
  carrying the route's app role. Anything no ALLOW matches is refused (default deny).

Per API, in its workload's namespace (the tenants'): a `VirtualService` binding its host to the
gateway and routing each prefix to the team's Service, and for gRPC a `DestinationRule` that
speaks HTTP/2 to the pods.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from facts import entra, istio
from facts.aks_load_balancer import INTERNAL_LB, INTERNAL_LB_SUBNET, LB_IPV4
from facts.workload_identity import CLIENT_ID_ANNOTATION, TENANT_ID_ANNOTATION
from planning.images import mirrored
from planning.naming import Naming
from planning.network_policy import DNS_PODS, NAMESPACE_NAME_LABEL
from stackconfig.model import PlatformConfig, ServingApiConfig

GATEWAY_NAME = "serving"
GATEWAY_SERVICE = "serving-gateway"
REQUIRE_TOKEN_POLICY = "serving-require-token"
# The Private Link service annotations cloud-provider-azure reads on a LoadBalancer Service
# (pkg/consts/consts.go; learn.microsoft.com/azure/aks/internal-lb, "Create a Private Link service").
PLS_CREATE = "service.beta.kubernetes.io/azure-pls-create"
PLS_NAME = "service.beta.kubernetes.io/azure-pls-name"
PLS_SUBNET = "service.beta.kubernetes.io/azure-pls-ip-configuration-subnet"
PLS_VISIBILITY = "service.beta.kubernetes.io/azure-pls-visibility"
PLS_AUTO_APPROVAL = "service.beta.kubernetes.io/azure-pls-auto-approval"
TCP_IDLE_TIMEOUT = "service.beta.kubernetes.io/azure-load-balancer-tcp-idle-timeout"
# The Service that keeps the team's certificate synced from Key Vault into the gateway's namespace
# (the Secrets Store CSI driver syncs a Secret only while a pod mounts its SecretProviderClass).
CERTIFICATE_SYNC = "serving-certificates"
# The platform identity that syncs it (workload identity: Key Vault Secrets User on each team's
# certificate, nothing else).
CERTIFICATE_WORKLOAD = "serving-tls"
CERTIFICATE_LABEL = "platform.ai/serving-certificate"
PAUSE_REPOSITORY = "registry.k8s.io/pause"
PAUSE_TAG = "3.10"


def serving_clusters(config: PlatformConfig) -> list[str]:
    return list(config.serving.clusters) if config.serving is not None else []


def revisions(config: PlatformConfig) -> list[str]:
    """The Istio add-on's revisions: config's (two during a canary upgrade), or the pinned one."""
    assert config.serving is not None
    return list(config.serving.istio_revisions) or [istio.REVISION]


def team_domain(config: PlatformConfig, team: str) -> str:
    assert config.serving is not None
    return f"{team}.{config.serving.zone}"


def api_host(config: PlatformConfig, api: str) -> str:
    assert config.serving is not None
    return f"{api}.{team_domain(config, config.serving.apis[api].team)}"


def serving_teams(config: PlatformConfig) -> list[str]:
    """The teams that serve an API, each with a server (and a certificate) on the gateway."""
    assert config.serving is not None
    return list(dict.fromkeys(spec.team for spec in config.serving.apis.values()))


def certificate_name(config: PlatformConfig, team: str) -> str:
    """The team's certificate in Key Vault, and the Secret the gateway's server names."""
    assert config.serving is not None
    return f"{config.serving.tls_certificate_prefix}-{team}"


def gateway_address(config: PlatformConfig, cluster: str) -> str:
    """The gateway's pinned address: the node subnet's second-to-last usable address (the last is
    Kafka's listener for other networks: planning/kafka.py; Azure hands out node addresses from
    the bottom)."""
    subnet = config.clusters[cluster].subnets.nodes
    return str(subnet.broadcast_address - 2)


def api_clusters(config: PlatformConfig, api: str) -> list[str]:
    """The serving clusters an API is served from: where its workload runs."""
    assert config.serving is not None
    runs = config.workload_clusters(config.serving.apis[api].workload)
    return [c for c in serving_clusters(config) if c in runs]


def _metadata(name: str, namespace: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, **extra}


def private_link_subnet(config: PlatformConfig, cluster: str) -> bool:
    """Whether the cluster's node subnet holds its gateway's Private Link service's NAT addresses."""
    return config.serving is not None and bool(config.serving.private_link) and cluster in serving_clusters(config)


def gateway_service(config: PlatformConfig, cluster: str) -> dict[str, Any]:
    """The platform's internal load balancer in front of the add-on's gateway pods."""
    assert config.serving is not None
    naming = Naming(config.prefix, config.environment)
    subnet = naming.regional("snet", config.clusters[cluster].region, f"{cluster}-nodes")
    annotations = {INTERNAL_LB: "true", INTERNAL_LB_SUBNET: subnet, LB_IPV4: gateway_address(config, cluster)}
    consumers = config.serving.private_link
    if consumers:
        annotations |= {
            PLS_CREATE: "true",
            PLS_NAME: naming.regional("pls", config.clusters[cluster].region, f"{cluster}-serving"),
            PLS_SUBNET: subnet,
            # Only the consumers' subscriptions see it; only those config approves connect unasked.
            PLS_VISIBILITY: " ".join(str(c.subscription_id) for c in consumers),
        }
        approved = [str(c.subscription_id) for c in consumers if c.auto_approve]
        if approved:
            annotations[PLS_AUTO_APPROVAL] = " ".join(approved)
    # Longer than Envoy's 5 minutes of an idle stream, so the gateway, not the load balancer's
    # default 4 minutes, ends a quiet gRPC stream (which HTTP/2 keepalives prevent).
    annotations[TCP_IDLE_TIMEOUT] = "30"
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": _metadata(
            GATEWAY_SERVICE,
            istio.INGRESS_NAMESPACE,
            annotations=annotations,
            labels={istio.DISABLE_PORT_TRANSLATION: "true"},
        ),
        "spec": {
            "type": "LoadBalancer",
            # Callers' addresses reach the gateway (its logs, its policies); Private Link's arrive
            # as the service's NAT addresses either way.
            "externalTrafficPolicy": "Local",
            "selector": dict(istio.GATEWAY_SELECTOR),
            "ports": [
                {"name": "https", "port": istio.HTTPS_PORT, "targetPort": istio.POD_HTTPS_PORT, "protocol": "TCP"}
            ],
        },
    }


def gateway(config: PlatformConfig) -> dict[str, Any]:
    """One HTTPS server per serving team: its hosts, bindable only from its own namespaces."""
    servers = []
    for team in serving_teams(config):
        domain = team_domain(config, team)
        servers.append(
            {
                "port": {"number": istio.HTTPS_PORT, "name": f"https-{team}", "protocol": "HTTPS"},
                "hosts": [f"{namespace}/*.{domain}" for namespace in config.teams[team].namespaces],
                "tls": {
                    "mode": "SIMPLE",
                    "credentialName": certificate_name(config, team),
                    "minProtocolVersion": "TLSV1_2",
                },
            }
        )
    return {
        "apiVersion": istio.NETWORKING_API,
        "kind": "Gateway",
        "metadata": _metadata(GATEWAY_NAME, istio.INGRESS_NAMESPACE),
        "spec": {"selector": dict(istio.GATEWAY_SELECTOR), "servers": servers},
    }


def request_authentication(config: PlatformConfig, tenant_id: str) -> dict[str, Any]:
    """Entra ID v2.0 tokens of the tenant for the APIs' applications; istiod fetches the keys
    (login.microsoftonline.com, on AKS's required egress). A request without a token passes this
    and meets `serving-require-token`."""
    assert config.serving is not None
    audiences = sorted({str(spec.application_client_id) for spec in config.serving.apis.values()})
    return {
        "apiVersion": istio.SECURITY_API,
        "kind": "RequestAuthentication",
        "metadata": _metadata("serving-entra-id", istio.INGRESS_NAMESPACE),
        "spec": {
            "selector": {"matchLabels": dict(istio.GATEWAY_SELECTOR)},
            "jwtRules": [
                {"issuer": entra.issuer(tenant_id), "jwksUri": entra.jwks_uri(tenant_id), "audiences": audiences}
            ],
        },
    }


def require_token() -> dict[str, Any]:
    """DENY, before any ALLOW: a request without a valid token (no request principal)."""
    return {
        "apiVersion": istio.SECURITY_API,
        "kind": "AuthorizationPolicy",
        "metadata": _metadata(REQUIRE_TOKEN_POLICY, istio.INGRESS_NAMESPACE),
        "spec": {
            "selector": {"matchLabels": dict(istio.GATEWAY_SELECTOR)},
            "action": "DENY",
            "rules": [{"from": [{"source": {"notRequestPrincipals": ["*"]}}]}],
        },
    }


def api_policy(config: PlatformConfig, api: str) -> dict[str, Any]:
    """ALLOW each route of the API for tokens naming its application and carrying the route's role."""
    assert config.serving is not None
    spec = config.serving.apis[api]
    host = api_host(config, api)
    return {
        "apiVersion": istio.SECURITY_API,
        "kind": "AuthorizationPolicy",
        "metadata": _metadata(f"serving-{api}", istio.INGRESS_NAMESPACE),
        "spec": {
            "selector": {"matchLabels": dict(istio.GATEWAY_SELECTOR)},
            "action": "ALLOW",
            "rules": [
                {
                    # The authority as clients send it: gRPC's carries the port (`host:443`),
                    # which Istio's host match compares exactly (matcher/header.go).
                    "to": [{"operation": {"hosts": [host, f"{host}:*"], "paths": [f"{route.prefix}*"]}}],
                    "when": [
                        {"key": "request.auth.audiences", "values": [str(spec.application_client_id)]},
                        {"key": "request.auth.claims[roles]", "values": [route.role]},
                    ],
                }
                for route in spec.routes
            ],
        },
    }


def upstream(config: PlatformConfig, spec: ServingApiConfig) -> str:
    namespace = config.workloads[spec.workload].namespace
    return f"{spec.service_name}.{namespace}.svc.cluster.local"


def virtual_service(config: PlatformConfig, api: str) -> dict[str, Any]:
    """The API's host on the gateway, each route to the team's Service; in its workload's namespace."""
    assert config.serving is not None
    spec = config.serving.apis[api]
    namespace = config.workloads[spec.workload].namespace
    return {
        "apiVersion": istio.NETWORKING_API,
        "kind": "VirtualService",
        "metadata": _metadata(f"serving-{api}", namespace),
        "spec": {
            "hosts": [api_host(config, api)],
            "gateways": [f"{istio.INGRESS_NAMESPACE}/{GATEWAY_NAME}"],
            "http": [
                {
                    "name": f"route-{i}",
                    "match": [{"uri": {"prefix": route.prefix}}],
                    "route": [{"destination": {"host": upstream(config, spec), "port": {"number": spec.port}}}],
                }
                for i, route in enumerate(spec.routes)
            ],
        },
    }


def destination_rules(config: PlatformConfig, cluster: str) -> list[dict[str, Any]]:
    """For the gRPC APIs: HTTP/2 from the gateway to their ports alone (an HTTP API on the same
    Service keeps HTTP/1.1: a host-wide upgrade would send h2c to it, istio
    pilot/pkg/networking/core/cluster_traffic_policy.go), whatever the Service's ports are named,
    with no limit on a connection's requests (long-lived streams). One rule per Service."""
    assert config.serving is not None
    ports: dict[tuple[str, str], list[int]] = {}
    for api, spec in config.serving.apis.items():
        if spec.protocol == "grpc" and cluster in api_clusters(config, api):
            namespace = config.workloads[spec.workload].namespace
            ports.setdefault((namespace, spec.service_name), []).append(spec.port)
    return [
        {
            "apiVersion": istio.NETWORKING_API,
            "kind": "DestinationRule",
            "metadata": _metadata(f"serving-{service}", namespace),
            "spec": {
                "host": f"{service}.{namespace}.svc.cluster.local",
                # Only the gateway applies it (the serving pods run no sidecar).
                "exportTo": [istio.INGRESS_NAMESPACE],
                "trafficPolicy": {
                    "portLevelSettings": [
                        {
                            "port": {"number": port},
                            "connectionPool": {"http": {"h2UpgradePolicy": "UPGRADE", "maxRequestsPerConnection": 0}},
                        }
                        for port in sorted(set(numbers))
                    ]
                },
            },
        }
        for (namespace, service), numbers in ports.items()
    ]


@dataclass(frozen=True)
class ServedPort:
    """What the gateway's pods reach in a team namespace: an API's Service port."""

    api: str
    namespace: str
    port: int


def served_ports(config: PlatformConfig, cluster: str) -> list[ServedPort]:
    """The APIs' ports the gateway of `cluster` reaches, per namespace."""
    if config.serving is None or cluster not in serving_clusters(config):
        return []
    return [
        ServedPort(api, config.workloads[spec.workload].namespace, spec.port)
        for api, spec in config.serving.apis.items()
        if cluster in api_clusters(config, api)
    ]


def certificate_objects(
    config: PlatformConfig, cluster: str, client_id: str, tenant_id: str, login_server: str
) -> list[dict[str, Any]]:
    """What keeps each serving team's certificate synced from the region's Key Vault into the
    gateway's namespace, where the gateway's server names it: a SecretProviderClass per team (the
    certificate's secret: its key and chain, split into a `kubernetes.io/tls` Secret), read with the
    `serving-tls` workload identity, and per team a small Deployment mounting it (the driver syncs
    a Secret only while a pod mounts its class). The
    driver's rotation (the add-on's `enableSecretRotation`) rewrites the Secret when Key Vault's
    certificate renews; istiod pushes it to the gateway without a restart."""
    region = config.clusters[cluster].region
    vault = Naming(config.prefix, config.environment).key_vault(region)
    classes: list[dict[str, Any]] = []
    for team in serving_teams(config):
        name = certificate_name(config, team)
        objects = f"array:\n  - |\n    objectName: {name}\n    objectType: secret\n"
        classes.append(
            {
                "apiVersion": "secrets-store.csi.x-k8s.io/v1",
                "kind": "SecretProviderClass",
                "metadata": _metadata(name, istio.INGRESS_NAMESPACE),
                "spec": {
                    "provider": "azure",
                    "parameters": {
                        "usePodIdentity": "false",
                        "clientID": client_id,
                        "keyvaultName": vault,
                        "tenantId": tenant_id,
                        "objects": objects,
                    },
                    "secretObjects": [
                        {
                            "secretName": name,
                            "type": "kubernetes.io/tls",
                            "data": [{"objectName": name, "key": "tls.key"}, {"objectName": name, "key": "tls.crt"}],
                        }
                    ],
                },
            }
        )
    # One small Deployment per team, so one team's missing certificate stalls only its own sync.
    deployments = [_certificate_sync(spc["metadata"]["name"], login_server) for spc in classes]
    account = {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": _metadata(
            CERTIFICATE_SYNC,
            istio.INGRESS_NAMESPACE,
            annotations={CLIENT_ID_ANNOTATION: client_id, TENANT_ID_ANNOTATION: tenant_id},
        ),
    }
    return [account, *classes, *deployments]


def _certificate_sync(name: str, login_server: str) -> dict[str, Any]:
    """Two pods holding the team's SecretProviderClass mounted, spread over zones (the driver
    syncs the Secret only while a pod mounts the class; the Secret belongs to the ReplicaSet, so a
    drained pod does not delete it). The driver asks the kubelet for the service account's token
    itself: the pods need no token of their own."""
    labels = {"app": CERTIFICATE_SYNC, CERTIFICATE_LABEL: name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": _metadata(name, istio.INGRESS_NAMESPACE, labels=labels),
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": CERTIFICATE_SYNC,
                    "automountServiceAccountToken": False,
                    "securityContext": {
                        "runAsNonRoot": True,
                        "runAsUser": 65532,
                        "seccompProfile": {"type": "RuntimeDefault"},
                    },
                    "topologySpreadConstraints": [
                        {
                            "maxSkew": 1,
                            "topologyKey": "topology.kubernetes.io/zone",
                            "whenUnsatisfiable": "ScheduleAnyway",
                            "labelSelector": {"matchLabels": labels},
                        }
                    ],
                    "containers": [
                        {
                            "name": "hold",
                            # Holds the mount and does nothing else (Kubernetes' pause, mirrored).
                            "image": f"{mirrored(PAUSE_REPOSITORY, login_server)}:{PAUSE_TAG}",
                            "securityContext": {
                                "allowPrivilegeEscalation": False,
                                "capabilities": {"drop": ["ALL"]},
                                "readOnlyRootFilesystem": True,
                            },
                            "resources": {
                                "requests": {"cpu": "5m", "memory": "16Mi"},
                                "limits": {"cpu": "50m", "memory": "32Mi"},
                            },
                            "volumeMounts": [
                                {"name": "certificate", "mountPath": "/mnt/certificate", "readOnly": True}
                            ],
                        }
                    ],
                    "volumes": [
                        {
                            "name": "certificate",
                            "csi": {
                                "driver": "secrets-store.csi.k8s.io",
                                "readOnly": True,
                                "volumeAttributes": {"secretProviderClass": name},
                            },
                        }
                    ],
                },
            },
        },
    }


def gateway_monitor() -> dict[str, Any]:
    """Managed Prometheus scrapes the gateway's Envoy (its `http-envoy-prom` port, 15090, in
    Istio's gateway chart): request rate, errors and latency per API (planning/alerts.py)."""
    return {
        "apiVersion": "azmonitoring.coreos.com/v1",
        "kind": "PodMonitor",
        "metadata": _metadata(GATEWAY_SERVICE, istio.INGRESS_NAMESPACE),
        "spec": {
            "selector": {"matchLabels": dict(istio.GATEWAY_SELECTOR)},
            "podMetricsEndpoints": [{"port": istio.METRICS_PORT_NAME, "path": "/stats/prometheus", "interval": "30s"}],
        },
    }


def gateway_manifests(
    config: PlatformConfig, cluster: str, client_id: str, tenant_id: str, login_server: str
) -> list[dict[str, Any]]:
    """What a serving cluster's unit applies: its gateway's Service, the certificates' sync, the
    Gateway, token validation and the DENY of a request without a token."""
    return [
        gateway_service(config, cluster),
        *certificate_objects(config, cluster, client_id, tenant_id, login_server),
        gateway(config),
        request_authentication(config, tenant_id),
        require_token(),
        gateway_monitor(),
    ]


def gateway_egress(config: PlatformConfig, cluster: str) -> dict[str, Any]:
    """What the gateway's pods may open: the served APIs' pods on their ports, istiod's xDS, and
    DNS; nothing else (not the VNet, not the internet), so a route cannot make the gateway a proxy
    beyond the models it serves."""
    peers: dict[str, set[int]] = {}
    for served in served_ports(config, cluster):
        peers.setdefault(served.namespace, set()).add(served.port)
    egress = [
        {
            "to": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: namespace}}}],
            "ports": [{"protocol": "TCP", "port": port} for port in sorted(ports)],
        }
        for namespace, ports in sorted(peers.items())
    ]
    egress += [
        {
            "to": [{"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: istio.SYSTEM_NAMESPACE}}}],
            "ports": [{"protocol": "TCP", "port": istio.XDS_PORT}],
        },
        {
            "to": [
                {
                    "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
                    "podSelector": {"matchLabels": dict(DNS_PODS)},
                }
            ],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
        },
    ]
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": _metadata("serving-gateway-egress", istio.INGRESS_NAMESPACE),
        "spec": {
            "podSelector": {"matchLabels": dict(istio.GATEWAY_SELECTOR)},
            "policyTypes": ["Egress"],
            "egress": egress,
        },
    }


def api_manifests(config: PlatformConfig, cluster: str) -> list[dict[str, Any]]:
    """What the tenants apply on a serving cluster, per API served there: its VirtualService (and
    DestinationRule) and its ALLOW policy on the gateway."""
    assert config.serving is not None
    found: list[dict[str, Any]] = []
    for api in config.serving.apis:
        if cluster not in api_clusters(config, api):
            continue
        found += [virtual_service(config, api), api_policy(config, api)]
    return [*found, *destination_rules(config, cluster), gateway_egress(config, cluster)]


def region_gateway(config: PlatformConfig, region: str) -> str | None:
    """The serving cluster of a region (one at most: validation.checks.serving)."""
    return next((c for c in serving_clusters(config) if config.clusters[c].region == region), None)


def zone_records(config: PlatformConfig, region: str) -> dict[str, str]:
    """The serving zone's records in a region: each serving team's names, `*.<team>`, at the
    region's gateway."""
    cluster = region_gateway(config, region)
    if cluster is None:
        return {}
    return {f"*.{team}": gateway_address(config, cluster) for team in serving_teams(config)}
