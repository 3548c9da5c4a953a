"""Contracts: would a cluster of a stack admit, place, queue, connect and sign in a workload?

Each layer reads what the offline preview says the program deploys (contracts/cluster.py
gathers one cluster's objects from a Plan) and answers for one pod with a list of refusals,
each naming the layer and why:

- admission (contracts/admission.py): the namespace's Pod Security level (evaluated from the
  control table, contracts/pod_security.py), the platform's ValidatingAdmissionPolicies
  (their CEL, run by cel-python) and Azure Policy's pod security definitions as assigned;
- scheduling (contracts/scheduling.py): the node pools whose labels and taints let the pod on,
  and whether its requests fit a node's allocatable resources;
- queueing (contracts/queueing.py): its LocalQueue, ClusterQueue, flavor quota and Kueue's webhook;
- reach (contracts/reach.py): network policies (Kubernetes and Cilium FQDN) and the firewall;
- identity (contracts/identity.py): service account, federated credential and data-role grants.

The golden workloads (examples/) and their negative twins run through every layer in
tests/test_contracts.py. These modules are test support: only the tests import them.
"""
