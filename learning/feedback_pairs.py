"""Agents' feedback as training pairs: what was called and worked, against what was shown and not called.

An answer the query log recorded (the request, the tools handed over best first, the tenant and key it
was given to) and the feedback on it (``POST /v1/feedback``, the MCP server's ``call_tool``) become
pairs by these rules:

* **Confirmed only.** An event counts when the query log holds its request id, given to the same
  tenant and key that reported it, with the tool in that answer (the API checks this on arrival; it is
  checked again here, since a log can be pruned or a feedback index written by something else).
* **Positives** are tools called *and* reported successful; a call that failed or whose outcome is
  unknown is not a positive (nor a negative).
* **Negatives** are the tools handed over that were not called, above and below the positive
  (Propensity SVM-Rank, Joachims et al., 2017). Only tools passed over *above* a positive
  ("skip-above") would teach nothing but the reverse of the ranking that produced the answer: a
  positive at rank 1 would give no pair at all, and every pair would say "lower beats higher".
* **Position bias.** A tool at rank k is examined with propensity k^-η (η = 1 by default): a positive
  found at rank k stands for 1/propensity = k^η of its kind (the estimator is unbiased under the
  examination hypothesis), clipped at ``max_weight`` so a lucky deep click cannot dominate.
* **Bounded influence.** Whatever one key sends, its pairs together weigh at most ``key_cap`` (each
  of its pairs is scaled by min(1, key_cap / the sum of its weights), the inverse-propensity weights
  included: a spammer "calling" the last tool of every answer gets the largest weight per pair, so a
  cap counted in requests would let it weigh ``max_weight`` times more than an honest key), and — once
  at least ``min_keys`` keys sent pairs — no key carries more than 1 / ``min_keys`` of all the pairs'
  weight (:func:`share_cap`: with exactly ``min_keys`` keys every key weighs the same); whatever any
  set of keys sends for one tool, that tool's positive pairs weigh at most ``tool_cap``. A key that
  spams calls moves the training data by at most those caps, however many requests it issues.
* **Distinct keys.** Evidence is counted per key: :attr:`FeedbackPairs.keys` says how many distinct
  keys the pairs come from, and :func:`require_keys` refuses (:class:`TooFewKeysError`) to learn
  from fewer than ``min_keys`` of them — one key, or a few, cannot steer a tenant's ranking however
  much they send.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from toolsift.errors import ConfigError

__all__ = ["LoggedAnswer", "FeedbackEvent", "FeedbackPair", "LearningPolicy", "FeedbackPairs", "feedback_pairs",
           "share_cap", "require_keys", "TooFewKeysError", "MIN_KEYS"]

#: Distinct keys whose feedback must make pairs before anything is learned (the ``learn_min_keys`` setting's default).
MIN_KEYS = 5


class TooFewKeysError(ConfigError):
    """The feedback comes from fewer distinct keys than learning needs (``learn_min_keys``)."""


@dataclass(frozen=True)
class LoggedAnswer:
    """An answer as the query log recorded it."""

    request_id: str
    request: str
    tenant: str | None
    key: str
    answered: tuple[str, ...]


@dataclass(frozen=True)
class FeedbackEvent:
    """One tool's outcome as an agent reported it."""

    request_id: str
    tool_id: str
    called: bool
    success: bool | None
    tenant: str | None
    key: str


@dataclass(frozen=True)
class FeedbackPair:
    """A request, a tool that served it, the tools shown and not called, and the pair's weight."""

    request_id: str
    query: str
    positive: str
    negatives: tuple[str, ...]
    rank: int
    weight: float
    tenant: str | None
    key: str
    #: The answer as it was shown, best first (the first-stage ranks a learner may read).
    shown: tuple[str, ...] = ()


@dataclass(frozen=True)
class LearningPolicy:
    """How feedback is weighed (recorded with every model learned from it).

    Args:
        propensity_eta: η of the examination propensity k^-η (0: no position-bias correction).
        max_weight: the largest inverse-propensity weight a pair gets.
        key_cap: one key's pairs weigh at most this much in all (inverse-propensity weights included).
        tool_cap: one tool's positive pairs weigh at most this much in all.
        min_keys: distinct keys the pairs must come from before anything is learned; with at least
            that many, no key carries more than 1 / ``min_keys`` of the pairs' weight.
    """

    propensity_eta: float = 1.0
    max_weight: float = 10.0
    key_cap: int = 50
    tool_cap: int = 50
    min_keys: int = MIN_KEYS


@dataclass(frozen=True)
class FeedbackPairs:
    """The pairs and what happened to the events on the way."""

    pairs: tuple[FeedbackPair, ...]
    events: int
    unconfirmed: int
    requests: int
    capped_keys: Mapping[str, float] = field(default_factory=dict)
    capped_tools: Mapping[str, float] = field(default_factory=dict)
    #: Confirmed pairs per key (before any weighing): how many distinct keys the evidence comes from.
    pairs_per_key: Mapping[str, int] = field(default_factory=dict)

    @property
    def keys(self) -> int:
        """How many distinct keys the pairs come from."""
        return len(self.pairs_per_key)


def _confirmed(event: FeedbackEvent, answers: Mapping[str, LoggedAnswer]) -> bool:
    answer = answers.get(event.request_id)
    return (answer is not None and answer.key == event.key and answer.tenant == event.tenant
            and event.tool_id in answer.answered)


def feedback_pairs(answers: Mapping[str, LoggedAnswer], events: Sequence[FeedbackEvent],
                   policy: LearningPolicy = LearningPolicy()) -> FeedbackPairs:
    """Training pairs from confirmed feedback (module docstring); ``answers`` by request id."""
    by_request: dict[str, dict[str, FeedbackEvent]] = defaultdict(dict)
    unconfirmed = 0
    for event in events:
        if not _confirmed(event, answers):
            unconfirmed += 1
            continue
        by_request[event.request_id][event.tool_id] = event  # the latest report on a tool wins
    raw: list[FeedbackPair] = []
    for request_id, reported in by_request.items():
        answer = answers[request_id]
        rank_of = {tool: n for n, tool in enumerate(answer.answered, 1)}
        called = {t for t, e in reported.items() if e.called}
        positives = sorted((t for t, e in reported.items() if e.called and e.success), key=rank_of.__getitem__)
        if not positives:
            continue
        passed_over = tuple(t for t in answer.answered if t not in called)
        for tool in positives:
            rank = rank_of[tool]
            weight = min(policy.max_weight, float(rank) ** policy.propensity_eta)
            raw.append(FeedbackPair(request_id, answer.request, tool, passed_over, rank, weight, answer.tenant,
                                    answer.key, answer.answered))
    # bounded influence: first per key (its own cap, then its share of all keys), then per tool (over every key)
    key_weight: dict[str, float] = defaultdict(float)
    for pair in raw:
        key_weight[pair.key] += pair.weight
    key_scale = {k: min(1.0, policy.key_cap / w) for k, w in key_weight.items()}
    if len(key_weight) >= policy.min_keys:
        capped = {k: w * key_scale[k] for k, w in key_weight.items()}
        limit = share_cap(list(capped.values()), 1.0 / policy.min_keys)
        key_scale = {k: key_scale[k] * min(1.0, limit / w) if w > limit else key_scale[k] for k, w in capped.items()}
    tool_weight: dict[str, float] = defaultdict(float)
    for pair in raw:
        tool_weight[pair.positive] += pair.weight * key_scale[pair.key]
    tool_scale = {t: min(1.0, policy.tool_cap / w) for t, w in tool_weight.items()}
    pairs = tuple(
        FeedbackPair(p.request_id, p.query, p.positive, p.negatives, p.rank,
                     p.weight * key_scale[p.key] * tool_scale[p.positive], p.tenant, p.key, p.shown)
        for p in raw
    )
    return FeedbackPairs(
        pairs=pairs,
        events=len(events),
        unconfirmed=unconfirmed,
        requests=len({p.request_id for p in pairs}),
        capped_keys={k: round(s, 6) for k, s in key_scale.items() if s < 1.0},
        capped_tools={t: round(s, 6) for t, s in tool_scale.items() if s < 1.0},
        pairs_per_key=dict(Counter(p.key for p in raw)),
    )


def share_cap(weights: Sequence[float], share: float) -> float:
    """The largest cap c such that no weight, capped at c, is more than ``share`` of the capped total:
    c ≤ share · Σ min(w, c) (water-filling; ``inf`` when no weight is over its share already).

    The capped total is concave in c, so the feasible caps are one interval [0, c*]: walk the weights
    upwards, each segment between two of them solving c = share · (the weights below + c · those above).
    With fewer than 1 / ``share`` weights no positive cap is feasible (0).
    """
    ordered = sorted(w for w in weights if w > 0)
    total = sum(ordered)
    if not ordered or ordered[-1] <= share * total + 1e-12:
        return math.inf
    below = 0.0
    for j, weight in enumerate(ordered):
        rest = len(ordered) - j  # weights at or above this segment, each counted as c
        room = 1.0 - share * rest
        if room > 1e-12:
            cap = share * below / room
            if cap <= weight:
                return cap
        below += weight
    return math.inf


def require_keys(made: FeedbackPairs, policy: LearningPolicy, *, what: str = "learn") -> None:
    """Refuse to learn from pairs of fewer than ``policy.min_keys`` distinct keys.

    Raises:
        TooFewKeysError: the message names how many keys sent how many pairs, and the setting.
    """
    if made.keys >= policy.min_keys:
        return
    top = sorted(made.pairs_per_key.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{key!r}: {n} pair{'s' if n != 1 else ''}" for key, n in top[:5])
    more = f" and {len(top) - 5} more" if len(top) > 5 else ""
    raise TooFewKeysError(
        f"{what}: the feedback comes from {made.keys} distinct key{'s' if made.keys != 1 else ''}"
        f"{f' ({shown}{more})' if top else ''}, from {made.events} events; at least {policy.min_keys} distinct keys "
        "are needed before anything is learned (learn_min_keys), so that one key, or a few, cannot steer the "
        "ranking; nothing was learned or written")
