"""A fake Azure CLI for the scripts that call `az` (scripts/register-providers), and readers of its calls."""

from __future__ import annotations

import shlex
from pathlib import Path

# A fake Azure CLI: it logs every call, answers show/list from a directory of "resources" and
# adds to it on create, as Azure would. FAKE_AZ_FAIL="<group> <verb>" makes that command fail
# the way a missing permission does; FAKE_AZ_LAGS="<group> <verb>" makes its first call fail the
# way a new identity that has not replicated yet does.
FAKE_AZ = r"""#!/usr/bin/env bash
set -euo pipefail
printf '%q ' "$@" >>"$FAKE_AZ_LOG"; printf '\n' >>"$FAKE_AZ_LOG"
words=(); while [[ $# -gt 0 && $1 != --* ]]; do words+=("$1"); shift; done
declare -A o=()
while [[ $# -gt 0 ]]; do
  key=$1; shift; o[$key]=""
  while [[ $# -gt 0 && $1 != --* ]]; do o[$key]+="${o[$key]:+ }$1"; shift; done
done
verb=${words[-1]}; group="${words[*]:0:${#words[@]}-1}"
if [[ ${words[0]} == rest ]]; then group=rest; verb=${o[--method]}; fi
[[ ${o[--output]:-} != none ]] || exec >/dev/null
if [[ "$group $verb" == "${FAKE_AZ_FAIL:-}" ]]; then
  echo "ERROR: (AuthorizationFailed) no permission" >&2; exit 1
fi
if [[ "$group $verb" == "${FAKE_AZ_LAGS:-}" && ! -e $FAKE_AZ_STATE/lagged ]]; then
  touch "$FAKE_AZ_STATE/lagged"
  echo "ERROR: (PrincipalNotFound) Principal 1234 does not exist in the directory" >&2; exit 1
fi
case $group in
  account) echo "${FAKE_TENANT:-99999999-9999-4999-8999-999999999999}"; exit 0 ;;
  group) key="group ${o[--name]}" ;;
  lock) key="lock ${o[--resource-group]} ${o[--name]}" ;;
  "storage account") key="storage ${o[--name]}" ;;
  "storage account blob-service-properties") exit 0 ;;
  "storage container-rm") key="container ${o[--storage-account]} ${o[--name]}" ;;
  "network private-endpoint") key="endpoint ${o[--name]}" ;;
  "network private-endpoint dns-zone-group") key="zone-group ${o[--endpoint-name]} ${o[--name]}" ;;
  keyvault) key="vault ${o[--name]}" ;;
  resource) key="arm ${o[--ids]}" ;;
  rest) key="arm ${o[--url]%%\?*}" ;;
  identity) key="identity ${o[--name]}" ;;
  "identity federated-credential") key="credential ${o[--identity-name]} ${o[--name]}" ;;
  provider) key="provider ${o[--namespace]} ${o[--subscription]}" ;;
  feature) key="feature ${o[--namespace]} ${o[--name]} ${o[--subscription]}" ;;
  "role definition")
    name=${o[--name]:-}
    [[ -n $name ]] || name=$(sed -E 's/.*"Name": "([^"]*)".*/\1/' <<<"${o[--role-definition]}")
    key="role-definition $name" ;;
  "role assignment")
    if [[ $verb == delete ]]; then
      file=$(grep -lxF -- "${o[--ids]}" "$FAKE_AZ_STATE"/*.id); rm -f "${file%.id}".*; exit 0
    fi
    key="role-assignment ${o[--assignee-object-id]} ${o[--role]} ${o[--scope]}" ;;
  *) echo "fake az: unknown command ${words[*]}" >&2; exit 2 ;;
esac
digest() { if command -v md5sum >/dev/null; then md5sum <<<"$1"; else md5 -q -s "$1"; fi; }
hash=$(digest "$key"); base="$FAKE_AZ_STATE/${hash:0:32}"
guid() { local h=$1; echo "${h:0:8}-${h:8:4}-4${h:13:3}-8${h:17:3}-${h:20:12}"; }
case $verb in
  show | list)
    if [[ ! -e $base.exists ]]; then
      [[ $verb == list ]] && exit 0
      echo "ERROR: (ResourceNotFound) $key was not found" >&2; exit 3
    fi
    query=${o[--query]:-}; query=${query#\[0\].}
    [[ -z $query || ! -e $base.$query ]] || cat "$base.$query"
    exit 0 ;;
  create | put)
    touch "$base.exists"
    more=$(digest "more $key"); h=${hash:0:32}; m=${more:0:32}
    guid "$m" >"$base.principalId"
    guid "${m:16}${m:0:16}" >"$base.clientId"
    guid "${h:16}${h:0:16}" >"$base.name"
    echo "/subscriptions/x/providers/Microsoft.Authorization/roleAssignments/$(guid "$h")" >"$base.id"
    [[ -z ${o[--subject]:-} ]] || printf '%s\n' "${o[--subject]}" >"$base.subject"
    [[ -z ${o[--condition]:-} ]] || printf '%s\n' "${o[--condition]}" >"$base.condition"
    [[ ${o[--query]:-} != name ]] || cat "$base.name"
    exit 0 ;;
  update) [[ -e $base.exists ]] || { echo "ERROR: (ResourceNotFound)" >&2; exit 3; }; exit 0 ;;
  register)
    touch "$base.exists"; echo Registered >"$base.registrationState"; echo Registered >"$base.properties.state"
    exit 0 ;;
esac
echo "fake az: unknown verb $verb" >&2; exit 2
"""


class FakeAzure:
    def __init__(self, root: Path):
        self.bin = root / "bin"
        self.state = root / "state"
        self.log = root / "az.log"
        self.temp = root / "tmp"
        self.bin.mkdir()
        self.state.mkdir()
        self.temp.mkdir()
        (self.bin / "az").write_text(FAKE_AZ)
        (self.bin / "az").chmod(0o755)

    def calls(self) -> list[list[str]]:
        return [shlex.split(line) for line in self.log.read_text().splitlines()]


def commands(stdout: str) -> list[list[str]]:
    lines = [shlex.split(line) for line in stdout.splitlines()]
    assert lines and all(line[0] == "az" for line in lines), stdout
    return [line[1:] for line in lines]


def option(call: list[str], name: str) -> str | None:
    return call[call.index(name) + 1] if name in call else None


def named(calls: list[list[str]], *words: str) -> list[list[str]]:
    return [call for call in calls if call[: len(words)] == list(words)]
