"""The delivery CrossGuard pack: `pulumi preview -C delivery --policy-pack policies/delivery`.

Constructing PolicyPack starts the analyzer server and blocks; the policies themselves live in
`delivery_guardrails/`, where the offline review and the tests import them.
"""

from delivery_guardrails import PACK_NAME, POLICIES
from pulumi_policy import EnforcementLevel, PolicyPack

# Mandatory unless the config file (config/delivery.json) says otherwise.
PolicyPack(name=PACK_NAME, policies=POLICIES, enforcement_level=EnforcementLevel.MANDATORY)
