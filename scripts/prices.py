#!/usr/bin/env python3
"""Refresh facts/retail_prices.json from Azure's Retail Prices API, for exactly the meters the
platform's environments use (offline/cost.py decides them from each environment's plan).

    python scripts/prices.py            # every environment's meters; writes the snapshot
    python scripts/prices.py --check    # list the meters and what the snapshot holds; no network

The API needs no authentication (learn.microsoft.com/rest/api/cost-management/retail-prices/
azure-retail-prices): `$filter` with `eq` and `and` (values case sensitive in api-version
2023-01-01-preview), pages followed by `NextPageLink`. Records are kept verbatim; a meter that
matches no record, or more than one, is reported and left unpriced (the report says so), and the
script exits 1 so the scheduled workflow's pull request shows it. .github/workflows/prices.yml
runs it weekly and opens a pull request with the new snapshot.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from offline.cost import SNAPSHOT, Meter, capacity, load_snapshot, meters

ROOT = Path(__file__).resolve().parent.parent

API = "https://prices.azure.com/api/retail/prices"
API_VERSION = "2023-01-01-preview"


def platform_meters() -> list[Meter]:
    """Every meter of every environment's offline plan."""
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "plans.json"
        subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "review_side.py"), "--root", str(ROOT), "--out", str(out)],
            check=True,
        )
        document = json.loads(out.read_text())
    items = []
    for environment in document["environments"].values():
        resources = [r for stack in environment.get("stacks", {}).values() for r in stack.get("resources", [])]
        items += capacity(resources).items
    return meters(items)


def fetch(meter: Meter) -> list[dict]:
    query = urllib.parse.urlencode({"api-version": API_VERSION, "currencyCode": "USD", "$filter": meter.api_filter()})
    url: str | None = f"{API}?{query}"
    records: list[dict] = []
    while url:
        with urllib.request.urlopen(url, timeout=60) as response:
            page = json.load(response)
        records += page.get("Items", [])
        url = page.get("NextPageLink")
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="list meters against the snapshot, no network")
    args = parser.parse_args(argv)
    wanted = platform_meters()
    if args.check:
        snapshot = load_snapshot()
        missing = [m for m in wanted if snapshot.price(m) is None]
        print(
            f"{len(wanted)} meters; the snapshot of {snapshot.fetched or 'never'} prices {len(wanted) - len(missing)}"
        )
        for meter in missing:
            print(f"  unpriced: {meter.key}")
        return 0
    kept: list[dict] = []
    problems = []
    for meter in wanted:
        matching = [r for r in fetch(meter) if meter.accepts(r)]
        if len(matching) != 1:
            problems.append(f"{meter.key}: {len(matching)} matching records (filter: {meter.api_filter()})")
        kept += [r for r in matching if r not in kept]
    items = sorted(
        kept,
        key=lambda r: (r.get("serviceName", ""), r.get("armRegionName", ""), r.get("meterId", ""), r.get("skuId", "")),
    )
    previous = load_snapshot()
    # Unchanged prices keep the snapshot as it is: no weekly pull request for a new date alone.
    fetched = (
        previous.fetched if list(previous.records) == items else datetime.datetime.now(datetime.UTC).date().isoformat()
    )
    document = {
        "source": f"{API}?api-version={API_VERSION}",
        "currency": "USD",
        "fetched": fetched,
        "items": items,
    }
    SNAPSHOT.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
    print(f"{len(kept)} records for {len(wanted)} meters written to {SNAPSHOT.relative_to(ROOT)}")
    for problem in problems:
        print(f"  unpriced: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
