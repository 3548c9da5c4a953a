"""Azure Kubernetes Fleet Manager: one upgrade owner for an environment's clusters.

Clusters of a multi-cluster environment join one fleet (hubless: it orchestrates updates and
runs no workloads). An update strategy upgrades the canary clusters first and soaks before
the others; an auto-upgrade profile starts those runs when AKS ships a new version. The
members' own upgrade channel is off (see AksClusterArgs.upgrade_channel), so AKS and the
fleet never race to upgrade the same cluster.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import containerservice as aks

from components.groups import resource_group
from planning.naming import Naming
from stackconfig.model import FleetConfig

CANARY_GROUP = "canary"
REST_GROUP = "rest"


@dataclass(frozen=True)
class FleetMemberSpec:
    key: str
    cluster_id: pulumi.Input[str]


@dataclass(frozen=True)
class FleetArgs:
    naming: Naming
    region: str
    settings: FleetConfig
    members: list[FleetMemberSpec]
    tags: dict[str, str] = field(default_factory=dict)
    # The unit creates its resource groups (platform:resourceGroups: program), or uses the delivery's.
    create_groups: bool = False


def update_groups(cluster_keys: list[str], canaries: list[str]) -> dict[str, str]:
    """Each cluster's update group: the canaries (default: the first cluster) go first."""
    chosen = set(canaries or cluster_keys[:1])
    return {key: CANARY_GROUP if key in chosen else REST_GROUP for key in cluster_keys}


class KubernetesFleet(pulumi.ComponentResource):
    fleet_id: pulumi.Output[str]

    def __init__(self, name: str, args: FleetArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:fleet:Fleet", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        naming, settings = args.naming, args.settings

        group = resource_group(
            name, naming.name("rg", "fleet"), args.region, args.tags, parent=self, create=args.create_groups
        )
        fleet = aks.Fleet(
            f"{name}-fleet",
            fleet_name=naming.name("fleet"),
            resource_group_name=group.name,
            location=args.region,
            tags=args.tags,
            opts=child,
        )
        groups = update_groups([m.key for m in args.members], settings.canary_clusters)
        members = [
            aks.FleetMember(
                f"{name}-member-{member.key}",
                fleet_member_name=member.key,
                fleet_name=fleet.name,
                resource_group_name=group.name,
                cluster_resource_id=member.cluster_id,
                group=groups[member.key],
                opts=child,
            )
            for member in args.members
        ]
        strategy = aks.FleetUpdateStrategy(
            f"{name}-strategy",
            update_strategy_name="canary-first",
            fleet_name=fleet.name,
            resource_group_name=group.name,
            strategy=aks.UpdateRunStrategyArgs(
                stages=[
                    aks.UpdateStageArgs(
                        name="canary",
                        groups=[aks.UpdateGroupArgs(name=CANARY_GROUP)],
                        after_stage_wait_in_seconds=settings.soak_hours * 3600,
                    ),
                    aks.UpdateStageArgs(name="rest", groups=[aks.UpdateGroupArgs(name=REST_GROUP)]),
                ]
            ),
            # A stage that names a group no member is in fails the update run.
            opts=pulumi.ResourceOptions(parent=self, depends_on=members),
        )
        aks.AutoUpgradeProfile(
            f"{name}-auto-upgrade",
            auto_upgrade_profile_name="kubernetes",
            fleet_name=fleet.name,
            resource_group_name=group.name,
            # The Fleet API spells channels capitalized (Stable, Rapid); the SDK's shared
            # UpgradeChannel enum only lists the managed cluster's lowercase ones.
            channel=settings.upgrade_channel,
            update_strategy_id=strategy.id,
            node_image_selection=aks.AutoUpgradeNodeImageSelectionArgs(
                type=aks.AutoUpgradeNodeImageSelectionType(settings.node_image_selection)
            ),
            disabled=False,
            opts=child,
        )
        self.fleet_id = fleet.id
        self.register_outputs({"fleetId": fleet.id})
