"""What happens to each platform service when a zone or a region of a multi-region stack fails.

The failure table is data: the README's "Regional failure" section is generated from it, and
tests/test_resilience.py checks its claims against the plan (where each dependency of a cluster's
workloads actually lives). A claim the plan contradicts fails a named test, so the table cannot
drift from what `pulumi up` builds.

Scenarios, for a stack whose first cluster's region is the primary (environment-wide resources
live there):
- `zone`: one availability zone of a region is lost;
- `primary`: the primary region is lost; the cells say what the *other* regions' clusters keep;
- `secondary`: another region is lost; the cells say what the primary's clusters keep.

Each cell: `keeps` (works as before), `degrades` (works with less capacity or without a
feature), `lost` (stops until the region returns or a person acts), with the RPO (data
acknowledged before the failure that may be lost) and the RTO (time until the surviving side
works again) and why.

Imports nothing else from the project.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["keeps", "degrades", "lost"]
Scenario = Literal["zone", "primary", "secondary"]
SCENARIOS: tuple[Scenario, ...] = ("zone", "primary", "secondary")


@dataclass(frozen=True)
class Cell:
    status: Status
    rpo: str
    rto: str
    why: str


@dataclass(frozen=True)
class Row:
    service: str
    # The private endpoint sub-resources (group IDs) through which workloads reach it, if any:
    # the tests locate them in the plan.
    group_ids: tuple[str, ...]
    cells: dict[Scenario, Cell]


def _keeps(why: str) -> Cell:
    return Cell("keeps", "0", "0", why)


FAILURE_TABLE: tuple[Row, ...] = (
    Row(
        "AKS clusters and node pools",
        (),
        {
            "zone": Cell(
                "degrades",
                "0",
                "minutes (the autoscaler adds nodes in the other zones)",
                "clusters and pools span three zones; InfiniBand pools sit in one zone and lose it",
            ),
            "primary": _keeps("each region's clusters have their own control plane, VNet and egress"),
            "secondary": _keeps("each region's clusters have their own control plane, VNet and egress"),
        },
    ),
    Row(
        "Storage (weights, datasets, checkpoints, Flink state)",
        ("blob", "dfs"),
        {
            "zone": _keeps("zone-redundant accounts (ZRS, GZRS) keep three copies across zones"),
            "primary": Cell(
                "degrades",
                "object replication (weights, checkpoints): what it had not copied yet, asynchronous with no "
                "SLA; geo failover (datasets, Flink state): under 15 minutes, not guaranteed",
                "reads of replicated accounts: 0, the other region reads its replica; writes there and the "
                "failed-over accounts: about an hour after a person acts (the runbook)",
                "flat accounts with `objectReplication` have a replica in the other region, which its clusters "
                "read through their own endpoints and which is read-only until a person ends the replication; "
                "Data Lake accounts with `geoFailover` are geo-zone-redundant and come back in the paired "
                "region, reached through the surviving region's endpoints, which follow the account",
            ),
            "secondary": _keeps(
                "the accounts are in the primary region with endpoints there; the lost region held replicas only"
            ),
        },
    ),
    Row(
        "Key Vault (secrets, customer-managed keys)",
        ("vault",),
        {
            "zone": _keeps("Key Vault is zone-redundant where the region has zones"),
            "primary": Cell(
                "keeps",
                "secrets written only to the lost region's vault",
                "0",
                "each region has its own vault, its clusters are told to use it and its accounts encrypt with "
                "its key; the platform grants the same readers and writers on every vault, and whoever writes a "
                "secret writes it to each (Microsoft replicates a vault only to its paired region, not to the "
                "platform's other region)",
            ),
            "secondary": _keeps("the primary's vault, endpoints and keys are its own"),
        },
    ),
    Row(
        "Container registry (image pulls)",
        ("registry",),
        {
            "zone": _keeps("zone-redundant registry and replicas"),
            "primary": Cell(
                "degrades",
                "images pushed within the replication lag (typically under 15 minutes)",
                "1-2 minutes (Traffic Manager moves the data plane to the region's replica)",
                "each region reaches its own replica through its own endpoint; with the home region "
                "down pulls and pushes continue, configuration changes (cache rules, replicas) do not; "
                "that the private global endpoint follows is Microsoft's documented behaviour, unverified here",
            ),
            "secondary": _keeps("the primary's replica and endpoint serve the primary's clusters"),
        },
    ),
    Row(
        "Event Hubs (where it is the Kafka engine)",
        ("namespace",),
        {
            "zone": _keeps("Premium and Dedicated namespaces are zone-redundant where the region has zones"),
            "primary": Cell(
                "lost",
                "events not yet consumed, if the region does not return",
                "until the primary region returns",
                "one namespace in the primary region: geo-disaster recovery copies metadata only, and "
                "geo-replication (Premium, Dedicated) is not built here; multi-region stacks run Strimzi",
            ),
            "secondary": _keeps("the namespace and its endpoints are in the primary region"),
        },
    ),
    Row(
        "Cosmos DB (one account, the platform's regions, writes in the primary)",
        ("Sql",),
        {
            "zone": _keeps("zone redundant in every region (`zoneRedundant`, the default)"),
            "primary": Cell(
                "degrades",
                # Session consistency, one write region, two or more regions (prod's shape; the
                # test holds it to Azure's table for prod's config).
                "under 15 minutes",
                "reads: 0, from the surviving region's replica; writes: until Azure's service-managed failover "
                "promotes the next region, as long as Microsoft takes to declare the outage (Azure publishes no "
                "RTO; partial outages have taken an hour or more)",
                "the account replicates to every region with clusters, each reached through its own endpoint; "
                "automatic failover promotes the next region in `regions`, and clients follow on their own",
            ),
            "secondary": _keeps("writes are in the primary; the lost region held a read replica"),
        },
    ),
    Row(
        "PostgreSQL (one server in the primary region)",
        ("postgresqlServer",),
        {
            "zone": Cell(
                "degrades",
                "0 (a synchronous standby)",
                "under 120 seconds while the standby in another zone takes over",
                "zone-redundant high availability; clients reconnect to the same host name",
            ),
            "primary": Cell(
                "lost",
                "under an hour (the latest backup copied to the paired region)",
                "a person geo-restores the server into the paired region (Azure publishes no RTO for it: "
                "\"varies\"), connects it to the surviving region's network and points clients at it",
                "geo-redundant backup copies the backups to the paired region, not a running server; "
                "read replicas in another region are not built here",
            ),
            "secondary": _keeps("the server and its endpoint are in the primary region"),
        },
    ),
    Row(
        "Managed Lustre (training data, one file system per GPU region)",
        (),
        {
            "zone": Cell(
                "lost",
                "0 (the data is reloaded from Blob, where it lives)",
                "until the zone returns: a file system lives in one zone, with its region's InfiniBand pools",
                "Managed Lustre is zonal; the training pools that read it sit in its zone, so the zone's loss "
                "stops both, and jobs requeued elsewhere read Blob or another region's file system",
            ),
            "primary": Cell(
                "degrades",
                "0 (the data is reloaded from Blob)",
                "0 for the other regions' jobs, which read their own region's file system",
                "each region with GPU training clusters has its own file system; the lost region's is gone "
                "with its jobs",
            ),
            "secondary": Cell(
                "degrades",
                "0 (the data is reloaded from Blob)",
                "0 for the primary's jobs",
                "as for the primary: each region reads its own file system",
            ),
        },
    ),
    Row(
        "Kafka (Strimzi, one per cluster, MirrorMaker 2 between them)",
        (),
        {
            "zone": _keeps("brokers spread over three zones with rack awareness, min.insync.replicas 2"),
            "primary": Cell(
                "degrades",
                "the mirror's lag (records not yet copied to the surviving cluster)",
                "a client's reconnect to its own cluster's Kafka",
                "each cluster's clients use their own Kafka and read the others' topics as copies; a "
                "client pinned to the lost region restarts where `failoverClusters` says, with its "
                "offsets synced onto the copies (at-least-once)",
            ),
            "secondary": Cell(
                "degrades",
                "the mirror's lag (records not yet copied to the surviving cluster)",
                "a client's reconnect to its own cluster's Kafka",
                "each cluster's clients use their own Kafka; the lost region's topics survive as mirrored copies",
            ),
        },
    ),
    Row(
        "Training and batch jobs",
        (),
        {
            "zone": Cell(
                "degrades",
                "work since the job's last checkpoint",
                "the job's restart (Kueue requeues it)",
                "a job on lost nodes fails and is requeued onto the remaining capacity",
            ),
            "primary": Cell(
                "degrades",
                "work since each job's last checkpoint in the lost region",
                "0 for new jobs sent to the surviving dispatcher; 15 minutes for a job the surviving dispatcher "
                "had sent to the lost region (MultiKueue's workerLostTimeout, then it is requeued on a worker "
                "that remains); a job waiting on the lost dispatcher waits for it, or is submitted again",
                "each region has a MultiKueue dispatcher that hands \"any region\" jobs to every GPU cluster; "
                "jobs for \"this region\" stay where they were sent; a requeued job resumes from the newest "
                "of what its namespace's `platform-storage` ConfigMap lists in its region (the replica's "
                "copy of the primary's checkpoints, and the replica's writable `checkpoints-<region>`, "
                "`writtenInEveryRegion`) and writes its next ones to the latter at once; nothing "
                "replicates those back: a job placed in the primary region later reads them through "
                "the replica's endpoint there, and, while that region is down, resumes from the "
                "primary's newest",
            ),
            "secondary": Cell(
                "degrades",
                "work since each job's last checkpoint in the lost region",
                "as for the primary",
                "as for the primary: the primary's dispatcher keeps dispatching to the primary's clusters",
            ),
        },
    ),
    Row(
        "Monitoring (Log Analytics, managed Prometheus)",
        (),
        {
            "zone": _keeps("the workspaces are regional services"),
            "primary": Cell(
                "degrades",
                "the lost region's logs and metrics not yet ingested",
                "0 for the surviving region; queries across regions wait for the lost one",
                "each region with clusters has its own Log Analytics and Azure Monitor workspaces, which its "
                "clusters, firewall, vault and replicas report to; what the lost region stored is unreadable "
                "until it returns (neither workspace is replicated here)",
            ),
            "secondary": Cell(
                "degrades",
                "the lost region's logs and metrics not yet ingested",
                "0 for the primary region",
                "the primary's clusters and the data plane report to the primary's workspaces",
            ),
        },
    ),
    Row(
        "Private DNS and egress",
        (),
        {
            "zone": _keeps("private DNS is global; each region's firewall spans three zones"),
            "primary": _keeps(
                "private DNS zones are global and each region resolves through a zone set of its own; "
                "each region leaves through its own firewall"
            ),
            "secondary": _keeps("the primary's zones and firewall are its own"),
        },
    ),
    Row(
        "Deploy path (state, secrets provider, runners)",
        (),
        {
            "zone": _keeps("the state account is geo-zone-redundant and the vault zone-redundant"),
            "primary": Cell(
                "degrades",
                "0 (the state is written before a deploy returns; a deploy cut off mid-run needs `pulumi refresh`)",
                "about an hour for the state account's failover, hours for Microsoft's failover of "
                "the secrets vault; until then no preview or deploy of the environment",
                "one state account and one secrets vault, in the delivery region; the surviving "
                "region's runners deploy its cluster units and the tenants unit once both are back",
            ),
            "secondary": _keeps("the state and secrets live in the delivery region (the primary's)"),
        },
    ),
    Row(
        "Identity (Entra ID, workload identity)",
        (),
        {
            "zone": _keeps("Entra ID is a global service; each cluster serves its own OIDC issuer"),
            "primary": _keeps("Entra ID is global; each cluster's OIDC issuer is its own"),
            "secondary": _keeps("Entra ID is global; each cluster's OIDC issuer is its own"),
        },
    ),
)


def row(service_prefix: str) -> Row:
    (found,) = [r for r in FAILURE_TABLE if r.service.startswith(service_prefix)]
    return found
