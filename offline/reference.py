"""The shared reference folder: upstream CRDs and Helm chart defaults the tests check against.

One setting finds it: the SHARED_DIR environment variable, default `../shared` beside the
repository. `reference.lock` pins every file by sha256 with its upstream URL; `make schemas`
(`python -m offline.reference`) verifies the files present and downloads missing ones.
"""

from __future__ import annotations

import hashlib
import os
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
LOCK_FILE = PROJECT_ROOT / "reference.lock"


def shared_dir() -> Path:
    configured = Path(os.environ.get("SHARED_DIR", "../shared"))
    return configured if configured.is_absolute() else (PROJECT_ROOT / configured).resolve()


@dataclass(frozen=True)
class PinnedFile:
    sha256: str
    path: str  # inside the shared folder
    url: str


def pinned_files() -> list[PinnedFile]:
    entries = []
    for line in LOCK_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            sha256, path, url = line.split()
            entries.append(PinnedFile(sha256, path, url))
    return entries


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class ReferenceError(Exception):
    pass


def reference_file(relative: str) -> Path:
    """A pinned reference file, verified; a missing or altered file is an error, never a skip."""
    pins = {pin.path: pin for pin in pinned_files()}
    if relative not in pins:
        raise ReferenceError(f"{relative} is not pinned in reference.lock")
    path = shared_dir() / relative
    if not path.is_file():
        raise ReferenceError(f"{path} is missing: run `make schemas` (downloads it from {pins[relative].url})")
    if sha256_of(path) != pins[relative].sha256:
        raise ReferenceError(f"{path} does not match the sha256 pinned in reference.lock")
    return path


def sync(folder: Path) -> list[str]:
    """Verify every pinned file under `folder`, downloading the missing ones. Returns problems."""
    problems = []
    for pin in pinned_files():
        path = folder / pin.path
        if not path.is_file():
            try:
                with urllib.request.urlopen(pin.url, timeout=60) as response:
                    data = response.read()
            except OSError as error:
                problems.append(f"{pin.path}: download from {pin.url} failed ({error})")
                continue
            if hashlib.sha256(data).hexdigest() != pin.sha256:
                problems.append(f"{pin.path}: {pin.url} no longer serves the pinned bytes (sha256 differs)")
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            print(f"downloaded {pin.path}")
        elif sha256_of(path) != pin.sha256:
            problems.append(f"{path}: sha256 differs from reference.lock")
    return problems


def main() -> int:
    folder = shared_dir()
    if not folder.is_dir():
        print(
            f"{folder} does not exist: put the shared reference folder beside the repository or set "
            "SHARED_DIR; downloading the pinned files there instead",
            file=sys.stderr,
        )
    problems = sync(folder)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not problems:
        print(f"{len(pinned_files())} reference files verified in {folder}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())


def facts_table(heading: str) -> list[dict[str, str]]:
    """The Markdown table under `## <heading>` in the shared Azure facts page, as rows.

    Tests check the program against these facts (role IDs, Private Link zones) rather than
    against the program's own copies of them.
    """
    path = shared_dir() / "reference" / "azure-facts.md"
    if not path.is_file():
        raise ReferenceError(f"{path} is missing: the shared reference folder is set by SHARED_DIR")
    lines = path.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("## ") and heading in line), None)
    if start is None:
        raise ReferenceError(f"no section {heading!r} in {path}")
    table = []
    for line in lines[start + 1 :]:
        if line.startswith("## "):
            break
        if line.startswith("|"):
            table.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    header, rows = table[0], [row for row in table[1:] if not set("".join(row)) <= set("-: ")]
    return [dict(zip(header, row, strict=False)) for row in rows]
