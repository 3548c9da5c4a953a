"""Pod Security admission, evaluated from the control table (facts/pod_security.py).

The built-in admission plugin enforces a namespace's `pod-security.kubernetes.io/enforce`
level on every pod created there; this evaluates the same table in Python so that the
contract tests can ask what a namespace's level would do with a pod.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from facts import pod_security as pss
from planning.pss_paths import Step, parse

_ABSENT = object()


def values_at(obj: Any, steps: tuple[Step, ...]) -> Iterator[Any]:
    """Every value at the path (`_ABSENT` where a field along it is missing)."""
    if not steps:
        yield obj
        return
    step, rest = steps[0], steps[1:]
    if not isinstance(obj, dict) or obj.get(step.name) is None:
        yield _ABSENT
        return
    value = obj[step.name]
    if step.every_item:
        for item in value:
            yield from values_at(item, rest)
    elif step.key_prefix is not None:
        for key, item in value.items():
            if key.startswith(step.key_prefix):
                yield from values_at(item, rest)
    else:
        yield from values_at(value, rest)


def _is_allowed(value: Any, allowed: tuple[Any, ...]) -> bool:
    if value is _ABSENT:
        return pss.UNDEFINED in allowed
    for choice in allowed:
        if choice == pss.NON_ZERO and isinstance(value, int) and not isinstance(value, bool) and value != 0:
            return True
        if isinstance(choice, str) and choice.endswith("*") and choice != "*" and isinstance(value, str):
            if value.startswith(choice[:-1]):
                return True
        elif type(choice) is type(value) and choice == value:
            return True
    return False


def _containers(pod: dict[str, Any]) -> Iterator[dict[str, Any]]:
    spec = pod.get("spec") or {}
    for field in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(field) or []


def _waived(control: pss.Control, pod: dict[str, Any]) -> bool:
    if control.waived_by is None:
        return False
    path, value = control.waived_by
    return any(found == value and type(found) is type(value) for found in values_at(pod, parse(path)))


def _container_field(container: dict[str, Any], path: str) -> Any:
    """The value a container path names within one container (`spec.containers[*].x.y` -> x.y)."""
    suffix = path.split("[*].", 1)[1]
    found = list(values_at(container, parse(suffix)))
    return found[0] if found else _ABSENT


def violations(control: pss.Control, pod: dict[str, Any]) -> list[str]:
    """What in `pod` breaks `control`, one line per offending field."""
    if _waived(control, pod):
        return []
    found: list[str] = []
    if control.check == "values":
        for path in control.paths:
            for value in values_at(pod, parse(path)):
                if not _is_allowed(value, control.allowed):
                    found.append(f"{path} = {value!r}")
    elif control.check == "volume-types":
        for volume in (pod.get("spec") or {}).get("volumes") or []:
            kinds = [k for k in volume if k != "name"]
            if not any(k in control.allowed for k in kinds):
                found.append(f"volume {volume.get('name')!r} is {', '.join(kinds) or 'of no type'}")
    elif control.check == "must-drop":
        suffix = control.paths[0].split("[*].", 1)[1]
        for container in _containers(pod):
            dropped = _container_field(container, f"x[*].{suffix}")
            if dropped is _ABSENT or not all(d in dropped for d in control.allowed):
                found.append(
                    f"container {container.get('name')!r} drops {dropped if dropped is not _ABSENT else 'nothing'}"
                )
    elif control.check == "required":
        pod_path = (
            control.paths[0]
            if not control.paths[0].startswith("spec.containers") and "[*]" not in control.paths[0]
            else None
        )
        pod_value = next(values_at(pod, parse(pod_path))) if pod_path else _ABSENT
        if pod_value is not _ABSENT and not _is_allowed(pod_value, control.allowed):
            found.append(f"{pod_path} = {pod_value!r}")
        suffix = control.paths[-1].split("[*].", 1)[1]
        for container in _containers(pod):
            own = _container_field(container, f"x[*].{suffix}")
            effective = pod_value if own is _ABSENT else own
            if not _is_allowed(effective, control.allowed):
                found.append(
                    f"container {container.get('name')!r}: {suffix} = "
                    f"{'unset' if effective is _ABSENT else repr(effective)}"
                )
    else:
        raise ValueError(f"{control.name}: unknown check {control.check!r}")
    return found


def evaluate(pod: dict[str, Any], level: str) -> dict[str, list[str]]:
    """Control name -> what breaks it, for every control of `level` the pod fails."""
    result = {}
    for control in pss.controls(level):
        problems = violations(control, pod)
        if problems:
            result[control.name] = problems
    return result
