"""What Kubernetes and AKS accept as label keys and values, annotations and taints.

Sources: kubernetes/website `content/en/docs/concepts/overview/working-with-objects/labels.md`
at 0662c7ed and kubernetes/apimachinery `pkg/api/validate/content/kube.go` and `dns.go` at
eed236ce (qualified names: an optional DNS-1123 subdomain prefix of at most 253 characters and
`/`, then a name of at most 63 characters, alphanumeric at both ends, `-_.` inside; values the
same name syntax or empty); `pkg/api/validation/objectmeta.go` (annotations: at most 256 KiB
in all); `taint-and-toleration.md` and `pkg/apis/core/validation/validation.go`
(`key[=value]:Effect`, effects NoSchedule, PreferNoSchedule, NoExecute, one taint per key and
effect); MicrosoftDocs/azure-aks-docs `articles/aks/use-labels.md` at f988e7e8 ("The following
prefixes are AKS reserved prefixes and can't be used for any node: kubernetes.azure.com/,
kubernetes.io/").
"""

from __future__ import annotations

import re

_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
NAME_MAX = 63
PREFIX_MAX = 253
ANNOTATIONS_MAX_BYTES = 256 * 1024
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
AKS_RESERVED_LABEL_PREFIXES = ("kubernetes.azure.com/", "kubernetes.io/")


def qualified_name_problem(key: str) -> str | None:
    """Why `key` is not a valid label key (or annotation key, or taint key), or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > PREFIX_MAX or not all(_DNS_LABEL.match(p) for p in prefix.split("."))):
        return f"{key!r}: the prefix before '/' must be a lowercase DNS subdomain of at most {PREFIX_MAX} characters"
    if not name or len(name) > NAME_MAX or not _NAME.match(name):
        return (
            f"{key!r}: the name must be 1-{NAME_MAX} characters, letters or digits at both ends, "
            "'-', '_' or '.' between"
        )
    return None


def label_value_problem(value: str) -> str | None:
    if value == "" or (len(value) <= NAME_MAX and _NAME.match(value)):
        return None
    return (
        f"{value!r}: label values are empty or 1-{NAME_MAX} characters, letters or digits at both "
        "ends, '-', '_' or '.' between"
    )


def taint_problem(taint: str) -> str | None:
    """Why `key[=value]:Effect` is not a valid taint, or None."""
    body, colon, effect = taint.rpartition(":")
    if not colon or effect not in TAINT_EFFECTS:
        return f"{taint!r}: a taint is key=value:Effect with Effect one of {', '.join(TAINT_EFFECTS)}"
    key, _, value = body.partition("=")
    return qualified_name_problem(key) or label_value_problem(value)


def reserved_label_problem(key: str) -> str | None:
    for prefix in AKS_RESERVED_LABEL_PREFIXES:
        if key.startswith(prefix):
            return f"{key!r}: AKS reserves the {prefix} prefix for its own node labels"
    return None
