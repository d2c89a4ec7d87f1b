"""toolsift's ranking as OpenSearch objects: ml-commons remote models, a search pipeline, a search template.

What :func:`install` puts on a cluster for one index alias (``toolsift deploy opensearch``):

* two **ml-commons remote models**, shared by every alias served by the same ranker service: HTTP
  connectors to ``<ranker_url>/v1/opensearch/query`` and ``/v1/opensearch/rank`` with the service's
  bearer token as the connector's credential (ml-commons keeps it encrypted). Named
  ``toolsift-first-stage-<digest>`` / ``toolsift-ranking-<digest>``, the digest covering the URL, the
  timeout, the token and :data:`NATIVE_VERSION`: deploying again with the same inputs reuses them.
* the **search pipeline** ``<name>`` (default ``toolsift`` for the alias ``toolsift-tools``):

  1. an ``ml_inference`` request processor sends the request's ``ext.ml_inference.toolsift`` to the
     first-stage model and runs the request it answers (``query_template``): ``toolsift search``'s own
     hybrid first stage with its query vectors;
  2. the ``normalization-processor`` of the alias's hybrid pipeline, copied (the learned weights);
  3. an ``ml_inference`` response processor sends the hits' ``tool_id`` s to the ranking model and
     writes ``toolsift_order``, ``toolsift_score`` and ``toolsift_rank`` into each hit;
  4. ``rerank`` ``by_field`` sorts the hits by ``toolsift_order``.

  Every toolsift processor has ``ignore_failure: true``: with the ranker service down, slow (the
  connector's ``read_timeout``) or refusing the token, the template's own request runs (toolsift's
  BM25 first stage: the lexical half of the hybrid query, since the vectors come from the service) and
  the hits keep that order.
* the **search template** ``<name>-tools`` (mustache, :file:`search-templates/tools.mustache`): params
  ``text``, ``tool_needs``, ``extracted_arguments``, ``tenant``, ``agents``, ``tags``, ``candidates``.

Idempotent: objects are written only when their body differs. :func:`remove` deletes an alias's
pipeline and template, and :func:`collect_models` removes toolsift models no pipeline uses any more.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from opensearchpy import OpenSearch
from opensearchpy.exceptions import NotFoundError, TransportError

from toolsift.errors import ClusterError, ConfigError, RankerUnavailableError
from toolsift.plugin_scripts.pipelines import put_pipeline

__all__ = [
    "NATIVE_VERSION",
    "NativeNames",
    "NativeModels",
    "native_names",
    "template_source",
    "pipeline_body",
    "connector_body",
    "ensure_cluster_settings",
    "ensure_models",
    "install",
    "remove",
    "collect_models",
    "probe_models",
    "require_ml_commons",
]

#: Bumped when the connectors' or the pipeline's shape changes (part of the model names' digest).
NATIVE_VERSION = "1"
MODEL_PREFIXES = ("toolsift-first-stage-", "toolsift-ranking-")
_ROUTES = {"first-stage": "/v1/opensearch/query", "ranking": "/v1/opensearch/rank"}
_BODIES = {
    "first-stage": '{"index": "${parameters.index}", "request": ${parameters.request}}',
    "ranking": '{"index": "${parameters.index}", "ids": ${parameters.ids}, "request": ${parameters.request}}',
}
_DEPLOY_WAIT_S = 60.0


@dataclass(frozen=True)
class NativeNames:
    """The pipeline and the template of one alias."""

    alias: str
    pipeline: str
    template: str


def native_names(alias: str, pipeline: str | None = None) -> NativeNames:
    """``toolsift`` / ``toolsift-tools`` for the default alias ``toolsift-tools``; else ``<alias>`` and
    ``<alias>-tools`` (or ``pipeline`` and ``<pipeline>-tools``)."""
    name = pipeline or (alias[: -len("-tools")] if alias.endswith("-tools") else alias)
    if not re.fullmatch(r"[a-z0-9][a-z0-9_\-]*", name):
        raise ConfigError(f"pipeline name {name!r}: use lowercase letters, digits, '-' and '_'")
    return NativeNames(alias=alias, pipeline=name, template=f"{name}-tools")


def template_source(candidates: int) -> str:
    """The search template's mustache source, ``candidates`` being the default number of hits."""
    text = resources.files("toolsift.plugin_scripts").joinpath("search-templates/tools.mustache").read_text("utf-8")
    return text.replace("<<candidates>>", str(int(candidates)))


def connector_body(role: str, ranker_url: str, token: str, timeout_s: float) -> dict[str, Any]:
    """The HTTP connector of ``role`` (``first-stage`` or ``ranking``) to the ranker service."""
    seconds = max(1, math.ceil(timeout_s))  # ml-commons takes whole seconds
    return {
        "name": f"toolsift {role}",
        "description": f"toolsift's {role} at {ranker_url}{_ROUTES[role]} (toolsift deploy opensearch)",
        "version": NATIVE_VERSION,
        "protocol": "http",
        "credential": {"token": token},
        "parameters": {},
        "client_config": {"connection_timeout": seconds, "read_timeout": seconds, "max_retry_times": 0},
        "actions": [
            {
                "action_type": "predict",
                "method": "POST",
                "url": ranker_url.rstrip("/") + _ROUTES[role],
                "headers": {"Authorization": "Bearer ${credential.token}", "content-type": "application/json"},
                "request_body": _BODIES[role],
            }
        ],
    }


def _digest(ranker_url: str, token: str, timeout_s: float) -> str:
    raw = json.dumps([NATIVE_VERSION, ranker_url.rstrip("/"), token, round(timeout_s, 3)])
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class NativeModels:
    """The two deployed models (ids) and whether this call created them."""

    first_stage: str
    ranking: str
    created: tuple[str, ...] = ()


def pipeline_body(
    names: NativeNames, models: NativeModels, normalization: Sequence[Mapping[str, Any]], *, description: str
) -> dict[str, Any]:
    """The search pipeline (see the module docstring); ``normalization`` is the alias's hybrid pipeline's
    ``phase_results_processors``."""
    config = {"index": names.alias}
    return {
        "description": description,
        "request_processors": [
            {
                "ml_inference": {
                    "tag": "toolsift-first-stage",
                    "description": "toolsift's first-stage request (hybrid query with its vectors)",
                    "model_id": models.first_stage,
                    "function_name": "remote",
                    "input_map": [{"request": "ext.ml_inference.toolsift"}],
                    "output_map": [{"toolsift_body": "body"}],
                    "query_template": "${toolsift_body}",
                    "model_config": config,
                    "ignore_missing": False,
                    "ignore_failure": True,
                }
            }
        ],
        "phase_results_processors": [json.loads(json.dumps(p)) for p in normalization],
        "response_processors": [
            {
                "ml_inference": {
                    "tag": "toolsift-ranking",
                    "description": "toolsift's ranking of the hits (MFTR, penalties, reranker)",
                    "model_id": models.ranking,
                    "function_name": "remote",
                    "one_to_one": False,
                    "input_map": [{"ids": "tool_id", "request": "$._request.ext.ml_inference.toolsift"}],
                    "output_map": [{"toolsift_order": "order", "toolsift_score": "scores", "toolsift_rank": "ranks"}],
                    "model_config": config,
                    "ignore_missing": False,
                    "ignore_failure": True,
                }
            },
            {
                "rerank": {
                    "tag": "toolsift-order",
                    "by_field": {"target_field": "toolsift_order", "remove_target_field": True,
                                 "keep_previous_score": True},
                    "ignore_failure": True,
                }
            },
        ],
    }


# --- the cluster ------------------------------------------------------------------------------------


def _request(client: OpenSearch, method: str, path: str, body: Any = None, params: Mapping[str, str] | None = None,
             ) -> Any:
    return client.transport.perform_request(method, path, body=body, params=dict(params or {}))


def require_ml_commons(client: OpenSearch) -> None:
    """Raises ConfigError when the cluster has no ml-commons plugin."""
    try:
        _request(client, "POST", "/_plugins/_ml/models/_search", {"size": 0, "query": {"match_all": {}}})
    except NotFoundError:
        pass  # no model index yet: the plugin answers
    except TransportError as exc:
        if exc.status_code in (400, 405) and "no handler" in str(exc.info).lower():
            raise ConfigError(
                "the cluster has no ml-commons plugin, which toolsift's search pipeline needs: start the managed "
                "node with it (toolsift node stop; toolsift node start --ml-commons) or use a distribution that "
                "has it (the official OpenSearch image does)"
            ) from None
        raise


def ensure_cluster_settings(client: OpenSearch, ranker_url: str) -> dict[str, Any]:
    """Let ml-commons call the ranker service: its URL among the trusted connector endpoints, private
    addresses allowed when it is one, and models on data nodes when the cluster has no ml node."""
    current = _request(client, "GET", "/_cluster/settings", params={"include_defaults": "true", "flat_settings": "true"})
    merged: dict[str, Any] = {**current.get("defaults", {}), **current.get("persistent", {}),
                              **current.get("transient", {})}
    key = "plugins.ml_commons.trusted_connector_endpoints_regex"
    trusted = merged.get(key) or []
    trusted = [trusted] if isinstance(trusted, str) else list(trusted)
    parts = urlsplit(ranker_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"ranker_url {ranker_url!r} is not an http(s) URL")
    # the service's host, any port: a restarted service on another port needs no new entry
    wanted = "^" + re.escape(f"{parts.scheme}://{parts.hostname}") + "(:[0-9]+)?/.*$"
    changes: dict[str, Any] = {}
    if wanted not in trusted:
        changes[key] = [*trusted, wanted]
    if _private_or_unresolved(parts.hostname) and str(merged.get("plugins.ml_commons.connector.private_ip_enabled")).lower() != "true":
        changes["plugins.ml_commons.connector.private_ip_enabled"] = True
    nodes = _request(client, "GET", "/_nodes", params={"filter_path": "nodes.*.roles"}).get("nodes", {})
    has_ml_node = any("ml" in (n.get("roles") or []) for n in nodes.values())
    if not has_ml_node and str(merged.get("plugins.ml_commons.only_run_on_ml_node")).lower() != "false":
        changes["plugins.ml_commons.only_run_on_ml_node"] = False
    if changes:
        _request(client, "PUT", "/_cluster/settings", {"persistent": {**changes, **_archived_cleared(current)}})
    return changes


def _archived_cleared(current: dict[str, Any]) -> dict[str, None]:
    """``{"archived.*": None}`` when the cluster holds archived settings, else nothing.

    A node once started without a plugin archives that plugin's persisted settings (the managed node
    started without ml-commons, say); OpenSearch then refuses every cluster-settings update until they
    are removed, though it ignores them. They are dropped in the same update as toolsift's own.
    """
    archived = any(key.startswith("archived.") for scope in ("persistent", "transient")
                   for key in current.get(scope, {}))
    return {"archived.*": None} if archived else {}


def _private_or_unresolved(host: str) -> bool:
    """Whether ``host`` is a private or loopback address here, or does not resolve here (a container
    network's service name, which the cluster resolves to a private address)."""
    import ipaddress
    import socket

    try:
        addresses = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except OSError:
        return True
    ips = [ipaddress.ip_address(a.split("%")[0]) for a in addresses]
    return any(ip.is_private or ip.is_loopback for ip in ips)


def _models(client: OpenSearch) -> list[dict[str, Any]]:
    body = {"size": 1000, "query": {"bool": {"should": [{"prefix": {"name.keyword": p}} for p in MODEL_PREFIXES],
                                             "minimum_should_match": 1,
                                             "must_not": [{"exists": {"field": "chunk_number"}}]}}}
    try:
        answer = _request(client, "POST", "/_plugins/_ml/models/_search", body)
    except NotFoundError:
        return []
    return [{**hit["_source"], "model_id": hit["_id"]} for hit in answer.get("hits", {}).get("hits", [])]


def ensure_models(client: OpenSearch, ranker_url: str, token: str, timeout_s: float) -> NativeModels:
    """The two remote models for this service, URL and token: found by name, else created and deployed."""
    digest = _digest(ranker_url, token, timeout_s)
    existing = {m.get("name"): m for m in _models(client)}
    ids: dict[str, str] = {}
    created: list[str] = []
    for role in ("first-stage", "ranking"):
        name = f"toolsift-{role}-{digest}"
        found = existing.get(name)
        if found is None:
            connector = _request(client, "POST", "/_plugins/_ml/connectors/_create",
                                 connector_body(role, ranker_url, token, timeout_s))
            answer = _request(client, "POST", "/_plugins/_ml/models/_register", {
                "name": name, "function_name": "remote", "connector_id": connector["connector_id"],
                "description": f"toolsift's {role} at {ranker_url} (toolsift deploy opensearch)",
            }, params={"deploy": "true"})
            model_id = str(answer["model_id"])
            created.append(name)
        else:
            model_id = str(found["model_id"])
        _wait_deployed(client, model_id, name, created=found is None)
        ids[role] = model_id
    return NativeModels(first_stage=ids["first-stage"], ranking=ids["ranking"], created=tuple(created))


def _wait_deployed(client: OpenSearch, model_id: str, name: str, *, created: bool) -> None:
    """Until ``model_id`` is deployed: a model just registered with ``deploy=true`` is deploying already
    (asking again conflicts), so only an existing undeployed one, or a new one still idle after a while,
    is asked to deploy."""
    started = time.monotonic()
    asked = created
    while True:
        state = str(_request(client, "GET", f"/_plugins/_ml/models/{model_id}").get("model_state", ""))
        if state == "DEPLOYED":
            return
        idle = state in ("UNDEPLOYED", "DEPLOY_FAILED", "PARTIALLY_DEPLOYED", "REGISTERED")
        if idle and (not asked or time.monotonic() - started > _DEPLOY_WAIT_S / 4):
            try:
                _request(client, "POST", f"/_plugins/_ml/models/{model_id}/_deploy")
            except TransportError as exc:
                if exc.status_code != 409 and "version conflict" not in str(exc.info):
                    raise
            asked, started = True, time.monotonic()
        if time.monotonic() - started > _DEPLOY_WAIT_S:
            raise ClusterError(f"ml-commons did not deploy the model {name} ({model_id}) within {_DEPLOY_WAIT_S:g} s "
                               f"(state {state or 'unknown'})")
        time.sleep(0.5)


def _put_template(client: OpenSearch, template_id: str, source: str) -> bool:
    """Store the mustache template unless it already holds ``source``; True when it wrote."""
    try:
        current = client.get_script(id=template_id).get("script", {}).get("source")
    except NotFoundError:
        current = None
    if current == source:
        return False
    client.put_script(id=template_id, body={"script": {"lang": "mustache", "source": source}})
    return True


def install(
    client: OpenSearch,
    names: NativeNames,
    models: NativeModels,
    normalization: Sequence[Mapping[str, Any]],
    *,
    candidates: int,
    description: str,
) -> tuple[bool, bool]:
    """Write the alias's pipeline and template when they differ; returns (pipeline written, template written)."""
    pipeline = pipeline_body(names, models, normalization, description=description)
    return (put_pipeline(client, names.pipeline, pipeline),
            _put_template(client, names.template, template_source(candidates)))


def remove(client: OpenSearch, names: NativeNames) -> list[str]:
    """Delete the alias's pipeline and template (what existed); then :func:`collect_models`."""
    removed = []
    try:
        client.search_pipeline.delete(id=names.pipeline)
        removed.append(f"search pipeline {names.pipeline}")
    except NotFoundError:
        pass
    try:
        client.delete_script(id=names.template)
        removed.append(f"search template {names.template}")
    except NotFoundError:
        pass
    return removed + collect_models(client)


def collect_models(client: OpenSearch) -> list[str]:
    """Undeploy and delete the toolsift models (and their connectors) that no search pipeline uses."""
    try:
        pipelines = client.search_pipeline.get()
    except NotFoundError:
        pipelines = {}
    used = json.dumps(pipelines)
    removed = []
    for model in _models(client):
        model_id = model["model_id"]
        if f'"{model_id}"' in used:
            continue
        try:
            _request(client, "POST", f"/_plugins/_ml/models/{model_id}/_undeploy")
        except TransportError:
            pass
        _request(client, "DELETE", f"/_plugins/_ml/models/{model_id}")
        connector = model.get("connector_id")
        if connector:
            try:
                _request(client, "DELETE", f"/_plugins/_ml/connectors/{connector}")
            except TransportError:
                pass
        removed.append(f"model {model.get('name')} ({model_id})")
    return removed


def probe_models(client: OpenSearch, names: NativeNames, models: NativeModels, ranker_url: str) -> None:
    """Call both models as the pipeline does, so that a wrong token or an unreachable service is an error
    now, by name, rather than a search silently kept in first-stage order.

    Raises:
        RankerUnavailableError: the service refused the connector's credential (the token), or could
            not be reached from OpenSearch, or failed; the message says which.
    """
    probes = {
        models.first_stage: {"index": names.alias, "request": {"text": "toolsift deploy check"}},
        models.ranking: {"index": names.alias, "ids": [], "request": {"text": "toolsift deploy check"}},
    }
    for model_id, parameters in probes.items():
        try:
            answer = _request(client, "POST", f"/_plugins/_ml/models/{model_id}/_predict", {"parameters": parameters})
        except TransportError as exc:
            raise RankerUnavailableError(_probe_message(exc, ranker_url)) from None
        for result in answer.get("inference_results", []):
            status = int(result.get("status_code") or 200)
            if status >= 400:
                raise RankerUnavailableError(f"the ranker service at {ranker_url} answered {status} to OpenSearch")


def _probe_message(exc: TransportError, ranker_url: str) -> str:
    info = exc.info if isinstance(exc.info, dict) else {}
    reason = json.dumps(info.get("error", info))[:400] if info else str(exc)[:400]
    if exc.status_code == 401 or "unauthorized" in reason:
        return (f"the ranker service at {ranker_url} refused the connector's credential (the token): deploy with "
                "the token the service takes (the ranker_token setting, TOOLSIFT_RANKER_TOKEN, or an API key)")
    if "Connection refused" in reason or "connect" in reason.lower() or "timed out" in reason.lower():
        return (f"OpenSearch could not reach the ranker service at {ranker_url} ({reason}); start it "
                "(toolsift serve ranker) where the cluster can reach it")
    return f"the ranker service at {ranker_url} failed OpenSearch's probe ({exc.status_code}): {reason}"
