"""Azure's multi-tenant service domains: every customer's endpoints share them.

A firewall or FQDN rule for `*.<domain>` lets a node reach any tenant's storage account, vault
or registry, a path for data around the private data plane. Source: MicrosoftDocs/azure-docs
`articles/private-link/private-endpoint-dns.md`, "Azure services DNS zone configuration": the
public DNS zones that private endpoints override (blob.core.windows.net, vault.azure.net, ...).
"""

from __future__ import annotations

MULTI_TENANT_DOMAINS = (
    "blob.core.windows.net",
    "dfs.core.windows.net",
    "file.core.windows.net",
    "queue.core.windows.net",
    "table.core.windows.net",
    "web.core.windows.net",
    "vault.azure.net",
    "managedhsm.azure.net",
    "azurecr.io",
    "servicebus.windows.net",
    "database.windows.net",
    "documents.azure.com",
    "azurewebsites.net",
    "cognitiveservices.azure.com",
    "openai.azure.com",
    "search.windows.net",
    "azuredatabricks.net",
    "azure-api.net",
    "azurefd.net",
    "cloudapp.azure.com",
    "azurestaticapps.net",
    "redis.cache.windows.net",
    "postgres.database.azure.com",
    "mysql.database.azure.com",
    "eventgrid.azure.net",
    "azure-devices.net",
    "datafactory.azure.net",
    "monitor.azure.com",
)


def opened_domain(fqdn: str) -> str | None:
    """The multi-tenant domain a wildcard `*.<domain>` opens whole, or None."""
    if not fqdn.startswith("*."):
        return None
    domain = fqdn[2:].lower()
    for tenant_domain in MULTI_TENANT_DOMAINS:
        if tenant_domain == domain or tenant_domain.endswith("." + domain):
            return tenant_domain
    return None
