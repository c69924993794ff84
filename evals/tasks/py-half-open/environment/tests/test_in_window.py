from timewin.core import in_window


def test_start_is_inside():
    assert in_window(10, 10, 20) is True


def test_end_is_outside():
    assert in_window(20, 10, 20) is False


def test_middle_is_inside():
    assert in_window(15, 10, 20) is True
