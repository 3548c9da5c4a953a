"""Azure's public regions as ARM names them, and which have availability zones.

Source: MicrosoftDocs/reliability-docs `articles/reliability/regions-list.md` at c7803c50
(2026-07-28), the "All" tab: 57 regions, 39 with availability zones; `restricted` regions need
an access request. Refresh: `az account list-locations --query "[?metadata.regionType=='Physical']"`
and the zones per VM size with `az vm list-skus -l <region> --zone`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Region:
    display_name: str
    zones: bool
    restricted: bool


REGIONS: dict[str, Region] = {
    "australiacentral": Region("Australia Central", zones=False, restricted=False),
    "australiacentral2": Region("Australia Central 2", zones=False, restricted=True),
    "australiaeast": Region("Australia East", zones=True, restricted=False),
    "australiasoutheast": Region("Australia Southeast", zones=False, restricted=False),
    "austriaeast": Region("Austria East", zones=True, restricted=False),
    "belgiumcentral": Region("Belgium Central", zones=True, restricted=False),
    "brazilsouth": Region("Brazil South", zones=True, restricted=False),
    "brazilsoutheast": Region("Brazil Southeast", zones=False, restricted=True),
    "canadacentral": Region("Canada Central", zones=True, restricted=False),
    "canadaeast": Region("Canada East", zones=False, restricted=False),
    "centralindia": Region("Central India", zones=True, restricted=False),
    "centralus": Region("Central US", zones=True, restricted=False),
    "chilecentral": Region("Chile Central", zones=True, restricted=False),
    "denmarkeast": Region("Denmark East", zones=True, restricted=False),
    "eastasia": Region("East Asia", zones=True, restricted=False),
    "eastus": Region("East US", zones=True, restricted=False),
    "eastus2": Region("East US 2", zones=True, restricted=False),
    "francecentral": Region("France Central", zones=True, restricted=False),
    "francesouth": Region("France South", zones=False, restricted=True),
    "germanynorth": Region("Germany North", zones=False, restricted=True),
    "germanywestcentral": Region("Germany West Central", zones=True, restricted=False),
    "indiasouthcentral": Region("India South Central", zones=True, restricted=False),
    "indonesiacentral": Region("Indonesia Central", zones=True, restricted=False),
    "israelcentral": Region("Israel Central", zones=True, restricted=False),
    "italynorth": Region("Italy North", zones=True, restricted=False),
    "japaneast": Region("Japan East", zones=True, restricted=False),
    "japanwest": Region("Japan West", zones=True, restricted=False),
    "koreacentral": Region("Korea Central", zones=True, restricted=False),
    "koreasouth": Region("Korea South", zones=False, restricted=False),
    "malaysiawest": Region("Malaysia West", zones=True, restricted=False),
    "mexicocentral": Region("Mexico Central", zones=True, restricted=False),
    "newzealandnorth": Region("New Zealand North", zones=True, restricted=False),
    "northcentralus": Region("North Central US", zones=False, restricted=False),
    "northeurope": Region("North Europe", zones=True, restricted=False),
    "norwayeast": Region("Norway East", zones=True, restricted=False),
    "norwaywest": Region("Norway West", zones=False, restricted=True),
    "polandcentral": Region("Poland Central", zones=True, restricted=False),
    "qatarcentral": Region("Qatar Central", zones=True, restricted=False),
    "southafricanorth": Region("South Africa North", zones=True, restricted=False),
    "southafricawest": Region("South Africa West", zones=False, restricted=True),
    "southcentralus": Region("South Central US", zones=True, restricted=False),
    "southindia": Region("South India", zones=False, restricted=False),
    "southeastasia": Region("Southeast Asia", zones=True, restricted=False),
    "spaincentral": Region("Spain Central", zones=True, restricted=False),
    "swedencentral": Region("Sweden Central", zones=True, restricted=False),
    "switzerlandnorth": Region("Switzerland North", zones=True, restricted=False),
    "switzerlandwest": Region("Switzerland West", zones=False, restricted=True),
    "uaecentral": Region("UAE Central", zones=False, restricted=True),
    "uaenorth": Region("UAE North", zones=True, restricted=False),
    "uksouth": Region("UK South", zones=True, restricted=False),
    "ukwest": Region("UK West", zones=False, restricted=False),
    "westcentralus": Region("West Central US", zones=False, restricted=False),
    "westeurope": Region("West Europe", zones=True, restricted=False),
    "westindia": Region("West India", zones=False, restricted=False),
    "westus": Region("West US", zones=False, restricted=False),
    "westus2": Region("West US 2", zones=True, restricted=False),
    "westus3": Region("West US 3", zones=True, restricted=False),
}


# Each region's pair, where geo-redundant storage keeps its second copy and a customer-managed
# failover moves an account to. Source: MicrosoftDocs/reliability-docs
# `articles/reliability/includes/paired-regions-include.md` at e92155a1 (2026-06-25), the "All" tab;
# regions without a pair (N/A), and pairs with a region not in REGIONS (Sweden South), are absent.
PAIRED_REGIONS: dict[str, str] = {
    "australiacentral": "australiacentral2",
    "australiacentral2": "australiacentral",
    "australiaeast": "australiasoutheast",
    "australiasoutheast": "australiaeast",
    "brazilsouth": "southcentralus",
    "brazilsoutheast": "brazilsouth",
    "canadacentral": "canadaeast",
    "canadaeast": "canadacentral",
    "centralindia": "southindia",
    "centralus": "eastus2",
    "eastasia": "southeastasia",
    "eastus": "westus",
    "eastus2": "centralus",
    "francecentral": "francesouth",
    "francesouth": "francecentral",
    "germanynorth": "germanywestcentral",
    "germanywestcentral": "germanynorth",
    "indiasouthcentral": "centralindia",
    "japaneast": "japanwest",
    "japanwest": "japaneast",
    "koreacentral": "koreasouth",
    "koreasouth": "koreacentral",
    "northcentralus": "southcentralus",
    "northeurope": "westeurope",
    "norwayeast": "norwaywest",
    "norwaywest": "norwayeast",
    "southafricanorth": "southafricawest",
    "southafricawest": "southafricanorth",
    "southcentralus": "northcentralus",
    "southeastasia": "eastasia",
    "southindia": "centralindia",
    "switzerlandnorth": "switzerlandwest",
    "switzerlandwest": "switzerlandnorth",
    "uaecentral": "uaenorth",
    "uaenorth": "uaecentral",
    "uksouth": "ukwest",
    "ukwest": "uksouth",
    "westcentralus": "westus2",
    "westeurope": "northeurope",
    "westindia": "southindia",
    "westus": "eastus",
    "westus2": "westcentralus",
    "westus3": "eastus",
}
