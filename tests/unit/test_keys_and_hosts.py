"""Keys, tenants, roles and hosts (toolsift.access): who may call a service, and what they may see."""

from __future__ import annotations

import pytest

from toolsift.access import (
    LOCAL,
    ApiKey,
    KeyRing,
    bearer_token,
    check_bind,
    hash_key,
    host_allowed,
    is_loopback,
    new_key,
)
from toolsift.config import Settings
from toolsift.errors import AuthError, ConfigError, ForbiddenError

ACME, ROOT = "tsk_acme", "tsk_root"
RING = KeyRing([ApiKey(name="acme", tenant="acme", role="search", sha256=hash_key(ACME)),
                ApiKey(name="root", tenant="*", role="admin", sha256=hash_key(ROOT))])


def test_a_key_names_its_tenant_and_role_and_only_its_digest_is_configured() -> None:
    who = RING.authenticate(ACME)

    assert (who.name, who.tenant, who.role) == ("acme", "acme", "search")
    assert RING.authenticate(ROOT).tenant is None  # '*': every tenant
    assert hash_key(ACME) != ACME and len(hash_key(ACME)) == 64


@pytest.mark.parametrize("token", [None, "", "tsk_wrong", ACME + " "])
def test_no_key_or_a_wrong_key_is_refused_when_keys_are_configured(token: str | None) -> None:
    with pytest.raises(AuthError):
        RING.authenticate(token)


def test_without_keys_every_caller_is_the_local_principal() -> None:
    assert KeyRing([]).authenticate(None) is LOCAL and LOCAL.tenant is None and LOCAL.is_admin


def test_writes_need_an_admin_key_and_index_wide_writes_an_all_tenant_one() -> None:
    acme_admin = KeyRing([ApiKey(name="a", tenant="acme", role="admin", sha256=hash_key("k"))]).authenticate("k")

    with pytest.raises(ForbiddenError, match="needs an admin key"):
        RING.authenticate(ACME).require_admin("POST /api/judgments")
    acme_admin.require_admin("POST /api/judgments")
    with pytest.raises(ForbiddenError, match="every tenant"):
        acme_admin.require_every_tenant("POST /api/weights/push")
    RING.authenticate(ROOT).require_every_tenant("POST /api/weights/push")


def test_a_search_key_cannot_span_every_tenant_and_keys_cannot_repeat() -> None:
    with pytest.raises(ConfigError, match="only an admin key"):
        KeyRing([ApiKey(name="s", tenant="*", role="search", sha256=hash_key("k"))])
    with pytest.raises(ConfigError, match="are the same key"):
        KeyRing([ApiKey(name="a", tenant="x", sha256=hash_key("k")), ApiKey(name="b", tenant="y", sha256=hash_key("k"))])


def test_keys_in_the_config_are_validated_by_name() -> None:
    with pytest.raises(ValueError, match="sha256"):
        Settings(api_keys=[{"name": "a", "tenant": "acme", "sha256": "not-a-digest"}])
    with pytest.raises(ValueError, match="tenant"):
        Settings(api_keys=[{"name": "a", "tenant": "bad tenant!", "sha256": "0" * 64}])


def test_new_keys_are_long_random_and_recognisable() -> None:
    keys = {new_key() for _ in range(100)}
    assert len(keys) == 100 and all(k.startswith("tsk_") and len(k) > 40 for k in keys)


def test_the_key_comes_from_a_bearer_header_or_x_api_key() -> None:
    assert bearer_token({"authorization": "Bearer abc"}) == "abc"
    assert bearer_token({"authorization": "bearer  abc "}) == "abc"
    assert bearer_token({"x-api-key": "xyz"}) == "xyz"
    assert bearer_token({"authorization": "Basic abc"}) is None


@pytest.mark.parametrize(("host", "allowed"), [
    ("127.0.0.1:8500", True), ("localhost", True), ("[::1]:8500", True), ("LOCALHOST:1", True),
    ("attacker.example", False), ("attacker.example:8500", False), ("127.0.0.1.attacker.example", False),
    (None, False), ("", False),
])
def test_only_allowed_host_headers_are_answered(host: str | None, allowed: bool) -> None:
    assert host_allowed(host, ["127.0.0.1", "localhost", "::1"]) is allowed


def test_binding_beyond_loopback_without_keys_is_refused_unless_forced() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.0.0.5")
    with pytest.raises(ConfigError, match="--insecure-no-auth"):
        check_bind("0.0.0.0", KeyRing([]), force=False, service="serve api")
    check_bind("0.0.0.0", KeyRing([]), force=True, service="serve api")
    check_bind("0.0.0.0", RING, force=False, service="serve api")
    check_bind("127.0.0.1", KeyRing([]), force=False, service="serve api")
