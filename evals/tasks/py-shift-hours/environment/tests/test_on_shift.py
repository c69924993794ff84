from shifts.core import on_shift


def test_start_is_inside():
    assert on_shift(9, 9, 17) is True


def test_end_is_outside():
    assert on_shift(17, 9, 17) is False


def test_middle_is_inside():
    assert on_shift(12, 9, 17) is True
