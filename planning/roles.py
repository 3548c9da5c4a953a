"""Built-in Azure role definition IDs and deterministic role-assignment names.

Role definition GUIDs are the same in every tenant
(learn.microsoft.com/azure/role-based-access-control/built-in-roles).
"""

from __future__ import annotations

import uuid

BUILT_IN_ROLES: dict[str, str] = {
    "Owner": "8e3af657-a8ff-443c-a75c-2fe8c4bcb635",
    "Contributor": "b24988ac-6180-42a0-ab88-20f7382dd24c",
    "Reader": "acdd72a7-3385-48ef-bd42-f606fba81ae7",
    "Network Contributor": "4d97b98b-1d4f-4787-a291-c67834d212e7",
    "Managed Identity Operator": "f1a07417-d97a-45cb-824c-7a7467783830",
    "Private DNS Zone Contributor": "b12aa53e-6015-4669-85d0-8515ebb3ae7f",
    "AcrPull": "7f951dda-4ed3-4680-a7ca-43fe172d538d",
    "Storage Blob Data Reader": "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",
    "Storage Blob Data Contributor": "ba92f5b4-2d11-453d-a403-e96b0029c9fe",
    "Key Vault Secrets User": "4633458b-17de-408a-b874-0445c86b69e6",
    "Azure Kubernetes Service RBAC Cluster Admin": "b1ff04bb-8a4e-4dc4-8eb5-8693973ce19b",
    "Azure Kubernetes Service RBAC Admin": "3498e952-d568-435e-9b2c-8d77e338d7f7",
    "Azure Kubernetes Service RBAC Writer": "a7ffa36f-339b-4b5c-8bdf-e2c188b2c0eb",
    "Azure Kubernetes Service RBAC Reader": "7f6c6a51-bcf8-42ba-9220-52d62157d7db",
    "Azure Kubernetes Service Cluster User Role": "4abbcc35-e782-43d8-92c5-2d3f1bd2253f",
    "Azure Event Hubs Data Owner": "f526a384-b230-433a-b45c-95f59c4a2dec",
    "Azure Event Hubs Data Sender": "2b629674-e913-4c01-ae53-ef4638d8f975",
    "Azure Event Hubs Data Receiver": "a638d3c7-ab3a-418d-83e6-5f17a39d4fde",
    # Not in the shared facts table; learn.microsoft.com/azure/key-vault/general/rbac-guide.
    # Storage accounts wrap and unwrap their customer-managed key with it.
    "Key Vault Crypto Service Encryption User": "e147488a-f6f5-4113-8e2d-b22465e65bf6",
    # Not in the shared facts table either (same source): people who create and rotate secrets.
    "Key Vault Secrets Officer": "b86a8fe4-44ce-4948-aee5-eccb2c155cd7",
}

# A fixed namespace so that the same (scope, principal, role) always yields the same name.
_ASSIGNMENT_NAMESPACE = uuid.UUID("6f1b7c1e-3c53-4d6e-9a55-2a8d0e8b7a10")


def role_id(role: str) -> str:
    """The GUID of a built-in role; a KeyError names roles this module does not know."""
    return BUILT_IN_ROLES[role]


def role_definition_resource_id(subscription_id: str, role: str) -> str:
    return (
        f"/subscriptions/{subscription_id}/providers/Microsoft.Authorization"
        f"/roleDefinitions/{role_id(role)}"
    )


def scope_subscription(scope: str) -> str | None:
    """The subscription a scope (`/subscriptions/<id>/...`) lies in, if it names one."""
    parts = scope.strip("/").split("/")
    return parts[1] if len(parts) > 1 and parts[0].lower() == "subscriptions" else None


def assignment_name(scope_key: str, principal_key: str, role: str) -> str:
    """A role assignment's GUID name, stable across runs so a re-run never replaces it.

    The keys are logical names chosen by the program (e.g. "dev/eus2/subnet/nodes"), not
    resource IDs, which are unknown until the resources exist.
    """
    return str(uuid.uuid5(_ASSIGNMENT_NAMESPACE, f"{scope_key}|{principal_key}|{role_id(role)}"))
