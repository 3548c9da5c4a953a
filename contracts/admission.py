"""Admission: would the API server and Gatekeeper let this pod be created in its namespace?

Three independent gates, each as the cluster has them in the plan:
- Pod Security admission at the namespace's `enforce` level (contracts/pod_security.py);
- every ValidatingAdmissionPolicy whose binding selects the namespace, its CEL run by
  cel-python with `object` (the pod) and `namespaceObject` (the namespace) as the API server
  binds them. Bindings that only warn (dev's Audit) still count: a golden workload must pass
  cleanly, and a twin's refusal says whether the cluster would deny or warn;
- Azure Policy's pod security definitions as assigned on the cluster: the baseline initiative
  (its fixed values, facts/azure_policy.py) minus its excluded namespaces, and definitions
  assigned one by one to some namespaces with their own parameters. Their rules are read from
  the definitions' parameters, not executed (the Gatekeeper templates' Rego is v0 syntax; see
  the shared reference folder's README).
"""

from __future__ import annotations

import functools
from typing import Any

from contracts import pod_security
from contracts.cluster import POLICY_ASSIGNMENT, VAP, VAP_BINDING, ClusterView, selector_matches
from facts import azure_policy
from planning.admission import JOB_CONTROLLER
from planning.pod_security import ENFORCE


def pod_security_refusals(view: ClusterView, namespace: str, pod: dict[str, Any]) -> list[str]:
    level = view.namespace_labels(namespace).get(ENFORCE, "privileged")
    return [
        f"Pod Security {level}: {control}: {'; '.join(problems)}"
        for control, problems in pod_security.evaluate(pod, level).items()
    ]


def _cel_environment():
    import celpy

    return celpy, celpy.Environment()


@functools.cache
def cel_program(expression: str) -> Any:
    """A compiled CEL program (parsing is most of cel-python's cost; a program holds no state)."""
    _, env = _cel_environment()
    return env.program(env.compile(expression))


# Who creates the pods of each kind of workload (kube-controller-manager's controllers sign in
# with their own service accounts); a bare pod is created by its user.
CREATORS = {"Job": JOB_CONTROLLER, "Deployment": "system:serviceaccount:kube-system:replicaset-controller"}


def vap_refusals(
    view: ClusterView, namespace: str, pod: dict[str, Any], owner: dict[str, Any] | None = None
) -> list[str]:
    """The pod (created by its owner's controller) and the owner itself, against every bound policy."""
    celpy, _ = _cel_environment()
    labels = view.namespace_labels(namespace)
    policies = {p["metadata"]["name"]: p for p in view.objects(VAP)}
    namespace_object = celpy.json_to_cel({"metadata": {"name": namespace, "labels": labels}})
    creator = CREATORS.get(str((owner or {}).get("kind")), "team-member@example.com")
    subjects = {"pods": (pod, creator), "jobs": (owner, "team-member@example.com")}
    refusals = []
    for binding in view.objects(VAP_BINDING):
        spec = binding["spec"]
        # A binding without matchResources applies everywhere; its policy says to what.
        selector = (spec.get("matchResources") or {}).get("namespaceSelector", {})
        if not selector_matches(selector, labels):
            continue
        policy = policies[spec["policyName"]]["spec"]
        resources = {r for rule in policy["matchConstraints"]["resourceRules"] for r in rule["resources"]}
        for resource, (subject, user) in subjects.items():
            if resource not in resources or subject is None or (resource == "jobs" and subject["kind"] != "Job"):
                continue
            activation: dict[str, Any] = {
                "object": celpy.json_to_cel(subject),
                "namespaceObject": namespace_object,
                "request": celpy.json_to_cel({"operation": "CREATE", "userInfo": {"username": user}}),
            }
            variables = {}
            for variable in policy.get("variables") or []:
                program = cel_program(variable["expression"])
                variables[celpy.celtypes.StringType(variable["name"])] = program.evaluate(activation)
            activation["variables"] = celpy.celtypes.MapType(variables)
            action = "denies" if "Deny" in spec["validationActions"] else "warns"
            for validation in policy["validations"]:
                if not cel_program(validation["expression"]).evaluate(activation):
                    refusals.append(f"{spec['policyName']} {action}: {validation['message']}")
    return refusals


def _azure_policy_checks(pod: dict[str, Any], parameters: dict[str, Any], definition: str) -> list[str]:
    """The five baseline definitions' rules, from their parameters."""
    spec = pod.get("spec") or {}
    containers = [c for field in ("initContainers", "containers", "ephemeralContainers") for c in spec.get(field) or []]
    found = []
    if definition == "NoPrivilegedContainers":
        found += [
            f"container {c['name']!r} is privileged"
            for c in containers
            if (c.get("securityContext") or {}).get("privileged")
        ]
    elif definition == "BlockUsingHostNetwork":
        if spec.get("hostNetwork") and not parameters.get("allowHostNetwork"):
            found.append("the pod uses the host network")
        allowed = set(parameters.get("allowedHostPorts") or [])
        low, high = parameters.get("minPort", 0), parameters.get("maxPort", 0)
        for c in containers:
            for port in c.get("ports") or []:
                host = port.get("hostPort")
                if host and host not in allowed and not (low <= host <= high and high > 0):
                    found.append(f"container {c['name']!r} binds host port {host}")
    elif definition == "BlockUsingHostProcessIDAndIPC":
        found += [f"the pod sets {field}" for field in ("hostPID", "hostIPC") if spec.get(field)]
    elif definition == "ContainerCapabilities":
        allowed = {c.lower() for c in parameters.get("allowedCapabilities") or []}
        for c in containers:
            added = {a.lower() for a in ((c.get("securityContext") or {}).get("capabilities") or {}).get("add") or []}
            if "*" not in allowed and added - allowed:
                found.append(f"container {c['name']!r} adds {', '.join(sorted(added - allowed)).upper()}")
    elif definition == "NoHostPathVolume":
        prefixes = [p["pathPrefix"] for p in (parameters.get("allowedHostPaths") or {}).get("paths") or []]
        for volume in spec.get("volumes") or []:
            path = (volume.get("hostPath") or {}).get("path")
            if path is not None and not any(path.startswith(prefix) for prefix in prefixes):
                found.append(f"volume {volume.get('name')!r} mounts host path {path}")
    return found


def _values(parameters: dict[str, Any]) -> dict[str, Any]:
    return {key: value["value"] for key, value in (parameters or {}).items()}


def azure_policy_refusals(view: ClusterView, namespace: str, pod: dict[str, Any]) -> list[str]:
    cluster_id_suffix = view.policy_scope_suffix
    by_guid = {d.guid: d for d in azure_policy.BASELINE_DEFINITIONS}
    refusals = []
    for resource in view.plan.of_type(POLICY_ASSIGNMENT):
        assignment = resource.inputs
        if not str(assignment.get("scope", "")).endswith(cluster_id_suffix):
            continue
        parameters = _values(assignment.get("parameters") or {})
        if namespace in parameters.get("excludedNamespaces", azure_policy.AKS_SYSTEM_NAMESPACES):
            continue
        if parameters.get("namespaces") and namespace not in parameters["namespaces"]:
            continue
        definition_id = assignment["policyDefinitionId"]
        guid = definition_id.rsplit("/", 1)[-1]
        if definition_id == azure_policy.initiative_id("baseline"):
            checks = [(d.reference_id, d.parameters) for d in azure_policy.BASELINE_DEFINITIONS]
        elif guid in by_guid:
            checks = [(by_guid[guid].reference_id, parameters)]
        else:
            raise AssertionError(f"{resource.name}: the contract does not know what {definition_id} checks")
        effect = parameters.get("effect", "Audit")
        for reference_id, values in checks:
            refusals += [
                f"Azure Policy {reference_id} ({effect}): {problem}"
                for problem in _azure_policy_checks(pod, values, reference_id)
            ]
    return refusals


def refusals(view: ClusterView, namespace: str, pod: dict[str, Any], owner: dict[str, Any] | None = None) -> list[str]:
    return (
        pod_security_refusals(view, namespace, pod)
        + vap_refusals(view, namespace, pod, owner)
        + azure_policy_refusals(view, namespace, pod)
    )
