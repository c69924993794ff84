from stats.ratios import percent, ratio


def test_percent():
    assert percent(1, 4) == 25.0
    assert percent(3, 4) == 75.0
    assert ratio(1, 2) == 0.5
