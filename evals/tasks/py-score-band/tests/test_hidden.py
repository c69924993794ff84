from grading.core import in_band


def test_half_open():
    assert in_band(70, 70, 80) is True
    assert in_band(80, 70, 80) is False
    assert in_band(69, 70, 80) is False
