"""A new team onboarded to prod as its pull request would do it: edits of stacks/Pulumi.prod.yaml
(the text a person writes, comments and all), and the realistic mistakes made on the way.

tests/test_onboarding.py drives the CLI with them; docs/teams.md walks through the same steps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

TEAM = "vision"
WORKLOAD = "vision-trainer"
TOPIC = "vision-metrics"
GROUP = "3f6e9a1b-2c4d-4e5f-8a7b-9c0d1e2f3a4b"

# (what the step does, old text of prod's stack file, new text)
Edit = tuple[str, str, str]

TEAM_ENTRY = f"""    {TEAM}:
      entraGroupObjectIds: [{GROUP}]
      namespaces: [{TEAM}]
      # Multi-node InfiniBand training: pods may add IPC_LOCK here (docs/gpus.md).
      trainingNamespaces: [{TEAM}]
"""

STEPS: tuple[Edit, ...] = (
    ("the team: its Entra ID group and namespace", "  platform:teams:\n", "  platform:teams:\n" + TEAM_ENTRY),
    (
        "its GPUs: 400 of eus2's H100s, lent by research (docs/gpus.md, \"Quotas\")",
        "          quotas:\n            research: 1600\n            inference: 400\n",
        f"          quotas:\n            research: 1200\n            inference: 400\n            {TEAM}: 400\n",
    ),
    (
        "its workload identity: checkpoints written to the weights account, datasets read to stage on Lustre",
        "  platform:workloads:\n",
        f"""  platform:workloads:
    {WORKLOAD}:
      team: {TEAM}
      namespace: {TEAM}
      serviceAccount: {WORKLOAD}
      storage:
        weights: {{models: read, checkpoints: write}}
        datasets: {{curated: read}}
""",
    ),
    (
        "its Kafka topic",
        "      # The latest state of every model version",
        f"""      # Step metrics of the vision team's training jobs.
      - name: {TOPIC}
        partitions: 12
        retentionHours: 168
      # The latest state of every model version""",
    ),
    (
        "its Kafka client: the workload may write the topic",
        "    clients:\n",
        f"    clients:\n      {WORKLOAD}:\n        topics: {{{TOPIC}: write}}\n",
    ),
)


def onboarded(text: str, steps: tuple[Edit, ...] = STEPS) -> str:
    for what, old, new in steps:
        assert text.count(old) == 1, f"{what}: {old!r} is not once in prod's stack file"
        text = text.replace(old, new)
    return text


# A mistake: (what a person got wrong, a change of the onboarded file, the key the first problem
# must name, words of its fix).
Mistake = tuple[str, Callable[[str], str], str, str]


def _replace(old: str, new: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        assert text.count(old) == 1, old
        return text.replace(old, new)

    return change


MISTAKES: tuple[Mistake, ...] = (
    (
        "the quota added without lending: research keeps 1600",
        _replace("            research: 1200\n", "            research: 1600\n"),
        "platform:clusters.eus2.gpuPools.h100.quotas",
        "more for a team takes a bigger pool",
    ),
    (
        "`namespace` for `namespaces` in the team",
        _replace(f"      namespaces: [{TEAM}]\n      # Multi-node", f"      namespace: [{TEAM}]\n      # Multi-node"),
        f"platform:teams.{TEAM}.namespace",
        "did you mean namespaces",
    ),
    (
        "the quota under a misspelt team",
        _replace(f"            {TEAM}: 400\n", "            visoin: 400\n"),
        "platform:clusters.eus2.gpuPools.h100.quotas.visoin",
        f"did you mean {TEAM}?",
    ),
    (
        "the client given a topic that is not declared",
        _replace(f"topics: {{{TOPIC}: write}}", "topics: {vision-metric: write}"),
        f"platform:kafka.clients.{WORKLOAD}.topics.vision-metric",
        f"did you mean {TOPIC}?",
    ),
    (
        "the team pasted twice",
        lambda text: text.replace("  platform:teams:\n", "  platform:teams:\n" + TEAM_ENTRY, 1),
        # Both copies' lines, filled in by the test from the file as written.
        f"stacks/Pulumi.prod.yaml:{{second}}: platform:teams.{TEAM} is already set at line {{first}}",
        "keep one",
    ),
)


def write_prod(project: Path, text: str) -> None:
    (project / "stacks" / "Pulumi.prod.yaml").write_text(text)
