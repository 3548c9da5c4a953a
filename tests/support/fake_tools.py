"""What the fake `az` and `gh` of tests/support/fake_cli.py answer, as plain functions of the
arguments and the tenant document (standard library only: the fake executables import this
module without site packages, and the doctor's tests call it in process)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

Answer = tuple[int, str, str]  # exit code, stdout, stderr


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args else None


def _fail(reason: str, code: str, message: str, exit_code: int = 1) -> Answer:
    return exit_code, "", "ERROR: " + reason + "(" + json.dumps({"error": {"code": code, "message": message}}) + ")\n"


def answer_az(args: list[str], tenant: dict[str, Any]) -> Answer:
    if args[:2] == ["account", "show"]:
        if tenant.get("az_account") is None:
            return 1, "", "ERROR: Please run 'az login' to setup account.\n"
        return 0, json.dumps(tenant["az_account"]) + "\n", ""
    if args[:1] == ["rest"] and (_option(args, "--method") or "").lower() == "get":
        url = urlsplit(_option(args, "--url") or "")
        query = [(k, v) for k, v in parse_qsl(url.query) if k != "api-version"]
        key = url.path.lower() + ("?" + "&".join(k + "=" + v for k, v in query) if query else "")
        if key in tenant.get("arm_denied", []):
            return _fail(
                "Forbidden",
                "AuthorizationFailed",
                "The client does not have authorization to perform action over scope " + key,
            )
        if key not in tenant.get("arm", {}):
            return _fail("Not Found", "ResourceNotFound", "The Resource " + key + " was not found.")
        return 0, json.dumps(tenant["arm"][key]) + "\n", ""
    if args[:2] == ["vm", "list-usage"]:
        key = (_option(args, "--subscription") or "").lower() + "/" + (_option(args, "--location") or "")
        if key not in tenant.get("usage", {}):
            return 1, "", "ERROR: (NoRegisteredProviderFound) No registered resource provider found for location\n"
        return 0, json.dumps(tenant["usage"][key]) + "\n", ""
    return 2, "", "fake az: not a read this fake knows: " + " ".join(args) + "\n"


def answer_gh(args: list[str], tenant: dict[str, Any]) -> Answer:
    if args[:2] == ["auth", "status"]:
        if not tenant.get("gh_signed_in"):
            return 1, "", "You are not logged into any GitHub hosts. To log in, run: gh auth login\n"
        return 0, "github.com\n  Logged in to github.com account someone (keyring)\n", ""
    if args[:1] == ["api"] and "--method" in args and args[args.index("--method") + 1] == "GET":
        url = urlsplit(args[-1])
        query = [(k, v) for k, v in parse_qsl(url.query) if k not in ("per_page", "page", "includes_parents")]
        key = url.path + ("?" + "&".join(k + "=" + v for k, v in query) if query else "")
        if key in tenant.get("gh_denied", []):
            body = json.dumps({"message": "Must have admin rights to Repository.", "status": "403"}) + "\n"
            return 1, body, "gh: Must have admin rights to Repository. (HTTP 403)\n"
        if key not in tenant.get("gh", {}):
            return 1, json.dumps({"message": "Not Found", "status": "404"}) + "\n", "gh: Not Found (HTTP 404)\n"
        return 0, json.dumps(tenant["gh"][key]) + "\n", ""
    return 2, "", "fake gh: not a read this fake knows: " + " ".join(args) + "\n"


ANSWERS = {"az": answer_az, "gh": answer_gh}
