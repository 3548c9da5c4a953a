"""Azure Managed Lustre for training data: one file system per region with GPU training clusters
(docs/lustre.md, decision 0010).

Each in its own subnet (the foundation's `lustre` subnet of the region, sized for it), in one
availability zone, with Azure's weekly maintenance window from config; protected and locked where
the environment keeps stateful resources. No blob integration (HSM): it needs shared-key access on
the storage account and lets Azure's resource provider mint SAS tokens, which the platform's
storage never allows; datasets are loaded into it by a job that signs in with its workload identity
(docs/lustre.md, "Loading data"). Clients reach it over TCP 988 and 1019-1023 from the nodes'
Ethernet NIC (the CSI driver's LNet uses `tcp` on Ethernet interfaces, not InfiniBand).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
from pulumi_azure_native import storagecache

from components.data_service import watch_and_keep
from components.groups import resource_group
from components.private_dns import DataPlaneSettings
from planning.naming import region_code
from stackconfig.model import LustreConfig

# Its one resource log: privileged operations on the file system (AFSAuditLogs; Azure Monitor's
# supported logs for Microsoft.StorageCache/amlFilesystems). Its metrics cannot be exported.
LOG_CATEGORIES = ("AmlfsAuditEvent",)


@dataclass(frozen=True)
class LustreFileSystemsArgs:
    service: DataPlaneSettings
    settings: LustreConfig
    # region -> the foundation's Lustre subnet there
    subnet_ids: Mapping[str, pulumi.Input[str]]
    alert_routes: Mapping[str, list[pulumi.Input[str]]] = field(default_factory=dict)


class LustreFileSystems(pulumi.ComponentResource):
    """Outputs: `mgs_addresses` (region -> the management service's address clients mount)."""

    mgs_addresses: dict[str, pulumi.Output[str]]

    def __init__(self, name: str, args: LustreFileSystemsArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:data:LustreFileSystems", name, None, opts)
        service = args.service
        naming = service.naming
        self.mgs_addresses = {}
        for region, spec in args.settings.file_systems.items():
            label = f"{name}-{region_code(region)}"
            group = resource_group(
                label,
                naming.regional("rg", region, "lustre"),
                region,
                service.tags,
                parent=self,
                create=service.create_groups,
            )
            file_system = storagecache.AmlFilesystem(
                label,
                aml_filesystem_name=naming.regional("amlfs", region),
                resource_group_name=group.name,
                location=region,
                sku=storagecache.SkuNameArgs(name=spec.sku),
                storage_capacity_ti_b=float(spec.capacity_tib),
                zones=[spec.zone],
                filesystem_subnet=args.subnet_ids[region],
                maintenance_window=storagecache.AmlFilesystemMaintenanceWindowArgs(
                    day_of_week=storagecache.MaintenanceDayOfWeekType(spec.maintenance_day),
                    time_of_day_utc=spec.maintenance_time_utc,
                ),
                tags=service.tags,
                opts=pulumi.ResourceOptions(parent=self, protect=service.protect),
            )
            # Logs, alerts and a delete lock on the file system itself (not its group, where Azure
            # puts the file system's network interfaces).
            watch_and_keep(
                label,
                service,
                resource_id=file_system.id,
                resource_type="Microsoft.StorageCache/amlFilesystems",
                what=f"Managed Lustre file system {naming.regional('amlfs', region)}",
                resource_group_name=group.name,
                log_categories=LOG_CATEGORIES,
                alert_routes=args.alert_routes,
                parent=self,
            )
            self.mgs_addresses[region] = file_system.client_info.apply(
                lambda info: str(info.mgs_address) if info is not None and info.mgs_address else ""
            )
        self.register_outputs({"mgsAddresses": self.mgs_addresses})
