from netspan.core import in_span


def test_start_is_inside():
    assert in_span(8000, 8000, 8100) is True


def test_end_is_outside():
    assert in_span(8100, 8000, 8100) is False


def test_middle_is_inside():
    assert in_span(8050, 8000, 8100) is True
