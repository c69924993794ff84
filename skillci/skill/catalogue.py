"""The skill catalogue a harness shows its model, and reading the model's choice (pure).

Before any skill is loaded a harness tells the model which skills are installed: each
skill's name and description, nothing else. The model decides from that list alone whether
to load one. A trigger decision (``skillci eval triggers``) is one model call: this
catalogue as the system prompt, the user's request as the user message, and the answer is
the name of one skill, or ``none``.

Presentations (``harness``):
- ``builtin``: skillci's own agent: an ``<available_skills>`` block with one
  ``<skill name="…">description</skill>`` line per skill.
- ``folder``: a harness that mounts a skills folder and lists each folder's SKILL.md
  frontmatter (BenchFlow ``--skills-dir``, Harbor ``--skills``): a Markdown list of
  ``- name: description`` lines under the folder's path.

Entries are listed sorted by name, so the skill under test has no fixed position.
"""

from __future__ import annotations

import html
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

CatalogueHarness = Literal["builtin", "folder"]
CATALOGUE_HARNESSES: tuple[CatalogueHarness, ...] = ("builtin", "folder")
NONE_ANSWER = "none"
#: The sentence every catalogue prompt ends with; the simulator recognises a trigger
#: decision by it (docs/simulator.md).
DECIDE = (
    "Decide whether one of these skills should be loaded to handle the user's next request. "
    "Reply with the name of exactly one skill, or with none if no skill applies. "
    "Reply with the name only."
)
_BUILTIN_LINE = re.compile(r'^<skill name="([^"]+)">(.*)</skill>$')
_FOLDER_LINE = re.compile(r"^- ([a-z0-9][A-Za-z0-9_.:-]*): (.*)$")


class CatalogueEntry(BaseModel):
    """One installed skill as the catalogue shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Skill name (frontmatter name).")
    description: str = Field(description="Frontmatter description, as written.")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render_catalogue(entries: list[CatalogueEntry], harness: CatalogueHarness) -> str:
    """The system prompt listing ``entries`` as ``harness`` presents them."""
    ordered = sorted(entries, key=lambda e: e.name)
    if harness == "builtin":
        lines = [
            "You are an agent with skills: folders of instructions you can load.",
            "<available_skills>",
            *(
                f'<skill name="{html.escape(e.name)}">{html.escape(_one_line(e.description))}'
                "</skill>"
                for e in ordered
            ),
            "</available_skills>",
        ]
    else:
        lines = [
            "Skills are installed under /skills (one folder per skill, each with a SKILL.md).",
            "Installed skills (name: description from each SKILL.md frontmatter):",
            *(f"- {e.name}: {_one_line(e.description)}" for e in ordered),
        ]
    return "\n".join([*lines, "", DECIDE]) + "\n"


def parse_catalogue(prompt: str) -> list[CatalogueEntry] | None:
    """The entries of a catalogue prompt (either presentation), or None when ``prompt`` is
    not one (it lacks the :data:`DECIDE` sentence)."""
    if DECIDE not in prompt:
        return None
    out: list[CatalogueEntry] = []
    for line in prompt.splitlines():
        m = _BUILTIN_LINE.match(line)
        if m:
            out.append(CatalogueEntry(name=html.unescape(m[1]), description=html.unescape(m[2])))
            continue
        m = _FOLDER_LINE.match(line)
        if m:
            out.append(CatalogueEntry(name=m[1], description=m[2]))
    return out


_DECLINE = re.compile(r"^\W*(?:none|no skill|no\b|neither|nothing)", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|neither|nor|none)\b|n't\b", re.IGNORECASE)


def parse_choice(answer: str | None, names: list[str]) -> str | None:
    """The skill an answer chooses (untrusted text), or None.

    An answer that opens by declining ("none", "no skill", "neither") chooses none, whatever
    it names after. Otherwise the first catalogue name it mentions in a clause without a
    negation ("repo-debugger is for CI failures, not this" names without choosing); a name
    written with spaces for its hyphens, "the repo debugger skill", is that name."""
    text = (answer or "").strip().lower().replace("’", "'")
    if not text or _DECLINE.match(text):
        return None
    best: tuple[tuple[int, int], str] | None = None
    for name in names:
        words = [re.escape(w) for w in re.split(r"[-_\s]+", name.lower()) if w]
        if not words:
            continue
        pattern = rf"(?<![a-z0-9-]){'[-_ ]+'.join(words)}(?![a-z0-9-])"
        for m in re.finditer(pattern, text):
            start = max(text.rfind(c, 0, m.start()) for c in ".;,!?\n")
            ends = [i for i in (text.find(c, m.end()) for c in ".;,!?\n") if i >= 0]
            clause = text[start + 1 : min(ends, default=len(text))]
            if _NEGATION.search(clause):
                continue
            key = (m.start(), -len(m.group(0)))  # at one place, the longer name
            if best is None or key < best[0]:
                best = (key, name)
            break
    return best[1] if best else None


__all__ = [
    "CATALOGUE_HARNESSES",
    "DECIDE",
    "NONE_ANSWER",
    "CatalogueEntry",
    "CatalogueHarness",
    "parse_catalogue",
    "parse_choice",
    "render_catalogue",
]
