"""Make an AKS user kubeconfig log in without a person at the keyboard.

`listClusterUserCredential` (format `exec`) returns a kubeconfig whose kubelogin exec
block uses `--login devicecode`, which waits for a browser. CI and the Kubernetes provider
need a non-interactive mode instead: `azurecli` (reuses `az login`) or `workloadidentity`
(a federated token from AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_FEDERATED_TOKEN_FILE).
This mirrors what `kubelogin convert-kubeconfig -l <mode>` does.
"""

from __future__ import annotations

import yaml

# The AKS AAD server application, the same in every tenant.
AKS_SERVER_ID = "6dae42f8-4368-4678-94ff-3960e28e3630"
LOGIN_MODES = ("azurecli", "workloadidentity")


def _flag(args: list[str], name: str) -> str | None:
    if name in args:
        index = args.index(name)
        if index + 1 < len(args):
            return args[index + 1]
    return None


def non_interactive_kubeconfig(kubeconfig_yaml: str, login_mode: str) -> str:
    """Rewrite every kubelogin exec block to `get-token --login <mode>`."""
    if login_mode not in LOGIN_MODES:
        raise ValueError(f"login mode must be one of {', '.join(LOGIN_MODES)}, not {login_mode!r}")
    config = yaml.safe_load(kubeconfig_yaml)
    for user in config.get("users") or []:
        spec = user.get("user") or {}
        if "client-certificate-data" in spec or "token" in spec or "password" in spec:
            raise ValueError(f"user {user.get('name')} carries static credentials; only Entra ID logins are allowed")
        exec_block = spec.get("exec")
        if not exec_block or exec_block.get("command") != "kubelogin":
            raise ValueError(f"user {user.get('name')} does not log in through kubelogin")
        server_id = _flag(exec_block.get("args", []), "--server-id") or AKS_SERVER_ID
        exec_block["args"] = ["get-token", "--login", login_mode, "--server-id", server_id]
        exec_block["interactiveMode"] = "Never"
        exec_block.pop("env", None)
    return str(yaml.safe_dump(config, sort_keys=False))
