"""A call through a serving cluster's gateway, as Istio and the cluster would take it
(planning/serving.py makes the objects; docs/serving.md): the caller's pod reaches the gateway's
pods; the gateway has a server for the host (TLS from a synced Key Vault certificate) and a
VirtualService binding it from a namespace the server allows; the token passes the
RequestAuthentication (issuer, audience), no DENY policy matches and an ALLOW policy does (Istio:
DENY first, then ALLOW; with any ALLOW on the gateway, a request none matches is refused); the
route leads to the team's Service, whose namespace admits the gateway's pods on its port.

Istio's matching as its docs define it: a server host `ns/*.domain` admits VirtualServices of
`ns` for hosts below `domain`; an AuthorizationPolicy path ending in `*` is a prefix; a list
claim matches when it holds a value (istio.io, "Authorization Policy", "JWT claim based
authorization").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contracts import reach
from contracts.cluster import ClusterView
from contracts.reach import Destination
from facts import istio

GATEWAY = f"kubernetes:{istio.NETWORKING_API}:Gateway"
VIRTUAL_SERVICE = f"kubernetes:{istio.NETWORKING_API}:VirtualService"
REQUEST_AUTHENTICATION = f"kubernetes:{istio.SECURITY_API}:RequestAuthentication"
AUTHORIZATION_POLICY = f"kubernetes:{istio.SECURITY_API}:AuthorizationPolicy"
SECRET_PROVIDER_CLASS = "kubernetes:secrets-store.csi.x-k8s.io/v1:SecretProviderClass"


@dataclass(frozen=True)
class Call:
    """A request to `https://<host><path>` from a pod of `namespace`, with a token's claims (None:
    no token)."""

    host: str
    path: str
    claims: dict[str, Any] | None
    namespace: str
    pod_labels: dict[str, str] = field(default_factory=dict)


def _host_matches(pattern: str, host: str) -> bool:
    return host == pattern or (pattern.startswith("*.") and host.endswith(pattern[1:]))


def _values_match(values: list[str], value: str) -> bool:
    return any(value == v or (v.endswith("*") and value.startswith(v[:-1])) for v in values)


def _claim(claims: dict[str, Any], key: str) -> list[str]:
    value = claims.get(key)
    return [str(v) for v in value] if isinstance(value, list) else [] if value is None else [str(value)]


def _condition_holds(condition: dict[str, Any], claims: dict[str, Any]) -> bool:
    key, values = condition["key"], condition["values"]
    if key == "request.auth.audiences":
        held = _claim(claims, "aud")
    elif key.startswith("request.auth.claims[") and key.endswith("]"):
        held = _claim(claims, key[len("request.auth.claims[") : -1])
    else:
        raise LookupError(f"the contract does not model the condition {key}")
    return any(_values_match(values, value) for value in held)


def _source_matches(source: dict[str, Any], principal: bool) -> bool:
    """A policy's `source` for a request with (or without) a valid token's principal; the
    contract models principals as `*` only."""
    if "notRequestPrincipals" in source:
        return not principal
    if "requestPrincipals" in source:
        return principal
    return True


def _rule_matches(rule: dict[str, Any], call: Call, principal: bool) -> bool:
    sources = [f["source"] for f in rule.get("from") or []]
    if sources and not any(_source_matches(source, principal) for source in sources):
        return False
    operations = [t["operation"] for t in rule.get("to") or []]
    if operations and not any(
        (not op.get("hosts") or _values_match(op["hosts"], call.host))
        and (not op.get("paths") or _values_match(op["paths"], call.path))
        for op in operations
    ):
        return False
    return all(_condition_holds(c, call.claims or {}) for c in rule.get("when") or [])


def _applies(selector: dict[str, Any] | None) -> bool:
    """Whether an object's selector takes the gateway's pods (none: every pod of its namespace)."""
    labels = (selector or {}).get("matchLabels", selector or {})
    return all(istio.GATEWAY_SELECTOR.get(k) == v for k, v in labels.items())


def _gateway_objects(view: ClusterView, token: str) -> list[dict[str, Any]]:
    """The objects of a kind that apply to the gateway's pods: in its namespace with a selector
    that takes them (or none), and security policies of the mesh's root namespace."""
    namespaces = [istio.INGRESS_NAMESPACE] + ([istio.SYSTEM_NAMESPACE] if "security" in token else [])
    return [o for ns in namespaces for o in view.objects(token, ns) if _applies(o["spec"].get("selector"))]


def _hostname(authority: str) -> str:
    """The authority without its port (the gateway's routes ignore it: IgnorePortInHostMatching)."""
    return authority.rsplit(":", 1)[0] if authority.rsplit(":", 1)[-1].isdigit() else authority


def authentication_refusals(view: ClusterView, call: Call) -> list[str]:
    """The token's issuer and audience (RequestAuthentication), then the DENY and ALLOW policies."""
    principal = False
    if call.claims is not None:
        rules = [r for ra in _gateway_objects(view, REQUEST_AUTHENTICATION) for r in ra["spec"]["jwtRules"]]
        issued = [r for r in rules if r["issuer"] == call.claims.get("iss")]
        if not issued:
            return [f"a token of issuer {call.claims.get('iss')} is refused (401): no jwtRule names it"]
        if not any(set(_claim(call.claims, "aud")) & set(r.get("audiences") or []) for r in issued):
            return [f"a token for {_claim(call.claims, 'aud')} is refused (401): no jwtRule takes its audience"]
        principal = True
    policies = _gateway_objects(view, AUTHORIZATION_POLICY)
    for policy in policies:
        spec = policy["spec"]
        if spec.get("action") == "DENY" and any(_rule_matches(r, call, principal) for r in spec.get("rules") or []):
            return [f"AuthorizationPolicy {policy['metadata']['name']} denies it (403)"]
    allows = [p for p in policies if p["spec"].get("action", "ALLOW") == "ALLOW"]
    if allows and not any(_rule_matches(r, call, principal) for p in allows for r in p["spec"].get("rules") or []):
        return [f"no ALLOW policy on the gateway admits {call.host}{call.path} for that token (403)"]
    return []


def route(view: ClusterView, call: Call) -> tuple[list[str], Destination | None]:
    """The server and the VirtualService that take the host, and where the route leads."""
    servers = [s for g in _gateway_objects(view, GATEWAY) for s in g["spec"]["servers"]]
    matching = [
        (s, host.split("/", 1)[0])
        for s in servers
        for host in s["hosts"]
        if _host_matches(host.split("/", 1)[-1], _hostname(call.host))
    ]
    if not matching:
        return [f"no server of the gateway takes {call.host}"], None
    server, _ = matching[0]
    tls = server.get("tls") or {}
    if tls.get("mode") != "SIMPLE" or tls.get("minProtocolVersion") not in ("TLSV1_2", "TLSV1_3"):
        return [f"the server for {call.host} does not terminate TLS 1.2 or later"], None
    synced = {
        s["secretName"]
        for spc in view.objects(SECRET_PROVIDER_CLASS, istio.INGRESS_NAMESPACE)
        for s in spc["spec"].get("secretObjects") or []
    }
    if tls.get("credentialName") not in synced:
        return [
            f"{tls.get('credentialName')} is no certificate synced from Key Vault into the gateway's namespace"
        ], None
    allowed = {namespace for _, namespace in matching}
    # Istio merges every VirtualService that binds the host from an allowed namespace (in the
    # order of their routes) and ignores the others.
    routes = [
        http
        for service in view.objects(VIRTUAL_SERVICE)
        if _hostname(call.host) in service["spec"]["hosts"]
        and f"{istio.INGRESS_NAMESPACE}/serving" in service["spec"].get("gateways", [])
        and service["metadata"]["namespace"] in allowed
        for http in service["spec"].get("http") or []
    ]
    if not routes:
        return [f"no VirtualService binds {_hostname(call.host)} to the gateway (404)"], None
    for http in routes:
        if any(call.path.startswith(m["uri"]["prefix"]) for m in http.get("match") or []):
            destination = http["route"][0]["destination"]
            _, target_namespace = destination["host"].split(".")[:2]
            return [], Destination(int(destination["port"]["number"]), namespace=target_namespace, pod_labels=())
    return [f"no route of {_hostname(call.host)} takes {call.path} (404)"], None


def refusals(view: ClusterView, call: Call) -> list[str]:
    """Everything that would refuse the call, in the order it happens."""
    # After the load balancer's translation: the gateway's pods, on their port.
    gateway = Destination(
        istio.POD_HTTPS_PORT, namespace=istio.INGRESS_NAMESPACE, pod_labels=tuple(istio.GATEWAY_SELECTOR.items())
    )
    found = reach.refusals(view, call.namespace, call.pod_labels, [gateway])
    routed, destination = route(view, call)
    found += routed
    found += authentication_refusals(view, call)
    if destination is not None:
        found += [
            f"the gateway's pods: {reason}"
            for reason in reach.refusals(view, istio.INGRESS_NAMESPACE, dict(istio.GATEWAY_SELECTOR), [destination])
        ]
        if reach.ingress_refused(view, istio.INGRESS_NAMESPACE, dict(istio.GATEWAY_SELECTOR), destination):
            found.append(f"{destination.namespace} does not admit the gateway's pods on {destination.port}")
    return found
