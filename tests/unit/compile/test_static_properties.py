"""Property tests: static compile never changes frontmatter, a fenced code block or a
protected literal, and a section the guard rejects comes back byte for byte.

Skills are generated the way real ones are written (cf. tests/fixtures/plain-skills):
frontmatter with optional keys, headings at several levels, prose mixing instructions,
vague phrases (English and Chinese), commands, paths, flags, numbers and URLs, bullet and
numbered lists, tables, quotes, fenced code (including heading-like and vague lines).
Plans are drawn at random too — grouping, reordering and dropping sentences — to hit
the guard's rollback path.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillci.compile.literals import literals
from skillci.compile.mdtext import parse_doc, split_sentences
from skillci.compile.profile import MeasuredTraits, ModelProfile
from skillci.compile.static import ParagraphPlan, StaticPlan, compile_static
from skillci.skill.package import SKILL_MD
from skillci.skill.porting import import_plain

LITS = [
    "`python -m pytest -x -q tests/test_a.py::test_b`",
    "`pandoc --track-changes=all file.docx -o out.md`",
    "src/app/main.py",
    "references/docx-js.md",
    "--dry-run",
    "-x",
    "3.11",
    "42",
    "https://docs.python.org/3/library/re.html",
    "pypdf.PdfReader",
    "fill_form()",
    "MAX_RETRIES",
    "`scripts/pack.py`",
]
VERBS = ["Run", "Read", "Open", "Check", "Write", "Use", "Install", "Convert", "Save", "Never edit"]
VAGUE = [
    "carefully analyze the output",
    "make sure the result is correct",
    "use the appropriate tools when necessary",
    "handle errors flexibly",
    "if needed",
    "as appropriate",
    "use your best judgment",
    "确保结果正确",
    "仔细分析日志",
]
NOUNS = ["the log", "the config", "each page", "the form fields", "the generated file"]


@st.composite
def sentence(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["imp", "imp", "vague", "fact", "zh"]))
    lit = draw(st.sampled_from(LITS))
    noun = draw(st.sampled_from(NOUNS))
    if kind == "imp":
        return f"{draw(st.sampled_from(VERBS))} {noun} with {lit}."
    if kind == "vague":
        v = draw(st.sampled_from(VAGUE))
        return (
            f"{v[0].upper()}{v[1:]} before you use {lit}."
            if v.isascii()
            else f"{v}，然后运行 {lit}。"
        )
    if kind == "zh":
        return f"先阅读 {lit}，再修改 {noun}。"
    return f"The project keeps {noun} in {lit}."


@st.composite
def block(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["para", "para", "list", "olist", "code", "table", "quote"]))
    if kind == "para":
        return " ".join(draw(st.lists(sentence(), min_size=1, max_size=5))) + "\n"
    if kind in ("list", "olist"):
        items = draw(st.lists(sentence(), min_size=1, max_size=4))
        return "".join(
            (f"{i}. " if kind == "olist" else "- ") + s + "\n" for i, s in enumerate(items, 1)
        )
    if kind == "code":
        fence = draw(st.sampled_from(["```", "~~~", "````"]))
        lang = draw(st.sampled_from(["", "bash", "python", "md"]))
        body = draw(
            st.lists(
                st.sampled_from(
                    [
                        "# not a heading",
                        "make sure the result is correct",
                        "python -m pytest -x",
                        "x = 1  # carefully",
                        "",
                    ]
                ),
                min_size=1,
                max_size=4,
            )
        )
        return f"{fence}{lang}\n" + "\n".join(body) + f"\n{fence}\n"
    if kind == "table":
        return (
            f"| flag | meaning |\n|---|---|\n| {draw(st.sampled_from(LITS))} | use it if needed |\n"
        )
    return f"> {draw(sentence())}\n"


@st.composite
def skill_md(draw: st.DrawFn) -> str:
    fm = "---\nname: gen-skill\ndescription: A generated skill for property tests.\n"
    if draw(st.booleans()):
        fm += "license: Apache-2.0\n"
    if draw(st.booleans()):
        fm += 'metadata:\n  version: "1.2.0"\n'
    fm += "---\n"
    parts = ["\n# Generated skill\n\n"]
    for i in range(draw(st.integers(1, 5))):
        level = draw(st.sampled_from(["##", "##", "###"]))
        title = draw(st.sampled_from(["Workflow", "Reference", "Notes", "Tools", "Forms"]))
        parts.append(f"{level} {title} {i}\n\n")
        for b in draw(st.lists(block(), min_size=1, max_size=4)):
            parts.append(b + "\n")
    return fm + "".join(parts)


def _profile(skip: bool) -> ModelProfile:
    return ModelProfile(
        route="sim/student",
        model="sim/student",
        context_window=32768,
        harness="skillci-builtin",
        source="runs",
        traits=MeasuredTraits(runs=2, verification_skip_rate=1.0 if skip else 0.0),
    )


def _texts(files: dict[str, bytes]) -> str:
    return "\n".join(
        data.decode()
        for rel, data in sorted(files.items())
        if rel == SKILL_MD or rel.startswith("skillci/workflows/")
    )


def _fences(text: str) -> Counter[str]:
    return Counter(
        b.text for s in parse_doc(text).sections for b in s.blocks if b.kind in ("code", "indented")
    )


@st.composite
def random_plan(draw: st.DrawFn, text: str) -> StaticPlan:
    doc = parse_doc(text)
    paras = []
    for sec in doc.sections:
        for bi, b in enumerate(sec.blocks):
            if b.kind == "para" and draw(st.booleans()):
                n = len(split_sentences(b.text)[0])
                ids = draw(st.permutations(list(range(n))))
                keep = ids[: draw(st.integers(max(0, n - 1), n))]  # sometimes drop one
                cut = draw(st.integers(0, len(keep)))
                steps = [[i] for i in keep[cut:]] or []
                paras.append(
                    ParagraphPlan(section=sec.index, block=bi, intro=list(keep[:cut]), steps=steps)
                )
    return StaticPlan(source="model", paragraphs=paras)


def _check(src: str, pkg_files: dict[str, bytes], out_files: dict[str, bytes]) -> None:
    out = out_files[SKILL_MD].decode()
    front = parse_doc(src).frontmatter
    assert out.startswith(front), "frontmatter changed"
    assert _fences(src) <= _fences(_texts(out_files)), "a fenced code block changed"
    missing = literals(parse_doc(src).body) - literals(_texts(out_files))
    assert not missing, f"literals lost: {missing}"
    for rel, data in pkg_files.items():
        if rel not in (SKILL_MD, "skillci.yaml"):
            assert out_files[rel] == data


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=skill_md(), skip=st.booleans())
def test_deterministic_compile_preserves_frontmatter_code_and_literals(
    text: str, skip: bool
) -> None:
    pkg = import_plain({SKILL_MD: text.encode(), "scripts/run.sh": b"echo hi\n"}, source="gen")
    res = compile_static(pkg, _profile(skip))
    _check(text, dict(pkg.files), dict(res.package.files))
    for s in res.report.sections:
        assert s.status != "rolled_back", s.reasons  # our own rewrites always pass the guard


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), text=skill_md())
def test_any_plan_is_either_guarded_or_rolled_back_byte_exact(
    data: st.DataObject, text: str
) -> None:
    pkg = import_plain({SKILL_MD: text.encode()}, source="gen")
    plan = data.draw(random_plan(text))
    res = compile_static(pkg, _profile(False), mode="hybrid", plan=plan, planner="fake/planner")
    _check(text, dict(pkg.files), dict(res.package.files))
    src_secs = parse_doc(text).sections
    out = res.package.text(SKILL_MD)
    for rep in res.report.sections:
        if rep.status == "rolled_back" and rep.file == SKILL_MD:
            assert src_secs[rep.index].text in out
