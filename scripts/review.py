#!/usr/bin/env python3
"""The pull-request review, offline: what the change does to every stack, at a glance.

    python scripts/review.py --base origin/main [--stack prod ...] [--markdown out/review.md]
    python scripts/review.py                     # the head alone: plans, policies, capacity, cost

With `--base`, the base commit is checked out beside this one (a git worktree), previewed with its
own code, engine and packs (and its own venv when its requirements differ), at the same time as
the head on the other core, and the two are compared (offline/plandiff.py): resources created,
updated, replaced and deleted per unit stack, predicted replacements of stateful or protected
resources as findings, policy results, enforcement levels and waivers, capacity and cost, and a
diagram of each environment. Writes the Markdown report (`--markdown`, the PR comment's source)
and the full report (`--full`, the job summary and artifact).

Exit 0 when the head previews, passes its mandatory policies and has no finding (or the findings
are accepted: `--accept-findings`, which the pull-request workflow passes when a maintainer labels
the pull request `accept-replacement`); 1 otherwise; 2 on usage errors (an unknown base ref).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from offline.plandiff import diff_sides
from offline.review_report import Side, render

ROOT = Path(__file__).resolve().parent.parent

# What decides a checkout's Python packages: a base whose files match reuses this venv.
REQUIREMENTS = ("requirements.txt", "requirements-dev.txt", "constraints.txt")
VENVS = Path(os.environ.get("REVIEW_VENVS", Path.home() / ".cache" / "platform-review" / "venvs"))


def _git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def requirements_digest(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in REQUIREMENTS:
        digest.update(name.encode() + b"\0" + files.get(name, b"") + b"\0")
    return digest.hexdigest()[:16]


def _files_at(commit: str) -> dict[str, bytes]:
    found = {}
    for name in REQUIREMENTS:
        shown = subprocess.run(["git", "show", f"{commit}:{name}"], cwd=ROOT, capture_output=True)
        if shown.returncode == 0:
            found[name] = shown.stdout
    return found


def base_python(commit: str, log: list[str]) -> str:
    """This interpreter when the base pins the same packages; else a venv of the base's pins
    (kept under REVIEW_VENVS by digest, so the next review reuses it)."""
    head = {name: (ROOT / name).read_bytes() for name in REQUIREMENTS if (ROOT / name).exists()}
    base = _files_at(commit)
    if requirements_digest(base) == requirements_digest(head):
        log.append("base: same pinned packages, this venv")
        return sys.executable
    venv = VENVS / requirements_digest(base)
    python = venv / "bin" / "python"
    if not (venv / ".installed").exists():
        log.append(f"base: its own pinned packages, installing a venv in {venv}")
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        with tempfile.TemporaryDirectory() as folder:
            for name, content in base.items():
                (Path(folder) / name).write_bytes(content)
            pins = ["-c", str(Path(folder) / "constraints.txt")] if "constraints.txt" in base else []
            subprocess.run(
                [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
                + ["-r", str(Path(folder) / "requirements-dev.txt"), *pins],
                check=True,
            )
        (venv / ".installed").touch()
    else:
        log.append(f"base: its own pinned packages, the venv in {venv}")
    return str(python)


def run_sides(sides: list[tuple[str, str, Path, Path]], stacks: list[str]) -> dict[str, float]:
    """Each side's preview in its own process, all at once (a side per core)."""
    script = str(ROOT / "scripts" / "review_side.py")
    extra = [arg for stack in stacks for arg in ("--stack", stack)]
    started = time.perf_counter()
    running = []
    for label, python, root, out in sides:
        command = [python, script, "--root", str(root), "--out", str(out), *extra]
        # Errors to a file, not a pipe: a side that writes much would block while the other runs.
        log = out.with_suffix(".log").open("w")
        running.append(
            (label, subprocess.Popen(command, cwd=root, stderr=log, stdout=log), log, out.with_suffix(".log"))
        )
    seconds = {}
    for label, process, log, path in running:
        process.wait()
        log.close()
        seconds[label] = time.perf_counter() - started
        errors = path.read_text().strip()
        if process.returncode != 0 and errors:
            sys.stderr.write(f"{label}: {errors[-4000:]}\n")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", help="the git ref to compare with (the pull request's base)")
    parser.add_argument(
        "--stack",
        action="append",
        default=[],
        help="environment, or delivery (the delivery project); repeatable; default: all",
    )
    parser.add_argument("--markdown", default="out/review.md", help="the comment: headline and per-stack details")
    parser.add_argument("--full", default="out/review-full.md", help="the whole report (job summary, artifact)")
    parser.add_argument("--json", default="out/review.json", help="the comparison, machine-readable")
    parser.add_argument(
        "--accept-findings",
        action="store_true",
        help="replacements and deletions of stateful resources are deliberate (a maintainer's label): report, pass",
    )
    args = parser.parse_args(argv)

    log: list[str] = []
    work = Path(tempfile.mkdtemp(prefix="platform-review-"))
    head_sha = _git("rev-parse", "HEAD")
    sides = [("head", sys.executable, ROOT, work / "head.json")]
    base_sha = None
    worktree = work / "base"
    try:
        if args.base:
            try:
                base_sha = _git("rev-parse", "--verify", "--quiet", f"{args.base}^{{commit}}")
            except subprocess.CalledProcessError:
                print(
                    f"error: {args.base!r} is not a commit here (fetch it first: git fetch origin <ref>)",
                    file=sys.stderr,
                )
                return 2
            _git("worktree", "add", "--detach", "--force", str(worktree), base_sha)
            sides.insert(0, ("base", base_python(base_sha, log), worktree, work / "base.json"))
        seconds = run_sides(sides, args.stack)
        documents = {}
        for label, _, _, out in sides:
            documents[label] = (
                json.loads(out.read_text()) if out.exists() else {"error": "no output", "environments": {}}
            )
    finally:
        if args.base and worktree.exists():
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)

    head = Side("head", head_sha, documents["head"])
    base = Side("base", base_sha, documents["base"]) if base_sha else None
    diffs = diff_sides(base.document if base else {"environments": {}}, head.document) if base else None
    timing = ", ".join(f"{label} {value:.1f}s" for label, value in seconds.items())
    report = render(
        head, base, diffs, notes=log + [f"previewed in parallel: {timing}"], accept_findings=args.accept_findings
    )
    for path, text in ((args.markdown, report.comment), (args.full, report.full)):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    Path(args.json).write_text(json.dumps(report.summary, indent=2, sort_keys=True))
    print(report.headline)
    for note in log:
        print(note)
    print(f"previewed in parallel: {timing}; report in {args.markdown} (full: {args.full})")
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(main())
