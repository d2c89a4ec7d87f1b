"""Who may call toolsift's services, and what they may see: API keys, tenants, roles, hosts.

A key is a random secret the caller sends as ``Authorization: Bearer <key>`` (or ``X-API-Key``).
The configuration stores only its SHA-256 digest (:func:`hash_key`; keys are 256-bit random
strings, so a plain digest is enough and lookups stay constant-time), with the tenant it belongs to
and its role:

* ``search`` — search, read tools, send feedback, within its tenant;
* ``admin`` — also every write (weights, judgments, query sets, pushes, approvals).

A key's tenant decides what every query path sees: tools and agents whose ``tenants`` hold that
tenant, plus public ones (no tenants). An admin key may name the tenant ``*``: it sees every tenant.

With no keys configured, a service runs open (loopback only, unless explicitly forced): every caller
is the anonymous :data:`LOCAL` principal, which sees everything and may write.

The same :class:`KeyRing` serves the search API, the MCP server, the workbench and the ranker
service, so one key works on all of them.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from toolsift.errors import AuthError, ConfigError, ForbiddenError

__all__ = [
    "Role",
    "ALL_TENANTS",
    "ApiKey",
    "Principal",
    "LOCAL",
    "KeyRing",
    "hash_key",
    "new_key",
    "bearer_token",
    "host_allowed",
    "is_loopback",
    "check_bind",
    "valid_tenant",
]

Role = Literal["search", "admin"]
#: The tenant of an admin key that sees every tenant.
ALL_TENANTS = "*"
#: Key prefix: makes a leaked key recognisable to secret scanners.
KEY_PREFIX = "tsk_"
_TENANT_PATTERN = r"^(\*|[A-Za-z0-9][A-Za-z0-9_.\-]{0,63})$"
_TENANT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")


def valid_tenant(name: str, *, where: str = "tenant") -> str:
    """``name`` when it is a tenant name (letters, digits, ``_.-``, at most 64), else a :class:`ConfigError`
    naming ``where``."""
    if not isinstance(name, str) or not _TENANT_NAME.fullmatch(name):
        raise ConfigError(f"{where}: {name!r} is not a tenant name (letters, digits, '_', '.', '-'; at most 64)")
    return name


def hash_key(key: str) -> str:
    """The digest the configuration stores for ``key`` (hex SHA-256)."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    """A fresh random key (256 bits, URL-safe), shown once and stored only as :func:`hash_key`."""
    return KEY_PREFIX + secrets.token_urlsafe(32)


class ApiKey(BaseModel):
    """One configured key: ``[[api_keys]]`` in the TOML config.

    Args:
        name: a label for logs and metrics (never the key).
        tenant: the tenant it searches as (``*``: every tenant, admin keys only).
        role: ``search`` or ``admin``.
        sha256: :func:`hash_key` of the key.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=100)
    tenant: str = Field(pattern=_TENANT_PATTERN)
    role: Role = "search"
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class Principal:
    """An authenticated caller: its key's name, tenant (None: every tenant) and role."""

    name: str
    tenant: str | None
    role: Role

    @property
    def is_admin(self) -> bool:
        return self.role == "admin"

    def require_admin(self, what: str) -> None:
        """Raise :class:`ForbiddenError` unless this caller may write."""
        if not self.is_admin:
            raise ForbiddenError(f"{what} needs an admin key; key {self.name!r} has role {self.role!r}")

    def require_every_tenant(self, what: str) -> None:
        """Raise :class:`ForbiddenError` unless this is an admin whose key spans every tenant (``*``):
        for writes that change what every tenant of an index gets (pushed weights)."""
        self.require_admin(what)
        if self.tenant is not None:
            raise ForbiddenError(f"{what} changes the ranking of every tenant of the index: it needs an admin key "
                                 f"for every tenant ('*'); key {self.name!r} is tenant {self.tenant!r}'s")


#: The caller when no keys are configured: sees every tenant, may write (loopback services only).
LOCAL = Principal(name="local", tenant=None, role="admin")


class KeyRing:
    """The configured keys, looked up by digest.

    Raises:
        ConfigError: two keys share a digest, or a ``search`` key names every tenant (``*``).
    """

    def __init__(self, keys: Iterable[ApiKey]) -> None:
        self._by_digest: dict[str, ApiKey] = {}
        for key in keys:
            if key.sha256 in self._by_digest:
                raise ConfigError(f"api_keys: keys {self._by_digest[key.sha256].name!r} and {key.name!r} are the same key")
            if key.tenant == ALL_TENANTS and key.role != "admin":
                raise ConfigError(f"api_keys: key {key.name!r}: only an admin key may name every tenant ('*')")
            self._by_digest[key.sha256] = key

    @property
    def enabled(self) -> bool:
        """Whether keys are configured (else every caller is :data:`LOCAL`)."""
        return bool(self._by_digest)

    def __len__(self) -> int:
        return len(self._by_digest)

    def authenticate(self, token: str | None) -> Principal:
        """The caller that ``token`` identifies.

        Raises:
            AuthError: keys are configured and ``token`` is missing or unknown.
        """
        if not self.enabled:
            return LOCAL
        if not token:
            raise AuthError("this service needs an API key: send 'Authorization: Bearer <key>'")
        digest = hash_key(token)
        for known, key in self._by_digest.items():
            if hmac.compare_digest(known, digest):
                return Principal(name=key.name, tenant=None if key.tenant == ALL_TENANTS else key.tenant,
                                 role=key.role)
        raise AuthError("the API key is not valid")


def bearer_token(headers: Mapping[str, str]) -> str | None:
    """The key a request carries: ``Authorization: Bearer <key>``, else ``X-API-Key``."""
    auth = headers.get("authorization", "")
    scheme, _, value = auth.partition(" ")
    if scheme.lower() == "bearer" and value.strip():
        return value.strip()
    key = headers.get("x-api-key", "").strip()
    return key or None


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` listens on this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_allowed(host_header: str | None, allowed: Iterable[str]) -> bool:
    """Whether a request's ``Host`` header names this service (DNS-rebinding defence).

    ``allowed`` holds host names or addresses, without ports; ``*`` allows any.
    """
    if not host_header:
        return False
    allowed = list(allowed)
    if "*" in allowed:
        return True
    host = host_header.strip().lower()
    if host.startswith("["):  # [::1]:8500
        host = host[1:].split("]", 1)[0]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    return host in {a.lower().strip("[]") for a in allowed}


def check_bind(host: str, keys: KeyRing, *, force: bool, service: str) -> None:
    """Refuse to listen beyond loopback with no keys configured, unless ``force``.

    Raises:
        ConfigError: ``host`` is not a loopback address, no keys are configured and ``force`` is off.
    """
    if is_loopback(host) or keys.enabled or force:
        return
    raise ConfigError(
        f"{service}: refusing to listen on {host} with no API keys configured (anyone who reaches the port could "
        "search every tenant and write); add [[api_keys]] to the config (`toolsift keys create`), bind 127.0.0.1, "
        "or pass --insecure-no-auth to serve an open network on purpose"
    )
