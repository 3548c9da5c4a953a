"""Reach: may this pod's traffic get where it needs to, and no further?

Inside the cluster, Kubernetes NetworkPolicies and CiliumNetworkPolicies add up: egress is
allowed when any policy selecting the pod allows it (planning/network_policy.py). Leaving the
VNet, an environment with `userDefinedRouting` sends it through the region's Azure Firewall,
whose application rules must allow the host too; with a NAT gateway only the cluster decides.

Host name matching follows each engine: Cilium 1.18's `matchPattern` turns each `*` into
`[-a-zA-Z0-9_]*`, never crossing a dot (cilium/cilium pkg/fqdn/matchpattern, v1.18), and a
bare `*` matches every name; the firewall's leading `*` matches any number of labels but not
the domain itself (learn.microsoft.com/azure/firewall/firewall-faq, "How do wildcards work").
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any

from contracts.cluster import CILIUM_POLICY, NETWORK_POLICY, RULE_COLLECTION_GROUP, ClusterView, selector_matches
from planning.egress import AKS_FQDN_TAG
from planning.network_policy import CILIUM_NAMESPACE_LABEL, DNS_PODS, NAMESPACE_NAME_LABEL

# Hosts behind the AzureKubernetesService FQDN tag that workloads use (AKS's "Outbound network
# and FQDN rules": the tag covers Entra ID sign-in at login.microsoftonline.com).
AKS_TAG_HOSTS = ("login.microsoftonline.com",)


@dataclass(frozen=True)
class Destination:
    """Where a pod sends: a host name, an address (or subnet), or pods of a namespace; and a port."""

    port: int
    host: str | None = None
    cidr: str | None = None
    namespace: str | None = None
    pod_labels: tuple[tuple[str, str], ...] = ()
    protocol: str = "TCP"

    def __str__(self) -> str:
        where = self.host or self.cidr or f"pods of {self.namespace} {dict(self.pod_labels)}"
        return f"{where}:{self.port}"


DNS = Destination(53, namespace="kube-system", pod_labels=tuple(DNS_PODS.items()), protocol="UDP")


def cilium_matches(pattern: str, host: str) -> bool:
    if pattern == "*":
        return True
    regex = "^" + re.escape(pattern.lower().rstrip(".")).replace(r"\*", "[-a-zA-Z0-9_]*") + "$"
    return re.match(regex, host.lower().rstrip(".")) is not None


def firewall_matches(pattern: str, host: str) -> bool:
    if pattern.startswith("*."):
        return host.lower().endswith(pattern[1:].lower())
    return pattern.lower() == host.lower()


def _ports_allow(ports: list[dict[str, Any]] | None, destination: Destination) -> bool:
    if not ports:
        return True
    return any(
        int(p.get("port", 0)) == destination.port and p.get("protocol", "TCP") in (destination.protocol, "ANY")
        for p in ports
    )


def _peer_allows(peer: dict[str, Any], destination: Destination, own_namespace: str) -> bool:
    if "ipBlock" in peer:
        if destination.cidr is None:
            return False
        # The platform is IPv4 only (Azure CNI Overlay without dual stack).
        return ipaddress.IPv4Network(destination.cidr).subnet_of(ipaddress.IPv4Network(peer["ipBlock"]["cidr"]))
    if destination.namespace is None:
        return False
    if "namespaceSelector" not in peer:  # a podSelector alone means the policy's own namespace
        if destination.namespace != own_namespace:
            return False
    elif not selector_matches(peer["namespaceSelector"], {NAMESPACE_NAME_LABEL: destination.namespace}):
        return False
    return "podSelector" not in peer or selector_matches(peer["podSelector"], dict(destination.pod_labels))


def _network_policies_allow(
    view: ClusterView, namespace: str, pod_labels: dict[str, str], destination: Destination
) -> bool:
    for policy in view.objects(NETWORK_POLICY, namespace):
        spec = policy["spec"]
        if "Egress" not in spec.get("policyTypes", []) or not selector_matches(spec["podSelector"], pod_labels):
            continue
        for rule in spec.get("egress") or []:
            if _ports_allow(rule.get("ports"), destination) and any(
                _peer_allows(p, destination, namespace) for p in rule.get("to") or []
            ):
                return True
    return False


def _cilium_allows(view: ClusterView, namespace: str, pod_labels: dict[str, str], destination: Destination) -> bool:
    for policy in view.objects(CILIUM_POLICY, namespace):
        spec = policy["spec"]
        if not selector_matches(spec.get("endpointSelector"), pod_labels):
            continue
        for rule in spec.get("egress") or []:
            ports = [p for block in rule.get("toPorts") or [] for p in block.get("ports") or []]
            port_ok = _ports_allow([{**p, "port": int(p["port"])} for p in ports], destination)
            if (
                destination.host
                and port_ok
                and any(
                    cilium_matches(s.get("matchName") or s.get("matchPattern"), destination.host)
                    for s in rule.get("toFQDNs") or []
                )
            ):
                return True
            if (
                destination.namespace
                and port_ok
                and any(
                    selector_matches(e, {CILIUM_NAMESPACE_LABEL: destination.namespace, **dict(destination.pod_labels)})
                    for e in rule.get("toEndpoints") or []
                )
            ):
                return True
    return False


def _cilium_resolves(view: ClusterView, namespace: str, pod_labels: dict[str, str], host: str) -> bool:
    """Cilium's DNS proxy must see (and allow) the lookup to learn the host's addresses."""
    for policy in view.objects(CILIUM_POLICY, namespace):
        if not selector_matches(policy["spec"].get("endpointSelector"), pod_labels):
            continue
        for rule in policy["spec"].get("egress") or []:
            for block in rule.get("toPorts") or []:
                for dns in (block.get("rules") or {}).get("dns") or []:
                    if cilium_matches(dns.get("matchPattern") or dns.get("matchName"), host):
                        return True
    return False


def _firewall_allows(view: ClusterView, host: str, port: int) -> bool | None:
    """None where the region has no firewall (NAT gateway egress)."""
    region = view.config["platform:clusters"][view.key]["region"]
    groups = [r.inputs for r in view.plan.of_type(RULE_COLLECTION_GROUP) if r.name.startswith(f"net-{region}-")]
    if not groups:
        return None
    for group in groups:
        for collection in group["ruleCollections"]:
            if collection.get("action", {}).get("type", "Allow") != "Allow":
                continue
            for rule in collection["rules"]:
                if rule.get("ruleType") != "ApplicationRule":
                    continue
                if not any(int(p["port"]) == port for p in rule.get("protocols") or []):
                    continue
                if any(firewall_matches(f, host) for f in rule.get("targetFqdns") or []):
                    return True
                if AKS_FQDN_TAG in (rule.get("fqdnTags") or []) and host in AKS_TAG_HOSTS:
                    return True
    return False


def ingress_refused(view: ClusterView, namespace: str, pod_labels: dict[str, str], destination: Destination) -> bool:
    """Whether the destination's own namespace refuses a pod of `namespace` with `pod_labels`:
    some Kubernetes NetworkPolicy there isolates the destination pods for ingress, and none of
    those admits the source on the port (Cilium enforces them as Kubernetes defines them)."""
    assert destination.namespace is not None
    source = Destination(destination.port, namespace=namespace, pod_labels=tuple(pod_labels.items()))
    isolating = [
        policy["spec"]
        for policy in view.objects(NETWORK_POLICY, destination.namespace)
        if "Ingress" in policy["spec"].get("policyTypes", [])
        and selector_matches(policy["spec"]["podSelector"], dict(destination.pod_labels))
    ]
    return bool(isolating) and not any(
        _ports_allow(rule.get("ports"), destination)
        and any(_peer_allows(p, source, destination.namespace) for p in rule.get("from") or [])
        for spec in isolating
        for rule in spec.get("ingress") or []
    )


def refusals(view: ClusterView, namespace: str, pod_labels: dict[str, str], needs: list[Destination]) -> list[str]:
    found = []
    for destination in [DNS, *needs]:
        if destination.host:
            if not _cilium_resolves(view, namespace, pod_labels, destination.host):
                found.append(f"{destination}: Cilium's DNS proxy does not allow looking it up")
            if not _cilium_allows(view, namespace, pod_labels, destination):
                found.append(f"{destination}: no Cilium FQDN rule in {namespace!r} allows it")
            if _firewall_allows(view, destination.host, destination.port) is False:
                found.append(f"{destination}: the region's firewall denies it")
        elif not (
            _network_policies_allow(view, namespace, pod_labels, destination)
            or _cilium_allows(view, namespace, pod_labels, destination)
        ):
            found.append(f"{destination}: no network policy in {namespace!r} allows it")
    return found
