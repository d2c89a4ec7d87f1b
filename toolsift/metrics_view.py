"""What a caller may read of a service's Prometheus metrics: a tenant's key its tenant's series only.

The search API and the ranker service label what they count per caller with ``tenant`` — the key's
tenant, ``*`` for an all-tenant key (or the ranker's token, or a service without keys), empty for a
request no key was accepted for. ``GET /metrics`` answers an all-tenant caller with everything, and a
tenant's key with the series labelled with its tenant alone: metrics without the label count every
tenant's traffic together (the ranker's batches, its queue), so they are left out of its answer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from toolsift.access import ALL_TENANTS, KeyRing, bearer_token
from toolsift.errors import AuthError

__all__ = ["TENANT_LABEL", "caller_tenant", "exposition"]

#: The label naming whose request a series counts.
TENANT_LABEL = "tenant"


def caller_tenant(keys: KeyRing, headers: Mapping[str, str]) -> str:
    """The ``tenant`` label of a request: its key's tenant, ``*`` for an all-tenant key (or no keys
    configured), ``""`` when it carries no key the ring accepts."""
    try:
        who = keys.authenticate(bearer_token(headers))
    except AuthError:
        return ""
    return ALL_TENANTS if who.tenant is None else who.tenant


class _TenantView(Collector):
    """The samples of ``registry`` labelled with one tenant (families without the label left out)."""

    def __init__(self, registry: CollectorRegistry, tenant: str) -> None:
        self.registry = registry
        self.tenant = tenant

    def collect(self) -> Iterable[Metric]:
        for family in self.registry.collect():
            kept = [s for s in family.samples if s.labels.get(TENANT_LABEL) == self.tenant]
            if not kept:
                continue
            view = Metric(family.name, family.documentation, family.type, family.unit)
            view.samples = kept
            yield view


def exposition(registry: CollectorRegistry, tenant: str | None) -> bytes:
    """The Prometheus text of ``registry`` for a caller of ``tenant`` (None: every tenant, everything)."""
    if tenant is None:
        return generate_latest(registry)
    view = CollectorRegistry(auto_describe=False)
    view.register(_TenantView(registry, tenant))
    return generate_latest(view)
