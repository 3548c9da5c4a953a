#!/usr/bin/env python3
"""One side of `make review BASE=<ref>`: preview every environment of a checkout and write its
plans and policy reviews as JSON, for offline/plandiff.py to compare.

    python scripts/review_side.py --root <checkout> --out side.json [--stack prod ...]

It runs *that checkout's* program with that checkout's engine and packs (its folder first on
`sys.path`, nothing imported from here), in its own process and venv, so a base commit previews
exactly as it would have on its own branch. It relies only on the engine's long-standing surface
(`preview_environment`, the captured requests; `review_environment` where it exists), and writes:
inputs as the engine received them, secrets replaced by a digest (their values never reach the
report; a change still shows), unknowns as "[unknown]", the engine's URNs (not the mock
monitor's) with alias specs resolved to them, options, and each environment's violations,
enforcement levels and waivers. A base from before the unit-stack engine (no
`offline.environment`) cannot be previewed this way: its side fails, and so does the review.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", required=True, help="the checkout to preview")
    parser.add_argument("--out", required=True, help="where to write the JSON")
    parser.add_argument("--stack", action="append", help="environment (repeatable; default: every environment)")
    return parser.parse_args(argv)


def masked(value: Any, rpc: Any) -> Any:
    """A wire value (protobuf Struct as a dict) with secrets digested and unknowns named."""
    if isinstance(value, dict):
        sig = value.get(rpc._special_sig_key)
        if sig == rpc._special_secret_sig:
            digest = hashlib.sha256(json.dumps(value.get("value"), sort_keys=True).encode()).hexdigest()[:16]
            return {"[secret]": digest}
        if sig == getattr(rpc, "_special_output_value_sig", None):
            inner = masked(value["value"], rpc) if "value" in value else "[unknown]"
            if value.get("secret"):
                digest = hashlib.sha256(json.dumps(inner, sort_keys=True).encode()).hexdigest()[:16]
                return {"[secret]": digest}
            return inner
        return {k: masked(v, rpc) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, rpc) for v in value]
    if value == rpc.UNKNOWN:
        return "[unknown]"
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def engine_urn(stack: str, project: str, parent: str | None, type_: str, name: str) -> str:
    """A URN as the Pulumi engine builds it (resource.NewURN): a child's type is qualified by its
    parent's whole type chain, except under the root stack. The offline monitor
    (pulumi.runtime.mocks.MockMonitor.make_urn) uses the parent's last type only, so a component
    moved under another grandparent would keep its mock URNs while the engine's change: the diff
    compares the engine's."""
    if parent and parent.split("::")[2] != "pulumi:pulumi:Stack":
        type_ = f"{parent.split('::')[2]}${type_}"
    return f"urn:pulumi:{stack}::{project}::{type_}::{name}"


def engine_urns(resources: list[Any], stack: str, project: str) -> dict[str, str]:
    """Each captured resource's mock URN -> its engine URN (a parent registers before its children)."""
    real: dict[str, str] = {}
    for resource in resources:
        parent = real.get(resource.parent) if resource.parent else None
        real[resource.urn] = engine_urn(stack, project, parent, resource.type, resource.name)
    return real


def alias_urns(resource: Any, stack: str, project: str, real: dict[str, str]) -> list[str]:
    """The engine URNs the resource's own alias specs name (inherited ones are the diff's job)."""
    urns = []
    for raw in resource.aliases:
        alias = json.loads(raw)
        if "urn" in alias:
            urns.append(real.get(alias["urn"], alias["urn"]))
            continue
        spec = alias.get("spec", {})
        # No parent given (an empty parentUrn): the resource's own, as the engine reads the spec.
        parent = None if spec.get("noParent") else (spec.get("parentUrn") or resource.parent)
        urns.append(
            engine_urn(
                spec.get("stack") or stack,
                spec.get("project") or project,
                real.get(parent, parent) if parent else None,
                spec.get("type") or resource.type,
                spec.get("name") or resource.name,
            )
        )
    return sorted(set(urns))


def resource_json(
    resource: Any, stack: str, project: str, real: dict[str, str], rpc: Any, json_format: Any
) -> dict[str, Any]:
    options = resource.options
    # The provider's URN (its reference is "<urn>::<id>", and the ID is the cloud's).
    provider = resource.provider.rsplit("::", 1)[0] if resource.provider else ""
    return {
        "urn": real[resource.urn],
        "type": resource.type,
        "name": resource.name,
        "parent": real.get(resource.parent) if resource.parent else None,
        "custom": resource.custom,
        "provider": real.get(provider, provider),
        "inputs": masked(json_format.MessageToDict(resource.raw_inputs), rpc),
        "aliases": alias_urns(resource, stack, project, real),
        "options": {
            "protect": options.protect,
            "ignoreChanges": list(options.ignore_changes),
            "replaceOnChanges": list(options.replace_on_changes),
            "deleteBeforeReplace": options.delete_before_replace,
            "retainOnDelete": options.retain_on_delete,
        },
    }


def stacks_json(environment: Any, rpc: Any, json_format: Any) -> dict[str, Any]:
    """An environment's unit plans as the diff reads them: stack -> its resources."""
    stacks = {}
    for stack, plan in environment.plans.items():
        real = engine_urns(plan.resources, stack, plan.project)
        resources = [resource_json(r, stack, plan.project, real, rpc, json_format) for r in plan.resources]
        stacks[stack] = {"ok": plan.ok, "resources": resources, "urns": real}
    return stacks


def review_json(review: Any, real: dict[str, str]) -> dict[str, Any]:
    return {
        "passed": review.passed,
        "violations": [
            {
                "pack": v.pack,
                "policy": v.policy,
                "level": v.level,
                "urn": real.get(v.urn, v.urn),
                "type": v.resource_type,
                "name": v.resource_name,
                "message": v.message.split("\n", 1)[-1],
            }
            for v in review.violations
        ],
        "levels": {
            config.pack.name: {policy: level.value for policy, level in sorted(config.levels.items())}
            for config in review.configs
        },
        "waivers": [
            {
                "pack": w.pack,
                "policy": w.policy,
                "level": w.level,
                "reason": w.reason,
                "approvedBy": w.approved_by,
                "expires": str(w.expires) if w.expires else None,
                "expired": w.expired(review.today),
            }
            for w in review.waivers
        ],
    }


def preview_side(root: Path, stacks: list[str] | None, previewed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The side document of `root`'s environments; `previewed`: environments of this same
    checkout already previewed as units (the tests' shared plans), used instead of previewing
    again."""
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    from google.protobuf import json_format
    from pulumi.runtime import rpc

    import offline.environment as engine
    from offline.environment import preview_environment

    # A base from before the environments' union review: plans only, no policies compared.
    review_environment = getattr(engine, "review_environment", None)
    from validation.loader import parse_platform_config
    from validation.stackfile import available_stacks, read_stack_config

    every = [stack for stack in available_stacks(root) if "." not in stack]
    document: dict[str, Any] = {"environments": {}}
    for environment_name in [s for s in stacks or every if s != DELIVERY]:
        entry: dict[str, Any] = {"ok": False, "error": None, "stacks": {}, "review": None}
        document["environments"][environment_name] = entry
        if environment_name not in every:
            entry["error"] = "no such environment at this commit"
            entry["missing"] = True
            continue
        started = time.perf_counter()
        if previewed is not None and environment_name in previewed:
            environment = previewed[environment_name]
        else:
            environment = preview_environment(environment_name, root)
        entry["stacks"] = stacks_json(environment, rpc, json_format)
        real = {mock: urn for stack in entry["stacks"].values() for mock, urn in stack.pop("urns").items()}
        entry["ok"], entry["error"] = environment.ok, environment.error
        if environment.ok and review_environment is not None:
            try:
                config = parse_platform_config(read_stack_config(root, environment_name).values)
                entry["review"] = review_json(review_environment(environment, config.environment), real)
            except Exception as error:  # a policy config the base or head gets wrong: reported, not fatal
                entry["error"] = f"policy review: {type(error).__name__}: {error}"
        entry["seconds"] = round(time.perf_counter() - started, 2)
    if stacks is None or DELIVERY in stacks:
        document["environments"][DELIVERY] = delivery_side(root, rpc, json_format)
    return document


# The delivery project (delivery/) appears in the review as one more "environment": its stacks
# (one per organization, acme and acme-scale here), diffed and reviewed by its own packs.
DELIVERY = "delivery"


def delivery_side(root: Path, rpc: Any, json_format: Any, previewed: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The side document of `root`'s delivery stacks; `previewed`: plans of this checkout's
    delivery stacks already made (the tests'), used instead of previewing again."""
    entry: dict[str, Any] = {"ok": False, "error": None, "stacks": {}, "review": None}
    if not (root / DELIVERY / "Pulumi.yaml").exists():
        return {**entry, "error": "no delivery project at this commit", "missing": True}
    started = time.perf_counter()
    from offline.engine import Plan, run_program
    from validation.stackfile import available_stacks, read_stack_config

    project = root / DELIVERY
    plans: dict[str, Plan] = {
        stack: (previewed or {}).get(stack) or run_program(read_stack_config(project, stack), project)
        for stack in available_stacks(project)
    }
    for stack, plan in plans.items():
        real = engine_urns(plan.resources, stack, plan.project)
        resources = [resource_json(r, stack, plan.project, real, rpc, json_format) for r in plan.resources]
        entry["stacks"][stack] = {"ok": plan.ok, "resources": resources}
        if not plan.ok:
            entry["error"] = f"{stack}: {plan.error}"
            continue
        try:
            from offline.policy import review_delivery
        except ImportError:  # a base from before the delivery's packs: plans only
            continue
        review = review_json(review_delivery(plan), real)
        # One review for the project: every stack's violations, passed only if each passed.
        merged = entry["review"] or {"passed": True, "violations": [], "levels": review["levels"], "waivers": []}
        merged["passed"] = merged["passed"] and review["passed"]
        merged["violations"] += review["violations"]
        merged["waivers"] += [w for w in review["waivers"] if w not in merged["waivers"]]
        entry["review"] = merged
    entry["ok"] = all(plan.ok for plan in plans.values())
    entry["seconds"] = round(time.perf_counter() - started, 2)
    return entry


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    try:
        document = preview_side(Path(args.root).resolve(), args.stack)
    except Exception:
        document = {"error": traceback.format_exc(), "environments": {}}
    Path(args.out).write_text(json.dumps(document, sort_keys=True))
    return 0 if "error" not in document else 1


if __name__ == "__main__":
    sys.exit(main())
