"""What a pull request changes: the offline plans of a base and a head compared by URN.

Each side is the JSON that scripts/review_side.py writes for one checkout (its own program, engine
and packs). Per environment and unit stack, a resource is:
- created or deleted: its URN is on one side only (a head resource whose alias, or whose parent's
  alias, names a base URN is the same resource, renamed: no change, as the engine treats it);
- updated: inputs differ (leaf paths with old -> new, secrets masked, `ignoreChanges` honoured);
- replaced: a changed path forces a new resource, by the program's own `replaceOnChanges`, or by
  what the provider knows of the type at its pinned API version (facts/replacement.py, each entry
  with its source), with `deleteBeforeReplace` noted (the old one goes first: downtime).

A replacement or deletion of a protected or stateful resource is a *finding*: it fails the
review, naming the property that caused it and how to avoid it. Policy results are compared too:
violations the PR introduces or resolves, enforcement levels it changes, waivers it adds.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from facts.replacement import ONE_WAY, STATEFUL, force_new
from offline import locks

SECRET = "[secret]"
UNKNOWN = "[unknown]"
_ROOT_STACK = "pulumi:pulumi:Stack$"
_MISSING = object()


def normal_urn(urn: str) -> str:
    """A URN without the root stack in its type chain: the engine leaves it out, and a resource
    aliased with `noParent` is a child of the root stack."""
    return urn.replace("::" + _ROOT_STACK, "::")


def _unsecret(value: Any) -> Any:
    """A value with each secret's digest replaced by "[secret]": digests stay out of reports."""
    if isinstance(value, dict):
        if set(value) == {SECRET}:
            return SECRET
        return {k: _unsecret(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unsecret(v) for v in value]
    return value


@dataclass(frozen=True)
class Change:
    path: str
    old: Any
    new: Any

    def shown(self, value: Any) -> str:
        if value is _MISSING:
            return "(none)"
        value = _unsecret(value)
        if value == SECRET:
            return SECRET
        text = json.dumps(value, sort_keys=True, default=str)
        # A rule added to or taken from a list, or a role assignment's condition, is read whole:
        # a cut-off prefix can look the same on both sides.
        whole = self.path.endswith(("[+]", "[-]")) or self.path.rsplit(".", 1)[-1] == "condition"
        return text if whole or len(text) <= 80 else text[:77] + "..."

    def __str__(self) -> str:
        return f"{self.path}: {self.shown(self.old)} → {self.shown(self.new)}"


@dataclass(frozen=True)
class Cause:
    """Why a resource is replaced: the property, and who says so."""

    path: str
    source: str


@dataclass
class ResourceDiff:
    stack: str
    urn: str
    type: str
    name: str
    action: str  # create | delete | update | replace
    changes: list[Change] = field(default_factory=list)
    causes: list[Cause] = field(default_factory=list)
    protected: bool = False
    delete_before_replace: bool = False
    renamed_from: str | None = None
    # Deleted from the program with `retain_on_delete`: Pulumi forgets it, Azure keeps it.
    retained: bool = False
    # The delete lock that will refuse deleting it (ScopeLocked): offline/locks.py.
    locked_by: str | None = None
    # Changes Azure makes only one way, or refuses in place (facts/replacement.py, ONE_WAY).
    one_way: list[Cause] = field(default_factory=list)

    @property
    def stateful(self) -> str | None:
        return STATEFUL.get(self.type)

    @property
    def finding(self) -> bool:
        """Data or a hard-to-replace resource would be lost, or `pulumi up` would stop on it."""
        if self.action == "delete" and self.retained and not self.protected:
            return False
        if self.one_way:
            return True
        return self.action in ("delete", "replace") and (
            self.protected or self.stateful is not None or self.locked_by is not None
        )


@dataclass(frozen=True)
class PolicyChange:
    kind: str  # introduced | resolved | level | waiver-added | waiver-removed
    pack: str
    policy: str
    detail: str
    level: str = ""
    resource: str = ""


@dataclass
class EnvironmentDiff:
    environment: str
    base_ok: bool
    head_ok: bool
    error: str | None = None  # why there is no diff (a side did not preview)
    # An error fails the review unless it is the base's own program that does not preview (then
    # the pull request may be its fix).
    blocking: bool = True
    notes: list[str] = field(default_factory=list)
    resources: list[ResourceDiff] = field(default_factory=list)
    renamed: list[ResourceDiff] = field(default_factory=list)
    policy: list[PolicyChange] = field(default_factory=list)

    def of(self, action: str) -> list[ResourceDiff]:
        return [r for r in self.resources if r.action == action]

    @property
    def findings(self) -> list[ResourceDiff]:
        return [r for r in self.resources if r.finding]

    def counts(self) -> dict[str, int]:
        counts = {"create": 0, "update": 0, "replace": 0, "delete": 0}
        for resource in self.resources:
            counts[resource.action] += 1
        return counts


# --- inputs ---------------------------------------------------------------------------------


def _keyed(items: list[Any]) -> dict[str, Any] | None:
    """A list of named objects (pools, subnets, rules) as a map by name, so a change reads
    `agentPoolProfiles[name=system].count`, not an index that shifts."""
    # Cosmos DB's locations are named by `locationName`.
    field_ = "name" if items and all(isinstance(i, dict) and "name" in i for i in items) else "locationName"
    if items and all(isinstance(i, dict) and isinstance(i.get(field_), str) for i in items):
        names = [i[field_] for i in items]
        if len(set(names)) == len(names):
            return {f"[name={n}]": i for n, i in zip(names, items, strict=True)}
    return None


def leaf_changes(old: Any, new: Any, path: str = "") -> Iterator[Change]:
    """Every leaf that differs between two input trees (missing on one side: `_MISSING`)."""
    if isinstance(old, dict) and isinstance(new, dict) and SECRET not in old and SECRET not in new:
        for key in sorted(set(old) | set(new)):
            yield from leaf_changes(old.get(key, _MISSING), new.get(key, _MISSING), f"{path}.{key}" if path else key)
        return
    if isinstance(old, list) and isinstance(new, list):
        old_keyed, new_keyed = _keyed(old), _keyed(new)
        if old_keyed is not None and new_keyed is not None:
            for key in sorted(set(old_keyed) | set(new_keyed)):
                yield from leaf_changes(old_keyed.get(key, _MISSING), new_keyed.get(key, _MISSING), path + key)
            return
        if len(old) == len(new) and not any(isinstance(item, dict) for item in old + new):
            for index, (o, n) in enumerate(zip(old, new, strict=True)):
                yield from leaf_changes(o, n, f"{path}[{index}]")
            return

        # Lists of rules (ACLs, network policy and RBAC rules, NSG and firewall rules) item by
        # item: what was taken out, what was put in, each whole.
        def canonical(item: Any) -> str:
            return json.dumps(item, sort_keys=True, default=str)

        removed = Counter(map(canonical, old)) - Counter(map(canonical, new))
        added = Counter(map(canonical, new)) - Counter(map(canonical, old))
        for item in old:
            if removed[canonical(item)] > 0:
                removed[canonical(item)] -= 1
                yield Change(f"{path}[-]", item, _MISSING)
        for item in new:
            if added[canonical(item)] > 0:
                added[canonical(item)] -= 1
                yield Change(f"{path}[+]", _MISSING, item)
        return
    if old != new:
        yield Change(path, old, new)


def _pattern(path: str) -> re.Pattern[str]:
    """A Pulumi property path (`a.b`, `a[*].b`, `a["b.c"]`) as a prefix pattern over our paths."""
    path = re.sub(r'\["([^"]+)"\]', r".\1", path)
    parts = [re.escape(p) for p in re.split(r"\[\*\]|\[\d+\]", path)]
    body = r"\[[^\]]*\]".join(parts)
    return re.compile(rf"^{body}(?:$|[.\[])")


def _matches(paths: tuple[str, ...] | list[str], change: str) -> str | None:
    for path in paths:
        if path == "*" or _pattern(path).match(change):
            return path
    return None


# --- one stack ------------------------------------------------------------------------------


def _alias_candidates(resource: Mapping[str, Any], by_urn: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """URNs the resource may have had: its own aliases, and the engine's inherited ones: under
    each alias of its parent, its type qualified by that alias's chain and, where its name starts
    with the parent's, that prefix swapped for the alias's name (pulumi/pulumi
    pkg/resource/deploy/step_generator.go and the SDK's `inherited_child_alias`), so children
    named `f"{name}-..."` follow a renamed component."""
    urns = {normal_urn(a) for a in resource.get("aliases", [])}
    parent = by_urn.get(resource.get("parent") or "")
    if parent is not None:
        prefix, name = resource["urn"].split("::")[0:2], resource["name"]
        for parent_alias in _alias_candidates(parent, by_urn):
            chain, alias_name = parent_alias.split("::")[2], parent_alias.rsplit("::", 1)[-1]
            prefixed = name.startswith(parent["name"])
            name_then = alias_name + name[len(parent["name"]) :] if prefixed else name
            urns.add(normal_urn(f"{prefix[0]}::{prefix[1]}::{chain}${resource['type']}::{name_then}"))
    return urns


def _same_location(type_: str, change: Change) -> bool:
    """azure-native compares `location` without case or spaces ("East US 2" is eastus2)."""
    if change.path != "location" or not type_.startswith("azure-native:"):
        return False

    def plain(value: Any) -> str:
        return str(value).replace(" ", "").lower()

    return plain(change.old) == plain(change.new)


def diff_resource(
    stack: str, old: Mapping[str, Any], new: Mapping[str, Any], provider_aliases: Mapping[str, set[str]] | None = None
) -> ResourceDiff | None:
    options = new.get("options", {})
    ignored = tuple(options.get("ignoreChanges", ()))
    changes = [
        c
        for c in leaf_changes(old.get("inputs", {}), new.get("inputs", {}))
        if not _matches(ignored, c.path) and not _same_location(new["type"], c)
    ]
    # The same provider under another name (an alias) is no change (the engine's providerChanged).
    provider = normal_urn(new.get("provider", ""))
    same = {provider} | (provider_aliases or {}).get(provider, set())
    provider_changed = normal_urn(old.get("provider", "")) not in same
    if not changes and not provider_changed:
        return None
    causes = []
    rules = force_new(new["type"])
    for change in changes:
        sources = []
        if own := _matches(tuple(options.get("replaceOnChanges", ())), change.path):
            sources.append(f"the program's replaceOnChanges ({own})")
        if rule := _matches(tuple(rules), change.path):
            sources.append(rules[rule])
        if sources:
            causes.append(Cause(change.path, "; ".join(sources)))
    one_way = ONE_WAY.get(new["type"], {})
    irreversible = [Cause(c.path, one_way[rule]) for c in changes if (rule := _matches(tuple(one_way), c.path))]
    if provider_changed:
        causes.append(
            Cause("provider", "another provider: created by the new one, deleted by the old (Pulumi's step generator)")
        )
    return ResourceDiff(
        stack=stack,
        urn=new["urn"],
        type=new["type"],
        name=new["name"],
        action="replace" if causes else "update",
        changes=changes,
        causes=causes,
        one_way=irreversible,
        protected=bool(old.get("options", {}).get("protect")),
        # azure-native deletes first whenever it replaces (one name, one resource: its Diff sets
        # DeleteBeforeReplace with any replace key, provider/pkg/provider/provider.go).
        delete_before_replace=bool(options.get("deleteBeforeReplace"))
        or (bool(causes) and new["type"].startswith("azure-native:")),
    )


def diff_stack(
    stack: str, base: list[Mapping[str, Any]], head: list[Mapping[str, Any]]
) -> tuple[list[ResourceDiff], list[ResourceDiff]]:
    """(changes, renames) of one unit stack; components carry no inputs the cloud sees."""
    base_by = {normal_urn(r["urn"]): r for r in base}
    head_by_urn = {r["urn"]: r for r in head}
    matched: set[str] = set()
    providers = [r for r in head if r["type"].startswith("pulumi:providers:")]
    provider_aliases = {normal_urn(p["urn"]): _alias_candidates(p, head_by_urn) for p in providers}
    diffs: list[ResourceDiff] = []
    renames: list[ResourceDiff] = []
    for resource in head:
        key = normal_urn(resource["urn"])
        old = base_by.get(key)
        renamed_from = None
        if old is None:
            for candidate in sorted(_alias_candidates(resource, head_by_urn)):
                if candidate in base_by and candidate not in matched:
                    old, renamed_from = base_by[candidate], base_by[candidate]["urn"]
                    break
        if old is None:
            if resource.get("custom", True):
                diffs.append(ResourceDiff(stack, resource["urn"], resource["type"], resource["name"], "create"))
            continue
        matched.add(normal_urn(old["urn"]))
        if not resource.get("custom", True):
            continue
        diff = diff_resource(stack, old, resource, provider_aliases)
        if renamed_from:
            renames.append(
                ResourceDiff(
                    stack, resource["urn"], resource["type"], resource["name"], "rename", renamed_from=renamed_from
                )
            )
        if diff:
            diff.renamed_from = renamed_from
            diffs.append(diff)
    # A provider that is replaced (a Kubernetes provider pointed at another cluster) replaces
    # everything it deployed.
    replaced = {normal_urn(d.urn) for d in diffs if d.action == "replace" and d.type.startswith("pulumi:providers:")}
    if replaced:
        by_urn = {d.urn: d for d in diffs}
        for resource in head:
            if normal_urn(resource.get("provider", "")) not in replaced:
                continue
            cause = Cause("provider", "its provider is replaced (pulumi-kubernetes DiffConfig: another cluster)")
            diff = by_urn.get(resource["urn"])
            if diff is None:
                old = base_by.get(normal_urn(resource["urn"]))
                if old is None:
                    continue  # created anyway
                diff = ResourceDiff(
                    stack,
                    resource["urn"],
                    resource["type"],
                    resource["name"],
                    "replace",
                    protected=bool(old.get("options", {}).get("protect")),
                )
                diffs.append(diff)
            if diff.action in ("update", "replace"):
                diff.action = "replace"
                diff.causes.append(cause)
    for key, old in base_by.items():
        if key not in matched and old.get("custom", True):
            diffs.append(
                ResourceDiff(
                    stack,
                    old["urn"],
                    old["type"],
                    old["name"],
                    "delete",
                    protected=bool(old.get("options", {}).get("protect")),
                    causes=[Cause("(resource)", "no longer in the program, and no alias names it")],
                    retained=bool(old.get("options", {}).get("retainOnDelete")),
                )
            )
    order = {"replace": 0, "delete": 1, "update": 2, "create": 3}
    diffs.sort(key=lambda d: (order[d.action], d.type, d.name))
    renames.sort(key=lambda d: (d.type, d.name))
    return diffs, renames


# --- policies -------------------------------------------------------------------------------


def _violation_key(v: Mapping[str, Any]) -> tuple[str, str, str, str]:
    return (v["pack"], v["policy"], normal_urn(v["urn"]), v["level"])


def _added_and_removed(
    old: list[Mapping[str, Any]], new: list[Mapping[str, Any]], key: Callable[[Mapping[str, Any]], tuple[str, ...]]
) -> Iterator[tuple[bool, Mapping[str, Any]]]:
    """(added?, item) for each item on one side only, by `key`, in key order."""
    old_by, new_by = {key(i): i for i in old}, {key(i): i for i in new}
    for added, keys, side in (
        (True, new_by.keys() - old_by.keys(), new_by),
        (False, old_by.keys() - new_by.keys(), old_by),
    ):
        for k in sorted(keys):
            yield added, side[k]


def diff_policies(base: Mapping[str, Any] | None, head: Mapping[str, Any] | None) -> list[PolicyChange]:
    base, head = base or {}, head or {}
    changes: list[PolicyChange] = []
    for added, v in _added_and_removed(base.get("violations", []), head.get("violations", []), _violation_key):
        resource = f"{v['type']} {v['name']}"
        changes.append(
            PolicyChange(
                "introduced" if added else "resolved", v["pack"], v["policy"], v["message"], v["level"], resource
            )
        )
    old_levels, new_levels = base.get("levels", {}), head.get("levels", {})
    for pack in sorted(set(old_levels) | set(new_levels)):
        before, after = old_levels.get(pack, {}), new_levels.get(pack, {})
        for policy in sorted(set(before) | set(after)):
            if before.get(policy) != after.get(policy):
                was, now = before.get(policy, "(none)"), after.get(policy, "(none)")
                changes.append(PolicyChange("level", pack, policy, f"{was} → {now}", now))

    def waiver_key(w: Mapping[str, Any]) -> tuple[str, ...]:
        return (w["pack"], w["policy"], w["level"], w["reason"], w["approvedBy"], str(w["expires"]))

    for added, w in _added_and_removed(base.get("waivers", []), head.get("waivers", []), waiver_key):
        detail = f"{w['reason']} (approved by {w['approvedBy']}, expires {w['expires'] or 'never'})"
        changes.append(
            PolicyChange("waiver-added" if added else "waiver-removed", w["pack"], w["policy"], detail, w["level"])
        )
    return changes


# --- environments ---------------------------------------------------------------------------


def diff_environment(name: str, base: Mapping[str, Any] | None, head: Mapping[str, Any] | None) -> EnvironmentDiff:
    """One environment's change. A side that lacks the environment contributes nothing (a new
    environment is all creations); a side that failed to preview leaves no diff, and says why."""
    base = base or {"ok": True, "stacks": {}, "missing": True}
    head = head or {"ok": True, "stacks": {}, "missing": True}
    result = EnvironmentDiff(
        name, bool(base.get("ok")) or bool(base.get("missing")), bool(head.get("ok")) or bool(head.get("missing"))
    )
    if not head.get("ok") and not head.get("missing"):
        result.error = f"the pull request's code does not preview {name}: {head.get('error')}"
        return result
    if not base.get("ok") and not base.get("missing"):
        result.error = f"the base does not preview {name} (nothing to compare with): {base.get('error')}"
        result.blocking = False
        return result
    base_stacks, head_stacks = base.get("stacks", {}), head.get("stacks", {})
    for stack in list(head_stacks) + [s for s in base_stacks if s not in head_stacks]:
        diffs, renames = diff_stack(
            stack, base_stacks.get(stack, {}).get("resources", []), head_stacks.get(stack, {}).get("resources", [])
        )
        result.resources += diffs
        result.renamed += renames
    _mark_locked(result.resources, base_stacks, head_stacks)
    if base.get("review") is None and not base.get("missing"):
        result.notes.append("the base's engine has no policy review of the environment: policies not compared")
    else:
        result.policy = diff_policies(base.get("review"), head.get("review"))
    return result


def _mark_locked(diffs: list[ResourceDiff], base_stacks: Mapping[str, Any], head_stacks: Mapping[str, Any]) -> None:
    """Deletes a delete lock will refuse, named on the diff (offline/locks.py)."""
    base_locks, head_locks = locks.locks(base_stacks), locks.locks(head_stacks)
    if not base_locks and not head_locks:
        return
    for diff in diffs:
        if diff.action not in ("delete", "replace") or (diff.action == "delete" and diff.retained):
            continue
        resource = next((r for r in base_stacks.get(diff.stack, {}).get("resources", []) if r["urn"] == diff.urn), None)
        lock = resource and locks.blocking_lock(diff.stack, resource, base_locks, head_locks)
        if lock:
            diff.locked_by = f"{lock.stack}: {lock.name}"


def diff_sides(base: Mapping[str, Any], head: Mapping[str, Any]) -> list[EnvironmentDiff]:
    environments = list(head.get("environments", {}))
    environments += [e for e in base.get("environments", {}) if e not in environments]
    if "error" in base:
        # The base's side crashed (not its program: the tooling): nothing is known of it, so
        # nothing may pass as "only creations".
        return [
            EnvironmentDiff(
                e, False, True, error=f"the base's review crashed, nothing compared: {str(base['error'])[-1500:]}"
            )
            for e in environments
        ]
    return [
        diff_environment(e, base.get("environments", {}).get(e), head.get("environments", {}).get(e))
        for e in environments
    ]
