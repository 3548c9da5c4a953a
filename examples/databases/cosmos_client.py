"""The golden Cosmos DB client (examples/cosmos-client.yaml): records training runs.

It signs in with the pod's workload identity: DefaultAzureCredential finds the token the AKS
webhook projects (AZURE_FEDERATED_TOKEN_FILE) and trades it for an Entra ID token for the
account (`https://<account>.documents.azure.com/.default`); the SDK asks for a new one before
it expires, so a long-running client never restarts for a token. No key is used or exists.

Needs azure-cosmos (4.3 or later) and azure-identity.
"""

from __future__ import annotations

import os
import time
import uuid


def preferred_regions(value: str) -> list[str]:
    """`COSMOS_PREFERRED_REGIONS`: display names, the cluster's region first."""
    return [region.strip() for region in value.split(",") if region.strip()]


def main() -> None:
    from azure.cosmos import CosmosClient
    from azure.identity import DefaultAzureCredential

    client = CosmosClient(
        os.environ["COSMOS_ENDPOINT"],
        credential=DefaultAzureCredential(),
        preferred_locations=preferred_regions(os.environ.get("COSMOS_PREFERRED_REGIONS", "")),
    )
    container = client.get_database_client(os.environ["COSMOS_DATABASE"]).get_container_client(
        os.environ["COSMOS_CONTAINER"]
    )
    run_id = os.environ.get("RUN_ID", str(uuid.uuid4()))
    while True:
        container.upsert_item({"id": run_id, "runId": run_id, "heartbeat": time.time()})
        time.sleep(60)


if __name__ == "__main__":
    main()
