"""The serving edge: every route bound to a gateway is behind its token checks, every gateway
certificate comes from Key Vault, and a Private Link service approves consumers one by one."""

from __future__ import annotations

from guardrail import lookup, resource_policy, stack_policy
from pulumi_policy import Severity

GATEWAY = "kubernetes:networking.istio.io/v1:Gateway"
VIRTUAL_SERVICE = "kubernetes:networking.istio.io/v1:VirtualService"
REQUEST_AUTHENTICATION = "kubernetes:security.istio.io/v1:RequestAuthentication"
AUTHORIZATION_POLICY = "kubernetes:security.istio.io/v1:AuthorizationPolicy"
SECRET_PROVIDER_CLASS = "kubernetes:secrets-store.csi.x-k8s.io/v1:SecretProviderClass"
SERVICE = "kubernetes:core/v1:Service"
PLS_VISIBILITY = "service.beta.kubernetes.io/azure-pls-visibility"
PLS_AUTO_APPROVAL = "service.beta.kubernetes.io/azure-pls-auto-approval"


def _cluster(resource) -> str | None:
    return resource.provider.urn if resource.provider else None


def _namespace(resource) -> str:
    return lookup(resource.props, "metadata.namespace") or "default"


def _gateways(resources) -> dict[tuple[str | None, str], object]:
    """(cluster, `namespace/name`) -> Gateway."""
    return {
        (_cluster(r), f"{_namespace(r)}/{lookup(r.props, 'metadata.name')}"): r
        for r in resources
        if r.resource_type == GATEWAY
    }


def _selects(policy, gateway) -> bool:
    """Whether a policy in the gateway's namespace selects its pods (same selector labels)."""
    selector = lookup(policy.props, "spec.selector.matchLabels") or {}
    return _namespace(policy) == _namespace(gateway) and selector == (lookup(gateway.props, "spec.selector") or {})


def _path_covered(patterns: list, prefix: str) -> bool:
    return any(p == prefix or (p.endswith("*") and prefix.startswith(p[:-1])) for p in patterns)


def routes_authenticated(args, report):
    """A VirtualService bound to a gateway is reached only with a valid token and an app role: the
    gateway validates tokens (RequestAuthentication), denies a request without one, and an ALLOW
    policy names each of the service's hosts and route prefixes with a `roles` condition."""
    gateways = _gateways(args.resources)
    policies = [r for r in args.resources if r.resource_type == AUTHORIZATION_POLICY]
    authentications = [r for r in args.resources if r.resource_type == REQUEST_AUTHENTICATION]
    for service in args.resources:
        if service.resource_type != VIRTUAL_SERVICE:
            continue
        for reference in lookup(service.props, "spec.gateways") or []:
            gateway = gateways.get((_cluster(service), reference))
            if gateway is None:
                continue
            mine = [p for p in policies if _cluster(p) == _cluster(gateway) and _selects(p, gateway)]
            if not any(_cluster(a) == _cluster(gateway) and _selects(a, gateway) for a in authentications):
                report(
                    f"{service.name}: gateway {reference} validates no token (no RequestAuthentication).", service.urn
                )
            denies = [
                p
                for p in mine
                if lookup(p.props, "spec.action") == "DENY"
                and any(
                    "*" in (lookup(source, "source.notRequestPrincipals") or [])
                    for rule in lookup(p.props, "spec.rules") or []
                    for source in rule.get("from") or []
                )
            ]
            if not denies:
                report(
                    f"{service.name}: gateway {reference} does not deny a request without a token "
                    "(RequestAuthentication lets it through).",
                    service.urn,
                )
            allow_rules = [
                rule
                for p in mine
                if lookup(p.props, "spec.action", "ALLOW") == "ALLOW"
                for rule in lookup(p.props, "spec.rules") or []
                # Both the API's audience and a role: role names repeat across APIs.
                if {"request.auth.claims[roles]", "request.auth.audiences"}
                <= {str(c.get("key", "")) for c in rule.get("when") or []}
            ]
            for host in lookup(service.props, "spec.hosts") or []:
                for http in lookup(service.props, "spec.http") or []:
                    for match in http.get("match") or [{"uri": {"prefix": "/"}}]:
                        prefix = lookup(match, "uri.prefix") or "/"
                        covered = any(
                            host in (lookup(op, "operation.hosts") or [])
                            and _path_covered(lookup(op, "operation.paths") or [], prefix)
                            for rule in allow_rules
                            for op in rule.get("to") or []
                        )
                        if not covered:
                            report(
                                f"{service.name}: {host}{prefix} has no ALLOW policy requiring its audience and an app "
                                "role on "
                                f"gateway {reference}.",
                                service.urn,
                            )


def certificates_from_key_vault(args, report):
    """A gateway's HTTPS server names a Secret that a SecretProviderClass of the Azure Key Vault
    provider syncs into the gateway's namespace: no certificate or key lives in state or in a
    hand-made Secret."""
    synced = {
        (_cluster(r), _namespace(r), secret.get("secretName"))
        for r in args.resources
        if r.resource_type == SECRET_PROVIDER_CLASS and lookup(r.props, "spec.provider") == "azure"
        for secret in lookup(r.props, "spec.secretObjects") or []
    }
    for gateway in args.resources:
        if gateway.resource_type != GATEWAY:
            continue
        for server in lookup(gateway.props, "spec.servers") or []:
            tls = server.get("tls") or {}
            if lookup(server, "port.protocol") != "HTTPS":
                report(f"{gateway.name}: a {lookup(server, 'port.protocol')} server serves without TLS.", gateway.urn)
                continue
            if tls.get("minProtocolVersion") not in ("TLSV1_2", "TLSV1_3"):
                report(f"{gateway.name}: a server accepts TLS older than 1.2.", gateway.urn)
            name = tls.get("credentialName")
            if (_cluster(gateway), _namespace(gateway), name) not in synced:
                report(
                    f"{gateway.name}: certificate {name!r} is not synced from Key Vault by a SecretProviderClass "
                    "in the gateway's namespace.",
                    gateway.urn,
                )


def private_link_per_consumer(args, report):
    if args.resource_type != SERVICE:
        return
    annotations = lookup(args.props, "metadata.annotations") or {}
    for key in (PLS_VISIBILITY, PLS_AUTO_APPROVAL):
        if "*" in str(annotations.get(key, "")).split():
            report(f"{key} is '*': every subscription in Azure may connect to it.")


POLICIES = [
    stack_policy(
        "serving-routes-authenticated",
        "Every route bound to a serving gateway needs a valid Entra ID token and an app role.",
        routes_authenticated,
        severity=Severity.CRITICAL,
        remediation="Declare the route under platform:serving.apis.<api>.routes with its role; the platform "
        "makes its ALLOW policy, the gateway's RequestAuthentication and the DENY without a token "
        "(planning/serving.py).",
    ),
    stack_policy(
        "serving-certificates-from-key-vault",
        "Serving gateways terminate TLS 1.2 or later with certificates synced from Key Vault.",
        certificates_from_key_vault,
        severity=Severity.HIGH,
        remediation="Issue the team's certificate into the region's Key Vault as serving-<team>; the "
        "platform syncs it (platform:serving.tlsCertificatePrefix).",
    ),
    resource_policy(
        "serving-private-link-per-consumer",
        "A Private Link service is visible to, and approves, only the consumers config names.",
        private_link_per_consumer,
        severity=Severity.HIGH,
        remediation="List each consumer's subscription under platform:serving.privateLink (autoApprove per consumer).",
    ),
]
