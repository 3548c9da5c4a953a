"""Pod Security Standards labels for the namespaces the platform creates.

Every namespace enforces a level (the kubernetes-platform policy pack checks it): `restricted`
for the platform's own controllers, `baseline` for team namespaces (no privileged pods, no host
namespaces, but images that run as root still work), and `privileged` only where node agents
need host access. Below `restricted`, pods that would fail it are also warned about and audited,
so teams see what tightening would break.
"""

ENFORCE = "pod-security.kubernetes.io/enforce"
WARN = "pod-security.kubernetes.io/warn"
AUDIT = "pod-security.kubernetes.io/audit"

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"


def pod_security_labels(level: str) -> dict[str, str]:
    labels = {ENFORCE: level}
    if level == BASELINE:
        labels |= {WARN: RESTRICTED, AUDIT: RESTRICTED}
    return labels
