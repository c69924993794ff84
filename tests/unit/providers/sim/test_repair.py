from __future__ import annotations

from skillci.providers.sim.repair import config_candidates, expectation_shortcut, python_candidates

WINDOW = 'def window_end(start, size):\n    """Doc."""\n    return start + size\n'
SWAPPED = "def percent(part, whole):\n    return ratio(whole, part) * 100\n"


def _news(edits: list) -> list[str]:  # type: ignore[type-arg]
    return [e.new.strip() for e in edits]


def test_first_candidate_is_the_plausible_wrong_one() -> None:
    news = _news(python_candidates("w.py", WINDOW, "window_end", None, teacher=False))
    assert news[:2] == ["return start - size", "return start + size - 1"]


def test_compare_all_comes_before_single_flips() -> None:
    src = "def in_window(ts, start, end):\n    return start < ts < end\n"
    news = _news(python_candidates("w.py", src, "in_window", None, teacher=False))
    assert news[:3] == [
        "return start <= ts <= end",
        "return start <= ts < end",
        "return start < ts <= end",
    ]


def test_argument_swaps_are_teacher_only() -> None:
    student = _news(python_candidates("s.py", SWAPPED, "percent", None, teacher=False))
    teacher = _news(python_candidates("s.py", SWAPPED, "percent", None, teacher=True))
    assert "return ratio(part, whole) * 100" not in student
    assert "return ratio(part, whole) * 100" in teacher
    assert teacher[: len(student)] == student  # the teacher tries the student's ideas first


def test_callees_of_the_frame_line_are_searched_after_the_frame_function() -> None:
    src = "def idx(n):\n    return (n - 1) / 2\n\n\ndef median(xs):\n    return xs[idx(len(xs))]\n"
    teacher = _news(python_candidates("m.py", src, "median", 6, teacher=True))
    assert "return (n - 1) // 2" in teacher
    assert "return (n - 1) // 2" not in _news(
        python_candidates("m.py", src, "median", 6, teacher=False)
    )


def test_edits_are_unique_in_the_file() -> None:
    src = "def f(a):\n    x = a + 1\n    return a + 1\n\n\ndef g(a):\n    return a + 1\n"
    for e in python_candidates("f.py", src, "f", 3, teacher=False):
        assert src.count(e.old) == 1


def test_config_edits_follow_the_checker_message() -> None:
    ini = "[client]\nretrys = 3\nbackoff = expo\nport = 80800\n"
    assert _news(
        config_candidates(
            "c.ini", ini, 2, "unknown key 'retrys' (did you mean 'retries'?)", teacher=False
        )
    ) == ["retries = 3"]
    assert (
        _news(
            config_candidates(
                "c.ini",
                ini,
                3,
                "invalid value 'expo' for 'backoff': expected one of: none, linear, exponential",
                teacher=False,
            )
        )[2]
        == "backoff = exponential"
    )
    assert (
        config_candidates(
            "c.ini", ini, 4, "value 80800 for 'port' out of range [1, 65535]", teacher=False
        )
        == []
    )
    assert _news(
        config_candidates(
            "c.ini", ini, 4, "value 80800 for 'port' out of range [1, 65535]", teacher=True
        )
    ) == ["port = 65535"]


def test_shortcut_rewrites_the_expected_value() -> None:
    src = "def test_p():\n    assert percent(1, 4) == 25.0\n"
    e = expectation_shortcut("tests/t.py", src, 2, "400.0", "25.0")
    assert e is not None and e.new.strip() == "assert percent(1, 4) == 400.0"
