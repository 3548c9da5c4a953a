"""Jobs that fail over between regions: MultiKueue."""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from stackconfig.model.base import (
    Model,
    ShortName,
    Uuid,
)


class JobsConfig(Model):
    """Jobs that fail over between regions: Kueue's MultiKueue (docs/resilience.md, "Jobs").

    A team submits a job for one region to that cluster's `gpu` queue, or for any region to a
    dispatcher's `any-region` queue: the dispatcher copies it to every worker and the first to
    admit it runs it. With a dispatcher per region, a region's loss leaves one to submit to.
    """

    dispatchers: list[ShortName] = Field(
        default_factory=list,
        description="The dispatch clusters (`role: dispatch`), ideally one per region. Empty: no MultiKueue, "
        "every job runs where it is submitted.",
    )
    workers: Optional[list[ShortName]] = Field(
        default=None,
        description="The clusters the dispatchers hand jobs to (1-20, with GPU pools and a VNet-integrated API "
        "server). Unset: every workloads cluster with GPU pools.",
    )
    worker_role_id: Optional[Uuid] = Field(
        default=None,
        description="Name (GUID) of the custom role \"Platform MultiKueue worker (<prefix>-<env>)\" the delivery "
        "project creates (its output `workerRoleIds`): the program assigns it to the dispatchers' identity on each "
        "worker's team job namespaces, where "
        "MultiKueue creates the jobs it hands over (required with `dispatchers`). The dispatchers sign in with "
        "that identity, whose Entra ID token a job on each dispatcher renews (docs/resilience.md, \"Jobs\").",
    )
