"""The golden PostgreSQL client (examples/postgresql-client.yaml): a connection pool that signs in
with the pod's workload identity and keeps working across token expiry.

The server takes no password: each new connection gives an Entra ID token for
`https://ossrdbms-aad.database.windows.net/.default` as its password
(learn.microsoft.com/azure/postgresql, connect-python and security-connect-with-managed-identity).
A token is checked when a connection opens; what an open connection does once its token expires
Microsoft does not document, so the pool retires connections well before (MAX_LIFETIME_SECONDS,
under the token's lifetime of at least an hour) and every new one asks the credential, which
returns its cached token or a new one. Nothing is stored: no password, no token on disk.

Needs psycopg (3.1 or later) with psycopg_pool, and azure-identity.
"""

from __future__ import annotations

import os
import time
from typing import Any

# Tokens for managed identities last 1 to 24 hours; connections are retired after 45 minutes.
MAX_LIFETIME_SECONDS = 45 * 60


def password_for_new_connection(credential: Any, scope: str) -> str:
    """The password of a connection opening now: a token valid for a while yet (the credential
    renews it before it expires, and caches it until then)."""
    return credential.get_token(scope).token


def pool(credential: Any, scope: str) -> Any:
    import psycopg
    from psycopg_pool import ConnectionPool

    class EntraConnection(psycopg.Connection):  # type: ignore[type-arg]
        @classmethod
        def connect(cls, conninfo: str = "", **kwargs: Any) -> Any:  # type: ignore[override]
            kwargs["password"] = password_for_new_connection(credential, scope)
            return super().connect(conninfo, **kwargs)

    # Host, user, database and sslmode come from PGHOST, PGUSER, PGDATABASE and PGSSLMODE.
    return ConnectionPool(
        "", connection_class=EntraConnection, min_size=1, max_size=4, max_lifetime=MAX_LIFETIME_SECONDS
    )


def main() -> None:
    from azure.identity import DefaultAzureCredential

    connections = pool(DefaultAzureCredential(), os.environ["POSTGRES_TOKEN_SCOPE"])
    while True:
        with connections.connection() as connection:
            connection.execute(
                "INSERT INTO experiments (run_id, heartbeat) VALUES (%s, now())", (os.environ.get("RUN_ID", "local"),)
            )
        time.sleep(60)


if __name__ == "__main__":
    main()
