"""docs/design/README.md indexes every design note once, each with a status."""

from __future__ import annotations

import re
from pathlib import Path

DESIGN = Path(__file__).resolve().parents[2] / "docs" / "design"
ROW = re.compile(r"^\| \[(\d{3})\]\(([^)]+)\) \| (.+) \| (.+) \|$")
STATUS = re.compile(r"^(accepted|(changed|superseded) by (\d{3}(, \d{3})*))$")


def _rows() -> list[tuple[str, str, str]]:
    text = (DESIGN / "README.md").read_text(encoding="utf-8")
    rows = [m.group(1, 2, 4) for line in text.splitlines() if (m := ROW.match(line))]
    assert rows, "no note rows found in docs/design/README.md"
    return rows


def test_every_note_has_exactly_one_row_and_every_row_a_note() -> None:
    files = sorted(p.name for p in DESIGN.glob("*.md") if p.name != "README.md")
    linked = [name for _, name, _ in _rows()]
    assert sorted(set(linked)) == sorted(linked), "a note is listed twice"
    assert sorted(linked) == files, (
        f"missing from the index: {sorted(set(files) - set(linked))}; "
        f"rows without a file: {sorted(set(linked) - set(files))}"
    )
    for number, name, _ in _rows():
        assert name.startswith(f"{number}-"), f"row {number} links {name}"


def test_statuses_are_well_formed_and_point_at_notes() -> None:
    numbers = {number for number, _, _ in _rows()}
    for number, _, status in _rows():
        m = STATUS.match(status)
        assert m, (
            f"note {number}: status {status!r} is not accepted / changed by N / superseded by N"
        )
        if m.group(3):
            for ref in m.group(3).split(", "):
                assert ref in numbers, f"note {number} points at missing note {ref}"
                assert ref > number, f"note {number} is {status} an older note"


def test_a_status_line_in_a_note_agrees_with_the_index() -> None:
    for _, name, status in _rows():
        text = (DESIGN / name).read_text(encoding="utf-8")
        line = next((x for x in text.splitlines()[:6] if x.startswith("Status:")), None)
        if line is not None:
            assert line.removeprefix("Status: ").startswith(status), (
                f"{name}: {line!r} but the index says {status!r}"
            )
