from brackets.core import in_bracket


def test_start_is_inside():
    assert in_bracket(18, 18, 25) is True


def test_end_is_outside():
    assert in_bracket(25, 18, 25) is False


def test_middle_is_inside():
    assert in_bracket(21, 18, 25) is True
