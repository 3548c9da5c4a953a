"""The event backbone: one topic and client spec, run by Strimzi on AKS (staging, prod) or by
Event Hubs' Kafka endpoint (dev), with Entra ID clients on both.

Strimzi resources are checked against the upstream 1.2.0 CRDs (SHARED_DIR, pinned in
reference.lock); Event Hubs limits against the shared facts page.
"""

from __future__ import annotations

import re
from ipaddress import ip_address, ip_network

import pytest

from facts.event_hubs import EVENT_HUBS_TIERS
from offline.chartcheck import crd_problems, manifest_of
from offline.mocks import OFFLINE_CA_CERTIFICATE, OFFLINE_TENANT_ID, offline_uuid
from offline.reference import facts_table, reference_file
from planning import kafka as kafka_plan
from planning.charts import STRIMZI
from tests.conftest import ROOT, run_with
from tests.test_config_errors import expect_problem, set_in
from tests.test_identity import ASSIGNMENT, CREDENTIAL, IDENTITY, role_of, stack_config
from tests.test_private_data import endpoints_of, resource_id, zone_by_group_id
from validation.loader import parse_platform_config
from validation.stackfile import read_stack_config

STRIMZI_CRDS = (
    "040-Crd-kafka",
    "043-Crd-kafkatopic",
    "044-Crd-kafkauser",
    "045-Crd-kafkanodepool",
    "048-Crd-kafkamirrormaker2",
    "049-Crd-kafkarebalance",
)
RELEASE = "kubernetes:helm.sh/v3:Release"
KAFKA = "kubernetes:kafka.strimzi.io/v1:Kafka"
NODE_POOL = "kubernetes:kafka.strimzi.io/v1:KafkaNodePool"
TOPIC = "kubernetes:kafka.strimzi.io/v1:KafkaTopic"
USER = "kubernetes:kafka.strimzi.io/v1:KafkaUser"
MIRROR_MAKER = "kubernetes:kafka.strimzi.io/v1:KafkaMirrorMaker2"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
AGENT_POOL = "azure-native:containerservice:AgentPool"
NAMESPACE = "azure-native:eventhub:Namespace"
EVENT_HUB = "azure-native:eventhub:EventHub"
CONSUMER_GROUP = "azure-native:eventhub:ConsumerGroup"
STRIMZI_STACKS = ("staging", "prod")


def crd_files():
    return [reference_file(f"schemas/strimzi-1.2.0/{name}.yaml") for name in STRIMZI_CRDS]


def strimzi_objects(plan) -> list:
    return [r for r in plan.resources if r.type.startswith("kubernetes:kafka.strimzi.io/")]


def program_config(stack: str) -> dict:
    """The stack's config as the program sees it: Flink jobs are Kafka clients and workloads
    too (planning.streaming.expand), written as in a stack file."""
    config = parse_platform_config(read_stack_config(ROOT, stack).values, stack=stack)
    return {f"platform:{k}": v for k, v in config.model_dump(by_alias=True, mode="json", exclude_none=True).items()}


def kafka_spec(stack: str) -> dict:
    return program_config(stack)["platform:kafka"]


def in_cluster(resources, cluster: str) -> list:
    """Resources of the Kafka component of one AKS cluster (`kafka-<cluster>-...`)."""
    return [r for r in resources if r.name.startswith(f"kafka-{cluster}-")]


def principal_id(plan, workload: str) -> str:
    identity = next(i for i in plan.of_type(IDENTITY) if i.name == f"workloads-{workload}")
    return offline_uuid(resource_id(identity), "principal")


def client_id(plan, workload: str) -> str:
    identity = next(i for i in plan.of_type(IDENTITY) if i.name == f"workloads-{workload}")
    return offline_uuid(resource_id(identity), "client")


def hosts(stack: str) -> list[str]:
    """The clusters that run workloads, each with its own Kafka (a MultiKueue dispatcher runs none)."""
    return [k for k, c in stack_config(stack)["platform:clusters"].items() if c.get("role") != "dispatch"]


# --- Strimzi on AKS -------------------------------------------------------------------------


@pytest.mark.parametrize("stack", STRIMZI_STACKS)
def test_every_strimzi_resource_validates_against_the_upstream_crds(plans, stack):
    objects = strimzi_objects(plans[stack])
    kinds = {r.inputs["kind"] for r in objects}
    assert {"Kafka", "KafkaNodePool", "KafkaTopic", "KafkaUser", "KafkaRebalance"} <= kinds
    assert ("KafkaMirrorMaker2" in kinds) == (len(hosts(stack)) > 1)
    for resource in objects:
        assert resource.inputs["apiVersion"] == "kafka.strimzi.io/v1"
        assert crd_problems(manifest_of(resource.inputs), crd_files()) == [], resource.name


def test_the_crd_check_rejects_what_strimzi_1x_removed():
    # v1beta2 let a Kafka declare replicas and storage itself; v1 requires node pools.
    kafka = {
        "apiVersion": "kafka.strimzi.io/v1",
        "kind": "Kafka",
        "metadata": {"name": "k"},
        "spec": {
            "kafka": {
                "replicas": 3,
                "listeners": [
                    {
                        "name": "plain",
                        "port": 9092,
                        "type": "internal",
                        "tls": False,
                        "authentication": {"type": "oauth"},
                    }
                ],
            }
        },
    }
    problems = crd_problems(kafka, crd_files())
    assert any("'replicas' was unexpected" in p for p in problems), problems
    assert any("'oauth' is not one of" in p for p in problems), problems


@pytest.mark.parametrize("stack", STRIMZI_STACKS)
def test_each_kafka_host_gets_the_pinned_operator_watching_only_its_namespace(plans, stack):
    plan = plans[stack]
    login_server = plan.outputs["registryLoginServer"]
    operators = [r for r in plan.of_type(RELEASE) if r.inputs["name"] == STRIMZI.name]
    assert sorted(r.name for r in operators) == sorted(f"kafka-{c}-operator" for c in hosts(stack))
    for release in operators:
        values = release.inputs["values"]
        assert release.inputs["version"] == "1.2.0" and release.inputs["namespace"] == "kafka"
        assert values["watchNamespaces"] == [] and values["watchAnyNamespace"] is False
        # Every image (operator, Kafka, init) is composed from these two: through the registry.
        assert (values["defaultImageRegistry"], values["defaultImageRepository"]) == (login_server, "strimzi")
    assert kafka_plan.KAFKA_VERSION.startswith("4.")


@pytest.mark.parametrize("stack", STRIMZI_STACKS)
def test_kafka_data_lives_on_retained_premium_disks_that_outlive_their_claims(plans, stack):
    plan = plans[stack]
    for cluster in hosts(stack):
        (storage_class,) = in_cluster(plan.of_type(STORAGE_CLASS), cluster)
        inputs = storage_class.inputs
        assert inputs["reclaimPolicy"] == "Retain"
        assert inputs["volumeBindingMode"] == "WaitForFirstConsumer"
        assert inputs["allowVolumeExpansion"] is True
        assert inputs["provisioner"] == "disk.csi.azure.com" and inputs["parameters"]["skuName"].startswith("Premium")
        pools = {p.inputs["metadata"]["name"]: p.inputs["spec"] for p in in_cluster(plan.of_type(NODE_POOL), cluster)}
        assert sorted(pools) == ["brokers", "controllers"]
        assert pools["controllers"]["roles"] == ["controller"] and pools["controllers"]["replicas"] == 3
        assert pools["brokers"]["roles"] == ["broker"]
        assert pools["brokers"]["replicas"] == stack_config(stack)["platform:kafka"]["strimzi"]["brokers"]
        for spec in pools.values():
            storage = spec["storage"]
            assert storage["type"] == "persistent-claim"
            assert storage["class"] == inputs["metadata"]["name"]
            assert storage["deleteClaim"] is False


@pytest.mark.parametrize("stack", STRIMZI_STACKS)
def test_brokers_know_their_zone_and_spread_over_three_on_a_dedicated_pool(plans, stack):
    plan = plans[stack]
    strimzi = kafka_spec(stack)["strimzi"]
    for cluster in hosts(stack):
        (kafka,) = in_cluster(plan.of_type(KAFKA), cluster)
        assert kafka.inputs["spec"]["kafka"]["rack"] == {"topologyKey": "topology.kubernetes.io/zone"}
        # One pool per zone, so the autoscaler can add a node where a broker's disk lives.
        pools = {
            p.inputs["agentPoolName"]: p.inputs
            for p in plan.of_type(AGENT_POOL)
            if p.name.startswith(f"aks-{cluster}-pool-kafka")
        }
        assert {name: pool["availabilityZones"] for name, pool in pools.items()} == {
            "kafka1": ["1"],
            "kafka2": ["2"],
            "kafka3": ["3"],
        }
        for pool in pools.values():
            assert pool["nodeTaints"] == ["platform.ai/kafka=true:NoSchedule"]
            assert pool["nodeLabels"] == {"platform.ai/kafka": "true"}
            assert pool["vmSize"] == strimzi["nodePool"]["vmSize"]
        # One node per broker and controller at least: they refuse to share a node.
        assert sum(pool["minCount"] for pool in pools.values()) >= strimzi["brokers"] + 3
        for node_pool in in_cluster(plan.of_type(NODE_POOL), cluster):
            template = node_pool.inputs["spec"]["template"]["pod"]
            assert {"key": "platform.ai/kafka", "operator": "Exists", "effect": "NoSchedule"} in template["tolerations"]
            (anti,) = template["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            assert anti["topologyKey"] == "kubernetes.io/hostname"
            # Only this cluster's brokers and controllers, not its operators (also kind Kafka).
            assert anti["labelSelector"]["matchLabels"] == {
                "strimzi.io/cluster": cluster,
                "strimzi.io/component-type": "kafka",
            }
            (spread,) = template["topologySpreadConstraints"]
            assert (spread["topologyKey"], spread["whenUnsatisfiable"]) == (
                "topology.kubernetes.io/zone",
                "DoNotSchedule",
            )


@pytest.mark.parametrize("stack", STRIMZI_STACKS)
def test_every_listener_has_tls_authentication_and_admits_only_its_clients(plans, stack):
    plan = plans[stack]
    config = stack_config(stack)
    audience = kafka_spec(stack)["strimzi"]["oauth"]["audience"]
    client_namespaces = {
        program_config(stack)["platform:workloads"][c]["namespace"] for c in kafka_spec(stack)["clients"]
    }
    for cluster in hosts(stack):
        (kafka,) = in_cluster(plan.of_type(KAFKA), cluster)
        spec = kafka.inputs["spec"]["kafka"]
        assert spec["authorization"] == {"type": "simple"}
        listeners = {listener["name"]: listener for listener in spec["listeners"]}
        for listener in listeners.values():
            assert listener["tls"] is True, listener["name"]
            assert listener["authentication"]["type"] in ("custom", "tls"), listener["name"]
            assert listener["networkPolicyPeers"], f"{listener['name']} would admit every pod"
        oauth = listeners["oauth"]["authentication"]
        assert oauth["sasl"] is True
        config_of = oauth["listenerConfig"]
        assert config_of["sasl.enabled.mechanisms"] == "OAUTHBEARER"
        jaas = config_of["oauthbearer.sasl.jaas.config"]
        assert f'oauth.valid.issuer.uri="https://login.microsoftonline.com/{OFFLINE_TENANT_ID}/v2.0"' in jaas
        assert (
            f'oauth.jwks.endpoint.uri="https://login.microsoftonline.com/{OFFLINE_TENANT_ID}/discovery/v2.0/keys"'
            in jaas
        )
        assert 'oauth.check.audience="true"' in jaas and f'oauth.client.id="{audience}"' in jaas
        assert 'oauth.username.claim="oid"' in jaas
        # Entra ID tokens carry `typ` in the header only; checking the claim would refuse them all.
        assert 'oauth.check.access.token.type="false"' in jaas
        # The NetworkPolicy Strimzi renders: the declared clients' namespaces (and MirrorMaker).
        peers = listeners["oauth"]["networkPolicyPeers"]
        namespaces = {
            p["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"]
            for p in peers
            if "namespaceSelector" in p
        }
        assert namespaces == client_namespaces
        mirrored = len(hosts(stack)) > 1
        assert ({"podSelector": {"matchLabels": {"strimzi.io/kind": "KafkaMirrorMaker2"}}} in peers) == mirrored
        assert ("mirror" in listeners) == mirrored
        if mirrored:
            others = [c for c in hosts(stack) if c != cluster]
            assert listeners["mirror"]["type"] == "loadbalancer"
            assert listeners["mirror"]["networkPolicyPeers"] == [
                {"ipBlock": {"cidr": config["platform:clusters"][o]["subnets"]["nodes"]}} for o in others
            ]
            annotations = spec["template"]["externalBootstrapService"]["metadata"]["annotations"]
            assert annotations["service.beta.kubernetes.io/azure-load-balancer-internal"] == "true"


@pytest.mark.parametrize("stack", STRIMZI_STACKS)
def test_replication_defaults_to_three_copies_two_in_sync(plans, stack):
    plan = plans[stack]
    for kafka in plan.of_type(KAFKA):
        config = kafka.inputs["spec"]["kafka"]["config"]
        assert config["default.replication.factor"] == 3 and config["min.insync.replicas"] == 2
        assert config["auto.create.topics.enable"] is False
    topics = plan.of_type(TOPIC)
    declared = [t["name"] for t in kafka_spec(stack)["topics"]]
    assert sorted(t.inputs["spec"]["topicName"] for t in topics) == sorted(declared * len(hosts(stack)))
    for topic in topics:
        spec = topic.inputs["spec"]
        assert spec["replicas"] == 3 and spec["config"]["min.insync.replicas"] == "2"


@pytest.mark.parametrize("stack", STRIMZI_STACKS)
def test_acls_name_each_clients_workload_identity_and_grant_only_its_topics(plans, stack):
    plan = plans[stack]
    clients = kafka_spec(stack)["clients"]
    for cluster in hosts(stack):
        users = {
            u.inputs["metadata"]["labels"]["platform.ai/workload"]: u.inputs
            for u in in_cluster(plan.of_type(USER), cluster)
        }
        for client, spec in clients.items():
            user = users[client]
            # The principal of an OAuth client is User:<oid>, its identity's object ID.
            assert user["metadata"]["name"] == principal_id(plan, client)
            assert "authentication" not in user["spec"]
            acls = user["spec"]["authorization"]["acls"]
            topics = {a["resource"]["name"]: set(a["operations"]) for a in acls if a["resource"]["type"] == "topic"}
            others = [c for c in hosts(stack) if c != cluster]
            expected = set(spec["topics"]) | {
                f"{o}.{t}" for t, access in spec["topics"].items() if access != "write" for o in others
            }
            assert set(topics) == expected, client
            for topic, access in spec["topics"].items():
                assert ("Write" in topics[topic]) == (access in ("write", "readWrite"))
                assert ("Read" in topics[topic]) == (access in ("read", "readWrite"))
            groups = [a["resource"] for a in acls if a["resource"]["type"] == "group"]
            reads = any(access != "write" for access in spec["topics"].values())
            assert groups == ([{"type": "group", "name": f"{client}.", "patternType": "prefix"}] if reads else [])


@pytest.mark.parametrize("stack", STRIMZI_STACKS)
def test_clients_get_the_brokers_ca_and_a_connection_without_secrets(plans, stack):
    plan = plans[stack]
    config = program_config(stack)
    outputs = plan.outputs["kafkaClients"]
    for client, spec in kafka_spec(stack)["clients"].items():
        info = outputs[client]
        namespace = config["platform:workloads"][client]["namespace"]
        assert info["bootstrapServers"] == {c: f"{c}-kafka-bootstrap.kafka.svc:9093" for c in hosts(stack)}
        assert (info["securityProtocol"], info["saslMechanism"]) == ("SASL_SSL", "OAUTHBEARER")
        assert info["tokenScope"] == f"{kafka_spec(stack)['strimzi']['oauth']['audience']}/.default"
        assert {t: v["access"] for t, v in info["topics"].items()} == spec["topics"]
        ca_maps = [
            m
            for m in plan.of_type("kubernetes:core/v1:ConfigMap")
            if m.inputs["metadata"]["name"] == info["trustedCaConfigMap"]
            and m.inputs["metadata"]["namespace"] == namespace
        ]
        assert len(ca_maps) == len(hosts(stack))
        assert all(m.inputs["data"]["ca.crt"] == OFFLINE_CA_CERTIFICATE for m in ca_maps)
    flat = repr(outputs).lower()
    assert not any(word in flat for word in ("password", "secret=", "sharedaccesskey", "connectionstring"))


def test_prod_mirrors_each_clusters_topics_into_the_other_with_its_own_identity(plans):
    plan = plans["prod"]
    config = stack_config("prod")
    mirrors = plan.of_type(MIRROR_MAKER)
    assert sorted(m.name for m in mirrors) == [
        "kafka-mirror-eus2-kafkamirrormaker2",
        "kafka-mirror-scus-kafkamirrormaker2",
    ]
    mirror_client = client_id(plan, "kafka-mirror")
    for mirror in mirrors:
        cluster = mirror.name.split("-")[2]
        (other,) = [c for c in hosts("prod") if c != cluster]
        spec = mirror.inputs["spec"]
        assert spec["target"]["alias"] == cluster
        (source,) = [m["source"] for m in spec["mirrors"]]
        (other_kafka,) = in_cluster(plan.of_type(KAFKA), other)
        bootstrap = other_kafka.inputs["spec"]["kafka"]["listeners"][-1]["configuration"]["bootstrap"]
        address = bootstrap["annotations"]["service.beta.kubernetes.io/azure-load-balancer-ipv4"]
        assert source == {**source, "alias": other, "bootstrapServers": f"{address}:9095"}
        assert ip_address(address) in ip_network(config["platform:clusters"][other]["subnets"]["nodes"])
        # Only the declared topics, never the copies: active/active must not mirror in circles.
        pattern = spec["mirrors"][0]["topicsPattern"]
        assert re.fullmatch(pattern, "checkpoint-events") and not re.fullmatch(pattern, f"{other}.checkpoint-events")
        for side in (spec["target"], source):
            authentication = side["authentication"]
            assert authentication["type"] == "custom"
            jaas = authentication["config"]["sasl.jaas.config"]
            assert f'oauth.client.id="{mirror_client}"' in jaas
            assert 'oauth.client.assertion.location="/var/run/secrets/azure/tokens/azure-identity-token"' in jaas
        annotations = spec["template"]["serviceAccount"]["metadata"]["annotations"]
        assert annotations["azure.workload.identity/client-id"] == mirror_client
        assert spec["template"]["pod"]["metadata"]["labels"] == {"azure.workload.identity/use": "true"}
    # Federated with both clusters, for the service account Strimzi gives the MirrorMaker.
    credentials = [c for c in plan.of_type(CREDENTIAL) if c.name.startswith("workloads-kafka-mirror-")]
    assert {c.inputs["subject"] for c in credentials} == {"system:serviceaccount:kafka:mirror-mirrormaker2"}
    assert len(credentials) == 2
    # It is a Kafka principal with ACLs in both clusters, and has no Azure role at all.
    users = [u for u in plan.of_type(USER) if u.inputs["metadata"]["name"] == principal_id(plan, "kafka-mirror")]
    assert len(users) == 2
    readers = {
        c for c, spec in kafka_spec("prod")["clients"].items() if any(a != "write" for a in spec["topics"].values())
    }
    for user in users:
        cluster = user.name.split("-")[1]
        (other,) = [c for c in hosts("prod") if c != cluster]
        acls = {
            (a["resource"]["type"], a["resource"]["name"], a["resource"].get("patternType", "literal")): set(
                a["operations"]
            )
            for a in user.inputs["spec"]["authorization"]["acls"]
        }
        # As target: the copies (created, written, grown, configured) and the offset syncs,
        # which MirrorMaker names after the source when it keeps them on the target.
        assert {"Create", "Write", "Alter", "AlterConfigs"} <= acls[("topic", f"{other}.", "prefix")]
        assert {"Create", "Write", "Read"} <= acls[("topic", f"mm2-offset-syncs.{other}.internal", "literal")]
        # It commits the readers' translated offsets here, and reads theirs for the other side.
        for reader in readers:
            assert {"Read", "Describe"} <= acls[("group", f"{reader}.", "prefix")]
        # As source: reads the declared topics and nothing is writable but its own.
        for topic in kafka_spec("prod")["topics"]:
            assert acls[("topic", topic["name"], "literal")] == {"Read", "Describe", "DescribeConfigs"}
    assert not [a for a in plan.of_type(ASSIGNMENT) if a.inputs["principalId"] == principal_id(plan, "kafka-mirror")]


def test_mirroring_can_be_switched_off():
    plan = run_with("prod", set_in("kafka.strimzi.mirrorMaker.enabled", False))
    assert plan.ok, plan.error
    assert plan.of_type(MIRROR_MAKER) == []
    assert not [i for i in plan.of_type(IDENTITY) if i.name == "workloads-kafka-mirror"]
    for kafka in plan.of_type(KAFKA):
        assert [listener["name"] for listener in kafka.inputs["spec"]["kafka"]["listeners"]] == ["oauth"]


def test_a_listener_without_clients_admits_nobody():
    """Strimzi reads an empty peer list as "everyone"; here prod-scale declares no clients."""

    def no_clients(values):
        set_in("kafka.strimzi.mirrorMaker.enabled", False)(values)
        values["platform:kafka"].pop("clients")

    plan = run_with("prod-scale", no_clients)
    assert plan.ok, plan.error
    for kafka in plan.of_type(KAFKA):
        (listener,) = kafka.inputs["spec"]["kafka"]["listeners"]
        assert listener["networkPolicyPeers"] == [{"ipBlock": {"cidr": "0.0.0.0/32"}}]


def test_a_certificate_client_gets_a_tls_kafka_user_on_its_own_listener():
    plan = run_with("staging", set_in("kafka.clients.inference.authentication", "tls"))
    assert plan.ok, plan.error
    (user,) = [u for u in plan.of_type(USER) if u.inputs["metadata"]["name"] == "inference"]
    assert user.inputs["spec"]["authentication"] == {"type": "tls"}
    (kafka,) = plan.of_type(KAFKA)
    (mtls,) = [li for li in kafka.inputs["spec"]["kafka"]["listeners"] if li["name"] == "mtls"]
    assert mtls["tls"] is True and mtls["authentication"] == {"type": "tls"}
    assert mtls["networkPolicyPeers"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "inference"}}}
    ]
    assert plan.outputs["kafkaClients"]["inference"]["securityProtocol"] == "SSL"


def test_prod_protects_kafka_and_its_topics(plans):
    for kind in (KAFKA, NODE_POOL, TOPIC, STORAGE_CLASS):
        assert all(r.options.protect for r in plans["prod"].of_type(kind)), kind
        assert not any(r.options.protect for r in plans["staging"].of_type(kind)), kind


def test_the_kafka_pool_counts_in_the_capacity_plan():
    from planning.capacity import plan_capacity

    config = parse_platform_config(read_stack_config(ROOT, "prod").values)
    for cluster in plan_capacity(config).clusters:
        if cluster.key not in config.kafka_clusters():
            assert not [p for p in cluster.pools if p.kind == "kafka"]
            continue
        pools = [p for p in cluster.pools if p.kind == "kafka"]
        # 6 brokers and 3 controllers: three per zone, and one spare each.
        assert [(p.name, p.pool.min_count, p.pool.max_count) for p in pools] == [
            ("kafka1", 3, 4),
            ("kafka2", 3, 4),
            ("kafka3", 3, 4),
        ]
        assert {p.key for p in pools} == {"platform:kafka.strimzi.nodePool"}


# --- Event Hubs -----------------------------------------------------------------------------


def test_dev_rents_kafka_from_a_private_event_hubs_namespace_without_keys(plans):
    plan = plans["dev"]
    (namespace,) = plan.of_type(NAMESPACE)
    inputs = namespace.inputs
    assert inputs["disableLocalAuth"] is True
    assert inputs["minimumTlsVersion"] == "1.2"
    assert inputs["publicNetworkAccess"] == "Disabled"
    assert inputs["zoneRedundant"] is True
    assert inputs["sku"]["name"] == inputs["sku"]["tier"] == "Standard"
    (endpoint,) = endpoints_of(plan, namespace)
    assert endpoint.inputs["privateLinkServiceConnections"][0]["groupIds"] == ["namespace"]
    (zone_group,) = [
        g for g in plan.of_type("azure-native:network:PrivateDnsZoneGroup") if g.name == f"{endpoint.name}-dns"
    ]
    zone_id = zone_group.inputs["privateDnsZoneConfigs"][0]["privateDnsZoneId"]
    # The zone the facts page gives for the `namespace` sub-resource.
    assert zone_id.endswith("/privateDnsZones/" + zone_by_group_id()["namespace"])
    assert plan.of_type(KAFKA) == [] and not [r for r in plan.of_type(RELEASE) if r.inputs["name"] == STRIMZI.name]


def test_dev_has_an_event_hub_per_topic_and_a_consumer_group_per_reader(plans):
    plan = plans["dev"]
    spec = kafka_spec("dev")
    hubs = {h.inputs["eventHubName"]: h.inputs for h in plan.of_type(EVENT_HUB)}
    assert sorted(hubs) == sorted(t["name"] for t in spec["topics"])
    for topic in spec["topics"]:
        hub = hubs[topic["name"]]
        assert hub["partitionCount"] == topic["partitions"]
        retention = hub["retentionDescription"]
        if topic.get("cleanupPolicy") == "compact":
            assert retention["cleanupPolicy"] == "Compact"
            assert retention["tombstoneRetentionTimeInHours"] == topic["retentionHours"]
        else:
            assert retention == {"cleanupPolicy": "Delete", "retentionTimeInHours": topic["retentionHours"]}
    groups = {(g.inputs["eventHubName"], g.inputs["consumerGroupName"]) for g in plan.of_type(CONSUMER_GROUP)}
    assert groups == {
        (topic, client)
        for client, c in spec["clients"].items()
        for topic, access in c["topics"].items()
        if access != "write"
    }


def test_dev_clients_hold_sender_or_receiver_on_exactly_their_event_hubs(plans):
    plan = plans["dev"]
    hub_ids = {h.inputs["eventHubName"]: resource_id(h) for h in plan.of_type(EVENT_HUB)}
    roles = {
        "read": {"Azure Event Hubs Data Receiver"},
        "write": {"Azure Event Hubs Data Sender"},
        "readWrite": {"Azure Event Hubs Data Sender", "Azure Event Hubs Data Receiver"},
    }
    for client, spec in kafka_spec("dev")["clients"].items():
        principal = principal_id(plan, client)
        granted = {}
        for assignment in plan.of_type(ASSIGNMENT):
            if assignment.inputs["principalId"] == principal and "Microsoft.EventHub" in assignment.inputs["scope"]:
                granted.setdefault(assignment.inputs["scope"], set()).add(role_of(assignment))
        assert granted == {hub_ids[topic]: roles[access] for topic, access in spec["topics"].items()}, client
    info = plan.outputs["kafkaClients"]["trainer"]
    host = "evhns-ailab-dev-eus2.servicebus.windows.net"
    assert info["bootstrapServers"] == {"eus2": f"{host}:9093"}
    assert (info["securityProtocol"], info["saslMechanism"], info["tokenScope"]) == (
        "SASL_SSL",
        "OAUTHBEARER",
        f"https://{host}/.default",
    )


def test_event_hubs_tier_limits_match_the_facts_page():
    rows = {row["limit"]: row for row in facts_table("Event Hubs tiers")}

    def number(text: str) -> int:
        return int(text.replace(",", "").split()[0])

    for tier, limits in EVENT_HUBS_TIERS.items():
        assert limits.partitions_per_event_hub == number(rows["partitions per event hub"][tier])
        assert limits.consumer_groups_per_event_hub == number(rows["consumer groups per event hub"][tier])
        assert limits.max_retention_hours == 24 * number(rows["max retention"][tier])
        assert rows["Kafka endpoint"][tier] == "yes"


# --- One spec, two engines ------------------------------------------------------------------


def test_switching_the_engine_keeps_the_topic_spec_and_the_clients_rights(plans):
    """staging's spec, run by Strimzi (its stack file) and by Event Hubs (one key changed)."""

    def to_event_hubs(values):
        kafka = values["platform:kafka"]
        kafka["engine"] = "eventhubs"
        del kafka["strimzi"]

    on_strimzi = plans["staging"]
    on_event_hubs = run_with("staging", to_event_hubs)
    assert on_event_hubs.ok, on_event_hubs.error
    topics = {t.inputs["spec"]["topicName"]: t.inputs["spec"] for t in on_strimzi.of_type(TOPIC)}
    hubs = {h.inputs["eventHubName"]: h.inputs for h in on_event_hubs.of_type(EVENT_HUB)}
    assert sorted(topics) == sorted(hubs)
    for name, topic in topics.items():
        hub = hubs[name]
        assert hub["partitionCount"] == topic["partitions"]
        retention = hub["retentionDescription"]
        hours = retention.get("retentionTimeInHours") or retention.get("tombstoneRetentionTimeInHours")
        kept_ms = topic["config"].get("retention.ms") or topic["config"]["delete.retention.ms"]
        assert int(kept_ms) == hours * 3_600_000
        assert retention["cleanupPolicy"].lower() == topic["config"]["cleanup.policy"]
    # The same rights: Kafka ACL operations on one side, Event Hubs data roles on the other.
    for client in kafka_spec("staging")["clients"]:
        strimzi_rights = {
            acl["resource"]["name"]: ("Read" in acl["operations"], "Write" in acl["operations"])
            for user in on_strimzi.of_type(USER)
            if user.inputs["metadata"]["name"] == principal_id(on_strimzi, client)
            for acl in user.inputs["spec"]["authorization"]["acls"]
            if acl["resource"]["type"] == "topic"
        }
        hub_names = {resource_id(h): h.inputs["eventHubName"] for h in on_event_hubs.of_type(EVENT_HUB)}
        hub_rights: dict[str, tuple[bool, bool]] = {}
        for assignment in on_event_hubs.of_type(ASSIGNMENT):
            if (
                assignment.inputs["principalId"] == principal_id(on_event_hubs, client)
                and assignment.inputs["scope"] in hub_names
            ):
                read, write = hub_rights.get(hub_names[assignment.inputs["scope"]], (False, False))
                role = role_of(assignment)
                hub_rights[hub_names[assignment.inputs["scope"]]] = (
                    read or role.endswith("Receiver"),
                    write or role.endswith("Sender"),
                )
        assert strimzi_rights == hub_rights, client
    # Event Hubs replicates on its own: Premium (the default), with nothing from Strimzi left.
    (namespace,) = on_event_hubs.of_type(NAMESPACE)
    assert namespace.inputs["sku"]["name"] == "Premium"
    assert on_event_hubs.of_type(KAFKA) == [] and not [
        p for p in on_event_hubs.of_type(AGENT_POOL) if "-pool-kafka" in p.name
    ]
    # And the preview says what of the spec Event Hubs does not apply.
    assert any(
        "replicationFactor and minInSyncReplicas" in d and d.startswith("info:") for d in on_event_hubs.diagnostics
    )
    assert not any("replicationFactor" in d for d in on_strimzi.diagnostics)


# --- Bad specs ------------------------------------------------------------------------------


def with_topic(index: int, **fields):
    def change(values):
        values["platform:kafka"]["topics"][index].update(fields)

    return change


BAD_SPECS = {
    "replication above the broker count": (
        "staging",
        with_topic(0, replicationFactor=4),
        "platform:kafka.topics[0].replicationFactor",
        "4 replicas need as many brokers",
        "brokers is 3",
    ),
    "min ISR above replication": (
        "prod",
        with_topic(1, minInSyncReplicas=4),
        "platform:kafka.topics[1].minInSyncReplicas",
        "more than the topic's 3 replicas",
    ),
    "unknown client": (
        "staging",
        set_in("kafka.clients.evaluator", {"topics": {"training-metrics": "read"}}),
        "platform:kafka.clients.evaluator",
        "not a workload of platform:workloads",
    ),
    "client of an unknown topic": (
        "dev",
        set_in("kafka.clients.trainer.topics", {"training-metric": "write"}),
        "platform:kafka.clients.trainer.topics.training-metric",
        "not a topic of platform:kafka.topics",
    ),
    "duplicate topic": (
        "dev",
        with_topic(2, name="training-metrics"),
        "platform:kafka.topics[2].name",
        "training-metrics is declared twice",
    ),
    "partitions over the Standard tier": (
        "dev",
        with_topic(0, partitions=40),
        "platform:kafka.topics[0].partitions",
        "40 is over Event Hubs Standard's 32 partitions",
    ),
    "retention over the Standard tier": (
        "dev",
        with_topic(1, retentionHours=720),
        "platform:kafka.topics[1].retentionHours",
        "720 is over Event Hubs Standard's 168-hour retention",
    ),
    "a Premium capacity Azure does not sell": (
        "dev",
        set_in("kafka.eventHubs", {"sku": "Premium", "capacity": 3}),
        "platform:kafka.eventHubs.capacity",
        "3 is not a capacity of Event Hubs Premium",
    ),
    "client certificates on Event Hubs": (
        "dev",
        set_in("kafka.clients.inference.authentication", "tls"),
        "platform:kafka.clients.inference.authentication",
        "Event Hubs takes Entra ID",
    ),
    "the other engine's settings": (
        "dev",
        set_in("kafka.strimzi", {"oauth": {"audience": "5e7c1b2a-9d4f-4e3a-8c6b-0a1f2e3d4c05"}}),
        "platform:kafka.strimzi",
        "belongs to the other engine",
    ),
    "a topic named like a mirrored copy": (
        "prod",
        with_topic(0, name="scus.training-metrics"),
        "platform:kafka.topics[0].name",
        "MirrorMaker's copies of cluster scus",
    ),
    "too few brokers": (
        "staging",
        set_in("kafka.strimzi.brokers", 2),
        "platform:kafka.strimzi.brokers",
        "greater than or equal to 3",
    ),
    "a Kafka pool on a size without premium disks": (
        "staging",
        set_in("kafka.strimzi.nodePool.vmSize", "Standard_D8d_v5"),
        "platform:kafka.strimzi.nodePool.vmSize",
        "not valid",
    ),
    "a team claims the kafka namespace": (
        "staging",
        set_in("teams.research.namespaces", ["research", "kafka"]),
        "platform:teams.research.namespaces[1]",
        "where the platform runs Kafka",
    ),
    "an unknown Kafka host": (
        "prod",
        set_in("kafka.strimzi.clusters", ["eus2", "weu"]),
        "platform:kafka.strimzi.clusters[1]",
        "not a cluster",
    ),
    "a client on a cluster without Kafka": (
        "prod",
        set_in("kafka.strimzi.clusters", ["eus2"]),
        "platform:kafka.clients.trainer",
        "runs on scus, which host no Kafka",
    ),
    "a topic key that does not exist": (
        "dev",
        with_topic(0, retentionDays=3),
        "platform:kafka.topics[0].retentionDays",
        "not a known key",
    ),
}


@pytest.mark.parametrize("case", BAD_SPECS, ids=list(BAD_SPECS))
def test_a_bad_topic_spec_names_the_key(case):
    stack, change, key, *reason = BAD_SPECS[case]
    expect_problem(stack, change, key, *reason)


def test_a_single_zone_cluster_cannot_host_kafka():
    def strimzi_in_dev(values):
        kafka = values["platform:kafka"]
        kafka["engine"] = "strimzi"
        del kafka["eventHubs"]
        kafka["strimzi"] = {"oauth": {"audience": "5e7c1b2a-9d4f-4e3a-8c6b-0a1f2e3d4c05"}}

    expect_problem("dev", strimzi_in_dev, "platform:clusters.eus2.zones", "zones 1, 2 and 3")


def test_too_many_readers_for_the_tiers_consumer_groups():
    """21 reading clients (20 and the Flink job inference-stats) need 22 consumer groups with
    $Default; Standard has 20 per event hub."""

    def crowd(values):
        workloads = values["platform:workloads"]
        clients = values["platform:kafka"]["clients"]
        for i in range(20):
            workloads[f"reader{i}"] = {"team": "research", "namespace": "research", "serviceAccount": f"reader{i}"}
            clients[f"reader{i}"] = {"topics": {"inference-logs": "read"}}

    expect_problem("dev", crowd, "platform:kafka.topics[2]", "21 reading clients", "allows 20 per event hub")


def test_a_ca_copy_made_while_strimzi_replaces_the_key_trusts_the_old_and_the_new_certificate():
    """During a key replacement Strimzi keeps the old certificate beside the new one in the
    `-cluster-ca-cert` Secret (`ca-<date>.crt`) and rolls the brokers onto the new key; a copy of
    `ca.crt` alone would refuse the brokers not yet rolled. The copy holds every `*.crt`, the
    current first, and nothing else of the Secret (its truststore and password)."""
    import base64

    def encoded(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    new, old = "-----BEGIN CERTIFICATE-----\nbmV3\n", "-----BEGIN CERTIFICATE-----\nb2xk\n"
    data = {
        "ca-2026-11-29T03-00-00Z.crt": encoded(old),
        "ca.crt": encoded(new),
        "ca.p12": encoded("x"),
        "ca.password": encoded("y"),
    }
    assert kafka_plan.ca_bundle(data) == new + old
    assert kafka_plan.ca_bundle({"ca.crt": encoded(new)}) == new
