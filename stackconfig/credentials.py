"""Values that look like credentials, so that none is ever kept in a stack file.

Patterns from the secret scanners' published rules (gitleaks `config/gitleaks.toml`:
azure-ad-client-secret, jwt, github-pat, private-key; GitHub secret scanning's Azure storage
account key and SAS formats). A match names the key and the kind, never the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from stackconfig.keys import key

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("a private key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    (
        "a connection string with a key or password",
        re.compile(r"(?i)\b(AccountKey|SharedAccessKey|SharedAccessSignature|Password|Pwd|ClientSecret)\s*="),
    ),
    ("a SAS token", re.compile(r"(?i)(^|[?&])sig=[A-Za-z0-9%+/=]{16,}")),
    ("a storage account key", re.compile(r"^[A-Za-z0-9+/]{86}==$")),
    (
        "an Entra ID client secret",
        re.compile(r"(^|[^A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.-]{31,34}($|[^A-Za-z0-9_~.-])"),
    ),
    ("a token (JWT)", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*")),
    ("a GitHub token", re.compile(r"\b(gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b")),
)
WHERE_SECRETS_BELONG = (
    "secrets never go in a stack file: workloads read them from Key Vault (platform:workloads.<w>."
    "keyVaultSecrets, set by platform:keyVault.secretsOfficerGroupObjectIds), and a value the program "
    "itself needs is set with `pulumi config set --secret`"
)


def credential_kind(value: str) -> str | None:
    for kind, pattern in PATTERNS:
        if pattern.search(value):
            return kind
    return None


def _walk(value: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for name, inner in value.items():
            yield path + (str(name),), str(name)
            yield from _walk(inner, path + (str(name),))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _walk(inner, path + (index,))


def find_credentials(section: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(config key, kind, the value) for every value that looks like a credential."""
    found = []
    for path, text in _walk(section, ()):
        kind = credential_kind(text)
        if kind:
            found.append((key(*path), kind, text))
    return found
