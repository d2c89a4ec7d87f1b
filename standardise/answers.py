"""The answers of the three LLM tasks: their typed forms and the parsers that check them.

Each parser is the ``check`` of its task (the LLM layer retries an answer that fails it) and also
validates cached answers (e.g. MFTR's published ``augmented`` objects). A parser raises
:class:`~toolsift.errors.LLMOutputError` naming the offending field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypedDict

from toolsift.errors import LLMOutputError
from toolsift.standardise.tasks import (
    MAX_FUNCTION_WORDS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    MIN_TAGS,
    PROFILE_FIELDS,
    ProfileField,
)

__all__ = [
    "ParameterSpec",
    "ExampleSpec",
    "StandardisedDoc",
    "Profile",
    "Verdict",
    "parse_standardised",
    "parse_profile",
    "parse_verdict",
]

class ParameterSpec(TypedDict, total=False):
    """One parameter of a standardised document (MFTR's ``parameters`` values)."""

    type: str
    description: str
    required: bool
    example: object


class ExampleSpec(TypedDict, total=False):
    """One usage example: a user intent, optionally with the call that serves it."""

    user_intent: str
    tool_call: dict[str, object]


class StandardisedDoc(TypedDict, total=False):
    """MFTR's ``augmented`` object plus the Tool-DE profile keys that survived the judge.

    ``response`` and ``examples`` are left out when empty (normalisation then keeps what the raw
    documentation has); a profile key is present only when it is non-empty and was judged faithful.
    """

    description: str
    parameters: dict[str, ParameterSpec]
    response: str
    examples: list[ExampleSpec]
    function: str
    tags: list[str]
    when_to_use: str
    limitations: str


@dataclass(frozen=True)
class Profile:
    """A Tool-DE profile; ``when_to_use`` and ``limitations`` are ``""`` when unsupported."""

    function: str
    tags: tuple[str, ...]
    when_to_use: str = ""
    limitations: str = ""

    def to_dict(self) -> dict[str, str | list[str]]:
        return {
            "function": self.function,
            "tags": list(self.tags),
            "when_to_use": self.when_to_use,
            "limitations": self.limitations,
        }

    def present(self) -> tuple[ProfileField, ...]:
        """The fields with content (the ones a judge can fail)."""
        out: list[ProfileField] = []
        if self.function:
            out.append("function")
        if self.tags:
            out.append("tags")
        if self.when_to_use:
            out.append("when_to_use")
        if self.limitations:
            out.append("limitations")
        return tuple(out)


@dataclass(frozen=True)
class Verdict:
    """The judge's answer: the fields that failed (empty: faithful) and why."""

    failing_fields: tuple[ProfileField, ...]
    feedback: str = ""

    @property
    def faithful(self) -> bool:
        return not self.failing_fields


# --- parsers (the `check` of each task; they also validate cached answers) ---------------------------


def _words(text: str) -> int:
    return len(text.split())


def _text(value: object, where: str, *, required: bool = False) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise LLMOutputError(f"{where} must be a string, got {type(value).__name__}")
    text = value.strip()
    if required and not text:
        raise LLMOutputError(f"{where} must not be empty")
    return text


def parse_standardised(value: object) -> StandardisedDoc:
    """Validate a ``standardize`` answer (or a cached MFTR ``augmented`` object) and clean it.

    Args:
        value: the decoded JSON answer.

    Returns:
        The four MFTR fields: a non-empty description; parameters by name with type, description
        and a boolean ``required`` (missing: True); ``response`` and ``examples`` only when
        non-empty. Keys outside the schema are dropped.

    Raises:
        LLMOutputError: a field has the wrong type, the description is empty, or a parameter name
            is empty. (As a task's ``check``, ``complete_json`` retries on it.)
    """
    if not isinstance(value, Mapping):
        raise LLMOutputError("the standardised document must be a JSON object")
    doc: StandardisedDoc = {"description": _text(value.get("description"), "description", required=True)}
    raw_params = value.get("parameters")
    if raw_params is None:
        raw_params = {}
    if not isinstance(raw_params, Mapping):
        raise LLMOutputError(f"parameters must be an object of name -> spec, got {type(raw_params).__name__}")
    parameters: dict[str, ParameterSpec] = {}
    for name, spec in raw_params.items():
        if not isinstance(name, str) or not name.strip():
            raise LLMOutputError("a parameter has an empty name")
        if not isinstance(spec, Mapping):
            raise LLMOutputError(f"parameters.{name} must be an object, got {type(spec).__name__}")
        required = spec.get("required", True)
        if not isinstance(required, bool):
            raise LLMOutputError(f"parameters.{name}.required must be true or false")
        param: ParameterSpec = {
            "type": _text(spec.get("type"), f"parameters.{name}.type"),
            "description": _text(spec.get("description"), f"parameters.{name}.description"),
            "required": required,
        }
        if spec.get("example") is not None:
            param["example"] = spec["example"]
        parameters[name.strip()] = param
    doc["parameters"] = parameters
    response = _text(value.get("response"), "response")
    if response:
        doc["response"] = response
    raw_examples = value.get("examples")
    if raw_examples is None:
        raw_examples = []
    if not isinstance(raw_examples, list):
        raise LLMOutputError(f"examples must be a list, got {type(raw_examples).__name__}")
    examples: list[ExampleSpec] = []
    for index, item in enumerate(raw_examples):
        if not isinstance(item, Mapping):
            raise LLMOutputError(f"examples[{index}] must be an object")
        intent = _text(item.get("user_intent"), f"examples[{index}].user_intent", required=True)
        example: ExampleSpec = {"user_intent": intent}
        call = item.get("tool_call")
        if call is not None:
            if not isinstance(call, Mapping):
                raise LLMOutputError(f"examples[{index}].tool_call must be an object")
            example["tool_call"] = dict(call)
        examples.append(example)
    if examples:
        doc["examples"] = examples
    return doc


def parse_profile(value: object) -> Profile:
    """Validate an ``expand`` answer: Tool-DE's length and count rules are hard limits.

    Tags are lower-cased and de-duplicated before they are counted.

    Raises:
        LLMOutputError: a missing or non-string field; ``function`` empty or 20 words or longer;
            fewer than 3 or more than 5 distinct tags; a tag empty or longer than 60 characters.
    """
    if not isinstance(value, Mapping):
        raise LLMOutputError("the profile must be a JSON object")
    function = _text(value.get("function"), "function", required=True)
    if _words(function) > MAX_FUNCTION_WORDS:
        raise LLMOutputError(f"function has {_words(function)} words; it must have fewer than 20")
    raw_tags = value.get("tags")
    if not isinstance(raw_tags, list):
        raise LLMOutputError("tags must be a list of strings")
    tags: list[str] = []
    for index, tag in enumerate(raw_tags):
        text = _text(tag, f"tags[{index}]", required=True).lower()
        if len(text) > MAX_TAG_CHARS:
            raise LLMOutputError(f"tags[{index}] is longer than {MAX_TAG_CHARS} characters")
        tags.append(text)
    distinct = tuple(dict.fromkeys(tags))
    if not MIN_TAGS <= len(distinct) <= MAX_TAGS:
        raise LLMOutputError(f"there must be {MIN_TAGS} to {MAX_TAGS} distinct tags, got {len(distinct)}")
    return Profile(
        function=function,
        tags=distinct,
        when_to_use=_text(value.get("when_to_use"), "when_to_use"),
        limitations=_text(value.get("limitations"), "limitations"),
    )


def parse_verdict(profile: Profile) -> Callable[[object], Verdict]:
    """The parser of a ``judge`` answer about ``profile``.

    The answer must be consistent: ``faithful`` is true exactly when ``failing_fields`` is empty.
    Failing fields the profile does not have (empty ones) are ignored; a "not faithful" that names
    none of the profile's fields is rejected, since it says nothing that could be fixed or dropped.
    """
    present = profile.present()

    def parse(value: object) -> Verdict:
        if not isinstance(value, Mapping):
            raise LLMOutputError("the verdict must be a JSON object")
        faithful = value.get("faithful")
        if not isinstance(faithful, bool):
            raise LLMOutputError("faithful must be true or false")
        failing_raw = value.get("failing_fields")
        if not isinstance(failing_raw, list) or not all(isinstance(f, str) for f in failing_raw):
            raise LLMOutputError("failing_fields must be a list of field names")
        unknown = sorted(set(failing_raw) - set(PROFILE_FIELDS))
        if unknown:
            raise LLMOutputError(f"unknown field(s) in failing_fields: {unknown}")
        failing = tuple(f for f in present if f in failing_raw)
        if faithful and failing:
            raise LLMOutputError("faithful is true but failing_fields names fields")
        if not faithful and not failing:
            raise LLMOutputError("faithful is false but failing_fields names none of the profile's fields")
        return Verdict(failing_fields=failing, feedback=_text(value.get("feedback"), "feedback"))

    return parse
