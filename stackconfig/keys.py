"""Config keys as a user finds them in a stack file: `platform:clusters.eus2.subnets.nodes`."""

from __future__ import annotations

NAMESPACE = "platform"


def key(*parts: str | int) -> str:
    """`key("clusters", "eus2", "nodePools", "gpu")` -> `platform:clusters.eus2.nodePools.gpu`."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return f"{NAMESPACE}:{text}"
