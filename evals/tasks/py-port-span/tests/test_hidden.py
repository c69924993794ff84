from netspan.core import in_span


def test_half_open():
    assert in_span(8000, 8000, 8100) is True
    assert in_span(8100, 8000, 8100) is False
    assert in_span(7999, 8000, 8100) is False
