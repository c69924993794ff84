"""Text views for the guard: the same text normalised several ways, each char mapped back.

Obfuscated injections survive one normalisation but rarely all of them, so every detector
runs over several *views* of a text:

- ``plain``: NFKC, hidden characters (zero-width, bidi controls, tags, other format
  characters) removed, casefolded. Fullwidth and mathematical letters become ASCII.
- ``folded``: ``plain`` with Cyrillic/Greek look-alike letters mapped to Latin.
- ``words``: a view with every run of non-alphanumeric characters (``_``, ``-``, dots,
  spacing tricks) turned into one space.
- ``leet``: digits and symbols that stand for letters (``1gn0r3``) mapped to letters.
- ``squash``: letters only, no spaces (``i g n o r e`` and ``ign.ore`` become ``ignore``).

Every view keeps ``src``: for each of its characters, the index of the original character
it came from, so a finding can point at the exact span of the patch text.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

#: Zero-width and other invisible characters, bidi controls, tag characters.
_INVISIBLE = frozenset(
    [
        0x00AD,
        0x034F,
        0x061C,
        0x115F,
        0x1160,
        0x17B4,
        0x17B5,
        0x180E,
        0x3164,
        0xFFA0,
        0xFEFF,
        *range(0x200B, 0x2010),
        *range(0x202A, 0x202F),
        *range(0x2060, 0x2070),
    ]
)
_BIDI = frozenset([0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)])

#: Cyrillic and Greek letters that look like Latin ones (after casefolding).
HOMOGLYPHS: dict[str, str] = {
    # Cyrillic
    "а": "a",
    "в": "b",
    "е": "e",
    "ё": "e",
    "к": "k",
    "м": "m",
    "н": "h",
    "о": "o",
    "р": "p",
    "с": "c",
    "т": "t",
    "у": "y",
    "х": "x",
    "ѕ": "s",
    "і": "i",
    "ї": "i",
    "ј": "j",
    "ԁ": "d",
    "ԛ": "q",
    "ԝ": "w",
    "ɡ": "g",
    "ӏ": "l",
    "ү": "y",
    "һ": "h",
    "ո": "n",
    "ց": "g",
    "ս": "u",
    # Greek
    "α": "a",
    "β": "b",
    "ε": "e",
    "η": "n",
    "ι": "i",
    "κ": "k",
    "ν": "v",
    "ο": "o",
    "ρ": "p",
    "τ": "t",
    "υ": "u",
    "χ": "x",
    "ϲ": "c",
    "ω": "w",
    "γ": "y",
    "μ": "u",
    # Latin look-alikes outside ASCII
    "ı": "i",
    "ȷ": "j",
    "ℓ": "l",
}

LEET: dict[str, str] = {
    "0": "o",
    "1": "i",
    "3": "e",
    "4": "a",
    "5": "s",
    "7": "t",
    "8": "b",
    "9": "g",
    "@": "a",
    "$": "s",
    "!": "i",
    "|": "i",
    "+": "t",
    "€": "e",
    "£": "l",
}


def is_hidden(ch: str) -> bool:
    """Invisible or direction-changing characters (and any other format/private char)."""
    cp = ord(ch)
    if cp in _INVISIBLE or 0xE0000 <= cp <= 0xE007F or 0xFE00 <= cp <= 0xFE0F:
        return True
    if 0xE0100 <= cp <= 0xE01EF:
        return True
    cat = unicodedata.category(ch)
    if cat in ("Cf", "Co", "Cs"):
        return True
    return cat == "Cc" and ch not in "\n\r\t"


def is_bidi(ch: str) -> bool:
    return ord(ch) in _BIDI


@dataclass(frozen=True)
class View:
    """A normalised text and, per character, the index of its source character."""

    text: str
    src: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original ``[start, end)`` for a view span."""
        if not self.src:
            return (0, 0)
        return (self.src[start], self.src[max(start, end - 1)] + 1)


def plain(text: str, *, fold: bool = False) -> View:
    chars: list[str] = []
    src: list[int] = []
    for i, ch in enumerate(text):
        if is_hidden(ch):
            continue
        for c in unicodedata.normalize("NFKC", ch).casefold():
            if unicodedata.combining(c):  # strip accents only used to disguise letters
                continue
            chars.append(HOMOGLYPHS.get(c, c) if fold else c)
            src.append(i)
    return View("".join(chars), tuple(src))


def _map(view: View, fn: Callable[[str], str | None]) -> View:
    chars: list[str] = []
    src: list[int] = []
    for c, i in zip(view.text, view.src, strict=True):
        out = fn(c)
        if out is None:
            continue
        chars.append(out)
        src.append(i)
    return View("".join(chars), tuple(src))


def words(view: View) -> View:
    """Runs of non-alphanumeric characters become one space."""
    chars: list[str] = []
    src: list[int] = []
    for c, i in zip(view.text, view.src, strict=True):
        if c.isalnum():
            chars.append(c)
            src.append(i)
        elif chars and chars[-1] != " ":
            chars.append(" ")
            src.append(i)
    return View("".join(chars), tuple(src))


def leet(view: View) -> View:
    return _map(view, lambda c: LEET.get(c, c))


def squash(view: View) -> View:
    return _map(view, lambda c: c if c.isalpha() else None)


def views(text: str) -> dict[str, View]:
    """Every view a detector may look at (see module docstring)."""
    p = plain(text)
    f = plain(text, fold=True)
    fl = leet(f)
    return {
        "plain": p,
        "folded": f,
        "words": words(p),
        "folded_words": words(f),
        "leet_words": words(fl),
        "squash": squash(f),
        "leet_squash": squash(fl),
    }


def scripts(token: str) -> set[str]:
    """Unicode scripts (first word of the char name) of the letters in ``token``."""
    out = set()
    for ch in token:
        if ch.isalpha():
            name = unicodedata.name(ch, "")
            out.add(name.split(" ", 1)[0] if name else "UNKNOWN")
    return out
