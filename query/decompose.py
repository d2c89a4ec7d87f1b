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

:func:`file_needs` adds what a request implies without saying it as a clause: a file path in a clause
is a need to write that file (``save it to /root/md/a.md``, ``a report in /root/pdf``) or, after a
reading verb or ``from`` / ``under`` / ``located at``, to read it. The need is said in words a tool's
description uses, the file type named from its extension (:data:`FILE_KINDS`): ``write pdf document
file to path``. A plain-text format (:data:`TEXT_FORMATS`: Markdown, HTML, JSON, source code ...) is
any editor's file, written and read by a catalog's generic file tools, so its need says ``text file``
(``save it to /root/md/a.md`` → ``write text file to path``): the format's own name would pull its
converters (``html_to_markdown``) above the file writer. The clause itself, searched as a need
too, still names the format. :func:`request_needs` is both: the split, then the file needs.
"""

from __future__ import annotations

import re

from collections.abc import Sequence

from toolsift.errors import BadQueryError, ConfigError
from toolsift.query.rewrite import MAX_TOOL_NEEDS
from toolsift.query.structured import StructuredQuery, ToolNeed

__all__ = ["ACTION_VERBS", "FILE_KINDS", "TEXT_FORMATS", "split_needs", "file_needs", "request_needs", "decompose"]

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

#: File extensions named in words, for the needs a path implies (anything else is a "file").
FILE_KINDS: dict[str, str] = {
    "md": "markdown", "markdown": "markdown", "txt": "text", "rst": "text", "log": "text",
    "pdf": "pdf document", "doc": "word document", "docx": "word document", "odt": "word document",
    "xls": "excel spreadsheet", "xlsx": "excel spreadsheet", "ods": "spreadsheet", "csv": "csv spreadsheet",
    "ppt": "powerpoint presentation", "pptx": "powerpoint presentation", "odp": "presentation",
    "png": "png image", "jpg": "jpeg image", "jpeg": "jpeg image", "gif": "gif image", "svg": "svg image",
    "webp": "image", "html": "html web page", "htm": "html web page", "json": "json", "yaml": "yaml",
    "yml": "yaml", "xml": "xml", "wav": "audio", "mp3": "audio", "flac": "audio", "mp4": "video",
    "mov": "video", "zip": "zip archive", "py": "python source code", "js": "javascript source code",
    "ts": "typescript source code",
}
#: Plain-text extensions: files any editor writes, so a generic file tool reads and writes them.
TEXT_FORMATS: frozenset[str] = frozenset({
    "md", "markdown", "txt", "rst", "log", "html", "htm", "json", "yaml", "yml", "xml", "csv", "py", "js", "ts",
})
#: A path: absolute or home-relative with one slash at least, or a bare file name with a known extension.
_PATH = re.compile(
    r"(?<![\w/])(?:~?/[\w.\-]+(?:/[\w.\-]+)*/?|[\w\-]+\.(?:" + "|".join(sorted(FILE_KINDS, key=len, reverse=True)) + r"))(?![\w/])"
)
_READ_VERBS = frozenset({"read", "open", "load", "analyze", "analyse", "parse", "extract", "import", "use", "summarize",
                         "summarise", "review", "check", "convert", "get", "list", "show", "insert", "attach",
                         "embed", "upload"})
_WRITE_VERBS = frozenset({"save", "write", "store", "export", "generate", "create", "draft", "make", "produce", "put",
                          "give", "prepare"})
#: Before a path, ``my`` names a file the user already has.
_READ_PREPOSITIONS = frozenset({"from", "under", "located", "my"})
_WRITE_PREPOSITIONS = frozenset({"to", "into"})
_IRREGULAR = {"written": "write", "wrote": "write", "made": "make"}
_CLAUSE_FOR_PATHS = re.compile(r"(?<=[.!?;,])\s+|\s+(?:and|then)\s+")


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


def _file_kind(path: str) -> str:
    """The file's kind in the words its need says: ``text`` for a plain-text format, else its type."""
    name = path.rstrip("/.").rsplit("/", 1)[-1]
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    return "text" if extension in TEXT_FORMATS else FILE_KINDS.get(extension, "")


def _forms(word: str) -> set[str]:
    """The word and the bases it may be inflected from (``saved`` → ``save``, ``stores`` → ``store``)."""
    forms = {word}
    for suffix, base in (("s", ""), ("es", ""), ("d", ""), ("ed", ""), ("ing", ""), ("ing", "e"), ("en", "e")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2:
            forms.add(word[: -len(suffix)] + base)
    return forms | ({_IRREGULAR[word]} if word in _IRREGULAR else set())


def _reads(before: Sequence[str]) -> bool:
    """Whether the words before a path make it a file to read: the nearest cue decides, a writing
    verb or ``to`` / ``into`` (write) or a reading verb or ``from`` / ``under`` / ``located`` /
    ``my`` (read); a path no cue points at is where the answer goes ("a report on /root/a.md")."""
    for word in reversed(before):
        forms = _forms(word)
        if forms & _WRITE_VERBS or word in _WRITE_PREPOSITIONS:
            return False
        if forms & _READ_VERBS or word in _READ_PREPOSITIONS:
            return True
    return False


def file_needs(text: str) -> list[str]:
    """The needs the request's file paths imply, in order, each once.

    A clause (split at punctuation, ``and``, ``then``) with a path is one need: to write the file
    when the nearest cue before the path is a writing verb in any form (``save``, ``saved``,
    ``write``, ``give`` ...) or ``to`` / ``into``, or when there is no cue; to read it when the cue
    is a reading verb (``read``, ``get``, ``analyze`` ...), ``from``, ``under``, ``located`` or
    ``my``; a clause that opens with its path goes the way of the one before. The
    file's type comes from the first path with a known extension (:data:`FILE_KINDS`; ``text`` for
    the :data:`TEXT_FORMATS`).

    Example:
        >>> file_needs("Find today's news and save a summary to /root/md/news.md.")
        ['write text file to path']
        >>> file_needs("Make a deck of it and save it to /root/ppt/news.pptx.")
        ['write powerpoint presentation file to path']
        >>> file_needs("Read the data under /root/excel/people.xlsx and tell me the mean.")
        ['read excel spreadsheet file from path']
    """
    needs: list[str] = []
    reads = False
    for clause in _CLAUSE_FOR_PATHS.split(" ".join(text.split())):
        paths = [m for m in _PATH.finditer(clause) if "/" in m.group(0) or _file_kind(m.group(0))]
        if not paths:
            continue
        kind = next((k for k in (_file_kind(m.group(0)) for m in paths) if k), "")
        before = [w.lower() for w in re.findall(r"[A-Za-z]+", clause[: paths[0].start()])]
        # A clause that opens with its path ("a.txt and b.txt") goes the way of the one before.
        reads = _reads(before) if before or not needs else reads
        what = f"{kind} file" if kind else "file"
        need = f"read {what} from path" if reads else f"write {what} to path"
        if need not in needs:
            needs.append(need)
    return needs


def request_needs(text: str, *, max_needs: int = MAX_TOOL_NEEDS) -> list[str]:
    """The request's needs without an LLM: :func:`split_needs`, then the :func:`file_needs` not
    already among them (at most ``max_needs`` from the split; file needs come on top)."""
    needs = split_needs(text, max_needs=max_needs)
    return needs + [n for n in file_needs(text) if n not in needs]


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
