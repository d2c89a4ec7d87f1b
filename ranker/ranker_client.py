"""The search path's side of the ranker service: send a :class:`RankRequest`, never hang, never fail.

:class:`RemoteRanker` posts to ``<ranker_url>/v1/rank`` with the configured timeout and bearer
token. When the service is down, slow, overloaded or answers with an error, the answer is the
candidates in first-stage order with ``degraded: true`` and the reason, so a search always returns.
A request the service rejects as malformed (4xx other than 401/403/408/413/429) is a bug on this
side and raises :class:`~toolsift.errors.BadQueryError` instead of being hidden. Either way the reason
is the service's error body, ``{"error": message, "code": code, "field": field}``, read as
``<message> (<code>)``.
"""

from __future__ import annotations

import logging

import httpx

from toolsift.errors import BadQueryError
from toolsift.ranker.protocol import RankRequest, RankResponse

__all__ = ["RemoteRanker", "RANK_PATH"]

logger = logging.getLogger(__name__)

RANK_PATH = "/v1/rank"
_DEGRADE_STATUSES = frozenset({401, 403, 408, 413, 429})


class RemoteRanker:
    """A ranking service over HTTP with a first-stage fallback.

    Args:
        url: the service's base URL (``ranker_url``).
        timeout: seconds for the whole request (``ranker_timeout``).
        token: bearer token (``ranker_token``), sent when given.
    """

    def __init__(self, url: str, *, timeout: float = 5.0, token: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.name = f"remote:{self.url}"
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._http = httpx.Client(base_url=self.url, timeout=httpx.Timeout(timeout), headers=headers)

    def rank(self, request: RankRequest) -> RankResponse:
        try:
            answer = self._http.post(RANK_PATH, content=request.model_dump_json(),
                                     headers={"Content-Type": "application/json"})
        except httpx.TimeoutException:
            return self._degraded(request, f"ranker service at {self.url} did not answer within the timeout")
        except httpx.HTTPError as exc:
            return self._degraded(request, f"ranker service at {self.url} unreachable ({type(exc).__name__})")
        if answer.status_code == 200:
            try:
                return RankResponse.model_validate_json(answer.content)
            except ValueError as exc:
                return self._degraded(request, f"ranker service at {self.url} sent an unreadable answer ({exc})")
        reason = _error_message(answer)
        if answer.status_code >= 500 or answer.status_code in _DEGRADE_STATUSES:
            return self._degraded(request, f"ranker service at {self.url} answered {answer.status_code}: {reason}")
        raise BadQueryError(f"ranker service rejected the request ({answer.status_code}): {reason}")

    def _degraded(self, request: RankRequest, reason: str) -> RankResponse:
        logger.warning("ranking degraded to first-stage order: %s", reason)
        return RankResponse.first_stage_order(request, reason)

    def close(self) -> None:
        self._http.close()


def _error_message(answer: httpx.Response) -> str:
    """What an error answer says: the services' one body ``{"error", "code", "field"}`` as
    ``<error> (<code>)``; anything else (a proxy's page) as its first 300 characters."""
    try:
        body = answer.json()
    except ValueError:
        return answer.text[:300]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str):
        code = body.get("code")
        return f"{error[:300]} ({code})" if isinstance(code, str) else error[:300]
    return str(body)[:300]
