"""`make doctor`: what must exist in the tenant and on GitHub before an environment's first deploy,
and what is missing, each with its fix (docs/operations.md, "make doctor").

Pure functions only. Each check module says what it needs as plain data (`*_expectations`),
which read-only calls answer that (`*_reads`: ARM paths for `az rest --method get`, GitHub API
paths for `gh api --method GET`, regions for `az vm list-usage`), and turns the answers into
findings (`check_*`). scripts/doctor.py makes the calls and prints the findings; the tests
hand the checks canned answers.

- planning/doctor/azure.py: subscriptions, providers and features, the hub, the delivery's objects;
- planning/doctor/quota.py: regional vCPU quota per VM family against the capacity plan at peak;
- planning/doctor/github.py: the repository's environments, the ruleset on `main`, runner groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Status = Literal["ok", "missing", "denied", "error"]


@dataclass(frozen=True)
class Finding:
    """One thing missing or wrong: which check found it, what it is, and the exact fix."""

    check: str
    what: str
    fix: str


@dataclass(frozen=True)
class Answer:
    """What one read-only call returned: its parsed JSON, or why there is none (`missing`: the
    API said 404; `denied`: 401 or 403; `error`: anything else, `message` says what)."""

    body: Any = None
    status: Status = "ok"
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


NOT_READ = Answer(status="error", message="not read")


def answer(answers: Mapping[str, Answer], key: str) -> Answer:
    return answers.get(key, NOT_READ)


def unreadable(check: str, found: Answer, what: str, fix_missing: str) -> Finding | None:
    """The finding for an answer that is not `ok`: missing (with its fix), unreadable, or failed."""
    if found.ok:
        return None
    if found.status == "missing":
        return Finding(check, f"{what} does not exist", fix_missing)
    if found.status == "denied":
        return Finding(
            check,
            f"{what} cannot be read with your sign-in ({found.message or 'forbidden'})",
            "run the doctor as someone who may read it (Reader on Azure; the repository's and the "
            "organization's admin on GitHub), or ask its owner to check it; until then it counts as missing",
        )
    return Finding(
        check,
        f"{what} could not be read: {found.message}",
        "run `make doctor` again; if it persists, the error says why (the network, the CLI, or the API)",
    )


def items(found: Answer, key: str = "value") -> list[dict[str, Any]]:
    """The entries of a list answer (`{"value": [...]}` from ARM, `{"environments": [...]}` from GitHub)."""
    body = found.body if found.ok else None
    if isinstance(body, list):
        return [item for item in body if isinstance(item, dict)]
    if isinstance(body, dict) and isinstance(body.get(key), list):
        return [item for item in body[key] if isinstance(item, dict)]
    return []
