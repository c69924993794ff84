from ranges.window import window_end, window_of


def test_window_end():
    assert window_end(3, 4) == 6


def test_window_of():
    assert window_of(7, 4) == 4
