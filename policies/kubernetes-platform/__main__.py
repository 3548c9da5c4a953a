"""The kubernetes-platform CrossGuard pack: `pulumi preview --policy-pack policies/kubernetes-platform`.

Constructing PolicyPack starts the analyzer server and blocks; the policies themselves live in
`kubernetes_guardrails/`, where the offline review and the tests import them.
"""

from kubernetes_guardrails import PACK_NAME, POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

# Mandatory unless an environment's config file (config/<env>.json) says otherwise.
PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=EnforcementLevel.MANDATORY)
