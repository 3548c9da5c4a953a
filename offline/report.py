"""The Markdown review of one or more stacks, for a pull request's job summary and comment.

Per stack: whether it previews and passes its mandatory policies, the violations by level (each
with pack, policy, resource and message), the waivers in force, the capacity summary, and the
resources to create by type.
"""

from __future__ import annotations

from dataclasses import dataclass

from offline.engine import Plan
from offline.policy import Review, Violation


@dataclass(frozen=True)
class StackReport:
    plan: Plan
    review: Review | None  # None when the stack did not preview (or its policy config is wrong)
    capacity: str | None
    problem: str | None = None
    # An environment previewed as units: each unit stack's resource count, in deploy order.
    units: dict[str, int] | None = None

    @property
    def passed(self) -> bool:
        return self.plan.ok and self.problem is None and self.review is not None and self.review.passed


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def _violations(title: str, violations: list[Violation]) -> list[str]:
    if not violations:
        return []
    lines = [f"#### {title} ({len(violations)})", "", "| pack | policy | resource | message |", "|---|---|---|---|"]
    for v in sorted(violations, key=lambda v: (v.pack, v.policy, v.resource_name)):
        detail = v.message.split("\n", 1)[-1]
        lines.append(
            f"| {v.pack}@v{v.version} | `{v.policy}` | `{v.resource_type}` {_cell(v.resource_name)} | {_cell(detail)} |"
        )
    return lines + [""]


def markdown(reports: list[StackReport]) -> str:
    lines = ["## Offline preview and policy review", ""]
    lines += ["| stack | result | resources | mandatory | advisory | waivers |", "|---|---|---|---|---|---|"]
    for report in reports:
        review = report.review
        result = "✅ pass" if report.passed else "❌ fail"
        lines.append(
            f"| {report.plan.stack} | {result} | {len(report.plan.resources)} | "
            f"{len(review.mandatory) if review else '–'} | {len(review.advisory) if review else '–'} | "
            f"{len(review.waivers) if review else '–'} |"
        )
    lines.append("")
    for report in reports:
        plan, review = report.plan, report.review
        lines += [f"### {plan.stack}", ""]
        if report.units:
            lines += ["Stacks, in deploy order: " + ", ".join(f"`{s}` ({n})" for s, n in report.units.items()), ""]
        if not plan.ok or report.problem:
            lines += ["```", (report.problem or plan.error or "").strip(), "```", ""]
            continue
        assert review is not None
        lines.append(f"**Enforcement:** {', '.join(f'`{c.source}`' for c in review.configs)}  ")
        if report.capacity:
            lines.append(f"**Capacity:** {report.capacity}  ")
        lines.append("")
        lines += _violations("Mandatory violations", review.mandatory)
        lines += _violations("Advisory violations", review.advisory)
        if review.waivers:
            lines += [
                "#### Waivers",
                "",
                "| pack | policy | level | approved by | expires | reason |",
                "|---|---|---|---|---|---|",
            ]
            for w in review.waivers:
                expires = f"**expired {w.expires}**" if w.expired(review.today) else str(w.expires or "–")
                lines.append(
                    f"| {w.pack} | `{w.policy}` | {w.level} | {_cell(w.approved_by)} | {expires} | {_cell(w.reason)} |"
                )
            lines.append("")
        lines += ["<details><summary>Resources by type</summary>", "", "| type | count |", "|---|---|"]
        lines += [f"| `{token}` | {count} |" for token, count in plan.counts_by_type().items()]
        lines += [f"| **total** | **{len(plan.resources)}** |", "", "</details>", ""]
    return "\n".join(lines)
