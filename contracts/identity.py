"""Identity: does the pod sign in as its workload, and may that identity touch exactly its data?

The workload identity webhook injects a token for the pod's service account when the pod is
labelled `azure.workload.identity/use: "true"`; Entra ID exchanges it for the identity whose
client ID the service account names, if that identity has a federated credential for the
subject `system:serviceaccount:<namespace>:<name>` issued by this cluster's OIDC issuer.
"""

from __future__ import annotations

from typing import Any

from components.platform import STORAGE_ROLES
from contracts.cluster import FEDERATED_CREDENTIAL, IDENTITY, ROLE_ASSIGNMENT, SERVICE_ACCOUNT, ClusterView
from facts.azure_roles import role_id
from facts.cosmosdb import DATA_ROLES
from facts.workload_identity import CLIENT_ID_ANNOTATION as CLIENT_ID
from facts.workload_identity import USE_LABEL
from planning import postgresql as pg_plan
from planning.kafka import EVENT_HUBS_ROLES, TOPIC_OPERATIONS
from planning.naming import WORKLOAD_LABEL

AUDIENCE = "api://AzureADTokenExchange"


KAFKA_USER = "kubernetes:kafka.strimzi.io/v1:KafkaUser"
COSMOS_ROLE_ASSIGNMENT = "azure-native:cosmosdb:SqlResourceSqlRoleAssignment"
POSTGRES_LABEL = "postgresql:index/securityLabel:SecurityLabel"
POSTGRES_GRANT = "postgresql:index/grant:Grant"


def _principal(view: ClusterView, workload: str) -> str | None:
    """The identity's object ID where the plan's outputs carry it: an environment's units, whose
    foundation exports it and whose tenants unit reads it by value (a stack reference), so no
    dependency on the identity's URN crosses the stacks."""
    return ((view.plan.outputs.get("identities") or {}).get("principalIds") or {}).get(workload)


def _grants(view: ClusterView, identity, principal: str | None = None) -> list:
    """Role assignments to the identity: by dependency on it within a stack, by its object ID
    across the units."""
    return [
        r
        for r in view.plan.of_type(ROLE_ASSIGNMENT)
        if identity.urn in r.property_dependencies.get("principalId", ())
        or (principal is not None and r.inputs.get("principalId") == principal)
    ]


def kafka_refusals(view: ClusterView, workload: str, identity, topic: str, access: str) -> list[str]:
    principal = _principal(view, workload)
    """Event Hubs: the data roles on exactly the topic's event hub. Strimzi: a KafkaUser named by
    the identity's object ID (the brokers' OAuth principal) whose ACLs allow the access."""
    if view.config["platform:kafka"]["engine"] == "eventhubs":
        on_hub = [g for g in _grants(view, identity, principal) if g.inputs["scope"].endswith(f"/eventhubs/{topic}")]
        held = {g.inputs["roleDefinitionId"].rsplit("/", 1)[-1].lower() for g in on_hub}
        missing = [role for role in EVENT_HUBS_ROLES[access] if role_id(role).lower() not in held]
        wide = [
            g.inputs["scope"]
            for g in _grants(view, identity, principal)
            if "/Microsoft.EventHub/" in g.inputs["scope"] and "/eventhubs/" not in g.inputs["scope"]
        ]
        return ([f"{workload}'s identity lacks {', '.join(missing)} on event hub {topic}"] if missing else []) + (
            [f"{workload}'s identity holds Event Hubs roles wider than one hub: {wide}"] if wide else []
        )
    users = [
        r
        for r in view.in_cluster(KAFKA_USER)
        if (r.inputs["metadata"].get("labels") or {}).get(WORKLOAD_LABEL) == workload
    ]
    named = users and (
        identity.urn in {u for deps in users[0].property_dependencies.values() for u in deps}
        or (principal is not None and users[0].inputs["metadata"].get("name") == principal)
    )
    if not named:
        return [f"no KafkaUser in cluster {view.key} is named by {workload}'s identity"]
    allowed = {
        op
        for acl in users[0].inputs["spec"]["authorization"]["acls"]
        if acl["resource"]["type"] == "topic" and acl["resource"]["name"] == topic
        for op in acl["operations"]
    }
    refused = set(TOPIC_OPERATIONS[access]) - allowed
    return [f"{workload}'s KafkaUser may not {', '.join(sorted(refused))} topic {topic}"] if refused else []


def cosmos_refusals(view: ClusterView, workload: str, identity, scope: str, access: str) -> list[str]:
    """The built-in data role for the access on exactly the database or container (or its
    database), and none on the whole account: Cosmos DB's own role assignments, by dependency on
    the identity within a stack and by its object ID across the units."""
    principal = _principal(view, workload)
    assignments = [
        r
        for r in view.plan.of_type(COSMOS_ROLE_ASSIGNMENT)
        if identity.urn in r.property_dependencies.get("principalId", ())
        or (principal is not None and r.inputs.get("principalId") == principal)
    ]
    database, _, container = scope.partition("/")
    wanted = {f"/dbs/{database}", *([f"/dbs/{database}/colls/{container}"] if container else [])}
    role = DATA_ROLES["read" if access == "read" else "readWrite"]
    # A contributor reads too.
    roles = {role, DATA_ROLES["readWrite"]}
    held = [
        a
        for a in assignments
        if any(a.inputs["scope"].endswith(w) for w in wanted)
        and a.inputs["roleDefinitionId"].rsplit("/", 1)[-1] in roles
    ]
    found = [] if held else [f"{workload}'s identity holds no Cosmos DB {access} role on {scope}"]
    wide = [a.inputs["scope"] for a in assignments if "/dbs/" not in a.inputs["scope"]]
    if wide:
        found.append(f"{workload}'s identity holds Cosmos DB roles on the whole account: {wide}")
    return found


def postgres_refusals(view: ClusterView, workload: str, identity, scope: str, access: str) -> list[str]:
    """A login role that only the workload's identity opens (the `pgaadauth` label names its object
    ID), named as the pod signs in (the workload), with CONNECT on the database, USAGE on the
    schema and the access's privileges on its tables; and no grant beyond the workload's."""
    principal = _principal(view, workload)
    labels = [
        r
        for r in view.plan.of_type(POSTGRES_LABEL)
        if identity.urn in r.property_dependencies.get("label", ())
        or (principal is not None and f"oid={principal}," in str(r.inputs.get("label")))
    ]
    role = pg_plan.workload_role(workload)
    if not any(r.inputs.get("objectName") == role for r in labels):
        return [f"no PostgreSQL role {role!r} signs in as {workload}'s identity"]
    database, _, schema = scope.partition("/")
    schema = schema or pg_plan.DEFAULT_SCHEMA
    grants = [g.inputs for g in view.plan.of_type(POSTGRES_GRANT) if g.inputs.get("role") == role]

    def holds(kind: str, wanted: tuple[str, ...], **where: str) -> bool:
        return any(
            g.get("objectType") == kind
            and set(wanted) <= set(g.get("privileges") or [])
            and all(g.get(k) == v for k, v in where.items())
            for g in grants
        )

    found = []
    if not holds("database", ("CONNECT",), database=database):
        found.append(f"{workload}'s role may not connect to {database}")
    if not holds("schema", ("USAGE",), database=database, schema=schema):
        found.append(f"{workload}'s role may not use schema {database}/{schema}")
    if not holds("table", pg_plan.PRIVILEGES[access], database=database, schema=schema):
        found.append(f"{workload}'s role holds no {access} on the tables of {database}/{schema}")
    return found


def refusals(
    view: ClusterView,
    namespace: str,
    pod: dict[str, Any],
    workload: str,
    storage: tuple[str, str, str] | None,
    topic: tuple[str, str] | None = None,
    cosmos: tuple[str, str] | None = None,
    postgres: tuple[str, str] | None = None,
    reads: tuple[tuple[str, str], ...] = (),
    kafka: ClusterView | None = None,
) -> list[str]:
    """`storage`: (account name, container, access) the workload uses; `reads`: (account name,
    container) it also reads; `kafka`: the cluster whose Kafka it reaches (a site's is its
    region's host), this one unless given."""
    found = []
    spec = pod["spec"]
    account_name = spec.get("serviceAccountName", "default")
    if (pod["metadata"].get("labels") or {}).get(USE_LABEL) != "true":
        found.append(f"the pod is not labelled {USE_LABEL}: \"true\", so no token is injected")
    accounts = [a for a in view.objects(SERVICE_ACCOUNT, namespace) if a["metadata"]["name"] == account_name]
    if not accounts:
        return found + [f"no service account {namespace}/{account_name}"]
    client_id = (accounts[0]["metadata"].get("annotations") or {}).get(CLIENT_ID)
    if client_id != view.plan.outputs["workloadIdentities"].get(workload):
        found.append(f"service account {namespace}/{account_name} names client ID {client_id}, not {workload}'s")
    issuer = view.oidc_issuer_url
    subject = f"system:serviceaccount:{namespace}:{account_name}"
    identities = [r for r in view.plan.of_type(IDENTITY) if r.name == f"workloads-{workload}"]
    if len(identities) != 1:
        return found + [f"no managed identity for workload {workload!r}"]
    identity = identities[0]
    credentials = [
        r.inputs
        for r in view.plan.of_type(FEDERATED_CREDENTIAL)
        if r.inputs["resourceName"] == identity.inputs["resourceName"]
    ]
    if not any(c["subject"] == subject and c["issuer"] == issuer and AUDIENCE in c["audiences"] for c in credentials):
        found.append(f"no federated credential of {workload}'s identity trusts {subject} from {issuer}")
    used = ([storage] if storage is not None else []) + [(account, container, "read") for account, container in reads]
    grants = _grants(view, identity, _principal(view, workload)) if used else []
    for account, container, access in used:
        role = role_id(STORAGE_ROLES[access]).lower()
        wanted = f"/blobServices/default/containers/{container}"
        held = [
            g
            for g in grants
            if g.inputs["scope"].endswith(wanted)
            and f"/storageAccounts/{account}/" in g.inputs["scope"]
            and g.inputs["roleDefinitionId"].lower().endswith(role)
        ]
        if not held:
            found.append(f"{workload}'s identity holds no {STORAGE_ROLES[access]} on {account}/{container}")
    if used:
        broad = [
            g.inputs["scope"]
            for g in grants
            if "/containers/" not in g.inputs["scope"] and "/storageAccounts/" in g.inputs["scope"]
        ]
        if broad:
            found.append(f"{workload}'s identity holds storage roles wider than a container: {broad}")
    if topic is not None:
        found += kafka_refusals(kafka or view, workload, identity, *topic)
    if cosmos is not None:
        found += cosmos_refusals(view, workload, identity, *cosmos)
    if postgres is not None:
        found += postgres_refusals(view, workload, identity, *postgres)
    return found
