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

from contracts.cluster import (
    CILIUM_POLICY,
    NETWORK_POLICY,
    NETWORK_SECURITY_GROUP,
    RULE_COLLECTION_GROUP,
    ClusterView,
    selector_matches,
)
from facts import lustre
from planning.egress import AKS_FQDN_TAG
from planning.naming import Naming
from planning.network_policy import CILIUM_NAMESPACE_LABEL, DNS_PODS, NAMESPACE_NAME_LABEL

# Hosts behind the AzureKubernetesService FQDN tag that workloads and node agents use (AKS's
# "Outbound network and FQDN rules": the tag covers Entra ID sign-in at login.microsoftonline.com
# and Microsoft's package repository, where the Lustre CSI node plugin gets its client).
AKS_TAG_HOSTS = ("login.microsoftonline.com", lustre.CLIENT_PACKAGES_FQDN)


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
    if view.firewall_nodes is None:
        return None
    groups = [r.inputs for r in view.plan.of_type(RULE_COLLECTION_GROUP) if r.name.startswith(f"net-{view.region}-")]
    if not groups:
        return None
    # The cluster's nodes are what the firewall sees (pods are SNATed); rules for other sources
    # (a Lustre subnet, an on-premises site) do not apply to them.
    nodes = ipaddress.IPv4Network(view.firewall_nodes)
    for group in groups:
        for collection in group["ruleCollections"]:
            if collection.get("action", {}).get("type", "Allow") != "Allow":
                continue
            for rule in collection["rules"]:
                if rule.get("ruleType") != "ApplicationRule":
                    continue
                sources = rule.get("sourceAddresses") or ["*"]
                if not any(s == "*" or ("/" in s and nodes.subnet_of(ipaddress.IPv4Network(s))) for s in sources):
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


def _port_in(ranges: list[str], port: int) -> bool:
    for text in ranges:
        low, _, high = str(text).partition("-")
        if text == "*" or int(low) <= port <= int(high or low):
            return True
    return False


def nsg_admits(rules: list[dict[str, Any]], source: str, port: int) -> bool:
    """Whether an NSG's inbound rules, in priority order, let TCP from `source` (a subnet of the
    VNet) in on `port`; after its own rules, Azure's AllowVnetInBound (65000) does."""
    inbound = sorted((r for r in rules if r.get("direction") == "Inbound"), key=lambda r: int(r["priority"]))
    network = ipaddress.IPv4Network(source)
    for rule in inbound:
        if rule.get("protocol") not in ("Tcp", "*"):
            continue
        prefixes = rule.get("sourceAddressPrefixes") or [rule.get("sourceAddressPrefix")]
        deny = rule.get("access") != "Allow"

        def matches(prefix: Any, deny: bool = deny) -> bool:
            # An allow must cover every node of the subnet; a deny of any of them refuses the pool.
            if prefix in ("*", "VirtualNetwork"):
                return True
            if "/" not in str(prefix):
                return False
            other = ipaddress.IPv4Network(prefix)
            return network.subnet_of(other) or (deny and network.overlaps(other))

        if not any(matches(p) for p in prefixes):
            continue
        if _port_in(rule.get("destinationPortRanges") or [rule.get("destinationPortRange")], port):
            return rule.get("access") == "Allow"
    return True


def lustre_refusals(view: ClusterView) -> list[str]:
    """The node side of a Lustre mount: the kernel client on a node of this cluster (its nodes
    subnet) reaches the region's file system on Lustre's ports through that subnet's NSG, and
    the node plugin installs the client from Microsoft's package repository through the firewall.
    Pods send nothing: the mount is the node's."""
    config = view.config
    cluster = config["platform:clusters"][view.key]
    region, nodes = cluster["region"], cluster["subnets"]["nodes"]
    name = Naming(config["platform:prefix"], config["platform:environment"]).regional("nsg", region, "lustre")
    groups = [
        r.inputs for r in view.plan.of_type(NETWORK_SECURITY_GROUP) if r.inputs.get("networkSecurityGroupName") == name
    ]
    if not groups:
        return [f"no network security group {name}: {region} has no Lustre subnet"]
    found = []
    for ports in lustre.LUSTRE_PORTS:
        low, _, high = ports.partition("-")
        for port in range(int(low), int(high or low) + 1):
            if not nsg_admits(groups[0].get("securityRules") or [], str(nodes), port):
                found.append(f"{name} does not let the nodes ({nodes}) in on TCP {port}")
    if _firewall_allows(view, lustre.CLIENT_PACKAGES_FQDN, 443) is False:
        found.append(
            f"{lustre.CLIENT_PACKAGES_FQDN}:443: the region's firewall denies the node plugin's client install"
        )
    return found


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
