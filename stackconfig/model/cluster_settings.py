"""A cluster's settings: its subnets, API server, maintenance and upgrades, autoscaler profile."""

from __future__ import annotations

from ipaddress import IPv4Network
from typing import Annotated, Literal, Optional

from pydantic import Field, StringConstraints

from stackconfig.model.base import (
    Duration,
    Model,
)


class ClusterSubnets(Model):
    system: IPv4Network = Field(description="Subnet of the system pool.")
    nodes: IPv4Network = Field(description="Subnet of every user pool: holds the pools' max + surge + 5.")
    api_server: Optional[IPv4Network] = Field(
        default=None,
        description="Subnet delegated to `Microsoft.ContainerService/managedClusters` for API server VNet "
        "integration, /28 or larger; required with `apiServer.vnetIntegration`.",
    )
    pods: Optional[IPv4Network] = Field(
        default=None,
        description="Classic Azure CNI only (`cni: podSubnet`): the pods' subnet, holding (max + surge) × "
        "maxPods of every pool + 5.",
    )


class ApiServerConfig(Model):
    private: bool = Field(
        default=True,
        description="Private API server, resolved through the `privatelink.<region>.azmk8s.io` zone (the "
        "environment's own, linked to the hub, or the hub's).",
    )
    vnet_integration: bool = Field(default=True, description="API server in a delegated subnet (`subnets.apiServer`).")
    authorized_ip_ranges: list[IPv4Network] = Field(
        default_factory=list,
        description="Public API server only, and then required: the source ranges allowed to reach it, each "
        "/8 or narrower.",
    )


class MaintenanceWindowConfig(Model):
    day_of_week: Literal["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"] = Field(
        default="Sunday", description="Day of the weekly window."
    )
    start_time: Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")] = Field(
        default="02:00", description="Start of the window, `HH:MM`."
    )
    duration_hours: int = Field(default=4, ge=4, le=24, description="Length of the window.")
    utc_offset: Annotated[str, StringConstraints(pattern=r"^[+-](0[0-9]|1[0-4]):[0-5][0-9]$")] = Field(
        default="+00:00", description="Offset of `startTime` from UTC."
    )


UpgradeChannel = Literal["patch", "stable", "rapid", "none"]


class UpgradeConfig(Model):
    channel: Optional[UpgradeChannel] = Field(
        default=None,
        description="Who owns the Kubernetes version: `patch` (this program owns major.minor, AKS applies "
        "patches in the window), `stable` or `rapid` (AKS owns the version; leave "
        "`kubernetesVersion` out), `none` (this program owns the full version). Unset: `patch` "
        "for a lone cluster, `none` for fleet members, whose upgrades the fleet runs; a fleet "
        "member may only say `none`.",
    )
    node_os_channel: Optional[Literal["NodeImage", "SecurityPatch", "Unmanaged", "None"]] = Field(
        default=None,
        description="How node OS images are updated. Unset: `NodeImage` for a lone cluster; `SecurityPatch` "
        "for fleet members (the fleet's update runs move node images with the version, AKS "
        "patches the OS in between).",
    )
    maintenance_window: MaintenanceWindowConfig = Field(
        default_factory=MaintenanceWindowConfig, description="The weekly window both upgrade channels use."
    )


class AutoscalerProfileConfig(Model):
    """The cluster autoscaler profile (values as AKS takes them)."""

    expander: Literal["least-waste", "most-pods", "priority", "random"] = Field(
        default="least-waste", description="Which pool the autoscaler grows when several could take the pending pods."
    )
    balance_similar_node_groups: bool = Field(
        default=True, description="Keep similar pools (e.g. one per zone) the same size."
    )
    scan_interval: Duration = Field(default="10s", description="How often the autoscaler re-evaluates the cluster.")
    scale_down_delay_after_add: Duration = Field(
        default="10m", description="How long after a scale-up before scale-down is considered again."
    )
    scale_down_unneeded_time: Duration = Field(
        default="10m", description="How long a node must be unneeded before it is removed."
    )
    scale_down_utilization_threshold: float = Field(
        default=0.5, gt=0, le=1, description="Requested share of a node below which it counts as unneeded."
    )
    max_graceful_termination_sec: int = Field(
        default=600, ge=0, le=86_400, description="How long pods get to terminate when their node is scaled down."
    )
    max_node_provision_time: Duration = Field(
        default="15m",
        description="How long a new node may take to become ready before the autoscaler gives up on it; at "
        "least the slowest GPU pool's cold start (planning/cold_start.py).",
    )
    ok_total_unready_count: int = Field(
        default=3,
        ge=0,
        le=100_000,
        description="Unready nodes the autoscaler tolerates before counting the cluster unhealthy; at least the "
        "largest GPU pool's maxCount where that pool starts cold for more than 15 minutes (planning/cold_start.py).",
    )
    scale_down_unready_time: Duration = Field(
        default="20m",
        description="How long an unready node must be unneeded before it is removed; at least the slowest GPU "
        "pool's cold start, so a node still being checked is never removed.",
    )
    skip_nodes_with_system_pods: bool = Field(
        default=True, description="Never remove nodes running kube-system pods (other than DaemonSets)."
    )
    skip_nodes_with_local_storage: bool = Field(
        default=False, description="Never remove nodes with pods using local storage (emptyDir, hostPath)."
    )
