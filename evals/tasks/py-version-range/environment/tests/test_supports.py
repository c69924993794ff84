from compat.core import supports


def test_start_is_inside():
    assert supports((3, 8), (3, 8), (3, 13)) is True


def test_end_is_outside():
    assert supports((3, 13), (3, 8), (3, 13)) is False


def test_middle_is_inside():
    assert supports((3, 11), (3, 8), (3, 13)) is True
