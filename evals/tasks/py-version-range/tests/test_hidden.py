from compat.core import supports


def test_half_open():
    assert supports((3, 8), (3, 8), (3, 13)) is True
    assert supports((3, 13), (3, 8), (3, 13)) is False
    assert supports((3, 7), (3, 8), (3, 13)) is False
