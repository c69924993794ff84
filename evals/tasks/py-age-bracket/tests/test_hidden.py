from brackets.core import in_bracket


def test_half_open():
    assert in_bracket(18, 18, 25) is True
    assert in_bracket(25, 18, 25) is False
    assert in_bracket(17, 18, 25) is False
