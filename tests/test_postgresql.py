"""PostgreSQL flexible server's high-availability rules (facts/postgresql.py, planning/postgresql.py)
and the golden client's sign-in over time (examples/databases/postgresql_client.py)."""

from __future__ import annotations

import importlib.util

from facts.postgresql import HA_MODES, SKU_TIERS, TOKEN_SCOPE
from planning.postgresql import high_availability_problem
from tests.conftest import ROOT


def test_high_availability_is_refused_on_burstable_and_zone_redundancy_without_zones():
    for tier in SKU_TIERS:
        for mode in HA_MODES:
            for zones in (True, False):
                refused = mode != "Disabled" and (tier == "Burstable" or (mode == "ZoneRedundant" and not zones))
                assert (high_availability_problem(tier, mode, zones) is not None) == refused, (tier, mode, zones)


def _client():
    spec = importlib.util.spec_from_file_location(
        "postgresql_client", ROOT / "examples" / "databases" / "postgresql_client.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Clock:
    now = 0.0


class _Credential:
    """As azure-identity's credentials behave: a token is cached and renewed once it is within
    five minutes of expiring; each lasts an hour."""

    def __init__(self, clock):
        self.clock, self.issued, self.token = clock, [], None

    def get_token(self, scope):
        if self.token is None or self.token.expires_on - self.clock.now < 300:
            self.token = type(
                "Token", (), {"token": f"token-{len(self.issued)}", "expires_on": self.clock.now + 3600}
            )()
            self.issued.append((scope, self.clock.now))
        return self.token


def test_the_golden_clients_new_connections_sign_in_with_a_token_that_is_still_valid_over_a_day():
    """The pool never keeps a token of its own: every connection it opens over a day asks the
    credential, so each signs in with a token that outlives the connection's retirement."""
    client = _client()
    clock = _Clock()
    credential = _Credential(clock)
    opened = []
    while clock.now < 24 * 3600:
        password = client.password_for_new_connection(credential, TOKEN_SCOPE)
        opened.append((clock.now, password, credential.token.expires_on))
        clock.now += client.MAX_LIFETIME_SECONDS  # the pool retires it and opens the next
    assert all(expires > at for at, _, expires in opened), "a connection opened with an expired token"
    # Renewed as it nears its end: at least one new token every two hours of the day.
    assert len({password for _, password, _ in opened}) >= 24 * 3600 // 7200, "the token was not renewed"
    assert {scope for scope, _ in credential.issued} == {TOKEN_SCOPE}
    assert client.MAX_LIFETIME_SECONDS < 3600, "connections must retire before their token's lifetime"


def test_the_workflow_signs_in_to_postgresql_as_the_roles_the_program_makes():
    """The deploy job is the role the data unit makes an Entra administrator; previews are the
    plan identity's login role (the provider takes its role name from PGUSER)."""
    import yaml

    from planning.postgresql import ROLE_MANAGER, ROLE_READER

    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "pulumi.yml").read_text())
    expression = workflow["jobs"]["pulumi"]["env"]["PGUSER"]
    assert expression == f"${{{{ inputs.command == 'up' && '{ROLE_MANAGER}' || '{ROLE_READER}' }}}}"


def test_a_workload_named_as_the_platforms_or_the_servers_roles_is_refused():
    from planning.postgresql import ROLE_MANAGER, role_name_problem

    assert role_name_problem("trainer", ["platform-dbas"]) is None
    for name in (ROLE_MANAGER, "platform-dbas", "public", "pg_monitor", "azure_pg_admin"):
        assert role_name_problem(name, ["platform-dbas"]) is not None, name
