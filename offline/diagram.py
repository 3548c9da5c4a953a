"""A Mermaid diagram of an environment, drawn from its offline plan (never by hand).

Grouped, not a box per resource, so prod-scale reads like dev: per region a subgraph with the
spoke VNet (address space, subnet count), its egress, its private endpoints by what they reach,
and its clusters (pools with size and node range; GPU pools with their GPUs at max) with Kafka
and Flink; the hub each VNet peers with; the data plane (storage, Key Vault, registry, Event
Hubs); MirrorMaker 2 between Kafka clusters; the fleet. Given a pull request's changes, each
box the change touches is coloured: added, changed, replaced (a box with a resource that Azure
would replace or delete), removed. GitHub renders Mermaid in comments and Markdown.

Emitted grammar (checked by Mermaid's own parser in tests/test_review.py, tools/mermaid): a
`flowchart LR`, `subgraph id["label"] ... end`, nodes `id["label"]` with `<br/>` line breaks,
edges `a --- b`, `a --> b`, `a -. "label" .-> b`, `classDef`, `class a,b name`.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from offline.cost import capacity
from offline.plandiff import normal_urn

# Mermaid's defaults (mermaid/src/defaultConfig.ts): longer text or more edges and it refuses.
MAX_TEXT = 50_000
MAX_EDGES = 500

CLASSES = {
    "added": "fill:#dafbe1,stroke:#1a7f37,stroke-width:2px",
    "changed": "fill:#fff8c5,stroke:#9a6700,stroke-width:2px",
    "replaced": "fill:#ffebe9,stroke:#cf222e,stroke-width:3px",
    "removed": "fill:#f6f8fa,stroke:#cf222e,stroke-width:2px,stroke-dasharray:5 5",
}
_ENDPOINT_NAMES = {
    "blob": "Blob",
    "dfs": "Data Lake",
    "vault": "Key Vault",
    "registry": "registry",
    "namespace": "Event Hubs",
    "azuremonitor": "Azure Monitor",
    "grafana": "Grafana",
    "prometheusMetrics": "Prometheus",
}


# What a cluster runs, counted per cluster (by the Kubernetes provider that deploys it).
_WORKLOADS = {
    "Namespace": "namespace",
    "Kafka": "Kafka cluster",
    "KafkaNodePool": "Kafka node pool",
    "KafkaTopic": "Kafka topic",
    "KafkaUser": "Kafka user",
    "KafkaMirrorMaker2": "MirrorMaker 2",
    "FlinkDeployment": "Flink job",
    "ClusterQueue": "Kueue cluster queue",
    "LocalQueue": "Kueue local queue",
}


def _tail(type_: str) -> str:
    return type_.rsplit(":", 1)[-1]


def _id(*parts: str) -> str:
    return "_".join(re.sub(r"[^A-Za-z0-9]", "_", p) for p in parts)


def _label(text: str) -> str:
    """Mermaid reads `#...;` as an entity and ends a quoted label at `"`."""
    return text.replace("#", "#35;").replace('"', "#quot;")


@dataclass
class _Box:
    id: str
    lines: list[str]
    urns: set[str] = field(default_factory=set)


@dataclass
class _Graph:
    groups: dict[str, tuple[str, list[_Box]]] = field(default_factory=dict)  # id -> (label, boxes)
    loose: list[_Box] = field(default_factory=list)
    edges: list[tuple[str, str, str]] = field(default_factory=list)  # (from, to, arrow with label)

    def box(self, group: str | None, group_label: str, box: _Box) -> _Box:
        if group is None:
            existing = next((b for b in self.loose if b.id == box.id), None)
            if existing:
                return existing
            self.loose.append(box)
            return box
        _, boxes = self.groups.setdefault(group, (group_label, []))
        existing = next((b for b in boxes if b.id == box.id), None)
        if existing:
            return existing
        boxes.append(box)
        return box


def _status(box: _Box, status: Mapping[str, str]) -> str | None:
    actions = {status[u] for u in box.urns if u in status}
    if not actions:
        return None
    if actions <= {"create"}:
        return "added"
    if actions <= {"delete"} and all(status.get(u) == "delete" for u in box.urns):
        return "removed"
    if actions & {"replace", "delete"}:
        return "replaced"
    return "changed"


def _short(size: str) -> str:
    return size.removeprefix("Standard_")


def mermaid(resources: Iterable[Mapping[str, Any]], status: Mapping[str, str] | None = None) -> str:
    """The diagram of an environment's resources (every unit stack's; add the base's deleted
    ones to show removals); `status`: normal URN -> create | update | replace | delete."""
    status = status or {}
    every = list(resources)
    by_type: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for r in every:
        by_type[_tail(r["type"])].append(r)
    graph = _Graph()

    def urn(r: Mapping[str, Any]) -> str:
        return normal_urn(r["urn"])

    # Regions: spoke VNets, subnets, egress, endpoints.
    vnet_region: dict[str, str] = {}
    for vnet in by_type["VirtualNetwork"]:
        inputs = vnet["inputs"]
        region, name = inputs.get("location", "?"), inputs.get("virtualNetworkName", vnet["name"])
        vnet_region[name] = region
        subnets = [s for s in by_type["Subnet"] if s["inputs"].get("virtualNetworkName") == name]
        prefixes = ", ".join(inputs.get("addressSpace", {}).get("addressPrefixes", []))
        box = graph.box(
            _id("region", region),
            region,
            _Box(_id("vnet", name), [f"VNet {name}", f"{prefixes} · {len(subnets)} subnets"]),
        )
        box.urns |= {urn(vnet)} | {urn(s) for s in subnets}
        for kind in ("RouteTable", "NetworkSecurityGroup"):
            box.urns |= {urn(r) for r in by_type[kind] if r["inputs"].get("location") == region}
    for firewall in by_type["AzureFirewall"]:
        inputs = firewall["inputs"]
        region = inputs.get("location", "?")
        tier = inputs.get("sku", {}).get("tier", "")
        box = graph.box(
            _id("region", region),
            region,
            _Box(_id("egress", region), [f"Azure Firewall {tier}", "egress, deny by default"]),
        )
        box.urns.add(urn(firewall))
        box.urns |= {
            urn(r)
            for r in by_type["FirewallPolicy"] + by_type["PublicIPAddress"]
            if r["inputs"].get("location") == region
        }
        graph.edges += [(_id("vnet", v), box.id, "-->") for v, r in vnet_region.items() if r == region]
    for nat in by_type["NatGateway"]:
        region = nat["inputs"].get("location", "?")
        box = graph.box(_id("region", region), region, _Box(_id("egress", region), ["NAT gateway", "egress"]))
        box.urns.add(urn(nat))
        graph.edges += [(_id("vnet", v), box.id, "-->") for v, r in vnet_region.items() if r == region]
    endpoints: dict[str, Counter[str]] = defaultdict(Counter)
    endpoint_urns: dict[str, set[str]] = defaultdict(set)
    for endpoint in by_type["PrivateEndpoint"]:
        inputs = endpoint["inputs"]
        region = inputs.get("location", "?")
        for connection in inputs.get("privateLinkServiceConnections", []):
            for group in connection.get("groupIds", []):
                endpoints[region][_ENDPOINT_NAMES.get(group, group)] += 1
        endpoint_urns[region].add(urn(endpoint))
    for region, counts in endpoints.items():
        listing = ", ".join(f"{name} ×{n}" if n > 1 else name for name, n in sorted(counts.items()))
        total = sum(counts.values())
        box = graph.box(
            _id("region", region), region, _Box(_id("pe", region), [f"Private endpoints ({total})", listing])
        )
        box.urns |= endpoint_urns[region]
        names = {
            e["inputs"].get("privateEndpointName")
            for e in by_type["PrivateEndpoint"]
            if e["inputs"].get("location") == region
        }
        box.urns |= {urn(r) for r in by_type["PrivateDnsZoneGroup"] if r["inputs"].get("privateEndpointName") in names}
        graph.edges.append((box.id, "data", "-->"))

    # The hub: peerings whose remote VNet is not one of ours.
    for peering in by_type["VirtualNetworkPeering"]:
        inputs = peering["inputs"]
        local = inputs.get("virtualNetworkName", "")
        remote = str(inputs.get("remoteVirtualNetwork", {}).get("id", "")).rsplit("/", 1)[-1]
        if local in vnet_region and remote not in vnet_region:
            hub = graph.box(None, "", _Box(_id("hub", remote), [f"hub {remote}", "yours: runners, firewall, gateways"]))
            hub.urns.add(urn(peering))
            graph.edges.append((_id("vnet", local), hub.id, "---"))
        elif remote in vnet_region and local not in vnet_region:
            hub = graph.box(None, "", _Box(_id("hub", local), [f"hub {local}", "yours: runners, firewall, gateways"]))
            hub.urns.add(urn(peering))

    # Clusters, their pools, Kafka and Flink.
    cluster_of_provider: dict[str, str] = {}
    for provider in every:
        if provider["type"] == "pulumi:providers:kubernetes":
            cluster_of_provider[provider["urn"]] = str(provider["inputs"].get("clusterIdentifier", ""))
    clusters: dict[str, _Box] = {}
    pools = capacity(every).pools
    for managed in by_type["ManagedCluster"]:
        inputs = managed["inputs"]
        name, region = inputs.get("resourceName", managed["name"]), inputs.get("location", "?")
        lines = [f"AKS {name} ({inputs.get('sku', {}).get('tier', 'Free')})"]
        # Registration order is the engine's (asynchronous): sort, so a plan draws one way.
        for pool in sorted((p for p in pools if p.cluster == name), key=lambda p: (p.name != "system", p.name)):
            extra = f" · {pool.max_nodes * pool.gpus_per_node:,} GPUs" if pool.gpus_per_node else ""
            lines.append(f"{pool.name}: {pool.min_nodes}–{pool.max_nodes:,} × {_short(pool.vm_size)}{extra}")
        box = graph.box(_id("region", region), region, _Box(_id("aks", name), lines))
        box.urns |= {urn(managed)} | {urn(p) for p in by_type["AgentPool"] if p["inputs"].get("resourceName") == name}
        clusters[name] = box
        subnet = str(inputs.get("agentPoolProfiles", [{}])[0].get("vnetSubnetID", ""))
        match = re.search(r"/virtualNetworks/([^/]+)/", subnet)
        if match:
            graph.edges.append((box.id, _id("vnet", match.group(1)), "---"))
    kafka_box: dict[str, str] = {}
    workloads: dict[str, Counter[str]] = defaultdict(Counter)
    workload_urns: dict[str, set[str]] = defaultdict(set)
    for r in every:
        target = cluster_of_provider.get(r.get("provider", ""), "")
        what = _WORKLOADS.get(_tail(r["type"])) if r["type"].startswith("kubernetes:") else None
        if target in clusters and what:
            workloads[target][what] += 1
            workload_urns[target].add(urn(r))
    for target, counts in workloads.items():
        region_group = next(g for g, (_, boxes) in graph.groups.items() if clusters[target] in boxes)
        label_lines = [f"on {target}"]
        label_lines += [
            f"{counts[what]} {what}{'s' if counts[what] > 1 else ''}" for what in _WORKLOADS.values() if counts[what]
        ]
        box = graph.box(region_group, "", _Box(_id("apps", target), label_lines))
        box.urns |= workload_urns[target]
        graph.edges.append((clusters[target].id, box.id, "-->"))
        if counts.get(_WORKLOADS["Kafka"]):
            kafka_box[target] = box.id
    for mirror in by_type["KafkaMirrorMaker2"]:
        into = cluster_of_provider.get(mirror.get("provider", ""), "")
        for spec in mirror["inputs"].get("spec", {}).get("mirrors", []):
            alias = str(spec.get("source", {}).get("alias") or spec.get("sourceCluster", ""))
            source = next((c for c in kafka_box if c.endswith(f"-{alias}")), None)
            if source and into in kafka_box:
                graph.edges.append((kafka_box[source], kafka_box[into], '-. "MirrorMaker 2" .->'))

    # Data plane and fleet.
    data_lines: list[str] = []
    data_urns: set[str] = set()
    accounts = by_type["StorageAccount"]
    if accounts:
        skus = Counter(str(a["inputs"].get("sku", {}).get("name", "?")).removeprefix("Standard_") for a in accounts)
        data_lines.append(
            f"{len(accounts)} storage accounts ({', '.join(f'{n} {s}' for s, n in sorted(skus.items()))})"
        )
        data_urns |= {urn(a) for a in accounts + by_type["BlobContainer"]}
    for kind, label in (
        ("Vault", "Key Vault"),
        ("Registry", "Premium registry"),
        ("Namespace", "Event Hubs namespace"),
    ):
        found = [r for r in by_type[kind] if r["type"].startswith("azure-native:")]
        if found:
            data_lines.append(f"{len(found)} {label}{'s' if len(found) > 1 else ''}")
            data_urns |= {urn(r) for r in found}
    if by_type["Replication"]:
        data_lines.append(
            f"registry replicas: {', '.join(sorted(r['inputs'].get('location', '?') for r in by_type['Replication']))}"
        )
        data_urns |= {urn(r) for r in by_type["Replication"]}
    if data_lines:
        box = graph.box(None, "", _Box("data", ["Data plane (Private Link only)", *data_lines]))
        box.urns |= data_urns
    for fleet in by_type["Fleet"]:
        if not fleet["type"].startswith("azure-native:"):
            continue
        members = by_type["FleetMember"]
        box = graph.box(
            None,
            "",
            _Box("fleet", [f"Fleet Manager {fleet['inputs'].get('fleetName', '')}", f"{len(members)} members"]),
        )
        box.urns |= {urn(fleet)} | {urn(m) for m in members}
        for member in members:
            name = str(member["inputs"].get("clusterResourceId", "")).rsplit("/", 1)[-1]
            if name in clusters:
                graph.edges.append(("fleet", clusters[name].id, "-.->"))
    return _render(graph, status)


def _render(graph: _Graph, status: Mapping[str, str]) -> str:
    lines = ["flowchart LR"]
    styled: dict[str, list[str]] = defaultdict(list)
    known = {b.id for b in graph.loose} | {b.id for _, boxes in graph.groups.values() for b in boxes}

    def node(box: _Box, indent: str) -> None:
        lines.append(f'{indent}{box.id}["{_label("<br/>".join(box.lines))}"]')
        state = _status(box, status)
        if state:
            styled[state].append(box.id)

    order = ("vnet", "egress", "pe", "aks", "apps", "hub", "data", "fleet")

    def key(box: _Box) -> tuple[int, str]:
        kind = box.id.split("_", 1)[0]
        return (order.index(kind) if kind in order else len(order), box.id)

    for group, (label, boxes) in sorted(graph.groups.items()):
        lines.append(f'  subgraph {group}["{_label(label)}"]')
        for box in sorted(boxes, key=key):
            node(box, "    ")
        lines.append("  end")
    for box in sorted(graph.loose, key=key):
        node(box, "  ")
    seen = set()
    for source, target, arrow in sorted(graph.edges):
        if source in known and target in known and (source, target) not in seen:
            seen.add((source, target))
            lines.append(f"  {source} {arrow} {target}")
    for name, style in CLASSES.items():
        lines.append(f"  classDef {name} {style}")
    for name, ids in sorted(styled.items()):
        lines.append(f"  class {','.join(ids)} {name}")
    return "\n".join(lines) + "\n"


def edge_count(text: str) -> int:
    return sum(1 for line in text.splitlines() if re.search(r" (---|-->|-\.->|-\. .*\.->) ", line))
