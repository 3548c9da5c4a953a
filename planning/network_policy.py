"""Deny-by-default traffic inside the cluster, as manifests (plain dicts).

Every namespace the platform creates gets a `default-deny` NetworkPolicy (all pods, ingress
and egress, no rules) and only the allows its own pods need, each a separate, named policy
so that a review shows exactly what was opened:

- `allow-dns`: egress to CoreDNS. Where the namespace reaches hosts by name, a Cilium policy
  instead, whose DNS rule lets Cilium learn the addresses behind the names;
- `allow-within-namespace`: pods of the namespace talk to each other (operators and their
  operands, the workers of one training job);
- `allow-api-server`: egress to the Kubernetes API server (a Cilium policy: Cilium gives the
  API server an identity of its own, which an ipBlock does not select);
- `allow-webhooks`: ingress from the API server to admission webhooks and aggregated APIs;
- `allow-metrics`: ingress from the managed Prometheus scraper on the metrics ports;
- `allow-<peer>`: egress to (or ingress from) a named peer: Kafka brokers, private endpoints,
  the other region's Kafka;
- `allow-fqdns`: egress by host name (Cilium FQDN policy, enforced by Advanced Container
  Networking Services), HTTPS unless a rule says otherwise.

Kubernetes and Cilium policies add up: traffic is allowed when any policy allows it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

NETWORK_POLICY_API = "networking.k8s.io/v1"
CILIUM_API = "cilium.io/v2"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# Cilium's label for the namespace of an endpoint (in endpoint selectors).
CILIUM_NAMESPACE_LABEL = "k8s:io.kubernetes.pod.namespace"
# Cilium labels every pod with its service account under this key.
CILIUM_SERVICE_ACCOUNT_LABEL = "io.cilium.k8s.policy.serviceaccount"
DNS_PODS = {"k8s-app": "kube-dns"}
# Azure Monitor managed Prometheus: the cluster-wide scraper and the per-node one.
METRICS_SCRAPERS = ({"rsName": "ama-metrics"}, {"dsName": "ama-metrics-node"})
# Where an admission webhook or aggregated API call comes from on AKS, as Cilium sees it: the
# konnectivity agents run on the host network, so their calls carry the `remote-node`/`host`
# identity (Cilium does not apply `kube-apiserver` to ingress there, cilium/cilium#31711);
# with API server VNet integration, the API server's own addresses in its delegated subnet.
API_SERVER_CALLERS = ("kube-apiserver", "remote-node", "host")
# Entra ID sign-in: workload identity token exchange and Kafka's OAuth (JWKS, tokens).
ENTRA_ID_FQDN = "login.microsoftonline.com"
HTTPS = 443


@dataclass(frozen=True)
class Port:
    port: int
    protocol: str = "TCP"

    def manifest(self) -> dict[str, Any]:
        return {"port": self.port, "protocol": self.protocol}


@dataclass(frozen=True)
class Peer:
    """Pods of another namespace, or addresses outside the cluster, on some ports."""

    name: str
    ports: tuple[Port, ...]
    namespace: str | None = None
    pod_labels: dict[str, str] = field(default_factory=dict)
    cidrs: tuple[str, ...] = ()

    def manifest(self) -> list[dict[str, Any]]:
        if self.cidrs:
            return [{"ipBlock": {"cidr": cidr}} for cidr in self.cidrs]
        peer: dict[str, Any] = {"namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: self.namespace}}}
        if self.pod_labels:
            peer["podSelector"] = {"matchLabels": dict(self.pod_labels)}
        return [peer]


@dataclass(frozen=True)
class FqdnRule:
    """Host names some pods may reach: names, or `*.domain` for hosts below it (down to
    WILDCARD_DEPTH labels in the cluster; at any depth at the firewall)."""

    fqdns: tuple[str, ...]
    ports: tuple[Port, ...] = (Port(HTTPS),)


@dataclass(frozen=True)
class NamespaceTraffic:
    """Everything pods of one namespace may send and receive; the rest is denied."""

    namespace: str
    within_namespace: bool = True
    # Pods that call the API server, as a Cilium endpoint selector: None for none, {} for all.
    api_server: dict[str, Any] | None = None
    # Ports of admission webhooks and aggregated API servers the API server calls, and the
    # API server's subnet when it is VNet-integrated.
    webhook_ports: tuple[Port, ...] = ()
    api_server_ranges: tuple[str, ...] = ()
    # Ports the managed Prometheus scraper reads; an empty tuple with scraped=True means any.
    metrics_ports: tuple[Port, ...] = ()
    scraped: bool = False
    egress: tuple[Peer, ...] = ()
    ingress: tuple[Peer, ...] = ()
    fqdns: tuple[FqdnRule, ...] = ()

    @property
    def needs_fqdn_policies(self) -> bool:
        return bool(self.fqdns)


def _metadata(name: str, namespace: str) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/managed-by": "pulumi"}}


def _network_policy(name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": NETWORK_POLICY_API,
        "kind": "NetworkPolicy",
        "metadata": _metadata(name, namespace),
        "spec": spec,
    }


def _cilium_policy(name: str, namespace: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": CILIUM_API,
        "kind": "CiliumNetworkPolicy",
        "metadata": _metadata(name, namespace),
        "spec": spec,
    }


def _cilium_ports(ports: tuple[Port, ...]) -> list[dict[str, Any]]:
    return [{"ports": [{"port": str(p.port), "protocol": p.protocol} for p in ports]}]


DEFAULT_DENY = "default-deny"


def default_deny(namespace: str) -> dict[str, Any]:
    """Selects every pod for both directions and allows nothing."""
    return _network_policy(DEFAULT_DENY, namespace, {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]})


def _dns(traffic: NamespaceTraffic) -> dict[str, Any]:
    ports = (Port(53, "UDP"), Port(53, "TCP"))
    if traffic.needs_fqdn_policies:
        # Cilium's DNS proxy must see the lookups to map the allowed names to addresses.
        return _cilium_policy(
            "allow-dns",
            traffic.namespace,
            {
                "endpointSelector": {},
                "egress": [
                    {
                        "toEndpoints": [{"matchLabels": {CILIUM_NAMESPACE_LABEL: "kube-system", **DNS_PODS}}],
                        "toPorts": [
                            {
                                "ports": [{"port": "53", "protocol": "ANY"}],
                                "rules": {"dns": [{"matchPattern": "*"}]},
                            }
                        ],
                    }
                ],
            },
        )
    return _network_policy(
        "allow-dns",
        traffic.namespace,
        {
            "podSelector": {},
            "policyTypes": ["Egress"],
            "egress": [
                {
                    "to": [
                        {
                            "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
                            "podSelector": {"matchLabels": DNS_PODS},
                        }
                    ],
                    "ports": [p.manifest() for p in ports],
                }
            ],
        },
    )


# How deep below a configured `*.domain` the Cilium rule reaches. Cilium 1.18's `*` stays within
# one DNS label (pkg/fqdn/matchpattern: `*` becomes `[-a-zA-Z0-9_]*`; a leading `**.` for any
# depth arrived in 1.19, cilium/cilium#43420), while the firewall's leading `*` matches any
# depth. Hugging Face's deepest download host today is four labels below hf.co
# (`us-east1.us.gcp.cdn.hf.co`, huggingface.co/.well-known/meta.json), so each wildcard becomes
# one pattern per depth down to four.
WILDCARD_DEPTH = 4


def fqdn_selectors(fqdn: str) -> list[dict[str, str]]:
    """Cilium selectors for a configured destination: a name, or a wildcard at every depth."""
    if not fqdn.startswith("*."):
        return [{"matchName": fqdn}]
    domain = fqdn.removeprefix("*.")
    return [{"matchPattern": "*." * depth + domain} for depth in range(1, WILDCARD_DEPTH + 1)]


def namespace_policies(traffic: NamespaceTraffic) -> list[dict[str, Any]]:
    """The namespace's policies: default deny first, then each allow."""
    ns = traffic.namespace
    policies = [default_deny(ns), _dns(traffic)]
    if traffic.within_namespace:
        policies.append(
            _network_policy(
                "allow-within-namespace",
                ns,
                {
                    "podSelector": {},
                    "policyTypes": ["Ingress", "Egress"],
                    "ingress": [{"from": [{"podSelector": {}}]}],
                    "egress": [{"to": [{"podSelector": {}}]}],
                },
            )
        )
    if traffic.api_server is not None:
        policies.append(
            _cilium_policy(
                "allow-api-server",
                ns,
                {
                    "endpointSelector": traffic.api_server,
                    "egress": [{"toEntities": ["kube-apiserver"], "toPorts": _cilium_ports((Port(HTTPS),))}],
                },
            )
        )
    if traffic.webhook_ports:
        ports = _cilium_ports(traffic.webhook_ports)
        # Only on the webhook ports: nodes reach nothing else in the namespace.
        callers: list[dict[str, Any]] = [{"fromEntities": list(API_SERVER_CALLERS), "toPorts": ports}]
        if traffic.api_server_ranges:
            callers.append({"fromCIDR": list(traffic.api_server_ranges), "toPorts": ports})
        policies.append(_cilium_policy("allow-webhooks", ns, {"endpointSelector": {}, "ingress": callers}))
    if traffic.scraped or traffic.metrics_ports:
        rule: dict[str, Any] = {
            "from": [
                {
                    "namespaceSelector": {"matchLabels": {NAMESPACE_NAME_LABEL: "kube-system"}},
                    "podSelector": {"matchLabels": dict(scraper)},
                }
                for scraper in METRICS_SCRAPERS
            ]
        }
        if traffic.metrics_ports:
            rule["ports"] = [p.manifest() for p in traffic.metrics_ports]
        policies.append(
            _network_policy(
                "allow-metrics",
                ns,
                {
                    "podSelector": {},
                    "policyTypes": ["Ingress"],
                    "ingress": [rule],
                },
            )
        )
    for peer in traffic.egress:
        policies.append(
            _network_policy(
                f"allow-to-{peer.name}",
                ns,
                {
                    "podSelector": {},
                    "policyTypes": ["Egress"],
                    "egress": [{"to": peer.manifest(), "ports": [p.manifest() for p in peer.ports]}],
                },
            )
        )
    for peer in traffic.ingress:
        policies.append(
            _network_policy(
                f"allow-from-{peer.name}",
                ns,
                {
                    "podSelector": {},
                    "policyTypes": ["Ingress"],
                    "ingress": [{"from": peer.manifest(), "ports": [p.manifest() for p in peer.ports]}],
                },
            )
        )
    if traffic.fqdns:
        policies.append(
            _cilium_policy(
                "allow-fqdns",
                ns,
                {
                    "endpointSelector": {},
                    "egress": [
                        {
                            "toFQDNs": [s for f in rule.fqdns for s in fqdn_selectors(f)],
                            "toPorts": _cilium_ports(rule.ports),
                        }
                        for rule in traffic.fqdns
                    ],
                },
            )
        )
    return policies
