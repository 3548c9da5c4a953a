"""What the read-only plan identity may read in one cluster beyond its subscription-wide role.

Its custom role (scripts/bootstrap) reads every kind the program manages except Secrets. A
preview reads a few Secrets (Kafka's CA certificates, copied to clients), and a refresh reads
Helm's release records, which Helm keeps as Secrets in the release's namespace. Those are the
platform's own namespaces; the cluster layer's plan identity gets the custom secret-reader role
on each of them, the tenants layer's on the `kafka` namespace (the CA certificates and
MirrorMaker's copies its previews read) (an Azure RBAC assignment scoped to `<cluster>/namespaces/<name>`,
learn.microsoft.com/azure/aks/manage-azure-rbac), on a MultiKueue dispatcher's `kueue-system`
too (the kubeconfig Secrets it writes), and never on team namespaces. A plan identity can
therefore read the dispatchers' worker tokens, as it reads Helm's records: docs/resilience.md,
"Jobs", states the risk.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from components.rbac import assign_role
from stackconfig.model import PlanIdentityConfig


@dataclass(frozen=True)
class PlanAccessArgs:
    environment: str
    cluster_key: str
    cluster_id: pulumi.Input[str]
    namespaces: list[str]
    plan_identity: PlanIdentityConfig
    subscription_id: pulumi.Input[str]
    # Where previews of the tenants' stack read Secrets in this cluster (Kafka's namespace).
    tenants_namespaces: list[str] = field(default_factory=list)


class PlanAccess(pulumi.ComponentResource):
    def __init__(self, name: str, args: PlanAccessArgs, opts: pulumi.ResourceOptions | None = None):
        super().__init__("platform:identity:PlanAccess", name, None, opts)
        identity = args.plan_identity
        for namespace in args.namespaces:
            assign_role(
                f"{name}-secrets-{namespace}",
                role=identity.secret_reader_role_id,
                scope=pulumi.Output.concat(args.cluster_id, "/namespaces/", namespace),
                scope_key=f"{args.environment}/{args.cluster_key}/namespaces/{namespace}",
                principal_id=identity.principal_object_id,
                principal_key=f"{args.environment}/plan",
                subscription_id=args.subscription_id,
                parent=self,
            )
        tenants = identity.tenants_principal_object_id
        for namespace in args.tenants_namespaces if tenants is not None else []:
            assign_role(
                f"{name}-tenants-secrets-{namespace}",
                role=identity.secret_reader_role_id,
                scope=pulumi.Output.concat(args.cluster_id, "/namespaces/", namespace),
                scope_key=f"{args.environment}/{args.cluster_key}/namespaces/{namespace}",
                principal_id=str(tenants),
                principal_key=f"{args.environment}/plan-tenants",
                subscription_id=args.subscription_id,
                parent=self,
            )
        self.register_outputs({})
