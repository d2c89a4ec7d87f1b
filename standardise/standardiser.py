"""The LLM standardiser: MFTR's four fields, then a Tool-DE profile that is judged and refined once.

For one raw tool, :class:`LLMStandardiser` runs the tasks of :mod:`toolsift.standardise.tasks`:

1. ``standardize`` — the four MFTR fields from the raw documentation; the ``required`` flags are then
   settled without the LLM (:func:`~toolsift.standardise.required.settle_required`).
2. ``expand`` — the Tool-DE profile (Tool-DE §2.2 Step 1).
3. ``judge`` — the profile against the raw documentation (Step 2). A profile that fails is regenerated
   ONCE with the judge's feedback (Step 3) and judged again; fields that still fail are dropped and the
   MFTR fields kept. A profile no judge has passed is left out.

Each step looks in the cache first (``subject_key(task, model, subject)``; the judge's subject adds a
digest of the profile it judged, a regeneration's a digest of the rejected profile and its feedback),
so without an LLM the same pipeline replays from the cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from toolsift.errors import CatalogRecordError, LLMOutputError, LLMUnavailableError
from toolsift.ingest.raw_records import RawTool
from toolsift.standardise.answers import (
    Profile,
    StandardisedDoc,
    Verdict,
    parse_profile,
    parse_standardised,
    parse_verdict,
)
from toolsift.standardise.required import settle_required
from toolsift.standardise.tasks import (
    EXPAND_INSTRUCTIONS,
    EXPAND_SCHEMA,
    EXPAND_TASK,
    JUDGE_INSTRUCTIONS,
    JUDGE_SCHEMA,
    JUDGE_TASK,
    PROFILE_FIELDS,
    REGENERATE_INSTRUCTIONS,
    STANDARDIZE_INSTRUCTIONS,
    STANDARDIZE_SCHEMA,
    STANDARDIZE_TASK,
)

if TYPE_CHECKING:
    from toolsift.llm import LLM, LLMCache

__all__ = ["Expansion", "StandardiseOutcome", "LLMStandardiser"]

Expansion = Literal["accepted", "regenerated", "partial", "dropped", "absent"]


@dataclass(frozen=True)
class StandardiseOutcome:
    """What :meth:`LLMStandardiser.run` made of one tool.

    Args:
        doc: the standardised document, or None when there is neither an LLM nor a cached answer.
        source: where the MFTR fields came from: ``llm``, ``cache`` or ``none``.
        expansion: ``accepted`` (passed the judge), ``regenerated`` (passed after the one
            regeneration), ``partial`` (fields that kept failing were dropped), ``dropped`` (no
            profile kept), ``absent`` (no profile available: no LLM and nothing cached).
        dropped_fields: profile fields left out because they failed (or were never verified).
        notes: why, in words (judge feedback, LLM output errors).
    """

    doc: StandardisedDoc | None
    source: Literal["llm", "cache", "none"]
    expansion: Expansion = "absent"
    dropped_fields: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


_T = TypeVar("_T")


def _digest(value: object) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _documentation_text(documentation: Mapping[str, Any]) -> str:
    return json.dumps(documentation, ensure_ascii=False, indent=2, default=str)


def _merge(doc: StandardisedDoc, profile: Profile | None, keep: Iterable[str]) -> StandardisedDoc:
    merged: StandardisedDoc = {**doc}
    if profile is None:
        return merged
    kept = set(keep)
    if "function" in kept and profile.function:
        merged["function"] = profile.function
    if "tags" in kept and profile.tags:
        merged["tags"] = list(profile.tags)
    if "when_to_use" in kept and profile.when_to_use:
        merged["when_to_use"] = profile.when_to_use
    if "limitations" in kept and profile.limitations:
        merged["limitations"] = profile.limitations
    return merged


@dataclass(frozen=True)
class _ProfileResult:
    profile: Profile | None
    keep: tuple[str, ...]
    status: Expansion
    dropped: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


class LLMStandardiser:
    """Standardise raw tools with an LLM (or its cache): MFTR fields + a judged Tool-DE profile.

    Args:
        llm: the LLM client, or None to use only cached answers.
        cache: the LLM output cache (the one ``llm`` writes to).
        model: the model name of the cache keys (``Settings.llm_model``; the published paper
            outputs are stored under ``gpt-4o-mini``).

    Example:
        >>> standardiser = LLMStandardiser(LLM.from_settings(settings), cache, settings.llm_model)
        >>> doc = standardiser.standardise(raw_tool)   # None: no LLM and nothing cached
    """

    def __init__(self, llm: LLM | None, cache: LLMCache, model: str) -> None:
        self.llm = llm
        self.cache = cache
        self.model = model
        # (task, subject) -> why the LLM's answers stayed invalid; an ingest's second pass then
        # gets the same outcome without asking again (valid answers are in the cache).
        self._failures: dict[tuple[str, str], str] = {}

    # --- public -------------------------------------------------------------------------------------
    def standardise(self, raw: RawTool) -> StandardisedDoc | None:
        """The standardised document of ``raw``, or None when there is no LLM and no cached answer.

        Raises:
            LLMUnavailableError: the LLM is configured but cannot be reached.
            LLMOutputError: the LLM kept answering the ``standardize`` task with invalid output.
        """
        return self.run(raw).doc

    def require(self, raw: RawTool) -> StandardisedDoc:
        """Like :meth:`standardise`, for ingest: a missing standardisation is an error.

        Raises:
            LLMUnavailableError: the tool's standardisation is not cached and no LLM is configured
                (the message names ``llm_base_url``), or the LLM cannot be reached.
            CatalogRecordError: the LLM's answers for this tool stayed invalid (the record is
                reported as rejected, like any bad record).
        """
        doc = self.run_required(raw).doc
        assert doc is not None  # run_required raises instead
        return doc

    def run_required(self, raw: RawTool) -> StandardiseOutcome:
        """Like :meth:`run`, but a missing standardisation is an error (see :meth:`require`)."""
        try:
            outcome = self.run(raw)
        except LLMOutputError as exc:
            raise CatalogRecordError(
                raw.source,
                raw.position,
                f"the LLM could not standardise it: {exc}",
                record_id=raw.tool_id,
                field="standardized",
            ) from exc
        if outcome.doc is None:
            who = f"{raw.source} {raw.position}" + (f" (id {raw.tool_id!r})" if raw.tool_id else "")
            raise LLMUnavailableError(
                f"{who} has no cached standardisation for model {self.model!r} and no LLM is "
                "configured: set llm_base_url (TOOLSIFT_LLM_BASE_URL) to an OpenAI-compatible "
                "endpoint, import published outputs with `toolsift cache import`, or use rule-based "
                "standardisation (ingest --standardize rules)"
            )
        return outcome

    def run(self, raw: RawTool) -> StandardiseOutcome:
        """Standardise, expand, judge and (once) regenerate; see the module docstring.

        Raises:
            LLMUnavailableError: the LLM is configured but cannot be reached.
            LLMOutputError: the LLM kept answering the ``standardize`` task with invalid output
                (invalid ``expand`` or ``judge`` answers only drop the profile).
        """
        from toolsift.llm.cache import standardize_subject

        subject = standardize_subject(raw.documentation)
        documentation = _documentation_text(raw.documentation)
        got = self._step(
            STANDARDIZE_TASK,
            subject,
            STANDARDIZE_INSTRUCTIONS,
            {"documentation": documentation},
            STANDARDIZE_SCHEMA,
            parse_standardised,
        )
        if got is None:
            return StandardiseOutcome(doc=None, source="none")
        parsed, source = got
        doc = settle_required(parsed, raw)
        result = self._profile(subject, documentation)
        return StandardiseOutcome(
            doc=_merge(doc, result.profile, result.keep),
            source=source,
            expansion=result.status,
            dropped_fields=result.dropped,
            notes=result.notes,
        )

    # --- steps --------------------------------------------------------------------------------------
    def _step(
        self,
        task: str,
        subject: str,
        instructions: str,
        data: Mapping[str, str],
        schema: Mapping[str, Any],
        parse: Callable[[object], _T],
    ) -> tuple[_T, Literal["llm", "cache"]] | None:
        """The parsed answer of one task: from the cache, else the LLM, else None."""
        from toolsift.llm import cached_output

        cached = cached_output(self.cache, task, self.model, subject)
        if cached is not None:
            try:
                return parse(cached), "cache"
            except LLMOutputError:
                pass  # an entry that no longer passes this task's checks counts as a miss
        if self.llm is None:
            return None
        key = (task, subject)
        if key in self._failures:
            raise LLMOutputError(self._failures[key])

        def check(answer: dict[str, Any]) -> None:
            parse(answer)  # an LLMOutputError sends the answer back for another try

        try:
            answer = self.llm.complete_json(
                task=task, instructions=instructions, data=data, schema=schema, subject=subject, check=check
            )
        except LLMOutputError as exc:
            self._failures[key] = str(exc)
            raise
        return parse(answer), "llm"

    def _expand(self, subject: str, documentation: str) -> Profile | None:
        got = self._step(
            EXPAND_TASK, subject, EXPAND_INSTRUCTIONS, {"documentation": documentation}, EXPAND_SCHEMA, parse_profile
        )
        return None if got is None else got[0]

    def _regenerate(self, subject: str, documentation: str, rejected: Profile, review: str) -> Profile | None:
        regen_subject = f"{subject}:regenerate:{_digest([rejected.to_dict(), review])}"
        data = {
            "documentation": documentation,
            "rejected_profile": json.dumps(rejected.to_dict(), ensure_ascii=False, indent=2),
            "review": review,
        }
        got = self._step(EXPAND_TASK, regen_subject, REGENERATE_INSTRUCTIONS, data, EXPAND_SCHEMA, parse_profile)
        return None if got is None else got[0]

    def _judge(self, subject: str, documentation: str, profile: Profile) -> Verdict | None:
        judge_subject = f"{subject}:judge:{_digest(profile.to_dict())}"
        data = {
            "documentation": documentation,
            "tool_profile": json.dumps(profile.to_dict(), ensure_ascii=False, indent=2),
        }
        got = self._step(JUDGE_TASK, judge_subject, JUDGE_INSTRUCTIONS, data, JUDGE_SCHEMA, parse_verdict(profile))
        return None if got is None else got[0]

    def _profile(self, subject: str, documentation: str) -> _ProfileResult:
        """Expansion → judge → at most one regeneration → judge; what to keep of which profile."""
        try:
            first = self._expand(subject, documentation)
        except LLMOutputError as exc:
            return _ProfileResult(None, (), "dropped", PROFILE_FIELDS, (f"expand: {exc}",))
        if first is None:
            return _ProfileResult(None, (), "absent")
        try:
            verdict = self._judge(subject, documentation, first)
        except LLMOutputError as exc:
            return _ProfileResult(None, (), "dropped", first.present(), (f"judge: {exc}",))
        if verdict is None:  # never keep a profile no judge has passed
            return _ProfileResult(None, (), "absent", first.present(), ("judge: no verdict cached",))
        if verdict.faithful:
            return _ProfileResult(first, first.present(), "accepted")

        review = _review(verdict)
        notes = [f"judge: {review}"]
        fallback = _kept(first, verdict, notes)
        try:
            second = self._regenerate(subject, documentation, first, review)
        except LLMOutputError as exc:
            return replace(fallback, notes=(*notes, f"regenerate: {exc}"))
        if second is None:
            return replace(fallback, notes=(*notes, "regenerate: no answer cached"))
        try:
            verdict2 = self._judge(subject, documentation, second)
        except LLMOutputError as exc:
            return replace(fallback, notes=(*notes, f"judge of the regeneration: {exc}"))
        if verdict2 is None:
            return replace(fallback, notes=(*notes, "judge of the regeneration: no verdict cached"))
        if verdict2.faithful:
            return _ProfileResult(second, second.present(), "regenerated", (), tuple(notes))
        notes.append(f"judge of the regeneration: {_review(verdict2)}")
        return _kept(second, verdict2, notes)


def _review(verdict: Verdict) -> str:
    fields = ", ".join(verdict.failing_fields)
    return f"failing fields: {fields}. {verdict.feedback}".strip()


def _kept(profile: Profile, verdict: Verdict, notes: list[str]) -> _ProfileResult:
    keep = tuple(f for f in profile.present() if f not in verdict.failing_fields)
    status: Expansion = "partial" if keep else "dropped"
    return _ProfileResult(profile, keep, status, verdict.failing_fields, tuple(notes))
