"""Rule-based decomposition of a request into tool needs, for step-wise querying without an LLM.

MFTR's rewrite (:mod:`toolsift.query.rewrite`) splits a request into tool needs with an LLM; without
one (and without a cached rewrite) the request stays one need. :func:`decompose` is the offline
alternative, a few transparent rules:

1. **Sentences.** Split after ``.``, ``!``, ``?`` or ``;`` followed by white space, except after
   common abbreviations (``Mr.``, ``e.g.``, ``vs.``); file names, URLs and numbers keep their dots.
2. **Clauses.** Split a sentence before ``then`` / ``and then`` / ``after that`` / ``finally``, and
   before ``and`` or a comma followed by an action verb (a connective opening a sentence is dropped) (``save``, ``write``, ``convert``,
   ``tell`` ... :data:`ACTION_VERBS`): "find X and save it to Y" is two needs, "X and Y" is not.
3. **Tidy.** A fragment of fewer than three words joins the one before it; at most
   :data:`~toolsift.query.rewrite.MAX_TOOL_NEEDS` needs (the rest join the last).

Each need's three texts are the fragment itself, as :meth:`StructuredQuery.from_text` does for the
whole request.
"""

from __future__ import annotations

import re

from toolsift.errors import BadQueryError, ConfigError
from toolsift.query.rewrite import MAX_TOOL_NEEDS
from toolsift.query.structured import StructuredQuery, ToolNeed

__all__ = ["ACTION_VERBS", "split_needs", "decompose"]

#: Verbs that start a new need after "and" or a comma (imperative requests to a tool-using agent).
ACTION_VERBS: tuple[str, ...] = (
    "add", "analyse", "analyze", "calculate", "check", "compare", "compute", "convert", "create",
    "download", "draft", "draw", "export", "extract", "fetch", "find", "generate", "get", "give",
    "identify", "list", "look", "make", "open", "organize", "organise", "plot", "post", "produce",
    "provide", "read", "recommend", "remind", "save", "search", "send", "show", "store", "suggest",
    "summarise", "summarize", "tell", "translate", "upload", "visualise", "visualize", "write",
)
_ABBREVIATIONS = ("mr", "mrs", "ms", "dr", "prof", "st", "vs", "etc", "e.g", "i.e", "no", "fig", "inc", "jr", "sr")

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_VERBS = "|".join(ACTION_VERBS)
_CLAUSE = re.compile(
    rf"(?:,\s*|\s+)(?:and\s+then|then|after\s+that|afterwards|finally)\s+"
    rf"|(?:,\s*and|,|\s+and)\s+(?=(?:{_VERBS})\b)",
    re.IGNORECASE,
)
_LEADING_CONNECTIVE = re.compile(r"^(?:and\s+)?(?:then|finally|after\s+that|afterwards)\b[,\s]*", re.IGNORECASE)
_MIN_WORDS = 3


def _sentences(text: str) -> list[str]:
    pieces: list[str] = []
    for piece in _SENTENCE_END.split(text):
        if pieces:
            last_word = pieces[-1].rsplit(None, 1)[-1].lower().rstrip(".")
            if last_word in _ABBREVIATIONS:
                pieces[-1] = f"{pieces[-1]} {piece}"
                continue
        pieces.append(piece)
    return pieces


def split_needs(text: str, *, max_needs: int = MAX_TOOL_NEEDS) -> list[str]:
    """The request's needs as texts, in order (the whole request when no rule applies).

    Example:
        >>> split_needs("Find today's LeetCode challenge and save a walkthrough to /root/md/a.md.")
        ["Find today's LeetCode challenge", 'save a walkthrough to /root/md/a.md.']
    """
    if max_needs < 1:
        raise ConfigError(f"max_needs must be at least 1, got {max_needs}")
    fragments: list[str] = []
    for sentence in _sentences(" ".join(text.split())):
        for clause in _CLAUSE.split(sentence):
            clause = _LEADING_CONNECTIVE.sub("", clause.strip(" ,;")).strip(" ,;")
            if not clause:
                continue
            if fragments and len(clause.split()) < _MIN_WORDS:
                fragments[-1] = f"{fragments[-1]} {clause}"
            else:
                fragments.append(clause)
    if len(fragments) > 1 and len(fragments[0].split()) < _MIN_WORDS:
        fragments[:2] = [f"{fragments[0]} {fragments[1]}"]
    if len(fragments) > max_needs:
        fragments[max_needs - 1 :] = [" ".join(fragments[max_needs - 1 :])]
    return fragments or [text.strip()]


def decompose(text: str) -> StructuredQuery:
    """The request as a structured query with one need per :func:`split_needs` fragment.

    Raises:
        BadQueryError: the request is empty or too long.
    """
    whole = StructuredQuery.from_text(text)  # validates and cleans
    needs = tuple(ToolNeed(t, t, t) for t in split_needs(whole.text))
    if not needs:
        raise BadQueryError("the query is empty")
    return StructuredQuery(tool_needs=needs, text=whole.text)
