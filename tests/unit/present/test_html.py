"""The HTML gate report (pure): escaping, self-containment, content parity with the markdown
report, and readability at 50 tasks."""

from __future__ import annotations

import base64
import hashlib
import html
import re
from html.parser import HTMLParser

import pytest

from skillci.present.html import evidence_runs, referenced_run_ids, render_html
from skillci.present.html.assets import CSS, JS
from skillci.present.html.charts import nice_max
from skillci.present.html.markup import anchor, clip, el
from skillci.present.report import render_markdown
from skillci.trace.models import ToolResultEvent
from tests.unit.gate.report_fixture import (
    HOSTILE_TASK,
    IMG,
    SCRIPT,
    Built,
    build_report,
    make_run,
)


class Page(HTMLParser):
    """Tags, attributes and text of a page, as a browser's tokenizer sees them."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.scripts: list[str] = []
        self.styles: list[str] = []
        self._in: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._in = tag

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            self.scripts.append(data)
        elif self._in == "style":
            self.styles.append(data)
        else:
            self.text.append(data)

    @property
    def all_text(self) -> str:
        return "".join(self.text)

    def find(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [
            a
            for t, a in self.tags
            if t == tag
            and all(a.get(k.rstrip("_").replace("_", "-")) == v for k, v in attrs.items())
        ]


@pytest.fixture(scope="module")
def built() -> Built:
    return build_report()


@pytest.fixture(scope="module")
def page(built: Built) -> str:
    return render_html(built.report, built.by_id)


def test_hostile_record_text_is_escaped_and_shown_as_text(page: str) -> None:
    assert SCRIPT not in page
    assert IMG not in page
    assert html.escape(SCRIPT) in page
    assert HOSTILE_TASK not in page
    doc = Page(page)
    # the browser's view: exactly one script element (ours), no image, no event handler
    assert doc.scripts == [JS]
    assert not doc.find("img")
    assert not [a for _, attrs in doc.tags for a in attrs if a.startswith("on")]
    # and the hostile strings are there, as text
    assert SCRIPT in doc.all_text
    assert IMG in doc.all_text
    assert HOSTILE_TASK in doc.all_text
    assert doc.find("details", data_task=HOSTILE_TASK)


def test_tool_arguments_are_escaped(built: Built) -> None:
    rid = built.report.evidence[HOSTILE_TASK]["head"][0]
    call = "echo '" + SCRIPT + "'"
    assert any(getattr(e, "arguments", {}).get("command") == call for e in built.by_id[rid].events)
    doc = Page(render_html(built.report, built.by_id))
    assert call in doc.all_text


def test_page_is_self_contained_and_pins_its_style_and_script(page: str) -> None:
    doc = Page(page)
    for _tag, attrs in doc.tags:
        assert "src" not in attrs
        assert "style" not in attrs  # the CSP allows only the pinned <style> element
        href = attrs.get("href")
        assert href is None or href.startswith("#") or href == "data:,"
    assert "http://" not in page and "https://" not in page
    (meta,) = doc.find("meta", http_equiv="Content-Security-Policy")
    csp = meta["content"] or ""
    assert "default-src 'none'" in csp
    assert doc.styles == [CSS]

    def pin(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"style-src {pin(CSS)}'" in csp
    assert f"script-src {pin(JS)}'" in csp


def test_same_content_as_the_markdown_report(built: Built, page: str) -> None:
    r = built.report
    text = Page(page).all_text
    md = render_markdown(r, marker=False)
    assert r.verdict.upper() in text and r.verdict.upper() in md
    for c in r.checks:
        for cell in (c.name, c.value, c.threshold, c.detail):
            assert cell in text
    for reason in r.reasons:
        assert reason in text
    for s in r.suites:
        for t in s.metrics.tasks:
            assert t.task_id in text
        if s.metrics.paired is not None:
            line = next(x for x in md.splitlines() if x.startswith("Paired (task-level)"))
            assert line in text
    assert "✓ repair" in text and "✗ regression" in text and "= pass" in text
    cost_md = next(x for x in md.splitlines() if x.startswith("tokens "))
    assert cost_md in text
    for run_ids in r.evidence.values():
        for ids in run_ids.values():
            for rid in ids:
                assert rid in text
    assert r.impact is not None and r.impact.summary in text
    assert f"{r.base_complexity.bootstrap_tokens}" in text
    assert "Change size: 1 file(s), +14 / -2 lines." in text
    assert "Same instance val-task-02: fail → pass." in text


def test_charts_are_inline_svg(built: Built, page: str) -> None:
    doc = Page(page)
    labels = [a.get("aria-label") for t, a in doc.tags if t == "svg"]
    assert "Pass rate per suite and side with 95% confidence intervals" in labels
    assert "Gap closure rate per suite" in labels
    assert "USD per successful trial" in labels
    assert "Per-task change map" in labels
    # one bar per suite and side; whiskers = CI
    bars = [a for t, a in doc.tags if t == "rect" and a.get("fill") == "#0969da"]
    assert len(bars) >= 2 * len(built.report.suites)  # head: pass rate + cost per suite
    val = built.report.suite("validation")
    assert val is not None
    head = val.metrics.sides["head"].pass_rate
    band = head.band  # task-clustered (docs/design/223)
    assert band.method.startswith("task-clustered")
    assert (
        f"validation · head: {head.pass_rate:.1%} (task-clustered CI {band.low:.1%}–{band.high:.1%})"
        in (doc.all_text)
    )


def test_trajectories_side_by_side_with_teacher(built: Built, page: str) -> None:
    doc = Page(page)
    (block,) = doc.find("details", data_task="val-task-02")
    assert block["id"] == anchor("traj", "val-task-02")
    text = doc.all_text
    for title in ("base — student + current skill", "head — student + candidate skill"):
        assert title in text
    assert "teacher — strong model" in text
    assert "run-teacher-val-task-02-0" in text
    assert doc.find("div", class_="cols cols-4")
    # tool calls with arguments, results with exit codes, skill loads
    assert '"command": "python -m pytest -x -q tests/test_cache.py"' in text
    assert "exit 1" in text and "exit 0" in text
    assert "skillci/workflows/ci-failure.md" in text


def test_reused_head_trials_are_explained(page: str) -> None:
    text = Page(page).all_text
    assert "Not re-run on head (loaded skill files unchanged): the base trials stand for head." in (
        text
    )


def test_missing_records_are_listed_not_fatal(built: Built) -> None:
    rid = built.report.evidence["val-task-00"]["base"][0]
    out = render_html(built.report, {}, unavailable={rid: "record file is corrupt"})
    text = Page(out).all_text
    assert f"{rid}: record file is corrupt" in text
    other = built.report.evidence["val-task-01"]["head"][0]
    assert f"{other}: not in the trace store" in text


def test_long_text_keeps_start_and_end() -> None:
    rec = make_run("t-long", "head", 0, False, suite="validation")
    long_out = "START" + "x" * 20_000 + "END"
    ev = ToolResultEvent(
        step=len(rec.events), call_id="c9", tool="run", exit_code=2, output=long_out
    )
    rec = rec.model_copy(update={"events": [*rec.events, ev]})
    b = build_report(n_validation=2, hostile=False)
    report = b.report.model_copy(
        update={"evidence": {**b.report.evidence, "t-long": {"head": [rec.run_id]}}}
    )
    text = Page(render_html(report, {rec.run_id: rec}, max_text=1000)).all_text
    assert "START" in text and "END" in text
    assert f"{len(long_out) - 1000:,} characters omitted" in text
    assert "x" * 2000 not in text


def test_accept_without_teacher(built: Built) -> None:
    b = build_report(regressions=0, teacher=False, hostile=False)
    assert b.report.verdict == "accept"
    doc = Page(render_html(b.report, b.by_id))
    (header,) = doc.find("header")
    assert header["class"] == "verdict accept" and header["data-verdict"] == "accept"
    assert not doc.find("div", id="reasons")
    assert "Gap closure rate" in doc.all_text and "Not available" in doc.all_text
    assert "teacher — strong model" not in doc.all_text


def test_fifty_tasks_stay_readable() -> None:
    b = build_report(n_validation=50, n_regression=20)
    out = render_html(b.report, b.by_id)
    doc = Page(out)
    val = b.report.suite("validation")
    assert val is not None and len(val.tasks) == 51
    # the long per-task table is collapsed (the short one is not); changed tasks are listed
    assert '<details class="block"><summary>Per-task before/after (51 tasks)</summary>' in out
    assert '<details class="block" open><summary>Per-task before/after (20 tasks)</summary>' in out
    assert doc.find("table", id=anchor("tasks", "validation"))
    changed = [t.task_id for t in val.metrics.tasks if t.change in ("repair", "regression")]
    assert len(changed) > 10
    listed = re.search(r"<p><b>Changed: </b>(.*?)</p>", out)
    assert listed is not None and all(html.escape(t) in listed.group(1) for t in changed)
    assert len(doc.find("details", class_="traj")) == 51 + 20 + 2
    assert len(out) < 5_000_000
    # one square per task in the change map, each linking to its trajectories
    links = [
        a["href"] for t, a in doc.tags if t == "a" and (a.get("href") or "").startswith("#traj-")
    ]
    assert len(set(links)) == 73


def test_rendering_is_deterministic(built: Built) -> None:
    assert render_html(built.report, built.by_id) == render_html(built.report, built.by_id)


def test_evidence_runs_include_same_instance(built: Built) -> None:
    si = built.report.same_instance
    assert si is not None
    report = built.report.model_copy(
        update={"same_instance": si.model_copy(update={"task_id": "only-here"})}
    )
    runs = evidence_runs(report)
    assert runs["only-here"] == {"base": si.before_runs, "head": si.after_runs}
    ids = referenced_run_ids(report)
    assert len(ids) == len(set(ids))
    assert set(si.before_runs) <= set(ids)


def test_markup_escapes_children_and_attributes() -> None:
    out = el("a", '<x y="1">&', title='"><script>', data_x="'")
    assert (
        out
        == '<a title="&quot;&gt;&lt;script&gt;" data-x="&#x27;">&lt;x y=&quot;1&quot;&gt;&amp;</a>'
    )
    assert el("p", el("b", "<i>")) == "<p><b>&lt;i&gt;</b></p>"
    assert el("input", hidden=True, disabled=False) == "<input hidden></input>"


def test_anchors_are_unique_and_safe() -> None:
    names = ["a b", "a-b", "a/b", HOSTILE_TASK, "x" * 300]
    ids = [anchor("traj", n) for n in names]
    assert len(set(ids)) == len(ids)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids)


def test_clip_and_nice_max() -> None:
    assert clip("abc", 10) == ("abc", "", 0)
    head, tail, n = clip("a" * 60 + "b" * 40, 50)
    assert (head, tail, n) == ("a" * 30, "b" * 20, 50)
    assert [nice_max(x) for x in (0.0, 0.7, 1.0, 1.3, 2.2, 3.0, 7.0, 0.031)] == [
        1.0,
        1.0,
        1.0,
        2.0,
        2.5,
        5.0,
        10.0,
        0.05,
    ]


def test_a_sequential_reject_reads_as_not_shown_not_as_the_verdict(built: Built) -> None:
    """The sequential test's "reject" keeps H0; an accepted gate (on a repair) must not say
    "Sequential test: reject" to a reviewer."""
    from skillci.gate.sequential import Decision

    d = Decision(
        outcome="reject",
        reason="budget of 1 rounds reached; head won 1 of 1 discordant pairs",
        trials_used=2,
        rounds=1,
        head_wins=1,
        base_wins=0,
        concordant=0,
        p1=None,
        llr=0.0,
        upper=1.0,
        lower=-1.0,
    )
    r = built.report
    suites = [r.suites[0].model_copy(update={"sequential": d}), *r.suites[1:]]
    report = r.model_copy(update={"suites": suites})
    md = render_markdown(report, marker=False)
    html = Page(render_html(report, built.by_id)).all_text
    for text in (md, html):
        assert "Sequential test: improvement not shown" in text
        assert "Sequential test: reject" not in text


def test_environment_unsupported_warnings_show_on_the_page_and_in_markdown(built: Built) -> None:
    line = (
        "needs-root: 2 trial(s) excluded from the metrics, environment unsupported by the "
        "local runner: working directory /root; run them with --sandbox docker"
    )
    report = built.report.model_copy(update={"warnings": [line]})
    assert line in Page(render_html(report, built.by_id)).all_text
    md = render_markdown(report, marker=False)
    from skillci.present.mdsafe import md_text

    assert f"**⚠ Trial warnings:**\n- {md_text(line)}" in md
    assert "Trial warnings" not in render_markdown(built.report, marker=False)
