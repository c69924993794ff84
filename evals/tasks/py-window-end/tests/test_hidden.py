from ranges.window import window_end


def test_window_end_inclusive():
    assert window_end(0, 1) == 0
    assert window_end(3, 4) == 6
    assert window_end(10, 5) == 14
