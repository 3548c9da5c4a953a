"""Entry point for `pulumi up` of the delivery project (run from delivery/ by an administrator):
the state backend, and per environment its identities, custom roles and grants."""

import sys
from pathlib import Path

# The repository's packages (planning/, components/, stackconfig/, validation/) beside this folder.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from components.delivery.program import deliver, load_delivery

deliver(*load_delivery())
