"""The cluster's PriorityClasses: who keeps running when nodes are short.

- `platform-critical`: the platform's own controllers and Kafka; workloads never preempt them.
- `training`: gang-scheduled training jobs; they preempt batch work to start.
- `batch-preemptible`: best-effort batch; it preempts nothing and is the first to go.

Values stay below the system classes (2,000,000,000 and up) that only kube-system uses, and
no class is the global default: a pod without one keeps priority 0, below training and
above nothing it could starve.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Priority:
    name: str
    value: int
    description: str
    preempts: bool = True

    @property
    def preemption_policy(self) -> str:
        return "PreemptLowerPriority" if self.preempts else "Never"


PLATFORM_CRITICAL = Priority(
    "platform-critical", 1_000_000, "The platform's controllers and Kafka: never preempted by workloads."
)
TRAINING = Priority("training", 10_000, "Training jobs: may preempt batch work to start.")
BATCH_PREEMPTIBLE = Priority(
    "batch-preemptible", -10, "Best-effort batch: preempts nothing, preempted first.", preempts=False
)
PRIORITIES = (PLATFORM_CRITICAL, TRAINING, BATCH_PREEMPTIBLE)
# What team pods may name (an admission policy holds them to it).
WORKLOAD_PRIORITIES = (TRAINING.name, BATCH_PREEMPTIBLE.name)
