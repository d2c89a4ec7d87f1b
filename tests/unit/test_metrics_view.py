"""What a caller reads of a service's Prometheus metrics: a tenant's key its tenant's series, and nothing
counted for every tenant together; an all-tenant caller everything."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from toolsift.access import ApiKey, KeyRing, hash_key
from toolsift.metrics_view import caller_tenant, exposition


def _registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    searches = Counter("searches_total", "Searches.", ["route", "tenant"], registry=registry)
    latency = Histogram("latency_seconds", "Latency.", ["tenant"], registry=registry, buckets=(0.1, 1.0))
    Gauge("queue_depth", "Every tenant's requests waiting.", registry=registry).set(7)
    for tenant, count in (("acme", 2), ("globex", 5), ("*", 1)):
        searches.labels("/v1/search", tenant).inc(count)
        latency.labels(tenant).observe(0.5)
    return registry


def test_a_tenant_reads_its_series_only_and_nothing_counted_for_every_tenant() -> None:
    text = exposition(_registry(), "acme").decode()

    assert 'searches_total{route="/v1/search",tenant="acme"} 2.0' in text
    assert 'latency_seconds_count{tenant="acme"} 1.0' in text
    assert 'tenant="globex"' not in text and 'tenant="*"' not in text and "queue_depth" not in text


def test_an_all_tenant_caller_reads_everything_and_an_unknown_tenant_nothing() -> None:
    everything = exposition(_registry(), None).decode()

    assert 'tenant="globex"' in everything and 'tenant="acme"' in everything and "queue_depth 7.0" in everything
    assert exposition(_registry(), "initech") == b""


def test_a_request_is_labelled_with_its_key_s_tenant() -> None:
    keys = KeyRing([ApiKey(name="a", tenant="acme", sha256=hash_key("tsk_a")),
                    ApiKey(name="r", tenant="*", role="admin", sha256=hash_key("tsk_r"))])

    assert caller_tenant(keys, {"authorization": "Bearer tsk_a"}) == "acme"
    assert caller_tenant(keys, {"authorization": "Bearer tsk_r"}) == "*"
    assert caller_tenant(keys, {"authorization": "Bearer tsk_wrong"}) == ""
    assert caller_tenant(keys, {}) == ""
    assert caller_tenant(KeyRing([]), {}) == "*"  # no keys: every caller is the local all-tenant one
