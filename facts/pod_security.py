"""The Pod Security Standards' controls for the clusters' Kubernetes version (1.35), as data.

Source: kubernetes.io "Pod Security Standards" (kubernetes/website,
content/en/docs/concepts/security/pod-security-standards.md), whose tables give, per control,
the restricted fields and their allowed values, and the admission plugin that enforces them,
kubernetes/pod-security-admission v0.35.6 (commit 2c255e8b, kubernetes/kubernetes
staging/src/k8s.io/pod-security-admission/policy/check_*.go on release-1.35). Where the two
disagree, the table follows the code: image volumes are allowed by restricted (k8s 1.33,
kubernetes#130394), tcp_rmem/tcp_wmem are safe sysctls (1.32, kubernetes#127489), host probes
are checked on ephemeral containers too, an empty AppArmor annotation passes, and with
`spec.hostUsers: false` (a user namespace) baseline's /proc mount and restricted's non-root
checks are waived (1.35, kubernetes#132157). No well-kept
Python library evaluates them, so the platform reads them from here twice: the contract
tests' Pod Security evaluator (contracts/pod_security.py) and the CEL of the training
namespaces' admission policy (planning/admission.py), so both agree by construction and
tests/test_contracts.py holds each control to its documented allowed and forbidden values.

Paths use the documentation's notation: `[*]` is every item of a list; a `*` at the end of
a map key is every key with that prefix. `UNDEFINED` stands for "Undefined/nil" (the field
absent; the API server drops nulls). A string ending in `*` allows every value with that
prefix (`localhost/*`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KUBERNETES_MINOR = "1.35"
SOURCE = "https://kubernetes.io/docs/concepts/security/pod-security-standards/ (kubernetes/website release-1.35)"

UNDEFINED = "<undefined>"
# Restricted's "any non-zero value".
NON_ZERO = "<non-zero>"

BASELINE, RESTRICTED = "baseline", "restricted"
LEVELS = ("privileged", BASELINE, RESTRICTED)

CONTAINER_LISTS = ("spec.containers[*]", "spec.initContainers[*]", "spec.ephemeralContainers[*]")


def _in_containers(suffix: str, *, pod: str | None = None) -> tuple[str, ...]:
    return ((pod,) if pod else ()) + tuple(f"{containers}.{suffix}" for containers in CONTAINER_LISTS)


@dataclass(frozen=True)
class Control:
    """One row of the standard: every value at every path must be one of `allowed`.

    `check` says how values are compared: `values` (the default: each value found is one of
    `allowed`); `volume-types` (each volume sets one of `allowed`); `must-drop` (each
    container's list includes `allowed`); `required` (set to one of `allowed` on every
    container, or on the pod for containers that leave it unset: the first path is the pod's).
    `forbidden` are values the tests try at each path and expect refused. `waived_by` is a
    pod field and value under which the control does not apply (a user namespace).
    """

    name: str
    level: str
    paths: tuple[str, ...]
    allowed: tuple[Any, ...]
    forbidden: tuple[Any, ...]
    since: str = ""
    check: str = "values"
    waived_by: tuple[str, Any] | None = None


BASELINE_CAPABILITIES = (
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
)
# Kubernetes 1.35's safe set: 1.27 added ip_local_reserved_ports, 1.29 the TCP keepalive and
# fin_timeout sysctls, 1.32 tcp_rmem and tcp_wmem.
SAFE_SYSCTLS = (
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem",
)
RESTRICTED_VOLUME_TYPES = (
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
    "image",
)
# A pod in its own user namespace: root inside is not root on the node.
USER_NAMESPACE = ("spec.hostUsers", False)
_PROBE_HOSTS = tuple(
    f"{probe}.{handler}.host"
    for probe in ("livenessProbe", "readinessProbe", "startupProbe", "lifecycle.postStart", "lifecycle.preStop")
    for handler in ("httpGet", "tcpSocket")
)

CONTROLS: tuple[Control, ...] = (
    # -- baseline ------------------------------------------------------------------------------
    Control(
        "HostProcess",
        BASELINE,
        _in_containers(
            "securityContext.windowsOptions.hostProcess", pod="spec.securityContext.windowsOptions.hostProcess"
        ),
        (UNDEFINED, False),
        (True,),
    ),
    Control(
        "Host Namespaces", BASELINE, ("spec.hostNetwork", "spec.hostPID", "spec.hostIPC"), (UNDEFINED, False), (True,)
    ),
    Control(
        "Privileged Containers", BASELINE, _in_containers("securityContext.privileged"), (UNDEFINED, False), (True,)
    ),
    Control(
        "Capabilities",
        BASELINE,
        _in_containers("securityContext.capabilities.add[*]"),
        (UNDEFINED, *BASELINE_CAPABILITIES),
        ("IPC_LOCK", "SYS_ADMIN", "NET_ADMIN", "ALL"),
    ),
    Control("HostPath Volumes", BASELINE, ("spec.volumes[*].hostPath",), (UNDEFINED,), ({"path": "/"},)),
    Control("Host Ports", BASELINE, _in_containers("ports[*].hostPort"), (UNDEFINED, 0), (80, 8080)),
    Control(
        "Host Probes / Lifecycle Hooks",
        BASELINE,
        tuple(p for c in CONTAINER_LISTS for p in (f"{c}.{host}" for host in _PROBE_HOSTS)),
        (UNDEFINED, ""),
        ("169.254.169.254", "localhost"),
        since="v1.34",
    ),
    Control(
        "AppArmor",
        BASELINE,
        _in_containers("securityContext.appArmorProfile.type", pod="spec.securityContext.appArmorProfile.type"),
        (UNDEFINED, "RuntimeDefault", "Localhost"),
        ("Unconfined",),
    ),
    Control(
        "AppArmor annotations",
        BASELINE,
        ("metadata.annotations[container.apparmor.security.beta.kubernetes.io/*]",),
        (UNDEFINED, "", "runtime/default", "localhost/*"),
        ("unconfined",),
    ),
    Control(
        "SELinux type",
        BASELINE,
        _in_containers("securityContext.seLinuxOptions.type", pod="spec.securityContext.seLinuxOptions.type"),
        (UNDEFINED, "", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"),
        ("spc_t", "unconfined_t"),
    ),
    Control(
        "SELinux user and role",
        BASELINE,
        tuple(
            p
            for field in ("user", "role")
            for p in _in_containers(
                f"securityContext.seLinuxOptions.{field}", pod=f"spec.securityContext.seLinuxOptions.{field}"
            )
        ),
        (UNDEFINED, ""),
        ("system_u",),
    ),
    Control(
        "/proc Mount Type",
        BASELINE,
        _in_containers("securityContext.procMount"),
        (UNDEFINED, "Default"),
        ("Unmasked",),
        waived_by=USER_NAMESPACE,
    ),
    Control(
        "Seccomp",
        BASELINE,
        _in_containers("securityContext.seccompProfile.type", pod="spec.securityContext.seccompProfile.type"),
        (UNDEFINED, "RuntimeDefault", "Localhost"),
        ("Unconfined",),
    ),
    Control(
        "Sysctls",
        BASELINE,
        ("spec.securityContext.sysctls[*].name",),
        (UNDEFINED, *SAFE_SYSCTLS),
        ("kernel.msgmax", "net.core.somaxconn"),
    ),
    # -- restricted (everything in baseline, and these) -----------------------------------------
    Control(
        "Volume Types",
        RESTRICTED,
        ("spec.volumes[*]",),
        RESTRICTED_VOLUME_TYPES,
        ("hostPath", "nfs", "azureFile", "gitRepo"),
        check="volume-types",
    ),
    Control(
        "Privilege Escalation",
        RESTRICTED,
        _in_containers("securityContext.allowPrivilegeEscalation"),
        (False,),
        (True, UNDEFINED),
        since="v1.8",
        check="required",
    ),
    Control(
        "Running as Non-root",
        RESTRICTED,
        ("spec.securityContext.runAsNonRoot", *_in_containers("securityContext.runAsNonRoot")),
        (True,),
        (False, UNDEFINED),
        check="required",
        waived_by=USER_NAMESPACE,
    ),
    Control(
        "Running as Non-root user",
        RESTRICTED,
        _in_containers("securityContext.runAsUser", pod="spec.securityContext.runAsUser"),
        (UNDEFINED, NON_ZERO),
        (0,),
        since="v1.23",
        waived_by=USER_NAMESPACE,
    ),
    Control(
        "Seccomp (restricted)",
        RESTRICTED,
        ("spec.securityContext.seccompProfile.type", *_in_containers("securityContext.seccompProfile.type")),
        ("RuntimeDefault", "Localhost"),
        ("Unconfined", UNDEFINED),
        since="v1.19",
        check="required",
    ),
    Control(
        "Capabilities (restricted): drop",
        RESTRICTED,
        _in_containers("securityContext.capabilities.drop"),
        ("ALL",),
        (UNDEFINED, ("NET_RAW",)),
        since="v1.22",
        check="must-drop",
    ),
    # 1.35 (check_procMount_restricted.go): restricted keeps the /proc rule inside user namespaces too.
    Control(
        "/proc Mount Type (restricted)",
        RESTRICTED,
        _in_containers("securityContext.procMount"),
        (UNDEFINED, "Default"),
        ("Unmasked",),
        since="v1.35",
    ),
    Control(
        "Capabilities (restricted): add",
        RESTRICTED,
        _in_containers("securityContext.capabilities.add[*]"),
        (UNDEFINED, "NET_BIND_SERVICE"),
        ("CHOWN",),
        since="v1.22",
    ),
)


def controls(level: str) -> tuple[Control, ...]:
    """The controls a level enforces: none for privileged; restricted includes baseline's."""
    if level == "privileged":
        return ()
    wanted = (BASELINE,) if level == BASELINE else (BASELINE, RESTRICTED)
    # Restricted's capability rule replaces baseline's longer list.
    return tuple(c for c in CONTROLS if c.level in wanted and not (level == RESTRICTED and c.name == "Capabilities"))
