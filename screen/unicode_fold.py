"""What the hostile-text screen reads through: invisible characters, look-alike letters, leetspeak and
obvious encodings (:mod:`toolsift.screen.screening` screens the views this module makes of a text).

* **Invisible characters.** Unicode's default-ignorable code points (soft hyphen, zero-width
  characters, bidi controls, variation selectors, tag characters, Hangul fillers, …) are drawn as
  nothing, so they can split a word a pattern looks for. They are removed from every view the
  patterns read, reported (:func:`hidden_unicode`) where they hide inside text, and written as escapes
  by :func:`visible`. Legitimate uses are left alone: one variation selector after an emoji (``❤️``)
  or in a keycap (``1️⃣``), joiners inside emoji and the scripts that need them, marks of real
  right-to-left text, emoji flag tag sequences, soft hyphens (hyphenation hints in long words).
* **Smuggled text.** Unicode tag characters spell ASCII (U+E0041 is a hidden ``A``) and a run of
  variation selectors can carry bytes (U+FE00–FE0F are 0–15, U+E0100–E01EF are 16–255): both are
  decoded and screened like visible text.
* **Look-alike letters.** A word that mixes Latin letters with letters of another script that look
  Latin (``Іgnore`` with a Cyrillic ``І``) is folded to Latin with Unicode's confusables table (UTS #39,
  from the ``confusable-homoglyphs`` package, which ships and tracks Unicode's data). Words written
  wholly in Cyrillic or Greek are real text and stay as they are.
* **Leetspeak** (``1gn0r3``) is folded in words that mix letters and digits or symbols.
* **Encodings.** Base64, hex and URL-encoded runs, HTML entities, ROT13 and lines written backwards
  are decoded where they decode to readable text; the decoded text is screened too, and a finding says
  how it was hidden.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import html
import re
import unicodedata
import urllib.parse
from collections.abc import Callable, Iterator

__all__ = [
    "INVISIBLE",
    "visible",
    "without_invisible",
    "strip_invisible",
    "decoded_tags",
    "decoded_selectors",
    "fold_confusables",
    "mixed_script_words",
    "fold_leet",
    "decodings",
    "hidden_unicode",
]

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt), tags and selectors included.
_IGNORABLE_CLASS = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164"
    "\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff"
)
#: Every character drawn as nothing (Unicode's default-ignorable code points).
INVISIBLE = re.compile(f"[{_IGNORABLE_CLASS}]")

_TAGS = re.compile("[\U000e0000-\U000e007f]+")
# An emoji tag sequence (UTS #51): a black flag, a subdivision code in tag letters, CANCEL TAG (🏴 Scotland).
_EMOJI_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f")
_SELECTOR = "\ufe00-\ufe0f\U000e0100-\U000e01ef"
_SELECTORS = re.compile(f"[{_SELECTOR}]+")
_KEYCAP = "\u20e3"
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u180e"
# Invisible characters with no use inside Latin text: invisible operators, deprecated format
# characters, the grapheme joiner, Hangul fillers, Khmer inherent vowels, shorthand format controls,
# musical format controls.
_NEVER_IN_TEXT = set("\u2061\u2062\u2063\u2064\u206a\u206b\u206c\u206d\u206e\u206f\u034f\u115f\u1160\u3164\uffa0"
                     "\u17b4\u17b5\U0001bca0\U0001bca1\U0001bca2\U0001bca3") | {chr(c) for c in range(0x1D173, 0x1D17B)}
_BIDI_OVERRIDE = "\u202d\u202e"
_BIDI_EMBED = "\u202a\u202b\u2066\u2067\u2068\u2069\u202c"
_RTL_LETTER = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")


def _is_selector(char: str) -> bool:
    return 0xFE00 <= ord(char) <= 0xFE0F or 0xE0100 <= ord(char) <= 0xE01EF


def _presentation(text: str, index: int) -> bool:
    """Whether the variation selector at ``index`` is a legitimate one: alone, after a visible
    non-ASCII character (an emoji, a CJK ideograph), or in a keycap (``1`` U+FE0F U+20E3)."""
    before = text[index - 1] if index else ""
    after = text[index + 1 : index + 2]
    if not before or _is_selector(before) or (after and _is_selector(after)):
        return False
    if before in "0123456789#*" and after == _KEYCAP:
        return True
    return not before.isascii() and not INVISIBLE.match(before)


def _hidden(text: str, index: int) -> bool:
    """Whether ``text[index]`` is drawn as nothing and is no emoji's presentation selector."""
    char = text[index]
    return bool(INVISIBLE.match(char)) and not (0xFE00 <= ord(char) <= 0xFE0F and _presentation(text, index))


def visible(text: str) -> str:
    """``text`` with every invisible or reordering character written as a visible escape (``\\u200b``),
    for handing a flagged description to an agent or showing it to a person. A lone variation selector
    after an emoji stays (it only picks the emoji's presentation)."""
    if not INVISIBLE.search(text):
        return text
    out = []
    for index, char in enumerate(text):
        if _hidden(text, index):
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return "".join(out)


def without_invisible(text: str) -> str:
    """``text`` less every character :func:`visible` would write as an escape (nothing else changes):
    for a short line that must carry no hidden text and has no room for escapes."""
    if not INVISIBLE.search(text):
        return text
    return "".join(char for index, char in enumerate(text) if not _hidden(text, index))


def strip_invisible(text: str) -> str:
    """NFKC of ``text`` with every invisible character removed (what the patterns read)."""
    return INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def decoded_tags(text: str) -> str:
    """The ASCII that Unicode tag characters spell (U+E0041 is a hidden 'A'), outside emoji flags."""
    text = _EMOJI_FLAG.sub("", text)
    return "".join(chr(ord(c) - 0xE0000) for run in _TAGS.findall(text) for c in run if 0x20 <= ord(c) - 0xE0000 < 0x7F)


def _selector_byte(char: str) -> int:
    return ord(char) - 0xFE00 if ord(char) <= 0xFE0F else ord(char) - 0xE0100 + 16


def decoded_selectors(text: str) -> str:
    """The text that runs of four or more variation selectors carry as bytes (U+FE00–FE0F are 0–15,
    U+E0100–E01EF are 16–255, "emoji smuggling"), where it reads as text."""
    out = []
    for run in _SELECTORS.findall(text):
        if len(run) >= 4:
            decoded = bytes(_selector_byte(c) for c in run).decode("utf-8", errors="replace")
            if _readable(decoded, minimum=4):
                out.append(decoded)
    return " ".join(out)


# --- look-alike letters ----------------------------------------------------------------------------

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")


@functools.lru_cache(maxsize=4096)
def _latin_twin(char: str) -> str | None:
    """The ASCII letter ``char`` (a letter of another script) is confusable with, lower case, if any."""
    if char.isascii() or not char.isalpha():
        return None
    from confusable_homoglyphs import confusables

    for candidate in dict.fromkeys((char.lower(), char)):
        found = confusables.is_confusable(candidate, greedy=True, preferred_aliases=["latin"])
        for entry in found or ():
            for glyph in entry["homoglyphs"]:
                if len(glyph["c"]) == 1 and glyph["c"].isascii() and glyph["c"].isalpha():
                    return str(glyph["c"]).lower()
    return None


def _mixed(word: str) -> bool:
    """A word with Latin letters and letters of another script that look Latin (``Іgnore``)."""
    return any(c.isascii() for c in word) and any(_latin_twin(c) for c in word if not c.isascii())


def mixed_script_words(text: str) -> list[str]:
    """The words of ``text`` (NFKC, invisible characters removed) that mix Latin letters with look-alike
    letters of another script."""
    return [m.group() for m in _WORD.finditer(text) if not m.group().isascii() and _mixed(m.group())]


def _cased(twin: str | None, char: str) -> str:
    if twin is None:
        return char
    return twin.upper() if char.isupper() else twin


def fold_confusables(text: str) -> str:
    """``text`` with each mixed-script word's look-alike letters replaced by the Latin ones they imitate.
    Words wholly in one script are left as they are (real Cyrillic or Greek text)."""
    if text.isascii():
        return text

    def fold(match: re.Match[str]) -> str:
        word = match.group()
        if word.isascii() or not _mixed(word):
            return word
        return "".join(_cased(_latin_twin(c), c) if not c.isascii() else c for c in word)

    return _WORD.sub(fold, text)


# --- leetspeak -------------------------------------------------------------------------------------

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s", "|": "l"})
_LEET_WORD = re.compile(r"(?<![\w@$|])[a-z0-9@$|]*[a-z][a-z0-9@$|]*(?![\w@$|])")


def fold_leet(text: str) -> str:
    """``text`` (lower case) with leetspeak folded in words that mix letters and look-alike digits or
    symbols (``1gn0r3`` → ``ignore``); plain words and numbers stay."""
    def fold(match: re.Match[str]) -> str:
        word = match.group()
        if word.isalpha() or sum(c.isalpha() for c in word) < 2:
            return word
        return word.translate(_LEET)

    return _LEET_WORD.sub(fold, text)


# --- encodings -------------------------------------------------------------------------------------

_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_HEX = re.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[\s:,]?){12,}")
_PERCENT = re.compile(r"%[0-9a-fA-F]{2}")
_ENTITY = re.compile(r"&(?:#\d{2,7}|#x[0-9a-fA-F]{2,6}|[a-zA-Z]{2,8});")


def _readable(text: str, *, minimum: int = 8) -> bool:
    """Whether decoded bytes read as words: printable, mostly letters and spaces, with a space."""
    if len(text) < minimum or "\ufffd" in text or " " not in text.strip():
        return False
    printable = sum(c.isprintable() for c in text) / len(text)
    wordy = sum(c.isalpha() or c == " " for c in text) / len(text)
    return printable > 0.95 and wordy > 0.7


def _base64_texts(text: str) -> Iterator[str]:
    for match in _BASE64.finditer(text):
        run = match.group()
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                decoded = decode(run + "=" * (-len(run) % 4)).decode("utf-8")
            except (binascii.Error, ValueError):
                continue
            if _readable(decoded):
                yield decoded
                break


def _hex_texts(text: str) -> Iterator[str]:
    for match in _HEX.finditer(text):
        digits = re.sub(r"\\x|0x|[\s:,]", "", match.group())
        try:
            decoded = bytes.fromhex(digits[: len(digits) // 2 * 2]).decode("utf-8")
        except ValueError:
            continue
        if _readable(decoded):
            yield decoded


_COMMON = frozenset("the and to of a in is you it this that for on with do not your be are all any user read send from as or "
                    "into its their file".split())
_RUN = re.compile(r"[^\n\u2066-\u2069\u202a-\u202e]+")


def _common_words(text: str) -> int:
    return sum(word in _COMMON for word in re.findall(r"[a-z']+", text.lower()))


def _reversed_texts(text: str) -> Iterator[str]:
    """Lines (or runs between bidi controls) written backwards: ones that read as English only reversed."""
    for run in _RUN.findall(text):
        if len(run.split()) < 4:
            continue
        backwards = run[::-1]
        ahead, back = _common_words(run), _common_words(backwards)
        if back >= 3 and back >= 2 * ahead + 1:
            yield backwards


def decodings(text: str) -> list[tuple[str, str]]:
    """``(how, text)`` for each readable text hidden in ``text`` by an obvious encoding: base64, hex,
    URL encoding, HTML entities, ROT13 (the whole text, which reads as nothing when it was plain),
    lines written backwards."""
    out: list[tuple[str, str]] = []
    out += [("reversed text", backwards) for backwards in _reversed_texts(text)]
    out += [("base64", decoded) for decoded in _base64_texts(text)]
    out += [("hex", decoded) for decoded in _hex_texts(text)]
    if len(_PERCENT.findall(text)) >= 3:
        out.append(("URL encoding", urllib.parse.unquote_plus(text)))
    if _ENTITY.search(text):
        out.append(("HTML entities", html.unescape(text)))
    if sum(c.isascii() and c.isalpha() for c in text) >= 12:
        out.append(("ROT13", codecs.encode(text, "rot13")))
    return out


# --- reporting -------------------------------------------------------------------------------------


# A short quoted example in a sentence that names what it shows ("'a\u200bb' (zero-width space) -> 'ab'",
# "'рaypal' (Cyrillic р) is reported as mixed-script"): a tool about Unicode showing its subject.
_EXAMPLE = re.compile(r"'[^'\n]{1,40}'|\"[^\"\n]{1,40}\"|“[^”\n]{1,40}”|‘[^’\n]{1,40}’|«[^»\n]{1,40}»|`[^`\n]{1,40}`")
_NAMES_IT = re.compile(
    r"zero[- ]width|invisible|soft[- ]hyphen|homoglyph|look-?alike|confusable|cyrillic|greek|mixed[- ]script|fullwidth|"
    r"nfkc|nfkd|nfc|nfd|normali[sz]|variation selector|tag character|bidi|right-to-left|code ?points?|\bu\+[0-9a-f]{4}", re.IGNORECASE)
_CLAUSE = re.compile(r"[^.;!?\n]*(?:[.;!?\n]|$)")


def _without_explained_examples(text: str) -> str:
    """``text`` less the short quoted examples of clauses that name the characters they show."""
    if not INVISIBLE.search(text) and text.isascii():
        return text
    out = text
    for clause in _CLAUSE.finditer(text):
        bare = _EXAMPLE.sub(" ", clause.group())
        if _NAMES_IT.search(bare):
            for example in _EXAMPLE.finditer(clause.group()):
                out = out.replace(example.group(), " ", 1)
    return out


def hidden_unicode(text: str, quote: Callable[[str], str]) -> list[str]:
    """What hides in ``text`` as invisible characters, one line each (the screen's ``hidden-unicode``
    details); ``quote`` renders found text for a reason. Short quoted examples of a clause that names
    the characters it shows (a Unicode tool's "'a\u200bb' (zero-width space) -> 'ab'") are its subject,
    not hidden text."""
    found: list[str] = []
    text = _without_explained_examples(text)
    hidden = decoded_tags(text)
    if _TAGS.search(_EMOJI_FLAG.sub("", text)):
        found.append(f"tag characters spelling {quote(hidden) if hidden.strip() else 'nothing readable'}")
    if any(c in text for c in _BIDI_OVERRIDE):
        found.append("a bidi override (U+202D/U+202E) makes the text read differently from how it is stored")
    elif any(c in text for c in _BIDI_EMBED) and not _RTL_LETTER.search(text):
        found.append("bidi embedding or isolate controls in text with no right-to-left script")
    runs = [run for run in _SELECTORS.findall(text) if len(run) > 1]
    if runs:
        smuggled = decoded_selectors(text)
        found.append(f"{max(len(r) for r in runs)} variation selectors in a row"
                     + (f" carrying {quote(smuggled)}" if smuggled else ""))
    elif any(_is_selector(c) and not _presentation(text, i) for i, c in enumerate(text)):
        found.append("a variation selector where no emoji is (inside plain text)")
    for index, char in enumerate(text):
        if char in _NEVER_IN_TEXT:
            found.append(f"an invisible character (U+{ord(char):04X}) hides inside the text")
            break
        if char not in _ZERO_WIDTH or (char == "\ufeff" and index == 0):
            continue
        before, after = text[index - 1 : index], text[index + 1 : index + 2]
        # Joiners inside emoji sequences or scripts that use them (Persian, Indic) are part of the text.
        if char in "\u200c\u200d" and not (before.isascii() and after.isascii()):
            continue
        found.append(f"a zero-width character (U+{ord(char):04X}) hides inside the text")
        break
    words = mixed_script_words(strip_invisible(text))
    if words:
        found.append(f"look-alike letters of another script inside Latin words, {quote(' '.join(words[:4]))}")
    return found
