from timewin.core import in_window


def test_half_open():
    assert in_window(10, 10, 20) is True
    assert in_window(20, 10, 20) is False
    assert in_window(9, 10, 20) is False
    assert in_window(19, 10, 20) is True
