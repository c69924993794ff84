"""Hostile strings in EVERY string field of a GateReport: the sticky-comment Markdown and the
HTML report show them as text, never as markup (issue 16 item 3).

The Markdown is rendered by a CommonMark + GFM-tables renderer with raw HTML enabled (as
GitHub does before it sanitises), so a breakout shows up as an element in the output."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from markdown_it import MarkdownIt

from skillci.forge.base import STICKY_MARKER
from skillci.gate.verdict import GateReport
from skillci.present.html import render_html
from skillci.present.mdsafe import md_code, md_fence, md_text
from skillci.present.report import render_markdown
from tests.unit.gate.report_fixture import build_report
from tests.unit.present.test_html import Page

#: One payload per attack the forged report of issue 16 used, and a few more.
ATTACKS = [
    "x` @acme/security-team `y",  # code-span breakout + team mention
    "```` ``a`` @octocat",
    "![t](https://evil.example/pixel.png?{id})",  # tracking pixel (Markdown image)
    '<img src="https://evil.example/t.gif?{id}">',  # tracking pixel (HTML)
    "<script>alert('{id}')</script>",
    "ok\n\n# Approved by security team {id}\n",  # fake heading
    "ok\n## Approved {id}",
    "a | b | c\n|---|---|---|\n| forged | row | {id} |",  # table injection
    "[click](javascript:alert('{id}'))",
    "<details open><summary>{id}</summary>",
    "**bold** _em_ ~~strike~~ {id}",
    STICKY_MARKER + " {id}",
    "<!-- skillci:patch-id=evil-{id} -->",
    "1. {id} ordered",
    "> quote {id}",
    "\u202eevil\u202c {id} \u200b",
]


def _hostile(i: int) -> str:
    attack = ATTACKS[i % len(ATTACKS)]
    return attack.replace("{id}", f"F{i}") if "{id}" in attack else f"{attack} F{i}"


def hostile_report() -> tuple[GateReport, int]:
    """The fixture report with every string leaf (and free key) hostile where the model
    accepts any string; fields the schema constrains (literals) keep their value."""
    base = build_report(hostile=False).report
    data = base.model_dump(mode="json")
    # the optional parts too
    data["same_instance"] = {
        "task_id": "t",
        "before_passed": False,
        "after_passed": True,
        "before_runs": ["r1"],
        "after_runs": ["r2"],
    }
    data["evidence"] = {"t": {"base": ["r1", "r2"], "head": ["r3"]}}
    data["guard_findings"] = ["finding one", "finding two"]
    data["change_size"] = {"files": 1}
    counter = [0]
    poisoned = 0

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, dict) and path[:1] == ("evidence",):
            for key in list(node):
                _try_key(node, key)
        nonlocal data, poisoned
        items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in items:
            if isinstance(value, dict | list):
                walk(value, (*path, key))
                continue
            if isinstance(value, str):
                counter[0] += 1
                node[key] = _hostile(counter[0])
                if _valid(data):
                    poisoned += 1
                else:
                    node[key] = value

    def _try_key(node: dict[str, Any], key: str) -> None:
        nonlocal poisoned
        counter[0] += 1
        new = _hostile(counter[0])
        node[new] = node.pop(key)
        if _valid(data):
            poisoned += 1
        else:
            node[key] = node.pop(new)

    walk(data, ())
    return GateReport.model_validate(data), poisoned


def _valid(data: dict[str, Any]) -> bool:
    try:
        GateReport.model_validate(data)
    except ValueError:
        return False
    return True


@pytest.fixture(scope="module")
def poisoned() -> tuple[GateReport, int]:
    return hostile_report()


class Rendered(Page):
    """The HTML of the rendered Markdown: tags, and text outside / inside <code>."""

    def __init__(self, text: str) -> None:
        self.code_depth = 0
        self.heading_depth = 0
        self.outside: list[str] = []
        self.headings: list[str] = []
        super().__init__(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        super().handle_starttag(tag, attrs)
        self.code_depth += tag == "code"
        self.heading_depth += tag in ("h1", "h2", "h3", "h4", "h5", "h6")

    def handle_endtag(self, tag: str) -> None:
        super().handle_endtag(tag)
        self.code_depth -= tag == "code"
        self.heading_depth -= tag in ("h1", "h2", "h3", "h4", "h5", "h6")

    def handle_data(self, data: str) -> None:
        super().handle_data(data)
        if self.code_depth == 0:
            self.outside.append(data)
        if self.heading_depth and self.code_depth == 0:
            # a value shown in a code span of a template heading (the suite's name) is text
            self.headings.append(data)


def test_every_string_field_was_poisoned(poisoned: tuple[GateReport, int]) -> None:
    report, n = poisoned
    assert n > 100  # the fixture report has that many free strings (task ids, reasons, ...)
    hostile = {_hostile(i) for i in range(1, 10 * n)}
    fields = [report.skill, report.student, report.base_ref, report.head_ref, report.gate_id]
    fields += [report.guard_verdict, *report.reasons, *report.guard_findings]
    fields += [x for c in report.checks for x in (c.name, c.value, c.threshold, c.detail)]
    assert report.same_instance is not None
    fields += [report.same_instance.task_id, *report.same_instance.after_runs]
    fields += [t for s in report.suites for t in (s.suite, *s.tasks)]
    assert all(f in hostile for f in fields), [f for f in fields if f not in hostile]
    keys = [*report.evidence, *(k for sides in report.evidence.values() for k in sides)]
    assert keys and all(k in hostile for k in keys), keys


def test_markdown_shows_hostile_values_as_text(poisoned: tuple[GateReport, int]) -> None:
    report, _ = poisoned
    md = render_markdown(report)
    assert md.startswith(STICKY_MARKER + "\n")
    assert md.count(STICKY_MARKER) == 1  # no value can forge the sticky marker
    assert "<!-- skillci:patch-id" not in md
    html = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
    out = Rendered(html.render(md))
    tags = {t for t, _ in out.tags}
    # no element a value could have made: images, scripts, links, raw HTML, emphasis
    assert not tags & {"img", "script", "a", "blockquote", "s", "del", "ol", "em"}, tags
    # the only <details> are the template's own
    assert len([t for t, _ in out.tags if t == "details"]) == md.count("<details><summary>")
    # headings are the template's own
    assert not [h for h in out.headings if "Approved" in h]
    # mentions only inside code spans or broken by a zero-width space
    text = "".join(out.outside)
    assert "@acme" not in text and "@octocat" not in text
    assert "@\u200bacme" in text  # shown, not mentioning
    # no value adds a table row or a column: every row of a table has the header's cells
    width = 0
    for line in md.splitlines():
        if not line.startswith("|"):
            width = 0
            continue
        cells = len(re.split(r"(?<!\\)\|", line))
        width = width or cells
        assert cells == width, line


def test_html_report_shows_hostile_values_as_text(poisoned: tuple[GateReport, int]) -> None:
    report, _ = poisoned
    page = Page(render_html(report, {}))
    scripts = [t for t, _ in page.tags if t == "script"]
    assert len(scripts) == 1  # the report's own, pinned by the CSP
    assert not [t for t, _ in page.tags if t == "img"]
    assert not [a for _, a in page.tags for k in a if k.startswith("on")]
    hrefs = [a.get("href") or "" for t, a in page.tags if t == "a"]
    assert not [h for h in hrefs if not h.startswith("#") and h != "data:,"], hrefs
    assert "Approved by security team F" in page.all_text  # shown, as text


@pytest.mark.parametrize("value", ATTACKS)
def test_code_span_never_closes_early(value: str) -> None:
    html = MarkdownIt("commonmark").render("see " + md_code(value) + " end")
    out = Rendered(html)
    assert [t for t, _ in out.tags] == ["p", "code"]
    assert "end" in "".join(out.outside)


@pytest.mark.parametrize("value", ATTACKS)
def test_text_makes_no_markup(value: str) -> None:
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render("- " + md_text(value))
    out = Rendered(html)
    assert [t for t, _ in out.tags] == ["ul", "li"], json.dumps(html)


def test_fenced_block_holds_any_text() -> None:
    """PR bodies put diffs, patch YAML and diagnosis JSON (model output) in fences."""
    hostile = "\n".join([*ATTACKS, "```", "````` end", "<!-- skillci:patch-id=evil -->"])
    md = "\n".join(["before", *md_fence(hostile, "diff"), "# after"])
    out = Rendered(MarkdownIt("commonmark", {"html": True}).render(md))
    assert [t for t, _ in out.tags] == ["p", "pre", "code", "h1"]
    assert "<!-- skillci:patch-id" not in md
