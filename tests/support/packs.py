"""Loading one module of a policy pack as the pack loads it (its own folder on the path)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

POLICIES = Path(__file__).resolve().parents[2] / "policies"


def pack_module(pack: str, package: str, module: str) -> ModuleType:
    """`policies/<pack>/<package>/<module>.py`, imported under a name of its own."""
    if str(POLICIES / pack) not in sys.path:
        sys.path.insert(0, str(POLICIES / pack))
    spec = importlib.util.spec_from_file_location(f"{package}_{module}", POLICIES / pack / package / f"{module}.py")
    assert spec is not None and spec.loader is not None
    loaded = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(loaded)
    return loaded
