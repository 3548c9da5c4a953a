"""AKS's Istio-based service mesh add-on, as the platform's serving gateway uses it.

Sources (MicrosoftDocs/azure-aks-docs at fb060ab, 2026-08; Azure/AKS CHANGELOG.md at 8d1c890):
- `istio-support-policy.md`: revisions `asm-1-28` (2026-01), `asm-1-29` (2026-04), `asm-1-30`
  (2026-07, CHANGELOG 2026-07-17); at least two supported at a time, `n-2` deprecated six weeks
  after `n`. Refresh: `az aks mesh get-revisions --location <region>`; upgrades are canary
  (`revisions` holds two consecutive values while one runs: the SDK's IstioServiceMesh docstring).
- `istio-deploy-ingress.md`: the internal ingress gateway is the Service
  `aks-istio-ingressgateway-internal` in `aks-istio-ingress`, selected by Istio `Gateway`s with
  `istio: aks-istio-ingressgateway-internal`; its Service takes only an allowlist of
  annotations (subnet, pinned address, idle timeout...) and reverts the others, Private Link's
  among them (Azure/AKS#4646, azure-aks-docs PR #204).
- `istio-about.md`: `ProxyConfig`, `WorkloadEntry`, `WorkloadGroup`, `IstioOperator` and
  `WasmPlugin` are refused by the add-on's webhooks; sidecar injection is by `istio.io/rev`.
- Istio serves `networking.istio.io/v1` and `security.istio.io/v1` since 1.22 (istio.io blog
  "v1 APIs", 2024).
"""

from __future__ import annotations

REVISION = "asm-1-30"
SUPPORTED_REVISIONS = ("asm-1-28", "asm-1-29", "asm-1-30")
TAKEN_ON = "2026-08-05"

INGRESS_NAMESPACE = "aks-istio-ingress"
# istiod's xDS port, which gateways connect to, and Envoy's Prometheus port's name on a gateway's
# pods (15090; istio.io "Ports used by Istio", the gateway chart's deployment).
XDS_PORT = 15012
METRICS_PORT_NAME = "http-envoy-prom"
SYSTEM_NAMESPACE = "aks-istio-system"
INTERNAL_GATEWAY = "aks-istio-ingressgateway-internal"
# The label the internal gateway's pods carry, which Gateways and policies select.
GATEWAY_SELECTOR = {"istio": INTERNAL_GATEWAY}

NETWORKING_API = "networking.istio.io/v1"
SECURITY_API = "security.istio.io/v1"
# Kinds the add-on's webhooks refuse.
BLOCKED_KINDS = ("ProxyConfig", "WorkloadEntry", "WorkloadGroup", "IstioOperator", "WasmPlugin")
# The gateway's HTTPS port (its Service: 15021 status, 80, 443), and the port its pods listen on
# for it: the add-on deploys Istio's `gateway` chart (Azure/AKS#4511: release `asm-igx-…`), whose
# Service maps 443 to 443 (istio/istio manifests/charts/gateway/values.yaml); the legacy
# `istio-ingress` chart used 8443. The first deploy's `kubectl -n aks-istio-ingress get svc
# aks-istio-ingressgateway-internal -o yaml` confirms it (docs/serving.md).
HTTPS_PORT = 443
POD_HTTPS_PORT = 443
# A Service label istiod reads: it ignores the Service when it maps a Gateway server's port to the
# pods' listener (pilot/pkg/model/gateway.go), so the platform's own Service never moves it.
DISABLE_PORT_TRANSLATION = "experimental.istio.io/disable-gateway-port-translation"
