"""The private data plane of every stack: storage, Key Vault and registry reachable only
through private endpoints registered in the right Private DNS zones, with no keys,
passwords or admin users anywhere, and protected against loss where config says so."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from offline.chartcheck import chart_defaults
from offline.mocks import arm_id
from offline.reference import facts_table, reference_file
from planning.charts import chart_named
from planning.private_link import ZONES_BY_GROUP_ID
from tests.conftest import ALL_STACKS, ROOT, STACKS, run_with, stack_values

STORAGE = "azure-native:storage:StorageAccount"
VAULT = "azure-native:keyvault:Vault"
REGISTRY = "azure-native:containerregistry:Registry"
ENDPOINT = "azure-native:network:PrivateEndpoint"
ZONE_GROUP = "azure-native:network:PrivateDnsZoneGroup"
LINK = "azure-native:privatedns:VirtualNetworkLink"
LOCK = "azure-native:authorization:ManagementLockByScope"
REPLICATION_POLICY = "azure-native:storage:ObjectReplicationPolicy"
RELEASE = "kubernetes:helm.sh/v3:Release"
HUB_DNS_GROUP = "rg-hub-dns"


def resource_id(resource) -> str:
    return arm_id(resource.type, resource.name, resource.inputs)


def zone_by_group_id() -> dict[str, str]:
    """From the shared facts page, not from the program's own table."""
    return {row["sub-resource (groupId)"]: row["zone"] for row in facts_table("Private Link DNS zones")}


def data_plane(plan):
    return plan.of_type(STORAGE) + plan.of_type(VAULT) + plan.of_type(REGISTRY)


def endpoints_of(plan, target) -> list:
    target_id = resource_id(target)
    return [
        endpoint
        for endpoint in plan.of_type(ENDPOINT)
        if endpoint.inputs["privateLinkServiceConnections"][0]["privateLinkServiceId"] == target_id
    ]


def env_vnet_ids(plan) -> set[str]:
    return {resource_id(vnet) for vnet in plan.of_type("azure-native:network:VirtualNetwork")}


def kms_vaults(plan) -> set[str]:
    """Vaults a cluster's etcd encryption reaches privately (AKS makes their private endpoint)."""
    return {
        c.inputs["securityProfile"]["azureKeyVaultKms"]["keyVaultResourceId"]
        for c in plan.of_type("azure-native:containerservice:ManagedCluster")
        if (c.inputs.get("securityProfile") or {}).get("azureKeyVaultKms", {}).get("keyVaultNetworkAccess") == "Private"
    }


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_every_storage_account_vault_and_registry_is_private_with_a_registered_endpoint(plans, stack):
    plan = plans[stack]
    zones = zone_by_group_id()
    targets = data_plane(plan)
    assert {t.type for t in targets} == {STORAGE, VAULT, REGISTRY}
    for target in targets:
        inputs = target.inputs
        public = inputs["properties"]["publicNetworkAccess"] if target.type == VAULT else inputs["publicNetworkAccess"]
        assert public == "Disabled", f"{target.name} is reachable from the internet"
        endpoints = endpoints_of(plan, target)
        expected_groups = {"blob", "dfs"} if inputs.get("isHnsEnabled") else {"blob"}
        expected_groups = {STORAGE: expected_groups, VAULT: {"vault"}, REGISTRY: {"registry"}}[target.type]
        if resource_id(target) in kms_vaults(plan):
            # AKS makes this one's endpoint itself, from the API server's VNet integration.
            expected_groups = set()
        groups = {e.inputs["privateLinkServiceConnections"][0]["groupIds"][0] for e in endpoints}
        assert groups == expected_groups, f"{target.name} has endpoints for {groups}"
        for endpoint in endpoints:
            assert "/subnets/snet-" in endpoint.inputs["subnet"]["id"] and endpoint.inputs["subnet"]["id"].endswith(
                "-private-endpoints"
            )
            group_id = endpoint.inputs["privateLinkServiceConnections"][0]["groupIds"][0]
            zone_groups = [
                g
                for g in plan.of_type(ZONE_GROUP)
                if g.inputs["privateEndpointName"] == endpoint.inputs["privateEndpointName"]
            ]
            assert len(zone_groups) == 1, f"{endpoint.name} has no DNS zone group"
            (config,) = zone_groups[0].inputs["privateDnsZoneConfigs"]
            zone_id = config["privateDnsZoneId"]
            assert zone_id.endswith(f"/privateDnsZones/{zones[group_id]}"), (endpoint.name, zone_id)
            # The zone resolves in every VNet of the environment: its own links, or the hub's
            # owner's for the hub's shared zones (stack output hubRequests).
            linked = {
                link.inputs["virtualNetwork"]["id"]
                for link in plan.of_type(LINK)
                if link.inputs["privateZoneName"] == zones[group_id]
            } | set(plan.outputs.get("hubRequests", {}).get("dnsLinks", {}).get(zones[group_id], []))
            assert env_vnet_ids(plan) <= linked, f"{zones[group_id]} is not linked to every VNet"


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_private_dns_zones_are_linked_for_resolution_only(plans, stack):
    plan = plans[stack]
    links = plan.of_type(LINK)
    assert links
    for link in links:
        assert link.inputs["registrationEnabled"] is False
        assert link.inputs["resolutionPolicy"] == "Default", "a private name must never fall back to a public address"
    # One link per VNet and zone; link names are unique within each zone.
    keys = [(link.inputs["privateZoneName"], link.inputs["virtualNetworkLinkName"]) for link in links]
    assert len(set(keys)) == len(keys)


def test_dev_owns_its_zones_and_shared_hub_environments_link_to_the_hubs(plans):
    dev = plans["dev"]
    assert {z.inputs["privateZoneName"] for z in dev.of_type("azure-native:privatedns:PrivateZone")} == {
        "privatelink.blob.core.windows.net",
        "privatelink.dfs.core.windows.net",
        "privatelink.vaultcore.azure.net",
        "privatelink.azurecr.io",
        # Event Hubs (dev's Kafka engine).
        "privatelink.servicebus.windows.net",
        # Cosmos DB's endpoint.
        "privatelink.documents.azure.com",
        # dev's own Azure Monitor private link scope (its zones come with its own scope).
        "privatelink.monitor.azure.com",
        "privatelink.oms.opinsights.azure.com",
        "privatelink.ods.opinsights.azure.com",
        "privatelink.agentsvc.azure-automation.net",
        # Managed Grafana's private endpoint.
        "privatelink.grafana.azure.com",
    }
    # staging and prod share one hub, which can link only one zone of each name: they use the
    # hub's zones, linking their own VNets to them through the hub subscription's provider.
    # prod's second region has data-plane zones of its own, linked to its VNet only, where its
    # own endpoints register (decision 0008); the hub's serve the hub's region.
    for stack in ("staging", "prod"):
        plan = plans[stack]
        zones = plan.of_type("azure-native:privatedns:PrivateZone")
        # (The serving zone is the environment's own name, not a privatelink zone: a copy per
        # serving region in its network group, tests/test_serving.py.)
        own = [z for z in zones if z.inputs["privateZoneName"].startswith("privatelink.")]
        assert {z.inputs["resourceGroupName"] for z in own} <= {"rg-ailab-prod-scus-dns"}
        assert bool(own) == (stack == "prod")
        provider = plan.one("pulumi:providers:azure-native", "subscription-0b1f6471-1bf0-4dda-aec3-111122223333")
        for link in (link for link in plan.of_type(LINK) if link.inputs["resourceGroupName"] == HUB_DNS_GROUP):
            assert link.inputs["resourceGroupName"] == HUB_DNS_GROUP
            assert link.provider.startswith(provider.urn)
            assert (
                link.inputs["virtualNetworkLinkName"]
                == "link-" + link.inputs["virtualNetwork"]["id"].rsplit("/", 1)[-1]
            )
        for group in plan.of_type(ZONE_GROUP):
            zone_id = group.inputs["privateDnsZoneConfigs"][0]["privateDnsZoneId"]
            # The second region's endpoints (named `-<region code>`) register in its own zones.
            where = "rg-ailab-prod-scus-dns" if group.name.endswith("-scus-dns") else HUB_DNS_GROUP
            assert f"/resourceGroups/{where}/providers/Microsoft.Network/privateDnsZones/" in zone_id, group.name


def test_an_environment_with_its_own_zones_links_them_to_the_hub_too():
    def own_zones(values):
        del values["platform:network"]["hub"]["privateDnsZonesResourceGroupId"]
        # Its own zones come with its own Azure Monitor private link scope (validation).
        del values["platform:operations"]["privateLinkScope"]["scopeId"]

    plan = run_with("staging", own_zones)
    assert plan.ok, plan.error
    zones = {z.inputs["privateZoneName"] for z in plan.of_type("azure-native:privatedns:PrivateZone")}
    assert "privatelink.eastus2.azmk8s.io" in zones and "privatelink.blob.core.windows.net" in zones
    monitor_only = {z for z in ZONES_BY_GROUP_ID["azuremonitor"] if z != "privatelink.blob.core.windows.net"}
    assert monitor_only <= zones
    for zone in zones:
        linked = {
            link.inputs["virtualNetworkLinkName"]
            for link in plan.of_type(LINK)
            if link.inputs["privateZoneName"] == zone
        }
        # Its own Azure Monitor zones stay off the hub: they would send the hub's own Azure
        # Monitor traffic to this environment's private link scope.
        expected = {"link-vnet-ailab-staging-eus2"} | (set() if zone in monitor_only else {"link-vnet-hub-eus2"})
        assert linked == expected, zone


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_storage_accepts_only_entra_id_over_private_link(plans, stack):
    for account in plans[stack].of_type(STORAGE):
        inputs = account.inputs
        assert inputs["kind"] == "StorageV2"
        assert inputs["allowSharedKeyAccess"] is False, "account keys (and account SAS) must not work"
        assert inputs["defaultToOAuthAuthentication"] is True
        assert inputs["allowBlobPublicAccess"] is False
        assert inputs["isLocalUserEnabled"] is False and inputs["isSftpEnabled"] is False
        assert inputs["allowedCopyScope"] == "PrivateLink"
        assert inputs["allowCrossTenantReplication"] is False
        assert inputs["minimumTlsVersion"] == "TLS1_2" and inputs["enableHttpsTrafficOnly"] is True
        assert inputs["networkRuleSet"] == {"defaultAction": "Deny", "bypass": "None"}
        assert inputs["encryption"]["requireInfrastructureEncryption"] is True
        assert set(account.options.replace_on_changes) >= {"isHnsEnabled", "encryption.requireInfrastructureEncryption"}


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_blobs_and_containers_are_recoverable_and_never_public(plans, stack):
    plan = plans[stack]
    values = yaml.safe_load(Path(f"stacks/Pulumi.{stack}.yaml").read_text())["config"].get("platform:storage", {})
    # An object-replication replica: its content is its source's (restore the source, the copy follows).
    replicas = {p.inputs["destinationAccount"].rsplit("/", 1)[-1] for p in plan.of_type(REPLICATION_POLICY)}
    for service in plan.of_type("azure-native:storage:BlobServiceProperties"):
        account = next(a for a in plan.of_type(STORAGE) if a.inputs["accountName"] == service.inputs["accountName"])
        flat = not account.inputs["isHnsEnabled"] and account.inputs["accountName"] not in replicas
        inputs = service.inputs
        assert inputs["deleteRetentionPolicy"]["enabled"] is True
        assert inputs["deleteRetentionPolicy"]["days"] == values.get("softDeleteDays", 30)
        assert inputs["containerDeleteRetentionPolicy"] == {
            "enabled": True,
            "days": values.get("containerSoftDeleteDays", 30),
        }
        # Versioning, the change feed and point-in-time restore exist only without a hierarchical namespace.
        assert inputs["isVersioningEnabled"] is (not account.inputs["isHnsEnabled"])
        restore = values.get("pointInTimeRestoreDays")
        if flat and restore:
            assert inputs["changeFeed"] == {"enabled": True, "retentionInDays": values["changeFeedDays"]}
            assert inputs["restorePolicy"] == {"enabled": True, "days": restore}
        else:
            assert "restorePolicy" not in inputs
    for container in plan.of_type("azure-native:storage:BlobContainer"):
        assert container.inputs["publicAccess"] == "None"


def test_prod_restores_weights_to_any_point_of_the_last_29_days(plans):
    weights = plans["prod"].one("azure-native:storage:BlobServiceProperties", "storage-weights-blob-service")
    assert weights.inputs["restorePolicy"] == {"enabled": True, "days": 29}
    assert weights.inputs["changeFeed"]["enabled"] is True


@pytest.mark.parametrize("stack, zone_redundant", [("dev", False), ("staging", True), ("prod", True)])
def test_staging_and_prod_keep_zone_redundant_copies(plans, stack, zone_redundant):
    plan = plans[stack]
    for account in plan.of_type(STORAGE):
        assert (account.inputs["sku"]["name"] in ("Standard_ZRS", "Standard_GZRS", "Standard_RAGZRS")) is zone_redundant
    registry = plan.one(REGISTRY)
    assert (registry.inputs["zoneRedundancy"] == "Enabled") is zone_redundant


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_key_vault_is_rbac_only_purge_protected_and_audited(plans, stack):
    """Every region's vault alike (a vault per region with clusters, decision 0008)."""
    plan = plans[stack]
    regions = {c["region"] for c in stack_values(stack)["platform:clusters"].values()}
    vaults = plan.of_type(VAULT)
    regional = [v for v in vaults if "EtcdEncryption" not in v.urn]
    assert sorted(v.inputs["location"] for v in regional) == sorted(regions)
    for vault in vaults:
        properties = vault.inputs["properties"]
        assert properties["enableRbacAuthorization"] is True, "access policies bypass Azure RBAC"
        assert properties["enablePurgeProtection"] is True and properties["enableSoftDelete"] is True
        assert properties["networkAcls"]["defaultAction"] == "Deny"
        assert not properties["enabledForDeployment"] and not properties["enabledForTemplateDeployment"]
        logs = [
            d
            for d in plan.of_type("azure-native:monitor:DiagnosticSetting")
            if d.inputs["resourceUri"] == resource_id(vault)
        ]
        assert len(logs) == 1 and [log["category"] for log in logs[0].inputs["logs"]] == ["AuditEvent"]


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_registry_is_premium_private_without_admin_user_and_every_kubelet_may_pull(plans, stack):
    plan = plans[stack]
    registry = plan.one(REGISTRY)
    inputs = registry.inputs
    assert inputs["sku"]["name"] == "Premium"
    assert inputs["adminUserEnabled"] is False and inputs["anonymousPullEnabled"] is False
    assert inputs["dataEndpointEnabled"] is True
    assert inputs["policies"]["exportPolicy"]["status"] == "disabled"
    pulls = [
        a
        for a in plan.of_type("azure-native:authorization:RoleAssignment")
        if a.inputs["roleDefinitionId"].endswith("/7f951dda-4ed3-4680-a7ca-43fe172d538d")
    ]
    assert {a.inputs["scope"] for a in pulls} == {resource_id(registry)}
    kubelets = [
        i for i in plan.of_type("azure-native:managedidentity:UserAssignedIdentity") if i.name.endswith("-kubelet-id")
    ]
    assert len(pulls) == len(kubelets) == len(plan.of_type("azure-native:containerservice:ManagedCluster"))


def test_prod_replicates_the_registry_to_its_second_region(plans):
    replicas = plans["prod"].of_type("azure-native:containerregistry:Replication")
    assert [r.inputs["location"] for r in replicas] == ["southcentralus"]
    assert replicas[0].inputs["zoneRedundancy"] == "Enabled"
    endpoint = endpoints_of(plans["prod"], plans["prod"].one(REGISTRY))[0]
    assert replicas[0].urn in endpoint.dependencies, "the endpoint must carry the replica's data endpoint"


def _public_repositories(values, path=""):
    """(value path, repository) of every image repository in a chart's defaults on a public registry."""
    if isinstance(values, dict):
        for key, value in values.items():
            where = f"{path}.{key}" if path else key
            if key == "repository" and isinstance(value, str) and "." in value.split("/")[0]:
                yield where, value
            else:
                yield from _public_repositories(value, where)


def _lookup(values, path):
    for part in path.split("."):
        values = values.get(part, {}) if isinstance(values, dict) else {}
    return values


@pytest.mark.parametrize("stack", STACKS)
def test_every_chart_image_is_pulled_through_the_platforms_registry(plans, stack):
    plan = plans[stack]
    login_server = plan.one(REGISTRY).inputs["registryName"] + ".azurecr.io"
    rules = {
        rule.inputs["targetRepository"].removesuffix("*"): rule.inputs["sourceRepository"].removesuffix("*")
        for rule in plan.of_type("azure-native:containerregistry:CacheRule")
    }
    releases = plan.of_type(RELEASE)
    assert releases
    for release in releases:
        chart = chart_named(release.inputs["name"])
        defaults = chart_defaults(reference_file(f"reference/helm-values/{chart.values_file}"))
        if "defaultImageRegistry" in defaults:
            # Strimzi composes every image from one registry and repository.
            values = release.inputs["values"]
            upstream = f"{defaults['defaultImageRegistry']}/{defaults['defaultImageRepository']}/"
            assert values["defaultImageRegistry"] == login_server, release.name
            in_registry = values["defaultImageRepository"] + "/"
            target = next(t for t in rules if in_registry.startswith(t))
            assert rules[target] + in_registry[len(target) :] == upstream
            continue
        public = dict(_public_repositories(defaults)) | dict(_public_repositories(chart.extra_defaults))
        assert public, chart.name
        for path in public:
            value = _lookup(release.inputs["values"], path)
            assert isinstance(value, str) and value.startswith(f"{login_server}/"), (
                f"{release.name}: {path} pulls from {public[path]}"
            )
            # The cache rule that fills this path pulls exactly the chart's upstream repository.
            in_registry = value.removeprefix(f"{login_server}/") + "/"
            target = next((t for t in rules if in_registry.startswith(t)), None)
            assert target is not None, f"no cache rule fills {value}"
            assert rules[target] + in_registry[len(target) :] == chart.images[path] + "/", (path, value)
    for policy in plan.of_type("kubernetes:mellanox.com/v1alpha1:NicClusterPolicy"):
        for component in ("ofedDriver", "rdmaSharedDevicePlugin"):
            assert policy.inputs["spec"][component]["repository"].startswith(f"{login_server}/nvidia/")


def test_cache_rules_pull_the_platforms_upstreams(plans):
    rules = {
        r.inputs["sourceRepository"]: r.inputs["targetRepository"]
        for r in plans["prod"].of_type("azure-native:containerregistry:CacheRule")
    }
    assert rules == {
        "nvcr.io/nvidia/*": "nvidia/*",
        "registry.k8s.io/*": "k8s/*",
        "quay.io/strimzi/*": "strimzi/*",
        "ghcr.io/apache/flink-kubernetes-operator": "apache/flink-kubernetes-operator",
        "ghcr.io/kubereboot/kured": "kubereboot/kured",
        "mcr.microsoft.com/azurelinux/distroless/python": "azurelinux/distroless/python",
        "mcr.microsoft.com/oss/v2/kubernetes-csi/azurelustre-csi": "oss/v2/kubernetes-csi/azurelustre-csi",
        "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe": "oss/kubernetes-csi/livenessprobe",
        "mcr.microsoft.com/oss/kubernetes-csi/csi-node-driver-registrar": "oss/kubernetes-csi/csi-node-driver-registrar",
    }


def test_teams_add_their_own_cache_rules():
    def add_rule(values):
        values["platform:registry"] = {
            "cacheRules": {"vllm-project": {"source": "ghcr.io/vllm-project/*", "target": "vllm/*"}}
        }

    plan = run_with("dev", add_rule)
    assert plan.ok, plan.error
    rule = plan.one("azure-native:containerregistry:CacheRule", "registry-cache-vllm-project")
    assert (rule.inputs["sourceRepository"], rule.inputs["targetRepository"]) == ("ghcr.io/vllm-project/*", "vllm/*")


@pytest.mark.parametrize("stack, locked", [("dev", False), ("staging", False), ("prod", True)])
def test_prod_storage_vault_and_registry_are_protected_and_locked(plans, stack, locked):
    plan = plans[stack]
    stateful = plan.of_type(STORAGE) + plan.of_type(VAULT) + plan.of_type("azure-native:storage:BlobContainer")
    assert all(r.options.protect is (stack == "prod") for r in stateful)
    lock_scopes = {lock.inputs["scope"] for lock in plan.of_type(LOCK)}
    for target in data_plane(plan):
        assert (resource_id(target) in lock_scopes) is locked, target.name
    for lock in plan.of_type(LOCK):
        assert lock.inputs["level"] == "CanNotDelete"


CREDENTIAL_KEYS = re.compile(
    r"(?i)^(password|adminpassword|clientsecret|secretvalue|accountkey|sharedkey|connectionstring|sastoken|client-key-data|token)$"
)
# A certificate is public (clients get the brokers' CA); a private key never is.
CREDENTIAL_TEXT = re.compile(
    r"AccountKey=|SharedAccessSignature|client-key-data|-----BEGIN [A-Z ]*PRIVATE KEY|password:"
)


def _walk(value, path=""):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}")
            yield f"{path}.{key}", key, item
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


@pytest.mark.parametrize("stack", ALL_STACKS)
def test_no_keys_passwords_or_admin_credentials_anywhere(plans, stack):
    plan = plans[stack]
    for resource in plan.resources:
        for path, key, value in _walk(resource.inputs):
            assert not CREDENTIAL_KEYS.match(key), f"{resource.name} sets {path}"
            assert not (isinstance(value, str) and CREDENTIAL_TEXT.search(value)), (
                f"{resource.name}{path} holds a credential"
            )
    for path, _, value in _walk(plan.outputs):
        assert not (isinstance(value, str) and CREDENTIAL_TEXT.search(value)), f"output {path} holds a credential"
    # Kubeconfigs authenticate through kubelogin (Entra ID): no certificate, token or password.
    for kubeconfig in plan.outputs["kubeconfigs"].values():
        users = yaml.safe_load(kubeconfig)["users"]
        assert all(set(user["user"]) == {"exec"} for user in users)


# -- etcd encryption (AKS KMS) ------------------------------------------------------------------

KEY = "azure-native:keyvault:Key"


@pytest.mark.parametrize("stack", ["staging", "prod", "prod-scale"])
def test_every_cluster_encrypts_etcd_with_a_key_of_its_own_private_vault(plans, stack):
    """Each cluster's Secrets in etcd are under a key the platform holds (AKS KMS), in a vault of
    the cluster's own: private, RBAC-only, purge-protected, audited, holding that key alone.
    The key has no expiry (an expired key stops the API server: kms-observability.md)."""
    plan = plans[stack]
    clusters = plan.of_type("azure-native:containerservice:ManagedCluster")
    vaults = {resource_id(v): v for v in plan.of_type(VAULT) if "EtcdEncryption" in v.urn}
    assert len(vaults) == len(clusters)
    logged = {d.inputs["resourceUri"] for d in plan.of_type("azure-native:monitor:DiagnosticSetting")}
    for cluster in clusters:
        kms = cluster.inputs["securityProfile"]["azureKeyVaultKms"]
        assert kms["enabled"] is True and kms["keyVaultNetworkAccess"] == "Private"
        vault = vaults[kms["keyVaultResourceId"]]
        assert vault.inputs["location"] == cluster.inputs["location"]
        properties = vault.inputs["properties"]
        assert properties["enableRbacAuthorization"] is True and properties["enablePurgeProtection"] is True
        assert properties["publicNetworkAccess"] == "Disabled"
        assert properties["networkAcls"] == {"defaultAction": "Deny", "bypass": "None"}
        assert resource_id(vault) in logged
        (key,) = [k for k in plan.of_type(KEY) if k.inputs["vaultName"] == vault.inputs["vaultName"]]
        assert key.inputs["keyName"] == "etcd-encryption-1"
        assert key.inputs["properties"]["kty"] == "RSA"
        assert set(key.inputs["properties"]["keyOps"]) == {"encrypt", "decrypt"}
        assert "rotationPolicy" not in key.inputs["properties"] and "attributes" not in key.inputs["properties"]
        # The versioned ID legacy KMS takes: the key's output, known once the key exists.
        assert key.urn in cluster.property_dependencies["securityProfile"]
    # Nothing else lives in those vaults.
    assert not [s for s in plan.of_type("azure-native:keyvault:Secret") if s.inputs["vaultName"].startswith("kv-")]


def test_dev_weakens_etcd_encryption_explicitly_and_its_pack_waiver_says_why(plans):
    (cluster,) = plans["dev"].of_type("azure-native:containerservice:ManagedCluster")
    assert "azureKeyVaultKms" not in (cluster.inputs.get("securityProfile") or {})
    assert stack_values("dev")["platform:clusters"]["eus2"]["etcdEncryption"] is False
    config = json.loads((ROOT / "policies/azure-platform/config/dev.json").read_text())
    assert config["aks-etcd-encrypted"]["enforcementLevel"] == "disabled"
    assert "VNet integration" in config["aks-etcd-encrypted"]["waiver"]["reason"]


def test_the_control_planes_key_vault_roles_reach_only_its_own_etcd_vault(plans):
    """AKS needs Key Vault Contributor to link a private vault (use-kms-etcd-encryption.md), a role
    that manages the whole vault: so it holds it on a vault with nothing but its own key."""
    plan = plans["prod"]
    etcd_vaults = {resource_id(v) for v in plan.of_type(VAULT) if "EtcdEncryption" in v.urn}
    kv_roles = {"12338af0-0e69-4776-bea7-57ae8d297424", "f25e0fa2-a7c8-4377-a976-54943a77a395"}
    granted = [
        a
        for a in plan.of_type("azure-native:authorization:RoleAssignment")
        if a.inputs["roleDefinitionId"].rsplit("/", 1)[-1] in kv_roles and "-control-plane-" in a.name
    ]
    assert len(granted) == 2 * len(etcd_vaults)
    assert {a.inputs["scope"] for a in granted} == etcd_vaults


def test_the_cluster_layer_may_hand_out_key_vault_roles_only_in_its_own_groups():
    """Delegated on the subscription, the cluster layer could give itself Key Vault Contributor on
    the environment's own vaults and switch them to access policies; it may only in its groups."""
    from offline import identities as offline_identities

    plan = offline_identities.delivery_plan("acme")
    administrator = "f58310d9-a9f6-439a-9e8d-f62e7b41a168"
    contributor = "f25e0fa2-a7c8-4377-a976-54943a77a395"
    delegations = [
        a
        for a in plan.of_type("azure-native:authorization:RoleAssignment")
        if a.inputs["roleDefinitionId"].rsplit("/", 1)[-1] == administrator and contributor in a.inputs["condition"]
    ]
    assert delegations
    for delegation in delegations:
        assert "/resourceGroups/" in delegation.inputs["scope"] and delegation.inputs["scope"].endswith("-cluster")


def test_etcd_encryption_without_vnet_integration_is_a_config_error_naming_both_keys():
    from tests.test_config_errors import expect_problem, set_in

    expect_problem(
        "dev",
        set_in("clusters.eus2.etcdEncryption", True),
        "platform:clusters.eus2.etcdEncryption",
        "platform:clusters.eus2.apiServer.vnetIntegration is false",
    )


def test_raising_the_etcd_key_generation_makes_a_new_key_and_keeps_the_one_before():
    """ARM never makes a new version of a key, and the vault's data plane is AKS's alone: a
    rotation is a new key by name, and the previous one stays for what AKS cached."""

    def rotate(values):
        values["platform:clusters"]["eus2"]["etcdKeyGeneration"] = 3

    plan = run_with("staging", rotate)
    assert plan.ok, plan.error
    assert sorted(k.inputs["keyName"] for k in plan.of_type(KEY)) == ["etcd-encryption-2", "etcd-encryption-3"]
    (cluster,) = plan.of_type("azure-native:containerservice:ManagedCluster")
    (in_use,) = [k for k in plan.of_type(KEY) if k.inputs["keyName"] == "etcd-encryption-3"]
    assert in_use.urn in cluster.property_dependencies["securityProfile"]
    (previous,) = [k for k in plan.of_type(KEY) if k.inputs["keyName"] == "etcd-encryption-2"]
    assert previous.urn not in cluster.property_dependencies["securityProfile"]
