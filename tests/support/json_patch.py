"""RFC 6902 JSON patches, the operations the platform's in-cluster scripts send (add, remove,
test), applied as the API server applies them to an object."""

from __future__ import annotations

import copy
from typing import Any


class Conflict(Exception):
    """A `test` operation failed: the object changed since it was read (the API answers 422)."""


def _pointer(path: str) -> list[str]:
    return [token.replace("~1", "/").replace("~0", "~") for token in path.split("/")[1:]]


def apply(document: dict[str, Any], operations: list[dict[str, Any]]) -> dict[str, Any]:
    result = copy.deepcopy(document)
    for operation in operations:
        *parents, last = _pointer(operation["path"])
        target: Any = result
        for token in parents:
            target = target[int(token)] if isinstance(target, list) else target[token]
        if operation["op"] == "test":
            if target.get(last) != operation["value"]:
                raise Conflict(f"{operation['path']} is {target.get(last)!r}, not {operation['value']!r}")
        elif operation["op"] == "add":
            target[last] = copy.deepcopy(operation["value"])
        elif operation["op"] == "remove":
            del target[last]
        else:
            raise ValueError(f"unsupported operation {operation['op']}")
    return result
