from shifts.core import on_shift


def test_half_open():
    assert on_shift(9, 9, 17) is True
    assert on_shift(17, 9, 17) is False
    assert on_shift(8, 9, 17) is False
