"""The preflight gate on one GPU node: runs in the node's health agent pod (planning/gpu_health.py).

A native sidecar of the agent pod, with the platform's Python image and the pod's only
Kubernetes credential (a projected token mounted into this container alone). It keeps its own
node in the state the agent's verdict asks for, through the API server:

- a boot not yet judged carries the startup taint (`TAINT_KEY`, NoSchedule): no workload lands
  on the node, and the cluster autoscaler counts it as upcoming, never as the template of its
  pool (facts/autoscaler.py). The gate applies it before the pod's preflight starts (its startup
  probe waits for it), before the GPU operator has installed the driver, so before the node
  advertises any GPU;
- a boot that passed loses the taint, and a cordon this gate made in an earlier boot is lifted;
- a boot that failed loses the taint and is cordoned in the same write (a failed node counts
  as ready, not as a stuck upcoming node, so it neither stops the autoscaler's scaling nor
  becomes a template: a cordoned node is never one), annotated `<boot ID>:<check>`;
- a fault the agent's passive checks hold (`fault`) cordons it the same way.

Each round compares the node with the verdict and writes only what differs, as one JSON patch
that first tests the node's resourceVersion (a strategic merge would replace the whole taint
list, losing a taint another controller just added). A ValidatingAdmissionPolicy lets this
service account change only its own node, only this taint, the cordon and its annotation
(planning/gpu_health.py, gate_guard).

Python's standard library only: the image has nothing else.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

# Set by the DaemonSet (planning/gpu_health.py), from facts/gpu.py.
TAINT_VALUE = "pending"
TOKEN_DIR = Path("/var/run/secrets/platform/gate")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def _escape(key: str) -> str:
    """A map key as a JSON pointer token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def desired(verdict: str | None, fault: str | None) -> tuple[bool, str | None]:
    """(whether the startup taint belongs on the node, the reason to cordon it or None)."""
    if fault:
        return False, fault
    if verdict is None:
        return True, None
    if verdict.startswith("failed"):
        return False, verdict.partition(":")[2] or "preflight"
    return False, None


def patch(
    node: dict[str, Any], boot_id: str, verdict: str | None, fault: str | None, taint_key: str, annotation: str
) -> list[dict[str, Any]]:
    """The JSON patch that brings `node` where this boot's verdict wants it; [] when it is there.

    `verdict`: None (not judged yet), `passed`, or `failed:<check>`; `fault`: a held passive fault."""
    spec, metadata = node.get("spec") or {}, node.get("metadata") or {}
    taints = list(spec.get("taints") or [])
    annotations = dict(metadata.get("annotations") or {})
    tainted = any(t.get("key") == taint_key for t in taints)
    cordoned = bool(spec.get("unschedulable"))
    mark = str(annotations.get(annotation) or "")
    this_boot = bool(mark) and mark.partition(":")[0] == boot_id
    want_taint, reason = desired(verdict, fault)
    if this_boot and reason is None and verdict is not None:
        # This boot's own cordon stays: a restarted agent must not undo it.
        reason = mark.partition(":")[2]
    ops: list[dict[str, Any]] = []
    if want_taint and not tainted:
        ops.append(
            {
                "op": "add",
                "path": "/spec/taints",
                "value": [*taints, {"key": taint_key, "value": TAINT_VALUE, "effect": "NoSchedule"}],
            }
        )
    elif not want_taint and tainted:
        ops.append({"op": "add", "path": "/spec/taints", "value": [t for t in taints if t.get("key") != taint_key]})
    if reason is not None and not cordoned:
        # Marked as this gate's in the write that cordons: a cordon someone else made (a
        # person, kured's drain) stays theirs, and the gate never lifts it.
        ops.append({"op": "add", "path": "/spec/unschedulable", "value": True})
        if not annotations:
            ops.append({"op": "add", "path": "/metadata/annotations", "value": {}})
        ops.append(
            {"op": "add", "path": f"/metadata/annotations/{_escape(annotation)}", "value": f"{boot_id}:{reason}"}
        )
    elif verdict == "passed" and mark and not this_boot:
        # An earlier boot's cordon, and this boot passed: the reboot (or reimage) fixed it.
        ops.append({"op": "add", "path": "/spec/unschedulable", "value": False})
        ops.append({"op": "remove", "path": f"/metadata/annotations/{_escape(annotation)}"})
    if not ops:
        return []
    return [{"op": "test", "path": "/metadata/resourceVersion", "value": metadata.get("resourceVersion")}, *ops]


def read(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except FileNotFoundError:
        return None


class Api:
    """The API server, as this container's projected service account token."""

    def __init__(self) -> None:
        host, port = os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"]
        self.base = f"https://{host}:{port}"
        self.context = ssl.create_default_context(cafile=str(TOKEN_DIR / "ca.crt"))

    def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        request = urllib.request.Request(
            self.base + path,
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            # Read each time: the kubelet renews the projected token.
            headers={"Authorization": f"Bearer {(TOKEN_DIR / 'token').read_text()}", "Content-Type": content_type},
        )
        with urllib.request.urlopen(request, context=self.context, timeout=30) as response:
            return json.load(response)


def reconcile(
    api: Api, node_name: str, boot_id: str, status: Path, boot_verdict: Path, taint_key: str, annotation: str
) -> list[dict[str, Any]]:
    """One round: reads the node and the verdicts, writes what differs; returns the patch."""
    node = api.call("GET", f"/api/v1/nodes/{node_name}")
    ops = patch(node, boot_id, read(boot_verdict), read(status / "fault"), taint_key, annotation)
    if ops:
        api.call("PATCH", f"/api/v1/nodes/{node_name}", ops, "application/json-patch+json")
    # What the agent's containers wait for: the node is as the verdict wants it (the taint is
    # on before preflight starts), and, on a fault, cordoned before the fault is published.
    (status / "armed").write_text("")
    cordon = [o["value"] for o in ops if o["path"] == "/spec/unschedulable"]
    if cordon[-1] if cordon else node.get("spec", {}).get("unschedulable"):
        (status / "cordoned").write_text("")
    else:
        # Only a cordon in place now answers the agent (not one lifted since).
        (status / "cordoned").unlink(missing_ok=True)
    return ops


def main() -> int:
    node_name, taint_key, annotation = os.environ["NODE_NAME"], os.environ["TAINT_KEY"], os.environ["ANNOTATION"]
    status, boot_verdict = Path(os.environ["STATUS_DIR"]), Path(os.environ["BOOT_VERDICT"])
    boot_id = BOOT_ID.read_text().strip()
    api = Api()
    while True:
        try:
            ops = reconcile(api, node_name, boot_id, status, boot_verdict, taint_key, annotation)
            if ops:
                print(json.dumps({"node": node_name, "patch": ops[1:]}), flush=True)
        except (urllib.error.URLError, OSError, ValueError) as error:
            # A conflict (the node changed since it was read) or the API server away: next round.
            print(f"gate: {error}", file=sys.stderr, flush=True)
        time.sleep(int(os.environ.get("PERIOD_SECONDS", "5")))


if __name__ == "__main__":
    sys.exit(main())
