#!/usr/bin/env python3
"""Before an environment's first deploy: read-only checks of the real tenant and GitHub, each
missing or wrong thing printed with its fix (docs/operations.md, "make doctor").

    python scripts/doctor.py --stack prod [--delivery-stack acme] [--no-github]

It reads the environment's stack file (stacks/Pulumi.<stack>.yaml) and the delivery stack that
grants it (delivery/stacks/, the one whose `delivery:environments` lists the stack), works out
what must exist with the project's own plans (planning/doctor/), and asks Azure (`az account
show`, `az rest --method get`, `az vm list-usage`) and GitHub (`gh auth status`, `gh api
--method GET`) whether it does. It never changes anything: those are the only commands it runs.
Checks: credentials; the subscriptions and their providers and features; the hub's zones, links
and monitor scope; vCPU quota per family at the plan's peak; the delivery's state, keys,
identities and federated credentials; GitHub's environments, ruleset and runner groups.

Exit 0 when nothing is missing, 1 when something is (each with its fix), 2 on usage or config
errors, 4 when az or gh is missing or not signed in (nothing else is checked then).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from components.delivery.github import GITHUB_ACTIONS_APP_ID, UP_WORKFLOW  # noqa: E402
from components.delivery.program import delivery_names, delivery_of, environment_access  # noqa: E402
from components.platform.context import private_dns_zones  # noqa: E402
from planning.delivery import environment_delivery  # noqa: E402
from planning.doctor import Answer, Finding, Status  # noqa: E402
from planning.doctor import azure as azure_checks  # noqa: E402
from planning.doctor import github as github_checks  # noqa: E402
from planning.doctor import quota as quota_checks  # noqa: E402
from planning.layers import UNIT_SEPARATOR  # noqa: E402
from validation.loader import ConfigError, parse_platform_config  # noqa: E402
from validation.stackfile import available_stacks, read_stack_config  # noqa: E402

DELIVERY = ROOT / "delivery"
EXIT_READY, EXIT_MISSING, EXIT_USAGE, EXIT_NO_CREDENTIALS = 0, 1, 2, 4
CHECKS = ("subscriptions", "providers", "hub", "quota", "delivery", "github")


@dataclass(frozen=True)
class Expectations:
    stack: str
    delivery_stack: str
    azure: azure_checks.AzureExpectations
    quota: list[quota_checks.QuotaNeed]
    github: github_checks.GitHubExpectations


def load(stack: str, wanted_delivery: str | None = None) -> Expectations:
    """What the environment of one stack file needs, from the project's own plans."""
    platform = parse_platform_config(read_stack_config(ROOT, stack).values, stack=stack)
    delivery_stack, delivery = delivery_of(stack, platform.environment, wanted_delivery)
    names = delivery_names(delivery)
    access = environment_access(delivery)[platform.environment]
    azure = azure_checks.azure_expectations(
        stack=stack,
        delivery_stack=delivery_stack,
        platform=platform,
        delivery=delivery,
        names=names,
        identities=environment_delivery(names, access).identities,
        zones=private_dns_zones(platform),
        unit_group_ids=[access.group_id(name) for _, name, _ in access.resource_groups],
    )
    github = github_checks.github_expectations(
        delivery, platform.environment, delivery_stack, up_workflow=UP_WORKFLOW, actions_app_id=GITHUB_ACTIONS_APP_ID
    )
    quota = quota_checks.quota_needs(platform, delivery.environments[platform.environment].subscription_id)
    return Expectations(stack, delivery_stack, azure, quota, github)


def _status(stderr: str, tool: str) -> Status:
    if tool == "gh":
        if re.search(r"\(HTTP 40[13]\)", stderr):
            return "denied"
        return "missing" if "(HTTP 404)" in stderr else "error"
    if re.search(r"AuthorizationFailed|Forbidden|Unauthorized|\b40[13]\b", stderr):
        return "denied"
    if re.search(r"NotFound|Not Found|was not found|could not be found|\b404\b", stderr):
        return "missing"
    return "error"


def _message(stderr: str) -> str:
    lines = [line.strip().removeprefix("ERROR: ") for line in stderr.splitlines() if line.strip()]
    return (lines[0] if lines else "no output")[:300]


class Cli:
    """The doctor's only way out: `az` and `gh`, read-only commands alone."""

    def __init__(self, run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run):
        self._run = run

    def call(self, command: list[str]) -> subprocess.CompletedProcess[str] | None:
        """None: the tool is not installed."""
        try:
            return self._run(command, capture_output=True, text=True, check=False, timeout=300)
        except FileNotFoundError:
            return None
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(command, 1, "", f"{command[0]}: no answer in 300 s")

    def _json(self, command: list[str]) -> Answer:
        result = self.call(command)
        if result is None:
            return Answer(status="error", message=f"{command[0]} is not installed")
        if result.returncode != 0:
            return Answer(status=_status(result.stderr, command[0]), message=_message(result.stderr))
        try:
            return Answer(json.loads(result.stdout or "null"))
        except json.JSONDecodeError:
            return Answer(status="error", message=f"not JSON: {result.stdout[:200]!r}")

    def arm(self, path: str) -> Answer:
        """An ARM GET; a list's later pages (nextLink) joined into its `value`."""
        found = self._json(["az", "rest", "--method", "get", "--url", path, "--output", "json"])
        pages = 0
        while found.ok and isinstance(found.body, dict) and found.body.get("nextLink") and pages < 50:
            following = self._json(
                ["az", "rest", "--method", "get", "--url", found.body["nextLink"], "--output", "json"]
            )
            if not following.ok or not isinstance(following.body, dict):
                return following
            body = {**following.body, "value": [*found.body.get("value", []), *following.body.get("value", [])]}
            found, pages = Answer(body), pages + 1
        return found

    def usage(self, subscription: str, region: str) -> Answer:
        command = ["az", "vm", "list-usage", "--location", region, "--subscription", subscription, "--output", "json"]
        return self._json(command)

    def gh(self, path: str) -> Answer:
        return self._json(["gh", "api", "--method", "GET", "-H", "X-GitHub-Api-Version: 2022-11-28", path])

    def credentials(self, github: bool) -> tuple[list[Finding], list[str]]:
        """Problems signing in (each with how to sign in), and who is signed in where."""
        problems, who = [], []
        account = self._json(["az", "account", "show", "--output", "json"])
        if account.ok and isinstance(account.body, dict):
            user = (account.body.get("user") or {}).get("name", "someone")
            who.append(f"Azure as {user} (tenant {account.body.get('tenantId', '?')})")
        elif "not installed" in account.message:
            problems.append(
                Finding(
                    "credentials",
                    "the Azure CLI (az) is not installed",
                    "install it (https://learn.microsoft.com/cli/azure/install-azure-cli), then `az login`",
                )
            )
        else:
            problems.append(
                Finding(
                    "credentials",
                    f"the Azure CLI is not signed in ({account.message})",
                    "`az login` (or `az login --tenant <tenant-id>`) as someone who may read the environment's, the "
                    "hub's and the delivery's subscriptions",
                )
            )
        if github:
            status = self.call(["gh", "auth", "status", "--hostname", "github.com"])
            if status is None:
                problems.append(
                    Finding(
                        "credentials",
                        "the GitHub CLI (gh) is not installed",
                        "install it (https://cli.github.com), then `gh auth login --scopes admin:org`; or pass --no-github",
                    )
                )
            elif status.returncode != 0:
                problems.append(
                    Finding(
                        "credentials",
                        f"the GitHub CLI is not signed in to github.com ({_message(status.stderr or status.stdout)})",
                        "`gh auth login --hostname github.com --scopes admin:org` (runner groups need admin:org; or "
                        "GH_TOKEN set to a token that reads the repository's and organization's administration); "
                        "or pass --no-github",
                    )
                )
            else:
                who.append("GitHub (gh)")
        return problems, who


def _gather(reads: Iterable[Any], ask: Callable[[Any], Answer], workers: int) -> dict[Any, Answer]:
    reads = list(dict.fromkeys(reads))
    with ThreadPoolExecutor(max_workers=max(workers, 1)) as pool:
        return dict(zip(reads, pool.map(ask, reads), strict=True))


def run_checks(
    expect: Expectations, cli: Cli, github: bool = True, workers: int = 8
) -> tuple[dict[str, list[Finding]], list[quota_checks.QuotaRow]]:
    """Every check's findings (by check), and the quota rows to print."""
    arm = _gather(azure_checks.arm_reads(expect.azure), cli.arm, workers)
    usages = {
        quota_checks.usage_key(sub, region): found
        for (sub, region), found in _gather(
            quota_checks.usage_reads(expect.quota), lambda pair: cli.usage(*pair), workers
        ).items()
    }
    found: dict[str, list[Finding]] = {
        "subscriptions": azure_checks.check_subscriptions(expect.azure, arm),
        "providers": azure_checks.check_providers(expect.azure, arm),
        "hub": azure_checks.check_hub(expect.azure, arm),
        "quota": quota_checks.check_quota(expect.quota, usages, expect.stack),
        "delivery": azure_checks.check_delivery(expect.azure, arm),
    }
    if github:
        answers = _gather(github_checks.github_reads(expect.github), cli.gh, workers)
        answers |= _gather(github_checks.github_followups(expect.github, answers), cli.gh, workers)
        found["github"] = [
            *github_checks.check_subject(expect.github, answers),
            *github_checks.check_environments(expect.github, answers),
            *github_checks.check_ruleset(expect.github, answers),
            *github_checks.check_runner_groups(expect.github, answers),
        ]
    return found, quota_checks.quota_rows(expect.quota, usages)


def _quota_table(rows: list[quota_checks.QuotaRow]) -> list[str]:
    def number(value: int | None) -> str:
        return "-" if value is None else f"{value:,}"

    lines = ["quota at the plan's peak (max count plus upgrade surge):"]
    lines.append(f"  {'region':<16} {'quota':<44} {'needed':>9} {'limit':>9} {'in use':>9}  ")
    for row in rows:
        mark = "short" if row.short else "ok"
        lines.append(
            f"  {row.need.region:<16} {row.need.label:<44} {row.need.vcpus:>9,} {number(row.limit):>9} "
            f"{number(row.in_use):>9}  {mark}"
        )
    return lines


def report(
    expect: Expectations, found: Mapping[str, list[Finding]], rows: list[quota_checks.QuotaRow], who: list[str]
) -> str:
    github = expect.github
    lines = [
        f"doctor: {expect.azure.environment} (stacks/Pulumi.{expect.stack}.yaml), delivery stack "
        f"{expect.delivery_stack} (delivery/stacks/Pulumi.{expect.delivery_stack}.yaml), repository "
        f"{github.owner}/{github.repository}",
        f"signed in: {', '.join(who)}",
        "",
        *_quota_table(rows),
        "",
    ]
    for check in CHECKS:
        if check not in found:
            lines.append(f"{check:<14} not checked (--no-github)")
            continue
        findings = found[check]
        note = ""
        if check == "hub" and expect.azure.hub_vnet_id is None:
            note = " (no hub in the stack file)"
        elif check == "github" and not github.configured:
            note = " (no delivery:github: reviewers, ruleset and runner groups not checked)"
        lines.append(f"{check:<14} {f'{len(findings)} missing' if findings else 'ok'}{note}")
        for finding in findings:
            lines += [f"  - {finding.what}", f"    fix: {finding.fix}"]
    total = sum(len(findings) for findings in found.values())
    again = f"`make doctor STACK={expect.stack}`"
    lines += [
        "",
        f"not ready: {total} thing{'s' if total != 1 else ''} missing; fix them, then run {again} again"
        if total
        else f"ready: nothing missing for a first deploy of {expect.stack}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None, cli: Cli | None = None) -> int:
    stacks = [stack for stack in available_stacks(ROOT) if UNIT_SEPARATOR not in stack]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--stack", "-s", default="dev", choices=stacks, help="the environment's stack file (default dev)"
    )
    parser.add_argument(
        "--delivery-stack",
        choices=available_stacks(DELIVERY),
        help="the delivery stack that grants it (default: found)",
    )
    parser.add_argument("--no-github", action="store_true", help="check Azure only")
    parser.add_argument("--workers", type=int, default=8, help="calls at once (default 8)")
    args = parser.parse_args(argv)
    try:
        expect = load(args.stack, args.delivery_stack)
    except (ConfigError, LookupError) as error:
        print(f"doctor: {error}", file=sys.stderr)
        return EXIT_USAGE
    cli = cli or Cli()
    problems, who = cli.credentials(github=not args.no_github)
    if problems:
        print("doctor: cannot check anything without signing in:", file=sys.stderr)
        for problem in problems:
            print(f"  - {problem.what}\n    fix: {problem.fix}", file=sys.stderr)
        return EXIT_NO_CREDENTIALS
    found, rows = run_checks(expect, cli, github=not args.no_github, workers=args.workers)
    print(report(expect, found, rows, who))
    return EXIT_MISSING if any(found.values()) else EXIT_READY


if __name__ == "__main__":
    sys.exit(main())
