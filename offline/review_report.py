"""The pull-request review as Markdown: a headline first, then per environment what changes,
what it risks, what it costs, and a diagram; from the side documents of scripts/review_side.py
and their comparison (offline/plandiff.py).

Two renderings: the comment (within GitHub's comment limit: details collapse, long lists are cut
with a pointer to the job summary) and the full report (the job summary and the artifact).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from offline.cost import Capacity, Priced, Snapshot, capacity, load_snapshot, price
from offline.diagram import mermaid
from offline.plandiff import EnvironmentDiff, ResourceDiff, normal_urn
from offline.team_quotas import quota_changes, team_quotas

# GitHub refuses a comment over 65,536 characters; the comment workflow adds a few lines.
COMMENT_LIMIT = 60_000
_ACTIONS = {"create": "created", "update": "updated", "replace": "replaced", "delete": "deleted"}
_AVOID = {
    "replace": (
        "keep the old value; if only the name or parent moved, add `pulumi.Alias`; if the provider may "
        "ignore the property, `ignore_changes`; otherwise create the new resource beside the old one, move "
        "the data, and remove the old one in a later pull request"
    ),
    "delete": (
        "if it was renamed or moved, add `pulumi.Alias(name=..., parent=...)` so the engine keeps it; "
        "to retire it, move its data first and unprotect it in a pull request of its own"
    ),
}

# What to do about a delete under a lock (offline/locks.py).
_ONE_WAY = "make sure it is wanted: the program cannot take it back (docs/databases.md names the way through for each)"
_LOCKED = (
    "the deploy would stop here: lift the lock first (`platform:lockStatefulResources: false` in its own "
    "pull request when the lock is in this stack or a layer that does not deploy first), "
    "docs/operations.md, \"Removing access under a delete lock\""
)


@dataclass(frozen=True)
class Side:
    label: str
    commit: str | None
    document: Mapping[str, Any]

    def environment(self, name: str) -> Mapping[str, Any] | None:
        return self.document.get("environments", {}).get(name)

    def resources(self, name: str) -> list[Mapping[str, Any]]:
        environment = self.environment(name) or {}
        return [r for stack in environment.get("stacks", {}).values() for r in stack.get("resources", [])]


@dataclass
class Report:
    headline: str
    comment: str
    full: str
    passed: bool
    summary: dict[str, Any] = field(default_factory=dict)


def _money(value: float) -> str:
    sign = "-" if value < 0 else ""
    value = abs(value)
    if value >= 1_000_000:
        return f"{sign}${value / 1_000_000:.2f}M"
    if value >= 10_000:
        return f"{sign}${value / 1_000:.0f}k"
    return f"{sign}${value:,.0f}"


def _delta(value: float) -> str:
    return ("+" if value >= 0 else "") + _money(value)


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _what(diff: ResourceDiff) -> str:
    return diff.type.rsplit(":", 1)[-1]


@dataclass
class _Environment:
    name: str
    diff: EnvironmentDiff | None
    head: Mapping[str, Any] | None
    capacity: Capacity
    priced: Priced
    base_capacity: Capacity | None
    base_priced: Priced | None
    # The base's resources this change deletes: the diagram draws them, as removed.
    deleted: list[Mapping[str, Any]] = field(default_factory=list)
    # A maintainer said the findings are deliberate: they are reported and do not fail.
    accept_findings: bool = False
    # What the change does to the teams' GPU quotas and their shares of each pool.
    quota_lines: list[str] = field(default_factory=list)

    @property
    def review(self) -> Mapping[str, Any]:
        return (self.head or {}).get("review") or {}

    @property
    def mandatory(self) -> list[Mapping[str, Any]]:
        return [v for v in self.review.get("violations", []) if v["level"] == "mandatory"]

    @property
    def removed(self) -> bool:
        """The pull request removes the environment (its stack file): all its resources go."""
        return self.head is None and self.diff is not None and not self.diff.error

    @property
    def ok(self) -> bool:
        if self.removed:
            return True
        return bool(self.head and self.head.get("ok")) and not (self.head or {}).get("error")

    @property
    def passed(self) -> bool:
        expired = [w for w in self.review.get("waivers", []) if w.get("expired")]
        findings = self.diff.findings if self.diff and not self.accept_findings else []
        return (
            self.ok
            and (self.removed or bool(self.review.get("passed")))
            and not expired
            and not findings
            and not (self.diff and self.diff.error and self.diff.blocking)
        )

    @property
    def capacity_change(self) -> str:
        """What the change does to nodes and GPUs at max ("" without a base or a difference)."""
        if self.base_capacity is None:
            return ""
        nodes = self.capacity.nodes()[1] - self.base_capacity.nodes()[1]
        gpus = self.capacity.gpus()[1] - self.base_capacity.gpus()[1]
        return f"{nodes:+,} nodes, {gpus:+,} GPUs at max" if nodes or gpus else ""

    def headline(self) -> str:
        parts = []
        if not self.ok:
            return f"{self.name}: ❌ does not preview"
        if self.removed:
            parts.append("the environment is removed")
        if self.diff is not None:
            counts = self.diff.counts()
            changed = [f"{n} {_ACTIONS[a]}" for a, n in counts.items() if n]
            findings = self.diff.findings
            if findings:
                kinds = sorted({_what(f) for f in findings})
                changed.append(
                    f"⚠ {len(findings)} stateful, protected or locked {'/'.join(kinds)} replaced, deleted "
                    "or changed one way"
                )
            parts.append(", ".join(changed) or "no change")
            if self.capacity_change:
                parts.append(self.capacity_change)
            quotas = sum(1 for line in self.quota_lines if line.startswith("- `"))
            if quotas:
                parts.append(f"{quotas} team quota change{'s' if quotas > 1 else ''}")
            if self.base_priced is not None:
                delta = self.priced.monthly_max - self.base_priced.monthly_max
                if round(delta):
                    parts.append(f"{_delta(delta)}/month at max")
            new = [p for p in self.diff.policy if p.kind == "introduced"]
            for level in ("mandatory", "advisory"):
                count = sum(1 for p in new if p.level == level)
                if count:
                    parts.append(f"{count} new {level}")
            waivers = sum(1 for p in self.diff.policy if p.kind == "waiver-added")
            if waivers:
                parts.append(f"{waivers} new waiver{'s' if waivers > 1 else ''}")
        else:
            parts.append(
                f"{sum(len(s.get('resources', [])) for s in (self.head or {}).get('stacks', {}).values())} resources"
            )
        if self.mandatory:
            parts.append(f"❌ {len(self.mandatory)} mandatory violations")
        return f"{self.name}: " + "; ".join(parts)


def _capacity_lines(env: _Environment, snapshot: Snapshot, full: bool) -> list[str]:
    cap, priced = env.capacity, env.priced
    nodes, gpus = cap.nodes(), cap.gpus()
    change = f" (this change: {env.capacity_change})" if env.capacity_change else ""
    lines = [
        f"**Capacity:** {nodes[0]:,}–{nodes[1]:,} nodes, {gpus[0]:,}–{gpus[1]:,} GPUs{change}, "
        + ", ".join(f"{n} {what}" for what, n in cap.counts.items())
        + "  ",
    ]
    if env.quota_lines:
        lines += ["", "**Team GPU quotas** (Kueue's nominal quota; share of the pool at its maximum):", ""]
        lines += env.quota_lines + [""]
    snapshot_date = snapshot.fetched or "never refreshed"
    if not priced.rows:
        lines += [
            f"**Cost:** unpriced: the Retail Prices snapshot ({snapshot_date}) holds none of these "
            f"{len(priced.unpriced)} meters. To fill it, run `make prices` where Azure's Retail Prices API "
            "is reachable and commit `facts/retail_prices.json`, or run the Prices workflow "
            "(`.github/workflows/prices.yml`), which opens that pull request (docs/deploying.md, "
            '"Before you start")',
            "",
        ]
        return lines + _capacity_details(env, snapshot, full)
    money = f"**Cost:** {_money(priced.monthly_min)}–{_money(priced.monthly_max)}/month (min–max)"
    if env.base_priced is not None:
        money += (
            f", this change {_delta(priced.monthly_min - env.base_priced.monthly_min)} at min, "
            f"{_delta(priced.monthly_max - env.base_priced.monthly_max)} at max"
        )
    money += f"; Retail Prices snapshot {snapshot_date}, {snapshot.currency}, pay-as-you-go"
    if priced.unpriced:
        money += f"; **{len(priced.unpriced)} unpriced**"
    return lines + [money, ""] + _capacity_details(env, snapshot, full)


def _capacity_details(env: _Environment, snapshot: Snapshot, full: bool) -> list[str]:
    cap, priced = env.capacity, env.priced
    lines = ["<details><summary>Pools, quota and prices</summary>", ""]
    lines += ["| cluster | pool | size | nodes | GPUs at max | vCPU quota family |", "|---|---|---|---|---|---|"]
    base_pools = {(p.cluster, p.name): p for p in env.base_capacity.pools} if env.base_capacity else {}
    for pool in cap.pools:
        was = base_pools.get((pool.cluster, pool.name))
        change = ""
        if env.base_capacity is not None and (
            was is None or (was.min_nodes, was.max_nodes, was.vm_size) != (pool.min_nodes, pool.max_nodes, pool.vm_size)
        ):
            change = " (new)" if was is None else f" (was {was.min_nodes}–{was.max_nodes:,} × {was.vm_size})"
        lines.append(
            f"| {pool.cluster} | {pool.name} | {pool.vm_size} | {pool.min_nodes}–{pool.max_nodes:,}{change} | "
            f"{pool.max_nodes * pool.gpus_per_node:,} | {pool.quota_family} |"
        )
    lines += ["", "vCPU quota to request before `pulumi up` (max nodes plus upgrade surge):", ""]
    lines += ["| region | family | vCPUs |", "|---|---|---|"]
    base_quota = env.base_capacity.quota() if env.base_capacity else {}
    for (region, family), vcpus in cap.quota().items():
        before = base_quota.get((region, family), 0)
        change = (
            f" ({'+' if vcpus >= before else ''}{vcpus - before:,})"
            if env.base_capacity is not None and before != vcpus
            else ""
        )
        lines.append(f"| {region} | {family} | {vcpus:,}{change} |")
    if priced.rows and (full or len(priced.rows) <= 40):
        lines += ["", "| item | meter | unit price | month at min | month at max |", "|---|---|---|---|---|"]
        for item, unit_price, low, high in priced.rows:
            lines.append(
                f"| {_cell(item.what)} | {_cell(item.meter.key)} | {unit_price:g}/{item.meter.unit} | {_money(low)} | {_money(high)} |"
            )
    if priced.unpriced:
        lines += ["", "Unpriced (no single matching record in the snapshot; `scripts/prices.py` refreshes it):", ""]
        shown = priced.unpriced if full else priced.unpriced[:25]
        lines += [f"- {_cell(item.what)}: `{_cell(item.meter.key)}`" for item in shown]
        if len(shown) < len(priced.unpriced):
            lines.append(f"- … {len(priced.unpriced) - len(shown)} more in the job summary")
    if cap.usage:
        lines += ["", "Priced by use, not in the monthly figure: " + "; ".join(sorted(set(cap.usage))) + "."]
    lines += ["", "</details>", ""]
    return lines


def _changes(diff: EnvironmentDiff, full: bool, limit: int, accepted: bool) -> list[str]:
    lines: list[str] = []
    if diff.findings:
        lines += ["#### ⚠ Findings: stateful, protected or locked resources replaced, deleted or changed one way", ""]
        if accepted:
            lines += ["Accepted as deliberate by the `accept-replacement` label: reported, not failing.", ""]
        lines += ["| stack | resource | action | because | avoid it |", "|---|---|---|---|---|"]
        for f in diff.findings:
            why = "; ".join(f"`{c.path}` ({c.source})" for c in f.causes)
            values = "; ".join(str(c) for c in f.changes if any(c.path.startswith(x.path) for x in f.causes))
            because = why + (f": {values}" if values else "")
            what = (
                f"`{_what(f)}` {f.name}"
                + (" (protected)" if f.protected else "")
                + (f": {f.stateful}" if f.stateful else "")
            )
            avoid = _AVOID[f.action]
            if f.one_way:
                because = "; ".join([*([because] if because else []), *(f"`{c.path}`: {c.source}" for c in f.one_way)])
                avoid = _ONE_WAY
            if f.locked_by:
                because = (
                    because + "; " if because else ""
                ) + f"the delete lock {f.locked_by} refuses it (ScopeLocked)"
                avoid = _LOCKED
            lines.append(f"| {f.stack} | {_cell(what)} | {f.action} | {_cell(because)} | {_cell(avoid)} |")
        lines.append("")
    stacks: dict[str, list[ResourceDiff]] = {}
    for resource in diff.resources:
        stacks.setdefault(resource.stack, []).append(resource)
    if stacks:
        lines += ["| stack | created | updated | replaced | deleted |", "|---|---|---|---|---|"]
        for stack, items in stacks.items():
            counts = {a: sum(1 for r in items if r.action == a) for a in _ACTIONS}
            lines.append(f"| {stack} | " + " | ".join(str(counts[a] or "") for a in _ACTIONS) + " |")
        lines += ["", "<details><summary>Every change</summary>", ""]
        shown = 0
        for stack, items in stacks.items():
            lines.append(f"**{stack}**")
            lines.append("")
            for r in items:
                if not full and shown >= limit:
                    break
                shown += 1
                head = f"- {r.action} `{r.type}` {r.name}"
                if r.renamed_from:
                    head += f" (renamed from `{r.renamed_from.rsplit('::', 1)[-1]}`)"
                if r.action == "replace":
                    head += (
                        " — "
                        + ", ".join(f"`{c.path}`" for c in r.causes)
                        + (" (deleted first)" if r.delete_before_replace else "")
                    )
                lines.append(head)
                changes = r.changes if full else r.changes[:8]
                lines += [f"  - `{_cell(c.path)}`: {_cell(c.shown(c.old))} → {_cell(c.shown(c.new))}" for c in changes]
                if len(changes) < len(r.changes):
                    lines.append(f"  - … {len(r.changes) - len(changes)} more")
            lines.append("")
        if not full and shown < len(diff.resources):
            lines += [f"… {len(diff.resources) - shown} more changes in the job summary.", ""]
        lines += ["</details>", ""]
    if diff.renamed:
        lines += [f"{len(diff.renamed)} resources renamed with an alias: no change in Azure.", ""]
    return lines


def _policies(env: _Environment) -> list[str]:
    lines: list[str] = []
    if env.diff and env.diff.policy:
        lines += ["| policy change | pack | policy | level | resource | detail |", "|---|---|---|---|---|---|"]
        for p in env.diff.policy:
            kind = {
                "introduced": "new violation",
                "resolved": "resolved",
                "level": "level changed",
                "waiver-added": "**new waiver**",
                "waiver-removed": "waiver removed",
            }[p.kind]
            lines.append(f"| {kind} | {p.pack} | `{p.policy}` | {p.level} | {_cell(p.resource)} | {_cell(p.detail)} |")
        lines.append("")
    if env.mandatory:
        lines += ["Mandatory violations at the head:", ""]
        lines += [f"- `{v['policy']}` on `{v['type']}` {v['name']}: {_cell(v['message'])}" for v in env.mandatory]
        lines.append("")
    expired = [w for w in env.review.get("waivers", []) if w.get("expired")]
    lines += [f"- **expired waiver** {w['pack']} `{w['policy']}` ({w['expires']})" for w in expired]
    return lines


def _unchanged(env: _Environment) -> bool:
    """Compared with its base and nothing differs: no resource, policy or capacity change, nothing
    to note, and it passes."""
    diff = env.diff
    return bool(
        diff is not None
        and not (diff.error or diff.notes or diff.resources or diff.renamed or diff.policy)
        and env.ok
        and env.passed
        and not env.capacity_change
    )


def _environment(env: _Environment, snapshot: Snapshot, full: bool, diagrams: bool, limit: int) -> list[str]:
    if not full and _unchanged(env):
        # One line in the comment; the job summary keeps the full picture.
        return [f"### ✅ {env.headline()}", ""]
    lines = [f"### {'✅' if env.passed else '❌'} {env.headline()}", ""]
    if not env.ok:
        lines += ["```", str((env.head or {}).get("error") or "").strip()[:4000], "```", ""]
        return lines
    if env.diff and env.diff.error:
        lines += [f"{'❌' if env.diff.blocking else '⚠'} No comparison: {env.diff.error[:2000]}", ""]
    if env.diff:
        lines += [f"Note: {note}" for note in env.diff.notes] + ([""] if env.diff.notes else [])
    if env.diff:
        lines += _changes(env.diff, full, limit, env.accept_findings)
    if env.removed:
        return lines
    review = env.review
    violations = review.get("violations", [])
    lines.append(
        f"**Policies:** {'pass' if review.get('passed') else 'fail'}: "
        f"{sum(1 for v in violations if v['level'] == 'mandatory')} mandatory, "
        f"{sum(1 for v in violations if v['level'] == 'advisory')} advisory, {len(review.get('waivers', []))} waivers  "
    )
    lines += _policies(env)
    lines += _capacity_lines(env, snapshot, full)
    if diagrams:
        status = {normal_urn(r.urn): r.action for r in (env.diff.resources if env.diff else [])}
        lines += [
            "<details><summary>Diagram</summary>",
            "",
            "```mermaid",
            env_diagram(env, status).rstrip(),
            "```",
            "",
            "</details>",
            "",
        ]
    return lines


def env_diagram(env: _Environment, status: Mapping[str, str]) -> str:
    head = [r for stack in (env.head or {}).get("stacks", {}).values() for r in stack.get("resources", [])]
    return mermaid(head + env.deleted, status)


def render(
    head: Side,
    base: Side | None,
    diffs: list[EnvironmentDiff] | None,
    notes: list[str] | None = None,
    snapshot: Snapshot | None = None,
    accept_findings: bool = False,
) -> Report:
    snapshot = snapshot or load_snapshot()
    by_name = {d.environment: d for d in diffs or []}
    names = list(head.document.get("environments", {}))
    names += [n for n in by_name if n not in names]
    environments = []
    for name in names:
        head_resources = head.resources(name)
        cap = capacity(head_resources)
        base_cap = capacity(base.resources(name)) if base else None
        env = _Environment(
            name,
            by_name.get(name),
            head.environment(name),
            cap,
            price(cap.items, snapshot),
            base_cap,
            price(base_cap.items, snapshot) if base_cap else None,
            accept_findings=accept_findings,
        )
        if base is not None and base_cap is not None:
            env.quota_lines = quota_changes(
                team_quotas(base.resources(name), base_cap), team_quotas(head_resources, cap)
            )
        if base and env.diff:
            deleted = {normal_urn(r.urn) for r in env.diff.resources if r.action == "delete"}
            env.deleted = [r for r in base.resources(name) if normal_urn(r["urn"]) in deleted]
        environments.append(env)
    passed = bool(environments) and all(e.passed for e in environments) and "error" not in head.document
    against = f" against base `{base.commit[:7]}`" if base and base.commit else ""
    title = (
        f"## Offline review of `{(head.commit or '')[:7]}`{against}: {'✅ passes' if passed else '❌ does not pass'}"
    )
    headline = "\n".join(f"- {'✅' if e.passed else '❌'} {e.headline()}" for e in environments)
    if "error" in head.document:
        headline += f"\n- ❌ the head's preview crashed: {str(head.document['error'])[-500:]}"
    if base and "error" in base.document:
        headline += f"\n- the base's preview crashed (no comparison): {str(base.document['error'])[-500:]}"
    intro = [title, "", headline, ""]
    footer = [f"<sub>{'; '.join(notes or [])}</sub>", ""]

    def body(full: bool, diagrams: bool, limit: int) -> str:
        lines = list(intro)
        for env in environments:
            lines += _environment(env, snapshot, full, diagrams, limit)
        return "\n".join(lines + footer)

    full_text = body(True, True, 0)
    comment = body(False, True, 60)
    for diagrams, limit in ((True, 20), (False, 20), (False, 5)):
        if len(comment) <= COMMENT_LIMIT:
            break
        comment = body(False, diagrams, limit)
    if len(comment) > COMMENT_LIMIT:
        comment = "\n".join(intro + ["The details exceed a comment; they are in the job summary.", ""] + footer)
    summary = {
        "passed": passed,
        "environments": {
            e.name: {
                "passed": e.passed,
                "headline": e.headline(),
                "counts": e.diff.counts() if e.diff else None,
                "findings": [f"{f.stack} {f.type} {f.name} {f.action}" for f in (e.diff.findings if e.diff else [])],
                "monthlyMax": round(e.priced.monthly_max, 2),
                "unpriced": len(e.priced.unpriced),
            }
            for e in environments
        },
    }
    return Report(title + "\n" + headline, comment, full_text, passed, summary)
