from grading.core import in_band


def test_start_is_inside():
    assert in_band(70, 70, 80) is True


def test_end_is_outside():
    assert in_band(80, 70, 80) is False


def test_middle_is_inside():
    assert in_band(75, 70, 80) is True
